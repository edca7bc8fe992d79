// SPDX-License-Identifier: GPL-2.0
/*
 * The statistics engine (see tdm_stats.h for the model).  Per record the
 * work is a handful of compares: the sender's last window is cached and
 * almost every packet falls into it; the division by the cycle, the window
 * search and the walk of the open-window list happen once per window and
 * sender, or for packets that are outside their window or late.
 *
 * Open windows live in one list sorted by start (new windows are almost
 * always appended at the tail); they are closed from the head.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_plan.h"
#include "tdm_stats.h"
#include "tdm_util.h"

#define DEFAULT_GRACE_NS	100000000LL
#define DUP_BITS		65536	/* dedup horizon per sender, in seq */
#define MAX_TIME		(1LL << 62)	/* about 146 years */
#define MAX_TRANSIT		(1LL << 36)	/* about 69 s */
#define TS_MASK			(TDMRX_F_HW_TS | TDMRX_F_SW_TS | TDMRX_F_NOW_TS)

/* ---- metric tables ------------------------------------------------------- */

#define TDM_MK_OF_U	TDM_MK_U
#define TDM_MK_OF_S	TDM_MK_S
#define TDM_MK_OF_T	TDM_MK_T
#define METRIC(st, name, kind, unit, desc) \
	{ #name, TDM_MK_OF_##kind, offsetof(struct st, name), unit, desc },
#define WIN_M(name, kind, unit, desc) METRIC(tdm_win_result, name, kind, unit, desc)
#define PKT_M(name, kind, unit, desc) METRIC(tdm_pkt_result, name, kind, unit, desc)
#define SND_M(name, kind, unit, desc) METRIC(tdm_sender_result, name, kind, unit, desc)
#define RUN_M(name, kind, unit, desc) METRIC(tdm_run_result, name, kind, unit, desc)
#define RCV_M(name, kind, unit, desc) METRIC(tdm_receiver_result, name, kind, unit, desc)

static const struct tdm_metric win_m[] = { TDM_WIN_METRICS(WIN_M) };
static const struct tdm_metric pkt_m[] = { TDM_PKT_METRICS(PKT_M) };
static const struct tdm_metric snd_m[] = { TDM_SENDER_METRICS(SND_M) };
static const struct tdm_metric run_m[] = { TDM_RUN_METRICS(RUN_M) };
static const struct tdm_metric rcv_m[] = { TDM_RECEIVER_METRICS(RCV_M) };

#define TABLE(nm, arr) { nm, arr, sizeof(arr) / sizeof(arr[0]) }
const struct tdm_metric_table tdm_win_table = TABLE("window", win_m);
const struct tdm_metric_table tdm_pkt_table = TABLE("packet", pkt_m);
const struct tdm_metric_table tdm_sender_table = TABLE("sender", snd_m);
const struct tdm_metric_table tdm_run_table = TABLE("run", run_m);
const struct tdm_metric_table tdm_receiver_table = TABLE("receiver", rcv_m);

/* CSV text fields: names are [A-Za-z0-9_.-] and sources fixed words, but
 * quote anything with a separator or quote anyway.
 */
static void csv_str(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void tdm_metrics_csv_header(FILE *f, const struct tdm_metric_table *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		if (i)
			fputc(',', f);
		fputs(t->m[i].name, f);
	}
	fputc('\n', f);
}

/* Integers by hand: printf is a third of the cost of a window row. */
static void put_u64(FILE *f, uint64_t v)
{
	char b[24], *p = b + sizeof(b);

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	fwrite(p, 1, b + sizeof(b) - p, f);
}

static void put_s64(FILE *f, int64_t v)
{
	if (v < 0) {
		fputc('-', f);
		put_u64(f, -(uint64_t)v);
	} else {
		put_u64(f, (uint64_t)v);
	}
}

void tdm_metrics_csv_row(FILE *f, const struct tdm_metric_table *t,
			 const void *res)
{
	const char *base = res;
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		const void *p = base + t->m[i].off;

		if (i)
			fputc(',', f);
		switch (t->m[i].kind) {
		case TDM_MK_U: {
			uint64_t v;

			memcpy(&v, p, sizeof(v));
			if (v != TDM_NA_U64)
				put_u64(f, v);
			break;
		}
		case TDM_MK_S: {
			int64_t v;

			memcpy(&v, p, sizeof(v));
			if (v != TDM_NA_S64)
				put_s64(f, v);
			break;
		}
		case TDM_MK_T: {
			const char *v;

			memcpy(&v, p, sizeof(v));
			csv_str(f, v);
			break;
		}
		}
	}
	fputc('\n', f);
}

/* One field of @row (split in place at the next comma), or NULL. */
static char *csv_field(char **row)
{
	char *f = *row, *c;

	if (!f)
		return NULL;
	c = strchr(f, ',');
	if (c) {
		*c = '\0';
		*row = c + 1;
	} else {
		f[strcspn(f, "\r\n")] = '\0';
		*row = NULL;
	}
	return f;
}

