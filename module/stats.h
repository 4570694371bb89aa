/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lock statistics shared by stats.c (storage, sysfs, switch), stats_lru.c
 * (lruvec->lru_lock) and stats_mmap.c (mm->mmap_lock).  What is counted
 * and what is missed: docs/lock-stats.md.
 */
#ifndef MMFIX_STATS_H
#define MMFIX_STATS_H

#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/seqlock.h>
#include <linux/types.h>
#include "mmfix.h"

/* One lock class on one CPU; summed (maxima: max'ed) over CPUs on read. */
struct mmfix_lock_stat {
	u64 acquisitions;
	u64 failed;
	u64 contended;
	u64 wait_ns;
	u64 wait_max_ns;
	u64 holds;
	u64 hold_ns;
	u64 hold_max_ns;
	u64 wait_hist[MMFIX_STATS_HIST_BUCKETS];
	u64 hold_hist[MMFIX_STATS_HIST_BUCKETS];
};

/* The longest mmap_lock hold or wait seen, and who it was. */
struct mmfix_worst {
	u64 ns;
	pid_t pid;		/* thread group (process) id */
	pid_t tid;		/* thread id */
	bool write;
	char comm[TASK_COMM_LEN];
};

/* Per NUMA node totals of lru_lock (one array of nr_node_ids per CPU). */
struct mmfix_node_stat {
	u64 acquisitions;
	u64 contended;
	u64 wait_ns;
	u64 hold_ns;
};

/*
 * Everything one CPU counted.  Only that CPU writes it, with interrupts
 * off and inside @seq, so a reader on another CPU copies a consistent
 * block (histogram and its totals from the same instant).  Probes never
 * write from NMI context.
 */
struct mmfix_stats_cpu {
	seqcount_t seq;
	/* everything from here on is zeroed by a reset */
	struct mmfix_lock_stat cls[MMFIX_STATS_NR_CLASSES];
	struct mmfix_worst worst_hold;
	struct mmfix_worst worst_wait;
	u64 lru_unmatched;	/* lru holds whose unlock was never seen */
	u64 mmap_untracked;	/* mmap_lock operations with no free slot */
	u64 mmap_skipped_irqs_off; /* trylocks with interrupts disabled */
};

extern struct mmfix_stats_cpu __percpu *mmfix_stats_pcpu;
extern struct mmfix_node_stat __percpu *mmfix_stats_node_pcpu;
/* The lock sources, each with its own switch (stats/<lock>/enabled). */
enum {
	MMFIX_STATS_SRC_LRU,
	MMFIX_STATS_SRC_MMAP,
	MMFIX_STATS_NR_SRC
};

extern bool mmfix_stats_on[MMFIX_STATS_NR_SRC];
/*
 * The hold tier (stats/hold_time) of source @src: true only while the
 * switch is on and the probe that ends a hold (the unlock callback, the
 * mmap_lock_released probe) is registered.  A hold is opened only when
 * this reads true, stamped with the source's epoch, which changes each
 * time that probe is registered again: a hold opened before the probe
 * went away (its end unseen) is never timed by the new one.
 */
extern bool mmfix_stats_hold[MMFIX_STATS_NR_SRC];
extern unsigned int mmfix_stats_hold_epoch[MMFIX_STATS_NR_SRC];

/*
 * The switch of source @src is on.  Probes stay registered for a while
 * after it goes off (stats.c); until then they end the holds they saw
 * start but open no new one.
 */
static __always_inline bool mmfix_stats_counting(unsigned int src)
{
	return READ_ONCE(mmfix_stats_on[src]);
}

/* Hold times of source @src are measured (stats/hold_time). */
static __always_inline bool mmfix_stats_holding(unsigned int src)
{
	return READ_ONCE(mmfix_stats_hold[src]);
}

/*
 * Execution context of the current CPU: task, softirq, hardirq, NMI.  A
 * spinlock holder cannot leave its CPU, and code interrupting it runs in
 * a higher context, so per-CPU, per-context state follows one holder.
 */
enum {
	MMFIX_CTX_TASK,
	MMFIX_CTX_SOFTIRQ,
	MMFIX_CTX_HARDIRQ,
	MMFIX_CTX_NMI,
	MMFIX_NR_CTX
};

