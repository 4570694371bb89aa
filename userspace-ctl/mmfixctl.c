// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl: show and change the state of the mmfix livepatch module.
 *
 * Purpose: one tool for SREs that reads only the documented sysfs ABI
 * (docs/ABI/testing/sysfs-kernel-mmfix), prints text or JSON, and fails
 * with a clear message and a meaningful exit code.
 *
 *   mmfixctl                      # status
 *   mmfixctl -p status            # the same as indented JSON
 *   mmfixctl enable populate_drain
 *   mmfixctl unload --timeout 60
 *   mmfixctl transition --revert
 *   mmfixctl check                # what applies to this kernel (BTF)
 *
 * This file holds main(), option parsing, the command table and help.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mmfixctl.h"

struct mmfixctl_opts opts;

static int do_help(int argc, char **argv);

static const char help_help[] =
	"Show the list of commands, or the help of COMMAND.\n";

static const struct cmd cmds[] = {
	{ "status",  do_status,  "",
	  "show module, livepatch and fix state (default)", status_help, 0 },
	{ "enable",  do_enable,  "FIX",
	  "switch fix FIX on (root)", enable_help, 0 },
	{ "disable", do_disable, "FIX",
	  "switch fix FIX off (root)", disable_help, 0 },
	{ "unload",  do_unload,  "[--timeout SECONDS]",
	  "disable the livepatch, remove the module (root)", unload_help,
	  CMD_OPT_TIMEOUT },
	{ "upgrade", do_upgrade,
	  "[--timeout SECONDS] PATH-OR-MODULE [fixes LIST]",
	  "replace mmfix in place, fixes kept on (root)",
	  upgrade_help, CMD_OPT_TIMEOUT },
	{ "transition", do_transition,
	  "[--timeout SECONDS] [--signal] [--revert]",
	  "show a livepatch transition and what holds it up",
	  transition_help, CMD_OPT_TIMEOUT | CMD_OPT_SIGNAL | CMD_OPT_REVERT },
	{ "check",   do_check,   "[--btf FILE] [--release REL]",
	  "which known problems and fixes apply here (BTF)",
	  check_help, CMD_OPT_BTF | CMD_OPT_RELEASE },
	{ "stats",   do_stats,
	  "[--reset] [--format FORMAT] [on|off [lru_lock|mmap_lock|hold_time]]",
	  "lru_lock and mmap_lock statistics; switch, reset",
	  stats_help, CMD_OPT_RESET | CMD_OPT_FORMAT },
	{ "watch",   do_watch,   "[--count N] [INTERVAL]",
	  "lock statistics per interval, until interrupted",
	  watch_help, CMD_OPT_COUNT },
	{ "export",  do_export,  "[--textfile DIR]",
	  "every counter and state, Prometheus text format",
	  export_help, CMD_OPT_TEXTFILE },
	{ "ab",      do_ab,
	  "[--window T] [--rounds N] [--settle T] [--run CMD] [--metric CMD] [--value wall|last] [--better higher|lower] [--min-effect P] [--guard METRIC] [--guard-margin P] [--min-rounds N] [--tsv FILE] [--svg FILE] FIX",
	  "A/B experiment: FIX off and on in windows (root)",
	  ab_help, CMD_OPT_AB },
	{ "help",    do_help,    "[COMMAND]",
	  "show this help, or the help of COMMAND", help_help, 0 },
};

/* Long-only options get values above any character. */
enum { OPT_ROOT = 0x100, OPT_TIMEOUT, OPT_SIGNAL, OPT_REVERT, OPT_BTF,
       OPT_RELEASE, OPT_RESET, OPT_COUNT, OPT_FORMAT, OPT_TEXTFILE,
       OPT_AB_FIRST = 0x200 };
