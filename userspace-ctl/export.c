// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl export: every mmfix counter, switch and state in the
 * Prometheus text exposition format (version 0.0.4), on stdout or
 * written atomically into node_exporter's textfile collector directory.
 *
 *   mmfixctl export                         # to stdout
 *   mmfixctl export --textfile /var/lib/prometheus/node-exporter
 *   mmfixctl stats --format prometheus      # the same as export
 *
 * Names follow the Prometheus conventions: the mmfix_ prefix, base units
 * (times in seconds, from the *_ns files), _total on counters, one label
 * per dimension (fix, lock, mode, node, state).  A fix's counter files
 * are cumulative, except those with "max" in their name and "cursors",
 * which are gauges.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "mmfixctl.h"

#define TEXTFILE_NAME	"mmfix.prom"

const char export_help[] =
	"Print every mmfix counter, switch and state in the Prometheus text\n"
	"format: mmfix_up, mmfix_state{state}, mmfix_info{version,kernel,\n"
	"release,build}, the livepatch, mmfix_fix_enabled{fix} and the other\n"
	"per-fix switches (applicable, patched, recommended), each fix's\n"
	"counters (mmfix_FIX_COUNTER_total; times in seconds), the lock\n"
	"statistics switches and counters\n"
	"(mmfix_lru_lock_acquisitions_total{node}, mmfix_mmap_lock_*{mode},\n"
	"...).  Needs neither root nor the module (then only mmfix_up 0 and\n"
	"the state).\n"
	"\n"
	"  --textfile DIR  write DIR/" TEXTFILE_NAME " instead, atomically (a temporary\n"
	"                  file renamed over it), for node_exporter's textfile\n"
	"                  collector (--collector.textfile.directory=DIR)\n";

struct prom {
	FILE *out;
	char family[160];	/* the metric whose samples are being written */
	unsigned int samples;
};

