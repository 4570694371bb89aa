// SPDX-License-Identifier: GPL-2.0
/*
 * mm->mmap_lock statistics (docs/lock-stats.md), from the kernel's own
 * mmap_lock tracepoints and lock:contention_begin/end.
 *
 * Default tier: mmap_lock_acquire_returned counts the acquisition (or,
 * with success false, a failed trylock or killed wait).  A wait is what
 * the task spent queued on the rwsem: lock:contention_begin on
 * &mm->mmap_lock to contention_end (stats.c passes them on).  A wait that
 * ends with the lock taken (contention_end's ret 0) is counted contended,
 * with its time, by contention_end itself; the acquire_returned that
 * follows in the same task counts the acquisition and looks nothing up.
 * Uncontended acquisitions have no wait, so mmap_lock_start_locking is
 * not needed.
 *
 * Hold tier (stats/hold_time): mmap_lock_released as well; the hold runs
 * from acquire_returned to released.
 *
 * Holders sleep and migrate, so per-CPU state cannot follow them.  A
 * small open-addressing table keyed by (task, mm) holds one slot per
 * contended wait in progress (contention_begin to _end) or (hold tier)
 * lock held.  Only the owning task writes its slots: it claims a free
 * one with cmpxchg() on ->task and frees it with a release store, and
 * other tasks only ever compare ->task with themselves.  No lock, no
 * allocation in the probes; a task that finds no free slot within
 * MMFIX_MMAP_PROBE entries is counted as untracked.
 *
 * Events outside task context are ignored: mmap_lock is a sleeping lock,
 * and the one non-owner release (mmap_read_unlock_non_owner() from an
 * irq_work) must not end the hold of the task it interrupted.  That
 * irq_work releases a trylock made with interrupts disabled -- in NMI
 * context, or in task context (BPF build-id stack walks, bpf_find_vma()
 * from tracing programs).  Such an acquisition is not tracked either:
 * its release is never seen by its task, so its slot would stay taken
 * and the task's next unlock of the mm would be timed from it.  It is
 * counted in skipped_irqs_off instead, in both tiers, so that the
 * counts of the default tier do not depend on hold_time.  Nothing else
 * takes mmap_lock with interrupts disabled: every other way in may sleep.
 */
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/mmap_lock.h>
#include <linux/mm_types.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <trace/events/mmap_lock.h>
#include "stats.h"

#define MMFIX_MMAP_ORDER	12
#define MMFIX_MMAP_SLOTS	(1U << MMFIX_MMAP_ORDER)
#define MMFIX_MMAP_PROBE	16

/* WAITING: queued (contention_begin to contention_end) */
enum {
	MMFIX_MMAP_FREE,
	MMFIX_MMAP_WAITING,
	MMFIX_MMAP_HELD,
};

struct mmfix_mmap_slot {
	struct task_struct *task;	/* owner, NULL when free */
	struct mm_struct *mm;
	u64 since;			/* contention_begin, or acquisition */
	unsigned int epoch;		/* HELD: mmfix_stats_hold_epoch */
	u8 state;
	bool write;
};

static struct mmfix_mmap_slot *mmfix_mmap_table;
/* mmap_lock_released is registered: HELD slots may exist (hold tier). */
static bool mmfix_mmap_released_hooked;

#ifdef MMFIX_HAVE_MMAP_MEMCG_PATH
/*
 * 6.x: every event of the kernel's mmap_lock tracepoints carries the
 * task's memcg path, which mm/mmap_lock.c formats (cgroup_path(), under
 * css_set_lock and kernfs_rename_lock) before calling the probes, while
 * its reg_refcount -- how many of those tracepoints have a probe, kept
 * by their regfunc and unregfunc, trace_mmap_lock_reg() and _unreg()
 * (livepatch relocations) -- is not 0.  mmfix's probes never read the
 * path, so a tracepoint whose only probe is mmfix's should not count:
 * mmfix's probe takes that count back when it finds itself alone on
 * the tracepoint (TAKEN) and gives it back when another probe (perf,
 * ftrace, BPF) has joined it, and before unregistering (STOPPED).  The
 * count follows at mmfix's next event: a tracer's first events may carry
 * an empty path, as the kernel's own do while it registers.  Only the
 * probe that wins the state change calls reg or unreg, so the two calls
 * always pair up.
 */
enum { MMFIX_PATH_STOPPED, MMFIX_PATH_COUNTED, MMFIX_PATH_TAKEN };

struct mmfix_mmap_path {
	struct tracepoint *tp;
	atomic_t state;
};

