/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmfix internal interfaces: the fix descriptor every fix fills in, and
 * the init/uninit pairs main.c calls in order.
 */
#ifndef MMFIX_H
#define MMFIX_H

#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include "../include/mmfix_abi.h"

/*
 * The version the module reports; tests only (-DMMFIX_TEST_NEXT_VERSION):
 * a newer build to upgrade to (tests/guest/t-68-upgrade.sh).
 */
#ifdef MMFIX_TEST_NEXT_VERSION
# define MMFIX_MODULE_VERSION	MMFIX_VERSION "+next"
#else
# define MMFIX_MODULE_VERSION	MMFIX_VERSION
#endif

/* Most klp_funcs one fix may register. */
#define MMFIX_FIX_MAX_FUNCS	4

struct mmfix_fix {
	const char *name;
	/*
	 * Set by the fix's init(): whether this kernel has the problem, and
	 * a line saying what is patched or why nothing is.
	 */
	bool applicable;
	const char *reason;
	/*
	 * Also set by init(): part of the set enable=recommended switches on
	 * for this kernel (docs/fixes/<fix>.md shows a benefit here).
	 */
	bool recommended;
	/*
	 * Set by fix.c: applicable and chosen by fixes= at load (default:
	 * every applicable fix).  Only a patched fix's functions are
	 * registered, its callbacks run and its switch can be turned on.
	 */
	bool patched;
	/* Read locklessly by the replacement code on every call. */
	bool enabled;
	/* {}-terminated replacement functions, registered when patched. */
	struct klp_func *funcs;
	/* NULL-terminated counter names; one per-CPU u64 each. */
	const char * const *counter_names;
	u64 __percpu *counters;
	/* Counters (bit per index) reporting the largest per-CPU value. */
	unsigned long max_counters;
	void (*init)(struct mmfix_fix *fix);
	/*
	 * Optional klp callbacks of an applicable fix (struct klp_callbacks),
	 * run in fix order before and reverse order after a transition.  If
	 * pre_patch fails, the fixes before it get their post_unpatch.
	 */
	int (*pre_patch)(struct mmfix_fix *fix);
	void (*post_patch)(struct mmfix_fix *fix);
	void (*pre_unpatch)(struct mmfix_fix *fix);
	void (*post_unpatch)(struct mmfix_fix *fix);
	/*
	 * Optional, all three or none: an upgrade to this build while it
	 * does not patch the fix (fixes=).  The replaced module may have,
	 * and the transition reverts its functions to the kernel's.  Run
	 * before the transition, after it, and after it was reversed or
	 * failed (when the replaced module runs on).
	 */
	void (*pre_drop)(struct mmfix_fix *fix);
	void (*post_drop)(struct mmfix_fix *fix);
	void (*drop_reversed)(struct mmfix_fix *fix);
	/*
	 * Optional, for a patched fix: another livepatch has loaded while
	 * mmfix's patch is enabled, and may be in its transition, which
	 * runs none of mmfix's callbacks (coexist.c).
	 */
	void (*foreign_transition)(struct mmfix_fix *fix);
	/*
	 * Optional, for a patched fix: another livepatch's module is about
	 * to run its init, which may enable its patch and start a
	 * transition before foreign_transition is called.
	 */
	void (*foreign_coming)(struct mmfix_fix *fix);
	/* Optional: at unload, whatever happened to the patch. */
	void (*exit)(struct mmfix_fix *fix);
	/* coexist.c: the livepatch owning a function at load, and why. */
	char owned_by[MODULE_NAME_LEN];
	char reason_buf[128];
	/* coexist.c, under its lock: what the last overridden_by read found */
	char overridden_by[MODULE_NAME_LEN];
};

/* main.c: the livepatch itself; fix.c: set by its klp callbacks. */
extern struct klp_patch mmfix_patch;
extern bool mmfix_patch_unpatching;
/*
 * upgrade.c: from load until the end of the transition of an upgrade.
 * The livepatch core lets tasks switch to a new patch before it sets
 * the patch's enabled flag; an upgrade's fixes must be live for them,
 * as the replaced module's are, and stay so while a reversed upgrade
 * goes back to that module.
 */
extern bool mmfix_patch_upgrading;

/*
 * True while the fixes may take effect: the patch is enabled (or being
 * enabled by an upgrade) and no disable has begun since it was last
 * fully enabled.  From the
 * pre_unpatch callback of a disable (or from the moment a loading
 * transition is reversed) every fix behaves as if switched off, and its
 * switch reads 0 and refuses writes (EBUSY).
 */
