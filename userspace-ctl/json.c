// SPDX-License-Identifier: GPL-2.0
/*
 * JSON writer for mmfixctl -j/-p (see json.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include "json.h"

size_t utf8_seq_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;	/* continuation byte, C0/C1 overlong lead, > F4 */

	/* The second byte's range excludes overlongs, surrogates, > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	/* A NUL terminator fails this test, so we never read past it. */
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void json_put_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;

	fputc('"', out);
	while (*s) {
		n = utf8_seq_len(s);
		if (*s == '"' || *s == '\\') {
			fputc('\\', out);
			fputc(*s++, out);
		} else if (*s < 0x20 || *s == 0x7f) {
			fprintf(out, "\\u%04x", *s++);
		} else if (n) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fputs("\\ufffd", out);
			s++;
		}
	}
	fputc('"', out);
}

void jw_init(struct json_writer *jw, FILE *out, bool pretty)
{
	*jw = (struct json_writer){ .out = out, .pretty = pretty };
}

static void jw_indent(struct json_writer *jw, unsigned int depth)
{
	fputc('\n', jw->out);
	while (depth--)
		fputs("  ", jw->out);
}

/* Separator before a key or an array element. */
static void jw_sep(struct json_writer *jw)
{
	if (!jw->depth)
		return;
	if (jw->nonempty[jw->depth])
		fputc(',', jw->out);
	jw->nonempty[jw->depth] = true;
	if (jw->pretty)
		jw_indent(jw, jw->depth);
}

static void jw_pre_value(struct json_writer *jw)
{
	if (jw->after_key)
		jw->after_key = false;
	else
		jw_sep(jw);
	if (!jw->depth)
		jw->done = true;
}

void jw_key(struct json_writer *jw, const char *key)
{
	jw_sep(jw);
	json_put_string(jw->out, key);
	fputs(jw->pretty ? ": " : ":", jw->out);
	jw->after_key = true;
}

static void jw_start(struct json_writer *jw, bool object)
{
	/* Nesting is fixed by the code; running out is a bug, not input. */
	if (jw->depth >= JSON_MAX_DEPTH)
		abort();
	jw_pre_value(jw);
	fputc(object ? '{' : '[', jw->out);
	jw->depth++;
	jw->nonempty[jw->depth] = false;
	jw->is_object[jw->depth] = object;
}

void jw_close(struct json_writer *jw)
{
	if (!jw->depth)
		return;
	if (jw->after_key)	/* a key without a value: give it one */
		jw_null(jw);
	if (jw->pretty && jw->nonempty[jw->depth])
		jw_indent(jw, jw->depth - 1);
	fputc(jw->is_object[jw->depth] ? '}' : ']', jw->out);
	jw->depth--;
}

void jw_start_object(struct json_writer *jw)
{
	jw_start(jw, true);
}

void jw_end_object(struct json_writer *jw)
{
	jw_close(jw);
}

void jw_start_array(struct json_writer *jw)
{
	jw_start(jw, false);
}

void jw_end_array(struct json_writer *jw)
{
	jw_close(jw);
}

void jw_string(struct json_writer *jw, const char *s)
{
	if (!s) {
		jw_null(jw);
		return;
	}
	jw_pre_value(jw);
	json_put_string(jw->out, s);
}

void jw_u64(struct json_writer *jw, uint64_t v)
{
	jw_pre_value(jw);
	fprintf(jw->out, "%" PRIu64, v);
}

void jw_double(struct json_writer *jw, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		jw_null(jw);
		return;
	}
	jw_pre_value(jw);
	/* %.6g may give "1e+06": valid JSON; never "inf" or "nan" here */
	snprintf(buf, sizeof(buf), "%.6g", v);
	fputs(buf, jw->out);
}

void jw_bool(struct json_writer *jw, bool v)
{
	jw_pre_value(jw);
	fputs(v ? "true" : "false", jw->out);
}

void jw_null(struct json_writer *jw)
{
	jw_pre_value(jw);
	fputs("null", jw->out);
}

void jw_finish(struct json_writer *jw)
{
	while (jw->depth)
		jw_close(jw);
	if (jw->done)
		fputc('\n', jw->out);
	fflush(jw->out);
}
