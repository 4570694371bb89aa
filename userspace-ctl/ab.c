// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl ab FIX: a controlled A/B experiment on the running machine.
 *
 * Purpose: answer "does FIX help this machine, under this workload?".
 * FIX is switched off and on in windows of a set length, in ABBA order
 * (round 1 off then on, round 2 on then off, ...: a linear drift of the
 * workload adds the same to both states of two rounds), and every window
 * measures the lock statistics, the fix's own counters and, optionally,
 * a user metric.  The on/off ratios of the paired windows of each round
 * give a 95% confidence interval and a verdict per metric.
 *
 *   mmfixctl ab populate_drain --window 10s --rounds 10
 *   mmfixctl ab populate_drain --run 'populate-churn -n 100000' --value last \
 *           --better higher --tsv ab.tsv --svg ab.svg
 *
 * Everything ab touches (the fix's switch, the lock statistics switches)
 * is put back on every way out: normal end, error, guard stop, and
 * SIGINT/SIGTERM/SIGHUP (the handler only sets ab_stop; the loops poll
 * it every AB_POLL_MS and restore first, then stop the child).  One ab
 * at a time: an flock() on AB_LOCK_FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "mmfixctl.h"

const char ab_help[] =
	"Judge fix FIX on this machine: switch it off and on in windows\n"
	"(ABBA order: off,on then on,off, ...), wait --settle after each switch\n"
	"and for the livepatch transition, and measure per window lru_lock and\n"
	"mmap_lock acquisitions, contended acquisitions, wait (and, while\n"
	"stats/hold_time is 1, hold) per second, FIX's counters, and a user\n"
	"metric.  Reports per metric the off and on medians, the on/off ratio\n"
	"of the paired windows with a 95% confidence interval (Student's t over\n"
	"the log-ratios of the pairs) and a verdict: better, worse or \"no\n"
	"measurable difference\".  Switches the lock statistics on for the run;\n"
	"FIX's switch and the statistics switches are restored at the end, on\n"
	"errors and on SIGINT, SIGTERM or SIGHUP.  Needs root.\n"
	"\n"
	"  --window T        window length (default 10s; 100ms to 1h)\n"
	"  --rounds N        rounds of one off and one on window (default 10)\n"
	"  --settle T        wait after each switch (default 2s)\n"
	"  --run CMD         run CMD (sh -c) as each window; its metric is its\n"
	"                    wall time, or with --value last the last number\n"
	"                    it prints\n"
	"  --metric CMD      after each window, CMD prints one number\n"
	"  --value V         wall (default) or last, for --run\n"
	"  --better B        higher or lower: which is better for the user\n"
	"                    metric (wall time: lower)\n"
	"  --min-effect P    smaller ratios are no measurable difference\n"
	"                    (default 5%)\n"
	"  --guard M         stop and restore when metric M is worse by more\n"
	"                    than the margin (default mmap_lock_wait_ns_per_s;\n"
	"                    none: no guard)\n"
	"  --guard-margin P  default 10%\n"
	"  --min-rounds N    rounds before the guard judges (default 3)\n"
	"  --tsv FILE        the windows as a TSV (bench/README.md's format)\n"
	"  --svg FILE        a picture: paired values and interval per metric\n"
	"\n"
	"Exit status: 0 done, 1 error, 2 usage, 3 transition, 4 livepatch\n"
	"disabled, 6 not loaded, 8 replaced, 9 overridden, 20 not applicable,\n"
	"21 not patched, 22 owned by another livepatch, 23 another ab runs,\n"
	"24 stopped by the guard, 128+N ended by signal N (restored).\n";

/* Exit codes of ab only (status's 3..9 keep their meaning). */
#define EXIT_AB_NOT_APPLICABLE	20
#define EXIT_AB_NOT_PATCHED	21
#define EXIT_AB_OWNED		22
#define EXIT_AB_BUSY		23
#define EXIT_AB_GUARD		24

#define AB_LOCK_FILE		"/run/mmfixctl-ab.lock"
#define AB_MAX_ROUNDS		500
#define AB_MAX_METRICS		48
#define AB_POLL_MS		50
#define AB_TRANSITION_MS	60000
#define AB_OUT_MAX		65536	/* of a --run/--metric command */
#define AB_NAME_MAX		96

enum { ST_OFF, ST_ON };
static const char *const state_words[] = { "off", "on" };

static struct {
	bool given[AB_NR_OPTS];
	unsigned int window_ms, rounds, settle_ms, min_rounds;
	const char *run, *metric, *guard, *tsv, *svg;
	bool value_last;
	int better;		/* user metric: 1 higher, -1 lower, 0 unset */
	double min_effect, guard_margin;
} abo = {
	.window_ms = 10000, .rounds = 10, .settle_ms = 2000, .min_rounds = 3,
	.min_effect = 0.05, .guard_margin = 0.10,
};

#define AB_OPT_NAME(id, name) [AB_OPT_##id] = name,
static const char *const ab_opt_names[] = { AB_OPTION_LIST(AB_OPT_NAME) };
#undef AB_OPT_NAME

struct metric {
	char name[AB_NAME_MAX];
	int better;		/* 1 higher, -1 lower, 0 neither (a counter) */
	bool have[2][AB_MAX_ROUNDS];
	double v[2][AB_MAX_ROUNDS];
	/* the result */
	unsigned int pairs;
	double off_med, on_med, ratio, lo, hi;
	const char *verdict;
};

/* What ab found before it started, and what it changed. */
struct ab_switch {
	char rel[128];		/* relative to the sysfs root */
	int orig;		/* 0/1 */
	bool touched;
};

struct ab_run {
	const char *fix;
	unsigned int nm;
	struct metric m[AB_MAX_METRICS];
	int guard;		/* index into m, -1: none */
	bool hold;		/* hold_time 1: hold metrics */
	unsigned int ncounters;
	struct counter counters[MMFIX_MAX_COUNTERS];
	struct ab_switch sw[3];	/* the fix, lru_lock, mmap_lock (or stats) */
	unsigned int nsw;
	bool restored;
	unsigned int rounds_done;
	const char *stopped;	/* NULL, "guard", "signal", "error" */
	char error[512];
	FILE *tsv, *svg;
	bool progress_tty;
};

static volatile sig_atomic_t ab_stop;

static void ab_on_signal(int sig)
{
	ab_stop = sig;
}

/* ------------------------------------------------------------ options */

/* "10s", "500ms", "2m", "1h", "1.5s", "3" (seconds): ms, or -EINVAL. */
static int parse_duration(const char *s, uint64_t *ms)
{
	char *end;
	double v, scale = 1000;

	if (!*s || strspn(s, "0123456789.") == 0)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		scale = 1;
	else if (!strcmp(end, "s") || !*end)
		scale = 1000;
	else if (!strcmp(end, "m"))
		scale = 60000;
	else if (!strcmp(end, "h"))
		scale = 3600000;
	else
		return -EINVAL;
	v *= scale;
	if (!(v >= 0) || v > 86400000.0)
		return -EINVAL;
	*ms = (uint64_t)(v + 0.5);
	return 0;
}

/* "10%", "10" (percent) or "0.1" is not accepted: a percentage. */
static int parse_percent(const char *s, double lo, double hi, double *frac)
{
	char buf[32], *end;
	size_t len = strlen(s);
	double v;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	if (buf[len - 1] == '%')
		buf[--len] = '\0';
	if (!len || strspn(buf, "0123456789.") != len)
		return -EINVAL;
	v = strtod(buf, &end);
	if (*end || v < lo || v > hi)
		return -EINVAL;
	*frac = v / 100;
	return 0;
}

static int bad_value(unsigned int id, const char *arg, const char *want)
{
	char disp[80];

	return usage_err("--%s: '%s' is not %s", ab_opt_names[id],
			 arg_disp(arg, disp, sizeof(disp)), want);
}

int ab_set_opt(unsigned int id, const char *arg)
{
	uint64_t v;

	if (id >= AB_NR_OPTS)
		return EXIT_USAGE;
	abo.given[id] = true;
	switch (id) {
	case AB_OPT_WINDOW:
		if (parse_duration(arg, &v) || v < 100 || v > 3600000)
			return bad_value(id, arg, "a duration from 100ms to 1h (e.g. 10s)");
		abo.window_ms = (unsigned int)v;
		break;
	case AB_OPT_SETTLE:
		if (parse_duration(arg, &v) || v > 600000)
			return bad_value(id, arg, "a duration from 0 to 10m (e.g. 2s)");
		abo.settle_ms = (unsigned int)v;
		break;
	case AB_OPT_ROUNDS:
		if (parse_u64(arg, &v) || v < 2 || v > AB_MAX_ROUNDS)
			return bad_value(id, arg, "a number from 2 to 500");
		abo.rounds = (unsigned int)v;
		break;
	case AB_OPT_MIN_ROUNDS:
		if (parse_u64(arg, &v) || v < 1 || v > AB_MAX_ROUNDS)
			return bad_value(id, arg, "a number from 1 to 500");
		abo.min_rounds = (unsigned int)v;
		break;
	case AB_OPT_RUN:
	case AB_OPT_METRIC:
		if (!*arg)
			return bad_value(id, arg, "a command");
		*(id == AB_OPT_RUN ? &abo.run : &abo.metric) = arg;
		break;
	case AB_OPT_VALUE:
		if (strcmp(arg, "wall") && strcmp(arg, "last"))
			return bad_value(id, arg, "wall or last");
		abo.value_last = !strcmp(arg, "last");
		break;
	case AB_OPT_BETTER:
		if (strcmp(arg, "higher") && strcmp(arg, "lower"))
			return bad_value(id, arg, "higher or lower");
		abo.better = !strcmp(arg, "higher") ? 1 : -1;
		break;
	case AB_OPT_MIN_EFFECT:
		if (parse_percent(arg, 0, 100, &abo.min_effect))
			return bad_value(id, arg, "a percentage from 0 to 100 (e.g. 5%)");
		break;
	case AB_OPT_GUARD:
		if (!*arg)
			return bad_value(id, arg, "a metric name or none");
		abo.guard = arg;
		break;
	case AB_OPT_GUARD_MARGIN:
		if (parse_percent(arg, 0, 1000, &abo.guard_margin))
			return bad_value(id, arg, "a percentage from 0 to 1000 (e.g. 10%)");
		break;
	case AB_OPT_TSV:
	case AB_OPT_SVG:
		if (!*arg)
			return bad_value(id, arg, "a file name");
		*(id == AB_OPT_TSV ? &abo.tsv : &abo.svg) = arg;
		break;
	}
	return 0;
}

const char *ab_opt_given(void)
{
	unsigned int i;

	for (i = 0; i < AB_NR_OPTS; i++)
		if (abo.given[i])
			return ab_opt_names[i];
	return NULL;
}

static int check_opts(void)
{
	if (abo.run && abo.metric)
		return usage_err("ab: --run and --metric exclude each other");
	if (abo.given[AB_OPT_VALUE] && !abo.run)
		return usage_err("ab: --value applies only with --run");
	if (abo.run && abo.given[AB_OPT_WINDOW])
		return usage_err("ab: no --window with --run: each window is one run of CMD");
	if (abo.better && !abo.run && !abo.metric)
		return usage_err("ab: --better applies only with --run or --metric");
	if (!abo.better && (abo.metric || (abo.run && abo.value_last)))
		return usage_err("ab: say with --better higher or lower which is better for the user metric");
	if (abo.run && !abo.value_last && abo.better > 0)
		return usage_err("ab: --better higher with a wall time: a longer run is not better");
	if (abo.min_rounds > abo.rounds && abo.given[AB_OPT_MIN_ROUNDS])
		return usage_err("ab: --min-rounds %u is more than --rounds %u",
				 abo.min_rounds, abo.rounds);
	return 0;
}

/* ------------------------------------------------------------ metrics */

static int metric_add(struct ab_run *ab, int better, const char *fmt, ...)
	__printf(3, 4);

static int metric_add(struct ab_run *ab, int better, const char *fmt, ...)
{
	struct metric *m;
	va_list ap;

	if (ab->nm >= AB_MAX_METRICS)
		return -1;
	m = &ab->m[ab->nm];
	memset(m, 0, sizeof(*m));
	va_start(ap, fmt);
	vsnprintf(m->name, sizeof(m->name), fmt, ap);
	va_end(ap);
	m->better = better;
	return (int)ab->nm++;
}

/* The lock metrics, in this order; then the counters, then the user's. */
enum { M_LRU_ACQ, M_LRU_CONT, M_LRU_WAIT, M_MMAP_ACQ, M_MMAP_CONT,
       M_MMAP_WAIT, M_NR_LOCK };

static bool counter_is_gauge(const char *name)
{
	return strstr(name, "max") || !strcmp(name, "cursors");
}

static int user_metric_index(void)
{
	return (abo.run || abo.metric) ? 0 : -1;
}

static void metrics_build(struct ab_run *ab)
{
	unsigned int i;

	ab->nm = 0;
	if (abo.metric)
		metric_add(ab, abo.better, "metric");
	else if (abo.run && abo.value_last)
		metric_add(ab, abo.better, "run_value");
	else if (abo.run)
		metric_add(ab, -1, "run_wall_s");
	metric_add(ab, -1, "lru_lock_acquisitions_per_s");
	metric_add(ab, -1, "lru_lock_contended_per_s");
	metric_add(ab, -1, "lru_lock_wait_ns_per_s");
	metric_add(ab, -1, "mmap_lock_acquisitions_per_s");
	metric_add(ab, -1, "mmap_lock_contended_per_s");
	metric_add(ab, -1, "mmap_lock_wait_ns_per_s");
	if (ab->hold) {
		metric_add(ab, -1, "lru_lock_hold_ns_per_s");
		metric_add(ab, -1, "mmap_lock_hold_ns_per_s");
	}
	ab->ncounters = counters_read(ab->fix, ab->counters, MMFIX_MAX_COUNTERS);
	for (i = 0; i < ab->ncounters; i++)
		metric_add(ab, 0, counter_is_gauge(ab->counters[i].name) ?
			   "%s_%s" : "%s_%s_per_s", ab->fix,
			   ab->counters[i].name);
}

static int metric_find(const struct ab_run *ab, const char *name)
{
	unsigned int i;

	for (i = 0; i < ab->nm; i++)
		if (!strcmp(ab->m[i].name, name))
			return (int)i;
	return -1;
}

/* -------------------------------------------------------------- state */

/* A livepatch transition, the patch not enabled, or replaced: a refusal. */
static int patch_refusal(void)
{
	char buf[32];
	const char *p = sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/patch");

	if (sysfs_attr_bool("%s/transition", klp_dir()) == 1 ||
	    (p && !strcmp(p, "transition"))) {
		p_err("ab: a livepatch transition is in progress; try again when it has ended (see '" BIN_NAME " transition')");
		return EXIT_TRANSITION;
	}
	if (p && !strcmp(p, "replaced")) {
		p_err("ab: another livepatch replaced mmfix's (atomic replace): no fix is in effect");
		return EXIT_REPLACED;
	}
	if ((p && strcmp(p, "enabled")) ||
	    (!p && sysfs_attr_bool("%s/enabled", klp_dir()) != 1)) {
		p_err("ab: the livepatch is disabled: no fix can be switched");
		return EXIT_LP_DISABLED;
	}
	return 0;
}

static int fix_refusal(const char *fix)
{
	char buf[SYSFS_READ_MAX];
	const char *s;

	if (sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/applicable", fix) == 0) {
		s = sysfs_attr_str(buf, sizeof(buf),
				   MMFIX_SYSFS_DIR "/fixes/%s/reason", fix);
		p_err("ab: fix %s does not apply to this kernel: %s", fix,
		      s ? s : "(no reason given)");
		return EXIT_AB_NOT_APPLICABLE;
	}
	s = sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/fixes/%s/owned_by",
			   fix);
	if (s && *s) {
		p_err("ab: fix %s is left alone: livepatch %.64s owns its function", fix, s);
		return EXIT_AB_OWNED;
	}
	if (sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/patched", fix) == 0) {
		s = sysfs_attr_str(buf, sizeof(buf),
				   MMFIX_SYSFS_DIR "/fixes/%s/reason", fix);
		p_err("ab: fix %s is not patched by the loaded mmfix: %s", fix,
		      s ? s : "(no reason given)");
		return EXIT_AB_NOT_PATCHED;
	}
	s = sysfs_attr_str(buf, sizeof(buf),
			   MMFIX_SYSFS_DIR "/fixes/%s/overridden_by", fix);
	if (s && *s) {
		p_err("ab: fix %s has no effect: livepatch %.64s, loaded later, runs instead of its functions",
		      fix, s);
		return EXIT_OVERRIDDEN;
	}
	if (sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/enabled", fix) < 0) {
		p_err("ab: cannot read the switch of fix %s", fix);
		return EXIT_RUNTIME;
	}
	return 0;
}

