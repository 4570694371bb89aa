// SPDX-License-Identifier: GPL-2.0
/*
 * Fix khugepaged_scan: khugepaged's walk of one mm (khugepaged_scan_mm_slot()
 * on 6.x, collapse_scan_mm_slot() on 7.x) starts again from address 0
 * whenever mmap_read_trylock() fails, so under mmap_lock contention the
 * end of a big mm is collapsed late or never; and it walks runs of
 * VMAs that cannot be collapsed under one mmap read-lock hold with no
 * bound, stalling every writer of the mm for the whole walk.
 *
 * With the fix on (linux-mm "mm/khugepaged: bound mmap_lock hold time when
 * walking an mm's VMAs", v2, and its review):
 *  - an mm left because the trylock failed keeps its scan address in a
 *    livepatch shadow variable keyed on its mm_slot; the next scan of
 *    that mm resumes there instead of at 0;
 *  - the scan address moves past every VMA that has been dealt with
 *    (ALIGN(vm_end, HPAGE_PMD_SIZE)); a VMA whose aligned end wraps to 0
 *    is the last one;
 *  - after a batch of VMAs (pages_to_scan / 4, at least 1) or a tick,
 *    a contended read lock is dropped and retaken with a trylock, and
 *    the walk resumes at the scan address; if the trylock fails, the
 *    walk leaves the mm with its scan address saved, as when the
 *    trylock at the start fails: khugepaged never sleeps behind one
 *    process's writer.  Every VMA walked moves the address past
 *    itself, so each hold makes progress whatever the batch;
 *  - each retake lost that way doubles the mm's batch, at most 32
 *    times the first, until its walk starts at 0 again, so that busy
 *    writers do not make crossing N VMAs take N / batch winning
 *    trylocks;
 *  - a scan that could not get or keep the lock moves the saved address
 *    past the VMAs that hold no whole PMD without the lock
 *    (ks_pass_unlocked(); on 6.1 only after it held the lock), so the
 *    next hold starts where there is work.
 * With the fix off the code below is the kernel's own; both ways it
 * counts what the scan does, including read-lock holds and how many
 * VMAs it walks while a writer waits.
 *
 * The scan, khugepaged_do_scan() and the wait helpers are inlined into
 * khugepaged(), the kthread function, in every Debian build, so the
 * replacement is khugepaged() itself.  A thread in it never switches
 * patch state, so during each transition a delayed work replaces a
 * khugepaged that has not switched with a fresh thread, started as the
 * kernel does, kthread_create(khugepaged) (so current_is_khugepaged()
 * keeps working), which inherits the target state from kthreadd and
 * the old thread's CPU affinity, nice value and cgroups.  Nothing is
 * held or stopped across the transition.  __khugepaged_exit() is
 * replaced too: it frees mm_slots and must free their saved cursor;
 * cursors are only kept while the patch is fully on.
 *
 * The scan (ks_scan_mm_slot(), ks_do_scan()) and the fix in it are written
 * once; what the kernels differ in is per series (compat.h:
 * MMFIX_KHUGEPAGED_V6_1, _V6_12, _V7 for 7.2 and 7.3): the KS_* macros
 * and types below, and the step at one PMD (ks_scan_pmd()) with 6.1's
 * and 6.12's handling of a PTE-mapped THP.
 */
#include <linux/mm.h>
#include <linux/cgroup.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/freezer.h>
#include <linux/hashtable.h>
#include <linux/khugepaged.h>
#include <linux/kthread.h>
#include <linux/livepatch.h>
#include <linux/mmap_lock.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include "mmfix.h"

#if MMFIX_SUPPORTED	/* no fix in a build for an unsupported kernel */
#ifdef MMFIX_KHUGEPAGED_V7
#include <trace/events/huge_memory.h>
#endif

enum {
	KS_SCANS, KS_RESUMED, KS_LOCK_DROPS, KS_VMAS_SKIPPED, KS_HOLDS,
	KS_HOLD_TOTAL_NS, KS_HOLD_MAX_NS, KS_HOLD_MAX_VMAS, KS_WAIT_MAX_VMAS,
	KS_CURSORS, KS_RESTARTS, KS_RETAKE_FAILED, KS_VMAS_PASSED,
};

/* klp shadow variable id of a saved scan address ("mmfx" + fix 3). */
#define KS_CURSOR_ID	0x6d6d667803UL
/* ... and of the batch level saved with it (ks_level). */
#define KS_LEVEL_ID	0x6d6d667813UL

/*
 * The most doublings of the batch after retakes lost to writers:
 * 32 batches, 32768 VMAs at the default pages_to_scan.
 */
#define KS_LEVEL_MAX	5

/* Kernel-private types (mm/mm_slot.h, mm/khugepaged.c), same layout. */
struct mmfix_mm_slot {
	struct hlist_node hash;
	struct list_head mm_node;
	struct mm_struct *mm;
};

#ifdef MMFIX_KHUGEPAGED_V6_1
/* struct khugepaged_mm_slot; the mm_slot is its first member everywhere. */
struct mmfix_khugepaged_mm_slot {
	struct mmfix_mm_slot slot;
	int nr_pte_mapped_thp;
	unsigned long pte_mapped_thp[8];
};
#endif

struct mmfix_khugepaged_scan {
	struct list_head mm_head;
	struct mmfix_mm_slot *mm_slot;
	unsigned long address;
};

#ifdef MMFIX_KHUGEPAGED_V7
/* Leading members of struct collapse_control in 7.2 and 7.3. */
struct mmfix_collapse_control {
	bool is_khugepaged;
	u32 node_load[MAX_NUMNODES];
	unsigned int progress;
};
#else
struct mmfix_collapse_control;
#endif

/* Non-exported kernel symbols, resolved by livepatch relocations. */
int khugepaged(void *none);
extern struct task_struct *khugepaged_thread;
extern struct mutex khugepaged_mutex;
extern spinlock_t khugepaged_mm_lock;
extern wait_queue_head_t khugepaged_wait;
extern struct mmfix_khugepaged_scan khugepaged_scan;
extern unsigned int khugepaged_pages_to_scan;
extern unsigned int khugepaged_pages_collapsed;
extern unsigned int khugepaged_full_scans;
extern unsigned int khugepaged_scan_sleep_millisecs;
extern unsigned int khugepaged_alloc_sleep_millisecs;
extern unsigned long khugepaged_sleep_expire;
extern struct mmfix_collapse_control khugepaged_collapse_control;
extern struct hlist_head mm_slots_hash[1 << 10];
extern struct kmem_cache *mm_slot_cache;
void lru_add_drain_all(void);

/*
 * The most used of them through one pointer each: every use of a
 * relocated symbol is a relocation, and 6.1's livepatch core walks all
 * of kallsyms for each one while the module loads.  Set by
 * ks_pre_patch(), before any code here runs.
 */
static struct mmfix_khugepaged_scan *ks_scan;
static spinlock_t *ks_mm_lock;
static wait_queue_head_t *ks_wait;
static struct task_struct **ks_thread;
static struct mutex *ks_mutex;

/* The function whose replacement frees cursors with the mm_slot. */
#define KS_EXIT_FUNC	"__khugepaged_exit"

/* Whether scans save cursors; see ks_cursors_enable(). */
static bool ks_cursors_on;

