// SPDX-License-Identifier: GPL-2.0
/*
 * Upgrading a loaded mmfix without a moment in which its fixes are off
 * (docs/install.md, "Upgrading a loaded mmfix").
 *
 * Every build makes the same module under two names, mmfix and
 * mmfix_alt (Kbuild), so that a newer build can be loaded next to the
 * running one: under the name that is not loaded, with upgrade=1.  Its
 * patch replaces the running one atomically (klp_patch.replace): each
 * task goes from the old module's functions straight to the new one's,
 * which start with the old one's switch states.  Only the new patch's
 * klp callbacks run.
 *
 * The two modules meet in the handover, a klp shadow variable on a
 * fixed key.  It says which module owns /sys/kernel/mmfix, which of its
 * fixes are on, and whether its patch is live; an upgrade freezes the
 * owner's switches (writes fail with EBUSY) until it has finished or
 * failed.  Only data cross between versions, plus one function: the
 * owner's release, which the new module calls once its transition has
 * ended, and which removes the owner's /sys/kernel/mmfix and lock
 * statistics and leaves their switches and the fix counters in the
 * handover.  The new module then makes /sys/kernel/mmfix its own and
 * takes the handover over; the old one can be removed.
 *
 * The handover is freed by its owner's exit.  Whoever looks at it does
 * so under rcu_read_lock() and its spinlock, and gives up if it is dead:
 * klp_shadow_free() frees with kfree_rcu().
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include "mmfix.h"

#define MMFIX_HANDOVER_ID	0x6d6d667880UL
/* Bump whenever struct mmfix_handover changes: other versions refuse. */
#define MMFIX_HANDOVER_ABI	1
#define MMFIX_HANDOVER_NAMES	256

struct mmfix_handover_counter {
	char fix[MMFIX_FIX_NAME_MAX];
	char name[MMFIX_FIX_NAME_MAX];
	u64 value;
	bool is_max;
};

struct mmfix_handover {
	u32 abi;
	spinlock_t lock;
	/* everything below under lock */
	bool dead;		/* its owner is freeing it */
	bool live;		/* the owner's patch is live */
	bool frozen;		/* an upgrade is under way */
	char owner[MODULE_NAME_LEN];
	char version[32];
	char enabled[MMFIX_HANDOVER_NAMES];	/* fixes on, space-separated */
	/* the owner's, called by the module taking over, not under lock */
	void (*release)(struct mmfix_handover *ho);
	/* left by release() */
	char stats[MMFIX_HANDOVER_NAMES];
	unsigned int nr_counters;
	struct mmfix_handover_counter *counters;
};

/* The key: the parent of /sys/kernel/mmfix, the same for every build. */
#define MMFIX_HANDOVER_OBJ	((void *)kernel_kobj)

#ifdef MMFIX_TEST_HANDOVER_DELAY
/* tests only (t-86): how long a load waits before making the handover */
static unsigned int mmfix_test_handover_delay_ms;
module_param_named(test_handover_delay_ms, mmfix_test_handover_delay_ms,
		   uint, 0444);
#endif

static bool mmfix_upgrade;
module_param_named(upgrade, mmfix_upgrade, bool, 0444);
MODULE_PARM_DESC(upgrade,
		 "Replace the loaded mmfix (of the other module name) with this build, keeping its switch states; use mmfixctl upgrade");

/*
 * This module's part: none (a failed or reversed upgrade), owner of the
 * handover and /sys/kernel/mmfix, upgrading (the owner's switches frozen
 * for this module, from load until the transition ends), or released
 * (replaced by an upgrade).  Changed under klp_mutex or at load and
 * unload.
 */
enum mmfix_ho_state { HO_NONE, HO_OWNER, HO_UPGRADING, HO_RELEASED };
static enum mmfix_ho_state mmfix_ho_state;
/* HO_UPGRADING: the module whose switches this one froze */
static char mmfix_ho_from[MODULE_NAME_LEN];

bool mmfix_patch_upgrading;

/* upgrade=1 was given (the load may still be refused). */
bool mmfix_upgrade_requested(void)
{
	return mmfix_upgrade;
}

bool mmfix_upgrading(void)
{
	return READ_ONCE(mmfix_patch_upgrading);
}

static void mmfix_ho_set_state(enum mmfix_ho_state state)
{
	WRITE_ONCE(mmfix_ho_state, state);
	WRITE_ONCE(mmfix_patch_upgrading, state == HO_UPGRADING);
}

/* Whether this module's /sys/kernel/mmfix and statistics are its own. */
bool mmfix_handover_owner(void)
{
	return READ_ONCE(mmfix_ho_state) == HO_OWNER;
}