/* # HELP and # TYPE once per metric family, before its first sample. */
static void prom_family(struct prom *p, const char *name, const char *type,
			const char *help)
{
	if (!strcmp(p->family, name))
		return;
	snprintf(p->family, sizeof(p->family), "%s", name);
	fprintf(p->out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void prom_label_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

/*
 * One sample.  labels: "name", value, "name", value, ..., NULL.  ns: the
 * value is in ns and is written in seconds.
 */
static void prom_sample(struct prom *p, const char *name, uint64_t val,
			bool ns, ...)
{
	const char *k, *v;
	bool first = true;
	va_list ap;

	fputs(name, p->out);
	va_start(ap, ns);
	while ((k = va_arg(ap, const char *))) {
		v = va_arg(ap, const char *);
		fprintf(p->out, "%s%s=\"", first ? "{" : ",", k);
		prom_label_value(p->out, v ? v : "");
		fputc('"', p->out);
		first = false;
	}
	va_end(ap);
	if (!first)
		fputc('}', p->out);
	if (ns)
		fprintf(p->out, " %llu.%09llu\n", (unsigned long long)(val / 1000000000),
			(unsigned long long)(val % 1000000000));
	else
		fprintf(p->out, " %llu\n", (unsigned long long)val);
	p->samples++;
}

/* The family and one unlabelled sample. */
static void prom_one(struct prom *p, const char *name, const char *type,
		     const char *help, uint64_t val, bool ns)
{
	prom_family(p, name, type, help);
	prom_sample(p, name, val, ns, NULL);
}

static void prom_state(struct prom *p)
{
	unsigned int i, now = lifecycle_now();

	prom_one(p, "mmfix_up", "gauge",
		 "1 when the mmfix module is loaded.", mmfix_loaded(), false);
	prom_family(p, "mmfix_state", "gauge",
		    "Lifecycle state of mmfix (as mmfixctl status): 1 for the current state.");
	for (i = 0; i < lifecycle_nr(); i++)
		prom_sample(p, "mmfix_state", i == now, false, "state",
			    lifecycle_word(i), NULL);
}

static void prom_module(struct prom *p)
{
	char ver[64], ker[64], build[64], patch[32];
	struct utsname uts;
	const char *pt;
	int en, tr;

	if (uname(&uts))
		strcpy(uts.release, "-");
	prom_family(p, "mmfix_info", "gauge",
		    "Version and kernel series of the loaded mmfix module; always 1.");
	prom_sample(p, "mmfix_info", 1, false,
		    "version", sysfs_attr_str(ver, sizeof(ver), MMFIX_SYSFS_DIR "/version"),
		    "kernel", sysfs_attr_str(ker, sizeof(ker), MMFIX_SYSFS_DIR "/kernel"),
		    "release", uts.release,
		    "build", sysfs_attr_str(build, sizeof(build), MMFIX_SYSFS_DIR "/build"),
		    NULL);
	en = sysfs_attr_bool("%s/enabled", klp_dir());
	tr = sysfs_attr_bool("%s/transition", klp_dir());
	pt = sysfs_attr_str(patch, sizeof(patch), MMFIX_SYSFS_DIR "/patch");
	if (pt)
		en = !strcmp(pt, "enabled") || !strcmp(pt, "transition");
	prom_one(p, "mmfix_livepatch_enabled", "gauge",
		 "1 while the mmfix livepatch is enabled (0: no fix is in effect).",
		 en == 1, false);
	prom_one(p, "mmfix_livepatch_transition", "gauge",
		 "1 while a livepatch transition is in progress.", tr == 1, false);
}

static void prom_fix_switch(struct prom *p, const struct fix_list *fl,
			    const char *file, const char *help)
{
	char name[64];
	unsigned int i;
	int v;

	snprintf(name, sizeof(name), "mmfix_fix_%s", file);
	for (i = 0; i < fl->n; i++) {
		v = sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/%s", fl->name[i], file);
		if (v < 0)
			continue;
		prom_family(p, name, "gauge", help);
		prom_sample(p, name, (uint64_t)v, false, "fix", fl->name[i], NULL);
	}
}

static bool counter_is_gauge(const char *name)
{
	return strstr(name, "max") || !strcmp(name, "cursors");
}

/* mmfix_FIX_COUNTER[_seconds][_total], [a-zA-Z0-9_] only */
static void prom_counter_name(char *buf, size_t size, const char *fix,
			      const char *counter, bool *ns)
{
	char base[COUNTER_NAME_MAX + 1], *q;
	size_t len;

	snprintf(base, sizeof(base), "%.*s", COUNTER_NAME_MAX, counter);
	*ns = name_is_ns(base);
	if (*ns)
		base[strlen(base) - 3] = '\0';
	len = strlen(base);
	if (len > 6 && !strcmp(base + len - 6, "_total"))
		base[len - 6] = '\0';
	for (q = base; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9')))
			*q = '_';
	snprintf(buf, size, "mmfix_%.*s_%s%s%s", MMFIX_FIX_NAME_MAX, fix, base, *ns ? "_seconds" : "",
		 counter_is_gauge(counter) ? "" : "_total");
}

static void prom_fix_counters(struct prom *p, const struct fix_list *fl)
{
	struct counter c[MMFIX_MAX_COUNTERS];
	char name[160], help[256];
	unsigned int i, j, n;
	bool ns;

	for (i = 0; i < fl->n; i++) {
		n = counters_read(fl->name[i], c, MMFIX_MAX_COUNTERS);
		for (j = 0; j < n; j++) {
			prom_counter_name(name, sizeof(name), fl->name[i],
					  c[j].name, &ns);
			snprintf(help, sizeof(help),
				 "/sys/kernel/mmfix/fixes/%.*s/%.*s%s.",
				 MMFIX_FIX_NAME_MAX, fl->name[i], COUNTER_NAME_MAX,
				 c[j].name, ns ? " in seconds" : "");
			prom_one(p, name, counter_is_gauge(c[j].name) ?
				 "gauge" : "counter", help, c[j].val, ns);
		}
	}
}

static void prom_stats_switches(struct prom *p)
{
	static const char *const locks[] = { "lru_lock", "mmap_lock" };
	uint64_t v;
	size_t i;

	if (read_stat_u64(&v, "enabled"))
		prom_one(p, "mmfix_stats_enabled", "gauge",
			 "1 while lock statistics are collected.", v, false);
	for (i = 0; i < ARRAY_SIZE(locks); i++) {
		if (!read_stat_u64(&v, "%s/enabled", locks[i]))
			continue;
		prom_family(p, "mmfix_stats_lock_enabled", "gauge",
			    "1 while statistics of this lock are collected.");
		prom_sample(p, "mmfix_stats_lock_enabled", v, false, "lock",
			    locks[i], NULL);
	}
	if (read_stat_u64(&v, "hold_time"))
		prom_one(p, "mmfix_stats_hold_time_enabled", "gauge",
			 "1 while lock hold times are measured.", v, false);
}

static const struct {
	unsigned int file;
	const char *suffix, *type, *help;
	bool ns;
} lock_metrics[] = {
	{ MMFIX_STATS_ACQUISITIONS, "acquisitions_total", "counter",
	  "Acquisitions of the lock.", false },
	{ MMFIX_STATS_FAILED, "failed_total", "counter",
	  "Failed trylocks.", false },
	{ MMFIX_STATS_CONTENDED, "contended_total", "counter",
	  "Acquisitions that had to wait.", false },
	{ MMFIX_STATS_WAIT_NS, "wait_seconds_total", "counter",
	  "Time spent waiting for the lock.", true },
	{ MMFIX_STATS_WAIT_MAX_NS, "wait_max_seconds", "gauge",
	  "Longest wait since the last reset.", true },
	{ MMFIX_STATS_HOLDS, "holds_total", "counter",
	  "Holds of the lock measured.", false },
	{ MMFIX_STATS_HOLD_NS, "hold_seconds_total", "counter",
	  "Time the lock was held.", true },
	{ MMFIX_STATS_HOLD_MAX_NS, "hold_max_seconds", "gauge",
	  "Longest hold since the last reset.", true },
};

/* lru_lock counters that also exist per node: labelled by node there. */
static bool lru_per_node(unsigned int f)
{
	return f == MMFIX_STATS_ACQUISITIONS || f == MMFIX_STATS_CONTENDED ||
	       f == MMFIX_STATS_WAIT_NS || f == MMFIX_STATS_HOLD_NS;
}

static bool lru_nodes(void)
{
	uint64_t v;

	return read_stat_u64(&v, "lru_lock/node0/acquisitions");
}

/* Without hold times (@holds_off) no hold metric is emitted. */
static void prom_lru(struct prom *p, const struct class_snap *cs,
		     bool holds_off)
{
	char name[96], node[16];
	bool nodes = lru_nodes();
	unsigned int n;
	uint64_t v;
	size_t m;

	for (m = 0; m < ARRAY_SIZE(lock_metrics); m++) {
		unsigned int f = lock_metrics[m].file;

		if (holds_off && is_hold_file(f))
			continue;	/* not measured: no misleading 0 */
		snprintf(name, sizeof(name), "mmfix_lru_lock_%s", lock_metrics[m].suffix);
		if (nodes && lru_per_node(f)) {
			for (n = 0; n < 1024; n++) {
				if (!read_stat_u64(&v, "lru_lock/node%u/%s", n,
						   file_names[f]))
					continue;
				snprintf(node, sizeof(node), "%u", n);
				prom_family(p, name, lock_metrics[m].type,
					    lock_metrics[m].help);
				prom_sample(p, name, v, lock_metrics[m].ns, "node",
					    node, NULL);
			}
		} else if (cs->have[f]) {
			prom_one(p, name, lock_metrics[m].type, lock_metrics[m].help,
				 cs->v[f], lock_metrics[m].ns);
		}
	}
	if (!holds_off && read_stat_u64(&v, "lru_lock/unmatched"))
		prom_one(p, "mmfix_lru_lock_unmatched_total", "counter",
			 "lru_lock holds whose unlock was not seen.", v, false);
}

static void prom_mmap(struct prom *p, const struct snap *s)
{
	static const unsigned int cls[] = { MMFIX_STATS_MMAP_READ,
					    MMFIX_STATS_MMAP_WRITE };
	static const char *const mode[] = { "read", "write" };
	char name[96];
	size_t m, i;
	uint64_t v;

	for (m = 0; m < ARRAY_SIZE(lock_metrics); m++) {
		unsigned int f = lock_metrics[m].file;

		if (snap_holds_off(s) && is_hold_file(f))
			continue;	/* not measured: no misleading 0 */
		snprintf(name, sizeof(name), "mmfix_mmap_lock_%s", lock_metrics[m].suffix);
		for (i = 0; i < ARRAY_SIZE(cls); i++) {
			if (!s->cls[cls[i]].have[f])
				continue;
			prom_family(p, name, lock_metrics[m].type, lock_metrics[m].help);
			prom_sample(p, name, s->cls[cls[i]].v[f], lock_metrics[m].ns,
				    "mode", mode[i], NULL);
		}
	}
	if (read_stat_u64(&v, "mmap_lock/untracked"))
		prom_one(p, "mmfix_mmap_lock_untracked_total", "counter",
			 "mmap_lock operations not tracked.", v, false);
	if (read_stat_u64(&v, "mmap_lock/skipped_irqs_off"))
		prom_one(p, "mmfix_mmap_lock_skipped_irqs_off_total", "counter",
			 "mmap_lock operations skipped with interrupts off.", v, false);
	if (!snap_holds_off(s) && read_stat_u64(&v, "mmap_lock/worst_hold_ns"))
		prom_one(p, "mmfix_mmap_lock_worst_hold_seconds", "gauge",
			 "Longest mmap_lock hold since the last reset.", v, true);
	if (read_stat_u64(&v, "mmap_lock/worst_wait_ns"))
		prom_one(p, "mmfix_mmap_lock_worst_wait_seconds", "gauge",
			 "Longest mmap_lock wait since the last reset.", v, true);
}

/* The whole exposition; returns the number of samples. */
static unsigned int prom_write(FILE *out)
{
	struct prom p = { .out = out };
	struct fix_list fl;
	static struct snap s;

	prom_state(&p);
	if (!mmfix_loaded())
		return p.samples;
	prom_module(&p);
	fix_list_read(&fl);
	prom_fix_switch(&p, &fl, "applicable",
			"1 when the fix applies to the running kernel.");
	/* none from a module older than fixes=, which has no patched file */
	prom_fix_switch(&p, &fl, "patched",
			"1 when the fix's functions are redirected by the livepatch (fixes= at load).");
	prom_fix_switch(&p, &fl, "enabled", "1 while the fix is switched on.");
	prom_fix_switch(&p, &fl, "recommended",
			"1 when the fix is one of enable=recommended.");
	prom_fix_counters(&p, &fl);
	if (!stats_present())
		return p.samples;
	prom_stats_switches(&p);
	read_snap(&s);
	prom_lru(&p, &s.cls[MMFIX_STATS_LRU], snap_holds_off(&s));
	prom_mmap(&p, &s);
	return p.samples;
}

int prom_export_stdout(void)
{
	prom_write(stdout);
	return EXIT_OK;
}

/* DIR/mmfix.prom through a temporary file in DIR: readers never see half. */
static int export_textfile(const char *dir)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	unsigned int n;
	FILE *f;
	int fd, err = 0;

	if (snprintf(dst, sizeof(dst), "%s/" TEXTFILE_NAME, dir) >= (int)sizeof(dst) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, TEXTFILE_NAME,
		     (int)getpid()) >= (int)sizeof(tmp))
		return usage_err("export --textfile: directory name too long");
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		p_err("export: cannot create %s: %s", tmp, strerror(errno));
		return EXIT_RUNTIME;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		p_err("export: out of memory");
		return EXIT_RUNTIME;
	}
	n = prom_write(f);
	if (fflush(f) || ferror(f) || fsync(fd))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	if (!err && rename(tmp, dst))
		err = errno;
	if (err) {
		unlink(tmp);
		p_err("export: cannot write %s: %s", dst, strerror(err));
		return EXIT_RUNTIME;
	}
	print_open_object(NULL);
	print_u64("samples", "wrote %s samples", &(uint64_t){ n });
	print_string("textfile", " to %s\n", dst);
	print_close_object();
	return EXIT_OK;
}

int do_export(int argc, char **argv)
{
	char disp[80];

	if (argc)
		return usage_err("export takes no arguments (got '%s')",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if (opts.textfile)
		return export_textfile(opts.textfile);
	if (opts.json)
		return usage_err("export: -j applies only with --textfile (the exposition is text)");
	return prom_export_stdout();
}
