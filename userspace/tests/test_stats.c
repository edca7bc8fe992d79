// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the statistics engine (tdm_stats) on synthetic records with
 * known answers: window assignment exactly at the edges, loss by sequence
 * and against the sent count, reordering, duplicates, overlap front/back,
 * dead time, jitter, plan changes mid-run, late records, ring drops, and
 * the metric tables.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tdm_plan.h"
#include "tdm_stats.h"
#include "tdm_util.h"

#define US	1000LL
#define MS	1000000LL
#define BASE	(1000 * 1000000000LL)	/* base time: 1000 s TAI */

#define MAXW	64
struct sink {
	struct tdm_win_result w[MAXW];
	unsigned int nw;
	struct tdm_pkt_result p[256];
	unsigned int np;
};

static void on_window(void *ctx, const struct tdm_win_result *w)
{
	struct sink *k = ctx;

	if (k->nw < MAXW)
		k->w[k->nw] = *w;
	k->nw++;
}

static void on_packet(void *ctx, const struct tdm_pkt_result *p)
{
	struct sink *k = ctx;

	if (k->np < 256)
		k->p[k->np++] = *p;
}

/* The original's -t 3 -w 1ms -d 100us: cycle 3.3 ms, sender i at i*1.1ms. */
static void auto_plan(struct tdm_plan *p, unsigned int n, uint32_t version,
		      int64_t window, int64_t dead)
{
	char err[256];

	tdm_plan_init(p);
	if (tdm_plan_auto(p, n, NULL, window, dead, 1, err, sizeof(err)))
		fail_msg("plan: %s", err);
	p->version = version;
	p->base_time = BASE;
}

static struct tdm_stats *new_stats(struct sink *k, const struct tdm_plan *p)
{
	struct tdm_stats_cfg cfg = { .on_window = on_window,
				     .on_packet = on_packet, .ctx = k,
				     .grace_ns = 10 * MS };
	struct tdm_stats *s;
	char err[256];

	memset(k, 0, sizeof(*k));
	s = tdm_stats_new(&cfg);
	assert_non_null(s);
	if (p && tdm_stats_add_plan(s, p, err, sizeof(err)))
		fail_msg("add plan: %s", err);
	return s;
}

static void push(struct tdm_stats *s, uint32_t sender, uint64_t seq,
		 int64_t tx, int64_t rx)
{
	struct tdmrx_record r = { .rx_ns = rx, .tx_ns = tx, .seq = seq,
				  .sender = sender, .len = 1000,
				  .flags = TDMRX_F_HW_TS, .gso_segs = 1 };

	tdm_stats_push(s, &r);
}

static void push_v(struct tdm_stats *s, uint32_t version, uint32_t sender,
		   uint64_t seq, int64_t tx, int64_t rx)
{
	struct tdmrx_record r = { .rx_ns = rx, .tx_ns = tx, .seq = seq,
				  .sender = sender, .len = 1000,
				  .plan_version = version,
				  .flags = TDMRX_F_HW_TS, .gso_segs = 1 };

	tdm_stats_push(s, &r);
}

static void push_end(struct tdm_stats *s, uint32_t sender, uint64_t sent,
		     int64_t t)
{
	struct tdmrx_record r = { .rx_ns = t, .tx_ns = t, .seq = sent,
				  .sent = sent, .sender = sender, .len = 40,
				  .flags = TDMRX_F_HW_TS | TDMRX_F_END };

	tdm_stats_push(s, &r);
}

/* ---- window assignment ---------------------------------------------------- */

