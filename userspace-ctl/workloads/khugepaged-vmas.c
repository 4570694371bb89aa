// SPDX-License-Identifier: GPL-2.0
/*
 * khugepaged-vmas - the many-VMA workload of khugepaged_scan: VMAS small
 * anonymous mappings that cannot merge (alternating protections) below a
 * MADV_HUGEPAGE region that khugepaged scans, while the threads map and
 * unmap one page each, over and over (each mmap/munmap takes the
 * mmap_lock for writing, which khugepaged's long read hold delays).
 * Prints the writers' mmap+munmap pairs per second (higher is better).
 *
 *   khugepaged-vmas -t 4 -d 10 -v 100000
 *   mmfixctl ab khugepaged_scan --run 'khugepaged-vmas -t 4' \
 *           --value last --better higher
 */
#include <getopt.h>
#include <sys/mman.h>
#include "common.h"

#define HUGE_REGION	(4UL << 20)

static long vmas = 100000;

static void *writer(void *arg)
{
	long *ops = arg;
	char *p;

	while (!wl_stop) {
		p = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			wl_die("khugepaged-vmas", "mmap");
		p[0] = 1;
		munmap(p, PG);
		(*ops)++;
	}
	return NULL;
}

static void setup(void)
{
	char *many, *huge;
	long i;

	many = mmap(NULL, vmas * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (many == MAP_FAILED)
		wl_die("khugepaged-vmas", "mmap");
	for (i = 0; i < vmas; i += 2)	/* split into vmas VMAs */
		if (mprotect(many + i * PG, PG, PROT_READ))
			wl_die("khugepaged-vmas", "mprotect (vm.max_map_count?)");
	huge = mmap(NULL, 2 * HUGE_REGION, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (huge == MAP_FAILED)
		wl_die("khugepaged-vmas", "mmap");
	huge = (char *)(((unsigned long)huge + HUGE_REGION - 1) & ~(HUGE_REGION - 1));
	madvise(huge, HUGE_REGION, MADV_HUGEPAGE);
	for (i = 0; i < (long)(HUGE_REGION / PG); i += 2)
		huge[i * PG] = 1;
}

int main(int argc, char **argv)
{
	char *end;
	int c;

	while ((c = getopt(argc, argv, "t:d:v:")) != -1) {
		if (c == 'v') {
			vmas = strtol(optarg, &end, 10);
			if (*end || vmas < 2 || vmas > 1 << 24)
				wl_usage("khugepaged-vmas", " [-v VMAS]");
		} else if (wl_opt(c, optarg)) {
			wl_usage("khugepaged-vmas", " [-v VMAS]");
		}
	}
	if (optind != argc)
		wl_usage("khugepaged-vmas", " [-v VMAS]");
	setup();
	printf("%.0f\n", wl_run(writer));
	return 0;
}