static int switch_write(const char *rel, int val)
{
	char path[PATH_MAX];
	int ret;

	ret = sysfs_path(path, sizeof(path), "%s", rel);
	if (!ret)
		ret = sysfs_write(path, val ? "1\n" : "0\n");
	return ret;
}

static int sw_set(struct ab_run *ab, unsigned int i, int val)
{
	int ret;

	ab->sw[i].touched = true;
	ret = switch_write(ab->sw[i].rel, val);
	if (ret)
		snprintf(ab->error, sizeof(ab->error), "ab: cannot write %d to /sys/%s: %s",
			 val, ab->sw[i].rel, strerror(-ret));
	return ret;
}

/*
 * Puts every switch ab touched back as it found it and reads it back;
 * the fix first.  Safe to call more than once.
 */
static int ab_restore(struct ab_run *ab)
{
	unsigned int i;
	int ret, bad = 0;

	if (ab->restored)
		return 0;
	ab->restored = true;
	for (i = 0; i < ab->nsw; i++) {
		if (!ab->sw[i].touched)
			continue;
		ret = switch_write(ab->sw[i].rel, ab->sw[i].orig);
		if (!ret && sysfs_attr_bool("%s", ab->sw[i].rel) != ab->sw[i].orig)
			ret = -EIO;
		if (ret) {
			p_err("ab: could not restore /sys/%s to %d: %s",
			      ab->sw[i].rel, ab->sw[i].orig, strerror(-ret));
			bad = -1;
		}
	}
	return bad;
}

