/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmfixctl internals: the command table type, global options, the output
 * layer (one print call per field, text or JSON), and the sysfs helpers.
 *
 * mmfixctl reads only the files documented in
 * docs/ABI/testing/sysfs-kernel-mmfix (plus the kernel's own
 * /sys/kernel/livepatch/<patch>/{enabled,transition,signal},
 * /sys/kernel/security/lockdown and /proc/PID/task/TID/{patch_state,
 * comm,stat,stack}).
 */
#ifndef MMFIXCTL_H
#define MMFIXCTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "json.h"
#include "../include/mmfix_abi.h"

#define BIN_NAME	"mmfixctl"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)	__attribute__((format(printf, a, b)))

/* Exit codes. */
#define EXIT_OK		0
#define EXIT_RUNTIME	1	/* module not loaded, write failed, timeout */
#define EXIT_USAGE	2	/* bad command, option or argument */
/* status: the lifecycle state when it is not "active" (see status.c) */
#define EXIT_TRANSITION		3
#define EXIT_LP_DISABLED	4
#define EXIT_REFUSED		5
#define EXIT_NOT_LOADED		6
#define EXIT_NOT_BUILT		7
#define EXIT_REPLACED		8
#define EXIT_OVERRIDDEN		9
/*
 * Nothing applies here: status on a kernel mmfix does not support (state
 * unsupported), check when no fix applies to the kernel.
 */
#define EXIT_UNSUPPORTED	10

/* Version of the JSON keys: the "schema" member of every document. */
#define MMFIXCTL_SCHEMA	2

/* Options every command takes; shared by all help texts. */
#define HELP_SPEC_OPTIONS						\
	"Options:\n"							\
	"  -j, --json       print JSON (errors too)\n"			\
	"  -p, --pretty     print indented JSON (implies --json)\n"	\
	"      --root DIR   sysfs mount point (default /sys, or\n"	\
	"                   $MMFIXCTL_SYSFS_ROOT)\n"			\
	"  -h, --help       show help (for COMMAND when one is given)\n" \
	"  -V, --version    print the version\n"

/* Command-specific options, accepted only by commands that list them. */
#define CMD_OPT_TIMEOUT	(1U << 0)
#define CMD_OPT_SIGNAL	(1U << 1)
#define CMD_OPT_REVERT	(1U << 2)
#define CMD_OPT_BTF	(1U << 3)
#define CMD_OPT_RELEASE	(1U << 4)
#define CMD_OPT_RESET	(1U << 5)
#define CMD_OPT_COUNT	(1U << 6)
#define CMD_OPT_FORMAT	(1U << 7)
#define CMD_OPT_TEXTFILE (1U << 8)
#define CMD_OPT_AB	(1U << 9)

/*
 * ab's options (ab.c), all with an argument: AB_OPTION_LIST(X) expands
 * X(id, "name") once per option; main() parses them into ab.c.
 */
#define AB_OPTION_LIST(X)				\
	X(WINDOW,	"window")			\
	X(ROUNDS,	"rounds")			\
	X(SETTLE,	"settle")			\
	X(RUN,		"run")				\
	X(METRIC,	"metric")			\
	X(VALUE,	"value")			\
	X(BETTER,	"better")			\
	X(MIN_EFFECT,	"min-effect")			\
	X(GUARD,	"guard")			\
	X(GUARD_MARGIN,	"guard-margin")			\
	X(MIN_ROUNDS,	"min-rounds")			\
	X(TSV,		"tsv")				\
	X(SVG,		"svg")
#define AB_OPT_ENUM(id, name) AB_OPT_##id,
enum { AB_OPTION_LIST(AB_OPT_ENUM) AB_NR_OPTS };
#undef AB_OPT_ENUM
/* Stores option id's argument: 0, or EXIT_USAGE (reported). */
int ab_set_opt(unsigned int id, const char *arg);
/* The name of the first ab option given, NULL if none. */
const char *ab_opt_given(void);

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
	const char *args;	/* synopsis after the name, "" if none */
	const char *summary;	/* one line for the command list */
	const char *help;	/* description for "help NAME" */
	unsigned int opts;	/* CMD_OPT_* this command accepts */
};

