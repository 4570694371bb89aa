/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debian amd64 kernel builds on which mmfix's copies of kernel functions
 * (module/copied-functions) were verified by scripts/verify-build.
 * Generated from module/verified-builds by scripts/verify-build --gen: do not edit.
 *
 * MMFIX_VERIFIED_LIST(X) expands X(series, release, debian_version,
 * without) once per build; release is uname -r, debian_version the
 * package version that follows "Debian " in /proc/version, without the
 * space-separated fixes whose copied code differs in that build (""
 * for none): the module leaves them out there.  It refuses any other
 * build of its series unless loaded with allow_unverified=1
 * (/sys/kernel/mmfix/build), and mmfixctl check compares the running
 * kernel with this list.
 */
#ifndef MMFIX_VERIFIED_H
#define MMFIX_VERIFIED_H

#define MMFIX_VERIFIED_LIST(X) \
	X("6.1", "6.1.0-56-amd64", "6.1.192-2", "") \
	X("6.1", "6.1.0-57-amd64", "6.1.192-3", "") \
	X("6.1", "6.1.0-57-cloud-amd64", "6.1.192-3", "") \
	X("6.12", "6.12.117+deb12-amd64", "6.12.117-1~deb12u1", "") \
	X("6.12", "6.12.118+deb12-amd64", "6.12.118-1~deb12u1", "") \
	X("6.12", "6.12.118+deb12-cloud-amd64", "6.12.118-1~deb12u1", "") \
	X("7.2", "7.2.11+deb13-amd64", "7.2.11-1~bpo13+1", "") \
	X("7.2", "7.2.12+deb13-amd64", "7.2.12-1~bpo13+1", "") \
	X("7.2", "7.2.12+deb13-cloud-amd64", "7.2.12-1~bpo13+1", "") \
	X("7.3", "7.3.4+deb13-amd64", "7.3.4-1~bpo13+1", "") \
	X("7.3", "7.3.4+deb13-cloud-amd64", "7.3.4-1~bpo13+1", "")

#endif /* MMFIX_VERIFIED_H */
