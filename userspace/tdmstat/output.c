// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat's outputs: the engine and its files (PREFIX-windows.csv as
 * windows close, PREFIX-packets.csv, PREFIX-senders.csv and PREFIX.json at
 * the end), or with --format original the original tool's files instead of
 * the window and packet CSVs (lib/tdm_orig.h), the progress line, the
 * summary table or JSON on stdout, and the list of metrics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>

#include "tdm_json.h"
#include "tdm_util.h"
#include "tdmstat.h"

static void on_window(void *ctx, const struct tdm_win_result *w)
{
	struct tdmstat *t = ctx;

	if (t->fmt_original)
		tdm_orig_window(&t->orig, w);
	else if (t->win_csv)
		tdm_metrics_csv_row(t->win_csv, &tdm_win_table, w);
}

static void on_packet(void *ctx, const struct tdm_pkt_result *p)
{
	struct tdmstat *t = ctx;

	if (t->fmt_original)
		tdm_orig_packet(&t->orig, p);
	else
		tdm_metrics_csv_row(t->pkt_csv, &tdm_pkt_table, p);
}

/* PREFIX + suffix, opened for writing, buffered. */
static FILE *open_out(const char *prefix, const char *suffix, char *err,
		      size_t errlen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", prefix, suffix);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/*
 * The original's files.  The per-window name holds n, known at the end
 * unless --original gave it: the rows go to PREFIX.windows.tmp.csv/.txt,
 * renamed by finish_original.
 */
static int open_original(struct tdmstat *t, char *err, size_t errlen)
{
	struct tdm_orig *o = &t->orig;

	o->win_csv = open_out(t->prefix, ".windows.tmp.csv", err, errlen);
	if (o->win_csv)
		o->win_txt = open_out(t->prefix, ".windows.tmp.txt", err,
				      errlen);
	if (!o->win_txt)
		return -1;
	if (t->packets) {
		o->pkt_csv = open_out(t->prefix, ".csv", err, errlen);
		if (o->pkt_csv)
			o->pkt_txt = open_out(t->prefix, ".txt", err, errlen);
		if (!o->pkt_txt)
			return -1;
	}
	return 0;
}

static int close_file(FILE **f)
{
	int rc = *f && fclose(*f) ? -1 : 0;

	*f = NULL;
	return rc;
}

static int finish_original(struct tdmstat *t)
{
	const struct tdm_run_result *r = tdm_stats_run(t->st);
	struct tdm_orig *o = &t->orig;
	char base[4000], from[4096], to[4096];
	const char *ext[] = { "csv", "txt" };
	unsigned int i;
	int rc = 0;

	tdm_orig_windows_done(o);
	tdm_orig_packet_summary(o, r->received, r->sent);
	rc |= close_file(&o->win_csv) | close_file(&o->win_txt) |
	      close_file(&o->pkt_csv) | close_file(&o->pkt_txt);
	if (!t->prefix)
		return rc;
	if (tdm_orig_window_base(o, t->prefix, base, sizeof(base))) {
		fprintf(stderr, "tdmstat: output name too long\n");
		return -1;
	}
	for (i = 0; i < TDM_ARRAY_SIZE(ext); i++) {
		snprintf(from, sizeof(from), "%s.windows.tmp.%s", t->prefix,
			 ext[i]);
		snprintf(to, sizeof(to), "%s.%s", base, ext[i]);
		if (rename(from, to)) {
			fprintf(stderr, "tdmstat: %s -> %s: %s\n", from, to,
				strerror(errno));
			rc = -1;
		}
	}
	if (!t->quiet)
		fprintf(stderr, "tdmstat: wrote %s.csv and .txt: %llu window rows (%llu empty, %llu correction)%s\n",
			base, (unsigned long long)o->rows,
			(unsigned long long)o->empty_rows,
			(unsigned long long)o->correction_rows,
			t->packets ? ", and the per-packet files" : "");
	return rc;
}

static FILE *open_csv(const struct tdmstat *t, const char *what,
		      const struct tdm_metric_table *tab, char *err,
		      size_t errlen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s-%s.csv", t->prefix, what);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	tdm_metrics_csv_header(f, tab);
	return f;
}

/* The kernel's TAI - UTC, to put software (CLOCK_REALTIME) stamps on TAI. */
static int64_t tai_offset(void)
{
	struct timex tx = { 0 };

	if (adjtimex(&tx) < 0)
		return 0;
	return (int64_t)tx.tai * (int64_t)TDM_NSEC_PER_SEC;
}

/* Software stamps need no TAI - UTC when every plan is on REALTIME (the
 * original's plans).
 */
static bool realtime_plans(const struct tdmstat *t)
{
	unsigned int i;

	for (i = 0; i < t->nplans; i++)
		if (t->plans[i].clockid != CLOCK_REALTIME)
			return false;
	return t->nplans > 0;
}

/* Create the engine and the files; the plans are added to the engine. */
int tdmstat_open_outputs(struct tdmstat *t, char *err, size_t errlen)
{
	struct tdm_stats_cfg cfg = {
		.grace_ns = (int64_t)t->grace_ns,
		.assign_rx = !t->assign_tx,
		.rt_offset_ns = t->rt_offset_set ? t->rt_offset :
				realtime_plans(t) ? 0 : tai_offset(),
		.hw_offset_ns = t->hw_offset,
		.on_window = on_window,
		.ctx = t,
	};
	unsigned int i;

	if (t->packets)
		cfg.on_packet = on_packet;
	t->st = tdm_stats_new(&cfg);
	if (!t->st) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < t->nplans; i++)
		if (tdm_stats_add_plan(t->st, &t->plans[i], err, errlen))
			return -1;
	if (t->fmt_original) {
		/* Plan-clock times as the original's epoch (REALTIME) seconds. */
		t->orig.epoch_off_ns = t->nplans &&
			t->plans[t->nplans - 1].clockid == CLOCK_TAI ?
			-cfg.rt_offset_ns : 0;
		if (!t->prefix) {
			snprintf(err, errlen, "--format original needs an output prefix");
			return -1;
		}
		if (open_original(t, err, errlen))
			return -1;
	} else if (t->prefix) {
		t->win_csv = open_csv(t, "windows", &tdm_win_table, err, errlen);
		if (!t->win_csv)
			return -1;
		if (t->packets) {
			t->pkt_csv = open_csv(t, "packets", &tdm_pkt_table, err,
					      errlen);
			if (!t->pkt_csv)
				return -1;
		}
	} else if (t->packets) {
		snprintf(err, errlen, "--packets needs an output prefix");
		return -1;
	}
	t->t0_ns = tdm_mono_ns();
	t->t_last_progress = t->t0_ns;
	return 0;
}

