// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded, non-blocking reads and checked writes of sysfs attributes, and
 * the listing of fixes and their counters.  Everything is relative to
 * sysfs_root so the tests can point mmfixctl at a fake tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "mmfixctl.h"

char sysfs_root[PATH_MAX] = "/sys";

static int sysfs_vpath(char *buf, size_t size, const char *fmt, va_list ap)
{
	int n, m;

	n = snprintf(buf, size, "%s/", sysfs_root);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	m = vsnprintf(buf + n, size - n, fmt, ap);
	if (m < 0 || (size_t)m >= size - n)
		return -ENAMETOOLONG;
	return 0;
}

int sysfs_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = sysfs_vpath(buf, size, fmt, ap);
	va_end(ap);
	return ret;
}

/*
 * Opens path only if it is a regular file: O_NONBLOCK keeps a FIFO or a
 * device in a fake tree from hanging us, fstat() then refuses it.
 */
static int open_regular(int dirfd, const char *path, int flags)
{
	struct stat st;
	int fd, err;

	fd = openat(dirfd, path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	else
		return fd;
	close(fd);
	return err;
}

static long read_fd(int fd, char *buf, size_t size, bool *truncated)
{
	size_t len = 0;
	ssize_t n;
	char extra;

	if (truncated)
		*truncated = false;
	if (!size)
		return -EINVAL;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += n;
	}
	if (len == size - 1 && truncated) {
		do {
			n = read(fd, &extra, 1);
		} while (n < 0 && errno == EINTR);
		*truncated = n > 0;
	}
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return (long)len;
}

static long read_at(int dirfd, const char *path, int flags, char *buf,
		    size_t size, bool *truncated)
{
	long ret;
	int fd;

	fd = open_regular(dirfd, path, O_RDONLY | flags);
	if (fd < 0)
		return fd;
	ret = read_fd(fd, buf, size, truncated);
	close(fd);
	return ret;
}

long sysfs_read(const char *path, char *buf, size_t size, bool *truncated)
{
	return read_at(AT_FDCWD, path, 0, buf, size, truncated);
}

int parse_u64(const char *s, uint64_t *val)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*val = v;
	return 0;
}

static int read_u64_at(int dirfd, const char *path, int flags, uint64_t *val)
{
	char buf[32];
	bool truncated;
	long len;

	len = read_at(dirfd, path, flags, buf, sizeof(buf), &truncated);
	if (len < 0)
		return (int)len;
	if (truncated)
		return -EINVAL;
	return parse_u64(buf, val);
}

int sysfs_read_u64(const char *path, uint64_t *val)
{
	return read_u64_at(AT_FDCWD, path, 0, val);
}

int sysfs_read_bool(const char *path)
{
	uint64_t v;
	int ret;

	ret = sysfs_read_u64(path, &v);
	if (ret)
		return ret;
	return v <= 1 ? (int)v : -EINVAL;
}

int sysfs_write(const char *path, const char *val)
{
	size_t len = strlen(val);
	struct statfs sfs;
	ssize_t n;
	int fd, err = 0;

	/* No O_TRUNC: a write the kernel rejects must leave a fake file alone. */
	fd = open_regular(AT_FDCWD, path, O_WRONLY);
	if (fd < 0)
		return fd;
	do {
		n = write(fd, val, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	/* A plain file in a fake tree must hold exactly what sysfs would show. */
	else if (fstatfs(fd, &sfs) == 0 && sfs.f_type != SYSFS_MAGIC &&
		 ftruncate(fd, (off_t)len) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

const char *sysfs_attr_str(char *buf, size_t size, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = sysfs_vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (ret || sysfs_read(path, buf, size, NULL) < 0)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

int sysfs_attr_bool(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = sysfs_vpath(path, sizeof(path), fmt, ap);
	va_end(ap);
	return ret ? ret : sysfs_read_bool(path);
}

bool sysfs_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The module that made /sys/kernel/mmfix: mmfix, or mmfix_alt after an
 * upgrade (its "module" file; mmfix when it has none).
 */
const char *mmfix_module(void)
{
	char buf[32];
	const char *s = sysfs_attr_str(buf, sizeof(buf), "%s",
				       MMFIX_SYSFS_DIR "/module");

	return s && !strcmp(s, MMFIX_ALT_NAME) ? MMFIX_ALT_NAME : MMFIX_NAME;
}

/* The name it is not loaded under: what an upgrade loads. */
const char *mmfix_other_module(void)
{
	return strcmp(mmfix_module(), MMFIX_NAME) ? MMFIX_NAME : MMFIX_ALT_NAME;
}

/* Its livepatch directory, relative to the sysfs root. */
const char *klp_dir(void)
{
	return strcmp(mmfix_module(), MMFIX_NAME) ?
	       MMFIX_KLP_SYSFS_ROOT "/" MMFIX_ALT_NAME :
	       MMFIX_KLP_SYSFS_ROOT "/" MMFIX_NAME;
}

bool mmfix_loaded(void)
{
	char path[PATH_MAX];

	return !sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR) &&
	       sysfs_is_dir(path);
}

const char *running_release(char *buf, size_t size)
{
	const char *env = getenv("MMFIXCTL_RELEASE");	/* tests only */
	struct utsname uts;

	if (env && *env)
		snprintf(buf, size, "%s", env);
	else if (!uname(&uts))
		snprintf(buf, size, "%s", uts.release);
	else
		snprintf(buf, size, "-");
	return buf;
}

/* Fix names as the module makes them: [a-z0-9_], at most the ABI limit. */
bool fix_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > MMFIX_FIX_NAME_MAX)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

static bool subdir_at(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int fixes_dir_open(void)
{
	char path[PATH_MAX];
	int ret;

	ret = sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR "/fixes");
	if (ret)
		return ret;
	ret = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return ret < 0 ? -errno : ret;
}

#define MMFIX_FIX_NAME(id, name) name,
static const char *const known_fixes[] = { MMFIX_FIX_LIST(MMFIX_FIX_NAME) };
#undef MMFIX_FIX_NAME

static bool fix_is_known(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(known_fixes); i++)
		if (!strcmp(known_fixes[i], name))
			return true;
	return false;
}

/*
 * Fixes this header knows come first, in MMFIX_FIX_LIST order; a module
 * newer than this mmfixctl may have more, shown after them by name.
 */
int fix_list_read(struct fix_list *fl)
{
	unsigned int nknown;
	struct dirent *de;
	size_t i;
	DIR *dir;
	int dfd;

	fl->n = 0;
	dfd = fixes_dir_open();
	if (dfd < 0)
		return dfd;
	for (i = 0; i < ARRAY_SIZE(known_fixes) && fl->n < MMFIX_MAX_FIXES; i++)
		if (subdir_at(dfd, known_fixes[i]))
			strcpy(fl->name[fl->n++], known_fixes[i]);
	nknown = fl->n;

	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(dir)) && fl->n < MMFIX_MAX_FIXES) {
		if (!fix_name_valid(de->d_name) || fix_is_known(de->d_name) ||
		    !subdir_at(dirfd(dir), de->d_name))
			continue;
		strcpy(fl->name[fl->n++], de->d_name);
	}
	closedir(dir);
	if (fl->n > nknown)
		qsort(fl->name[nknown], fl->n - nknown, sizeof(fl->name[0]),
		      cmp_str);
	return 0;
}

