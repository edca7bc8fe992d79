// SPDX-License-Identifier: GPL-2.0
/*
 * The receive-order merge (tdm_merge.h).
 *
 * Each source keeps its held records in a queue sorted by (receive time on
 * the plan clock, arrival number): a source's stamps are nearly in order,
 * so a record goes in at the tail, or a few places before it (an insertion
 * that walks back at most WALK places).  A record further out of order
 * than that (a clock step, a file of any order) goes to the spill heap, a
 * binary min-heap of small entries whose records stay in slots, reused
 * through a stack of free ones.  Releasing is a k-way merge of the
 * sources' heads and the heap's top, through a small heap of those heads
 * rebuilt at every release: log2(sources) compares a record, on memory
 * read in order, where one heap of everything held took log2(held) on
 * memory read at random.  The order is the same: (key, arrival number).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_merge.h"

#define CLOCK_SAMPLES	64
#define WALK		32	/* longest insertion walk in a source queue */
#define QUEUE_MIN	1024	/* first size of a source queue */

/* The order: key, then arrival number (ties keep the order they came). */
struct order {
	int64_t key;
	uint64_t n;
};

struct entry {				/* in a source queue */
	struct order o;
	struct tdmrx_record r;
};

struct source {
	struct entry *q;		/* ring of mask + 1 entries */
	size_t mask, head, tail;	/* held: q[head .. tail - 1] (masked) */
	int64_t mark;			/* INT64_MIN: none yet */
	bool seen;			/* a record came */
};

/*
 * An entry of either heap: the spill heap's (id: the record's slot in
 * rec[]) and the merge's heap of heads (id: the source, or nsrc for the
 * spill heap's top).
 */
struct hent {
	struct order o;
	uint32_t id;
};

struct tdm_merge {
	struct tdm_merge_cfg cfg;
	struct source *src;		/* cfg.nsrc */
	struct hent *sel;		/* heads being merged: a heap, nsrc + 1 */
	struct hent *heap;		/* the spill heap */
	struct tdmrx_record *rec;	/* cap slots */
	uint32_t *free_slot;		/* cap - nspill free slots, a stack */
	size_t nspill, cap, n, held_max;
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

	if (!cfg->nsrc || cfg->nsrc >= UINT32_MAX || cfg->bound_ns < 0 ||
	    cfg->hold_ns <= 0 || !cfg->clock || !cfg->emit)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cfg = *cfg;
	m->src = calloc(cfg->nsrc, sizeof(*m->src));
	m->sel = calloc((size_t)cfg->nsrc + 1, sizeof(*m->sel));
	if (!m->src || !m->sel) {
		tdm_merge_free(m);
		return NULL;
	}
	for (i = 0; i < cfg->nsrc; i++)
		m->src[i].mark = INT64_MIN;
	m->frontier = INT64_MIN;
	m->newest = INT64_MIN;
	return m;
}

void tdm_merge_free(struct tdm_merge *m)
{
	unsigned int i;

	if (!m)
		return;
	for (i = 0; m->src && i < m->cfg.nsrc; i++)
		free(m->src[i].q);
	free(m->src);
	free(m->sel);
	free(m->heap);
	free(m->rec);
	free(m->free_slot);
	free(m);
}

static inline bool before(const struct order *a, const struct order *b)
{
	return a->key < b->key || (a->key == b->key && a->n < b->n);
}

/* ---- the heaps, and the spill heap --------------------------------------- */

static void heap_up(struct hent *h, size_t i)
{
	struct hent x = h[i];

	while (i) {
		size_t p = (i - 1) / 2;

		if (!before(&x.o, &h[p].o))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

static void heap_down(struct hent *h, size_t n, size_t i)
{
	struct hent x = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1].o, &h[c].o))
			c++;
		if (!before(&h[c].o, &x.o))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* Twice the slots (the heap is full: every slot is in use). */
