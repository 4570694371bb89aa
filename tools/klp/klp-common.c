// SPDX-License-Identifier: GPL-2.0
/*
 * klp-common.c - shared helpers of klp-convert and klp-check.
 *
 * See klp-common.h and docs/klp-relocations.md.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "klp-common.h"

void *klp_xmalloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "klp: out of memory\n");
		exit(2);
	}
	return p;
}

void *klp_xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p) {
		fprintf(stderr, "klp: out of memory\n");
		exit(2);
	}
	return p;
}

char *klp_xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(klp_xmalloc(len), s, len);
}

static int parse_fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -1;
}

bool klp_valid_obj_name(const char *obj)
{
	size_t len = strlen(obj);

	return len && len <= KLP_OBJ_MAX && !strchr(obj, '.');
}

bool klp_valid_sym_name(const char *name)
{
	size_t len = strlen(name);

	return len && len <= KLP_NAME_MAX && !strchr(name, ',');
}

/*
 * The kernel parses the name with
 *	sscanf(name, ".klp.sym.%55[^.].%511[^,],%lu", obj, name, &pos)
 * and needs 3 conversions.  We accept exactly what that accepts, except
 * that SYMPOS must be plain decimal digits ending the string: the kernel
 * would also take " +1junk", but no tool should ever write that.
 */
int klp_parse_sym_name(const char *s, struct klp_symname *out,
		       const char **why)
{
	const char *obj, *name, *pos;
	unsigned long val;
	char *end;
	size_t len;

	if (strncmp(s, KLP_SYM_PREFIX, strlen(KLP_SYM_PREFIX)))
		return parse_fail(why, "missing the " KLP_SYM_PREFIX " prefix");
	obj = s + strlen(KLP_SYM_PREFIX);
	name = strchr(obj, '.');
	if (!name)
		return parse_fail(why, "no '.' after the object name");
	len = name - obj;
	if (!len || len > KLP_OBJ_MAX)
		return parse_fail(why, "object name must have 1 to 55 characters");
	memcpy(out->obj, obj, len);
	out->obj[len] = '\0';

	name++;
	pos = strchr(name, ',');
	if (!pos)
		return parse_fail(why, "no ',SYMPOS' after the symbol name");
	len = pos - name;
	if (!len || len > KLP_NAME_MAX)
		return parse_fail(why, "symbol name must have 1 to 511 characters");
	memcpy(out->name, name, len);
	out->name[len] = '\0';

	pos++;
	if (!isdigit((unsigned char)*pos))
		return parse_fail(why, "SYMPOS is not a decimal number");
	errno = 0;
	val = strtoul(pos, &end, 10);
	if (errno || *end)
		return parse_fail(why, "SYMPOS is not a decimal number");
	out->pos = val;
	return 0;
}

/* The kernel: sscanf(secname, ".klp.rela.%55[^.]", obj) == 1. */
int klp_parse_rela_name(const char *s, char *obj, const char **sec)
{
	const char *p, *dot;
	size_t len;

	if (strncmp(s, KLP_RELA_PREFIX, strlen(KLP_RELA_PREFIX)))
		return -1;
	p = s + strlen(KLP_RELA_PREFIX);
	dot = strchr(p, '.');
	if (!dot)
		return -1;
	len = dot - p;
	if (!len || len > KLP_OBJ_MAX || !dot[1])
		return -1;
	memcpy(obj, p, len);
	obj[len] = '\0';
	*sec = dot + 1;
	return 0;
}

/* The relocation types arch/x86/kernel/module.c knows. */
int klp_rela_width(unsigned int type)
{
	switch (type) {
	case R_X86_64_NONE:
		return 0;
	case R_X86_64_64:
	case R_X86_64_PC64:
		return 8;
	case R_X86_64_32:
	case R_X86_64_32S:
	case R_X86_64_PC32:
	case R_X86_64_PLT32:
		return 4;
	default:
		return -1;
	}
}

const char *klp_rela_type_name(unsigned int type)
{
	switch (type) {
	case R_X86_64_NONE:	return "R_X86_64_NONE";
	case R_X86_64_64:	return "R_X86_64_64";
	case R_X86_64_PC64:	return "R_X86_64_PC64";
	case R_X86_64_32:	return "R_X86_64_32";
	case R_X86_64_32S:	return "R_X86_64_32S";
	case R_X86_64_PC32:	return "R_X86_64_PC32";
	case R_X86_64_PLT32:	return "R_X86_64_PLT32";
	default:		return "unsupported type";
	}
}

