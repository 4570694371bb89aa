// SPDX-License-Identifier: GPL-2.0
/*
 * mmfix beside other livepatches (docs/install.md, "Running mmfix beside
 * other livepatches").
 *
 * The livepatch core stacks every patch of a function and runs the
 * newest one, so a copy of the kernel's function loaded over another
 * livepatch's silently undoes that patch, and a livepatch loaded over
 * mmfix's copy silently makes a fix inert.  A patch with replace = true
 * (kpatch's cumulative patches) disables every other livepatch in its
 * own transition and runs only its own callbacks.  Here mmfix looks at
 * the core's list of patches (klp_patches, under klp_mutex, both reached
 * through livepatch relocations) to:
 *  - leave out, at load, each fix one of whose functions another
 *    livepatch already patches, naming that livepatch (owned_by), and
 *    refuse the load if such a patch appears before the transition
 *    starts;
 *  - refuse upgrade=1 while another livepatch is loaded: the upgrade's
 *    atomic replace would disable it;
 *  - name a livepatch loaded after mmfix over one of a fix's functions
 *    (overridden_by), on every read;
 *  - notice a foreign atomic replace (a module notifier, when the
 *    replacing livepatch's module has loaded), remember its name
 *    (replaced_by) and let the fixes react (khugepaged_scan must move
 *    khugepaged off its khugepaged(), or the transition never ends).
 * Another mmfix (the other module name, in an upgrade) is not "another
 * livepatch": upgrade.c deals with it.
 *
 * klp_mutex is held by the core during every enable, disable and
 * transition step, and by mmfix's own klp callbacks, which may remove
 * the sysfs files of a replaced mmfix: sysfs readers therefore only try
 * the lock, for a bounded time, and fall back to what they found last.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include "mmfix.h"

/* kernel/livepatch/core.c, not exported: livepatch relocations */
extern struct mutex klp_mutex;
extern struct list_head klp_patches;
/* kernel/livepatch/transition.c */
extern struct klp_patch *klp_transition_patch;

/*
 * The core's mutex and list through one function each: every use of a
 * relocated symbol is a relocation, and 6.1's livepatch core walks all
 * of kallsyms for each relocation while the module loads (36 uses made
 * 1.3 s of a 3.4 s load under TCG).
 */
static noinline struct mutex *mmfix_klp_mutex(void)
{
	return &klp_mutex;
}

static noinline struct list_head *mmfix_klp_patches(void)
{
	return &klp_patches;
}

/*
 * How long a sysfs reader tries klp_mutex before using what it had: a
 * deadline in jiffies (msleep() rounds up to whole ticks, 12 ms for
 * msleep(5) at HZ=250), polled every 0.2-0.4 ms.  The reader holds a
 * kernfs active reference meanwhile, which an upgrade's removal of
 * /sys/kernel/mmfix waits for with klp_mutex held (every module load
 * waits for that mutex too), so the deadline is kept short.
 */
#define MMFIX_KLP_WAIT_MS	20

static DEFINE_SPINLOCK(mmfix_coexist_lock);
/* under mmfix_coexist_lock, as each fix's overridden_by */
static char mmfix_replaced_by[MODULE_NAME_LEN];
/* the module notifier is registered */
static bool mmfix_notifier_on;
/*
 * From just before klp_enable_patch() until this module's patch is
 * disabled (post_unpatch) or handed over to an upgrade (release); the
 * notifier acts only while it is set and the patch is enabled.
 */
static bool mmfix_coexist_armed;

/* Both names every build of mmfix loads under (Kbuild, upgrade.c). */
static bool mmfix_mod_is_mmfix(const struct module *mod)
{
	const char *name = module_name(mod);

	return !strcmp(name, "mmfix") || !strcmp(name, "mmfix_alt");
}

static bool mmfix_lp_is_mmfix(const struct klp_patch *p)
{
	return p == &mmfix_patch || mmfix_mod_is_mmfix(p->mod);
}

static bool mmfix_sympos_eq(unsigned long a, unsigned long b)
{
	return (a ? a : 1) == (b ? b : 1);
}

