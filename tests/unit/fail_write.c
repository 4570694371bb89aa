// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for tests: when FAIL_WRITE_ERRNO=N is set, write() to a
 * file whose name is "enabled" fails with errno N, the way the mmfix
 * module's store rejects a write (EOPNOTSUPP, EINVAL).  A plain file in a
 * fake sysfs tree cannot do that by itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t count)
{
	static ssize_t (*real_write)(int, const void *, size_t);
	const char *fail = getenv("FAIL_WRITE_ERRNO");
	char link[64], target[4096];
	ssize_t len;

	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))
			dlsym(RTLD_NEXT, "write");
	if (fail && fd > 2) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 8) {
			target[len] = '\0';
			if (!strcmp(target + len - 8, "/enabled")) {
				errno = atoi(fail);
				return -1;
			}
		}
	}
	return real_write(fd, buf, count);
}
