// SPDX-License-Identifier: GPL-2.0
/*
 * Fix unmap_drain: until v6.14 the munmap path calls lru_add_drain()
 * twice, once before tlb_gather_mmu() and once at the top of
 * free_pages_and_swap_cache().  A folio that the per-CPU lru_add batch
 * still holds is thereby put on the LRU under the lruvec lock only to
 * be taken off it again, under the lock, when the unmap frees it, so
 * populate/munmap churn pays two lock round trips per operation even
 * with populate_drain on.
 *
 * Upstream removed both drains in commit 1aa43598c03b ("mm: remove
 * unnecessary calls to lru_add_drain"): the batch holds its own folio
 * reference, so a folio freed while still batched simply lives until
 * the batch is moved, whose folios_put() then frees it; nothing on the
 * unmap path needs the folios on an LRU.  With the fix on, the
 * replacements below leave the per-CPU batches alone, as 7.x does.
 *
 * The replacements are the kernel's own functions for each series
 * (6.1: mm/mmap.c unmap_region(), mm/swap_state.c; 6.12: mm/vma.c,
 * mm/swap_state.c) with the drain decision as the only difference.
 * 6.12's drain sits in vms_clear_ptes(), an inline (so notrace)
 * function: its two callers, vms_complete_munmap_vmas() (munmap, and
 * mmap over an existing mapping after the new one is in place) and
 * vms_clean_up_area() (MAP_FIXED over an existing mapping, before the
 * new one goes in), are replaced instead and share a copy of it.
 *
 * Without the drains a full lru_add batch finds most of its folios
 * already unmapped, held only by the batch; lru_add_free_dead
 * (lru_add_free_dead.c) frees those without putting them on the LRU.
 */
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/swap.h>
#ifdef MMFIX_UNMAP_DRAIN_VMS
#include <linux/pagevec.h>
#endif
#include "mmfix.h"

#if MMFIX_SUPPORTED	/* no fix in a build for an unsupported kernel */

/*
 * struct mmu_gather comes from asm/tlb.h, whose inline tlb_flush() calls
 * flush_tlb_mm_range(); x86's tlbflush.h declares that only for built-in
 * code.  Nothing here calls tlb_flush(), so the declaration is enough.
 */
void flush_tlb_mm_range(struct mm_struct *mm, unsigned long start,
			unsigned long end, unsigned int stride_shift,
			bool freed_tables);
#include <asm/tlb.h>

enum { UD_DRAINED, UD_SKIPPED };

#ifdef MMFIX_HAVE_UNMAP_DRAIN

/* Every lru_add_drain() the replaced functions make, or leave out. */
static void mmfix_unmap_lru_drain(void)
{
	if (!mmfix_fix_on(&mmfix_unmap_drain)) {
		lru_add_drain();
		mmfix_count(&mmfix_unmap_drain, UD_DRAINED);
	} else {
		mmfix_count(&mmfix_unmap_drain, UD_SKIPPED);
	}
}

#ifdef MMFIX_UNMAP_DRAIN_UNMAP_REGION
/* 6.1.  Non-exported, resolved by livepatch relocations (mm/internal.h). */
void free_pgtables(struct mmu_gather *tlb, struct maple_tree *mt,
		   struct vm_area_struct *start_vma, unsigned long floor,
		   unsigned long ceiling);

static void mmfix_unmap_region(struct mm_struct *mm, struct maple_tree *mt,
		struct vm_area_struct *vma, struct vm_area_struct *prev,
		struct vm_area_struct *next,
		unsigned long start, unsigned long end)
{
	struct mmu_gather tlb;

	mmfix_unmap_lru_drain();
	tlb_gather_mmu(&tlb, mm);
	update_hiwater_rss(mm);
	unmap_vmas(&tlb, mt, vma, start, end);
	free_pgtables(&tlb, mt, vma, prev ? prev->vm_end : FIRST_USER_ADDRESS,
		      next ? next->vm_start : USER_PGTABLES_CEILING);
	tlb_finish_mmu(&tlb);
}