static struct mmfix_mmap_path mmfix_path_acquired = {
	.tp = &__tracepoint_mmap_lock_acquire_returned,
};
static struct mmfix_mmap_path mmfix_path_released = {
	.tp = &__tracepoint_mmap_lock_released,
};

/*
 * One call site each: every call is a livepatch relocation, which 6.1's
 * core resolves by walking all of kallsyms while the module loads.
 */
static noinline void mmfix_path_reg(void)
{
	trace_mmap_lock_reg();
}

static noinline void mmfix_path_unreg(void)
{
	trace_mmap_lock_unreg();
}

/* Before registering. */
static void mmfix_path_start(struct mmfix_mmap_path *p)
{
	atomic_set(&p->state, MMFIX_PATH_COUNTED);
}

/* In mmfix's probe, on every event: alone, or joined by another probe? */
static __always_inline void mmfix_path_check(struct mmfix_mmap_path *p)
{
	struct tracepoint_func *f = rcu_dereference_sched(p->tp->funcs);
	int state = atomic_read(&p->state);
	bool alone = f && !f[1].func;

	if (alone && state == MMFIX_PATH_COUNTED) {
		if (atomic_cmpxchg(&p->state, state, MMFIX_PATH_TAKEN) == state)
			mmfix_path_unreg();
	} else if (!alone && state == MMFIX_PATH_TAKEN) {
		if (atomic_cmpxchg(&p->state, state, MMFIX_PATH_COUNTED) == state)
			mmfix_path_reg();
	}
}

/* Before unregistering: no probe changes the count any more. */
static void mmfix_path_stop(struct mmfix_mmap_path *p)
{
	if (atomic_xchg(&p->state, MMFIX_PATH_STOPPED) == MMFIX_PATH_TAKEN)
		mmfix_path_reg();
}
#else
/* 7.x: the tracepoints carry no memcg path. */
struct mmfix_mmap_path { };
static struct mmfix_mmap_path mmfix_path_acquired, mmfix_path_released;
static inline void mmfix_path_start(struct mmfix_mmap_path *p) { }
static inline void mmfix_path_check(struct mmfix_mmap_path *p) { }
static inline void mmfix_path_stop(struct mmfix_mmap_path *p) { }
#endif

static unsigned long mmfix_mmap_hash(struct mm_struct *mm)
{
	return hash_long((unsigned long)current ^
			 ((unsigned long)mm >> L1_CACHE_SHIFT), MMFIX_MMAP_ORDER);
}

/* The current task's slot for @mm in @state (and @write unless < 0). */
static struct mmfix_mmap_slot *mmfix_mmap_find_in(struct mmfix_mmap_slot *t,
						  struct mm_struct *mm,
						  u8 state, int write)
{
	unsigned long h = mmfix_mmap_hash(mm);
	struct mmfix_mmap_slot *s;
	unsigned int i;

	for (i = 0; i < MMFIX_MMAP_PROBE; i++) {
		s = &t[(h + i) & (MMFIX_MMAP_SLOTS - 1)];
		if (READ_ONCE(s->task) == current && s->mm == mm &&
		    s->state == state && (write < 0 || s->write == write))
			return s;
	}
	return NULL;
}

/* In the mmap_lock probes, which cannot run once the table is freed. */
static struct mmfix_mmap_slot *mmfix_mmap_find(struct mm_struct *mm,
					       u8 state, int write)
{
	return mmfix_mmap_find_in(mmfix_mmap_table, mm, state, write);
}

static struct mmfix_mmap_slot *mmfix_mmap_claim(struct mm_struct *mm)
{
	unsigned long h = mmfix_mmap_hash(mm);
	struct mmfix_mmap_slot *s;
	unsigned int i;

	for (i = 0; i < MMFIX_MMAP_PROBE; i++) {
		s = &mmfix_mmap_table[(h + i) & (MMFIX_MMAP_SLOTS - 1)];
		if (!READ_ONCE(s->task) && !cmpxchg(&s->task, NULL, current)) {
			s->mm = mm;
			return s;
		}
	}
	return NULL;
}

static void mmfix_mmap_free(struct mmfix_mmap_slot *s)
{
	s->state = MMFIX_MMAP_FREE;
	/* our last store to the slot; pairs with cmpxchg() in claim() */
	smp_store_release(&s->task, NULL);
}

static void mmfix_worst_update(struct mmfix_worst *w, u64 ns, bool write)
{
	if (ns <= w->ns)
		return;
	w->ns = ns;
	w->pid = task_tgid_nr(current);
	w->tid = task_pid_nr(current);
	w->write = write;
	/* a racing rename may tear the name; never its terminator */
	memcpy(w->comm, current->comm, sizeof(w->comm));
	w->comm[sizeof(w->comm) - 1] = '\0';
}

