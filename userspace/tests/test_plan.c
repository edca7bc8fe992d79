// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the plan library (tdm_plan): the file format and every
 * message the parser and the validator give, the [auto] form, the base
 * time policy, the digest, and format -> parse round trips, including the
 * example plans in ../examples.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_json.h"
#include "tdm_plan.h"
#include "tdm_util.h"
#include "plan_parse.h"

#define MS	1000000ULL
#define US	1000ULL
#define SEC	1000000000ULL

#define NAME_RULE "(1..63 characters of A-Z a-z 0-9 _ . -)"

/* ---- helpers ---------------------------------------------------------- */

/* A growing text for generated plans. */
struct text {
	char *s;
	size_t len, cap;
};

static void addf(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void addf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL,
			      t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if (t->s && t->len + (size_t)n < t->cap)
			break;
		t->cap = (t->cap + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	t->len += (size_t)n;
}

/* A plan built in code: n senders "s0".. with one window each. */
static void build(struct tdm_plan *p, unsigned int n, uint64_t cycle)
{
	unsigned int i;

	tdm_plan_init(p);
	p->cycle_ns = cycle;
	p->nsenders = n;
	p->senders = calloc(n ? n : 1, sizeof(*p->senders));
	assert_non_null(p->senders);
	for (i = 0; i < n; i++) {
		snprintf(p->senders[i].name, TDM_NAME_MAX, "s%u", i);
		p->senders[i].nwin = 1;
		p->senders[i].win[0].offset = i * 1000;
		p->senders[i].win[0].length = 500;
	}
}

static void validate_bad(struct tdm_plan *p, const char *want)
{
	char err[512] = "";

	assert_int_equal(tdm_plan_validate(p, err, sizeof(err)), -1);
	assert_string_equal(err, want);
}

static void validate_ok(struct tdm_plan *p)
{
	char err[512] = "";

	if (tdm_plan_validate(p, err, sizeof(err)))
		fail_msg("refused: %s", err);
}

/* Where the examples are: next to tests/ or given by TDM_EXAMPLES. */
static void example_path(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = {
		"examples", "../examples", "userspace/examples",
	};
	const char *env = getenv("TDM_EXAMPLES"), *slash;
	unsigned int i;

	if (env) {
		snprintf(buf, len, "%s/%s", env, name);
		return;
	}
	/* __FILE__ is tests/test_plan.c as the Makefile compiles it. */
	slash = strrchr(__FILE__, '/');
	snprintf(buf, len, "%.*s%s../examples/%s",
		 slash ? (int)(slash - __FILE__) : 0, __FILE__,
		 slash ? "/" : "", name);
	if (!access(buf, R_OK))
		return;
	for (i = 0; i < TDM_ARRAY_SIZE(dirs); i++) {
		snprintf(buf, len, "%s/%s", dirs[i], name);
		if (!access(buf, R_OK))
			return;
	}
	fail_msg("cannot find examples/%s (set TDM_EXAMPLES)", name);
}

static void load_example(const char *name, struct tdm_plan *p)
{
	char path[PATH_MAX], err[512];

	example_path(name, path, sizeof(path));
	if (tdm_plan_load(path, p, err, sizeof(err)))
		fail_msg("%s", err);
}

static void assert_window(const struct tdm_sender *s, unsigned int i,
			  uint64_t offset, uint64_t length)
{
	assert_true(i < s->nwin);
	assert_int_equal(s->win[i].offset, offset);
	assert_int_equal(s->win[i].length, length);
}


/* ---- parsing good plans ----------------------------------------------- */

static void test_parse_all_keys(void **state)
{
	static const char text[] =
		"# every key\n"				/* 1 */
		"[global]\n"				/* 2 */
		"clock          CLOCK_REALTIME\n"	/* 3 */
		"cycle_time     3300us\n"		/* 4 */
		"guard          2us\n"			/* 5 */
		"min_dead_time  100us\n"		/* 6 */
		"lead_time      5s\n"			/* 7 */
		"base_align     0\n"			/* 8 */
		"link_speed     10000\n"		/* 9 */
		"bypass_ptp     off\n"			/* 10 */
		"bypass_prio    6 7\n"			/* 11 */
		"bypass_prio    0 15  # adds up\n"	/* 12 */
		"version        12\n"			/* 13 */
		"[sender n1]\n"				/* 14 */
		"window 2200us  500us\n"		/* 15 */
		"window 0       1ms\n"			/* 16 */
		"[sender n2]\n"				/* 17 */
		"window 1.1ms   1ms\n";			/* 18 */
	struct tdm_plan p;

	(void)state;
	parse_ok(text, &p);
	assert_int_equal(p.clockid, CLOCK_REALTIME);
	assert_int_equal(p.cycle_ns, 3300 * US);
	assert_int_equal(p.guard_ns, 2 * US);
	assert_int_equal(p.min_dead_ns, 100 * US);
	assert_int_equal(p.lead_ns, 5 * SEC);
	assert_int_equal(p.align_ns, 0);
	assert_int_equal(p.link_speed, 10000);
	assert_false(p.bypass_ptp);
	assert_int_equal(p.bypass_prios, (1U << 6) | (1U << 7) | 1U | (1U << 15));
	assert_int_equal(p.version, 12);
	assert_int_equal(p.base_time, 0);
	assert_int_equal(p.nsenders, 2);
	assert_string_equal(p.senders[0].name, "n1");
	assert_int_equal(p.senders[0].line, 14);
	assert_int_equal(p.senders[0].nwin, 2);
	/* Sorted by offset. */
	assert_window(&p.senders[0], 0, 0, 1 * MS);
	assert_window(&p.senders[0], 1, 2200 * US, 500 * US);
	assert_string_equal(p.senders[1].name, "n2");
	assert_int_equal(p.senders[1].line, 17);
	assert_window(&p.senders[1], 0, 1100 * US, 1 * MS);
	assert_ptr_equal(tdm_plan_sender(&p, "n2"), &p.senders[1]);
	assert_null(tdm_plan_sender(&p, "n3"));
	assert_null(tdm_plan_sender(&p, "n"));
	tdm_plan_free(&p);
	assert_null(p.senders);
	assert_int_equal(p.nsenders, 0);
}

static void test_parse_defaults(void **state)
{
	struct tdm_plan p;

	(void)state;
	/* Keys before any section are global; [global] may come back. */
	parse_ok("cycle_time 1ms\n[sender a]\nwindow 0 500us\n"
		 "[global]\nguard 0\n", &p);
	assert_int_equal(p.clockid, CLOCK_TAI);
	assert_int_equal(p.cycle_ns, 1 * MS);
	assert_int_equal(p.guard_ns, 0);
	assert_int_equal(p.min_dead_ns, 0);
	assert_int_equal(p.lead_ns, TDM_DEFAULT_LEAD_NS);
	assert_int_equal(p.align_ns, TDM_DEFAULT_ALIGN_NS);
	assert_int_equal(p.link_speed, 0);
	assert_true(p.bypass_ptp);
	assert_int_equal(p.bypass_prios, 0);
	assert_int_equal(p.version, 0);
	assert_int_equal(p.base_time, 0);
	assert_int_equal(p.nsenders, 1);
	tdm_plan_free(&p);
}

static void test_parse_limits_ok(void **state)
{
	struct tdm_plan p;
	char name[80];

	(void)state;
	/* The kernel's cycle limits themselves are fine. */
	parse_ok("cycle_time 1us\n[sender a]\nwindow 0 1us\n", &p);
	tdm_plan_free(&p);
	parse_ok("cycle_time 10s\n[sender a]\nwindow 0 10s\n", &p);
	tdm_plan_free(&p);
	/* Windows may touch each other and the cycle's end. */
	parse_ok("cycle_time 10ms\n[sender a]\nwindow 0 5ms\n"
		 "[sender b]\nwindow 5ms 5ms\n", &p);
	tdm_plan_free(&p);
	parse_ok("guard 1s\ncycle_time 10s\nlink_speed 1600000\n"
		 "version 4294967295\n[sender a]\nwindow 0 2s\n", &p);
	assert_int_equal(p.guard_ns, TDMWIN_MAX_GUARD_NS);
	assert_int_equal(p.version, UINT32_MAX);
	tdm_plan_free(&p);
	/* All name characters, 63 of them. */
	memset(name, 'x', 63);
	memcpy(name, "Az09_.-", 7);
	name[63] = '\0';
	{
		char text[200];

		snprintf(text, sizeof(text),
			 "cycle_time 1ms\n[sender %s]\nwindow 0 1us\n", name);
		parse_ok(text, &p);
		assert_string_equal(p.senders[0].name, name);
		tdm_plan_free(&p);
	}
	/* A dead time exactly at the minimum, also round the cycle. */
	parse_ok("min_dead_time 1ms\ncycle_time 10ms\n[sender a]\n"
		 "window 0 2ms\n[sender b]\nwindow 3ms 6ms\n", &p);
	tdm_plan_free(&p);
	parse_ok("min_dead_time 1ms\ncycle_time 10ms\n[sender a]\n"
		 "window 500us 9ms\n", &p);
	tdm_plan_free(&p);
	/* A window filling the cycle: no dead time asked, none needed. */
	parse_ok("cycle_time 10ms\n[sender a]\nwindow 0 10ms\n", &p);
	tdm_plan_free(&p);
}

static void test_parse_max_windows_ok(void **state)
{
	struct text t = { 0 };
	struct tdm_plan p;
	unsigned int s, k;

	(void)state;
	/* 64 senders x 64 windows = TDM_MAX_PLAN_WINDOWS exactly. */
	addf(&t, "cycle_time 10s\n");
	for (s = 0; s < 64; s++) {
		addf(&t, "[sender s%u]\n", s);
		for (k = 0; k < TDMWIN_MAX_WINDOWS; k++)
			addf(&t, "window %u %u\n", (s * 64 + k) * 1000, 500);
	}
	parse_ok(t.s, &p);
	assert_int_equal(p.nsenders, 64);
	assert_int_equal(p.senders[63].nwin, TDMWIN_MAX_WINDOWS);
	round_trip(&p);
	tdm_plan_free(&p);
	free(t.s);
}

static void test_parse_max_senders_ok(void **state)
{
	struct text t = { 0 };
	struct tdm_plan p;
	unsigned int s;

	(void)state;
	addf(&t, "cycle_time 10s\n");
	for (s = 0; s < TDM_MAX_SENDERS; s++)
		addf(&t, "[sender s%u]\nwindow %u 500\n", s, s * 1000);
	parse_ok(t.s, &p);
	assert_int_equal(p.nsenders, TDM_MAX_SENDERS);
	assert_int_equal(p.senders[TDM_MAX_SENDERS - 1].line,
			 2 + 2 * (TDM_MAX_SENDERS - 1));
	tdm_plan_free(&p);
	free(t.s);
}

/* ---- the reader's own errors, through the plan parser ------------------ */

static void test_syntax_errors(void **state)
{
	(void)state;
	parse_bad("cycle_time 1ms\n[sender a\n",
		  "plan.conf:2: unterminated section header");
	parse_bad("[]\n", "plan.conf:1: empty section name");
	parse_bad("[sender a b]\n",
		  "plan.conf:1: section header has more than one argument");
	parse_bad("[global] junk\n",
		  "plan.conf:1: unexpected text after section header");
	parse_bad("cycle_time\n", "plan.conf:1: 'cycle_time' has no value");
	parse_bad("bypass_prio 1 2 3 4 5 6 7 8 9\n",
		  "plan.conf:1: too many values for 'bypass_prio' (max 8)");
}

/* ---- sections --------------------------------------------------------- */

static void test_section_errors(void **state)
{
	char text[300], want[300], name[70];

	(void)state;
	parse_bad("cycle_time 1ms\n[foo]\n", "plan.conf:2: unknown section [foo]");
	parse_bad("[Global]\n", "plan.conf:1: unknown section [Global]");
	parse_bad("[senders a]\n", "plan.conf:1: unknown section [senders]");
	parse_bad("[global x]\n", "plan.conf:1: [global] takes no argument");
	parse_bad("[auto x]\n", "plan.conf:1: [auto] takes no argument");
	parse_bad("[sender]\n", "plan.conf:1: [sender] needs a name");
	parse_bad("[auto]\nsenders 2\n\n[auto]\n",
		  "plan.conf:4: duplicate section [auto] (first at line 1)");

	/* Bad names. */
	parse_bad("[sender a/b]\n",
		  "plan.conf:1: bad sender name 'a/b' " NAME_RULE);
	parse_bad("cycle_time 1ms\n[sender a*]\n",
		  "plan.conf:2: bad sender name 'a*' " NAME_RULE);
	parse_bad("[sender \xc3\xa9]\n",
		  "plan.conf:1: bad sender name '\xc3\xa9' " NAME_RULE);
	parse_bad("[sender a,b]\n",
		  "plan.conf:1: bad sender name 'a,b' " NAME_RULE);
	memset(name, 'n', 64);
	name[64] = '\0';
	snprintf(text, sizeof(text), "[sender %s]\n", name);
	snprintf(want, sizeof(want), "plan.conf:1: bad sender name '%.63s' "
		 NAME_RULE, name);
	parse_bad(text, want);

	/* Duplicates name the first definition. */
	parse_bad("cycle_time 10ms\n"
		  "[sender a]\nwindow 0 1ms\n"
		  "[sender b]\nwindow 1ms 1ms\n"
		  "[sender a]\nwindow 2ms 1ms\n",
		  "plan.conf:6: duplicate sender 'a' (first at line 2)");
}

static void test_mixed_auto_sender(void **state)
{
	(void)state;
	parse_bad("[sender a]\nwindow 0 1ms\n[auto]\nsenders 2\n",
		  "plan.conf:3: [auto] and [sender] sections cannot be mixed (line 1)");
	parse_bad("[auto]\nsenders 2\nwindow 1ms\ndead_time 0\n[sender a]\n",
		  "plan.conf:5: [auto] and [sender] sections cannot be mixed (line 1)");
}

static void test_too_many_senders(void **state)
{
	struct text t = { 0 };
	unsigned int s;

	(void)state;
	addf(&t, "cycle_time 10s\n");
	for (s = 0; s <= TDM_MAX_SENDERS; s++)
		addf(&t, "[sender s%u]\nwindow %u 500\n", s, s * 1000);
	/* The 1025th header is on line 2 + 2 * 1024. */
	parse_bad(t.s, "plan.conf:2050: too many senders (max 1024)");
	free(t.s);
}

/* ---- [global] keys ---------------------------------------------------- */

static void test_global_key_errors(void **state)
{
	(void)state;
	parse_bad("cylce_time 10ms\n",
		  "plan.conf:1: unknown key 'cylce_time' in [global]");
	parse_bad("[global]\nwindow 0 1ms\n",
		  "plan.conf:2: unknown key 'window' in [global]");
	parse_bad("[global]\nguard 1us\ncycle_time 1ms\nguard 2us\n",
		  "plan.conf:4: duplicate key 'guard' (first at line 2)");
	/* Also when [global] is opened again. */
	parse_bad("cycle_time 1ms\n[sender a]\nwindow 0 1us\n[global]\n"
		  "cycle_time 2ms\n",
		  "plan.conf:5: duplicate key 'cycle_time' (first at line 1)");
	parse_bad("cycle_time 1ms 2ms\n",
		  "plan.conf:1: 'cycle_time' takes one value");
	parse_bad("clock tai realtime\n", "plan.conf:1: 'clock' takes one value");
	parse_bad("version 1 2\n", "plan.conf:1: 'version' takes one value");
	parse_bad("clock gps\n",
		  "plan.conf:1: unknown clock 'gps' (use tai, realtime, monotonic or boottime)");
	parse_bad("clock CLOCK_MONOTONIC_RAW\n",
		  "plan.conf:1: unknown clock 'CLOCK_MONOTONIC_RAW' (use tai, realtime, monotonic or boottime)");
}

static void test_global_value_errors(void **state)
{
	(void)state;
	parse_bad("cycle_time 10xs\n",
		  "plan.conf:1: cycle_time: '10xs': unknown unit 'xs' (use ns, us, ms or s)");
	parse_bad("\ncycle_time 1.0000000001s\n",
		  "plan.conf:2: cycle_time: '1.0000000001s' is not a whole number of ns");
	parse_bad("cycle_time 99999999999s\n",
		  "plan.conf:1: cycle_time: '99999999999s' is too large");
	parse_bad("min_dead_time 1.5ns\n",
		  "plan.conf:1: min_dead_time: '1.5ns' is not a whole number of ns");
	parse_bad("lead_time soon\n",
		  "plan.conf:1: lead_time: 'soon': not a time (a number with ns, us, ms or s)");
	parse_bad("base_align -1s\n",
		  "plan.conf:1: base_align: '-1s': not a time (a number with ns, us, ms or s)");
	parse_bad("guard 1000000001\n",
		  "plan.conf:1: guard 1000000001ns is more than 1s");
	parse_bad("guard 5s\n", "plan.conf:1: guard 5s is more than 1s");
	parse_bad("guard 1x\n",
		  "plan.conf:1: guard: '1x': unknown unit 'x' (use ns, us, ms or s)");
	parse_bad("link_speed 1600001\n",
		  "plan.conf:1: link_speed: '1600001' is too large (max 1600000)");
	parse_bad("link_speed 10G\n",
		  "plan.conf:1: link_speed: '10G': not a number");
	parse_bad("bypass_ptp maybe\n",
		  "plan.conf:1: bypass_ptp: 'maybe': not a boolean (use on/off, yes/no, true/false or 1/0)");
	parse_bad("bypass_prio 6 16\n",
		  "plan.conf:1: bypass_prio: '16' is too large (max 15)");
	parse_bad("bypass_prio x\n",
		  "plan.conf:1: bypass_prio: 'x': not a number");
	parse_bad("version 4294967296\n",
		  "plan.conf:1: version: '4294967296' is too large (max 4294967295)");
	parse_bad("version -1\n", "plan.conf:1: version: '-1': not a number");
}

/* base_time: a time, at least 0, on the plan's clock. */
static void test_base_time_errors(void **state)
{
	(void)state;
	parse_bad("base_time soon\n",
		  "plan.conf:1: base_time: 'soon': not a time (a number with ns, us, ms or s)");
	parse_bad("base_time 17e17\n",
		  "plan.conf:1: base_time: '17e17': unknown unit 'e17' (use ns, us, ms or s)");
	parse_bad("\nbase_time -1\n", "plan.conf:2: base_time '-1' is negative");
	parse_bad("base_time -1700000000s tai\n",
		  "plan.conf:1: base_time '-1700000000s' is negative");
	parse_bad("base_time 9223372036854775808\n",
		  "plan.conf:1: base_time: '9223372036854775808' is too large (max 9223372036854775807ns)");
	parse_bad("base_time 1s tai now\n",
		  "plan.conf:1: 'base_time' takes TIME [CLOCK]");
	parse_bad("base_time 1s gps\n",
		  "plan.conf:1: base_time: unknown clock 'gps' (use tai, realtime, monotonic or boottime)");
	parse_bad("base_time 1s\nbase_time 2s\n",
		  "plan.conf:2: duplicate key 'base_time' (first at line 1)");
	/* Not on the plan's clock: the clock key may come before or after. */
	parse_bad("cycle_time 1ms\nbase_time 1700000000s realtime\n"
		  "[sender a]\nwindow 0 1us\n",
		  "plan.conf:2: base_time is on the realtime clock, not on the plan's clock (tai)");
	parse_bad("[global]\nbase_time 1s tai\nclock monotonic\n"
		  "cycle_time 1ms\n[sender a]\nwindow 0 1us\n",
		  "plan.conf:2: base_time is on the tai clock, not on the plan's clock (monotonic)");
	parse_bad("[auto]\nsenders 2\nwindow 1ms\ndead_time 0\n"
		  "[global]\nclock boottime\nbase_time 5s CLOCK_TAI\n",
		  "plan.conf:7: base_time is on the tai clock, not on the plan's clock (boottime)");
}

static void test_base_time(void **state)
{
	static const char text[] =
		"[global]\n"
		"cycle_time 1ms\n"
		"base_time 1700000000.5s\n"
		"[sender a]\n"
		"window 0 1us\n";
	struct tdm_plan p;
	char *out;

	(void)state;
	/* Optional: 0 (not chosen) without it. */
	parse_ok("cycle_time 1ms\n[sender a]\nwindow 0 1us\n", &p);
	assert_int_equal(p.base_time, 0);
	out = tdm_plan_format_alloc(&p);
	assert_non_null(out);
	assert_null(strstr(out, "base_time"));
	free(out);
	tdm_plan_free(&p);

	/* A time with a unit, on the plan's clock when no clock is named. */
	parse_ok(text, &p);
	assert_int_equal(p.base_time, 1700000000500000000LL);
	out = tdm_plan_format_alloc(&p);
	assert_non_null(out);
	assert_non_null(strstr(out, "\nbase_time      1700000000500000000 tai\n"));
	free(out);
	round_trip(&p);
	tdm_plan_free(&p);

	/* The clock named in any spelling, the largest time, every clock. */
	parse_ok("clock realtime\ncycle_time 1ms\n"
		 "base_time 9223372036854775807 CLOCK_REALTIME\n"
		 "[sender a]\nwindow 0 1us\n", &p);
	assert_int_equal(p.base_time, INT64_MAX);
	assert_int_equal(p.clockid, CLOCK_REALTIME);
	round_trip(&p);
	p.clockid = CLOCK_MONOTONIC;
	p.base_time = 1;
	round_trip(&p);
	p.clockid = CLOCK_BOOTTIME;
	round_trip(&p);
	p.clockid = CLOCK_TAI;
	round_trip(&p);
	tdm_plan_free(&p);
}

static void test_missing(void **state)
{
	(void)state;
	parse_bad("", "plan.conf: missing cycle_time in [global]");
	parse_bad("# nothing\nguard 1us\n",
		  "plan.conf: missing cycle_time in [global]");
	parse_bad("[sender a]\nwindow 0 1ms\n",
		  "plan.conf: missing cycle_time in [global]");
	parse_bad("cycle_time 1ms\n", "plan.conf: no [sender], [auto] or [barrel] section");
}

/* ---- [sender] --------------------------------------------------------- */

static void test_sender_key_errors(void **state)
{
	(void)state;
	parse_bad("cycle_time 1ms\n[sender a]\nwindo 0 1ms\n",
		  "plan.conf:3: unknown key 'windo' in [sender a]");
	parse_bad("cycle_time 1ms\n[sender a]\nguard 1us\n",
		  "plan.conf:3: unknown key 'guard' in [sender a]");
	parse_bad("cycle_time 1ms\n[sender a]\nwindow 0\n",
		  "plan.conf:3: 'window' takes OFFSET LENGTH");
	parse_bad("cycle_time 1ms\n[sender a]\nwindow 0 1 2 3\n",
		  "plan.conf:3: 'window' takes OFFSET LENGTH");
	parse_bad("cycle_time 1ms\n[sender a]\nwindow 0 1 x0\n",
		  "plan.conf:3: 'window' takes OFFSET LENGTH: no [receiver] section before it names a receiver");
	parse_bad("cycle_time 1ms\n[sender a]\nwindow 0 1zs\n",
		  "plan.conf:3: window: '1zs': unknown unit 'zs' (use ns, us, ms or s)");
	parse_bad("cycle_time 1ms\n[sender a]\nwindow 0.5ns 1us\n",
		  "plan.conf:3: window: '0.5ns' is not a whole number of ns");
	parse_bad("cycle_time 10ms\n[sender a]\n",
		  "plan.conf:2: sender 'a' has no windows");
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 0 1ms\n[sender b]\n"
		  "[sender c]\nwindow 2ms 1ms\n",
		  "plan.conf:4: sender 'b' has no windows");
}

