// SPDX-License-Identifier: GPL-2.0
/*
 * mmfixctl check: what the running kernel's BTF says about the problems
 * mmfix deals with, and which mmfix fixes apply to it.  Works without the
 * module and without root: it reads /sys/kernel/btf/vmlinux (or --btf
 * FILE, raw BTF or an ELF file with a .BTF section) with libbpf.
 *
 *   mmfixctl check
 *   mmfixctl -j check --btf vmlinux-7.3 --release 7.3.4+deb13-amd64
 *
 * Evidence comes from two kinds of BTF facts: struct layouts (member
 * offsets, hence which 64-byte cacheline a member is on) and FUNC
 * entries, which pahole writes for functions that have an out-of-line
 * copy; a function the compiler inlined everywhere has none, and a
 * livepatch cannot replace it.  What BTF cannot show (whether a function
 * body still calls lru_add_drain(), say) comes from the kernel version,
 * as it does in the module (module/compat.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "mmfixctl.h"
#include "../include/mmfix_flavour.h"
#include "../include/mmfix_verified.h"

const char check_help[] =
	"Report, from the kernel's BTF (/sys/kernel/btf/vmlinux), whether it\n"
	"has the problems mmfix deals with, with the evidence (member offsets\n"
	"and cachelines, which functions are out of line), and which mmfix\n"
	"fixes apply to it.  Needs neither root nor the module.  Exits 10\n"
	"when nothing applies here: the kernel is not supported, or no fix\n"
	"applies to it.\n"
	"  --btf FILE      read FILE instead (raw BTF, or an ELF file such as\n"
	"                  a vmlinux with a .BTF section)\n"
	"  --release REL   judge the kernel release REL instead of uname -r\n";

#define CACHELINE	64	/* x86-64 L1_CACHE_BYTES */

/* The series the module carries code for, as (major, minor). */
#define CHECK_SERIES(a, b) { a, b },
static const struct { unsigned int major, minor; } known_series[] = {
	MMFIX_KERNEL_LIST(CHECK_SERIES)
};
#undef CHECK_SERIES

struct kernel {
	const char *release;
	unsigned int major, minor;
	bool parsed;		/* MAJOR.MINOR.PATCH at the start */
	bool supported;		/* Debian amd64 release of a known series */
	char series[16];
};

/* Where a struct member lives; off and size in bytes. */
struct member {
	bool found;
	uint32_t off, size, nelems;	/* nelems: array length, else 0 */
};

/*
 * Finds @name among the members of struct/union @id, looking into
 * anonymous struct and union members too.  @base: bit offset of @id.
 */
static bool member_find(const struct btf *btf, uint32_t id, const char *name,
			uint32_t base, struct member *m)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *mem;
	uint32_t i, bits;
	int tid;

	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return false;
	mem = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, mem++) {
		const char *mname = btf__name_by_offset(btf, mem->name_off);

		bits = base + btf_member_bit_offset(t, i);
		if (mname && *mname) {
			const struct btf_type *mt;
			long long size;

			if (strcmp(mname, name))
				continue;
			size = btf__resolve_size(btf, mem->type);
			tid = btf__resolve_type(btf, mem->type);
			mt = tid > 0 ? btf__type_by_id(btf, tid) : NULL;
			m->found = true;
			m->off = bits / 8;
			m->size = size > 0 ? (uint32_t)size : 0;
			m->nelems = mt && btf_is_array(mt) ? btf_array(mt)->nelems : 0;
			return true;
		}
		tid = btf__resolve_type(btf, mem->type);
		if (tid > 0 && member_find(btf, tid, name, bits, m))
			return true;
	}
	return false;
}

/* Looks up struct @sname and its member @mname; -1 no struct, 0/1 found. */
static int struct_member(const struct btf *btf, const char *sname,
			 const char *mname, struct member *m)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);

	memset(m, 0, sizeof(*m));
	if (id <= 0)
		return -1;
	return member_find(btf, id, mname, 0, m);
}