static int spill_grow(struct tdm_merge *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256, i;
	struct hent *h;
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

static int spill(struct tdm_merge *m, const struct order *o,
		 const struct tdmrx_record *r)
{
	uint32_t slot;

	if (m->nspill == m->cap && spill_grow(m))
		return -1;
	/* The free slots are free_slot[0 .. cap - nspill - 1]. */
	slot = m->free_slot[m->cap - m->nspill - 1];
	m->rec[slot] = *r;
	m->heap[m->nspill] = (struct hent){ .o = *o, .id = slot };
	heap_up(m->heap, m->nspill++);
	return 0;
}

static void spill_pop(struct tdm_merge *m, struct tdmrx_record *r)
{
	uint32_t slot = m->heap[0].id;

	*r = m->rec[slot];
	m->free_slot[m->cap - m->nspill] = slot;
	m->heap[0] = m->heap[--m->nspill];
	if (m->nspill)
		heap_down(m->heap, m->nspill, 0);
}

/* ---- the source queues --------------------------------------------------- */

/* Twice the entries, in order from 0 (the queue is full). */
static int queue_grow(struct source *s)
{
	size_t cap = s->q ? 2 * (s->mask + 1) : QUEUE_MIN, n = 0, i;
	struct entry *q = malloc(cap * sizeof(*q));

	if (!q)
		return -1;
	for (i = s->head; i != s->tail; i++)
		q[n++] = s->q[i & s->mask];
	free(s->q);
	s->q = q;
	s->mask = cap - 1;
	s->head = 0;
	s->tail = n;
	return 0;
}

/*
 * Into s's queue in order, walking back from the tail at most WALK places;
 * 1 if it is further out of order than that, -1 if out of memory.
 */
static int enqueue(struct source *s, const struct order *o,
		   const struct tdmrx_record *r)
{
	size_t i, stop;

	if (s->tail - s->head == (s->q ? s->mask + 1 : 0) && queue_grow(s))
		return -1;
	i = s->tail;
	stop = i - s->head > WALK ? i - WALK : s->head;
	while (i != stop && o->key < s->q[(i - 1) & s->mask].o.key)
		i--;
	if (i != s->head && o->key < s->q[(i - 1) & s->mask].o.key)
		return 1;
	for (stop = s->tail; stop != i; stop--)
		s->q[stop & s->mask] = s->q[(stop - 1) & s->mask];
	s->q[i & s->mask] = (struct entry){ .o = *o, .r = *r };
	s->tail++;
	return 0;
}

/* ---- adding, marks, clock ------------------------------------------------ */

int tdm_merge_add(struct tdm_merge *m, unsigned int src,
		  const struct tdmrx_record *r)
{
	struct order o = { .key = tdm_stats_rx_time(m->cfg.clock, r) };
	int rc = 1;

	if (o.key > m->newest)
		m->newest = o.key;
	if (src < m->cfg.nsrc)
		m->src[src].seen = true;
	if (m->frontier != INT64_MIN && o.key < m->frontier) {
		m->behind++;		/* its turn has passed */
		m->cfg.emit(m->cfg.ctx, r);
		return 0;
	}
	o.n = m->arrivals++;
	if (src < m->cfg.nsrc)
		rc = enqueue(&m->src[src], &o, r);
	if (rc > 0)
		rc = spill(m, &o, r);
	if (rc) {
		m->behind++;
		m->cfg.emit(m->cfg.ctx, r);
		return -1;
	}
	if (++m->n > m->held_max)
		m->held_max = m->n;
	return 0;
}

void tdm_merge_mark(struct tdm_merge *m, unsigned int src, int64_t mark)
{
	if (src < m->cfg.nsrc && mark > m->src[src].mark)
		m->src[src].mark = mark;
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

/* ---- releasing: the k-way merge ------------------------------------------ */

/*
 * Whether x has a head to release (below f, or any at all if all), and
 * its order into o.
 */
static inline bool ready(const struct tdm_merge *m, unsigned int x,
			 int64_t f, bool all, struct order *o)
{
	const struct source *s;

	if (x == m->cfg.nsrc) {
		if (!m->nspill)
			return false;
		*o = m->heap[0].o;
	} else {
		s = &m->src[x];
		if (s->head == s->tail)
			return false;
		*o = s->q[s->head & s->mask].o;
	}
	return all || o->key < f;
}

/*
 * Hand on, in order, every held record with a key below f (all: every
 * one): a k-way merge of the ready heads, through a heap of them.
 */
static void release_below(struct tdm_merge *m, int64_t f, bool all)
{
	struct hent *h = m->sel;
	unsigned int n = 0, x, i;
	struct tdmrx_record r;

	for (x = 0; x <= m->cfg.nsrc; x++)
		if (ready(m, x, f, all, &h[n].o))
			h[n++].id = x;
	for (i = n / 2; i-- > 0;)
		heap_down(h, n, i);
	while (n) {
		x = h[0].id;
		if (x == m->cfg.nsrc) {
			spill_pop(m, &r);
		} else {
			struct source *s = &m->src[x];

			r = s->q[s->head & s->mask].r;
			s->head++;
		}
		m->n--;
		if (!ready(m, x, f, all, &h[0].o))
			h[0] = h[--n];
		if (n)
			heap_down(h, n, 0);
		m->cfg.emit(m->cfg.ctx, &r);
	}
}

int64_t tdm_merge_release(struct tdm_merge *m)
{
	int64_t f = INT64_MAX, off;
	bool any = false;
	unsigned int i;

	for (i = 0; i < m->cfg.nsrc; i++) {
		if (m->src[i].mark == INT64_MIN) {
			if (m->src[i].seen)
				f = INT64_MIN;	/* records, no mark yet */
			continue;
		}
		any = true;
		if (m->src[i].mark < f)
			f = m->src[i].mark;
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
	release_below(m, f, false);
	return f;
}

void tdm_merge_flush(struct tdm_merge *m)
{
	release_below(m, 0, true);
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