/*
 * With the fix on, the batch of the mm being scanned is doubled this many
 * times (at most KS_LEVEL_MAX): once for each retake lost to a writer
 * since the walk of the mm started at 0.  Goes with
 * khugepaged_scan.address, saved and taken with it; only khugepaged
 * changes it.
 */
static unsigned int ks_level;

/*
 * What the kernels differ in, as the walk below uses it (besides the step
 * at one PMD, ks_scan_pmd()):
 *  KS_THP_ENABLED()		THP settings want a khugepaged
 *  KS_EXIT_OR_DISABLE(mm)	the walk stops: mm exiting or THP disabled
 *  KS_SLOT_DONE(mm)		after the walk, release the mm_slot even if
 *				VMAs are left
 *  KS_VMA_ELIGIBLE(vma)	khugepaged may collapse in @vma
 *  KS_SHOULD_STOP()		khugepaged_do_scan() stops
 *  KS_PMD_PROGRESS		progress the walk counts for each PMD (7.x's
 *				collapse_single_pmd() counts its own)
 *  KS_CLEAR_VM_HUGEPAGE(mm)	__khugepaged_exit()'s flag clear
 *  KS_PASS_NEEDS_HOLD		ks_pass_unlocked() only after the scan held
 *				the lock (6.1's dup_mmap())
 */
#ifndef MMFIX_KHUGEPAGED_V7
int hpage_collapse_scan_pmd(struct mm_struct *mm, struct vm_area_struct *vma,
			    unsigned long address, bool *mmap_locked,
			    struct mmfix_collapse_control *cc);
int hpage_collapse_scan_file(struct mm_struct *mm, unsigned long addr,
			     struct file *file, pgoff_t start,
			     struct mmfix_collapse_control *cc);
# define KS_SLOT_DONE(mm)		ks_exit(mm)
# define KS_PMD_PROGRESS		HPAGE_PMD_NR
# define KS_CLEAR_VM_HUGEPAGE(mm)	clear_bit(MMF_VM_HUGEPAGE, &(mm)->flags)
#endif

#ifdef MMFIX_KHUGEPAGED_V6_1
int find_pmd_or_thp_or_none(struct mm_struct *mm, unsigned long address,
			    pmd_t **pmd);
bool khugepaged_add_pte_mapped_thp(struct mm_struct *mm, unsigned long addr);
# define KS_THP_ENABLED()		hugepage_flags_enabled()
# define KS_EXIT_OR_DISABLE(mm)	ks_exit(mm)
# define KS_VMA_ELIGIBLE(vma)	hugepage_vma_check(vma, (vma)->vm_flags, \
						   false, false, true)
# define KS_SHOULD_STOP()	(kthread_should_stop() || try_to_freeze())
# define KS_PASS_NEEDS_HOLD	true
#else
# define KS_PASS_NEEDS_HOLD	false
#endif

#ifdef MMFIX_KHUGEPAGED_V6_12
bool hugepage_pmd_enabled(void);
# define KS_THP_ENABLED()		hugepage_pmd_enabled()
# define KS_EXIT_OR_DISABLE(mm)	(ks_exit(mm) || \
				 test_bit(MMF_DISABLE_THP, &(mm)->flags))
# define KS_VMA_ELIGIBLE(vma)	thp_vma_allowable_order(vma, (vma)->vm_flags, \
							TVA_ENFORCE_SYSFS, PMD_ORDER)
# define KS_SHOULD_STOP()	kthread_should_stop()
#endif

#ifdef MMFIX_KHUGEPAGED_V7
bool hugepage_enabled(void);
int collapse_single_pmd(unsigned long addr,
		struct vm_area_struct *vma, bool *lock_dropped,
		struct mmfix_collapse_control *cc);
# define KS_THP_ENABLED()		hugepage_enabled()
# define KS_EXIT_OR_DISABLE(mm)	(ks_exit(mm) || \
				 mm_flags_test(MMF_DISABLE_THP_COMPLETELY, mm))
# define KS_SLOT_DONE(mm)		KS_EXIT_OR_DISABLE(mm)
/* collapse_possible(vma, vma->vm_flags, TVA_KHUGEPAGED) */
# define KS_VMA_ELIGIBLE(vma)	thp_vma_allowable_orders(vma, (vma)->vm_flags, \
					TVA_KHUGEPAGED, vma_is_anonymous(vma) ? \
					THP_ORDERS_ALL_ANON : BIT(HPAGE_PMD_ORDER))
# define KS_SHOULD_STOP()	kthread_should_stop()
# define KS_PMD_PROGRESS		0
# define KS_CLEAR_VM_HUGEPAGE(mm)	mm_flags_clear(MMF_VM_HUGEPAGE, mm)
#endif

static inline bool ks_exit(struct mm_struct *mm)
{
	return atomic_read(&mm->mm_users) == 0;
}

/* --- saved scan addresses ------------------------------------------- */

static int ks_cursor_ctor(void *obj, void *shadow_data, void *ctor_data)
{
	*(unsigned long *)shadow_data = *(unsigned long *)ctor_data;
	mmfix_count(&mmfix_khugepaged_scan, KS_CURSORS);
	return 0;
}

static void ks_cursor_dtor(void *obj, void *shadow_data)
{
	mmfix_count_add(&mmfix_khugepaged_scan, KS_CURSORS, -1);
}

static int ks_level_ctor(void *obj, void *shadow_data, void *ctor_data)
{
	*(unsigned int *)shadow_data = *(unsigned int *)ctor_data;
	return 0;
}

/*
 * Where the scan of @slot starts, with the fix on: the address saved when
 * its last scan lost the trylock, else 0; the batch level saved with it
 * goes to ks_level (which the caller set to 0).  Both are consumed, so
 * they exist only for mms that are not being scanned.  Called with
 * khugepaged_mm_lock held.
 */
static unsigned long ks_cursor_take(struct mmfix_mm_slot *slot)
{
	unsigned long *saved = klp_shadow_get(slot, KS_CURSOR_ID);
	unsigned int *level = klp_shadow_get(slot, KS_LEVEL_ID);
	unsigned long addr;

	if (level) {
		ks_level = min_t(unsigned int, *level, KS_LEVEL_MAX);
		klp_shadow_free(slot, KS_LEVEL_ID, NULL);
	}
	if (!saved)
		return 0;
	addr = *saved;
	klp_shadow_free(slot, KS_CURSOR_ID, ks_cursor_dtor);
	mmfix_count(&mmfix_khugepaged_scan, KS_RESUMED);
	return addr;
}

/*
 * Remember @addr for @slot, the mm being scanned, if cursors are on.
 * Called with khugepaged_mm_lock held; a failed allocation only loses
 * the cursor (the next scan of the mm starts at 0, as the kernel's).
 */
static void ks_cursor_save(struct mmfix_mm_slot *slot, unsigned long addr)
{
	unsigned long *saved;
	unsigned int *level;

	lockdep_assert_held(ks_mm_lock);
	if (!addr || !ks_cursors_on)
		return;
	saved = klp_shadow_get_or_alloc(slot, KS_CURSOR_ID, sizeof(*saved),
					GFP_NOWAIT | __GFP_NOWARN,
					ks_cursor_ctor, &addr);
	if (!saved)
		return;
	*saved = addr;
	if (!ks_level)
		return;
	level = klp_shadow_get_or_alloc(slot, KS_LEVEL_ID, sizeof(*level),
					GFP_NOWAIT | __GFP_NOWARN,
					ks_level_ctor, &ks_level);
	if (level)
		*level = ks_level;
}

