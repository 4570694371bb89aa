// SPDX-License-Identifier: GPL-2.0
/*
 * The table of fixes: per-fix counters, the enable switches, and the list
 * of replacement functions handed to the livepatch core.
 */
#include <linux/errno.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/string.h>
#include "mmfix.h"

#if MMFIX_SUPPORTED
struct mmfix_fix *const mmfix_fixes[MMFIX_NR_FIXES] = {
	[MMFIX_FIX_POPULATE_DRAIN]	= &mmfix_populate_drain,
	[MMFIX_FIX_ANON_FAULT]		= &mmfix_anon_fault,
	[MMFIX_FIX_UNMAP_DRAIN]		= &mmfix_unmap_drain,
	[MMFIX_FIX_LRU_ADD_FREE_DEAD]	= &mmfix_lru_add_free_dead,
	[MMFIX_FIX_KHUGEPAGED_SCAN]	= &mmfix_khugepaged_scan,
};
#else
/* An unsupported kernel: no fix is built and main.c refuses the load. */
struct mmfix_fix *const mmfix_fixes[MMFIX_NR_FIXES];
#endif

/* In enum mmfix_fix_id order, which is MMFIX_FIX_LIST order. */
#define MMFIX_FIX_NAME(id, name) name,
static const char *const mmfix_fix_names[MMFIX_NR_FIXES] = {
	MMFIX_FIX_LIST(MMFIX_FIX_NAME)
};

#define MMFIX_FIX_NAME_STR(id, name) " " name
const char *const mmfix_fix_name_list = MMFIX_FIX_LIST(MMFIX_FIX_NAME_STR) + 1;

/*
 * The patch's state, as far as its klp callbacks tell it (docs/ABI:
 * /sys/kernel/mmfix/patch).  unpatching: from pre_unpatch until a
 * reversed disable has re-enabled the patch (post_patch); with
 * mmfix_patch.enabled it decides mmfix_patch_live().  in_transition:
 * from pre_patch or pre_unpatch to the post_* callback that ends the
 * transition, whichever direction it ended in.  A loading transition
 * reversed by writing 0 to the livepatch's enabled file runs no
 * pre_unpatch; mmfix_patch.enabled turns false then.
 * mmfix_switch_mutex orders switch writes against pre_unpatch: a write
 * either lands before the disable begins or fails with EBUSY.
 */
bool mmfix_patch_unpatching;
static bool mmfix_patch_in_transition;
static DEFINE_MUTEX(mmfix_switch_mutex);

/* All patched fixes' functions, plus the terminating { }. */
static struct klp_func mmfix_klp_funcs[MMFIX_NR_FIXES * MMFIX_FIX_MAX_FUNCS + 1];

/* Index of the fix called @name, or -EINVAL. */
int mmfix_fix_index(const char *name)
{
	return match_string(mmfix_fix_names, MMFIX_NR_FIXES, name);
}

unsigned int mmfix_nr_counters(const struct mmfix_fix *fix)
{
	unsigned int n = 0;

	while (fix->counter_names && fix->counter_names[n])
		n++;
	return n;
}

/* The sum over CPUs, or the largest value for a max counter. */
u64 mmfix_counter_sum(const struct mmfix_fix *fix, unsigned int idx)
{
	bool is_max = fix->max_counters & BIT(idx);
	u64 sum = 0, v;
	int cpu;

	for_each_possible_cpu(cpu) {
		v = READ_ONCE(per_cpu_ptr(fix->counters, cpu)[idx]);
		sum = is_max ? max(sum, v) : sum + v;
	}
	return sum;
}

int mmfix_fix_set_enabled(struct mmfix_fix *fix, bool on)
{
	if (on && !fix->patched)
		return -EOPNOTSUPP;
	WRITE_ONCE(fix->enabled, on);
	return 0;
}

/*
 * A write to fixes/<fix>/enabled: as mmfix_fix_set_enabled(), but
 * -EBUSY, changing nothing, once the patch is being disabled.
 */
int mmfix_fix_switch(struct mmfix_fix *fix, bool on)
{
	int ret = -EBUSY;

	mutex_lock(&mmfix_switch_mutex);
	/* -EBUSY too while an upgrade replaces this module (upgrade.c) */
	if (mmfix_patch_live())
		ret = mmfix_handover_switch(fix, on);
	mutex_unlock(&mmfix_switch_mutex);
	return ret;
}

/*
 * "enabled": live and no transition under way; "transition": live
 * while the patching transition runs; "disabled": not live (the
 * switches read 0 and refuse writes), from the start of a disable on,
 * and also while a reversed disable re-enables the patch, until that
 * transition ends.
 */
const char *mmfix_patch_state(void)
{
	if (!mmfix_patch_live())
		return mmfix_coexist_replaced(NULL, 0) ? "replaced" : "disabled";
	return READ_ONCE(mmfix_patch_in_transition) ? "transition" : "enabled";
}