static void test_too_many_windows(void **state)
{
	struct text t = { 0 };
	unsigned int s, k;

	(void)state;
	/* 65 windows for one sender: lines 3..67. */
	addf(&t, "cycle_time 10ms\n[sender a]\n");
	for (k = 0; k <= TDMWIN_MAX_WINDOWS; k++)
		addf(&t, "window %uus 1us\n", k * 10);
	parse_bad(t.s, "plan.conf:67: too many windows for sender 'a' (max 64)");
	free(t.s);

	/* 4097 windows in all: the first window of the 65th sender. */
	memset(&t, 0, sizeof(t));
	addf(&t, "cycle_time 10s\n");
	for (s = 0; s < 65; s++) {
		addf(&t, "[sender s%u]\n", s);
		for (k = 0; k < TDMWIN_MAX_WINDOWS; k++)
			addf(&t, "window %u 500\n", (s * 64 + k) * 1000);
	}
	parse_bad(t.s, "plan.conf:4163: too many windows in the plan (max 4096)");
	free(t.s);
}

/* ---- windows: validation with lines ------------------------------------ */

static void test_window_errors(void **state)
{
	(void)state;
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 1ms 1ms\nwindow 5ms 0\n",
		  "plan.conf:4: window 5ms+0 of 'a' has zero length");
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 0 1ms\n"
		  "\n\n\n\n\n\nwindow 8ms 3ms\n",
		  "plan.conf:10: window 8ms+3ms of 'a' ends at 11ms, after the cycle (10ms)");
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 10ms 1ns\n",
		  "plan.conf:3: window 10ms+1ns of 'a' ends at 10000001ns, after the cycle (10ms)");
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 20s 1s\n",
		  "plan.conf:3: window 20s+1s of 'a' ends at 21s, after the cycle (10ms)");
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 18446744073709551615 1\n",
		  "plan.conf:3: window 18446744073709551615ns+1ns of 'a' ends after the cycle (10ms)");
	parse_bad("guard 3ms\ncycle_time 10ms\n[sender a]\nwindow 0 3ms\n",
		  "plan.conf:4: guard 3ms is not shorter than window 0+3ms of 'a'");
	parse_bad("guard 4ms\ncycle_time 10ms\n[sender a]\nwindow 0 5ms\n"
		  "window 6ms 2ms\n",
		  "plan.conf:5: guard 4ms is not shorter than window 6ms+2ms of 'a'");
}

