// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl unload: disable the livepatch, wait for the transition and for
 * /sys/kernel/livepatch/mmfix to go away, then delete_module(2), all
 * within one deadline.  A timeout leaves the module loaded and says so;
 * a transition still running then is reversed (never forced), so the
 * livepatch is left fully enabled, not half way.
 *
 * delete_module() is only called when the tree is a real sysfs mount.  On
 * a fake tree (--root) nothing is removed and mmfixctl says it would
 * remove the module, unless MMFIXCTL_FAKE_DELETE=1 (tests only, refused
 * on a real sysfs) asks it to remove the fake <root>/kernel/mmfix tree.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "mmfixctl.h"

#define UNLOAD_TIMEOUT_DEFAULT	30
#define REPORT_AFTER_MS		2000
#define REPORT_TASKS_MAX	8
#define REVERT_WAIT_MAX_MS	10000

const char unload_help[] =
	"Disable the mmfix livepatch (write 0 to\n"
	"/sys/kernel/livepatch/mmfix/enabled), wait until its transition has\n"
	"finished and the livepatch is gone, then remove the module with\n"
	"delete_module(2).  Needs root.  When SECONDS (default 30) pass first\n"
	"it stops waiting and exits 1, leaving the module loaded.  If the\n"
	"transition was still in progress, it lists the tasks holding it up\n"
	"(see \"transition\") and reverses it, so that the livepatch ends up\n"
	"fully enabled again rather than half way; run it again once those\n"
	"tasks have moved on.  SIGINT, SIGTERM and SIGHUP act as the timeout\n"
	"while the transition runs (it is reversed); once it has finished they\n"
	"let the removal finish.  Either way it says what happened.  With\n"
	"no mmfix loaded there is nothing to do: it says so and exits 0.\n"
	"\n"
	"  --timeout SECONDS  how long to wait in all, 1 to 86400\n";

struct unload_ctx {
	const char *mod;	/* mmfix or mmfix_alt (MMFIX_SYSFS_DIR/module) */
	uint64_t start;
	uint64_t deadline;
	unsigned int timeout;
	bool reported;
};

/*
 * SIGINT/SIGTERM/SIGHUP while unloading: never leave the patch half way.
 * During the transition they act like the timeout (it is reversed);
 * once it has finished, the removal is completed.
 */
static volatile sig_atomic_t unload_signal;

