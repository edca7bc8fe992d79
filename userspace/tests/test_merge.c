// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the receive-order merge (tdm_merge): its rules on crafted
 * input (the frontier, records behind it, sources without marks, the hold
 * limit, clock steps), and a property test: producer threads that follow
 * tdmrx's side of the ring protocol and its watermark (kmod/tdmrx.c), with
 * skewed hook delays, disorder inside each ring, hooks that run long,
 * idle periods marked by a "timer", and a forward step of REALTIME, read
 * by capture's loop (rings
 * into the merge, into the engine).  The engine's rows must equal those of
 * the same records sorted by receive time and fed to a second engine.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tdm_merge.h"
#include "tdm_plan.h"
#include "tdm_rx.h"
#include "tdm_stats.h"
#include "tdm_util.h"

#define US	1000LL
#define MS	1000000LL

/* ---- the rules ------------------------------------------------------------- */

struct out {
	int64_t key[64];
	unsigned int n;
};

static const struct tdm_stats_cfg plain_clock;	/* offsets 0 */

static void collect(void *ctx, const struct tdmrx_record *r)
{
	struct out *o = ctx;

	if (o->n < 64)
		o->key[o->n] = r->rx_ns;
	o->n++;
}

static struct tdm_merge *merge(struct out *o, unsigned int nsrc,
			       int64_t bound, int64_t hold)
{
	struct tdm_merge_cfg c = { .nsrc = nsrc, .bound_ns = bound,
				   .hold_ns = hold, .clock = &plain_clock,
				   .emit = collect, .ctx = o };
	struct tdm_merge *m;

	memset(o, 0, sizeof(*o));
	m = tdm_merge_new(&c);
	assert_non_null(m);
	return m;
}

static void add(struct tdm_merge *m, unsigned int src, int64_t rx)
{
	struct tdmrx_record r = { .rx_ns = rx, .flags = TDMRX_F_SW_TS };

	assert_int_equal(tdm_merge_add(m, src, &r), 0);
}

static void test_frontier(void **state)
{
	struct tdm_merge *m;
	struct out o;

	(void)state;
	m = merge(&o, 2, 10, 1000000);
	/* No clock sample, no marks: only the hold limit moves it. */
	add(m, 0, 105);
	add(m, 0, 100);
	add(m, 1, 102);
	assert_int_equal(tdm_merge_release(m), 105 - 1000000);
	tdm_merge_clock(m, 0, 0);
	tdm_merge_mark(m, 0, 120);
	/* Source 1 has a record and no mark: it holds everything. */
	assert_int_equal(tdm_merge_release(m), 105 - 1000000);
	assert_int_equal(o.n, 0);
	tdm_merge_mark(m, 1, 113);
	assert_int_equal(tdm_merge_release(m), 103);	/* min 113 - 10 */
	assert_int_equal(o.n, 2);
	assert_int_equal(o.key[0], 100);
	assert_int_equal(o.key[1], 102);
	/* A smaller mark changes nothing; the frontier never goes back. */
	tdm_merge_mark(m, 1, 50);
	assert_int_equal(tdm_merge_release(m), 103);
	/* Behind the frontier: out at once, counted. */
	add(m, 1, 101);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.key[2], 101);
	assert_int_equal(tdm_merge_behind(m), 1);
	add(m, 1, 103);			/* on the frontier: held */
	assert_int_equal(tdm_merge_held(m), 2);
	tdm_merge_flush(m);
	assert_int_equal(o.key[3], 103);
	assert_int_equal(o.key[4], 105);
	assert_int_equal(tdm_merge_behind(m), 1);
	tdm_merge_free(m);
}

