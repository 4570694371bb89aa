// SPDX-License-Identifier: GPL-2.0
/*
 * anon-fault - the anonymous-fault loop of anon_fault: each thread maps
 * PAGES anonymous pages (no MAP_POPULATE), writes one byte per page so
 * that each write faults in a new folio, and unmaps them, over and over.
 * Prints the page faults per second of all threads (higher is better).
 *
 *   anon-fault -t 64 -d 10 -p 512
 *   mmfixctl ab anon_fault --run 'anon-fault -t 64' --value last \
 *           --better higher
 */
#include <getopt.h>
#include <sys/mman.h>
#include "common.h"

static long pages = 256;

static void *faults(void *arg)
{
	long *ops = arg, i;
	char *p;

	while (!wl_stop) {
		p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			wl_die("anon-fault", "mmap");
		/* no huge page: every page its own fault */
		madvise(p, pages * PG, MADV_NOHUGEPAGE);
		for (i = 0; i < pages; i++)
			p[i * PG] = 1;
		munmap(p, pages * PG);
		*ops += pages;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char *end;
	int c;

	while ((c = getopt(argc, argv, "t:d:p:")) != -1) {
		if (c == 'p') {
			pages = strtol(optarg, &end, 10);
			if (*end || pages < 1 || pages > 1 << 20)
				wl_usage("anon-fault", " [-p PAGES]");
		} else if (wl_opt(c, optarg)) {
			wl_usage("anon-fault", " [-p PAGES]");
		}
	}
	if (optind != argc)
		wl_usage("anon-fault", " [-p PAGES]");
	printf("%.0f\n", wl_run(faults));
	return 0;
}
