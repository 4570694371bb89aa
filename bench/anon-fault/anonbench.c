// SPDX-License-Identifier: GPL-2.0
/*
 * anonbench - pft-like anonymous fault benchmark for the anon_fault fix.
 *
 *   anonbench [-t THREADS] [-p PAGES] [-r ROUNDS]
 *
 * One private anonymous VMA (MADV_NOHUGEPAGE, so every fault maps one
 * 4 KiB page) is split into THREADS slices of PAGES pages.  Each thread,
 * started together with the others, ROUNDS times writes one word into
 * every page of its own slice (one anonymous fault each, all in the same
 * VMA, so all on the same vm_refcnt cacheline), reads them back, and
 * zaps the slice with MADV_DONTNEED.  Prints
 *   "faults=N ns=T faults_per_s=R fast=F split=S errors=E"
 * where F and S are the increase of the anon_fault fix's fast_index and
 * split_index counters over the timed part (-1 without mmfix), and exits
 * 1 if any page read back wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PG	4096UL
#define CTR_DIR	"/sys/kernel/mmfix/fixes/anon_fault/"

static long opt_threads = 2, opt_pages = 1024, opt_rounds = 50;
static char *region;
static pthread_barrier_t start;

static void die(const char *what)
{
	fprintf(stderr, "anonbench: %s: %s\n", what, strerror(errno));
	exit(2);
}

static long long counter(const char *name)
{
	char buf[32];
	ssize_t n;
	int fd = open(name, O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

static void *worker(void *arg)
{
	long t = (long)arg, r, i, bad = 0;
	char *p = region + t * opt_pages * PG;

	pthread_barrier_wait(&start);
	for (r = 0; r < opt_rounds; r++) {
		uint64_t v = (uint64_t)t << 48 | (uint64_t)r << 24;

		for (i = 0; i < opt_pages; i++)
			*(volatile uint64_t *)(p + i * PG) = v + i;
		for (i = 0; i < opt_pages; i++)
			bad += *(volatile uint64_t *)(p + i * PG) != v + i;
		if (madvise(p, opt_pages * PG, MADV_DONTNEED))
			die("madvise(MADV_DONTNEED)");
	}
	return (void *)bad;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	pthread_t tid[64];
	long t, bad = 0;
	long long ns, fast0, split0, fast, split;
	size_t len;
	void *ret;
	int c;

	while ((c = getopt(argc, argv, "t:p:r:")) != -1) {
		switch (c) {
		case 't':
			opt_threads = atol(optarg);
			break;
		case 'p':
			opt_pages = atol(optarg);
			break;
		case 'r':
			opt_rounds = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: anonbench [-t THREADS] [-p PAGES] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (opt_threads < 1 || opt_threads > 64 || opt_pages < 1 || opt_rounds < 1) {
		fprintf(stderr, "anonbench: need 1..64 threads, pages and rounds >= 1\n");
		return 2;
	}
	len = opt_threads * opt_pages * PG;
	region = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		die("mmap");
	if (madvise(region, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	if (pthread_barrier_init(&start, NULL, opt_threads + 1))
		die("pthread_barrier_init");
	for (t = 0; t < opt_threads; t++)
		if (pthread_create(&tid[t], NULL, worker, (void *)t))
			die("pthread_create");
	fast0 = counter(CTR_DIR "fast_index");
	split0 = counter(CTR_DIR "split_index");
	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_barrier_wait(&start);
	for (t = 0; t < opt_threads; t++) {
		pthread_join(tid[t], &ret);
		bad += (long)ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	fast = counter(CTR_DIR "fast_index");
	split = counter(CTR_DIR "split_index");
	ns = (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec;
	printf("faults=%ld ns=%lld faults_per_s=%.0f fast=%lld split=%lld errors=%ld\n",
	       opt_threads * opt_pages * opt_rounds, ns,
	       opt_threads * opt_pages * opt_rounds * 1e9 / ns,
	       fast0 < 0 ? -1 : fast - fast0, split0 < 0 ? -1 : split - split0,
	       bad);
	munmap(region, len);
	return bad ? 1 : 0;
}