static bool func_out_of_line(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/* {"offset": N, "cacheline": N} or null; text "offset N, cacheline N". */
static void print_place(const char *key, const char *label,
			const struct member *m)
{
	uint64_t off = m->off, line = m->off / CACHELINE;
	char fmt[64];

	if (!m->found) {
		print_string(key, NULL, NULL);	/* null */
		print_text("  %-20s absent\n", label);
		return;
	}
	print_open_object(key);
	snprintf(fmt, sizeof(fmt), "  %-20s offset %%s", label);
	print_u64("offset", fmt, &off);
	print_u64("cacheline", ", cacheline %s\n", &line);
	print_close_object();
}

/*
 * Seed 004: a change in linux-next moved mem_cgroup's vmstats_percpu
 * pointer, read on every memcg stat update, onto the cacheline of the
 * memory_events[] counters, which memory.events updates write: stress-ng
 * --mremap lost 36%.  Affected when the pointer shares a line with any
 * element of the array.
 */
static void check_memcg(const struct btf *btf)
{
	struct member pcpu, events;
	uint64_t first = 0, last = 0, off, size, nelems;
	int affected = -1, have;
	char fmt[48];

	have = struct_member(btf, "mem_cgroup", "vmstats_percpu", &pcpu);
	if (have >= 0)
		struct_member(btf, "mem_cgroup", "memory_events", &events);
	else
		memset(&events, 0, sizeof(events));
	if (pcpu.found && events.found && events.size) {
		first = events.off / CACHELINE;
		last = (events.off + events.size - 1) / CACHELINE;
		affected = pcpu.off / CACHELINE >= first &&
			   (pcpu.off + pcpu.size - 1) / CACHELINE <= last;
	}

	print_open_object(NULL);
	print_string("name", "issue %s: ", "memcg_vmstats_percpu");
	print_bool_words("affected", "%s\n", affected, "affected", "not affected",
			 "unknown (no struct mem_cgroup with these members)");
	print_string("description", "  %s\n",
		     "struct mem_cgroup's vmstats_percpu pointer on a memory_events[] cacheline (stress-ng --mremap -36%, linux-mm 2026-08)");
	print_string("struct", NULL, "mem_cgroup");
	print_place("vmstats_percpu", "vmstats_percpu:", &pcpu);
	if (!events.found) {
		print_string("memory_events", NULL, NULL);
		print_text("  %-20s absent\n", "memory_events[]:");
	} else {
		off = events.off;
		size = events.size;
		nelems = events.nelems;
		snprintf(fmt, sizeof(fmt), "  %-20s offset %%s",
			 "memory_events[]:");
		print_open_object("memory_events");
		print_u64("offset", fmt, &off);
		print_u64("size", ", size %s", &size);
		print_u64("elements", " (%s elements)", &nelems);
		print_u64("first_cacheline", ", cachelines %s", &first);
		print_u64("last_cacheline", "-%s\n", &last);
		print_close_object();
	}
	print_close_object();
}

/*
 * Seed 002 and anon_fault: 7.3 put __vm_anon_pgoff_hi next to vm_refcnt,
 * the counter every per-VMA-locked fault increments, so the anonymous
 * fault path loads a line other CPUs keep writing.
 */
static void check_vma(const struct btf *btf)
{
	struct member ref, hi;
	int affected = -1, have;

	have = struct_member(btf, "vm_area_struct", "vm_refcnt", &ref);
	if (have >= 0) {
		struct_member(btf, "vm_area_struct", "__vm_anon_pgoff_hi", &hi);
		affected = ref.found && hi.found &&
			   ref.off / CACHELINE == hi.off / CACHELINE;
	} else {
		memset(&hi, 0, sizeof(hi));
	}

	print_open_object(NULL);
	print_string("name", "issue %s: ", "vma_refcnt_cacheline");
	print_bool_words("affected", "%s\n", affected, "affected", "not affected",
			 "unknown (no struct vm_area_struct)");
	print_string("description", "  %s\n",
		     "anonymous faults read __vm_anon_pgoff_hi on the cacheline of vm_refcnt (linux-mm 2026-11, fix anon_fault)");
	print_string("struct", NULL, "vm_area_struct");
	print_place("vm_refcnt", "vm_refcnt:", &ref);
	print_place("vm_anon_pgoff_hi", "__vm_anon_pgoff_hi:", &hi);
	print_close_object();
}

/* The functions mmfix replaces or calls, or looks for. */
static const char *const check_funcs[] = {
	"populate_vma_page_range", "__get_user_pages",
	"folio_add_new_anon_rmap", "__vmf_anon_prepare",
	"unmap_region", "vms_complete_munmap_vmas", "free_pages_and_swap_cache",
	"khugepaged", "khugepaged_scan_mm_slot", "collapse_scan_mm_slot",
	"__khugepaged_exit",
};

static void print_funcs(const struct btf *btf)
{
	char fmt[48];
	size_t i;

	print_text("functions (out of line: BTF has a FUNC for it; a function\n"
		   "inlined everywhere cannot be livepatched):\n");
	print_open_object("functions");
	for (i = 0; i < ARRAY_SIZE(check_funcs); i++) {
		snprintf(fmt, sizeof(fmt), "  %-26s %%s\n", check_funcs[i]);
		print_bool_words(check_funcs[i], fmt,
				 func_out_of_line(btf, check_funcs[i]),
				 "out of line", "inlined or absent", "-");
	}
	print_close_object();
}

struct fix_rule {
	const char *name;
	/* Sets *why; returns whether the fix applies. */
	bool (*applies)(const struct btf *btf, const struct kernel *k,
			char *why, size_t size);
};

/* why "f() is out of line" / "f() is inlined ..." for the first missing. */
static bool need_funcs(const struct btf *btf, char *why, size_t size,
		       const char *const *funcs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!func_out_of_line(btf, funcs[i])) {
			snprintf(why, size, "%s() is inlined or absent: nothing to replace",
				 funcs[i]);
			return false;
		}
	}
	return true;
}

