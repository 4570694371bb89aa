// SPDX-License-Identifier: GPL-2.0
/*
 * lruvec->lru_lock statistics (docs/lock-stats.md).
 *
 * Default tier, one ftrace callback: on entry of folio_lruvec_lock(),
 * _irq() and _irqsave() (out of line in every supported kernel) the
 * callback works out, as folio_lruvec() does, the lruvec the function is
 * about to lock -- the function makes the same lookup next -- counts the
 * acquisition and notes the lock in this CPU's slot for the current
 * context.  lock:contention_begin/end on that lock (stats.c passes the
 * spinlock ones on) time the spin and count it as contended.
 *
 * Hold tier (stats/hold_time), a second callback: on entry of
 * _raw_spin_unlock(), _irq() and _irqrestore(), where the callers'
 * inline spin_unlock*(&lruvec->lru_lock) end up, it compares the lock
 * with the one this CPU holds in this context and, when it matches,
 * counts the hold, from the entry (or the end of the spin).  Every
 * spin_unlock in the system pays for it (a per-CPU load and a compare),
 * which is why it is opt-in.
 *
 * A spinlock holder cannot sleep or migrate, and whatever interrupts it
 * runs in a higher context, so a per-CPU slot per context follows exactly
 * one acquisition.  Without the unlock callback the slot is closed by the
 * end of a contended spin or by the next entry in that context; a
 * contended spin on the same lruvec lock taken directly (vmscan) by the
 * same task in between is counted as the noted acquisition's, at most
 * once.  With it, the unlock closes the slot.
 *
 * If the lruvec changes between the callback and the function's own
 * lookup (7.x reparents folios of a dying memcg; the function then
 * retries), the function unlocks the first lruvec itself, which ends the
 * hold; the lock it then takes is not counted.  A hold whose unlock is
 * never seen (the task was preempted and moved before taking the lock)
 * is counted as unmatched when the slot is next used, without a time.
 *
 * Nothing is registered while statistics are off.
 */
#include <linux/ftrace.h>
#include <linux/memcontrol.h>
#include <linux/mmzone.h>
#include <linux/rcupdate.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "stats.h"

/* The lru_lock held (or being taken) in one context of one CPU. */
struct mmfix_lru_slot {
	void *held;		/* NULL when none */
	struct task_struct *task;
	u64 since;		/* entry, or end of the contended spin */
	u64 wait_start;		/* 0 unless spinning */
	int nid;
	unsigned int epoch;	/* mmfix_stats_hold_epoch when opened */
	bool hold;		/* a hold is timed: its unlock is watched */
};

static DEFINE_PER_CPU(struct mmfix_lru_slot[MMFIX_NR_CTX], mmfix_lru_slots);

static struct ftrace_ops *mmfix_lru_unlock_ops;
static struct ftrace_ops *mmfix_lru_lock_ops;

/*
 * Counts an acquisition of @nid's lru_lock; a hold of the same slot
 * before it that never saw its unlock when @unmatched.
 */
static __always_inline void mmfix_lru_count_acquisition(int nid, bool unmatched)
{
	mmfix_stats_count(mmfix_stats_pcpu->cls[MMFIX_STATS_LRU].acquisitions);
	if (unlikely(unmatched))
		mmfix_stats_count(mmfix_stats_pcpu->lru_unmatched);
	if (likely(nid >= 0 && nid < nr_node_ids))
		mmfix_stats_count((mmfix_stats_node_pcpu + nid)->acquisitions);
}

/* The contended spin of the slot's acquisition, @ns long. */
static void notrace mmfix_lru_count_wait(struct mmfix_lru_slot *slot, u64 ns)
{
	struct mmfix_stats_cpu *s;
	struct mmfix_lock_stat *c;
	struct mmfix_node_stat *n;
	unsigned long flags;

	s = mmfix_stats_begin(&flags);
	c = &s->cls[MMFIX_STATS_LRU];
	c->contended++;
	mmfix_stat_wait(c, ns);
	if (likely(slot->nid >= 0 && slot->nid < nr_node_ids)) {
		n = this_cpu_ptr(mmfix_stats_node_pcpu) + slot->nid;
		n->contended++;
		n->wait_ns += ns;
	}
	mmfix_stats_end(s, flags);
}

