// SPDX-License-Identifier: GPL-2.0
/*
 * soakwork - background workloads for the reliability suite (t-7x), run
 * while mmfix is loaded, switched and unloaded underneath them.
 *
 *   soakwork faults [-t THREADS] [-p PAGES] [-i USECS] [-s STOPFILE]
 *                   [-d SECONDS]
 *	Threaded anonymous faults: each thread maps PAGES anonymous pages,
 *	writes a per-page pattern (one new anonymous folio per page),
 *	MADV_DONTNEEDs every other page, checks that those read back as
 *	zero and the others kept their pattern, refaults the dropped ones,
 *	checks everything again and unmaps.  Threads share one mm, so they
 *	also contend on its locks.  -i: sleep USECS after each round
 *	(default 0: flat out).
 *
 *   soakwork vmas [-v VMAS] [-s STOPFILE] [-d SECONDS]
 *	Keeps khugepaged busy: VMAS one-page anonymous VMAs (alternately
 *	read-write and read-only, so they never merge) next to a 4 MiB
 *	MADV_HUGEPAGE region faulted in as small pages, which khugepaged
 *	collapses.  Every round checks all data, maps and unmaps a scratch
 *	VMA (mmap_lock for writing, as khugepaged's scan holds it for
 *	reading), and every 8th round replaces the huge region.
 *
 * Both run until STOPFILE exists or SECONDS (default 600) pass, then print
 * one line of key=value ("rounds=R faults=F errors=E" or "rounds=R vmas=V
 * thp_kb=K errors=E") and exit 1 if any data check failed, 2 on an
 * unexpected system call failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG		4096UL
#define HPAGE		(2UL << 20)
#define HUGE_REGION	(2 * HPAGE)

static long opt_threads = 2, opt_pages = 64, opt_vmas = 2000;
static long opt_seconds = 600, opt_pause_us;
static const char *opt_stop;
static time_t deadline;

static void die(const char *what)
{
	fprintf(stderr, "soakwork: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int should_stop(void)
{
	return (opt_stop && access(opt_stop, F_OK) == 0) ||
	       time(NULL) >= deadline;
}

static uint64_t pattern(uint64_t seed, long i)
{
	return (seed * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)i ^ 0x5a5a0000ULL;
}

/* faults ***************************************************************/

struct fault_stats {
	long rounds, faults, errors;
};