#define AB_LONG_OPT(id, name) \
	{ name, required_argument, NULL, OPT_AB_FIRST + AB_OPT_##id },

static const struct option long_opts[] = {
	{ "json",	no_argument,		NULL, 'j' },
	{ "pretty",	no_argument,		NULL, 'p' },
	{ "root",	required_argument,	NULL, OPT_ROOT },
	{ "help",	no_argument,		NULL, 'h' },
	{ "version",	no_argument,		NULL, 'V' },
	{ "timeout",	required_argument,	NULL, OPT_TIMEOUT },
	{ "signal",	no_argument,		NULL, OPT_SIGNAL },
	{ "revert",	no_argument,		NULL, OPT_REVERT },
	{ "btf",	required_argument,	NULL, OPT_BTF },
	{ "release",	required_argument,	NULL, OPT_RELEASE },
	{ "reset",	no_argument,		NULL, OPT_RESET },
	{ "count",	required_argument,	NULL, OPT_COUNT },
	{ "format",	required_argument,	NULL, OPT_FORMAT },
	{ "textfile",	required_argument,	NULL, OPT_TEXTFILE },
	AB_OPTION_LIST(AB_LONG_OPT)
	{ NULL, 0, NULL, 0 }
};

/*
 * Help is at most HELP_WIDTH columns: a summary gets its own line when
 * its synopsis is long, and a long usage line goes on at the bracket
 * groups (tests/unit/run checks every help text).
 */
#define HELP_WIDTH	80
#define HELP_SYNOPSIS_COL	28

/*
 * ARGS after a line printed up to column @col, broken between top-level
 * words or bracket groups where the line would pass HELP_WIDTH; the
 * lines after the first are indented under ARGS.
 */
static void help_args(FILE *out, int col, const char *a)
{
	int indent = col + 1, depth;
	const char *end;

	indent = col + 1;
	while (*a) {
		for (end = a, depth = 0; *end && (depth || *end != ' '); end++)
			depth += (*end == '[') - (*end == ']');
		if (col + 1 + (end - a) >= HELP_WIDTH && col > indent)
			col = fprintf(out, "\n%*s", indent - 1, "") - 1;
		col += fprintf(out, " %.*s", (int)(end - a), a);
		a = *end ? end + 1 : end;
	}
}

/*
 * A synopsis too long for one line (ab's), wrapped by help_args(); then
 * the summary on a line of its own.
 */
static void help_long_synopsis(FILE *out, const struct cmd *cmd)
{
	help_args(out, fprintf(out, "  %s", cmd->name), cmd->args);
	fprintf(out, "\n  %-*s %s\n", HELP_SYNOPSIS_COL, "", cmd->summary);
}

static void help_all(FILE *out)
{
	char synopsis[HELP_WIDTH];
	size_t i;

	fprintf(out,
		"Usage: " BIN_NAME " [OPTIONS] [COMMAND [ARGS]]\n"
		"\n"
		"Show and change the state of the mmfix livepatch module.  A\n"
		"COMMAND may be shortened to any unambiguous prefix.\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (strlen(cmds[i].name) + 1 + strlen(cmds[i].args) >=
		    HELP_WIDTH - 2) {
			help_long_synopsis(out, &cmds[i]);
			continue;
		}
		snprintf(synopsis, sizeof(synopsis), "%s%s%s", cmds[i].name,
			 *cmds[i].args ? " " : "", cmds[i].args);
		/* a long synopsis gets a line of its own */
		if (strlen(synopsis) > HELP_SYNOPSIS_COL)
			fprintf(out, "  %s\n  %-*s %s\n", synopsis,
				HELP_SYNOPSIS_COL, "", cmds[i].summary);
		else
			fprintf(out, "  %-*s %s\n", HELP_SYNOPSIS_COL, synopsis,
				cmds[i].summary);
	}
	fprintf(out, "\n" HELP_SPEC_OPTIONS "\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n");
}

/* "Usage: mmfixctl [OPTIONS] CMD ARGS", ARGS wrapped by help_args() */
static void help_usage(FILE *out, const struct cmd *cmd)
{
	help_args(out, fprintf(out, "Usage: " BIN_NAME " [OPTIONS] %s", cmd->name),
		  cmd->args);
	fputc('\n', out);
}