/*
 * The command whose name equals name or, failing that, is the only one
 * starting with it.  NULL when none or several match; *nmatch says
 * how many matched (0: unknown, > 1: ambiguous).
 */
const struct cmd *cmd_find(const struct cmd *cmds, size_t ncmds,
			   const char *name, size_t *nmatch);

/* Global options, set by main(). */
struct mmfixctl_opts {
	bool json;
	bool pretty;
	bool timeout_set;
	unsigned int timeout;	/* unload/transition --timeout, seconds */
	bool signal;		/* transition --signal */
	bool revert;		/* transition --revert */
	const char *btf;	/* check --btf */
	const char *release;	/* check --release */
	bool reset;		/* stats --reset */
	bool count_set;
	unsigned int count;	/* watch --count, intervals */
	const char *format;	/* stats --format: text, json, prometheus */
	const char *textfile;	/* export --textfile DIR */
};
extern struct mmfixctl_opts opts;
extern char sysfs_root[PATH_MAX];

/*
 * print.c: output.  key is the JSON member name (ignored inside arrays);
 * fmt is the text format with exactly one %s, or NULL for a JSON-only
 * field.
 */
void print_start(void);
/* Finishes the JSON document; -1 if stdout could not be written. */
int print_end(void);
/* Ends one document of a stream (watch): a line of its own, flushed. */
void print_doc_end(void);
void print_open_object(const char *key);
void print_close_object(void);
void print_open_array(const char *key);
void print_close_array(void);
/* NULL val: null in JSON, "-" in text. */
void print_string(const char *key, const char *fmt, const char *val);
void print_u64(const char *key, const char *fmt, const uint64_t *val);
/* A double: six significant digits in JSON, "%.4g" in text. */
void print_double(const char *key, const char *fmt, const double *val);
/* val: 1 true, 0 false, < 0 unknown (null / unk in text). */
void print_bool_words(const char *key, const char *fmt, int val,
		      const char *yes, const char *no, const char *unk);
void print_bool(const char *key, const char *fmt, int val);
/* A time in ns: the integer in JSON, scaled ("1.25 us") in text. */
void print_ns(const char *key, const char *fmt, const uint64_t *val);
/* ns as "312 ns", "1.25 us", "48.0 ms", "3.20 s": three digits. */
const char *fmt_ns(char *buf, size_t size, double ns);
/* A counter name ending in "_ns": a time, scaled in text. */
bool name_is_ns(const char *name);
/* Text-only decoration (labels, headings); nothing under JSON. */
void print_text(const char *fmt, ...) __printf(1, 2);

/*
 * Errors and notes, the only way commands report problems: text goes to
 * stderr as "mmfixctl: ...", JSON becomes an "error"/"note" member of the
 * document (or {"error":...} when nothing was printed yet).
 */
void p_err(const char *fmt, ...) __printf(1, 2);
void p_note(const char *fmt, ...) __printf(1, 2);
/* p_err(), and in text mode a hint at "help"; returns EXIT_USAGE. */
int usage_err(const char *fmt, ...) __printf(1, 2);
/* Progress on stderr (text mode only), for long waits. */
void p_progress(const char *fmt, ...) __printf(1, 2);
/* Copies s for display in a message: at most 64 bytes, then "...". */
const char *arg_disp(const char *s, char *buf, size_t size);

/* sysfs.c */
#define SYSFS_READ_MAX	4096	/* a sysfs attribute is at most a page */
#define MMFIX_MAX_FIXES	64
#define MMFIX_MAX_COUNTERS	64
#define COUNTER_NAME_MAX	64

/* snprintf(root "/" fmt); -ENAMETOOLONG if it does not fit. */
int sysfs_path(char *buf, size_t size, const char *fmt, ...)
	__printf(3, 4);