static bool rule_populate_drain(const struct btf *btf, const struct kernel *k,
				char *why, size_t size)
{
	static const char *const f[] = { "populate_vma_page_range",
					 "__get_user_pages" };

	(void)k;
	if (!need_funcs(btf, why, size, f, ARRAY_SIZE(f)))
		return false;
	snprintf(why, size, "populate_vma_page_range() is out of line");
	return true;
}

static bool rule_anon_fault(const struct btf *btf, const struct kernel *k,
			    char *why, size_t size)
{
	static const char *const f[] = { "folio_add_new_anon_rmap" };
	struct member ref, hi;

	(void)k;
	struct_member(btf, "vm_area_struct", "vm_refcnt", &ref);
	struct_member(btf, "vm_area_struct", "__vm_anon_pgoff_hi", &hi);
	if (!ref.found || !hi.found || ref.off / CACHELINE != hi.off / CACHELINE) {
		snprintf(why, size, "no __vm_anon_pgoff_hi on vm_refcnt's cacheline");
		return false;
	}
	if (!need_funcs(btf, why, size, f, ARRAY_SIZE(f)))
		return false;
	snprintf(why, size, "__vm_anon_pgoff_hi shares vm_refcnt's cacheline; folio_add_new_anon_rmap() is out of line");
	return true;
}

static bool rule_unmap_drain(const struct btf *btf, const struct kernel *k,
			     char *why, size_t size)
{
	static const char *const f61[] = { "unmap_region",
					   "free_pages_and_swap_cache" };
	static const char *const f612[] = { "vms_complete_munmap_vmas",
					    "vms_clean_up_area",
					    "free_pages_and_swap_cache" };

	/* BTF cannot show a call; upstream 1aa43598c03b (6.14) removed them. */
	if (k->major > 6 || (k->major == 6 && k->minor >= 14)) {
		snprintf(why, size, "kernel %u.%u (6.14 or later) no longer drains the LRU batches on munmap",
			 k->major, k->minor);
		return false;
	}
	if (k->major == 6 && k->minor < 12) {
		if (!need_funcs(btf, why, size, f61, ARRAY_SIZE(f61)))
			return false;
		snprintf(why, size, "kernel %u.%u drains on munmap; unmap_region() and free_pages_and_swap_cache() are out of line",
			 k->major, k->minor);
		return true;
	}
	if (!need_funcs(btf, why, size, f612, ARRAY_SIZE(f612)))
		return false;
	snprintf(why, size, "kernel %u.%u drains on munmap; vms_complete_munmap_vmas(), vms_clean_up_area() and free_pages_and_swap_cache() are out of line",
		 k->major, k->minor);
	return true;
}

