// SPDX-License-Identifier: GPL-2.0
/*
 * finit - load a module with exactly one finit_module(2) call.
 *
 *   finit MODULE.ko [PARAMS]
 *
 * busybox insmod retries a failed finit_module() with init_module(), so
 * a refused module runs its init (and logs its refusal) twice; kmod's
 * insmod does not.  Exit status 0 when loaded, else 1 with
 * "finit: MODULE: <error>" on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: finit MODULE.ko [PARAMS]\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, argc > 2 ? argv[2] : "", 0)) {
		fprintf(stderr, "finit: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	return 0;
}
