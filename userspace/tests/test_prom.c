// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libtdm's Prometheus text writer (tdm_prom): escaping of
 * label values and help text, times in exact decimal seconds, and the
 * qdisc's families (each once, counters ending in _total).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tdm_prom.h"

/* What fn wrote, NUL-terminated; the caller frees it. */
static char *capture(void (*fn)(struct tdm_prom *p, void *arg), void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct tdm_prom p;

	assert_non_null(f);
	tdm_prom_init(&p, f);
	fn(&p, arg);
	fclose(f);
	return text;
}

static void escapes(struct tdm_prom *p, void *arg)
{
	const char *const l[] = { "name", "a\"b\\c\nd", "x", "", NULL };

	(void)arg;
	tdm_prom_family(p, "t_info", "gauge", "back\\slash\nnewline \"quoted\"");
	tdm_prom_u64(p, "t_info", l, 1);
	tdm_prom_s64(p, "t_s", NULL, -5);
	tdm_prom_ns(p, "t_seconds", NULL, 0);
	tdm_prom_ns(p, "t_seconds", NULL, 1);
	tdm_prom_ns(p, "t_seconds", NULL, -1234567890123LL);
	tdm_prom_ns(p, "t_seconds", NULL, INT64_MIN);
	tdm_prom_u64(p, "t_u", NULL, UINT64_MAX);
}

static void test_escapes(void **state)
{
	char *t = capture(escapes, NULL);

	(void)state;
	assert_string_equal(t,
		"# HELP t_info back\\\\slash\\nnewline \"quoted\"\n"
		"# TYPE t_info gauge\n"
		"t_info{name=\"a\\\"b\\\\c\\nd\",x=\"\"} 1\n"
		"t_s -5\n"
		"t_seconds 0.000000000\n"
		"t_seconds 0.000000001\n"
		"t_seconds -1234.567890123\n"
		"t_seconds -9223372036.854775808\n"
		"t_u 18446744073709551615\n");
	free(t);
}

static void qdisc(struct tdm_prom *p, void *arg)
{
	tdm_prom_qdisc(p, "eth0", arg);
}

static void test_qdisc(void **state)
{
	struct tdm_qdisc_info q = { .present = true };
	char *t, *s;
	unsigned int families = 0;

	(void)state;
	t = capture(qdisc, &q);
	/* Every family once; every counter named _total. */
	for (s = t; (s = strstr(s, "# TYPE ")); s++) {
		char name[128], type[32], again[160];

		assert_int_equal(sscanf(s, "# TYPE %127s %31s", name, type), 2);
		snprintf(again, sizeof(again), "# TYPE %s ", name);
		assert_null(strstr(s + 1, again));
		if (!strcmp(type, "counter"))
			assert_non_null(strstr(name, "_total"));
		families++;
	}
	assert_true(families > 25);
	free(t);
	q.present = false;
	t = capture(qdisc, &q);
	assert_string_equal(t,
		"# HELP tdmwin_qdisc_present 1 if a tdmwin qdisc is at the configured place\n"
		"# TYPE tdmwin_qdisc_present gauge\n"
		"tdmwin_qdisc_present{interface=\"eth0\"} 0\n");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_qdisc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