static bool rule_lru_add_free_dead(const struct btf *btf,
				   const struct kernel *k, char *why,
				   size_t size)
{
	static const char *const f[] = { "folio_batch_move_lru" };

	/* BTF cannot show it either: 7.2's lru_add moves free dead folios. */
	if (k->major > 7 || (k->major == 7 && k->minor >= 2)) {
		snprintf(why, size, "kernel %u.%u (7.2 or later) frees dead folios of an lru_add batch itself",
			 k->major, k->minor);
		return false;
	}
	if (!need_funcs(btf, why, size, f, ARRAY_SIZE(f)))
		return false;
	snprintf(why, size, "kernel %u.%u puts dead folios of an lru_add batch on the LRU; folio_batch_move_lru() is out of line",
		 k->major, k->minor);
	return true;
}

static bool rule_khugepaged_scan(const struct btf *btf, const struct kernel *k,
				 char *why, size_t size)
{
	static const char *const f[] = { "khugepaged", "__khugepaged_exit" };
	const char *scan = k->major >= 7 ? "collapse_scan_mm_slot" :
					   "khugepaged_scan_mm_slot";

	if (!need_funcs(btf, why, size, f, ARRAY_SIZE(f)))
		return false;
	snprintf(why, size, "khugepaged() is out of line; %s() is %s",
		 scan, func_out_of_line(btf, scan) ? "out of line too" :
		 "inlined into it, so khugepaged() is what mmfix replaces");
	return true;
}

static const struct fix_rule fix_rules[] = {
	{ "populate_drain",	rule_populate_drain },
	{ "anon_fault",		rule_anon_fault },
	{ "unmap_drain",	rule_unmap_drain },
	{ "lru_add_free_dead",	rule_lru_add_free_dead },
	{ "khugepaged_scan",	rule_khugepaged_scan },
};

#define CHECK_FIX_NAME(id, name) name,
static const char *const abi_fixes[] = { MMFIX_FIX_LIST(CHECK_FIX_NAME) };
#undef CHECK_FIX_NAME

/*
 * The fixes not verified on the running build (verified_builds[].without):
 * they apply, but their copied code differs there, so the module does
 * not patch them.
 */
static const char *left_out = "";

static bool is_left_out(const char *fix)
{
	const char *w = left_out;
	size_t len = strlen(fix);

	while (*w) {
		w += strspn(w, " ");
		if (!strncmp(w, fix, len) && (!w[len] || w[len] == ' '))
			return true;
		w += strcspn(w, " ");
	}
	return false;
}

/* Prints every fix; returns how many apply or may (unknown) apply. */
static unsigned int print_fixes(const struct btf *btf, const struct kernel *k)
{
	unsigned int napply = 0;
	char why[256];
	size_t i, r;
	int applies;

	print_open_array("fixes");
	for (i = 0; i < ARRAY_SIZE(abi_fixes); i++) {
		for (r = 0; r < ARRAY_SIZE(fix_rules); r++)
			if (!strcmp(fix_rules[r].name, abi_fixes[i]))
				break;
		if (!k->supported) {
			applies = 0;
			snprintf(why, sizeof(why), "mmfix does not support kernel %s",
				 k->release);
		} else if (r == ARRAY_SIZE(fix_rules)) {
			applies = -1;
			snprintf(why, sizeof(why), "mmfixctl %s has no rule for this fix",
				 MMFIX_VERSION);
		} else {
			applies = fix_rules[r].applies(btf, k, why, sizeof(why));
			if (applies == 1 && is_left_out(abi_fixes[i]))
				snprintf(why, sizeof(why), "%s", MMFIX_UNVERIFIED_REASON);
		}
		napply += applies != 0;
		print_open_object(NULL);
		print_string("name", "fix %s: ", abi_fixes[i]);
		print_bool_words("applicable", "%s\n", applies, "applies",
				 "does not apply", "unknown");
		print_string("reason", "  %s\n", why);
		print_close_object();
	}
	print_close_array();
	return napply;
}

