// SPDX-License-Identifier: GPL-2.0
/*
 * lp_unrelated - test-only livepatch (never installed) of a function no
 * mmfix fix touches, standing for a vendor's security livepatch loaded
 * beside mmfix (tests/guest/t-83-*.sh: issue #30 point 4, an mmfix
 * upgrade must not replace it).
 *
 * Purpose: like the kernel's samples/livepatch/livepatch-sample.c,
 * /proc/cmdline reads a fixed line while it is enabled, so a test sees
 * that it is still in effect without asking the livepatch core:
 *
 *   insmod lp_unrelated.ko
 *   cat /proc/cmdline            # lp_unrelated
 *   echo 0 >/sys/kernel/livepatch/lp_unrelated/enabled; rmmod lp_unrelated
 *
 * cmdline_proc_show() is what it replaces; it calls only exported
 * functions, so it needs no livepatch relocations.
 *
 * pre_patch_ms=N: its pre_patch callback sleeps N ms, with the livepatch
 * core's klp_mutex held, as every klp callback is (tests/guest/t-82-*.sh:
 * mmfix's sysfs readers do not wait long for that mutex).
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/seq_file.h>

static int lp_unrelated_cmdline_proc_show(struct seq_file *m, void *v)
{
	seq_puts(m, "lp_unrelated\n");
	return 0;
}

static struct klp_func lp_unrelated_funcs[] = {
	{
		.old_name = "cmdline_proc_show",
		.new_func = lp_unrelated_cmdline_proc_show,
	},
	{ }
};

static unsigned int lp_unrelated_pre_patch_ms;
module_param_named(pre_patch_ms, lp_unrelated_pre_patch_ms, uint, 0444);
MODULE_PARM_DESC(pre_patch_ms, "ms the pre_patch callback sleeps with klp_mutex held");

static int lp_unrelated_pre_patch(struct klp_object *obj)
{
	if (lp_unrelated_pre_patch_ms)
		msleep(lp_unrelated_pre_patch_ms);
	return 0;
}

static struct klp_object lp_unrelated_objs[] = {
	{
		/* name being NULL means vmlinux */
		.funcs = lp_unrelated_funcs,
		.callbacks = {
			.pre_patch = lp_unrelated_pre_patch,
		},
	},
	{ }
};

static struct klp_patch lp_unrelated_patch = {
	.mod = THIS_MODULE,
	.objs = lp_unrelated_objs,
};

static int __init lp_unrelated_init(void)
{
	return klp_enable_patch(&lp_unrelated_patch);
}

static void __exit lp_unrelated_exit(void)
{
}

module_init(lp_unrelated_init);
module_exit(lp_unrelated_exit);
MODULE_DESCRIPTION("mmfix test livepatch: /proc/cmdline reads lp_unrelated");
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
