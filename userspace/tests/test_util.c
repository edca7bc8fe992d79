// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdm_util (numbers, times, clocks, strings) and tdm_log.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_log.h"
#include "tdm_util.h"

/* ---- tdm_parse_time --------------------------------------------------- */

static void time_ok(const char *s, uint64_t want)
{
	char err[256] = "";
	uint64_t v = 12345;

	if (tdm_parse_time(s, &v, err, sizeof(err)))
		fail_msg("'%s' refused: %s", s, err);
	assert_int_equal(v, want);
}

static void time_bad(const char *s, const char *want)
{
	char err[256] = "";
	uint64_t v = 12345;

	assert_int_equal(tdm_parse_time(s, &v, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	assert_int_equal(v, 12345);	/* untouched on error */
}

static void test_time_units(void **state)
{
	(void)state;
	time_ok("0", 0);
	time_ok("0ns", 0);
	time_ok("0s", 0);
	time_ok("250", 250);
	time_ok("250ns", 250);
	time_ok("7ns", 7);
	time_ok("3us", 3000);
	time_ok("10ms", 10000000);
	time_ok("2s", 2000000000);
	time_ok("007us", 7000);
}

static void test_time_fractions(void **state)
{
	(void)state;
	time_ok("1.5us", 1500);
	time_ok("0.5us", 500);
	time_ok("1.5ms", 1500000);
	time_ok("2.25s", 2250000000ULL);
	time_ok("1.000000001s", 1000000001);
	time_ok("1.000001ms", 1000001);
	time_ok("1.001us", 1001);
	/* Trailing zeros do not make a fraction finer. */
	time_ok("1.0000000000s", 1000000000);
	time_ok("1.500000000000000000000ms", 1500000);
	time_ok("3.0", 3);
	time_ok("3.000ns", 3);

	time_bad("1.0000000001s", "'1.0000000001s' is not a whole number of ns");
	time_bad("1.5ns", "'1.5ns' is not a whole number of ns");
	time_bad("1.5", "'1.5' is not a whole number of ns");
	time_bad("0.0001us", "'0.0001us' is not a whole number of ns");
	time_bad("1.0000001ms", "'1.0000001ms' is not a whole number of ns");
}

static void test_time_limits(void **state)
{
	(void)state;
	time_ok("18446744073709551615", UINT64_MAX);
	time_ok("18446744073709551615ns", UINT64_MAX);
	time_ok("18446744073.709551615s", UINT64_MAX);
	time_ok("18446744073s", 18446744073000000000ULL);
	time_ok("18446744073709551.615us", UINT64_MAX);

	time_bad("18446744073709551616", "'18446744073709551616' is too large");
	time_bad("18446744073.709551616s",
		 "'18446744073.709551616s' is too large");
	time_bad("18446744074s", "'18446744074s' is too large");
	time_bad("18446744073709552ms", "'18446744073709552ms' is too large");
	time_bad("99999999999999999999999999999999999999s",
		 "'99999999999999999999999999999999999999s' is too large");
}

static void test_time_junk(void **state)
{
	(void)state;
	time_bad("", "empty time value");
	time_bad(NULL, "empty time value");
	time_bad("10xs", "'10xs': unknown unit 'xs' (use ns, us, ms or s)");
	time_bad("10MS", "'10MS': unknown unit 'MS' (use ns, us, ms or s)");
	time_bad("10 ms", "'10 ms': unknown unit ' ms' (use ns, us, ms or s)");
	time_bad("1e3", "'1e3': unknown unit 'e3' (use ns, us, ms or s)");
	time_bad("1.5.5ms", "'1.5.5ms': unknown unit '.5ms' (use ns, us, ms or s)");
	time_bad("10mss", "'10mss': unknown unit 'mss' (use ns, us, ms or s)");
	time_bad("1ns ", "'1ns ': unknown unit 'ns ' (use ns, us, ms or s)");
	time_bad("ms", "'ms': not a time (a number with ns, us, ms or s)");
	time_bad("-1ms", "'-1ms': not a time (a number with ns, us, ms or s)");
	time_bad("+1ms", "'+1ms': not a time (a number with ns, us, ms or s)");
	time_bad(" 1ms", "' 1ms': not a time (a number with ns, us, ms or s)");
	time_bad(".5ms", "'.5ms': not a time (a number with ns, us, ms or s)");
	time_bad("1.ms", "'1.ms': not a time (a number with ns, us, ms or s)");
	time_bad("1.", "'1.': not a time (a number with ns, us, ms or s)");
	/* The unit is checked before the size. */
	time_bad("99999999999999999999xs",
		 "'99999999999999999999xs': unknown unit 'xs' (use ns, us, ms or s)");
}

static void test_time_null_err(void **state)
{
	uint64_t v;

	(void)state;
	/* A caller that does not want the text. */
	assert_int_equal(tdm_parse_time("x", &v, NULL, 0), -1);
	assert_int_equal(tdm_parse_u64("x", 1, &v, NULL, 0), -1);
	assert_int_equal(tdm_parse_bool("x", &(bool){ 0 }, NULL, 0), -1);
}

/* ---- tdm_parse_u64 ---------------------------------------------------- */

static void u64_ok(const char *s, uint64_t max, uint64_t want)
{
	char err[256] = "";
	uint64_t v = 12345;

	if (tdm_parse_u64(s, max, &v, err, sizeof(err)))
		fail_msg("'%s' refused: %s", s, err);
	assert_int_equal(v, want);
}

static void u64_bad(const char *s, uint64_t max, const char *want)
{
	char err[256] = "";
	uint64_t v = 12345;

	assert_int_equal(tdm_parse_u64(s, max, &v, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	assert_int_equal(v, 12345);
}

static void test_u64(void **state)
{
	(void)state;
	u64_ok("0", 0, 0);
	u64_ok("42", 100, 42);
	u64_ok("0042", 100, 42);	/* decimal, not octal */
	u64_ok("0x2a", 100, 42);
	u64_ok("0X2A", 100, 42);
	u64_ok("100", 100, 100);
	u64_ok("18446744073709551615", UINT64_MAX, UINT64_MAX);
	u64_ok("0xffffffffffffffff", UINT64_MAX, UINT64_MAX);

	u64_bad("101", 100, "'101' is too large (max 100)");
	u64_bad("1", 0, "'1' is too large (max 0)");
	u64_bad("18446744073709551616", UINT64_MAX,
		"'18446744073709551616' is too large (max 18446744073709551615)");
	u64_bad("0x10000000000000000", UINT64_MAX,
		"'0x10000000000000000' is too large (max 18446744073709551615)");
	u64_bad("", 10, "empty number");
	u64_bad(NULL, 10, "empty number");
	u64_bad("0x", 10, "'0x': not a number");
	u64_bad("12a", 100, "'12a': not a number");
	u64_bad("0x1g", 100, "'0x1g': not a number");
	u64_bad("-1", 100, "'-1': not a number");
	u64_bad("+1", 100, "'+1': not a number");
	u64_bad(" 1", 100, "' 1': not a number");
	u64_bad("1.5", 100, "'1.5': not a number");
	u64_bad("1ms", 100, "'1ms': not a number");
}

/* ---- tdm_parse_bool --------------------------------------------------- */

static void test_bool(void **state)
{
	static const char *const yes[] = { "on", "yes", "1", "true", "ON", "Yes", "TRUE" };
	static const char *const no[] = { "off", "no", "0", "false", "OFF", "No", "False" };
	char err[256];
	unsigned int i;
	bool b;

	(void)state;
	for (i = 0; i < TDM_ARRAY_SIZE(yes); i++) {
		b = false;
		assert_int_equal(tdm_parse_bool(yes[i], &b, err, sizeof(err)), 0);
		assert_true(b);
	}
	for (i = 0; i < TDM_ARRAY_SIZE(no); i++) {
		b = true;
		assert_int_equal(tdm_parse_bool(no[i], &b, err, sizeof(err)), 0);
		assert_false(b);
	}
	assert_int_equal(tdm_parse_bool("maybe", &b, err, sizeof(err)), -1);
	assert_string_equal(err,
		"'maybe': not a boolean (use on/off, yes/no, true/false or 1/0)");
	assert_int_equal(tdm_parse_bool("", &b, err, sizeof(err)), -1);
	assert_string_equal(err,
		"'': not a boolean (use on/off, yes/no, true/false or 1/0)");
	assert_int_equal(tdm_parse_bool(NULL, &b, err, sizeof(err)), -1);
	assert_int_equal(tdm_parse_bool("2", &b, err, sizeof(err)), -1);
	assert_int_equal(tdm_parse_bool("onn", &b, err, sizeof(err)), -1);
}

/* ---- tdm_fmt_time ----------------------------------------------------- */

static void fmt_is(uint64_t ns, const char *want)
{
	char buf[32], err[256];
	uint64_t back;

	assert_string_equal(tdm_fmt_time(ns, buf, sizeof(buf)), want);
	/* Every form it prints parses back to the same value. */
	assert_int_equal(tdm_parse_time(buf, &back, err, sizeof(err)), 0);
	assert_int_equal(back, ns);
}

static void test_fmt_time(void **state)
{
	char small[4];

	(void)state;
	fmt_is(0, "0");
	fmt_is(7, "7ns");
	fmt_is(999, "999ns");
	fmt_is(1000, "1us");
	fmt_is(1500, "1500ns");
	fmt_is(1500000, "1500us");
	fmt_is(10000000, "10ms");
	fmt_is(2000000000, "2s");
	fmt_is(1000000001, "1000000001ns");
	fmt_is(1001000, "1001us");
	fmt_is(3000000000000ULL, "3000s");
	fmt_is(18446744073000000000ULL, "18446744073s");
	fmt_is(UINT64_MAX, "18446744073709551615ns");

	/* Truncated, still terminated; a zero-size buffer is not written. */
	assert_string_equal(tdm_fmt_time(10000000, small, sizeof(small)), "10m");
	assert_string_equal(tdm_fmt_time(10000000, small, 0), "");
	assert_string_equal(tdm_fmt_time(10000000, NULL, 10), "");
}

/* ---- clocks ----------------------------------------------------------- */

static void test_clock_parse(void **state)
{
	static const struct {
		const char *s;
		int id;
	} ok[] = {
		{ "tai", CLOCK_TAI }, { "TAI", CLOCK_TAI },
		{ "CLOCK_TAI", CLOCK_TAI }, { "clock_tai", CLOCK_TAI },
		{ "realtime", CLOCK_REALTIME },
		{ "CLOCK_REALTIME", CLOCK_REALTIME },
		{ "Monotonic", CLOCK_MONOTONIC },
		{ "clock_MONOTONIC", CLOCK_MONOTONIC },
		{ "boottime", CLOCK_BOOTTIME },
		{ "CLOCK_BOOTTIME", CLOCK_BOOTTIME },
	};
	static const char *const bad[] = {
		"", "CLOCK_", "foo", "taix", "ta", "CLOCK_CLOCK_TAI",
		" tai", "tai ", "monotonic_raw", "process_cputime_id",
	};
	unsigned int i;
	int id;

	(void)state;
	for (i = 0; i < TDM_ARRAY_SIZE(ok); i++) {
		id = -1;
		assert_int_equal(tdm_clock_parse(ok[i].s, &id), 0);
		assert_int_equal(id, ok[i].id);
	}
	for (i = 0; i < TDM_ARRAY_SIZE(bad); i++) {
		id = -7;
		assert_int_equal(tdm_clock_parse(bad[i], &id), -1);
		assert_int_equal(id, -7);
	}
	assert_int_equal(tdm_clock_parse(NULL, &id), -1);
}

static void test_clock_name(void **state)
{
	(void)state;
	assert_string_equal(tdm_clock_name(CLOCK_TAI), "tai");
	assert_string_equal(tdm_clock_name(CLOCK_REALTIME), "realtime");
	assert_string_equal(tdm_clock_name(CLOCK_MONOTONIC), "monotonic");
	assert_string_equal(tdm_clock_name(CLOCK_BOOTTIME), "boottime");
	assert_string_equal(tdm_clock_name(12345), "unknown");
	assert_string_equal(tdm_clock_name(-1), "unknown");
}

static void test_clock_ns(void **state)
{
	int64_t a, b, rt;

	(void)state;
	a = tdm_clock_ns(CLOCK_MONOTONIC);
	b = tdm_clock_ns(CLOCK_MONOTONIC);
	assert_true(a >= 0);
	assert_true(b >= a);
	rt = tdm_clock_ns(CLOCK_REALTIME);
	/* Within a few seconds of time(2). */
	assert_true(llabs(rt / (int64_t)TDM_NSEC_PER_SEC - (int64_t)time(NULL)) <= 2);
	/* TAI runs ahead of UTC by 0 (unset) or the leap seconds (37). */
	assert_true(tdm_clock_ns(CLOCK_TAI) / (int64_t)TDM_NSEC_PER_SEC -
		    rt / (int64_t)TDM_NSEC_PER_SEC <= 40);
	assert_true(tdm_clock_ns(CLOCK_BOOTTIME) >= 0);
	assert_int_equal(tdm_clock_ns(12345), -1);
	/* tdm_mono_ns() is CLOCK_MONOTONIC. */
	a = tdm_mono_ns();
	b = tdm_clock_ns(CLOCK_MONOTONIC);
	assert_true(a > 0 && a <= b);
	assert_true(tdm_mono_ns() >= b);
}

/* ---- tdm_strlcpy ------------------------------------------------------ */

static void test_strlcpy(void **state)
{
	char buf[6];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(tdm_strlcpy(buf, "abc", sizeof(buf)), 0);
	assert_string_equal(buf, "abc");
	assert_int_equal(tdm_strlcpy(buf, "abcde", sizeof(buf)), 0);
	assert_string_equal(buf, "abcde");
	assert_int_equal(tdm_strlcpy(buf, "abcdef", sizeof(buf)), -1);
	assert_string_equal(buf, "abcde");
	assert_int_equal(tdm_strlcpy(buf, "", sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(tdm_strlcpy(buf, "a", 1), -1);
	assert_string_equal(buf, "");
	assert_int_equal(tdm_strlcpy(buf, "", 1), 0);
	memcpy(buf, "keep", 5);
	assert_int_equal(tdm_strlcpy(buf, "abc", 0), -1);
	assert_string_equal(buf, "keep");
}

/* ---- tdm_set_err ------------------------------------------------------ */

static void test_set_err(void **state)
{
	char err[16];

	(void)state;
	assert_int_equal(tdm_set_err(err, sizeof(err), "bad %d", 7), -1);
	assert_string_equal(err, "bad 7");
	/* Cut to fit, always terminated. */
	tdm_set_err(err, sizeof(err), "%s", "0123456789abcdefghij");
	assert_string_equal(err, "0123456789abcde");
	/* No buffer: nothing written, still -1. */
	assert_int_equal(tdm_set_err(NULL, 10, "x"), -1);
	memcpy(err, "keep", 5);
	assert_int_equal(tdm_set_err(err, 0, "x"), -1);
	assert_string_equal(err, "keep");
}

static void test_set_err_at(void **state)
{
	char err[32];

	(void)state;
	assert_int_equal(tdm_set_err_at(err, sizeof(err), "a.conf", 12,
					"bad %s", "key"), -1);
	assert_string_equal(err, "a.conf:12: bad key");
	tdm_set_err_at(err, sizeof(err), "a.conf", 0, "no senders");
	assert_string_equal(err, "a.conf: no senders");
	tdm_set_err_at(err, sizeof(err), NULL, 3, "bad");
	assert_string_equal(err, "line 3: bad");
	tdm_set_err_at(err, sizeof(err), NULL, 0, "bad");
	assert_string_equal(err, "bad");
	/* The place alone fills the buffer: it is cut, the message dropped. */
	tdm_set_err_at(err, 8, "plan.conf", 1, "bad");
	assert_string_equal(err, "plan.co");
	tdm_set_err_at(err, sizeof(err), "p", 1, "%s", "0123456789012345678901234567890");
	assert_string_equal(err, "p:1: 01234567890123456789012345");
	assert_int_equal(tdm_set_err_at(NULL, 0, "p", 1, "x"), -1);
}

/* ---- tdm_log ---------------------------------------------------------- */

/* Run fn with stderr going to a file; return what it wrote (static). */
static const char *capture_stderr(void (*fn)(void))
{
	static char out[4096];
	FILE *f = tmpfile();
	int saved;
	size_t n;

	assert_non_null(f);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(f), STDERR_FILENO) >= 0);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

static void test_log_level_parse(void **state)
{
	(void)state;
	assert_int_equal(tdm_log_level_parse("err"), LOG_ERR);
	assert_int_equal(tdm_log_level_parse("error"), LOG_ERR);
	assert_int_equal(tdm_log_level_parse("warning"), LOG_WARNING);
	assert_int_equal(tdm_log_level_parse("warn"), LOG_WARNING);
	assert_int_equal(tdm_log_level_parse("notice"), LOG_NOTICE);
	assert_int_equal(tdm_log_level_parse("info"), LOG_INFO);
	assert_int_equal(tdm_log_level_parse("debug"), LOG_DEBUG);
	assert_int_equal(tdm_log_level_parse("DEBUG"), LOG_DEBUG);
	assert_int_equal(tdm_log_level_parse("verbose"), -1);
	assert_int_equal(tdm_log_level_parse(""), -1);
	assert_int_equal(tdm_log_level_parse(NULL), -1);
}

static void log_first(void)
{
	log_warn("before init");
	log_debug("not shown by default");
}

/* Logging works before tdm_log_init: named after the program, level info. */
static void test_log_lazy_init(void **state)
{
	char want[128];
	const char *out;

	(void)state;
	unsetenv("JOURNAL_STREAM");
	out = capture_stderr(log_first);
	snprintf(want, sizeof(want), "] %s[%d]: warning: before init\n",
		 program_invocation_short_name, (int)getpid());
	assert_non_null(strstr(out, want));
	assert_null(strstr(out, "not shown"));
}

static void log_odd_levels(void)
{
	tdm_log(-3, "below emerg");
	tdm_log(42, "above debug");
}

static void test_log_levels_clamped(void **state)
{
	const char *out;

	(void)state;
	setenv("JOURNAL_STREAM", "8:1", 1);
	tdm_log_init("x", 1000);	/* clamped to debug */
	out = capture_stderr(log_odd_levels);
	assert_string_equal(out, "<0>below emerg\n<7>above debug\n");
	tdm_log_set_level(-1);		/* clamped to emerg */
	out = capture_stderr(log_odd_levels);
	assert_string_equal(out, "<0>below emerg\n");
	unsetenv("JOURNAL_STREAM");
	tdm_log_init("tdmd", LOG_INFO);
}

static void log_some(void)
{
	log_err("disk %s", "full");
	log_warn("hello %d", 5);
	log_notice("noted");
	log_info("info line\n");	/* its own newline is not doubled */
	log_debug("hidden unless debug");
}

static void test_log_stderr(void **state)
{
	char want[128];
	const char *out, *p;
	int n;

	(void)state;
	unsetenv("JOURNAL_STREAM");
	tdm_log_init("tdmd", LOG_INFO);
	out = capture_stderr(log_some);

	/* "[  secs.usecs] tdmd[pid]: level: message" */
	assert_int_equal(out[0], '[');
	snprintf(want, sizeof(want), "] tdmd[%d]: error: disk full\n", (int)getpid());
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "] tdmd[%d]: warning: hello 5\n", (int)getpid());
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, ": notice: noted\n"));
	assert_non_null(strstr(out, ": info: info line\n"));
	assert_null(strstr(out, "hidden"));
	assert_null(strstr(out, "\n\n"));
	/* Four lines, each ending in one newline. */
	for (n = 0, p = out; (p = strchr(p, '\n')); p++)
		n++;
	assert_int_equal(n, 4);
	assert_int_equal(out[strlen(out) - 1], '\n');

	tdm_log_set_level(LOG_DEBUG);
	out = capture_stderr(log_some);
	assert_non_null(strstr(out, ": debug: hidden unless debug\n"));

	tdm_log_set_level(LOG_ERR);
	out = capture_stderr(log_some);
	assert_non_null(strstr(out, "disk full"));
	assert_null(strstr(out, "hello"));
	tdm_log_set_level(LOG_INFO);
}

static void test_log_journal(void **state)
{
	const char *out;

	(void)state;
	setenv("JOURNAL_STREAM", "8:12345", 1);
	tdm_log_init("tdmd", LOG_INFO);
	out = capture_stderr(log_some);
	assert_string_equal(out, "<3>disk full\n<4>hello 5\n<5>noted\n<6>info line\n");
	unsetenv("JOURNAL_STREAM");
	tdm_log_init("tdmd", LOG_INFO);
}

static void log_errno(void)
{
	errno = ENOENT;
	log_warn("open: %m");
	assert_int_equal(errno, ENOENT);
}

static void log_long(void)
{
	char big[5000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_warn("%s", big);
	log_warn("after");
}

static void test_log_errno_and_long(void **state)
{
	const char *out;

	(void)state;
	setenv("JOURNAL_STREAM", "1:1", 1);
	tdm_log_init("x", LOG_DEBUG);
	out = capture_stderr(log_errno);
	assert_string_equal(out, "<4>open: No such file or directory\n");

	/* A long message is cut but still ends its line. */
	out = capture_stderr(log_long);
	assert_true(strlen(out) < 2100);
	assert_non_null(strstr(out, "xxx\n<4>after\n"));
	assert_int_equal(strncmp(out, "<4>xxx", 6), 0);
	unsetenv("JOURNAL_STREAM");
	tdm_log_init(NULL, LOG_INFO);
}

/* Ten a second, and the count of what was not logged comes with the next. */
static void test_ratelimit(void **state)
{
	struct tdm_ratelimit rl = { .interval_ns = 1000000000, .burst = 10 };
	unsigned long long missed;
	int64_t t = 5000000000LL;
	int i, ok = 0;

	(void)state;
	for (i = 0; i < 25; i++)
		ok += tdm_ratelimit(&rl, t + i, &missed);
	assert_int_equal(ok, 10);
	assert_int_equal(missed, 0);
	/* The next interval: allowed, with the 15 that were not. */
	assert_true(tdm_ratelimit(&rl, t + 1000000000, &missed));
	assert_int_equal(missed, 15);
	assert_true(tdm_ratelimit(&rl, t + 1000000001, &missed));
	assert_int_equal(missed, 0);
}

/* Peer text made safe for a log line and a terminal. */
static void test_text_escape(void **state)
{
	char out[32];

	(void)state;
	assert_int_equal(tdm_text_escape(out, "plain text 1.0", sizeof(out)), 0);
	assert_string_equal(out, "plain text 1.0");
	assert_int_equal(tdm_text_escape(out, "a\nb\r\x1b[2Jc\\", sizeof(out)), 0);
	assert_string_equal(out, "a\\x0ab\\x0d\\x1b[2Jc\\\\");
	assert_int_equal(tdm_text_escape(out, "\xc3\xa9\x7f", sizeof(out)), 0);
	assert_string_equal(out, "\\xc3\\xa9\\x7f");
	/* Cut at an escape, never inside it. */
	assert_int_equal(tdm_text_escape(out, "abcd\n", 8), -1);
	assert_string_equal(out, "abcd");
	assert_int_equal(tdm_text_escape(out, "abc\n", 8), 0);
	assert_string_equal(out, "abc\\x0a");
	assert_int_equal(tdm_text_escape(out, "x", 1), -1);
	assert_string_equal(out, "");
}

/* ---- tdm_hyst --------------------------------------------------------- */

static void test_hyst(void **state)
{
	struct tdm_hyst h = { 0 };

	(void)state;
	/* Starts not ok; 3 good results to become ok. */
	assert_false(tdm_hyst_step(&h, true, 3, 2));
	assert_false(tdm_hyst_step(&h, true, 3, 2));
	assert_false(h.ok);
	assert_true(tdm_hyst_step(&h, true, 3, 2));
	assert_true(h.ok);
	assert_int_equal(h.good, 3);
	/* One bad result does not count as two; a good one resets it. */
	assert_false(tdm_hyst_step(&h, false, 3, 2));
	assert_true(h.ok);
	assert_false(tdm_hyst_step(&h, true, 3, 2));
	assert_false(tdm_hyst_step(&h, false, 3, 2));
	assert_int_equal(h.bad, 1);
	assert_true(tdm_hyst_step(&h, false, 3, 2));
	assert_false(h.ok);
	assert_int_equal(h.good, 0);
	/* Going on bad changes nothing more. */
	assert_false(tdm_hyst_step(&h, false, 3, 2));
	assert_int_equal(h.bad, 3);
	/* need 1 (and 0, which tdm.conf refuses, behaves as 1). */
	assert_true(tdm_hyst_step(&h, true, 1, 1));
	assert_true(tdm_hyst_step(&h, false, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_units),
		cmocka_unit_test(test_time_fractions),
		cmocka_unit_test(test_time_limits),
		cmocka_unit_test(test_time_junk),
		cmocka_unit_test(test_time_null_err),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_fmt_time),
		cmocka_unit_test(test_clock_parse),
		cmocka_unit_test(test_clock_name),
		cmocka_unit_test(test_clock_ns),
		cmocka_unit_test(test_strlcpy),
		cmocka_unit_test(test_set_err),
		cmocka_unit_test(test_set_err_at),
		cmocka_unit_test(test_log_level_parse),
		cmocka_unit_test(test_text_escape),
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_hyst),
		cmocka_unit_test(test_log_lazy_init),	/* before any init */
		cmocka_unit_test(test_log_levels_clamped),
		cmocka_unit_test(test_log_stderr),
		cmocka_unit_test(test_log_journal),
		cmocka_unit_test(test_log_errno_and_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
