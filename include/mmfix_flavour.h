/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debian amd64 kernel flavours and whether mmfix supports each.  One
 * list for every place that decides: the module's load check
 * (module/main.c), dkms.conf's BUILD_EXCLUSIVE_KERNEL (scripts/abi-info
 * kernel-regex, scripts/gen-dkms-conf), docs/kernels.md
 * (scripts/gen-kernels-doc); tests/host/flavours checks that they agree.
 *
 * MMFIX_FLAVOUR_LIST(X) expands X(suffix, supported, why) once per
 * flavour; suffix is what follows the ABI in uname -r (6.1.0-57-SUFFIX,
 * 7.3.4+deb13-SUFFIX), why says why an unsupported flavour is refused.
 * A supported flavour still loads only on its verified builds
 * (include/mmfix_verified.h); an unsupported one is refused even with
 * allow_unverified=1.
 */
#ifndef MMFIX_FLAVOUR_H
#define MMFIX_FLAVOUR_H

#define MMFIX_FLAVOUR_RT_WHY \
	"PREEMPT_RT: no transparent hugepages, and lru_lock is a sleeping lock the lock statistics do not see"

#define MMFIX_FLAVOUR_LIST(X) \
	X("amd64", 1, "") \
	X("cloud-amd64", 1, "") \
	X("rt-amd64", 0, MMFIX_FLAVOUR_RT_WHY)

struct mmfix_flavour {
	const char *suffix;
	int supported;
	const char *why;
};

#define MMFIX_FLAVOUR_ENTRY(s, ok, w) { s, ok, w },
static const struct mmfix_flavour mmfix_flavours[] = {
	MMFIX_FLAVOUR_LIST(MMFIX_FLAVOUR_ENTRY)
};
#undef MMFIX_FLAVOUR_ENTRY

/* The listed flavour with uname -r suffix @suffix, or NULL. */
static inline const struct mmfix_flavour *mmfix_flavour_named(const char *suffix)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mmfix_flavours); i++)
		if (!strcmp(suffix, mmfix_flavours[i].suffix))
			return &mmfix_flavours[i];
	return NULL;
}

/*
 * The flavour of a Debian release: MAJOR.MINOR.PATCH, then -ABI
 * (6.1.0-57) or +debN (6.12.117+deb12), then "-" and a listed suffix.
 * NULL for anything else.  Plain C (with ARRAY_SIZE): tests/host/flavours
 * compiles it too.
 */
static inline const struct mmfix_flavour *mmfix_flavour_of(const char *release)
{
	const char *p = release;
	unsigned int dots = 0;

	for (; (*p >= '0' && *p <= '9') || *p == '.'; p++)
		dots += *p == '.';
	if (dots != 2 || p == release || p[-1] == '.')
		return NULL;
	if (p[0] == '-' && p[1] >= '0' && p[1] <= '9')
		p++;
	else if (p[0] == '+' && p[1] == 'd' && p[2] == 'e' && p[3] == 'b' &&
		 p[4] >= '0' && p[4] <= '9')
		p += 4;
	else
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p++ != '-')
		return NULL;
	return mmfix_flavour_named(p);
}

#endif /* MMFIX_FLAVOUR_H */
