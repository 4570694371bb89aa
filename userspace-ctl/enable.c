// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl enable/disable FIX: write 1/0 to fixes/FIX/enabled.
 *
 * FIX must be spelled exactly: a typo on a production box must not switch
 * some other fix.  Every failure changes nothing.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "mmfixctl.h"

const char enable_help[] =
	"Switch fix FIX on: write 1 to /sys/kernel/mmfix/fixes/FIX/enabled.\n"
	"FIX must be spelled exactly as \"status\" lists it (a name that is\n"
	"not a fix is a usage error, exit 2, also without the module).  Needs\n"
	"root.  Fails, changing nothing, when the fix does not apply to the running\n"
	"kernel (the fix's reason is printed), when it applies but the loaded\n"
	"mmfix does not patch it (loaded with fixes= without it: the upgrade\n"
	"that carries it is named; another livepatch owns its function, or it\n"
	"is not verified on this build: the reason is printed), or when the\n"
	"livepatch is disabled (\"livepatch disabled: ...\").\n";

const char disable_help[] =
	"Switch fix FIX off: write 0 to /sys/kernel/mmfix/fixes/FIX/enabled;\n"
	"the patched code then behaves exactly like the running kernel's own.\n"
	"FIX must be spelled exactly as \"status\" lists it.  Needs root.\n"
	"Fails when the livepatch is disabled (\"livepatch disabled: ...\").\n";

/*
 * Applies, but the loaded module does not patch it: its functions are
 * not redirected.  Loaded with fixes= without it, only a module that
 * patches it can switch it on, and the hint names the upgrade that
 * carries it; otherwise (another livepatch owns a function, or the
 * fix is not verified on this build) the module's reason says why.
 */
static int not_patched(const char *fix)
{
	char list[MMFIX_MAX_FIXES * (MMFIX_FIX_NAME_MAX + 1)];
	char reason[SYSFS_READ_MAX];
	struct fix_list fl;
	size_t n = 0;
	unsigned int i;

	if (!fix_left_out_by_fixes(fix) &&
	    sysfs_attr_str(reason, sizeof(reason),
			   MMFIX_SYSFS_DIR "/fixes/%s/reason", fix)) {
		p_err("fix %s is not patched by the loaded mmfix: %s", fix, reason);
		return EXIT_RUNTIME;
	}
	list[0] = '\0';
	fix_list_read(&fl);
	for (i = 0; i < fl.n && n < sizeof(list); i++)
		if (!strcmp(fl.name[i], fix) ||
		    sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/patched",
				    fl.name[i]) == 1)
			n += snprintf(list + n, sizeof(list) - n, "%s%s",
				      n ? "," : "", fl.name[i]);
	p_err("fix %s is not patched by the loaded mmfix (loaded with fixes= without it); to carry it: " BIN_NAME " upgrade %s fixes %s",
	      fix, mmfix_other_module(), list);
	return EXIT_RUNTIME;
}

static int not_applicable(const char *fix)
{
	char reason[SYSFS_READ_MAX];

	p_err("fix %s does not apply to this kernel: %s", fix,
	      sysfs_attr_str(reason, sizeof(reason),
			     MMFIX_SYSFS_DIR "/fixes/%s/reason", fix) ?:
	      "(no reason given)");
	return EXIT_RUNTIME;
}

/*
 * Once the livepatch is disabled the module keeps every fix off and
 * refuses writes (EBUSY): the patch file says so first or, on a module
 * without it, the livepatch's enabled reading 0 or its directory gone
 * while the module is still loaded.
 */
static bool livepatch_disabled(void)
{
	char buf[32];

	if (sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/patch"))
		return !strcmp(buf, "disabled");
	return sysfs_attr_bool("%s/enabled", klp_dir()) != 1;
}

static int lp_disabled(const char *cmd, const char *fix)
{
	p_err("livepatch disabled: cannot %s fix %s, no fix can be switched until mmfix is unloaded ('" BIN_NAME " unload') and loaded again",
	      cmd, fix);
	return EXIT_RUNTIME;
}

static int fix_set(const char *cmd, int argc, char **argv, bool on)
{
	char path[PATH_MAX], known[MMFIX_MAX_FIXES * (MMFIX_FIX_NAME_MAX + 2)];
	char disp[80];
	struct fix_list fl;
	const char *fix;
	int ret;

	if (argc < 1)
		return usage_err("%s: missing FIX (see '" BIN_NAME " status')",
				 cmd);
	if (argc > 1)
		return usage_err("%s: unexpected argument '%s'", cmd,
				 arg_disp(argv[1], disp, sizeof(disp)));
	fix = argv[0];

	/*
	 * The name first: the loaded module's fixes or, with none loaded,
	 * the ones this mmfixctl knows (include/mmfix_abi.h).
	 */
	if (mmfix_loaded())
		fix_list_read(&fl);
	else
		fix_list_known(&fl);
	if (fix_list_find(&fl, fix) < 0) {
		fix_list_join(&fl, known, sizeof(known));
		p_err("unknown fix '%s' (known fixes: %s)",
		      arg_disp(fix, disp, sizeof(disp)), known);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		p_err("%s: root is needed to change a fix (run as root or with sudo)",
		      cmd);
		return EXIT_RUNTIME;
	}
	if (!mmfix_loaded()) {
		p_err("mmfix module is not loaded");
		return EXIT_RUNTIME;
	}
	if (livepatch_disabled())
		return lp_disabled(cmd, fix);
	if (on && sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/applicable",
				  fix) == 0)
		return not_applicable(fix);
	/* no patched file (a module older than fixes=): as applicable */
	if (on && sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/patched",
				  fix) == 0)
		return not_patched(fix);

	ret = sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR "/fixes/%s/enabled",
			 fix);
	if (!ret)
		ret = sysfs_write(path, on ? "1\n" : "0\n");
	if (ret == -EOPNOTSUPP)
		return not_applicable(fix);
	if (ret == -EBUSY && livepatch_disabled())
		return lp_disabled(cmd, fix);
	if (ret) {
		p_err("cannot %s fix %s: write %s: %s", cmd, fix, path,
		      strerror(-ret));
		return EXIT_RUNTIME;
	}

	print_open_object(NULL);
	print_string("name", "%s: ", fix);
	print_bool_words("enabled", "%s\n", on, "enabled", "disabled", "-");
	print_close_object();
	return EXIT_OK;
}

int do_enable(int argc, char **argv)
{
	return fix_set("enable", argc, argv, true);
}

int do_disable(int argc, char **argv)
{
	return fix_set("disable", argc, argv, false);
}