static void mmfix_free_pages_and_swap_cache(struct page **pages, int nr)
{
	int i;

	mmfix_unmap_lru_drain();
	for (i = 0; i < nr; i++)
		free_swap_cache(pages[i]);
	release_pages(pages, nr);
}

static struct klp_func mmfix_unmap_drain_funcs[] = {
	{
		.old_name = "unmap_region",
		.new_func = mmfix_unmap_region,
	},
	{
		.old_name = "free_pages_and_swap_cache",
		.new_func = mmfix_free_pages_and_swap_cache,
	},
	{ }
};
#endif /* MMFIX_UNMAP_DRAIN_UNMAP_REGION */

/* 6.12.  Non-exported, resolved by livepatch relocations (mm/vma.h, mm/internal.h). */
#ifdef MMFIX_UNMAP_DRAIN_VMS
void remove_vma(struct vm_area_struct *vma, bool unreachable);
void free_pgtables(struct mmu_gather *tlb, struct ma_state *mas,
		   struct vm_area_struct *start_vma, unsigned long floor,
		   unsigned long ceiling, bool mm_wr_locked);

/*
 * struct vma_munmap_struct lives in mm/vma.h, which is not part
 * of the headers package: this is its layout in 6.12, checked against
 * the offsets Debian's 6.12.117 vms_clear_ptes() uses (see init).
 */
struct mmfix_vma_munmap_struct {
	struct vma_iterator *vmi;
	struct vm_area_struct *vma;
	struct vm_area_struct *prev;
	struct vm_area_struct *next;
	struct list_head *uf;
	unsigned long start;
	unsigned long end;
	unsigned long unmap_start;
	unsigned long unmap_end;
	int vma_count;
	bool unlock;
	bool clear_ptes;
	unsigned long nr_pages;
	unsigned long locked_vm;
	unsigned long nr_accounted;
	unsigned long exec_vm;
	unsigned long stack_vm;
	unsigned long data_vm;
};

/* The kernel's static inline vms_clear_ptes(). */
static void mmfix_vms_clear_ptes(struct mmfix_vma_munmap_struct *vms,
		struct ma_state *mas_detach, bool mm_wr_locked)
{
	struct mmu_gather tlb;

	if (!vms->clear_ptes)
		return;

	mas_set(mas_detach, 1);
	mmfix_unmap_lru_drain();
	tlb_gather_mmu(&tlb, vms->vma->vm_mm);
	update_hiwater_rss(vms->vma->vm_mm);
	unmap_vmas(&tlb, mas_detach, vms->vma, vms->start, vms->end,
		   vms->vma_count, mm_wr_locked);
	mas_set(mas_detach, 1);
	free_pgtables(&tlb, mas_detach, vms->vma, vms->unmap_start,
		      vms->unmap_end, mm_wr_locked);
	tlb_finish_mmu(&tlb);
	vms->clear_ptes = false;
}

/*
 * MAP_FIXED over an existing mapping (__mmap_region()): the old PTEs go
 * before the new VMA is inserted.  vma_close() is mm/internal.h's.
 */
static void mmfix_vms_clean_up_area(struct mmfix_vma_munmap_struct *vms,
		struct ma_state *mas_detach)
{
	struct vm_area_struct *vma;

	if (!vms->nr_pages)
		return;

	mmfix_vms_clear_ptes(vms, mas_detach, true);
	mas_set(mas_detach, 0);
	mas_for_each(mas_detach, vma, ULONG_MAX) {
		if (vma->vm_ops && vma->vm_ops->close) {
			vma->vm_ops->close(vma);
			vma->vm_ops = &vma_dummy_vm_ops;
		}
	}
}

/*
 * The VM_WARN_ON()s and validate_mm() of the kernel's function are
 * empty without CONFIG_DEBUG_VM / CONFIG_DEBUG_VM_MAPLE_TREE (Debian).
 */
static void mmfix_vms_complete_munmap_vmas(struct mmfix_vma_munmap_struct *vms,
		struct ma_state *mas_detach)
{
	struct vm_area_struct *vma;
	struct mm_struct *mm;