static void test_cycle_range(void **state)
{
	(void)state;
	parse_bad("cycle_time 999ns\n[sender a]\nwindow 0 1ns\n",
		  "plan.conf:1: cycle_time 999ns is outside 1us..10s");
	parse_bad("\ncycle_time 10000000001\n[sender a]\nwindow 0 1ms\n",
		  "plan.conf:2: cycle_time 10000000001ns is outside 1us..10s");
	parse_bad("cycle_time 0\n[sender a]\nwindow 0 1ms\n",
		  "plan.conf:1: cycle_time 0 is outside 1us..10s");
}

static void test_overlaps(void **state)
{
	(void)state;
	/* The example of the header. */
	parse_bad("cycle_time 10ms\n"		/* 1 */
		  "[sender a]\n"		/* 2 */
		  "window 0 3ms\n"		/* 3 */
		  "[sender b]\n"		/* 4 */
		  "window 2ms 3ms\n",		/* 5 */
		  "plan.conf:5: window 2ms+3ms of 'b' overlaps window 0+3ms of 'a' (line 3)");
	/* Reported at the later line even when it is earlier in the cycle. */
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 2ms 3ms\n"
		  "[sender b]\nwindow 0 3ms\n",
		  "plan.conf:5: window 0+3ms of 'b' overlaps window 2ms+3ms of 'a' (line 3)");
	/* Windows of the same sender. */
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 0 3ms\nwindow 1ms 1ms\n",
		  "plan.conf:4: window 1ms+1ms of 'a' overlaps window 0+3ms of 'a' (line 3)");
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 4ms 1ms\nwindow 4ms 1ms\n",
		  "plan.conf:4: window 4ms+1ms of 'a' overlaps window 4ms+1ms of 'a' (line 3)");
	/* One window inside another, and by a single ns. */
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 0 9ms\n[sender b]\n"
		  "window 8ms 500us\n",
		  "plan.conf:5: window 8ms+500us of 'b' overlaps window 0+9ms of 'a' (line 3)");
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 0 5000001\n[sender b]\n"
		  "window 5ms 5ms\n",
		  "plan.conf:5: window 5ms+5ms of 'b' overlaps window 0+5000001ns of 'a' (line 3)");
	/* Two senders starting at the same instant. */
	parse_bad("cycle_time 10ms\n[sender a]\nwindow 0 2ms\n[sender b]\n"
		  "window 0 1ms\n",
		  "plan.conf:5: window 0+1ms of 'b' overlaps window 0+2ms of 'a' (line 3)");
	/* Windows given out of order keep their lines through the sort. */
	parse_bad("cycle_time 10ms\n"		/* 1 */
		  "[sender a]\n"		/* 2 */
		  "window 5ms 1ms\n"		/* 3 */
		  "window 0 1ms\n"		/* 4 */
		  "[sender b]\n"		/* 5 */
		  "window 5500us 1ms\n",	/* 6 */
		  "plan.conf:6: window 5500us+1ms of 'b' overlaps window 5ms+1ms of 'a' (line 3)");
}

