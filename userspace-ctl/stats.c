// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl stats, mmfixctl watch: the lock statistics under
 * /sys/kernel/mmfix/stats (docs/lock-stats.md).
 *
 *   mmfixctl stats                  # one table, units scaled
 *   mmfixctl -j stats               # every counter, times in ns
 *   mmfixctl stats --reset          # zero them (root)
 *   mmfixctl watch --count 5 2      # five 2-second intervals of deltas
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mmfixctl.h"

const char stats_help[] =
	"Show the lock statistics of lruvec->lru_lock and mm->mmap_lock\n"
	"(read and write): acquisitions, contended acquisitions, total and\n"
	"longest wait and hold, mean hold, the lru_lock counts per NUMA node,\n"
	"and who held and who waited for an mmap_lock longest.  Text scales\n"
	"the times (ns, us, ms, s); JSON gives every counter in ns, with the\n"
	"log2 histograms as [[LOW_NS, COUNT], ...].  Statistics are collected\n"
	"only while /sys/kernel/mmfix/stats/enabled is 1.\n"
	"\n"
	"  --reset   set every counter to zero instead (root)\n";

const char watch_help[] =
	"Every INTERVAL seconds (default 1, from 0.1 to 3600) print, for\n"
	"lru_lock and mmap_lock read and write, what changed in the last\n"
	"interval: acquisitions and contended acquisitions per second, mean\n"
	"hold and longest hold.  The longest hold of an interval is exact when\n"
	"it is the longest since the last reset, otherwise shown as below the\n"
	"top of its log2 bucket (\"<2.1 ms\").  Runs until interrupted, or for\n"
	"N intervals.\n"
	"\n"
	"  --count N   stop after N intervals (1 to 1000000)\n";

#define NBUCKETS	MMFIX_STATS_HIST_BUCKETS

static const char *const class_dirs[] = {
#define CLASS_DIR(id, dir) [MMFIX_STATS_##id] = dir,
	MMFIX_STATS_CLASS_LIST(CLASS_DIR)
#undef CLASS_DIR
};

static const char *const file_names[] = {
#define FILE_NAME(id, name) [MMFIX_STATS_##id] = name,
	MMFIX_STATS_FILE_LIST(FILE_NAME)
#undef FILE_NAME
};

/* Text labels of the classes. */
static const char *const class_labels[] = {
	[MMFIX_STATS_LRU] = "lru_lock",
	[MMFIX_STATS_MMAP_READ] = "mmap_lock read",
	[MMFIX_STATS_MMAP_WRITE] = "mmap_lock write",
};

/*
 * JSON: "lru_lock": {...}, "mmap_lock": {"read": {...}, "write": {...}}.
 * Opens the class's object (and "mmap_lock" before read); close_class()
 * closes it (and "mmap_lock" after write).
 */
static void open_class(unsigned int c)
{
	if (c == MMFIX_STATS_LRU) {
		print_open_object("lru_lock");
		return;
	}
	if (c == MMFIX_STATS_MMAP_READ)
		print_open_object("mmap_lock");
	print_open_object(c == MMFIX_STATS_MMAP_READ ? "read" : "write");
}

static void close_class(unsigned int c, bool last)
{
	print_close_object();
	if (c == MMFIX_STATS_MMAP_WRITE && last)
		print_close_object();
}

struct class_snap {
	bool have[MMFIX_STATS_NR_FILES];
	uint64_t v[MMFIX_STATS_NR_FILES];	/* unused for the _hist ones */
	uint64_t wait_hist[NBUCKETS];
	uint64_t hold_hist[NBUCKETS];
};

struct snap {
	struct class_snap cls[MMFIX_STATS_NR_CLASSES];
	uint64_t t_ms;
};

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

static void read_snap(struct snap *s)
{
	unsigned int c;

	for (c = 0; c < MMFIX_STATS_NR_CLASSES; c++)
		read_class(c, &s->cls[c]);
	s->t_ms = now_ms();
}

static bool stats_present(void)
{
	char path[PATH_MAX];

	return !sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR) &&
	       sysfs_is_dir(path);
}

/* Not loaded, or a module without statistics: say so, EXIT_RUNTIME. */
static int stats_missing(void)
{
	if (!mmfix_loaded())
		p_err("mmfix module is not loaded");
	else
		p_err("this mmfix module has no lock statistics (no /sys/" MMFIX_STATS_SYSFS_DIR ")");
	return EXIT_RUNTIME;
}

