// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl status: the lifecycle state of mmfix on this machine (one
 * word, a reason and an exit code of its own, for fleet health checks),
 * then module, livepatch, lock statistics and per-fix state.
 *
 *   mmfixctl status; echo $?      # 0 active, 3..7 see lifecycle_words
 *   mmfixctl -j status | jq -r .state
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mmfixctl.h"

const char status_help[] =
	"Show the lifecycle state of mmfix (one word and a reason), the\n"
	"livepatch state, whether the module is loaded and under which name\n"
	"(mmfix, or mmfix_alt after an upgrade), its version, build\n"
	"and kernel series, the running kernel, the lock statistics switches,\n"
	"and for every fix whether it applies to this kernel, whether the\n"
	"livepatch redirects its functions (patched; fixes= at load),\n"
	"whether it is enabled and recommended, why, the functions it patches\n"
	"and its counters.  This is the default command.  The exit status is the\n"
	"state: 0 active, 3 transition, 4 livepatch-disabled, 5 load-refused,\n"
	"6 not-loaded, 7 not-built, 8 replaced (another livepatch's atomic\n"
	"replace disabled mmfix's), 9 overridden (active, but another livepatch\n"
	"loaded later runs instead of a fix's functions), 10 unsupported (mmfix\n"
	"does not support this kernel: nothing applies here); 1 and 2 as for\n"
	"every command.\n";

enum lifecycle {
	LIFE_ACTIVE,
	LIFE_TRANSITION,
	LIFE_LP_DISABLED,
	LIFE_REFUSED,
	LIFE_NOT_LOADED,
	LIFE_NOT_BUILT,
	LIFE_REPLACED,
	LIFE_OVERRIDDEN,
	LIFE_UNSUPPORTED,
};

static const struct {
	const char *word;
	int exit;
} lifecycle_words[] = {
	[LIFE_ACTIVE]		= { "active",		EXIT_OK },
	[LIFE_TRANSITION]	= { "transition",	EXIT_TRANSITION },
	[LIFE_LP_DISABLED]	= { "livepatch-disabled", EXIT_LP_DISABLED },
	[LIFE_REFUSED]		= { "load-refused",	EXIT_REFUSED },
	[LIFE_NOT_LOADED]	= { "not-loaded",	EXIT_NOT_LOADED },
	[LIFE_NOT_BUILT]	= { "not-built",	EXIT_NOT_BUILT },
	[LIFE_REPLACED]		= { "replaced",		EXIT_REPLACED },
	[LIFE_OVERRIDDEN]	= { "overridden",	EXIT_OVERRIDDEN },
	[LIFE_UNSUPPORTED]	= { "unsupported",	EXIT_UNSUPPORTED },
};

/* The active mode in "none [integrity] confidentiality", or NULL. */
static const char *lockdown_mode(char *buf, size_t size)
{
	char *open, *close;

	if (!sysfs_attr_str(buf, size, "kernel/security/lockdown"))
		return NULL;
	open = strchr(buf, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!close || close == open + 1)
		return NULL;
	*close = '\0';
	return open + 1;
}

/* module file search (nftw has no user pointer) */
static char found_ko[PATH_MAX];

static int find_ko(const char *path, const struct stat *st, int flag,
		   struct FTW *ftw)
{
	static const char *const names[] = {
		"mmfix.ko", "mmfix.ko.xz", "mmfix.ko.zst", "mmfix.ko.gz"
	};
	size_t i;

	(void)st;
	if (flag != FTW_F || ftw->level > 8)
		return 0;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(path + ftw->base, names[i])) {
			snprintf(found_ko, sizeof(found_ko), "%s", path);
			return 1;
		}
	}
	return 0;
}

/*
 * The module file built for release, as modprobe would find it under
 * /lib/modules/RELEASE (or $MMFIXCTL_MODULES_DIR/RELEASE, tests only).
 */
static const char *module_file(const char *release)
{
	const char *dir = getenv("MMFIXCTL_MODULES_DIR");
	char path[PATH_MAX];

	if (!dir || !*dir)
		dir = "/lib/modules";
	found_ko[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", dir, release) >=
	    (int)sizeof(path))
		return NULL;
	/* FTW_PHYS: the build/ and source/ links are not followed */
	if (nftw(path, find_ko, 16, FTW_PHYS) != 1)
		return NULL;
	return found_ko;
}

