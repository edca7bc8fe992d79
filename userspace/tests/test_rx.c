// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the tdmrx ring reader (tdm_rx_ring_drain, tdm_rx_drain,
 * tdm_rx_dropped, tdm_rx_finished) against a user-space producer that
 * follows the kernel's side of the protocol in kmod/uapi/linux/tdmrx.h:
 * private prod/dropped/cached cons, (A) load-acquire of cons only when the
 * ring looks full, clamp of cons, (B) store-release of prod, drop the
 * newest when full.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tdm_rx.h"

/* ---- the producer side, as in kmod/tdmrx.c ------------------------------ */

struct prod {
	void *base;
	struct tdmrx_ring_prod *hdr;
	struct tdmrx_ring_cons *ucons;
	struct tdmrx_record *rec;
	uint64_t prod, cons, dropped, size;
};

static void *ring_alloc(uint32_t size)
{
	size_t len = TDMRX_RING_DATA_OFF + (size_t)size * sizeof(struct tdmrx_record);
	void *p = aligned_alloc(TDMRX_PAGE, len);
	struct tdmrx_ring_prod *hdr = p;

	assert_non_null(p);
	memset(p, 0, len);
	hdr->size = size;
	hdr->rec_size = sizeof(struct tdmrx_record);
	hdr->session = 7;
	return p;
}

static void prod_init(struct prod *p, void *base)
{
	memset(p, 0, sizeof(*p));
	p->base = base;
	p->hdr = base;
	p->ucons = (struct tdmrx_ring_cons *)((char *)base + TDMRX_PAGE);
	p->rec = (struct tdmrx_record *)((char *)base + TDMRX_RING_DATA_OFF);
	p->size = p->hdr->size;
}

static uint64_t prod_load_cons(struct prod *p)
{
	uint64_t c = __atomic_load_n(&p->ucons->cons, __ATOMIC_ACQUIRE); /* A */
	uint64_t used = p->prod - c;

	if ((int64_t)used < 0)
		return p->prod;
	if (used > p->size)
		return p->prod - p->size;
	return c;
}

/* 1 if written, 0 if dropped (ring full). */
static int prod_push(struct prod *p, uint64_t seq)
{
	struct tdmrx_record r = { .seq = seq, .tx_ns = (int64_t)seq * 3,
				  .sender = 5, .gso_segs = 1 };

	if (p->prod - p->cons >= p->size) {
		p->cons = prod_load_cons(p);
		if (p->prod - p->cons >= p->size) {
			p->dropped++;
			__atomic_store_n(&p->hdr->dropped, p->dropped,
					 __ATOMIC_RELAXED);
			return 0;
		}
	}
	p->rec[p->prod & (p->size - 1)] = r;
	p->prod++;
	__atomic_store_n(&p->hdr->prod, p->prod, __ATOMIC_RELEASE);	/* B */
	return 1;
}

static void prod_detach(struct prod *p)
{
	__atomic_store_n(&p->hdr->detached, 1, __ATOMIC_RELEASE);
}

/* ---- the consumer's checks ------------------------------------------------ */

struct seen {
	uint64_t n, next, gaps, bad, stop_after;
};

