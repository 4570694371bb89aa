// SPDX-License-Identifier: GPL-2.0
/*
 * sysfuzz - random writes to mmfix's sysfs files and its module parameter
 * (t-74-fuzz).  Deterministic: the seed is printed and can be given back.
 *
 *   sysfuzz write [-n N] [-s SEED] SPEC:FILE...
 *	N write(2)s of random payloads to each FILE (fresh fd each time).
 *	SPEC says which payloads the ABI documents as valid:
 *	  01   "0" or "1", one trailing newline allowed; the file reads
 *	       back "0\n" or "1\n" (a fix or stats switch)
 *	  01x  the same, but "1" fails with EOPNOTSUPP (a fix that does not
 *	       apply to this kernel)
 *	  1w   "1" (one trailing newline allowed); write-only (stats/reset)
 *	A valid payload must be accepted whole and read back as written;
 *	anything else must fail with EINVAL and leave the value read back
 *	unchanged.  An empty write never reaches the kernel and must change
 *	nothing.  Each file gets its first value back at the end.
 *
 *   sysfuzz param [-n N] [-s SEED] [-p fixes] -k MODULE.ko -f FIX[,FIX...] [-a FIX,...]
 *		[-r FIX,...]
 *	N init_module(2) calls with "enable=PAYLOAD" (-p fixes:
 *	"fixes=PAYLOAD", which must name at least one fix that applies, and
 *	loads with exactly the named applicable fixes patched, all off).  FIX: every fix the
 *	module has; -a: those that apply to this kernel; -r: those whose
 *	recommended file reads 1 here (at least one; without -r the keyword
 *	"recommended" is never sent), which the list item "recommended"
 *	stands for (in enable= and fixes=, alone or with names).  The outcome is
 *	predicted from the kernel's parameter parsing (words split at
 *	whitespace, unknown words ignored, see predict_load()) and mmfix's
 *	enable= (a comma list of known fix names, empty items allowed):
 *	refused with EINVAL, or loaded with exactly the named applicable
 *	fixes on.  With a double quote in it (not modelled) a payload must
 *	either fail with EINVAL or load with only named fixes on.  A refused
 *	load must leave no /sys/module/mmfix, /sys/kernel/mmfix or
 *	/sys/kernel/livepatch/mmfix behind; an accepted one is unloaded
 *	again (livepatch disabled, transition waited for, delete_module).
 *
 * Output: "seed=S" first, one "FAIL ..." line per problem (the first 10,
 * payload in hex), then per file "file=F writes=N accepted=A rejected=R
 * empty=Z bad=B" or "param writes=N accepted=A rejected=R bad=B".
 * Exit status 1 if anything was bad, 2 on a setup failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
#define MAX_PAYLOAD	70000
#define MAX_FIXES	32
#define REPORT_MAX	10
#define KLP_DIR		"/sys/kernel/livepatch/mmfix"
#define MOD_DIR		"/sys/module/mmfix"
#define MMFIX_DIR	"/sys/kernel/mmfix"

static uint64_t rng_state;
static long nbad;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static long rnd_below(long n)
{
	return n > 0 ? (long)(rnd() % (uint64_t)n) : 0;
}

static void die(const char *what)
{
	fprintf(stderr, "sysfuzz: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void hex(const char *p, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && i < 24 && o + 3 < size; i++)
		o += snprintf(out + o, size - o, "%02x", (unsigned char)p[i]);
	if (i < len && o + 4 < size)
		snprintf(out + o, size - o, "...");
}

static void bad(const char *what, const char *p, size_t len, const char *fmt, ...)
{
	char h[80], msg[256];
	va_list ap;

	if (nbad++ >= REPORT_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hex(p, len, h, sizeof(h));
	printf("FAIL %s: payload len=%zu hex=%s: %s\n", what, len, h, msg);
}

/* payloads *************************************************************/