int tdm_metrics_csv_read(const struct tdm_metric_table *t, const char *header,
			 char *row, void *res, char *err, size_t errlen)
{
	size_t hl = strcspn(header, "\r\n"), pos = 0, n;
	char *base = res, *f, *end;
	unsigned int i;

	for (i = 0; i < t->n; i++, pos += n + 1) {
		void *p = base + t->m[i].off;

		n = strlen(t->m[i].name);
		if (pos + n > hl || strncmp(header + pos, t->m[i].name, n) ||
		    (pos + n < hl && header[pos + n] != ','))
			return tdm_set_err(err, errlen,
					   "not a %s table: column %u is not '%s'",
					   t->name, i + 1, t->m[i].name);
		f = csv_field(&row);
		if (!f)
			return tdm_set_err(err, errlen,
					   "a %s row without '%s'", t->name,
					   t->m[i].name);
		if (t->m[i].kind == TDM_MK_T) {
			memcpy(p, &f, sizeof(f));
			continue;
		}
		errno = 0;
		if (!*f) {
			uint64_t na = TDM_NA_U64;
			int64_t nas = TDM_NA_S64;

			memcpy(p, t->m[i].kind == TDM_MK_U ? (void *)&na
							   : (void *)&nas, 8);
			continue;
		}
		if (t->m[i].kind == TDM_MK_U) {
			uint64_t v = strtoull(f, &end, 10);

			if (errno || *end || *f == '-')
				goto bad;
			memcpy(p, &v, sizeof(v));
		} else {
			int64_t v = strtoll(f, &end, 10);

			if (errno || *end)
				goto bad;
			memcpy(p, &v, sizeof(v));
		}
		continue;
bad:
		return tdm_set_err(err, errlen, "%s: '%s' is not a number",
				   t->m[i].name, f);
	}
	if (pos - 1 != hl)
		return tdm_set_err(err, errlen,
				   "not a %s table: more columns than %u",
				   t->name, t->n);
	if (row)
		return tdm_set_err(err, errlen,
				   "a %s row with more fields than %u", t->name,
				   t->n);
	return 0;
}

const char *tdm_fmt_u64_na(uint64_t v, char *buf, size_t len)
{
	if (v == TDM_NA_U64)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

const char *tdm_fmt_ppm(uint64_t ppm, char *buf, size_t len)
{
	if (ppm == TDM_NA_U64)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIu64 ".%04" PRIu64 "%%", ppm / 10000,
			 ppm % 10000);
	return buf;
}

void tdm_receiver_result(struct tdm_receiver_result *out,
			 const struct tdm_plan *full, unsigned int r,
			 const struct tdm_run_result *run)
{
	__int128 bits, per;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	out->receiver = full->receivers[r].name;
	out->address = full->receivers[r].addr;
	for (i = 0; i < full->nsenders; i++)
		out->senders_planned += tdm_plan_pair_ns(full, i, r) > 0;
	out->open_ns = tdm_plan_dest_ns(full, r);
	out->cycle_ns = full->cycle_ns;
	out->planned_ppm = (uint64_t)((__int128)out->open_ns * 1000000 /
				      full->cycle_ns);
	out->link_speed = full->link_speed ? full->link_speed : TDM_NA_U64;
	out->senders = run->senders;
	out->sent = run->sent;
	out->received = run->received;
	out->lost = run->lost;
	out->lost_unknown = run->lost_unknown;
	out->overlap_windows = run->overlap_windows;
	out->rx_outside = run->rx_outside;
	out->bytes = run->bytes;
	out->start_rx_ns = run->start_rx_ns;
	out->end_rx_ns = run->end_rx_ns;
	out->payload_ppm = TDM_NA_U64;
	if (full->link_speed && run->start_rx_ns != TDM_NA_S64 &&
	    run->end_rx_ns != TDM_NA_S64 &&
	    run->end_rx_ns > run->start_rx_ns) {
		/* bits * 1e6 / (Mbit/s * 1e6 / 1e9 * ns) */
		bits = (__int128)run->bytes * 8 * 1000000000 * 1000000;
		per = (__int128)full->link_speed * 1000000 *
		      (run->end_rx_ns - run->start_rx_ns);
		out->payload_ppm = (uint64_t)(bits / per);
	}
}

void tdm_metrics_json(struct tdm_json *j, const char *key,
		      const struct tdm_metric_table *t, const void *res)
{
	const char *base = res;
	unsigned int i;

	tdm_json_obj_open(j, key);
	for (i = 0; i < t->n; i++) {
		const char *name = t->m[i].name;
		const void *p = base + t->m[i].off;

		switch (t->m[i].kind) {
		case TDM_MK_U: {
			uint64_t v;

			memcpy(&v, p, sizeof(v));
			if (v == TDM_NA_U64)
				tdm_json_null(j, name);
			else
				tdm_json_u64(j, name, v);
			break;
		}
		case TDM_MK_S: {
			int64_t v;

			memcpy(&v, p, sizeof(v));
			if (v == TDM_NA_S64)
				tdm_json_null(j, name);
			else
				tdm_json_s64(j, name, v);
			break;
		}
		case TDM_MK_T: {
			const char *v;

			memcpy(&v, p, sizeof(v));
			if (v)
				tdm_json_str(j, name, v);
			else
				tdm_json_null(j, name);
			break;
		}
		}
	}
	tdm_json_obj_close(j);
}

/* ---- state --------------------------------------------------------------- */

struct plan_ent {
	struct tdm_plan p;
	unsigned int nslots;	/* windows per cycle over all senders */
	unsigned int *slot;	/* [sender * TDMWIN_MAX_WINDOWS + k] */
	unsigned int open;	/* open windows of this plan */
	uint64_t seq;		/* order of adding */
};

struct win {
	struct win *prev, *next;	/* the open list, by start */
	struct plan_ent *plan;
	uint32_t sender;
	unsigned int k;			/* the sender's window in the cycle */
	int64_t cycle;
	int64_t start, end;
	uint64_t packets, bytes, dups, reord, txout, rxout, ring_drops;
	uint64_t min_seq, max_seq;
	uint64_t overlap_front, overlap_back;
	int64_t first_tx, last_tx, first_rx, last_rx;
	uint32_t last_tx_len;
	int64_t tr_min, tr_max, tr_sum;
	int64_t jitter;
	bool jitter_ok;
	uint16_t ts;
};