/*
 * Cursors are kept only while every task runs this patch's
 * __khugepaged_exit(), which frees the cursor of the mm_slot it frees:
 * from post_patch to pre_unpatch.  During a transition, either way and
 * reversed, tasks not switched yet free mm_slots with the kernel's
 * function, which knows nothing of cursors; a cursor left on a freed
 * mm_slot would be taken by the next mm_slot at that address.  Both
 * switches are made under khugepaged_mm_lock, as every save is.
 */
static void ks_cursors_enable(void)
{
	spin_lock(ks_mm_lock);
	ks_cursors_on = true;
	spin_unlock(ks_mm_lock);
}

static void ks_cursors_disable(void)
{
	spin_lock(ks_mm_lock);
	ks_cursors_on = false;
	klp_shadow_free_all(KS_CURSOR_ID, ks_cursor_dtor);
	klp_shadow_free_all(KS_LEVEL_ID, NULL);
	spin_unlock(ks_mm_lock);
}

static void ks_cursor_free(struct mmfix_mm_slot *slot)
{
	klp_shadow_free(slot, KS_CURSOR_ID, ks_cursor_dtor);
	klp_shadow_free(slot, KS_LEVEL_ID, NULL);
}

/*
 * The scan address past a VMA ending at @end: ALIGN(@end, HPAGE_PMD_SIZE),
 * or 0 when that wraps (the VMA ends the address space and is the last).
 */
static inline unsigned long ks_addr_past(unsigned long end)
{
	unsigned long next = ALIGN(end, HPAGE_PMD_SIZE);

	return next < end ? 0 : next;
}

/*
 * With the fix on, the scan address moves past @vma once it has been dealt
 * with.  False when ALIGN() wraps: @vma ends the address space and is the
 * last VMA.
 */
static bool ks_cursor_past(struct vm_area_struct *vma)
{
	unsigned long next = ks_addr_past(vma->vm_end);

	if (unlikely(!next))
		return false;
	if (next > ks_scan->address)
		ks_scan->address = next;
	return true;
}

/* collect_mm_slot(), which only khugepaged() calls, and the cursor. */
static void ks_collect_mm_slot(struct mmfix_mm_slot *slot)
{
	struct mm_struct *mm = slot->mm;

	lockdep_assert_held(ks_mm_lock);

	if (ks_exit(mm)) {
		hash_del(&slot->hash);
		list_del(&slot->mm_node);
		ks_cursor_free(slot);
		kmem_cache_free(mm_slot_cache, slot);
		mmdrop(mm);
	}
}

/* --- moving on without the lock ------------------------------------ */

/* Maple tree entries between two rescheduling points of ks_pass_unlocked(). */
#define KS_PASS_CHUNK	1024

/*
 * With the fix on, after the mmap_lock was lost to a writer: move the
 * scan address past the VMAs that hold no whole PMD, without the lock, so
 * that the next hold starts where there is something to scan.  The locked
 * walk only steps over such a VMA (hstart >= hend: no PMD to scan), so this
 * changes where it starts, not what it does.  Under two busy writers the
 * trylock wins only now and then; without this each win walked one batch
 * of such VMAs and a region behind N of them took N / batch wins.
 *
 * The maple tree is read under RCU, as the per-VMA-lock fault path reads
 * it: only the ranges the tree stores are used, no VMA is dereferenced.
 * mm_users is held meanwhile: exit_mmap() takes the tree out of RCU mode
 * and only runs when it drops to 0; dup_mmap() puts the tree back in RCU
 * mode before khugepaged_fork() adds a new mm.  6.1's dup_mmap() calls
 * khugepaged_fork() first and then builds the tree out of RCU mode
 * (mt_clear_in_rcu(), then mt_set_in_rcu() on success), all under the
 * new mm's mmap write lock: there the pass runs only when this scan
 * (@held) had the mm's read lock, which it could only get after that
 * build, and a failed build leaves the tree out of RCU mode, which the
 * check below sees.  The result is only where the next locked walk
 * starts: a VMA mapped behind it meanwhile is found by the next full
 * scan, as one mapped behind the kernel's own scan address is.
 */
static void ks_pass_unlocked(struct mm_struct *mm, bool held)
{
	unsigned long addr = ks_scan->address, next = addr;
	unsigned int passed = 0;

	MA_STATE(mas, &mm->mm_mt, addr, addr);

	if (KS_PASS_NEEDS_HOLD && !held)
		return;
	if (!mmget_not_zero(mm))
		return;
	if (!mt_in_rcu(&mm->mm_mt))
		goto out;
	rcu_read_lock();
	while (mas_find(&mas, ULONG_MAX)) {
		unsigned long start = max(mas.index, addr);
		unsigned long hstart = ALIGN(start, HPAGE_PMD_SIZE);
		unsigned long end = mas.last + 1, past;

		/* A whole PMD from the scan address on: the work is here. */
		if (hstart >= start && end > start &&
		    hstart < ALIGN_DOWN(end, HPAGE_PMD_SIZE)) {
			next = hstart;
			break;
		}
		/* As ks_cursor_past(): a wrap ends the walk here. */
		past = ks_addr_past(end);
		if (!past)
			break;
		next = past;
		passed++;
		if (!(passed % KS_PASS_CHUNK)) {
			mas_pause(&mas);
			rcu_read_unlock();
			cond_resched();
			if (kthread_should_stop())
				goto out_passed;
			rcu_read_lock();
		}
	}
	rcu_read_unlock();
out_passed:
	if (next > ks_scan->address) {
		ks_scan->address = next;
		mmfix_count_add(&mmfix_khugepaged_scan, KS_VMAS_PASSED, passed);
	}
out:
	mmput_async(mm);
}

/* --- read-lock holds of one scan ------------------------------------ */

/*
 * One scan's walk.  Contention is checked every batch VMAs or tick with
 * the fix off too, only to count: a writer found waiting at a check
 * arrived after the previous check, so walked - quiet bounds the VMAs
 * walked while it waited.
 */
struct ks_walk {
	bool fix;			/* the switch, read once per scan */
	bool waiter;			/* a check found a writer waiting */
	unsigned int batch;		/* VMAs between contention checks */
	unsigned int walked;		/* VMAs walked in this hold */
	unsigned int since_check;	/* VMAs walked since the last check */
	unsigned int quiet;		/* walked at the last check without */
	unsigned long tick;		/* jiffies at the last check */
	u64 start;			/* local_clock() at lock time, 0: none */
};

static void ks_hold_begin(struct ks_walk *w)
{
	w->start = local_clock();
	w->tick = jiffies;
	w->waiter = false;
	w->walked = 0;
	w->since_check = 0;
	w->quiet = 0;
}

/*
 * The read lock was released at @end.  A collapse function that releases
 * it is counted up to its call: it scans at most one PMD's PTEs before.
 */
