// SPDX-License-Identifier: GPL-2.0
/*
 * zapcount - page frees through an mmu_gather other than munmap, for
 * unmap_drain's counters (t-20).
 *
 *   zapcount dontneed|exit [-n OPS]
 *	dontneed: OPS times, write one page of a private anonymous mapping
 *	and madvise(MADV_DONTNEED) it (one free_pages_and_swap_cache()
 *	call each: the zap frees one page).  exit: OPS times, fork a child
 *	that writes one fresh page and exits, and wait for it (each exit's
 *	exit_mmap() frees pages through an mmu_gather).  Prints "ops=N".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG	4096UL

static void die(const char *what)
{
	fprintf(stderr, "zapcount: %s: %s\n", what, strerror(errno));
	exit(2);
}

int main(int argc, char **argv)
{
	long ops = 100, op;
	int do_exit, c, st;
	char *p;
	pid_t pid;

	if (argc < 2 || (strcmp(argv[1], "dontneed") && strcmp(argv[1], "exit"))) {
		fprintf(stderr, "usage: zapcount dontneed|exit [-n OPS]\n");
		return 2;
	}
	do_exit = !strcmp(argv[1], "exit");
	optind = 2;
	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n') {
			fprintf(stderr, "usage: zapcount dontneed|exit [-n OPS]\n");
			return 2;
		}
		ops = atol(optarg);
	}
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	for (op = 0; op < ops; op++) {
		if (!do_exit) {
			p[0] = 1;
			if (madvise(p, PG, MADV_DONTNEED))
				die("madvise MADV_DONTNEED");
			continue;
		}
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			char *q = mmap(NULL, PG, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (q == MAP_FAILED)
				_exit(2);
			q[0] = 1;
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			die("child");
	}
	printf("ops=%ld\n", ops);
	return 0;
}
