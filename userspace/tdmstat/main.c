// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat: statistics of tdmwin test traffic (replaces the analysis of the
 * original udp_receive).  See tdmstat(1) and Documentation/tdmstat.rst.
 *
 *   tdmstat capture -i IFACE [-p PLAN | --tdmd] [options]  (tdmrx.ko)
 *   tdmstat analyze FILE     [-p PLAN | --tdmd] [options]  (pcap, pcapng,
 *                                                           record file)
 *   tdmstat bench [-n RECORDS] [-S SENDERS]                 (records/s)
 *   tdmstat synth -n RECORDS -o FILE [-S SENDERS]           (test input)
 *   tdmstat metrics [-j]                                    (the names)
 *
 * Every command feeds struct tdmrx_record values to one engine
 * (lib/tdm_stats.h), so capture and analyze agree on the same traffic.
 *
 * Exit status: 0 done, 1 failure (input, module, plan), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tdm_json.h"
#include "tdm_pkt.h"
#include "tdm_util.h"
#include "tdmstat.h"

#define DEFAULT_SOCKET	"/run/tdmd.sock"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tdmstat capture -i IFACE [options]\n"
		"       tdmstat analyze [options] FILE    (pcap/pcapng with ns stamps, or record file)\n"
		"       tdmstat bench [-n RECORDS] [-S SENDERS] [-p PLAN]\n"
		"       tdmstat synth [-n RECORDS] [-S SENDERS] [-p PLAN] -o FILE(.pcap|.rec)\n"
		"       tdmstat metrics [-j]\n"
		"       tdmstat --help | --version\n"
		"options:\n"
		"  -p, --plan FILE        plan file (repeat for plan changes; by version)\n"
		"  -T, --tdmd [SOCKET]    read the plan from the local tdmd (default " DEFAULT_SOCKET ")\n"
		"  -b, --base-time NS     base time (TAI ns) of plans that have none (default 0)\n"
		"  -o, --output PREFIX    PREFIX-windows.csv, -senders.csv, -packets.csv, .json\n"
		"                         (default tdmstat)\n"
		"  -P, --packets          write the per-packet CSV too\n"
		"  -u, --port PORT        UDP destination port (repeat; capture default 8081,\n"
		"                         analyze default any port)\n"
		"  -g, --grace TIME       close a window this long after its end (default 100ms)\n"
		"  -A, --assign rx|tx     a packet's window is the one its RX time (default:\n"
		"                         gated senders) or its TX time (app-paced senders) is in\n"
		"      --rt-offset NS     add to software RX stamps (default: the kernel's TAI-UTC)\n"
		"      --hw-offset NS     add to hardware RX stamps (default 0)\n"
		"      --pcap-ts sw|hw    what the pcap stamps are (default sw)\n"
		"  -i, --interface IF     capture: the device\n"
		"  -d, --duration TIME    capture: stop after TIME\n"
		"  -e, --senders N        capture: stop once N senders sent their end markers\n"
		"  -r, --ring RECORDS     capture: records per CPU ring\n"
		"  -w, --write FILE       capture: also write the records to FILE\n"
		"  -n, --records N        bench/synth: records (default 50000000 / 1000000)\n"
		"  -S, --nsenders N       bench/synth: senders (default 3)\n"
		"  -j, --json             JSON summary on stdout instead of the table\n"
		"  -q, --quiet            no table, no progress line\n"
		"  -h, --help             this help\n");
}

/* ---- plans ------------------------------------------------------------ */

static int add_plan(struct tdmstat *t, struct tdm_plan *p, char *err,
		    size_t errlen)
{
	if (!p->base_time)
		p->base_time = t->base_time;
	if (t->st && tdm_stats_add_plan(t->st, p, err, errlen)) {
		tdm_plan_free(p);
		return -1;
	}
	if (t->nplans == TDMSTAT_MAX_PLANS) {
		tdm_plan_free(&t->plans[0]);
		memmove(t->plans, t->plans + 1, sizeof(t->plans[0]) *
			(TDMSTAT_MAX_PLANS - 1));
		t->nplans--;
	}
	t->plans[t->nplans++] = *p;
	return 0;
}