static struct mmfix_handover *mmfix_ho_lock(void)
{
	struct mmfix_handover *ho;

	rcu_read_lock();
	ho = klp_shadow_get(MMFIX_HANDOVER_OBJ, MMFIX_HANDOVER_ID);
	if (ho && ho->abi == MMFIX_HANDOVER_ABI) {
		spin_lock(&ho->lock);
		if (!ho->dead)
			return ho;
		spin_unlock(&ho->lock);
	}
	rcu_read_unlock();
	return NULL;
}

static void mmfix_ho_unlock(struct mmfix_handover *ho)
{
	spin_unlock(&ho->lock);
	rcu_read_unlock();
}

/* The handover, locked, if this module owns it; else NULL. */
static struct mmfix_handover *mmfix_ho_lock_own(void)
{
	if (!mmfix_handover_owner())
		return NULL;
	return mmfix_ho_lock();
}

/* Writes the names of the fixes switched on into ho->enabled. */
static void mmfix_ho_note_enabled(struct mmfix_handover *ho)
{
	size_t n = 0;
	unsigned int i;

	ho->enabled[0] = '\0';
	for (i = 0; i < MMFIX_NR_FIXES; i++)
		if (READ_ONCE(mmfix_fixes[i]->enabled))
			n += scnprintf(ho->enabled + n, sizeof(ho->enabled) - n,
				       "%s%s", n ? " " : "", mmfix_fixes[i]->name);
}

/*
 * A switch write, under mmfix_switch_mutex (fix.c): applied and recorded
 * in the handover under its lock, so that an upgrade takes either the
 * state before it or the one after; -EBUSY while an upgrade is under way.
 */
int mmfix_handover_switch(struct mmfix_fix *fix, bool on)
{
	struct mmfix_handover *ho = mmfix_ho_lock_own();
	int ret;

	if (ho && ho->frozen) {
		mmfix_ho_unlock(ho);
		return -EBUSY;
	}
	ret = mmfix_fix_set_enabled(fix, on);
	if (ho) {
		mmfix_ho_note_enabled(ho);
		mmfix_ho_unlock(ho);
	}
	return ret;
}

/* The owner's patch turned live (post_patch) or stopped being (pre_unpatch). */
void mmfix_handover_live(bool live)
{
	struct mmfix_handover *ho = mmfix_ho_lock_own();

	if (!ho)
		return;
	ho->live = live;
	mmfix_ho_unlock(ho);
}

/* --- the old module's side --------------------------------------------- */

static void mmfix_handover_release(struct mmfix_handover *ho)
{
	struct mmfix_handover_counter *c = NULL;
	unsigned int i, j, n = 0;
	char stats[MMFIX_HANDOVER_NAMES];

	/* the new module watches other livepatches from now on */
	mmfix_coexist_disarm();
	mmfix_stats_handover_out(stats, sizeof(stats));
	mmfix_stats_uninit();
	mmfix_sysfs_uninit();

	for (i = 0; i < MMFIX_NR_FIXES; i++)
		n += mmfix_nr_counters(mmfix_fixes[i]);
	if (n)
		c = kcalloc(n, sizeof(*c), GFP_KERNEL);
	if (!c && n)
		pr_warn("upgrade: no memory to hand the counters over; they start from 0\n");
	n = 0;
	for (i = 0; c && i < MMFIX_NR_FIXES; i++) {
		const struct mmfix_fix *fix = mmfix_fixes[i];

		for (j = 0; j < mmfix_nr_counters(fix); j++, n++) {
			strscpy(c[n].fix, fix->name, sizeof(c[n].fix));
			strscpy(c[n].name, fix->counter_names[j],
				sizeof(c[n].name));
			c[n].value = mmfix_counter_sum(fix, j);
			c[n].is_max = fix->max_counters & BIT(j);
		}
	}

	spin_lock(&ho->lock);
	strscpy(ho->stats, stats, sizeof(ho->stats));
	ho->counters = c;
	ho->nr_counters = n;
	spin_unlock(&ho->lock);
	mmfix_ho_set_state(HO_RELEASED);
	pr_info("%s handed over; this module can be removed\n", MMFIX_MODULE_VERSION);
}

/* @ctor_data: set to true, so that the caller knows it made the handover */
static int mmfix_ho_ctor(void *obj, void *shadow_data, void *ctor_data)
{
	struct mmfix_handover *ho = shadow_data;

	*(bool *)ctor_data = true;
	ho->abi = MMFIX_HANDOVER_ABI;
	spin_lock_init(&ho->lock);
	strscpy(ho->owner, module_name(THIS_MODULE), sizeof(ho->owner));
	strscpy(ho->version, MMFIX_MODULE_VERSION, sizeof(ho->version));
	ho->release = mmfix_handover_release;
	mmfix_ho_note_enabled(ho);
	return 0;
}