static int ab_lock(int *fd)
{
	const char *path = getenv("MMFIXCTL_AB_LOCK");	/* tests only */
	char buf[32];
	ssize_t n;

	if (!path || !*path)
		path = AB_LOCK_FILE;
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (*fd < 0) {
		p_err("ab: cannot open the lock file %s: %m", path);
		return EXIT_RUNTIME;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB)) {
		n = pread(*fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		p_err("ab: another mmfixctl ab is running (pid %s, lock %s): one at a time",
		      *buf ? buf : "?", path);
		close(*fd);
		*fd = -1;
		return EXIT_AB_BUSY;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(*fd, 0) || pwrite(*fd, buf, (size_t)n, 0) != n)
		p_note("ab: cannot write the pid to %s", path);
	return 0;
}

/* ------------------------------------------------------------ waiting */

/* Sleeps ms, in steps, until ab_stop: -EINTR then. */
static int ab_sleep(unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	uint64_t t;

	while (!ab_stop && (t = now_ms()) < end)
		sleep_ms((unsigned int)(end - t < AB_POLL_MS ? end - t : AB_POLL_MS));
	return ab_stop ? -EINTR : 0;
}

static int wait_transition(void)
{
	uint64_t end = now_ms() + AB_TRANSITION_MS;

	while (sysfs_attr_bool("%s/transition", klp_dir()) == 1) {
		if (now_ms() >= end)
			return -ETIMEDOUT;
		if (ab_sleep(AB_POLL_MS))
			return -EINTR;
	}
	return 0;
}

