// SPDX-License-Identifier: GPL-2.0
/*
 * lp_populate - test-only livepatch (never installed) of
 * populate_vma_page_range() (mm/gup.c), standing for another vendor's
 * livepatch of a function mmfix's populate_drain fix also patches
 * (tests/guest/t-81-*.sh, t-82-*.sh; issue #30 points 2 and 3).
 *
 * Purpose: the replacement is the running kernel's own function,
 * unchanged (drain included), except that it counts its calls, so that
 * a test sees whose code runs a MAP_POPULATE without asking mmfix:
 *
 *   insmod lp_populate.ko
 *   cat /sys/module/lp_populate/parameters/calls
 *   echo 0 >/sys/kernel/livepatch/lp_populate/enabled; rmmod lp_populate
 *
 * The copies are those of Debian's 6.1, 6.12, 7.2 and 7.3 builds, the
 * same ones module/populate_drain.c verified (module/verified-builds).
 * __get_user_pages() and lru_add_drain() are not exported: they are
 * reached through livepatch relocations written by tools/klp/klp-convert
 * (tests/guest/kmod/build, tests/guest/kmod/klp-symbols), as for mmfix.
 */
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/version.h>

/*
 * Kernel differences (mm/gup.c): 6.1 passes a vmas array to
 * __get_user_pages() and sets FOLL_FORCE whenever the VMA is
 * accessible; from 6.12 the vmas argument is gone, PROT_NONE VMAs get
 * -EFAULT, and FOLL_TOUCH/FOLL_UNLOCKABLE are private to mm/internal.h.
 */
#if KERNEL_VERSION(6, 2, 0) > LINUX_VERSION_CODE
# define LP_GUP_HAS_VMAS_ARG	1
# define LP_FOLL_TOUCH		FOLL_TOUCH
#else
# define LP_FOLL_TOUCH		(1U << 16)
# define LP_FOLL_UNLOCKABLE	(1U << 21)
#endif

#ifdef LP_GUP_HAS_VMAS_ARG
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

static atomic_long_t lp_populate_calls = ATOMIC_LONG_INIT(0);

static int lp_populate_calls_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&lp_populate_calls));
}

static const struct kernel_param_ops lp_populate_calls_ops = {
	.get = lp_populate_calls_get,
};
module_param_cb(calls, &lp_populate_calls_ops, NULL, 0444);
MODULE_PARM_DESC(calls, "Calls of this module's populate_vma_page_range()");

#ifdef LP_GUP_HAS_VMAS_ARG
/* 6.1 */
static long lp_populate_vma_page_range(struct vm_area_struct *vma,
		unsigned long start, unsigned long end, int *locked)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long nr_pages = (end - start) / PAGE_SIZE;
	int gup_flags;
	long ret;

	atomic_long_inc(&lp_populate_calls);

	VM_BUG_ON(!PAGE_ALIGNED(start));
	VM_BUG_ON(!PAGE_ALIGNED(end));
	VM_BUG_ON_VMA(start < vma->vm_start, vma);
	VM_BUG_ON_VMA(end   > vma->vm_end, vma);
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
	lru_add_drain();
	return ret;
}
#else
/* 6.12, 7.2, 7.3 */
static long lp_populate_vma_page_range(struct vm_area_struct *vma,
		unsigned long start, unsigned long end, int *locked)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long nr_pages = (end - start) / PAGE_SIZE;
	int local_locked = 1;
	int gup_flags;
	long ret;

	atomic_long_inc(&lp_populate_calls);

	VM_BUG_ON(!PAGE_ALIGNED(start));
	VM_BUG_ON(!PAGE_ALIGNED(end));
	VM_BUG_ON_VMA(start < vma->vm_start, vma);
	VM_BUG_ON_VMA(end   > vma->vm_end, vma);
	mmap_assert_locked(mm);

	if (vma->vm_flags & VM_LOCKONFAULT)
		return nr_pages;
	if (!vma_is_accessible(vma))
		return -EFAULT;

	gup_flags = LP_FOLL_TOUCH;
	if ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE)
		gup_flags |= FOLL_WRITE;
	else
		gup_flags |= FOLL_FORCE;
	if (locked)
		gup_flags |= LP_FOLL_UNLOCKABLE;

	ret = __get_user_pages(mm, start, nr_pages, gup_flags,
			       NULL, locked ? locked : &local_locked);
	lru_add_drain();
	return ret;
}
#endif

static struct klp_func lp_populate_funcs[] = {
	{
		.old_name = "populate_vma_page_range",
		.new_func = lp_populate_vma_page_range,
	},
	{ }
};

static struct klp_object lp_populate_objs[] = {
	{
		/* name being NULL means vmlinux */
		.funcs = lp_populate_funcs,
	},
	{ }
};

static struct klp_patch lp_populate_patch = {
	.mod = THIS_MODULE,
	.objs = lp_populate_objs,
};

static int __init lp_populate_init(void)
{
	return klp_enable_patch(&lp_populate_patch);
}

static void __exit lp_populate_exit(void)
{
}

module_init(lp_populate_init);
module_exit(lp_populate_exit);
MODULE_DESCRIPTION("mmfix test livepatch: populate_vma_page_range() that counts its calls");
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