static void ks_hold_end_at(struct ks_walk *w, u64 end)
{
	struct mmfix_fix *fix = &mmfix_khugepaged_scan;
	u64 ns;

	if (!w->start)
		return;
	ns = mmfix_elapsed(w->start, end);	/* CPUs' clocks may disagree */
	w->start = 0;
	mmfix_count(fix, KS_HOLDS);
	mmfix_count_add(fix, KS_HOLD_TOTAL_NS, ns);
	mmfix_count_max(fix, KS_HOLD_MAX_NS, ns);
	mmfix_count_max(fix, KS_HOLD_MAX_VMAS, w->walked);
	if (w->waiter)
		mmfix_count_max(fix, KS_WAIT_MAX_VMAS, w->walked - w->quiet);
}

static void ks_hold_end(struct ks_walk *w)
{
	ks_hold_end_at(w, local_clock());
}

static void ks_vma_walked(struct ks_walk *w)
{
	w->walked++;
	w->since_check++;
}

enum ks_relief { KS_KEPT, KS_RETAKEN, KS_LOST };

/*
 * After a batch of VMAs or a tick, check for a writer waiting; with the
 * fix on, drop the read lock then and try to take it again, never
 * waiting for it: khugepaged is one thread for the whole machine and
 * must not sleep behind one process's writer.  KS_RETAKEN: @vmi points
 * at the scan address and the caller continues with the VMA found there.
 * KS_LOST: the lock is not held; the caller leaves this mm with the scan
 * address kept, as when the trylock at the start of a scan fails.
 *
 * Each lost retake doubles the batch of this mm (ks_level), up to
 * KS_LEVEL_MAX doublings, until its walk starts at 0 again: when writers
 * queue all the time, a walk at one batch per winning trylock would
 * take N / batch of them to cross N VMAs that cannot be collapsed, where
 * the kernel's walk takes one.  The level relaxes the count only: at
 * every level the check also comes once the jiffies tick has changed
 * since the last one, so a writer waits through at most 1 <<
 * KS_LEVEL_MAX batches and never much more than a tick of the walk --
 * also when the nice-19 khugepaged was preempted inside it, since the
 * first VMA after it runs again sees the new tick.
 */
static enum ks_relief ks_relieve(struct ks_walk *w, struct mm_struct *mm,
				 struct vma_iterator *vmi)
{
	unsigned int level = w->fix ? ks_level : 0;

	if (!w->since_check)
		return KS_KEPT;
	if ((unsigned long)w->since_check < (unsigned long)w->batch << level &&
	    !time_after(jiffies, w->tick))
		return KS_KEPT;
	w->since_check = 0;
	w->tick = jiffies;
	if (w->waiter)
		return KS_KEPT;
	if (!mmap_lock_is_contended(mm)) {
		w->quiet = w->walked;
		return KS_KEPT;
	}
	w->waiter = true;
	if (!w->fix)
		return KS_KEPT;

	mmap_read_unlock(mm);
	ks_hold_end(w);
	mmfix_count(&mmfix_khugepaged_scan, KS_LOCK_DROPS);
	cond_resched();
	if (!mmap_read_trylock(mm)) {
		mmfix_count(&mmfix_khugepaged_scan, KS_RETAKE_FAILED);
		if (ks_level < KS_LEVEL_MAX)
			ks_level++;
		return KS_LOST;
	}
	ks_hold_begin(w);
	vma_iter_init(vmi, mm, ks_scan->address);
	return KS_RETAKEN;
}

static void ks_walk_init(struct ks_walk *w, unsigned int pages_to_scan)
{
	w->fix = mmfix_fix_on(&mmfix_khugepaged_scan);
	w->batch = max(pages_to_scan / 4, 1U);
	w->start = 0;
	mmfix_count(&mmfix_khugepaged_scan, KS_SCANS);
}

/* --- the kernel's step at one PMD, per series ------------------------ */

/*
 * What the step left: KS_PMD_LOCKED, the read lock is held; KS_PMD_UNLOCKED,
 * it was released and the scan of the mm ends; KS_PMD_EXITING, it is held
 * (again) but the mm exits or lost THP, and the walk ends without moving
 * past the PMD.
 */
enum ks_pmd { KS_PMD_LOCKED, KS_PMD_UNLOCKED, KS_PMD_EXITING };

#ifdef MMFIX_KHUGEPAGED_V6_1
/* khugepaged_collapse_pte_mapped_thps(), CONFIG_SHMEM=y */
static void ks_collapse_pte_mapped_thps(struct mmfix_mm_slot *slot)
{
	struct mmfix_khugepaged_mm_slot *mm_slot =
		container_of(slot, struct mmfix_khugepaged_mm_slot, slot);
	struct mm_struct *mm = slot->mm;
	int i;

	if (likely(mm_slot->nr_pte_mapped_thp == 0))
		return;

	if (!mmap_write_trylock(mm))
		return;

	if (unlikely(ks_exit(mm)))
		goto out;

	for (i = 0; i < mm_slot->nr_pte_mapped_thp; i++)
		collapse_pte_mapped_thp(mm, mm_slot->pte_mapped_thp[i], false);

out:
	mm_slot->nr_pte_mapped_thp = 0;
	mmap_write_unlock(mm);
}

/* 6.1 leaves a PTE-mapped THP of a file to ks_count_collapsed(). */
static bool ks_file_pte_mapped_thp(struct ks_walk *w, struct mm_struct *mm,
				   unsigned long addr, int *result)
{
	return true;
}

/*
 * 6.1 queues a PTE-mapped THP for the next scan of the mm
 * (ks_collapse_pte_mapped_thps()) and counts it as collapsed.
 */
static void ks_count_collapsed(struct mm_struct *mm, unsigned long addr,
			       int *result)
{
	switch (*result) {
	case MMFIX_SCAN_PTE_MAPPED_HUGEPAGE: {
		pmd_t *pmd;

		*result = find_pmd_or_thp_or_none(mm, addr, &pmd);
		if (*result != MMFIX_SCAN_SUCCEED)
			break;
		if (!khugepaged_add_pte_mapped_thp(mm, addr))
			break;
	} fallthrough;
	case MMFIX_SCAN_SUCCEED:
		++khugepaged_pages_collapsed;
		break;
	default:
		break;
	}
}
#else
static inline void ks_collapse_pte_mapped_thps(struct mmfix_mm_slot *slot)
{
}
#endif

#ifdef MMFIX_KHUGEPAGED_V6_12
/*
 * 6.12 collapses a PTE-mapped THP of a file at once, under a read lock it
 * takes again (the kernel's mmap_read_lock()).  False: the lock is held
 * and the mm exits or lost THP.
 */
static bool ks_file_pte_mapped_thp(struct ks_walk *w, struct mm_struct *mm,
				   unsigned long addr, int *result)
{
	if (*result != MMFIX_SCAN_PTE_MAPPED_HUGEPAGE)
		return true;
	mmap_read_lock(mm);
	ks_hold_begin(w);
	if (KS_EXIT_OR_DISABLE(mm))
		return false;
	*result = collapse_pte_mapped_thp(mm, addr, false);
	if (*result == MMFIX_SCAN_PMD_MAPPED)
		*result = MMFIX_SCAN_SUCCEED;
	mmap_read_unlock(mm);
	ks_hold_end(w);
	return true;
}