/* Stops the command's process group: TERM, a second, then KILL. */
static void child_stop(pid_t pid)
{
	uint64_t end = now_ms() + 1000;
	int st;

	kill(-pid, SIGTERM);
	while (now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return;
		sleep_ms(20);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/*
 * Runs cmd with sh -c in a process group of its own, stdin /dev/null,
 * stdout captured into out (stderr passed on).  On ab_stop it restores
 * first, then stops the command: -EINTR.  *ms: its wall time.
 */
static int run_cmd(struct ab_run *ab, const char *cmd, char *out, size_t size,
		   uint64_t *ms, int *status)
{
	struct pollfd pfd;
	size_t len = 0;
	uint64_t t0;
	int p[2], st, devnull;
	pid_t pid;
	ssize_t n;
	bool eof = false;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!pid) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(p[1], STDOUT_FILENO);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(p[1]);
	for (;;) {
		if (ab_stop) {
			ab_restore(ab);
			child_stop(pid);
			close(p[0]);
			return -EINTR;
		}
		if (!eof) {
			pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
			if (poll(&pfd, 1, AB_POLL_MS) > 0) {
				char buf[4096];

				n = read(p[0], buf, sizeof(buf));
				if (n <= 0) {
					eof = true;
				} else {
					/* keep the tail: the last number counts */
					if (len + (size_t)n >= size) {
						size_t drop = len + (size_t)n - (size - 1);

						if (drop > len)
							drop = len;
						memmove(out, out + drop, len - drop);
						len -= drop;
					}
					if ((size_t)n > size - 1 - len)
						n = (ssize_t)(size - 1 - len);
					memcpy(out + len, buf, (size_t)n);
					len += (size_t)n;
				}
			}
		} else {
			sleep_ms(AB_POLL_MS / 5);
		}
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
	}
	*ms = now_ms() - t0;
	/* what it wrote before exiting */
	while (!eof && len < size - 1 && (n = read(p[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	out[len] = '\0';
	*status = st;
	return 0;
}

/* The last whitespace-separated word of s that is a whole number. */
static bool last_number(const char *s, double *v)
{
	char buf[AB_OUT_MAX], *tok, *save = NULL, *end;
	bool found = false;
	double d;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, " \t\r\n", &save); tok;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		errno = 0;
		d = strtod(tok, &end);
		if (!*end && end != tok && !errno && isfinite(d)) {
			*v = d;
			found = true;
		}
	}
	return found;
}

/* ------------------------------------------------------------- windows */

struct window_snap {
	struct snap s;
	unsigned int n;
	struct counter c[MMFIX_MAX_COUNTERS];
};

static void wsnap(struct ab_run *ab, struct window_snap *w)
{
	read_snap(&w->s);
	w->n = counters_read(ab->fix, w->c, MMFIX_MAX_COUNTERS);
}

static double delta(const struct snap *a, const struct snap *b, unsigned int c,
		    unsigned int f)
{
	if (!a->cls[c].have[f] || !b->cls[c].have[f] ||
	    b->cls[c].v[f] < a->cls[c].v[f])
		return 0;
	return (double)(b->cls[c].v[f] - a->cls[c].v[f]);
}

static double mmap_delta(const struct snap *a, const struct snap *b,
			 unsigned int f)
{
	return delta(a, b, MMFIX_STATS_MMAP_READ, f) +
	       delta(a, b, MMFIX_STATS_MMAP_WRITE, f);
}

static const struct counter *counter_in(const struct window_snap *w,
					const char *name)
{
	unsigned int i;

	for (i = 0; i < w->n; i++)
		if (!strcmp(w->c[i].name, name))
			return &w->c[i];
	return NULL;
}

/* Fills the lock and counter metrics of (state, round) from a..b. */
static void window_values(struct ab_run *ab, unsigned int st, unsigned int r,
			  const struct window_snap *a,
			  const struct window_snap *b, double secs)
{
	unsigned int base = user_metric_index() + 1, i;
	double v[M_NR_LOCK + 2];
	const struct counter *ca, *cb;
	struct metric *m;

	v[M_LRU_ACQ] = delta(&a->s, &b->s, MMFIX_STATS_LRU, MMFIX_STATS_ACQUISITIONS);
	v[M_LRU_CONT] = delta(&a->s, &b->s, MMFIX_STATS_LRU, MMFIX_STATS_CONTENDED);
	v[M_LRU_WAIT] = delta(&a->s, &b->s, MMFIX_STATS_LRU, MMFIX_STATS_WAIT_NS);
	v[M_MMAP_ACQ] = mmap_delta(&a->s, &b->s, MMFIX_STATS_ACQUISITIONS);
	v[M_MMAP_CONT] = mmap_delta(&a->s, &b->s, MMFIX_STATS_CONTENDED);
	v[M_MMAP_WAIT] = mmap_delta(&a->s, &b->s, MMFIX_STATS_WAIT_NS);
	v[M_NR_LOCK] = delta(&a->s, &b->s, MMFIX_STATS_LRU, MMFIX_STATS_HOLD_NS);
	v[M_NR_LOCK + 1] = mmap_delta(&a->s, &b->s, MMFIX_STATS_HOLD_NS);
	for (i = 0; i < M_NR_LOCK + (ab->hold ? 2 : 0); i++) {
		m = &ab->m[base + i];
		m->v[st][r] = v[i] / secs;
		m->have[st][r] = true;
	}
	base += i;
	for (i = 0; i < ab->ncounters && base + i < ab->nm; i++) {
		m = &ab->m[base + i];
		cb = counter_in(b, ab->counters[i].name);
		ca = counter_in(a, ab->counters[i].name);
		if (!cb || !ca)
			continue;
		if (counter_is_gauge(cb->name))
			m->v[st][r] = (double)cb->val;
		else
			m->v[st][r] = cb->val >= ca->val ?
				      (double)(cb->val - ca->val) / secs : 0;
		m->have[st][r] = true;
	}
}

static void progress(struct ab_run *ab, unsigned int r, unsigned int st,
		     const char *what)
{
	if (!ab->progress_tty)
		return;
	fprintf(stderr, "\r\033[K" BIN_NAME " ab %s: round %u/%u, %s %s",
		ab->fix, r + 1, abo.rounds, state_words[st], what);
	fflush(stderr);
}

/* One JSON line per window (-j, not -p): the NDJSON progress. */
static void window_record(struct ab_run *ab, unsigned int r, unsigned int st,
			  uint64_t ms)
{
	uint64_t ns = ms * 1000000;
	unsigned int i;

	if (!opts.json || opts.pretty)
		return;
	print_open_object(NULL);
	print_string("type", NULL, "window");
	print_string("fix", NULL, ab->fix);
	{
		uint64_t round = r + 1;

		print_u64("round", NULL, &round);
	}
	print_string("state", NULL, state_words[st]);
	print_u64("duration_ns", NULL, &ns);
	print_open_object("metrics");
	for (i = 0; i < ab->nm; i++)
		print_double(ab->m[i].name, NULL, ab->m[i].have[st][r] ?
			     &ab->m[i].v[st][r] : NULL);
	print_close_object();
	print_close_object();
	print_doc_end();
}

/*
 * Sets FIX to st, settles, measures one window.  0, -EINTR (signal:
 * restored already), or another -errno with ab->error set.
 */
static int one_window(struct ab_run *ab, unsigned int r, unsigned int st)
{
	struct window_snap a, b;
	char *out = NULL;
	uint64_t ms = 0;
	int ret, status = 0, en;
	double v;

	progress(ab, r, st, "settling");
	if (sysfs_attr_bool("%s", ab->sw[0].rel) != (int)st) {
		ret = sw_set(ab, 0, (int)st);
		if (ret)
			return ret;
	}
	if (ab_sleep(abo.settle_ms))
		return -EINTR;
	ret = wait_transition();
	if (ret == -ETIMEDOUT)
		snprintf(ab->error, sizeof(ab->error),
			 "ab: the livepatch transition did not end within %u s",
			 AB_TRANSITION_MS / 1000);
	if (ret)
		return ret;
	if (patch_refusal() || fix_refusal(ab->fix)) {
		snprintf(ab->error, sizeof(ab->error),
			 "ab: the patch or fix %s changed during the run", ab->fix);
		return -EIO;
	}
	progress(ab, r, st, "window");
	wsnap(ab, &a);
	if (abo.run) {
		out = malloc(AB_OUT_MAX);
		if (!out)
			return -ENOMEM;
		ret = run_cmd(ab, abo.run, out, AB_OUT_MAX, &ms, &status);
	} else {
		ret = ab_sleep(abo.window_ms);
		ms = now_ms() - a.s.t_ms;
	}
	wsnap(ab, &b);
	if (!abo.run)
		ms = b.s.t_ms - a.s.t_ms;
	if (ret)
		goto out;
	/* somebody else switched it during the window */
	en = sysfs_attr_bool("%s", ab->sw[0].rel);
	if (en != (int)st) {
		snprintf(ab->error, sizeof(ab->error),
			 "ab: fix %s was switched %s by someone else during round %u",
			 ab->fix, en == 1 ? "on" : "off", r + 1);
		ret = -EBUSY;
		goto out;
	}
	if (abo.run && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		snprintf(ab->error, sizeof(ab->error),
			 "ab: --run command %s %d in round %u (%s)",
			 WIFEXITED(status) ? "exited" : "was killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			 r + 1, state_words[st]);
		ret = -EIO;
		goto out;
	}
	window_values(ab, st, r, &a, &b, ms ? (double)ms / 1000 : 0.001);
	if (abo.run) {
		if (!abo.value_last) {
			v = (double)ms / 1000;
		} else if (!last_number(out, &v)) {
			snprintf(ab->error, sizeof(ab->error),
				 "ab: --run command printed no number in round %u (%s)",
				 r + 1, state_words[st]);
			ret = -EIO;
			goto out;
		}
		ab->m[0].v[st][r] = v;
		ab->m[0].have[st][r] = true;
	}
	if (abo.metric) {
		uint64_t mms;

		out = malloc(AB_OUT_MAX);
		if (!out)
			return -ENOMEM;
		ret = run_cmd(ab, abo.metric, out, AB_OUT_MAX, &mms, &status);
		if (ret)
			goto out;
		if (!WIFEXITED(status) || WEXITSTATUS(status) ||
		    !last_number(out, &v)) {
			snprintf(ab->error, sizeof(ab->error),
				 "ab: --metric command %s in round %u (%s)",
				 WIFEXITED(status) && !WEXITSTATUS(status) ?
				 "printed no number" : "failed",
				 r + 1, state_words[st]);
			ret = -EIO;
			goto out;
		}
		ab->m[0].v[st][r] = v;
		ab->m[0].have[st][r] = true;
	}
	window_record(ab, r, st, ms);
	if (ab->tsv) {
		unsigned int i;

		for (i = 0; i < ab->nm; i++)
			if (ab->m[i].have[st][r])
				fprintf(ab->tsv, "%s\t%s\t%s\t%u\t%.6g\n",
					ab->m[i].name, ab->fix, state_words[st],
					r + 1, ab->m[i].v[st][r]);
		fflush(ab->tsv);
	}
out:
	free(out);
	return ret;
}

/* ---------------------------------------------------------- statistics */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const struct metric *m, unsigned int st, unsigned int n)
{
	double v[AB_MAX_ROUNDS];
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		if (m->have[st][i])
			v[k++] = m->v[st][i];
	if (!k)
		return NAN;
	qsort(v, k, sizeof(v[0]), cmp_double);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* Student's t, 0.975 quantile, df degrees of freedom. */
static double t975(unsigned int df)
{
	static const double t[] = {
		0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
		2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
		2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
		2.052, 2.048, 2.045, 2.042,
	};

	if (df < ARRAY_SIZE(t))
		return t[df];
	return 1.96 + 2.4 / df;	/* within 0.002 from 30 on */
}

/*
 * The log of the on/off ratio of one pair.  Equal values (0 and 0
 * too) are ratio 1; a zero on one side only counts as a thousandth of
 * the largest value of the metric (eps), so 0 against x is a large but
 * finite change.
 */
static double log_ratio(double off, double on, double eps)
{
	if (off == on)
		return 0;
	if (off <= 0 || on <= 0)
		return log((on + eps) / (off + eps));
	return log(on / off);
}

/*
 * The ratio of the pairs of the first n rounds: geometric mean, and
 * the 95% interval exp(mean ± t * sd / sqrt(n)); lo/hi NAN below 2.
 */
static void metric_ratio(struct metric *m, unsigned int n)
{
	double lr[AB_MAX_ROUNDS], eps = 0, sum = 0, ss = 0, mean, half;
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		if (m->have[0][i] && fabs(m->v[0][i]) > eps)
			eps = fabs(m->v[0][i]);
		if (m->have[1][i] && fabs(m->v[1][i]) > eps)
			eps = fabs(m->v[1][i]);
	}
	eps = eps > 0 ? eps / 1000 : 1e-9;
	for (i = 0; i < n; i++)
		if (m->have[0][i] && m->have[1][i])
			lr[k++] = log_ratio(m->v[0][i], m->v[1][i], eps);
	m->pairs = k;
	m->off_med = median(m, 0, n);
	m->on_med = median(m, 1, n);
	m->ratio = m->lo = m->hi = NAN;
	if (!k)
		return;
	for (i = 0; i < k; i++)
		sum += lr[i];
	mean = sum / k;
	m->ratio = exp(mean);
	if (k < 2)
		return;
	for (i = 0; i < k; i++)
		ss += (lr[i] - mean) * (lr[i] - mean);
	half = t975(k - 1) * sqrt(ss / (k - 1)) / sqrt(k);
	m->lo = exp(mean - half);
	m->hi = exp(mean + half);
}

/*
 * better / worse when the interval excludes 1 and the ratio is at least
 * --min-effect away from it; for a counter (no better side) higher or
 * lower; otherwise "no measurable difference".
 */
static void metric_verdict(struct metric *m)
{
	int dir = 0;

	m->verdict = "-";
	if (m->pairs < 2 || isnan(m->lo))
		return;
	if (m->lo > 1 && m->ratio >= 1 + abo.min_effect)
		dir = 1;
	else if (m->hi < 1 && m->ratio <= 1 / (1 + abo.min_effect))
		dir = -1;
	if (!dir)
		m->verdict = "no measurable difference";
	else if (!m->better)
		m->verdict = dir > 0 ? "higher" : "lower";
	else
		m->verdict = dir == m->better ? "better" : "worse";
}

/*
 * The guard after round n: its ratio so far worse than the margin.  The
 * default guard (mmap_lock wait) is not judged while the on windows'
 * median wait is below 1 ms/s or contended below 1/s: a ratio of a few
 * waits is noise (contrib/ansible's floors).
 */
static bool guard_trips(struct ab_run *ab, unsigned int n)
{
	struct metric *g;
	double r;

	if (ab->guard < 0 || n < abo.min_rounds)
		return false;
	g = &ab->m[ab->guard];
	metric_ratio(g, n);
	if (isnan(g->ratio))
		return false;
	if (!strcmp(g->name, "mmap_lock_wait_ns_per_s") ||
	    !strcmp(g->name, "mmap_lock_contended_per_s")) {
		struct metric *w = &ab->m[metric_find(ab, "mmap_lock_wait_ns_per_s")];
		struct metric *c = &ab->m[metric_find(ab, "mmap_lock_contended_per_s")];

		if (median(w, 1, n) < 1e6 || median(c, 1, n) < 1)
			return false;
	}
	r = g->better > 0 ? 1 / g->ratio : g->ratio;
	return r > 1 + abo.guard_margin;
}

/* -------------------------------------------------------------- report */

static const char *better_word(int b)
{
	return b > 0 ? "higher" : b < 0 ? "lower" : "-";
}

static void fmt_num(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 0.01))
		snprintf(buf, size, "%.3g", v);
	else
		snprintf(buf, size, "%.2f", v);
}

static void print_report(struct ab_run *ab, const char *order)
{
	uint64_t u;
	unsigned int i;
	char a[32], b[32], c[32], d[32], e[32];

	print_open_object(NULL);
	print_string("type", NULL, "report");
	print_string("fix", NULL, ab->fix);
	print_string("order", NULL, order);
	u = abo.rounds;
	print_u64("rounds", NULL, &u);
	u = ab->rounds_done;
	print_u64("rounds_done", NULL, &u);
	u = abo.run ? 0 : (uint64_t)abo.window_ms * 1000000;
	print_u64("window_ns", NULL, abo.run ? NULL : &u);
	u = (uint64_t)abo.settle_ms * 1000000;
	print_u64("settle_ns", NULL, &u);
	print_string("interval", NULL, "t over the log-ratios of the pairs, 95%");
	print_double("min_effect", NULL, &abo.min_effect);
	print_string("stopped", NULL, ab->stopped);
	print_open_object("guard");
	print_string("metric", NULL, ab->guard >= 0 ? ab->m[ab->guard].name : NULL);
	print_double("margin", NULL, &abo.guard_margin);
	u = abo.min_rounds;
	print_u64("min_rounds", NULL, &u);
	print_bool("tripped", NULL, ab->stopped && !strcmp(ab->stopped, "guard"));
	print_close_object();

	if (abo.run)
		snprintf(a, sizeof(a), "one run of CMD");
	else
		snprintf(a, sizeof(a), "%.1f s", abo.window_ms / 1000.0);
	print_text("ab %s: %u of %u rounds (%s), windows %s, settle %.1f s%s\n",
		   ab->fix, ab->rounds_done, abo.rounds, order, a,
		   abo.settle_ms / 1000.0, ab->stopped ? "; stopped early" : "");
	print_text("%-38s %-6s %11s %11s %7s %-17s %s\n", "metric", "better",
		   "off median", "on median", "on/off", "95% CI", "verdict");
	print_open_array("metrics");
	for (i = 0; i < ab->nm; i++) {
		struct metric *m = &ab->m[i];
		uint64_t pairs = m->pairs;

		print_open_object(NULL);
		print_string("name", NULL, m->name);
		print_string("better", NULL, m->better ? better_word(m->better) : NULL);
		print_double("off_median", NULL, isnan(m->off_med) ? NULL : &m->off_med);
		print_double("on_median", NULL, isnan(m->on_med) ? NULL : &m->on_med);
		print_u64("pairs", NULL, &pairs);
		print_double("ratio", NULL, isnan(m->ratio) ? NULL : &m->ratio);
		print_double("ci_low", NULL, isnan(m->lo) ? NULL : &m->lo);
		print_double("ci_high", NULL, isnan(m->hi) ? NULL : &m->hi);
		print_string("verdict", NULL, m->verdict);
		print_close_object();
		fmt_num(a, sizeof(a), m->off_med);
		fmt_num(b, sizeof(b), m->on_med);
		snprintf(c, sizeof(c), isnan(m->ratio) ? "-" : "%.3f", m->ratio);
		snprintf(d, sizeof(d), isnan(m->lo) ? "-" : "%.3f", m->lo);
		snprintf(e, sizeof(e), isnan(m->hi) ? "-" : "%.3f", m->hi);
		print_text("%-38s %-6s %11s %11s %7s [%s, %s]%*s %s\n", m->name,
			   better_word(m->better), a, b, c, d, e,
			   (int)(13 - strlen(d) - strlen(e)) > 0 ?
			   (int)(13 - strlen(d) - strlen(e)) : 0, "", m->verdict);
	}
	print_close_array();
}

/* "fix", "lru_lock", "mmap_lock" or "stats": the switch's name. */
static const char *sw_label(const struct ab_run *ab, unsigned int i)
{
	if (!i)
		return "fix";
	return strstr(ab->sw[i].rel, "lru_lock") ? "lru_lock" :
	       strstr(ab->sw[i].rel, "mmap_lock") ? "mmap_lock" : "stats";
}

static void print_restored(struct ab_run *ab)
{
	unsigned int i;

	print_open_object("restored");
	print_text("restored:");
	for (i = 0; i < ab->nsw; i++) {
		print_text("%s %s %s", i ? "," : "", i ? sw_label(ab, i) : ab->fix,
			   ab->sw[i].orig ? "on" : "off");
		print_bool(sw_label(ab, i), NULL, ab->sw[i].orig);
	}
	print_text("\n");
	print_close_object();
}

/* The SVG: per metric, the paired values (a line per round) and the ratio. */
#define SVG_W		760
#define SVG_ROW		96
#define SVG_TOP		40

static void svg_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, f);
	}
}

