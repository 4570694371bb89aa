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
 * per dimension (fix, lock, mode, node, state, livepatch, le) and one
 * label set per metric family.  Each fix counter file is declared in
 * fix_counters[] (its name, type and what it counts); a file this
 * mmfixctl does not know is exported as untyped.  The wait and hold
 * histograms of the lock statistics are Prometheus histograms.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mmfixctl.h"

#define TEXTFILE_NAME	"mmfix.prom"
/* a kernel module name: MODULE_NAME_LEN is 56 */
#define MODNAME_BUF	64

const char export_help[] =
	"Print every mmfix counter, switch and state in the Prometheus text\n"
	"format: mmfix_up, mmfix_state{state}, mmfix_info{version,kernel,\n"
	"release,build}, mmfix_build_verified{by,date,source} (by: shipped,\n"
	"here or module), the livepatch (mmfix_livepatch_replaced{livepatch}\n"
	"when another one replaced it), mmfix_fix_enabled{fix} and the other\n"
	"per-fix switches (applicable, patched, recommended, overridden and\n"
	"owned_by_other_livepatch{fix,livepatch}), each fix's counters\n"
	"(mmfix_FIX_COUNTER_total; times in seconds), the lock statistics\n"
	"switches, counters and wait and hold histograms\n"
	"(mmfix_lru_lock_wait_seconds_bucket{le}, mmfix_mmap_lock_*{mode},\n"
	"mmfix_lru_lock_node_*{node}, ...).  Needs neither root nor the\n"
	"module (then only mmfix_up 0 and the state).\n"
	"\n"
	"  --textfile DIR  write DIR/" TEXTFILE_NAME " instead, atomically (a temporary\n"
	"                  file renamed over it), for node_exporter's textfile\n"
	"                  collector (--collector.textfile.directory=DIR)\n";