static inline bool mmfix_patch_live(void)
{
	return (READ_ONCE(mmfix_patch.enabled) ||
		READ_ONCE(mmfix_patch_upgrading)) &&
	       !READ_ONCE(mmfix_patch_unpatching);
}

/* The fix's switch is on and the patch is live. */
static inline bool mmfix_fix_on(const struct mmfix_fix *fix)
{
	return READ_ONCE(fix->enabled) && mmfix_patch_live();
}

static inline void mmfix_count(struct mmfix_fix *fix, unsigned int idx)
{
	this_cpu_inc(fix->counters[idx]);
}

/* Adds @n (wrapping, so a negative @n counts down a gauge). */
static inline void mmfix_count_add(struct mmfix_fix *fix, unsigned int idx,
				   u64 n)
{
	this_cpu_add(fix->counters[idx], n);
}

/* For a counter in fix->max_counters: keep the largest value seen. */
static inline void mmfix_count_max(struct mmfix_fix *fix, unsigned int idx,
				   u64 v)
{
	u64 *c = get_cpu_ptr(fix->counters);

	if (v > c[idx])
		c[idx] = v;
	put_cpu_ptr(fix->counters);
}

extern struct mmfix_fix mmfix_populate_drain;
extern struct mmfix_fix mmfix_anon_fault;
extern struct mmfix_fix mmfix_unmap_drain;
extern struct mmfix_fix mmfix_lru_add_free_dead;
extern struct mmfix_fix mmfix_khugepaged_scan;

/* fix.c: the table of fixes, counters, and the patch's function list */
extern struct mmfix_fix *const mmfix_fixes[MMFIX_NR_FIXES];
extern const char *const mmfix_fix_name_list;
int mmfix_fix_index(const char *name);
int mmfix_fixes_init(unsigned long patch_mask, bool patch_recommended,
		     unsigned long enable_mask, bool enable_recommended);
void mmfix_fixes_uninit(void);
struct klp_func *mmfix_fixes_klp_funcs(void);
extern const struct klp_callbacks mmfix_fixes_klp_callbacks;
int mmfix_fix_set_enabled(struct mmfix_fix *fix, bool on);
int mmfix_fix_switch(struct mmfix_fix *fix, bool on);
const char *mmfix_patch_state(void);
u64 mmfix_counter_sum(const struct mmfix_fix *fix, unsigned int idx);
unsigned int mmfix_nr_counters(const struct mmfix_fix *fix);

/* main.c: whether the running build's copied code was verified */
bool mmfix_build_verified(void);
bool mmfix_build_leaves_out(const char *name);

/* sysfs.c: /sys/kernel/mmfix */
int mmfix_sysfs_init(void);
void mmfix_sysfs_uninit(void);
struct kobject *mmfix_sysfs_root(void);

/* stats.c: /sys/kernel/mmfix/stats and the lock probes behind it */
int mmfix_stats_init(void);
void mmfix_stats_uninit(void);
void mmfix_stats_handover_out(char *buf, size_t size);
void mmfix_stats_handover_in(const char *names);

/* coexist.c: other livepatches */
int mmfix_coexist_init(void);
void mmfix_coexist_arm(void);
void mmfix_coexist_disarm(void);
void mmfix_coexist_uninit(void);
bool mmfix_coexist_owned(struct mmfix_fix *fix);
int mmfix_coexist_upgrade_check(void);
int mmfix_coexist_pre_patch(void);
bool mmfix_coexist_replaced_mmfix_patches(const struct mmfix_fix *fix);
void mmfix_coexist_overridden_by(struct mmfix_fix *fix, char *buf,
				 size_t size);
bool mmfix_coexist_replaced(char *buf, size_t size);
int mmfix_coexist_transition_patches(const char *func);
int mmfix_coexist_on_top(const char *func);

/* Later minus earlier, 0 if the clocks of two CPUs disagree. */
static __always_inline u64 mmfix_elapsed(u64 from, u64 to)
{
	return to > from ? to - from : 0;
}

/* upgrade.c: replacing a loaded mmfix with this build (upgrade=1) */
int mmfix_handover_init(bool enable_given);
void mmfix_handover_uninit(void);
bool mmfix_upgrade_requested(void);
bool mmfix_upgrading(void);
bool mmfix_handover_owner(void);
int mmfix_handover_switch(struct mmfix_fix *fix, bool on);
void mmfix_handover_live(bool live);
int mmfix_handover_pre_patch(void);
void mmfix_handover_thaw(void);
void mmfix_handover_take_over(void);

#endif /* MMFIX_H */
