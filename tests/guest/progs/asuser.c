// SPDX-License-Identifier: GPL-2.0
/*
 * asuser - run a command as another user (busybox has no setuidgid).
 *
 *   asuser UID GID COMMAND [ARG...]
 *
 * Drops every supplementary group, sets the group then the user id (real,
 * effective and saved), checks that root cannot be regained, and execs
 * COMMAND.  Exit status 126 if that fails, else COMMAND's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid;
	gid_t gid;

	if (argc < 4) {
		fprintf(stderr, "usage: asuser UID GID COMMAND [ARG...]\n");
		return 126;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	gid = (gid_t)strtoul(argv[2], NULL, 10);
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		fprintf(stderr, "asuser: %s\n", strerror(errno));
		return 126;
	}
	if (uid != 0 && (setuid(0) == 0 || geteuid() == 0)) {
		fprintf(stderr, "asuser: could regain root\n");
		return 126;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "asuser: %s: %s\n", argv[3], strerror(errno));
	return 126;
}
