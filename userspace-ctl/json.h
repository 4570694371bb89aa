/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny streaming JSON writer: objects, arrays, strings, u64, bools and
 * null, compact or indented.  Strings are escaped so the output is valid
 * JSON whatever bytes come in: control characters become \u00XX, valid
 * UTF-8 passes through, every invalid byte becomes \ufffd.
 */
#ifndef MMFIXCTL_JSON_H
#define MMFIXCTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	16

struct json_writer {
	FILE *out;
	bool pretty;
	bool after_key;		/* a key was written, its value comes next */
	bool done;		/* a complete top-level value was written */
	unsigned int depth;
	bool nonempty[JSON_MAX_DEPTH + 1];
	bool is_object[JSON_MAX_DEPTH + 1];
};

void jw_init(struct json_writer *jw, FILE *out, bool pretty);
void jw_key(struct json_writer *jw, const char *key);
void jw_start_object(struct json_writer *jw);
void jw_end_object(struct json_writer *jw);
void jw_start_array(struct json_writer *jw);
void jw_end_array(struct json_writer *jw);
/* Closes the innermost open object or array. */
void jw_close(struct json_writer *jw);
/* A NULL string is written as null. */
void jw_string(struct json_writer *jw, const char *s);
void jw_u64(struct json_writer *jw, uint64_t v);
/* Six significant digits; null when not finite. */
void jw_double(struct json_writer *jw, double v);
void jw_bool(struct json_writer *jw, bool v);
void jw_null(struct json_writer *jw);
/* Closes whatever is open and ends the document with a newline. */
void jw_finish(struct json_writer *jw);

/* Writes s as a quoted, escaped JSON string. */
void json_put_string(FILE *out, const char *s);
/*
 * Length (1-4) of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 if the bytes
 * at s are not one.  s must be NUL-terminated.
 */
size_t utf8_seq_len(const unsigned char *s);

#endif /* MMFIXCTL_JSON_H */
