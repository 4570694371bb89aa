// SPDX-License-Identifier: GPL-2.0
/*
 * lruvec->lru_lock statistics (docs/lock-stats.md).
 *
 * Acquisitions: kretprobes on folio_lruvec_lock(), _irq() and _irqsave(),
 * out of line in every supported kernel; each returns the lruvec it
 * locked.  Contention: lock:contention_begin/end (stats.c passes on the
 * spinlock ones) while one of them runs on this CPU and context, kept
 * only when the lock waited for is the one returned.
 *
 * Hold time runs from that return to the matching unlock.  Callers
 * unlock with inline spin_unlock*(&lruvec->lru_lock), which ends in the
 * out-of-line _raw_spin_unlock(), _irq() or _irqrestore().  One ftrace
 * callback on those three (cheaper than a kprobe: no int3, no kprobe
 * lookup) compares the lock with the one this CPU holds in this
 * context.  A spinlock holder cannot sleep or migrate, and whatever
 * interrupts it runs in a higher context, so a per-CPU slot per context
 * follows exactly one hold.  Every unlock in the system pays for the
 * callback while stats are on; nothing is registered while they are off.
 */
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/memcontrol.h>
#include <linux/mmzone.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "stats.h"

/* State of the lru_lock taken in one context of one CPU. */
struct mmfix_lru_slot {
	/* Between entry and return of folio_lruvec_lock*(), else NULL. */
	struct task_struct *task;
	void *wait_lock;	/* contention under way on this lock */
	u64 wait_start;
	void *contended_lock;	/* wait_ns below was spent on this lock */
	u64 wait_ns;
	/* The lru_lock held since held_since, else NULL. */
	void *held;
	u64 held_since;
	int held_nid;
};

static DEFINE_PER_CPU(struct mmfix_lru_slot[MMFIX_NR_CTX], mmfix_lru_slots);

/* What the entry handler tells the return handler. */
struct mmfix_lru_ri {
	int cpu;
	unsigned int ctx;
};

static const char *const mmfix_lru_lock_funcs[] = {
	"folio_lruvec_lock",
	"folio_lruvec_lock_irq",
	"folio_lruvec_lock_irqsave",
};
#define MMFIX_LRU_NR_FUNCS ARRAY_SIZE(mmfix_lru_lock_funcs)

static const char *const mmfix_lru_unlock_funcs[] = {
	"_raw_spin_unlock",
	"_raw_spin_unlock_irq",
	"_raw_spin_unlock_irqrestore",
};

static struct kretprobe mmfix_lru_krp[MMFIX_LRU_NR_FUNCS];
static bool mmfix_lru_armed;
/* kretprobe misses of earlier arm/disarm rounds, since the last reset. */
static u64 mmfix_lru_missed_saved;
static struct ftrace_ops *mmfix_lru_unlock_ops;

static struct mmfix_lru_slot *mmfix_lru_slot(unsigned int ctx)
{
	return this_cpu_ptr(&mmfix_lru_slots[ctx]);
}

static int mmfix_lru_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct mmfix_lru_ri *d = (struct mmfix_lru_ri *)ri->data;
	struct mmfix_lru_slot *slot;

	d->cpu = smp_processor_id();
	d->ctx = mmfix_ctx();
	slot = mmfix_lru_slot(d->ctx);
	slot->wait_lock = NULL;
	slot->contended_lock = NULL;
	slot->wait_ns = 0;
	WRITE_ONCE(slot->task, current);
	return 0;
}

