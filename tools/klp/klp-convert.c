// SPDX-License-Identifier: GPL-2.0
/*
 * klp-convert - turn references to non-exported kernel symbols in a
 * linked livepatch module into livepatch (klp) relocations.
 *
 * Purpose: mmfix calls non-exported kernel functions directly (never via
 * kallsyms pointers, which fault under IBT).  Such a module links with
 * KBUILD_MODPOST_WARN=1 and still has undefined symbols the module loader
 * cannot resolve.  This tool renames each listed undefined symbol NAME to
 * ".klp.sym.OBJ.NAME,POS" with st_shndx = SHN_LIVEPATCH and moves every
 * relocation against it from ".rela<sec>" to a new section
 * ".klp.rela.OBJ.<sec>" (SHT_RELA, SHF_ALLOC | SHF_INFO_LINK |
 * SHF_RELA_LIVEPATCH), appended after all existing sections so that no
 * section or symbol index changes.  The livepatch core then resolves and
 * applies them while the module loads.  See docs/klp-relocations.md.
 *
 * Usage:
 *	klp-convert --syms module/klp-symbols \
 *		--symvers /usr/src/linux-headers-6.12.117+deb12-amd64/Module.symvers \
 *		build/6.12/mmfix.ko [OUT.ko]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "klp-common.h"

#define MODULE_SIG_STRING "~Module signature appended~\n"

/* One line of the symbol list: NAME [SYMPOS [OBJECT]]. */
struct want {
	char *name;
	unsigned long pos;
	char *obj;
	unsigned int line;
	bool used;
};

struct wantlist {
	const char *path;
	struct want *v;
	size_t n;
};

/* Relocations going to one ".klp.rela.OBJ.SEC" section. */
struct bucket {
	const char *obj;
	size_t target;
	Elf64_Rela *relas;
	size_t n;
	size_t cap;
};

/* A normal relocation section that loses some entries. */
struct rsec {
	size_t idx;
	Elf64_Rela *keep;
	size_t nkeep;
};

/* Strings appended to a string table as one extra Elf_Data chunk. */
struct strapp {
	size_t scn;
	size_t base;
	char *buf;
	size_t len;
	size_t cap;
};

struct conv {
	const char *display;		/* the user's input path */
	const struct wantlist *list;
	const struct klp_symvers *symvers;
	struct klp_elf ke;
	const char *modname;
	const struct want **sym_want;	/* per symbol index; NULL = keep */
	size_t nconv;
	size_t nold;			/* klp symbols already present */
	struct bucket *buckets;
	size_t nbuckets;
	struct rsec *rsecs;
	size_t nrsecs;
	size_t nmoved;
	size_t nnonalloc;
	char *strbufs[2];		/* appended .strtab/.shstrtab bytes */
	int errors;
};

static void conv_err(struct conv *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "klp-convert: %s: ", c->display);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	c->errors++;
}