static void on_unload_signal(int sig)
{
	unload_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_unload_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static bool klp_dir_exists(void)
{
	char path[PATH_MAX];

	return !sysfs_path(path, sizeof(path), "%s", klp_dir()) &&
	       sysfs_is_dir(path);
}

/* Writes 0 to the livepatch's enabled file unless it already reads 0. */
static int klp_disable(void)
{
	char path[PATH_MAX];
	int ret;

	if (sysfs_attr_bool("%s/enabled", klp_dir()) != 1)
		return 0;	/* disabled, or already gone */
	ret = sysfs_path(path, sizeof(path), "%s/enabled", klp_dir());
	if (!ret)
		ret = sysfs_write(path, "0\n");
	/* EINVAL: someone else disabled it in between. */
	if (ret == -EINVAL &&
	    sysfs_attr_bool("%s/enabled", klp_dir()) != 1)
		ret = 0;
	if (ret) {
		p_err("cannot disable the livepatch: write %s: %s", path,
		      strerror(-ret));
		return EXIT_RUNTIME;
	}
	return 0;
}

/* After a while, say once which tasks the transition waits for. */
static void report_progress(struct unload_ctx *ctx)
{
	static struct blockers b;
	char list[REPORT_TASKS_MAX * 40] = "";
	unsigned int i;
	size_t len = 0;

	ctx->reported = true;
	blockers_find(0, &b);
	for (i = 0; i < b.n && i < REPORT_TASKS_MAX && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s (%.16s)",
				i ? ", " : "", b.task[i].tid, b.task[i].comm);
	if (b.total)
		p_progress("livepatch transition still running; tasks not yet switched: %s%s",
			   list, b.total > i ? ", ..." : "");
	else
		p_progress("livepatch transition still running, waiting up to %u s",
			   ctx->timeout);
}

/*
 * The unpatch transition did not finish in time: name the tasks holding
 * it up and reverse it, so that the livepatch is fully enabled again
 * rather than left half way.
 */
static int transition_timed_out(struct unload_ctx *ctx)
{
	static struct blockers b;
	int target = klp_transition_target();
	uint64_t wait_ms;

	if (target < 0)		/* finished after all */
		return 0;
	blockers_find(target, &b);
	print_open_object(NULL);
	blockers_print(&b);
	if (klp_revert(target))
		return EXIT_RUNTIME;
	if (unload_signal) {
		print_string("interrupted", NULL, strsignal(unload_signal));
		wait_ms = REVERT_WAIT_MAX_MS;
		if (klp_wait_idle(now_ms() + wait_ms)) {
			print_bool("reverted", NULL, 0);
			p_err("interrupted (%s) during the livepatch transition; reversing it did not finish in %llu s either (see '" BIN_NAME " transition')",
			      strsignal(unload_signal),
			      (unsigned long long)(wait_ms / 1000));
			return EXIT_RUNTIME;
		}
		print_bool("reverted", NULL, 1);
		p_err("interrupted (%s) during the livepatch transition: reversed it, the livepatch is fully %s again and the module stays loaded",
		      strsignal(unload_signal), target ? "disabled" : "enabled");
		return EXIT_RUNTIME;
	}
	wait_ms = (uint64_t)ctx->timeout * 1000;
	if (wait_ms > REVERT_WAIT_MAX_MS)
		wait_ms = REVERT_WAIT_MAX_MS;
	if (klp_wait_idle(now_ms() + wait_ms)) {
		print_bool("reverted", NULL, 0);
		p_err("timed out after %u s: the livepatch transition is still in progress (%u task(s) not yet switched); reversing it did not finish in %llu s either (see '" BIN_NAME " transition')",
		      ctx->timeout, b.total,
		      (unsigned long long)(wait_ms / 1000));
		return EXIT_RUNTIME;
	}
	print_bool("reverted", NULL, 1);
	p_err("timed out after %u s: the livepatch transition is still in progress (%u task(s) not yet switched); reversed it: the livepatch is fully %s again and the module stays loaded; once those tasks have moved on, run '" BIN_NAME " unload' again",
	      ctx->timeout, b.total, target ? "disabled" : "enabled");
	return EXIT_RUNTIME;
}

static int wait_transition(struct unload_ctx *ctx)
{
	while (klp_transition_target() >= 0) {
		if (now_ms() >= ctx->deadline || unload_signal)
			return transition_timed_out(ctx);
		if (!ctx->reported && now_ms() - ctx->start >= REPORT_AFTER_MS)
			report_progress(ctx);
		sleep_ms(POLL_MS);
	}
	return 0;
}

static int wait_klp_gone(struct unload_ctx *ctx)
{
	while (klp_dir_exists()) {
		if (now_ms() >= ctx->deadline) {
			p_err("timed out after %u s waiting for /sys/%s to go away; the module is still loaded (run '" BIN_NAME " unload' again)",
			      ctx->timeout, klp_dir());
			return EXIT_RUNTIME;
		}
		sleep_ms(POLL_MS);
	}
	return 0;
}

/*
 * delete_module(2) of @mod, retried while it is still in use until
 * @deadline (ms, now_ms()); gone already is fine.  Also upgrade's.
 */
int module_delete(const char *mod, uint64_t deadline)
{
	int err;

	for (;;) {
		if (syscall(SYS_delete_module, mod, O_NONBLOCK) == 0)
			return 0;
		err = errno;
		if (err == ENOENT)	/* gone already */
			return 0;
		if ((err != EAGAIN && err != EBUSY) || now_ms() >= deadline)
			break;
		sleep_ms(POLL_MS);
	}
	p_err("cannot remove module %s: %s%s", mod, strerror(err),
	      err == EAGAIN || err == EBUSY ? " (still in use; timed out)" : "");
	return EXIT_RUNTIME;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -1 : 0;
}

/* Test-only stand-in for delete_module(): remove <root>/kernel/mmfix. */
static int fake_delete(void)
{
	char path[PATH_MAX];

	if (sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR) ||
	    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT)) {
		p_err("MMFIXCTL_FAKE_DELETE: cannot remove %s: %s", path,
		      strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}

bool fake_delete_requested(void)
{
	const char *env = getenv("MMFIXCTL_FAKE_DELETE");

	return env && !strcmp(env, "1");
}

/* True when path is on a real sysfs, where the fake delete must not run. */
bool on_real_sysfs(void)
{
	char path[PATH_MAX];
	struct statfs sfs;

	return sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR) ||
	       (statfs(path, &sfs) == 0 && sfs.f_type == SYSFS_MAGIC) ||
	       (statfs(sysfs_root, &sfs) == 0 && sfs.f_type == SYSFS_MAGIC);
}