static void test_dead_time(void **state)
{
	(void)state;
	parse_bad("min_dead_time 1ms\ncycle_time 10ms\n"
		  "[sender a]\nwindow 0 2ms\n"		/* 4 */
		  "[sender b]\nwindow 2500us 2ms\n",	/* 6 */
		  "plan.conf:6: only 500us of dead time between window 0+2ms of 'a' (line 4) and window 2500us+2ms of 'b', less than min_dead_time 1ms");
	/* The later line may hold the earlier window. */
	parse_bad("min_dead_time 1ms\ncycle_time 10ms\n"
		  "[sender b]\nwindow 2500us 2ms\n"	/* 4 */
		  "[sender a]\nwindow 0 2ms\n",		/* 6 */
		  "plan.conf:6: only 500us of dead time between window 0+2ms of 'a' and window 2500us+2ms of 'b' (line 4), less than min_dead_time 1ms");
	/* Touching windows have no dead time at all. */
	parse_bad("min_dead_time 1ns\ncycle_time 10ms\n"
		  "[sender a]\nwindow 0 2ms\nwindow 2ms 1ms\n",
		  "plan.conf:5: only 0 of dead time between window 0+2ms of 'a' (line 4) and window 2ms+1ms of 'a', less than min_dead_time 1ns");
	/* Round the cycle: from the last window to the first of the next. */
	parse_bad("min_dead_time 1ms\ncycle_time 10ms\n"
		  "[sender a]\nwindow 0 2ms\n"		/* 4 */
		  "[sender b]\nwindow 3ms 6500us\n",	/* 6 */
		  "plan.conf:6: only 500us of dead time between window 3ms+6500us of 'b' and window 0+2ms of 'a' (line 4) round the cycle, less than min_dead_time 1ms");
	parse_bad("min_dead_time 1ms\ncycle_time 10ms\n"
		  "[sender a]\nwindow 500us 2ms\n"	/* 4 */
		  "[sender b]\nwindow 3500us 6500us\n",	/* 6 */
		  "plan.conf:6: only 500us of dead time between window 3500us+6500us of 'b' and window 500us+2ms of 'a' (line 4) round the cycle, less than min_dead_time 1ms");
	/* One window: the gap to its own next instance. */
	parse_bad("min_dead_time 1ms\ncycle_time 10ms\n[sender a]\n"
		  "window 0 9500us\n",
		  "plan.conf:4: only 500us of dead time between window 0+9500us of 'a' and its next instance, less than min_dead_time 1ms");
}

/* ---- [auto] ----------------------------------------------------------- */

static void test_auto_count(void **state)
{
	struct tdm_plan p;
	unsigned int i, k;
	char name[8];

	(void)state;
	parse_ok("[auto]\nsenders 3\nwindow 1ms\ndead_time 100us\n"
		 "windows_per_sender 2\n", &p);
	assert_int_equal(p.cycle_ns, 2 * 3 * 1100 * US);
	assert_int_equal(p.nsenders, 3);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%u", i);
		assert_string_equal(p.senders[i].name, name);
		assert_int_equal(p.senders[i].nwin, 2);
		assert_int_equal(p.senders[i].line, 2);
		for (k = 0; k < 2; k++)
			assert_window(&p.senders[i], k,
				      (k * 3 + i) * 1100 * US, 1 * MS);
	}
	tdm_plan_free(&p);

	/* windows_per_sender defaults to 1. */
	parse_ok("[auto]\nsenders 1\nwindow 1ms\ndead_time 0\n", &p);
	assert_int_equal(p.cycle_ns, 1 * MS);
	assert_int_equal(p.senders[0].nwin, 1);
	assert_window(&p.senders[0], 0, 0, 1 * MS);
	tdm_plan_free(&p);
}

static void test_auto_names(void **state)
{
	struct tdm_plan p;

	(void)state;
	parse_ok("min_dead_time 250ns\n"
		 "[auto]\n"
		 "senders alpha beta\n"		/* 3 */
		 "window 1.5us\n"
		 "senders gamma   # names go on\n"	/* 5 */
		 "dead_time 250ns\n", &p);
	assert_int_equal(p.nsenders, 3);
	assert_int_equal(p.cycle_ns, 3 * 1750);
	assert_string_equal(p.senders[0].name, "alpha");
	assert_string_equal(p.senders[1].name, "beta");
	assert_string_equal(p.senders[2].name, "gamma");
	assert_int_equal(p.senders[1].line, 3);
	assert_int_equal(p.senders[2].line, 5);
	assert_window(&p.senders[2], 0, 2 * 1750, 1500);
	round_trip(&p);
	tdm_plan_free(&p);

	/* Several numbers are names, not a count. */
	parse_ok("[auto]\nsenders 7 3\nwindow 1us\ndead_time 0\n", &p);
	assert_int_equal(p.nsenders, 2);
	assert_string_equal(p.senders[0].name, "7");
	assert_string_equal(p.senders[1].name, "3");
	tdm_plan_free(&p);
}

static void test_auto_errors(void **state)
{
	(void)state;
	parse_bad("[auto]\nsenders 3\nwindow 1ms\ndead_time 100us\nfoo 1\n",
		  "plan.conf:5: unknown key 'foo' in [auto]");
	parse_bad("[auto]\nsenders 3\nwindow 1ms\ncycle_time 10ms\n",
		  "plan.conf:4: unknown key 'cycle_time' in [auto]");
	parse_bad("[auto]\nsenders 3\nwindow 1ms\nwindow 2ms\n",
		  "plan.conf:4: duplicate key 'window' (first at line 3)");
	parse_bad("[auto]\nsenders 3\nsenders 4\n",
		  "plan.conf:3: duplicate key 'senders' (first at line 2)");
	parse_bad("[auto]\nsenders 3\nsenders a b\n",
		  "plan.conf:3: duplicate key 'senders' (first at line 2)");
	parse_bad("[auto]\nsenders a b\nsenders 3\n",
		  "plan.conf:3: duplicate key 'senders' (first at line 2)");
	parse_bad("[auto]\nwindow 1ms 2ms\n",
		  "plan.conf:2: 'window' takes one value");
	parse_bad("[auto]\nwindows_per_sender 1 2\n",
		  "plan.conf:2: 'windows_per_sender' takes one value");
	parse_bad("[auto]\nsenders 1025\n",
		  "plan.conf:2: senders: '1025' is too large (max 1024)");
	parse_bad("[auto]\nwindows_per_sender 65\n",
		  "plan.conf:2: windows_per_sender: '65' is too large (max 64)");
	parse_bad("[auto]\nwindows_per_sender two\n",
		  "plan.conf:2: windows_per_sender: 'two': not a number");
	parse_bad("[auto]\nwindow 1qs\n",
		  "plan.conf:2: window: '1qs': unknown unit 'qs' (use ns, us, ms or s)");
	parse_bad("[auto]\ndead_time 0.1ns\n",
		  "plan.conf:2: dead_time: '0.1ns' is not a whole number of ns");
	parse_bad("[auto]\nsenders a b/c\n",
		  "plan.conf:2: bad sender name 'b/c' " NAME_RULE);
	/* Duplicate names: on one line, on two lines. */
	parse_bad("[auto]\nsenders a b a\nwindow 1ms\ndead_time 0\n",
		  "plan.conf:2: duplicate sender 'a'");
	parse_bad("[auto]\nsenders a b\nsenders c a\nwindow 1ms\ndead_time 0\n",
		  "plan.conf:3: duplicate sender 'a' (first at line 2)");
}