static bool have_plan(const struct tdmstat *t, const struct tdm_plan *p)
{
	unsigned int i;

	for (i = 0; i < t->nplans; i++)
		if (tdm_plan_equal(&t->plans[i], p))
			return true;
	return false;
}

/*
 * The text of `plan show`: one or two plans, each starting with
 * "# plan version N, base time ..." and holding "# base_time NS".
 */
static int plans_from_text(struct tdmstat *t, char *text, char *err,
			   size_t errlen)
{
	char *start = strstr(text, "# plan version");

	while (start) {
		char *next = strstr(start + 1, "# plan version");
		char *bt, save = 0;
		struct tdm_plan p;

		if (next) {
			save = *next;
			*next = '\0';
		}
		if (tdm_plan_parse(start, "tdmd", &p, err, errlen))
			return -1;
		bt = strstr(start, "# base_time ");
		if (bt)
			p.base_time = strtoll(bt + 12, NULL, 10);
		if (next)
			*next = save;
		if (have_plan(t, &p))
			tdm_plan_free(&p);
		else if (add_plan(t, &p, err, errlen))
			return -1;
		start = next;
	}
	return 0;
}

static char *tdmd_request(const char *path, const char *line, char *err,
			  size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int fd;

	if (!buf || tdm_strlcpy(sun.sun_path, path, sizeof(sun.sun_path))) {
		snprintf(err, errlen, "bad socket path %s", path);
		free(buf);
		return NULL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 ||
	    shutdown(fd, SHUT_WR)) {
		snprintf(err, errlen, "cannot reach tdmd at %s: %s", path,
			 strerror(errno));
		goto fail;
	}
	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pf, 1, 5000) <= 0) {
			snprintf(err, errlen, "no answer from tdmd within 5 s");
			goto fail;
		}
		if (len + 4096 + 1 > cap) {
			char *b = cap < (16u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!b) {
				snprintf(err, errlen, "answer from tdmd too large");
				goto fail;
			}
			buf = b;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "reading from tdmd: %s", strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	if (strncmp(buf, "ok\n", 3)) {
		snprintf(err, errlen, "tdmd: %.200s", strchr(buf, '\n') ?
			 strchr(buf, '\n') + 1 : buf);
		free(buf);
		return NULL;
	}
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

int tdmstat_poll_tdmd(struct tdmstat *t, char *err, size_t errlen)
{
	char *reply;
	int rc;

	if (!t->tdmd_socket)
		return 0;
	reply = tdmd_request(t->tdmd_socket, "plan show\n", err, errlen);
	if (!reply)
		return -1;
	rc = plans_from_text(t, reply, err, errlen);
	free(reply);
	return rc;
}

int tdmstat_load_plans(struct tdmstat *t, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < t->nplan_files; i++) {
		struct tdm_plan p;
		char *text = NULL, *bt;
		size_t n = 0;
		FILE *f = fopen(t->plan_files[i], "r");

		if (!f) {
			snprintf(err, errlen, "%s: %s", t->plan_files[i],
				 strerror(errno));
			return -1;
		}
		if (getdelim(&text, &n, '\0', f) < 0) {
			free(text);
			text = strdup("");
		}
		fclose(f);
		if (!text || tdm_plan_parse(text, t->plan_files[i], &p, err,
					    errlen)) {
			free(text);
			return -1;
		}
		/* What tdm_plan_format (tdmctl plan show) writes. */
		bt = strstr(text, "# base_time ");
		if (bt)
			p.base_time = strtoll(bt + 12, NULL, 10);
		free(text);
		if (add_plan(t, &p, err, errlen))
			return -1;
	}
	if (tdmstat_poll_tdmd(t, err, errlen))
		return -1;
	if (!t->nplans) {
		snprintf(err, errlen, "no plan: give a plan file (-p) or --tdmd");
		return -1;
	}
	return 0;
}