struct gen {
	const char *const *valid;	/* documented values */
	int nvalid;
	bool no_nul;			/* module parameters are C strings */
	bool rare_valid;		/* fewer empty and valid payloads */
};

struct bytes {
	const char *s;
	size_t len;
};
#define B(str)	{ str, sizeof(str) - 1 }

static const struct bytes near[] = {
	B("01"), B("10"), B("00"), B("11"), B("2"), B("+1"), B("-0"), B("-1"),
	B("0x1"), B("1.0"), B(" 1"), B("1 "), B("\t0"), B("0\t"), B("1\n\n"),
	B("\n1"), B("\n"), B("on"), B("off"), B("yes"), B("no"), B("true"),
	B("y"), B("Y"), B("1\r\n"), B("0\0"), B("1\0\n"), B("\xef\xbb\xbf" "1"),
	B("\xef\xbc\x91"), B("\"1\""), B("1,0"), B("populate"), B("drain"),
	B(","), B(",,"), B("enable=1"), B("\\1"), B("%s%n"),
};
static const char spaces[] = " \t\n\r\v\f";

/* A random payload into buf (at least MAX_PAYLOAD + 1 bytes); its length. */
static size_t gen_payload(const struct gen *g, char *buf)
{
	long cls = rnd_below(10);
	size_t len = 0, n, i;
	const char *v;

	/* a module load that succeeds costs seconds: make those rarer */
	if (g->rare_valid && cls <= 1 && rnd_below(4))
		cls = 2 + rnd_below(8);
	switch (cls) {
	case 0:		/* empty */
		break;
	case 1:		/* a documented value, sometimes a prefix of it */
		v = g->valid[rnd_below(g->nvalid)];
		len = strlen(v);
		if (len > 1 && rnd_below(4) == 0)
			len = 1 + rnd_below(len - 1);	/* partial */
		memcpy(buf, v, len);
		break;
	case 2:		/* near misses */
		i = rnd_below(sizeof(near) / sizeof(near[0]));
		len = near[i].len;
		memcpy(buf, near[i].s, len);
		break;
	case 3:		/* a documented value with something added */
		v = g->valid[rnd_below(g->nvalid)];
		len = strlen(v);
		memcpy(buf, v, len);
		n = 1 + rnd_below(3);
		for (i = 0; i < n; i++)
			buf[len++] = "x,\n \t0\0"[rnd_below(7)];
		if (rnd_below(2)) {	/* or in front */
			memmove(buf + 1, buf, len);
			buf[0] = spaces[rnd_below(6)];
			len++;
		}
		break;
	case 4:		/* signed decimal */
		len = sprintf(buf, "%lld", (long long)rnd() >> rnd_below(64));
		break;
	case 5:		/* whitespace only */
		len = 1 + rnd_below(16);
		for (i = 0; i < len; i++)
			buf[i] = spaces[rnd_below(6)];
		break;
	case 6:
	case 7:		/* binary */
		len = 1 + rnd_below(64);
		for (i = 0; i < len; i++)
			buf[i] = (char)rnd();
		break;
	case 8:		/* huge, more than a page */
		len = PAGE + 1 + rnd_below(MAX_PAYLOAD - PAGE);
		v = g->valid[rnd_below(g->nvalid)];
		n = strlen(v);
		switch (rnd_below(3)) {
		case 0:		/* a valid value, then padding */
			memcpy(buf, v, n);
			memset(buf + n, rnd_below(2) ? '\n' : ' ', len - n);
			break;
		case 1:		/* valid values repeated */
			for (i = 0; i < len; i++)
				buf[i] = n ? v[i % n] : '1';
			break;
		default:
			for (i = 0; i < len; i++)
				buf[i] = (char)rnd();
		}
		break;
	default:	/* exactly a page, or one more */
		len = PAGE + rnd_below(2);
		memset(buf, '1', len);
		break;
	}
	if (g->no_nul)
		for (i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = '\x01';
	buf[len] = '\0';
	return len;
}

/* sysfs writes *********************************************************/

static const char *const valid01[] = { "0", "1", "0\n", "1\n" };
static const char *const valid1[] = { "1", "1\n" };

static int read_state(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, size - 1);
	close(fd);
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return 0;
}