/*
 * Reads a regular file into buf (NUL-terminated, one trailing newline
 * removed), at most size - 1 bytes; *truncated (may be NULL) says the file
 * had more.  Returns the length or -errno.
 */
long sysfs_read(const char *path, char *buf, size_t size, bool *truncated);
/* A decimal u64, optional trailing newline: 0 or -errno (-EINVAL). */
int sysfs_read_u64(const char *path, uint64_t *val);
/* "0" or "1": returns 0/1, or -errno (-EINVAL for anything else). */
int sysfs_read_bool(const char *path);
/* Writes the string; 0 or -errno (as the kernel's store returned it). */
int sysfs_write(const char *path, const char *val);
bool sysfs_is_dir(const char *path);
/*
 * The same for a path relative to sysfs_root given as a format: the first
 * line of the file, or NULL if it cannot be read; "0"/"1" as 0/1 or -errno.
 */
const char *sysfs_attr_str(char *buf, size_t size, const char *fmt, ...)
	__printf(3, 4);
int sysfs_attr_bool(const char *fmt, ...)
	__printf(1, 2);
int parse_u64(const char *s, uint64_t *val);

bool mmfix_loaded(void);
const char *mmfix_module(void);
const char *mmfix_other_module(void);
const char *klp_dir(void);
bool fix_name_valid(const char *name);
/*
 * The running kernel's release: uname -r, or $MMFIXCTL_RELEASE (tests
 * only); "-" when neither gives one.
 */
const char *running_release(char *buf, size_t size);

struct fix_list {
	unsigned int n;
	char name[MMFIX_MAX_FIXES][MMFIX_FIX_NAME_MAX + 1];
};
/* Fix directories, in MMFIX_FIX_LIST order, then unknown ones sorted. */
int fix_list_read(struct fix_list *fl);
/* MMFIX_FIX_LIST's names, then the loaded module's others, sorted. */
void fix_list_known(struct fix_list *fl);
int fix_list_find(const struct fix_list *fl, const char *name);
bool fix_left_out_by_fixes(const char *name);
/* "a, b, c" or "(none)". */
void fix_list_join(const struct fix_list *fl, char *buf, size_t size);

struct counter {
	char name[COUNTER_NAME_MAX + 1];
	uint64_t val;
};
/* The fix's counters, sorted by name; returns how many. */
unsigned int counters_read(const char *fix, struct counter *c,
			   unsigned int max);

/* status.c: the "livepatch" object / line */
void print_livepatch(void);

/* transition.c: the livepatch transition and the tasks holding it up */
#define POLL_MS			100
#define BLOCKERS_MAX		16
#define STACK_FRAMES_MAX	16

extern char proc_root[PATH_MAX];	/* /proc, or $MMFIXCTL_PROC_ROOT */

struct blocker {
	char pid[12];
	char tid[12];
	char comm[32];
	char state[4];		/* from /proc/.../stat, e.g. "D" */
	int stack_err;		/* 0, or -errno reading the stack */
	unsigned int nframes;
	char frame[STACK_FRAMES_MAX][96];
};

struct blockers {
	unsigned int n;		/* listed in task[] */
	unsigned int total;	/* found */
	struct blocker task[BLOCKERS_MAX];
};

uint64_t now_ms(void);
void sleep_ms(unsigned int ms);
/* 1 patching, 0 unpatching, -1 no transition (or no livepatch). */
int klp_transition_target(void);
/* Polls until no transition is in progress: 0, or -ETIMEDOUT. */
int klp_wait_idle(uint64_t deadline);
/* Reverses the transition towards target (p_err on failure): 0 or -errno. */
int klp_revert(int target);
/* Tasks that have not switched to target yet. */
void blockers_find(int target, struct blockers *b);
/* "tasks_pending" and the "tasks" array, or their text lines. */
void blockers_print(const struct blockers *b);

/* stats.c: lock statistics snapshots (also for export.c) */
#define NBUCKETS	MMFIX_STATS_HIST_BUCKETS