static void help_cmd(FILE *out, const struct cmd *cmd)
{
	help_usage(out, cmd);
	fprintf(out, "\n%s\n" HELP_SPEC_OPTIONS, cmd->help);
}

/* Help goes to stdout as text, or as {"help": TEXT} under --json. */
static int print_help(const struct cmd *cmd)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem;

	if (!opts.json) {
		if (cmd)
			help_cmd(stdout, cmd);
		else
			help_all(stdout);
		return EXIT_OK;
	}
	mem = open_memstream(&text, &size);
	if (!mem) {
		p_err("out of memory");
		return EXIT_RUNTIME;
	}
	if (cmd)
		help_cmd(mem, cmd);
	else
		help_all(mem);
	fclose(mem);
	print_open_object(NULL);
	print_string("help", "%s", text);
	print_close_object();
	free(text);
	return EXIT_OK;
}

static void cmd_names(char *buf, size_t size, const char *prefix)
{
	size_t i, len = 0;
	int n;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(cmds) && len < size; i++) {
		if (prefix && strncmp(cmds[i].name, prefix, strlen(prefix)))
			continue;
		n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
			     cmds[i].name);
		if (n < 0)
			break;
		len += n;
	}
}

static const struct cmd *lookup_cmd(const char *name, int *err)
{
	char names[256], disp[80];
	const struct cmd *cmd;
	size_t nmatch;

	cmd = cmd_find(cmds, ARRAY_SIZE(cmds), name, &nmatch);
	if (cmd)
		return cmd;
	arg_disp(name, disp, sizeof(disp));
	if (nmatch > 1) {
		cmd_names(names, sizeof(names), name);
		*err = usage_err("ambiguous command '%s' (matches: %s)", disp,
				 names);
	} else {
		cmd_names(names, sizeof(names), NULL);
		*err = usage_err("unknown command '%s' (commands: %s)", disp,
				 names);
	}
	return NULL;
}

static int do_help(int argc, char **argv)
{
	const struct cmd *cmd;
	char disp[80];
	int err;

	if (argc > 1)
		return usage_err("help: unexpected argument '%s'",
				 arg_disp(argv[1], disp, sizeof(disp)));
	if (!argc)
		return print_help(NULL);
	cmd = lookup_cmd(argv[0], &err);
	return cmd ? print_help(cmd) : err;
}

static int set_root(const char *dir, const char *what)
{
	size_t len = strlen(dir);
	char disp[80];

	if (!len)
		return usage_err("%s: empty directory", what);
	/* Leave room below the root for the longest path mmfixctl builds. */
	if (len >= sizeof(sysfs_root) - 256)
		return usage_err("%s: directory name too long ('%s')", what,
				 arg_disp(dir, disp, sizeof(disp)));
	memcpy(sysfs_root, dir, len + 1);
	while (len > 1 && sysfs_root[len - 1] == '/')
		sysfs_root[--len] = '\0';
	return 0;
}

static int set_timeout(const char *arg)
{
	uint64_t v;
	char disp[80];

	if (parse_u64(arg, &v) || v < 1 || v > 86400)
		return usage_err("--timeout: '%s' is not a number of seconds from 1 to 86400",
				 arg_disp(arg, disp, sizeof(disp)));
	opts.timeout = (unsigned int)v;
	opts.timeout_set = true;
	return 0;
}

static int set_count(const char *arg)
{
	uint64_t v;
	char disp[80];

	if (parse_u64(arg, &v) || v < 1 || v > 1000000)
		return usage_err("--count: '%s' is not a number from 1 to 1000000",
				 arg_disp(arg, disp, sizeof(disp)));
	opts.count = (unsigned int)v;
	opts.count_set = true;
	return 0;
}

/*
 * The long option ARG ("--name" or "--name=VALUE") means, as
 * getopt_long() resolves it: an exact name, or else an abbreviation of
 * exactly one.  NULL when it means none.
 */
