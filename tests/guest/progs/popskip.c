// SPDX-License-Identifier: GPL-2.0
/*
 * popskip - calls of populate_vma_page_range() that return before
 * get-user-pages, for populate_drain's counters (t-10).
 *
 *   popskip onfault|protnone [-n OPS]
 *	onfault: OPS times, map one anonymous page, mlock2() it with
 *	MLOCK_ONFAULT (the VMA becomes VM_LOCKED | VM_LOCKONFAULT and
 *	mlock populates it, which returns at once for LOCKONFAULT),
 *	munmap it.  protnone: OPS times, mmap one PROT_NONE page with
 *	MAP_POPULATE, munmap it.  Each op calls populate_vma_page_range()
 *	once.  Prints "ops=N resident=R", R the pages found resident by
 *	mincore() before each munmap (0: nothing was faulted in).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG	4096UL

static void die(const char *what)
{
	fprintf(stderr, "popskip: %s: %s\n", what, strerror(errno));
	exit(2);
}

int main(int argc, char **argv)
{
	long ops = 100, op, resident = 0;
	int protnone, c;
	unsigned char v;
	void *p;

	if (argc < 2 || (strcmp(argv[1], "onfault") && strcmp(argv[1], "protnone"))) {
		fprintf(stderr, "usage: popskip onfault|protnone [-n OPS]\n");
		return 2;
	}
	protnone = !strcmp(argv[1], "protnone");
	optind = 2;
	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n') {
			fprintf(stderr, "usage: popskip onfault|protnone [-n OPS]\n");
			return 2;
		}
		ops = atol(optarg);
	}
	for (op = 0; op < ops; op++) {
		if (protnone) {
			p = mmap(NULL, PG, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
			if (p == MAP_FAILED)
				die("mmap PROT_NONE");
		} else {
			p = mmap(NULL, PG, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				die("mmap");
			if (mlock2(p, PG, MLOCK_ONFAULT))
				die("mlock2 MLOCK_ONFAULT");
		}
		if (mincore(p, PG, &v))
			die("mincore");
		resident += v & 1;
		if (munmap(p, PG))
			die("munmap");
	}
	printf("ops=%ld resident=%ld\n", ops, resident);
	return 0;
}