/* 1 if p[0..len) is value v with at most one trailing newline added. */
static bool is_value(const char *p, size_t len, const char *v)
{
	size_t n = strlen(v);

	if (len && p[len - 1] == '\n')
		len--;
	return len == n && !memcmp(p, v, n);
}

static int fuzz_file(const char *spec, const char *path, long n)
{
	bool w_only = !strcmp(spec, "1w"), na = !strcmp(spec, "01x");
	struct gen g = {
		.valid = w_only ? valid1 : valid01,
		.nvalid = w_only ? 2 : 4,
	};
	static char buf[MAX_PAYLOAD + 2];
	char before[64] = "", after[64] = "", first[64] = "";
	long i, acc = 0, rej = 0, empty = 0, bad0 = nbad;
	bool ok_value;
	size_t len;
	ssize_t r;
	int fd, err;

	if (strcmp(spec, "01") && !na && !w_only) {
		fprintf(stderr, "sysfuzz: unknown spec '%s'\n", spec);
		return 2;
	}
	if (!w_only && read_state(path, first, sizeof(first)))
		die(path);
	for (i = 0; i < n; i++) {
		len = gen_payload(&g, buf);
		if (!w_only && read_state(path, before, sizeof(before)))
			die(path);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			die(path);
		r = write(fd, buf, len);
		err = errno;
		close(fd);
		if (!w_only && read_state(path, after, sizeof(after)))
			die(path);

		ok_value = w_only ? is_value(buf, len, "1") :
			   is_value(buf, len, "0") || is_value(buf, len, "1");
		if (len == 0) {
			empty++;
			if (r != 0)
				bad(path, buf, len, "empty write returned %zd", r);
			else if (strcmp(before, after))
				bad(path, buf, len, "empty write changed the value");
			continue;
		}
		if (r == (ssize_t)len) {
			acc++;
			if (!ok_value)
				bad(path, buf, len, "accepted an undocumented value");
			else if (!w_only && (after[0] != buf[0] || after[1] != '\n' || after[2]))
				bad(path, buf, len, "accepted, but reads back '%.8s'", after);
			else if (na && buf[0] == '1')
				bad(path, buf, len, "switched on a fix that does not apply");
			continue;
		}
		if (r >= 0) {
			bad(path, buf, len, "partial write: %zd of %zu bytes", r, len);
			continue;
		}
		rej++;
		if (ok_value && !(na && buf[0] == '1' && err == EOPNOTSUPP))
			bad(path, buf, len, "refused a documented value: %s", strerror(err));
		else if (!ok_value && err != EINVAL)
			bad(path, buf, len, "refused with %s, not EINVAL", strerror(err));
		if (!w_only && strcmp(before, after))
			bad(path, buf, len, "refused, but the value changed from '%.8s' to '%.8s'",
			    before, after);
	}
	if (!w_only) {	/* put the first value back */
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, first, strlen(first)) < 0)
			bad(path, first, strlen(first), "cannot restore: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	printf("file=%s writes=%ld accepted=%ld rejected=%ld empty=%ld bad=%ld\n",
	       path, n, acc, rej, empty, nbad - bad0);
	return 0;
}

/* module parameter *****************************************************/

static char *fixes[MAX_FIXES];
static bool applies[MAX_FIXES];
static bool recommends[MAX_FIXES];
static int nfixes;
/* -r given with a fix: "recommended" is a valid list item */
static bool have_recommended;
#define RECOMMENDED	"recommended"
/* the parameter fuzzed: enable= or fixes= */
static const char *param = "enable";