/* --- the new module's side ------------------------------------------- */

/* Switches on the fixes named in @names; each must apply here. */
static int mmfix_ho_take_enabled(const char *names, const char *from)
{
	char name[MMFIX_FIX_NAME_MAX];
	const char *p = names;
	size_t len;
	int i;

	for (i = 0; i < MMFIX_NR_FIXES; i++)
		mmfix_fix_set_enabled(mmfix_fixes[i], false);
	while (*(p = skip_spaces(p))) {
		len = strcspn(p, " ");
		strscpy(name, p, min(len + 1, sizeof(name)));
		p += len;
		i = mmfix_fix_index(name);
		if (i < 0 || !mmfix_fixes[i]->patched) {
			pr_err("upgrade: fix %s is on in %s but %s in this build; refusing, nothing changed\n",
			       name, from, i < 0 ? "unknown" :
			       !mmfix_fixes[i]->applicable ? "does not apply" :
			       "not patched (fixes=)");
			return -EINVAL;
		}
		mmfix_fix_set_enabled(mmfix_fixes[i], true);
	}
	return 0;
}

/*
 * Before registering with upgrade=1: find the loaded mmfix, check that it
 * can be replaced, take its switch states and freeze its switches.
 */
static int mmfix_handover_freeze(void)
{
	struct mmfix_handover *ho;
	u32 abi = 0;
	int ret;

	rcu_read_lock();
	ho = klp_shadow_get(MMFIX_HANDOVER_OBJ, MMFIX_HANDOVER_ID);
	if (ho)
		abi = ho->abi;
	rcu_read_unlock();
	if (!ho) {
		pr_err("upgrade=1: no loaded mmfix to upgrade; load without upgrade=1\n");
		return -ENOENT;
	}
	if (abi != MMFIX_HANDOVER_ABI) {
		pr_err("upgrade=1: the loaded mmfix hands over with ABI %u, this build takes %u; unload it and load this one\n",
		       abi, MMFIX_HANDOVER_ABI);
		return -EINVAL;
	}
	ho = mmfix_ho_lock();
	if (!ho) {
		pr_err("upgrade=1: the loaded mmfix is being removed\n");
		return -ENOENT;
	}
	if (!ho->live || ho->frozen) {
		pr_err("upgrade=1: %s (%s) is %s; try again when it is fully enabled\n",
		       ho->owner, ho->version,
		       ho->frozen ? "being upgraded" : "not live (in a transition or disabled)");
		mmfix_ho_unlock(ho);
		return -EBUSY;
	}
	ret = mmfix_ho_take_enabled(ho->enabled, ho->owner);
	if (!ret) {
		ho->frozen = true;
		mmfix_ho_set_state(HO_UPGRADING);
		strscpy(mmfix_ho_from, ho->owner, sizeof(mmfix_ho_from));
		pr_info("upgrade: replacing %s %s (fixes on: %s)\n", ho->owner,
			ho->version, ho->enabled[0] ? ho->enabled : "none");
	}
	mmfix_ho_unlock(ho);
	return ret;
}

/*
 * pre_patch of an upgrade, under klp_mutex, which a disable of the old
 * patch also holds: it is still live and frozen for this module, and
 * stays so until this transition ends.
 */
int mmfix_handover_pre_patch(void)
{
	struct mmfix_handover *ho;
	int ret = 0;

	if (!mmfix_upgrading())
		return 0;
	ho = mmfix_ho_lock();
	if (!ho || !ho->live || !ho->frozen ||
	    strcmp(ho->owner, mmfix_ho_from)) {
		pr_err("upgrade: %s was disabled or removed meanwhile; nothing changed\n",
		       mmfix_ho_from);
		ret = -EBUSY;
	}
	if (ho)
		mmfix_ho_unlock(ho);
	return ret;
}

/* An upgrade that failed or was reversed: the old module's switches thaw. */
void mmfix_handover_thaw(void)
{
	struct mmfix_handover *ho;

	if (!mmfix_upgrading())
		return;
	ho = mmfix_ho_lock();
	if (ho) {
		if (!strcmp(ho->owner, mmfix_ho_from))
			ho->frozen = false;
		mmfix_ho_unlock(ho);
	}
	mmfix_ho_set_state(HO_NONE);
	pr_info("upgrade not done: %s stays in place, this module can be removed\n",
		mmfix_ho_from);
}

