// SPDX-License-Identifier: GPL-2.0
/*
 * sigdfl - run a command with SIGINT and SIGQUIT at their default action.
 *
 *   sigdfl COMMAND [ARG...]
 *
 * A non-interactive shell starts background commands with SIGINT and
 * SIGQUIT ignored (POSIX), and an ignored signal cannot be reset in the
 * shell; Ctrl-C in a terminal meets a command that has them at default.
 * t-67 starts "mmfixctl unload" this way so that its SIGINT is what an
 * operator's Ctrl-C is, handler or not.  Exit status 126 if exec fails.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sigdfl COMMAND [ARG...]\n");
		return 126;
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	execvp(argv[1], argv + 1);
	fprintf(stderr, "sigdfl: %s: %s\n", argv[1], strerror(errno));
	return 126;
}