/* The vmlinux function of @p that is also one of @fix's, or NULL. */
static const char *mmfix_lp_shared_func(struct klp_patch *p,
					const struct mmfix_fix *fix)
{
	const struct klp_func *mine;
	struct klp_object *obj;
	struct klp_func *func;

	klp_for_each_object(p, obj) {
		if (obj->name)
			continue;
		klp_for_each_func(obj, func) {
			for (mine = fix->funcs; mine->old_name; mine++)
				if (!strcmp(func->old_name, mine->old_name) &&
				    mmfix_sympos_eq(func->old_sympos,
						    mine->old_sympos))
					return mine->old_name;
		}
	}
	return NULL;
}

/*
 * Under klp_mutex: the first other livepatch that patches one of @fix's
 * functions, with that function in *@func.
 */
static struct klp_patch *mmfix_lp_owner(const struct mmfix_fix *fix,
					const char **func)
{
	struct klp_patch *p;

	list_for_each_entry(p, mmfix_klp_patches(), list) {
		if (mmfix_lp_is_mmfix(p))
			continue;
		*func = mmfix_lp_shared_func(p, fix);
		if (*func)
			return p;
	}
	return NULL;
}

/*
 * At load, before the fix's functions are listed: whether another
 * livepatch owns one of them.  Then the fix is not patched, and its
 * reason says by whom (fix.c).
 */
bool mmfix_coexist_owned(struct mmfix_fix *fix)
{
	const char *func = NULL;
	struct klp_patch *p;

	mutex_lock(mmfix_klp_mutex());
	p = mmfix_lp_owner(fix, &func);
	if (p) {
		strscpy(fix->owned_by, module_name(p->mod),
			sizeof(fix->owned_by));
		snprintf(fix->reason_buf, sizeof(fix->reason_buf),
			 "%s is patched by livepatch %s; left alone",
			 func, fix->owned_by);
	}
	mutex_unlock(mmfix_klp_mutex());
	return p;
}

/* Under klp_mutex: the first livepatch other than mmfix, or NULL. */
static struct klp_patch *mmfix_lp_foreign(void)
{
	struct klp_patch *p;

	list_for_each_entry(p, mmfix_klp_patches(), list)
		if (!mmfix_lp_is_mmfix(p))
			return p;
	return NULL;
}

/*
 * upgrade=1, before the loaded mmfix is frozen: the upgrade's atomic
 * replace would disable every other livepatch, so none may be loaded.
 */
int mmfix_coexist_upgrade_check(void)
{
	struct klp_patch *p;
	int ret = 0;

	mutex_lock(mmfix_klp_mutex());
	p = mmfix_lp_foreign();
	if (p) {
		pr_err("upgrade=1: livepatch %s is loaded and an upgrade (atomic replace) would disable it; nothing changed\n",
		       module_name(p->mod));
		ret = -EBUSY;
	}
	mutex_unlock(mmfix_klp_mutex());
	return ret;
}

/*
 * pre_patch, under klp_mutex: what the load checked still holds (another
 * livepatch may have loaded since).
 */
int mmfix_coexist_pre_patch(void)
{
	const char *func = NULL;
	struct klp_patch *p;
	unsigned int i;

	lockdep_assert_held(mmfix_klp_mutex());
	if (mmfix_upgrading()) {
		p = mmfix_lp_foreign();
		if (p) {
			pr_err("upgrade=1: livepatch %s was loaded meanwhile and an upgrade would disable it; nothing changed\n",
			       module_name(p->mod));
			return -EBUSY;
		}
	}
	for (i = 0; i < MMFIX_NR_FIXES; i++) {
		if (!mmfix_fixes[i]->patched)
			continue;
		p = mmfix_lp_owner(mmfix_fixes[i], &func);
		if (p) {
			pr_err("%s: livepatch %s patched %s while mmfix loaded; nothing changed, load mmfix again\n",
			       mmfix_fixes[i]->name, module_name(p->mod), func);
			return -EBUSY;
		}
	}
	return 0;
}

static bool mmfix_klp_trylock(void)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(MMFIX_KLP_WAIT_MS);

	while (!mutex_trylock(mmfix_klp_mutex())) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(200, 400);
	}
	return true;
}

