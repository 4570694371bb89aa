// SPDX-License-Identifier: GPL-2.0
/*
 * klp-check - verify that a livepatch module will link against the kernel
 * only through exports and well-formed livepatch (klp) relocations.
 *
 * Purpose: catch, on the build host, every module the target kernel would
 * refuse or mis-relocate: undefined symbols that are neither exported nor
 * klp symbols, malformed .klp.rela sections, normal relocations left
 * pointing at klp symbols, a missing livepatch=Y, and any kallsyms-based
 * symbol lookup (forbidden in mmfix: pointers from kallsyms fault under
 * IBT).  One line per problem; exit status 1 if there was any.
 *
 * Usage:
 *	klp-check --symvers /usr/src/linux-headers-6.12.117+deb12-amd64/Module.symvers \
 *		build/6.12/mmfix.ko
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klp-common.h"

struct check {
	const char *path;
	struct klp_elf ke;
	const struct klp_symvers *sv;
	const char *modname;
	size_t nklpsyms;
	size_t nklprelas;
	size_t nklpsecs;
	bool calls_klp_enable;
	int problems;
};

static void problem(struct check *k, const char *fmt, ...)
{
	va_list ap;

	printf("klp-check: %s: ", k->path);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	k->problems++;
}

static void check_undef(struct check *k, const GElf_Sym *sym,
			const char *name)
{
	const struct klp_export *e;

	if (!strcmp(name, "klp_enable_patch"))
		k->calls_klp_enable = true;
	if (klp_is_kallsyms_lookup(name)) {
		problem(k, "references %s: kallsyms-based symbol lookup is forbidden (use a klp symbol list entry instead)",
			name);
		return;
	}
	if (!strncmp(name, KLP_SYM_PREFIX, strlen(KLP_SYM_PREFIX))) {
		problem(k, "symbol %s has the klp prefix but is SHN_UNDEF, not SHN_LIVEPATCH",
			name);
		return;
	}
	if (!strcmp(name, "_GLOBAL_OFFSET_TABLE_") ||
	    klp_symvers_lookup(k->sv, name, k->modname))
		return;
	e = klp_symvers_find(k->sv, name);
	if (e)
		problem(k, "undefined symbol %s is exported only to other modules (namespace %s)",
			name, e->ns);
	else if (GELF_ST_BIND(sym->st_info) == STB_WEAK)
		problem(k, "weak undefined symbol %s is not exported: the module loader would silently resolve it to 0",
			name);
	else
		problem(k, "undefined symbol %s is neither exported in Module.symvers nor a klp symbol (list it and run klp-convert)",
			name);
}

static void check_klp_sym(struct check *k, const char *name)
{
	struct klp_symname sn;
	const char *why;

	k->nklpsyms++;
	if (klp_parse_sym_name(name, &sn, &why)) {
		problem(k, "klp symbol '%s' is malformed: %s (expected .klp.sym.<object>.<name>,<sympos>)",
			name, why);
		return;
	}
	if (klp_is_kallsyms_lookup(sn.name))
		problem(k, "klp symbol %s resolves %s: kallsyms-based symbol lookup is forbidden",
			name, sn.name);
}

static void check_symbols(struct check *k)
{
	const char *name;
	GElf_Sym sym;
	size_t i;

	for (i = 1; i < k->ke.nsyms; i++) {
		if (!gelf_getsym(k->ke.symdata, i, &sym)) {
			problem(k, "unreadable symbol %zu", i);
			return;
		}
		name = klp_elf_symname(&k->ke, &sym);
		if (sym.st_shndx == SHN_UNDEF && sym.st_name)
			check_undef(k, &sym, name);
		else if (sym.st_shndx == SHN_LIVEPATCH)
			check_klp_sym(k, name);
		else if (!strncmp(name, KLP_SYM_PREFIX, strlen(KLP_SYM_PREFIX)))
			problem(k, "symbol %s has the klp prefix but st_shndx 0x%x, not SHN_LIVEPATCH (0xff20)",
				name, sym.st_shndx);
	}
}

static bool bytes_zero(const Elf_Data *data, GElf_Addr off, int width)
{
	const unsigned char *p;
	int i;

	if (!data || !data->d_buf || off + width > data->d_size)
		return false;
	p = (const unsigned char *)data->d_buf + off;
	for (i = 0; i < width; i++)
		if (p[i])
			return false;
	return true;
}

/* One entry of a klp relocation section; @obj is NULL if the name is bad. */
static void check_klp_entry(struct check *k, const char *sname,
			    const char *obj, size_t target,
			    const GElf_Shdr *tsh, const GElf_Rela *r)
{
	const char *tname = klp_elf_secname(&k->ke, target);
	size_t si = GELF_R_SYM(r->r_info);
	int width = klp_rela_width(GELF_R_TYPE(r->r_info));
	struct klp_symname sn;
	const char *name;
	GElf_Sym sym;

	if (!si || si >= k->ke.nsyms || !gelf_getsym(k->ke.symdata, si, &sym)) {
		problem(k, "%s: relocation at 0x%lx has bad symbol index %zu",
			sname, (unsigned long)r->r_offset, si);
		return;
	}
	name = klp_elf_symname(&k->ke, &sym);
	if (sym.st_shndx != SHN_LIVEPATCH)
		problem(k, "%s: relocation at 0x%lx references %s, which is not a SHN_LIVEPATCH klp symbol",
			sname, (unsigned long)r->r_offset, name);
	else if (obj && !klp_parse_sym_name(name, &sn, NULL) &&
		 strcmp(sn.obj, obj))
		problem(k, "%s: relocation at 0x%lx references %s, a klp symbol of object %s, not %s",
			sname, (unsigned long)r->r_offset, name, sn.obj, obj);
	if (width < 0) {
		problem(k, "%s: relocation at 0x%lx has type %u, which the x86-64 module loader cannot apply",
			sname, (unsigned long)r->r_offset,
			(unsigned int)GELF_R_TYPE(r->r_info));
		return;
	}
	if (r->r_offset + width > tsh->sh_size)
		problem(k, "%s: relocation offset 0x%lx lies beyond target section %s (size 0x%lx)",
			sname, (unsigned long)r->r_offset, tname,
			(unsigned long)tsh->sh_size);
	else if (tsh->sh_type != SHT_NOBITS &&
		 !bytes_zero(klp_elf_data(&k->ke, target), r->r_offset, width))
		problem(k, "%s: target bytes at %s+0x%lx are not zero; the kernel refuses to apply it",
			sname, tname, (unsigned long)r->r_offset);
}