static void conv_warn(struct conv *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "klp-convert: %s: warning: ", c->display);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int cmp_want(const void *a, const void *b)
{
	const struct want *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static struct want *want_find(const struct wantlist *wl, const char *name)
{
	struct want key = { .name = (char *)name };

	return wl->n ? bsearch(&key, wl->v, wl->n, sizeof(key), cmp_want) :
		       NULL;
}

static int want_parse_line(struct wantlist *wl, char *line, unsigned int nr,
			   size_t *cap)
{
	char *tok[3], *t, *save = NULL, *end, *hash;
	struct want *w;
	int n = 0;

	hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	for (t = strtok_r(line, " \t\r", &save); t;
	     t = strtok_r(NULL, " \t\r", &save)) {
		if (n == 3)
			goto bad;
		tok[n++] = t;
	}
	if (!n)
		return 0;
	if (!klp_valid_sym_name(tok[0]))
		goto bad;
	if (wl->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		wl->v = klp_xrealloc(wl->v, *cap * sizeof(*wl->v));
	}
	w = &wl->v[wl->n];
	w->name = klp_xstrdup(tok[0]);
	w->pos = 0;
	w->obj = klp_xstrdup(n == 3 ? tok[2] : "vmlinux");
	w->line = nr;
	w->used = false;
	if (n >= 2) {
		if (tok[1][0] < '0' || tok[1][0] > '9')
			goto bad;
		errno = 0;
		w->pos = strtoul(tok[1], &end, 10);
		if (errno || *end)
			goto bad;
	}
	if (!klp_valid_obj_name(w->obj))
		goto bad;
	wl->n++;
	return 0;
bad:
	fprintf(stderr, "klp-convert: %s:%u: expected 'NAME [SYMPOS [OBJECT]]' (NAME without ',' and at most %d characters, SYMPOS decimal, OBJECT without '.' and at most %d characters)\n",
		wl->path, nr, KLP_NAME_MAX, KLP_OBJ_MAX);
	return -1;
}

/* Sort by name, drop exact duplicates, reject contradicting ones. */
static int want_dedup(struct wantlist *wl)
{
	size_t i, out = 0;

	qsort(wl->v, wl->n, sizeof(*wl->v), cmp_want);
	for (i = 0; i < wl->n; i++) {
		struct want *prev = out ? &wl->v[out - 1] : NULL;

		if (prev && !strcmp(prev->name, wl->v[i].name)) {
			if (prev->pos != wl->v[i].pos ||
			    strcmp(prev->obj, wl->v[i].obj)) {
				fprintf(stderr, "klp-convert: %s:%u: %s listed again with a different SYMPOS/OBJECT (line %u)\n",
					wl->path, wl->v[i].line,
					wl->v[i].name, prev->line);
				return -1;
			}
			continue;
		}
		wl->v[out++] = wl->v[i];
	}
	wl->n = out;
	return 0;
}

static int want_load(struct wantlist *wl, const char *path)
{
	char *line = NULL;
	size_t len = 0, cap = 0;
	unsigned int nr = 0;
	int ret = 0;
	FILE *f;

	wl->path = path;
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "klp-convert: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &len, f) >= 0) {
		line[strcspn(line, "\n")] = '\0';
		if (want_parse_line(wl, line, ++nr, &cap))
			ret = -1;
	}
	free(line);
	fclose(f);
	return ret ? ret : want_dedup(wl);
}

static bool is_exported(struct conv *c, const char *name)
{
	return c->symvers &&
	       klp_symvers_lookup(c->symvers, name, c->modname);
}

static void pick_symbol(struct conv *c, size_t idx, const GElf_Sym *sym)
{
	const char *name = klp_elf_symname(&c->ke, sym);
	struct want *w = want_find(c->list, name);
	const struct klp_export *e;

	if (!w) {
		if (c->symvers && !is_exported(c, name) &&
		    GELF_ST_BIND(sym->st_info) != STB_WEAK &&
		    strcmp(name, "_GLOBAL_OFFSET_TABLE_"))
			conv_warn(c, "%s is undefined, not exported and not in %s: the module will not load",
				  name, c->list->path);
		return;
	}
	if (GELF_ST_BIND(sym->st_info) != STB_GLOBAL) {
		conv_err(c, "%s is a %s undefined symbol; only plain global references can become klp symbols (a klp symbol cannot be optional: livepatch fails the load instead of yielding NULL)",
			 name, GELF_ST_BIND(sym->st_info) == STB_WEAK ?
			 "weak" : "local");
		return;
	}
	e = c->symvers ? klp_symvers_lookup(c->symvers, name, c->modname) :
			 NULL;
	if (e) {
		conv_err(c, "%s is exported by %s (Module.symvers): call it as an ordinary exported symbol and remove it from %s",
			 name, e->module, c->list->path);
		return;
	}
	w->used = true;
	c->sym_want[idx] = w;
	c->nconv++;
}

/*
 * The list is shared by all kernel series, so a listed name this module
 * does not reference is fine -- but if this series exports it, say so.
 */
