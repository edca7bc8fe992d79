// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libtdm's Prometheus text writer (tdm_prom): escaping of
 * label values and help text, times in exact decimal seconds, and the
 * qdisc's families (each once, counters ending in _total); the counters
 * per window slot from a dump message through tdm_qdisc_parse() to their
 * samples and the worst slots; the class of each window from libtdm's
 * plan builder (tdm_qdisc_put_windows) through the parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tdm_prom.h"
#include "tdm_qdisc.h"

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
	struct tdm_prom_inst one = { .q = arg };

	tdm_prom_qdisc(p, "eth0", &one, 1);
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

/* One slot nest: its index and counters, the margin only if frames. */
static void put_slot(struct nlmsghdr *nlh, uint32_t index, uint64_t frames,
		     uint64_t lat_count, uint64_t lat_max, uint64_t guard,
		     uint64_t wire, uint64_t margin)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TCA_TDMWIN_SLOTS_SLOT);

	mnl_attr_put_u32(nlh, TCA_TDMWIN_SLOT_INDEX, index);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_FRAMES, frames);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_BYTES, frames * 1000);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_OPENS, frames ? 3 : 0);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_WIRE_DEFERRALS, wire);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_GUARD_DEFERRALS, guard);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_LATENCY_COUNT, lat_count);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_LATENCY_SUM, lat_count * 1000);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_LATENCY_MAX, lat_max);
	if (frames)
		mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_MARGIN_MIN, margin);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_SLOT_MAX + 1, 7);	/* a newer counter */
	mnl_attr_nest_end(nlh, n);
}

/* The header of a tdmwin dump with a plan's scalars, options open. */
static struct nlmsghdr *plan_head(char *buf, struct nlattr **opts)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_NEWQDISC;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_ifindex = 2;
	tcm->tcm_parent = TC_H_ROOT;
	tcm->tcm_handle = 0x10000;
	mnl_attr_put_strz(nlh, TCA_KIND, "tdmwin");
	*opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_PLAN_VERSION, 5);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_CYCLE_TIME, 10000000);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_BASE_TIME, 0);
	return nlh;
}

/* A dump of a tdmwin qdisc with three windows and their slots; with
 * @bad, one more slot whose index is beyond the limit of windows.
 */
static struct nlmsghdr *slot_dump(char *buf, bool bad)
{
	struct nlattr *opts, *list, *w, *slots;
	struct nlmsghdr *nlh = plan_head(buf, &opts);
	unsigned int i;

	list = mnl_attr_nest_start(nlh, TCA_TDMWIN_WINDOWS);
	for (i = 0; i < 3; i++) {
		w = mnl_attr_nest_start(nlh, TCA_TDMWIN_WINDOW);
		mnl_attr_put_u64(nlh, TCA_TDMWIN_WIN_OFFSET, i * 3000000ULL);
		mnl_attr_put_u64(nlh, TCA_TDMWIN_WIN_LENGTH, 1000000);
		mnl_attr_nest_end(nlh, w);
	}
	mnl_attr_nest_end(nlh, list);
	slots = mnl_attr_nest_start(nlh, TCA_TDMWIN_SLOTS);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_SLOTS_VERSION, 5);
	/* index, frames, latency count and max, guard, wire, margin */
	put_slot(nlh, 0, 10, 2, 1500, 0, 4, 250000);
	put_slot(nlh, 1, 20, 3, 2500000001ULL, 9, 0, 12000);
	put_slot(nlh, 2, 0, 0, 0, 0, 0, 0);
	if (bad)
		put_slot(nlh, TDMWIN_MAX_WINDOWS, 1, 0, 0, 0, 0, 0);
	mnl_attr_nest_end(nlh, slots);
	mnl_attr_nest_end(nlh, opts);
	return nlh;
}

static void slot_metrics(struct tdm_prom *p, void *arg)
{
	struct tdm_prom_inst one = { .q = arg };

	tdm_prom_qdisc(p, "eth0", &one, 1);
}

static void assert_line(const char *text, const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", line, text);
}

