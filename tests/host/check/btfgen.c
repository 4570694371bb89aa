// SPDX-License-Identifier: GPL-2.0
/*
 * btfgen DIR: writes small synthetic BTF files (libbpf's BTF writer) for
 * the cases of "mmfixctl check" that no Debian kernel shows:
 *
 *   shared.btf   mem_cgroup's vmstats_percpu on a memory_events[] line
 *                (the seed 004 regression); vm_area_struct with
 *                __vm_anon_pgoff_hi on another line than vm_refcnt; no
 *                functions at all
 *   nested.btf   the members inside anonymous structs and unions;
 *                vmstats_percpu just before memory_events[] starts a new
 *                line; __vm_anon_pgoff_hi next to vm_refcnt; every
 *                function mmfix replaces present
 *   empty.btf    only an int: no struct, no function
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>

static void die(const char *what)
{
	fprintf(stderr, "btfgen: %s failed\n", what);
	exit(1);
}

static int must(int id, const char *what)
{
	if (id < 0)
		die(what);
	return id;
}

static void save(struct btf *btf, const char *dir, const char *name)
{
	char path[4096];
	const void *data;
	__u32 size;
	FILE *f;

	data = btf__raw_data(btf, &size);
	if (!data)
		die("btf__raw_data");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		die(path);
	btf__free(btf);
}

struct base {
	int i32, i64, ptr, arr9, arr4;
};

static struct btf *new_btf(struct base *b)
{
	struct btf *btf = btf__new_empty();

	if (!btf)
		die("btf__new_empty");
	b->i32 = must(btf__add_int(btf, "int", 4, BTF_INT_SIGNED), "int");
	b->i64 = must(btf__add_int(btf, "long", 8, BTF_INT_SIGNED), "long");
	b->ptr = must(btf__add_ptr(btf, 0), "ptr");
	b->arr9 = must(btf__add_array(btf, b->i32, b->i64, 9), "array9");
	b->arr4 = must(btf__add_array(btf, b->i32, b->i64, 4), "array4");
	return btf;
}

static void add_funcs(struct btf *btf, const struct base *b,
		      const char *const *names, size_t n)
{
	int proto = must(btf__add_func_proto(btf, b->i32), "func_proto");
	size_t i;

	for (i = 0; i < n; i++)
		must(btf__add_func(btf, names[i], BTF_FUNC_GLOBAL, proto), names[i]);
}

static void shared(const char *dir)
{
	struct base b;
	struct btf *btf = new_btf(&b);

	/* memory_events[9] at 64..135 (lines 1-2), vmstats_percpu at 136 */
	must(btf__add_struct(btf, "mem_cgroup", 192), "mem_cgroup");
	must(btf__add_field(btf, "vmstats", b.ptr, 0, 0), "vmstats");
	must(btf__add_field(btf, "memory_events", b.arr9, 64 * 8, 0), "events");
	must(btf__add_field(btf, "vmstats_percpu", b.ptr, 136 * 8, 0), "pcpu");
	/* vm_refcnt at 128 (line 2), __vm_anon_pgoff_hi at 192 (line 3) */
	must(btf__add_struct(btf, "vm_area_struct", 256), "vma");
	must(btf__add_field(btf, "vm_refcnt", b.i32, 128 * 8, 0), "refcnt");
	must(btf__add_field(btf, "__vm_anon_pgoff_hi", b.i32, 192 * 8, 0), "hi");
	save(btf, dir, "shared.btf");
}

static void nested(const char *dir)
{
	static const char *const funcs[] = {
		"populate_vma_page_range", "__get_user_pages",
		"folio_add_new_anon_rmap", "unmap_region",
		"free_pages_and_swap_cache", "folio_batch_move_lru",
		"khugepaged", "__khugepaged_exit",
	};
	struct base b;
	struct btf *btf = new_btf(&b);
	int inner, uni, vinner;

	/* struct { long pad; void *vmstats_percpu; } inside a union at 48 */
	inner = must(btf__add_struct(btf, NULL, 16), "inner");
	must(btf__add_field(btf, "pad", b.i64, 0, 0), "pad");
	must(btf__add_field(btf, "vmstats_percpu", b.ptr, 64, 0), "pcpu");
	uni = must(btf__add_union(btf, NULL, 16), "union");
	must(btf__add_field(btf, "x", b.i64, 0, 0), "x");
	must(btf__add_field(btf, NULL, inner, 0, 0), "anon inner");
	/* memory_events[4] at 64..95: line 1; vmstats_percpu at 56: line 0 */
	must(btf__add_struct(btf, "mem_cgroup", 128), "mem_cgroup");
	must(btf__add_field(btf, NULL, uni, 48 * 8, 0), "anon union");
	must(btf__add_field(btf, "memory_events", b.arr4, 64 * 8, 0), "events");

	vinner = must(btf__add_struct(btf, NULL, 8), "vinner");
	must(btf__add_field(btf, "vm_refcnt", b.i32, 0, 0), "refcnt");
	must(btf__add_field(btf, "__vm_anon_pgoff_hi", b.i32, 32, 0), "hi");
	must(btf__add_struct(btf, "vm_area_struct", 192), "vma");
	must(btf__add_field(btf, NULL, vinner, 128 * 8, 0), "anon vinner");

	add_funcs(btf, &b, funcs, sizeof(funcs) / sizeof(funcs[0]));
	save(btf, dir, "nested.btf");
}

static void empty(const char *dir)
{
	struct btf *btf = btf__new_empty();

	if (!btf)
		die("btf__new_empty");
	must(btf__add_int(btf, "int", 4, BTF_INT_SIGNED), "int");
	save(btf, dir, "empty.btf");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: btfgen DIR\n");
		return 2;
	}
	shared(argv[1]);
	nested(argv[1]);
	empty(argv[1]);
	return 0;
}