static int mmfix_fix_init(struct mmfix_fix *fix, bool patch,
			  bool patch_recommended, bool enable,
			  bool enable_recommended)
{
	unsigned int n = mmfix_nr_counters(fix);
	bool unverified;

	if (n) {
		fix->counters = __alloc_percpu(n * sizeof(u64), sizeof(u64));
		if (!fix->counters)
			return -ENOMEM;
	}
	fix->init(fix);
	/* applies, but its copied code differs here: never patched */
	unverified = fix->applicable && mmfix_build_leaves_out(fix->name);
	if (unverified) {
		fix->recommended = false;
		pr_info("%s not patched: it applies, but its copied code differs on this build\n",
			fix->name);
	}
	if (WARN_ON_ONCE(fix->recommended && !fix->applicable))
		fix->recommended = false;
	patch = patch || (patch_recommended && fix->recommended);
	fix->patched = fix->applicable && patch && !unverified;
	/* never a copy over another livepatch's function (coexist.c) */
	if (fix->patched && mmfix_coexist_owned(fix)) {
		fix->patched = false;
		fix->reason = fix->reason_buf;
	}
	if (fix->applicable && !patch) {
		if (enable) {
			pr_err("enable=%s, but fixes= leaves it out; nothing was loaded\n",
			       fix->name);
			return -EINVAL;
		}
		fix->reason = MMFIX_NOT_PATCHED_REASON;
	}
	if (unverified)
		fix->reason = MMFIX_UNVERIFIED_REASON;
	if (enable_recommended && fix->recommended && fix->patched)
		mmfix_fix_set_enabled(fix, true);
	else if (enable && mmfix_fix_set_enabled(fix, true))
		pr_warn("%s is not patched (%s); left disabled\n",
			fix->name, fix->reason);
	return 0;
}

/*
 * @patch_mask and @patch_recommended (fixes=): the fixes to patch, if
 * they apply; @enable_mask and @enable_recommended (enable=): to switch
 * on.
 */
int mmfix_fixes_init(unsigned long patch_mask, bool patch_recommended,
		     unsigned long enable_mask, bool enable_recommended)
{
	unsigned int i, nr_funcs = 0;
	const char *owner = NULL, *unverified = NULL;
	struct klp_func *f;
	int ret;

	if (!MMFIX_SUPPORTED)	/* no fix is built; main.c refuses first */
		return -ENODEV;
	for (i = 0; i < MMFIX_NR_FIXES; i++) {
		mmfix_fixes[i]->name = mmfix_fix_names[i];
		ret = mmfix_fix_init(mmfix_fixes[i], patch_mask & BIT(i),
				     patch_recommended, enable_mask & BIT(i),
				     enable_recommended);
		if (ret) {
			i++;
			goto err_fix;
		}
		if (mmfix_fixes[i]->owned_by[0])
			owner = mmfix_fixes[i]->reason;
		if (mmfix_fixes[i]->applicable && (patch_mask & BIT(i)) &&
		    mmfix_build_leaves_out(mmfix_fixes[i]->name))
			unverified = mmfix_fixes[i]->name;
		if (!mmfix_fixes[i]->patched)
			continue;
		for (f = mmfix_fixes[i]->funcs; f->old_name; f++) {
			if (WARN_ON_ONCE(nr_funcs >= ARRAY_SIZE(mmfix_klp_funcs) - 1)) {
				ret = -E2BIG;
				i++;
				goto err_fix;
			}
			mmfix_klp_funcs[nr_funcs++] = *f;
		}
	}
	if (!nr_funcs && owner) {
		pr_err("nothing left to patch: every fix named that applies is another livepatch's (%s)\n",
		       owner);
		ret = -EBUSY;
		goto err_fix;
	}
	if (!nr_funcs && unverified) {
		pr_err("nothing to patch: %s applies, but its copied code differs on this build\n",
		       unverified);
		ret = -EINVAL;
		goto err_fix;
	}
	if (!nr_funcs) {
		pr_err("fixes=: none of the fixes named applies to this kernel; nothing to patch\n");
		ret = -EINVAL;
		goto err_fix;
	}
	/* a refused load says it in one line, above; this one goes ahead */
	for (i = 0; i < MMFIX_NR_FIXES; i++)
		if (mmfix_fixes[i]->owned_by[0])
			pr_info("%s left out: %s\n", mmfix_fixes[i]->name,
				mmfix_fixes[i]->reason);
	return 0;

err_fix:
	while (i--)
		free_percpu(mmfix_fixes[i]->counters);
	return ret;
}