struct klp_special {
	const char *name;
	bool prefix;
	const char *why;
};

/*
 * Sections whose contents the module loader or arch code interprets
 * itself.  A reference to a non-exported kernel symbol from one of them
 * means the module uses a non-exported static key, static call,
 * alternative or similar; we do not convert those (see
 * docs/klp-relocations.md, "Limits").
 */
static const struct klp_special klp_specials[] = {
	{ "__jump_table", false, "static key entries read by jump_label_add_module()" },
	{ ".static_call_sites", false, "static call sites read by static_call_add_module()" },
	{ "__ex_table", false, "exception table sorted and searched by the fault handler" },
	{ ".altinstructions", false, "alternatives applied by module_finalize()" },
	{ ".altinstr_replacement", false, "alternative code copied by apply_alternatives()" },
	{ ".altinstr_aux", false, "alternative code copied by apply_alternatives()" },
	{ ".parainstructions", false, "paravirt sites patched by module_finalize()" },
	{ ".smp_locks", false, "lock prefixes patched by module_finalize()" },
	{ "__bug_table", false, "BUG/WARN entries read by the trap handler" },
	{ ".orc_unwind", true, "unwinder tables" },
	{ ".retpoline_sites", false, "objtool sites patched by module_finalize()" },
	{ ".return_sites", false, "objtool sites patched by module_finalize()" },
	{ ".call_sites", false, "objtool sites patched by module_finalize()" },
	{ ".ibt_endbr_seal", false, "objtool sites patched by module_finalize()" },
	{ ".cfi_sites", false, "objtool sites patched by module_finalize()" },
	{ "__mcount_loc", false, "ftrace call sites" },
	{ "__patchable_function_entries", false, "ftrace call sites" },
	{ ".gnu.linkonce.this_module", false, "struct module of the module itself" },
	{ "__ksymtab", true, "export tables" },
	{ "__kcrctab", true, "export CRCs" },
	{ "__param", false, "module parameters" },
	{ "__versions", false, "symbol versions" },
	{ ".data..percpu", true, "per-CPU template copied by percpu_modcopy()" },
	{ "__tracepoint", true, "tracepoint tables" },
	{ "_ftrace_", true, "trace event tables" },
	{ "__bpf_raw_tp_map", false, "BPF raw tracepoint table" },
	{ ".static_call.text", false, "static call trampolines" },
};

/* Ordinary code and data: the only targets we accept. */
static const char *const klp_ordinary[] = {
	".text", ".init.text", ".exit.text", ".ref.text", ".noinstr.text",
	".sched.text", ".spinlock.text", ".cpuidle.text",
	".rodata", ".init.rodata", ".data", ".init.data", ".exit.data",
	".ref.data",
};

static bool name_matches(const char *name, const char *pat, bool prefix)
{
	size_t len = strlen(pat);

	if (strncmp(name, pat, len))
		return false;
	return prefix || !name[len];
}

/* "NAME" itself or "NAME.<anything>" (e.g. .text.unlikely). */
static bool is_family(const char *name, const char *base)
{
	size_t len = strlen(base);

	return !strncmp(name, base, len) && (!name[len] || name[len] == '.');
}

const char *klp_target_refusal(const char *secname)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(klp_specials); i++) {
		const struct klp_special *sp = &klp_specials[i];

		if (name_matches(secname, sp->name, sp->prefix))
			return sp->why;
	}
	for (i = 0; i < ARRAY_SIZE(klp_ordinary); i++)
		if (is_family(secname, klp_ordinary[i]))
			return NULL;
	return "not an ordinary code or data section";
}

static const char *const klp_lookup_names[] = {
	"kallsyms_lookup_name",
	"kallsyms_on_each_symbol",
	"kallsyms_on_each_match_symbol",
	"module_kallsyms_lookup_name",
	"module_kallsyms_on_each_symbol",
	"kallsyms_lookup",
};

bool klp_is_kallsyms_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(klp_lookup_names); i++)
		if (!strcmp(name, klp_lookup_names[i]))
			return true;
	return false;
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/*
 * A C string equal to the name, or ending in it after a non-identifier
 * character (GCC merges "kallsyms_lookup_name" into the tail of a longer
 * literal when it can).
 */