static void test_silent_source_and_hold(void **state)
{
	struct tdm_merge *m;
	struct out o;

	(void)state;
	m = merge(&o, 3, 10, 1000);
	tdm_merge_clock(m, 0, 0);
	/* Source 2 never speaks: it does not hold the frontier. */
	tdm_merge_mark(m, 0, 500);
	tdm_merge_mark(m, 1, 400);
	add(m, 0, 385);
	add(m, 1, 395);
	assert_int_equal(tdm_merge_release(m), 390);
	assert_int_equal(o.n, 1);
	/* Source 1 stops marking: the hold limit moves on without it. */
	add(m, 0, 5000);
	assert_int_equal(tdm_merge_release(m), 4000);
	assert_int_equal(o.n, 2);
	assert_int_equal(o.key[1], 395);
	assert_int_equal(tdm_merge_held_max(m), 2);
	tdm_merge_free(m);
}

static void test_clock_steps(void **state)
{
	struct tdm_merge *m;
	struct out o;

	(void)state;
	m = merge(&o, 1, 10, 1000000);
	tdm_merge_clock(m, 0, 1000);
	tdm_merge_mark(m, 0, 100);
	assert_int_equal(tdm_merge_release(m), 1090);
	/* REALTIME steps 500 forward at 150: a record stamped at 145 under
	 * the old offset (key 1145) reaches the hook at 153; the marks of
	 * 150 and 152 must not let the frontier pass it.
	 */
	tdm_merge_clock(m, 151, 1500);
	tdm_merge_mark(m, 0, 152);
	assert_int_equal(tdm_merge_release(m), 1142);	/* 152 + 1000 - 10 */
	add(m, 0, 1145);
	assert_int_equal(tdm_merge_behind(m), 0);
	/* Once the marks are bound past the step, the new offset holds. */
	tdm_merge_clock(m, 200, 1500);
	tdm_merge_mark(m, 0, 180);
	assert_int_equal(tdm_merge_release(m), 1670);	/* 180 + 1500 - 10 */
	assert_int_equal(o.n, 1);
	/* A backward step: what is stamped now is behind, and counted. */
	tdm_merge_clock(m, 300, 1000);
	tdm_merge_mark(m, 0, 300);
	assert_int_equal(tdm_merge_release(m), 1670);
	add(m, 0, 1299);
	assert_int_equal(tdm_merge_behind(m), 1);
	tdm_merge_free(m);
}

/*
 * The order on input of every kind at once: five sources, most records a
 * little out of order within their source, some far out (a clock step:
 * beyond any walk back in a source queue), stamps so coarse that ties are
 * common within and across sources, some records of a source the merge
 * does not have, releases as the marks move on, and a stretch without
 * any, in which the queues grow.  What
 * comes out must be every record, sorted by (key, arrival).
 */
#define ORD_N		20000
#define ORD_SRC		5

struct ord_out {
	uint32_t *got;
	unsigned int n;
};

static void ord_collect(void *ctx, const struct tdmrx_record *r)
{
	struct ord_out *o = ctx;

	if (o->n < ORD_N)
		o->got[o->n] = r->saddr;
	o->n++;
}

static int ord_cmp(const void *a, const void *b)
{
	const struct tdmrx_record *x = a, *y = b;

	if (x->rx_ns != y->rx_ns)
		return x->rx_ns < y->rx_ns ? -1 : 1;
	return (x->saddr > y->saddr) - (x->saddr < y->saddr);
}

