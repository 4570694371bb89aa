// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of userspace-ctl/json.c: exact output of the writer, compact
 * and indented, and string escaping (control characters, valid and
 * invalid UTF-8).  Prints one "ok"/"not ok" line per case; exits 1 on
 * any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"

static int failures;

static void expect(const char *name, const char *got, const char *want)
{
	if (strcmp(got, want)) {
		printf("not ok %s: got [%s] want [%s]\n", name, got, want);
		failures++;
	} else {
		printf("ok %s\n", name);
	}
}

static char *escaped(const char *in)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	json_put_string(f, in);
	fclose(f);
	return buf;
}

static void expect_escape(const char *name, const char *in, const char *want)
{
	char *got = escaped(in);

	expect(name, got, want);
	free(got);
}

static char *document(bool pretty)
{
	struct json_writer jw;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	jw_init(&jw, f, pretty);
	jw_start_object(&jw);
	jw_key(&jw, "n");
	jw_u64(&jw, 18446744073709551615ULL);
	jw_key(&jw, "list");
	jw_start_array(&jw);
	jw_bool(&jw, true);
	jw_bool(&jw, false);
	jw_null(&jw);
	jw_string(&jw, "x");
	jw_string(&jw, NULL);
	jw_end_array(&jw);
	jw_key(&jw, "empty");
	jw_start_object(&jw);
	jw_end_object(&jw);
	jw_key(&jw, "dangling");	/* no value: must become null */
	jw_finish(&jw);
	fclose(f);
	return buf;
}

static void test_utf8_seq_len(void)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{ "a", 1 }, { "\xc3\xa9", 2 }, { "\xe6\x97\xa5", 3 },
		{ "\xf0\x9f\x98\x80", 4 }, { "\xf4\x8f\xbf\xbf", 4 },
		{ "\xc0\xaf", 0 }, { "\xc1\xbf", 0 }, { "\xe0\x80\xaf", 0 },
		{ "\xed\xa0\x80", 0 }, { "\xf0\x80\x80\xaf", 0 },
		{ "\xf4\x90\x80\x80", 0 }, { "\xf5\x80\x80\x80", 0 },
		{ "\x80", 0 }, { "\xbf", 0 }, { "\xe6\x97", 0 }, { "\xc3", 0 },
	};
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t got = utf8_seq_len((const unsigned char *)cases[i].s);

		snprintf(name, sizeof(name), "utf8_seq_len case %zu", i);
		if (got != cases[i].len) {
			printf("not ok %s: got %zu want %zu\n", name, got,
			       cases[i].len);
			failures++;
		} else {
			printf("ok %s\n", name);
		}
	}
}

int main(void)
{
	char *doc;

	expect_escape("plain", "abc", "\"abc\"");
	expect_escape("empty", "", "\"\"");
	expect_escape("quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\"");
	expect_escape("C0 controls as \\u00XX", "\x01\t\n\x1b\x1f",
		      "\"\\u0001\\u0009\\u000a\\u001b\\u001f\"");
	expect_escape("DEL as \\u007f", "\x7f", "\"\\u007f\"");
	expect_escape("valid UTF-8 passes", "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80",
		      "\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"");
	expect_escape("lone bytes replaced", "a\xff" "b\x80",
		      "\"a\\ufffdb\\ufffd\"");
	expect_escape("overlong replaced per byte", "\xc0\xaf",
		      "\"\\ufffd\\ufffd\"");
	expect_escape("surrogate replaced", "\xed\xa0\x80",
		      "\"\\ufffd\\ufffd\\ufffd\"");
	expect_escape("above U+10FFFF replaced", "\xf4\x90\x80\x80",
		      "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	expect_escape("truncated sequence at end", "x\xe6\x97",
		      "\"x\\ufffd\\ufffd\"");

	doc = document(false);
	expect("compact document", doc,
	       "{\"n\":18446744073709551615,\"list\":[true,false,null,\"x\",null],"
	       "\"empty\":{},\"dangling\":null}\n");
	free(doc);
	doc = document(true);
	expect("pretty document", doc,
	       "{\n"
	       "  \"n\": 18446744073709551615,\n"
	       "  \"list\": [\n"
	       "    true,\n"
	       "    false,\n"
	       "    null,\n"
	       "    \"x\",\n"
	       "    null\n"
	       "  ],\n"
	       "  \"empty\": {},\n"
	       "  \"dangling\": null\n"
	       "}\n");
	free(doc);
	test_utf8_seq_len();
	return failures ? 1 : 0;
}