static int fix_index(const char *name, size_t len)
{
	int i;

	for (i = 0; i < nfixes; i++)
		if (strlen(fixes[i]) == len && !memcmp(fixes[i], name, len))
			return i;
	return -1;
}

static void split_recommended(char *list)
{
	char *tok;
	int i;

	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		i = fix_index(tok, strlen(tok));
		if (i < 0 || !applies[i]) {
			fprintf(stderr, "sysfuzz: -r %s: not in -a\n", tok);
			exit(2);
		}
		recommends[i] = true;
		have_recommended = true;
	}
}

static void split_fixes(char *list, bool applicable)
{
	char *tok;
	int i;

	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		i = fix_index(tok, strlen(tok));
		if (i < 0 && !applicable && nfixes < MAX_FIXES) {
			fixes[nfixes++] = tok;
		} else if (i >= 0 && applicable) {
			applies[i] = true;
		} else if (applicable) {
			fprintf(stderr, "sysfuzz: -a %s: not in -f\n", tok);
			exit(2);
		}
	}
}

/* The kernel's isspace() (lib/ctype.c): also 0xa0. */
static bool kspace(unsigned char c)
{
	return (c >= 9 && c <= 13) || c == ' ' || c == 0xa0;
}

/*
 * What mmfix's enable= or fixes= does with value p[0..len): -1 refuse,
 * else the bit mask of the fixes it names, "recommended" naming the
 * recommended ones (strim()med first; empty items are skipped; fixes=
 * refuses an empty list).
 */
static long expected_mask(const char *p, size_t len)
{
	size_t start = 0, i, rl = strlen(RECOMMENDED);
	long mask = 0;
	int f;

	while (len && kspace(*p)) {
		p++;
		len--;
	}
	while (len && kspace(p[len - 1]))
		len--;
	for (i = 0; i <= len; i++) {
		if (i < len && p[i] != ',')
			continue;
		if (i > start && have_recommended && i - start == rl &&
		    !memcmp(p + start, RECOMMENDED, rl)) {
			for (f = 0; f < nfixes; f++)
				if (recommends[f])
					mask |= 1L << f;
		} else if (i > start) {
			f = fix_index(p + start, i - start);
			if (f < 0)
				return -1;
			mask |= 1L << f;
		}
		start = i + 1;
	}
	if (!mask && !strcmp(param, "fixes"))
		return -1;
	return mask;
}

/*
 * The kernel's parse_args() over "enable=" PAYLOAD (kernel/params.c,
 * lib/cmdline.c next_arg()): words split at whitespace; for each
 * "enable=VALUE" (the first one is ours) the value must be accepted;
 * a bare "enable" has no value and is refused; other words are unknown
 * parameters, ignored; "--" ends the parameters.  -1: the load must be
 * refused, else the mask the last enable= leaves; -2 when the payload
 * has a double quote (the kernel's quoting is not modelled).
 */