static void test_order(void **state)
{
	const int64_t far = 5000;	/* the largest delay, ns */
	struct tdm_merge_cfg c = { .nsrc = ORD_SRC, .bound_ns = far,
				   .hold_ns = 1000000000, .clock = &plain_clock,
				   .emit = ord_collect };
	struct tdmrx_record *all = calloc(ORD_N, sizeof(*all));
	struct ord_out o = { .got = calloc(ORD_N, sizeof(uint32_t)) };
	unsigned int seed = 4242, i, src, spilled = 0;
	int64_t t = 1000000;
	struct tdm_merge *m;

	(void)state;
	assert_non_null(all);
	assert_non_null(o.got);
	c.ctx = &o;
	m = tdm_merge_new(&c);
	assert_non_null(m);
	tdm_merge_clock(m, 0, 0);
	for (i = 0; i < ORD_N; i++) {
		unsigned int x = (unsigned int)rand_r(&seed);
		int64_t delay = (int64_t)(x % 40);

		t += 3;
		src = (x >> 8) % (ORD_SRC + 1);	/* ORD_SRC: not a source */
		if ((x >> 12) % 50 == 0) {
			delay = far - 1 - (int64_t)((x >> 20) % 100);
			spilled++;
		}
		all[i].rx_ns = (t - delay) & ~(int64_t)7;	/* ties */
		all[i].flags = TDMRX_F_SW_TS;
		all[i].saddr = i;			/* arrival */
		assert_int_equal(tdm_merge_add(m, src, &all[i]), 0);
		if (src < ORD_SRC)
			tdm_merge_mark(m, src, t);
		if (i % 97 == 0 && (i < 8000 || i >= 16000))
			tdm_merge_release(m);
	}
	assert_true(spilled > 100);
	assert_true(tdm_merge_held_max(m) > 8000);	/* queues grew */
	tdm_merge_flush(m);
	assert_int_equal(tdm_merge_behind(m), 0);
	assert_int_equal(tdm_merge_held(m), 0);
	assert_int_equal(o.n, ORD_N);
	qsort(all, ORD_N, sizeof(*all), ord_cmp);
	for (i = 0; i < ORD_N; i++)
		if (o.got[i] != all[i].saddr)
			fail_msg("place %u: record %u, want %u", i, o.got[i],
				 all[i].saddr);
	tdm_merge_free(m);
	free(all);
	free(o.got);
}

/* ---- the property --------------------------------------------------------- */

#define NPROD		3
#define RING		1024
#define PER_PROD	2500
#define BOUND		(4 * MS)
#define STEP		(30 * MS)	/* forward step of the fake REALTIME */
#define OFF0		(1700000000LL * 1000000000LL)
#define NSENDERS	3

static int64_t step_at;			/* CLOCK_MONOTONIC */
static uint64_t next_seq[NSENDERS];

/* The fake REALTIME - MONOTONIC at mono. */
static int64_t rt_off(int64_t mono)
{
	return OFF0 + (mono >= __atomic_load_n(&step_at, __ATOMIC_RELAXED) ?
		       STEP : 0);
}

struct producer {
	unsigned int id;
	void *base;
	struct tdmrx_ring_prod *hdr;
	struct tdmrx_ring_cons *ucons;
	struct tdmrx_record *rec;
	uint64_t prod;
	int64_t max_delay;
	unsigned int seed;
	struct tdmrx_record *log;	/* what it published */
	size_t nlog;
	int done;
};