struct class_snap {
	bool have[MMFIX_STATS_NR_FILES];
	uint64_t v[MMFIX_STATS_NR_FILES];	/* unused for the _hist ones */
	uint64_t wait_hist[NBUCKETS];
	uint64_t hold_hist[NBUCKETS];
};

struct snap {
	struct class_snap cls[MMFIX_STATS_NR_CLASSES];
	uint64_t t_ms;
	int hold_time;	/* stats/hold_time: 0, 1, -1 when the module has none */
};

/* Hold times are not measured: hold counters mean nothing ("off"). */
static inline bool snap_holds_off(const struct snap *s)
{
	return s->hold_time == 0;
}

/* The hold counters: shown as "off" (null in JSON) while hold_time is 0. */
static inline bool is_hold_file(unsigned int f)
{
	return f == MMFIX_STATS_HOLDS || f == MMFIX_STATS_HOLD_NS ||
	       f == MMFIX_STATS_HOLD_MAX_NS || f == MMFIX_STATS_HOLD_HIST;
}

extern const char *const class_dirs[];
extern const char *const file_names[];
extern const char *const class_labels[];
/* JSON "lru_lock": {...} or "mmap_lock": {"read": {...}, "write": {...}} */
void open_class(unsigned int c);
void close_class(unsigned int c, bool last);
void read_snap(struct snap *s);
bool stats_present(void);
/* Not loaded, or a module without statistics: p_err, EXIT_RUNTIME. */
int stats_missing(void);
/* A decimal file below stats/, path given as a format: true if read. */
bool read_stat_u64(uint64_t *v, const char *fmt, ...) __printf(2, 3);

/* status.c: the lifecycle state, for export.c */
unsigned int lifecycle_nr(void);
const char *lifecycle_word(unsigned int i);
/* The state now (an index for lifecycle_word()). */
unsigned int lifecycle_now(void);

/* Commands: each in its own file with its help text. */
int do_status(int argc, char **argv);
int do_enable(int argc, char **argv);
int do_disable(int argc, char **argv);
int do_unload(int argc, char **argv);
int module_delete(const char *mod, uint64_t deadline);
/* MMFIXCTL_FAKE_DELETE=1 (tests only), and whether --root is a sysfs. */
bool fake_delete_requested(void);
bool on_real_sysfs(void);
int do_upgrade(int argc, char **argv);
int do_transition(int argc, char **argv);
int do_check(int argc, char **argv);

/* check.c: who verified a build (shipped list, this machine, nobody) */
#define MMFIX_LOCAL_LIST	"/var/lib/mmfix/verified-builds"
enum { VERIFIED_NONE, VERIFIED_SHIPPED, VERIFIED_HERE };
struct verified_by {
	int by;
	char date[16];
	char source[160];
	char without[128];	/* space-separated fixes left out */
};
/*
 * Whether mmfix supports kernel @release: a Debian amd64 release of a
 * series in MMFIX_KERNEL_LIST, of a supported flavour.  If not, one
 * sentence saying why in @why.
 */
bool kernel_supported(const char *release, char *why, size_t size);
int build_verified_by(const char *release, const char *version,
		      const char *mmfix_ver, struct verified_by *vb);
const char *verified_by_words(const struct verified_by *vb, char *buf,
			      size_t size);
void print_verified_by(const struct verified_by *vb);
const char *proc_debian_version(char *buf, size_t size);
int do_stats(int argc, char **argv);
int do_watch(int argc, char **argv);
int do_export(int argc, char **argv);
int do_ab(int argc, char **argv);
/* export.c: the Prometheus exposition on stdout */
int prom_export_stdout(void);
extern const char status_help[];
extern const char enable_help[];
extern const char disable_help[];
extern const char unload_help[];
extern const char upgrade_help[];
extern const char transition_help[];
extern const char check_help[];
extern const char stats_help[];
extern const char watch_help[];
extern const char export_help[];
extern const char ab_help[];

#endif /* MMFIXCTL_H */