static void warn_exported_unused(struct conv *c)
{
	const struct klp_export *e;
	size_t i;

	for (i = 0; c->symvers && i < c->list->n; i++) {
		if (c->list->v[i].used)
			continue;
		e = klp_symvers_lookup(c->symvers, c->list->v[i].name,
				       c->modname);
		if (e)
			conv_warn(c, "%s (%s:%u) is exported by %s in this Module.symvers; not referenced, so ignored",
				  c->list->v[i].name, c->list->path,
				  c->list->v[i].line, e->module);
	}
}

static int pick_symbols(struct conv *c)
{
	GElf_Sym sym;
	size_t i;

	c->sym_want = klp_xmalloc(c->ke.nsyms * sizeof(*c->sym_want));
	for (i = 1; i < c->ke.nsyms; i++) {
		if (!gelf_getsym(c->ke.symdata, i, &sym)) {
			conv_err(c, "cannot read symbol %zu: %s", i,
				 elf_errmsg(-1));
			return -1;
		}
		if (sym.st_shndx == SHN_LIVEPATCH)
			c->nold++;
		if (sym.st_shndx == SHN_UNDEF && sym.st_name)
			pick_symbol(c, i, &sym);
	}
	warn_exported_unused(c);
	return c->errors ? -1 : 0;
}

static struct bucket *bucket_get(struct conv *c, const char *obj,
				 size_t target)
{
	struct bucket *b;
	size_t i;

	for (i = 0; i < c->nbuckets; i++) {
		b = &c->buckets[i];
		if (b->target == target && !strcmp(b->obj, obj))
			return b;
	}
	c->buckets = klp_xrealloc(c->buckets,
				  (c->nbuckets + 1) * sizeof(*c->buckets));
	b = &c->buckets[c->nbuckets++];
	memset(b, 0, sizeof(*b));
	b->obj = obj;
	b->target = target;
	return b;
}

static void bucket_add(struct bucket *b, const GElf_Rela *r)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 16;
		b->relas = klp_xrealloc(b->relas, b->cap * sizeof(*b->relas));
	}
	b->relas[b->n++] = *r;
}