/*
 * "-57-amd64" or "+deb13-cloud-amd64": the ABI in digits, then a flavour
 * mmfix supports (include/mmfix_flavour.h, as the module and dkms.conf).
 */
static bool debian_amd64_tail(const char *p)
{
	const struct mmfix_flavour *f;

	if (!strncmp(p, "+deb", 4))
		p += 4;
	else if (*p == '-')
		p++;
	else
		return false;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '-')
		return false;
	f = mmfix_flavour_named(p + 1);
	return f && f->supported;
}

/*
 * A Debian amd64 release of a series in MMFIX_KERNEL_LIST, as dkms.conf's
 * BUILD_EXCLUSIVE_KERNEL: MAJOR.MINOR.PATCH, then -ABI-FLAVOUR or
 * +debN-FLAVOUR of a supported flavour (amd64, cloud-amd64).
 */
static void kernel_parse(struct kernel *k, const char *release)
{
	unsigned int patch;
	size_t i;
	int n = 0;

	memset(k, 0, sizeof(*k));
	k->release = release;
	if (sscanf(release, "%u.%u.%u%n", &k->major, &k->minor, &patch, &n) != 3 ||
	    release[0] < '0' || release[0] > '9')
		return;
	k->parsed = true;
	snprintf(k->series, sizeof(k->series), "%u.%u", k->major, k->minor);
	if (!debian_amd64_tail(release + n))
		return;
	for (i = 0; i < ARRAY_SIZE(known_series); i++)
		if (known_series[i].major == k->major &&
		    known_series[i].minor == k->minor)
			k->supported = true;
}

/* "6.1, 6.12, 7.2 and 7.3": the series of MMFIX_KERNEL_LIST */
static void series_list(char *buf, size_t size)
{
	size_t i, len = 0, n = ARRAY_SIZE(known_series);

	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%u.%u",
				!i ? "" : i == n - 1 ? " and " : ", ",
				known_series[i].major, known_series[i].minor);
}

bool kernel_supported(const char *release, char *why, size_t size)
{
	const struct mmfix_flavour *f = mmfix_flavour_of(release);
	bool known = false;
	char list[128];
	struct kernel k;
	size_t i;

	kernel_parse(&k, release);
	if (k.supported)
		return true;
	for (i = 0; i < ARRAY_SIZE(known_series); i++)
		known |= k.parsed && known_series[i].major == k.major &&
			 known_series[i].minor == k.minor;
	series_list(list, sizeof(list));
	if (!known && k.parsed)
		snprintf(why, size, "kernel %s: series %s is not supported by mmfix; it supports Debian amd64 %s",
			 release, k.series, list);
	else if (!known)
		snprintf(why, size, "kernel %s is not supported by mmfix; it supports Debian amd64 %s",
			 release, list);
	else if (f && !f->supported)
		snprintf(why, size, "kernel %s: the %s flavour is not supported by mmfix (%s)",
			 release, f->suffix, f->why);
	else
		snprintf(why, size, "kernel %s is not a Debian amd64 build, which mmfix does not support; it supports Debian amd64 %s",
			 release, list);
	return false;
}

#define CHECK_VERIFIED(s, r, v, w) { s, r, v, w },
static const struct {
	const char *series, *release, *version, *without;
} verified_builds[] = {
	MMFIX_VERIFIED_LIST(CHECK_VERIFIED)
};
#undef CHECK_VERIFIED

/*
 * The Debian package version of the running kernel: the word after
 * "Debian " in /proc/version, e.g. "6.1.192-3"; NULL if there is none.
 */