/* Packets of a window whose row was written already: a correction row. */
struct corr {
	struct plan_ent *plan;		/* holds plan->open */
	uint32_t sender;
	unsigned int k;
	int64_t cycle;
	uint64_t packets, bytes, dups, reord, txout, rxout;
	uint16_t ts;
};

#define CORR_MAX	4096		/* written out early when full */

struct snd {
	bool active;
	uint64_t *dup;		/* DUP_BITS bits, seq modulo DUP_BITS */
	uint64_t top;		/* highest seq + 1 seen; 0 = none */
	uint64_t received, dups, reord, txout, rxout, late, windows;
	uint64_t bytes;		/* UDP payload of those received */
	uint64_t sent, end_markers;
	bool have_prev, have_prev_win;
	int64_t prev_rx, prev_tx;
	int64_t jitter16;
	int64_t tr_min, tr_max, tr_sum;
	int64_t first_rx, last_rx;
	uint64_t prev_win_top;	/* max_seq + 1 of its last closed window */
	struct win *cur;	/* last window used */
	const char *name;
};

struct tdm_stats {
	struct tdm_stats_cfg cfg;
	struct plan_ent *plans[TDM_STATS_MAX_PLANS];
	unsigned int nplans;
	uint64_t plan_seq;
	struct plan_ent *latest, *last_hit;
	struct snd *snd;
	unsigned int nsnd;		/* allocated */
	struct win *head, *tail, *free;
	unsigned int nopen;
	int64_t mark;			/* max TX time seen / advanced to */
	int64_t max_start;		/* latest window start with a packet */
	bool have_max_start;
	int64_t prev_end_rx;		/* last arrival of the last closed window */
	bool have_prev_end_rx;
	uint64_t ring_total, arrival;
	struct corr *corr;
	unsigned int ncorr;
	struct tdm_run_result run;
	struct tdm_sender_result *sres;
	unsigned int nsres;
};

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b < 0) ? q - 1 : q;
}

static const char *ts_name(uint16_t ts)
{
	switch (ts & TS_MASK) {
	case 0:
		return "none";
	case TDMRX_F_HW_TS:
		return "hw";
	case TDMRX_F_SW_TS:
		return "sw";
	case TDMRX_F_NOW_TS:
		return "now";
	default:
		return "mixed";
	}
}

struct tdm_stats *tdm_stats_new(const struct tdm_stats_cfg *cfg)
{
	struct tdm_stats *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *cfg;
	if (s->cfg.grace_ns <= 0)
		s->cfg.grace_ns = DEFAULT_GRACE_NS;
	s->mark = INT64_MIN;
	s->run.start_rx_ns = TDM_NA_S64;
	s->run.end_rx_ns = TDM_NA_S64;
	return s;
}

static void plan_ent_free(struct plan_ent *e)
{
	tdm_plan_free(&e->p);
	free(e->slot);
	free(e);
}

const struct tdm_stats_cfg *tdm_stats_cfg(const struct tdm_stats *s)
{
	return &s->cfg;
}

void tdm_stats_free(struct tdm_stats *s)
{
	struct win *w, *n;
	unsigned int i;

	if (!s)
		return;
	for (w = s->head; w; w = n) {
		n = w->next;
		free(w);
	}
	for (w = s->free; w; w = n) {
		n = w->next;
		free(w);
	}
	for (i = 0; i < s->nplans; i++)
		plan_ent_free(s->plans[i]);
	for (i = 0; i < s->nsnd; i++)
		free(s->snd[i].dup);
	free(s->snd);
	free(s->sres);
	free(s->corr);
	free(s);
}

/* ---- plans --------------------------------------------------------------- */

