// SPDX-License-Identifier: GPL-2.0
/*
 * The original tool's per-packet and per-window files from the engine's
 * results (see tdm_orig.h).  Every number is formatted here, once: times
 * by tdm_orig_secs (exact rounding to the microsecond, where the original
 * printed doubles with %f), NA values as "nan" (what the original's %f
 * printed for its 0/0).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdm_orig.h"
#include "tdm_util.h"

#define MAX_FILL	(1ULL << 24)	/* empty rows written for one gap */

/* ---- the shape of a plan ------------------------------------------------ */

struct okey {
	uint64_t off, len;
	unsigned int sender;
};

static int cmp_okey(const void *a, const void *b)
{
	const struct okey *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

int tdm_orig_shape(const struct tdm_plan *p, struct tdm_orig_shape *s,
		   char *err, size_t errlen)
{
	char a[32], b[32], c[32];
	struct okey *k;
	unsigned int i, j, n = 0, t = p->nsenders;
	uint64_t wlen, dead = 0;
	int ret = -1;

	if (p->clockid != CLOCK_TAI && p->clockid != CLOCK_REALTIME)
		return tdm_set_err(err, errlen,
				   "plan v%u is on the %s clock: the original's times are CLOCK_REALTIME epoch seconds (use tai or realtime)",
				   p->version, tdm_clock_name(p->clockid));
	if (!t || !p->cycle_ns)
		return tdm_set_err(err, errlen, "plan v%u has no senders",
				   p->version);
	for (i = 0; i < t; i++)
		n += p->senders[i].nwin;
	k = calloc(n ? n : 1, sizeof(*k));
	if (!k)
		return tdm_set_err(err, errlen, "out of memory");
	n = 0;
	for (i = 0; i < t; i++)
		for (j = 0; j < p->senders[i].nwin; j++)
			k[n++] = (struct okey){ p->senders[i].win[j].offset,
						p->senders[i].win[j].length, i };
	qsort(k, n, sizeof(*k), cmp_okey);
	wlen = k[0].len;
	dead = (n > 1 ? k[1].off : p->cycle_ns + k[0].off) - (k[0].off + wlen);
	for (j = 0; j < n; j++) {
		const char *name = p->senders[k[j].sender].name;
		uint64_t next = j + 1 < n ? k[j + 1].off : p->cycle_ns + k[0].off;

		tdm_fmt_time(k[j].off, a, sizeof(a));
		if (k[j].sender != j % t) {
			tdm_set_err(err, errlen,
				    "plan v%u: the window at %s belongs to sender '%s' (id %u), but the original's clients take turns in id order: turn %u of the cycle is client %u's",
				    p->version, a, name, k[j].sender, j, j % t);
			goto out;
		}
		if (k[j].len != wlen) {
			tdm_set_err(err, errlen,
				    "plan v%u: the window at %s of sender '%s' is %s long, the first one %s: the original has one window length (-w)",
				    p->version, a, name,
				    tdm_fmt_time(k[j].len, b, sizeof(b)),
				    tdm_fmt_time(wlen, c, sizeof(c)));
			goto out;
		}
		if (next - (k[j].off + k[j].len) != dead) {
			tdm_set_err(err, errlen,
				    "plan v%u: the gap after the window at %s of sender '%s' is %s, the first one %s: the original has one dead time (-d)",
				    p->version, a, name,
				    tdm_fmt_time(next - (k[j].off + k[j].len), b,
						 sizeof(b)),
				    tdm_fmt_time(dead, c, sizeof(c)));
			goto out;
		}
	}
	if (n % t) {
		tdm_set_err(err, errlen,
			    "plan v%u: %u windows for %u senders: the original gives every client the same number of windows",
			    p->version, n, t);
		goto out;
	}
	if (wlen % 1000 || dead % 1000 || wlen / 1000 > INT32_MAX ||
	    dead / 1000 > INT32_MAX) {
		tdm_set_err(err, errlen,
			    "plan v%u: window %s and dead time %s must be whole microseconds (the original's -w and -d)",
			    p->version, tdm_fmt_time(wlen, a, sizeof(a)),
			    tdm_fmt_time(dead, b, sizeof(b)));
		goto out;
	}
	s->clients = t;
	s->window_us = wlen / 1000;
	s->dead_us = dead / 1000;
	s->phase_ns = k[0].off;
	ret = 0;
out:
	free(k);
	return ret;
}

int tdm_orig_same_shape(const struct tdm_orig_shape *a,
			const struct tdm_orig_shape *b, char *err,
			size_t errlen)
{
	if (a->clients == b->clients && a->window_us == b->window_us &&
	    a->dead_us == b->dead_us)
		return 0;
	return tdm_set_err(err, errlen,
			   "the original's file name has one T, W and D: T%u W%" PRIu64 " D%" PRIu64 " and T%u W%" PRIu64 " D%" PRIu64 " cannot share it",
			   a->clients, a->window_us, a->dead_us, b->clients,
			   b->window_us, b->dead_us);
}

/* ---- numbers ------------------------------------------------------------- */

void tdm_orig_secs(char *buf, size_t len, int64_t ns)
{
	uint64_t us, m;

	if (ns == TDM_NA_S64) {
		snprintf(buf, len, "nan");
		return;
	}
	m = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	us = m / 1000 + (m % 1000 >= 500);
	snprintf(buf, len, "%s%" PRIu64 ".%06" PRIu64, ns < 0 && us ? "-" : "",
		 us / 1000000, us % 1000000);
}

/* An absolute time on the plan's clock as epoch seconds. */
static void epoch(const struct tdm_orig *o, char *buf, size_t len, int64_t ns)
{
	tdm_orig_secs(buf, len, ns == TDM_NA_S64 ? ns : ns + o->epoch_off_ns);
}

static void gibps(char *buf, size_t len, uint64_t bps)
{
	if (bps == TDM_NA_U64)
		snprintf(buf, len, "nan");
	else
		snprintf(buf, len, "%f", (double)bps / 1073741824.0);
}

/* ---- per packet ---------------------------------------------------------- */

static void minmax(int64_t v, int64_t *mn, int64_t *mx, bool first)
{
	if (first || v < *mn)
		*mn = v;
	if (first || v > *mx)
		*mx = v;
}

void tdm_orig_packet(struct tdm_orig *o, const struct tdm_pkt_result *p)
{
	char tx[32], rx[32], trx[32], ttx[32], rrx[32];
	int64_t dtx = 0, drx = 0, tr = p->rx_ns - p->tx_ns;
	bool first = !o->npkt;

	if (!first) {
		dtx = p->tx_ns - o->prev_tx;
		drx = p->rx_ns - o->prev_rx;
	}
	/* Sums and extremes for the summary: transit over every packet, the
	 * differences over the n - 1 pairs (the original divided all three
	 * sums by n - 1 and skipped zero differences in its minimums).
	 */
	minmax(tr, &o->min_trx, &o->max_trx, first);
	o->sum_trx += tr;
	if (!first) {
		minmax(dtx, &o->min_ttx, &o->max_ttx, o->npkt == 1);
		minmax(drx, &o->min_rrx, &o->max_rrx, o->npkt == 1);
		o->sum_ttx += dtx;
		o->sum_rrx += drx;
	} else {
		o->first_rx = p->rx_ns;
	}
	if (p->rx_ns > o->last_rx || first)
		o->last_rx = p->rx_ns;
	o->bytes += p->len;
	if (p->sender < 65536) {
		if (p->sender >= o->nlast) {
			unsigned int n = (unsigned int)p->sender + 1;
			uint64_t *v = realloc(o->last_seq, n * sizeof(*v));

			if (v) {
				memset(v + o->nlast, 0,
				       (n - o->nlast) * sizeof(*v));
				o->last_seq = v;
				o->nlast = n;
			}
		}
		if (p->sender < o->nlast) {
			if (o->last_seq[p->sender] > p->seq + 1)
				o->out_of_order = true;
			o->last_seq[p->sender] = p->seq + 1;
		}
	}
	o->prev_tx = p->tx_ns;
	o->prev_rx = p->rx_ns;
	o->npkt++;

	epoch(o, tx, sizeof(tx), p->tx_ns);
	epoch(o, rx, sizeof(rx), p->rx_ns);
	if (o->pkt_csv)
		fprintf(o->pkt_csv, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s\n",
			p->arrival, p->sender, p->sender_window, p->seq, tx, rx);
	if (o->pkt_txt) {
		tdm_orig_secs(trx, sizeof(trx), tr);
		tdm_orig_secs(ttx, sizeof(ttx), dtx);
		tdm_orig_secs(rrx, sizeof(rrx), drx);
		fprintf(o->pkt_txt, "Packet %" PRIu64 " Client %" PRIu64 " Window %" PRIu64 " Client Packet ID %" PRIu64 " TX %ss, RX %ss, Diff RX/TX %ss, Diff TX/TX %ss, Diff RX/RX %ss\n",
			p->arrival, p->sender, p->sender_window, p->seq, tx, rx,
			trx, ttx, rrx);
	}
}

static void stat_line(FILE *f, const char *what, int64_t sum, uint64_t n,
		      int64_t mn, int64_t mx)
{
	char a[32], b[32], c[32];

	tdm_orig_secs(a, sizeof(a), n ? sum / (int64_t)n : TDM_NA_S64);
	tdm_orig_secs(b, sizeof(b), n ? mn : TDM_NA_S64);
	tdm_orig_secs(c, sizeof(c), n ? mx : TDM_NA_S64);
	fprintf(f, "%s|%9s|%9s|%9s|\n", what, a, b, c);
}

void tdm_orig_packet_summary(struct tdm_orig *o, uint64_t received,
			     uint64_t sent)
{
	FILE *f = o->pkt_txt;
	uint64_t pairs = o->npkt ? o->npkt - 1 : 0;
	char s[32];

	if (!f)
		return;
	fprintf(f, "\n Average Time Between Packets\n");
	fprintf(f, "     |  Avg(s) |  Min(s) |  Max(s) |\n");
	stat_line(f, "TX/RX", o->sum_trx, o->npkt, o->min_trx, o->max_trx);
	stat_line(f, "TX/TX", o->sum_ttx, pairs, o->min_ttx, o->max_ttx);
	stat_line(f, "RX/RX", o->sum_rrx, pairs, o->min_rrx, o->max_rrx);
	tdm_orig_secs(s, sizeof(s), o->npkt ? o->last_rx - o->first_rx : 0);
	fprintf(f, "\nIt took %s seconds to receive %" PRIu64 " bytes of data (%" PRIu64 " packets)\n\n",
		s, o->bytes, o->npkt);
	if (o->out_of_order)
		fprintf(f, "\n*********Data Received out of order - investigate this. ********\n\n");
	else
		fprintf(f, "\nData Received in order\n");
	if (sent == TDM_NA_U64 || !sent)
		fprintf(f, "\n%" PRIu64 " of unknown packets received (no trailing packet)\n\n",
			received);
	else
		fprintf(f, "\n%" PRIu64 " of %" PRIu64 " packets received. Drop rate = %.2f %%\n\n",
			received, sent,
			received >= sent ? 0.0 :
			(double)(sent - received) * 100.0 / (double)sent);
	if (pairs && o->sum_ttx > 0)
		fprintf(f, "Data Rate According to Average Packet Tx Time Difference: %f Gibps\n",
			(double)o->bytes / (double)o->npkt * 8e9 /
			((double)o->sum_ttx / (double)pairs) / 1073741824.0);
	else
		fprintf(f, "Data Rate According to Average Packet Tx Time Difference: nan Gibps\n");
}

/* ---- per window ---------------------------------------------------------- */

struct orow {
	uint64_t i, client, window, packets, missing;
	int64_t rx_run, tx_run;
	uint64_t rate;
	int64_t tr_avg, tr_min, tr_max;
	uint64_t front, back;
	int64_t start_tx, end_tx, start_rx, end_rx;
};

static void put_row(struct tdm_orig *o, const struct orow *r)
{
	char rxr[32], txr[32], rate[32], avg[32], mn[32], mx[32];
	char stx[32], etx[32], srx[32], erx[32];

	tdm_orig_secs(rxr, sizeof(rxr), r->rx_run);
	tdm_orig_secs(txr, sizeof(txr), r->tx_run);
	gibps(rate, sizeof(rate), r->rate);
	tdm_orig_secs(avg, sizeof(avg), r->tr_avg);
	tdm_orig_secs(mn, sizeof(mn), r->tr_min);
	tdm_orig_secs(mx, sizeof(mx), r->tr_max);
	epoch(o, stx, sizeof(stx), r->start_tx);
	epoch(o, etx, sizeof(etx), r->end_tx);
	epoch(o, srx, sizeof(srx), r->start_rx);
	epoch(o, erx, sizeof(erx), r->end_rx);
	if (o->win_csv)
		fprintf(o->win_csv, "%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %s, %s, %s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %s, %s, %s, %s\n",
			r->i, r->client, r->window, r->packets, r->missing,
			rxr, txr, rate, avg, mn, mx, r->front, r->back, stx,
			etx, srx, erx);
	if (o->win_txt)
		fprintf(o->win_txt, "i: %8" PRIu64 ", Client: %2" PRIu64 ",  Window: %8" PRIu64 ", Packets: %6" PRIu64 ", Missing: %6" PRIu64 ", Rx_Runtime: %s, Tx_Runtime: %s, DataRate(Gibs): %5s, Avg Tx/Rx: %9s, Min Tx/Rx: %9s, Max Tx/Rx %9s, Overlap Front %6" PRIu64 ", Overlap Back %6" PRIu64 ", Start Tx %s, End Tx %s, Start Rx %s, End Rx %s\n",
			r->i, r->client, r->window, r->packets, r->missing,
			rxr, txr, rate, avg, mn, mx, r->front, r->back, stx,
			etx, srx, erx);
	o->rows++;
}

/* A window without packets: its numbers, nothing measured. */
static void empty_row(struct tdm_orig *o, uint64_t i)
{
	struct orow r = {
		.i = i,
		.client = i % o->shape.clients,
		.window = i / o->shape.clients,
		.rx_run = TDM_NA_S64, .tx_run = TDM_NA_S64,
		.rate = TDM_NA_U64,
		.tr_avg = TDM_NA_S64, .tr_min = TDM_NA_S64, .tr_max = TDM_NA_S64,
		.start_tx = TDM_NA_S64, .end_tx = TDM_NA_S64,
		.start_rx = TDM_NA_S64, .end_rx = TDM_NA_S64,
	};

	put_row(o, &r);
	o->empty_rows++;
}

static void fill_to(struct tdm_orig *o, uint64_t i)
{
	if (i <= o->next_i || i - o->next_i > MAX_FILL)
		return;
	for (; o->next_i < i; o->next_i++)
		empty_row(o, o->next_i);
}

void tdm_orig_window(struct tdm_orig *o, const struct tdm_win_result *w)
{
	struct orow r = {
		.i = w->window, .client = w->sender, .window = w->sender_window,
		.rx_run = TDM_NA_S64, .tx_run = TDM_NA_S64, .rate = TDM_NA_U64,
		.tr_avg = TDM_NA_S64, .tr_min = TDM_NA_S64, .tr_max = TDM_NA_S64,
		.start_tx = TDM_NA_S64, .end_tx = TDM_NA_S64,
		.start_rx = TDM_NA_S64, .end_rx = TDM_NA_S64,
	};

	if (w->late && w->late != TDM_NA_U64) {
		/* A correction row: only the packets that came too late for
		 * the window's row, in a second row of that window.
		 */
		r.packets = w->late;
		put_row(o, &r);
		o->correction_rows++;
		return;
	}
	/* The empty windows between two rows of one plan; from window 0
	 * when n is known (the original wrote all n * T).
	 */
	if (o->have_row && o->row_version == w->plan_version)
		fill_to(o, w->window);
	else if (!o->have_row && o->windows_per_client)
		fill_to(o, w->window);
	r.packets = w->packets;
	r.missing = (w->missing == TDM_NA_U64 ? 0 : w->missing) +
		    (w->missing_before == TDM_NA_U64 ? 0 : w->missing_before);
	r.rx_run = w->rx_runtime_ns;
	r.tx_run = w->tx_runtime_ns;
	r.rate = w->rate_bps;
	r.tr_avg = w->transit_avg_ns;
	r.tr_min = w->transit_min_ns;
	r.tr_max = w->transit_max_ns;
	r.front = w->overlap_front;
	r.back = w->overlap_back;
	r.start_tx = w->start_tx_ns;
	r.end_tx = w->end_tx_ns;
	r.start_rx = w->start_rx_ns;
	r.end_rx = w->end_rx_ns;
	put_row(o, &r);
	o->have_row = true;
	o->row_version = w->plan_version;
	if (w->window + 1 > o->next_i)
		o->next_i = w->window + 1;
	if (w->sender_window + 1 > o->top_window)
		o->top_window = w->sender_window + 1;
}

void tdm_orig_windows_done(struct tdm_orig *o)
{
	if (o->windows_per_client)
		fill_to(o, o->windows_per_client * o->shape.clients);
}

uint64_t tdm_orig_n(const struct tdm_orig *o)
{
	return o->windows_per_client ? o->windows_per_client : o->top_window;
}

int tdm_orig_window_base(const struct tdm_orig *o, const char *base,
			 char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s_N%" PRIu64 "_W%" PRIu64 "_D%" PRIu64 "_T%u",
			 base, tdm_orig_n(o), o->shape.window_us,
			 o->shape.dead_us, o->shape.clients);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

void tdm_orig_free(struct tdm_orig *o)
{
	free(o->last_seq);
	o->last_seq = NULL;
	o->nlast = 0;
}
