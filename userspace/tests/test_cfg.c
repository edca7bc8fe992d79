// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the linuxptp-style configuration reader (tdm_cfg): how it
 * splits lines, every syntax error it reports itself, callbacks' errors,
 * and reading files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_cfg.h"
#include "tdm_util.h"

/* What the callback saw, one line per call. */
struct transcript {
	char text[8192];
	size_t len;
	int calls;
	const char *fail_key;	/* return -1 at this key */
	const char *fail_msg;	/* with this message */
};

static void add(struct transcript *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct transcript *t, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(t->text + t->len, sizeof(t->text) - t->len, fmt, ap);
	va_end(ap);
	assert_true(r >= 0 && (size_t)r < sizeof(t->text) - t->len);
	t->len += (size_t)r;
}

static int record(void *ctx, const struct tdm_cfg_line *l, char *err,
		  size_t errlen)
{
	struct transcript *t = ctx;
	int i;

	t->calls++;
	assert_non_null(l->section);
	add(t, "%d:[%s%s%s]", l->lineno, l->section,
	    l->section_arg ? " " : "", l->section_arg ? l->section_arg : "");
	if (l->key) {
		assert_true(l->argc >= 1 && l->argc <= TDM_CFG_MAX_ARGS);
		add(t, " %s=", l->key);
		for (i = 0; i < l->argc; i++)
			add(t, "%s%s", i ? "," : "", l->argv[i]);
		if (t->fail_key && !strcmp(l->key, t->fail_key)) {
			snprintf(err, errlen, "%s", t->fail_msg);
			return -1;
		}
	}
	add(t, "\n");
	return 0;
}

