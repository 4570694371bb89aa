/* SPDX-License-Identifier: GPL-2.0 */
/*
 * klp-common.h - shared helpers of klp-convert and klp-check.
 *
 * Both tools read x86-64 kernel modules (ET_REL) with libelf and must
 * agree with the kernel's livepatch core on what a klp symbol and a klp
 * relocation section look like.  Every rule here is taken from
 * kernel/livepatch/core.c (klp_resolve_symbols, klp_write_section_relocs),
 * kernel/module/main.c (simplify_symbols, apply_relocations) and
 * arch/x86/kernel/module.c (__write_relocate_add) of 6.1 .. 7.3.
 */
#ifndef KLP_COMMON_H
#define KLP_COMMON_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

#ifndef SHN_LIVEPATCH
#define SHN_LIVEPATCH		0xff20
#endif
#ifndef SHF_RELA_LIVEPATCH
#define SHF_RELA_LIVEPATCH	0x00100000
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

#define KLP_SYM_PREFIX		".klp.sym."
#define KLP_RELA_PREFIX		".klp.rela."
/* Field widths of the kernel's sscanf(): "%55[^.]" and "%511[^,]". */
#define KLP_OBJ_MAX		55
#define KLP_NAME_MAX		511
#define KLP_RELA_FLAGS		(SHF_ALLOC | SHF_INFO_LINK | SHF_RELA_LIVEPATCH)

struct klp_symname {
	char obj[KLP_OBJ_MAX + 1];
	char name[KLP_NAME_MAX + 1];
	unsigned long pos;
};

/* Parse ".klp.sym.OBJ.NAME,POS"; 0 on success, else -1 and *why set. */
int klp_parse_sym_name(const char *s, struct klp_symname *out,
		       const char **why);
/* Parse ".klp.rela.OBJ.SEC"; 0 on success, obj filled, *sec points at SEC. */
int klp_parse_rela_name(const char *s, char *obj, const char **sec);
bool klp_valid_obj_name(const char *obj);
bool klp_valid_sym_name(const char *name);

/* Bytes written by an x86-64 relocation, 0 for R_X86_64_NONE, -1 unknown. */
int klp_rela_width(unsigned int type);
const char *klp_rela_type_name(unsigned int type);

/*
 * NULL if a klp relocation may target section @secname, otherwise a
 * sentence explaining why not.
 */
const char *klp_target_refusal(const char *secname);

/* Functions whose use means "looking up kernel symbols by name". */
bool klp_is_kallsyms_lookup(const char *name);
/* Offset of a kallsyms lookup name used as a C string in @buf, or -1. */
long klp_find_lookup_string(const char *buf, size_t len, const char **which);

/* Module.symvers: crc, name, module, export type, namespace (tab separated). */
struct klp_export {
	char *name;
	char *module;
	char *ns;
};

struct klp_symvers {
	struct klp_export *v;
	size_t n;
	char *text;
};

int klp_symvers_load(struct klp_symvers *sv, const char *path);
void klp_symvers_free(struct klp_symvers *sv);
/* The export of @name usable by module @modname, or NULL. */
const struct klp_export *klp_symvers_lookup(const struct klp_symvers *sv,
					    const char *name,
					    const char *modname);
/* An export of @name for some other module ("module:" namespace), or NULL. */
const struct klp_export *klp_symvers_find(const struct klp_symvers *sv,
					  const char *name);

struct klp_elf {
	const char *path;
	int fd;
	Elf *elf;
	size_t shnum;
	size_t shstrndx;
	size_t symtab;		/* section index of .symtab */
	size_t strtab;		/* section index of its string table */
	Elf_Data *symdata;
	size_t nsyms;
};

/* Open an x86-64 ET_REL object; on error, *err says why. */
int klp_elf_open(struct klp_elf *ke, const char *path, Elf_Cmd cmd,
		 const char **err);
void klp_elf_close(struct klp_elf *ke);
const char *klp_elf_secname(const struct klp_elf *ke, size_t idx);
const char *klp_elf_symname(const struct klp_elf *ke, const GElf_Sym *sym);
int klp_elf_shdr(const struct klp_elf *ke, size_t idx, GElf_Shdr *shdr);
Elf_Data *klp_elf_data(const struct klp_elf *ke, size_t idx);
/* Value of "key=value" in .modinfo, or NULL. */
const char *klp_elf_modinfo(const struct klp_elf *ke, const char *key);

void *klp_xmalloc(size_t size);
void *klp_xrealloc(void *p, size_t size);
char *klp_xstrdup(const char *s);

#endif /* KLP_COMMON_H */