static void test_auto_too_many_names(void **state)
{
	struct text t = { 0 };
	unsigned int i;

	(void)state;
	/* 128 lines of 8 names are 1024 senders; line 130 is one more. */
	addf(&t, "[auto]\n");
	for (i = 0; i < TDM_MAX_SENDERS; i++)
		addf(&t, "%s%sn%u", i && i % 8 == 0 ? "\n" : "",
		     i % 8 ? " " : "senders ", i);
	addf(&t, "\nsenders one_more\nwindow 1us\ndead_time 0\n");
	parse_bad(t.s, "plan.conf:130: too many senders (max 1024)");
	free(t.s);
}

static void test_auto_finish_errors(void **state)
{
	(void)state;
	parse_bad("cycle_time 10ms\n[auto]\nsenders 2\nwindow 1ms\ndead_time 0\n",
		  "plan.conf:1: cycle_time cannot be given with [auto] (the cycle is computed)");
	parse_bad("[auto]\nsenders 2\nwindow 1ms\ndead_time 0\n[global]\ncycle_time 2ms\n",
		  "plan.conf:6: cycle_time cannot be given with [auto] (the cycle is computed)");
	parse_bad("\n[auto]\nwindow 1ms\ndead_time 0\n",
		  "plan.conf:2: [auto] is missing 'senders'");
	parse_bad("[auto]\nsenders 2\ndead_time 0\n",
		  "plan.conf:1: [auto] is missing 'window'");
	parse_bad("[auto]\nsenders 2\nwindow 1ms\n",
		  "plan.conf:1: [auto] is missing 'dead_time'");
	parse_bad("[auto]\nsenders 2\nwindow 1ms\nwindows_per_sender 2\n",
		  "plan.conf:1: [auto] is missing 'dead_time'");
	/* The builder's errors, at the key at fault. */
	parse_bad("[auto]\nsenders 0\nwindow 1ms\ndead_time 0\n",
		  "plan.conf:2: senders must be 1..1024, not 0");
	parse_bad("[auto]\nsenders 2\nwindow 1ms\ndead_time 0\nwindows_per_sender 0\n",
		  "plan.conf:5: windows_per_sender must be 1..64, not 0");
	parse_bad("[auto]\nsenders 2\nwindow 0\ndead_time 1ms\n",
		  "plan.conf:3: window must not be 0");
	parse_bad("[auto]\nsenders 1024\nwindow 1ns\ndead_time 0\nwindows_per_sender 5\n",
		  "plan.conf:1: too many windows in the plan (max 4096)");
	parse_bad("[auto]\nsenders 11\nwindow 1s\ndead_time 0\n",
		  "plan.conf:1: cycle windows_per_sender x senders x (window + dead_time) is longer than 10s");
	parse_bad("[auto]\nsenders 1\nwindow 18446744073709551615\ndead_time 1\n",
		  "plan.conf:1: cycle windows_per_sender x senders x (window + dead_time) is longer than 10s");
	parse_bad("[auto]\nsenders 1024\nwindow 9007199254740992\ndead_time 0\n",
		  "plan.conf:1: cycle windows_per_sender x senders x (window + dead_time) is longer than 10s");
	/* Validation of the result. */
	parse_bad("[auto]\nsenders 1\nwindow 500ns\ndead_time 0\n",
		  "plan.conf:1: cycle_time 500ns is outside 1us..10s");
	parse_bad("min_dead_time 200us\n[auto]\nsenders 2\nwindow 1ms\ndead_time 100us\n",
		  "plan.conf:4: only 100us of dead time between window 0+1ms of '0' and window 1100us+1ms of '1', less than min_dead_time 200us");
	parse_bad("guard 1ms\n[auto]\nsenders 2\nwindow 1ms\ndead_time 0\n",
		  "plan.conf:4: guard 1ms is not shorter than window 0+1ms of '0'");
}

static void test_auto_function(void **state)
{
	static const char *const names[] = { "a", NULL, "c" };
	struct tdm_plan p;
	unsigned int t, n, i, k;
	char err[512];

	(void)state;
	/* The formula for a range of shapes. */
	for (t = 1; t <= 5; t++) {
		for (n = 1; n <= 3; n++) {
			tdm_plan_init(&p);
			assert_int_equal(tdm_plan_auto(&p, t, NULL, 7 * US, 3 * US,
						       n, err, sizeof(err)), 0);
			assert_int_equal(p.cycle_ns, n * t * 10 * US);
			assert_int_equal(p.nsenders, t);
			for (i = 0; i < t; i++)
				for (k = 0; k < n; k++)
					assert_window(&p.senders[i], k,
						      (k * t + i) * 10 * US,
						      7 * US);
			tdm_plan_free(&p);
		}
	}

	/* Names, NULL entries numbered; settings kept; senders replaced. */
	parse_ok("guard 1us\nclock boottime\ncycle_time 1ms\n[sender old]\n"
		 "window 0 1ms\n", &p);
	assert_int_equal(tdm_plan_auto(&p, 3, names, 1 * MS, 0, 1, err,
				       sizeof(err)), 0);
	assert_int_equal(p.guard_ns, 1 * US);
	assert_int_equal(p.clockid, CLOCK_BOOTTIME);
	assert_int_equal(p.cycle_ns, 3 * MS);
	assert_string_equal(p.senders[0].name, "a");
	assert_string_equal(p.senders[1].name, "1");
	assert_string_equal(p.senders[2].name, "c");
	assert_int_equal(p.senders[2].line, 0);
	tdm_plan_free(&p);
}

static void auto_bad(unsigned int n, const char *const *names, uint64_t w,
		     uint64_t d, unsigned int per, const char *want)
{
	struct tdm_plan p;
	char err[512] = "";

	build(&p, 1, 1 * MS);
	assert_int_equal(tdm_plan_auto(&p, n, names, w, d, per, err,
				       sizeof(err)), -1);
	assert_string_equal(err, want);
	tdm_plan_free(&p);
}

static void test_auto_function_errors(void **state)
{
	static const char *const dup[] = { "x", "y", "x" };
	static const char *const space[] = { "a b" };
	static const char *const longname[] = {
		"0123456789012345678901234567890123456789012345678901234567890123",
	};

	(void)state;
	auto_bad(0, NULL, MS, 0, 1, "senders must be 1..1024, not 0");
	auto_bad(1025, NULL, MS, 0, 1, "senders must be 1..1024, not 1025");
	auto_bad(2, NULL, MS, 0, 0, "windows_per_sender must be 1..64, not 0");
	auto_bad(2, NULL, MS, 0, 65, "windows_per_sender must be 1..64, not 65");
	auto_bad(2, NULL, 0, MS, 1, "window must not be 0");
	auto_bad(1024, NULL, 1, 0, 5, "too many windows in the plan (max 4096)");
	auto_bad(3, NULL, 4 * SEC, 0, 1,
		 "cycle windows_per_sender x senders x (window + dead_time) is longer than 10s");
	auto_bad(1, NULL, 1, UINT64_MAX, 1,
		 "cycle windows_per_sender x senders x (window + dead_time) is longer than 10s");
	auto_bad(1, longname, MS, 0, 1,
		 "bad sender name '012345678901234567890123456789012345678901234567890123456789012' " NAME_RULE);
	auto_bad(1, space, MS, 0, 1, "bad sender name 'a b' " NAME_RULE);
	auto_bad(3, dup, MS, 0, 1, "duplicate sender 'x'");
	auto_bad(1, NULL, 500, 0, 1, "cycle_time 500ns is outside 1us..10s");
}

/* ---- validation of plans built in code -------------------------------- */

static void test_validate_globals(void **state)
{
	struct tdm_plan p;

	(void)state;
	tdm_plan_init(&p);
	p.cycle_ns = 1 * MS;
	validate_bad(&p, "plan has no senders");
	tdm_plan_free(&p);

	build(&p, 1, 0);
	validate_bad(&p, "cycle_time 0 is outside 1us..10s");
	p.cycle_ns = 10 * SEC + 1;
	validate_bad(&p, "cycle_time 10000000001ns is outside 1us..10s");
	p.cycle_ns = 1 * MS;
	validate_ok(&p);
	p.guard_ns = TDMWIN_MAX_GUARD_NS + 1;
	validate_bad(&p, "guard 1000000001ns is more than 1s");
	p.guard_ns = 0;
	p.link_speed = TDMWIN_MAX_LINK_SPEED + 1;
	validate_bad(&p, "link_speed 1600001 is more than 1600000 Mbit/s");
	p.link_speed = TDMWIN_MAX_LINK_SPEED;
	validate_ok(&p);
	p.clockid = 99;
	validate_bad(&p, "unsupported clock id 99");
	p.clockid = CLOCK_MONOTONIC;
	validate_ok(&p);
	tdm_plan_free(&p);

	build(&p, TDM_MAX_SENDERS + 1, 10 * SEC);
	validate_bad(&p, "too many senders (max 1024)");
	p.nsenders = TDM_MAX_SENDERS;
	validate_ok(&p);
	tdm_plan_free(&p);
}