static long predict_load(const char *p, size_t len)
{
	static char args[MAX_PAYLOAD + 16];
	size_t n, i = 0, w, eq, plen = strlen(param);
	long mask = 0, applies_mask = 0;
	int f;

	if (memchr(p, '"', len))
		return -2;
	n = snprintf(args, sizeof(args), "%s=", param);
	memcpy(args + n, p, len);
	n += len;
	while (i < n) {
		while (i < n && kspace(args[i]))
			i++;
		if (i == n)
			break;
		for (w = i; w < n && !kspace(args[w]); w++)
			;
		if (w - i == 2 && !memcmp(args + i, "--", 2))
			break;
		for (eq = i; eq < w && args[eq] != '='; eq++)
			;
		if (eq - i == plen && !memcmp(args + i, param, plen)) {
			if (eq == w)
				return -1;
			mask = expected_mask(args + eq + 1, w - eq - 1);
			if (mask < 0)
				return -1;
		}
		i = w;
	}
	/* fixes=: refused unless it names a fix that applies */
	for (f = 0; f < nfixes; f++)
		if (applies[f])
			applies_mask |= 1L << f;
	if (!strcmp(param, "fixes") && !(mask & applies_mask))
		return -1;
	return mask;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static bool file_is(const char *path, const char *val)
{
	char buf[64];

	return !read_state(path, buf, sizeof(buf)) && !strcmp(buf, val);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to ms for cond(path, val) (val NULL: path gone). */
static bool wait_for(const char *path, const char *val, unsigned int ms)
{
	uint64_t end = now_ms() + ms;

	for (;;) {
		if (val ? file_is(path, val) : !exists(path))
			return true;
		if (now_ms() >= end)
			return false;
		usleep(20000);
	}
}

static int module_unload(void)
{
	uint64_t end;
	int fd;

	if (!wait_for(KLP_DIR "/transition", "0\n", 60000))
		return -1;
	fd = open(KLP_DIR "/enabled", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0\n", 2) != 2)
		return -2;
	close(fd);
	if (!wait_for(KLP_DIR, NULL, 60000))
		return -3;
	end = now_ms() + 10000;
	while (syscall(SYS_delete_module, "mmfix", O_NONBLOCK)) {
		if ((errno != EAGAIN && errno != EBUSY) || now_ms() >= end)
			return -4;
		usleep(20000);
	}
	return 0;
}

static int fuzz_param(const char *ko, long n)
{
	static char buf[MAX_PAYLOAD + 2], args[MAX_PAYLOAD + 16];
	char path[128], names[512] = "", rec_first[64];
	long i, acc = 0, rej = 0, mask, bad0 = nbad;
	struct gen g = { .no_nul = true, .rare_valid = true };
	const char *param_file = strcmp(param, "fixes") ? "enabled" : "patched";
	const char **valid;
	size_t len;
	bool on;
	void *image;
	struct stat st;
	int fd, f, ret, err;

	if (!nfixes) {
		fprintf(stderr, "sysfuzz: param needs -f FIX,...\n");
		return 2;
	}
	/*
	 * documented values: each fix, all of them, and the empty list;
	 * with -r also "recommended" alone and with the first fix
	 */
	valid = calloc(nfixes + 4, sizeof(*valid));
	for (f = 0; f < nfixes; f++) {
		valid[f] = fixes[f];
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "%s%s", f ? "," : "", fixes[f]);
	}
	valid[nfixes] = names;
	valid[nfixes + 1] = "";
	g.valid = valid;
	g.nvalid = nfixes + 2;
	if (have_recommended) {
		snprintf(rec_first, sizeof(rec_first), "%s,%s", RECOMMENDED, fixes[0]);
		valid[g.nvalid++] = RECOMMENDED;
		valid[g.nvalid++] = rec_first;
	}

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		die(ko);
	image = malloc(st.st_size);
	if (!image || read(fd, image, st.st_size) != st.st_size)
		die(ko);
	close(fd);
	if (exists(MOD_DIR)) {
		fprintf(stderr, "sysfuzz: mmfix is already loaded\n");
		return 2;
	}

	for (i = 0; i < n; i++) {
		/*
		 * A load that succeeds costs a patch transition and an unload
		 * (seconds under TCG): keep a quarter of the enable= payloads
		 * that will be accepted (few fixes= ones are).
		 */
		do {
			len = gen_payload(&g, buf);
			mask = predict_load(buf, len);
		} while (mask >= 0 && param_file[0] == 'e' && rnd_below(4));
		snprintf(args, sizeof(args), "%s=%s", param, buf);

		ret = syscall(SYS_init_module, image, (unsigned long)st.st_size, args);
		err = errno;
		if (ret) {
			rej++;
			if (err != EINVAL)
				bad("param", buf, len, "refused with %s, not EINVAL",
				    strerror(err));
			else if (mask >= 0)
				bad("param", buf, len, "refused a documented value");
			if (exists(MOD_DIR) || exists(MMFIX_DIR) || exists(KLP_DIR)) {
				bad("param", buf, len, "refused load left sysfs entries behind");
				return 1;
			}
			continue;
		}
		acc++;
		if (mask == -1)
			bad("param", buf, len, "loaded with an undocumented value");
		if (!wait_for(KLP_DIR "/transition", "0\n", 60000))
			bad("param", buf, len, "patch transition did not finish");
		/* "on": enabled (enable=) or patched (fixes=) reads 1 */
		for (f = 0; f < nfixes; f++) {
			snprintf(path, sizeof(path), MMFIX_DIR "/fixes/%s/%s",
				 fixes[f], param_file);
			on = file_is(path, "1\n");
			if (mask >= 0 && on != (applies[f] && (mask >> f & 1)))
				bad("param", buf, len, "fix %s %s is %d",
				    fixes[f], param_file, on);
			if (mask == -2 && on && !memmem(buf, len, fixes[f],
						       strlen(fixes[f])) &&
			    !(recommends[f] && memmem(buf, len, RECOMMENDED,
						      strlen(RECOMMENDED))))
				bad("param", buf, len, "fix %s %s but not named",
				    fixes[f], param_file);
			if (on && !applies[f])
				bad("param", buf, len, "fix %s does not apply but is %s",
				    fixes[f], param_file);
			snprintf(path, sizeof(path), MMFIX_DIR "/fixes/%s/enabled",
				 fixes[f]);
			if (param_file[0] == 'p' && file_is(path, "1\n"))
				bad("param", buf, len, "fix %s is on", fixes[f]);
		}
		ret = module_unload();
		if (ret) {
			bad("param", buf, len, "unload failed (step %d): %s", -ret,
			    strerror(errno));
			return 1;
		}
	}
	printf("param writes=%ld accepted=%ld rejected=%ld bad=%ld\n", n, acc,
	       rej, nbad - bad0);
	free(image);
	free(valid);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "", *ko = NULL;
	char *f_list = NULL, *a_list = NULL, *r_list = NULL;
	long n = 1000;
	uint64_t seed = 0;
	int c, ret = 0;

	optind = 2;
	while ((c = getopt(argc, argv, "n:s:k:f:a:p:r:")) != -1) {
		switch (c) {
		case 'n':
			n = atol(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			ko = optarg;
			break;
		case 'f':
			f_list = optarg;
			break;
		case 'a':
			a_list = optarg;
			break;
		case 'r':
			r_list = optarg;
			break;
		case 'p':
			if (strcmp(optarg, "enable") && strcmp(optarg, "fixes")) {
				fprintf(stderr, "sysfuzz: -p enable or fixes\n");
				return 2;
			}
			param = optarg;
			break;
		default: return 2;
		}
	}
	if (!seed)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	printf("seed=%llu\n", (unsigned long long)seed);
	fflush(stdout);
	rng_state = seed;

	if (!strcmp(cmd, "write") && optind < argc) {
		for (; optind < argc && !ret; optind++) {
			char *spec = argv[optind], *path = strchr(spec, ':');

			if (!path) {
				fprintf(stderr, "sysfuzz: '%s' is not SPEC:FILE\n", spec);
				return 2;
			}
			*path++ = '\0';
			ret = fuzz_file(spec, path, n);
		}
	} else if (!strcmp(cmd, "param") && ko) {
		if (f_list)
			split_fixes(f_list, false);
		if (a_list)
			split_fixes(a_list, true);
		if (r_list)
			split_recommended(r_list);
		ret = fuzz_param(ko, n);
	} else {
		fprintf(stderr, "usage: sysfuzz write [-n N] [-s SEED] SPEC:FILE...\n"
			"       sysfuzz param [-n N] [-s SEED] [-p fixes] -k MODULE.ko -f FIX,... [-a FIX,...] [-r FIX,...]\n");
		return 2;
	}
	if (ret)
		return ret;
	return nbad ? 1 : 0;
}
