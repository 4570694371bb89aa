// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl stats: the lock statistics under
 * /sys/kernel/mmfix/stats (docs/lock-stats.md).
 *
 *   mmfixctl stats                  # one table, units scaled
 *   mmfixctl -j stats               # every counter, times in ns
 *   mmfixctl stats --reset          # zero them (root)
 *   mmfixctl stats on               # switch them on (root)
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mmfixctl.h"

const char stats_help[] =
	"Show the lock statistics of lruvec->lru_lock and mm->mmap_lock\n"
	"(read and write): acquisitions, contended acquisitions, total and\n"
	"longest wait and hold, mean hold, the lru_lock counts per NUMA node,\n"
	"and who held and who waited for an mmap_lock longest.  Text scales\n"
	"the times (ns, us, ms, s); JSON gives every counter in ns, with the\n"
	"log2 histograms as [[LOW_NS, COUNT], ...].  Statistics are collected\n"
	"only while they are on: \"stats on\" and \"stats off\" switch them\n"
	"(root), all of them or, where the module has the switch, only\n"
	"lru_lock, mmap_lock or the hold time measurement (hold_time).\n"
	"The default tier counts acquisitions, contended ones and waits with\n"
	"nothing on the unlock paths; hold_time adds a probe on every unlock\n"
	"(hold columns read \"off\" without it).  Cost in guest instructions,\n"
	"churn benchmarks: default 3-8% (7.2, 7.3), 6-11% (6.1, 6.12); with\n"
	"hold_time 11-17% (7.2, 7.3), 15-19% (6.1, 6.12): lock-stats.md in\n"
	"/usr/share/doc/mmfixctl (docs/ in the source).\n"
	"\n"
	"  --reset          set every counter to zero instead (root)\n"
	"  --format FORMAT  text (default), json (as -j) or prometheus (the\n"
	"                   exposition of \"export\": every counter, switch\n"
	"                   and state in the Prometheus text format)\n";


const char *const class_dirs[] = {
#define CLASS_DIR(id, dir) [MMFIX_STATS_##id] = dir,
	MMFIX_STATS_CLASS_LIST(CLASS_DIR)
#undef CLASS_DIR
};

const char *const file_names[] = {
#define FILE_NAME(id, name) [MMFIX_STATS_##id] = name,
	MMFIX_STATS_FILE_LIST(FILE_NAME)
#undef FILE_NAME
};

/* Text labels of the classes. */
const char *const class_labels[] = {
	[MMFIX_STATS_LRU] = "lru_lock",
	[MMFIX_STATS_MMAP_READ] = "mmap_lock read",
	[MMFIX_STATS_MMAP_WRITE] = "mmap_lock write",
};

/*
 * JSON: "lru_lock": {...}, "mmap_lock": {"read": {...}, "write": {...}}.
 * Opens the class's object (and "mmap_lock" before read); close_class()
 * closes it (and "mmap_lock" after write).
 */
void open_class(unsigned int c)
{
	if (c == MMFIX_STATS_LRU) {
		print_open_object("lru_lock");
		return;
	}
	if (c == MMFIX_STATS_MMAP_READ)
		print_open_object("mmap_lock");
	print_open_object(c == MMFIX_STATS_MMAP_READ ? "read" : "write");
}

void close_class(unsigned int c, bool last)
{
	print_close_object();
	if (c == MMFIX_STATS_MMAP_WRITE && last)
		print_close_object();
}

static bool is_hist(unsigned int f)
{
	return f == MMFIX_STATS_WAIT_HIST || f == MMFIX_STATS_HOLD_HIST;
}

/* "LOW COUNT" lines into hist[]; -EINVAL on anything else. */
static int parse_hist(char *text, uint64_t *hist)
{
	char *line, *save = NULL, *sp;
	uint64_t low, count;
	unsigned int b;

	memset(hist, 0, NBUCKETS * sizeof(*hist));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		sp = strchr(line, ' ');
		if (!sp)
			return -EINVAL;
		*sp = '\0';
		if (parse_u64(line, &low) || parse_u64(sp + 1, &count))
			return -EINVAL;
		/* LOW is 0 or a power of two: bucket 0 or log2(LOW) + 1 */
		if (low && (low & (low - 1)))
			return -EINVAL;
		b = low ? (unsigned int)__builtin_ctzll(low) + 1 : 0;
		hist[b] = count;
	}
	return 0;
}