static bool target_bytes_zero(struct conv *c, size_t target,
			      GElf_Addr off, int width)
{
	Elf_Data *data = klp_elf_data(&c->ke, target);
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

/*
 * May this relocation against a klp symbol be moved into a klp relocation
 * section?  The kernel applies it with the same apply_relocate_add() as
 * any other, so the x86 rules apply: known type, in bounds, zero target.
 */
static int check_move(struct conv *c, size_t target, const GElf_Shdr *tsh,
		      const GElf_Rela *r, const char *symname)
{
	const char *tname = klp_elf_secname(&c->ke, target);
	unsigned int type = GELF_R_TYPE(r->r_info);
	const char *why = klp_target_refusal(tname);
	int width = klp_rela_width(type);

	if (why) {
		conv_err(c, "%s+0x%lx references %s, but %s holds %s: klp relocations there are not supported (docs/klp-relocations.md, Limits)",
			 tname, (unsigned long)r->r_offset, symname, tname, why);
		return -1;
	}
	if (tsh->sh_type == SHT_NOBITS || width < 0) {
		conv_err(c, "%s+0x%lx references %s with %s relocation type %u, which the x86-64 module loader cannot apply",
			 tname, (unsigned long)r->r_offset, symname,
			 tsh->sh_type == SHT_NOBITS ? "a NOBITS target and" :
			 "unsupported", type);
		return -1;
	}
	if (r->r_offset + width > tsh->sh_size) {
		conv_err(c, "%s+0x%lx: relocation for %s lies outside the section",
			 tname, (unsigned long)r->r_offset, symname);
		return -1;
	}
	if (!target_bytes_zero(c, target, r->r_offset, width)) {
		conv_err(c, "%s+0x%lx: bytes under the relocation for %s are not zero; the kernel refuses such targets",
			 tname, (unsigned long)r->r_offset, symname);
		return -1;
	}
	return 0;
}

/* Split one normal .rela section into kept and moved entries. */
static void scan_rela(struct conv *c, size_t idx, const GElf_Shdr *sh)
{
	Elf_Data *data = klp_elf_data(&c->ke, idx);
	size_t i, n, target = sh->sh_info, nkeep = 0, moved = 0;
	const struct want *w;
	Elf64_Rela *keep;
	GElf_Shdr tsh;
	GElf_Rela r;
	GElf_Sym sym;

	if (!data || sh->sh_entsize != sizeof(Elf64_Rela) ||
	    klp_elf_shdr(&c->ke, target, &tsh)) {
		conv_err(c, "malformed relocation section %s",
			 klp_elf_secname(&c->ke, idx));
		return;
	}
	n = data->d_size / sizeof(Elf64_Rela);
	keep = klp_xmalloc(n * sizeof(*keep));
	for (i = 0; i < n && gelf_getrela(data, i, &r); i++) {
		size_t si = GELF_R_SYM(r.r_info);

		w = si < c->ke.nsyms ? c->sym_want[si] : NULL;
		if (!w || !GELF_R_TYPE(r.r_info) ||
		    !(tsh.sh_flags & SHF_ALLOC)) {
			/* Not ours, R_X86_64_NONE, or debug info. */
			if (w && GELF_R_TYPE(r.r_info))
				c->nnonalloc++;
			keep[nkeep++] = r;
			continue;
		}
		gelf_getsym(c->ke.symdata, si, &sym);
		if (check_move(c, target, &tsh, &r,
			       klp_elf_symname(&c->ke, &sym)))
			continue;
		bucket_add(bucket_get(c, w->obj, target), &r);
		moved++;
	}
	if (!moved) {
		free(keep);
		return;
	}
	c->rsecs = klp_xrealloc(c->rsecs, (c->nrsecs + 1) * sizeof(*c->rsecs));
	c->rsecs[c->nrsecs++] = (struct rsec){ idx, keep, nkeep };
	c->nmoved += moved;
}

static bool refs_converted(struct conv *c, size_t idx)
{
	Elf_Data *data = klp_elf_data(&c->ke, idx);
	size_t i, n;
	GElf_Rel r;

	n = data ? data->d_size / sizeof(Elf64_Rel) : 0;
	for (i = 0; i < n && gelf_getrel(data, i, &r); i++)
		if (GELF_R_SYM(r.r_info) < c->ke.nsyms &&
		    c->sym_want[GELF_R_SYM(r.r_info)])
			return true;
	return false;
}

static int scan_relocs(struct conv *c)
{
	GElf_Shdr sh;
	size_t i;

	for (i = 1; i < c->ke.shnum; i++) {
		if (klp_elf_shdr(&c->ke, i, &sh) || sh.sh_link != c->ke.symtab)
			continue;
		if (sh.sh_type == SHT_REL && refs_converted(c, i))
			conv_err(c, "SHT_REL section %s references a listed symbol; x86-64 modules use SHT_RELA only",
				 klp_elf_secname(&c->ke, i));
		if (sh.sh_type != SHT_RELA || (sh.sh_flags & SHF_RELA_LIVEPATCH))
			continue;
		scan_rela(c, i, &sh);
	}
	return c->errors ? -1 : 0;
}

static void strapp_init(struct conv *c, struct strapp *sa, size_t scn)
{
	Elf_Data *data = NULL;
	Elf_Scn *s = elf_getscn(c->ke.elf, scn);

	memset(sa, 0, sizeof(*sa));
	sa->scn = scn;
	while ((data = elf_getdata(s, data)))
		sa->base += data->d_size;
}

static size_t strapp_add(struct strapp *sa, const char *s)
{
	size_t len = strlen(s) + 1, off = sa->base + sa->len;

	if (sa->len + len > sa->cap) {
		sa->cap = (sa->len + len) * 2;
		sa->buf = klp_xrealloc(sa->buf, sa->cap);
	}
	memcpy(sa->buf + sa->len, s, len);
	sa->len += len;
	return off;
}

static int strapp_flush(struct conv *c, struct strapp *sa)
{
	Elf_Data *data;

	if (!sa->len)
		return 0;
	data = elf_newdata(elf_getscn(c->ke.elf, sa->scn));
	if (!data) {
		conv_err(c, "elf_newdata: %s", elf_errmsg(-1));
		return -1;
	}
	data->d_buf = sa->buf;
	data->d_size = sa->len;
	data->d_type = ELF_T_BYTE;
	data->d_align = 1;
	data->d_version = EV_CURRENT;
	return 0;
}

static int rename_symbols(struct conv *c, struct strapp *sa)
{
	char name[sizeof(KLP_SYM_PREFIX) + KLP_OBJ_MAX + KLP_NAME_MAX + 24];
	const struct want *w;
	GElf_Sym sym;
	size_t i;

	for (i = 1; i < c->ke.nsyms; i++) {
		w = c->sym_want[i];
		if (!w)
			continue;
		gelf_getsym(c->ke.symdata, i, &sym);
		snprintf(name, sizeof(name), KLP_SYM_PREFIX "%s.%s,%lu",
			 w->obj, w->name, w->pos);
		sym.st_name = strapp_add(sa, name);
		sym.st_shndx = SHN_LIVEPATCH;
		if (!gelf_update_sym(c->ke.symdata, i, &sym)) {
			conv_err(c, "gelf_update_sym: %s", elf_errmsg(-1));
			return -1;
		}
	}
	elf_flagdata(c->ke.symdata, ELF_C_SET, ELF_F_DIRTY);
	return 0;
}

static void shrink_relas(struct conv *c)
{
	Elf_Data *data;
	size_t i;

	for (i = 0; i < c->nrsecs; i++) {
		data = klp_elf_data(&c->ke, c->rsecs[i].idx);
		data->d_buf = c->rsecs[i].keep;
		data->d_size = c->rsecs[i].nkeep * sizeof(Elf64_Rela);
		elf_flagdata(data, ELF_C_SET, ELF_F_DIRTY);
	}
}

static size_t find_section(struct conv *c, const char *name)
{
	size_t i;

	for (i = 1; i < c->ke.shnum; i++)
		if (!strcmp(klp_elf_secname(&c->ke, i), name))
			return i;
	return 0;
}

static Elf_Scn *new_klp_section(struct conv *c, struct strapp *sa,
				const struct bucket *b, const char *name)
{
	Elf_Scn *scn = elf_newscn(c->ke.elf);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh)) {
		conv_err(c, "elf_newscn: %s", elf_errmsg(-1));
		return NULL;
	}
	memset(&sh, 0, sizeof(sh));
	sh.sh_name = strapp_add(sa, name);
	sh.sh_type = SHT_RELA;
	sh.sh_flags = KLP_RELA_FLAGS;
	sh.sh_link = c->ke.symtab;
	sh.sh_info = b->target;
	sh.sh_addralign = 8;
	sh.sh_entsize = sizeof(Elf64_Rela);
	if (!gelf_update_shdr(scn, &sh)) {
		conv_err(c, "gelf_update_shdr: %s", elf_errmsg(-1));
		return NULL;
	}
	return scn;
}