static const struct option *long_opt_find(const char *arg)
{
	const struct option *hit = NULL;
	size_t len, i, hits = 0;

	if (strncmp(arg, "--", 2) || !arg[2])
		return NULL;
	len = strcspn(arg + 2, "=");
	for (i = 0; long_opts[i].name; i++) {
		if (strncmp(long_opts[i].name, arg + 2, len))
			continue;
		if (strlen(long_opts[i].name) == len)
			return &long_opts[i];
		hit = &long_opts[i];
		hits++;
	}
	return hits == 1 ? hit : NULL;
}

/*
 * Look for -j/-p before getopt runs, so that even an error about an
 * earlier option is printed as JSON.  Which options take an argument
 * comes from long_opts, getopt_long()'s own table.
 */
static void prescan_json(int argc, char **argv)
{
	const struct option *o;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		o = long_opt_find(a);
		if (o && strchr(a, '=')) {
			continue;	/* its argument is in a, or an error */
		} else if (o && o->has_arg == required_argument) {
			i++;	/* skip the option's argument */
		} else if (o && o->val == 'j') {
			opts.json = true;
		} else if (o && o->val == 'p') {
			opts.json = opts.pretty = true;
		} else if (a[0] == '-' && a[1] && a[1] != '-' &&
			   strspn(a + 1, "jphV") == strlen(a + 1)) {
			if (strchr(a, 'j'))
				opts.json = true;
			if (strchr(a, 'p'))
				opts.json = opts.pretty = true;
		}
	}
}

/*
 * getopt's '?' names the option by optopt, which is 0 or the long-only
 * option's value for long options: name it from the argument instead.
 * A long option given "=VALUE" although it takes none is not unknown.
 */
static int bad_option(const char *arg)
{
	char disp[80], name[64];
	size_t len, i, hits = 0, hit = 0;

	if (strncmp(arg, "--", 2) || !arg[2]) {
		if (optopt > 0 && optopt < 0x80)
			return usage_err("unknown option '-%c'", optopt);
		return usage_err("unknown option '%s'",
				 arg_disp(arg, disp, sizeof(disp)));
	}
	len = strcspn(arg + 2, "=");
	snprintf(name, sizeof(name), "%.*s", (int)(len < 60 ? len : 60), arg + 2);
	for (i = 0; long_opts[i].name; i++) {
		if (!strncmp(long_opts[i].name, name, len)) {
			hits++;
			hit = i;
		}
		if (!strcmp(long_opts[i].name, name)) {
			hits = 1;
			hit = i;
			break;
		}
	}
	if (hits == 1 && arg[2 + len] == '=' &&
	    long_opts[hit].has_arg == no_argument)
		return usage_err("option '--%s' takes no argument (got '%s')",
				 long_opts[hit].name,
				 arg_disp(arg, disp, sizeof(disp)));
	if (hits > 1)
		return usage_err("ambiguous option '%s'",
				 arg_disp(arg, disp, sizeof(disp)));
	return usage_err("unknown option '%s'", arg_disp(arg, disp, sizeof(disp)));
}

static int parse_opts(int argc, char **argv, bool *help, bool *version)
{
	char disp[80];
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jphV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opts.json = true;
			break;
		case 'p':
			opts.json = opts.pretty = true;
			break;
		case 'h':
			*help = true;
			break;
		case 'V':
			*version = true;
			break;
		case OPT_ROOT:
			ret = set_root(optarg, "--root");
			if (ret)
				return ret;
			break;
		case OPT_TIMEOUT:
			ret = set_timeout(optarg);
			if (ret)
				return ret;
			break;
		case OPT_SIGNAL:
			opts.signal = true;
			break;
		case OPT_REVERT:
			opts.revert = true;
			break;
		case OPT_BTF:
			opts.btf = optarg;
			break;
		case OPT_RELEASE:
			opts.release = optarg;
			break;
		case OPT_RESET:
			opts.reset = true;
			break;
		case OPT_COUNT:
			ret = set_count(optarg);
			if (ret)
				return ret;
			break;
		case OPT_FORMAT:
			opts.format = optarg;
			break;
		case OPT_TEXTFILE:
			if (!*optarg)
				return usage_err("--textfile: empty directory");
			opts.textfile = optarg;
			break;
		case ':':
			return usage_err("option '%s' needs an argument",
					 arg_disp(argv[optind - 1], disp,
						  sizeof(disp)));
		default:
			if (c >= OPT_AB_FIRST && c < OPT_AB_FIRST + AB_NR_OPTS) {
				ret = ab_set_opt(c - OPT_AB_FIRST, optarg);
				if (ret)
					return ret;
				break;
			}
			return bad_option(argv[optind - 1]);
		}
	}
	return 0;
}