struct klog {
	int err;		/* 0, or -errno opening the log */
	int level;		/* of the last "mmfix: " line, -1 if none */
	char msg[512];		/* its text */
};

/* "PRIO,SEQ,TS,FLAGS;text" (a /dev/kmsg record) */
static void klog_line(struct klog *kl, const char *line)
{
	const char *semi = strchr(line, ';');
	unsigned int prio;

	if (!semi || sscanf(line, "%u,", &prio) != 1)
		return;
	if (strncmp(semi + 1, MMFIX_NAME ": ", strlen(MMFIX_NAME ": ")))
		return;
	kl->level = (int)(prio & 7);
	snprintf(kl->msg, sizeof(kl->msg), "%s", semi + 1);
}

/*
 * The most recent line of the kernel log that starts with "mmfix: ":
 * /dev/kmsg (or $MMFIXCTL_KMSG, tests only), read without blocking.
 * /dev/kmsg returns one record per read(); a file may split lines
 * across reads, so a partial line is carried over.
 */
static void klog_read(struct klog *kl)
{
	const char *path = getenv("MMFIXCTL_KMSG");
	char buf[8192 + 1];
	size_t have = 0;
	char *nl, *start;
	ssize_t n;
	int fd;

	kl->err = 0;
	kl->level = -1;
	kl->msg[0] = '\0';
	if (!path || !*path)
		path = "/dev/kmsg";
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		kl->err = -errno;
		return;
	}
	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && (errno == EINTR || errno == EPIPE))
			continue;	/* EPIPE: records overwritten */
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		start = buf;
		while ((nl = strchr(start, '\n'))) {
			*nl = '\0';
			klog_line(kl, start);
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (have == sizeof(buf) - 1)	/* a line longer than buf */
			have = 0;
	}
	if (have) {
		buf[have] = '\0';
		klog_line(kl, buf);
	}
	close(fd);
}

struct life {
	enum lifecycle state;
	char reason[640];
	const char *ko;		/* module file, when not loaded */
};

static void life_not_loaded(struct life *lf, const char *release)
{
	struct klog kl;

	/* no mmfix.ko could load here: say so rather than "not built" */
	if (!kernel_supported(release, lf->reason, sizeof(lf->reason))) {
		lf->state = LIFE_UNSUPPORTED;
		lf->ko = NULL;
		return;
	}
	lf->ko = module_file(release);
	if (!lf->ko) {
		lf->state = LIFE_NOT_BUILT;
		snprintf(lf->reason, sizeof(lf->reason),
			 "no mmfix.ko for kernel %s (not built or not installed: see dkms status)",
			 release);
		return;
	}
	klog_read(&kl);
	if (kl.level >= 0 && kl.level <= 3) {	/* KERN_ERR or worse */
		lf->state = LIFE_REFUSED;
		snprintf(lf->reason, sizeof(lf->reason), "%s", kl.msg);
		return;
	}
	lf->state = LIFE_NOT_LOADED;
	snprintf(lf->reason, sizeof(lf->reason), "%s is installed but not loaded%s",
		 lf->ko, kl.err ? " (kernel log not readable: run as root to see whether a load was refused)" : "");
}

/*
 * enabled | transition | disabled | replaced: a livepatch transition in either
 * direction first (from its pre_unpatch callback on, the module's patch
 * file reads "disabled" while the unpatching transition still runs),
 * then the module's patch file, else the livepatch's enabled.
 */
static const char *patch_state(char *buf, size_t size)
{
	int en;

	if (sysfs_attr_bool("%s/transition", klp_dir()) == 1)
		return "transition";
	if (sysfs_attr_str(buf, size, MMFIX_SYSFS_DIR "/patch") &&
	    (!strcmp(buf, "enabled") || !strcmp(buf, "transition") ||
	     !strcmp(buf, "disabled") || !strcmp(buf, "replaced")))
		return buf;
	en = sysfs_attr_bool("%s/enabled", klp_dir());
	return en == 1 ? "enabled" : "disabled";
}

/*
 * The first fix that another livepatch, loaded later, overrides, into
 * @fix and @by; false if none.
 */
static bool fix_overridden(const struct fix_list *fl, const char **fix,
			   char *by, size_t size)
{
	unsigned int i;

	for (i = 0; i < fl->n; i++) {
		if (sysfs_attr_str(by, size, MMFIX_SYSFS_DIR "/fixes/%s/overridden_by",
				   fl->name[i]) && *by) {
			*fix = fl->name[i];
			return true;
		}
	}
	return false;
}