static void ks_count_collapsed(struct mm_struct *mm, unsigned long addr,
			       int *result)
{
	if (*result == MMFIX_SCAN_SUCCEED)
		++khugepaged_pages_collapsed;
}
#endif

#ifndef MMFIX_KHUGEPAGED_V7
/* 6.x: khugepaged_do_scan() counts progress in a local variable. */
static unsigned int *ks_progress(struct mmfix_collapse_control *cc,
				 unsigned int *own)
{
	return own;
}

/*
 * 6.x: a file VMA is scanned with the read lock released; an anonymous
 * one with it held, until hpage_collapse_scan_pmd() releases it to
 * collapse.  A hold is counted up to the call that releases it: it scans
 * at most one PMD's PTEs before.
 */
static enum ks_pmd ks_scan_pmd(struct ks_walk *w, struct mm_struct *mm,
			       struct vm_area_struct *vma, int *result,
			       struct mmfix_collapse_control *cc)
{
	unsigned long addr = ks_scan->address;
	bool mmap_locked = true;

	if (IS_ENABLED(CONFIG_SHMEM) && !vma_is_anonymous(vma)) {
		struct file *file = get_file(vma->vm_file);
		pgoff_t pgoff = linear_page_index(vma, addr);

		mmap_read_unlock(mm);
		ks_hold_end(w);
		mmap_locked = false;
		*result = hpage_collapse_scan_file(mm, addr, file, pgoff, cc);
		fput(file);
		if (!ks_file_pte_mapped_thp(w, mm, addr, result))
			return KS_PMD_EXITING;
	} else {
		u64 call = local_clock();

		*result = hpage_collapse_scan_pmd(mm, vma, addr, &mmap_locked,
						  cc);
		if (!mmap_locked)
			ks_hold_end_at(w, call);
	}
	ks_count_collapsed(mm, addr, result);
	return mmap_locked ? KS_PMD_LOCKED : KS_PMD_UNLOCKED;
}

static inline void ks_trace_scan(struct mm_struct *mm, unsigned int progress,
				 bool full_scan)
{
}
#else /* MMFIX_KHUGEPAGED_V7 */
/* 7.x: progress is cc->progress, which collapse_single_pmd() counts too. */
static unsigned int *ks_progress(struct mmfix_collapse_control *cc,
				 unsigned int *own)
{
	return &cc->progress;
}

/* 7.x: collapse_single_pmd() releases the read lock to collapse. */
static enum ks_pmd ks_scan_pmd(struct ks_walk *w, struct mm_struct *mm,
			       struct vm_area_struct *vma, int *result,
			       struct mmfix_collapse_control *cc)
{
	bool lock_dropped = false;
	u64 call = local_clock();

	*result = collapse_single_pmd(ks_scan->address, vma, &lock_dropped,
				      cc);
	if (!lock_dropped)
		return KS_PMD_LOCKED;
	ks_hold_end_at(w, call);
	return KS_PMD_UNLOCKED;
}

/* trace_mm_khugepaged_scan(), without a jump label on its key */
static void ks_trace_scan(struct mm_struct *mm, unsigned int progress,
			  bool full_scan)
{
	if (static_key_enabled(&__tracepoint_mm_khugepaged_scan.key)) {
		guard(srcu_fast_notrace)(&tracepoint_srcu);
		__traceiter_mm_khugepaged_scan(NULL, mm, progress, full_scan);
	}
}
#endif /* MMFIX_KHUGEPAGED_V7 */

/* --- the kernel's scan of one mm, plus the fix ------------------------ */

/*
 * khugepaged_scan_mm_slot() (6.x), collapse_scan_mm_slot() (7.x): walk the
 * mm at the scan address until *@progress reaches @progress_max or the
 * lock is released.  The fix's parts: the cursor taken and saved, the walk
 * checked for a waiting writer (ks_relieve()), the scan address moved past
 * every VMA dealt with (ks_cursor_past()), the counters.
 */
static void ks_scan_mm_slot(unsigned int *progress, unsigned int progress_max,
			    int *result, struct mmfix_collapse_control *cc)
	__releases(&khugepaged_mm_lock)
	__acquires(&khugepaged_mm_lock)
{
	struct vma_iterator vmi;
	struct mmfix_mm_slot *slot;
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	unsigned int progress_prev = *progress;
	struct ks_walk w;
	bool lock_failed = false, held = false;

	lockdep_assert_held(ks_mm_lock);
	*result = MMFIX_SCAN_FAIL;
	ks_walk_init(&w, progress_max);

	if (ks_scan->mm_slot) {
		slot = ks_scan->mm_slot;
	} else {
		slot = list_first_entry(&ks_scan->mm_head,
					struct mmfix_mm_slot, mm_node);
		ks_level = 0;
		ks_scan->address = w.fix ? ks_cursor_take(slot) : 0;
		ks_scan->mm_slot = slot;
	}
	spin_unlock(ks_mm_lock);
	ks_collapse_pte_mapped_thps(slot);

	mm = slot->mm;
	/*
	 * Don't wait for semaphore (to avoid long wait times).  Just move to
	 * the next mm on the list.
	 */
	vma = NULL;
	if (unlikely(!mmap_read_trylock(mm))) {
		lock_failed = true;
		goto breakouterloop_mmap_lock;
	}
	ks_hold_begin(&w);
	held = true;

	(*progress)++;
	if (unlikely(KS_EXIT_OR_DISABLE(mm)))
		goto breakouterloop;

	vma_iter_init(&vmi, mm, ks_scan->address);
	for_each_vma(vmi, vma) {
		unsigned long hstart, hend;

		switch (ks_relieve(&w, mm, &vmi)) {
		case KS_KEPT:
			break;
		case KS_RETAKEN:
			continue;
		case KS_LOST:
			lock_failed = true;
			vma = NULL;
			goto breakouterloop_mmap_lock;
		}
		ks_vma_walked(&w);
		cond_resched();
		if (unlikely(KS_EXIT_OR_DISABLE(mm))) {
			(*progress)++;
			break;
		}
		if (!KS_VMA_ELIGIBLE(vma)) {
			mmfix_count(&mmfix_khugepaged_scan, KS_VMAS_SKIPPED);
skip:
			(*progress)++;
			if (w.fix && !ks_cursor_past(vma)) {
				vma = NULL;
				break;
			}
			continue;
		}
		hstart = ALIGN(vma->vm_start, HPAGE_PMD_SIZE);
		hend = ALIGN_DOWN(vma->vm_end, HPAGE_PMD_SIZE);
		if (ks_scan->address > hend)
			goto skip;
		if (ks_scan->address < hstart)
			ks_scan->address = hstart;

		while (ks_scan->address < hend) {
			enum ks_pmd step;

			cond_resched();
			if (unlikely(KS_EXIT_OR_DISABLE(mm)))
				goto breakouterloop;

			step = ks_scan_pmd(&w, mm, vma, result, cc);
			if (step == KS_PMD_EXITING)
				goto breakouterloop;
			/* move to next address */
			ks_scan->address += HPAGE_PMD_SIZE;
			*progress += KS_PMD_PROGRESS;
			if (step == KS_PMD_UNLOCKED)
				/*
				 * We released mmap_lock so break loop.  Note
				 * that we drop mmap_lock before all hugepage
				 * allocations, so if allocation fails, we are
				 * guaranteed to break here and report the
				 * correct result back to caller.
				 */
				goto breakouterloop_mmap_lock;
			if (*progress >= progress_max)
				goto breakouterloop;
		}
		if (w.fix && !ks_cursor_past(vma)) {
			vma = NULL;
			break;
		}
	}
breakouterloop:
	mmap_read_unlock(mm); /* exit_mmap will destroy ptes after this */
	ks_hold_end(&w);
breakouterloop_mmap_lock:
	if (w.fix && lock_failed)
		ks_pass_unlocked(mm, held);
	spin_lock(ks_mm_lock);
	if (w.fix && lock_failed)
		ks_cursor_save(slot, ks_scan->address);
	/*
	 * Release the current mm_slot if this mm is about to die, or
	 * if we scanned all vmas of this mm (7.x: or THP got disabled).
	 */
	if (KS_SLOT_DONE(mm) || !vma) {
		/*
		 * Make sure that if mm_users is reaching zero while
		 * khugepaged runs here, khugepaged_exit will find
		 * mm_slot not pointing to the exiting mm.
		 */
		if (!list_is_last(&slot->mm_node, &ks_scan->mm_head)) {
			ks_scan->mm_slot = list_next_entry(slot, mm_node);
			ks_level = 0;
			ks_scan->address = w.fix ?
				ks_cursor_take(ks_scan->mm_slot) : 0;
		} else {
			ks_scan->mm_slot = NULL;
			khugepaged_full_scans++;
		}

		ks_collect_mm_slot(slot);
	}

	ks_trace_scan(mm, *progress - progress_prev, !ks_scan->mm_slot);
}