/* x of a ratio on the log axis 1/16 .. 16, clamped. */
static double svg_rx(double r)
{
	double l = log2(r);

	if (isnan(l))
		l = 0;
	l = l < -4 ? -4 : l > 4 ? 4 : l;
	return 430 + (l + 4) / 8 * 300;
}

static void write_svg(struct ab_run *ab, FILE *f)
{
	unsigned int i, r, n = ab->rounds_done;
	int h = SVG_TOP + (int)ab->nm * SVG_ROW + 30;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"10\" y=\"18\" font-size=\"14\">mmfixctl ab ", SVG_W, h, SVG_W, h);
	svg_escape(f, ab->fix);
	fprintf(f, ": %u rounds, off (grey) and on (blue) per round; on/off ratio with its 95%% interval (log axis 1/16..16)</text>\n",
		n);
	for (i = 0; i < ab->nm; i++) {
		struct metric *m = &ab->m[i];
		int y0 = SVG_TOP + (int)i * SVG_ROW;
		double max = 0, y1, y2;

		for (r = 0; r < n; r++) {
			if (m->have[0][r] && m->v[0][r] > max)
				max = m->v[0][r];
			if (m->have[1][r] && m->v[1][r] > max)
				max = m->v[1][r];
		}
		if (max <= 0)
			max = 1;
		fprintf(f, "<text x=\"10\" y=\"%d\">", y0 + 12);
		svg_escape(f, m->name);
		fprintf(f, " (%s is better): %s</text>\n",
			m->better > 0 ? "higher" : m->better < 0 ? "lower" : "neither",
			m->verdict);
		fprintf(f, "<line x1=\"40\" y1=\"%d\" x2=\"40\" y2=\"%d\" stroke=\"black\"/>\n",
			y0 + 20, y0 + SVG_ROW - 10);
		fprintf(f, "<text x=\"30\" y=\"%d\" text-anchor=\"end\" font-size=\"9\">0</text>",
			y0 + SVG_ROW - 10);
		fprintf(f, "<text x=\"44\" y=\"%d\" font-size=\"9\">%.4g</text>\n",
			y0 + 28, max);
		fprintf(f, "<text x=\"120\" y=\"%d\" font-size=\"9\">off</text><text x=\"300\" y=\"%d\" font-size=\"9\">on</text>\n",
			y0 + SVG_ROW - 1, y0 + SVG_ROW - 1);
		for (r = 0; r < n; r++) {
			if (!m->have[0][r] || !m->have[1][r])
				continue;
			y1 = y0 + SVG_ROW - 10 - m->v[0][r] / max * (SVG_ROW - 30);
			y2 = y0 + SVG_ROW - 10 - m->v[1][r] / max * (SVG_ROW - 30);
			fprintf(f, "<line x1=\"125\" y1=\"%.1f\" x2=\"305\" y2=\"%.1f\" stroke=\"#999\"/>"
				"<circle cx=\"125\" cy=\"%.1f\" r=\"3\" fill=\"#777\"/>"
				"<circle cx=\"305\" cy=\"%.1f\" r=\"3\" fill=\"#1f5fbf\"/>\n",
				y1, y2, y1, y2);
		}
		/* ratio axis */
		fprintf(f, "<line x1=\"430\" y1=\"%d\" x2=\"730\" y2=\"%d\" stroke=\"black\"/>"
			"<line x1=\"580\" y1=\"%d\" x2=\"580\" y2=\"%d\" stroke=\"#c00\" stroke-dasharray=\"3,2\"/>"
			"<text x=\"430\" y=\"%d\" font-size=\"9\">1/16</text><text x=\"576\" y=\"%d\" font-size=\"9\">1</text><text x=\"718\" y=\"%d\" font-size=\"9\">16</text>\n",
			y0 + 60, y0 + 60, y0 + 25, y0 + 70, y0 + 78, y0 + 78, y0 + 78);
		for (r = 0; r < n; r++) {
			if (!m->have[0][r] || !m->have[1][r] || m->v[0][r] <= 0 ||
			    m->v[1][r] <= 0)
				continue;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%d\" r=\"2.5\" fill=\"#1f5fbf\" fill-opacity=\"0.5\"/>\n",
				svg_rx(m->v[1][r] / m->v[0][r]), y0 + 50);
		}
		if (!isnan(m->lo))
			fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"3\"/>\n",
				svg_rx(m->lo), y0 + 60, svg_rx(m->hi), y0 + 60);
		if (!isnan(m->ratio))
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%d\" r=\"4\" fill=\"black\"/>"
				"<text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%.3f</text>\n",
				svg_rx(m->ratio), y0 + 60, svg_rx(m->ratio), y0 + 45,
				m->ratio);
	}
	fprintf(f, "</svg>\n");
}