const char *proc_debian_version(char *buf, size_t size)
{
	char line[1024], path[PATH_MAX + 16], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/version", proc_root);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p)
		return NULL;
	p = strstr(line, " Debian ");
	if (!p)
		return NULL;
	p += strlen(" Debian ");
	n = strcspn(p, " \n");
	if (!n || n >= size)
		return NULL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/*
 * Who verified build @release (Debian @version) for mmfix @mmfix_ver:
 * the shipped list (include/mmfix_verified.h, VERIFIED_SHIPPED), this
 * machine (VERIFIED_HERE: a line of /var/lib/mmfix/verified-builds,
 * which mmfix-verify-build writes, for that mmfix version; the DKMS build
 * compiles those into the module), or nobody (VERIFIED_NONE).
 * $MMFIXCTL_LOCAL_LIST stands in for the local list (tests only).
 */
int build_verified_by(const char *release, const char *version,
		      const char *mmfix_ver, struct verified_by *vb)
{
	char line[1024], *f[9], *save = NULL, *p;
	const char *path = getenv("MMFIXCTL_LOCAL_LIST");
	size_t i;
	int n;
	FILE *file;

	memset(vb, 0, sizeof(*vb));
	vb->by = VERIFIED_NONE;
	if (!release || !version)
		return vb->by;
	for (i = 0; i < ARRAY_SIZE(verified_builds); i++)
		if (!strcmp(verified_builds[i].release, release) &&
		    !strcmp(verified_builds[i].version, version)) {
			snprintf(vb->without, sizeof(vb->without), "%s",
				 verified_builds[i].without);
			return vb->by = VERIFIED_SHIPPED;
		}
	file = fopen(path && *path ? path : MMFIX_LOCAL_LIST, "r");
	if (!file)
		return vb->by;
	while (fgets(line, sizeof(line), file)) {
		line[strcspn(line, "\n")] = '\0';
		for (n = 0, p = strtok_r(line, "\t", &save); p && n < 9;
		     p = strtok_r(NULL, "\t", &save))
			f[n++] = p;
		/* build SERIES VERSION RELEASE WITHOUT DATE SOURCE MMFIX */
		if (n != 8 || strcmp(f[0], "build") || strcmp(f[2], version) ||
		    strcmp(f[3], release) || (mmfix_ver && strcmp(f[7], mmfix_ver)))
			continue;
		vb->by = VERIFIED_HERE;
		snprintf(vb->date, sizeof(vb->date), "%s", f[5]);
		snprintf(vb->source, sizeof(vb->source), "%s", f[6]);
		snprintf(vb->without, sizeof(vb->without), "%s",
			 strcmp(f[4], "-") ? f[4] : "");
		for (p = vb->without; *p; p++)
			if (*p == ',')
				*p = ' ';
	}
	fclose(file);
	return vb->by;
}

/* "verified (shipped list)", "verified here on DATE from SOURCE" */
const char *verified_by_words(const struct verified_by *vb, char *buf,
			      size_t size)
{
	if (vb->by == VERIFIED_SHIPPED)
		snprintf(buf, size, "verified (shipped list)");
	else if (vb->by == VERIFIED_HERE)
		snprintf(buf, size, "verified here on %s from %s", vb->date,
			 vb->source);
	else
		snprintf(buf, size, "unverified");
	return buf;
}

/* JSON only: "verified_by" ("shipped", "here" or null), date, source */
void print_verified_by(const struct verified_by *vb)
{
	print_string("verified_by", NULL, vb->by == VERIFIED_SHIPPED ? "shipped" :
		     vb->by == VERIFIED_HERE ? "here" : NULL);
	print_string("verified_date", NULL, vb->by == VERIFIED_HERE ? vb->date : NULL);
	print_string("verified_source", NULL,
		     vb->by == VERIFIED_HERE ? vb->source : NULL);
}

/*
 * Whether the kernel is a build whose copied code mmfix verified
 * (include/mmfix_verified.h); the module refuses any other build of its
 * series unless loaded with allow_unverified=1.  Unknown (-1) without
 * the Debian version, which only /proc/version of the running kernel
 * gives: a release alone names every package build of one ABI.
 */
static void print_verified(const struct kernel *k, const char *version)
{
	static struct verified_by vb;
	char list[512], words[256];
	size_t i, len = 0;
	int verified = -1;

	if (!k->supported)
		return;
	if (version) {
		verified = build_verified_by(k->release, version, MMFIX_VERSION,
					     &vb) != VERIFIED_NONE;
		if (verified)
			left_out = vb.without;
	}
	list[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(verified_builds); i++) {
		if (strcmp(verified_builds[i].series, k->series))
			continue;
		len += snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0,
				"%s%s (Debian %s)", len ? ", " : "",
				verified_builds[i].release,
				verified_builds[i].version);
	}
	print_text("build:    ");
	print_string("debian_version", version ? "Debian %s, " : NULL, version);
	print_bool_words("verified", "%s", verified, "verified build",
			 "unverified build", "verified unknown");
	if (verified == 1 && *left_out)
		print_string("left_out", " except %s (applies, not verified on this build: copied code differs)",
			     left_out);
	print_text(verified == 1 ? "\n" : verified == 0 ?
		   ": mmfix refuses to load without allow_unverified=1\n" :
		   " (--release gives no Debian version)\n");
	if (verified == 1)
		print_text("          %s\n", verified_by_words(&vb, words, sizeof(words)));
	if (version)
		print_verified_by(&vb);
	if (verified != 1)
		print_text("          verified %s builds: %s\n", k->series, list);
	if (verified == 0)
		print_text("          mmfix-verify-build verifies it on this machine (mmfix-verify-build(8))\n");
}

