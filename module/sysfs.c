// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/mmfix: version, kernel series, and one directory per fix
 * with its switch, applicability and counters
 * (docs/ABI/testing/sysfs-kernel-mmfix).
 */
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "mmfix.h"

struct mmfix_counter_attr {
	struct kobj_attribute kattr;
	struct mmfix_fix *fix;
	unsigned int idx;
};

static struct kobject *mmfix_kobj;
static struct kobject *mmfix_fixes_kobj;
static struct kobject *mmfix_fix_kobj[MMFIX_NR_FIXES];
static struct mmfix_counter_attr *mmfix_counter_attrs[MMFIX_NR_FIXES];

static struct mmfix_fix *mmfix_fix_of(struct kobject *kobj)
{
	unsigned int i;

	for (i = 0; i < MMFIX_NR_FIXES; i++)
		if (mmfix_fix_kobj[i] == kobj)
			return mmfix_fixes[i];
	return NULL;
}

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", MMFIX_MODULE_VERSION);
}

static ssize_t kernel_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", MMFIX_SERIES);
}

static ssize_t patch_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", mmfix_patch_state());
}

static ssize_t build_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  mmfix_build_verified() ? "verified" : "unverified");
}

/* The module that made this tree: mmfix, or mmfix_alt after an upgrade. */
static ssize_t module_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", module_name(THIS_MODULE));
}

/* The livepatch whose atomic replace disabled mmfix's, or an empty line. */
static ssize_t replaced_by_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	char name[MODULE_NAME_LEN];

	mmfix_coexist_replaced(name, sizeof(name));
	return sysfs_emit(buf, "%s\n", name);
}

static struct kobj_attribute mmfix_version_attr = __ATTR_RO(version);
static struct kobj_attribute mmfix_replaced_by_attr = __ATTR_RO(replaced_by);
static struct kobj_attribute mmfix_module_attr = __ATTR_RO(module);
static struct kobj_attribute mmfix_kernel_attr = __ATTR_RO(kernel);
static struct kobj_attribute mmfix_patch_attr = __ATTR_RO(patch);
static struct kobj_attribute mmfix_build_attr = __ATTR_RO(build);

static struct attribute *mmfix_top_attrs[] = {
	&mmfix_version_attr.attr,
	&mmfix_module_attr.attr,
	&mmfix_kernel_attr.attr,
	&mmfix_patch_attr.attr,
	&mmfix_build_attr.attr,
	&mmfix_replaced_by_attr.attr,
	NULL
};

static const struct attribute_group mmfix_top_group = {
	.attrs = mmfix_top_attrs,
};

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", mmfix_fix_on(mmfix_fix_of(kobj)));
}

/*
 * Exactly "0" or "1", optionally followed by one newline; EBUSY once the
 * patch is being disabled.
 */
static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	size_t len = count;
	int ret;

	if (len && buf[len - 1] == '\n')
		len--;
	if (len != 1 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	ret = mmfix_fix_switch(mmfix_fix_of(kobj), buf[0] == '1');
	return ret ? ret : count;
}

static ssize_t applicable_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", mmfix_fix_of(kobj)->applicable);
}

static ssize_t patched_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", mmfix_fix_of(kobj)->patched);
}

static ssize_t reason_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", mmfix_fix_of(kobj)->reason);
}

static ssize_t recommended_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", mmfix_fix_of(kobj)->recommended);
}

/*
 * The kernel functions the fix replaces, one per line; none if it is
 * not patched (nothing of it is registered then).
 */
static ssize_t functions_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	const struct mmfix_fix *fix = mmfix_fix_of(kobj);
	const struct klp_func *f;
	int len = 0;

	if (!fix->patched)
		return 0;
	for (f = fix->funcs; f->old_name; f++)
		len += sysfs_emit_at(buf, len, "%s\n", f->old_name);
	return len;
}

/* The livepatch that owned one of the fix's functions at load, or "". */
static ssize_t owned_by_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n", mmfix_fix_of(kobj)->owned_by);
}

/* A livepatch loaded later that runs instead of the fix's code, or "". */
static ssize_t overridden_by_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	char name[MODULE_NAME_LEN];

	mmfix_coexist_overridden_by(mmfix_fix_of(kobj), name, sizeof(name));
	return sysfs_emit(buf, "%s\n", name);
}

