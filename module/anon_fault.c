// SPDX-License-Identifier: GPL-2.0
/*
 * Fix anon_fault: keep anonymous faults off the vm_refcnt cacheline.
 *
 * With per-VMA locks every anonymous fault increments and decrements
 * vma->vm_refcnt; when many threads fault in one VMA that line moves
 * between CPUs anyway, and further loads of it inside the fault miss and
 * make the inc/dec dearer.  Two such loads are removed here:
 *
 * (a) 7.3: __folio_set_anon(), inlined into folio_add_new_anon_rmap(),
 *     computes the new folio's index with linear_anon_page_index(), which
 *     reads __vm_anon_pgoff_hi (offset 132, next to vm_refcnt at 128).
 *     For a pure anonymous VMA (no vm_ops, no vm_file) the anon page
 *     offset equals vm_pgoff (the kernel asserts this under DEBUG_VM), so
 *     with the fix on the index comes from linear_page_index().
 *     MAP_PRIVATE /dev/zero (anonymous but vm_file set, file offset in
 *     vm_pgoff on 7.3) and MAP_PRIVATE file mappings keep the split field.
 *
 * (b) v7.4-rc1+: __vmf_anon_prepare() tests vma_has_anon_rmap(), which
 *     runs vma_is_attached() + vma_assert_stabilised() even without
 *     CONFIG_DEBUG_VM, loading vm_refcnt and the mmap_lock count on every
 *     fault that allocates an anonymous page or breaks CoW.  With the fix
 *     on the assertion only runs in CONFIG_DEBUG_VM builds.  No supported
 *     kernel has this yet; the code is only compile-tested
 *     (tests/host/anon-fault-74, docs/fixes/anon-fault.md).
 *
 * The replacements are the kernel's own functions for the series, with
 * the above as the only difference when the switch is on.
 */
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include "mmfix.h"

#if MMFIX_SUPPORTED	/* no fix in a build for an unsupported kernel */

enum {
#ifdef MMFIX_HAVE_ANON_PGOFF_HI
	AF_FAST_INDEX,
	AF_SPLIT_INDEX,
#endif
#ifdef MMFIX_HAVE_VMA_HAS_ANON_RMAP
	AF_ASSERT_KEPT,
	AF_ASSERT_SKIPPED,
#endif
	AF_NR_COUNTERS
};

#ifdef MMFIX_HAVE_ANON_PGOFF_HI
/* Non-exported kernel symbols (mm/rmap.c, mm/huge_memory.c), see klp-symbols. */
void __folio_mod_stat(struct folio *folio, int nr, int nr_pmdmapped);

/*
 * linear_anon_page_index() for a new anonymous folio.  With the fix on, a
 * pure anonymous VMA takes vm_pgoff (cacheline 1) instead of the anon
 * pgoff split into __vm_anon_pgoff_lo and __vm_anon_pgoff_hi (the
 * vm_refcnt line).  Everything read on that path is in lines 0 and 1.
 */
static pgoff_t mmfix_anon_index(struct vm_area_struct *vma,
				unsigned long address)
{
	if (mmfix_fix_on(&mmfix_anon_fault) &&
	    vma_is_anonymous(vma) && !vma->vm_file) {
		const pgoff_t pgoff = linear_page_index(vma, address);

		VM_WARN_ON_ONCE(pgoff != __linear_anon_page_index(vma, address));
		mmfix_count(&mmfix_anon_fault, AF_FAST_INDEX);
		return pgoff;
	}
	mmfix_count(&mmfix_anon_fault, AF_SPLIT_INDEX);
	return linear_anon_page_index(vma, address);
}

/* 7.3 __folio_set_anon(); only the index computation differs. */
static void mmfix_folio_set_anon(struct folio *folio,
				 struct vm_area_struct *vma,
				 unsigned long address, bool exclusive)
{
	struct anon_vma *anon_vma = vma->anon_vma;

	/* The kernel's own check: a NULL anon_vma would corrupt ->mapping. */
	BUG_ON(!anon_vma);

	/* A folio not exclusive to this VMA takes the oldest anon_vma. */
	if (!exclusive)
		anon_vma = anon_vma->root;

	/* One store, so lockless rmap readers never see half of it. */
	anon_vma = (void *)anon_vma + FOLIO_MAPPING_ANON;
	WRITE_ONCE(folio->mapping, (struct address_space *)anon_vma);
	folio->index = mmfix_anon_index(vma, address);
}

/* 7.3 folio_add_new_anon_rmap() (mm/rmap.c). */
static void mmfix_folio_add_new_anon_rmap(struct folio *folio,
		struct vm_area_struct *vma, unsigned long address, rmap_t flags)
{
	const bool exclusive = flags & RMAP_EXCLUSIVE;
	int nr = 1, nr_pmdmapped = 0;

	VM_WARN_ON_FOLIO(folio_test_hugetlb(folio), folio);
	VM_WARN_ON_FOLIO(!exclusive && !folio_test_locked(folio), folio);

	/* VM_DROPPABLE folios are dropped under pressure, never swapped. */
	if (!folio_test_swapbacked(folio) && !(vma->vm_flags & VM_DROPPABLE))
		__folio_set_swapbacked(folio);
	mmfix_folio_set_anon(folio, vma, address, exclusive);

