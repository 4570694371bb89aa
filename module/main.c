// SPDX-License-Identifier: GPL-2.0
/*
 * mmfix - livepatch carrying memory-management scalability fixes
 *
 * Purpose: each fix replaces one or more mm functions through the
 * livepatch core and is switched on and off at run time under
 * /sys/kernel/mmfix/fixes/<fix>/enabled.  With every switch off the
 * replacements behave exactly like the running kernel's own functions.
 *
 * Usage:
 *   insmod mmfix.ko enable=populate_drain
 *   echo 0 > /sys/kernel/mmfix/fixes/populate_drain/enabled
 *   mmfixctl unload
 *
 * Non-exported kernel symbols are reached through livepatch relocations
 * written into the module after the build (docs/klp-relocations.md), so
 * no kernel function is ever called through a looked-up pointer.
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/stringify.h>
#include <linux/utsname.h>
#include "mmfix.h"
#include "../include/mmfix_flavour.h"
#include "../include/mmfix_verified.h"

#define MMFIX_KERNEL_STR(a, b) " " #a "." #b
static const char mmfix_supported[] = MMFIX_KERNEL_LIST(MMFIX_KERNEL_STR);

/*
 * The builds whose code the copies were verified against
 * (scripts/verify-build), each with the fixes whose copied code differs
 * there (left out on that build).  Tests only: -DMMFIX_TEST_UNVERIFIED
 * makes every entry name a build that does not exist, so that the VM
 * can show the refusal on a real one (tests/guest/t-79-unverified-build.sh);
 * -DMMFIX_TEST_WITHOUT=fix leaves that fix out on every build
 * (tests/guest/t-08-partial-build.sh).
 */
#ifdef MMFIX_TEST_UNVERIFIED
# define MMFIX_VERIFIED_VER(v)	v "~mmfixtest"
#else
# define MMFIX_VERIFIED_VER(v)	v
#endif
#ifdef MMFIX_TEST_WITHOUT
# define MMFIX_VERIFIED_WITHOUT(w)	__stringify(MMFIX_TEST_WITHOUT)
#else
# define MMFIX_VERIFIED_WITHOUT(w)	w
#endif

struct mmfix_build {
	const char *series;
	const char *release;
	const char *version;
	const char *without;	/* space-separated fixes left out */
};

#define MMFIX_BUILD(s, r, v, w) \
	{ s, r, MMFIX_VERIFIED_VER(v), MMFIX_VERIFIED_WITHOUT(w) },
static const struct mmfix_build mmfix_verified_builds[] = {
	MMFIX_VERIFIED_LIST(MMFIX_BUILD)
};

static bool mmfix_allow_unverified;
module_param_named(allow_unverified, mmfix_allow_unverified, bool, 0444);
MODULE_PARM_DESC(allow_unverified,
		 "Load on a build of a supported series whose code was not verified (default: refuse)");

static bool mmfix_verified;
static const char *mmfix_verified_without = "";

static unsigned long mmfix_enable_mask;
static bool mmfix_enable_recommended;
static unsigned long mmfix_patch_mask = BIT(MMFIX_NR_FIXES) - 1;
static bool mmfix_patch_recommended;

/*
 * A comma-separated list of fix names for parameter @param into @mask;
 * "recommended" sets *@recommended.  Unknown names fail.
 */
static int mmfix_fix_list_parse(const char *param, const char *val,
				unsigned long *mask, bool *recommended)
{
	char *buf, *cur, *tok;
	int i, ret = 0;

	*mask = 0;
	buf = kstrdup(val, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	cur = strim(buf);
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (!*tok)
			continue;
		if (!strcmp(tok, MMFIX_ENABLE_RECOMMENDED)) {
			*recommended = true;
			continue;
		}
		i = mmfix_fix_index(tok);
		if (i < 0) {
			pr_err("%s=: unknown fix '%.32s' (known: %s, or %s)\n",
			       param, tok, mmfix_fix_name_list,
			       MMFIX_ENABLE_RECOMMENDED);
			ret = -EINVAL;
			break;
		}
		*mask |= BIT(i);
	}
	kfree(buf);
	return ret;
}

/*
 * enable=fix[,fix...]: fixes switched on at load.  "recommended" stands
 * for the fixes whose recommended file reads 1 on this kernel (each fix
 * decides in its init); it can be combined with fix names.
 */