/* ------------------------------------------------------------- command */

static void switches_find(struct ab_run *ab)
{
	char path[PATH_MAX];

	ab->nsw = 0;
	snprintf(ab->sw[ab->nsw++].rel, sizeof(ab->sw[0].rel),
		 MMFIX_SYSFS_DIR "/fixes/%s/enabled", ab->fix);
	if (!sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR "/lru_lock/enabled") &&
	    !access(path, F_OK)) {
		snprintf(ab->sw[ab->nsw++].rel, sizeof(ab->sw[0].rel), "%s",
			 MMFIX_STATS_SYSFS_DIR "/lru_lock/enabled");
		snprintf(ab->sw[ab->nsw++].rel, sizeof(ab->sw[0].rel), "%s",
			 MMFIX_STATS_SYSFS_DIR "/mmap_lock/enabled");
	} else {
		snprintf(ab->sw[ab->nsw++].rel, sizeof(ab->sw[0].rel), "%s",
			 MMFIX_STATS_SYSFS_DIR "/enabled");
	}
}

static FILE *open_out(const char *path, const char *what)
{
	FILE *f = fopen(path, "we");

	if (!f)
		p_err("ab: cannot write the %s file %s: %m", what, path);
	return f;
}

static int ab_checks(struct ab_run *ab)
{
	char known[MMFIX_MAX_FIXES * (MMFIX_FIX_NAME_MAX + 2)], disp[80];
	struct fix_list fl;
	int ret;

	if (!mmfix_loaded()) {
		p_err("ab: mmfix module is not loaded");
		return EXIT_NOT_LOADED;
	}
	fix_list_read(&fl);
	if (!fix_name_valid(ab->fix) || fix_list_find(&fl, ab->fix) < 0) {
		fix_list_join(&fl, known, sizeof(known));
		return usage_err("ab: unknown fix '%s' (known fixes: %s)",
				 arg_disp(ab->fix, disp, sizeof(disp)), known);
	}
	ret = patch_refusal();
	if (!ret)
		ret = fix_refusal(ab->fix);
	if (ret)
		return ret;
	if (!stats_present()) {
		p_err("ab: this mmfix module has no lock statistics (no /sys/" MMFIX_STATS_SYSFS_DIR ")");
		return EXIT_RUNTIME;
	}
	return 0;
}