static void parse_ok(const char *text, const char *want)
{
	struct transcript t = { .len = 0 };
	char err[512] = "";

	if (tdm_cfg_parse_text(text, "t.conf", record, &t, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_string_equal(t.text, want);
}

static void parse_bad(const char *text, const char *want)
{
	struct transcript t = { .len = 0 };
	char err[512] = "";

	assert_int_equal(tdm_cfg_parse_text(text, "t.conf", record, &t, err,
					    sizeof(err)), -1);
	assert_string_equal(err, want);
}

static void test_split(void **state)
{
	(void)state;
	parse_ok("", "");
	parse_ok("\n\n   \n\t\n", "");
	parse_ok("key value", "1:[global] key=value\n");
	parse_ok("# only a comment\n   # indented comment\n", "");
	parse_ok("a 1\n"
		 "  b\t2  3   # comment after values\n"
		 "c 4#glued comment\n"
		 "d 5 6 7 8 9 10 11 12\n",
		 "1:[global] a=1\n"
		 "2:[global] b=2,3\n"
		 "3:[global] c=4\n"
		 "4:[global] d=5,6,7,8,9,10,11,12\n");
	/* CRLF files and a last line without a newline. */
	parse_ok("a 1\r\nb 2\r\n\r\nc 3", "1:[global] a=1\n2:[global] b=2\n4:[global] c=3\n");
}

static void test_sections(void **state)
{
	(void)state;
	parse_ok("x 0\n"
		 "[global]\n"
		 "y 1\n"
		 "[sender alpha]   # comment\n"
		 "window 0 3ms\n"
		 "  [ sender\tbeta ]\n"
		 "window 1 2\n"
		 "[auto]\n"
		 "senders 3\n",
		 "1:[global] x=0\n"
		 "2:[global]\n"
		 "3:[global] y=1\n"
		 "4:[sender alpha]\n"
		 "5:[sender alpha] window=0,3ms\n"
		 "6:[sender beta]\n"
		 "7:[sender beta] window=1,2\n"
		 "8:[auto]\n"
		 "9:[auto] senders=3\n");
	/* The reader does not judge names; the callback does. */
	parse_ok("[anything goes]\n[x]\nk v\n",
		 "1:[anything goes]\n2:[x]\n3:[x] k=v\n");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	parse_bad("a 1\n[global\n", "t.conf:2: unterminated section header");
	parse_bad("[sender a # ]\n", "t.conf:1: unterminated section header");
	parse_bad("[]\n", "t.conf:1: empty section name");
	parse_bad("\n\n[ \t ]\n", "t.conf:3: empty section name");
	parse_bad("[sender a b]\n",
		  "t.conf:1: section header has more than one argument");
	parse_bad("[global] x\n", "t.conf:1: unexpected text after section header");
	parse_bad("[global]]\n", "t.conf:1: unexpected text after section header");
	parse_bad("a 1\nkey\n", "t.conf:2: 'key' has no value");
	parse_bad("key   # value?\n", "t.conf:1: 'key' has no value");
	parse_bad("[s]\nk 1 2 3 4 5 6 7 8 9\n",
		  "t.conf:2: too many values for 'k' (max 8)");
}

static void test_line_length(void **state)
{
	char *text = malloc(3 * TDM_CFG_MAX_LINE);
	char want[64];

	(void)state;
	assert_non_null(text);
	/* The longest line allowed: TDM_CFG_MAX_LINE - 1 characters. */
	memset(text, ' ', TDM_CFG_MAX_LINE - 1);
	memcpy(text, "k v", 3);
	strcpy(text + TDM_CFG_MAX_LINE - 1, "\n");
	parse_ok(text, "1:[global] k=v\n");

	/* One more, even if it is only a comment. */
	memset(text, '#', TDM_CFG_MAX_LINE);
	strcpy(text + TDM_CFG_MAX_LINE, "\n");
	snprintf(want, sizeof(want), "t.conf:1: line too long (max %d characters)",
		 TDM_CFG_MAX_LINE - 1);
	parse_bad(text, want);

	/* On a later line, without a newline at the end. */
	strcpy(text, "a 1\nb 2\n");
	memset(text + 8, 'x', TDM_CFG_MAX_LINE + 10);
	text[8 + TDM_CFG_MAX_LINE + 10] = '\0';
	snprintf(want, sizeof(want), "t.conf:3: line too long (max %d characters)",
		 TDM_CFG_MAX_LINE - 1);
	parse_bad(text, want);
	free(text);
}

static void test_callback_errors(void **state)
{
	struct transcript t = { .fail_key = "bad", .fail_msg = "boom" };
	char err[512];

	(void)state;
	assert_int_equal(tdm_cfg_parse_text("a 1\n\n[s]\nbad 2\nnever 3\n",
					    "t.conf", record, &t, err,
					    sizeof(err)), -1);
	assert_string_equal(err, "t.conf:4: boom");
	/* Nothing after the error is seen. */
	assert_int_equal(t.calls, 3);

	/* A callback that gives no text. */
	memset(&t, 0, sizeof(t));
	t.fail_key = "bad";
	t.fail_msg = "";
	assert_int_equal(tdm_cfg_parse_text("bad 1\n", "t.conf", record, &t,
					    err, sizeof(err)), -1);
	assert_string_equal(err, "t.conf:1: invalid line");

	/* Without a file name the prefix is "line N: ". */
	memset(&t, 0, sizeof(t));
	t.fail_key = "bad";
	t.fail_msg = "boom";
	assert_int_equal(tdm_cfg_parse_text("\nbad 1\n", NULL, record, &t,
					    err, sizeof(err)), -1);
	assert_string_equal(err, "line 2: boom");
	assert_int_equal(tdm_cfg_parse_text("[x", NULL, record, &t,
					    err, sizeof(err)), -1);
	assert_string_equal(err, "line 1: unterminated section header");

	/* No text is an empty text. */
	memset(&t, 0, sizeof(t));
	assert_int_equal(tdm_cfg_parse_text(NULL, "t.conf", record, &t,
					    err, sizeof(err)), 0);
	assert_int_equal(t.calls, 0);

	/* A short err buffer is cut, not overrun. */
	assert_int_equal(tdm_cfg_parse_text("[x", "t.conf", record, &t,
					    err, 8), -1);
	assert_string_equal(err, "t.conf:");
}

/* ---- files ------------------------------------------------------------ */

static char *temp_file(const void *data, size_t len)
{
	char *path = strdup("/tmp/test_cfg.XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_parse_file(void **state)
{
	struct transcript t = { .len = 0 };
	char err[512], want[600];
	char *path;

	(void)state;
	path = temp_file("[s x]\nk v w\n", 12);
	assert_int_equal(tdm_cfg_parse_file(path, record, &t, err, sizeof(err)), 0);
	assert_string_equal(t.text, "1:[s x]\n2:[s x] k=v,w\n");
	unlink(path);
	free(path);

	/* Errors name the file as given. */
	path = temp_file("k v\n[x\n", 7);
	assert_int_equal(tdm_cfg_parse_file(path, record, &t, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:2: unterminated section header", path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);

	path = temp_file("k v\n\0x y\n", 9);
	assert_int_equal(tdm_cfg_parse_file(path, record, &t, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: contains a NUL byte", path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);

	assert_int_equal(tdm_cfg_parse_file("/nonexistent/x.conf", record, &t,
					    err, sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent/x.conf: cannot open: No such file or directory");

	assert_int_equal(tdm_cfg_parse_file("/", record, &t, err, sizeof(err)), -1);
	assert_string_equal(err, "/: cannot read: Is a directory");
	/* A caller that does not want the reason. */
	assert_int_equal(tdm_cfg_parse_file("/", record, &t, NULL, 0), -1);
	assert_null(tdm_read_file("/nonexistent", 10, NULL, NULL, 0));
}

static void test_parse_file_too_large(void **state)
{
	size_t len = 1024 * 1024 + 1;
	char *big = malloc(len), *path;
	struct transcript t = { .len = 0 };
	char err[512], want[600];

	(void)state;
	assert_non_null(big);
	memset(big, '\n', len);
	path = temp_file(big, len);
	assert_int_equal(tdm_cfg_parse_file(path, record, &t, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: larger than 1048576 bytes", path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);

	/* Exactly 1 MiB is fine. */
	path = temp_file(big, len - 1);
	assert_int_equal(tdm_cfg_parse_file(path, record, &t, err, sizeof(err)), 0);
	assert_int_equal(t.calls, 0);
	unlink(path);
	free(path);
	free(big);
}

static void test_read_file(void **state)
{
	char err[512] = "", want[600], *buf, *path;
	size_t len = 99;

	(void)state;
	path = temp_file("", 0);
	buf = tdm_read_file(path, 10, &len, err, sizeof(err));
	assert_non_null(buf);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
	unlink(path);
	free(path);

	path = temp_file("0123456789", 10);
	buf = tdm_read_file(path, 10, &len, err, sizeof(err));
	assert_non_null(buf);
	assert_int_equal(len, 10);
	assert_string_equal(buf, "0123456789");
	free(buf);
	buf = tdm_read_file(path, 10, NULL, err, sizeof(err));
	assert_non_null(buf);
	free(buf);
	assert_null(tdm_read_file(path, 9, &len, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: larger than 9 bytes", path);
	assert_string_equal(err, want);
	unlink(path);
	free(path);

	/* Files whose size stat() does not know. */
	buf = tdm_read_file("/proc/self/status", 1 << 20, &len, err, sizeof(err));
	assert_non_null(buf);
	assert_non_null(strstr(buf, "Name:"));
	assert_int_equal(strlen(buf), len);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_line_length),
		cmocka_unit_test(test_callback_errors),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_parse_file_too_large),
		cmocka_unit_test(test_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