static void life_loaded(struct life *lf, const char *patch,
			const struct fix_list *fl)
{
	char by[SYSFS_READ_MAX];
	const char *fix = NULL;
	unsigned int i, on = 0, apply = 0;

	/* a fix that does not apply here is neither on nor one of M */
	for (i = 0; i < fl->n; i++) {
		if (sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/applicable",
				    fl->name[i]) == 0)
			continue;
		apply++;
		on += sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/enabled",
				      fl->name[i]) == 1;
	}
	if (!strcmp(patch, "transition")) {
		int target = klp_transition_target();

		lf->state = LIFE_TRANSITION;
		snprintf(lf->reason, sizeof(lf->reason),
			 "livepatch transition in progress%s (see '" BIN_NAME " transition')",
			 target < 0 ? "" : target ? " (patching)" : " (unpatching)");
	} else if (!strcmp(patch, "replaced")) {
		lf->state = LIFE_REPLACED;
		if (!sysfs_attr_str(by, sizeof(by), MMFIX_SYSFS_DIR "/replaced_by") ||
		    !*by)
			strcpy(by, "another livepatch");
		snprintf(lf->reason, sizeof(lf->reason),
			 "livepatch %.64s replaced mmfix's (atomic replace): no fix is in effect; run '" BIN_NAME " unload', and load mmfix again only if that livepatch is meant to run beside it",
			 by);
	} else if (!strcmp(patch, "disabled")) {
		lf->state = LIFE_LP_DISABLED;
		snprintf(lf->reason, sizeof(lf->reason),
			 "the module is loaded but its livepatch is disabled: no fix is in effect; run '" BIN_NAME " unload' and load mmfix again");
	} else if (fix_overridden(fl, &fix, by, sizeof(by))) {
		lf->state = LIFE_OVERRIDDEN;
		snprintf(lf->reason, sizeof(lf->reason),
			 "livepatch enabled, but livepatch %.64s, loaded later, runs instead of %.32s's functions: that fix has no effect",
			 by, fix);
	} else {
		lf->state = LIFE_ACTIVE;
		snprintf(lf->reason, sizeof(lf->reason),
			 "livepatch enabled, %u of %u fixes that apply here enabled",
			 on, apply);
	}
}

static void print_state(const struct life *lf)
{
	print_string("state", "state:          %s", lifecycle_words[lf->state].word);
	print_string("reason", " (%s)\n", lf->reason);
}

static int status_not_loaded(const struct life *lf, const char *release)
{
	char buf[256];
	const char *lock = lockdown_mode(buf, sizeof(buf));

	print_state(lf);
	print_bool_words("loaded", "module:         %s\n", 0, "loaded",
			 "not loaded", "-");
	print_string("module_file", NULL, lf->ko);
	print_string("running_kernel", "running kernel: %s\n", release);
	print_string("lockdown", NULL, lock);
	if (lock && (!strcmp(lock, "integrity") ||
		     !strcmp(lock, "confidentiality")))
		p_note("the kernel is locked down (%s): an unsigned module cannot be loaded; sign mmfix.ko with the DKMS MOK key (/var/lib/dkms/mok.pub, enrolled with mokutil --import)",
		       lock);
	print_close_object();
	return lifecycle_words[lf->state].exit;
}

void print_livepatch(void)
{
	int enabled = sysfs_attr_bool("%s/enabled", klp_dir());
	int transition = sysfs_attr_bool("%s/transition", klp_dir());

	print_open_object("livepatch");
	print_bool_words("enabled", "livepatch:      %s", enabled, "enabled", "disabled",
			 "not registered");
	print_bool_words("transition", "%s\n", transition,
			 ", transition in progress", "", "");
	print_close_object();
}

/* The livepatch line of status: DISABLED in capitals, it must show. */
static void print_patch(const char *patch)
{
	int tr = sysfs_attr_bool("%s/transition", klp_dir());

	print_open_object("livepatch");
	print_string("state", NULL, patch);
	print_bool("enabled", NULL, sysfs_attr_bool("%s/enabled", klp_dir()));
	print_bool("transition", NULL, tr);
	print_close_object();
	if (!strcmp(patch, "disabled"))
		print_text("livepatch:      DISABLED: no fix is in effect\n");
	else if (!strcmp(patch, "replaced"))
		print_text("livepatch:      REPLACED by another livepatch: no fix is in effect\n");
	else if (!strcmp(patch, "transition"))
		print_text("livepatch:      transition in progress\n");
	else
		print_text("livepatch:      %s\n", patch);
}

