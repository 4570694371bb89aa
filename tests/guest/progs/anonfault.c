// SPDX-License-Identifier: GPL-2.0
/*
 * anonfault - anonymous fault scenarios for the anon_fault fix.
 *
 *   anonfault SCENARIO [-n PAGES] [-f FILE]
 *
 * Each scenario maps a region, faults new anonymous pages into it with
 * writes and checks them: page contents, /proc/self/pagemap (present,
 * exclusively mapped, distinct PFNs), the VMA's Anonymous: in
 * /proc/self/smaps, then soft-offlines a few of the new pages
 * (MADV_SOFT_OFFLINE migrates them: the rmap walk must find each page
 * through its folio index, so a wrong index makes it fail) and checks
 * that they moved and kept their data.  Scenarios:
 *
 *   anon      private anonymous mapping
 *   mremap    fault, mremap() the VMA elsewhere and grow it, fault more
 *   fork      fork; parent and child each break CoW on half the pages
 *   devzero   MAP_PRIVATE /dev/zero at file offset 1 GiB
 *   filepriv  MAP_PRIVATE mapping of FILE (-f, a tmpfs file) at offset
 *             16 pages, written (CoW of the file pages)
 *   dontneed  fault, MADV_DONTNEED, refault
 *   thp       one PMD-sized THP (MADV_HUGEPAGE); thp=0 if none was given
 *
 * Prints one line of key=value:
 *   fast, split    deltas of /sys/kernel/mmfix/fixes/anon_fault/
 *                  {fast,split}_index over the measured faults (-1: no
 *                  such file), taken in this process around the faults
 *   faults         number of new anonymous folios the measured faults make
 *   present excl distinct   pagemap checks over the checked pages
 *   anon_kb        Anonymous: of the VMA (smaps), expect pages*4
 *   offlined moved offline_err   soft-offline results (errno of the
 *                  first failure, 0 if none)
 *   bad            pages with wrong contents
 * Exit status 0 when every check passed, 1 on a failed check, 2 on an
 * unexpected system call failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG		4096UL
#define THP_SIZE	(2UL << 20)
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif
#define PM_PRESENT	(1ULL << 63)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_PFN		((1ULL << 55) - 1)
#define CTR_DIR		"/sys/kernel/mmfix/fixes/anon_fault/"

static long opt_pages = 64;
static const char *opt_file;

struct result {
	long long fast, split;
	long faults, checked, present, excl, distinct;
	long anon_kb, offlined, moved, offline_err, bad, thp;
};

static void die(const char *what)
{
	fprintf(stderr, "anonfault: %s: %s\n", what, strerror(errno));
	exit(2);
}

static long long counter(const char *name)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), CTR_DIR "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

struct counters {
	long long fast, split;
};

static void counters_get(struct counters *c)
{
	c->fast = counter("fast_index");
	c->split = counter("split_index");
}

static void counters_delta(struct result *r, const struct counters *a)
{
	struct counters b;

	counters_get(&b);
	r->fast = a->fast < 0 ? -1 : b.fast - a->fast;
	r->split = a->split < 0 ? -1 : b.split - a->split;
}

/* The value page @i of a region holds at its first and last word. */
static uint64_t pattern(uint64_t seed, long i)
{
	return seed * 0x9e3779b97f4a7c15ULL + i;
}

/* Writes the pattern into pages [from, to): one write fault each. */
static void fill(char *p, long from, long to, uint64_t seed)
{
	long i;

	for (i = from; i < to; i++) {
		*(volatile uint64_t *)(p + i * PG) = pattern(seed, i);
		*(volatile uint64_t *)(p + i * PG + PG - 8) = ~pattern(seed, i);
	}
}

static long check(const char *p, long from, long to, uint64_t seed)
{
	long i, bad = 0;

	for (i = from; i < to; i++)
		bad += *(volatile uint64_t *)(p + i * PG) != pattern(seed, i) ||
		       *(volatile uint64_t *)(p + i * PG + PG - 8) != ~pattern(seed, i);
	return bad;
}

/* Opened once; a forked child must reopen it (it names the opener's mm). */
static int pagemap_fd = -1;