void tdmstat_progress(struct tdmstat *t, bool force)
{
	int64_t now = tdm_mono_ns();
	const struct tdm_run_result *r;
	char lost[24];
	double dt;

	if (!t->progress || (!force && now - t->t_last_progress < 1000000000LL))
		return;
	dt = (double)(now - t->t_last_progress) / 1e9;
	r = tdm_stats_run(t->st);
	if (r->lost == TDM_NA_U64)
		snprintf(lost, sizeof(lost), "unknown");
	else
		snprintf(lost, sizeof(lost), "%llu", (unsigned long long)r->lost);
	fprintf(stderr, "\r%s: %llu records, %.2f M/s, ring drops %llu, windows %llu (%u open), late %llu, lost %s   ",
		t->cmd, (unsigned long long)r->records,
		dt > 0 ? (double)(r->records - t->last_records) / dt / 1e6 : 0.0,
		(unsigned long long)r->ring_drops,
		(unsigned long long)r->windows, tdm_stats_open_windows(t->st),
		(unsigned long long)r->late, lost);
	t->last_records = r->records;
	t->t_last_progress = now;
}

/* --receiver: this receiver's row (false without one). */
static bool rx_row(struct tdmstat *t, struct tdm_receiver_result *out)
{
	if (t->rx_index < 0)
		return false;
	tdm_receiver_result(out, &t->rx_plan, (unsigned int)t->rx_index,
			    tdm_stats_run(t->st));
	return true;
}