struct slot_key {
	uint64_t offset;
	unsigned int sender, k;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct slot_key *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int index_slots(struct plan_ent *e)
{
	const struct tdm_plan *p = &e->p;
	struct slot_key *keys;
	unsigned int i, k, n = 0;

	for (i = 0; i < p->nsenders; i++)
		n += p->senders[i].nwin;
	keys = calloc(n ? n : 1, sizeof(*keys));
	e->slot = calloc((size_t)p->nsenders * TDMWIN_MAX_WINDOWS,
			 sizeof(*e->slot));
	if (!keys || !e->slot) {
		free(keys);
		return -1;
	}
	n = 0;
	for (i = 0; i < p->nsenders; i++)
		for (k = 0; k < p->senders[i].nwin; k++)
			keys[n++] = (struct slot_key){ p->senders[i].win[k].offset,
						       i, k };
	qsort(keys, n, sizeof(*keys), cmp_slot);
	for (i = 0; i < n; i++)
		e->slot[keys[i].sender * TDMWIN_MAX_WINDOWS + keys[i].k] = i;
	e->nslots = n;
	free(keys);
	return 0;
}

static int grow_senders(struct tdm_stats *s, unsigned int n)
{
	struct snd *v;

	if (n <= s->nsnd)
		return 0;
	v = realloc(s->snd, n * sizeof(*v));
	if (!v)
		return -1;
	memset(v + s->nsnd, 0, (n - s->nsnd) * sizeof(*v));
	s->snd = v;
	s->nsnd = n;
	return 0;
}

int tdm_stats_add_plan(struct tdm_stats *s, const struct tdm_plan *p,
		       char *err, size_t errlen)
{
	struct plan_ent *e;
	unsigned int i;

	if (!p->nsenders || !p->cycle_ns) {
		snprintf(err, errlen, "plan v%u has no senders or no cycle",
			 p->version);
		return -1;
	}
	for (i = 0; i < s->nplans; i++)
		if (s->plans[i]->p.version == p->version &&
		    tdm_plan_equal(&s->plans[i]->p, p)) {
			s->latest = s->plans[i];
			return 0;
		}
	if (s->nplans == TDM_STATS_MAX_PLANS) {
		/* Drop the oldest plan without open windows. */
		unsigned int old = TDM_STATS_MAX_PLANS;

		for (i = 0; i < s->nplans; i++)
			if (!s->plans[i]->open && s->plans[i] != s->latest &&
			    (old == TDM_STATS_MAX_PLANS ||
			     s->plans[i]->seq < s->plans[old]->seq))
				old = i;
		if (old == TDM_STATS_MAX_PLANS) {
			snprintf(err, errlen, "more than %d plans with open windows",
				 TDM_STATS_MAX_PLANS);
			return -1;
		}
		if (s->last_hit == s->plans[old])
			s->last_hit = NULL;
		for (i = 0; i < s->nsnd; i++)
			if (s->snd[i].name && s->snd[i].cur == NULL)
				s->snd[i].name = NULL;	/* may point into it */
		plan_ent_free(s->plans[old]);
		s->plans[old] = s->plans[--s->nplans];
	}
	e = calloc(1, sizeof(*e));
	if (!e || tdm_plan_copy(&e->p, p) || index_slots(e) ||
	    grow_senders(s, p->nsenders)) {
		if (e) {
			if (e->p.senders)
				tdm_plan_free(&e->p);
			free(e->slot);
			free(e);
		}
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	e->seq = ++s->plan_seq;
	s->plans[s->nplans++] = e;
	s->latest = e;
	return 0;
}

unsigned int tdm_stats_nplans(const struct tdm_stats *s)
{
	return s->nplans;
}

static struct plan_ent *plan_of(struct tdm_stats *s, uint32_t version)
{
	unsigned int i;

	if (s->last_hit && s->last_hit->p.version == version)
		return s->last_hit;
	if (version)
		for (i = 0; i < s->nplans; i++)
			if (s->plans[i]->p.version == version) {
				s->last_hit = s->plans[i];
				return s->last_hit;
			}
	if (version)
		s->run.unknown_plan++;
	return s->latest;
}

/* ---- windows ------------------------------------------------------------- */

/* Window k of sender in cycle c: start and end on the plan clock. */
static void win_times(const struct plan_ent *e, uint32_t sender,
		      unsigned int k, int64_t c, int64_t *start, int64_t *end)
{
	const struct tdm_window *w = &e->p.senders[sender].win[k];

	*start = e->p.base_time + c * (int64_t)e->p.cycle_ns + (int64_t)w->offset;
	*end = *start + (int64_t)w->length;
}

/*
 * The window of sender for time t: the one containing it (returns true),
 * or the nearest one (false).
 */
static bool locate(const struct plan_ent *e, uint32_t sender, int64_t t,
		   unsigned int *kp, int64_t *cp)
{
	const struct tdm_sender *snd = &e->p.senders[sender];
	int64_t cyc = (int64_t)e->p.cycle_ns;
	int64_t c = floor_div(t - e->p.base_time, cyc);
	int64_t off = t - e->p.base_time - c * cyc;
	int64_t before, after;
	unsigned int k;

	for (k = 0; k < snd->nwin; k++)
		if (off < (int64_t)(snd->win[k].offset + snd->win[k].length))
			break;
	if (k < snd->nwin && off >= (int64_t)snd->win[k].offset) {
		*kp = k;
		*cp = c;
		return true;
	}
	/* Between window k-1 (or the last of the cycle before) and k (or the
	 * first of the next cycle).
	 */
	if (k == 0) {
		const struct tdm_window *l = &snd->win[snd->nwin - 1];

		before = off + cyc - (int64_t)(l->offset + l->length);
	} else {
		const struct tdm_window *l = &snd->win[k - 1];

		before = off - (int64_t)(l->offset + l->length);
	}
	if (k == snd->nwin)
		after = cyc + (int64_t)snd->win[0].offset - off;
	else
		after = (int64_t)snd->win[k].offset - off;
	if (after < before) {
		*kp = k == snd->nwin ? 0 : k;
		*cp = k == snd->nwin ? c + 1 : c;
	} else {
		*kp = k == 0 ? snd->nwin - 1 : k - 1;
		*cp = k == 0 ? c - 1 : c;
	}
	return false;
}

static bool in_sender_window(const struct plan_ent *e, uint32_t sender,
			     int64_t t)
{
	unsigned int k;
	int64_t c;

	return locate(e, sender, t, &k, &c);
}

static struct win *win_alloc(struct tdm_stats *s)
{
	struct win *w = s->free;

	if (w)
		s->free = w->next;
	else
		w = malloc(sizeof(*w));
	return w;
}

/* Find or open the window; NULL if it is closed already (late). */
static struct win *win_get(struct tdm_stats *s, struct plan_ent *e,
			   uint32_t sender, unsigned int k, int64_t c)
{
	int64_t start, end;
	struct win *w, *at;

	win_times(e, sender, k, c, &start, &end);
	for (at = s->tail; at && at->start >= start; at = at->prev)
		if (at->start == start && at->sender == sender && at->plan == e)
			return at;
	if (s->mark != INT64_MIN && end + s->cfg.grace_ns < s->mark)
		return NULL;
	w = win_alloc(s);
	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->plan = e;
	w->sender = sender;
	w->k = k;
	w->cycle = c;
	w->start = start;
	w->end = end;
	w->tr_min = INT64_MAX;
	w->tr_max = INT64_MIN;
	w->first_rx = INT64_MAX;
	w->last_rx = INT64_MIN;
	w->first_tx = INT64_MAX;
	w->last_tx = INT64_MIN;
	w->min_seq = UINT64_MAX;
	/* Insert after at (the last window starting before it). */
	w->prev = at;
	w->next = at ? at->next : s->head;
	if (w->next)
		w->next->prev = w;
	else
		s->tail = w;
	if (at)
		at->next = w;
	else
		s->head = w;
	e->open++;
	s->nopen++;
	return w;
}

/* The fields that name window k of cycle c of sender. */
static void win_ident(const struct plan_ent *e, uint32_t sender,
		      unsigned int k, int64_t c, struct tdm_win_result *r)
{
	const struct tdm_sender *ps = &e->p.senders[sender];
	unsigned int slot = e->slot[sender * TDMWIN_MAX_WINDOWS + k];

	r->window = (uint64_t)c * e->nslots + slot;
	r->sender = sender;
	r->name = ps->name;
	r->sender_window = (uint64_t)c * ps->nwin + k;
	r->plan_version = e->p.version;
	r->cycle = c;
	r->slot = slot;
	win_times(e, sender, k, c, &r->win_start_ns, &r->win_end_ns);
}

static void win_emit(struct tdm_stats *s, struct win *w)
{
	const struct plan_ent *e = w->plan;
	struct snd *sn = &s->snd[w->sender];
	struct tdm_win_result r;
	uint64_t top = w->max_seq + 1;

	win_ident(e, w->sender, w->k, w->cycle, &r);
	r.packets = w->packets;
	r.bytes = w->bytes;
	r.late = 0;
	r.missing = top - w->min_seq > w->packets ?
		    top - w->min_seq - w->packets : 0;
	r.missing_before = w->min_seq > sn->prev_win_top ?
			   w->min_seq - sn->prev_win_top : 0;
	r.duplicates = w->dups;
	r.reordered = w->reord;
	r.tx_outside = w->txout;
	r.rx_outside = w->rxout;
	r.rx_runtime_ns = w->last_rx - w->first_rx;
	r.tx_runtime_ns = w->last_tx - w->first_tx;
	r.rate_bps = r.tx_runtime_ns > 0 ?
		     (uint64_t)((double)(w->bytes - w->last_tx_len) * 8e9 /
				(double)r.tx_runtime_ns + 0.5) : TDM_NA_U64;
	r.transit_min_ns = w->tr_min;
	r.transit_avg_ns = w->tr_sum / (int64_t)w->packets;
	r.transit_max_ns = w->tr_max;
	r.jitter_ns = w->jitter_ok ? w->jitter : TDM_NA_S64;
	r.overlap_front = w->overlap_front;
	r.overlap_back = w->overlap_back;
	r.start_tx_ns = w->first_tx;
	r.end_tx_ns = w->last_tx;
	r.start_rx_ns = w->first_rx;
	r.end_rx_ns = w->last_rx;
	r.first_tx_offset_ns = w->first_tx - w->start;
	r.last_tx_offset_ns = w->last_tx - w->end;
	r.first_rx_offset_ns = w->first_rx - w->start;
	r.last_rx_offset_ns = w->last_rx - w->end;
	r.dead_rx_ns = s->have_prev_end_rx ? w->first_rx - s->prev_end_rx :
		       TDM_NA_S64;
	r.ring_drops = w->ring_drops;
	r.ts_source = ts_name(w->ts);

	if (top > sn->prev_win_top)
		sn->prev_win_top = top;
	sn->windows++;
	s->prev_end_rx = w->last_rx;
	s->have_prev_end_rx = true;
	s->run.windows++;
	if (w->overlap_front || w->overlap_back)
		s->run.overlap_windows++;
	if (s->cfg.on_window)
		s->cfg.on_window(s->cfg.ctx, &r);
}

static void win_close(struct tdm_stats *s, struct win *w)
{
	struct snd *sn = &s->snd[w->sender];

	if (w->packets)
		win_emit(s, w);
	if (sn->cur == w)
		sn->cur = NULL;
	if (w->prev)
		w->prev->next = w->next;
	else
		s->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		s->tail = w->prev;
	w->plan->open--;
	s->nopen--;
	w->next = s->free;
	s->free = w;
}

static void close_until(struct tdm_stats *s, int64_t t)
{
	while (s->head && s->head->end + s->cfg.grace_ns < t)
		win_close(s, s->head);
}

void tdm_stats_advance(struct tdm_stats *s, int64_t now)
{
	if (now > s->mark) {
		s->mark = now;
		close_until(s, now);
	}
}

void tdm_stats_ring_drops(struct tdm_stats *s, uint64_t total)
{
	struct win *w;
	uint64_t d;

	if (total <= s->ring_total)
		return;
	d = total - s->ring_total;
	s->ring_total = total;
	s->run.ring_drops += d;
	for (w = s->head; w; w = w->next)
		w->ring_drops += d;
}

unsigned int tdm_stats_open_windows(const struct tdm_stats *s)
{
	return s->nopen;
}

/* ---- records ------------------------------------------------------------- */

/* Note seq for sender: 1 if seen before, else 0; *reord if below the top. */
static int seq_seen(struct snd *sn, uint64_t seq, bool *reord)
{
	uint64_t bit = seq % DUP_BITS;

	*reord = false;
	if (!sn->dup) {
		sn->dup = calloc(DUP_BITS / 64, sizeof(uint64_t));
		if (!sn->dup)
			return 0;
	}
	if (seq >= sn->top) {
		uint64_t from = sn->top, n = seq + 1 - sn->top;

		/* Forget the seqs that fall out of the horizon. */
		if (n >= DUP_BITS) {
			memset(sn->dup, 0, DUP_BITS / 8);
		} else {
			uint64_t i;

			for (i = 0; i < n; i++) {
				uint64_t b = (from + i) % DUP_BITS;

				sn->dup[b / 64] &= ~(1ULL << (b % 64));
			}
		}
		sn->top = seq + 1;
		sn->dup[bit / 64] |= 1ULL << (bit % 64);
		return 0;
	}
	*reord = true;
	if (sn->top - seq > DUP_BITS)
		return 0;	/* too old to tell: counted as new */
	if (sn->dup[bit / 64] & (1ULL << (bit % 64)))
		return 1;
	sn->dup[bit / 64] |= 1ULL << (bit % 64);
	return 0;
}

static void overlap(struct tdm_stats *s, struct win *w)
{
	struct win *x;

	if (!s->have_max_start || w->start > s->max_start) {
		s->max_start = w->start;
		s->have_max_start = true;
		return;
	}
	if (w->start == s->max_start)
		return;
	/* A later window has begun to arrive: this packet is in w's back
	 * overlap, and every packet of a later window so far in its front.
	 */
	w->overlap_back++;
	for (x = s->tail; x && x->start > w->start; x = x->prev)
		x->overlap_front = x->packets;
}

/*
 * A packet of sender sn received (not a duplicate), with its transit and
 * UDP payload bytes.
 */
static void snd_received(struct snd *sn, int64_t tr, uint32_t len)
{
	sn->received++;
	sn->bytes += len;
	if (tr < sn->tr_min)
		sn->tr_min = tr;
	if (tr > sn->tr_max)
		sn->tr_max = tr;
	sn->tr_sum += tr;
}

/* One packet to on_packet: window k of cycle c of its sender. */
static void packet_out(struct tdm_stats *s, const struct plan_ent *e,
		       const struct tdmrx_record *r, int64_t rx,
		       unsigned int k, int64_t c, bool dup, bool reord,
		       bool txin, bool rxin, bool late)
{
	struct tdm_win_result id;

	if (!s->cfg.on_packet)
		return;
	win_ident(e, r->sender, k, c, &id);
	s->cfg.on_packet(s->cfg.ctx, &(struct tdm_pkt_result){
		.arrival = s->arrival,
		.sender = r->sender,
		.window = id.window,
		.sender_window = id.sender_window,
		.plan_version = e->p.version,
		.seq = r->seq,
		.tx_ns = r->tx_ns,
		.rx_ns = rx,
		.transit_ns = rx - r->tx_ns,
		.tx_offset_ns = r->tx_ns - id.win_start_ns,
		.rx_offset_ns = rx - id.win_start_ns,
		.len = r->len,
		.duplicate = dup,
		.reordered = reord && !dup,
		.tx_outside = !txin,
		.rx_outside = !rxin,
		.late = late,
		.ts_source = ts_name(r->flags),
	});
}

static void corr_emit(struct tdm_stats *s, struct corr *x)
{
	struct tdm_win_result r;
	const struct tdm_metric *m;
	unsigned int i;

	/* Everything but what a correction row carries is missing. */
	for (i = 0, m = tdm_win_table.m; i < tdm_win_table.n; i++, m++) {
		void *f = (char *)&r + m->off;

		if (m->kind == TDM_MK_U)
			*(uint64_t *)f = TDM_NA_U64;
		else if (m->kind == TDM_MK_S)
			*(int64_t *)f = TDM_NA_S64;
		else
			*(const char **)f = NULL;
	}
	win_ident(x->plan, x->sender, x->k, x->cycle, &r);
	r.packets = x->packets;
	r.bytes = x->bytes;
	r.late = x->packets;
	r.duplicates = x->dups;
	r.reordered = x->reord;
	r.tx_outside = x->txout;
	r.rx_outside = x->rxout;
	r.ts_source = ts_name(x->ts);
	s->run.correction_rows++;
	if (s->cfg.on_window)
		s->cfg.on_window(s->cfg.ctx, &r);
}

static int corr_cmp(const void *a, const void *b)
{
	const struct corr *x = a, *y = b;
	int64_t sx, ex, sy, ey;

	win_times(x->plan, x->sender, x->k, x->cycle, &sx, &ex);
	win_times(y->plan, y->sender, y->k, y->cycle, &sy, &ey);
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x->sender < y->sender ? -1 : x->sender > y->sender;
}

/* Write the correction rows so far, in order of window start. */
static void corr_flush(struct tdm_stats *s)
{
	unsigned int i;

	if (!s->ncorr)
		return;
	qsort(s->corr, s->ncorr, sizeof(*s->corr), corr_cmp);
	for (i = 0; i < s->ncorr; i++) {
		corr_emit(s, &s->corr[i]);
		s->corr[i].plan->open--;
	}
	s->ncorr = 0;
}

/* The correction of window k of cycle c of sender; NULL without memory. */
static struct corr *corr_get(struct tdm_stats *s, struct plan_ent *e,
			     uint32_t sender, unsigned int k, int64_t c)
{
	struct corr *x;
	unsigned int i;

	for (i = s->ncorr; i-- > 0;) {
		x = &s->corr[i];
		if (x->plan == e && x->sender == sender && x->k == k &&
		    x->cycle == c)
			return x;
	}
	if (!s->corr) {
		s->corr = malloc(CORR_MAX * sizeof(*s->corr));
		if (!s->corr)
			return NULL;
	}
	if (s->ncorr == CORR_MAX)
		corr_flush(s);
	x = &s->corr[s->ncorr++];
	memset(x, 0, sizeof(*x));
	x->plan = e;
	x->sender = sender;
	x->k = k;
	x->cycle = c;
	e->open++;		/* the plan stays while the row is pending */
	return x;
}

/*
 * A packet of a window whose row is written: received all the same, and
 * late.  It goes to the window's correction row, so that the rows' packets
 * add up to the run's received.  Not in the arrival-order metrics (jitter,
 * overlap, missing): its window's order is gone.
 */
static void late_record(struct tdm_stats *s, struct plan_ent *e,
			struct snd *sn, const struct tdmrx_record *r,
			int64_t rx, unsigned int k, int64_t c, bool txin)
{
	struct corr *x = corr_get(s, e, r->sender, k, c);
	int64_t start, end, tr = rx - r->tx_ns;
	bool reord, rxin;
	int dup;

	win_times(e, r->sender, k, c, &start, &end);
	if (s->cfg.assign_rx)
		txin = (r->tx_ns >= start && r->tx_ns < end) ||
		       in_sender_window(e, r->sender, r->tx_ns);
	rxin = (rx >= start && rx < end) || in_sender_window(e, r->sender, rx);
	dup = seq_seen(sn, r->seq, &reord);
	if (x)
		x->ts |= r->flags & TS_MASK;
	if (dup) {
		sn->dups++;
		if (x)
			x->dups++;
	} else {
		snd_received(sn, tr, r->len);
		sn->late++;
		s->run.late++;
		if (reord)
			sn->reord++;
		if (!txin)
			sn->txout++;
		if (!rxin)
			sn->rxout++;
		if (x) {
			x->packets++;
			x->bytes += r->len;
			x->reord += reord;
			x->txout += !txin;
			x->rxout += !rxin;
		}
	}
	if (rx > sn->last_rx)
		sn->last_rx = rx;
	packet_out(s, e, r, rx, k, c, dup, reord, txin, rxin, true);
	s->arrival++;
}

static void data_record(struct tdm_stats *s, const struct tdmrx_record *r,
			int64_t rx)
{
	struct snd *sn;
	struct plan_ent *e;
	struct win *w;
	bool txin = true, rxin, reord;
	int64_t key;
	int64_t tr;
	int dup;

	e = plan_of(s, r->plan_version);
	if (!e || r->sender >= e->p.nsenders) {
		s->run.unknown_sender++;
		return;
	}
	sn = &s->snd[r->sender];
	if (!sn->active) {
		sn->active = true;
		sn->tr_min = INT64_MAX;
		sn->tr_max = INT64_MIN;
		sn->first_rx = rx;
	}
	sn->name = e->p.senders[r->sender].name;
	key = s->cfg.assign_rx ? rx : r->tx_ns;
	if (key > s->mark) {
		s->mark = key;
		if (s->head && s->head->end + s->cfg.grace_ns < s->mark)
			close_until(s, s->mark);
	}

	w = sn->cur;
	if (!w || w->plan != e || key < w->start || key >= w->end) {
		unsigned int k;
		int64_t c;

		txin = locate(e, r->sender, key, &k, &c);
		w = win_get(s, e, r->sender, k, c);
		if (!w) {
			late_record(s, e, sn, r, rx, k, c, txin);
			return;
		}
		sn->cur = w;
	}
	if (s->cfg.assign_rx)
		txin = (r->tx_ns >= w->start && r->tx_ns < w->end) ||
		       in_sender_window(e, r->sender, r->tx_ns);

	dup = seq_seen(sn, r->seq, &reord);
	if (dup) {
		w->dups++;
		sn->dups++;
		goto packet;
	}
	if (reord) {
		w->reord++;
		sn->reord++;
	}
	tr = rx - r->tx_ns;
	w->packets++;
	w->bytes += r->len;
	if (r->seq < w->min_seq)
		w->min_seq = r->seq;
	if (r->seq > w->max_seq || w->packets == 1)
		w->max_seq = r->seq;
	if (r->tx_ns < w->first_tx)
		w->first_tx = r->tx_ns;
	if (r->tx_ns >= w->last_tx) {
		w->last_tx = r->tx_ns;
		w->last_tx_len = r->len;
	}
	if (rx < w->first_rx)
		w->first_rx = rx;
	if (rx > w->last_rx)
		w->last_rx = rx;
	if (tr < w->tr_min)
		w->tr_min = tr;
	if (tr > w->tr_max)
		w->tr_max = tr;
	w->tr_sum += tr;
	w->ts |= r->flags & TS_MASK;
	if (!txin) {
		w->txout++;
		sn->txout++;
	}

	/* RFC 3550 section 6.4.1, J scaled by 16 as in its appendix A.8. */
	if (sn->have_prev) {
		int64_t d = (rx - sn->prev_rx) - (r->tx_ns - sn->prev_tx);

		if (d < 0)
			d = -d;
		sn->jitter16 += d - (sn->jitter16 + 8) / 16;
		w->jitter_ok = true;
	}
	sn->have_prev = true;
	sn->prev_rx = rx;
	sn->prev_tx = r->tx_ns;
	w->jitter = (sn->jitter16 + 8) / 16;

	snd_received(sn, tr, r->len);
	overlap(s, w);

packet:
	rxin = rx >= w->start && rx < w->end ? true :
	       in_sender_window(e, r->sender, rx);
	if (!rxin && !dup) {
		w->rxout++;
		sn->rxout++;
	}
	if (rx > sn->last_rx || !sn->last_rx)
		sn->last_rx = rx;
	packet_out(s, e, r, rx, w->k, w->cycle, dup, reord, txin, rxin, false);
	s->arrival++;
}

int64_t tdm_stats_rx_time(const struct tdm_stats_cfg *cfg,
			  const struct tdmrx_record *r)
{
	int64_t rx, off = 0;

	if (r->flags & TDMRX_F_HW_TS)
		off = cfg->hw_offset_ns;
	else if (r->flags & (TDMRX_F_SW_TS | TDMRX_F_NOW_TS))
		off = cfg->rt_offset_ns;
	if (__builtin_add_overflow(r->rx_ns, off, &rx))
		rx = off < 0 ? INT64_MIN : INT64_MAX;
	return rx;
}

void tdm_stats_push(struct tdm_stats *s, const struct tdmrx_record *r)
{
	int64_t rx = tdm_stats_rx_time(&s->cfg, r);

	s->run.records++;
	if (r->flags & TDMRX_F_HW_TS)
		s->run.hw_stamps++;
	else if (r->flags & TDMRX_F_SW_TS)
		s->run.sw_stamps++;
	else if (r->flags & TDMRX_F_NOW_TS)
		s->run.now_stamps++;
	if (r->flags & TDMRX_F_GSO)
		s->run.gso_records++;
	/* Garbage times (a corrupt packet, a clock off by years) would only
	 * overflow the sums: such records count as bad.
	 */
	if ((r->flags & (TDMRX_F_TRUNC | TDMRX_F_BAD_MAGIC)) ||
	    r->tx_ns <= -MAX_TIME || r->tx_ns >= MAX_TIME ||
	    rx <= -MAX_TIME || rx >= MAX_TIME ||
	    rx - r->tx_ns <= -MAX_TRANSIT || rx - r->tx_ns >= MAX_TRANSIT) {
		s->run.bad_records++;
		return;
	}
	if (s->run.start_rx_ns == TDM_NA_S64 || rx < s->run.start_rx_ns)
		s->run.start_rx_ns = rx;
	if (s->run.end_rx_ns == TDM_NA_S64 || rx > s->run.end_rx_ns)
		s->run.end_rx_ns = rx;
	if (r->flags & TDMRX_F_END) {
		struct plan_ent *e = plan_of(s, r->plan_version);

		s->run.end_markers++;
		if (!e || r->sender >= e->p.nsenders ||
		    grow_senders(s, r->sender + 1)) {
			s->run.unknown_sender++;
			return;
		}
		s->snd[r->sender].end_markers++;
		s->snd[r->sender].sent = r->sent;
		s->snd[r->sender].name = e->p.senders[r->sender].name;
		return;
	}
	s->run.data_packets++;
	data_record(s, r, rx);
}

/* ---- results ------------------------------------------------------------- */

void tdm_stats_finish(struct tdm_stats *s)
{
	while (s->head)
		win_close(s, s->head);
	corr_flush(s);
	tdm_stats_run(s);
}

void tdm_stats_behind(struct tdm_stats *s, uint64_t total)
{
	s->run.behind = total;
}

static void sender_results(struct tdm_stats *s)
{
	unsigned int i, n = 0;

	free(s->sres);
	s->sres = calloc(s->nsnd ? s->nsnd : 1, sizeof(*s->sres));
	s->nsres = 0;
	if (!s->sres)
		return;
	for (i = 0; i < s->nsnd; i++) {
		struct snd *sn = &s->snd[i];
		struct tdm_sender_result *r = &s->sres[n];
		bool have_sent = sn->end_markers > 0;

		if (!sn->active && !sn->end_markers)
			continue;
		r->sender = i;
		r->name = sn->name;
		r->sent = have_sent ? sn->sent : TDM_NA_U64;
		r->received = sn->received;
		r->bytes = sn->bytes;
		/* Lost is what the end marker says was sent and did not
		 * arrive, late or not; without one it is not known.
		 */
		if (have_sent)
			r->lost = sn->sent > sn->received ? sn->sent - sn->received : 0;
		else
			r->lost = TDM_NA_U64;
		r->lost_tail = have_sent ? (sn->sent > sn->top ? sn->sent - sn->top : 0) :
			       TDM_NA_U64;
		r->duplicates = sn->dups;
		r->reordered = sn->reord;
		r->tx_outside = sn->txout;
		r->rx_outside = sn->rxout;
		r->late = sn->late;
		r->windows = sn->windows;
		r->transit_min_ns = sn->received ? sn->tr_min : TDM_NA_S64;
		r->transit_avg_ns = sn->received ?
				    sn->tr_sum / (int64_t)sn->received : TDM_NA_S64;
		r->transit_max_ns = sn->received ? sn->tr_max : TDM_NA_S64;
		r->jitter_ns = sn->received > 1 ? (sn->jitter16 + 8) / 16 :
			       TDM_NA_S64;
		r->start_rx_ns = sn->active ? sn->first_rx : TDM_NA_S64;
		r->end_rx_ns = sn->active ? sn->last_rx : TDM_NA_S64;
		r->end_markers = sn->end_markers;
		n++;
	}
	s->nsres = n;
}

const struct tdm_run_result *tdm_stats_run(struct tdm_stats *s)
{
	struct tdm_run_result *r = &s->run;
	unsigned int i;
	bool any_sent = false;

	sender_results(s);
	r->senders = 0;
	r->sent = 0;
	r->received = r->bytes = r->lost = r->duplicates = r->reordered = 0;
	r->tx_outside = r->rx_outside = r->lost_unknown = 0;
	for (i = 0; i < s->nsres; i++) {
		const struct tdm_sender_result *x = &s->sres[i];

		if (x->received)
			r->senders++;
		if (x->sent != TDM_NA_U64) {
			r->sent += x->sent;
			any_sent = true;
		}
		r->received += x->received;
		r->bytes += x->bytes;
		if (x->lost != TDM_NA_U64)
			r->lost += x->lost;
		else if (x->received)
			r->lost_unknown++;
		r->duplicates += x->duplicates;
		r->reordered += x->reordered;
		r->tx_outside += x->tx_outside;
		r->rx_outside += x->rx_outside;
	}
	if (!any_sent)
		r->sent = r->lost = TDM_NA_U64;
	r->ts_source = ts_name((r->hw_stamps ? TDMRX_F_HW_TS : 0) |
			       (r->sw_stamps ? TDMRX_F_SW_TS : 0) |
			       (r->now_stamps ? TDMRX_F_NOW_TS : 0));
	return r;
}

unsigned int tdm_stats_nsenders(const struct tdm_stats *s)
{
	return s->nsres;
}

const struct tdm_sender_result *tdm_stats_sender(struct tdm_stats *s,
						 unsigned int i)
{
	return i < s->nsres ? &s->sres[i] : NULL;
}
