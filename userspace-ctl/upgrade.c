// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl upgrade: replace the loaded mmfix with another build without
 * a moment in which its fixes are off.  The new build is loaded under
 * the module name that is not loaded (mmfix or mmfix_alt) with
 * upgrade=1; its livepatch replaces the loaded one atomically and takes
 * over the switch states, counters and /sys/kernel/mmfix
 * (module/upgrade.c).  Then the old module is removed.  A transition
 * that does not finish in time is reversed: the old module stays, as it
 * was, and the new one is removed.
 *
 *   mmfixctl upgrade mmfix_alt
 *   mmfixctl upgrade mmfix_alt fixes populate_drain,khugepaged_scan
 *
 * "fixes LIST" (bpftool style: a keyword, then its value) chooses the
 * fixes the new module patches (its fixes= parameter); without it the
 * loaded module's patched set is kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmfixctl.h"

#define UPGRADE_TIMEOUT_DEFAULT	60
#define UPGRADE_REVERT_MAX_MS	30000
/* finit_module(2) flag of Linux 6.4+: the file is compressed */
#define UPGRADE_INIT_COMPRESSED	4
/* "fixes LIST": LIST is fix names separated by commas, or "all" */
#define UPGRADE_FIXES_KEYWORD	"fixes"
#define UPGRADE_FIXES_ALL	"all"
#define UPGRADE_PARAM_MAX	(sizeof("fixes=") + \
				 MMFIX_MAX_FIXES * (MMFIX_FIX_NAME_MAX + 1))

const char upgrade_help[] =
	"Replace the loaded mmfix with another build of it (e.g. the one a\n"
	"package upgrade just installed) without a moment in which its fixes\n"
	"are off.  MODULE is the module name that is not loaded (mmfix or\n"
	"mmfix_alt; every build installs both), loaded with modprobe; PATH a\n"
	"module file of that name.  The new module is loaded with upgrade=1:\n"
	"its livepatch replaces the loaded one atomically (livepatch atomic\n"
	"replace), starting with the same fixes on; the fix counters, the\n"
	"lock statistics switches and /sys/kernel/mmfix carry over (lock\n"
	"statistics counts start from zero).  Then the old module is removed.\n"
	"Needs root.  Refused while another livepatch is loaded, which atomic\n"
	"replace would disable too.  When SECONDS (default 60) pass before\n"
	"the transition has finished it is reversed: the loaded mmfix stays\n"
	"as it was, the new module is removed, and it exits 1.\n"
	"\n"
	"fixes LIST chooses the fixes the new module patches (its fixes=\n"
	"parameter): fix names separated by commas, or all for every fix\n"
	"that applies (no fixes= passed).  Without it the loaded module's\n"
	"patched set is kept (none passed when it patches every fix that\n"
	"applies, or has no patched files).\n"
	"Refused, loading nothing, when LIST names an unknown fix or leaves\n"
	"out a fix that is on (disable it first).\n"
	"\n"
	"  --timeout SECONDS  how long to wait in all, 1 to 86400\n";

struct upgrade_ctx {
	const char *from;	/* the loaded module */
	const char *to;		/* the other name */
	/* the new module's fixes=; none passed when fixes.n is 0 */
	struct fix_list fixes;
	char param[UPGRADE_PARAM_MAX];	/* "fixes=a,b", or "" */
	uint64_t start;
	uint64_t deadline;
};

static bool is_path(const char *arg)
{
	size_t len = strlen(arg);

	return strchr(arg, '/') || (len > 3 && strstr(arg, ".ko"));
}

static char *klp_of(const char *mod, const char *file, char *buf, size_t size)
{
	if (sysfs_path(buf, size, MMFIX_KLP_SYSFS_ROOT "/%s%s%s", mod,
		       file ? "/" : "", file ? file : ""))
		buf[0] = '\0';
	return buf;
}

/* Every livepatch other than @mod: atomic replace would disable it. */
static int other_livepatch(const char *mod, char *name, size_t size)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int found = 0;

	if (sysfs_path(path, sizeof(path), MMFIX_KLP_SYSFS_ROOT))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, mod))
			continue;
		snprintf(name, size, "%s", de->d_name);
		found = 1;
		break;
	}
	closedir(d);
	return found;
}

