/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader for configuration files in the style of linuxptp:
 *
 *   # comment (also after a value)
 *   [global]
 *   key   value words...
 *   [sender alpha]
 *   window 0 3ms
 *
 * Section headers are "[name]" or "[name argument]".  Keys before the first
 * section belong to "global".  The reader only splits; the callbacks give
 * the meaning and report errors with the line number it passes.
 */
#ifndef TDM_CFG_H
#define TDM_CFG_H

#include <stddef.h>

#define TDM_CFG_MAX_ARGS	8
#define TDM_CFG_MAX_LINE	1024

struct tdm_cfg_line {
	const char *file;	/* name used in messages */
	int lineno;
	const char *section;	/* "global", "sender", "auto", ... */
	const char *section_arg; /* "alpha" in "[sender alpha]", or NULL */
	const char *key;	/* NULL for a section header line */
	int argc;		/* values after the key */
	const char *argv[TDM_CFG_MAX_ARGS];
};

/*
 * Called for every section header (key == NULL) and every key line.
 * Return 0 to go on, or -1 after writing a message (without the
 * "file:line: " prefix, which the reader adds) into err.
 */
typedef int (*tdm_cfg_cb)(void *ctx, const struct tdm_cfg_line *l,
			  char *err, size_t errlen);

/*
 * Parse text (NUL-terminated).  On error returns -1 and err holds
 * "file:line: message".  Syntax errors found by the reader itself:
 * unterminated section header, empty section name, line too long, too many
 * values, a key line with no value.
 */
int tdm_cfg_parse_text(const char *text, const char *file, tdm_cfg_cb cb,
		       void *ctx, char *err, size_t errlen);

/* Read a file (at most 1 MiB) and parse it; errors as above, plus
 * "file: cannot open: reason".
 */
int tdm_cfg_parse_file(const char *path, tdm_cfg_cb cb, void *ctx,
		       char *err, size_t errlen);

/* Read a whole file into a malloc'd NUL-terminated buffer (max bytes). */
char *tdm_read_file(const char *path, size_t max, size_t *len,
		    char *err, size_t errlen);

/*
 * Replace path with len bytes of data, atomically: a reader sees the old
 * file or the new one, never a part, even across a crash.  Written to a
 * temporary file in the same directory ("PATH.tmp.XXXXXX"), given mode,
 * fsync'ed, renamed over path, and the directory fsync'ed.  0, or -1
 * with "path: what failed: reason" in err (nothing left behind).
 */
int tdm_write_file_atomic(const char *path, const void *data, size_t len,
			  unsigned int mode, char *err, size_t errlen);

#endif
