// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat combine: the receivers of a corner turn in one table.  Each
 * receiver's tdmstat (--receiver NAME) judged its own windows and wrote
 * PREFIX-receiver.csv (tdm_receiver_table); combine reads those rows (or
 * a combined file again), one per receiver, refuses a receiver given
 * twice, and prints them with the totals: the table, or JSON with -j, and
 * with -o PREFIX also PREFIX-receivers.csv in the same columns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_cfg.h"
#include "tdm_json.h"
#include "tdm_util.h"
#include "tdmstat.h"

#define MAX_FILE	(1 << 20)
#define MAX_ROWS	4096

struct rows {
	struct tdm_receiver_result r[MAX_ROWS];
	unsigned int n;
	char *text[MAX_ROWS];	/* the files, which the rows point into */
	unsigned int ntext;
};

/* The rows of one file: a header line, then rows. */
static int read_rows(struct rows *rs, const char *path, char *err,
		     size_t errlen)
{
	char e[256], *text, *line, *next, *header;
	unsigned int i, lineno = 1;
	size_t len;

	text = tdm_read_file(path, MAX_FILE, &len, e, sizeof(e));
	if (!text)
		return tdm_set_err(err, errlen, "%s", e);
	rs->text[rs->ntext++] = text;
	header = text;
	next = strchr(text, '\n');
	if (!next)
		return tdm_set_err(err, errlen, "%s: no rows", path);
	*next++ = '\0';
	for (line = next; line && *line; line = next, lineno++) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (rs->n == MAX_ROWS)
			return tdm_set_err(err, errlen, "more than %d receivers",
					   MAX_ROWS);
		if (tdm_metrics_csv_read(&tdm_receiver_table, header, line,
					 &rs->r[rs->n], e, sizeof(e)))
			return tdm_set_err(err, errlen, "%s:%u: %s", path,
					   lineno + 1, e);
		for (i = 0; i < rs->n; i++)
			if (!strcmp(rs->r[i].receiver, rs->r[rs->n].receiver))
				return tdm_set_err(err, errlen,
						   "%s:%u: receiver '%s' again",
						   path, lineno + 1,
						   rs->r[i].receiver);
		rs->n++;
	}
	if (lineno == 1)
		return tdm_set_err(err, errlen, "%s: no rows", path);
	return 0;
}

/* Totals over the receivers: a sum, not available if any row's is not. */
struct totals {
	uint64_t sent, received, lost, lost_unknown, overlap_windows,
		 rx_outside, bytes;
	unsigned int least, most;	/* rows of the least, most payload */
};

static void add(uint64_t *sum, uint64_t v)
{
	if (*sum == TDM_NA_U64 || v == TDM_NA_U64)
		*sum = TDM_NA_U64;
	else
		*sum += v;
}

static struct totals total(const struct rows *rs)
{
	struct totals t = { 0 };
	unsigned int i;

	for (i = 0; i < rs->n; i++) {
		const struct tdm_receiver_result *r = &rs->r[i];

		add(&t.sent, r->sent);
		add(&t.received, r->received);
		add(&t.lost, r->lost);
		add(&t.lost_unknown, r->lost_unknown);
		add(&t.overlap_windows, r->overlap_windows);
		add(&t.rx_outside, r->rx_outside);
		add(&t.bytes, r->bytes);
		/* Not available sorts below everything: it is the worst. */
		if (r->payload_ppm + 1 < rs->r[t.least].payload_ppm + 1)
			t.least = i;
		if (r->payload_ppm + 1 > rs->r[t.most].payload_ppm + 1)
			t.most = i;
	}
	return t;
}

#define U(v)	tdm_fmt_u64_na((v), (char[24]){ 0 }, 24)
#define PCT(v)	tdm_fmt_ppm((v), (char[32]){ 0 }, 32)

