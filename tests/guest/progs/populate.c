// SPDX-License-Identifier: GPL-2.0
/*
 * populate - MAP_POPULATE workloads for the populate_drain fix.
 *
 *   populate churn [-n OPS] [-t THREADS] [-p PAGES] [-l] [-f]
 *	OPS times per thread: mmap PAGES anonymous pages with MAP_POPULATE
 *	(and MAP_LOCKED with -l), write a pattern, read it back, munmap.
 *	With -f each op after the first maps MAP_FIXED over the previous
 *	op's mapping instead, so that mmap() itself unmaps the old pages;
 *	the last mapping is unmapped at the end.
 *	Prints "ops=N errors=E ns=T"; exits 1 on any data error.
 *
 *   populate lru [-p PAGES] [-l]
 *	Pinned to CPU 0: empties that CPU's LRU batch with a locked populate,
 *	then populates PAGES pages and reports, straight after the mmap
 *	returns, how many are on an LRU list (/proc/kpageflags) and the
 *	Unevictable delta from /proc/meminfo:
 *	"pages=P lru=X unevictable=Y mlocked=Z unevictable_kb=D".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG		4096UL
#define KPF_LRU		5
#define KPF_UNEVICTABLE	18
#define KPF_MLOCKED	33

static long opt_ops = 1000, opt_threads = 1, opt_pages = 1;
static int opt_locked, opt_fixed;

static void die(const char *what)
{
	fprintf(stderr, "populate: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* At @over with MAP_FIXED, replacing what is mapped there, if not NULL. */
static void *map_populated_at(void *over, long pages)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
	void *p;

	if (opt_locked)
		flags |= MAP_LOCKED;
	if (over)
		flags |= MAP_FIXED;
	p = mmap(over, pages * PG, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void *map_populated(long pages)
{
	return map_populated_at(NULL, pages);
}

/* Writes a per-page pattern and checks it; returns the pages that differ. */
static long fill_and_check(char *p, long pages, uint64_t seed)
{
	long i, bad = 0;

	for (i = 0; i < pages; i++)
		*(uint64_t *)(p + i * PG) = seed + i;
	for (i = 0; i < pages; i++)
		bad += *(uint64_t *)(p + i * PG) != seed + i;
	return bad;
}

static void *churn_thread(void *arg)
{
	uint64_t seed = (uintptr_t)arg << 32;
	long op, bad = 0;
	char *p = NULL;

	for (op = 0; op < opt_ops; op++) {
		p = map_populated_at(opt_fixed ? p : NULL, opt_pages);
		bad += fill_and_check(p, opt_pages, seed + op * opt_pages);
		if (!opt_fixed && munmap(p, opt_pages * PG))
			die("munmap");
	}
	if (opt_fixed && p && munmap(p, opt_pages * PG))
		die("munmap");
	return (void *)bad;
}

static int do_churn(void)
{
	pthread_t tid[64];
	struct timespec a, b;
	long t, bad = 0;
	void *ret;

	if (opt_threads < 1 || opt_threads > 64)
		opt_threads = 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (t = 0; t < opt_threads; t++)
		if (pthread_create(&tid[t], NULL, churn_thread, (void *)t))
			die("pthread_create");
	for (t = 0; t < opt_threads; t++) {
		pthread_join(tid[t], &ret);
		bad += (long)ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ops=%ld errors=%ld ns=%lld\n", opt_ops * opt_threads, bad,
	       (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec);
	return bad ? 1 : 0;
}

static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = strtol(line + strlen(key) + 1, NULL, 10);
	fclose(f);
	return v;
}

static uint64_t read_u64_at(int fd, off_t off)
{
	uint64_t v;

	if (pread(fd, &v, sizeof(v), off) != sizeof(v))
		die("pread");
	return v;
}

static int do_lru(void)
{
	long i, lru = 0, unev = 0, mlocked = 0, before, after;
	int pm, kpf, locked = opt_locked;
	cpu_set_t set;
	char *p;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	pm = open("/proc/self/pagemap", O_RDONLY);
	kpf = open("/proc/kpageflags", O_RDONLY);
	if (pm < 0 || kpf < 0)
		die("open pagemap/kpageflags");

	/* A VM_LOCKED populate drains this CPU's batch, fix on or off. */
	opt_locked = 1;
	p = map_populated(1);
	munmap(p, PG);
	opt_locked = locked;

	before = meminfo_kb("Unevictable");
	p = map_populated(opt_pages);
	after = meminfo_kb("Unevictable");
	for (i = 0; i < opt_pages; i++) {
		uint64_t pme = read_u64_at(pm, ((uintptr_t)p / PG + i) * 8);
		uint64_t flags;

		if (!(pme >> 63 & 1)) {
			fprintf(stderr, "populate: page %ld not present\n", i);
			return 1;
		}
		flags = read_u64_at(kpf, (pme & ((1ULL << 55) - 1)) * 8);
		lru += flags >> KPF_LRU & 1;
		unev += flags >> KPF_UNEVICTABLE & 1;
		mlocked += flags >> KPF_MLOCKED & 1;
	}
	printf("pages=%ld lru=%ld unevictable=%ld mlocked=%ld unevictable_kb=%ld errors=%ld\n",
	       opt_pages, lru, unev, mlocked, after - before,
	       fill_and_check(p, opt_pages, 0x5eed));
	munmap(p, opt_pages * PG);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int c;

	optind = 2;
	while ((c = getopt(argc, argv, "n:t:p:lf")) != -1) {
		switch (c) {
		case 'n':
			opt_ops = atol(optarg);
			break;
		case 't':
			opt_threads = atol(optarg);
			break;
		case 'p':
			opt_pages = atol(optarg);
			break;
		case 'l':
			opt_locked = 1;
			break;
		case 'f':
			opt_fixed = 1;
			break;
		default: return 2;
		}
	}
	if (opt_pages < 1)
		opt_pages = 1;
	if (!strcmp(cmd, "churn"))
		return do_churn();
	if (!strcmp(cmd, "lru"))
		return do_lru();
	fprintf(stderr, "usage: populate churn|lru [-n OPS] [-t THREADS] [-p PAGES] [-l] [-f]\n");
	return 2;
}