/* ---- outputs ------------------------------------------------------------ */

static void on_window(void *ctx, const struct tdm_win_result *w)
{
	struct tdmstat *t = ctx;

	if (t->win_csv)
		tdm_metrics_csv_row(t->win_csv, &tdm_win_table, w);
}

static void on_packet(void *ctx, const struct tdm_pkt_result *p)
{
	struct tdmstat *t = ctx;

	tdm_metrics_csv_row(t->pkt_csv, &tdm_pkt_table, p);
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

/* Create the engine and the files; the plans are added to the engine. */
int tdmstat_open_outputs(struct tdmstat *t, char *err, size_t errlen)
{
	struct tdm_stats_cfg cfg = {
		.grace_ns = (int64_t)t->grace_ns,
		.assign_rx = !t->assign_tx,
		.rt_offset_ns = t->rt_offset_set ? t->rt_offset : tai_offset(),
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
	if (t->prefix) {
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
	static uint64_t last_records;
	int64_t now = tdm_mono_ns();
	const struct tdm_run_result *r;
	double dt;

	if (!t->progress || (!force && now - t->t_last_progress < 1000000000LL))
		return;
	dt = (double)(now - t->t_last_progress) / 1e9;
	r = tdm_stats_run(t->st);
	fprintf(stderr, "\r%s: %llu records, %.2f M/s, ring drops %llu, windows %llu (%u open), lost %llu   ",
		t->cmd, (unsigned long long)r->records,
		dt > 0 ? (double)(r->records - last_records) / dt / 1e6 : 0.0,
		(unsigned long long)r->ring_drops,
		(unsigned long long)r->windows, tdm_stats_open_windows(t->st),
		(unsigned long long)r->lost);
	last_records = r->records;
	t->t_last_progress = now;
}

static void plans_json(struct tdm_json *j, const struct tdmstat *t)
{
	unsigned int i, k, w;

	tdm_json_arr_open(j, "plans");
	for (i = 0; i < t->nplans; i++) {
		const struct tdm_plan *p = &t->plans[i];

		tdm_json_obj_open(j, NULL);
		tdm_json_u64(j, "version", p->version);
		tdm_json_str(j, "clock", tdm_clock_name(p->clockid));
		tdm_json_u64(j, "cycle_ns", p->cycle_ns);
		tdm_json_s64(j, "base_time", p->base_time);
		tdm_json_arr_open(j, "senders");
		for (k = 0; k < p->nsenders; k++) {
			tdm_json_obj_open(j, NULL);
			tdm_json_u64(j, "sender", k);
			tdm_json_str(j, "name", p->senders[k].name);
			tdm_json_arr_open(j, "windows");
			for (w = 0; w < p->senders[k].nwin; w++) {
				tdm_json_obj_open(j, NULL);
				tdm_json_u64(j, "offset_ns", p->senders[k].win[w].offset);
				tdm_json_u64(j, "length_ns", p->senders[k].win[w].length);
				tdm_json_obj_close(j);
			}
			tdm_json_arr_close(j);
			tdm_json_obj_close(j);
		}
		tdm_json_arr_close(j);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
}

static char *summary_json(struct tdmstat *t)
{
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
	plans_json(&j, t);
	tdm_metrics_json(&j, "run", &tdm_run_table, r);
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

static void fmt_u(uint64_t v, char *b, size_t n)
{
	if (v == TDM_NA_U64)
		snprintf(b, n, "-");
	else
		snprintf(b, n, "%llu", (unsigned long long)v);
}

static void summary_table(struct tdmstat *t, FILE *f)
{
	const struct tdm_run_result *r = tdm_stats_run(t->st);
	unsigned int i;

	fprintf(f, "%-12s %10s %10s %8s %6s %6s %8s %8s %7s %10s %10s %10s %9s\n",
		"SENDER", "SENT", "RECEIVED", "LOST", "DUP", "REORD", "TX_OUT",
		"RX_OUT", "WINDOWS", "TRANSIT_MIN", "AVG", "MAX(us)", "JITTER");
	for (i = 0; i < tdm_stats_nsenders(t->st); i++) {
		const struct tdm_sender_result *s = tdm_stats_sender(t->st, i);
		char sent[24], a[24], b[24], c[24], d[24];

		fmt_u(s->sent, sent, sizeof(sent));
		fmt_ns(s->transit_min_ns, a, sizeof(a));
		fmt_ns(s->transit_avg_ns, b, sizeof(b));
		fmt_ns(s->transit_max_ns, c, sizeof(c));
		fmt_ns(s->jitter_ns, d, sizeof(d));
		fprintf(f, "%-12.12s %10s %10llu %8llu %6llu %6llu %8llu %8llu %7llu %10s %10s %10s %9s\n",
			s->name ? s->name : "?", sent,
			(unsigned long long)s->received,
			(unsigned long long)s->lost,
			(unsigned long long)s->duplicates,
			(unsigned long long)s->reordered,
			(unsigned long long)s->tx_outside,
			(unsigned long long)s->rx_outside,
			(unsigned long long)s->windows, a, b, c, d);
	}
	fprintf(f, "records %llu (data %llu, end markers %llu, bad %llu, late %llu, unknown sender %llu), windows %llu, overlapping %llu\n",
		(unsigned long long)r->records,
		(unsigned long long)r->data_packets,
		(unsigned long long)r->end_markers,
		(unsigned long long)r->bad_records,
		(unsigned long long)r->late,
		(unsigned long long)r->unknown_sender,
		(unsigned long long)r->windows,
		(unsigned long long)r->overlap_windows);
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

/* Close everything, write the sender CSV and the JSON, print the table. */
int tdmstat_finish(struct tdmstat *t)
{
	char path[4096], *js;
	int rc = 0;
	unsigned int i;
	FILE *f;

	tdm_stats_finish(t->st);
	t->elapsed_s = (double)(tdm_mono_ns() - t->t0_ns) / 1e9;
	if (t->progress) {
		tdmstat_progress(t, true);
		fputc('\n', stderr);
	}
	js = summary_json(t);
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
	return rc;
}

/* ---- analyze ------------------------------------------------------------ */

static int analyze_records(struct tdmstat *t, FILE *f)
{
	struct tdmrx_record buf[4096];
	size_t n, i;

	while (!tdm_stop && (n = fread(buf, sizeof(buf[0]), TDM_ARRAY_SIZE(buf), f))) {
		for (i = 0; i < n; i++)
			tdm_stats_push(t->st, &buf[i]);
		t->records_in += n;
		tdmstat_progress(t, false);
	}
	return ferror(f) ? -1 : 0;
}

static int analyze_pcap(struct tdmstat *t)
{
	char perr[PCAP_ERRBUF_SIZE];
	uint16_t flags = !strcmp(t->pcap_ts, "hw") ? TDMRX_F_HW_TS : TDMRX_F_SW_TS;
	struct pcap_pkthdr *h;
	const u_char *data;
	struct tdmrx_record r;
	pcap_t *pc;
	int lt, rc;

	pc = pcap_open_offline_with_tstamp_precision(t->input,
						     PCAP_TSTAMP_PRECISION_NANO,
						     perr);
	if (!pc) {
		fprintf(stderr, "tdmstat: %s\n", perr);
		return -1;
	}
	lt = pcap_datalink(pc);
	while (!tdm_stop && (rc = pcap_next_ex(pc, &h, &data)) == 1) {
		int64_t rx = (int64_t)h->ts.tv_sec * (int64_t)TDM_NSEC_PER_SEC +
			     h->ts.tv_usec;	/* ns with PRECISION_NANO */
		enum tdm_frame_res fr = tdm_frame_decode(lt, data, h->caplen, rx,
							 flags, t->ports,
							 t->nports, &r);

		if (fr == TDM_FRAME_LINKTYPE) {
			fprintf(stderr, "tdmstat: %s: link type %s is not supported\n",
				t->input, pcap_datalink_val_to_name(lt));
			pcap_close(pc);
			return -1;
		}
		if (fr == TDM_FRAME_OK || fr == TDM_FRAME_BAD) {
			tdm_stats_push(t->st, &r);
			if (!(++t->records_in & 0xffff))
				tdmstat_progress(t, false);
		}
	}
	if (rc == -1)
		fprintf(stderr, "tdmstat: %s: %s\n", t->input, pcap_geterr(pc));
	pcap_close(pc);
	return rc == -1 ? -1 : 0;
}

static int cmd_analyze(struct tdmstat *t)
{
	uint8_t hdr[TDM_REC_FILE_HDR_LEN];
	char err[512];
	FILE *f;
	int rc;
	bool recfile;

	f = fopen(t->input, "rb");
	if (!f) {
		fprintf(stderr, "tdmstat: %s: %s\n", t->input, strerror(errno));
		return 1;
	}
	recfile = fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr) &&
		  !memcmp(hdr, TDM_REC_FILE_MAGIC, 8);
	if (recfile && tdm_rec_file_check(hdr, sizeof(hdr), err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s: %s\n", t->input, err);
		fclose(f);
		return 1;
	}
	if (tdmstat_load_plans(t, err, sizeof(err)) ||
	    tdmstat_open_outputs(t, err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s\n", err);
		fclose(f);
		return 1;
	}
	if (recfile) {
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		rc = analyze_records(t, f);
		if (rc)
			fprintf(stderr, "tdmstat: %s: %s\n", t->input, strerror(errno));
		fclose(f);
	} else {
		fclose(f);
		rc = analyze_pcap(t);
	}
	if (tdmstat_finish(t))
		rc = -1;
	return rc ? 1 : 0;
}

/* ---- synthetic traffic: bench and synth -------------------------------- */

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
	return add_plan(t, &p, err, errlen);
}

static int cmd_bench(struct tdmstat *t)
{
	struct tdmrx_record *buf;
	const size_t cap = 1 << 16;
	struct synth y;
	uint64_t done = 0;
	int64_t busy = 0, t0;
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
	if (!buf || synth_init(&y, &t->plans[t->nplans - 1])) {
		fprintf(stderr, "tdmstat: out of memory\n");
		return 1;
	}
	/* Prepare a chunk, then time only the engine (and the CSV rows). */
	while (!tdm_stop && done < t->bench_records) {
		n = 0;
		while (n < cap)
			n += synth_window(&y, buf + n);
		t0 = tdm_mono_ns();
		for (i = 0; i < n; i++)
			tdm_stats_push(t->st, &buf[i]);
		busy += tdm_mono_ns() - t0;
		done += n;
		t->records_in += n;
	}
	tdm_stats_finish(t->st);
	if (t->json)
		printf("{\"records\":%llu,\"engine_ns\":%lld,\"records_per_s\":%.0f}\n",
		       (unsigned long long)done, (long long)busy,
		       (double)done / ((double)busy / 1e9));
	else
		printf("tdmstat bench: %llu records (%u senders, %llu windows) in %.3f s of engine time: %.2f M records/s on one core\n",
		       (unsigned long long)done, t->plans[t->nplans - 1].nsenders,
		       (unsigned long long)tdm_stats_run(t->st)->windows,
		       (double)busy / 1e9, (double)done / ((double)busy / 1e3));
	synth_free(&y);
	free(buf);
	if (t->win_csv)
		fclose(t->win_csv);
	t->win_csv = NULL;
	return 0;
}

/* A pcap (name ends in .pcap) of Ethernet/IPv4/UDP frames, or a record file. */
static int cmd_synth(struct tdmstat *t)
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
		pc = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 128,
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
		if (f) {
			fwrite(buf, sizeof(buf[0]), n, f);
		} else {
			for (i = 0; i < n; i++) {
				uint8_t fr[128] = { 0 };
				struct pcap_pkthdr h;
				size_t ulen = buf[i].len + 8;

				fr[12] = 0x08;
				fr[14] = 0x45;
				fr[16] = (ulen + 20) >> 8;
				fr[17] = (ulen + 20) & 0xff;
				fr[22] = 64;
				fr[23] = 17;
				fr[26] = 198; fr[27] = 18; fr[28] = 0;
				fr[29] = 1 + buf[i].sender % 200;
				fr[30] = 198; fr[31] = 19; fr[32] = 0; fr[33] = 1;
				fr[36] = 8081 >> 8; fr[37] = 8081 & 0xff;
				fr[38] = ulen >> 8;
				fr[39] = ulen & 0xff;
				tdm_pkt_encode(fr + 42, &(struct tdm_pkt){
					.sender = buf[i].sender,
					.plan_version = buf[i].plan_version,
					.seq = buf[i].seq,
					.tx_ns = buf[i].tx_ns });
				h.ts.tv_sec = buf[i].rx_ns / (int64_t)TDM_NSEC_PER_SEC;
				h.ts.tv_usec = buf[i].rx_ns % (int64_t)TDM_NSEC_PER_SEC;
				h.caplen = 128;
				h.len = 14 + 20 + ulen;
				pcap_dump((u_char *)pd, &h, fr);
			}
		}
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

/* ---- metrics ------------------------------------------------------------ */

static int cmd_metrics(struct tdmstat *t)
{
	const struct tdm_metric_table *tabs[] = { &tdm_win_table, &tdm_pkt_table,
						  &tdm_sender_table, &tdm_run_table };
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

/* ---- main --------------------------------------------------------------- */

static int parse_s64(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "plan", required_argument, NULL, 'p' },
		{ "tdmd", optional_argument, NULL, 'T' },
		{ "base-time", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "packets", no_argument, NULL, 'P' },
		{ "port", required_argument, NULL, 'u' },
		{ "grace", required_argument, NULL, 'g' },
		{ "rt-offset", required_argument, NULL, 1 },
		{ "hw-offset", required_argument, NULL, 2 },
		{ "pcap-ts", required_argument, NULL, 3 },
		{ "assign", required_argument, NULL, 'A' },
		{ "interface", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "senders", required_argument, NULL, 'e' },
		{ "ring", required_argument, NULL, 'r' },
		{ "write", required_argument, NULL, 'w' },
		{ "records", required_argument, NULL, 'n' },
		{ "nsenders", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct tdmstat t = { .prefix = "tdmstat", .pcap_ts = "sw",
			     .bench_senders = 3 };
	bool prefix_set = false;
	char err[256];
	uint64_t v;
	int c, rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tdmstat %s\n", TDM_VERSION);
		return 0;
	}
	t.cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "p:T::b:o:Pu:g:A:i:d:e:r:w:n:S:jqh",
				lo, NULL)) != -1) {
		err[0] = '\0';
		switch (c) {
		case 'p':
			if (t.nplan_files == TDMSTAT_MAX_PLANS)
				goto bad;
			t.plan_files[t.nplan_files++] = optarg;
			break;
		case 'T':
			t.tdmd_socket = optarg ? optarg :
					getenv("TDMD_SOCKET") ? getenv("TDMD_SOCKET") :
					DEFAULT_SOCKET;
			break;
		case 'b':
			if (parse_s64(optarg, &t.base_time))
				goto bad;
			break;
		case 'o':
			t.prefix = strcmp(optarg, "-") ? optarg : NULL;
			prefix_set = true;
			break;
		case 'P':
			t.packets = true;
			break;
		case 'u':
			if (tdm_parse_u64(optarg, 65535, &v, err, sizeof(err)) || !v ||
			    t.nports == TDMSTAT_MAX_PORTS)
				goto bad;
			t.ports[t.nports++] = v;
			break;
		case 'g':
			if (tdm_parse_time(optarg, &t.grace_ns, err, sizeof(err)))
				goto bad;
			break;
		case 1:
			if (parse_s64(optarg, &t.rt_offset))
				goto bad;
			t.rt_offset_set = true;
			break;
		case 2:
			if (parse_s64(optarg, &t.hw_offset))
				goto bad;
			break;
		case 3:
			if (strcmp(optarg, "sw") && strcmp(optarg, "hw"))
				goto bad;
			t.pcap_ts = optarg;
			break;
		case 'A':
			if (!strcmp(optarg, "rx")) {
				t.assign_tx = false;
			} else if (!strcmp(optarg, "tx")) {
				t.assign_tx = true;
			} else {
				snprintf(err, sizeof(err), "use rx or tx");
				goto bad;
			}
			break;
		case 'i':
			t.ifname = optarg;
			break;
		case 'd':
			if (tdm_parse_time(optarg, &t.duration_ns, err, sizeof(err)))
				goto bad;
			break;
		case 'e':
			if (tdm_parse_u64(optarg, TDM_MAX_SENDERS, &v, err, sizeof(err)))
				goto bad;
			t.expect_senders = v;
			break;
		case 'r':
			if (tdm_parse_u64(optarg, TDMRX_MAX_RING, &v, err, sizeof(err)))
				goto bad;
			t.ring_records = v;
			break;
		case 'w':
			t.record_file = optarg;
			break;
		case 'n':
			if (tdm_parse_u64(optarg, UINT64_MAX, &t.bench_records, err,
					  sizeof(err)))
				goto bad;
			break;
		case 'S':
			if (tdm_parse_u64(optarg, 1000, &v, err, sizeof(err)) || !v)
				goto bad;
			t.bench_senders = v;
			break;
		case 'j':
			t.json = true;
			break;
		case 'q':
			t.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	t.progress = !t.quiet && isatty(STDERR_FILENO);
	tdm_stop_on_signals();

	if (!strcmp(t.cmd, "metrics"))
		rc = cmd_metrics(&t);
	else if (!strcmp(t.cmd, "analyze")) {
		if (optind != argc - 1) {
			usage(stderr);
			return 2;
		}
		t.input = argv[optind];
		rc = cmd_analyze(&t);
	} else if (!strcmp(t.cmd, "bench")) {
		if (!prefix_set)
			t.prefix = NULL;
		t.progress = false;
		rc = cmd_bench(&t);
	} else if (!strcmp(t.cmd, "synth")) {
		if (!prefix_set)
			t.prefix = NULL;
		rc = cmd_synth(&t);
	} else if (!strcmp(t.cmd, "capture")) {
#ifdef TDMSTAT_CAPTURE
		rc = tdmstat_capture(&t);
#else
		fprintf(stderr, "tdmstat: built without the tdmrx ring reader (lib/tdm_rx.c): capture is not available\n");
		rc = 1;
#endif
	} else {
		fprintf(stderr, "tdmstat: unknown command '%s'\n", t.cmd);
		usage(stderr);
		return 2;
	}
	if (t.st)
		tdm_stats_free(t.st);
	while (t.nplans)
		tdm_plan_free(&t.plans[--t.nplans]);
	return rc;
bad:
	fprintf(stderr, "tdmstat: option -%c: %s\n", c < 32 ? '-' : c,
		err[0] ? err : "bad value");
	return 2;
}