static char *summary_json(struct tdmstat *t)
{
	struct tdm_receiver_result rx;
	const struct tdm_run_result *r = tdm_stats_run(t->st);
	struct tdm_json j;
	unsigned int i;
	char *out = NULL;
	const char *s;

	tdm_json_init(&j);
	tdm_json_obj_open(&j, NULL);
	tdm_json_str(&j, "tool", "tdmstat");
	tdm_json_str(&j, "command", t->cmd);
	if (t->input)
		tdm_json_str(&j, "input", t->input);
	if (t->ifname)
		tdm_json_str(&j, "interface", t->ifname);
	tdm_json_u64(&j, "elapsed_ns", (uint64_t)(t->elapsed_s * 1e9));
	tdm_json_u64(&j, "records_per_s", t->elapsed_s > 0 ?
		     (uint64_t)((double)r->records / t->elapsed_s) : 0);
	tdm_json_arr_open(&j, "plans");
	for (i = 0; i < t->nplans; i++)
		tdm_plan_json(&j, NULL, &t->plans[i]);
	tdm_json_arr_close(&j);
	tdm_metrics_json(&j, "run", &tdm_run_table, r);
	if (rx_row(t, &rx))
		tdm_metrics_json(&j, "receiver", &tdm_receiver_table, &rx);
	tdm_json_arr_open(&j, "senders");
	for (i = 0; i < tdm_stats_nsenders(t->st); i++)
		tdm_metrics_json(&j, NULL, &tdm_sender_table,
				 tdm_stats_sender(t->st, i));
	tdm_json_arr_close(&j);
	tdm_json_obj_close(&j);
	s = tdm_json_finish(&j);
	if (s)
		out = strdup(s);
	tdm_json_free(&j);
	return out;
}

static void fmt_ns(int64_t v, char *b, size_t n)
{
	if (v == TDM_NA_S64)
		snprintf(b, n, "-");
	else
		snprintf(b, n, "%.3f", (double)v / 1e3);
}

static void summary_table(struct tdmstat *t, FILE *f)
{
	const struct tdm_run_result *r = tdm_stats_run(t->st);
	struct tdm_receiver_result rx;
	char a1[32], a2[32];
	unsigned int i;

	if (rx_row(t, &rx))
		fprintf(f, "receiver %s (%s): its windows open %s of the cycle (%llu senders), payload %s of its link\n",
			rx.receiver, rx.address,
			tdm_fmt_ppm(rx.planned_ppm, a1, sizeof(a1)),
			(unsigned long long)rx.senders_planned,
			tdm_fmt_ppm(rx.payload_ppm, a2, sizeof(a2)));

	fprintf(f, "%-12s %10s %10s %8s %8s %6s %6s %8s %8s %7s %10s %10s %10s %9s\n",
		"SENDER", "SENT", "RECEIVED", "LOST", "LATE", "DUP", "REORD",
		"TX_OUT", "RX_OUT", "WINDOWS", "TRANSIT_MIN", "AVG", "MAX(us)",
		"JITTER");
	for (i = 0; i < tdm_stats_nsenders(t->st); i++) {
		const struct tdm_sender_result *s = tdm_stats_sender(t->st, i);
		char sent[24], lost[24], a[24], b[24], c[24], d[24];

		tdm_fmt_u64_na(s->sent, sent, sizeof(sent));
		tdm_fmt_u64_na(s->lost, lost, sizeof(lost));
		fmt_ns(s->transit_min_ns, a, sizeof(a));
		fmt_ns(s->transit_avg_ns, b, sizeof(b));
		fmt_ns(s->transit_max_ns, c, sizeof(c));
		fmt_ns(s->jitter_ns, d, sizeof(d));
		fprintf(f, "%-12.12s %10s %10llu %8s %8llu %6llu %6llu %8llu %8llu %7llu %10s %10s %10s %9s\n",
			s->name ? s->name : "?", sent,
			(unsigned long long)s->received, lost,
			(unsigned long long)s->late,
			(unsigned long long)s->duplicates,
			(unsigned long long)s->reordered,
			(unsigned long long)s->tx_outside,
			(unsigned long long)s->rx_outside,
			(unsigned long long)s->windows, a, b, c, d);
	}
	fprintf(f, "records %llu (data %llu, end markers %llu, bad %llu, unknown sender %llu), windows %llu (+%llu correction rows), overlapping %llu\n",
		(unsigned long long)r->records,
		(unsigned long long)r->data_packets,
		(unsigned long long)r->end_markers,
		(unsigned long long)r->bad_records,
		(unsigned long long)r->unknown_sender,
		(unsigned long long)r->windows,
		(unsigned long long)r->correction_rows,
		(unsigned long long)r->overlap_windows);
	fprintf(f, "received %llu, of them late %llu (after their window's row: received, not lost); behind the merge %llu\n",
		(unsigned long long)r->received,
		(unsigned long long)r->late,
		(unsigned long long)r->behind);
	if (r->lost_unknown)
		fprintf(f, "lost: unknown for %llu sender(s) without an end marker\n",
			(unsigned long long)r->lost_unknown);
	fprintf(f, "ring drops %llu (not network loss), timestamps %s, %.0f records/s over %.3f s\n",
		(unsigned long long)r->ring_drops, r->ts_source,
		t->elapsed_s > 0 ? (double)r->records / t->elapsed_s : 0.0,
		t->elapsed_s);
	/*
	 * A ring drop loses a record, not a packet; the senders' loss counts
	 * it, so split it: what the network lost is what the rings do not
	 * explain (an upper bound on what they do: drops of end markers or
	 * of foreign records count too).
	 */
	if (r->ring_drops && r->sent != TDM_NA_U64)
		fprintf(f, "lost %llu = dropped by the ring %llu + network loss %llu\n",
			(unsigned long long)r->lost,
			(unsigned long long)(r->lost < r->ring_drops ?
					     r->lost : r->ring_drops),
			(unsigned long long)(r->lost > r->ring_drops ?
					     r->lost - r->ring_drops : 0));
}