static void read_class(unsigned int c, struct class_snap *cs)
{
	char path[PATH_MAX], text[SYSFS_READ_MAX];
	bool truncated;
	unsigned int f;

	memset(cs, 0, sizeof(*cs));
	for (f = 0; f < MMFIX_STATS_NR_FILES; f++) {
		if (sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR "/%s/%s",
			       class_dirs[c], file_names[f]))
			continue;
		if (!is_hist(f)) {
			cs->have[f] = !sysfs_read_u64(path, &cs->v[f]);
			continue;
		}
		if (sysfs_read(path, text, sizeof(text), &truncated) < 0 ||
		    truncated)
			continue;
		cs->have[f] = !parse_hist(text, f == MMFIX_STATS_WAIT_HIST ?
					  cs->wait_hist : cs->hold_hist);
	}
}

void read_snap(struct snap *s)
{
	unsigned int c;

	uint64_t v;

	for (c = 0; c < MMFIX_STATS_NR_CLASSES; c++)
		read_class(c, &s->cls[c]);
	s->hold_time = read_stat_u64(&v, "hold_time") ? v != 0 : -1;
	s->t_ms = now_ms();
}

bool stats_present(void)
{
	char path[PATH_MAX];

	return !sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR) &&
	       sysfs_is_dir(path);
}

/* Not loaded, or a module without statistics: say so, EXIT_RUNTIME. */
int stats_missing(void)
{
	if (!mmfix_loaded())
		p_err("mmfix module is not loaded");
	else
		p_err("this mmfix module has no lock statistics (no /sys/" MMFIX_STATS_SYSFS_DIR ")");
	return EXIT_RUNTIME;
}

/* A u64 member, or null / "-" when its file could not be read. */
static void print_file(const struct class_snap *cs, unsigned int f,
		       const char *fmt)
{
	print_u64(file_names[f], fmt, cs->have[f] ? &cs->v[f] : NULL);
}

static void print_hist_json(const char *key, const uint64_t *hist, bool have)
{
	uint64_t low;
	unsigned int b;

	if (!have) {
		print_u64(key, NULL, NULL);
		return;
	}
	print_open_array(key);
	for (b = 0; b < NBUCKETS; b++) {
		if (!hist[b])
			continue;
		low = b ? 1ULL << (b - 1) : 0;
		print_open_array(NULL);
		print_u64(NULL, NULL, &low);
		print_u64(NULL, NULL, &hist[b]);
		print_close_array();
	}
	print_close_array();
}

static void print_class_json(const struct class_snap *cs, bool holds_off)
{
	unsigned int f;

	for (f = 0; f < MMFIX_STATS_NR_FILES; f++) {
		if (holds_off && is_hold_file(f))
			print_u64(file_names[f], NULL, NULL);	/* not measured */
		else if (f == MMFIX_STATS_WAIT_HIST)
			print_hist_json(file_names[f], cs->wait_hist, cs->have[f]);
		else if (f == MMFIX_STATS_HOLD_HIST)
			print_hist_json(file_names[f], cs->hold_hist, cs->have[f]);
		else if (cs->have[f] || f != MMFIX_STATS_FAILED)
			print_file(cs, f, NULL);
	}
}

/* A counter column: the number, or "-" when its file was unreadable. */
static const char *col_u64(char *buf, size_t size, const struct class_snap *cs,
			   unsigned int f)
{
	if (!cs->have[f])
		return "-";
	snprintf(buf, size, "%llu", (unsigned long long)cs->v[f]);
	return buf;
}

/* A time column, scaled; "-" when unreadable. */
static const char *col_ns(char *buf, size_t size, const struct class_snap *cs,
			  unsigned int f)
{
	return cs->have[f] ? fmt_ns(buf, size, (double)cs->v[f]) : "-";
}