static void *fault_thread(void *arg)
{
	struct fault_stats *st = arg;
	uint64_t seed = (uintptr_t)st;
	long i;

	while (!should_stop()) {
		char *p = mmap(NULL, opt_pages * PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		seed++;
		for (i = 0; i < opt_pages; i++)
			*(uint64_t *)(p + i * PG) = pattern(seed, i);
		st->faults += opt_pages;
		for (i = 0; i < opt_pages; i += 2)
			if (madvise(p + i * PG, PG, MADV_DONTNEED))
				die("madvise(MADV_DONTNEED)");
		for (i = 0; i < opt_pages; i++)
			st->errors += *(uint64_t *)(p + i * PG) !=
				      (i % 2 ? pattern(seed, i) : 0);
		for (i = 0; i < opt_pages; i += 2)
			*(uint64_t *)(p + i * PG) = pattern(seed, i);
		st->faults += (opt_pages + 1) / 2;
		for (i = 0; i < opt_pages; i++)
			st->errors += *(uint64_t *)(p + i * PG) != pattern(seed, i);
		if (munmap(p, opt_pages * PG))
			die("munmap");
		st->rounds++;
		if (opt_pause_us)
			usleep(opt_pause_us);
	}
	return NULL;
}

static int do_faults(void)
{
	struct fault_stats st[64], sum = { 0 };
	pthread_t tid[64];
	long t;

	if (opt_threads < 1 || opt_threads > 64)
		opt_threads = 2;
	memset(st, 0, sizeof(st));
	for (t = 0; t < opt_threads; t++)
		if (pthread_create(&tid[t], NULL, fault_thread, &st[t]))
			die("pthread_create");
	for (t = 0; t < opt_threads; t++) {
		pthread_join(tid[t], NULL);
		sum.rounds += st[t].rounds;
		sum.faults += st[t].faults;
		sum.errors += st[t].errors;
	}
	printf("rounds=%ld faults=%ld errors=%ld\n", sum.rounds, sum.faults,
	       sum.errors);
	return sum.errors ? 1 : 0;
}

/* vmas *****************************************************************/

/* A 2 MiB aligned region of HUGE_REGION bytes, faulted as small pages. */
static char *huge_region_new(uint64_t seed)
{
	char *raw, *p;
	long i;

	raw = mmap(NULL, HUGE_REGION + HPAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die("mmap huge region");
	p = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	if (p > raw && munmap(raw, p - raw))
		die("munmap head");
	if (munmap(p + HUGE_REGION, raw + HPAGE - p))
		die("munmap tail");
	/* small pages first, so that there is something to collapse */
	if (madvise(p, HUGE_REGION, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	for (i = 0; i < (long)(HUGE_REGION / PG); i++)
		*(uint64_t *)(p + i * PG) = pattern(seed, i);
	if (madvise(p, HUGE_REGION, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	return p;
}

static long huge_region_check(const char *p, uint64_t seed)
{
	long i, bad = 0;

	for (i = 0; i < (long)(HUGE_REGION / PG); i++)
		bad += *(const uint64_t *)(p + i * PG) != pattern(seed, i);
	return bad;
}

/* AnonHugePages of the mapping at p, from /proc/self/smaps, in kB. */
static long anon_huge_kb(const char *p)
{
	char line[256];
	unsigned long start, end;
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start <= (uintptr_t)p && (uintptr_t)p < end;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static int do_vmas(void)
{
	long i, rounds = 0, errors = 0, thp_kb = 0, kb;
	uint64_t huge_seed = 1;
	char *small, *huge;

	if (opt_vmas < 2)
		opt_vmas = 2;
	small = mmap(NULL, opt_vmas * PG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (small == MAP_FAILED)
		die("mmap small VMAs");
	for (i = 0; i < opt_vmas; i++)
		*(uint64_t *)(small + i * PG) = pattern(0, i);
	for (i = 1; i < opt_vmas; i += 2)
		if (mprotect(small + i * PG, PG, PROT_READ))
			die("mprotect");
	huge = huge_region_new(huge_seed);

	while (!should_stop()) {
		void *scratch;

		for (i = 0; i < opt_vmas; i++)
			errors += *(uint64_t *)(small + i * PG) != pattern(0, i);
		errors += huge_region_check(huge, huge_seed);
		scratch = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (scratch == MAP_FAILED)
			die("mmap scratch");
		*(volatile char *)scratch = 1;
		if (munmap(scratch, PG))
			die("munmap scratch");
		if (++rounds % 8 == 0) {
			kb = anon_huge_kb(huge);
			if (kb > 0)
				thp_kb += kb;
			if (munmap(huge, HUGE_REGION))
				die("munmap huge region");
			huge = huge_region_new(++huge_seed);
		}
		usleep(20000);
	}
	kb = anon_huge_kb(huge);
	if (kb > 0)
		thp_kb += kb;
	errors += huge_region_check(huge, huge_seed);
	printf("rounds=%ld vmas=%ld thp_kb=%ld errors=%ld\n", rounds,
	       opt_vmas, thp_kb, errors);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int c;

	optind = 2;
	while ((c = getopt(argc, argv, "t:p:v:s:d:i:")) != -1) {
		switch (c) {
		case 't':
			opt_threads = atol(optarg);
			break;
		case 'p':
			opt_pages = atol(optarg);
			break;
		case 'v':
			opt_vmas = atol(optarg);
			break;
		case 's':
			opt_stop = optarg;
			break;
		case 'd':
			opt_seconds = atol(optarg);
			break;
		case 'i':
			opt_pause_us = atol(optarg);
			break;
		default: return 2;
		}
	}
	if (opt_pages < 2)
		opt_pages = 2;
	deadline = time(NULL) + opt_seconds;
	if (!strcmp(cmd, "faults"))
		return do_faults();
	if (!strcmp(cmd, "vmas"))
		return do_vmas();
	fprintf(stderr, "usage: soakwork faults|vmas [-t THREADS] [-p PAGES] [-i USECS] [-v VMAS] [-s STOPFILE] [-d SECONDS]\n");
	return 2;
}