enum removal { REMOVE_MODULE, REMOVE_FAKE_TREE, REMOVE_NOTHING };

static const char *const removal_json[] = {
	[REMOVE_MODULE] = "delete_module",
	[REMOVE_FAKE_TREE] = "fake_tree",
	[REMOVE_NOTHING] = "none",
};

static const char *const removal_text[] = {
	[REMOVE_MODULE] = "",
	[REMOVE_FAKE_TREE] = " (MMFIXCTL_FAKE_DELETE: removed the fake tree instead of calling delete_module)",
	[REMOVE_NOTHING] = " (--root is not a sysfs mount: would call delete_module(\"%s\"))",
};

int do_unload(int argc, char **argv)
{
	struct unload_ctx ctx = { .timeout = UNLOAD_TIMEOUT_DEFAULT };
	bool fake = fake_delete_requested(), real = on_real_sysfs();
	enum removal how;
	uint64_t waited;
	char disp[80];
	int ret;

	if (argc)
		return usage_err("unload: unexpected argument '%s'",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if (opts.timeout_set)
		ctx.timeout = opts.timeout;
	if (fake && real)
		return usage_err("MMFIXCTL_FAKE_DELETE=1 is for tests on a fake sysfs tree (--root DIR), not on a real sysfs");
	/* as systemctl stop of a stopped unit: nothing to do is success */
	if (!mmfix_loaded()) {
		waited = 0;
		print_open_object(NULL);
		print_bool("unloaded", NULL, 0);
		print_u64("waited_ms", NULL, &waited);
		print_string("removal", NULL, "not_loaded");
		print_text("mmfix is not loaded: nothing to unload\n");
		print_close_object();
		return EXIT_OK;
	}
	if (geteuid() != 0) {
		p_err("unload: root is needed to unload the module (run as root or with sudo)");
		return EXIT_RUNTIME;
	}
	ctx.mod = mmfix_module();

	catch_signals();
	ctx.start = now_ms();
	ctx.deadline = ctx.start + (uint64_t)ctx.timeout * 1000;
	ret = klp_disable();
	if (!ret)
		ret = wait_transition(&ctx);
	if (!ret)
		ret = wait_klp_gone(&ctx);
	how = real ? REMOVE_MODULE : fake ? REMOVE_FAKE_TREE : REMOVE_NOTHING;
	if (!ret && how == REMOVE_MODULE)
		ret = module_delete(ctx.mod, ctx.deadline);
	else if (!ret && how == REMOVE_FAKE_TREE)
		ret = fake_delete();
	if (ret)
		return ret;

	waited = now_ms() - ctx.start;
	print_open_object(NULL);
	if (unload_signal) {
		print_string("interrupted", NULL, strsignal(unload_signal));
		p_note("interrupted (%s) after the livepatch was disabled: finished the unload rather than leave it half way",
		       strsignal(unload_signal));
	}
	print_bool_words("unloaded", "mmfix %s", how != REMOVE_NOTHING,
			 "unloaded", "not removed", "-");
	print_u64("waited_ms", " after %s ms", &waited);
	print_string("removal", NULL, removal_json[how]);
	/* a format: "%s" in the REMOVE_NOTHING text is the module's name */
	print_text(removal_text[how], ctx.mod);
	print_text("\n");
	print_close_object();
	return EXIT_OK;
}