/*
 * Every fix name this mmfixctl knows (MMFIX_FIX_LIST), then the loaded
 * module's others: the names a module may accept in fixes=.
 */
void fix_list_known(struct fix_list *fl)
{
	struct fix_list loaded;
	unsigned int i;

	fl->n = 0;
	for (i = 0; i < ARRAY_SIZE(known_fixes); i++)
		strcpy(fl->name[fl->n++], known_fixes[i]);
	fix_list_read(&loaded);
	for (i = 0; i < loaded.n && fl->n < MMFIX_MAX_FIXES; i++)
		if (!fix_is_known(loaded.name[i]))
			strcpy(fl->name[fl->n++], loaded.name[i]);
}

/*
 * Whether fix @name applies but the loaded module leaves it out because
 * it was loaded with fixes= without it (its reason says so), rather
 * than because another livepatch owns a function or the fix is not
 * verified on this build.
 */
bool fix_left_out_by_fixes(const char *name)
{
	char reason[SYSFS_READ_MAX];

	return sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/patched", name) == 0 &&
	       sysfs_attr_bool(MMFIX_SYSFS_DIR "/fixes/%s/applicable", name) == 1 &&
	       sysfs_attr_str(reason, sizeof(reason),
			      MMFIX_SYSFS_DIR "/fixes/%s/reason", name) &&
	       !strcmp(reason, MMFIX_NOT_PATCHED_REASON);
}

int fix_list_find(const struct fix_list *fl, const char *name)
{
	unsigned int i;

	for (i = 0; i < fl->n; i++)
		if (!strcmp(fl->name[i], name))
			return (int)i;
	return -1;
}

void fix_list_join(const struct fix_list *fl, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int i;
	int n;

	snprintf(buf, size, "(none)");
	for (i = 0; i < fl->n && len < size; i++) {
		n = snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
			     fl->name[i]);
		if (n < 0)
			break;
		len += n;
	}
}

/* The files every fix has; any other integer file is a counter. */
static bool fix_attr(const char *name)
{
	return !strcmp(name, "enabled") || !strcmp(name, "applicable") ||
	       !strcmp(name, "patched") || !strcmp(name, "reason") ||
	       !strcmp(name, "recommended") || !strcmp(name, "functions");
}

static bool counter_name_valid(const char *name)
{
	size_t len = strlen(name);

	return len && len <= COUNTER_NAME_MAX && name[0] != '.' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == len;
}

static int cmp_counter(const void *a, const void *b)
{
	const struct counter *ca = a, *cb = b;

	return strcmp(ca->name, cb->name);
}

unsigned int counters_read(const char *fix, struct counter *c,
			   unsigned int max)
{
	char path[PATH_MAX];
	unsigned int n = 0;
	struct dirent *de;
	DIR *dir;

	if (!fix_name_valid(fix) ||
	    sysfs_path(path, sizeof(path), MMFIX_SYSFS_DIR "/fixes/%s", fix))
		return 0;
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < max) {
		if (!counter_name_valid(de->d_name) || fix_attr(de->d_name))
			continue;
		/* Skips all but regular files (not symlinks) holding a u64. */
		if (read_u64_at(dirfd(dir), de->d_name, O_NOFOLLOW, &c[n].val))
			continue;
		strcpy(c[n].name, de->d_name);
		n++;
	}
	closedir(dir);
	qsort(c, n, sizeof(*c), cmp_counter);
	return n;
}