void mmfix_fixes_uninit(void)
{
	unsigned int i = MMFIX_NR_FIXES;

	while (i--) {
		if (mmfix_fixes[i]->exit)
			mmfix_fixes[i]->exit(mmfix_fixes[i]);
		free_percpu(mmfix_fixes[i]->counters);
	}
}

struct klp_func *mmfix_fixes_klp_funcs(void)
{
	return mmfix_klp_funcs;
}

/*
 * The fixes (a bit each) this build does not patch while an upgrade
 * replaces a module that may have: from pre_patch until the transition
 * has ended (or was reversed), see struct mmfix_fix's pre_drop.
 */
static unsigned long mmfix_dropping;

/*
 * klp callbacks of the vmlinux object: each patched fix's own, in fix
 * order before a transition and in reverse order after it; in an
 * upgrade, the drop callbacks of the fixes this build does not patch.
 */
static int mmfix_fixes_pre_patch(struct klp_object *obj)
{
	struct mmfix_fix *fix;
	unsigned int i;
	int ret;

	ret = mmfix_handover_pre_patch();
	if (!ret)
		ret = mmfix_coexist_pre_patch();
	if (ret)
		return ret;
	WRITE_ONCE(mmfix_patch_in_transition, true);
	for (i = 0; i < MMFIX_NR_FIXES; i++) {
		fix = mmfix_fixes[i];
		/* drop only what the replaced mmfix patched */
		if (!fix->patched && fix->pre_drop && mmfix_upgrading() &&
		    mmfix_coexist_replaced_mmfix_patches(fix)) {
			fix->pre_drop(fix);
			mmfix_dropping |= BIT(i);
		}
		if (!fix->patched || !fix->pre_patch)
			continue;
		ret = fix->pre_patch(fix);
		if (ret)
			goto err_undo;
	}
	return 0;

err_undo:
	pr_err("%s: preparing the patch failed (%d)\n", fix->name, ret);
	while (i--) {
		fix = mmfix_fixes[i];
		if (mmfix_dropping & BIT(i))
			fix->drop_reversed(fix);
		else if (fix->patched && fix->post_unpatch)
			fix->post_unpatch(fix);
	}
	mmfix_dropping = 0;
	WRITE_ONCE(mmfix_patch_in_transition, false);
	return ret;
}

static void mmfix_fixes_post_patch(struct klp_object *obj)
{
	unsigned int i = MMFIX_NR_FIXES;

	while (i--) {
		if (mmfix_dropping & BIT(i))
			mmfix_fixes[i]->post_drop(mmfix_fixes[i]);
		else if (mmfix_fixes[i]->patched && mmfix_fixes[i]->post_patch)
			mmfix_fixes[i]->post_patch(mmfix_fixes[i]);
	}
	mmfix_dropping = 0;
	/* the patch is fully enabled, also at the end of a reversed disable */
	WRITE_ONCE(mmfix_patch_unpatching, false);
	WRITE_ONCE(mmfix_patch_in_transition, false);
	if (mmfix_upgrading())
		mmfix_handover_take_over();
	else
		mmfix_handover_live(true);
}

static void mmfix_fixes_pre_unpatch(struct klp_object *obj)
{
	unsigned int i;

	/* every fix off before the first task runs the kernel's code again */
	mutex_lock(&mmfix_switch_mutex);
	WRITE_ONCE(mmfix_patch_unpatching, true);
	WRITE_ONCE(mmfix_patch_in_transition, true);
	mutex_unlock(&mmfix_switch_mutex);
	mmfix_handover_live(false);
	for (i = 0; i < MMFIX_NR_FIXES; i++)
		if (mmfix_fixes[i]->patched && mmfix_fixes[i]->pre_unpatch)
			mmfix_fixes[i]->pre_unpatch(mmfix_fixes[i]);
}

static void mmfix_fixes_post_unpatch(struct klp_object *obj)
{
	unsigned int i = MMFIX_NR_FIXES;

	while (i--) {
		if (mmfix_dropping & BIT(i))
			mmfix_fixes[i]->drop_reversed(mmfix_fixes[i]);
		else if (mmfix_fixes[i]->patched && mmfix_fixes[i]->post_unpatch)
			mmfix_fixes[i]->post_unpatch(mmfix_fixes[i]);
	}
	mmfix_dropping = 0;
	WRITE_ONCE(mmfix_patch_in_transition, false);
	/* other livepatches' loads are no longer this patch's concern */
	mmfix_coexist_disarm();
	/* a failed or reversed upgrade: the loaded mmfix stays */
	mmfix_handover_thaw();
}

const struct klp_callbacks mmfix_fixes_klp_callbacks = {
	.pre_patch = mmfix_fixes_pre_patch,
	.post_patch = mmfix_fixes_post_patch,
	.pre_unpatch = mmfix_fixes_pre_unpatch,
	.post_unpatch = mmfix_fixes_post_unpatch,
};