/* ns as "312 ns", "1.25 us", "48.0 ms", "3.20 s": three digits. */
static const char *fmt_ns(char *buf, size_t size, double ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	unsigned int u = 0;

	while (ns >= 999.5 && u < 3) {
		ns /= 1000;
		u++;
	}
	if (!u || ns >= 99.95)
		snprintf(buf, size, "%.0f %s", ns, unit[u]);
	else if (ns >= 9.995)
		snprintf(buf, size, "%.1f %s", ns, unit[u]);
	else
		snprintf(buf, size, "%.2f %s", ns, unit[u]);
	return buf;
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

static void print_class_json(const struct class_snap *cs)
{
	unsigned int f;

	for (f = 0; f < MMFIX_STATS_NR_FILES; f++) {
		if (f == MMFIX_STATS_WAIT_HIST)
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

/* One row of the text table. */
static void print_class_row(const char *label, const struct class_snap *cs)
{
	char acq[24], cont[24], failed[24], wt[16], wm[16], holds[24];
	char ht[16], hm[16] = "-", hx[16];
	const uint64_t *v = cs->v;

	if (cs->have[MMFIX_STATS_HOLDS] && cs->have[MMFIX_STATS_HOLD_NS] &&
	    v[MMFIX_STATS_HOLDS])
		fmt_ns(hm, sizeof(hm), (double)v[MMFIX_STATS_HOLD_NS] /
		       (double)v[MMFIX_STATS_HOLDS]);
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
static bool read_stat_u64(uint64_t *v, const char *fmt, ...)
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

/* A decimal file below stats/ as a u64 member (null if unreadable). */
static void print_stat_u64(const char *key, const char *fmt, const char *rel)
{
	uint64_t v;
	bool ok = read_stat_u64(&v, "%s", rel);

	print_u64(key, fmt, ok ? &v : NULL);
}

/* The longest mmap_lock hold or wait: "hold" or "wait". */
static void print_worst(const char *what)
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

static void print_nodes(void)
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
			snprintf(fmt, sizeof(fmt), " %s %%s", node_files[f]);
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

int do_stats(int argc, char **argv)
{
	struct snap s;
	char disp[80];
	unsigned int c;
	int on;

	if (argc)
		return usage_err("stats takes no arguments (got '%s')",
				 arg_disp(argv[0], disp, sizeof(disp)));
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
	print_text("%-16s %12s %10s %8s %10s %10s %12s %10s %10s %10s\n",
		   "lock", "acquired", "contended", "failed", "wait",
		   "max wait", "holds", "hold", "mean hold", "max hold");
	for (c = 0; c < MMFIX_STATS_NR_CLASSES; c++) {
		if (!opts.json) {
			print_class_row(class_labels[c], &s.cls[c]);
			continue;
		}
		open_class(c);
		print_class_json(&s.cls[c]);
		if (c == MMFIX_STATS_LRU) {
			print_stat_u64("unmatched", NULL, "lru_lock/unmatched");
			print_nodes();
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
		print_nodes();
	}
	print_worst("hold");
	print_worst("wait");
	print_close_object();	/* mmap_lock (JSON) */
	print_close_object();
	return EXIT_OK;
}

/* watch *********************************************************************/

static volatile sig_atomic_t stop_watch;

static void on_signal(int sig)
{
	(void)sig;
	stop_watch = 1;
}

/* Sleeps ms milliseconds, or until SIGINT/SIGTERM. */
static void watch_sleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop_watch)
		;
}

/* "1", "0.5", "2.25": milliseconds, 100 to 3600000; -EINVAL otherwise. */
static int parse_interval(const char *s, unsigned int *ms)
{
	uint64_t whole = 0, frac = 0, scale = 1000;
	const char *dot = strchr(s, '.');
	char buf[16];
	size_t n = dot ? (size_t)(dot - s) : strlen(s);

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (parse_u64(buf, &whole) || whole > 3600)
		return -EINVAL;
	if (dot) {
		const char *d = dot + 1;

		if (!*d || strlen(d) > 3)
			return -EINVAL;
		for (; *d; d++) {
			if (*d < '0' || *d > '9')
				return -EINVAL;
			scale /= 10;
			frac += (uint64_t)(*d - '0') * scale;
		}
	}
	whole = whole * 1000 + frac;
	if (whole < 100 || whole > 3600000)
		return -EINVAL;
	*ms = (unsigned int)whole;
	return 0;
}

static uint64_t delta(const struct class_snap *a, const struct class_snap *b,
		      unsigned int f)
{
	return b->v[f] >= a->v[f] ? b->v[f] - a->v[f] : 0;
}

/*
 * Longest hold of the interval: exact when it raised the maximum since
 * the last reset; otherwise below the top of the highest bucket whose
 * count grew (*exact false, the bound in *ns); 0 when nothing was held.
 */
static uint64_t interval_max(const struct class_snap *a,
			     const struct class_snap *b, bool *exact)
{
	int i;

	*exact = true;
	if (b->v[MMFIX_STATS_HOLD_MAX_NS] > a->v[MMFIX_STATS_HOLD_MAX_NS])
		return b->v[MMFIX_STATS_HOLD_MAX_NS];
	for (i = NBUCKETS - 1; i > 0; i--)
		if (b->hold_hist[i] > a->hold_hist[i])
			break;
	*exact = i == 0;
	return i ? (i >= 64 ? UINT64_MAX : 1ULL << i) : 0;
}

static void print_interval(const struct snap *a, const struct snap *b)
{
	double secs = (double)(b->t_ms - a->t_ms) / 1000;
	char mean[16], max[20], tbuf[16];
	time_t now = time(NULL);
	uint64_t held, acq, cont, mx, iv_ns;
	unsigned int c;
	bool exact;

	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", localtime(&now));
	if (secs <= 0)
		secs = 0.001;
	iv_ns = (b->t_ms - a->t_ms) * 1000000ULL;
	print_open_object(NULL);
	print_u64("interval_ns", NULL, &iv_ns);
	for (c = 0; c < MMFIX_STATS_NR_CLASSES; c++) {
		const struct class_snap *x = &a->cls[c], *y = &b->cls[c];
		uint64_t hold_ns = delta(x, y, MMFIX_STATS_HOLD_NS);

		acq = delta(x, y, MMFIX_STATS_ACQUISITIONS);
		cont = delta(x, y, MMFIX_STATS_CONTENDED);
		held = delta(x, y, MMFIX_STATS_HOLDS);
		mx = interval_max(x, y, &exact);
		if (opts.json) {
			uint64_t mean_ns = held ? hold_ns / held : 0;

			open_class(c);
			print_u64("acquisitions", NULL, &acq);
			print_u64("contended", NULL, &cont);
			print_u64("holds", NULL, &held);
			print_u64("hold_ns", NULL, &hold_ns);
			print_u64("hold_mean_ns", NULL, held ? &mean_ns : NULL);
			/* exact, or null with the bucket bound below */
			print_u64("hold_max_ns", NULL, exact ? &mx : NULL);
			print_u64("hold_max_below_ns", NULL, exact ? NULL : &mx);
			close_class(c, true);
			continue;
		}
		if (!held)
			snprintf(max, sizeof(max), "-");
		else if (exact)
			fmt_ns(max, sizeof(max), (double)mx);
		else {
			max[0] = '<';
			fmt_ns(max + 1, sizeof(max) - 1, (double)mx);
		}
		printf("%-8s  %-16s %12.0f %10.1f %10s %10s\n", tbuf,
		       class_labels[c], (double)acq / secs, (double)cont / secs,
		       held ? fmt_ns(mean, sizeof(mean),
				     (double)hold_ns / (double)held) : "-",
		       max);
	}
	print_close_object();
	fflush(stdout);
}

int do_watch(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned int ms = 1000, n = 0;
	struct snap a, b;
	char disp[80];
	int on;

	if (argc > 1)
		return usage_err("watch: unexpected argument '%s'",
				 arg_disp(argv[1], disp, sizeof(disp)));
	if (argc && parse_interval(argv[0], &ms))
		return usage_err("watch: '%s' is not an interval in seconds from 0.1 to 3600",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if (!stats_present())
		return stats_missing();
	print_open_object(NULL);
	on = sysfs_attr_bool(MMFIX_STATS_SYSFS_DIR "/enabled");
	if (on != 1)
		p_note("lock statistics are off: nothing will move until 1 is written to /sys/" MMFIX_STATS_SYSFS_DIR "/enabled");

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	print_open_array("intervals");
	if (!opts.json)
		printf("%-8s  %-16s %12s %10s %10s %10s\n", "time", "lock",
		       "acquired/s", "contend/s", "mean hold", "max hold");
	read_snap(&a);
	while (!stop_watch && (!opts.count_set || n < opts.count)) {
		watch_sleep(ms);
		if (stop_watch)
			break;
		read_snap(&b);
		print_interval(&a, &b);
		a = b;
		n++;
	}
	print_close_array();
	print_close_object();
	return EXIT_OK;
}