static void mmfix_ho_add_counters(const struct mmfix_handover_counter *c,
				  unsigned int n)
{
	struct mmfix_fix *fix;
	unsigned int j;
	int i;

	for (; n--; c++) {
		i = mmfix_fix_index(c->fix);
		if (i < 0)
			continue;
		fix = mmfix_fixes[i];
		for (j = 0; j < mmfix_nr_counters(fix); j++) {
			if (strcmp(fix->counter_names[j], c->name))
				continue;
			if (c->is_max)
				mmfix_count_max(fix, j, c->value);
			else
				mmfix_count_add(fix, j, c->value);
		}
	}
}

/*
 * post_patch of an upgrade: every task runs this module's code, the old
 * patch is replaced (the old module stays pinned by the livepatch core
 * until this callback returns).  Take /sys/kernel/mmfix, the lock
 * statistics switches and the counters over, and the handover with them.
 */
void mmfix_handover_take_over(void)
{
	void (*release)(struct mmfix_handover *ho);
	struct mmfix_handover_counter *c;
	struct mmfix_handover *ho;
	char stats[MMFIX_HANDOVER_NAMES];
	unsigned int n;
	int ret;

	ho = mmfix_ho_lock();
	if (WARN_ON_ONCE(!ho))
		return;
	release = ho->release;
	mmfix_ho_unlock(ho);
	/* pinned: neither the old module nor the handover can go now */
	release(ho);

	spin_lock(&ho->lock);
	c = ho->counters;
	n = ho->nr_counters;
	ho->counters = NULL;
	ho->nr_counters = 0;
	strscpy(stats, ho->stats, sizeof(stats));
	strscpy(ho->owner, module_name(THIS_MODULE), sizeof(ho->owner));
	strscpy(ho->version, MMFIX_MODULE_VERSION, sizeof(ho->version));
	ho->release = mmfix_handover_release;
	ho->frozen = false;
	ho->live = true;
	mmfix_ho_note_enabled(ho);
	spin_unlock(&ho->lock);
	mmfix_ho_set_state(HO_OWNER);

	mmfix_ho_add_counters(c, n);
	kfree(c);
	ret = mmfix_sysfs_init();
	if (!ret)
		ret = mmfix_stats_init();
	if (ret) {
		pr_err("upgrade: /sys/kernel/mmfix could not be made (%d); the fixes run on, unload and load mmfix to get it back\n",
		       ret);
		return;
	}
	mmfix_stats_handover_in(stats);
	pr_info("upgrade: took over from %s\n", mmfix_ho_from);
}

/*
 * At load, before registering: publish the handover, or with upgrade=1
 * find and freeze the loaded mmfix's.  A second mmfix loaded without
 * upgrade=1 is refused: two patches of the same functions would stack.
 */
int mmfix_handover_init(bool enable_given)
{
	struct mmfix_handover *ho;
	bool created = false;

	/* e.g. options from /etc/modprobe.d for mmfix, loaded by modprobe */
	if (mmfix_upgrade && enable_given)
		pr_info("upgrade=1: enable= is ignored, the loaded mmfix's switch states carry over\n");
	if (mmfix_upgrade)
		return mmfix_handover_freeze();

#ifdef MMFIX_TEST_HANDOVER_DELAY
	/* tests only: another load meets this one here (t-86) */
	if (mmfix_test_handover_delay_ms) {
		pr_info("test: waiting %u ms before the handover\n",
			mmfix_test_handover_delay_ms);
		msleep(mmfix_test_handover_delay_ms);
	}
#endif
	/*
	 * One step, under the livepatch core's shadow lock: two mmfix
	 * modules loading at the same moment cannot both make it (a second
	 * klp_shadow_alloc() would WARN).
	 */
	ho = klp_shadow_get_or_alloc(MMFIX_HANDOVER_OBJ, MMFIX_HANDOVER_ID,
				     sizeof(*ho), GFP_KERNEL, mmfix_ho_ctor,
				     &created);
	if (!ho)
		return -ENOMEM;
	if (!created) {
		pr_err("another mmfix is loaded (mmfix or mmfix_alt); upgrade it with mmfixctl upgrade, or unload it first\n");
		return -EEXIST;
	}
	mmfix_ho_set_state(HO_OWNER);
	return 0;
}

static void mmfix_ho_dtor(void *obj, void *shadow_data)
{
	struct mmfix_handover *ho = shadow_data;

	kfree(ho->counters);
}

/* At unload, or when the load failed: free the handover if it is ours. */
void mmfix_handover_uninit(void)
{
	struct mmfix_handover *ho = mmfix_ho_lock_own();

	if (!ho) {
		mmfix_handover_thaw();
		return;
	}
	ho->dead = true;
	mmfix_ho_unlock(ho);
	mmfix_ho_set_state(HO_NONE);
	klp_shadow_free(MMFIX_HANDOVER_OBJ, MMFIX_HANDOVER_ID, mmfix_ho_dtor);
}
