// SPDX-License-Identifier: GPL-2.0
/*
 * tpprobes - test-only module (never installed): which module's probes
 * are registered on the tracepoints mmfix's lock statistics use
 * (tests/guest/t-47-stats-probe-fail.sh).  tracefs shows ftrace
 * callbacks (enabled_functions) but no tracepoint probe that is not a
 * trace event's, so this reads each tracepoint's probe array itself.
 *
 *   cat /sys/kernel/debug/tpprobes/mmfix
 *
 * One line per tracepoint, "NAME N": N of its probes are functions of
 * the module mmfix ("%pS" of the probe ends in " [mmfix]"); a
 * tracepoint this kernel does not have reads "NAME -".
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

static const char *const tpprobes_names[] = {
	"contention_begin", "contention_end",
	"mmap_lock_acquire_returned", "mmap_lock_released",
};

static struct tracepoint *tpprobes_tp[ARRAY_SIZE(tpprobes_names)];
static struct dentry *tpprobes_dir;

static void tpprobes_find(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tpprobes_names); i++)
		if (!strcmp(tp->name, tpprobes_names[i]))
			tpprobes_tp[i] = tp;
}

/* Probes of module mmfix on @tp, read as a tracepoint call reads them. */
static int tpprobes_count(struct tracepoint *tp)
{
	char sym[KSYM_SYMBOL_LEN];
	struct tracepoint_func *f;
	int n = 0;

	rcu_read_lock_sched();
	f = rcu_dereference_sched(tp->funcs);
	for (; f && f->func; f++) {
		sprint_symbol(sym, (unsigned long)f->func);
		if (strstr(sym, " [mmfix]"))
			n++;
	}
	rcu_read_unlock_sched();
	return n;
}

static int tpprobes_show(struct seq_file *m, void *v)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tpprobes_names); i++) {
		if (tpprobes_tp[i])
			seq_printf(m, "%s %d\n", tpprobes_names[i],
				   tpprobes_count(tpprobes_tp[i]));
		else
			seq_printf(m, "%s -\n", tpprobes_names[i]);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tpprobes);

static int __init tpprobes_init(void)
{
	for_each_kernel_tracepoint(tpprobes_find, NULL);
	tpprobes_dir = debugfs_create_dir("tpprobes", NULL);
	debugfs_create_file("mmfix", 0400, tpprobes_dir, NULL, &tpprobes_fops);
	return 0;
}

static void __exit tpprobes_exit(void)
{
	debugfs_remove_recursive(tpprobes_dir);
}

module_init(tpprobes_init);
module_exit(tpprobes_exit);
MODULE_DESCRIPTION("mmfix tests: mmfix's probes on the lock tracepoints");
MODULE_LICENSE("GPL");