static int ks_has_work(void)
{
	return !list_empty(&ks_scan->mm_head) && KS_THP_ENABLED();
}

static int ks_wait_event(void)
{
	return !list_empty(&ks_scan->mm_head) ||
		kthread_should_stop();
}

static void ks_alloc_sleep(void)
{
	DEFINE_WAIT(wait);

	add_wait_queue(ks_wait, &wait);
	__set_current_state(TASK_INTERRUPTIBLE | TASK_FREEZABLE);
	schedule_timeout(msecs_to_jiffies(khugepaged_alloc_sleep_millisecs));
	remove_wait_queue(ks_wait, &wait);
}

/* khugepaged_do_scan() */
static void ks_do_scan(struct mmfix_collapse_control *cc)
{
	const unsigned int progress_max = READ_ONCE(khugepaged_pages_to_scan);
	unsigned int pass_through_head = 0, own_progress;
	unsigned int *progress = ks_progress(cc, &own_progress);
	bool wait = true;
	int result = MMFIX_SCAN_SUCCEED;

	lru_add_drain_all();

	*progress = 0;
	while (true) {
		cond_resched();

		if (unlikely(KS_SHOULD_STOP()))
			break;

		spin_lock(ks_mm_lock);
		if (!ks_scan->mm_slot)
			pass_through_head++;
		if (ks_has_work() &&
		    pass_through_head < 2)
			ks_scan_mm_slot(progress, progress_max, &result, cc);
		else
			*progress = progress_max;
		spin_unlock(ks_mm_lock);

		if (*progress >= progress_max)
			break;

		if (result == MMFIX_SCAN_ALLOC_HUGE_PAGE_FAIL) {
			/*
			 * If fail to allocate the first time, try to sleep for
			 * a while.  When hit again, cancel the scan.
			 */
			if (!wait)
				break;
			wait = false;
			ks_alloc_sleep();
		}
	}
}

static bool ks_should_wakeup(void)
{
	return kthread_should_stop() ||
	       time_after_eq(jiffies, khugepaged_sleep_expire);
}

static void ks_wait_work(void)
{
	if (ks_has_work()) {
		const unsigned long scan_sleep_jiffies =
			msecs_to_jiffies(khugepaged_scan_sleep_millisecs);

		if (!scan_sleep_jiffies)
			return;

		khugepaged_sleep_expire = jiffies + scan_sleep_jiffies;
		wait_event_freezable_timeout(*ks_wait,
					     ks_should_wakeup(),
					     scan_sleep_jiffies);
		return;
	}

	if (KS_THP_ENABLED())
		wait_event_freezable(*ks_wait, ks_wait_event());
}

static void ks_watch_kick(struct mmfix_fix *fix);

/* Replaces khugepaged(), the khugepaged kthread's function. */
static int mmfix_khugepaged(void *none)
{
	struct mmfix_mm_slot *slot;

	set_freezable();
	set_user_nice(current, MAX_NICE);

	while (!kthread_should_stop()) {
		/* a transition mmfix's callbacks may not see (coexist.c) */
		if (unlikely(klp_patch_pending(current)))
			ks_watch_kick(&mmfix_khugepaged_scan);
		ks_do_scan(&khugepaged_collapse_control);
		ks_wait_work();
	}

	spin_lock(ks_mm_lock);
	slot = ks_scan->mm_slot;
	ks_scan->mm_slot = NULL;
	if (slot)
		ks_collect_mm_slot(slot);
	spin_unlock(ks_mm_lock);
	return 0;
}

/* Replaces __khugepaged_exit(): the kernel's, plus freeing the cursor. */
static void mmfix_khugepaged_exit(struct mm_struct *mm)
{
	struct mmfix_mm_slot *slot = NULL, *tmp;
	int free = 0;

	spin_lock(ks_mm_lock);
	hash_for_each_possible(mm_slots_hash, tmp, hash, (unsigned long)mm)
		if (mm == tmp->mm) {
			slot = tmp;
			break;
		}
	if (slot && ks_scan->mm_slot != slot) {
		hash_del(&slot->hash);
		list_del(&slot->mm_node);
		free = 1;
	}
	spin_unlock(ks_mm_lock);

	if (free) {
		KS_CLEAR_VM_HUGEPAGE(mm);
		ks_cursor_free(slot);
		kmem_cache_free(mm_slot_cache, slot);
		mmdrop(mm);
	} else if (slot) {
		/*
		 * This is required to serialize against
		 * hpage_collapse_test_exit() (which is guaranteed to run
		 * under mmap sem read mode). Stop here (after we return all
		 * pagetables will be destroyed) until khugepaged has finished
		 * working on the pagetables under the mmap_lock.
		 */
		mmap_write_lock(mm);
		mmap_write_unlock(mm);
	}
}

/* --- replacing the thread during patch transitions ------------------ */

/*
 * How often a transition is checked for a khugepaged not switched: every
 * tick for the first KS_WATCH_FAST checks (the livepatch core retries a
 * transition every second, and the sooner the old thread is replaced,
 * the sooner it can end), then every 0.1 s.
 */
#define KS_WATCH_FAST		50
#define KS_WATCH_INTERVAL	(HZ / 10)

static void ks_watch_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ks_watch, ks_watch_fn);
/*
 * Under ks_watch_lock.  foreign: started for another livepatch's
 * transition (ks_watch_kick()), which runs none of mmfix's callbacks;
 * the watch then ends by itself with that transition.
 */
static DEFINE_SPINLOCK(ks_watch_lock);
static bool ks_watching, ks_watch_foreign;
static unsigned int ks_watch_checks;