static struct mmfix_lock_stat *mmfix_mmap_class(struct mmfix_stats_cpu *s,
						bool write)
{
	return &s->cls[write ? MMFIX_STATS_MMAP_WRITE : MMFIX_STATS_MMAP_READ];
}

static void mmfix_mmap_count_untracked(void)
{
	struct mmfix_stats_cpu *s;
	unsigned long flags;

	s = mmfix_stats_begin(&flags);
	s->mmap_untracked++;
	mmfix_stats_end(s, flags);
}

/* An acquisition (its wait, if any, was counted by contention_end). */
static __always_inline void mmfix_mmap_count(bool write)
{
	if (write)
		mmfix_stats_count(mmfix_stats_pcpu->cls[MMFIX_STATS_MMAP_WRITE].acquisitions);
	else
		mmfix_stats_count(mmfix_stats_pcpu->cls[MMFIX_STATS_MMAP_READ].acquisitions);
}

/* A contended wait of @wait ns that ended with the lock taken. */
static void mmfix_mmap_count_wait(bool write, u64 wait)
{
	struct mmfix_stats_cpu *s;
	struct mmfix_lock_stat *c;
	unsigned long flags;

	s = mmfix_stats_begin(&flags);
	c = mmfix_mmap_class(s, write);
	c->contended++;
	mmfix_stat_wait(c, wait);
	mmfix_worst_update(&s->worst_wait, wait, write);
	mmfix_stats_end(s, flags);
}

/* Hold tier: the hold of @slot ends at @now. */
static void mmfix_mmap_count_hold(struct mmfix_mmap_slot *slot, u64 now)
{
	u64 hold = mmfix_elapsed(slot->since, now);
	struct mmfix_stats_cpu *s;
	unsigned long flags;

	/* opened before mmap_lock_released was (re)registered: end unseen */
	if (slot->epoch != READ_ONCE(mmfix_stats_hold_epoch[MMFIX_STATS_SRC_MMAP]))
		return;
	s = mmfix_stats_begin(&flags);
	mmfix_stat_hold(mmfix_mmap_class(s, slot->write), hold);
	mmfix_worst_update(&s->worst_hold, hold, slot->write);
	mmfix_stats_end(s, flags);
}

/*
 * A trylock in task context with interrupts disabled: released through
 * an irq_work, out of its task's sight (see the top of this file).
 */
static void mmfix_mmap_count_skipped(void)
{
	struct mmfix_stats_cpu *s;
	unsigned long flags;

	s = mmfix_stats_begin(&flags);
	s->mmap_skipped_irqs_off++;
	mmfix_stats_end(s, flags);
}

static void mmfix_mmap_count_failed(bool write)
{
	struct mmfix_stats_cpu *s;
	unsigned long flags;

	s = mmfix_stats_begin(&flags);
	mmfix_mmap_class(s, write)->failed++;
	mmfix_stats_end(s, flags);
}

/*
 * An acquisition (or a failed one) returns: count it and (hold tier)
 * open its hold.  Its wait, if it queued, was counted by contention_end,
 * which ran in this task just before, with the lock taken: the default
 * tier looks nothing up here, not even while other tasks are queued
 * (docs/lock-stats.md, "Measured", attempts 4 and 5).
 */
static noinline void mmfix_mmap_acquired_slow(struct mm_struct *mm,
					      bool write, bool success)
{
	struct mmfix_mmap_slot *s;
	bool counting, holding;
	u64 now;

	counting = mmfix_stats_counting(MMFIX_STATS_SRC_MMAP);
	if (unlikely(irqs_disabled())) {
		if (counting)
			mmfix_mmap_count_skipped();
		return;
	}
	if (!success) {
		if (counting)
			mmfix_mmap_count_failed(write);
		return;
	}
	/* mmap_write_downgrade(): the write hold ends here (hold tier) */
	s = NULL;
	if (!write && READ_ONCE(mmfix_mmap_released_hooked))
		s = mmfix_mmap_find(mm, MMFIX_MMAP_HELD, 1);
	/* the clock only for a time: not for a default count */
	holding = mmfix_stats_holding(MMFIX_STATS_SRC_MMAP);
	now = 0;
	if (s || holding)
		now = local_clock();
	if (s)
		mmfix_mmap_count_hold(s, now);
	if (!counting) {
		if (s)
			mmfix_mmap_free(s);
		return;	/* switched off: no new acquisition */
	}
	if (!mmfix_test_acquisition_lost())
		mmfix_mmap_count(write);
	if (!holding) {
		if (s)
			mmfix_mmap_free(s);
		return;
	}
	/* hold tier: one slot for the hold, the downgraded one or a new one */
	if (!s)
		s = mmfix_mmap_claim(mm);
	if (!s) {
		mmfix_mmap_count_untracked();
		return;
	}
	s->write = write;
	s->since = now;
	s->epoch = READ_ONCE(mmfix_stats_hold_epoch[MMFIX_STATS_SRC_MMAP]);
	s->state = MMFIX_MMAP_HELD;
}