static void test_slots(void **state)
{
	char buf[8192];
	struct tdm_qdisc_info q;
	struct tdm_qdisc_worst w;
	struct nlmsghdr *nlh = slot_dump(buf, false);
	char *t;

	(void)state;
	memset(&q, 0, sizeof(q));
	assert_int_equal(tdm_qdisc_parse(nlh, 2, TC_H_ROOT, &q), 1);
	assert_true(q.has_slots);
	assert_int_equal(q.slots_version, 5);
	assert_int_equal(q.nslots, 3);
	assert_int_equal(q.slots[1].frames, 20);
	assert_int_equal(q.slots[1].bytes, 20000);
	assert_int_equal(q.slots[1].latency_max, 2500000001ULL);
	assert_true(q.slots[0].has_margin);
	assert_false(q.slots[2].has_margin);
	tdm_qdisc_worst_slots(&q, &w);
	assert_int_equal(w.latency, 1);
	assert_int_equal(w.margin, 1);
	assert_int_equal(w.guard, 1);
	assert_int_equal(w.wire, 0);

	t = capture(slot_metrics, &q);
	assert_line(t, "# TYPE tdmwin_slot_frames_total counter");
	assert_line(t, "tdmwin_slot_frames_total{interface=\"eth0\",slot=\"0\"} 10");
	assert_line(t, "tdmwin_slot_frames_total{interface=\"eth0\",slot=\"2\"} 0");
	assert_line(t, "tdmwin_slot_bytes_total{interface=\"eth0\",slot=\"1\"} 20000");
	assert_line(t, "tdmwin_slot_guard_deferrals_total{interface=\"eth0\",slot=\"1\"} 9");
	assert_line(t, "tdmwin_slot_wire_deferrals_total{interface=\"eth0\",slot=\"0\"} 4");
	assert_line(t, "tdmwin_slot_open_latency_max_seconds{interface=\"eth0\",slot=\"1\"} 2.500000001");
	assert_line(t, "# TYPE tdmwin_slot_open_latency_seconds summary");
	assert_line(t, "tdmwin_slot_open_latency_seconds_sum{interface=\"eth0\",slot=\"1\"} 0.000003000");
	assert_line(t, "tdmwin_slot_open_latency_seconds_count{interface=\"eth0\",slot=\"1\"} 3");
	assert_line(t, "tdmwin_slot_margin_min_seconds{interface=\"eth0\",slot=\"1\"} 0.000012000");
	assert_line(t, "tdmwin_slot_plan_version{interface=\"eth0\"} 5");
	/* no margin for a slot no frame left in */
	assert_null(strstr(t, "tdmwin_slot_margin_min_seconds{interface=\"eth0\",slot=\"2\"}"));
	free(t);

	/* Without slots in the dump: none, and no slot metrics. */
	memset(&q, 0, sizeof(q));
	q.present = true;
	t = capture(slot_metrics, &q);
	assert_null(strstr(t, "tdmwin_slot_"));
	free(t);
}

/* A slot whose index is out of range makes the dump malformed. */
static void test_slot_bad_index(void **state)
{
	char buf[8192];
	struct tdm_qdisc_info q;

	(void)state;
	memset(&q, 0, sizeof(q));
	assert_int_equal(tdm_qdisc_parse(slot_dump(buf, true), 2, TC_H_ROOT, &q),
			 -1);
}

/*
 * A plan with receivers gives each window its receiver's class, a plan
 * without gives none (1:1), and the parser reads back what the builder
 * wrote, active and pending.
 */
static void test_window_classes(void **state)
{
	struct tdm_receiver rx[2] = { { .name = "x0" }, { .name = "x1" } };
	struct tdm_sender s = {
		.name = "a", .nwin = 3,
		.win = { { 0, 1000000, 1 }, { 2000000, 1000000, 0 },
			 { 4000000, 500000, 1 } },
	};
	struct tdm_plan dests = { .nreceivers = 2, .receivers = rx };
	struct tdm_plan classic = { .nreceivers = 0 };
	struct nlattr *opts, *pend;
	struct tdm_qdisc_info *q = calloc(1, sizeof(*q));
	char buf[8192];
	struct nlmsghdr *nlh;

	(void)state;
	assert_non_null(q);
	assert_int_equal(tdm_qdisc_window_class(&classic, &s.win[0]),
			 TDMWIN_CLASS_GATED);
	assert_int_equal(tdm_qdisc_window_class(&dests, &s.win[0]),
			 TDMWIN_CLASS_DEST_FIRST + 1);

	nlh = plan_head(buf, &opts);
	tdm_qdisc_put_windows(nlh, &dests, &s);
	pend = mnl_attr_nest_start(nlh, TCA_TDMWIN_PENDING);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_PLAN_VERSION, 6);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_CYCLE_TIME, 10000000);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_BASE_TIME, 1);
	tdm_qdisc_put_windows(nlh, &classic, &s);
	mnl_attr_nest_end(nlh, pend);
	mnl_attr_nest_end(nlh, opts);

	assert_int_equal(tdm_qdisc_parse(nlh, 2, TC_H_ROOT, q), 1);
	assert_int_equal(q->nwin, 3);
	assert_int_equal(q->win[1].offset, 2000000);
	assert_int_equal(q->win_class[0], TDMWIN_CLASS_DEST_FIRST + 1);
	assert_int_equal(q->win_class[1], TDMWIN_CLASS_DEST_FIRST);
	assert_int_equal(q->win_class[2], TDMWIN_CLASS_DEST_FIRST + 1);
	assert_true(q->pending);
	assert_int_equal(q->pending_nwin, 3);
	assert_int_equal(q->pending_win_class[0], TDMWIN_CLASS_GATED);
	assert_int_equal(q->pending_win_class[2], TDMWIN_CLASS_GATED);
	free(q);
}

/* A window class that is not a u32 makes the dump malformed. */
static void test_window_class_bad(void **state)
{
	struct tdm_qdisc_info *q = calloc(1, sizeof(*q));
	struct nlattr *opts, *list, *w;
	char buf[8192];
	struct nlmsghdr *nlh;

	(void)state;
	assert_non_null(q);
	nlh = plan_head(buf, &opts);
	list = mnl_attr_nest_start(nlh, TCA_TDMWIN_WINDOWS);
	w = mnl_attr_nest_start(nlh, TCA_TDMWIN_WINDOW);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_WIN_OFFSET, 0);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_WIN_LENGTH, 1000000);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_WIN_CLASS, 3);
	mnl_attr_nest_end(nlh, w);
	mnl_attr_nest_end(nlh, list);
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(tdm_qdisc_parse(nlh, 2, TC_H_ROOT, q), -1);
	free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_qdisc),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_slot_bad_index),
		cmocka_unit_test(test_window_classes),
		cmocka_unit_test(test_window_class_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
