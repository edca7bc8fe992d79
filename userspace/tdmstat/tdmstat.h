/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdmstat's parts, one job each, over the statistics engine (libtdm's
 * tdm_stats):
 *
 *   main.c      options and the command dispatcher
 *   plans.c     the plans: plan files and the local tdmd
 *   output.c    the outputs: CSV files, JSON summary, progress line,
 *               summary table, the metric list
 *   analyze.c   analyze: pcap and record files into the engine
 *   capture.c   capture: tdmrx.ko's or the BPF recorder's rings into the
 *               engine
 *   synth.c     synthetic traffic: bench (the engine's speed) and synth
 *               (pcap or record files for analyze)
 *   combine.c   combine: the receivers' rows of a corner turn, one table
 *
 * The commands are fronts: they load the plans, open the outputs, feed
 * records until they are done or tdm_stop is set (SIGINT, SIGTERM) and
 * finish the outputs; none calls into another command or main.c.
 */
#ifndef TDMSTAT_H
#define TDMSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tdm_orig.h"
#include "tdm_pkt.h"
#include "tdm_plan.h"
#include "tdm_stats.h"

#define TDMSTAT_MAX_PLANS	TDM_PLAN_LIST_MAX
#define TDMSTAT_MAX_PORTS	16

struct tdmstat {
	const char *cmd;		/* "capture", "analyze", "bench", ... */
	const char *prefix;		/* output files PREFIX-windows.csv ... */
	const char *plan_files[TDMSTAT_MAX_PLANS];
	unsigned int nplan_files;
	const char *tdmd_socket;	/* NULL: no tdmd */
	int64_t base_time;		/* for plans without one */
	int64_t rt_offset, hw_offset;
	bool rt_offset_set;
	uint64_t grace_ns;
	bool assign_tx;		/* windows by TX time (-A tx) */
	bool assign_set;		/* -A given */
	bool fmt_original;		/* --format original */
	enum tdm_payload input_fmt;	/* --input-format */
	/* --original T,n,W,D,T0: the original receiver's parameters */
	bool orig_params;
	unsigned int orig_t;
	uint64_t orig_n, orig_w_us, orig_d_us;
	int64_t orig_t0;		/* seconds, CLOCK_REALTIME */
	uint16_t ports[TDMSTAT_MAX_PORTS];
	unsigned int nports;
	bool packets;			/* per-packet CSV */
	bool json;			/* JSON summary on stdout */
	bool quiet, progress;
	const char *ifname;		/* capture */
	uint64_t duration_ns;		/* capture: 0 = until the end markers */
	unsigned int expect_senders;	/* capture: stop after their markers */
	uint32_t ring_records;
	uint64_t reorder_bound_ns;	/* capture: merge bound (10 ms) */
	const char *record_file;	/* capture -w */
	const char *recorder;		/* capture: "kmod", "bpf", "auto" */
	bool shared_ring;		/* capture, bpf: one ring for all CPUs */
	const char *input;		/* analyze */
	const char *pcap_ts;		/* analyze: sw (default) or hw */
	uint64_t bench_records;
	unsigned int bench_senders;
	/* --receiver: this receiver of plans with many; it judges its own
	 * windows (each plan projected by tdm_plan_for_dest).
	 */
	const char *receiver;
	struct tdm_plan rx_plan;	/* the last such plan, whole */
	int rx_index;			/* the receiver in it, -1: none */

	/* run state */
	struct tdm_stats *st;
	FILE *win_csv, *pkt_csv;
	struct tdm_orig orig;		/* --format original */
	bool orig_shape_set;
	uint64_t frames;		/* analyze: frames read */
	uint64_t fragments;		/* analyze: IP fragments (original) */
	uint64_t bad_4096;		/* 4096-byte payloads without TDMG */
	uint64_t records_in;		/* handed to the engine */
	int64_t t0_ns, t_last_progress;	/* CLOCK_MONOTONIC */
	uint64_t last_records;		/* at the last progress line */
	double elapsed_s;
	struct tdm_plan plans[TDMSTAT_MAX_PLANS];
	unsigned int nplans;
};

/* plans.c */
int tdmstat_add_plan(struct tdmstat *t, struct tdm_plan *p, char *err,
		     size_t errlen);
int tdmstat_load_plans(struct tdmstat *t, char *err, size_t errlen);
int tdmstat_poll_tdmd(struct tdmstat *t, char *err, size_t errlen);
void tdmstat_free_plans(struct tdmstat *t);

/* output.c */
int tdmstat_open_outputs(struct tdmstat *t, char *err, size_t errlen);
void tdmstat_progress(struct tdmstat *t, bool force);
int tdmstat_finish(struct tdmstat *t);
int tdmstat_metrics(const struct tdmstat *t);

/* The commands: exit statuses. */
int tdmstat_analyze(struct tdmstat *t);
int tdmstat_capture(struct tdmstat *t);		/* capture.c */
int tdmstat_bench(struct tdmstat *t);		/* synth.c */
int tdmstat_synth(struct tdmstat *t);		/* synth.c */
int tdmstat_combine(struct tdmstat *t, int argc, char **argv); /* combine.c */

#endif
