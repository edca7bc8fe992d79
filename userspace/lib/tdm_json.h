/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON writer into a growing buffer (in the spirit of iproute2's
 * json_writer): objects, arrays, strings escaped per RFC 8259, numbers.
 * Commas and nesting are tracked; errors (out of memory, nesting too deep)
 * are sticky and reported by tdm_json_finish().
 */
#ifndef TDM_JSON_H
#define TDM_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TDM_JSON_DEPTH	16

struct tdm_json {
	char *buf;
	size_t len, cap;
	int depth;
	bool first[TDM_JSON_DEPTH];	/* no member written yet at depth */
	bool error;
};

void tdm_json_init(struct tdm_json *j);
void tdm_json_free(struct tdm_json *j);
/* The text (NUL-terminated), or NULL after an error or unbalanced nesting. */
const char *tdm_json_finish(struct tdm_json *j);

/* key may be NULL inside arrays and at the top level. */
void tdm_json_obj_open(struct tdm_json *j, const char *key);
void tdm_json_obj_close(struct tdm_json *j);
void tdm_json_arr_open(struct tdm_json *j, const char *key);
void tdm_json_arr_close(struct tdm_json *j);
void tdm_json_str(struct tdm_json *j, const char *key, const char *v);
void tdm_json_u64(struct tdm_json *j, const char *key, uint64_t v);
void tdm_json_s64(struct tdm_json *j, const char *key, int64_t v);
void tdm_json_bool(struct tdm_json *j, const char *key, bool v);
void tdm_json_null(struct tdm_json *j, const char *key);

#endif