/* One row of the text table; the hold columns read "off" if @holds_off. */
static void print_class_row(const char *label, const struct class_snap *cs,
			    bool holds_off)
{
	char acq[24], cont[24], failed[24], wt[16], wm[16], holds[24];
	char ht[16], hm[16] = "-", hx[16];
	const uint64_t *v = cs->v;

	if (cs->have[MMFIX_STATS_HOLDS] && cs->have[MMFIX_STATS_HOLD_NS] &&
	    v[MMFIX_STATS_HOLDS])
		fmt_ns(hm, sizeof(hm), (double)v[MMFIX_STATS_HOLD_NS] /
		       (double)v[MMFIX_STATS_HOLDS]);
	if (holds_off) {
		printf("%-16s %12s %10s %8s %10s %10s %12s %10s %10s %10s\n",
		       label, col_u64(acq, sizeof(acq), cs, MMFIX_STATS_ACQUISITIONS),
		       col_u64(cont, sizeof(cont), cs, MMFIX_STATS_CONTENDED),
		       col_u64(failed, sizeof(failed), cs, MMFIX_STATS_FAILED),
		       col_ns(wt, sizeof(wt), cs, MMFIX_STATS_WAIT_NS),
		       col_ns(wm, sizeof(wm), cs, MMFIX_STATS_WAIT_MAX_NS),
		       "off", "off", "off", "off");
		return;
	}
	printf("%-16s %12s %10s %8s %10s %10s %12s %10s %10s %10s\n", label,
	       col_u64(acq, sizeof(acq), cs, MMFIX_STATS_ACQUISITIONS),
	       col_u64(cont, sizeof(cont), cs, MMFIX_STATS_CONTENDED),
	       col_u64(failed, sizeof(failed), cs, MMFIX_STATS_FAILED),
	       col_ns(wt, sizeof(wt), cs, MMFIX_STATS_WAIT_NS),
	       col_ns(wm, sizeof(wm), cs, MMFIX_STATS_WAIT_MAX_NS),
	       col_u64(holds, sizeof(holds), cs, MMFIX_STATS_HOLDS),
	       col_ns(ht, sizeof(ht), cs, MMFIX_STATS_HOLD_NS), hm,
	       col_ns(hx, sizeof(hx), cs, MMFIX_STATS_HOLD_MAX_NS));
}

/* A decimal file below stats/, path given as a format: true if read. */
bool read_stat_u64(uint64_t *v, const char *fmt, ...)
{
	char path[PATH_MAX], rel[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	return n > 0 && (size_t)n < sizeof(rel) &&
	       !sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR "/%s", rel) &&
	       !sysfs_read_u64(path, v);
}

/*
 * A decimal file below stats/ as a u64 member (null if unreadable); a
 * *_ns one is scaled in text.
 */
static void print_stat_u64(const char *key, const char *fmt, const char *rel)
{
	uint64_t v;
	bool ok = read_stat_u64(&v, "%s", rel);

	if (name_is_ns(key))
		print_ns(key, fmt, ok ? &v : NULL);
	else
		print_u64(key, fmt, ok ? &v : NULL);
}

/*
 * The longest mmap_lock hold or wait: "hold" or "wait"; "off" (null in
 * JSON) if @off (hold times are not measured).
 */
static void print_worst(const char *what, bool off)
{
	char key[16], comm[64], mode[16], t[16];
	uint64_t ns = 0, pid = 0, tid = 0;
	bool have_ns, have_pid, have_tid;
	const char *c, *m;

	have_ns = read_stat_u64(&ns, "mmap_lock/worst_%s_ns", what);
	have_pid = read_stat_u64(&pid, "mmap_lock/worst_%s_pid", what);
	have_tid = read_stat_u64(&tid, "mmap_lock/worst_%s_tid", what);
	c = sysfs_attr_str(comm, sizeof(comm),
			   MMFIX_STATS_SYSFS_DIR "/mmap_lock/worst_%s_comm", what);
	m = sysfs_attr_str(mode, sizeof(mode),
			   MMFIX_STATS_SYSFS_DIR "/mmap_lock/worst_%s_mode", what);
	if (off) {
		if (opts.json)
			print_u64(what[0] == 'h' ? "worst_hold" : "worst_wait", NULL, NULL);
		else
			printf("longest mmap_lock %s: off (hold_time 0)\n", what);
		return;
	}
	if (!opts.json) {
		printf("longest mmap_lock %s: ", what);
		if (have_ns && ns)
			printf("%s %s by %s (pid %llu, tid %llu)\n",
			       fmt_ns(t, sizeof(t), (double)ns), m ? m : "-",
			       c ? c : "-", (unsigned long long)pid,
			       (unsigned long long)tid);
		else
			printf("-\n");
		return;
	}
	snprintf(key, sizeof(key), "worst_%s", what);
	print_open_object(key);
	print_u64("ns", NULL, have_ns ? &ns : NULL);
	print_u64("pid", NULL, have_pid ? &pid : NULL);
	print_u64("tid", NULL, have_tid ? &tid : NULL);
	print_string("comm", NULL, c);
	print_string("mode", NULL, m);
	print_close_object();
}