struct prom {
	FILE *out;
	char family[192];	/* the metric whose samples are being written */
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

/*
 * Another livepatch replaced mmfix's (atomic replace): patch reads
 * "replaced" and replaced_by names its module.  Not from a module that
 * has neither.
 */
static void prom_replaced(struct prom *p, const char *patch)
{
	char by[MODNAME_BUF];
	bool replaced = patch && !strcmp(patch, "replaced");

	if (!sysfs_attr_str(by, sizeof(by), MMFIX_SYSFS_DIR "/replaced_by")) {
		if (!replaced)
			return;
		by[0] = '\0';
	}
	prom_family(p, "mmfix_livepatch_replaced", "gauge",
		    "1 when another livepatch (label livepatch: its module) replaced "
		    "mmfix's with atomic replace: no mmfix fix is in effect.");
	prom_sample(p, "mmfix_livepatch_replaced", replaced || by[0], false,
		    "livepatch", by, NULL);
}

/*
 * mmfix_build_verified{by,date,source}: 1 when the loaded module runs on
 * a verified build, by "shipped" (the shipped list), "here" (this
 * machine, mmfix-verify-build: date and source too) or "module" (the
 * module's own list); 0 with by="" on an unverified build.
 */
static void prom_verified(struct prom *p, const char *build, const char *ver,
			  const char *release)
{
	struct verified_by vb = { .by = VERIFIED_NONE };
	char dver[64];
	int verified;

	if (!build)
		return;
	verified = !strcmp(build, "verified");
	if (verified)
		build_verified_by(release, proc_debian_version(dver, sizeof(dver)),
				  ver, &vb);
	prom_family(p, "mmfix_build_verified", "gauge",
		    "1 when the running kernel build is one mmfix's copied code was "
		    "verified on: by the shipped list, here (mmfix-verify-build, "
		    "with date and source) or the module's own list.");
	prom_sample(p, "mmfix_build_verified", verified, false,
		    "by", !verified ? "" : vb.by == VERIFIED_SHIPPED ? "shipped" :
		    vb.by == VERIFIED_HERE ? "here" : "module",
		    "date", vb.date, "source", vb.source, NULL);
}

static void prom_module(struct prom *p)
{
	char ver[64], ker[64], build[64], patch[32];
	char rel[128];
	const char *pt;
	int en, tr;

	running_release(rel, sizeof(rel));
	prom_family(p, "mmfix_info", "gauge",
		    "Version and kernel series of the loaded mmfix module; always 1.");
	prom_sample(p, "mmfix_info", 1, false,
		    "version", sysfs_attr_str(ver, sizeof(ver), MMFIX_SYSFS_DIR "/version"),
		    "kernel", sysfs_attr_str(ker, sizeof(ker), MMFIX_SYSFS_DIR "/kernel"),
		    "release", rel,
		    "build", sysfs_attr_str(build, sizeof(build), MMFIX_SYSFS_DIR "/build"),
		    NULL);
	prom_verified(p, build, ver, rel);
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
	prom_replaced(p, pt);
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

/*
 * fixes/<fix>/FILE naming another livepatch's module, empty when none:
 * one sample per fix that has the file, 1 with the module's name.
 */
static void prom_fix_livepatch(struct prom *p, const struct fix_list *fl,
			       const char *file, const char *name,
			       const char *help)
{
	char mod[MODNAME_BUF];
	unsigned int i;

	for (i = 0; i < fl->n; i++) {
		if (!sysfs_attr_str(mod, sizeof(mod), MMFIX_SYSFS_DIR "/fixes/%s/%s",
				    fl->name[i], file))
			continue;
		prom_family(p, name, "gauge", help);
		prom_sample(p, name, mod[0] != '\0', false, "fix", fl->name[i],
			    "livepatch", mod, NULL);
	}
}

/*
 * What each fix counter file counts (docs/ABI/testing/sysfs-kernel-mmfix):
 * its metric name without the mmfix_FIX_ prefix, its type and help.
 * Times are *_ns files, exported in seconds.
 */
static const struct fix_counter {
	const char *fix, *file, *metric, *type, *help;
} fix_counters[] = {
	{ "populate_drain", "drained", "drained_total", "counter",
	  "Calls of populate_vma_page_range() that ran lru_add_drain()." },
	{ "populate_drain", "skipped", "skipped_total", "counter",
	  "Calls of populate_vma_page_range() that skipped lru_add_drain() "
	  "(fix on, VMA not VM_LOCKED)." },
	{ "anon_fault", "fast_index", "fast_index_total", "counter",
	  "New anonymous folios whose index was taken from vm_pgoff (fix on)." },
	{ "anon_fault", "split_index", "split_index_total", "counter",
	  "New anonymous folios whose index came from the split anon page "
	  "offset, as in the kernel's code." },
	{ "anon_fault", "assert_kept", "assert_kept_total", "counter",
	  "__vmf_anon_prepare() calls that ran the VMA stability assertion." },
	{ "anon_fault", "assert_skipped", "assert_skipped_total", "counter",
	  "__vmf_anon_prepare() calls that skipped the VMA stability assertion "
	  "(fix on)." },
	{ "unmap_drain", "drained", "drained_total", "counter",
	  "lru_add_drain() calls made by the munmap path (fix off)." },
	{ "unmap_drain", "skipped", "skipped_total", "counter",
	  "lru_add_drain() calls of the munmap path left out (fix on)." },
	{ "lru_add_free_dead", "dead_freed", "dead_freed_total", "counter",
	  "Folios only an lru_add batch still held, freed instead of put on "
	  "an LRU (fix on)." },
	{ "khugepaged_scan", "scans", "scans_total", "counter",
	  "Per-mm khugepaged scans started." },
	{ "khugepaged_scan", "resumed", "resumed_total", "counter",
	  "khugepaged scans that started at a saved address instead of 0 "
	  "(fix on)." },
	{ "khugepaged_scan", "lock_drops", "lock_drops_total", "counter",
	  "Contended mmap read locks khugepaged dropped in the middle of a "
	  "walk (fix on)." },
	{ "khugepaged_scan", "retake_failed", "retake_failed_total", "counter",
	  "Lock drops after which khugepaged left the mm, its scan address "
	  "saved (fix on)." },
	{ "khugepaged_scan", "vmas_passed", "vmas_passed_total", "counter",
	  "VMAs a khugepaged scan moved past without the mmap lock (fix on)." },
	{ "khugepaged_scan", "vmas_skipped", "vmas_skipped_total", "counter",
	  "VMAs khugepaged found not collapsible." },
	{ "khugepaged_scan", "restarts", "restarts_total", "counter",
	  "khugepaged threads restarted by a livepatch transition." },
	{ "khugepaged_scan", "holds", "holds_total", "counter",
	  "mmap read-lock holds of khugepaged's per-mm scan." },
	{ "khugepaged_scan", "hold_total_ns", "hold_seconds_total", "counter",
	  "Time khugepaged's per-mm scan held the mmap read lock." },
	{ "khugepaged_scan", "hold_max_ns", "hold_max_seconds", "gauge",
	  "Longest mmap read-lock hold of khugepaged's per-mm scan since the "
	  "module was loaded." },
	{ "khugepaged_scan", "hold_max_vmas", "hold_max_vmas", "gauge",
	  "Most VMAs khugepaged walked under one mmap read-lock hold." },
	{ "khugepaged_scan", "wait_max_vmas", "wait_max_vmas", "gauge",
	  "Most VMAs khugepaged walked under one hold while an mmap_lock "
	  "writer waited." },
	{ "khugepaged_scan", "cursors", "cursors", "gauge",
	  "Saved khugepaged scan addresses alive now (one per mm)." },
};

static const struct fix_counter *fix_counter_find(const char *fix,
						  const char *file)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fix_counters); i++)
		if (!strcmp(fix_counters[i].fix, fix) &&
		    !strcmp(fix_counters[i].file, file))
			return &fix_counters[i];
	return NULL;
}