static int mmfix_enable_set(const char *val, const struct kernel_param *kp)
{
	bool recommended = false;
	unsigned long mask;
	int ret;

	ret = mmfix_fix_list_parse("enable", val, &mask, &recommended);
	if (ret)
		return ret;
	mmfix_enable_mask = mask;
	mmfix_enable_recommended = recommended;
	return 0;
}

static const struct kernel_param_ops mmfix_enable_ops = {
	.set = mmfix_enable_set,
};
module_param_cb(enable, &mmfix_enable_ops, NULL, 0);
MODULE_PARM_DESC(enable, "Comma-separated fixes to switch on at load, or \"recommended\" for this kernel's recommended set (default: none)");

/*
 * fixes=fix[,fix...]: the fixes whose functions the livepatch redirects
 * at all (default: every fix that applies); "recommended" stands for
 * the fixes enable=recommended would switch on.  Every call of a redirected
 * function pays the livepatch's redirect, fix on or off
 * (docs/overhead.md); a fix left out costs nothing and can be switched
 * on only after a reload or an upgrade with it.
 */
static int mmfix_fixes_set(const char *val, const struct kernel_param *kp)
{
	bool recommended = false;
	unsigned long mask;
	int ret;

	ret = mmfix_fix_list_parse("fixes", val, &mask, &recommended);
	if (ret)
		return ret;
	if (!mask && !recommended) {
		pr_err("fixes=: no fix named; name at least one (known: %s, or %s)\n",
		       mmfix_fix_name_list, MMFIX_ENABLE_RECOMMENDED);
		return -EINVAL;
	}
	mmfix_patch_mask = mask;
	mmfix_patch_recommended = recommended;
	return 0;
}

static const struct kernel_param_ops mmfix_fixes_ops = {
	.set = mmfix_fixes_set,
};
module_param_cb(fixes, &mmfix_fixes_ops, NULL, 0);
MODULE_PARM_DESC(fixes, "Comma-separated fixes to patch at all, or \"recommended\"; the others cost nothing and cannot be switched on (default: every fix that applies)");

/*
 * The replacement code was written against Debian's amd64 builds of the
 * listed series, of the flavours include/mmfix_flavour.h supports;
 * anything else is refused before anything is registered.  An
 * unsupported flavour (-rt) is refused even with allow_unverified=1: the
 * code is wrong there, not merely unverified.  Tests only:
 * -DMMFIX_TEST_FLAVOUR=rt-amd64 makes the running kernel's flavour read
 * as that one.
 */
static int mmfix_kernel_check(void)
{
	const struct new_utsname *uts = init_utsname();
	const struct mmfix_flavour *f = mmfix_flavour_of(uts->release);

#ifdef MMFIX_TEST_FLAVOUR
	if (f)
		f = mmfix_flavour_named(__stringify(MMFIX_TEST_FLAVOUR));
#endif

	if (!MMFIX_SUPPORTED || !f || !strstr(uts->version, " Debian ")) {
		pr_err("kernel %s (%s) is not supported; supported: Debian amd64%s\n",
		       uts->release, uts->version, mmfix_supported);
		return -ENODEV;
	}
	if (!f->supported || IS_ENABLED(CONFIG_PREEMPT_RT)) {
		pr_err("kernel %s: flavour %s is not supported (%s)\n",
		       uts->release, f->suffix,
		       f->supported ? MMFIX_FLAVOUR_RT_WHY : f->why);
		return -ENODEV;
	}
	return 0;
}

/* Whether the running build is one whose copied code was verified. */
bool mmfix_build_verified(void)
{
	return mmfix_verified;
}

/*
 * Whether fix @name is left out on the running build: a verified build
 * on which its copied code differs from the code mmfix carries.
 */
bool mmfix_build_leaves_out(const char *name)
{
	const char *w = mmfix_verified_without;
	size_t len = strlen(name);

	while (*w) {
		w = skip_spaces(w);
		if (!strncmp(w, name, len) && (!w[len] || w[len] == ' '))
			return true;
		w += strcspn(w, " ");
	}
	return false;
}

/*
 * The Debian package version in init_utsname()->version, e.g. 6.1.192-3
 * in "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-20)": its start
 * and length (0 if there is none).
 */
static size_t mmfix_debian_version(const char *uts_version, const char **ver)
{
	const char *p = strstr(uts_version, " Debian ");

	if (!p)
		return 0;
	*ver = p + strlen(" Debian ");
	return strcspn(*ver, " ");
}

/*
 * The replacement functions are copies of the kernel's own in the builds
 * listed in include/mmfix_verified.h; another build of the series may
 * have changed them.  Refuse it, in one line, unless allow_unverified=1.
 */