/* lru_lock per node; hold_ns "off" (null) if @holds_off. */
static void print_nodes(bool holds_off)
{
	static const char *const node_files[] = {
		"acquisitions", "contended", "wait_ns", "hold_ns"
	};
	char path[PATH_MAX], rel[64];
	unsigned int n, f;

	print_open_object("nodes");
	for (n = 0; n < 1024; n++) {
		snprintf(rel, sizeof(rel), "lru_lock/node%u", n);
		if (sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR "/%s",
			       rel) || !sysfs_is_dir(path))
			continue;
		print_open_object(rel + strlen("lru_lock/"));
		print_text("lru_lock node%u:", n);
		for (f = 0; f < 4; f++) {
			char file[96], fmt[48];

			snprintf(file, sizeof(file), "%s/%s", rel, node_files[f]);
			snprintf(fmt, sizeof(fmt), " %.*s %%s",
				 (int)strcspn(node_files[f], "_"), node_files[f]);
			if (holds_off && !strcmp(node_files[f], "hold_ns")) {
				print_text(" hold off");
				print_u64(node_files[f], NULL, NULL);
				continue;
			}
			print_stat_u64(node_files[f], fmt, file);
		}
		print_text("\n");
		print_close_object();
	}
	print_close_object();
}

static int stats_reset(void)
{
	char path[PATH_MAX];
	int ret;

	if (sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR "/reset"))
		return EXIT_RUNTIME;
	ret = sysfs_write(path, "1");
	if (ret == -EACCES || ret == -EPERM) {
		p_err("stats: root is needed to reset the lock statistics (run as root or with sudo)");
		return EXIT_RUNTIME;
	}
	if (ret) {
		p_err("stats: cannot reset the lock statistics: %s",
		      strerror(-ret));
		return EXIT_RUNTIME;
	}
	print_open_object(NULL);
	print_bool_words("reset", "lock statistics %s\n", 1, "reset", "", "");
	print_close_object();
	return EXIT_OK;
}

/* The switches of "stats on|off [WHAT]": sysfs file below stats/. */
static const struct {
	const char *what, *file, *label;
} stat_switches[] = {
	{ NULL,		"enabled",		"lock statistics" },
	{ "lru_lock",	"lru_lock/enabled",	"lru_lock statistics" },
	{ "mmap_lock",	"mmap_lock/enabled",	"mmap_lock statistics" },
	{ "hold_time",	"hold_time",		"hold time measurement" },
};

