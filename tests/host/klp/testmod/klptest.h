/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The non-exported kernel symbols the test modules use, declared here as
 * mmfix declares them: public headers dropped the declarations of
 * lru_add_drain and sysctl_max_map_count (now in mm/internal.h) in 7.x,
 * and __get_user_pages is static in mm/gup.c.
 */
#ifndef KLPTEST_H
#define KLPTEST_H

#include <linux/version.h>

extern void lru_add_drain(void);
extern int sysctl_max_map_count;

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
extern long __get_user_pages(struct mm_struct *mm, unsigned long start,
			     unsigned long nr_pages, unsigned int gup_flags,
			     struct page **pages, struct vm_area_struct **vmas,
			     int *locked);
#define klptest_get_user_pages(mm) \
	__get_user_pages(mm, 0, 1, 0, NULL, NULL, NULL)
#else
extern long __get_user_pages(struct mm_struct *mm, unsigned long start,
			     unsigned long nr_pages, unsigned int gup_flags,
			     struct page **pages, int *locked);
#define klptest_get_user_pages(mm) \
	__get_user_pages(mm, 0, 1, 0, NULL, NULL)
#endif

#endif /* KLPTEST_H */