	if (likely(!folio_test_large(folio))) {
		/* increment count (starts at -1) */
		atomic_set(&folio->_mapcount, 0);
		if (exclusive)
			SetPageAnonExclusive(&folio->page);
	} else if (!folio_test_pmd_mappable(folio)) {
		int i;

		nr = folio_large_nr_pages(folio);
		for (i = 0; i < nr; i++) {
			struct page *page = folio_page(folio, i);

			if (IS_ENABLED(CONFIG_PAGE_MAPCOUNT))
				/* increment count (starts at -1) */
				atomic_set(&page->_mapcount, 0);
			if (exclusive)
				SetPageAnonExclusive(page);
		}

		folio_set_large_mapcount(folio, nr, vma);
		if (IS_ENABLED(CONFIG_PAGE_MAPCOUNT))
			atomic_set(&folio->_nr_pages_mapped, nr);
	} else {
		nr = folio_large_nr_pages(folio);
		/* increment count (starts at -1) */
		atomic_set(&folio->_entire_mapcount, 0);
		folio_set_large_mapcount(folio, 1, vma);
		if (IS_ENABLED(CONFIG_PAGE_MAPCOUNT))
			atomic_set(&folio->_nr_pages_mapped,
				   MMFIX_ENTIRELY_MAPPED);
		if (exclusive)
			SetPageAnonExclusive(&folio->page);
		nr_pmdmapped = nr;
	}

	VM_WARN_ON_ONCE(address < vma->vm_start ||
			address + (nr << PAGE_SHIFT) > vma->vm_end);

	__folio_mod_stat(folio, nr, nr_pmdmapped);
	mod_mthp_stat(folio_order(folio), MTHP_STAT_NR_ANON, 1);
}
#endif /* MMFIX_HAVE_ANON_PGOFF_HI */

#ifdef MMFIX_HAVE_VMA_HAS_ANON_RMAP
/* Non-exported, declared in mm/internal.h; see klp-symbols. */
int __anon_vma_prepare(struct vm_area_struct *vma);

/*
 * v7.4-rc1 vma_has_anon_rmap() (mm/vma.h, private to mm/).  The lock
 * assertion has no effect without CONFIG_DEBUG_VM, but its atomic reads
 * of vm_refcnt and mmap_lock stay; with the fix on they are skipped.
 */
static bool mmfix_vma_has_anon_rmap(struct vm_area_struct *vma)
{
	if (IS_ENABLED(CONFIG_DEBUG_VM) || !mmfix_fix_on(&mmfix_anon_fault)) {
		if (vma_is_attached(vma))
			vma_assert_stabilised(vma);
		mmfix_count(&mmfix_anon_fault, AF_ASSERT_KEPT);
	} else {
		mmfix_count(&mmfix_anon_fault, AF_ASSERT_SKIPPED);
	}
	/* KCSAN gets confused about the optimistic check.  Silence it. */
	return data_race(vma->anon_vma);
}

/*
 * __vmf_anon_prepare() (mm/memory.c) as of v7.4-rc1: only the anon rmap
 * test differs.  Without an anon_vma under the per-VMA lock, retry with
 * the mmap_lock, since __anon_vma_prepare() looks at neighbouring VMAs.
 */
static vm_fault_t mmfix___vmf_anon_prepare(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	vm_fault_t ret = 0;

	if (likely(mmfix_vma_has_anon_rmap(vma)))
		return 0;
	if (vmf->flags & FAULT_FLAG_VMA_LOCK) {
		if (!mmap_read_trylock(vma->vm_mm))
			return VM_FAULT_RETRY;
	}
	if (__anon_vma_prepare(vma))
		ret = VM_FAULT_OOM;
	if (vmf->flags & FAULT_FLAG_VMA_LOCK)
		mmap_read_unlock(vma->vm_mm);
	return ret;
}
#endif /* MMFIX_HAVE_VMA_HAS_ANON_RMAP */

static struct klp_func mmfix_anon_fault_funcs[] = {
#ifdef MMFIX_HAVE_ANON_PGOFF_HI
	{
		.old_name = "folio_add_new_anon_rmap",
		.new_func = mmfix_folio_add_new_anon_rmap,
	},
#endif
#ifdef MMFIX_HAVE_VMA_HAS_ANON_RMAP
	{
		.old_name = "__vmf_anon_prepare",
		.new_func = mmfix___vmf_anon_prepare,
	},
#endif
	{ }
};

static const char * const mmfix_anon_fault_counters[AF_NR_COUNTERS + 1] = {
#ifdef MMFIX_HAVE_ANON_PGOFF_HI
	[AF_FAST_INDEX] = "fast_index",
	[AF_SPLIT_INDEX] = "split_index",
#endif
#ifdef MMFIX_HAVE_VMA_HAS_ANON_RMAP
	[AF_ASSERT_KEPT] = "assert_kept",
	[AF_ASSERT_SKIPPED] = "assert_skipped",
#endif
	[AF_NR_COUNTERS] = NULL
};

static void mmfix_anon_fault_init(struct mmfix_fix *fix)
{
	fix->applicable = mmfix_anon_fault_funcs[0].old_name != NULL;
	fix->recommended = fix->applicable;
#if defined(MMFIX_HAVE_VMA_HAS_ANON_RMAP)
	fix->reason = "anon index from vm_pgoff in folio_add_new_anon_rmap(); no stability assert in __vmf_anon_prepare()";
#elif defined(MMFIX_HAVE_ANON_PGOFF_HI)
	fix->reason = "folio_add_new_anon_rmap() takes the anon index of pure anonymous VMAs from vm_pgoff";
#else
	fix->reason = "kernel does not read __vm_anon_pgoff_hi on the fault path";
#endif
}

struct mmfix_fix mmfix_anon_fault = {
	.funcs = mmfix_anon_fault_funcs,
	.counter_names = mmfix_anon_fault_counters,
	.init = mmfix_anon_fault_init,
};

#endif /* MMFIX_SUPPORTED */
