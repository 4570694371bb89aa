// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl watch: lock statistics and fix counters per interval.
 *
 *   mmfixctl watch --count 5 2      # five 2-second intervals of deltas
 *   mmfixctl -j watch 1 | jq -c 'select(.type == "interval") | .lru_lock'
 *
 * Deltas are only meaningful between two reads of the same statistics:
 * an unload, a load, a reload (another /sys/kernel/mmfix directory or
 * version), a reset (a counter going backwards) or statistics switched
 * on or off make that interval a notice instead, and the next interval
 * starts from the new values.  Under -j every interval and every notice
 * is one JSON object on a line of its own, flushed at once.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "mmfixctl.h"

const char watch_help[] =
	"Every INTERVAL seconds (default 1, from 0.1 to 3600) print what\n"
	"changed in the last interval: for lru_lock and mmap_lock read and\n"
	"write, acquisitions and contended acquisitions per second, mean wait,\n"
	"holds per second, mean and longest hold; for every fix that is on or\n"
	"whose counters moved, its counters per second (values for *max* and\n"
	"cursors).  The longest hold of an interval is exact when it is the\n"
	"longest since the last reset, otherwise shown as below the top of its\n"
	"log2 bucket (\"<2.1 ms\").  An unload, load or reload of the module, a\n"
	"reset and statistics switched off or on are a notice line instead of\n"
	"an interval, and the deltas start again.  Under -j each interval and\n"
	"notice is one JSON object per line.  Runs until interrupted, or for N\n"
	"intervals.\n"
	"\n"
	"  --count N   stop after N intervals (1 to 1000000)\n";

#define WATCH_FIXES	16
#define WATCH_COUNTERS	32

struct fix_counters {
	char name[MMFIX_FIX_NAME_MAX + 1];
	int enabled;
	unsigned int n;
	struct counter c[WATCH_COUNTERS];
};

struct wstate {
	bool present;		/* /sys/kernel/mmfix/stats */
	bool loaded;
	dev_t dev;		/* of /sys/kernel/mmfix: a reload makes another */
	ino_t ino;
	char version[64];
	int on;			/* stats/enabled */
	struct snap s;
	unsigned int nfix;
	struct fix_counters fix[WATCH_FIXES];
};

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

static void read_wstate(struct wstate *w)
{
	char path[PATH_MAX];
	struct fix_list fl;
	struct stat st;
	unsigned int i;

	memset(w, 0, sizeof(*w));
	w->on = -1;
	if (!sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR) &&
	    !stat(path, &st) && S_ISDIR(st.st_mode)) {
		w->loaded = true;
		w->dev = st.st_dev;
		w->ino = st.st_ino;
	}
	if (!w->loaded) {
		w->s.t_ms = now_ms();
		return;
	}
	sysfs_attr_str(w->version, sizeof(w->version), MMFIX_SYSFS_DIR "/version");
	w->present = stats_present();
	if (w->present)
		w->on = sysfs_attr_bool(MMFIX_STATS_SYSFS_DIR "/enabled");
	read_snap(&w->s);
	if (fix_list_read(&fl))
		return;
	for (i = 0; i < fl.n && w->nfix < WATCH_FIXES; i++) {
		struct fix_counters *f = &w->fix[w->nfix++];

		memcpy(f->name, fl.name[i], sizeof(f->name));
		f->enabled = sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/enabled",
					     f->name);
		f->n = counters_read(f->name, f->c, WATCH_COUNTERS);
	}
}

/* A maximum or a level, not a count: shown as it is, not per second. */
static bool counter_is_gauge(const char *name)
{
	return strstr(name, "max") || !strcmp(name, "cursors");
}

static const struct counter *find_counter(const struct fix_counters *f,
					  const char *name)
{
	unsigned int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->c[i].name, name))
			return &f->c[i];
	return NULL;
}

static const struct fix_counters *find_fix(const struct wstate *w,
					   const char *name)
{
	unsigned int i;

	for (i = 0; i < w->nfix; i++)
		if (!strcmp(w->fix[i].name, name))
			return &w->fix[i];
	return NULL;
}

/* Did a cumulative counter go backwards between a and b? */
static bool went_back(const struct wstate *a, const struct wstate *b)
{
	static const unsigned int files[] = {
		MMFIX_STATS_ACQUISITIONS, MMFIX_STATS_CONTENDED,
		MMFIX_STATS_HOLDS, MMFIX_STATS_HOLD_NS, MMFIX_STATS_WAIT_NS,
	};
	const struct fix_counters *fa;
	const struct counter *ca;
	unsigned int c, i, j;

	for (c = 0; c < MMFIX_STATS_NR_CLASSES; c++)
		for (i = 0; i < ARRAY_SIZE(files); i++)
			if (a->s.cls[c].have[files[i]] && b->s.cls[c].have[files[i]] &&
			    b->s.cls[c].v[files[i]] < a->s.cls[c].v[files[i]])
				return true;
	for (i = 0; i < b->nfix; i++) {
		fa = find_fix(a, b->fix[i].name);
		for (j = 0; fa && j < b->fix[i].n; j++) {
			ca = find_counter(fa, b->fix[i].c[j].name);
			if (ca && !counter_is_gauge(ca->name) &&
			    b->fix[i].c[j].val < ca->val)
				return true;
		}
	}
	return false;
}