static int load_path(const char *path, const struct upgrade_ctx *ctx)
{
	char params[sizeof("upgrade=1 ") + UPGRADE_PARAM_MAX];
	int fd, ret, flags = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		p_err("upgrade: cannot open %s: %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (strstr(path, ".ko."))	/* .ko.xz, .ko.zst, .ko.gz */
		flags = UPGRADE_INIT_COMPRESSED;
	snprintf(params, sizeof(params), "upgrade=1%s%s",
		 ctx->param[0] ? " " : "", ctx->param);
	ret = syscall(SYS_finit_module, fd, params, flags);
	close(fd);
	if (!ret)
		return 0;
	if (errno == EEXIST)
		p_err("upgrade: %s is a module already loaded; give the one named %s",
		      path, ctx->to);
	else
		p_err("upgrade: loading %s %s failed: %s (the kernel log says why: dmesg | grep mmfix)",
		      path, params, strerror(errno));
	return EXIT_RUNTIME;
}

static int load_module(const struct upgrade_ctx *ctx)
{
	const char *argv[] = { "modprobe", "--", ctx->to, "upgrade=1",
			       ctx->param[0] ? ctx->param : NULL, NULL };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		p_err("upgrade: fork: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	if (!pid) {
		/* stdout carries our output (JSON): modprobe talks on stderr */
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execvp("modprobe", (char *const *)argv);
		fprintf(stderr, "modprobe: %s\n", strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		p_err("upgrade: modprobe %s upgrade=1%s%s failed (the kernel log says why: dmesg | grep mmfix)",
		      ctx->to, ctx->param[0] ? " " : "", ctx->param);
		return EXIT_RUNTIME;
	}
	return 0;
}

/* Waits for @mod's livepatch transition to end; 0, or 1 on timeout. */
static int wait_transition(const char *mod, uint64_t deadline)
{
	char path[PATH_MAX];

	while (sysfs_read_bool(klp_of(mod, "transition", path, sizeof(path))) != 0) {
		if (now_ms() >= deadline)
			return 1;
		sleep_ms(POLL_MS);
	}
	return 0;
}

static bool klp_gone(const char *mod)
{
	char path[PATH_MAX];

	return !sysfs_is_dir(klp_of(mod, NULL, path, sizeof(path)));
}

/* Timed out: reverse the new patch, so the old one stays whole. */
static int upgrade_revert(struct upgrade_ctx *ctx, unsigned int timeout)
{
	uint64_t deadline = now_ms() + UPGRADE_REVERT_MAX_MS;
	char path[PATH_MAX];
	int ret;

	ret = sysfs_write(klp_of(ctx->to, "enabled", path, sizeof(path)), "0\n");
	if (ret && ret != -EINVAL) {
		p_err("upgrade: the transition to %s did not finish in %u s and cannot be reversed (write %s: %s)",
		      ctx->to, timeout, path, strerror(-ret));
		return EXIT_RUNTIME;
	}
	while (!klp_gone(ctx->to) && now_ms() < deadline)
		sleep_ms(POLL_MS);
	if (!klp_gone(ctx->to) || module_delete(ctx->to, deadline)) {
		p_err("upgrade: the transition to %s did not finish in %u s; reversing it has not finished either: see '" BIN_NAME " transition'",
		      ctx->to, timeout);
		return EXIT_RUNTIME;
	}
	p_err("upgrade: the transition to %s did not finish in %u s (see '" BIN_NAME " transition' for what holds it up); reversed: %s runs on as before, %s was removed",
	      ctx->to, timeout, ctx->from, ctx->to);
	return EXIT_RUNTIME;
}

/* The fixes switched on, "a b c". */
static void fixes_enabled(char *buf, size_t size)
{
	struct fix_list fl;
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	if (fix_list_read(&fl))
		return;
	for (i = 0; i < fl.n && n < size; i++)
		if (sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/enabled",
				    fl.name[i]) == 1)
			n += snprintf(buf + n, size - n, "%s%s", n ? " " : "",
				      fl.name[i]);
}

/*
 * LIST of "fixes LIST" into ctx->fixes: "all" leaves it empty (no fixes=,
 * every fix that applies); otherwise fix names this mmfixctl or the
 * loaded module knows, each once, separated by commas.
 */
static int fixes_parse(struct upgrade_ctx *ctx, const char *list)
{
	char known[MMFIX_MAX_FIXES * (MMFIX_FIX_NAME_MAX + 2)];
	char piece[MMFIX_FIX_NAME_MAX + 2], disp[80];
	const char *p = list, *end;
	struct fix_list kl;
	size_t len;

	ctx->fixes.n = 0;
	if (!strcmp(list, UPGRADE_FIXES_ALL))
		return 0;
	fix_list_known(&kl);
	for (;; p = end + 1) {
		end = strchrnul(p, ',');
		len = (size_t)(end - p);
		if (!len)
			return usage_err("upgrade: fixes '%s': an empty fix name (LIST is fix names separated by commas, or " UPGRADE_FIXES_ALL ")",
					 arg_disp(list, disp, sizeof(disp)));
		snprintf(piece, sizeof(piece), "%.*s",
			 (int)(len < sizeof(piece) ? len : sizeof(piece) - 1), p);
		if (len > MMFIX_FIX_NAME_MAX || fix_list_find(&kl, piece) < 0) {
			fix_list_join(&kl, known, sizeof(known));
			return usage_err("upgrade: fixes: unknown fix '%s%s' (LIST is fix names separated by commas, or " UPGRADE_FIXES_ALL "; known fixes: %s)",
					 arg_disp(piece, disp, sizeof(disp)),
					 len > MMFIX_FIX_NAME_MAX ? "..." : "", known);
		}
		if (fix_list_find(&ctx->fixes, piece) >= 0)
			return usage_err("upgrade: fixes: %s is named twice", piece);
		strcpy(ctx->fixes.name[ctx->fixes.n++], piece);
		if (!*end)
			return 0;
	}
}

/*
 * No "fixes LIST": the fixes the loaded module patches, if it says and
 * leaves out one that applies; none (every fix that applies, also one
 * the new build adds) when it was loaded without fixes= or as if.
 */
static void fixes_patched(struct upgrade_ctx *ctx)
{
	bool left_out = false;
	struct fix_list fl;
	unsigned int i;
	int patched;

	ctx->fixes.n = 0;
	fix_list_read(&fl);
	for (i = 0; i < fl.n; i++) {
		patched = sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/patched",
					  fl.name[i]);
		if (patched == 1)
			strcpy(ctx->fixes.name[ctx->fixes.n++], fl.name[i]);
		else if (!patched && fix_left_out_by_fixes(fl.name[i]))
			left_out = true;
	}
	if (!left_out)
		ctx->fixes.n = 0;
}