static void test_edges(void **state)
{
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	int64_t w1 = BASE + 1100 * US;	/* sender 1: [1.1ms, 2.1ms) */

	(void)state;
	auto_plan(&p, 3, 1, 1 * MS, 100 * US);
	s = new_stats(&k, &p);
	push(s, 1, 0, w1, w1 + 10 * US);		/* first ns: in */
	push(s, 1, 1, w1 + 1 * MS - 1, w1 + 1 * MS - 1); /* last ns: in */
	push(s, 1, 2, w1 + 1 * MS, w1 + 1 * MS);	/* end: out, late, same */
	push(s, 1, 3, w1 + 1 * MS + 49 * US, w1 + 1 * MS + 60 * US); /* nearer */
	push(s, 1, 4, w1 + 1 * MS + 51 * US, w1 + 1 * MS + 60 * US); /* nearer 2 */
	tdm_stats_finish(s);

	/* All in cycle 0's window: 2-4 overran it (the next window of
	 * sender 1 is 2.3 ms after this one's end, much farther).
	 */
	assert_int_equal(k.nw, 1);
	assert_int_equal(k.w[0].sender, 1);
	assert_int_equal(k.w[0].packets, 5);
	assert_int_equal(k.w[0].tx_outside, 3);
	assert_int_equal(k.w[0].rx_outside, 3);
	assert_int_equal(k.w[0].cycle, 0);
	assert_int_equal(k.w[0].slot, 1);
	assert_int_equal(k.w[0].window, 1);
	assert_int_equal(k.w[0].win_start_ns, w1);
	assert_int_equal(k.w[0].win_end_ns, w1 + 1 * MS);
	assert_int_equal(k.w[0].first_tx_offset_ns, 0);
	assert_int_equal(k.w[0].last_tx_offset_ns, 51 * US);
	assert_int_equal(k.w[0].first_rx_offset_ns, 10 * US);
	assert_int_equal(k.p[0].tx_outside, 0);
	assert_int_equal(k.p[1].tx_outside, 0);
	assert_int_equal(k.p[2].tx_outside, 1);
	assert_int_equal(k.p[1].rx_outside, 0);
	assert_int_equal(k.p[2].rx_outside, 1);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

static void test_nearest(void **state)
{
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;

	(void)state;
	/* Two senders, 1 ms windows, 1 ms dead time: cycle 4 ms; sender 0
	 * owns [0, 1ms), sender 1 [2ms, 3ms).
	 */
	auto_plan(&p, 2, 1, 1 * MS, 1 * MS);
	s = new_stats(&k, &p);
	/* Sender 0, 1 ns before its window of cycle 1 (at 4 ms): goes to
	 * cycle 1, not to cycle 0 which ended 3 ms earlier.
	 */
	push(s, 0, 0, BASE + 4 * MS - 1, BASE + 4 * MS + 5);
	/* Sender 1 before the base time: cycle -1. */
	push(s, 1, 0, BASE - 2 * MS + 10, BASE - 2 * MS + 20);
	tdm_stats_finish(s);
	assert_int_equal(k.nw, 2);
	/* Closed in start order: sender 1's window of cycle -1 first. */
	assert_int_equal(k.w[0].sender, 1);
	assert_int_equal(k.w[0].cycle, -1);
	assert_int_equal(k.w[0].tx_outside, 0);
	assert_int_equal(k.w[1].sender, 0);
	assert_int_equal(k.w[1].cycle, 1);
	assert_int_equal(k.w[1].window, 2);
	assert_int_equal(k.w[1].tx_outside, 1);
	assert_int_equal(k.w[1].rx_outside, 0);
	assert_int_equal(k.w[1].first_tx_offset_ns, -1);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

/* Gated senders: the application stamps a packet when the qdisc takes it,
 * the gate sends it in the next window.  By RX time each packet lands in
 * the window it was sent in; its TX time is outside.
 */
static void test_assign_rx(void **state)
{
	struct tdm_stats_cfg cfg = { .on_window = on_window,
				     .on_packet = on_packet,
				     .grace_ns = 10 * MS, .assign_rx = true };
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	char err[256];

	(void)state;
	/* Two senders, 1 ms windows, 1 ms dead time: cycle 4 ms; sender 0
	 * owns [0, 1ms), sender 1 [2ms, 3ms).
	 */
	auto_plan(&p, 2, 1, 1 * MS, 1 * MS);
	memset(&k, 0, sizeof(k));
	cfg.ctx = &k;
	s = tdm_stats_new(&cfg);
	assert_non_null(s);
	assert_int_equal(tdm_stats_add_plan(s, &p, err, sizeof(err)), 0);
	/* Stamped at 1.5 ms (cycle 0, between windows), sent at 4 ms + 10 us. */
	push(s, 0, 0, BASE + 1500 * US, BASE + 4 * MS + 10 * US);
	/* Stamped inside cycle 1's window, arrives inside it. */
	push(s, 0, 1, BASE + 4 * MS + 20 * US, BASE + 4 * MS + 30 * US);
	/* Sender 1: arrives 5 us after its window closed: rx_outside. */
	push(s, 1, 0, BASE + 2 * MS + 900 * US, BASE + 3 * MS + 5 * US);
	tdm_stats_finish(s);
	assert_int_equal(k.nw, 2);
	/* Sender 1's window of cycle 0 first (starts at 2 ms). */
	assert_int_equal(k.w[0].sender, 1);
	assert_int_equal(k.w[0].cycle, 0);
	assert_int_equal(k.w[0].rx_outside, 1);
	assert_int_equal(k.w[0].tx_outside, 0);
	assert_int_equal(k.w[1].sender, 0);
	assert_int_equal(k.w[1].cycle, 1);
	assert_int_equal(k.w[1].packets, 2);
	assert_int_equal(k.w[1].tx_outside, 1);
	assert_int_equal(k.w[1].rx_outside, 0);
	assert_int_equal(k.w[1].first_rx_offset_ns, 10 * US);
	assert_int_equal(k.p[0].tx_outside, 1);
	assert_int_equal(k.p[0].rx_outside, 0);
	assert_int_equal(k.p[1].tx_outside, 0);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

/* ---- loss, reordering, duplicates ---------------------------------------- */

static void test_loss(void **state)
{
	const struct tdm_sender_result *sr;
	const struct tdm_run_result *run;
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	uint64_t seq;

	(void)state;
	auto_plan(&p, 1, 1, 1 * MS, 1 * MS);	/* cycle 2 ms */
	s = new_stats(&k, &p);
	/* Cycle 0: seqs 0..9 without 0 (lost before the first), 3, 4.
	 * Cycle 1: 10..19 without 10, 11 (between the windows) and 15.
	 * Sent 22: 20, 21 lost after the last.
	 */
	for (seq = 1; seq < 10; seq++)
		if (seq != 3 && seq != 4)
			push(s, 0, seq, BASE + (int64_t)seq * 50 * US,
			     BASE + (int64_t)seq * 50 * US + 7 * US);
	for (seq = 12; seq < 20; seq++)
		if (seq != 15)
			push(s, 0, seq, BASE + 2 * MS + (int64_t)(seq - 10) * 50 * US,
			     BASE + 2 * MS + (int64_t)(seq - 10) * 50 * US + 7 * US);
	push_end(s, 0, 22, BASE + 10 * MS);
	tdm_stats_finish(s);

	assert_int_equal(k.nw, 2);
	assert_int_equal(k.w[0].packets, 7);
	assert_int_equal(k.w[0].missing, 2);		/* not 3+2 as before */
	assert_int_equal(k.w[0].missing_before, 1);	/* seq 0 */
	assert_int_equal(k.w[1].packets, 7);
	assert_int_equal(k.w[1].missing, 1);
	assert_int_equal(k.w[1].missing_before, 2);	/* 10, 11 */
	assert_int_equal(k.w[0].transit_min_ns, 7 * US);
	assert_int_equal(k.w[0].transit_max_ns, 7 * US);
	assert_int_equal(k.w[0].transit_avg_ns, 7 * US);
	assert_int_equal(k.w[0].jitter_ns, 0);
	/* 7 packets, 6 intervals of 50 us or more: seqs 1..9 span 400 us. */
	assert_int_equal(k.w[0].tx_runtime_ns, 400 * US);
	assert_int_equal(k.w[0].rate_bps, (uint64_t)(6 * 1000 * 8 * 1e9 / 400e3));

	run = tdm_stats_run(s);
	assert_int_equal(tdm_stats_nsenders(s), 1);
	sr = tdm_stats_sender(s, 0);
	assert_int_equal(sr->sent, 22);
	assert_int_equal(sr->received, 14);
	assert_int_equal(sr->lost, 8);
	assert_int_equal(sr->lost_tail, 2);
	assert_int_equal(sr->end_markers, 1);
	assert_int_equal(run->sent, 22);
	assert_int_equal(run->lost, 8);
	assert_int_equal(run->end_markers, 1);
	assert_int_equal(run->windows, 2);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

static void test_reorder_dup(void **state)
{
	const struct tdm_sender_result *sr;
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	static const uint64_t order[] = { 0, 1, 3, 2, 2, 4, 0, 6, 5 };
	unsigned int i;

	(void)state;
	auto_plan(&p, 1, 1, 1 * MS, 1 * MS);
	s = new_stats(&k, &p);
	for (i = 0; i < TDM_ARRAY_SIZE(order); i++)
		push(s, 0, order[i], BASE + (int64_t)order[i] * 10 * US,
		     BASE + 100 * US + (int64_t)i * 10 * US);
	tdm_stats_finish(s);
	assert_int_equal(k.nw, 1);
	assert_int_equal(k.w[0].packets, 7);
	assert_int_equal(k.w[0].duplicates, 2);	/* 2 and 0 again */
	assert_int_equal(k.w[0].reordered, 2);	/* 2 after 3, 5 after 6 */
	assert_int_equal(k.w[0].missing, 0);	/* reordering is no loss */
	assert_int_equal(k.p[3].reordered, 1);
	assert_int_equal(k.p[4].duplicate, 1);
	assert_int_equal(k.p[4].reordered, 0);
	sr = (tdm_stats_run(s), tdm_stats_sender(s, 0));
	assert_int_equal(sr->duplicates, 2);
	assert_int_equal(sr->reordered, 2);
	assert_int_equal(sr->lost, TDM_NA_U64);	/* no end marker: unknown */
	assert_int_equal(sr->sent, TDM_NA_U64);
	assert_int_equal(tdm_stats_run(s)->lost, TDM_NA_U64);
	assert_int_equal(tdm_stats_run(s)->lost_unknown, 1);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

/* ---- overlap and dead time ------------------------------------------------- */

static void test_overlap(void **state)
{
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	int64_t a = BASE, b = BASE + 1100 * US;

	(void)state;
	auto_plan(&p, 2, 1, 1 * MS, 100 * US);
	s = new_stats(&k, &p);
	/* Arrival order A0 A1 B0 A2 B1 A3 B2 B3: A's last two arrive after
	 * B began; B0 and B1 arrive before A's last packet.
	 */
	push(s, 0, 0, a + 100 * US, b - 50 * US);
	push(s, 0, 1, a + 200 * US, b - 40 * US);
	push(s, 1, 0, b, b + 1 * US);
	push(s, 0, 2, a + 300 * US, b + 2 * US);
	push(s, 1, 1, b + 10 * US, b + 11 * US);
	push(s, 0, 3, a + 400 * US, b + 12 * US);
	push(s, 1, 2, b + 20 * US, b + 21 * US);
	push(s, 1, 3, b + 30 * US, b + 31 * US);
	tdm_stats_finish(s);
	assert_int_equal(k.nw, 2);
	assert_int_equal(k.w[0].sender, 0);
	assert_int_equal(k.w[0].overlap_back, 2);
	assert_int_equal(k.w[0].overlap_front, 0);
	assert_int_equal(k.w[1].overlap_front, 2);
	assert_int_equal(k.w[1].overlap_back, 0);
	assert_int_equal(k.w[0].dead_rx_ns, TDM_NA_S64);
	/* B's first arrival minus A's last: overlapped by 11 us. */
	assert_int_equal(k.w[1].dead_rx_ns, -11 * US);
	/* A's window ends at b - 100 us: all of A arrived after it. */
	assert_int_equal(k.w[0].rx_outside, 4);
	assert_int_equal(tdm_stats_run(s)->overlap_windows, 2);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

static void test_no_overlap_dead_time(void **state)
{
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	int64_t c;

	(void)state;
	auto_plan(&p, 2, 1, 1 * MS, 100 * US);	/* cycle 2.2 ms */
	s = new_stats(&k, &p);
	for (c = 0; c < 3; c++) {
		int64_t a = BASE + c * 2200 * US, b = a + 1100 * US;

		push(s, 0, (uint64_t)c * 2, a, a + 5 * US);
		push(s, 0, (uint64_t)c * 2 + 1, a + 900 * US, a + 905 * US);
		push(s, 1, (uint64_t)c * 2, b, b + 5 * US);
		push(s, 1, (uint64_t)c * 2 + 1, b + 900 * US, b + 905 * US);
	}
	tdm_stats_finish(s);
	assert_int_equal(k.nw, 6);
	for (c = 0; c < 6; c++) {
		assert_int_equal(k.w[c].window, c);
		assert_int_equal(k.w[c].sender, c % 2);
		assert_int_equal(k.w[c].sender_window, c / 2);
		assert_int_equal(k.w[c].overlap_front, 0);
		assert_int_equal(k.w[c].overlap_back, 0);
		assert_int_equal(k.w[c].missing, 0);
		assert_int_equal(k.w[c].missing_before, 0);
		if (c)	/* 1.1 ms apart, 900 us of arrivals: 200 us dead */
			assert_int_equal(k.w[c].dead_rx_ns, 200 * US);
	}
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

/* ---- jitter ----------------------------------------------------------------- */

static void test_jitter(void **state)
{
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	int64_t j16 = 0;
	int i;

	(void)state;
	auto_plan(&p, 1, 1, 1 * MS, 1 * MS);
	s = new_stats(&k, &p);
	/* Transit alternates 10 us / 12 us: |D| = 2 us every packet. */
	for (i = 0; i < 20; i++) {
		push(s, 0, (uint64_t)i, BASE + i * 10 * US,
		     BASE + i * 10 * US + (i % 2 ? 12 : 10) * US);
		if (i)
			j16 += 2 * US - (j16 + 8) / 16;
	}
	tdm_stats_finish(s);
	assert_int_equal(k.w[0].jitter_ns, (j16 + 8) / 16);
	assert_true(k.w[0].jitter_ns > 1400 && k.w[0].jitter_ns < 2000);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

/* ---- plan change mid-run ------------------------------------------------- */

static void test_plan_change(void **state)
{
	struct tdm_plan p1, p2;
	struct sink k;
	struct tdm_stats *s;
	char err[256];
	int64_t t2 = BASE + 100 * MS;

	(void)state;
	auto_plan(&p1, 2, 7, 1 * MS, 100 * US);	/* cycle 2.2 ms */
	auto_plan(&p2, 2, 8, 2 * MS, 500 * US);	/* cycle 5 ms */
	p2.base_time = t2;
	s = new_stats(&k, &p1);
	assert_int_equal(tdm_stats_add_plan(s, &p2, err, sizeof(err)), 0);
	assert_int_equal(tdm_stats_nplans(s), 2);

	push_v(s, 7, 1, 0, BASE + 1200 * US, BASE + 1210 * US);
	/* v8: sender 1 at [2.5ms, 4.5ms) of t2's cycles: 3 ms is inside,
	 * but in v7's cycle it would be sender 0's time.
	 */
	push_v(s, 8, 1, 1, t2 + 3 * MS, t2 + 3 * MS + 10);
	/* Unknown version: the latest plan (v8). */
	push_v(s, 99, 1, 2, t2 + 5 * MS + 2600 * US, t2 + 5 * MS + 2700 * US);
	/* Version 0 too, and without a complaint. */
	push_v(s, 0, 0, 0, t2 + 10 * MS, t2 + 10 * MS + 1);
	tdm_stats_finish(s);
	assert_int_equal(k.nw, 4);
	assert_int_equal(k.w[0].plan_version, 7);
	assert_int_equal(k.w[0].tx_outside, 0);
	assert_int_equal(k.w[1].plan_version, 8);
	assert_int_equal(k.w[1].cycle, 0);
	assert_int_equal(k.w[1].tx_outside, 0);
	assert_int_equal(k.w[1].win_start_ns, t2 + 2500 * US);
	assert_int_equal(k.w[2].plan_version, 8);
	assert_int_equal(k.w[2].cycle, 1);
	assert_int_equal(k.w[2].window, 3);
	assert_int_equal(k.w[3].cycle, 2);
	assert_int_equal(k.w[3].sender, 0);
	assert_int_equal(tdm_stats_run(s)->unknown_plan, 1);
	tdm_stats_free(s);
	tdm_plan_free(&p1);
	tdm_plan_free(&p2);
}

/* ---- bounded memory: windows close as time moves on -------------------- */

/*
 * Late is not lost: the same twelve packets, once with seq 1 in time and
 * once with it arriving after its window's row was written.  Received and
 * lost are the same; the late run counts it late, in a correction row, and
 * the rows' packets add up to received.
 */
static void late_run(struct sink *k, struct tdm_stats **sp, bool late)
{
	struct tdm_plan p;
	struct tdm_stats *s;
	int64_t c;

	auto_plan(&p, 1, 1, 1 * MS, 1 * MS);	/* cycle 2 ms, grace 10 ms */
	s = new_stats(k, &p);
	push(s, 0, 0, BASE + 10 * US, BASE + 20 * US);
	if (!late)
		push(s, 0, 1, BASE + 30 * US, BASE + 40 * US);
	for (c = 1; c <= 10; c++)
		push(s, 0, (uint64_t)c + 1, BASE + c * 2 * MS + 10 * US,
		     BASE + c * 2 * MS + 20 * US);
	if (late)	/* window 0 closed at 11 ms + grace */
		push(s, 0, 1, BASE + 30 * US, BASE + 21 * MS);
	push_end(s, 0, 12, BASE + 22 * MS);
	*sp = s;
	tdm_plan_free(&p);
}

static void test_late_not_lost(void **state)
{
	const struct tdm_sender_result *a, *b;
	const struct tdm_run_result *ra, *rb;
	struct tdm_stats *sa, *sb;
	static struct sink ka, kb;
	uint64_t sum = 0;
	unsigned int i;

	(void)state;
	late_run(&ka, &sa, false);
	late_run(&kb, &sb, true);
	/* Before the end: the late packet is received, and late. */
	rb = tdm_stats_run(sb);
	assert_int_equal(rb->received, 12);
	assert_int_equal(rb->late, 1);
	assert_int_equal(rb->lost, 0);
	/* Again, late: a duplicate, not a second reception. */
	push(sb, 0, 1, BASE + 30 * US, BASE + 21 * MS + 1);
	tdm_stats_finish(sa);
	tdm_stats_finish(sb);
	ra = tdm_stats_run(sa);
	rb = tdm_stats_run(sb);
	a = tdm_stats_sender(sa, 0);
	b = tdm_stats_sender(sb, 0);
	assert_int_equal(a->received, 12);
	assert_int_equal(b->received, 12);
	assert_int_equal(a->lost, 0);
	assert_int_equal(b->lost, 0);
	assert_int_equal(a->late, 0);
	assert_int_equal(b->late, 1);
	assert_int_equal(ra->late, 0);
	assert_int_equal(rb->late, 1);
	assert_int_equal(rb->lost, 0);
	assert_int_equal(rb->duplicates, 1);
	assert_int_equal(b->duplicates, 1);
	/* The rows: eleven regular ones, then window 0's correction. */
	assert_int_equal(ka.nw, 11);
	assert_int_equal(kb.nw, 12);
	assert_int_equal(rb->windows, 11);
	assert_int_equal(rb->correction_rows, 1);
	assert_int_equal(ka.w[0].packets, 2);
	assert_int_equal(ka.w[0].late, 0);
	assert_int_equal(kb.w[0].packets, 1);
	assert_int_equal(kb.w[0].late, 0);
	assert_int_equal(kb.w[11].window, 0);
	assert_int_equal(kb.w[11].win_start_ns, BASE);
	assert_int_equal(kb.w[11].win_end_ns, BASE + 1 * MS);
	assert_int_equal(kb.w[11].packets, 1);
	assert_int_equal(kb.w[11].late, 1);
	assert_int_equal(kb.w[11].bytes, 1000);
	assert_int_equal(kb.w[11].duplicates, 1);
	assert_int_equal(kb.w[11].rx_outside, 1);
	assert_int_equal(kb.w[11].tx_outside, 0);
	assert_int_equal(kb.w[11].missing, TDM_NA_U64);
	assert_int_equal(kb.w[11].jitter_ns, TDM_NA_S64);
	for (i = 0; i < kb.nw; i++)
		sum += kb.w[i].packets;
	assert_int_equal(sum, rb->received);
	/* The late packet itself, then its duplicate. */
	assert_int_equal(kb.p[11].seq, 1);
	assert_int_equal(kb.p[11].late, 1);
	assert_int_equal(kb.p[11].window, 0);
	assert_int_equal(kb.p[11].duplicate, 0);
	assert_int_equal(kb.p[12].late, 1);
	assert_int_equal(kb.p[12].duplicate, 1);
	assert_int_equal(kb.p[0].late, 0);
	tdm_stats_free(sa);
	tdm_stats_free(sb);
}

static void test_close_and_late(void **state)
{
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	int64_t c;

	(void)state;
	auto_plan(&p, 1, 1, 1 * MS, 1 * MS);	/* cycle 2 ms, grace 10 ms */
	s = new_stats(&k, &p);
	for (c = 0; c < 1000; c++)
		push(s, 0, (uint64_t)c, BASE + c * 2 * MS, BASE + c * 2 * MS + 1);
	/* At most grace / cycle + 1 windows open at any time. */
	assert_true(tdm_stats_open_windows(s) <= 7);
	assert_true(k.nw >= 990);
	/* A straggler of cycle 0: its window is closed, it is late. */
	push(s, 0, 1000, BASE + 1, BASE + 2 * 1000 * MS);
	assert_int_equal(tdm_stats_run(s)->late, 1);
	tdm_stats_advance(s, BASE + 3000 * MS);
	assert_int_equal(tdm_stats_open_windows(s), 0);
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

static void test_ring_drops_and_bad(void **state)
{
	struct tdmrx_record r = { .flags = TDMRX_F_BAD_MAGIC | TDMRX_F_SW_TS };
	struct tdm_plan p;
	struct sink k;
	struct tdm_stats *s;
	const struct tdm_run_result *run;

	(void)state;
	auto_plan(&p, 1, 1, 1 * MS, 1 * MS);
	s = new_stats(&k, &p);
	push(s, 0, 0, BASE, BASE + 1);
	tdm_stats_ring_drops(s, 5);
	tdm_stats_ring_drops(s, 5);
	push(s, 0, 7, BASE + 1, BASE + 2);
	tdm_stats_push(s, &r);
	push(s, 3, 0, BASE, BASE + 1);	/* no sender 3 in the plan */
	tdm_stats_finish(s);
	run = tdm_stats_run(s);
	assert_int_equal(run->ring_drops, 5);
	assert_int_equal(run->bad_records, 1);
	assert_int_equal(run->unknown_sender, 1);
	assert_int_equal(run->records, 4);
	assert_int_equal(run->sw_stamps, 1);
	assert_string_equal(run->ts_source, "mixed");
	assert_int_equal(k.w[0].ring_drops, 5);
	assert_int_equal(k.w[0].missing, 6);	/* ring drops are in there */
	assert_string_equal(k.w[0].ts_source, "hw");
	tdm_stats_free(s);
	tdm_plan_free(&p);
}

/* ---- metric tables --------------------------------------------------------- */

static void test_tables(void **state)
{
	const struct tdm_metric_table *t[] = { &tdm_win_table, &tdm_pkt_table,
					       &tdm_sender_table, &tdm_run_table };
	struct tdm_win_result w;
	struct tdm_json j;
	unsigned int i, a, b;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	for (i = 0; i < TDM_ARRAY_SIZE(t); i++) {
		assert_true(t[i]->n > 3);
		for (a = 0; a < t[i]->n; a++) {
			assert_non_null(t[i]->m[a].desc);
			for (b = a + 1; b < t[i]->n; b++)
				assert_string_not_equal(t[i]->m[a].name,
							t[i]->m[b].name);
		}
	}
	assert_int_equal(tdm_win_table.n, sizeof(struct tdm_win_result) / 8);

	memset(&w, 0, sizeof(w));
	w.name = "a,\"b\"";
	w.ts_source = "hw";
	w.dead_rx_ns = TDM_NA_S64;
	w.rate_bps = TDM_NA_U64;
	w.cycle = -3;
	w.packets = 18446744073709551614ULL;
	f = open_memstream(&buf, &len);
	tdm_metrics_csv_header(f, &tdm_win_table);
	tdm_metrics_csv_row(f, &tdm_win_table, &w);
	fclose(f);
	assert_true(!strncmp(buf, "window,sender,name,sender_window,", 33));
	assert_non_null(strstr(buf, "\n0,0,\"a,\"\"b\"\"\",0,0,-3,"));
	assert_non_null(strstr(buf, ",18446744073709551614,"));
	assert_non_null(strstr(buf, ",hw\n"));
	free(buf);

	tdm_json_init(&j);
	tdm_metrics_json(&j, NULL, &tdm_win_table, &w);
	assert_non_null(tdm_json_finish(&j));
	assert_non_null(strstr(j.buf, "\"dead_rx_ns\":null"));
	assert_non_null(strstr(j.buf, "\"rate_bps\":null"));
	assert_non_null(strstr(j.buf, "\"cycle\":-3"));
	tdm_json_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_assign_rx),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_reorder_dup),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_no_overlap_dead_time),
		cmocka_unit_test(test_jitter),
		cmocka_unit_test(test_plan_change),
		cmocka_unit_test(test_close_and_late),
		cmocka_unit_test(test_late_not_lost),
		cmocka_unit_test(test_ring_drops_and_bad),
		cmocka_unit_test(test_tables),
	};

	return cmocka_run_group_tests_name("tdm_stats", tests, NULL, NULL);
}