static uint64_t pagemap(const void *addr)
{
	uint64_t e;

	if (pagemap_fd < 0)
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		die("open /proc/self/pagemap");
	if (pread(pagemap_fd, &e, sizeof(e), (uintptr_t)addr / PG * 8) != sizeof(e))
		die("pread pagemap");
	return e;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* pagemap checks over pages [0, n) of @p. */
static void check_pagemap(struct result *r, const char *p, long n)
{
	uint64_t *pfn = calloc(n, sizeof(*pfn));
	long i;

	if (!pfn)
		die("calloc");
	for (i = 0; i < n; i++) {
		uint64_t e = pagemap(p + i * PG);

		r->present += !!(e & PM_PRESENT);
		r->excl += !!(e & PM_EXCLUSIVE);
		pfn[i] = e & PM_PFN;
	}
	qsort(pfn, n, sizeof(*pfn), cmp_u64);
	for (i = 0; i < n; i++)
		r->distinct += pfn[i] && (i == 0 || pfn[i] != pfn[i - 1]);
	r->checked += n;
	free(pfn);
}

/* smaps field @key (e.g. "Anonymous") of the VMA starting at @start. */
static long smaps_kb(const void *start, const char *key)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	size_t klen = strlen(key);
	unsigned long lo, hi;
	char line[256];
	int in = 0;
	long v = -1;

	if (!f)
		die("open /proc/self/smaps");
	while (fgets(line, sizeof(line), f)) {
		/* "lo-hi perms ..." starts a VMA, "Key:   N kB" is a field */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo == (uintptr_t)start;
		else if (in && !strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * Soft-offlines page @i of @p (pattern @seed): it must be migrated to
 * another PFN and keep its data.
 */
static void offline(struct result *r, char *p, long i, uint64_t seed)
{
	uint64_t before = pagemap(p + i * PG) & PM_PFN, after;

	if (madvise(p + i * PG, PG, MADV_SOFT_OFFLINE)) {
		if (!r->offline_err)
			r->offline_err = errno;
		return;
	}
	r->offlined++;
	after = pagemap(p + i * PG) & PM_PFN;
	r->moved += after && after != before;
	r->bad += check(p, i, i + 1, seed);
}

static void offline_three(struct result *r, char *p, long from, long to,
			  uint64_t seed)
{
	offline(r, p, from, seed);
	offline(r, p, from + (to - from) / 2, seed);
	offline(r, p, to - 1, seed);
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (madvise(p, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	return p;
}

/*
 * Faults in scratch pages once, so that the stack, the counters' read
 * path and the pagemap descriptor cause no new faults while measuring.
 */
static void warm_up(void)
{
	volatile char stack[64 << 10];
	struct counters c;
	char *p = map_anon(4 * PG);

	memset((char *)stack, 1, sizeof(stack));
	counters_get(&c);
	fill(p, 0, 4, 1);
	pagemap(p);
	munmap(p, 4 * PG);
}

static void do_anon(struct result *r)
{
	long n = opt_pages;
	char *p = map_anon(n * PG);
	struct counters c;

	counters_get(&c);
	fill(p, 0, n, 11);
	counters_delta(r, &c);
	r->faults = n;
	r->bad += check(p, 0, n, 11);
	check_pagemap(r, p, n);
	r->anon_kb = smaps_kb(p, "Anonymous");
	offline_three(r, p, 0, n, 11);
	r->bad += check(p, 0, n, 11);
}

/*
 * Faults the first half, moves the VMA (its vm_pgoff stays that of the
 * old address: it has folios), grows it to twice the size and faults the
 * rest: new folios get indices relative to the old address.
 */
static void do_mremap(struct result *r)
{
	long n = opt_pages, half = n / 2;
	char *p = map_anon(n * PG), *q;
	struct counters c;

	fill(p, 0, half, 21);
	/* a free range for the target, away from the source */
	q = mmap(NULL, 4 * n * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		die("mmap target");
	q += n * PG;
	q = mremap(p, n * PG, 2 * n * PG, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	if (q == MAP_FAILED)
		die("mremap");
	counters_get(&c);
	fill(q, half, 2 * n, 21);
	counters_delta(r, &c);
	r->faults = 2 * n - half;
	r->bad += check(q, 0, 2 * n, 21);
	check_pagemap(r, q, 2 * n);
	r->anon_kb = smaps_kb(q, "Anonymous");
	offline(r, q, 0, 21);			/* faulted before the move */
	offline(r, q, half, 21);		/* after, in the old size */
	offline(r, q, 2 * n - 1, 21);		/* after, in the grown part */
	r->bad += check(q, 0, 2 * n, 21);
}

/*
 * After fork the parent writes the first half (CoW copies while the
 * child still maps them), then the child writes the second half.  Both
 * check all pages and soft-offline one copied page.
 */
static void do_fork(struct result *r)
{
	long n = opt_pages, half = n / 2;
	char *p = map_anon(n * PG);
	int to_child[2], to_parent[2], status;
	struct counters c;
	char b = 0;
	pid_t pid;

	fill(p, 0, n, 31);
	if (pipe(to_child) || pipe(to_parent))
		die("pipe");
	counters_get(&c);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct result cr = { 0 };

		close(pagemap_fd);
		pagemap_fd = -1;
		if (read(to_child[0], &b, 1) != 1)
			_exit(2);
		fill(p, half, n, 32);		/* CoW break in the child */
		cr.bad += check(p, 0, half, 31) + check(p, half, n, 32);
		check_pagemap(&cr, p, n);
		offline(&cr, p, n - 1, 32);
		cr.bad += check(p, 0, half, 31) + check(p, half, n, 32);
		printf("child present=%ld excl=%ld distinct=%ld offlined=%ld moved=%ld offline_err=%ld bad=%ld\n",
		       cr.present, cr.excl, cr.distinct, cr.offlined, cr.moved,
		       cr.offline_err, cr.bad);
		fflush(stdout);
		_exit(cr.bad || cr.present != n || cr.excl != n ||
		      cr.distinct != n || cr.offlined != 1 || cr.moved != 1);
	}
	fill(p, 0, half, 33);			/* CoW break in the parent */
	if (write(to_child[1], &b, 1) != 1)
		die("write pipe");
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	counters_delta(r, &c);
	r->faults = n;				/* half in each process */
	r->bad += check(p, 0, half, 33) + check(p, half, n, 31);
	check_pagemap(r, p, n);
	r->anon_kb = smaps_kb(p, "Anonymous");
	offline(r, p, 0, 33);
	r->bad += check(p, 0, half, 33) + check(p, half, n, 31);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "anonfault: child failed (status %#x)\n", status);
		r->bad++;
	}
}

/* MAP_PRIVATE /dev/zero: anonymous, but vm_file set and vm_pgoff = 1 GiB. */
static void do_devzero(struct result *r)
{
	long n = opt_pages;
	int fd = open("/dev/zero", O_RDWR);
	struct counters c;
	char *p;

	if (fd < 0)
		die("open /dev/zero");
	p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 1L << 30);
	if (p == MAP_FAILED)
		die("mmap /dev/zero");
	close(fd);
	if (madvise(p, n * PG, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	counters_get(&c);
	fill(p, 0, n, 41);
	counters_delta(r, &c);
	r->faults = n;
	r->bad += check(p, 0, n, 41);
	check_pagemap(r, p, n);
	r->anon_kb = smaps_kb(p, "Anonymous");
	offline_three(r, p, 0, n, 41);
	r->bad += check(p, 0, n, 41);
}

/* MAP_PRIVATE file mapping at offset 16 pages, written: CoW copies. */
static void do_filepriv(struct result *r)
{
	const long off = 16, n = opt_pages;
	uint64_t v;
	struct counters c;
	long i;
	char *p;
	int fd;

	if (!opt_file) {
		fprintf(stderr, "anonfault: filepriv needs -f FILE\n");
		exit(2);
	}
	fd = open(opt_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(opt_file);
	for (i = 0; i < off + n; i++) {
		v = pattern(51, i);
		if (pwrite(fd, &v, sizeof(v), i * PG) != sizeof(v))
			die("pwrite");
	}
	if (ftruncate(fd, (off + n) * PG))
		die("ftruncate");
	p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, off * PG);
	if (p == MAP_FAILED)
		die("mmap file");
	for (i = 0; i < n; i++)		/* the file's data, read-only mapped */
		r->bad += *(volatile uint64_t *)(p + i * PG) != pattern(51, off + i);
	counters_get(&c);
	fill(p, 0, n, 52);
	counters_delta(r, &c);
	r->faults = n;
	r->bad += check(p, 0, n, 52);
	for (i = 0; i < n; i++) {	/* the file itself is unchanged */
		if (pread(fd, &v, sizeof(v), (off + i) * PG) != sizeof(v))
			die("pread");
		r->bad += v != pattern(51, off + i);
	}
	check_pagemap(r, p, n);
	r->anon_kb = smaps_kb(p, "Anonymous");
	offline_three(r, p, 0, n, 52);
	r->bad += check(p, 0, n, 52);
	close(fd);
	unlink(opt_file);
}

/* Fault, zap with MADV_DONTNEED (reads give zeros again), refault. */
static void do_dontneed(struct result *r)
{
	long n = opt_pages, i;
	char *p = map_anon(n * PG);
	struct counters c;

	fill(p, 0, n, 61);
	if (madvise(p, n * PG, MADV_DONTNEED))
		die("madvise(MADV_DONTNEED)");
	for (i = 0; i < n; i++)
		r->bad += *(volatile uint64_t *)(p + i * PG) != 0;
	counters_get(&c);
	fill(p, 0, n, 62);
	counters_delta(r, &c);
	r->faults = n;
	r->bad += check(p, 0, n, 62);
	check_pagemap(r, p, n);
	r->anon_kb = smaps_kb(p, "Anonymous");
	offline_three(r, p, 0, n, 62);
	r->bad += check(p, 0, n, 62);
}

/* One PMD-mapped THP: one new folio for 512 pages. */
static void do_thp(struct result *r)
{
	long n = THP_SIZE / PG;
	char *raw, *p;
	struct counters c;

	raw = mmap(NULL, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap");
	p = (char *)(((uintptr_t)raw + THP_SIZE - 1) & ~(THP_SIZE - 1));
	if (madvise(p, THP_SIZE, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	counters_get(&c);
	fill(p, 0, n, 71);
	counters_delta(r, &c);
	r->faults = 1;
	r->thp = smaps_kb(p, "AnonHugePages") >= (long)(THP_SIZE >> 10);
	r->bad += check(p, 0, n, 71);
	check_pagemap(r, p, n);
	r->anon_kb = smaps_kb(p, "Anonymous");
	/* splits the THP (an rmap walk) and migrates one subpage */
	offline(r, p, 7, 71);
	r->bad += check(p, 0, n, 71);
}

static const struct {
	const char *name;
	void (*fn)(struct result *r);
} scenarios[] = {
	{ "anon", do_anon }, { "mremap", do_mremap }, { "fork", do_fork },
	{ "devzero", do_devzero }, { "filepriv", do_filepriv },
	{ "dontneed", do_dontneed }, { "thp", do_thp },
};

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	struct result r = { 0 };
	unsigned int i;
	int c;

	optind = 2;
	while ((c = getopt(argc, argv, "n:f:")) != -1) {
		switch (c) {
		case 'n':
			opt_pages = atol(optarg);
			break;
		case 'f':
			opt_file = optarg;
			break;
		default: return 2;
		}
	}
	if (opt_pages < 4)
		opt_pages = 4;
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		if (strcmp(cmd, scenarios[i].name))
			continue;
		warm_up();
		scenarios[i].fn(&r);
		printf("fast=%lld split=%lld faults=%ld checked=%ld present=%ld excl=%ld distinct=%ld anon_kb=%ld offlined=%ld moved=%ld offline_err=%ld bad=%ld thp=%ld\n",
		       r.fast, r.split, r.faults, r.checked, r.present, r.excl,
		       r.distinct, r.anon_kb, r.offlined, r.moved,
		       r.offline_err, r.bad, r.thp);
		return r.bad || r.present != r.checked ? 1 : 0;
	}
	fprintf(stderr, "usage: anonfault anon|mremap|fork|devzero|filepriv|dontneed|thp [-n PAGES] [-f FILE]\n");
	return 2;
}