/*
 * What happened between a and b that makes their difference meaningless:
 * the event name and a message, or NULL.
 */
static const char *compare(const struct wstate *a, const struct wstate *b,
			   char *msg, size_t size)
{
	if (a->loaded && !b->loaded) {
		snprintf(msg, size, "mmfix was unloaded: no statistics until it is loaded again");
		return "unloaded";
	}
	if (!a->loaded && b->loaded) {
		snprintf(msg, size, "mmfix %s was loaded: deltas start again",
			 b->version);
		return "loaded";
	}
	if (!b->loaded)
		return NULL;
	if (a->dev != b->dev || a->ino != b->ino || strcmp(a->version, b->version)) {
		snprintf(msg, size, "mmfix was reloaded (version %s): deltas start again",
			 b->version);
		return "reloaded";
	}
	if (a->present != b->present) {
		snprintf(msg, size, "the lock statistics %s", b->present ?
			 "appeared: deltas start again" : "disappeared");
		return b->present ? "stats_on" : "stats_off";
	}
	if (a->on == 1 && b->on != 1) {
		snprintf(msg, size, "lock statistics were switched off: nothing is counted until '" BIN_NAME " stats on'");
		return "stats_off";
	}
	if (a->on != 1 && b->on == 1) {
		snprintf(msg, size, "lock statistics were switched on: deltas start again");
		return "stats_on";
	}
	if (went_back(a, b)) {
		snprintf(msg, size, "the statistics were reset: deltas start again");
		return "reset";
	}
	return NULL;
}

/* UTC, ISO 8601 with milliseconds, and the local HH:MM:SS for text. */
static void stamp(char *iso, size_t isize, char *hms, size_t hsize)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(iso, isize, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
	localtime_r(&ts.tv_sec, &tm);
	strftime(hms, hsize, "%H:%M:%S", &tm);
}