long klp_find_lookup_string(const char *buf, size_t len, const char **which)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(klp_lookup_names); i++) {
		const char *name = klp_lookup_names[i];
		size_t nlen = strlen(name);
		const char *p = buf;

		while ((p = memmem(p, len - (p - buf), name, nlen))) {
			size_t off = p - buf;

			if (off + nlen < len && !buf[off + nlen] &&
			    (!off || !is_ident_char(buf[off - 1]))) {
				*which = name;
				return off;
			}
			p++;
		}
	}
	return -1;
}

static int cmp_export(const void *a, const void *b)
{
	const struct klp_export *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static char *next_field(char **line)
{
	char *start = *line, *tab;

	if (!start)
		return NULL;
	tab = strchr(start, '\t');
	if (tab) {
		*tab = '\0';
		*line = tab + 1;
	} else {
		*line = NULL;
	}
	return start;
}

static char *read_text(const char *path)
{
	struct stat st;
	char *buf;
	ssize_t got;
	size_t off = 0;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return NULL;
	}
	buf = klp_xmalloc(st.st_size + 1);
	while (off < (size_t)st.st_size) {
		got = read(fd, buf + off, st.st_size - off);
		if (got <= 0)
			break;
		off += got;
	}
	close(fd);
	buf[off] = '\0';
	return buf;
}

static void symvers_add(struct klp_symvers *sv, char *line, size_t *cap)
{
	struct klp_export *e;
	char *crc, *name, *module, *type, *ns;

	crc = next_field(&line);
	name = next_field(&line);
	module = next_field(&line);
	type = next_field(&line);
	ns = next_field(&line);
	if (!crc || !name || !*name || !module || !type)
		return;
	if (sv->n == *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		sv->v = klp_xrealloc(sv->v, *cap * sizeof(*sv->v));
	}
	e = &sv->v[sv->n++];
	e->name = name;
	e->module = module;
	e->ns = ns ? ns : "";
}

int klp_symvers_load(struct klp_symvers *sv, const char *path)
{
	char *line, *nl;
	size_t cap = 0;

	memset(sv, 0, sizeof(*sv));
	sv->text = read_text(path);
	if (!sv->text)
		return -1;
	for (line = sv->text; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		symvers_add(sv, line, &cap);
	}
	qsort(sv->v, sv->n, sizeof(*sv->v), cmp_export);
	return 0;
}

void klp_symvers_free(struct klp_symvers *sv)
{
	free(sv->v);
	free(sv->text);
	memset(sv, 0, sizeof(*sv));
}

/*
 * Mirrors modpost's verify_module_namespace(): "module:a,b*" exports a
 * symbol only to the listed modules (tail globs allowed).
 */
static bool module_ns_allows(const char *ns, const char *modname)
{
	const char *p = ns + strlen("module:"), *sep;
	size_t len;
	bool glob;

	if (!modname)
		return false;
	for (; *p; p = *sep ? sep + 1 : sep) {
		sep = strchrnul(p, ',');
		len = sep - p;
		glob = len && p[len - 1] == '*';
		if (glob)
			len--;
		if (!strncmp(p, modname, len) &&
		    (glob || strlen(modname) == len))
			return true;
	}
	return false;
}

static bool export_visible(const struct klp_export *e, const char *modname)
{
	if (strncmp(e->ns, "module:", strlen("module:")))
		return true;
	return module_ns_allows(e->ns, modname);
}

const struct klp_export *klp_symvers_find(const struct klp_symvers *sv,
					  const char *name)
{
	struct klp_export key = { .name = (char *)name };
	const struct klp_export *e;

	if (!sv->n)
		return NULL;
	e = bsearch(&key, sv->v, sv->n, sizeof(*sv->v), cmp_export);
	if (!e)
		return NULL;
	while (e > sv->v && !strcmp(e[-1].name, name))
		e--;
	return e;
}

const struct klp_export *klp_symvers_lookup(const struct klp_symvers *sv,
					    const char *name,
					    const char *modname)
{
	const struct klp_export *e = klp_symvers_find(sv, name);

	for (; e && e < sv->v + sv->n && !strcmp(e->name, name); e++)
		if (export_visible(e, modname))
			return e;
	return NULL;
}

