/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names and limits shared by mmfix.ko and mmfixctl.
 *
 * Everything here is part of the documented sysfs ABI
 * (docs/ABI/testing/sysfs-kernel-mmfix); change both sides together.
 */
#ifndef MMFIX_ABI_H
#define MMFIX_ABI_H

#define MMFIX_NAME		"mmfix"
/*
 * The version of the module, mmfixctl, dkms.conf and the Debian packages
 * (CHANGELOG).  A release is "X.Y.Z"; between releases the tree says
 * "X.Y.Z~dev" for the next release, which sorts before it, and "make
 * deb" from a git checkout appends "+gitYYYYMMDD.HASH" (debian/version).
 */
#define MMFIX_VERSION		"0.2.0~dev"

/* sysfs roots, relative to the sysfs mount point (/sys) */
#define MMFIX_SYSFS_DIR		"kernel/mmfix"
#define MMFIX_KLP_SYSFS_DIR	"kernel/livepatch/mmfix"
/*
 * The module's two names: an upgrade loads the one that is not loaded
 * (upgrade=1); MMFIX_SYSFS_DIR "/module" says which one made the tree.
 */
#define MMFIX_ALT_NAME		"mmfix_alt"
#define MMFIX_KLP_SYSFS_ROOT	"kernel/livepatch"

/*
 * Fix identifiers, in the order they appear in sysfs listings and in
 * the enable= module parameter.  MMFIX_FIX_LIST(X) expands X(id, "name")
 * once per fix.
 */
#define MMFIX_FIX_LIST(X)					\
	X(POPULATE_DRAIN,	"populate_drain")	\
	X(ANON_FAULT,		"anon_fault")	\
	X(UNMAP_DRAIN,		"unmap_drain")	\
	X(LRU_ADD_FREE_DEAD,	"lru_add_free_dead")	\
	X(KHUGEPAGED_SCAN,	"khugepaged_scan")

/*
 * enable=MMFIX_ENABLE_RECOMMENDED switches on the fixes whose
 * fixes/<fix>/recommended file reads 1 (chosen by the module per kernel).
 */
#define MMFIX_ENABLE_RECOMMENDED	"recommended"

/*
 * fixes/<fix>/reason of a fix that applies but is not verified on the
 * running build: a build verified for the other fixes, on which this
 * fix's copied code differs (module/verified-builds, "without FIX").
 * It reads applicable 1, patched 0, and its switch refuses 1.
 */
#define MMFIX_UNVERIFIED_REASON \
	"applies, not verified on this build: its copied code differs (module/verified-builds)"

/*
 * fixes/<fix>/reason of a fix that applies but was left out by the
 * fixes= module parameter: none of its functions is redirected.
 */
#define MMFIX_NOT_PATCHED_REASON \
	"applies here, but not patched: mmfix was loaded with fixes= without it"

#define MMFIX_FIX_ENUM(id, name) MMFIX_FIX_##id,
enum mmfix_fix_id {
	MMFIX_FIX_LIST(MMFIX_FIX_ENUM)
	MMFIX_NR_FIXES
};
#undef MMFIX_FIX_ENUM

/*
 * Kernel series mmfix carries replacement code for (Debian amd64 builds).
 * MMFIX_KERNEL_LIST(X) expands X(major, minor) once per series; the
 * module refuses to load anywhere else and docs/kernels.md is generated
 * from this list.
 */
#define MMFIX_KERNEL_LIST(X)	X(6, 1) X(6, 12) X(7, 2) X(7, 3)

/* Longest fix name, and longest reason line in fixes/<fix>/reason. */
#define MMFIX_FIX_NAME_MAX	32
#define MMFIX_REASON_MAX	128

/*
 * Lock statistics under MMFIX_SYSFS_DIR "/stats" (docs/lock-stats.md).
 * Each lock class directory of MMFIX_STATS_CLASS_LIST(X), X(id, "dir"),
 * holds the files of MMFIX_STATS_FILE_LIST(X), X(id, "name"), except
 * "failed" under lru_lock (no trylock there).  A *_hist file has one
 * "LOW COUNT" line per non-empty log2 bucket: bucket 0 counts 0 ns,
 * bucket i (1..MMFIX_STATS_HIST_BUCKETS-1) counts [2^(i-1), 2^i) ns and
 * LOW is 2^(i-1).
 */
#define MMFIX_STATS_SYSFS_DIR		MMFIX_SYSFS_DIR "/stats"
/*
 * Switches: "enabled" in MMFIX_STATS_SYSFS_DIR sets both locks; each lock
 * directory of MMFIX_STATS_SWITCH_LIST(X), X(id, "dir"), has its own
 * "enabled" (lru_lock counts, mmap_lock counts).
 */
#define MMFIX_STATS_SWITCH_FILE		"enabled"
#define MMFIX_STATS_SWITCH_LIST(X)		\
	X(LRU,		"lru_lock")		\
	X(MMAP,		"mmap_lock")
#define MMFIX_STATS_HIST_BUCKETS	65

#define MMFIX_STATS_CLASS_LIST(X)		\
	X(LRU,		"lru_lock")		\
	X(MMAP_READ,	"mmap_lock/read")	\
	X(MMAP_WRITE,	"mmap_lock/write")

#define MMFIX_STATS_FILE_LIST(X)		\
	X(ACQUISITIONS,	"acquisitions")		\
	X(FAILED,	"failed")		\
	X(CONTENDED,	"contended")		\
	X(WAIT_NS,	"wait_ns")		\
	X(WAIT_MAX_NS,	"wait_max_ns")		\
	X(HOLDS,	"holds")		\
	X(HOLD_NS,	"hold_ns")		\
	X(HOLD_MAX_NS,	"hold_max_ns")		\
	X(WAIT_HIST,	"wait_hist")		\
	X(HOLD_HIST,	"hold_hist")

#define MMFIX_STATS_ENUM(id, name) MMFIX_STATS_##id,
enum mmfix_stats_class_id {
	MMFIX_STATS_CLASS_LIST(MMFIX_STATS_ENUM)
	MMFIX_STATS_NR_CLASSES
};
enum mmfix_stats_file_id {
	MMFIX_STATS_FILE_LIST(MMFIX_STATS_ENUM)
	MMFIX_STATS_NR_FILES
};
#undef MMFIX_STATS_ENUM

#endif /* MMFIX_ABI_H */
