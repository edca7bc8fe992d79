/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The original tool's output files (ska-sa/dc_sand udp_receive.c), written
 * from the statistics engine's results (tdm_stats.h) so that the MATLAB
 * scripts and pipelines built for them read ours:
 *
 *   per packet:  BASE.csv  "i,client,window,clientPacketIndex,tx_s,rx_s"
 *                BASE.txt  "Packet i Client c Window w Client Packet ID p
 *                           TX ..s, RX ..s, Diff RX/TX ..s, Diff TX/TX ..s,
 *                           Diff RX/RX ..s" lines, then a summary
 *   per window:  BASE_N<n>_W<us>_D<us>_T<t>.csv  17 columns, ", "
 *                BASE_N<n>_W<us>_D<us>_T<t>.txt  the same, labelled
 *
 * No header row; times in seconds with 6 decimals (%f), epoch seconds of
 * CLOCK_REALTIME for absolute times.  The values are our fixed metrics
 * (Documentation/tdmstat.rst, "The original formats", says what differs).
 *
 * The original's names carry one (T, W, D): T clients in round robin, each
 * window W us long, every gap D us.  tdm_orig_shape() says whether a plan
 * is of that form.
 */
#ifndef TDM_ORIG_H
#define TDM_ORIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tdm_plan.h"
#include "tdm_stats.h"

/* A plan as the original's parameters. */
struct tdm_orig_shape {
	unsigned int clients;		/* T */
	uint64_t window_us, dead_us;	/* W, D */
	uint64_t phase_ns;		/* offset of the first window in the cycle */
};

/*
 * 0 if the plan is the original's timeline: T senders, windows of one
 * length W taking turns in sender order 0, 1, ..., T-1, 0, 1, ... round the
 * cycle, every gap (the one round the cycle too) the same D, W and D whole
 * microseconds, on CLOCK_TAI or CLOCK_REALTIME.  Else -1 with err saying
 * which window or value breaks it.
 */
int tdm_orig_shape(const struct tdm_plan *p, struct tdm_orig_shape *s,
		   char *err, size_t errlen);
/* Both plans have the same T, W and D (else -1 with err). */
int tdm_orig_same_shape(const struct tdm_orig_shape *a,
			const struct tdm_orig_shape *b, char *err,
			size_t errlen);

struct tdm_orig {
	/* Set by the caller; a NULL file is not written. */
	FILE *pkt_csv, *pkt_txt, *win_csv, *win_txt;
	struct tdm_orig_shape shape;
	int64_t epoch_off_ns;	/* plan clock + this = CLOCK_REALTIME */
	uint64_t windows_per_client;	/* n; 0: not known */

	/* per-packet state */
	uint64_t npkt;
	int64_t prev_tx, prev_rx, first_rx, last_rx;
	int64_t sum_trx, sum_ttx, sum_rrx;
	int64_t min_trx, max_trx, min_ttx, max_ttx, min_rrx, max_rrx;
	uint64_t bytes;
	uint64_t *last_seq;		/* per client, +1; 0 = none */
	unsigned int nlast;
	bool out_of_order;

	/* per-window state */
	bool have_row;
	uint32_t row_version;
	uint64_t next_i;	/* the row after the last one written */
	uint64_t top_window;	/* highest client window + 1 written */
	uint64_t rows, empty_rows, correction_rows;
};

/* One packet (on_packet). */
void tdm_orig_packet(struct tdm_orig *o, const struct tdm_pkt_result *p);
/* The per-packet text file's summary: received and sent (TDM_NA_U64:
 * unknown) of the run.
 */
void tdm_orig_packet_summary(struct tdm_orig *o, uint64_t received,
			     uint64_t sent);
/* One window row (on_window); empty windows before it in the same plan
 * get rows of their own, and a correction row (late > 0) a row of its own.
 */
void tdm_orig_window(struct tdm_orig *o, const struct tdm_win_result *w);
/* After the last window: the empty windows up to n * T if n is known. */
void tdm_orig_windows_done(struct tdm_orig *o);
/* n of the file name: windows_per_client, else the windows seen. */
uint64_t tdm_orig_n(const struct tdm_orig *o);
/* "BASE_N<n>_W<w>_D<d>_T<t>" into buf; -1 if it does not fit. */
int tdm_orig_window_base(const struct tdm_orig *o, const char *base,
			 char *buf, size_t len);
void tdm_orig_free(struct tdm_orig *o);

/* ns as seconds with 6 decimals, rounded to the nearest us ("%f" of the
 * original, exact); "nan" for TDM_NA_S64.
 */
void tdm_orig_secs(char *buf, size_t len, int64_t ns);

#endif