static int mmfix_build_check(void)
{
	const struct new_utsname *uts = init_utsname();
	const struct mmfix_build *b;
	const char *ver = "";
	char list[192] = "";
	size_t len, n = 0;
	unsigned int i;

	len = mmfix_debian_version(uts->version, &ver);
	for (i = 0; i < ARRAY_SIZE(mmfix_verified_builds); i++) {
		b = &mmfix_verified_builds[i];
		if (strcmp(b->series, MMFIX_SERIES))
			continue;
		if (!strcmp(b->release, uts->release) &&
		    strlen(b->version) == len && !strncmp(b->version, ver, len)) {
			mmfix_verified = true;
			mmfix_verified_without = b->without;
			return 0;
		}
		n += scnprintf(list + n, sizeof(list) - n, "%s%s (%s)",
			       n ? ", " : "", b->release, b->version);
	}
	if (!mmfix_allow_unverified) {
		pr_err("build %s (Debian %.*s) is not verified; verified %s builds: %s; load with allow_unverified=1 to run anyway\n",
		       uts->release, (int)len, ver, MMFIX_SERIES,
		       n ? list : "none");
		return -ENODEV;
	}
	pr_warn("build %s (Debian %.*s) is not verified (verified %s builds: %s); loading anyway (allow_unverified=1): check it with scripts/verify-build\n",
		uts->release, (int)len, ver, MMFIX_SERIES, n ? list : "none");
	return 0;
}

static struct klp_object mmfix_objs[] = {
	{ /* name NULL: vmlinux */ },
	{ }
};

/* Global: mmfix_patch_live() reads its enabled flag (mmfix.h). */
struct klp_patch mmfix_patch = {
	.mod = THIS_MODULE,
	.objs = mmfix_objs,
};

static int __init mmfix_init(void)
{
	int ret;

	ret = mmfix_kernel_check();
	if (ret)
		return ret;

	ret = mmfix_build_check();
	if (ret)
		return ret;

	/* an upgrade's atomic replace would disable any other livepatch */
	if (mmfix_upgrade_requested()) {
		ret = mmfix_coexist_upgrade_check();
		if (ret)
			return ret;
	}

	ret = mmfix_fixes_init(mmfix_patch_mask, mmfix_patch_recommended,
			       mmfix_enable_mask, mmfix_enable_recommended);
	if (ret)
		goto err_fixes;

	/*
	 * upgrade=1 takes the switch states of the loaded mmfix, and its
	 * /sys/kernel/mmfix once the transition has ended (upgrade.c).
	 */
	ret = mmfix_handover_init(mmfix_enable_mask || mmfix_enable_recommended);
	if (ret)
		goto err_handover;

	if (!mmfix_upgrading()) {
		ret = mmfix_sysfs_init();
		if (ret)
			goto err_sysfs;
		ret = mmfix_stats_init();
		if (ret)
			goto err_sysfs;
	}

	ret = mmfix_coexist_init();
	if (ret)
		goto err_sysfs;

	mmfix_objs[0].funcs = mmfix_fixes_klp_funcs();
	mmfix_objs[0].callbacks = mmfix_fixes_klp_callbacks;
	mmfix_patch.replace = mmfix_upgrading();
	/* no moment unwatched: the notifier acts once the patch is enabled */
	mmfix_coexist_arm();
	ret = klp_enable_patch(&mmfix_patch);
	if (ret) {
		pr_err("livepatch registration failed (%d); nothing was patched\n", ret);
		goto err_coexist;
	}
	pr_info("%s loaded on %s (%s build)%s\n", MMFIX_MODULE_VERSION,
		init_utsname()->release, mmfix_verified ? "verified" : "unverified",
		mmfix_upgrading() ? ", upgrading" : "");
	return 0;

err_coexist:
	mmfix_coexist_uninit();
err_sysfs:
	mmfix_stats_uninit();
	mmfix_sysfs_uninit();
	mmfix_handover_uninit();
err_handover:
	mmfix_fixes_uninit();
err_fixes:
	return ret;
}

/* Also after an upgrade replaced this module: then most is gone already. */
static void __exit mmfix_exit(void)
{
	mmfix_coexist_uninit();
	mmfix_stats_uninit();
	mmfix_sysfs_uninit();
	mmfix_handover_uninit();
	mmfix_fixes_uninit();
}

module_init(mmfix_init);
module_exit(mmfix_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Livepatch with memory-management scalability fixes");
MODULE_VERSION(MMFIX_MODULE_VERSION);
MODULE_INFO(livepatch, "Y");