/* The slot's hold ends now (hold tier), or its unlock was missed. */
static void notrace mmfix_lru_count_hold(struct mmfix_lru_slot *slot)
{
	u64 hold = mmfix_elapsed(slot->since, local_clock());
	struct mmfix_stats_cpu *s;
	unsigned long flags;

	s = mmfix_stats_begin(&flags);
	if (unlikely(slot->epoch !=
		     READ_ONCE(mmfix_stats_hold_epoch[MMFIX_STATS_SRC_LRU]))) {
		s->lru_unmatched++;	/* opened before the unlocks were watched */
	} else {
		mmfix_stat_hold(&s->cls[MMFIX_STATS_LRU], hold);
		if (likely(slot->nid >= 0 && slot->nid < nr_node_ids))
			(this_cpu_ptr(mmfix_stats_node_pcpu) + slot->nid)->hold_ns +=
				hold;
	}
	mmfix_stats_end(s, flags);
}

/*
 * The lruvec folio_lruvec() gives, from the kernel's inline helpers,
 * except that an uncharged folio gives NULL instead of the root memcg's
 * lruvec (root_mem_cgroup is not exported by 6.1 and 6.12, and an LRU
 * folio is always charged while memcg is on).  With preemption off.
 */
static struct lruvec *mmfix_folio_lruvec(struct folio *folio)
{
	struct pglist_data *pgdat = folio_pgdat(folio);
	struct mem_cgroup *memcg;

	if (mem_cgroup_disabled())
		return &pgdat->__lruvec;
	memcg = folio_memcg(folio);
	return memcg ? mem_cgroup_lruvec(memcg, pgdat) : NULL;
}

/* Entry of folio_lruvec_lock*(folio, ...): open a hold of its lruvec. */
static void notrace mmfix_lru_lock(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ftrace_regs *fregs)
{
	struct folio *folio = (struct folio *)MMFIX_FREGS_ARG0(fregs);
	struct mmfix_lru_slot *slot;
	struct lruvec *lruvec;
	int nid;

#ifdef MMFIX_TEST_NO_LRU_COUNT
	return;	/* benchmarks only (stats_mmap.c): what this callback costs */
#endif
	if (!mmfix_stats_counting(MMFIX_STATS_SRC_LRU))
		return;	/* switched off: holds already open still end */
	/*
	 * The lookup folio_lruvec_lock*() itself makes next.  With
	 * preemption off, which is an RCU read-side section for the
	 * memcg's lookup too (no rcu_read_lock(), an out-of-line call
	 * with preemptible RCU, on every acquisition).
	 */
	preempt_disable_notrace();
	lruvec = mmfix_folio_lruvec(folio);
	if (unlikely(!lruvec)) {
		preempt_enable_notrace();
		return;
	}
	nid = lruvec_pgdat(lruvec)->node_id;
	slot = this_cpu_ptr(&mmfix_lru_slots[mmfix_ctx()]);
	/* a hold still open here never saw its unlock */
	mmfix_lru_count_acquisition(nid, slot->held && slot->hold);
	WRITE_ONCE(slot->held, NULL);
	slot->task = current;
	slot->nid = nid;
	slot->wait_start = 0;
	slot->hold = mmfix_stats_holding(MMFIX_STATS_SRC_LRU);
	if (slot->hold) {
		slot->epoch = READ_ONCE(mmfix_stats_hold_epoch[MMFIX_STATS_SRC_LRU]);
		slot->since = local_clock();
	}
	WRITE_ONCE(slot->held, &lruvec->lru_lock);
	preempt_enable_notrace();
}

/*
 * Hold tier, entry of _raw_spin_unlock*(): is it the lru_lock this CPU
 * holds?  Runs on every spinlock release in the system, so it is kept
 * minimal: the lock being released keeps preemption off until it
 * returns.  A slot opened without a hold (before hold_time was on) is
 * only closed.
 */
static void notrace mmfix_lru_unlock(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ftrace_regs *fregs)
{
	void *lock = (void *)MMFIX_FREGS_ARG0(fregs);
	struct mmfix_lru_slot *slot = raw_cpu_ptr(&mmfix_lru_slots[mmfix_ctx()]);

	if (unlikely(slot->held == lock) && slot->task == current) {
		if (slot->hold)
			mmfix_lru_count_hold(slot);
		WRITE_ONCE(slot->held, NULL);
	}
}