static void test_validate_senders(void **state)
{
	struct tdm_plan p;
	unsigned int s, k;

	(void)state;
	build(&p, 3, 10 * MS);
	strcpy(p.senders[1].name, "");
	validate_bad(&p, "bad sender name '' " NAME_RULE);
	strcpy(p.senders[1].name, "a b");
	validate_bad(&p, "bad sender name 'a b' " NAME_RULE);
	/* A name filling the array without a terminator. */
	memset(p.senders[1].name, 'q', TDM_NAME_MAX);
	validate_bad(&p, "bad sender name "
		     "'qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq' "
		     NAME_RULE);
	strcpy(p.senders[1].name, "s0");
	validate_bad(&p, "duplicate sender 's0'");
	/* With lines known but no file: "line N: ". */
	p.senders[0].line = 3;
	p.senders[1].line = 7;
	validate_bad(&p, "line 7: duplicate sender 's0' (first at line 3)");
	strcpy(p.senders[1].name, "s1");
	p.senders[2].nwin = 0;
	validate_bad(&p, "sender 's2' has no windows");
	p.senders[2].nwin = TDMWIN_MAX_WINDOWS + 1;
	validate_bad(&p, "too many windows for sender 's2' (max 64)");
	p.senders[2].nwin = 1;
	validate_ok(&p);
	tdm_plan_free(&p);

	build(&p, 65, 10 * SEC);
	for (s = 0; s < 65; s++) {
		p.senders[s].nwin = TDMWIN_MAX_WINDOWS;
		for (k = 0; k < TDMWIN_MAX_WINDOWS; k++) {
			p.senders[s].win[k].offset = (s * 64 + k) * 1000;
			p.senders[s].win[k].length = 500;
		}
	}
	validate_bad(&p, "too many windows in the plan (max 4096)");
	p.nsenders = 64;
	validate_ok(&p);
	tdm_plan_free(&p);
}

static void test_validate_windows(void **state)
{
	struct tdm_plan p;

	(void)state;
	build(&p, 2, 10 * MS);
	p.senders[0].win[0] = (struct tdm_window){ 8 * MS, 3 * MS, 0 };
	validate_bad(&p, "window 8ms+3ms of 's0' ends at 11ms, after the cycle (10ms)");
	p.senders[0].win[0] = (struct tdm_window){ 0, 0, 0 };
	validate_bad(&p, "window 0+0 of 's0' has zero length");
	p.senders[0].win[0] = (struct tdm_window){ UINT64_MAX, 2, 0 };
	validate_bad(&p, "window 18446744073709551615ns+2ns of 's0' ends after the cycle (10ms)");
	p.senders[0].win[0] = (struct tdm_window){ 0, 3 * MS, 0 };
	p.senders[1].win[0] = (struct tdm_window){ 2 * MS, 3 * MS, 0 };
	validate_bad(&p, "window 2ms+3ms of 's1' overlaps window 0+3ms of 's0'");
	p.senders[0].line = 5;
	p.senders[1].line = 9;
	validate_bad(&p, "line 9: window 2ms+3ms of 's1' overlaps window 0+3ms of 's0' (line 5)");
	p.senders[1].win[0] = (struct tdm_window){ 3 * MS, 3 * MS, 0 };
	p.guard_ns = 3 * MS;
	validate_bad(&p, "line 5: guard 3ms is not shorter than window 0+3ms of 's0'");
	p.guard_ns = 0;
	p.min_dead_ns = 1 * MS;
	validate_bad(&p, "line 9: only 0 of dead time between window 0+3ms of 's0' (line 5) and window 3ms+3ms of 's1', less than min_dead_time 1ms");
	p.senders[1].win[0].offset = 4 * MS;
	validate_ok(&p);
	tdm_plan_free(&p);

	/* Validation sorts each sender's windows. */
	build(&p, 1, 10 * MS);
	p.senders[0].nwin = 3;
	p.senders[0].win[0] = (struct tdm_window){ 6 * MS, 1 * MS, 0 };
	p.senders[0].win[1] = (struct tdm_window){ 0, 1 * MS, 0 };
	p.senders[0].win[2] = (struct tdm_window){ 3 * MS, 1 * MS, 0 };
	validate_ok(&p);
	assert_window(&p.senders[0], 0, 0, 1 * MS);
	assert_window(&p.senders[0], 1, 3 * MS, 1 * MS);
	assert_window(&p.senders[0], 2, 6 * MS, 1 * MS);
	tdm_plan_free(&p);
}

/* ---- base time -------------------------------------------------------- */

static int64_t base(uint64_t lead, uint64_t align, uint64_t cycle, int64_t now)
{
	struct tdm_plan p;

	tdm_plan_init(&p);
	p.lead_ns = lead;
	p.align_ns = align;
	p.cycle_ns = cycle;
	return tdm_plan_pick_base(&p, now);
}

static void test_base_default(void **state)
{
	struct tdm_plan p;

	(void)state;
	/* Defaults: at least 2 s ahead, on a whole second. */
	tdm_plan_init(&p);
	p.cycle_ns = 3300 * US;
	assert_int_equal(tdm_plan_pick_base(&p, 5300 * (int64_t)MS), 8 * SEC);
	assert_int_equal(tdm_plan_pick_base(&p, 0), 2 * SEC);
	/* Exactly on a boundary: that boundary. */
	assert_int_equal(tdm_plan_pick_base(&p, 5 * (int64_t)SEC), 7 * SEC);
	assert_int_equal(tdm_plan_pick_base(&p, 5 * (int64_t)SEC + 1), 8 * SEC);
	assert_int_equal(tdm_plan_pick_base(&p, 5 * (int64_t)SEC - 1), 7 * SEC);

	assert_int_equal(base(0, SEC, MS, 1), SEC);
	assert_int_equal(base(0, SEC, MS, 0), 0);
	assert_int_equal(base(0, 1, MS, 12345), 12345);
}

static void test_base_cycle_aligned(void **state)
{
	(void)state;
	/* align 0: the next cycle boundary after now + lead. */
	assert_int_equal(base(0, 0, 3 * MS, 1), 3 * MS);
	assert_int_equal(base(0, 0, 3 * MS, 3 * MS), 3 * MS);
	assert_int_equal(base(0, 0, 3 * MS, 3 * MS + 1), 6 * MS);
	assert_int_equal(base(2 * SEC, 0, 3300 * US, 0), 2003100 * US);
	assert_int_equal(base(1, 0, 3 * MS, 3 * MS - 1), 3 * MS);
	/* No alignment at all if the cycle is not set either. */
	assert_int_equal(base(10, 0, 0, 5), 15);
}

static void test_base_negative(void **state)
{
	(void)state;
	/* Floor rounding below zero. */
	assert_int_equal(base(2 * SEC, SEC, MS, -5500 * (int64_t)MS),
			 -3 * (int64_t)SEC);
	assert_int_equal(base(0, SEC, MS, -1), 0);
	assert_int_equal(base(0, SEC, MS, -(int64_t)SEC), -(int64_t)SEC);
	assert_int_equal(base(0, SEC, MS, -(int64_t)SEC - 1),
			 -(int64_t)SEC);
	assert_int_equal(base(0, 0, 3 * MS, -1), 0);
	assert_int_equal(base(0, 0, 3 * MS, -4 * (int64_t)MS),
			 -3 * (int64_t)MS);
	/* The most negative now. */
	assert_int_equal(base(0, 1, MS, INT64_MIN), INT64_MIN);
	assert_int_equal(base(0, SEC, MS, INT64_MIN),
			 INT64_MIN - (INT64_MIN % (int64_t)SEC));
	assert_int_equal(base(2 * SEC, SEC, MS, INT64_MIN),
			 INT64_MIN - (INT64_MIN % (int64_t)SEC) + 2 * (int64_t)SEC);
	/* Alignment beyond int64. */
	assert_int_equal(base(0, UINT64_MAX, MS, -3 * (int64_t)SEC), 0);
	assert_int_equal(base(0, UINT64_MAX, MS, INT64_MIN), 0);
}

static void test_base_huge(void **state)
{
	int64_t top = INT64_MAX - (INT64_MAX % (int64_t)SEC);

	(void)state;
	/* The last whole second that int64 holds is still found. */
	assert_int_equal(base(0, SEC, MS, top), top);
	assert_int_equal(base(0, SEC, MS, top - 5), top);
	assert_int_equal(base(2 * SEC, SEC, MS, top - 2 * (int64_t)SEC), top);
	/* Past it there is no answer: INT64_MAX, never. */
	assert_int_equal(base(0, SEC, MS, top + 1), INT64_MAX);
	assert_int_equal(base(2 * SEC, SEC, MS, INT64_MAX), INT64_MAX);
	assert_int_equal(base(UINT64_MAX, SEC, MS, 0), INT64_MAX);
	assert_int_equal(base(UINT64_MAX, SEC, MS, INT64_MAX), INT64_MAX);
	assert_int_equal(base(UINT64_MAX, 0, 0, INT64_MIN),
			 (int64_t)((__int128)INT64_MIN + UINT64_MAX));
	assert_int_equal(base(0, 1, MS, INT64_MAX), INT64_MAX);
	assert_int_equal(base(0, 0, 3 * MS, INT64_MAX), INT64_MAX);
	assert_int_equal(base(0, UINT64_MAX, MS, 1), INT64_MAX);
}