static struct kobj_attribute mmfix_enabled_attr = __ATTR_RW_MODE(enabled, 0644);
static struct kobj_attribute mmfix_owned_by_attr = __ATTR_RO(owned_by);
static struct kobj_attribute mmfix_overridden_by_attr = __ATTR_RO(overridden_by);
static struct kobj_attribute mmfix_applicable_attr = __ATTR_RO(applicable);
static struct kobj_attribute mmfix_patched_attr = __ATTR_RO(patched);
static struct kobj_attribute mmfix_reason_attr = __ATTR_RO(reason);
static struct kobj_attribute mmfix_recommended_attr = __ATTR_RO(recommended);
static struct kobj_attribute mmfix_functions_attr = __ATTR_RO(functions);

static struct attribute *mmfix_fix_attrs[] = {
	&mmfix_enabled_attr.attr,
	&mmfix_applicable_attr.attr,
	&mmfix_patched_attr.attr,
	&mmfix_reason_attr.attr,
	&mmfix_recommended_attr.attr,
	&mmfix_functions_attr.attr,
	&mmfix_owned_by_attr.attr,
	&mmfix_overridden_by_attr.attr,
	NULL
};

static const struct attribute_group mmfix_fix_group = {
	.attrs = mmfix_fix_attrs,
};

static ssize_t mmfix_counter_show(struct kobject *kobj,
				  struct kobj_attribute *kattr, char *buf)
{
	struct mmfix_counter_attr *ca;

	ca = container_of(kattr, struct mmfix_counter_attr, kattr);
	return sysfs_emit(buf, "%llu\n", mmfix_counter_sum(ca->fix, ca->idx));
}

static int mmfix_sysfs_add_counters(unsigned int i)
{
	struct mmfix_fix *fix = mmfix_fixes[i];
	unsigned int n = mmfix_nr_counters(fix), c;
	struct mmfix_counter_attr *ca;
	int ret;

	if (!n)
		return 0;
	ca = kcalloc(n, sizeof(*ca), GFP_KERNEL);
	if (!ca)
		return -ENOMEM;
	mmfix_counter_attrs[i] = ca;
	for (c = 0; c < n; c++) {
		sysfs_attr_init(&ca[c].kattr.attr);
		ca[c].kattr.attr.name = fix->counter_names[c];
		ca[c].kattr.attr.mode = 0444;
		ca[c].kattr.show = mmfix_counter_show;
		ca[c].fix = fix;
		ca[c].idx = c;
		ret = sysfs_create_file(mmfix_fix_kobj[i], &ca[c].kattr.attr);
		if (ret)
			return ret;
	}
	return 0;
}

static int mmfix_sysfs_add_fix(unsigned int i)
{
	int ret;

	mmfix_fix_kobj[i] = kobject_create_and_add(mmfix_fixes[i]->name,
						   mmfix_fixes_kobj);
	if (!mmfix_fix_kobj[i])
		return -ENOMEM;
	ret = sysfs_create_group(mmfix_fix_kobj[i], &mmfix_fix_group);
	if (ret)
		return ret;
	return mmfix_sysfs_add_counters(i);
}

int mmfix_sysfs_init(void)
{
	unsigned int i;
	int ret = -ENOMEM;

	mmfix_kobj = kobject_create_and_add(MMFIX_NAME, kernel_kobj);
	if (!mmfix_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(mmfix_kobj, &mmfix_top_group);
	if (ret)
		goto err_uninit;
	mmfix_fixes_kobj = kobject_create_and_add("fixes", mmfix_kobj);
	if (!mmfix_fixes_kobj) {
		ret = -ENOMEM;
		goto err_uninit;
	}
	for (i = 0; i < MMFIX_NR_FIXES; i++) {
		ret = mmfix_sysfs_add_fix(i);
		if (ret)
			goto err_uninit;
	}
	return 0;

err_uninit:
	mmfix_sysfs_uninit();
	return ret;
}

/* /sys/kernel/mmfix, for the directories other parts add (stats/). */
struct kobject *mmfix_sysfs_root(void)
{
	return mmfix_kobj;
}

/* Removes whatever mmfix_sysfs_init() managed to create. */
void mmfix_sysfs_uninit(void)
{
	unsigned int i = MMFIX_NR_FIXES;

	while (i--) {
		kobject_put(mmfix_fix_kobj[i]);
		mmfix_fix_kobj[i] = NULL;
		kfree(mmfix_counter_attrs[i]);
		mmfix_counter_attrs[i] = NULL;
	}
	kobject_put(mmfix_fixes_kobj);
	mmfix_fixes_kobj = NULL;
	kobject_put(mmfix_kobj);
	mmfix_kobj = NULL;
}
