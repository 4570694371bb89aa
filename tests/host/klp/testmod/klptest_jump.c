// SPDX-License-Identifier: GPL-2.0
/*
 * klptest_jump - uses a non-exported static key (delayacct_key), so
 * __jump_table references it.  klp-convert must refuse to turn that
 * reference into a klp relocation.
 */
#include <linux/sched.h>
#include <linux/delayacct.h>
#include <linux/jump_label.h>
#include <linux/module.h>

static int __init klptest_jump_init(void)
{
	return static_branch_unlikely(&delayacct_key) ? 1 : 0;
}

module_init(klptest_jump_init);
MODULE_DESCRIPTION("klp-convert test: klp symbol in __jump_table");
MODULE_LICENSE("GPL");