static void test_base_property(void **state)
{
	static const uint64_t aligns[] = { 0, 1, 7, 1000, SEC, 3 * SEC };
	uint64_t seed = 88172645463325252ULL, align, m;
	int64_t now, t;
	unsigned int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		now = (int64_t)(seed % (2000 * SEC)) - (int64_t)(1000 * SEC);
		align = aligns[i % TDM_ARRAY_SIZE(aligns)];
		t = base(seed % (5 * SEC), align, 3300 * US, now);
		m = align ? align : 3300 * US;
		/* At least now + lead, a multiple of m, the smallest such. */
		assert_true(t >= now + (int64_t)(seed % (5 * SEC)));
		assert_true(((t % (int64_t)m) + (int64_t)m) % (int64_t)m == 0);
		assert_true(t - (int64_t)m < now + (int64_t)(seed % (5 * SEC)));
	}
}

/* ---- digest ----------------------------------------------------------- */

static void digest_of(const struct tdm_plan *p, uint8_t out[32])
{
	static const uint8_t zero[32];

	tdm_plan_digest(p, out);
	assert_memory_not_equal(out, zero, 32);
}

static void test_digest(void **state)
{
	uint8_t d0[32], d1[32];
	struct tdm_plan p, q;
	struct tdm_window w;

	(void)state;
	load_example("plan-3senders.conf", &p);
	digest_of(&p, d0);
	digest_of(&p, d1);
	assert_memory_equal(d0, d1, 32);

	/* Not part of the digest: numbering, phase, policy, dead time. */
	assert_int_equal(tdm_plan_copy(&q, &p), 0);
	q.version = 99;
	q.base_time = 123456789;
	q.lead_ns = 7;
	q.align_ns = 0;
	q.min_dead_ns = 0;
	q.senders[1].line = 1000;
	digest_of(&q, d1);
	assert_memory_equal(d0, d1, 32);
	/* Windows in another order are the same windows. */
	w = q.senders[0].win[0];
	q.senders[0].win[0] = q.senders[0].win[1];
	q.senders[0].win[1] = w;
	digest_of(&q, d1);
	assert_memory_equal(d0, d1, 32);
	tdm_plan_free(&q);

#define CHANGED(stmt)						\
	do {							\
		assert_int_equal(tdm_plan_copy(&q, &p), 0);	\
		stmt;						\
		digest_of(&q, d1);				\
		assert_memory_not_equal(d0, d1, 32);		\
		tdm_plan_free(&q);				\
	} while (0)

	CHANGED(q.clockid = CLOCK_REALTIME);
	CHANGED(q.cycle_ns++);
	CHANGED(q.guard_ns++);
	CHANGED(q.link_speed = 10000);
	CHANGED(q.bypass_prios ^= 1);
	CHANGED(q.bypass_ptp = !q.bypass_ptp);
	CHANGED(q.senders[2].name[0] = 'd');
	CHANGED(q.senders[2].win[1].offset++);
	CHANGED(q.senders[2].win[1].length--);
	CHANGED(q.senders[2].nwin--);
	CHANGED(q.nsenders--);
	/* Moving a window from one sender to the other is a change. */
	CHANGED(q.senders[1].win[q.senders[1].nwin++] =
		q.senders[2].win[--q.senders[2].nwin]);
#undef CHANGED
	tdm_plan_free(&p);

	/* An unchecked plan with a bad window count is read only so far. */
	build(&p, 1, 1 * MS);
	p.senders[0].nwin = 1000;
	digest_of(&p, d0);
	p.senders[0].nwin = TDMWIN_MAX_WINDOWS;
	digest_of(&p, d1);
	assert_memory_equal(d0, d1, 32);
	tdm_plan_free(&p);
}

/* ---- format, equal, copy ---------------------------------------------- */

static void test_examples(void **state)
{
	struct tdm_plan p;

	(void)state;
	load_example("plan-3senders.conf", &p);
	assert_int_equal(p.nsenders, 3);
	assert_int_equal(p.cycle_ns, 10 * MS);
	assert_int_equal(p.min_dead_ns, 100 * US);
	assert_int_equal(p.guard_ns, 2 * US);
	assert_int_equal(p.bypass_prios, 1U << 7);
	assert_string_equal(p.senders[0].name, "a");
	assert_window(&p.senders[0], 0, 0, 2 * MS);
	assert_window(&p.senders[0], 1, 6300 * US, 1700 * US);
	assert_string_equal(p.senders[1].name, "b");
	assert_window(&p.senders[1], 0, 2100 * US, 2 * MS);
	assert_string_equal(p.senders[2].name, "c");
	assert_window(&p.senders[2], 1, 8100 * US, 1800 * US);
	round_trip(&p);
	tdm_plan_free(&p);

	load_example("plan-auto.conf", &p);
	assert_int_equal(p.nsenders, 4);
	assert_int_equal(p.cycle_ns, 8800 * US);
	assert_string_equal(p.senders[3].name, "3");
	assert_window(&p.senders[3], 1, 7700 * US, 1 * MS);
	assert_int_equal(p.bypass_prios, (1U << 6) | (1U << 7));
	round_trip(&p);
	tdm_plan_free(&p);

	load_example("plan-barrel.conf", &p);
	assert_int_equal(p.nsenders, 4);
	assert_int_equal(p.nreceivers, 3);
	assert_int_equal(p.cycle_ns, 4 * MS);
	assert_string_equal(p.receivers[2].addr, "198.18.1.3");
	assert_int_equal(tdm_plan_dest_ns(&p, 2), 3600 * US);
	round_trip(&p);
	tdm_plan_free(&p);

	load_example("plan-corner.conf", &p);
	assert_int_equal(p.nreceivers, 2);
	assert_int_equal(tdm_plan_pair_ns(&p, 0, 0), 1500 * US);
	assert_int_equal(tdm_plan_pair_ns(&p, 0, 1), 500 * US);
	round_trip(&p);
	tdm_plan_free(&p);
}

static void test_format(void **state)
{
	static const char want[] =
		"# tdmwin window plan\n"
		"[global]\n"
		"clock          monotonic\n"
		"cycle_time     1500us\n"
		"guard          7ns\n"
		"min_dead_time  0\n"
		"lead_time      2s\n"
		"base_align     0\n"
		"link_speed     25000\n"
		"bypass_ptp     off\n"
		"version        3\n"
		"\n"
		"[sender node-1.x]\n"
		"window 0          500us\n"
		"window 1ms        250us\n";
	char buf[1024];
	struct tdm_plan p;
	int n;

	(void)state;
	parse_ok("clock monotonic\ncycle_time 1.5ms\nguard 7\nbase_align 0\n"
		 "link_speed 25000\nbypass_ptp no\nversion 3\n"
		 "[sender node-1.x]\nwindow 1ms 250us\nwindow 0 0.5ms\n", &p);
	n = tdm_plan_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));

	/* Exactly the room it needs, and one byte less. */
	assert_int_equal(tdm_plan_format(&p, buf, strlen(want) + 1), n);
	errno = 0;
	assert_int_equal(tdm_plan_format(&p, buf, strlen(want)), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(tdm_plan_format(&p, NULL, 0), -1);
	assert_int_equal(tdm_plan_format(&p, buf, 0), -1);
	round_trip(&p);
	tdm_plan_free(&p);
}

static void test_format_built(void **state)
{
	struct tdm_plan p;
	char *text;

	(void)state;
	/* Every bypass priority: more values than one line takes. */
	build(&p, 3, 1 * MS);
	p.bypass_prios = 0xffff;
	p.base_time = 1700000000000000000LL;
	p.version = 7;
	p.lead_ns = 0;
	p.clockid = CLOCK_REALTIME;
	validate_ok(&p);
	text = tdm_plan_format_alloc(&p);
	assert_non_null(text);
	assert_non_null(strstr(text, "bypass_prio    0 1 2 3 4 5 6 7\n"
				     "bypass_prio    8 9 10 11 12 13 14 15\n"));
	assert_non_null(strstr(text, "\nbase_time      1700000000000000000 realtime\n"));
	assert_null(strstr(text, "# base_time"));
	assert_non_null(strstr(text, "[sender s2]\nwindow 2us        500ns\n"));
	free(text);
	round_trip(&p);

	/* Every clock. */
	p.clockid = CLOCK_BOOTTIME;
	round_trip(&p);
	p.clockid = CLOCK_TAI;
	p.bypass_prios = 0x8001;
	round_trip(&p);

	/* The kernel knows priorities 0..15 only. */
	p.bypass_prios = 0x10000;
	assert_int_equal(tdm_plan_validate(&p, NULL, 0), -1);
	tdm_plan_free(&p);
}

