// SPDX-License-Identifier: GPL-2.0
/*
 * Command lookup: an exact name wins, otherwise a prefix must match
 * exactly one command ("st" is ambiguous once "stats" exists next to
 * "status").
 */
#include <string.h>
#include "mmfixctl.h"

const struct cmd *cmd_find(const struct cmd *cmds, size_t ncmds,
			   const char *name, size_t *nmatch)
{
	const struct cmd *found = NULL;
	size_t i, len = strlen(name);

	*nmatch = 0;
	for (i = 0; i < ncmds; i++) {
		if (!strcmp(cmds[i].name, name)) {
			*nmatch = 1;
			return &cmds[i];
		}
	}
	for (i = 0; i < ncmds; i++) {
		if (!strncmp(cmds[i].name, name, len)) {
			found = &cmds[i];
			(*nmatch)++;
		}
	}
	return *nmatch == 1 ? found : NULL;
}
