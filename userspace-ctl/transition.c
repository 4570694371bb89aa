// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl transition: the livepatch transition in progress, if any, and
 * the tasks holding it up; optionally wait for it to end, reverse it, or
 * have the kernel signal the tasks.
 *
 * A transition switches each task to the new patch state once no
 * function the patch changes is on its stack.  A task asleep inside one
 * (say, blocked on a userfaultfd fault during a populate) holds the
 * whole transition up until it wakes.  Until switched, a task keeps the
 * initial state in /proc/PID/task/TID/patch_state: 0 while patching, 1
 * while unpatching.  The kernel itself sends such tasks a fake signal
 * every 15 s; that wakes interruptible sleeps only.  Kernels before 5.1
 * had a livepatch "signal" file to do it at once; --signal writes it
 * where it exists.
 *
 * MMFIXCTL_PROC_ROOT (tests only) stands in for /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mmfixctl.h"

#define REVERT_TIMEOUT_DEFAULT	30

char proc_root[PATH_MAX] = "/proc";

const char transition_help[] =
	"Show whether a livepatch transition is in progress, its direction\n"
	"(patching or unpatching), and the tasks that have not switched yet,\n"
	"with their state and kernel stack (stacks need root).  A task asleep\n"
	"in a function the patch changes holds the transition up until it\n"
	"wakes.  Exits 0; with --timeout or --revert, exits 1 if a transition\n"
	"is still in progress at the end.\n"
	"\n"
	"  --timeout SECONDS  wait up to SECONDS (1 to 86400) for it to end\n"
	"  --signal           make the kernel signal the tasks now, where it\n"
	"                     has /sys/kernel/livepatch/mmfix/signal (root);\n"
	"                     otherwise say that it signals them every 15 s\n"
	"  --revert           reverse the transition (root): patching goes back\n"
	"                     to fully unpatched, unpatching to fully patched;\n"
	"                     waits for that (default 30 s, or --timeout)\n";

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int klp_transition_target(void)
{
	if (sysfs_attr_bool("%s/transition", klp_dir()) != 1)
		return -1;
	/*
	 * enabled reads the target, except for a moment at the start: the
	 * livepatch core turns it only after klp_start_transition(), under
	 * klp_mutex, so a reader racing the write that starts a transition
	 * sees the old value.  Once that write has returned (unload and
	 * revert read after their own writes) it is the target.
	 */
	return sysfs_attr_bool("%s/enabled", klp_dir()) == 1;
}

int klp_wait_idle(uint64_t deadline)
{
	while (klp_transition_target() >= 0) {
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		sleep_ms(POLL_MS);
	}
	return 0;
}

int klp_revert(int target)
{
	char path[PATH_MAX];
	int ret;

	ret = sysfs_path(path, sizeof(path), "%s/enabled", klp_dir());
	if (!ret)
		ret = sysfs_write(path, target ? "0\n" : "1\n");
	if (ret)
		p_err("cannot reverse the livepatch transition: write %s: %s",
		      path, strerror(-ret));
	return ret;
}

/* snprintf() that says whether it all fit: 0 or -ENAMETOOLONG. */
static int __printf(3, 4) path_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static bool numeric(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s) && strlen(s) < 12;
}

/* "pid (comm) S ..." -> "S" (comm may hold spaces and parentheses). */
static void task_state(const char *dir, char *state, size_t size)
{
	char path[PATH_MAX], buf[512], *close;

	snprintf(state, size, "?");
	if (path_fmt(path, sizeof(path), "%s/stat", dir) ||
	    sysfs_read(path, buf, sizeof(buf), NULL) < 0)
		return;
	close = strrchr(buf, ')');
	if (close && close[1] == ' ' && close[2] && close[2] != ' ')
		snprintf(state, size, "%c", close[2]);
}

/* Kernel stack frames without their "[<0>] " prefix. */
static int task_stack(const char *dir, struct blocker *t)
{
	char path[PATH_MAX], buf[SYSFS_READ_MAX], *line, *save = NULL, *f;
	long len;

	t->nframes = 0;
	if (path_fmt(path, sizeof(path), "%s/stack", dir))
		return -ENAMETOOLONG;
	len = sysfs_read(path, buf, sizeof(buf), NULL);
	if (len < 0)
		return (int)len;
	for (line = strtok_r(buf, "\n", &save);
	     line && t->nframes < STACK_FRAMES_MAX;
	     line = strtok_r(NULL, "\n", &save)) {
		f = line;
		if (f[0] == '[' && (f = strstr(line, "] ")))
			f += 2;
		else
			f = line;
		snprintf(t->frame[t->nframes++], sizeof(t->frame[0]), "%s", f);
	}
	return 0;
}

static void blocker_add(struct blockers *b, const char *pid, const char *tid,
			const char *dir)
{
	struct blocker *t;
	char path[PATH_MAX];

	b->total++;
	if (b->n >= BLOCKERS_MAX)
		return;
	t = &b->task[b->n++];
	memset(t, 0, sizeof(*t));
	path_fmt(t->pid, sizeof(t->pid), "%s", pid);
	path_fmt(t->tid, sizeof(t->tid), "%s", tid);
	if (path_fmt(path, sizeof(path), "%s/comm", dir) ||
	    sysfs_read(path, t->comm, sizeof(t->comm), NULL) < 0)
		snprintf(t->comm, sizeof(t->comm), "?");
	task_state(dir, t->state, sizeof(t->state));
	t->stack_err = task_stack(dir, t);
}