/*
 * A counter file this mmfixctl does not know (a newer module):
 * mmfix_FIX_COUNTER[_seconds], [a-zA-Z0-9_] only, untyped.
 */
static void prom_unknown_counter_name(char *buf, size_t size, const char *fix,
				      const char *counter, bool *ns)
{
	char base[COUNTER_NAME_MAX + 1], *q;

	snprintf(base, sizeof(base), "%.*s", COUNTER_NAME_MAX, counter);
	*ns = name_is_ns(base);
	if (*ns)
		base[strlen(base) - 3] = '\0';
	for (q = base; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9')))
			*q = '_';
	snprintf(buf, size, "mmfix_%.*s_%s%s", MMFIX_FIX_NAME_MAX, fix, base,
		 *ns ? "_seconds" : "");
}

static void prom_fix_counters(struct prom *p, const struct fix_list *fl)
{
	struct counter c[MMFIX_MAX_COUNTERS];
	const struct fix_counter *fc;
	char name[192], help[256];
	unsigned int i, j, n;
	bool ns;

	for (i = 0; i < fl->n; i++) {
		n = counters_read(fl->name[i], c, MMFIX_MAX_COUNTERS);
		for (j = 0; j < n; j++) {
			fc = fix_counter_find(fl->name[i], c[j].name);
			if (fc) {
				snprintf(name, sizeof(name), "mmfix_%s_%s",
					 fc->fix, fc->metric);
				prom_one(p, name, fc->type, fc->help, c[j].val,
					 name_is_ns(fc->file));
				continue;
			}
			prom_unknown_counter_name(name, sizeof(name), fl->name[i],
						  c[j].name, &ns);
			snprintf(help, sizeof(help),
				 "fixes/%.*s/%.*s%s, a file this mmfixctl does not know.",
				 MMFIX_FIX_NAME_MAX, fl->name[i], COUNTER_NAME_MAX,
				 c[j].name, ns ? " in seconds" : "");
			prom_one(p, name, "untyped", help, c[j].val, ns);
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

/*
 * A lock class's families: the name after mmfix_<lock>_, the type, the
 * help, the file; a histogram takes its _sum from sum_file.
 */
static const struct lock_metric {
	const char *suffix, *type, *help;
	unsigned int file, sum_file;
} lock_metrics[] = {
	{ "acquisitions_total", "counter", "Acquisitions of the lock.",
	  MMFIX_STATS_ACQUISITIONS, 0 },
	{ "failed_total", "counter", "Failed trylocks.", MMFIX_STATS_FAILED, 0 },
	{ "contended_total", "counter", "Acquisitions that had to wait.",
	  MMFIX_STATS_CONTENDED, 0 },
	{ "wait_seconds", "histogram",
	  "Waits of contended acquisitions (its _count equals contended_total).",
	  MMFIX_STATS_WAIT_HIST, MMFIX_STATS_WAIT_NS },
	{ "wait_max_seconds", "gauge", "Longest wait since the last reset.",
	  MMFIX_STATS_WAIT_MAX_NS, 0 },
	{ "hold_seconds", "histogram", "Holds of the lock measured.",
	  MMFIX_STATS_HOLD_HIST, MMFIX_STATS_HOLD_NS },
	{ "hold_max_seconds", "gauge", "Longest hold since the last reset.",
	  MMFIX_STATS_HOLD_MAX_NS, 0 },
};

/*
 * Histogram buckets: the module's log2 bucket i (1..64) counts
 * [2^(i-1), 2^i) ns, bucket 0 counts 0 ns.  Exported cumulative with
 * le = 2^i ns for i = 0..HIST_LE_MAX (1 ns to 34 s) and +Inf, a fixed
 * set so that every scrape has the same series.
 */
#define HIST_LE_MAX	35

/* 2^i ns in seconds, exactly ("0.000001024") */
static void hist_le(char *buf, size_t size, unsigned int i)
{
	uint64_t ns = (uint64_t)1 << i;
	int n = snprintf(buf, size, "%llu.%09llu",
			 (unsigned long long)(ns / 1000000000),
			 (unsigned long long)(ns % 1000000000));

	while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
		buf[--n] = '\0';
}

static void prom_hist_sample(struct prom *p, const char *name, uint64_t v,
			     bool ns, const char *lname, const char *lval,
			     const char *le)
{
	if (!lname)
		prom_sample(p, name, v, ns, le ? "le" : NULL, le, NULL);
	else
		prom_sample(p, name, v, ns, lname, lval, le ? "le" : NULL, le, NULL);
}

/* _bucket{le}, _sum (seconds) and _count of one class. */
static void prom_hist(struct prom *p, const char *name, const uint64_t *hist,
		      uint64_t sum_ns, const char *lname, const char *lval)
{
	char metric[160], le[32];
	uint64_t cum = 0;
	unsigned int i, b = 0;

	snprintf(metric, sizeof(metric), "%s_bucket", name);
	for (i = 0; i <= HIST_LE_MAX; i++) {
		for (; b <= i; b++)
			cum += hist[b];
		hist_le(le, sizeof(le), i);
		prom_hist_sample(p, metric, cum, false, lname, lval, le);
	}
	for (; b < NBUCKETS; b++)
		cum += hist[b];
	prom_hist_sample(p, metric, cum, false, lname, lval, "+Inf");
	snprintf(metric, sizeof(metric), "%s_sum", name);
	prom_hist_sample(p, metric, sum_ns, true, lname, lval, NULL);
	snprintf(metric, sizeof(metric), "%s_count", name);
	prom_hist_sample(p, metric, cum, false, lname, lval, NULL);
}

static const uint64_t *class_hist(const struct class_snap *cs, unsigned int f)
{
	return f == MMFIX_STATS_WAIT_HIST ? cs->wait_hist : cs->hold_hist;
}

/*
 * The families of lock_metrics[] for one lock (lock: "lru_lock" or
 * "mmap_lock") over its classes, labelled lname=lvals[i] when lname is
 * set; each family's samples together.  Without hold times (@holds_off)
 * no hold metric is emitted: not measured, so no misleading 0.
 */
static void prom_lock(struct prom *p, const char *lock,
		      const struct class_snap *const *cls, const char *lname,
		      const char *const *lvals, size_t ncls, bool holds_off)
{
	const struct lock_metric *m;
	const struct class_snap *cs;
	char name[96];
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(lock_metrics); i++) {
		m = &lock_metrics[i];
		if (holds_off && is_hold_file(m->file))
			continue;
		snprintf(name, sizeof(name), "mmfix_%s_%s", lock, m->suffix);
		for (k = 0; k < ncls; k++) {
			cs = cls[k];
			if (!cs->have[m->file])
				continue;
			if (!strcmp(m->type, "histogram")) {
				if (!cs->have[m->sum_file])
					continue;
				prom_family(p, name, m->type, m->help);
				prom_hist(p, name, class_hist(cs, m->file),
					  cs->v[m->sum_file], lname,
					  lname ? lvals[k] : NULL);
				continue;
			}
			prom_family(p, name, m->type, m->help);
			prom_hist_sample(p, name, cs->v[m->file],
					 name_is_ns(file_names[m->file]), lname,
					 lname ? lvals[k] : NULL, NULL);
		}
	}
}

/* lru_lock/node<N>/: the families mmfix_lru_lock_node_*{node}. */
static const struct {
	unsigned int file;
	const char *suffix, *help;
} lru_node_metrics[] = {
	{ MMFIX_STATS_ACQUISITIONS, "acquisitions_total",
	  "lru_lock acquisitions, by the NUMA node of the lruvec." },
	{ MMFIX_STATS_CONTENDED, "contended_total",
	  "lru_lock acquisitions that had to wait, by the NUMA node of the lruvec." },
	{ MMFIX_STATS_WAIT_NS, "wait_seconds_total",
	  "Time spent waiting for lru_lock, by the NUMA node of the lruvec." },
	{ MMFIX_STATS_HOLD_NS, "hold_seconds_total",
	  "Time lru_lock was held, by the NUMA node of the lruvec." },
};

#define LRU_NODES_MAX	1024

static void prom_lru(struct prom *p, const struct class_snap *cs,
		     bool holds_off)
{
	const struct class_snap *cls[] = { cs };
	char name[96], node[16];
	unsigned int n;
	uint64_t v;
	size_t m;

	prom_lock(p, "lru_lock", cls, NULL, NULL, 1, holds_off);
	for (m = 0; m < ARRAY_SIZE(lru_node_metrics); m++) {
		unsigned int f = lru_node_metrics[m].file;

		if (holds_off && is_hold_file(f))
			continue;
		snprintf(name, sizeof(name), "mmfix_lru_lock_node_%s",
			 lru_node_metrics[m].suffix);
		for (n = 0; n < LRU_NODES_MAX; n++) {
			if (!read_stat_u64(&v, "lru_lock/node%u/%s", n, file_names[f]))
				continue;
			snprintf(node, sizeof(node), "%u", n);
			prom_family(p, name, "counter", lru_node_metrics[m].help);
			prom_sample(p, name, v, name_is_ns(file_names[f]),
				    "node", node, NULL);
		}
	}
	if (!holds_off && read_stat_u64(&v, "lru_lock/unmatched"))
		prom_one(p, "mmfix_lru_lock_unmatched_total", "counter",
			 "lru_lock holds whose unlock was not seen.", v, false);
}

/*
 * mmap_lock by mode.  worst_{hold,wait}_ns are not exported: they are
 * the largest of hold_max_seconds and wait_max_seconds over the modes.
 */
static void prom_mmap(struct prom *p, const struct snap *s)
{
	const struct class_snap *cls[] = { &s->cls[MMFIX_STATS_MMAP_READ],
					   &s->cls[MMFIX_STATS_MMAP_WRITE] };
	static const char *const mode[] = { "read", "write" };
	uint64_t v;

	prom_lock(p, "mmap_lock", cls, "mode", mode, ARRAY_SIZE(cls),
		  snap_holds_off(s));
	if (read_stat_u64(&v, "mmap_lock/untracked"))
		prom_one(p, "mmfix_mmap_lock_untracked_total", "counter",
			 "mmap_lock operations not tracked.", v, false);
	if (read_stat_u64(&v, "mmap_lock/skipped_irqs_off"))
		prom_one(p, "mmfix_mmap_lock_skipped_irqs_off_total", "counter",
			 "mmap_lock operations skipped with interrupts off.", v, false);
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
	/* none from a module older than the files */
	prom_fix_livepatch(&p, &fl, "overridden_by", "mmfix_fix_overridden",
			   "1 when a livepatch loaded later (label livepatch: its module) "
			   "patches one of the fix's functions: its code runs there, not the fix.");
	prom_fix_livepatch(&p, &fl, "owned_by", "mmfix_fix_owned_by_other_livepatch",
			   "1 when another livepatch (label livepatch: its module) owns one "
			   "of the fix's functions, so mmfix did not patch the fix.");
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