static int stats_switch(int argc, char **argv)
{
	bool on = !strcmp(argv[0], "on");
	char path[PATH_MAX], disp[80];
	size_t i;
	int ret;

	if (argc > 2)
		return usage_err("stats %s: unexpected argument '%s'", argv[0],
				 arg_disp(argv[2], disp, sizeof(disp)));
	for (i = 0; i < ARRAY_SIZE(stat_switches); i++)
		if (argc == 1 ? !stat_switches[i].what :
		    stat_switches[i].what && !strcmp(stat_switches[i].what, argv[1]))
			break;
	if (i == ARRAY_SIZE(stat_switches))
		return usage_err("stats %s: unknown switch '%s' (switches: lru_lock, mmap_lock, hold_time)",
				 argv[0], arg_disp(argv[1], disp, sizeof(disp)));
	if (!stats_present())
		return stats_missing();
	if (sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR "/%s",
		       stat_switches[i].file))
		return EXIT_RUNTIME;
	if (access(path, F_OK)) {
		p_err("stats: this mmfix module has no %s switch (no /sys/" MMFIX_STATS_SYSFS_DIR "/%s)",
		      argv[1], stat_switches[i].file);
		return EXIT_RUNTIME;
	}
	ret = sysfs_write(path, on ? "1\n" : "0\n");
	if (ret == -EACCES || ret == -EPERM) {
		p_err("stats: root is needed to switch %s (run as root or with sudo)",
		      stat_switches[i].label);
		return EXIT_RUNTIME;
	}
	if (ret) {
		p_err("stats: cannot switch %s %s: write %s: %s",
		      stat_switches[i].label, argv[0], path, strerror(-ret));
		return EXIT_RUNTIME;
	}
	print_open_object(NULL);
	print_string("switch", "%s ", stat_switches[i].what ?
		     stat_switches[i].what : "stats");
	print_text("(%s) ", stat_switches[i].label);
	print_bool_words("enabled", "%s\n", on, "on", "off", "-");
	print_close_object();
	return EXIT_OK;
}

int do_stats(int argc, char **argv)
{
	struct snap s;
	char disp[80];
	unsigned int c;
	int on;

	if (argc && (!strcmp(argv[0], "on") || !strcmp(argv[0], "off"))) {
		if (opts.reset || opts.format)
			return usage_err("stats %s: no --reset or --format with it",
					 argv[0]);
		return stats_switch(argc, argv);
	}
	if (argc)
		return usage_err("stats: unexpected argument '%s' (on, off or nothing)",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if (opts.format && !strcmp(opts.format, "prometheus")) {
		if (opts.json || opts.reset)
			return usage_err("stats --format prometheus: no -j or --reset with it");
		return prom_export_stdout();
	}
	if (opts.format && !strcmp(opts.format, "json"))
		opts.json = true;	/* print_start() ran before: compact */
	else if (opts.format && strcmp(opts.format, "text"))
		return usage_err("stats --format: '%s' is not text, json or prometheus",
				 arg_disp(opts.format, disp, sizeof(disp)));
	if (!stats_present())
		return stats_missing();
	if (opts.reset)
		return stats_reset();

	read_snap(&s);
	on = sysfs_attr_bool(MMFIX_STATS_SYSFS_DIR "/enabled");
	print_open_object(NULL);
	print_bool_words("enabled", "lock statistics: %s\n", on, "on",
			 "off (the values are those from when they were switched off)",
			 "unknown");
	if (s.hold_time >= 0 && opts.json)
		print_bool("hold_time", NULL, s.hold_time);
	else if (snap_holds_off(&s))
		printf("hold times: off (stats on hold_time to measure them)\n");
	print_text("%-16s %12s %10s %8s %10s %10s %12s %10s %10s %10s\n",
		   "lock", "acquired", "contended", "failed", "wait",
		   "max wait", "holds", "hold", "mean hold", "max hold");
	for (c = 0; c < MMFIX_STATS_NR_CLASSES; c++) {
		if (!opts.json) {
			print_class_row(class_labels[c], &s.cls[c],
					snap_holds_off(&s));
			continue;
		}
		open_class(c);
		print_class_json(&s.cls[c], snap_holds_off(&s));
		if (c == MMFIX_STATS_LRU) {
			print_stat_u64("unmatched", NULL, "lru_lock/unmatched");
			print_nodes(snap_holds_off(&s));
		}
		/* mmap_lock's own files go after "write" */
		close_class(c, false);
	}
	if (opts.json) {
		print_stat_u64("untracked", NULL, "mmap_lock/untracked");
	} else {
		print_stat_u64("lru_unmatched", "lru_lock unmatched %s",
			       "lru_lock/unmatched");
		print_stat_u64("mmap_untracked", "; mmap_lock untracked %s\n",
			       "mmap_lock/untracked");
		print_nodes(snap_holds_off(&s));
	}
	print_worst("hold", snap_holds_off(&s));
	print_worst("wait", false);
	print_close_object();	/* mmap_lock (JSON) */
	print_close_object();
	return EXIT_OK;
}
