/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel differences mmfix cares about, probed once here and turned into
 * MMFIX_* macros.  Force-included into every object by Kbuild; the code
 * tests these macros, never LINUX_VERSION_CODE.
 *
 * Each value below was read from Debian's linux-source package of the
 * series (see docs/kernels.md for the exact builds).
 */
#ifndef MMFIX_COMPAT_H
#define MMFIX_COMPAT_H

#include <linux/version.h>

#define MMFIX_KV(a, b)	KERNEL_VERSION(a, b, 0)
#define MMFIX_SERIES_IS(a, b) \
	(MMFIX_KV(a, b) <= LINUX_VERSION_CODE && \
	 MMFIX_KV(a, (b) + 1) > LINUX_VERSION_CODE)

/*
 * -DMMFIX_TEST_UNSUPPORTED (tests only: scripts/build-module --cflags)
 * takes the unsupported branch on a supported kernel, so that the VM can
 * show the refusal (tests/guest/t-79-unsupported-kernel.sh).
 */
#if defined(MMFIX_TEST_UNSUPPORTED)
# define MMFIX_SERIES_UNSUPPORTED 1
#elif MMFIX_SERIES_IS(6, 1)
# define MMFIX_SERIES		"6.1"
#elif MMFIX_SERIES_IS(6, 12)
# define MMFIX_SERIES		"6.12"
#elif MMFIX_SERIES_IS(7, 2)
# define MMFIX_SERIES		"7.2"
#elif MMFIX_SERIES_IS(7, 3)
# define MMFIX_SERIES		"7.3"
#else
# define MMFIX_SERIES_UNSUPPORTED 1
#endif

/*
 * Unsupported: builds (so DKMS reports cleanly), carries no fix (each fix
 * file is empty under !MMFIX_SUPPORTED), refuses to load (main.c).
 */
#ifdef MMFIX_SERIES_UNSUPPORTED
# define MMFIX_SUPPORTED	0
# define MMFIX_SERIES		"unsupported"
#else
# define MMFIX_SUPPORTED	1
#endif

#ifndef MMFIX_SERIES_UNSUPPORTED

/*
 * populate_vma_page_range() / __get_user_pages():
 * 6.1 passes a vmas array and sets FOLL_FORCE whenever the VMA is
 * accessible; from 6.12 the vmas argument is gone, PROT_NONE VMAs get
 * -EFAULT, FOLL_FORCE is only for non-writable private mappings, and
 * FOLL_TOUCH/FOLL_UNLOCKABLE moved to mm/internal.h (values below).
 */
# if MMFIX_SERIES_IS(6, 1)
#  define MMFIX_GUP_HAS_VMAS_ARG	1
#  define MMFIX_FOLL_TOUCH		FOLL_TOUCH
# else
#  define MMFIX_FOLL_TOUCH		(1U << 16)
#  define MMFIX_FOLL_UNLOCKABLE		(1U << 21)
# endif

/*
 * anon_fault: from 7.3 (anon pgoff series) __folio_set_anon(), inlined
 * into folio_add_new_anon_rmap(), reads __vm_anon_pgoff_hi, which sits
 * next to vm_refcnt.  From v7.4-rc1 __vmf_anon_prepare() goes through
 * vma_has_anon_rmap(), whose lock assertion loads vm_refcnt even without
 * CONFIG_DEBUG_VM.  MMFIX_TEST_74 builds the 7.4 code against 7.3 headers
 * (tests/host/anon-fault-74); no supported kernel has it yet.
 * ENTIRELY_MAPPED is private to mm/internal.h (same value 7.3).
 */
# if MMFIX_KV(7, 3) <= LINUX_VERSION_CODE
#  define MMFIX_HAVE_ANON_PGOFF_HI	1
#  define MMFIX_ENTIRELY_MAPPED		0x800000
# endif
# if MMFIX_KV(7, 4) <= LINUX_VERSION_CODE || defined(MMFIX_TEST_74)
#  define MMFIX_HAVE_VMA_HAS_ANON_RMAP	1
# endif

/*
 * unmap_drain: before v6.14 (upstream 1aa43598c03b) munmap runs
 * lru_add_drain() before tlb_gather_mmu() and again in
 * free_pages_and_swap_cache().  6.1: the first is in unmap_region()
 * (static, out of line) and the mmu_gather hands page arrays to
 * free_pages_and_swap_cache(); 6.12: it is in vms_clear_ptes() (inline,
 * so notrace; reached through vms_complete_munmap_vmas() and, for
 * MAP_FIXED over a mapping, vms_clean_up_area()) and the pages come
 * encoded.  7.2/7.3 have neither drain.
 *
 * lru_add_free_dead: 7.2 frees the folios of an lru_add batch that only
 * the batch still holds instead of putting them on the LRU; 6.1 and
 * 6.12 do not.  6.1's lru_add move function is lru_add_fn() and its
 * dead pages are freed through a list (free_unref_page_list()); 6.12's
 * is lru_add() and they go through a folio batch (free_unref_folios()).
 */