/* The loaded module's build: "unverified build" must not go unseen. */
static void print_build_line(void)
{
	char buf[64];
	const char *b = sysfs_attr_str(buf, sizeof(buf), MMFIX_SYSFS_DIR "/build");

	print_string("build", NULL, b);
	if (b && !strcmp(b, "unverified"))
		print_text("module:   unverified build (loaded with allow_unverified=1)\n");
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int do_check(int argc, char **argv)
{
	char path[PATH_MAX], disp[80];
	char dver[64], rel[128];
	const char *version = NULL;
	unsigned int napply;
	struct kernel k;
	struct btf *btf;
	uint64_t ntypes;
	const char *release;

	if (argc)
		return usage_err("check takes no arguments (got '%s')",
				 arg_disp(argv[0], disp, sizeof(disp)));
	if (opts.btf) {
		snprintf(path, sizeof(path), "%s", opts.btf);
	} else if (sysfs_path(path, sizeof(path), "kernel/btf/vmlinux")) {
		p_err("sysfs path too long");
		return EXIT_RUNTIME;
	}
	release = opts.release;
	if (!release) {
		release = running_release(rel, sizeof(rel));
		version = proc_debian_version(dver, sizeof(dver));
	}
	kernel_parse(&k, release);

	libbpf_set_print(libbpf_quiet);
	btf = btf__parse(path, NULL);
	if (!btf) {
		p_err("cannot read BTF from %s: %s%s", path, strerror(errno),
		      opts.btf ? "" : " (kernel without CONFIG_DEBUG_INFO_BTF?)");
		return EXIT_RUNTIME;
	}
	ntypes = btf__type_cnt(btf) - 1;

	print_open_object(NULL);
	print_open_object("kernel");
	print_string("release", "kernel:   %s", release);
	print_string("series", ", series %s", k.parsed ? k.series : NULL);
	print_bool_words("supported", ", %s\n", k.supported,
			 "supported by mmfix " MMFIX_VERSION,
			 "not supported by mmfix " MMFIX_VERSION, "-");
	print_verified(&k, version);
	print_close_object();
	print_build_line();
	print_open_object("btf");
	print_string("path", "BTF:      %s", path);
	print_u64("types", ", %s types\n\n", &ntypes);
	print_close_object();

	print_open_array("issues");
	check_memcg(btf);
	print_text("\n");
	check_vma(btf);
	print_close_array();
	print_text("\n");
	print_funcs(btf);
	print_text("\n");
	napply = print_fixes(btf, &k);
	print_bool("nothing_applies", NULL, !napply);
	if (!napply)
		print_text("\nnothing applies here: %s (exit status %d)\n",
			   k.supported ? "no mmfix fix applies to this kernel" :
			   "mmfix does not support this kernel", EXIT_UNSUPPORTED);
	print_close_object();
	btf__free(btf);
	return napply ? EXIT_OK : EXIT_UNSUPPORTED;
}