/*
 * The livepatch, loaded after mmfix's own patch, that runs instead of
 * one of @fix's functions (the newest such), into @buf; "" if none.
 * While klp_mutex stays taken, what the last read found.
 */
void mmfix_coexist_overridden_by(struct mmfix_fix *fix, char *buf,
				 size_t size)
{
	const char *name = "";
	struct klp_patch *p;
	bool after = false;

	if (fix->patched && mmfix_klp_trylock()) {
		list_for_each_entry(p, mmfix_klp_patches(), list) {
			if (p == &mmfix_patch)
				after = true;
			else if (after && p->enabled && !mmfix_lp_is_mmfix(p) &&
				 mmfix_lp_shared_func(p, fix))
				name = module_name(p->mod);
		}
		spin_lock(&mmfix_coexist_lock);
		strscpy(fix->overridden_by, name, sizeof(fix->overridden_by));
		spin_unlock(&mmfix_coexist_lock);
		mutex_unlock(mmfix_klp_mutex());
	}
	spin_lock(&mmfix_coexist_lock);
	strscpy(buf, fix->overridden_by, size);
	spin_unlock(&mmfix_coexist_lock);
}

/*
 * Another livepatch's atomic replace disabled mmfix's patch: no klp
 * callback of mmfix ran for it (else mmfix_patch_unpatching), and a
 * replacing livepatch was seen loading after mmfix's.
 */
bool mmfix_coexist_replaced(char *buf, size_t size)
{
	bool replaced;

	spin_lock(&mmfix_coexist_lock);
	replaced = mmfix_replaced_by[0] && !READ_ONCE(mmfix_patch.enabled) &&
		   !READ_ONCE(mmfix_patch_unpatching);
	if (buf)
		strscpy(buf, replaced ? mmfix_replaced_by : "", size);
	spin_unlock(&mmfix_coexist_lock);
	return replaced;
}

/* Whether the notifier acts for this module's patch. */
static bool mmfix_coexist_acting(void)
{
	return READ_ONCE(mmfix_coexist_armed) &&
	       (READ_ONCE(mmfix_patch.enabled) || mmfix_upgrading());
}

/*
 * A module is loading (COMING), finished loading (LIVE) or is going
 * (GOING).  A livepatch's init enables its patch and starts the
 * transition, so at LIVE it is in klp_patches (unless its transition
 * has already ended with it disabled).
 */
static int mmfix_coexist_module_notify(struct notifier_block *nb,
				       unsigned long action, void *data)
{
	struct module *mod = data;
	struct klp_patch *p;
	bool replace = false;
	unsigned int i;

	/* an upgrade's new mmfix runs the callbacks that deal with it */
	if (!is_livepatch_module(mod) || mmfix_mod_is_mmfix(mod) ||
	    !mmfix_coexist_acting())
		return NOTIFY_DONE;
	/*
	 * COMING: before its init enables its patch (what it patches is
	 * not known yet); GOING: its load failed, or it was disabled and
	 * is being removed.
	 */
	if (action == MODULE_STATE_COMING || action == MODULE_STATE_GOING) {
		for (i = 0; i < MMFIX_NR_FIXES; i++) {
			struct mmfix_fix *fix = mmfix_fixes[i];

			if (!fix->patched)
				continue;
			if (action == MODULE_STATE_COMING && fix->foreign_coming)
				fix->foreign_coming(fix);
			if (action == MODULE_STATE_GOING && fix->foreign_transition)
				fix->foreign_transition(fix);
		}
		return NOTIFY_OK;
	}
	if (action != MODULE_STATE_LIVE)
		return NOTIFY_DONE;

	mutex_lock(mmfix_klp_mutex());
	list_for_each_entry(p, mmfix_klp_patches(), list) {
		if (p->mod == mod) {
			replace = p->replace;
			break;
		}
	}
	mutex_unlock(mmfix_klp_mutex());
	/*
	 * Nothing logged: replaced_by and mmfixctl status say it, and the
	 * kernel's livepatch selftests compare the log with a transcript.
	 */
	if (replace) {
		spin_lock(&mmfix_coexist_lock);
		strscpy(mmfix_replaced_by, module_name(mod),
			sizeof(mmfix_replaced_by));
		spin_unlock(&mmfix_coexist_lock);
	}
	for (i = 0; i < MMFIX_NR_FIXES; i++)
		if (mmfix_fixes[i]->patched && mmfix_fixes[i]->foreign_transition)
			mmfix_fixes[i]->foreign_transition(mmfix_fixes[i]);
	return NOTIFY_OK;
}