void blockers_find(int target, struct blockers *b)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[16];
	const char *initial = target ? "0" : "1";
	struct dirent *pd, *td;
	DIR *proc, *task;

	memset(b, 0, sizeof(*b));
	proc = opendir(proc_root);
	while (proc && (pd = readdir(proc))) {
		if (!numeric(pd->d_name))
			continue;
		if (path_fmt(dir, sizeof(dir), "%s/%s/task", proc_root,
			     pd->d_name))
			continue;
		task = opendir(dir);
		while (task && (td = readdir(task))) {
			if (!numeric(td->d_name))
				continue;
			if (path_fmt(dir, sizeof(dir), "%s/%s/task/%s", proc_root,
				     pd->d_name, td->d_name) ||
			    path_fmt(path, sizeof(path), "%s/patch_state", dir) ||
			    sysfs_read(path, buf, sizeof(buf), NULL) < 0 ||
			    strcmp(buf, initial))
				continue;
			blocker_add(b, pd->d_name, td->d_name, dir);
		}
		if (task)
			closedir(task);
	}
	if (proc)
		closedir(proc);
}

void blockers_print(const struct blockers *b)
{
	const struct blocker *t;
	uint64_t pid, tid, total = b->total;
	unsigned int i, f;
	bool denied = false;

	print_u64("tasks_pending", "tasks not yet switched: %s\n", &total);
	print_open_array("tasks");
	for (i = 0; i < b->n; i++) {
		t = &b->task[i];
		print_open_object(NULL);
		print_u64("pid", "  pid %s", parse_u64(t->pid, &pid) ? NULL : &pid);
		print_u64("tid", " tid %s", parse_u64(t->tid, &tid) ? NULL : &tid);
		print_string("comm", " (%s)", t->comm);
		print_string("state", " state %s\n", t->state);
		if (t->stack_err) {
			denied |= t->stack_err == -EACCES || t->stack_err == -EPERM;
			print_string("stack", "    stack: %s\n",
				     opts.json ? NULL : strerror(-t->stack_err));
		} else {
			print_open_array("stack");
			for (f = 0; f < t->nframes; f++)
				print_string(NULL, "    %s\n", t->frame[f]);
			print_close_array();
		}
		print_close_object();
	}
	print_close_array();
	if (b->total > b->n)
		print_text("  ... and %u more\n", b->total - b->n);
	if (denied) {
		print_bool("stacks_readable", NULL, 0);
		if (!opts.json)
			p_note("kernel stacks of tasks can only be read by root");
	}
}

static int do_signal(void)
{
	char path[PATH_MAX];
	int ret;

	ret = sysfs_path(path, sizeof(path), "%s/signal", klp_dir());
	if (!ret && access(path, F_OK) == 0) {
		ret = sysfs_write(path, "1\n");
		if (ret) {
			p_err("cannot signal the tasks: write %s: %s", path,
			      strerror(-ret));
			return EXIT_RUNTIME;
		}
		print_bool("signalled", "signalled the tasks: %s\n", 1);
		return 0;
	}
	print_bool("signalled", NULL, 0);
	p_note("this kernel has no /sys/%s/signal: it sends the remaining tasks a fake signal itself every 15 s, which wakes only interruptible sleeps (state S); a task in state D wakes when what it waits for happens, or can be killed (kill -KILL PID)",
	       klp_dir());
	return 0;
}

static void print_direction(int target)
{
	print_string("direction", "direction:      %s\n",
		     target < 0 ? NULL : target ? "patching" : "unpatching");
}

int do_transition(int argc, char **argv)
{
	static struct blockers b;
	uint64_t deadline, timeout_ms;
	int target, start, ret;
	bool waited = opts.timeout_set || opts.revert;
	char disp[80];

	if (argc)
		return usage_err("transition: unexpected argument '%s'",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if ((opts.signal || opts.revert) && geteuid() != 0) {
		p_err("transition: root is needed for --%s (run as root or with sudo)",
		      opts.revert ? "revert" : "signal");
		return EXIT_RUNTIME;
	}
	if (!mmfix_loaded()) {
		p_err("mmfix module is not loaded");
		return EXIT_RUNTIME;
	}

	timeout_ms = (uint64_t)(opts.timeout_set ? opts.timeout :
				REVERT_TIMEOUT_DEFAULT) * 1000;
	print_open_object(NULL);
	start = klp_transition_target();
	if (start >= 0 && opts.signal) {
		ret = do_signal();
		if (ret)
			return ret;
	}
	if (start >= 0 && opts.revert) {
		if (klp_revert(start))
			return EXIT_RUNTIME;
		print_string("reverted", "reverted:       %s\n",
			     start ? "patching -> unpatched" :
				     "unpatching -> patched");
	} else if (opts.revert) {
		print_string("reverted", NULL, NULL);
		p_note("no transition in progress: nothing to reverse");
	}
	if (waited) {
		deadline = now_ms() + timeout_ms;
		klp_wait_idle(deadline);
	}

	print_livepatch();
	target = klp_transition_target();
	print_direction(target);
	if (target < 0)
		return EXIT_OK;
	blockers_find(target, &b);
	blockers_print(&b);
	if (!waited)
		return EXIT_OK;
	p_err("the livepatch transition (%s) is still in progress after %llu s%s",
	      target ? "patching" : "unpatching",
	      (unsigned long long)(timeout_ms / 1000),
	      opts.revert ? " of reversing it" : "");
	return EXIT_RUNTIME;
}