/*
 * A fix that is on must be patched by the new module: it refuses the
 * upgrade otherwise (EINVAL); say why before anything is loaded.
 */
static int fixes_keep_enabled(const struct upgrade_ctx *ctx)
{
	struct fix_list fl;
	unsigned int i;

	if (!ctx->fixes.n)	/* every fix that applies */
		return 0;
	fix_list_read(&fl);
	for (i = 0; i < fl.n; i++) {
		if (fix_list_find(&ctx->fixes, fl.name[i]) >= 0 ||
		    sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/enabled",
				    fl.name[i]) != 1)
			continue;
		p_err("upgrade: fix %s is on but not in fixes %s: the new module would not patch it; switch it off first ('" BIN_NAME " disable %s') or add it to LIST; nothing was changed",
		      fl.name[i], ctx->param + strlen("fixes="), fl.name[i]);
		return EXIT_RUNTIME;
	}
	return 0;
}

/* ctx->param: "fixes=a,b,c" from ctx->fixes, or "" for none. */
static void fixes_param(struct upgrade_ctx *ctx)
{
	size_t n = 0;
	unsigned int i;

	ctx->param[0] = '\0';
	for (i = 0; i < ctx->fixes.n && n < sizeof(ctx->param); i++)
		n += snprintf(ctx->param + n, sizeof(ctx->param) - n, "%s%s",
			      i ? "," : "fixes=", ctx->fixes.name[i]);
}

static int upgrade_check(struct upgrade_ctx *ctx, const char *arg)
{
	char path[PATH_MAX], other[256];

	if (geteuid() != 0) {
		p_err("upgrade: root is needed to load and remove modules (run as root or with sudo)");
		return EXIT_RUNTIME;
	}
	if (!mmfix_loaded()) {
		p_err("upgrade: mmfix is not loaded, there is nothing to upgrade; load it ('modprobe mmfix')");
		return EXIT_RUNTIME;
	}
	ctx->from = mmfix_module();
	ctx->to = mmfix_other_module();
	if (!is_path(arg) && strcmp(arg, ctx->to)) {
		if (!strcmp(arg, ctx->from))
			return usage_err("upgrade: %s is the module loaded; upgrade to the other name, %s",
					 arg, ctx->to);
		return usage_err("upgrade: MODULE must be %s (the module name not loaded), or give a PATH",
				 ctx->to);
	}
	if (sysfs_read_bool(klp_of(ctx->from, "enabled", path, sizeof(path))) != 1 ||
	    sysfs_read_bool(klp_of(ctx->from, "transition", path, sizeof(path))) != 0) {
		p_err("upgrade: the %s livepatch is disabled or in a transition; upgrade when it is fully enabled ('" BIN_NAME " status')",
		      ctx->from);
		return EXIT_RUNTIME;
	}
	if (other_livepatch(ctx->from, other, sizeof(other))) {
		p_err("upgrade: livepatch %s is loaded too; atomic replace would disable it, so nothing was changed",
		      other);
		return EXIT_RUNTIME;
	}
	return 0;
}

