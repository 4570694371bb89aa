// SPDX-License-Identifier: GPL-2.0
/*
 * klp-break - test-only helper: damage a converted livepatch module in one
 * precise way, so tests/host/klp/run can show that klp-check notices.
 * Edits are made in place, without moving anything in the file.
 *
 * Usage: klp-break OP FILE.ko
 *   clear-livepatch  clear SHF_RELA_LIVEPATCH on every .klp.rela section
 *   clear-alloc      clear SHF_ALLOC on every .klp.rela section
 *   demote           rename .klp.rela.* to .rela.klp.* and clear
 *                    SHF_RELA_LIVEPATCH (a normal section with klp refs)
 *   bad-info         point sh_info of the first .klp.rela section at
 *                    the (non-allocated) string table
 *   bad-sym-name     cut ",SYMPOS" off the first klp symbol's name
 *   wrong-obj        rename the first klp symbol's object to "vmlinuz"
 *   nonzero-target   put a 1 into the bytes of the first klp relocation
 *   beyond           move the first klp relocation past its section
 */
#include <stdio.h>
#include <string.h>

#include "klp-common.h"

static size_t first_klp_rela(struct klp_elf *ke)
{
	size_t i;

	for (i = 1; i < ke->shnum; i++)
		if (!strncmp(klp_elf_secname(ke, i), KLP_RELA_PREFIX,
			     strlen(KLP_RELA_PREFIX)))
			return i;
	return 0;
}

static int set_klp_flags(struct klp_elf *ke, GElf_Xword clear, bool demote)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	char *name;
	int n = 0;
	size_t i;

	for (i = 1; i < ke->shnum; i++) {
		name = (char *)klp_elf_secname(ke, i);
		if (strncmp(name, KLP_RELA_PREFIX, strlen(KLP_RELA_PREFIX)))
			continue;
		scn = elf_getscn(ke->elf, i);
		gelf_getshdr(scn, &sh);
		sh.sh_flags &= ~clear;
		gelf_update_shdr(scn, &sh);
		if (demote)
			memcpy(name, ".rela.klp.", strlen(KLP_RELA_PREFIX));
		n++;
	}
	if (demote)
		elf_flagdata(klp_elf_data(ke, ke->shstrndx), ELF_C_SET,
			     ELF_F_DIRTY);
	return n ? 0 : -1;
}

static int bad_info(struct klp_elf *ke)
{
	size_t idx = first_klp_rela(ke);
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (!idx)
		return -1;
	scn = elf_getscn(ke->elf, idx);
	gelf_getshdr(scn, &sh);
	sh.sh_info = ke->strtab;
	gelf_update_shdr(scn, &sh);
	return 0;
}

static char *first_klp_sym_name(struct klp_elf *ke)
{
	GElf_Sym sym;
	size_t i;

	for (i = 1; i < ke->nsyms; i++) {
		gelf_getsym(ke->symdata, i, &sym);
		if (sym.st_shndx == SHN_LIVEPATCH)
			return (char *)klp_elf_symname(ke, &sym);
	}
	return NULL;
}

static int edit_sym_name(struct klp_elf *ke, bool wrong_obj)
{
	char *name = first_klp_sym_name(ke), *p;

	if (!name)
		return -1;
	if (wrong_obj) {
		p = strstr(name, "vmlinux");
		if (!p)
			return -1;
		p[6] = 'z';
	} else {
		p = strchr(name, ',');
		if (!p)
			return -1;
		*p = '\0';
	}
	elf_flagdata(klp_elf_data(ke, ke->strtab), ELF_C_SET, ELF_F_DIRTY);
	return 0;
}

static int edit_first_reloc(struct klp_elf *ke, bool beyond)
{
	size_t idx = first_klp_rela(ke);
	Elf_Data *rdata, *tdata;
	GElf_Shdr sh, tsh;
	GElf_Rela r;

	if (!idx || klp_elf_shdr(ke, idx, &sh) ||
	    klp_elf_shdr(ke, sh.sh_info, &tsh))
		return -1;
	rdata = klp_elf_data(ke, idx);
	if (!rdata || !gelf_getrela(rdata, 0, &r))
		return -1;
	if (beyond) {
		r.r_offset = tsh.sh_size;
		gelf_update_rela(rdata, 0, &r);
		elf_flagdata(rdata, ELF_C_SET, ELF_F_DIRTY);
		return 0;
	}
	tdata = klp_elf_data(ke, sh.sh_info);
	if (!tdata || r.r_offset >= tdata->d_size)
		return -1;
	((unsigned char *)tdata->d_buf)[r.r_offset] = 1;
	elf_flagdata(tdata, ELF_C_SET, ELF_F_DIRTY);
	return 0;
}

static int apply(struct klp_elf *ke, const char *op)
{
	if (!strcmp(op, "clear-livepatch"))
		return set_klp_flags(ke, SHF_RELA_LIVEPATCH, false);
	if (!strcmp(op, "clear-alloc"))
		return set_klp_flags(ke, SHF_ALLOC, false);
	if (!strcmp(op, "demote"))
		return set_klp_flags(ke, SHF_RELA_LIVEPATCH, true);
	if (!strcmp(op, "bad-info"))
		return bad_info(ke);
	if (!strcmp(op, "bad-sym-name"))
		return edit_sym_name(ke, false);
	if (!strcmp(op, "wrong-obj"))
		return edit_sym_name(ke, true);
	if (!strcmp(op, "nonzero-target"))
		return edit_first_reloc(ke, false);
	if (!strcmp(op, "beyond"))
		return edit_first_reloc(ke, true);
	fprintf(stderr, "klp-break: unknown operation %s\n", op);
	return -1;
}

int main(int argc, char **argv)
{
	struct klp_elf ke;
	const char *err;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: klp-break OP FILE.ko\n");
		return 2;
	}
	if (klp_elf_open(&ke, argv[2], ELF_C_RDWR, &err)) {
		fprintf(stderr, "klp-break: %s: %s\n", argv[2], err);
		return 1;
	}
	elf_flagelf(ke.elf, ELF_C_SET, ELF_F_LAYOUT);
	/* Load the string tables first so elf_strptr() points into them. */
	klp_elf_data(&ke, ke.strtab);
	klp_elf_data(&ke, ke.shstrndx);
	ret = apply(&ke, argv[1]);
	if (ret)
		fprintf(stderr, "klp-break: %s: cannot apply %s\n", argv[2],
			argv[1]);
	else if (elf_update(ke.elf, ELF_C_WRITE) < 0) {
		fprintf(stderr, "klp-break: elf_update: %s\n", elf_errmsg(-1));
		ret = -1;
	}
	klp_elf_close(&ke);
	return ret ? 1 : 0;
}