/*
 * The module's own word (/sys/kernel/mmfix/build) and who verified the
 * running build: the shipped list, this machine (mmfix-verify-build) or,
 * for a module whose list neither has, its own list.
 */
static void print_build(void)
{
	char buf[64], mver[64], dver[64], words[256];
	const char *b = sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/build");
	struct verified_by vb = { .by = VERIFIED_NONE };
	char rel[128];

	print_string("build", NULL, b);
	if (b && !strcmp(b, "verified"))
		build_verified_by(running_release(rel, sizeof(rel)),
				  proc_debian_version(dver, sizeof(dver)),
				  sysfs_attr_str(mver, sizeof(mver), MMFIX_SYSFS_DIR "/version"),
				  &vb);
	if (b && !strcmp(b, "unverified"))
		print_text("build:          unverified build (loaded with allow_unverified=1)\n");
	else if (b && !strcmp(b, "verified") && vb.by != VERIFIED_NONE)
		print_text("build:          %s\n", verified_by_words(&vb, words, sizeof(words)));
	else if (b && !strcmp(b, "verified"))
		print_text("build:          verified (the module's own list)\n");
	else if (b)
		print_text("build:          %s\n", b);
	if (b)
		print_verified_by(&vb);
}

/* stats/enabled and, where this module has them, the finer switches */
static void print_stats_state(void)
{
	static const struct { const char *key, *file, *label; } sw[] = {
		{ "lru_lock", "lru_lock/enabled", "lru_lock" },
		{ "mmap_lock", "mmap_lock/enabled", "mmap_lock" },
		{ "hold_time", "hold_time", "hold times" },
	};
	char path[PATH_MAX];
	bool first = true;
	size_t i;
	int v;

	if (sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR) ||
	    !sysfs_is_dir(path)) {
		print_string("stats", "lock stats:     %s\n", NULL);
		return;
	}
	print_open_object("stats");
	print_bool_words("enabled", "lock stats:     %s", sysfs_attr_bool(
			 MMFIX_STATS_SYSFS_DIR "/enabled"), "on", "off", "unknown");
	for (i = 0; i < ARRAY_SIZE(sw); i++) {
		if (sysfs_path(path, sizeof(path), MMFIX_STATS_SYSFS_DIR "/%s",
			       sw[i].file) || access(path, F_OK))
			continue;
		v = sysfs_read_bool(path);
		print_text("%s%s ", first ? " (" : ", ", sw[i].label);
		print_bool_words(sw[i].key, "%s", v, "on", "off", "unknown");
		first = false;
	}
	print_text("%s\n", first ? "" : ")");
	print_close_object();
}

/* fixes/FIX/functions: one name per line, when the module has it */
static void print_functions(const char *fix, int width)
{
	char buf[SYSFS_READ_MAX], path[PATH_MAX], *line, *save = NULL;
	bool first = true;

	if (sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR "/fixes/%s/functions",
		       fix) || sysfs_read(path, buf, sizeof(buf), NULL) < 0) {
		print_string("functions", NULL, NULL);
		return;
	}
	print_open_array("functions");
	print_text("  %-*s", width, "functions:");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		print_text("%s", first ? " " : ", ");
		print_string(NULL, "%s", line);
		first = false;
	}
	print_text("%s\n", first ? " -" : "");
	print_close_array();
}

static void print_counters(const struct counter *c, unsigned int n, int width)
{
	char label[COUNTER_NAME_MAX + 2], fmt[COUNTER_NAME_MAX + 16];
	unsigned int i;

	print_open_object("counters");
	for (i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "%.*s:", COUNTER_NAME_MAX, c[i].name);
		snprintf(fmt, sizeof(fmt), "  %-*s %%s\n", width, label);
		if (name_is_ns(c[i].name))
			print_ns(c[i].name, fmt, &c[i].val);
		else
			print_u64(c[i].name, fmt, &c[i].val);
	}
	print_close_object();
}

/*
 * fixes/FIX/owned_by or overridden_by: another livepatch's name; a text
 * line only when there is one, JSON "" when none, null for a module
 * without the file.
 */
