// SPDX-License-Identifier: GPL-2.0
/*
 * The receive-order merge (tdm_merge.h): a binary min-heap of the held
 * records, keyed by (receive time on the plan clock, arrival number), and
 * one watermark per source.  The heap moves small entries; the records
 * stay in slots, reused through a stack of free ones.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_merge.h"

#define CLOCK_SAMPLES	64

struct held {
	int64_t key;
	uint64_t n;			/* arrival number: ties keep order */
	uint32_t slot;			/* in rec[] */
};

struct tdm_merge {
	struct tdm_merge_cfg cfg;
	int64_t *mark;			/* per source; INT64_MIN: none yet */
	bool *seen;			/* per source: a record came */
	struct held *heap;
	struct tdmrx_record *rec;	/* cap slots */
	uint32_t *free_slot;		/* cap - n free slots, a stack */
	size_t n, cap, held_max;
	uint64_t arrivals, behind;
	int64_t frontier;		/* released up to here */
	int64_t newest;			/* largest key added */
	struct { int64_t mono, offset; } clk[CLOCK_SAMPLES];
	unsigned int nclk;		/* oldest first */
};

struct tdm_merge *tdm_merge_new(const struct tdm_merge_cfg *cfg)
{
	struct tdm_merge *m;
	unsigned int i;

	if (!cfg->nsrc || cfg->bound_ns < 0 || cfg->hold_ns <= 0 ||
	    !cfg->clock || !cfg->emit)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cfg = *cfg;
	m->mark = calloc(cfg->nsrc, sizeof(*m->mark));
	m->seen = calloc(cfg->nsrc, sizeof(*m->seen));
	if (!m->mark || !m->seen) {
		tdm_merge_free(m);
		return NULL;
	}
	for (i = 0; i < cfg->nsrc; i++)
		m->mark[i] = INT64_MIN;
	m->frontier = INT64_MIN;
	m->newest = INT64_MIN;
	return m;
}

void tdm_merge_free(struct tdm_merge *m)
{
	if (!m)
		return;
	free(m->heap);
	free(m->rec);
	free(m->free_slot);
	free(m->mark);
	free(m->seen);
	free(m);
}

static bool before(const struct held *a, const struct held *b)
{
	return a->key < b->key || (a->key == b->key && a->n < b->n);
}