/* What tdmd's plan show writes: the active plan, then the pending one. */
static void test_parse_list(void **state)
{
	struct tdm_plan a, b, got[3];
	char err[512] = "", *ta, *tb, *text;
	int n;

	(void)state;
	build(&a, 2, 1 * MS);
	a.version = 3;
	a.base_time = 1700000000000000000LL;
	build(&b, 3, 2 * MS);
	b.version = 4;
	b.base_time = 1700000005000000000LL;
	validate_ok(&a);
	validate_ok(&b);
	ta = tdm_plan_format_alloc(&a);
	tb = tdm_plan_format_alloc(&b);
	assert_non_null(ta);
	assert_non_null(tb);
	assert_true(asprintf(&text, "# active\n%s\n# pending\n%s", ta, tb) > 0);
	n = tdm_plan_parse_list(text, "tdmd", got, 3, err, sizeof(err));
	if (n < 0)
		fail_msg("%s\n%s", err, text);
	assert_int_equal(n, 2);
	assert_true(tdm_plan_equal(&got[0], &a));
	assert_true(tdm_plan_equal(&got[1], &b));
	tdm_plan_free(&got[0]);
	tdm_plan_free(&got[1]);

	/* One plan, two, none. */
	assert_int_equal(tdm_plan_parse_list(ta, "tdmd", got, 1, err, sizeof(err)), 1);
	assert_int_equal(got[0].base_time, a.base_time);
	tdm_plan_free(&got[0]);
	assert_int_equal(tdm_plan_parse_list(text, "tdmd", got, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tdmd:"));
	assert_non_null(strstr(err, ": more than 1 plans"));
	assert_int_equal(tdm_plan_parse_list("# no plan installed yet\n", "tdmd",
					     got, 3, err, sizeof(err)), 0);
	assert_int_equal(tdm_plan_parse_list("", "tdmd", got, 3, err, sizeof(err)), 0);
	/* A plan file whose keys come before any section is one plan. */
	assert_int_equal(tdm_plan_parse_list("cycle_time 1ms\n[sender a]\nwindow 0 1us\n",
					     "p", got, 3, err, sizeof(err)), 1);
	tdm_plan_free(&got[0]);
	free(text);

	/* Errors name the line of the whole text. */
	assert_true(asprintf(&text, "%s[global]\ncycle_time 1ms\nbase_time -1\n", ta) > 0);
	n = tdm_plan_parse_list(text, "tdmd", got, 3, err, sizeof(err));
	assert_int_equal(n, -1);
	{
		char want[64];
		int lines = 0;
		const char *c;

		for (c = ta; *c; c++)
			lines += *c == '\n';
		snprintf(want, sizeof(want), "tdmd:%d: base_time '-1' is negative",
			 lines + 3);
		assert_string_equal(err, want);
	}
	free(text);
	free(ta);
	free(tb);
	tdm_plan_free(&a);
	tdm_plan_free(&b);
}

/* The one JSON schema of a plan (tdmd, tdmstat, tdmctl -j, tdmplot). */
static void test_json(void **state)
{
	struct tdm_json j;
	struct tdm_plan p;

	(void)state;
	build(&p, 2, 1 * MS);
	p.version = 5;
	p.base_time = -7;
	p.guard_ns = 10;
	p.min_dead_ns = 20;
	p.link_speed = 1000;
	p.bypass_prios = 0x81;
	p.senders[1].nwin = 2;
	p.senders[1].win[1].offset = 2000;
	p.senders[1].win[1].length = 300;
	tdm_json_init(&j);
	tdm_json_obj_open(&j, NULL);
	tdm_plan_json(&j, "active", &p);
	tdm_json_obj_close(&j);
	assert_string_equal(tdm_json_finish(&j),
		"{\"active\":{\"version\":5,\"clock\":\"tai\",\"cycle_ns\":1000000,"
		"\"base_time\":-7,\"guard_ns\":10,\"min_dead_ns\":20,"
		"\"link_speed\":1000,\"bypass_prios\":129,\"bypass_ptp\":true,"
		"\"senders\":[{\"sender\":0,\"name\":\"s0\",\"windows\":"
		"[{\"offset_ns\":0,\"length_ns\":500}]},"
		"{\"sender\":1,\"name\":\"s1\",\"windows\":"
		"[{\"offset_ns\":1000,\"length_ns\":500},"
		"{\"offset_ns\":2000,\"length_ns\":300}]}]}}\n");
	tdm_json_free(&j);
	tdm_plan_free(&p);
}

static void test_equal_copy(void **state)
{
	struct tdm_plan p, q;

	(void)state;
	load_example("plan-3senders.conf", &p);
	assert_int_equal(tdm_plan_copy(&q, &p), 0);
	assert_ptr_not_equal(q.senders, p.senders);
	assert_true(tdm_plan_equal(&p, &q));
	/* Lines do not matter; everything else does. */
	q.senders[0].line = 77;
	assert_true(tdm_plan_equal(&p, &q));
	q.base_time = 1;
	assert_false(tdm_plan_equal(&p, &q));
	q.base_time = 0;
	q.lead_ns++;
	assert_false(tdm_plan_equal(&p, &q));
	q.lead_ns--;
	q.senders[1].win[0].length++;
	assert_false(tdm_plan_equal(&p, &q));
	/* The copy is deep. */
	assert_int_equal(p.senders[1].win[0].length, 2 * MS);
	q.senders[1].win[0].length--;
	strcpy(q.senders[2].name, "z");
	assert_false(tdm_plan_equal(&p, &q));
	tdm_plan_free(&q);

	/* An empty plan copies without allocating. */
	tdm_plan_free(&p);
	assert_int_equal(tdm_plan_copy(&q, &p), 0);
	assert_null(q.senders);
	assert_true(tdm_plan_equal(&p, &q));
	tdm_plan_free(&q);
}

/* ---- files ------------------------------------------------------------ */

static void test_load_errors(void **state)
{
	char path[] = "/tmp/test_plan.XXXXXX", err[512], want[600];
	struct tdm_plan p;
	int fd;

	(void)state;
	assert_int_equal(tdm_plan_load("/nonexistent/plan.conf", &p, err,
				       sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent/plan.conf: cannot open: No such file or directory");
	assert_null(p.senders);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "cycle_time 1ms\n[sender a]\nwindow 2ms 1ms\n", 41), 41);
	assert_int_equal(tdm_plan_load(path, &p, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "%s:3: window 2ms+1ms of 'a' ends at 3ms, after the cycle (1ms)", path);
	assert_string_equal(err, want);
	assert_int_equal(write(fd, "\0", 1), 1);
	assert_int_equal(tdm_plan_load(path, &p, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: contains a NUL byte", path);
	assert_string_equal(err, want);
	close(fd);
	unlink(path);
}

static void test_parse_without_file_name(void **state)
{
	struct tdm_plan p;
	char err[512];

	(void)state;
	assert_int_equal(tdm_plan_parse("cycle_time 10ms\n[sender a]\n"
					"window 8ms 3ms\n", NULL, &p, err,
					sizeof(err)), -1);
	assert_string_equal(err, "line 3: window 8ms+3ms of 'a' ends at 11ms, after the cycle (10ms)");
	assert_int_equal(tdm_plan_parse("guard 1us\nfoo 1\n", NULL, &p, err,
					sizeof(err)), -1);
	assert_string_equal(err, "line 2: unknown key 'foo' in [global]");
	assert_int_equal(tdm_plan_parse("", NULL, &p, err, sizeof(err)), -1);
	assert_string_equal(err, "missing cycle_time in [global]");
	/* No buffer at all. */
	assert_int_equal(tdm_plan_parse("", NULL, &p, NULL, 0), -1);
	assert_int_equal(tdm_plan_parse("x 1", "f", &p, NULL, 0), -1);
	/* A short buffer cuts the message. */
	assert_int_equal(tdm_plan_parse("", "plan.conf", &p, err, 12), -1);
	assert_string_equal(err, "plan.conf: ");
	assert_int_equal(tdm_plan_parse("", "a-very-long-file-name.conf", &p,
					err, 5), -1);
	assert_string_equal(err, "a-ve");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_all_keys),
		cmocka_unit_test(test_parse_defaults),
		cmocka_unit_test(test_parse_limits_ok),
		cmocka_unit_test(test_parse_max_windows_ok),
		cmocka_unit_test(test_parse_max_senders_ok),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_section_errors),
		cmocka_unit_test(test_mixed_auto_sender),
		cmocka_unit_test(test_too_many_senders),
		cmocka_unit_test(test_global_key_errors),
		cmocka_unit_test(test_global_value_errors),
		cmocka_unit_test(test_base_time_errors),
		cmocka_unit_test(test_base_time),
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_sender_key_errors),
		cmocka_unit_test(test_too_many_windows),
		cmocka_unit_test(test_window_errors),
		cmocka_unit_test(test_cycle_range),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_dead_time),
		cmocka_unit_test(test_auto_count),
		cmocka_unit_test(test_auto_names),
		cmocka_unit_test(test_auto_errors),
		cmocka_unit_test(test_auto_too_many_names),
		cmocka_unit_test(test_auto_finish_errors),
		cmocka_unit_test(test_auto_function),
		cmocka_unit_test(test_auto_function_errors),
		cmocka_unit_test(test_validate_globals),
		cmocka_unit_test(test_validate_senders),
		cmocka_unit_test(test_validate_windows),
		cmocka_unit_test(test_base_default),
		cmocka_unit_test(test_base_cycle_aligned),
		cmocka_unit_test(test_base_negative),
		cmocka_unit_test(test_base_huge),
		cmocka_unit_test(test_base_property),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_built),
		cmocka_unit_test(test_equal_copy),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_parse_without_file_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