/*
 * The probe.  The default tier's common case -- an uncontended or
 * already counted, successful acquisition in task context, with no hold
 * to end or open -- is one increment; everything else is out of line.
 */
static void mmfix_mmap_acquire_returned(void *data, struct mm_struct *mm,
					MMFIX_MMAP_TP_PATH bool write,
					bool success)
{
	mmfix_path_check(&mmfix_path_acquired);
#ifdef MMFIX_TEST_NO_MMAP_COUNT
	return;	/* benchmarks only: what the rest of this probe costs */
#endif
	if (!in_task())
		return;
	if (likely(success && mmfix_stats_counting(MMFIX_STATS_SRC_MMAP) &&
		   !mmfix_stats_holding(MMFIX_STATS_SRC_MMAP) &&
		   (write || !READ_ONCE(mmfix_mmap_released_hooked)) &&
		   !irqs_disabled() && !mmfix_test_acquisition_lost())) {
		mmfix_mmap_count(write);
		return;
	}
	mmfix_mmap_acquired_slow(mm, write, success);
}

/* Hold tier. */
static void mmfix_mmap_released(void *data, struct mm_struct *mm,
				MMFIX_MMAP_TP_PATH bool write)
{
	struct mmfix_mmap_slot *s;

	mmfix_path_check(&mmfix_path_released);
	if (!in_task())
		return;
	s = mmfix_mmap_find(mm, MMFIX_MMAP_HELD, write);
	if (!s)
		return;	/* taken before hold times were switched on */
	mmfix_mmap_count_hold(s, local_clock());
	mmfix_mmap_free(s);
}

/* lock:contention_begin on an rwsem: this task queues for @mm's mmap_lock? */
void mmfix_stats_mmap_contention_begin(void *lock, bool write)
{
	struct mmfix_mmap_slot *t = READ_ONCE(mmfix_mmap_table), *s;
	struct mm_struct *mm;

	/* registered for lru_lock too: the table may be gone (release()) */
	/* rwsem_down_write_slowpath() calls it with interrupts off */
	if (!in_task() || !t || !mmfix_stats_counting(MMFIX_STATS_SRC_MMAP))
		return;
#ifdef MMFIX_TEST_NO_MMAP_CONTENTION
	/*
	 * Benchmarks only, as MMFIX_TEST_NO_MMAP_COUNT and _NO_LRU_COUNT
	 * (docs/lock-stats.md "Measured", attempt 4): what the contended
	 * path costs -- every contended mmap_lock acquisition is counted
	 * uncontended, no slot, no clock read.  Counts are not exact.
	 */
	return;
#endif
	/*
	 * Any rwsem: compared, never dereferenced.  Only the task's own mm
	 * is known to be an mmap_lock that acquire_returned will follow;
	 * a slot taken for another rwsem would never be freed.
	 */
	mm = container_of((struct rw_semaphore *)lock, struct mm_struct,
			  mmap_lock);
	if (mm != current->mm)
		return;
	s = mmfix_mmap_find_in(t, mm, MMFIX_MMAP_WAITING, -1);
	if (!s) {
		s = mmfix_mmap_claim(mm);
		if (!s) {
			mmfix_mmap_count_untracked();
			return;
		}
	}
	s->write = write;
	s->since = local_clock();
	s->state = MMFIX_MMAP_WAITING;
}
/*
 * lock:contention_end: the queued wait of this task for @lock ends, with
 * the lock taken when @ret is 0 (else a fatal signal ended a killable
 * wait: acquire_returned counts it failed).  A taken lock is counted
 * contended here, with its wait; the acquisition itself is counted by
 * the acquire_returned that follows in this task (stats.c registers this
 * probe before contention_begin's, so no wait's end goes unseen).
 */