static int check_cb(void *ctx, const struct tdmrx_record *r)
{
	struct seen *s = ctx;

	if (r->seq < s->next || r->tx_ns != (int64_t)r->seq * 3 ||
	    r->sender != 5)
		s->bad++;		/* duplicate, reordered or torn */
	else if (r->seq != s->next)
		s->gaps += r->seq - s->next;
	s->next = r->seq + 1;
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

struct run {
	struct prod p;
	uint64_t total;
	int drop;	/* 0: wait while full (no loss); 1: drop when full */
	uint64_t written;
	uint64_t hdr_dropped;	/* the shared counter, at the end */
};

static void *producer(void *arg)
{
	struct run *run = arg;
	uint64_t i;

	for (i = 0; i < run->total; i++) {
		if (run->drop) {
			run->written += (uint64_t)prod_push(&run->p, i);
			continue;
		}
		while (!prod_push(&run->p, i)) {
			run->p.dropped--;	/* a retry, not a drop */
			sched_yield();
		}
		run->written++;
	}
	prod_detach(&run->p);
	return NULL;
}

static void run_concurrent(uint32_t size, uint64_t total, int drop,
			   struct seen *s, struct run *run)
{
	void *base = ring_alloc(size);
	struct tdm_rx_ring r;
	pthread_t th;
	int done = 0;

	memset(run, 0, sizeof(*run));
	prod_init(&run->p, base);
	run->total = total;
	run->drop = drop;
	tdm_rx_ring_init(&r, base);
	assert_int_equal(r.mask, size - 1);
	assert_int_equal(pthread_create(&th, NULL, producer, run), 0);
	for (;;) {
		size_t n = tdm_rx_ring_drain(&r, check_cb, s, 1000);

		if (!n) {
			if (done)
				break;
			done = __atomic_load_n(&run->p.hdr->detached,
					       __ATOMIC_ACQUIRE);
			if (!done)
				sched_yield();
		}
	}
	pthread_join(th, NULL);
	assert_int_equal(r.cached_cons, run->written);
	run->hdr_dropped = run->p.hdr->dropped;
	run->p.hdr = NULL;
	free(base);
}

static void test_no_loss(void **state)
{
	struct seen s = { 0 };
	struct run run;

	(void)state;
	run_concurrent(1024, 2000000, 0, &s, &run);
	assert_int_equal(s.n, 2000000);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.gaps, 0);
	assert_int_equal(run.p.dropped, 0);
}

static void test_concurrent_drops(void **state)
{
	struct seen s = { 0 };
	struct run run;

	(void)state;
	run_concurrent(64, 1000000, 1, &s, &run);
	/* in order, no duplicates; every gap is a counted drop */
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.n + run.p.dropped, 1000000);
	assert_int_equal(s.n, run.written);
	assert_true(s.gaps <= run.p.dropped);
	assert_int_equal(run.hdr_dropped, run.p.dropped);
}

static void test_full_ring_drop_accounting(void **state)
{
	void *base = ring_alloc(64);
	struct seen s = { 0 };
	struct tdm_rx_ring r;
	struct prod p;
	uint64_t i, w = 0;

	(void)state;
	prod_init(&p, base);
	tdm_rx_ring_init(&r, base);
	for (i = 0; i < 10000; i++)
		w += (uint64_t)prod_push(&p, i);
	assert_int_equal(w, 64);
	assert_int_equal(p.hdr->dropped, 10000 - 64);
	/* the oldest 64 are kept: drop the newest, never overwrite */
	assert_int_equal(tdm_rx_ring_drain(&r, check_cb, &s, 0), 64);
	assert_int_equal(s.next, 64);
	assert_int_equal(s.bad, 0);
	assert_int_equal(r.cons->cons, 64);
	/* room again */
	assert_int_equal(prod_push(&p, 10000), 1);
	assert_int_equal(tdm_rx_ring_drain(&r, check_cb, &s, 0), 1);
	assert_int_equal(s.gaps, 10000 - 64);
	free(base);
}

