// SPDX-License-Identifier: GPL-2.0
/*
 * klptest_kprobe - the classic kprobe trick for finding
 * kallsyms_lookup_name (unexported since 5.7).  Only exported symbols are
 * referenced, so it loads fine -- and then calls through kallsyms
 * pointers, which IBT turns into a control-protection fault.  klp-check
 * must reject it from the string alone.
 */
#include <linux/kprobes.h>
#include <linux/module.h>

typedef unsigned long (*klptest_lookup_t)(const char *name);

static klptest_lookup_t klptest_lookup;

static int __init klptest_kprobe_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret = register_kprobe(&kp);

	if (ret < 0)
		return ret;
	klptest_lookup = (klptest_lookup_t)kp.addr;
	unregister_kprobe(&kp);
	return klptest_lookup("lru_add_drain") ? 0 : -ENOENT;
}

module_init(klptest_kprobe_init);
MODULE_DESCRIPTION("klp-check test: kprobe-based kallsyms lookup");
MODULE_LICENSE("GPL");