static void sift_up(struct held *h, size_t i)
{
	struct held x = h[i];

	while (i) {
		size_t p = (i - 1) / 2;

		if (!before(&x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

static void sift_down(struct held *h, size_t n, size_t i)
{
	struct held x = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void pop_emit(struct tdm_merge *m)
{
	uint32_t slot = m->heap[0].slot;
	struct tdmrx_record r = m->rec[slot];

	m->free_slot[m->cap - m->n] = slot;
	m->heap[0] = m->heap[--m->n];
	if (m->n)
		sift_down(m->heap, m->n, 0);
	m->cfg.emit(m->cfg.ctx, &r);
}

/* Twice the slots (the heap is full: every slot is in use). */
static int grow(struct tdm_merge *m)
{
	size_t cap = m->cap ? 2 * m->cap : 4096, i;
	struct held *h;
	struct tdmrx_record *rec;
	uint32_t *fs;

	if (cap > UINT32_MAX)
		return -1;
	h = realloc(m->heap, cap * sizeof(*h));
	if (!h)
		return -1;
	m->heap = h;
	rec = realloc(m->rec, cap * sizeof(*rec));
	if (!rec)
		return -1;
	m->rec = rec;
	fs = realloc(m->free_slot, cap * sizeof(*fs));
	if (!fs)
		return -1;
	m->free_slot = fs;
	/* The new slots, cap_old .. cap - 1, are the free ones now. */
	for (i = m->cap; i < cap; i++)
		fs[i - m->cap] = (uint32_t)i;
	m->cap = cap;
	return 0;
}

int tdm_merge_add(struct tdm_merge *m, unsigned int src,
		  const struct tdmrx_record *r)
{
	int64_t key = tdm_stats_rx_time(m->cfg.clock, r);
	uint32_t slot;

	if (src < m->cfg.nsrc)
		m->seen[src] = true;
	if (key > m->newest)
		m->newest = key;
	if (m->frontier != INT64_MIN && key < m->frontier) {
		m->behind++;		/* its turn has passed */
		m->cfg.emit(m->cfg.ctx, r);
		return 0;
	}
	if (m->n == m->cap && grow(m)) {
		m->behind++;
		m->cfg.emit(m->cfg.ctx, r);
		return -1;
	}
	/* The free slots are free_slot[0 .. cap - n - 1]. */
	slot = m->free_slot[m->cap - m->n - 1];
	m->rec[slot] = *r;
	m->heap[m->n] = (struct held){ .key = key, .n = m->arrivals++,
				       .slot = slot };
	sift_up(m->heap, m->n++);
	if (m->n > m->held_max)
		m->held_max = m->n;
	return 0;
}

void tdm_merge_mark(struct tdm_merge *m, unsigned int src, int64_t mark)
{
	if (src < m->cfg.nsrc && mark > m->mark[src])
		m->mark[src] = mark;
}

static void clk_drop(struct tdm_merge *m, unsigned int n)
{
	memmove(m->clk, m->clk + n, (m->nclk - n) * sizeof(m->clk[0]));
	m->nclk -= n;
}

void tdm_merge_clock(struct tdm_merge *m, int64_t mono, int64_t offset)
{
	if (m->nclk == CLOCK_SAMPLES) {
		/* Fold the two oldest into one, keeping the smaller offset:
		 * the frontier can only come out lower.
		 */
		if (m->clk[0].offset < m->clk[1].offset)
			m->clk[1].offset = m->clk[0].offset;
		clk_drop(m, 1);
	}
	m->clk[m->nclk].mono = mono;
	m->clk[m->nclk].offset = offset;
	m->nclk++;
}

/*
 * The offset for marks whose smallest is mark: a record still to come was
 * stamped at mark - bound or later, under the offset of the last sample
 * taken by then or a larger one (a forward step), so the smallest offset
 * from that sample on is safe; older samples go.
 */
static int64_t clk_offset(struct tdm_merge *m, int64_t mark)
{
	int64_t from = mark - m->cfg.bound_ns, off = INT64_MAX;
	unsigned int i = 0;

	while (i + 1 < m->nclk && m->clk[i + 1].mono <= from)
		i++;
	if (i)
		clk_drop(m, i);
	for (i = 0; i < m->nclk; i++)
		if (m->clk[i].offset < off)
			off = m->clk[i].offset;
	return off;
}

int64_t tdm_merge_release(struct tdm_merge *m)
{
	int64_t f = INT64_MAX, off;
	bool any = false;
	unsigned int i;

	for (i = 0; i < m->cfg.nsrc; i++) {
		if (m->mark[i] == INT64_MIN) {
			if (m->seen[i])
				f = INT64_MIN;	/* records, no mark yet */
			continue;
		}
		any = true;
		if (m->mark[i] < f)
			f = m->mark[i];
	}
	if (!any || !m->nclk || f < INT64_MIN + m->cfg.bound_ns)
		f = INT64_MIN;
	/* Less the bound, on the keys' clock (saturating: no wrap). */
	if (f != INT64_MIN) {
		off = clk_offset(m, f);
		f -= m->cfg.bound_ns;
		if (__builtin_add_overflow(f, off, &f))
			f = off < 0 ? INT64_MIN : INT64_MAX;
	}
	/* The memory bound: never trail the newest key by more than hold. */
	if (m->newest > INT64_MIN + m->cfg.hold_ns &&
	    m->newest - m->cfg.hold_ns > f)
		f = m->newest - m->cfg.hold_ns;
	if (f <= m->frontier)
		return m->frontier;
	m->frontier = f;
	while (m->n && m->heap[0].key < f)
		pop_emit(m);
	return f;
}

void tdm_merge_flush(struct tdm_merge *m)
{
	while (m->n)
		pop_emit(m);
}

uint64_t tdm_merge_behind(const struct tdm_merge *m)
{
	return m->behind;
}

size_t tdm_merge_held(const struct tdm_merge *m)
{
	return m->n;
}

size_t tdm_merge_held_max(const struct tdm_merge *m)
{
	return m->held_max;
}

/* ---- tdmrx's rings as the sources ---------------------------------------- */

struct feed {
	struct tdm_merge *m;
	unsigned int src;
	tdm_rx_cb tap;
	void *tap_ctx;
};

static int feed_one(void *ctx, const struct tdmrx_record *r)
{
	struct feed *f = ctx;

	if (f->tap)
		f->tap(f->tap_ctx, r);
	tdm_merge_add(f->m, f->src, r);
	return 0;
}

size_t tdm_merge_feed_rings(struct tdm_rx_ring *rings, unsigned int n,
			 struct tdm_merge *m, tdm_rx_cb tap, void *tap_ctx)
{
	struct feed f = { .m = m, .tap = tap, .tap_ctx = tap_ctx };
	size_t total = 0;

	for (f.src = 0; f.src < n; f.src++)
		total += tdm_rx_ring_drain(&rings[f.src], feed_one, &f, 0);
	/* Each mark was read before its ring's prod: nothing drained later
	 * from that ring was hooked before it.
	 */
	for (f.src = 0; f.src < n; f.src++)
		if (rings[f.src].mark_ns != INT64_MIN)
			tdm_merge_mark(m, f.src, rings[f.src].mark_ns);
	return total;
}