void mmfix_stats_mmap_contention_end(void *lock, int ret)
{
	struct mmfix_mmap_slot *t = READ_ONCE(mmfix_mmap_table), *s;
	struct mm_struct *mm;

	if (!in_task() || !t)
		return;
	mm = container_of((struct rw_semaphore *)lock, struct mm_struct,
			  mmap_lock);
	if (mm != current->mm)
		return;
	s = mmfix_mmap_find_in(t, mm, MMFIX_MMAP_WAITING, -1);
	if (!s)
		return;
	if (!ret && mmfix_stats_counting(MMFIX_STATS_SRC_MMAP))
		mmfix_mmap_count_wait(s->write,
				      mmfix_elapsed(s->since, local_clock()));
	mmfix_mmap_free(s);
}

#ifdef MMFIX_TEST_IRQS_OFF_TRYLOCK
/*
 * Tests only (scripts/build-module --cflags -DMMFIX_TEST_IRQS_OFF_TRYLOCK,
 * tests/guest/t-43-*): what BPF's build-id stack walk does -- a read
 * trylock of the current task's mm with interrupts disabled, released by
 * an irq_work with mmap_read_unlock_non_owner().
 */
static struct mm_struct *mmfix_test_mm;

static void mmfix_test_unlock(struct irq_work *work)
{
	mmap_read_unlock_non_owner(mmfix_test_mm);
}

static DEFINE_IRQ_WORK(mmfix_test_work, mmfix_test_unlock);

int mmfix_stats_mmap_test_trylock(void)
{
	struct mm_struct *mm = current->mm;
	unsigned long flags;
	bool locked;

	if (!mm)
		return -EINVAL;
	mmgrab(mm);
	local_irq_save(flags);
	locked = mmap_read_trylock(mm);
	if (locked) {
		mmfix_test_mm = mm;
		irq_work_queue(&mmfix_test_work);
	}
	local_irq_restore(flags);
	if (locked)
		irq_work_sync(&mmfix_test_work);
	mmdrop(mm);
	return locked ? 0 : -EBUSY;
}
#endif

/*
 * The table first: the contention probes (stats.c) look for it.  An
 * acquisition seen without its contention is counted uncontended.
 */
int mmfix_stats_mmap_start(void)
{
	int ret;

	mmfix_mmap_table = kvcalloc(MMFIX_MMAP_SLOTS, sizeof(*mmfix_mmap_table),
				    GFP_KERNEL);
	if (!mmfix_mmap_table)
		return -ENOMEM;
	mmfix_path_start(&mmfix_path_acquired);
	ret = mmfix_stats_test_fail() ?:
	      register_trace_mmap_lock_acquire_returned(mmfix_mmap_acquire_returned,
							NULL);
	if (ret) {
		pr_warn("stats: cannot register mmap_lock tracepoint probes (%d)\n",
			ret);
		mmfix_stats_mmap_release();
	}
	return ret;
}

void mmfix_stats_mmap_stop(void)
{
	if (!mmfix_mmap_table)
		return;
	mmfix_path_stop(&mmfix_path_acquired);
	WARN_ON_ONCE(unregister_trace_mmap_lock_acquire_returned(
			mmfix_mmap_acquire_returned, NULL));
}

/* Hold tier; after start(): released looks in the table. */
int mmfix_stats_mmap_hold_start(void)
{
	int ret;

	if (WARN_ON_ONCE(!mmfix_mmap_table))
		return -EINVAL;
	mmfix_path_start(&mmfix_path_released);
	ret = mmfix_stats_test_fail() ?:
	      register_trace_mmap_lock_released(mmfix_mmap_released, NULL);
	if (ret)
		pr_warn("stats: cannot register the mmap_lock_released probe (%d)\n",
			ret);
	else
		WRITE_ONCE(mmfix_mmap_released_hooked, true);
	return ret;
}

void mmfix_stats_mmap_hold_stop(void)
{
	WRITE_ONCE(mmfix_mmap_released_hooked, false);
	mmfix_path_stop(&mmfix_path_released);
	WARN_ON_ONCE(unregister_trace_mmap_lock_released(mmfix_mmap_released,
							 NULL));
}

/*
 * After stop(), hold_stop() and tracepoint_synchronize_unregister(): no
 * mmap_lock probe can see the table.  The contention probes may still be
 * registered (for lru_lock): they read the pointer once, so wait for
 * them again.
 */
void mmfix_stats_mmap_release(void)
{
	struct mmfix_mmap_slot *t = mmfix_mmap_table;

	if (!t)
		return;
	WRITE_ONCE(mmfix_mmap_table, NULL);
	tracepoint_synchronize_unregister();
	kvfree(t);
}