/* Existing klp sections (an earlier run with another list) are extended. */
static int emit_bucket(struct conv *c, struct strapp *sa,
		       const struct bucket *b)
{
	char name[512];
	Elf_Data *data;
	Elf_Scn *scn;
	size_t idx;

	snprintf(name, sizeof(name), KLP_RELA_PREFIX "%s.%s", b->obj,
		 klp_elf_secname(&c->ke, b->target));
	idx = find_section(c, name);
	scn = idx ? elf_getscn(c->ke.elf, idx) : new_klp_section(c, sa, b, name);
	if (!scn)
		return -1;
	data = elf_newdata(scn);
	if (!data) {
		conv_err(c, "elf_newdata: %s", elf_errmsg(-1));
		return -1;
	}
	data->d_buf = b->relas;
	data->d_size = b->n * sizeof(Elf64_Rela);
	data->d_type = ELF_T_RELA;
	data->d_align = 8;
	data->d_version = EV_CURRENT;
	return 0;
}

static int write_changes(struct conv *c)
{
	struct strapp syms, secs, *secp = &secs;
	size_t i;

	if (c->ke.shnum + c->nbuckets >= SHN_LORESERVE) {
		conv_err(c, "too many sections");
		return -1;
	}
	strapp_init(c, &syms, c->ke.strtab);
	strapp_init(c, &secs, c->ke.shstrndx);
	if (c->ke.strtab == c->ke.shstrndx)
		secp = &syms;
	if (rename_symbols(c, &syms))
		return -1;
	shrink_relas(c);
	for (i = 0; i < c->nbuckets; i++)
		if (emit_bucket(c, secp, &c->buckets[i]))
			return -1;
	c->strbufs[0] = syms.buf;
	c->strbufs[1] = secs.buf;
	if (strapp_flush(c, &syms) || strapp_flush(c, &secs))
		return -1;
	if (elf_update(c->ke.elf, ELF_C_WRITE) < 0) {
		conv_err(c, "elf_update: %s", elf_errmsg(-1));
		return -1;
	}
	return 0;
}

