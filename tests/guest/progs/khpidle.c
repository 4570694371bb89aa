// SPDX-License-Identifier: GPL-2.0
/*
 * khpidle - an idle mm that khugepaged walks again and again, for
 * tests/guest/t-53-khugepaged-writer-hold.sh.
 *
 *   khpidle [-n VMAS]
 *
 * Maps VMAS (default 100000) one-page anonymous VMAs that cannot merge
 * (alternating PROT_READ and PROT_READ|PROT_WRITE) and above them a
 * 4 MiB MADV_HUGEPAGE region with one byte written (an anon_vma,
 * without which khugepaged does not take the VMA; the fault maps a THP
 * or khugepaged collapses it once): it keeps the mm registered with
 * khugepaged, and every scan walks all the VMAs and finds nothing to do.  Prints "ready pid=P" and
 * sleeps until killed, touching nothing: no thread of its own takes its
 * mmap_lock afterwards.  Exit status 2 if the set-up failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG	4096UL
#define PMD	(2UL << 20)
#define BASE	(1UL << 40)

static void die(const char *what)
{
	fprintf(stderr, "khpidle: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void raise_max_map_count(long need)
{
	char buf[32];
	int fd = open("/proc/sys/vm/max_map_count", O_RDWR);
	long have;
	ssize_t n;

	if (fd < 0)
		die("open max_map_count");
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	have = atol(buf);
	if (have < need) {
		snprintf(buf, sizeof(buf), "%ld\n", need);
		if (pwrite(fd, buf, strlen(buf), 0) < 0)
			die("raise max_map_count");
	}
	close(fd);
}

int main(int argc, char **argv)
{
	long vmas = 100000, i;
	unsigned long late;
	char *p;
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n') {
			fprintf(stderr, "usage: khpidle [-n VMAS]\n");
			return 2;
		}
		vmas = atol(optarg);
	}
	if (vmas < 1)
		vmas = 1;
	raise_max_map_count(vmas + 10000);
	p = mmap((void *)BASE, vmas * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	for (i = 1; i < vmas; i += 2)
		if (mprotect(p + i * PG, PG, PROT_READ))
			die("mprotect");
	late = (BASE + vmas * PG + 2 * PMD) & ~(PMD - 1);
	p = mmap((void *)late, 2 * PMD, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		die("mmap late");
	if (madvise(p, 2 * PMD, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	p[0] = 1;
	printf("ready pid=%d\n", getpid());
	fflush(stdout);
	for (;;)
		pause();
}
