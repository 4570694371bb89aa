// SPDX-License-Identifier: GPL-2.0
/*
 * Fix populate_drain: populate_vma_page_range() ends every populate with
 * lru_add_drain(), taking the lruvec lock once per MAP_POPULATE even for
 * a single page and defeating the per-CPU LRU batches.  The drain only
 * matters for VM_LOCKED VMAs, whose pages must reach the unevictable LRU
 * (and its accounting) before mlock()/MAP_LOCKED returns.  With the fix
 * on, other VMAs leave their pages in the per-CPU batch.
 *
 * VM_LOCKED is read before get-user-pages: with a non-NULL @locked the
 * mmap lock may be dropped inside it and the VMA may be gone afterwards.
 *
 * The replacements below are the kernel's own function for each series
 * (mm/gup.c), with the drain decision as the only difference.
 */
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include "mmfix.h"

#if MMFIX_SUPPORTED	/* no fix in a build for an unsupported kernel */

enum { PD_DRAINED, PD_SKIPPED };

/* Non-exported kernel functions, resolved by livepatch relocations. */
#ifdef MMFIX_GUP_HAS_VMAS_ARG
long __get_user_pages(struct mm_struct *mm, unsigned long start,
		      unsigned long nr_pages, unsigned int gup_flags,
		      struct page **pages, struct vm_area_struct **vmas,
		      int *locked);
#else
long __get_user_pages(struct mm_struct *mm, unsigned long start,
		      unsigned long nr_pages, unsigned int gup_flags,
		      struct page **pages, int *locked);
#endif
void lru_add_drain(void);

static void mmfix_populate_finish(bool vma_locked)
{
	if (vma_locked || !mmfix_fix_on(&mmfix_populate_drain)) {
		lru_add_drain();
		mmfix_count(&mmfix_populate_drain, PD_DRAINED);
	} else {
		mmfix_count(&mmfix_populate_drain, PD_SKIPPED);
	}
}

#ifdef MMFIX_GUP_HAS_VMAS_ARG
/* 6.1 */
static long mmfix_populate_vma_page_range(struct vm_area_struct *vma,
		unsigned long start, unsigned long end, int *locked)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long nr_pages = (end - start) / PAGE_SIZE;
	bool vma_locked = vma->vm_flags & VM_LOCKED;
	int gup_flags;
	long ret;

	mmap_assert_locked(mm);

	if (vma->vm_flags & VM_LOCKONFAULT)
		return nr_pages;

	gup_flags = FOLL_TOUCH;
	if ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE)
		gup_flags |= FOLL_WRITE;
	if (vma_is_accessible(vma))
		gup_flags |= FOLL_FORCE;

	ret = __get_user_pages(mm, start, nr_pages, gup_flags,
			       NULL, NULL, locked);
	mmfix_populate_finish(vma_locked);
	return ret;
}
#else
/* 6.12, 7.2, 7.3 */
static long mmfix_populate_vma_page_range(struct vm_area_struct *vma,
		unsigned long start, unsigned long end, int *locked)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long nr_pages = (end - start) / PAGE_SIZE;
	bool vma_locked = vma->vm_flags & VM_LOCKED;
	int local_locked = 1;
	int gup_flags;
	long ret;

	mmap_assert_locked(mm);

	if (vma->vm_flags & VM_LOCKONFAULT)
		return nr_pages;
	if (!vma_is_accessible(vma))
		return -EFAULT;

	gup_flags = MMFIX_FOLL_TOUCH;
	if ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE)
		gup_flags |= FOLL_WRITE;
	else
		gup_flags |= FOLL_FORCE;
	if (locked)
		gup_flags |= MMFIX_FOLL_UNLOCKABLE;

	ret = __get_user_pages(mm, start, nr_pages, gup_flags,
			       NULL, locked ? locked : &local_locked);
	mmfix_populate_finish(vma_locked);
	return ret;
}
#endif

static struct klp_func mmfix_populate_drain_funcs[] = {
	{
		.old_name = "populate_vma_page_range",
		.new_func = mmfix_populate_vma_page_range,
	},
	{ }
};

static const char * const mmfix_populate_drain_counters[] = {
	[PD_DRAINED] = "drained",
	[PD_SKIPPED] = "skipped",
	NULL
};

static void mmfix_populate_drain_init(struct mmfix_fix *fix)
{
	fix->applicable = true;
	fix->recommended = true;	/* on 6.x it takes unmap_drain too */
	fix->reason = "populate_vma_page_range() drains the LRU batch only for VM_LOCKED VMAs";
}

struct mmfix_fix mmfix_populate_drain = {
	.funcs = mmfix_populate_drain_funcs,
	.counter_names = mmfix_populate_drain_counters,
	.init = mmfix_populate_drain_init,
};

#endif /* MMFIX_SUPPORTED */