/* Returns 1 if the file was changed, 0 if nothing to do, -1 on error. */
static int convert(struct conv *c, const char *path)
{
	const char *err;
	int ret = -1;

	if (klp_elf_open(&c->ke, path, ELF_C_RDWR, &err)) {
		conv_err(c, "%s", err);
		return -1;
	}
	c->modname = klp_elf_modinfo(&c->ke, "name");
	if (pick_symbols(c))
		goto out;
	if (!c->nconv) {
		ret = 0;
		goto out;
	}
	if (scan_relocs(c) || write_changes(c))
		goto out;
	ret = 1;
out:
	klp_elf_close(&c->ke);
	return ret;
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	return n < 0 ? -1 : 0;
}

/* scripts/sign-file appends the signature after the ELF image. */
static bool is_signed(int fd, off_t size)
{
	char tail[sizeof(MODULE_SIG_STRING) - 1];
	size_t tl = sizeof(tail);

	return size >= (off_t)tl &&
	       pread(fd, tail, tl, size - tl) == (ssize_t)tl &&
	       !memcmp(tail, MODULE_SIG_STRING, tl);
}

/* Copy @in next to @out; we edit the copy and rename it into place. */
static char *make_temp_copy(const char *in, const char *out)
{
	char *dir_buf = klp_xstrdup(out), *tmp;
	struct stat st;
	int ifd, ofd;

	tmp = klp_xmalloc(strlen(out) + 32);
	sprintf(tmp, "%s/.klp-convert.XXXXXX", dirname(dir_buf));
	free(dir_buf);
	ifd = open(in, O_RDONLY);
	if (ifd < 0 || fstat(ifd, &st) < 0) {
		fprintf(stderr, "klp-convert: %s: %s\n", in, strerror(errno));
		goto err;
	}
	if (is_signed(ifd, st.st_size)) {
		fprintf(stderr, "klp-convert: %s: module is already signed; convert before signing (the rewrite would drop the signature)\n",
			in);
		goto err;
	}
	ofd = mkstemp(tmp);
	if (ofd < 0) {
		fprintf(stderr, "klp-convert: %s: %s\n", tmp, strerror(errno));
		goto err;
	}
	if (copy_fd(ifd, ofd) || fchmod(ofd, st.st_mode & 07777) ||
	    close(ofd)) {
		fprintf(stderr, "klp-convert: %s: %s\n", tmp, strerror(errno));
		unlink(tmp);
		goto err;
	}
	close(ifd);
	return tmp;
err:
	if (ifd >= 0)
		close(ifd);
	free(tmp);
	return NULL;
}

