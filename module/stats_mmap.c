// SPDX-License-Identifier: GPL-2.0
/*
 * mm->mmap_lock statistics (docs/lock-stats.md), from the kernel's own
 * mmap_lock tracepoints: start_locking, acquire_returned (with success,
 * false for a failed trylock or a killed wait) and released.  Wait runs
 * from start_locking to acquire_returned; hold from there to released,
 * where the acquisition is counted with both (one update of the per-CPU
 * block per lock held).  It counts as contended when its task queued on
 * the rwsem (lock:contention_begin on &mm->mmap_lock; stats.c passes
 * those on).
 *
 * Holders sleep and migrate, so per-CPU state cannot follow them.  A
 * small open-addressing table keyed by (task, mm) holds one slot per
 * acquisition in progress or lock held.  Only the owning task writes
 * its slots: it claims a free one with cmpxchg() on ->task and frees it
 * with a release store, and other tasks only ever compare ->task with
 * themselves.  No lock, no allocation in the probes; a task that finds
 * no free slot within MMFIX_MMAP_PROBE entries is counted as untracked.
 *
 * Events outside task context are ignored: mmap_lock is a sleeping lock,
 * and the one non-owner release (mmap_read_unlock_non_owner() from an
 * irq_work) must not end the hold of the task it interrupted.  That
 * irq_work releases a trylock made with interrupts disabled -- in NMI
 * context, or in task context (BPF build-id stack walks, bpf_find_vma()
 * from tracing programs).  Such an acquisition is not tracked either:
 * its release is never seen by its task, so its slot would stay taken
 * and the task's next unlock of the mm would be timed from it.  It is
 * counted in skipped_irqs_off instead.  Nothing else takes mmap_lock
 * with interrupts disabled: every other way in may sleep.
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

enum { MMFIX_MMAP_FREE, MMFIX_MMAP_ACQUIRING, MMFIX_MMAP_HELD };

struct mmfix_mmap_slot {
	struct task_struct *task;	/* owner, NULL when free */
	struct mm_struct *mm;
	u64 since;			/* start_locking, or acquisition */
	u64 wait;			/* of the lock held */
	u8 state;
	bool write;
	bool contended;
	bool have_wait;			/* start_locking was seen */
};

static struct mmfix_mmap_slot *mmfix_mmap_table;

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

/*
 * One lock held until @now: its acquisition, wait (when its start was
 * seen) and hold, counted together when it ends.
 */
