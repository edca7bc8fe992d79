// SPDX-License-Identifier: GPL-2.0
/* A small JSON writer; see tdm_json.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_json.h"

void tdm_json_init(struct tdm_json *j)
{
	memset(j, 0, sizeof(*j));
	j->first[0] = true;
}

void tdm_json_free(struct tdm_json *j)
{
	free(j->buf);
	memset(j, 0, sizeof(*j));
}

static void put(struct tdm_json *j, const char *s, size_t n)
{
	if (j->error)
		return;
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : 256;
		char *b;

		while (j->len + n + 1 > cap)
			cap *= 2;
		b = realloc(j->buf, cap);
		if (!b) {
			j->error = true;
			return;
		}
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void puts_(struct tdm_json *j, const char *s)
{
	put(j, s, strlen(s));
}

static void put_string(struct tdm_json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];

	put(j, "\"", 1);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			puts_(j, "\\\"");
			break;
		case '\\':
			puts_(j, "\\\\");
			break;
		case '\n':
			puts_(j, "\\n");
			break;
		case '\t':
			puts_(j, "\\t");
			break;
		case '\r':
			puts_(j, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				puts_(j, esc);
			} else {
				put(j, (const char *)p, 1);
			}
		}
	}
	put(j, "\"", 1);
}

/* Comma and key before a value at the current depth. */
static void member(struct tdm_json *j, const char *key)
{
	if (!j->first[j->depth])
		put(j, ",", 1);
	j->first[j->depth] = false;
	if (key) {
		put_string(j, key);
		put(j, ":", 1);
	}
}

static void open_(struct tdm_json *j, const char *key, const char *br)
{
	member(j, key);
	put(j, br, 1);
	if (j->depth + 1 >= TDM_JSON_DEPTH) {
		j->error = true;
		return;
	}
	j->first[++j->depth] = true;
}

static void close_(struct tdm_json *j, const char *br)
{
	if (j->depth == 0) {
		j->error = true;
		return;
	}
	j->depth--;
	put(j, br, 1);
}

void tdm_json_obj_open(struct tdm_json *j, const char *key)
{
	open_(j, key, "{");
}

void tdm_json_obj_close(struct tdm_json *j)
{
	close_(j, "}");
}

void tdm_json_arr_open(struct tdm_json *j, const char *key)
{
	open_(j, key, "[");
}

void tdm_json_arr_close(struct tdm_json *j)
{
	close_(j, "]");
}

void tdm_json_str(struct tdm_json *j, const char *key, const char *v)
{
	member(j, key);
	put_string(j, v ? v : "");
}

void tdm_json_u64(struct tdm_json *j, const char *key, uint64_t v)
{
	char b[24];

	member(j, key);
	snprintf(b, sizeof(b), "%" PRIu64, v);
	puts_(j, b);
}

void tdm_json_s64(struct tdm_json *j, const char *key, int64_t v)
{
	char b[24];

	member(j, key);
	snprintf(b, sizeof(b), "%" PRId64, v);
	puts_(j, b);
}

void tdm_json_bool(struct tdm_json *j, const char *key, bool v)
{
	member(j, key);
	puts_(j, v ? "true" : "false");
}

void tdm_json_null(struct tdm_json *j, const char *key)
{
	member(j, key);
	puts_(j, "null");
}

const char *tdm_json_finish(struct tdm_json *j)
{
	if (j->error || j->depth != 0)
		return NULL;
	put(j, "\n", 1);
	return j->error ? NULL : j->buf;
}
