// SPDX-License-Identifier: GPL-2.0
/*
 * Output layer: every field is printed by one call that writes either the
 * text form (through a printf format) or the JSON member, so the two
 * cannot drift.  Errors and notes go through p_err()/p_note() so -j turns
 * them into JSON as well.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mmfixctl.h"

static struct json_writer jw;

void print_start(void)
{
	jw_init(&jw, stdout, opts.pretty);
}

int print_end(void)
{
	if (opts.json)
		jw_finish(&jw);
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	fprintf(stderr, BIN_NAME ": cannot write the output: %m\n");
	return -1;
}

/*
 * A copy of s safe to show on a terminal: control characters (C0, DEL,
 * C1) and invalid UTF-8 become '?'.  Never longer than s.
 */
static char *text_sanitize(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	char *out = malloc(strlen(str) + 1), *o = out;
	size_t n;

	if (!out)
		return NULL;
	while (*s) {
		n = utf8_seq_len(s);
		if (n == 1 && *s >= 0x20 && *s != 0x7f) {
			*o++ = (char)*s++;
		} else if (n > 1 && !(n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			*o++ = '?';
			s += n ? n : 1;
		}
	}
	*o = '\0';
	return out;
}

static void text_field(const char *fmt, const char *val)
{
	char *clean;

	if (!fmt)	/* JSON-only field */
		return;
	clean = text_sanitize(val);
	printf(fmt, clean ? clean : "-");
	free(clean);
}

static void json_key(const char *key)
{
	if (key && jw.depth && jw.is_object[jw.depth])
		jw_key(&jw, key);
}

/* Every top-level object starts with the schema version of its keys. */
static void json_top_object(void)
{
	bool top = !jw.depth;

	jw_start_object(&jw);
	if (top) {
		jw_key(&jw, "schema");
		jw_u64(&jw, MMFIXCTL_SCHEMA);
	}
}

void print_open_object(const char *key)
{
	if (!opts.json)
		return;
	json_key(key);
	json_top_object();
}

void print_doc_end(void)
{
	if (!opts.json) {
		fflush(stdout);
		return;
	}
	jw_finish(&jw);
	jw_init(&jw, stdout, opts.pretty);
}

void print_close_object(void)
{
	if (opts.json)
		jw_end_object(&jw);
}

void print_open_array(const char *key)
{
	if (!opts.json)
		return;
	json_key(key);
	jw_start_array(&jw);
}

void print_close_array(void)
{
	if (opts.json)
		jw_end_array(&jw);
}

void print_string(const char *key, const char *fmt, const char *val)
{
	if (opts.json) {
		json_key(key);
		jw_string(&jw, val);
	} else {
		text_field(fmt, val ? val : "-");
	}
}

void print_u64(const char *key, const char *fmt, const uint64_t *val)
{
	char buf[24];

	if (opts.json) {
		json_key(key);
		if (val)
			jw_u64(&jw, *val);
		else
			jw_null(&jw);
	} else {
		if (val)
			snprintf(buf, sizeof(buf), "%llu",
				 (unsigned long long)*val);
		text_field(fmt, val ? buf : "-");
	}
}

void print_double(const char *key, const char *fmt, const double *val)
{
	char buf[32];

	if (opts.json) {
		json_key(key);
		if (val)
			jw_double(&jw, *val);
		else
			jw_null(&jw);
	} else {
		if (val)
			snprintf(buf, sizeof(buf), "%.4g", *val);
		text_field(fmt, val ? buf : "-");
	}
}

const char *fmt_ns(char *buf, size_t size, double ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	unsigned int u = 0;

	while (ns >= 999.5 && u < 3) {
		ns /= 1000;
		u++;
	}
	if (!u || ns >= 99.95)
		snprintf(buf, size, "%.0f %s", ns, unit[u]);
	else if (ns >= 9.995)
		snprintf(buf, size, "%.1f %s", ns, unit[u]);
	else
		snprintf(buf, size, "%.2f %s", ns, unit[u]);
	return buf;
}

void print_ns(const char *key, const char *fmt, const uint64_t *val)
{
	char buf[24];

	if (opts.json) {
		print_u64(key, fmt, val);
		return;
	}
	text_field(fmt, val ? fmt_ns(buf, sizeof(buf), (double)*val) : "-");
}

bool name_is_ns(const char *name)
{
	size_t len = strlen(name);

	return len > 3 && !strcmp(name + len - 3, "_ns");
}

void print_bool_words(const char *key, const char *fmt, int val,
		      const char *yes, const char *no, const char *unk)
{
	if (opts.json) {
		json_key(key);
		if (val < 0)
			jw_null(&jw);
		else
			jw_bool(&jw, val);
	} else {
		text_field(fmt, val < 0 ? unk : val ? yes : no);
	}
}

void print_bool(const char *key, const char *fmt, int val)
{
	print_bool_words(key, fmt, val, "yes", "no", "-");
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	if (opts.json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static void text_msg(const char *prefix, const char *msg)
{
	char *clean = text_sanitize(msg);

	fflush(stdout);
	fprintf(stderr, BIN_NAME ": %s%s\n", prefix, clean ? clean : msg);
	free(clean);
}

/* Adds key: msg to the top-level JSON object, opening one if need be. */
static void json_msg(const char *key, const char *msg)
{
	if (jw.done && !jw.depth) {	/* document complete: no room left */
		text_msg("", msg);
		return;
	}
	if (!jw.depth)
		json_top_object();
	while (jw.depth > 1)
		jw_close(&jw);
	if (jw.is_object[1]) {
		jw_key(&jw, key);
		jw_string(&jw, msg);
	}
}

static void vmsg(const char *key, const char *prefix, const char *fmt,
		 va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (opts.json)
		json_msg(key, msg);
	else
		text_msg(prefix, msg);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error", "", fmt, ap);
	va_end(ap);
}

void p_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("note", "note: ", fmt, ap);
	va_end(ap);
}

int usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error", "", fmt, ap);
	va_end(ap);
	if (!opts.json)
		fprintf(stderr, "Try '" BIN_NAME " help' for more information.\n");
	return EXIT_USAGE;
}

void p_progress(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (opts.json)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	text_msg("", msg);
}

const char *arg_disp(const char *s, char *buf, size_t size)
{
	size_t len = strlen(s);

	if (len <= 64 && len < size) {
		memcpy(buf, s, len + 1);
	} else if (size > 68) {
		memcpy(buf, s, 64);
		strcpy(buf + 64, "...");
	} else if (size) {
		buf[0] = '\0';
	}
	return buf;
}
