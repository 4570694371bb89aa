// SPDX-License-Identifier: GPL-2.0
/*
 * klptest_nolp - a livepatch module that forgot MODULE_INFO(livepatch, "Y").
 * klp-check must reject it even after klp-convert.
 */
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/swap.h>

#include "klptest.h"

static void klptest_nolp_drain(void)
{
	lru_add_drain();
}

static struct klp_func klptest_nolp_funcs[] = {
	{ .old_name = "cmdline_proc_show", .new_func = klptest_nolp_drain, },
	{ }
};

static struct klp_object klptest_nolp_objs[] = {
	{ .funcs = klptest_nolp_funcs, },
	{ }
};

static struct klp_patch klptest_nolp_patch = {
	.mod = THIS_MODULE,
	.objs = klptest_nolp_objs,
};

static int __init klptest_nolp_init(void)
{
	klptest_nolp_drain();
	return klp_enable_patch(&klptest_nolp_patch);
}

module_init(klptest_nolp_init);
MODULE_DESCRIPTION("klp-check test: livepatch without livepatch=Y");
MODULE_LICENSE("GPL");
