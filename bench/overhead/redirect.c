// SPDX-License-Identifier: GPL-2.0
/*
 * redirect - what one redirected call of a patched kernel function costs
 * (bench-overhead.sh, FIXCOST's reference).
 *
 *   redirect [-n CALLS]
 *	Maps one anonymous page and mlock2()s it with MLOCK_ONFAULT, then
 *	CALLS times mlock2()s it again the same way.  Each call changes
 *	nothing (the VMA already has VM_LOCKED | VM_LOCKONFAULT) and
 *	populates the range, where populate_vma_page_range() returns at
 *	once for a LOCKONFAULT VMA, the kernel's and mmfix's copy alike:
 *	with only populate_drain patched, the one difference a loaded
 *	mmfix makes is the redirect of that call.  Prints "calls=N ns=T",
 *	T the CLOCK_MONOTONIC time of the loop (under QEMU -icount shift=0,
 *	guest instructions).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT	0x01
#endif

static long lock_onfault(void *p)
{
	return syscall(SYS_mlock2, p, 4096UL, MLOCK_ONFAULT);
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long calls = 10000, i;
	long long t0;
	void *p;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n' || (calls = atol(optarg)) <= 0) {
			fprintf(stderr, "usage: redirect [-n CALLS]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: redirect [-n CALLS]\n");
		return 2;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || lock_onfault(p)) {
		fprintf(stderr, "redirect: mmap/mlock2: %s\n", strerror(errno));
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < calls; i++) {
		if (lock_onfault(p)) {
			fprintf(stderr, "redirect: mlock2: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("calls=%ld ns=%lld\n", calls, now_ns() - t0);
	return 0;
}
