// SPDX-License-Identifier: GPL-2.0
/*
 * populate-churn - the one-page MAP_POPULATE churn of populate_drain
 * (and unmap_drain, lru_add_free_dead on 6.x): each thread maps one
 * anonymous page with MAP_POPULATE, writes it, unmaps it, over and over.
 * Prints the operations per second of all threads (higher is better).
 *
 *   populate-churn -t 64 -d 10
 *   mmfixctl ab populate_drain --run 'populate-churn -t 64' \
 *           --value last --better higher
 */
#include <getopt.h>
#include <sys/mman.h>
#include "common.h"

static void *churn(void *arg)
{
	long *ops = arg;
	char *p;

	while (!wl_stop) {
		p = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			wl_die("populate-churn", "mmap");
		p[0] = 1;
		munmap(p, PG);
		(*ops)++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "t:d:")) != -1)
		if (wl_opt(c, optarg))
			wl_usage("populate-churn", "");
	if (optind != argc)
		wl_usage("populate-churn", "");
	printf("%.0f\n", wl_run(churn));
	return 0;
}