	mm = current->mm;
	mm->map_count -= vms->vma_count;
	mm->locked_vm -= vms->locked_vm;
	if (vms->unlock)
		mmap_write_downgrade(mm);

	if (!vms->nr_pages)
		return;

	mmfix_vms_clear_ptes(vms, mas_detach, !vms->unlock);
	update_hiwater_vm(mm);
	WRITE_ONCE(mm->total_vm, READ_ONCE(mm->total_vm) - vms->nr_pages);
	mm->exec_vm -= vms->exec_vm;
	mm->stack_vm -= vms->stack_vm;
	mm->data_vm -= vms->data_vm;

	mas_set(mas_detach, 0);
	mas_for_each(mas_detach, vma, ULONG_MAX)
		remove_vma(vma, /* unreachable = */ false);

	vm_unacct_memory(vms->nr_accounted);
	if (vms->unlock)
		mmap_read_unlock(mm);

	__mt_destroy(mas_detach->tree);
}

static void mmfix_free_pages_and_swap_cache(struct encoded_page **pages, int nr)
{
	struct folio_batch folios;
	unsigned int refs[PAGEVEC_SIZE];

	mmfix_unmap_lru_drain();
	folio_batch_init(&folios);
	for (int i = 0; i < nr; i++) {
		struct folio *folio = page_folio(encoded_page_ptr(pages[i]));

		free_swap_cache(folio);
		refs[folios.nr] = 1;
		if (unlikely(encoded_page_flags(pages[i]) &
			     ENCODED_PAGE_BIT_NR_PAGES_NEXT))
			refs[folios.nr] = encoded_nr_pages(pages[++i]);

		if (folio_batch_add(&folios, folio) == 0)
			folios_put_refs(&folios, refs);
	}
	if (folios.nr)
		folios_put_refs(&folios, refs);
}

static struct klp_func mmfix_unmap_drain_funcs[] = {
	{
		.old_name = "vms_complete_munmap_vmas",
		.new_func = mmfix_vms_complete_munmap_vmas,
	},
	{
		.old_name = "vms_clean_up_area",
		.new_func = mmfix_vms_clean_up_area,
	},
	{
		.old_name = "free_pages_and_swap_cache",
		.new_func = mmfix_free_pages_and_swap_cache,
	},
	{ }
};
#endif /* MMFIX_UNMAP_DRAIN_VMS */

#else /* !MMFIX_HAVE_UNMAP_DRAIN */

static struct klp_func mmfix_unmap_drain_funcs[] = {
	{ }
};

#endif /* MMFIX_HAVE_UNMAP_DRAIN */

static const char * const mmfix_unmap_drain_counters[] = {
	[UD_DRAINED] = "drained",
	[UD_SKIPPED] = "skipped",
	NULL
};

static void mmfix_unmap_drain_init(struct mmfix_fix *fix)
{
#ifdef MMFIX_UNMAP_DRAIN_VMS
	/* Offsets read from Debian 6.12.117's vms_clear_ptes() code. */
	BUILD_BUG_ON(offsetof(struct mmfix_vma_munmap_struct, start) != 0x28);
	BUILD_BUG_ON(offsetof(struct mmfix_vma_munmap_struct, vma_count) != 0x48);
	BUILD_BUG_ON(offsetof(struct mmfix_vma_munmap_struct, clear_ptes) != 0x4d);
	BUILD_BUG_ON(offsetof(struct mmfix_vma_munmap_struct, nr_pages) != 0x50);
#endif
#ifdef MMFIX_HAVE_UNMAP_DRAIN
	fix->applicable = true;
	fix->recommended = true;	/* populate_drain's gain needs it on 6.x */
	fix->reason = "munmap leaves the per-CPU LRU batches alone (upstream 1aa43598c03b)";
#else
	fix->applicable = false;
	fix->reason = "kernel no longer drains in free_pages_and_swap_cache()";
#endif
}

struct mmfix_fix mmfix_unmap_drain = {
	.funcs = mmfix_unmap_drain_funcs,
	.counter_names = mmfix_unmap_drain_counters,
	.init = mmfix_unmap_drain_init,
};

#endif /* MMFIX_SUPPORTED */