/*
 * The kernel's khugepaged() sets MAX_NICE first thing, and before it
 * runs, kthread() of 7.x sets the thread's CPUs to its node's
 * (kthread_affine_node()).  Once the new thread has done both, it gets
 * the old thread's CPUs and nice value.  A work of its own waits for
 * that (polling every KS_SETTLE_MS, at most KS_SETTLE_TRIES times), so
 * that the watch, which klp callbacks cancel under klp_mutex, never
 * sleeps: every module load waits for klp_mutex (klp_module_coming()).
 */
#define KS_SETTLE_MS		20
#define KS_SETTLE_TRIES		250

static void ks_settle_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(ks_settle_work, ks_settle_fn);
static DEFINE_MUTEX(ks_settle_mutex);
static struct {			/* under ks_settle_mutex */
	struct task_struct *task;	/* a reference, NULL: none */
	struct cpumask cpus;
	long nice;
	unsigned int tries;
} ks_settling;

static void ks_settle_fn(struct work_struct *work)
{
	struct task_struct *t;

	mutex_lock(&ks_settle_mutex);
	t = ks_settling.task;
	if (t && task_nice(t) != MAX_NICE &&
	    ++ks_settling.tries < KS_SETTLE_TRIES) {
		queue_delayed_work(system_long_wq, &ks_settle_work,
				   msecs_to_jiffies(KS_SETTLE_MS));
		t = NULL;
	} else if (t) {
		set_cpus_allowed_ptr(t, &ks_settling.cpus);
		set_user_nice(t, ks_settling.nice);
		ks_settling.task = NULL;
	}
	mutex_unlock(&ks_settle_mutex);
	if (t)
		put_task_struct(t);
}

/* Give @t (taking the caller's reference) @cpus and @nice once it ran. */
static void ks_settle(struct task_struct *t, const struct cpumask *cpus,
		      long nice)
{
	struct task_struct *prev;

	mutex_lock(&ks_settle_mutex);
	prev = ks_settling.task;
	ks_settling.task = t;
	cpumask_copy(&ks_settling.cpus, cpus);
	ks_settling.nice = nice;
	ks_settling.tries = 0;
	mutex_unlock(&ks_settle_mutex);
	if (prev)
		put_task_struct(prev);
	mod_delayed_work(system_long_wq, &ks_settle_work, 0);
}

/* At unload: nothing left waiting. */
static void ks_settle_cancel(void)
{
	cancel_delayed_work_sync(&ks_settle_work);
	if (ks_settling.task)
		put_task_struct(ks_settling.task);
	ks_settling.task = NULL;
}

/* Whether @t and @old are in the same cgroups (the same css_set). */
static bool ks_same_cgroups(struct task_struct *t, struct task_struct *old)
{
	bool same;

	rcu_read_lock();
	same = rcu_access_pointer(t->cgroups) ==
	       rcu_access_pointer(old->cgroups);
	rcu_read_unlock();
	return same;
}

/*
 * A khugepaged that has not switched to the patch state the transition
 * goes to never will: khugepaged() never returns.  Replace it with a
 * fresh thread, made by kthreadd, whose patch state it inherits, so it
 * runs the code of the target state from its first instruction.  The
 * fresh thread gets the old one's cgroups, CPU affinity and nice value;
 * it is only made while THP wants a khugepaged, and only if kthreadd has
 * switched already (else the next check tries again).  khugepaged_mutex
 * is held only to check and to stop and start, as start_stop_khugepaged()
 * does; the cgroup move happens outside it.
 */
static void ks_replace_unswitched(void)
{
	struct task_struct *old, *t;
	cpumask_var_t cpus;
	long nice;

	mutex_lock(ks_mutex);
	old = *ks_thread;
	if (old && klp_patch_pending(old))
		get_task_struct(old);
	else
		old = NULL;
	mutex_unlock(ks_mutex);
	if (!old)
		return;

	if (!alloc_cpumask_var(&cpus, GFP_KERNEL))
		goto out_put_old;
	t = kthread_create(khugepaged, NULL, "khugepaged");
	if (IS_ERR(t))
		goto out_free_cpus;
	get_task_struct(t);
	if (klp_patch_pending(t))
		goto out_stop_new;
	/* cgroup_attach_task_all() waits for RCU: only when needed */
	if (!ks_same_cgroups(t, old) && cgroup_attach_task_all(old, t))
		pr_warn("khugepaged_scan: the new khugepaged is not in the old one's cgroups\n");
	cpumask_copy(cpus, &old->cpus_mask);
	nice = task_nice(old);

	mutex_lock(ks_mutex);
	if (*ks_thread != old || !KS_THP_ENABLED() || klp_patch_pending(t)) {
		mutex_unlock(ks_mutex);
		goto out_stop_new;
	}
	kthread_stop(old);
	*ks_thread = t;
	wake_up_process(t);
	mutex_unlock(ks_mutex);
	mmfix_count(&mmfix_khugepaged_scan, KS_RESTARTS);
	ks_settle(t, cpus, nice);
	goto out_free_cpus;

out_stop_new:
	kthread_stop(t);
	put_task_struct(t);
out_free_cpus:
	free_cpumask_var(cpus);
out_put_old:
	put_task_struct(old);
}

/*
 * Another livepatch's transition concerns khugepaged only if that patch
 * has a khugepaged() (its own, or the no-op an atomic replace puts over
 * mmfix's); otherwise the core switches the thread itself.  1: replace
 * unswitched threads; 0: the transition ended or does not concern it;
 * -EAGAIN: ask again at the next check.
 *
 * One that moves __khugepaged_exit() (an atomic replace, or another
 * patch of it loaded after mmfix) has tasks free mm_slots through a
 * function that knows nothing of cursors: cursors are switched off (and
 * freed) for as long as it runs, and on again once no transition
 * concerns khugepaged and mmfix's __khugepaged_exit() is still the one
 * that runs (a reversed replace, a patch loaded and gone).  The watch
 * ends then; while another patch's __khugepaged_exit() runs instead of
 * mmfix's they stay off.
 */
static void ks_watch_fn(struct work_struct *work)
{
	int concerned = 1, moving = 0, top = 0;
	bool foreign, again;

	spin_lock(&ks_watch_lock);
	foreign = ks_watch_foreign;
	spin_unlock(&ks_watch_lock);
	if (foreign) {
		concerned = mmfix_coexist_transition_patches("khugepaged");
		moving = mmfix_coexist_transition_patches(KS_EXIT_FUNC);
		if (moving > 0)
			ks_cursors_disable();
		else if (!moving && !concerned)
			top = mmfix_coexist_on_top(KS_EXIT_FUNC);
	}
	if (concerned > 0)
		ks_replace_unswitched();

	spin_lock(&ks_watch_lock);
	if (ks_watch_foreign && !concerned && !moving && top >= 0) {
		ks_watching = ks_watch_foreign = false;
		/* under ks_watch_lock: ks_pre_unpatch() starts its watch first */
		if (top)
			ks_cursors_enable();
	}
	again = ks_watching;
	spin_unlock(&ks_watch_lock);
	if (again)
		queue_delayed_work(system_long_wq, &ks_watch,
				   ++ks_watch_checks < KS_WATCH_FAST ?
				   1 : KS_WATCH_INTERVAL);
}