/*
 * A run without one usable data packet is an error: say what came instead
 * (0 if there were data packets).
 */
static int unusable(const struct tdmstat *t, const struct tdm_run_result *r)
{
	const char *ours = t->input_fmt == TDM_PAYLOAD_ORIG ?
			   "an original-tool data packet" :
			   "a tdmgen data packet";

	if (r->received)
		return 0;
	if (!r->records) {
		if (!strcmp(t->cmd, "analyze"))
			fprintf(stderr, "tdmstat: %s: no records: %llu frames, none a UDP datagram %s%s%s\n",
				t->input, (unsigned long long)t->frames,
				t->nports ? "to the given ports" : "with a test packet",
				t->fragments ? " (IP fragments did not count)" : "",
				t->bad_4096 && t->input_fmt == TDM_PAYLOAD_TDMG ?
				"; some of 4096-byte UDP payload without the TDMG magic: the original tool's packets? use --input-format original" : "");
		else
			fprintf(stderr, "tdmstat: no records: nothing arrived for the ports\n");
		return -1;
	}
	fprintf(stderr, "tdmstat: %llu records, none %s: %llu bad (truncated, no header, or times beyond 69 s apart), %llu end markers, %llu data packets of senders or plans not in the plan",
		(unsigned long long)r->records, ours,
		(unsigned long long)r->bad_records,
		(unsigned long long)r->end_markers,
		(unsigned long long)r->unknown_sender);
	if (t->bad_4096 && t->input_fmt == TDM_PAYLOAD_TDMG)
		fprintf(stderr, "; %llu of 4096-byte UDP payload without the TDMG magic: the original tool's packets? use --input-format original",
			(unsigned long long)t->bad_4096);
	else if (r->bad_records && t->input_fmt == TDM_PAYLOAD_ORIG)
		fprintf(stderr, "; the original's packets are 4096-byte payloads with a timeval, its client below 2^32");
	if (r->unknown_sender)
		fprintf(stderr, "; the plan has %u senders",
			t->nplans ? t->plans[t->nplans - 1].nsenders : 0);
	fputc('\n', stderr);
	return -1;
}