static void print_other_livepatch(const char *fix, const char *file,
				  const char *fmt)
{
	char buf[SYSFS_READ_MAX];
	const char *v = sysfs_attr_str(buf, sizeof(buf),
				       MMFIX_SYSFS_DIR "/fixes/%s/%s", fix, file);

	print_string(file, v && *v ? fmt : NULL, v);
}

static void print_fix(const char *fix)
{
	struct counter c[MMFIX_MAX_COUNTERS];
	char reason[SYSFS_READ_MAX], fmt[64];
	int width = 13, pat, rec;	/* "applicable: " */
	unsigned int i, n;

	n = counters_read(fix, c, MMFIX_MAX_COUNTERS);
	for (i = 0; i < n; i++)
		if ((int)strlen(c[i].name) + 1 > width)
			width = (int)strlen(c[i].name) + 1;

	print_open_object(NULL);
	print_string("name", "fix %s:\n", fix);
#define LABEL(l) (snprintf(fmt, sizeof(fmt), "  %-*s %%s\n", width, l), fmt)
	print_bool("applicable", LABEL("applicable:"),
		   sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/applicable", fix));
	/* a module older than fixes= has no patched file: no line, null */
	pat = sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/patched", fix);
	print_bool("patched", pat < 0 ? NULL : LABEL("patched:"), pat);
	print_bool("enabled", LABEL("enabled:"),
		   sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/enabled", fix));
	rec = sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/recommended", fix);
	print_bool("recommended", rec < 0 ? NULL : LABEL("recommended:"), rec);
	print_string("reason", LABEL("reason:"),
		     sysfs_attr_str(reason, sizeof(reason),
				    MMFIX_SYSFS_DIR "/fixes/%s/reason", fix));
	print_other_livepatch(fix, "owned_by", LABEL("owned by:"));
	print_other_livepatch(fix, "overridden_by", LABEL("OVERRIDDEN by:"));
#undef LABEL
	print_functions(fix, width);
	print_counters(c, n, width);
	print_close_object();
}

unsigned int lifecycle_nr(void)
{
	return ARRAY_SIZE(lifecycle_words);
}

const char *lifecycle_word(unsigned int i)
{
	return i < ARRAY_SIZE(lifecycle_words) ? lifecycle_words[i].word : NULL;
}

unsigned int lifecycle_now(void)
{
	char pbuf[32], rel[128];
	struct fix_list fl;
	struct life lf = { 0 };

	if (!mmfix_loaded()) {
		life_not_loaded(&lf, running_release(rel, sizeof(rel)));
	} else {
		fix_list_read(&fl);
		life_loaded(&lf, patch_state(pbuf, sizeof(pbuf)), &fl);
	}
	return lf.state;
}

int do_status(int argc, char **argv)
{
	char buf[SYSFS_READ_MAX], pbuf[32], disp[80], rel[128];
	struct fix_list fl;
	const char *patch;
	struct life lf = { 0 };
	unsigned int i;

	if (argc)
		return usage_err("status takes no arguments (got '%s')",
				 arg_disp(argv[0], disp, sizeof(disp)));
	running_release(rel, sizeof(rel));

	print_open_object(NULL);
	if (!mmfix_loaded()) {
		life_not_loaded(&lf, rel);
		return status_not_loaded(&lf, rel);
	}
	fix_list_read(&fl);
	patch = patch_state(pbuf, sizeof(pbuf));
	life_loaded(&lf, patch, &fl);

	print_state(&lf);
	print_patch(patch);
	print_string("replaced_by", NULL,
		     sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/replaced_by"));
	/* mmfix or, after an upgrade, mmfix_alt: the name to modprobe -r */
	print_bool_words("loaded", "module:         %s", 1, "loaded", "not loaded",
			 "-");
	print_string("module", " (%s)\n", mmfix_module());
	print_string("version", "version:        %s\n",
		     sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/version"));
	print_build();
	print_string("kernel_series", "kernel series:  %s\n",
		     sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/kernel"));
	print_string("running_kernel", "running kernel: %s\n", rel);
	print_stats_state();

	print_open_array("fixes");
	for (i = 0; i < fl.n; i++)
		print_fix(fl.name[i]);
	print_close_array();
	print_close_object();
	return lifecycle_words[lf.state].exit;
}