static struct notifier_block mmfix_coexist_nb = {
	.notifier_call = mmfix_coexist_module_notify,
};

/*
 * Before mmfix's patch is registered (a failure leaves nothing behind);
 * the notifier acts only once mmfix_coexist_arm() says the patch is.
 */
int mmfix_coexist_init(void)
{
	int ret = register_module_notifier(&mmfix_coexist_nb);

	mmfix_notifier_on = !ret;
	return ret;
}

void mmfix_coexist_arm(void)
{
	WRITE_ONCE(mmfix_coexist_armed, true);
}

/*
 * This module's patch is disabled, or an upgrade took over: another
 * livepatch's load is the new module's business (its cursors are not
 * this module's to free).
 */
void mmfix_coexist_disarm(void)
{
	WRITE_ONCE(mmfix_coexist_armed, false);
	spin_lock(&mmfix_coexist_lock);
	mmfix_replaced_by[0] = '\0';
	spin_unlock(&mmfix_coexist_lock);
}

void mmfix_coexist_uninit(void)
{
	WRITE_ONCE(mmfix_coexist_armed, false);
	if (mmfix_notifier_on)
		unregister_module_notifier(&mmfix_coexist_nb);
	mmfix_notifier_on = false;
}

/*
 * pre_patch of an upgrade, under klp_mutex: whether the mmfix being
 * replaced patches one of @fix's functions (its drop callbacks are due
 * only then).
 */
bool mmfix_coexist_replaced_mmfix_patches(const struct mmfix_fix *fix)
{
	struct klp_patch *p;

	lockdep_assert_held(mmfix_klp_mutex());
	list_for_each_entry(p, mmfix_klp_patches(), list)
		if (p != &mmfix_patch && mmfix_lp_is_mmfix(p) &&
		    mmfix_lp_shared_func(p, fix))
			return true;
	return false;
}

/* Whether @p patches vmlinux's @func. */
static bool mmfix_lp_patches(struct klp_patch *p, const char *func)
{
	struct klp_object *obj;
	struct klp_func *f;

	klp_for_each_object(p, obj) {
		if (obj->name)
			continue;
		klp_for_each_func(obj, f)
			if (!strcmp(f->old_name, func))
				return true;
	}
	return false;
}

/*
 * Whether the livepatch in transition patches vmlinux's @func: 1 or 0;
 * -EAGAIN if klp_mutex is taken (never waited for: the caller may be a
 * work that mmfix's klp callbacks cancel under klp_mutex).
 */
int mmfix_coexist_transition_patches(const char *func)
{
	int ret;

	if (!mutex_trylock(mmfix_klp_mutex()))
		return -EAGAIN;
	ret = klp_transition_patch && mmfix_lp_patches(klp_transition_patch, func);
	mutex_unlock(mmfix_klp_mutex());
	return ret;
}

/*
 * Whether mmfix's @func is the one that runs: mmfix's patch is enabled
 * and no enabled livepatch loaded after mmfix's patches @func.  1 or 0;
 * -EAGAIN while any livepatch is in transition (the answer may change
 * at its end) or if klp_mutex is taken (never waited for, as above).
 */
int mmfix_coexist_on_top(const char *func)
{
	struct klp_patch *p;
	bool after = false;
	int ret;

	if (!mutex_trylock(mmfix_klp_mutex()))
		return -EAGAIN;
	if (klp_transition_patch) {
		mutex_unlock(mmfix_klp_mutex());
		return -EAGAIN;
	}
	ret = READ_ONCE(mmfix_patch.enabled);
	list_for_each_entry(p, mmfix_klp_patches(), list) {
		if (p == &mmfix_patch)
			after = true;
		else if (after && p->enabled && mmfix_lp_patches(p, func))
			ret = 0;
	}
	mutex_unlock(mmfix_klp_mutex());
	return ret;
}