/* PATH-OR-MODULE [fixes LIST]: *list is LIST, or NULL without it. */
static int upgrade_args(int argc, char **argv, const char **list)
{
	char disp[80];

	*list = NULL;
	if (argc < 1)
		return usage_err("upgrade: missing PATH-OR-MODULE (%s or %s, or a .ko file)",
				 MMFIX_NAME, MMFIX_ALT_NAME);
	if (argc > 1 && strcmp(argv[1], UPGRADE_FIXES_KEYWORD))
		return usage_err("upgrade: unexpected argument '%s' (after PATH-OR-MODULE only '" UPGRADE_FIXES_KEYWORD " LIST')",
				 arg_disp(argv[1], disp, sizeof(disp)));
	if (argc == 2)
		return usage_err("upgrade: " UPGRADE_FIXES_KEYWORD ": missing LIST (fix names separated by commas, or " UPGRADE_FIXES_ALL ")");
	if (argc > 3)
		return usage_err("upgrade: unexpected argument '%s'",
				 arg_disp(argv[3], disp, sizeof(disp)));
	if (argc == 3)
		*list = argv[2];
	return 0;
}

int do_upgrade(int argc, char **argv)
{
	struct upgrade_ctx ctx = { 0 };
	unsigned int timeout = UPGRADE_TIMEOUT_DEFAULT, i;
	char from_ver[64] = "", to_ver[64] = "", enabled[512] = "";
	const char *list;
	uint64_t waited;
	int ret;

	ret = upgrade_args(argc, argv, &list);
	if (!ret && list)
		ret = fixes_parse(&ctx, list);
	if (ret)
		return ret;
	if (fake_delete_requested() && on_real_sysfs())
		return usage_err("MMFIXCTL_FAKE_DELETE=1 is for tests on a fake sysfs tree (--root DIR), not on a real sysfs");
	if (opts.timeout_set)
		timeout = opts.timeout;
	ret = upgrade_check(&ctx, argv[0]);
	if (ret)
		return ret;
	if (!list)
		fixes_patched(&ctx);
	fixes_param(&ctx);
	ret = fixes_keep_enabled(&ctx);
	if (ret)
		return ret;
	sysfs_attr_str(from_ver, sizeof(from_ver), "%s",
		       MMFIX_SYSFS_DIR "/version");

	ctx.start = now_ms();
	ctx.deadline = ctx.start + (uint64_t)timeout * 1000;
	ret = is_path(argv[0]) ? load_path(argv[0], &ctx) : load_module(&ctx);
	if (ret)
		return ret;
	if (wait_transition(ctx.to, ctx.deadline))
		return upgrade_revert(&ctx, timeout);
	if (strcmp(mmfix_module(), ctx.to)) {
		p_err("upgrade: %s finished its transition but did not take /sys/" MMFIX_SYSFS_DIR " over; see the kernel log",
		      ctx.to);
		return EXIT_RUNTIME;
	}
	/* the replaced patch goes asynchronously, then its module can */
	while (!klp_gone(ctx.from) && now_ms() < ctx.deadline + 10000)
		sleep_ms(POLL_MS);
	/* tests: the fake modprobe has replaced the tree, nothing to remove */
	ret = fake_delete_requested() ? 0 :
	      module_delete(ctx.from, ctx.deadline + 10000);
	if (ret)
		return ret;

	waited = now_ms() - ctx.start;
	sysfs_attr_str(to_ver, sizeof(to_ver), "%s", MMFIX_SYSFS_DIR "/version");
	fixes_enabled(enabled, sizeof(enabled));
	print_open_object(NULL);
	print_string("from_module", "upgraded %s", ctx.from);
	print_string("from_version", " %s", from_ver);
	print_string("to_module", " to %s", ctx.to);
	print_string("to_version", " %s", to_ver);
	/* fixes= as passed; null: none (every fix that applies) */
	if (ctx.fixes.n) {
		print_text(" (fixes=");
		print_open_array("fixes");
		for (i = 0; i < ctx.fixes.n; i++)
			print_string(NULL, i ? ",%s" : "%s", ctx.fixes.name[i]);
		print_close_array();
		print_text(")");
	} else {
		print_string("fixes", NULL, NULL);
	}
	print_u64("waited_ms", " in %s ms", &waited);
	print_string("enabled", "; fixes on: %s\n", enabled[0] ? enabled : "none");
	print_close_object();
	return EXIT_OK;
}