/* From before a transition of mmfix's until after it, also a reversed one. */
static void ks_watch_start(void)
{
	spin_lock(&ks_watch_lock);
	ks_watching = true;
	ks_watch_foreign = false;
	ks_watch_checks = 0;
	spin_unlock(&ks_watch_lock);
	mod_delayed_work(system_long_wq, &ks_watch, 1);
}

static void ks_watch_stop(void)
{
	spin_lock(&ks_watch_lock);
	ks_watching = ks_watch_foreign = false;
	spin_unlock(&ks_watch_lock);
	cancel_delayed_work_sync(&ks_watch);
}

/*
 * Another livepatch loaded (coexist.c), or khugepaged found a transition
 * pending for itself: if no transition of mmfix's is being watched,
 * watch this one until it ends.  An atomic replace's transition, whose
 * no-op for khugepaged() never returns to the kernel's code in a thread
 * sleeping in mmfix's, ends once the watch has replaced the thread.
 */
static void ks_watch_kick(struct mmfix_fix *fix)
{
	bool start;

	spin_lock(&ks_watch_lock);
	start = !ks_watching;
	if (start) {
		ks_watching = ks_watch_foreign = true;
		ks_watch_checks = 0;
	}
	spin_unlock(&ks_watch_lock);
	if (start)
		queue_delayed_work(system_long_wq, &ks_watch, 1);
}

/*
 * At unload.  After another livepatch's atomic replace no callback of
 * mmfix's ran: its cursors are freed here (no task runs mmfix's code
 * any more; after an upgrade they are the new module's, and kept).
 */
static void ks_fix_exit(struct mmfix_fix *fix)
{
	ks_watch_stop();
	ks_settle_cancel();
	/*
	 * Batch levels are only hints, and a build that does not know them
	 * (after a downgrade) would never free them.  Whoever reads a
	 * cursor or a level holds khugepaged_mm_lock.
	 */
	if (ks_mm_lock) {
		spin_lock(ks_mm_lock);
		if (mmfix_coexist_replaced(NULL, 0))
			klp_shadow_free_all(KS_CURSOR_ID, ks_cursor_dtor);
		klp_shadow_free_all(KS_LEVEL_ID, NULL);
		spin_unlock(ks_mm_lock);
	}
}

/*
 * Nothing is stopped or held across a transition: khugepaged runs on in
 * whichever code its patch state selects until the watch replaces it
 * (the klp callbacks run with klp_mutex held, the watch never takes it).
 */
static noinline void ks_resolve(void)	/* one relocation per symbol */
{
	ks_scan = &khugepaged_scan;
	ks_mm_lock = &khugepaged_mm_lock;
	ks_wait = &khugepaged_wait;
	ks_thread = &khugepaged_thread;
	ks_mutex = &khugepaged_mutex;
}

static int ks_pre_patch(struct mmfix_fix *fix)
{
	ks_resolve();
	ks_watch_start();
	return 0;
}

/* Also after a reversed unpatching. */
static void ks_post_patch(struct mmfix_fix *fix)
{
	ks_watch_stop();
	ks_cursors_enable();
}

/* The watch first: a foreign watch then never switches cursors on again. */
static void ks_pre_unpatch(struct mmfix_fix *fix)
{
	ks_watch_start();
	ks_cursors_disable();
}

/*
 * Another livepatch's module is about to enable its patch, which may
 * move __khugepaged_exit() before the watch ks_watch_kick() starts
 * (at MODULE_STATE_LIVE) can look: cursors off until that watch ends.
 */
static void ks_foreign_coming(struct mmfix_fix *fix)
{
	ks_cursors_disable();
}

/*
 * Also after a failed or reversed patching: the kernel's code runs again,
 * or, after a reversed upgrade, the replaced mmfix's, whose cursors these
 * are (it kept them on, and its __khugepaged_exit() frees them).
 */
static void ks_post_unpatch(struct mmfix_fix *fix)
{
	ks_watch_stop();
	if (!mmfix_upgrading())
		ks_cursors_disable();
}

/*
 * An upgrade to a build loaded without this fix (fixes=): the replaced
 * module's khugepaged() goes back to the kernel's, so khugepaged is
 * replaced as for a patch, and the replaced module's cursors are freed
 * once no task runs its code.  Until then its khugepaged() keeps saving
 * cursors while switched tasks free mm_slots with the kernel's
 * __khugepaged_exit(): a cursor left on a freed mm_slot can make one
 * scan of the next mm at that address start there instead of at 0 (it
 * is taken once; nothing but the start of that scan depends on it).
 */
static void ks_pre_drop(struct mmfix_fix *fix)
{
	ks_resolve();
	ks_watch_start();
}

static void ks_post_drop(struct mmfix_fix *fix)
{
	ks_watch_stop();
	ks_cursors_disable();
}

/* The replaced module runs on with its cursors. */
static void ks_drop_reversed(struct mmfix_fix *fix)
{
	ks_watch_stop();
}

static struct klp_func mmfix_khugepaged_scan_funcs[] = {
	{
		.old_name = "khugepaged",
		.new_func = mmfix_khugepaged,
	},
	{
		.old_name = "__khugepaged_exit",
		.new_func = mmfix_khugepaged_exit,
	},
	{ }
};

static const char * const mmfix_khugepaged_scan_counters[] = {
	[KS_SCANS]		= "scans",
	[KS_RESUMED]		= "resumed",
	[KS_LOCK_DROPS]		= "lock_drops",
	[KS_VMAS_SKIPPED]	= "vmas_skipped",
	[KS_HOLDS]		= "holds",
	[KS_HOLD_TOTAL_NS]	= "hold_total_ns",
	[KS_HOLD_MAX_NS]	= "hold_max_ns",
	[KS_HOLD_MAX_VMAS]	= "hold_max_vmas",
	[KS_WAIT_MAX_VMAS]	= "wait_max_vmas",
	[KS_CURSORS]		= "cursors",
	[KS_RESTARTS]		= "restarts",
	[KS_RETAKE_FAILED]	= "retake_failed",
	[KS_VMAS_PASSED]	= "vmas_passed",
	NULL
};

static void mmfix_khugepaged_scan_init(struct mmfix_fix *fix)
{
	fix->applicable = true;
	fix->recommended = true;	/* 10-20x fewer full scans on all four */
	fix->reason = "khugepaged() resumes each mm where it stopped and drops a contended mmap_lock between VMA batches";
}

struct mmfix_fix mmfix_khugepaged_scan = {
	.funcs = mmfix_khugepaged_scan_funcs,
	.counter_names = mmfix_khugepaged_scan_counters,
	.max_counters = BIT(KS_HOLD_MAX_NS) | BIT(KS_HOLD_MAX_VMAS) |
			BIT(KS_WAIT_MAX_VMAS),
	.init = mmfix_khugepaged_scan_init,
	.pre_patch = ks_pre_patch,
	.post_patch = ks_post_patch,
	.pre_unpatch = ks_pre_unpatch,
	.post_unpatch = ks_post_unpatch,
	.pre_drop = ks_pre_drop,
	.post_drop = ks_post_drop,
	.drop_reversed = ks_drop_reversed,
	.foreign_transition = ks_watch_kick,
	.foreign_coming = ks_foreign_coming,
	.exit = ks_fix_exit,
};

#endif /* MMFIX_SUPPORTED */