/* Close everything, write the sender CSV and the JSON, print the table. */
int tdmstat_finish(struct tdmstat *t)
{
	char path[4096], *js;
	int rc = 0, bad_run;
	unsigned int i;
	FILE *f;

	tdm_stats_finish(t->st);
	if (t->fmt_original && finish_original(t))
		rc = -1;
	t->elapsed_s = (double)(tdm_mono_ns() - t->t0_ns) / 1e9;
	if (t->progress) {
		tdmstat_progress(t, true);
		fputc('\n', stderr);
	}
	js = summary_json(t);
	if (t->prefix && t->rx_index >= 0) {
		struct tdm_receiver_result rx;

		rx_row(t, &rx);
		snprintf(path, sizeof(path), "%s-receiver.csv", t->prefix);
		f = fopen(path, "w");
		if (f) {
			tdm_metrics_csv_header(f, &tdm_receiver_table);
			tdm_metrics_csv_row(f, &tdm_receiver_table, &rx);
			if (fclose(f))
				rc = -1;
		} else {
			rc = -1;
		}
	}
	if (t->prefix) {
		snprintf(path, sizeof(path), "%s-senders.csv", t->prefix);
		f = fopen(path, "w");
		if (f) {
			tdm_metrics_csv_header(f, &tdm_sender_table);
			for (i = 0; i < tdm_stats_nsenders(t->st); i++)
				tdm_metrics_csv_row(f, &tdm_sender_table,
						    tdm_stats_sender(t->st, i));
			if (fclose(f))
				rc = -1;
		} else {
			rc = -1;
		}
		snprintf(path, sizeof(path), "%s.json", t->prefix);
		f = fopen(path, "w");
		if (f && js) {
			fprintf(f, "%s\n", js);
			if (fclose(f))
				rc = -1;
		} else {
			if (f)
				fclose(f);
			rc = -1;
		}
	}
	if (t->win_csv && fclose(t->win_csv))
		rc = -1;
	if (t->pkt_csv && fclose(t->pkt_csv))
		rc = -1;
	t->win_csv = t->pkt_csv = NULL;
	if (rc)
		fprintf(stderr, "tdmstat: writing %s*: %s\n", t->prefix,
			strerror(errno));
	if (t->json && js)
		printf("%s\n", js);
	else if (!t->quiet)
		summary_table(t, stdout);
	free(js);
	bad_run = unusable(t, tdm_stats_run(t->st));
	tdm_orig_free(&t->orig);
	return rc || bad_run ? -1 : 0;
}

/* ---- metrics ------------------------------------------------------------ */

int tdmstat_metrics(const struct tdmstat *t)
{
	const struct tdm_metric_table *tabs[] = { &tdm_win_table, &tdm_pkt_table,
						  &tdm_sender_table, &tdm_run_table,
						  &tdm_receiver_table };
	static const char *const kinds[] = { "u64", "s64", "string" };
	unsigned int i, k;

	if (t->json) {
		struct tdm_json j;
		const char *s;

		tdm_json_init(&j);
		tdm_json_obj_open(&j, NULL);
		for (i = 0; i < TDM_ARRAY_SIZE(tabs); i++) {
			tdm_json_arr_open(&j, tabs[i]->name);
			for (k = 0; k < tabs[i]->n; k++) {
				tdm_json_obj_open(&j, NULL);
				tdm_json_str(&j, "name", tabs[i]->m[k].name);
				tdm_json_str(&j, "type", kinds[tabs[i]->m[k].kind]);
				tdm_json_str(&j, "unit", tabs[i]->m[k].unit);
				tdm_json_str(&j, "description", tabs[i]->m[k].desc);
				tdm_json_obj_close(&j);
			}
			tdm_json_arr_close(&j);
		}
		tdm_json_obj_close(&j);
		s = tdm_json_finish(&j);
		if (s)
			printf("%s\n", s);
		tdm_json_free(&j);
		return s ? 0 : 1;
	}
	for (i = 0; i < TDM_ARRAY_SIZE(tabs); i++) {
		printf("%s%s table:\n", i ? "\n" : "", tabs[i]->name);
		for (k = 0; k < tabs[i]->n; k++)
			printf("  %-20s %-6s %-5s %s\n", tabs[i]->m[k].name,
			       kinds[tabs[i]->m[k].kind], tabs[i]->m[k].unit,
			       tabs[i]->m[k].desc);
	}
	return 0;
}