# if MMFIX_SERIES_IS(6, 1)
#  define MMFIX_HAVE_UNMAP_DRAIN	1
#  define MMFIX_UNMAP_DRAIN_UNMAP_REGION	1
#  define MMFIX_HAVE_LRU_ADD_FREE_DEAD	1
#  define MMFIX_LRU_ADD_FREE_DEAD_LIST	1
# elif MMFIX_SERIES_IS(6, 12)
#  define MMFIX_HAVE_UNMAP_DRAIN	1
#  define MMFIX_UNMAP_DRAIN_VMS		1
#  define MMFIX_HAVE_LRU_ADD_FREE_DEAD	1
# endif

/*
 * khugepaged_scan: khugepaged() with the per-mm scan, khugepaged_do_scan()
 * and the wait helpers inlined (mm/khugepaged.c).
 * 6.1: khugepaged_scan_mm_slot() returns its progress; struct
 *      khugepaged_mm_slot carries the pte-mapped THPs collapsed at the
 *      start of each scan; VMAs checked by hugepage_vma_check(); the
 *      thread runs while hugepage_flags_enabled().
 * 6.12: no pte-mapped THP list; MMF_DISABLE_THP ends a scan; VMAs
 *      checked by thp_vma_allowable_order(); hugepage_pmd_enabled().
 * 7.2, 7.3: collapse_scan_mm_slot() counts in cc->progress, collapses
 *      through collapse_single_pmd(), bare struct mm_slot,
 *      hugepage_enabled(), tracepoint mm_khugepaged_scan.
 * enum scan_result is private; the values used (7.x dropped
 * SCAN_PMD_NULL/SCAN_PMD_NONE for SCAN_NO_PTE_TABLE and SCAN_PAGE_RO):
 */
# if MMFIX_SERIES_IS(6, 1)
#  define MMFIX_KHUGEPAGED_V6_1		1
# elif MMFIX_SERIES_IS(6, 12)
#  define MMFIX_KHUGEPAGED_V6_12	1
# else
#  define MMFIX_KHUGEPAGED_V7		1
# endif
# define MMFIX_SCAN_FAIL			0
# define MMFIX_SCAN_SUCCEED			1
# ifndef MMFIX_KHUGEPAGED_V7
#  define MMFIX_SCAN_PMD_MAPPED			4
#  define MMFIX_SCAN_PTE_MAPPED_HUGEPAGE	10
#  define MMFIX_SCAN_ALLOC_HUGE_PAGE_FAIL	25
# else
#  define MMFIX_SCAN_ALLOC_HUGE_PAGE_FAIL	24
# endif

#endif /* !MMFIX_SERIES_UNSUPPORTED */

/*
 * Lock statistics (module/stats*.c), built on every kernel:
 * - lock:contention_begin/end are exported from 6.12 on (6.1 finds them
 *   with for_each_kernel_tracepoint());
 * - the mmap_lock tracepoints pass a memcg path after the mm in 6.1 and
 *   6.12, not in 7.2 and 7.3 (include/trace/events/mmap_lock.h);
 * - an ftrace callback reads the first argument from ftrace_regs, an
 *   open struct pt_regs in 6.1, opaque with an accessor later.
 */
#if MMFIX_KV(6, 12) <= LINUX_VERSION_CODE
# define MMFIX_CONTENTION_TP_EXPORTED	1
# define MMFIX_FREGS_ARG0(fregs)	ftrace_regs_get_argument(fregs, 0)
#else
# define MMFIX_FREGS_ARG0(fregs)	((fregs)->regs.di)
#endif
/*
 * 6.x: the mmap_lock tracepoints pass a memcg path, formatted while
 * mm/mmap_lock.c's count of registered ones is not 0 (stats_mmap.c).
 */
#if MMFIX_KV(7, 0) <= LINUX_VERSION_CODE
# define MMFIX_MMAP_TP_PATH
#else
# define MMFIX_MMAP_TP_PATH		const char *memcg_path,
# define MMFIX_HAVE_MMAP_MEMCG_PATH	1
#endif

#endif /* MMFIX_COMPAT_H */
