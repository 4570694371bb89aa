// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of userspace-ctl/cmd.c with a table shaped like the one
 * mmfixctl will have once "stats" joins "status": exact names win, a
 * prefix must be unique, ambiguity and unknown names return NULL with
 * the match count.  Exits 1 on any failure.
 */
#include <stdio.h>
#include <string.h>
#include "mmfixctl.h"

static int dummy(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static const struct cmd table[] = {
	{ "status", dummy, "", "", "", 0 },
	{ "stats", dummy, "", "", "", 0 },
	{ "stat", dummy, "", "", "", 0 },
	{ "enable", dummy, "", "", "", 0 },
	{ "help", dummy, "", "", "", 0 },
};

static int failures;

static void expect(const char *name, const char *want, size_t want_n)
{
	const struct cmd *c;
	size_t n;

	c = cmd_find(table, sizeof(table) / sizeof(table[0]), name, &n);
	if ((want ? !c || strcmp(c->name, want) : c != NULL) ||
	    n != want_n) {
		printf("not ok '%s': got %s (%zu matches), want %s (%zu)\n",
		       name, c ? c->name : "NULL", n, want ? want : "NULL",
		       want_n);
		failures++;
	} else {
		printf("ok '%s' -> %s\n", name, want ? want : "NULL");
	}
}

int main(void)
{
	expect("status", "status", 1);
	expect("stats", "stats", 1);
	expect("stat", "stat", 1);	/* exact beats prefix of longer names */
	expect("statu", "status", 1);
	expect("sta", NULL, 3);		/* ambiguous */
	expect("s", NULL, 3);
	expect("", NULL, 5);		/* empty prefix matches everything */
	expect("e", "enable", 1);
	expect("enablex", NULL, 0);	/* longer than any name */
	expect("x", NULL, 0);
	expect("Status", NULL, 0);	/* case matters */
	return failures ? 1 : 0;
}
