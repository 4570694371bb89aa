// SPDX-License-Identifier: GPL-2.0
/*
 * klptest - livepatch-style module for tests/host/klp/run (never loaded).
 *
 * Purpose: one reference of each kind mmfix makes to non-exported kernel
 * symbols, for klp-convert to rewrite:
 *  - a call from .text to __get_user_pages (static in mm/gup.c),
 *  - calls from .text.unlikely and .init.text to lru_add_drain,
 *  - a load from .text of sysctl_max_map_count (a variable),
 *  - a pointer to sysctl_max_map_count in .data (R_X86_64_64),
 * next to ordinary calls to exported symbols (msleep, klp_enable_patch).
 */
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/livepatch.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/swap.h>
#include <linux/version.h>

#include "klptest.h"

/* Not static, so the pointer stays in .data instead of being folded. */
int *klptest_limit = &sysctl_max_map_count;

static noinline long klptest_gup(struct mm_struct *mm)
{
	msleep(20);
	return klptest_get_user_pages(mm) + READ_ONCE(sysctl_max_map_count);
}

/* Placed explicitly: newer compilers/kernels do not split cold code. */
static noinline __cold __section(".text.unlikely") void klptest_drain(void)
{
	lru_add_drain();
}

static struct klp_func klptest_funcs[] = {
	{ .old_name = "cmdline_proc_show", .new_func = klptest_gup, },
	{ }
};

static struct klp_object klptest_objs[] = {
	{ .funcs = klptest_funcs, },
	{ }
};

static struct klp_patch klptest_patch = {
	.mod = THIS_MODULE,
	.objs = klptest_objs,
};

static int __init klptest_init(void)
{
	lru_add_drain();
	if (*klptest_limit < 0)
		klptest_drain();
	return klp_enable_patch(&klptest_patch);
}

static void __exit klptest_exit(void)
{
}

module_init(klptest_init);
module_exit(klptest_exit);
MODULE_DESCRIPTION("klp-convert test module (never loaded)");
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