/* Returns the target section index, or 0 if it is unusable. */
static size_t check_klp_header(struct check *k, const char *sname,
			       const GElf_Shdr *sh, const char *obj,
			       const char *secpart, GElf_Shdr *tsh)
{
	const char *tname, *why;

	if (!obj)
		problem(k, "%s: bad klp relocation section name (expected .klp.rela.<object>.<section>, object 1-55 characters without '.')",
			sname);
	if (!(sh->sh_flags & SHF_RELA_LIVEPATCH))
		problem(k, "%s: lacks SHF_RELA_LIVEPATCH: the module loader would apply it as a normal relocation section against unresolved klp symbols",
			sname);
	if (!(sh->sh_flags & SHF_ALLOC))
		problem(k, "%s: lacks SHF_ALLOC: its contents are freed after load, so late (module-object) application would read freed memory",
			sname);
	if (sh->sh_type != SHT_RELA)
		problem(k, "%s: is not SHT_RELA (type %u)", sname, sh->sh_type);
	if (sh->sh_link != k->ke.symtab)
		problem(k, "%s: sh_link %u is not the symbol table (%zu)",
			sname, sh->sh_link, k->ke.symtab);
	if (sh->sh_entsize != sizeof(Elf64_Rela) ||
	    sh->sh_size % sizeof(Elf64_Rela))
		problem(k, "%s: entry size/size not a multiple of %zu",
			sname, sizeof(Elf64_Rela));
	if (!sh->sh_info || sh->sh_info >= k->ke.shnum ||
	    klp_elf_shdr(&k->ke, sh->sh_info, tsh)) {
		problem(k, "%s: sh_info %u is not a valid section index",
			sname, sh->sh_info);
		return 0;
	}
	tname = klp_elf_secname(&k->ke, sh->sh_info);
	if (!(tsh->sh_flags & SHF_ALLOC) || tsh->sh_type == SHT_NOBITS) {
		problem(k, "%s: target section %s (sh_info %u) is not an allocated section with contents; apply_relocations() would skip it",
			sname, tname, sh->sh_info);
		return 0;
	}
	if (obj && strcmp(secpart, tname))
		problem(k, "%s: name says section %s but sh_info points at %s",
			sname, secpart, tname);
	why = klp_target_refusal(tname);
	if (why)
		problem(k, "%s: klp relocations into %s (%s) are not supported",
			sname, tname, why);
	return sh->sh_info;
}

static void check_klp_rela(struct check *k, size_t idx, const GElf_Shdr *sh,
			   const char *sname)
{
	char objbuf[KLP_OBJ_MAX + 1];
	const char *obj = objbuf, *secpart = NULL;
	Elf_Data *data;
	GElf_Shdr tsh;
	GElf_Rela r;
	size_t target, i, n;

	k->nklpsecs++;
	if (klp_parse_rela_name(sname, objbuf, &secpart))
		obj = NULL;
	target = check_klp_header(k, sname, sh, obj, secpart, &tsh);
	data = klp_elf_data(&k->ke, idx);
	if (!target || sh->sh_type != SHT_RELA || !data)
		return;
	n = data->d_size / sizeof(Elf64_Rela);
	for (i = 0; i < n && gelf_getrela(data, i, &r); i++) {
		k->nklprelas++;
		check_klp_entry(k, sname, obj, target, &tsh, &r);
	}
}

