// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic traffic: every window of a plan gets 64 packets, with loss,
 * duplicates and reordering.  tdmstat bench times the engine and the
 * receive-order merge on it;
 * tdmstat synth writes it as a pcap of Ethernet/IPv4/UDP frames or as a
 * record file, with its plan next to it, for timing analyze end to end.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdm_merge.h"
#include "tdm_pkt.h"
#include "tdm_util.h"
#include "tdmstat.h"

#define SNAPLEN	128	/* bytes of each frame in a synthesized pcap */

struct synth {
	const struct tdm_plan *p;
	uint64_t *seq;
	uint64_t rnd;
	int64_t cycle;
	unsigned int slot;		/* next window in the cycle */
	unsigned int per_win;		/* packets per window */
	unsigned int *order_s, *order_k;	/* windows by offset */
	unsigned int nslots;
};

static uint64_t rnd(struct synth *y)
{
	y->rnd ^= y->rnd << 13;
	y->rnd ^= y->rnd >> 7;
	y->rnd ^= y->rnd << 17;
	return y->rnd;
}

static int synth_init(struct synth *y, const struct tdm_plan *p)
{
	unsigned int i, k, a, b;

	memset(y, 0, sizeof(*y));
	y->p = p;
	y->rnd = 0x9e3779b97f4a7c15ULL;
	y->seq = calloc(p->nsenders, sizeof(*y->seq));
	for (i = 0; i < p->nsenders; i++)
		y->nslots += p->senders[i].nwin;
	y->order_s = calloc(y->nslots, sizeof(unsigned int));
	y->order_k = calloc(y->nslots, sizeof(unsigned int));
	if (!y->seq || !y->order_s || !y->order_k)
		return -1;
	for (i = 0, a = 0; i < p->nsenders; i++)
		for (k = 0; k < p->senders[i].nwin; k++, a++) {
			y->order_s[a] = i;
			y->order_k[a] = k;
		}
	for (a = 1; a < y->nslots; a++)	/* insertion sort by offset */
		for (b = a; b > 0 &&
		     p->senders[y->order_s[b]].win[y->order_k[b]].offset <
		     p->senders[y->order_s[b - 1]].win[y->order_k[b - 1]].offset; b--) {
			unsigned int ts = y->order_s[b], tk = y->order_k[b];

			y->order_s[b] = y->order_s[b - 1];
			y->order_k[b] = y->order_k[b - 1];
			y->order_s[b - 1] = ts;
			y->order_k[b - 1] = tk;
		}
	y->per_win = 64;
	return 0;
}

static void synth_free(struct synth *y)
{
	free(y->seq);
	free(y->order_s);
	free(y->order_k);
}

/*
 * The next window's packets into out (room for per_win): evenly spread over
 * the window, transit 5 us plus up to 2 us, one in 1000 lost, one in 4000
 * duplicated, one in 4000 swapped with its successor.
 */
static size_t synth_window(struct synth *y, struct tdmrx_record *out)
{
	const struct tdm_plan *p = y->p;
	unsigned int s = y->order_s[y->slot], k = y->order_k[y->slot], i;
	const struct tdm_window *w = &p->senders[s].win[k];
	int64_t start = p->base_time + y->cycle * (int64_t)p->cycle_ns +
			(int64_t)w->offset;
	int64_t step = (int64_t)w->length / y->per_win;
	size_t n = 0;

	for (i = 0; i < y->per_win; i++) {
		struct tdmrx_record *r = &out[n];
		uint64_t x = rnd(y);

		if (x % 1000 == 0) {
			y->seq[s]++;
			continue;
		}
		memset(r, 0, sizeof(*r));
		r->tx_ns = start + (int64_t)i * step;
		r->rx_ns = r->tx_ns + 5000 + (int64_t)(x >> 40) % 2000;
		r->seq = y->seq[s]++;
		r->sender = s;
		r->plan_version = p->version;
		r->len = 1472;
		r->flags = TDMRX_F_HW_TS;
		r->gso_segs = 1;
		n++;
		if (x % 4000 == 1 && i + 1 < y->per_win) {
			out[n] = *r;
			n++;
		}
	}
	for (i = 1; i < n; i++)
		if (rnd(y) % 4000 == 2) {
			struct tdmrx_record tmp = out[i];

			out[i] = out[i - 1];
			out[i - 1] = tmp;
		}
	if (++y->slot == y->nslots) {
		y->slot = 0;
		y->cycle++;
	}
	return n;
}

