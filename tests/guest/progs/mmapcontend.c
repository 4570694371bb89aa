// SPDX-License-Identifier: GPL-2.0
/*
 * mmapcontend - mmap_lock workloads for the lock statistics.
 *
 *   mmapcontend [-w WRITERS] [-r READERS] [-n OPS] [-p PAGES] [-m]
 *
 * WRITERS threads each do OPS times: mmap one anonymous page, write it,
 * munmap it (two mmap_lock write acquisitions per op).  READERS threads
 * take the lock for reading until the writers are done: mincore() over a
 * PAGES-page mapping (a read hold as long as the page-table walk), or,
 * with -m, a full read of /proc/self/maps.  With READERS 0 each writer
 * also makes one mincore() call per op itself, so both kinds of
 * acquisition happen in one thread and nothing can contend.
 *
 * Prints "writes=W reads=R errors=E ns=T"; exits 1 on a data error.
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

static long opt_writers = 1, opt_readers, opt_ops = 1000, opt_pages = 4096;
static int opt_maps;
static char *region;
static volatile int writers_done;

static void die(const char *what)
{
	fprintf(stderr, "mmapcontend: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* One read acquisition of this process's mmap_lock. */
static void read_lock_once(unsigned char *v)
{
	char buf[4096];
	int fd;

	if (!opt_maps) {
		if (mincore(region, opt_pages * PG, v))
			die("mincore");
		return;
	}
	fd = open("/proc/self/maps", O_RDONLY);
	if (fd < 0)
		die("open /proc/self/maps");
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void *writer(void *arg)
{
	uint64_t seed = (uintptr_t)arg << 40;
	unsigned char *v = NULL;
	long op, bad = 0;

	if (!opt_readers) {
		v = malloc(opt_pages);
		if (!v)
			die("malloc");
	}
	for (op = 0; op < opt_ops; op++) {
		uint64_t *p = mmap(NULL, PG, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		*p = seed + op;
		bad += *(volatile uint64_t *)p != seed + op;
		if (munmap(p, PG))
			die("munmap");
		if (v)
			read_lock_once(v);
	}
	free(v);
	return (void *)bad;
}

static void *reader(void *arg __attribute__((unused)))
{
	unsigned char *v = malloc(opt_pages);
	long n = 0;

	if (!v)
		die("malloc");
	while (!__atomic_load_n(&writers_done, __ATOMIC_RELAXED)) {
		read_lock_once(v);
		n++;
	}
	free(v);
	return (void *)n;
}

int main(int argc, char **argv)
{
	pthread_t tid[128];
	struct timespec a, b;
	long t, bad = 0, reads = 0;
	void *ret;
	int c;

	while ((c = getopt(argc, argv, "w:r:n:p:m")) != -1) {
		switch (c) {
		case 'w':
			opt_writers = atol(optarg);
			break;
		case 'r':
			opt_readers = atol(optarg);
			break;
		case 'n':
			opt_ops = atol(optarg);
			break;
		case 'p':
			opt_pages = atol(optarg);
			break;
		case 'm':
			opt_maps = 1;
			break;
		default:
			fprintf(stderr, "usage: mmapcontend [-w WRITERS] [-r READERS] [-n OPS] [-p PAGES] [-m]\n");
			return 2;
		}
	}
	if (opt_writers < 1 || opt_writers > 64 || opt_readers < 0 ||
	    opt_readers > 64 || opt_pages < 1) {
		fprintf(stderr, "mmapcontend: 1-64 writers, 0-64 readers, PAGES >= 1\n");
		return 2;
	}
	/* Populated, so mincore() walks real page tables. */
	region = mmap(NULL, opt_pages * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (region == MAP_FAILED)
		die("mmap region");

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (t = 0; t < opt_readers; t++)
		if (pthread_create(&tid[opt_writers + t], NULL, reader, NULL))
			die("pthread_create");
	for (t = 0; t < opt_writers; t++)
		if (pthread_create(&tid[t], NULL, writer, (void *)t))
			die("pthread_create");
	for (t = 0; t < opt_writers; t++) {
		pthread_join(tid[t], &ret);
		bad += (long)ret;
	}
	__atomic_store_n(&writers_done, 1, __ATOMIC_RELAXED);
	for (t = 0; t < opt_readers; t++) {
		pthread_join(tid[opt_writers + t], &ret);
		reads += (long)ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (!opt_readers)
		reads = opt_ops * opt_writers;
	printf("writes=%ld reads=%ld errors=%ld ns=%lld\n",
	       2 * opt_ops * opt_writers, reads, bad,
	       (b.tv_sec - a.tv_sec) * 1000000000LL + b.tv_nsec - a.tv_nsec);
	return bad ? 1 : 0;
}
