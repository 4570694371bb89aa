// SPDX-License-Identifier: GPL-2.0
/*
 * lp_replace - test-only livepatch (never installed) with atomic
 * replace (klp_patch.replace = true), like kpatch's cumulative patches
 * and the kernel's test_klp_atomic_replace: its transition disables
 * every other livepatch, mmfix's included (tests/guest/t-80-*.sh:
 * issue #30 point 1, that transition must complete).
 *
 * Purpose: /proc/cmdline reads a fixed line while it is enabled, so a
 * test sees which patch runs without asking the livepatch core:
 *
 *   insmod lp_replace.ko
 *   cat /sys/kernel/livepatch/lp_replace/transition   # 0 once done
 *   cat /proc/cmdline            # lp_replace
 *   echo 0 >/sys/kernel/livepatch/lp_replace/enabled; rmmod lp_replace
 *
 * cmdline_proc_show() calls only exported functions: no livepatch
 * relocations.
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/seq_file.h>

static int lp_replace_cmdline_proc_show(struct seq_file *m, void *v)
{
	seq_puts(m, "lp_replace\n");
	return 0;
}

static struct klp_func lp_replace_funcs[] = {
	{
		.old_name = "cmdline_proc_show",
		.new_func = lp_replace_cmdline_proc_show,
	},
	{ }
};

static struct klp_object lp_replace_objs[] = {
	{
		/* name being NULL means vmlinux */
		.funcs = lp_replace_funcs,
	},
	{ }
};

static struct klp_patch lp_replace_patch = {
	.mod = THIS_MODULE,
	.objs = lp_replace_objs,
	.replace = true,
};

static int __init lp_replace_init(void)
{
	return klp_enable_patch(&lp_replace_patch);
}

static void __exit lp_replace_exit(void)
{
}

module_init(lp_replace_init);
module_exit(lp_replace_exit);
MODULE_DESCRIPTION("mmfix test livepatch: atomic replace, /proc/cmdline reads lp_replace");
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