static int default_plan(struct tdmstat *t, char *err, size_t errlen)
{
	struct tdm_plan p;

	if (t->nplan_files || t->tdmd_socket)
		return tdmstat_load_plans(t, err, errlen);
	tdm_plan_init(&p);
	if (tdm_plan_auto(&p, t->bench_senders, NULL, 100000, 10000, 1, err,
			  errlen))
		return -1;
	p.version = 1;
	p.base_time = 1700000000LL * (int64_t)TDM_NSEC_PER_SEC;
	return tdmstat_add_plan(t, &p, err, errlen);
}

/* Time spent on this core: what a loaded host's other work does not add. */
static int64_t cpu_ns(void)
{
	return tdm_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void merge_sink(void *ctx, const struct tdmrx_record *r)
{
	uint64_t *n = ctx;

	*n += r->len != 0;
}

struct to_engine {
	struct tdm_stats *st;
	uint64_t n;
};

static void engine_sink(void *ctx, const struct tdmrx_record *r)
{
	struct to_engine *e = ctx;

	e->n++;
	tdm_stats_push(e->st, r);
}

/*
 * The receive-order merge (capture's, before the engine): the same records
 * spread over four rings by position, each ring's mark its last stamp (the
 * hook at the stamp), released once per chunk, each record to emit; with
 * st, the engine is advanced to the frontier after each release, as
 * capture does.  ns spent.
 */
static int64_t bench_merge(struct synth *y, struct tdmrx_record *buf,
			   size_t cap, uint64_t records,
			   void (*emit)(void *, const struct tdmrx_record *),
			   void *ctx, struct tdm_stats *st)
{
	const struct tdm_stats_cfg clk = { 0 };
	struct tdm_merge_cfg mc = { .nsrc = 4, .bound_ns = 10000000,
				    .hold_ns = 110000000, .clock = &clk,
				    .emit = emit, .ctx = ctx };
	struct tdm_merge *m = tdm_merge_new(&mc);
	uint64_t done = 0;
	int64_t busy = 0, t0, f;
	size_t n, i;

	if (!m)
		return -1;
	tdm_merge_clock(m, 0, 0);
	while (!tdm_stop && done < records) {
		n = 0;
		while (n < cap)
			n += synth_window(y, buf + n);
		t0 = cpu_ns();
		for (i = 0; i < n; i++) {
			tdm_merge_add(m, i % 4, &buf[i]);
			tdm_merge_mark(m, i % 4, buf[i].rx_ns);
		}
		f = tdm_merge_release(m);
		if (st && f != INT64_MIN)
			tdm_stats_advance(st, f);
		busy += cpu_ns() - t0;
		done += n;
	}
	t0 = cpu_ns();
	tdm_merge_flush(m);
	if (st)
		tdm_stats_finish(st);
	busy += cpu_ns() - t0;
	tdm_merge_free(m);
	return busy;
}

/* A second engine like t's (its rows to the same place), for the pipeline. */
static struct tdm_stats *engine_like(struct tdmstat *t)
{
	struct tdm_stats *st = tdm_stats_new(tdm_stats_cfg(t->st));
	char err[256];
	unsigned int i;

	for (i = 0; st && i < t->nplans; i++)
		if (tdm_stats_add_plan(st, &t->plans[i], err, sizeof(err))) {
			tdm_stats_free(st);
			return NULL;
		}
	return st;
}

static double per_s(uint64_t n, int64_t ns)
{
	return ns > 0 ? (double)n / ((double)ns / 1e9) : 0;
}

/*
 * The engine alone (records it is handed), the merge of 4 rings alone, and
 * the two as capture runs them, the merge feeding the engine: each on its
 * own stretch of the same synthetic traffic, timed in the CPU time of
 * this thread (on a loaded host, a core shared is not a core lost),
 * without the time spent making the records.
 */
int tdmstat_bench(struct tdmstat *t)
{
	struct tdmrx_record *buf;
	const size_t cap = 1 << 16;
	struct synth y;
	struct to_engine pipe = { 0 };
	uint64_t done = 0, merged = 0;
	int64_t busy = 0, mbusy, pbusy, t0;
	double both = 0;
	char err[512];
	size_t n = 0, i;

	if (!t->bench_records)
		t->bench_records = 50000000;
	if (default_plan(t, err, sizeof(err)) ||
	    tdmstat_open_outputs(t, err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s\n", err);
		return 1;
	}
	if (!t->win_csv)
		t->win_csv = fopen("/dev/null", "w");
	buf = malloc((cap + 256) * sizeof(*buf));
	pipe.st = engine_like(t);
	if (!buf || !pipe.st || synth_init(&y, &t->plans[t->nplans - 1])) {
		fprintf(stderr, "tdmstat: out of memory\n");
		return 1;
	}
	/* Prepare a chunk, then time only the engine (and the CSV rows). */
	while (!tdm_stop && done < t->bench_records) {
		n = 0;
		while (n < cap)
			n += synth_window(&y, buf + n);
		t0 = cpu_ns();
		for (i = 0; i < n; i++)
			tdm_stats_push(t->st, &buf[i]);
		busy += cpu_ns() - t0;
		done += n;
		t->records_in += n;
	}
	tdm_stats_finish(t->st);
	mbusy = bench_merge(&y, buf, cap, done, merge_sink, &merged, NULL);
	pbusy = bench_merge(&y, buf, cap, done, engine_sink, &pipe, pipe.st);
	if (mbusy < 0 || pbusy < 0) {
		fprintf(stderr, "tdmstat: out of memory\n");
		return 1;
	}
	/* The figure: a record's engine time plus its merge time. */
	if (done && merged && busy > 0 && mbusy > 0)
		both = 1e9 / ((double)busy / (double)done +
			      (double)mbusy / (double)merged);
	if (t->json)
		printf("{\"records\":%llu,\"engine_ns\":%lld,\"records_per_s\":%.0f,\"merge_records\":%llu,\"merge_ns\":%lld,\"merge_records_per_s\":%.0f,\"combined_records_per_s\":%.0f,\"pipeline_records\":%llu,\"pipeline_ns\":%lld,\"pipeline_records_per_s\":%.0f}\n",
		       (unsigned long long)done, (long long)busy,
		       per_s(done, busy), (unsigned long long)merged,
		       (long long)mbusy, per_s(merged, mbusy),
		       both,
		       (unsigned long long)pipe.n, (long long)pbusy,
		       per_s(pipe.n, pbusy));
	else
		printf("tdmstat bench: %llu records (%u senders, %llu windows), on one core: the engine %.2f M records/s (%.3f s), the receive-order merge of 4 rings %.2f M records/s, the two together %.2f M records/s (records / (engine + merge time)); the merge feeding the engine, as capture runs them: %.2f M records/s\n",
		       (unsigned long long)done, t->plans[t->nplans - 1].nsenders,
		       (unsigned long long)tdm_stats_run(t->st)->windows,
		       per_s(done, busy) / 1e6, (double)busy / 1e9,
		       per_s(merged, mbusy) / 1e6,
		       both / 1e6,
		       per_s(pipe.n, pbusy) / 1e6);
	tdm_stats_free(pipe.st);
	synth_free(&y);
	free(buf);
	if (t->win_csv)
		fclose(t->win_csv);
	t->win_csv = NULL;
	return 0;
}

/*
 * One record as the frame a capture would have seen: sender i from
 * 198.18.0.(1 + i % 200) to 198.19.0.1, port 8081, the first SNAPLEN
 * bytes of it, stamped with rx_ns.
 */
static void dump_frame(pcap_dumper_t *pd, const struct tdmrx_record *r)
{
	const struct tdm_frame_addr a = {
		.saddr = 0xc6120000 | (1 + r->sender % 200),
		.daddr = 0xc6130001,
		.dport = 8081,
	};
	const struct tdm_pkt p = {
		.sender = r->sender,
		.plan_version = r->plan_version,
		.seq = r->seq,
		.tx_ns = r->tx_ns,
	};
	uint8_t fr[SNAPLEN];
	struct pcap_pkthdr h;

	h.len = tdm_frame_encode(fr, sizeof(fr), &a, &p, r->len);
	h.caplen = SNAPLEN;
	h.ts.tv_sec = r->rx_ns / (int64_t)TDM_NSEC_PER_SEC;
	h.ts.tv_usec = r->rx_ns % (int64_t)TDM_NSEC_PER_SEC;	/* ns */
	pcap_dump((u_char *)pd, &h, fr);
}

/* A pcap (name ends in .pcap) of Ethernet/IPv4/UDP frames, or a record file. */
int tdmstat_synth(struct tdmstat *t)
{
	struct tdmrx_record buf[512];
	const char *out = t->prefix;
	size_t len = out ? strlen(out) : 0;
	bool pcap = len > 5 && !strcmp(out + len - 5, ".pcap");
	pcap_dumper_t *pd = NULL;
	pcap_t *pc = NULL;
	FILE *f = NULL;
	uint64_t done = 0;
	struct synth y;
	char err[512];
	size_t n, i;

	if (!out) {
		fprintf(stderr, "tdmstat: synth needs -o FILE\n");
		return 2;
	}
	if (!t->bench_records)
		t->bench_records = 1000000;
	if (default_plan(t, err, sizeof(err)) ||
	    synth_init(&y, &t->plans[t->nplans - 1])) {
		fprintf(stderr, "tdmstat: %s\n", err);
		return 1;
	}
	if (pcap) {
		pc = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, SNAPLEN,
							  PCAP_TSTAMP_PRECISION_NANO);
		pd = pc ? pcap_dump_open(pc, out) : NULL;
		if (!pd) {
			fprintf(stderr, "tdmstat: %s: %s\n", out,
				pc ? pcap_geterr(pc) : "pcap");
			return 1;
		}
	} else {
		uint8_t h[TDM_REC_FILE_HDR_LEN];

		f = fopen(out, "wb");
		if (!f) {
			fprintf(stderr, "tdmstat: %s: %s\n", out, strerror(errno));
			return 1;
		}
		tdm_rec_file_header(h);
		fwrite(h, 1, sizeof(h), f);
	}
	while (done < t->bench_records) {
		n = synth_window(&y, buf);
		if (n > t->bench_records - done)
			n = t->bench_records - done;
		if (f)
			fwrite(buf, sizeof(buf[0]), n, f);
		else
			for (i = 0; i < n; i++)
				dump_frame(pd, &buf[i]);
		done += n;
	}
	/* End markers: what each sender sent. */
	for (i = 0; i < t->plans[t->nplans - 1].nsenders && f; i++) {
		struct tdmrx_record e = { .sender = i, .sent = y.seq[i],
					  .seq = y.seq[i],
					  .flags = TDMRX_F_HW_TS | TDMRX_F_END,
					  .plan_version = t->plans[t->nplans - 1].version,
					  .len = 40 };

		fwrite(&e, sizeof(e), 1, f);
	}
	synth_free(&y);
	/* The plan next to it, base time included: analyze -p FILE.plan. */
	{
		char path[4096], *text = tdm_plan_format_alloc(&t->plans[t->nplans - 1]);
		FILE *pf;

		snprintf(path, sizeof(path), "%s.plan", out);
		pf = fopen(path, "w");
		if (!text || !pf || fputs(text, pf) < 0) {
			fprintf(stderr, "tdmstat: %s: %s\n", path, strerror(errno));
			if (pf)
				fclose(pf);
			free(text);
			return 1;
		}
		fclose(pf);
		free(text);
	}
	if (pd) {
		pcap_dump_close(pd);
		pcap_close(pc);
	}
	if (f && fclose(f)) {
		fprintf(stderr, "tdmstat: %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (!t->quiet)
		printf("tdmstat synth: %llu records to %s, plan in %s.plan\n",
		       (unsigned long long)done, out, out);
	return 0;
}