static __always_inline unsigned int mmfix_ctx(void)
{
	unsigned long pc = preempt_count();

	if (pc & NMI_MASK)
		return MMFIX_CTX_NMI;
	if (pc & HARDIRQ_MASK)
		return MMFIX_CTX_HARDIRQ;
	if (pc & SOFTIRQ_OFFSET)
		return MMFIX_CTX_SOFTIRQ;
	return MMFIX_CTX_TASK;
}

/* log2 bucket: 0 for 0 ns, i for [2^(i-1), 2^i) ns. */
static __always_inline unsigned int mmfix_hist_bucket(u64 ns)
{
	return ns ? fls64(ns) : 0;
}

/* Opens this CPU's block for writing; interrupts stay off until end. */
static __always_inline struct mmfix_stats_cpu *
mmfix_stats_begin(unsigned long *flags)
{
	struct mmfix_stats_cpu *s;

	local_irq_save(*flags);
	s = this_cpu_ptr(mmfix_stats_pcpu);
	raw_write_seqcount_begin(&s->seq);
	return s;
}

static __always_inline void mmfix_stats_end(struct mmfix_stats_cpu *s,
					    unsigned long flags)
{
	raw_write_seqcount_end(&s->seq);
	local_irq_restore(flags);
}

/*
 * Adds one to the u64 at @field of this CPU's block (or node array),
 * outside the seqcount: one instruction (an increment relative to the
 * per-CPU base), so no interrupt, reset (an IPI) or reader (which copies
 * a u64 at a time) sees it half done.  For the uncontended acquisition
 * counts, the one update on the fast paths; everything updated together
 * with other fields (a wait and its histogram) stays inside
 * mmfix_stats_begin() and _end().
 */
#define mmfix_stats_count(field)	this_cpu_inc(field)

static __always_inline void mmfix_stat_wait(struct mmfix_lock_stat *c, u64 ns)
{
	c->wait_ns += ns;
	if (ns > c->wait_max_ns)
		c->wait_max_ns = ns;
	c->wait_hist[mmfix_hist_bucket(ns)]++;
}

static __always_inline void mmfix_stat_hold(struct mmfix_lock_stat *c, u64 ns)
{
	c->holds++;
	c->hold_ns += ns;
	if (ns > c->hold_max_ns)
		c->hold_max_ns = ns;
	c->hold_hist[mmfix_hist_bucket(ns)]++;
}

/*
 * stats_lru.c: arm() hooks the lock functions (the default tier),
 * hold_start() the unlocks (the hold tier); disarm() and hold_stop()
 * undo them.
 */
void mmfix_stats_lru_clear(void);
int mmfix_stats_lru_arm(void);
void mmfix_stats_lru_disarm(void);
int mmfix_stats_lru_hold_start(void);
void mmfix_stats_lru_hold_stop(void);
void mmfix_stats_lru_contention_begin(void *lock);
bool mmfix_stats_lru_contention_end(void *lock);

/*
 * stats_mmap.c: start() allocates the per-task table and registers
 * mmap_lock_acquire_returned; hold_start() registers mmap_lock_released
 * (needs the table); stop() and hold_stop() unregister them; release()
 * frees the table once no probe can still be running, including the
 * contention probes, which may stay registered for lru_lock.
 */
int mmfix_stats_mmap_start(void);
void mmfix_stats_mmap_stop(void);
int mmfix_stats_mmap_hold_start(void);
void mmfix_stats_mmap_hold_stop(void);
void mmfix_stats_mmap_release(void);
void mmfix_stats_mmap_contention_begin(void *lock, bool write);
void mmfix_stats_mmap_contention_end(void *lock, int ret);
#ifdef MMFIX_TEST_IRQS_OFF_TRYLOCK
int mmfix_stats_mmap_test_trylock(void);
#endif
/* Before each probe registration; tests only, see stats.c. */
#ifdef MMFIX_TEST_PROBE_FAIL
int mmfix_stats_test_fail(void);
extern bool mmfix_test_lose_acquisitions;
static inline bool mmfix_test_acquisition_lost(void)
{
	return READ_ONCE(mmfix_test_lose_acquisitions);
}
#else
static inline int mmfix_stats_test_fail(void) { return 0; }
static inline bool mmfix_test_acquisition_lost(void) { return false; }
#endif

#endif /* MMFIX_STATS_H */