/* Called with preemption off: spinlock contention. */
void notrace mmfix_stats_lru_contention_begin(void *lock)
{
	struct mmfix_lru_slot *slot = raw_cpu_ptr(&mmfix_lru_slots[mmfix_ctx()]);

	if (slot->held == lock && slot->task == current)
		slot->wait_start = local_clock();
}

/*
 * The end of a spin on the lock of this context's slot: counted as a
 * contended acquisition at once.  Without a hold the slot is done.
 * True if the lock was the slot's.
 */
bool notrace mmfix_stats_lru_contention_end(void *lock)
{
	struct mmfix_lru_slot *slot = raw_cpu_ptr(&mmfix_lru_slots[mmfix_ctx()]);
	u64 now;

	if (slot->held != lock || slot->task != current || !slot->wait_start)
		return false;
	now = local_clock();
	mmfix_lru_count_wait(slot, mmfix_elapsed(slot->wait_start, now));
	slot->wait_start = 0;
	if (slot->hold)
		slot->since = now;	/* the hold starts when the spin ends */
	else
		WRITE_ONCE(slot->held, NULL);
	return true;
}

/* Forget slots from an earlier round (no callback can run). */
void mmfix_stats_lru_clear(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&mmfix_lru_slots, cpu), 0,
		       sizeof(mmfix_lru_slots));
}

/*
 * An ftrace_ops calling @func on entry of the @n functions at @ips.  By
 * address: matching names would look up the symbol of every traceable
 * function, on each switch-on (most of its cost).  The folio_lruvec_lock*()
 * are not exported: livepatch relocations (module/klp-symbols); their
 * addresses are compared by ftrace, never called.
 */
static struct ftrace_ops *mmfix_lru_hook(ftrace_func_t func,
					 unsigned long *ips, unsigned int n)
{
	struct ftrace_ops *ops;
	int ret;

	ops = kzalloc(sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return ERR_PTR(-ENOMEM);
	ops->func = func;
	ret = ftrace_set_filter_ips(ops, ips, n, 0, 1);
	if (ret) {
		pr_warn("stats: cannot trace %ps (%d)\n", (void *)ips[0], ret);
		goto err_filter;
	}
	ret = mmfix_stats_test_fail() ?: register_ftrace_function(ops);
	if (ret) {
		pr_warn("stats: cannot register an ftrace callback on %ps (%d)\n",
			(void *)ips[0], ret);
		goto err_filter;
	}
	return ops;

err_filter:
	ftrace_free_filter(ops);
	kfree(ops);
	return ERR_PTR(ret);
}

/* Waits until no CPU can still be in the callback, then frees it. */
static void mmfix_lru_unhook(struct ftrace_ops **opsp)
{
	struct ftrace_ops *ops = *opsp;

	if (!ops)
		return;
	WARN_ON_ONCE(unregister_ftrace_function(ops));
	ftrace_free_filter(ops);
	kfree(ops);
	*opsp = NULL;
}

int mmfix_stats_lru_hold_start(void)
{
	unsigned long ips[] = {
		(unsigned long)_raw_spin_unlock,
		(unsigned long)_raw_spin_unlock_irq,
		(unsigned long)_raw_spin_unlock_irqrestore,
	};
	struct ftrace_ops *ops;

	ops = mmfix_lru_hook(mmfix_lru_unlock, ips, ARRAY_SIZE(ips));
	if (IS_ERR(ops))
		return PTR_ERR(ops);
	mmfix_lru_unlock_ops = ops;
	return 0;
}

void mmfix_stats_lru_hold_stop(void)
{
	mmfix_lru_unhook(&mmfix_lru_unlock_ops);
}

int mmfix_stats_lru_arm(void)
{
	unsigned long ips[] = {
		(unsigned long)folio_lruvec_lock,
		(unsigned long)folio_lruvec_lock_irq,
		(unsigned long)folio_lruvec_lock_irqsave,
	};
	struct ftrace_ops *ops;

	ops = mmfix_lru_hook(mmfix_lru_lock, ips, ARRAY_SIZE(ips));
	if (IS_ERR(ops))
		return PTR_ERR(ops);
	mmfix_lru_lock_ops = ops;
	return 0;
}

void mmfix_stats_lru_disarm(void)
{
	mmfix_lru_unhook(&mmfix_lru_lock_ops);
}