/* After klp_elf_close(): libelf no longer points at these buffers. */
static void conv_free(struct conv *c)
{
	size_t i;

	for (i = 0; i < c->nbuckets; i++)
		free(c->buckets[i].relas);
	for (i = 0; i < c->nrsecs; i++)
		free(c->rsecs[i].keep);
	free(c->buckets);
	free(c->rsecs);
	free(c->sym_want);
	free(c->strbufs[0]);
	free(c->strbufs[1]);
}

static void want_free(struct wantlist *wl)
{
	size_t i;

	for (i = 0; i < wl->n; i++) {
		free(wl->v[i].name);
		free(wl->v[i].obj);
	}
	free(wl->v);
}

static void report(const struct conv *c, const char *out)
{
	size_t i, nsec = 0;

	for (i = 0; i < c->nbuckets; i++)
		nsec += c->buckets[i].n != 0;
	printf("klp-convert: %s: %zu klp symbols, %zu klp relocations in %zu section(s) -> %s\n",
	       c->display, c->nconv, c->nmoved, nsec, out);
	if (c->nnonalloc)
		printf("klp-convert: %s: note: %zu reference(s) from non-allocated sections (debug info) left in place; the module loader never applies those\n",
		       c->display, c->nnonalloc);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: klp-convert --syms LIST [--symvers Module.symvers] IN.ko [OUT.ko]\n"
		"\n"
		"Rewrite references to the non-exported kernel symbols named in LIST\n"
		"(lines 'NAME [SYMPOS [OBJECT]]', '#' comments, SYMPOS 0 = unique,\n"
		"OBJECT vmlinux by default) into livepatch relocations.  IN.ko is\n"
		"rewritten in place unless OUT.ko is given.  Listed names the module\n"
		"does not reference are ignored; a referenced name that --symvers\n"
		"says is exported is an error.  Exit status 1 on error (the file is\n"
		"then left untouched), 2 on bad usage.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "syms", required_argument, NULL, 's' },
		{ "symvers", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *list_path = NULL, *symvers_path = NULL, *in, *out;
	struct klp_symvers symvers;
	struct wantlist list = { };
	struct conv c = { };
	char *tmp;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			list_path = optarg;
			break;
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
	if (!list_path || optind >= argc || argc - optind > 2) {
		usage(stderr);
		return 2;
	}
	in = argv[optind];
	out = argc - optind == 2 ? argv[optind + 1] : in;

	if (want_load(&list, list_path))
		return 1;
	if (symvers_path) {
		if (klp_symvers_load(&symvers, symvers_path)) {
			fprintf(stderr, "klp-convert: %s: %s\n", symvers_path,
				strerror(errno));
			return 1;
		}
		c.symvers = &symvers;
	}
	c.display = in;
	c.list = &list;

	tmp = make_temp_copy(in, out);
	if (!tmp) {
		ret = -1;
		goto out;
	}
	ret = convert(&c, tmp);
	if (ret < 0 || (ret == 0 && !strcmp(in, out))) {
		unlink(tmp);
		if (ret == 0)
			printf("klp-convert: %s: nothing to convert (%zu klp symbols already present), left unchanged\n",
			       in, c.nold);
	} else if (rename(tmp, out)) {
		fprintf(stderr, "klp-convert: %s: %s\n", out, strerror(errno));
		unlink(tmp);
		ret = -1;
	} else if (ret == 0) {
		printf("klp-convert: %s: nothing to convert (%zu klp symbols already present), copied unchanged to %s\n",
		       in, c.nold, out);
	} else {
		report(&c, out);
	}
	free(tmp);
	conv_free(&c);
out:
	want_free(&list);
	if (c.symvers)
		klp_symvers_free(&symvers);
	return ret < 0 ? 1 : 0;
}