static void mmfix_mmap_count(struct mmfix_mmap_slot *slot, u64 now)
{
	u64 hold = mmfix_elapsed(slot->since, now);
	struct mmfix_stats_cpu *s;
	struct mmfix_lock_stat *c;
	unsigned long flags;

	s = mmfix_stats_begin(&flags);
	c = mmfix_mmap_class(s, slot->write);
	c->acquisitions++;
	c->contended += slot->contended;
	if (slot->have_wait) {
		mmfix_stat_wait(c, slot->wait);
		mmfix_worst_update(&s->worst_wait, slot->wait, slot->write);
	}
	mmfix_stat_hold(c, hold);
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

static void mmfix_mmap_start_locking(void *data, struct mm_struct *mm,
				     MMFIX_MMAP_TP_PATH bool write)
{
	struct mmfix_mmap_slot *s;

	if (!in_task() || !mmfix_stats_counting(MMFIX_STATS_SRC_MMAP))
		return;
	s = mmfix_mmap_claim(mm);
	if (!s) {
		mmfix_mmap_count_untracked();
		return;
	}
	s->write = write;
	s->contended = false;
	s->since = local_clock();
	s->state = MMFIX_MMAP_ACQUIRING;
}

static void mmfix_mmap_acquire_returned(void *data, struct mm_struct *mm,
					MMFIX_MMAP_TP_PATH bool write,
					bool success)
{
	u64 now = local_clock();
	struct mmfix_mmap_slot *s;

	if (!in_task())
		return;
	if (unlikely(irqs_disabled())) {
		if (mmfix_stats_counting(MMFIX_STATS_SRC_MMAP))
			mmfix_mmap_count_skipped();
		return;
	}
	s = mmfix_mmap_find(mm, MMFIX_MMAP_ACQUIRING, -1);
	if (!success) {
		if (s)
			mmfix_mmap_free(s);
		if (s || mmfix_stats_counting(MMFIX_STATS_SRC_MMAP))
			mmfix_mmap_count_failed(write);
		return;
	}
	if (s) {
		s->wait = mmfix_elapsed(s->since, now);
		s->have_wait = true;
	} else {
		/* mmap_write_downgrade(): the write hold ends here */
		s = write ? NULL : mmfix_mmap_find(mm, MMFIX_MMAP_HELD, 1);
		if (s)
			mmfix_mmap_count(s, now);
		if (!s && !mmfix_stats_counting(MMFIX_STATS_SRC_MMAP))
			return;	/* switched off: no new hold */
		/* or stats were switched on while this task was waiting */
		if (!s)
			s = mmfix_mmap_claim(mm);
		if (!s) {
			mmfix_mmap_count_untracked();
			return;
		}
		s->contended = false;
		s->have_wait = false;
	}
	s->write = write;
	s->since = now;
	s->state = MMFIX_MMAP_HELD;
}

static void mmfix_mmap_released(void *data, struct mm_struct *mm,
				MMFIX_MMAP_TP_PATH bool write)
{
	struct mmfix_mmap_slot *s;

	if (!in_task())
		return;
	s = mmfix_mmap_find(mm, MMFIX_MMAP_HELD, write);
	if (!s)
		return;	/* taken before stats were switched on */
	mmfix_mmap_count(s, local_clock());
	mmfix_mmap_free(s);
}

/* lock:contention_begin on an rwsem: is it ours, waiting for @mm? */
void mmfix_stats_mmap_contention_begin(void *lock, bool write)
{
	struct mmfix_mmap_slot *t = READ_ONCE(mmfix_mmap_table), *s;
	struct mm_struct *mm;

	/* registered for lru_lock too: the table may be gone (release()) */
	if (!in_task() || !t)
		return;
	/* only compared as a key, never dereferenced */
	mm = container_of((struct rw_semaphore *)lock, struct mm_struct,
			  mmap_lock);
	s = mmfix_mmap_find_in(t, mm, MMFIX_MMAP_ACQUIRING, write);
	if (s)
		s->contended = true;
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
 * Release first, start last: a lock whose start is seen has its end seen
 * too (switching on takes mmap_lock itself, e.g. for init_mm while text
 * is patched).  An acquisition seen without its start is counted without
 * a wait.
 */
int mmfix_stats_mmap_start(void)
{
	int ret;

	mmfix_mmap_table = kvcalloc(MMFIX_MMAP_SLOTS, sizeof(*mmfix_mmap_table),
				    GFP_KERNEL);
	if (!mmfix_mmap_table)
		return -ENOMEM;
	ret = register_trace_mmap_lock_released(mmfix_mmap_released, NULL);
	if (ret)
		goto err_released;
	ret = register_trace_mmap_lock_acquire_returned(mmfix_mmap_acquire_returned,
							NULL);
	if (ret)
		goto err_acquire;
	ret = register_trace_mmap_lock_start_locking(mmfix_mmap_start_locking,
						     NULL);
	if (ret)
		goto err_start;
	return 0;

err_start:
	unregister_trace_mmap_lock_acquire_returned(mmfix_mmap_acquire_returned,
						    NULL);
err_acquire:
	unregister_trace_mmap_lock_released(mmfix_mmap_released, NULL);
err_released:
	pr_warn("stats: cannot register mmap_lock tracepoint probes (%d)\n", ret);
	tracepoint_synchronize_unregister();
	mmfix_stats_mmap_release();
	return ret;
}

/* In reverse: no end is missed of a start that was seen. */
void mmfix_stats_mmap_stop(void)
{
	if (!mmfix_mmap_table)
		return;
	WARN_ON_ONCE(unregister_trace_mmap_lock_start_locking(
			mmfix_mmap_start_locking, NULL));
	WARN_ON_ONCE(unregister_trace_mmap_lock_acquire_returned(
			mmfix_mmap_acquire_returned, NULL));
	WARN_ON_ONCE(unregister_trace_mmap_lock_released(mmfix_mmap_released,
							 NULL));
}

/*
 * After stop() and tracepoint_synchronize_unregister(): no mmap_lock
 * probe can see the table.  The contention probe may still be registered
 * (for lru_lock): it reads the pointer once, so wait for it again.
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