static void print_notice(const char *event, const char *msg)
{
	char iso[48], hms[16];

	stamp(iso, sizeof(iso), hms, sizeof(hms));
	print_open_object(NULL);
	print_string("type", NULL, "notice");
	print_string("time", "%s", opts.json ? iso : hms);
	print_string("event", NULL, event);
	print_string("message", "  notice: %s\n", msg);
	print_close_object();
	print_doc_end();
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

#define ROW_FMT "%-8s  %-16s %10s %11s %10s %10s %10s %10s\n"

/* One class over the interval; holds "off" (null) if @holds_off. */
static void print_class(unsigned int c, const struct class_snap *x,
			const struct class_snap *y, double secs, const char *hms,
			bool holds_off)
{
	uint64_t acq, cont, wait, held, hold_ns, mx, wmean, hmean;
	char r_acq[24], r_cont[24], r_held[24], s_wait[16], s_mean[16];
	char s_max[20];
	bool exact;

	acq = delta(x, y, MMFIX_STATS_ACQUISITIONS);
	cont = delta(x, y, MMFIX_STATS_CONTENDED);
	wait = delta(x, y, MMFIX_STATS_WAIT_NS);
	held = delta(x, y, MMFIX_STATS_HOLDS);
	hold_ns = delta(x, y, MMFIX_STATS_HOLD_NS);
	mx = interval_max(x, y, &exact);
	wmean = cont ? wait / cont : 0;
	hmean = held ? hold_ns / held : 0;
	if (opts.json) {
		open_class(c);
		print_u64("acquisitions", NULL, &acq);
		print_u64("contended", NULL, &cont);
		print_u64("wait_ns", NULL, &wait);
		print_u64("wait_mean_ns", NULL, cont ? &wmean : NULL);
		if (holds_off)	/* not measured: no numbers at all */
			held = 0;
		print_u64("holds", NULL, holds_off ? NULL : &held);
		print_u64("hold_ns", NULL, holds_off ? NULL : &hold_ns);
		print_u64("hold_mean_ns", NULL, held ? &hmean : NULL);
		/* null when nothing was held, as text shows "-" */
		print_u64("hold_max_ns", NULL, held && exact ? &mx : NULL);
		print_u64("hold_max_below_ns", NULL, held && !exact ? &mx : NULL);
		close_class(c, true);
		return;
	}
	snprintf(r_acq, sizeof(r_acq), "%.0f", (double)acq / secs);
	snprintf(r_cont, sizeof(r_cont), "%.1f", (double)cont / secs);
	snprintf(r_held, sizeof(r_held), "%.0f", (double)held / secs);
	if (cont)
		fmt_ns(s_wait, sizeof(s_wait), (double)wait / (double)cont);
	else
		strcpy(s_wait, "-");
	if (held)
		fmt_ns(s_mean, sizeof(s_mean), (double)hold_ns / (double)held);
	else
		strcpy(s_mean, "-");
	if (holds_off) {
		strcpy(r_held, "off");
		strcpy(s_mean, "off");
		strcpy(s_max, "off");
	} else if (!held) {
		strcpy(s_max, "-");
	} else if (exact) {
		fmt_ns(s_max, sizeof(s_max), (double)mx);
	} else {
		s_max[0] = '<';
		fmt_ns(s_max + 1, sizeof(s_max) - 1, (double)mx);
	}
	printf(ROW_FMT, hms, class_labels[c], r_acq, r_cont, s_wait, r_held,
	       s_mean, s_max);
}

/* One fix: counters per second (gauges as they are) if on or moving. */
static void print_fix_rates(const struct fix_counters *fa,
			    const struct fix_counters *fb, double secs,
			    const char *hms)
{
	const struct counter *ca;
	char v[32], label[COUNTER_NAME_MAX + 8];
	bool moved = false;
	unsigned int i;
	uint64_t d;

	for (i = 0; i < fb->n; i++) {
		ca = find_counter(fa, fb->c[i].name);
		if (ca && ca->val != fb->c[i].val)
			moved = true;
	}
	if (!moved && fb->enabled != 1)
		return;
	print_open_object(fb->name);
	print_text("%-8s  fix %-12s", hms, fb->name);
	for (i = 0; i < fb->n; i++) {
		const struct counter *cb = &fb->c[i];
		bool gauge = counter_is_gauge(cb->name);

		ca = find_counter(fa, cb->name);
		d = ca && cb->val >= ca->val ? cb->val - ca->val : 0;
		if (opts.json) {
			print_u64(cb->name, NULL, gauge ? &cb->val : &d);
			continue;
		}
		if (gauge && name_is_ns(cb->name))
			fmt_ns(v, sizeof(v), (double)cb->val);
		else if (gauge)
			snprintf(v, sizeof(v), "%llu", (unsigned long long)cb->val);
		else if (name_is_ns(cb->name))
			fmt_ns(v, sizeof(v), (double)d / secs);
		else
			snprintf(v, sizeof(v), "%.0f", (double)d / secs);
		snprintf(label, sizeof(label), "%.*s%s", (int)(strlen(cb->name) -
			 (name_is_ns(cb->name) ? 3 : 0)), cb->name,
			 gauge ? "" : "/s");
		printf("  %s %s", label, v);
	}
	print_text("\n");
	print_close_object();
}

static void print_interval(const struct wstate *a, const struct wstate *b)
{
	double secs = (double)(b->s.t_ms - a->s.t_ms) / 1000;
	uint64_t iv_ns = (b->s.t_ms - a->s.t_ms) * 1000000ULL;
	const struct fix_counters *fa;
	char iso[48], hms[16];
	unsigned int c, i;

	stamp(iso, sizeof(iso), hms, sizeof(hms));
	if (secs <= 0)
		secs = 0.001;
	print_open_object(NULL);
	print_string("type", NULL, "interval");
	print_string("time", NULL, iso);
	print_u64("interval_ns", NULL, &iv_ns);
	print_bool("stats_enabled", NULL, b->on);
	if (b->s.hold_time >= 0)
		print_bool("hold_time", NULL, b->s.hold_time);
	if (b->present)
		for (c = 0; c < MMFIX_STATS_NR_CLASSES; c++)
			print_class(c, &a->s.cls[c], &b->s.cls[c], secs, hms,
				    snap_holds_off(&a->s) || snap_holds_off(&b->s));
	print_open_object("fixes");
	for (i = 0; i < b->nfix; i++) {
		fa = find_fix(a, b->fix[i].name);
		if (fa)
			print_fix_rates(fa, &b->fix[i], secs, hms);
	}
	print_close_object();
	print_close_object();
	print_doc_end();
}

int do_watch(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	static struct wstate ws[2];
	struct wstate *a = &ws[0], *b = &ws[1], *t;
	unsigned int ms = 1000, n = 0;
	const char *event;
	char disp[80], msg[256];

	if (argc > 1)
		return usage_err("watch: unexpected argument '%s'",
				 arg_disp(argv[1], disp, sizeof(disp)));
	if (argc && parse_interval(argv[0], &ms))
		return usage_err("watch: '%s' is not an interval in seconds from 0.1 to 3600",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if (!stats_present())
		return stats_missing();

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	read_wstate(a);
	if (a->on != 1) {
		if (opts.json)
			print_notice("stats_off", "lock statistics are off: nothing will move until '" BIN_NAME " stats on'");
		else
			p_note("lock statistics are off: nothing will move until '" BIN_NAME " stats on' (or 1 is written to /sys/" MMFIX_STATS_SYSFS_DIR "/enabled)");
	}
	if (!opts.json) {
		printf(ROW_FMT, "time", "lock", "acquired/s", "contended/s",
		       "mean wait", "holds/s", "mean hold", "max hold");
		fflush(stdout);
	}
	while (!stop_watch && (!opts.count_set || n < opts.count)) {
		watch_sleep(ms);
		if (stop_watch)
			break;
		read_wstate(b);
		n++;
		event = compare(a, b, msg, sizeof(msg));
		if (event)
			print_notice(event, msg);
		else if (b->loaded)
			print_interval(a, b);
		t = a;
		a = b;
		b = t;
	}
	return EXIT_OK;
}