static int mmfix_lru_return(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	struct mmfix_lru_ri *d = (struct mmfix_lru_ri *)ri->data;
	struct lruvec *lruvec = (struct lruvec *)regs_return_value(regs);
	void *lock = &lruvec->lru_lock;
	unsigned int ctx = mmfix_ctx();
	struct mmfix_lru_slot *slot = mmfix_lru_slot(ctx);
	int nid = lruvec_pgdat(lruvec)->node_id;
	struct mmfix_stats_cpu *s;
	struct mmfix_lock_stat *c;
	struct mmfix_node_stat *n;
	bool contended = false, unmatched;
	unsigned long flags;
	u64 wait = 0;

	/*
	 * The contention seen by the entry's slot belongs to this call only
	 * if the task is still on the CPU and in the context it entered in
	 * (it may be preempted before taking the lock; then its wait, if
	 * any, was missed).
	 */
	if (slot->task == current && d->cpu == smp_processor_id() &&
	    d->ctx == ctx) {
		if (slot->contended_lock == lock) {
			contended = true;
			wait = slot->wait_ns;
		}
		WRITE_ONCE(slot->task, NULL);
	}

	unmatched = slot->held != NULL;
	slot->held = lock;
	slot->held_nid = nid;
	slot->held_since = local_clock();

	s = mmfix_stats_begin(&flags);
	c = &s->cls[MMFIX_STATS_LRU];
	c->acquisitions++;
	if (contended) {
		c->contended++;
		mmfix_stat_wait(c, wait);
	}
	s->lru_unmatched += unmatched;
	if (likely(nid >= 0 && nid < nr_node_ids)) {
		n = this_cpu_ptr(mmfix_stats_node_pcpu) + nid;
		n->acquisitions++;
		if (contended) {
			n->contended++;
			n->wait_ns += wait;
		}
	}
	mmfix_stats_end(s, flags);
	return 0;
}

static void notrace mmfix_lru_hold_end(struct mmfix_lru_slot *slot)
{
	u64 ns = mmfix_elapsed(slot->held_since, local_clock());
	int nid = slot->held_nid;
	struct mmfix_stats_cpu *s;
	unsigned long flags;

	slot->held = NULL;
	s = mmfix_stats_begin(&flags);
	mmfix_stat_hold(&s->cls[MMFIX_STATS_LRU], ns);
	if (likely(nid >= 0 && nid < nr_node_ids))
		(this_cpu_ptr(mmfix_stats_node_pcpu) + nid)->hold_ns += ns;
	mmfix_stats_end(s, flags);
}

/* Entry of _raw_spin_unlock*(): is it the lru_lock this CPU holds? */
static void notrace mmfix_lru_unlock(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ftrace_regs *fregs)
{
	void *lock = (void *)MMFIX_FREGS_ARG0(fregs);
	struct mmfix_lru_slot *slot;

	preempt_disable_notrace();
	slot = mmfix_lru_slot(mmfix_ctx());
	if (unlikely(slot->held == lock))
		mmfix_lru_hold_end(slot);
	preempt_enable_notrace();
}

void notrace mmfix_stats_lru_contention_begin(void *lock)
{
	struct mmfix_lru_slot *slot;

	preempt_disable_notrace();
	slot = mmfix_lru_slot(mmfix_ctx());
	if (READ_ONCE(slot->task) == current) {
		slot->wait_lock = lock;
		slot->wait_start = local_clock();
	}
	preempt_enable_notrace();
}

void notrace mmfix_stats_lru_contention_end(void *lock)
{
	struct mmfix_lru_slot *slot;

	preempt_disable_notrace();
	slot = mmfix_lru_slot(mmfix_ctx());
	if (READ_ONCE(slot->task) == current && slot->wait_lock == lock) {
		slot->wait_ns += mmfix_elapsed(slot->wait_start, local_clock());
		slot->contended_lock = lock;
		slot->wait_lock = NULL;
	}
	preempt_enable_notrace();
}

/* Forget holds and waits from an earlier round (probes are all off). */
static void mmfix_lru_clear_slots(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&mmfix_lru_slots, cpu), 0,
		       sizeof(mmfix_lru_slots));
}

