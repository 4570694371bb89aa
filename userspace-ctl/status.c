// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl status: module, livepatch and per-fix state.
 */
#include <string.h>
#include <sys/utsname.h>
#include "mmfixctl.h"

const char status_help[] =
	"Show whether the mmfix module is loaded, its version and kernel\n"
	"series, the running kernel, the livepatch state, and for every fix\n"
	"whether it applies to this kernel, whether it is enabled, why, and\n"
	"its counters.  This is the default command.  Exits 1 when the module\n"
	"is not loaded (and says when kernel lockdown would refuse an unsigned\n"
	"module).\n";

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

static int status_not_loaded(const char *release)
{
	char buf[256];
	const char *lock = lockdown_mode(buf, sizeof(buf));

	print_bool("loaded", NULL, 0);
	print_string("running_kernel", NULL, release);
	print_string("lockdown", NULL, lock);
	p_err("mmfix module is not loaded");
	if (lock && (!strcmp(lock, "integrity") ||
		     !strcmp(lock, "confidentiality")))
		p_note("the kernel is locked down (%s): an unsigned module cannot be loaded; sign mmfix.ko with the DKMS MOK key (/var/lib/dkms/mok.pub, enrolled with mokutil --import)",
		       lock);
	return EXIT_RUNTIME;
}

void print_livepatch(void)
{
	int enabled = sysfs_attr_bool(MMFIX_KLP_SYSFS_DIR "/enabled");
	int transition = sysfs_attr_bool(MMFIX_KLP_SYSFS_DIR "/transition");

	print_open_object("livepatch");
	print_bool_words("enabled", "livepatch:      %s", enabled, "enabled", "disabled",
			 "not registered");
	print_bool_words("transition", "%s\n", transition,
			 ", transition in progress", "", "");
	print_close_object();
}

static void print_counters(const char *fix)
{
	struct counter c[MMFIX_MAX_COUNTERS];
	char label[COUNTER_NAME_MAX + 2];
	unsigned int i, n;

	n = counters_read(fix, c, MMFIX_MAX_COUNTERS);
	print_open_object("counters");
	for (i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "%.*s:", COUNTER_NAME_MAX,
			 c[i].name);
		print_text("  %-14s", label);
		print_u64(c[i].name, "%s\n", &c[i].val);
	}
	print_close_object();
}

static void print_fix(const char *fix)
{
	char reason[SYSFS_READ_MAX];

	print_open_object(NULL);
	print_string("name", "fix %s:\n", fix);
	print_bool("applicable", "  applicable:   %s\n",
		   sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/applicable", fix));
	print_bool("enabled", "  enabled:      %s\n",
		   sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/enabled", fix));
	print_string("reason", "  reason:       %s\n",
		     sysfs_attr_str(reason, sizeof(reason),
				    MMFIX_SYSFS_DIR "/fixes/%s/reason", fix));
	print_counters(fix);
	print_close_object();
}

int do_status(int argc, char **argv)
{
	char buf[SYSFS_READ_MAX], disp[80];
	struct utsname uts;
	struct fix_list fl;
	unsigned int i;

	if (argc)
		return usage_err("status takes no arguments (got '%s')",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if (uname(&uts))
		strcpy(uts.release, "-");

	print_open_object(NULL);
	if (!mmfix_loaded())
		return status_not_loaded(uts.release);

	print_bool_words("loaded", "module:         %s\n", 1, "loaded", "not loaded",
			 "-");
	print_string("version", "version:        %s\n",
		     sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/version"));
	print_string("kernel_series", "kernel series:  %s\n",
		     sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/kernel"));
	print_string("running_kernel", "running kernel: %s\n", uts.release);
	print_livepatch();

	fix_list_read(&fl);
	print_open_array("fixes");
	for (i = 0; i < fl.n; i++)
		print_fix(fl.name[i]);
	print_close_array();
	print_close_object();
	return EXIT_OK;
}