static void print_table(const struct rows *rs, const struct totals *t)
{
	unsigned int i;

	printf("%-12s %-16s %7s %10s %10s %8s %8s %8s %10s %10s\n",
	       "RECEIVER", "ADDRESS", "SENDERS", "SENT", "RECEIVED", "LOST",
	       "OVERLAPS", "RX_OUT", "PLANNED", "PAYLOAD");
	for (i = 0; i < rs->n; i++) {
		const struct tdm_receiver_result *r = &rs->r[i];

		printf("%-12.12s %-16.40s %7s %10s %10s %8s %8s %8s %10s %10s\n",
		       r->receiver, r->address, U(r->senders), U(r->sent),
		       U(r->received), U(r->lost), U(r->overlap_windows),
		       U(r->rx_outside), PCT(r->planned_ppm),
		       PCT(r->payload_ppm));
	}
	printf("%-12s %-16s %7s %10s %10s %8s %8s %8s\n", "all", "", "",
	       U(t->sent), U(t->received), U(t->lost), U(t->overlap_windows),
	       U(t->rx_outside));
	printf("%u receivers; payload utilization of their links from %s (%s) to %s (%s)",
	       rs->n, PCT(rs->r[t->least].payload_ppm),
	       rs->r[t->least].receiver, PCT(rs->r[t->most].payload_ppm),
	       rs->r[t->most].receiver);
	if (t->lost_unknown && t->lost_unknown != TDM_NA_U64)
		printf("; loss unknown for %s sender(s) without an end marker",
		       U(t->lost_unknown));
	printf("\n");
}

static int print_json(const struct rows *rs, const struct totals *t)
{
	struct tdm_json j;
	unsigned int i;
	const char *s;

	tdm_json_init(&j);
	tdm_json_obj_open(&j, NULL);
	tdm_json_str(&j, "tool", "tdmstat");
	tdm_json_str(&j, "command", "combine");
	tdm_json_arr_open(&j, "receivers");
	for (i = 0; i < rs->n; i++)
		tdm_metrics_json(&j, NULL, &tdm_receiver_table, &rs->r[i]);
	tdm_json_arr_close(&j);
	tdm_json_obj_open(&j, "all");
#define TOTAL(f) do { \
		if (t->f == TDM_NA_U64) \
			tdm_json_null(&j, #f); \
		else \
			tdm_json_u64(&j, #f, t->f); \
	} while (0)
	TOTAL(sent);
	TOTAL(received);
	TOTAL(lost);
	TOTAL(lost_unknown);
	TOTAL(overlap_windows);
	TOTAL(rx_outside);
	TOTAL(bytes);
#undef TOTAL
	tdm_json_str(&j, "least_payload", rs->r[t->least].receiver);
	tdm_json_str(&j, "most_payload", rs->r[t->most].receiver);
	tdm_json_obj_close(&j);
	tdm_json_obj_close(&j);
	s = tdm_json_finish(&j);
	if (s)
		printf("%s\n", s);
	tdm_json_free(&j);
	return s ? 0 : -1;
}

static int write_csv(const struct rows *rs, const char *prefix)
{
	char path[4096];
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s-receivers.csv", prefix);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "tdmstat: %s: %s\n", path, strerror(errno));
		return -1;
	}
	tdm_metrics_csv_header(f, &tdm_receiver_table);
	for (i = 0; i < rs->n; i++)
		tdm_metrics_csv_row(f, &tdm_receiver_table, &rs->r[i]);
	if (fclose(f)) {
		fprintf(stderr, "tdmstat: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int tdmstat_combine(struct tdmstat *t, int argc, char **argv)
{
	struct rows *rs = calloc(1, sizeof(*rs));
	struct totals tot;
	char err[512];
	int i, rc = 1;

	if (!rs) {
		fprintf(stderr, "tdmstat: out of memory\n");
		return 1;
	}
	if (argc > MAX_ROWS) {
		fprintf(stderr, "tdmstat: combine: more than %d files\n", MAX_ROWS);
		rc = 2;
		goto out;
	}
	if (argc < 1) {
		fprintf(stderr, "tdmstat: combine: give the receivers' PREFIX-receiver.csv files\n");
		rc = 2;
		goto out;
	}
	for (i = 0; i < argc; i++) {
		if (read_rows(rs, argv[i], err, sizeof(err))) {
			fprintf(stderr, "tdmstat: combine: %s\n", err);
			goto out;
		}
	}
	tot = total(rs);
	rc = 0;
	if (t->prefix && write_csv(rs, t->prefix))
		rc = 1;
	if (t->json) {
		if (print_json(rs, &tot))
			rc = 1;
	} else if (!t->quiet) {
		print_table(rs, &tot);
	}
out:
	while (rs->ntext)
		free(rs->text[--rs->ntext]);
	free(rs);
	return rc;
}