static void check_normal_entry(struct check *k, const char *sname,
			       size_t target, GElf_Addr off, GElf_Xword info)
{
	size_t si = GELF_R_SYM(info);
	GElf_Sym sym;

	if (!GELF_R_TYPE(info) || si >= k->ke.nsyms ||
	    !gelf_getsym(k->ke.symdata, si, &sym) ||
	    sym.st_shndx != SHN_LIVEPATCH)
		return;
	problem(k, "%s: normal relocation at %s+0x%lx references klp symbol %s: the module loader would apply it with an unresolved address",
		sname, klp_elf_secname(&k->ke, target), (unsigned long)off,
		klp_elf_symname(&k->ke, &sym));
}

/* Only relocations into allocated sections are applied by the kernel. */
static void check_normal_rela(struct check *k, size_t idx,
			      const GElf_Shdr *sh, const char *sname)
{
	Elf_Data *data = klp_elf_data(&k->ke, idx);
	GElf_Shdr tsh;
	size_t i, n;
	GElf_Rela ra;
	GElf_Rel r;

	if (!data || klp_elf_shdr(&k->ke, sh->sh_info, &tsh) ||
	    !(tsh.sh_flags & SHF_ALLOC))
		return;
	if (sh->sh_type == SHT_RELA) {
		n = data->d_size / sizeof(Elf64_Rela);
		for (i = 0; i < n && gelf_getrela(data, i, &ra); i++)
			check_normal_entry(k, sname, sh->sh_info, ra.r_offset,
					   ra.r_info);
		return;
	}
	n = data->d_size / sizeof(Elf64_Rel);
	for (i = 0; i < n && gelf_getrel(data, i, &r); i++)
		check_normal_entry(k, sname, sh->sh_info, r.r_offset, r.r_info);
}

/* The kprobe trick: register_kprobe(.symbol_name = "kallsyms_lookup_name"). */
static void check_lookup_strings(struct check *k, size_t idx,
				 const char *sname)
{
	Elf_Data *data = klp_elf_data(&k->ke, idx);
	const char *which;
	long off;

	if (!data || !data->d_buf)
		return;
	off = klp_find_lookup_string(data->d_buf, data->d_size, &which);
	if (off >= 0)
		problem(k, "section %s contains the string \"%s\" at offset 0x%lx: kprobe/kallsyms-based symbol lookup is forbidden",
			sname, which, off);
}

static bool is_data_section(const GElf_Shdr *sh, const char *name)
{
	return (sh->sh_flags & SHF_ALLOC) && !(sh->sh_flags & SHF_EXECINSTR) &&
	       sh->sh_type == SHT_PROGBITS && strcmp(name, ".modinfo") &&
	       strcmp(name, "__versions");
}

static void check_sections(struct check *k)
{
	const char *name;
	GElf_Shdr sh;
	size_t i;

	for (i = 1; i < k->ke.shnum; i++) {
		if (klp_elf_shdr(&k->ke, i, &sh))
			continue;
		name = klp_elf_secname(&k->ke, i);
		if (!strncmp(name, KLP_RELA_PREFIX, strlen(KLP_RELA_PREFIX)) ||
		    (sh.sh_flags & SHF_RELA_LIVEPATCH))
			check_klp_rela(k, i, &sh, name);
		else if ((sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) &&
			 sh.sh_link == k->ke.symtab)
			check_normal_rela(k, i, &sh, name);
		else if (is_data_section(&sh, name))
			check_lookup_strings(k, i, name);
	}
}

static void check_modinfo(struct check *k)
{
	const char *lp = klp_elf_modinfo(&k->ke, "livepatch");

	if (!k->nklpsyms && !k->nklpsecs && !k->calls_klp_enable)
		return;
	if (!lp || strcmp(lp, "Y"))
		problem(k, "livepatch module without livepatch=Y in .modinfo (MODULE_INFO(livepatch, \"Y\")): klp_enable_patch() would refuse it");
}

static int check_module(const char *path, const struct klp_symvers *sv)
{
	struct check k = { .path = path, .sv = sv };
	const char *err;

	if (klp_elf_open(&k.ke, path, ELF_C_READ, &err)) {
		problem(&k, "%s", err);
		return 1;
	}
	k.modname = klp_elf_modinfo(&k.ke, "name");
	check_symbols(&k);
	check_sections(&k);
	check_modinfo(&k);
	klp_elf_close(&k.ke);
	if (!k.problems)
		printf("klp-check: %s: OK (%zu klp symbols, %zu klp relocations)\n",
		       path, k.nklpsyms, k.nklprelas);
	return k.problems ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: klp-check --symvers Module.symvers MOD.ko...\n"
		"\n"
		"Print one line per problem that would make the target kernel refuse\n"
		"or mis-relocate MOD.ko, or 'OK'.  Exit status 1 if any module has a\n"
		"problem.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "symvers", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *symvers_path = NULL;
	struct klp_symvers sv;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			symvers_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!symvers_path || optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (klp_symvers_load(&sv, symvers_path)) {
		fprintf(stderr, "klp-check: %s: %s\n", symvers_path,
			strerror(errno));
		return 2;
	}
	for (; optind < argc; optind++)
		ret |= check_module(argv[optind], &sv);
	klp_symvers_free(&sv);
	return ret;
}
