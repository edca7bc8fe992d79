// SPDX-License-Identifier: GPL-2.0
/*
 * linuxptp-style configuration reader: splits lines into section headers
 * and "key value..." lines and hands them to a callback.  It knows no
 * keys; the callback gives them meaning.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tdm_util.h"
#include "tdm_cfg.h"

#define CFG_MSG_MAX	1024
#define CFG_MAX_FILE	(1024 * 1024)

struct cfg_reader {
	const char *file;
	int lineno;
	char section[TDM_CFG_MAX_LINE];
	char section_arg[TDM_CFG_MAX_LINE];
	bool has_arg;
	char buf[TDM_CFG_MAX_LINE];	/* this line, split in place */
	char msg[CFG_MSG_MAX];
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}


/* Fail with "file:line: message"; also used for the callbacks' messages. */
static int cfg_fail(const struct cfg_reader *r, char *err, size_t errlen,
		    const char *msg)
{
	return tdm_set_err_at(err, errlen, r->file, r->lineno, "%s", msg);
}

/* Split s in place into at most max words; returns how many, or max + 1. */
static int split_words(char *s, char **words, int max)
{
	int n = 0;

	for (;;) {
		while (is_space(*s))
			s++;
		if (!*s)
			return n;
		if (n == max)
			return max + 1;
		words[n++] = s;
		while (*s && !is_space(*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

static int run_cb(struct cfg_reader *r, tdm_cfg_cb cb, void *ctx,
		  const struct tdm_cfg_line *l, char *err, size_t errlen)
{
	r->msg[0] = '\0';
	if (!cb(ctx, l, r->msg, sizeof(r->msg)))
		return 0;
	return cfg_fail(r, err, errlen, r->msg[0] ? r->msg : "invalid line");
}

static int section_line(struct cfg_reader *r, char *s, tdm_cfg_cb cb,
			void *ctx, char *err, size_t errlen)
{
	struct tdm_cfg_line l = { .file = r->file, .lineno = r->lineno };
	char *end = strchr(s, ']'), *words[2];
	int n;

	if (!end)
		return cfg_fail(r, err, errlen, "unterminated section header");
	*end++ = '\0';
	while (is_space(*end))
		end++;
	if (*end)
		return cfg_fail(r, err, errlen,
				"unexpected text after section header");
	n = split_words(s + 1, words, 2);
	if (n == 0)
		return cfg_fail(r, err, errlen, "empty section name");
	if (n > 2)
		return cfg_fail(r, err, errlen,
				"section header has more than one argument");
	/* Both fit: they come from a line shorter than the buffers. */
	strcpy(r->section, words[0]);
	r->has_arg = n == 2;
	if (r->has_arg)
		strcpy(r->section_arg, words[1]);
	l.section = r->section;
	l.section_arg = r->has_arg ? r->section_arg : NULL;
	return run_cb(r, cb, ctx, &l, err, errlen);
}

static int key_line(struct cfg_reader *r, char *s, tdm_cfg_cb cb, void *ctx,
		    char *err, size_t errlen)
{
	struct tdm_cfg_line l = {
		.file = r->file,
		.lineno = r->lineno,
		.section = r->section,
		.section_arg = r->has_arg ? r->section_arg : NULL,
	};
	char *words[TDM_CFG_MAX_ARGS + 1];
	int n, i;

	n = split_words(s, words, TDM_CFG_MAX_ARGS + 1);
	if (n > TDM_CFG_MAX_ARGS + 1) {
		/* words[0] is the key, still terminated by split_words. */
		snprintf(r->msg, sizeof(r->msg),
			 "too many values for '%s' (max %d)", words[0],
			 TDM_CFG_MAX_ARGS);
		return cfg_fail(r, err, errlen, r->msg);
	}
	if (n == 1) {
		snprintf(r->msg, sizeof(r->msg), "'%s' has no value", words[0]);
		return cfg_fail(r, err, errlen, r->msg);
	}
	l.key = words[0];
	l.argc = n - 1;
	for (i = 1; i < n; i++)
		l.argv[i - 1] = words[i];
	return run_cb(r, cb, ctx, &l, err, errlen);
}

static int one_line(struct cfg_reader *r, tdm_cfg_cb cb, void *ctx,
		    char *err, size_t errlen)
{
	char *s = r->buf, *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	while (is_space(*s))
		s++;
	if (!*s)
		return 0;
	if (*s == '[')
		return section_line(r, s, cb, ctx, err, errlen);
	return key_line(r, s, cb, ctx, err, errlen);
}

int tdm_cfg_parse_text(const char *text, const char *file, tdm_cfg_cb cb,
		       void *ctx, char *err, size_t errlen)
{
	struct cfg_reader *r;
	const char *p, *nl;
	size_t len;
	int ret = 0;

	/* About 4 KiB of buffers: keep them off the (daemon thread) stack. */
	r = calloc(1, sizeof(*r));
	if (!r) {
		tdm_set_err(err, errlen, "%s: out of memory",
			file ? file : "config");
		return -1;
	}
	r->file = file;
	strcpy(r->section, "global");
	if (!text)
		text = "";
	p = text;

	while (*p) {
		r->lineno++;
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len >= TDM_CFG_MAX_LINE) {
			snprintf(r->msg, sizeof(r->msg),
				 "line too long (max %d characters)",
				 TDM_CFG_MAX_LINE - 1);
			ret = cfg_fail(r, err, errlen, r->msg);
			break;
		}
		memcpy(r->buf, p, len);
		r->buf[len] = '\0';
		ret = one_line(r, cb, ctx, err, errlen);
		if (ret)
			break;
		p += len;
		if (*p)
			p++;	/* the newline */
	}
	free(r);
	return ret;
}

char *tdm_read_file(const char *path, size_t max, size_t *len,
		    char *err, size_t errlen)
{
	size_t cap = 4096, n = 0;
	char *buf = NULL, *nbuf;
	ssize_t got;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		tdm_set_err(err, errlen, "%s: cannot open: %s", path, strerror(e));
		return NULL;
	}
	/* Read until EOF rather than trusting st_size: pipes, /proc. */
	for (;;) {
		if (!buf || n == cap) {
			if (buf)
				cap *= 2;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				tdm_set_err(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			buf = nbuf;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			e = errno;
			tdm_set_err(err, errlen, "%s: cannot read: %s", path,
				 strerror(e));
			goto fail;
		}
		if (!got)
			break;
		n += (size_t)got;
		if (n > max) {
			tdm_set_err(err, errlen, "%s: larger than %zu bytes",
				 path, max);
			goto fail;
		}
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

int tdm_cfg_parse_file(const char *path, tdm_cfg_cb cb, void *ctx,
		       char *err, size_t errlen)
{
	size_t len;
	char *text;
	int ret;

	text = tdm_read_file(path, CFG_MAX_FILE, &len, err, errlen);
	if (!text)
		return -1;
	/* A NUL would silently end the text early. */
	if (strlen(text) != len) {
		tdm_set_err(err, errlen, "%s: contains a NUL byte", path);
		free(text);
		return -1;
	}
	ret = tdm_cfg_parse_text(text, path, cb, ctx, err, errlen);
	free(text);
	return ret;
}

/* Write all of data to fd; 0 or -1 with errno. */
static int write_all(int fd, const char *data, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* fsync the directory path is in, so that a rename in it is durable. */
static int sync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc;

	if (tdm_strlcpy(dir, path, sizeof(dir))) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int tdm_write_file_atomic(const char *path, const void *data, size_t len,
			  unsigned int mode, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	const char *what;
	int fd, e;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return tdm_set_err(err, errlen, "%s: name too long", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return tdm_set_err(err, errlen, "%s: cannot create %s: %s",
				   path, tmp, strerror(e));
	}
	what = "cannot set the mode";
	if (fchmod(fd, mode))
		goto fail;
	what = "cannot write";
	if (write_all(fd, data, len))
		goto fail;
	what = "cannot fsync";
	if (fsync(fd))
		goto fail;
	what = "cannot close";
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	what = "cannot rename over it";
	if (rename(tmp, path))
		goto fail;
	if (sync_dir_of(path)) {
		e = errno;
		/* Renamed: the new file is there, its directory entry not yet
		 * on disk.
		 */
		return tdm_set_err(err, errlen, "%s: cannot fsync its directory: %s",
				   path, strerror(e));
	}
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return tdm_set_err(err, errlen, "%s: %s (%s): %s", path, what, tmp,
			   strerror(e));
}