static void test_clamp_bogus_cons(void **state)
{
	void *base = ring_alloc(64);
	struct seen s = { 0 };
	struct tdm_rx_ring r;
	struct prod p;
	uint64_t i;

	(void)state;
	prod_init(&p, base);
	tdm_rx_ring_init(&r, base);
	for (i = 0; i < 64; i++)
		assert_int_equal(prod_push(&p, i), 1);

	/* A consumer claiming to be ahead is clamped to prod: the ring looks
	 * empty to the producer, which overwrites what the consumer claimed
	 * to have read.  Only the consumer is hurt.
	 */
	p.ucons->cons = 1000000;
	for (i = 64; i < 64 + 200; i++)
		assert_int_equal(prod_push(&p, i), 1);
	assert_int_equal(p.prod, 264);
	assert_int_equal(p.cons, 256);	/* reloaded every 64 */
	assert_int_equal(p.dropped, 0);

	/* A consumer far behind: clamped to prod - size. */
	p.ucons->cons = 0;
	assert_int_equal(prod_load_cons(&p), p.prod - 64);

	/* The reader clamps its own bogus position the same way. */
	r.cached_cons = 0;
	s.next = 64;
	assert_int_equal(tdm_rx_ring_drain(&r, check_cb, &s, 0), 64);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.next, 264);
	assert_int_equal(r.cached_cons, 264);
	r.cached_cons = 5000;
	assert_int_equal(tdm_rx_ring_drain(&r, check_cb, &s, 0), 0);
	assert_int_equal(r.cached_cons, 264);
	assert_int_equal(r.cons->cons, 264);
	free(base);
}

static void test_early_stop(void **state)
{
	void *base = ring_alloc(256);
	struct seen s = { .stop_after = 10 };
	struct tdm_rx_ring r;
	struct prod p;
	uint64_t i;

	(void)state;
	prod_init(&p, base);
	tdm_rx_ring_init(&r, base);
	for (i = 0; i < 100; i++)
		prod_push(&p, i);
	/* the stopping record counts as read and is released */
	assert_int_equal(tdm_rx_ring_drain(&r, check_cb, &s, 0), 10);
	assert_int_equal(r.cons->cons, 10);
	s.stop_after = 0;
	assert_int_equal(tdm_rx_ring_drain(&r, check_cb, &s, 25), 25);
	assert_int_equal(r.cons->cons, 35);
	assert_int_equal(tdm_rx_ring_drain(&r, check_cb, &s, 0), 65);
	assert_int_equal(s.n, 100);
	assert_int_equal(s.bad + s.gaps, 0);
	free(base);
}

static int count_cb(void *ctx, const struct tdmrx_record *r)
{
	uint64_t *n = ctx;

	(void)r;
	return ++*n == 150;	/* stop at the 150th */
}

static void test_rings_finished_dropped(void **state)
{
	struct tdm_rx_ring rings[3];
	struct prod p[3];
	void *base[3];
	struct tdm_rx rx;
	uint64_t n = 0;
	int i, j;

	(void)state;
	memset(&rx, 0, sizeof(rx));
	rx.rings = rings;
	rx.nr_rings = 3;
	for (i = 0; i < 3; i++) {
		base[i] = ring_alloc(128);
		prod_init(&p[i], base[i]);
		tdm_rx_ring_init(&rings[i], base[i]);
		for (j = 0; j < 100 + i * 10; j++)
			prod_push(&p[i], (uint64_t)j);
	}
	assert_int_equal(tdm_rx_dropped(&rx), 0 + 0 + 0);
	for (j = 0; j < 20; j++)
		prod_push(&p[2], 1000);		/* 120 + 20 > 128: 12 drops */
	assert_int_equal(tdm_rx_dropped(&rx), 12);

	assert_int_equal(tdm_rx_drain(&rx, NULL, NULL, 50), 50);
	assert_int_equal(tdm_rx_drain(&rx, count_cb, &n, 0), 150);
	assert_false(tdm_rx_finished(&rx));
	for (i = 0; i < 3; i++)
		prod_detach(&p[i]);
	assert_false(tdm_rx_finished(&rx));	/* records left */
	assert_int_equal(tdm_rx_drain(&rx, NULL, NULL, 0),
			 100 + 110 + 128 - 200);
	assert_true(tdm_rx_finished(&rx));
	for (i = 0; i < 3; i++)
		free(base[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_loss),
		cmocka_unit_test(test_concurrent_drops),
		cmocka_unit_test(test_full_ring_drop_accounting),
		cmocka_unit_test(test_clamp_bogus_cons),
		cmocka_unit_test(test_early_stop),
		cmocka_unit_test(test_rings_finished_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