static void install_signals(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = ab_on_signal };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	unsigned int i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, &old[i]);
	signal(SIGPIPE, SIG_IGN);	/* a closed pipe must not skip the restore */
}

int do_ab(int argc, char **argv)
{
	static struct ab_run ab;	/* large: not on the stack */
	struct sigaction old[3];
	const char *gname, *order = "ABBA";
	char disp[80];
	unsigned int r, k, st;
	int ret, lockfd = -1, rc = EXIT_OK, i;
	uint64_t hold;

	if (argc < 1)
		return usage_err("ab: missing FIX (see '" BIN_NAME " status')");
	if (argc > 1)
		return usage_err("ab: unexpected argument '%s'",
				 arg_disp(argv[1], disp, sizeof(disp)));
	ret = check_opts();
	if (ret)
		return ret;
	memset(&ab, 0, sizeof(ab));
	ab.fix = argv[0];
	ab.guard = -1;
	ret = ab_checks(&ab);
	if (ret)
		return ret;
	ab.hold = read_stat_u64(&hold, "hold_time") && hold;
	metrics_build(&ab);
	gname = abo.guard ? abo.guard : "mmap_lock_wait_ns_per_s";
	if (strcmp(gname, "none")) {
		ab.guard = metric_find(&ab, gname);
		if (ab.guard < 0)
			return usage_err("ab: --guard: no metric '%s' in this run (see the metrics of '" BIN_NAME " help ab'; none: no guard)",
					 arg_disp(gname, disp, sizeof(disp)));
	}
	if (geteuid() != 0) {
		p_err("ab: root is needed to switch fix %s and the lock statistics (run as root or with sudo)",
		      ab.fix);
		return EXIT_RUNTIME;
	}
	ret = ab_lock(&lockfd);
	if (ret)
		return ret;
	if (abo.tsv)
		ab.tsv = open_out(abo.tsv, "TSV");
	if (abo.svg && (ab.tsv || !abo.tsv))
		ab.svg = open_out(abo.svg, "SVG");
	if ((abo.tsv && !ab.tsv) || (abo.svg && !ab.svg)) {
		rc = EXIT_RUNTIME;
		goto out_unlock;
	}
	if (ab.tsv)
		fprintf(ab.tsv, "metric\tconfig\tstate\trep\tvalue\n"
			"# mmfixctl ab %s, %s order, %u rounds\n", ab.fix, order,
			abo.rounds);
	if (!strcmp(ab.fix, "populate_drain") &&
	    sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/unmap_drain/applicable") == 1 &&
	    sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/unmap_drain/enabled") == 0)
		p_note("ab: unmap_drain is off: on this kernel munmap drains anyway, and populate_drain alone changes little (docs/fixes/unmap-drain.md)");

	switches_find(&ab);
	for (k = 0; k < ab.nsw; k++) {
		ab.sw[k].orig = sysfs_attr_bool("%s", ab.sw[k].rel);
		if (ab.sw[k].orig < 0) {
			p_err("ab: cannot read /sys/%s", ab.sw[k].rel);
			rc = EXIT_RUNTIME;
			goto out_unlock;
		}
	}
	ab.progress_tty = isatty(STDERR_FILENO);
	install_signals(old);

	/* statistics on for the run */
	for (k = 1; k < ab.nsw && !ret; k++)
		if (!ab.sw[k].orig)
			ret = sw_set(&ab, k, 1);
	for (r = 0; !ret && r < abo.rounds; r++) {
		for (i = 0; i < 2 && !ret; i++) {
			st = (r % 2) ? (unsigned int)!i : (unsigned int)i;
			ret = one_window(&ab, r, st);
		}
		if (ret)
			break;
		ab.rounds_done = r + 1;
		if (ab_stop) {
			ret = -EINTR;
			break;
		}
		if (guard_trips(&ab, ab.rounds_done)) {
			ab.stopped = "guard";
			break;
		}
	}
	if (ab_stop || ret == -EINTR)
		ab.stopped = "signal";
	else if (ret)
		ab.stopped = "error";
	if (ab_restore(&ab))
		ret = ret ? ret : -EIO;
	if (ab.progress_tty)
		fprintf(stderr, "\r\033[K");
	for (k = 0; k < ab.nm; k++) {
		metric_ratio(&ab.m[k], ab.rounds_done);
		metric_verdict(&ab.m[k]);
	}
	print_report(&ab, order);
	print_restored(&ab);
	if (ab.stopped && !strcmp(ab.stopped, "guard")) {
		p_err("ab: stopped by the guard after round %u: %s on/off %.3f, worse than the margin %.0f%%; fix %s restored",
		      ab.rounds_done, ab.m[ab.guard].name, ab.m[ab.guard].ratio,
		      abo.guard_margin * 100, ab.fix);
		rc = EXIT_AB_GUARD;
	} else if (ab.stopped && !strcmp(ab.stopped, "signal")) {
		p_err("ab: interrupted by signal %d in round %u; everything restored",
		      (int)ab_stop, ab.rounds_done + 1);
		rc = 128 + (ab_stop ? (int)ab_stop : SIGINT);
	} else if (ret) {
		p_err("%s", *ab.error ? ab.error : "ab: failed; everything restored");
		rc = EXIT_RUNTIME;
	}
	print_close_object();
	if (ab.svg)
		write_svg(&ab, ab.svg);
	for (k = 0; k < 3; k++)
		sigaction(k == 0 ? SIGINT : k == 1 ? SIGTERM : SIGHUP, &old[k], NULL);
out_unlock:
	if (ab.tsv && fclose(ab.tsv) && !rc) {
		p_err("ab: cannot write %s", abo.tsv);
		rc = EXIT_RUNTIME;
	}
	if (ab.svg && fclose(ab.svg) && !rc) {
		p_err("ab: cannot write %s", abo.svg);
		rc = EXIT_RUNTIME;
	}
	close(lockfd);
	return rc;
}