static int run(int argc, char **argv)
{
	const struct cmd *cmd = &cmds[0];	/* status */
	bool help = false, version = false;
	const char *env;
	int ret;

	env = getenv("MMFIXCTL_SYSFS_ROOT");
	if (env && *env) {
		ret = set_root(env, "MMFIXCTL_SYSFS_ROOT");
		if (ret)
			return ret;
	}
	env = getenv("MMFIXCTL_PROC_ROOT");	/* tests only */
	if (env && *env && strlen(env) < sizeof(proc_root) - 64)
		snprintf(proc_root, sizeof(proc_root), "%s", env);
	ret = parse_opts(argc, argv, &help, &version);
	if (ret)
		return ret;
	print_start();	/* --pretty may have come after the prescan's guess */

	if (optind < argc) {
		cmd = lookup_cmd(argv[optind], &ret);
		if (!cmd)
			return ret;
		optind++;
	} else if (help) {
		return print_help(NULL);
	}
	if (help)
		return print_help(cmd);
	if (version) {
		print_open_object(NULL);
		print_string("version", BIN_NAME " %s\n", MMFIX_VERSION);
		print_close_object();
		return EXIT_OK;
	}
	if (opts.timeout_set && !(cmd->opts & CMD_OPT_TIMEOUT))
		return usage_err("option --timeout does not apply to '%s'",
				 cmd->name);
	if (opts.signal && !(cmd->opts & CMD_OPT_SIGNAL))
		return usage_err("option --signal does not apply to '%s'",
				 cmd->name);
	if (opts.revert && !(cmd->opts & CMD_OPT_REVERT))
		return usage_err("option --revert does not apply to '%s'",
				 cmd->name);
	if (opts.btf && !(cmd->opts & CMD_OPT_BTF))
		return usage_err("option --btf does not apply to '%s'",
				 cmd->name);
	if (opts.release && !(cmd->opts & CMD_OPT_RELEASE))
		return usage_err("option --release does not apply to '%s'",
				 cmd->name);
	if (opts.reset && !(cmd->opts & CMD_OPT_RESET))
		return usage_err("option --reset does not apply to '%s'",
				 cmd->name);
	if (opts.count_set && !(cmd->opts & CMD_OPT_COUNT))
		return usage_err("option --count does not apply to '%s'",
				 cmd->name);
	if (opts.format && !(cmd->opts & CMD_OPT_FORMAT))
		return usage_err("option --format does not apply to '%s'",
				 cmd->name);
	if (opts.textfile && !(cmd->opts & CMD_OPT_TEXTFILE))
		return usage_err("option --textfile does not apply to '%s'",
				 cmd->name);
	if (ab_opt_given() && !(cmd->opts & CMD_OPT_AB))
		return usage_err("option --%s does not apply to '%s'",
				 ab_opt_given(), cmd->name);
	return cmd->func(argc - optind, argv + optind);
}

int main(int argc, char **argv)
{
	int ret;

	prescan_json(argc, argv);
	print_start();
	ret = run(argc, argv);
	if (print_end() && ret == EXIT_OK)
		ret = EXIT_RUNTIME;
	return ret;
}