static void nap(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void mark(struct producer *p, int64_t t)
{
	__atomic_store_n(&p->hdr->mark_ns, t, __ATOMIC_RELEASE);
}

/* One CPU's receive path, as tdmrx_record_skb() and its mark timer. */
static void *produce(void *arg)
{
	struct producer *p = arg;
	unsigned int j;

	for (j = 0; j < PER_PROD; j++) {
		struct tdmrx_record r = { .len = 1000, .gso_segs = 1,
					  .flags = TDMRX_F_SW_TS };
		int64_t h, s, stop;

		if (rand_r(&p->seed) % 400 == 0) {
			/* Idle: the timer marks the quiet ring. */
			stop = tdm_mono_ns() + 10 * MS +
			       (int64_t)(rand_r(&p->seed) % 20) * MS;
			while (tdm_mono_ns() < stop) {
				nap(1 * MS);
				mark(p, tdm_mono_ns());
			}
		} else {
			nap((int64_t)(rand_r(&p->seed) % 150) * US);
		}
		/* The hook: its time, then a stamp taken before it. */
		h = tdm_mono_ns();
		s = h - (int64_t)(rand_r(&p->seed) % (unsigned int)p->max_delay);
		r.rx_ns = ((s + rt_off(s)) & ~(int64_t)3) | p->id; /* unique */
		r.tx_ns = r.rx_ns - 200 * US;
		r.sender = rand_r(&p->seed) % NSENDERS;
		r.seq = __atomic_fetch_add(&next_seq[r.sender], 1,
					   __ATOMIC_RELAXED);
		r.cpu = (uint16_t)p->id;
		r.saddr = j;		/* its place in this ring */
		/* Now and then the hook runs long (a stalled vCPU): the
		 * ring's mark stays behind while the others go on.
		 */
		if (rand_r(&p->seed) % 40 == 0)
			nap(BOUND + (int64_t)(rand_r(&p->seed) % 4) * MS);
		/* A full ring: wait for the reader (no drops here). */
		while (p->prod - __atomic_load_n(&p->ucons->cons,
						 __ATOMIC_ACQUIRE) >= RING)
			nap(100 * US);
		p->rec[p->prod & (RING - 1)] = r;
		p->prod++;
		__atomic_store_n(&p->hdr->prod, p->prod, __ATOMIC_RELEASE);
		mark(p, h);
		p->log[p->nlog++] = r;
	}
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Rows of one engine, as CSV text. */
struct rows {
	char *buf;
	size_t len;
	FILE *f;
	uint64_t emitted;
	int64_t last_key;
	uint64_t out_of_order;
	struct tdm_stats *st;
};

static void row(void *ctx, const struct tdm_win_result *w)
{
	struct rows *r = ctx;

	tdm_metrics_csv_row(r->f, &tdm_win_table, w);
}

static void to_engine(void *ctx, const struct tdmrx_record *rec)
{
	struct rows *r = ctx;
	int64_t key = tdm_stats_rx_time(tdm_stats_cfg(r->st), rec);

	if (r->emitted && key < r->last_key)
		r->out_of_order++;
	r->last_key = key;
	r->emitted++;
	tdm_stats_push(r->st, rec);
}

static void engine(struct rows *r, const struct tdm_plan *p)
{
	struct tdm_stats_cfg cfg = { .grace_ns = 10 * MS, .assign_rx = true,
				     .on_window = row, .ctx = r };
	char err[256];

	memset(r, 0, sizeof(*r));
	r->f = open_memstream(&r->buf, &r->len);
	assert_non_null(r->f);
	r->st = tdm_stats_new(&cfg);
	assert_non_null(r->st);
	if (tdm_stats_add_plan(r->st, p, err, sizeof(err)))
		fail_msg("add plan: %s", err);
}

/* The run's and the senders' results after the rows. */
static void results(struct rows *r)
{
	unsigned int i;

	tdm_stats_finish(r->st);
	tdm_metrics_csv_row(r->f, &tdm_run_table, tdm_stats_run(r->st));
	for (i = 0; i < tdm_stats_nsenders(r->st); i++)
		tdm_metrics_csv_row(r->f, &tdm_sender_table,
				    tdm_stats_sender(r->st, i));
	fclose(r->f);
}

static int key_cmp(const void *a, const void *b)
{
	const struct tdmrx_record *x = a, *y = b;

	/* Equal stamps of one ring stay in ring order, as in the merge. */
	if (x->rx_ns != y->rx_ns)
		return x->rx_ns < y->rx_ns ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return (x->saddr > y->saddr) - (x->saddr < y->saddr);
}

static void test_property(void **state)
{
	static struct producer pr[NPROD];
	struct tdm_rx_ring rings[NPROD];
	struct rows got, want;
	struct tdm_merge *m;
	struct tdm_plan plan;
	struct tdmrx_record *all;
	pthread_t th[NPROD];
	size_t n = 0, k;
	unsigned int i, done;
	unsigned int seed = 12345;
	char err[256];

	(void)state;
	tdm_plan_init(&plan);
	if (tdm_plan_auto(&plan, NSENDERS, NULL, 1 * MS, 200 * US, 1, err,
			  sizeof(err)))
		fail_msg("plan: %s", err);
	plan.version = 1;
	plan.base_time = 0;
	engine(&got, &plan);
	{
		struct tdm_merge_cfg c = {
			.nsrc = NPROD, .bound_ns = BOUND,
			/* The hold limit is tested above; here a thread
			 * the host stalls must not reach it.
			 */
			.hold_ns = 60LL * 1000 * MS,
			.clock = tdm_stats_cfg(got.st),
			.emit = to_engine, .ctx = &got,
		};

		m = tdm_merge_new(&c);
		assert_non_null(m);
	}
	memset(next_seq, 0, sizeof(next_seq));
	step_at = tdm_mono_ns() + 150 * MS;
	for (i = 0; i < NPROD; i++) {
		size_t len = TDMRX_RING_DATA_OFF + RING * sizeof(struct tdmrx_record);
		struct producer *p = &pr[i];

		memset(p, 0, sizeof(*p));
		p->id = i;
		p->base = aligned_alloc(TDMRX_PAGE, len);
		p->log = calloc(PER_PROD, sizeof(*p->log));
		assert_non_null(p->base);
		assert_non_null(p->log);
		memset(p->base, 0, len);
		p->hdr = p->base;
		p->ucons = (void *)((char *)p->base + TDMRX_PAGE);
		p->rec = (void *)((char *)p->base + TDMRX_RING_DATA_OFF);
		p->hdr->size = RING;
		p->hdr->rec_size = sizeof(struct tdmrx_record);
		p->hdr->mark_ns = tdm_mono_ns();	/* the attach */
		/* Skew: each CPU's stamps trail its hook by its own amount. */
		p->max_delay = BOUND / NPROD * (i + 1) - 1;
		p->seed = 777 + i;
		tdm_rx_ring_init(&rings[i], p->base);
	}
	for (i = 0; i < NPROD; i++)
		assert_int_equal(pthread_create(&th[i], NULL, produce, &pr[i]), 0);
	/* capture's loop: rings into the merge, clock, release, advance. */
	do {
		int64_t mono, f;

		done = 0;
		for (i = 0; i < NPROD; i++)
			done += __atomic_load_n(&pr[i].done, __ATOMIC_ACQUIRE);
		tdm_merge_feed_rings(rings, NPROD, m, NULL, NULL);
		mono = tdm_mono_ns();
		tdm_merge_clock(m, mono, rt_off(mono));
		f = tdm_merge_release(m);
		if (f != INT64_MIN)
			tdm_stats_advance(got.st, f);
		nap((int64_t)(rand_r(&seed) % 8) * MS);
	} while (done < NPROD);
	tdm_merge_feed_rings(rings, NPROD, m, NULL, NULL);
	tdm_merge_flush(m);
	for (i = 0; i < NPROD; i++)
		pthread_join(th[i], NULL);

	/* The reference: everything, sorted by receive time. */
	all = calloc(NPROD * PER_PROD, sizeof(*all));
	assert_non_null(all);
	for (i = 0; i < NPROD; i++)
		for (k = 0; k < pr[i].nlog; k++)
			all[n++] = pr[i].log[k];
	qsort(all, n, sizeof(*all), key_cmp);
	engine(&want, &plan);
	for (k = 0; k < n; k++)
		to_engine(&want, &all[k]);
	results(&got);
	results(&want);

	assert_int_equal(got.emitted, NPROD * PER_PROD);
	assert_int_equal(tdm_merge_behind(m), 0);
	assert_int_equal(got.out_of_order, 0);
	assert_int_equal(tdm_stats_run(got.st)->late, 0);
	assert_true(tdm_stats_run(got.st)->windows > 100);
	assert_string_equal(got.buf, want.buf);

	tdm_merge_free(m);
	tdm_stats_free(got.st);
	tdm_stats_free(want.st);
	free(got.buf);
	free(want.buf);
	free(all);
	for (i = 0; i < NPROD; i++) {
		free(pr[i].base);
		free(pr[i].log);
	}
	tdm_plan_free(&plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frontier),
		cmocka_unit_test(test_silent_source_and_hold),
		cmocka_unit_test(test_clock_steps),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_property),
	};

	return cmocka_run_group_tests_name("tdm_merge", tests, NULL, NULL);
}