int mmfix_stats_lru_start(void)
{
	struct ftrace_ops *ops;
	char name[32];
	unsigned int i;
	int ret;

	mmfix_lru_clear_slots();
	ops = kzalloc(sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return -ENOMEM;
	ops->func = mmfix_lru_unlock;
	for (i = 0; i < ARRAY_SIZE(mmfix_lru_unlock_funcs); i++) {
		/* ftrace_set_filter() may edit the buffer it parses */
		strscpy(name, mmfix_lru_unlock_funcs[i], sizeof(name));
		ret = ftrace_set_filter(ops, (unsigned char *)name,
					strlen(name), i == 0);
		if (ret) {
			pr_warn("stats: cannot trace %s (%d)\n", name, ret);
			goto err_filter;
		}
	}
	ret = register_ftrace_function(ops);
	if (ret) {
		pr_warn("stats: cannot register the unlock callback (%d)\n", ret);
		goto err_filter;
	}
	mmfix_lru_unlock_ops = ops;
	return 0;

err_filter:
	ftrace_free_filter(ops);
	kfree(ops);
	return ret;
}

void mmfix_stats_lru_stop(void)
{
	struct ftrace_ops *ops = mmfix_lru_unlock_ops;

	if (!ops)
		return;
	/* Waits until no CPU can still be in the callback. */
	WARN_ON_ONCE(unregister_ftrace_function(ops));
	ftrace_free_filter(ops);
	kfree(ops);
	mmfix_lru_unlock_ops = NULL;
}

int mmfix_stats_lru_arm(void)
{
	struct kretprobe *rps[MMFIX_LRU_NR_FUNCS];
	unsigned int i;
	int ret;

	for (i = 0; i < MMFIX_LRU_NR_FUNCS; i++) {
		struct kretprobe *rp = &mmfix_lru_krp[i];

		/* A kretprobe is registered from a clean structure only. */
		memset(rp, 0, sizeof(*rp));
		rp->kp.symbol_name = mmfix_lru_lock_funcs[i];
		rp->entry_handler = mmfix_lru_entry;
		rp->handler = mmfix_lru_return;
		rp->data_size = sizeof(struct mmfix_lru_ri);
		/*
		 * Instances live from entry to return; tasks may be
		 * preempted in between, so allow more than one per CPU.
		 */
		rp->maxactive = max(64U, 4 * num_possible_cpus());
		rps[i] = rp;
	}
	ret = register_kretprobes(rps, MMFIX_LRU_NR_FUNCS);
	if (ret) {
		pr_warn("stats: cannot probe folio_lruvec_lock*() (%d)\n", ret);
		return ret;
	}
	mmfix_lru_armed = true;
	return 0;
}

static u64 mmfix_lru_live_missed(void)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < MMFIX_LRU_NR_FUNCS; i++)
		sum += READ_ONCE(mmfix_lru_krp[i].nmissed) +
		       READ_ONCE(mmfix_lru_krp[i].kp.nmissed);
	return sum;
}

void mmfix_stats_lru_disarm(void)
{
	struct kretprobe *rps[MMFIX_LRU_NR_FUNCS];
	unsigned int i;

	if (!mmfix_lru_armed)
		return;
	for (i = 0; i < MMFIX_LRU_NR_FUNCS; i++)
		rps[i] = &mmfix_lru_krp[i];
	unregister_kretprobes(rps, MMFIX_LRU_NR_FUNCS);
	mmfix_lru_missed_saved += mmfix_lru_live_missed();
	mmfix_lru_armed = false;
}

/* Acquisitions the kretprobes could not follow since the last reset. */
u64 mmfix_stats_lru_missed(void)
{
	return mmfix_lru_missed_saved +
	       (mmfix_lru_armed ? mmfix_lru_live_missed() : 0);
}

void mmfix_stats_lru_reset_missed(void)
{
	unsigned int i;

	mmfix_lru_missed_saved = 0;
	if (!mmfix_lru_armed)
		return;
	for (i = 0; i < MMFIX_LRU_NR_FUNCS; i++) {
		WRITE_ONCE(mmfix_lru_krp[i].nmissed, 0);
		WRITE_ONCE(mmfix_lru_krp[i].kp.nmissed, 0);
	}
}