static int find_symtab(struct klp_elf *ke, const char **err)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t found = 0;

	while ((scn = elf_nextscn(ke->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB_SHNDX) {
			*err = "extended section indices (SHT_SYMTAB_SHNDX) are not supported";
			return -1;
		}
		if (shdr.sh_type != SHT_SYMTAB)
			continue;
		found++;
		ke->symtab = elf_ndxscn(scn);
		ke->strtab = shdr.sh_link;
		if (shdr.sh_entsize != sizeof(Elf64_Sym)) {
			*err = ".symtab has a bad sh_entsize";
			return -1;
		}
		ke->nsyms = shdr.sh_size / sizeof(Elf64_Sym);
	}
	if (found != 1) {
		*err = "not exactly one SHT_SYMTAB section (stripped?)";
		return -1;
	}
	ke->symdata = elf_getdata(elf_getscn(ke->elf, ke->symtab), NULL);
	if (!ke->symdata || ke->strtab >= ke->shnum) {
		*err = "unreadable symbol table";
		return -1;
	}
	return 0;
}

static int check_header(struct klp_elf *ke, const char **err)
{
	GElf_Ehdr ehdr;

	if (elf_kind(ke->elf) != ELF_K_ELF || !gelf_getehdr(ke->elf, &ehdr)) {
		*err = "not an ELF file (compressed module?)";
		return -1;
	}
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    ehdr.e_machine != EM_X86_64) {
		*err = "not an x86-64 ELF object";
		return -1;
	}
	if (ehdr.e_type != ET_REL) {
		*err = "not a relocatable object (ET_REL)";
		return -1;
	}
	if (elf_getshdrnum(ke->elf, &ke->shnum) ||
	    elf_getshdrstrndx(ke->elf, &ke->shstrndx)) {
		*err = elf_errmsg(-1);
		return -1;
	}
	return 0;
}

int klp_elf_open(struct klp_elf *ke, const char *path, Elf_Cmd cmd,
		 const char **err)
{
	memset(ke, 0, sizeof(*ke));
	ke->path = path;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		*err = elf_errmsg(-1);
		return -1;
	}
	ke->fd = open(path, cmd == ELF_C_READ ? O_RDONLY : O_RDWR);
	if (ke->fd < 0) {
		*err = strerror(errno);
		return -1;
	}
	ke->elf = elf_begin(ke->fd, cmd, NULL);
	if (!ke->elf) {
		*err = elf_errmsg(-1);
		goto err_close;
	}
	if (check_header(ke, err) || find_symtab(ke, err))
		goto err_end;
	return 0;

err_end:
	elf_end(ke->elf);
	ke->elf = NULL;
err_close:
	close(ke->fd);
	ke->fd = -1;
	return -1;
}

void klp_elf_close(struct klp_elf *ke)
{
	if (ke->elf)
		elf_end(ke->elf);
	if (ke->fd >= 0)
		close(ke->fd);
	ke->elf = NULL;
	ke->fd = -1;
}

int klp_elf_shdr(const struct klp_elf *ke, size_t idx, GElf_Shdr *shdr)
{
	Elf_Scn *scn = elf_getscn(ke->elf, idx);

	return scn && gelf_getshdr(scn, shdr) ? 0 : -1;
}

Elf_Data *klp_elf_data(const struct klp_elf *ke, size_t idx)
{
	Elf_Scn *scn = elf_getscn(ke->elf, idx);

	return scn ? elf_getdata(scn, NULL) : NULL;
}

const char *klp_elf_secname(const struct klp_elf *ke, size_t idx)
{
	GElf_Shdr shdr;
	const char *name;

	if (klp_elf_shdr(ke, idx, &shdr))
		return "<bad section>";
	name = elf_strptr(ke->elf, ke->shstrndx, shdr.sh_name);
	return name ? name : "<bad name>";
}

const char *klp_elf_symname(const struct klp_elf *ke, const GElf_Sym *sym)
{
	const char *name = elf_strptr(ke->elf, ke->strtab, sym->st_name);

	return name ? name : "<bad name>";
}

const char *klp_elf_modinfo(const struct klp_elf *ke, const char *key)
{
	size_t i, klen = strlen(key);
	Elf_Data *data;
	const char *p, *end;

	for (i = 1; i < ke->shnum; i++) {
		if (strcmp(klp_elf_secname(ke, i), ".modinfo"))
			continue;
		data = klp_elf_data(ke, i);
		if (!data || !data->d_buf)
			return NULL;
		p = data->d_buf;
		end = p + data->d_size;
		for (; p < end; p += strnlen(p, end - p) + 1)
			if (!strncmp(p, key, klen) && p[klen] == '=' &&
			    memchr(p, '\0', end - p))
				return p + klen + 1;
		return NULL;
	}
	return NULL;
}
