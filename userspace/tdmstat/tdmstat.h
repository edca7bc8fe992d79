/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdmstat internals shared by its commands: options, the outputs (CSV
 * files, JSON summary, progress line, summary table) and the plan sources.
 */
#ifndef TDMSTAT_H
#define TDMSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tdm_plan.h"
#include "tdm_stats.h"

#define TDMSTAT_MAX_PLANS	16
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
	uint16_t ports[TDMSTAT_MAX_PORTS];
	unsigned int nports;
	bool packets;			/* per-packet CSV */
	bool json;			/* JSON summary on stdout */
	bool quiet, progress;
	const char *ifname;		/* capture */
	uint64_t duration_ns;		/* capture: 0 = until the end markers */
	unsigned int expect_senders;	/* capture: stop after their markers */
	uint32_t ring_records;
	const char *record_file;	/* capture -w */
	const char *input;		/* analyze */
	const char *pcap_ts;		/* analyze: sw (default) or hw */
	uint64_t bench_records;
	unsigned int bench_senders;

	/* run state */
	struct tdm_stats *st;
	FILE *win_csv, *pkt_csv;
	uint64_t records_in;		/* handed to the engine */
	int64_t t0_ns, t_last_progress;	/* CLOCK_MONOTONIC */
	double elapsed_s;
	struct tdm_plan plans[TDMSTAT_MAX_PLANS];
	unsigned int nplans;
};

/* main.c */
int tdmstat_open_outputs(struct tdmstat *t, char *err, size_t errlen);
int tdmstat_finish(struct tdmstat *t);
void tdmstat_progress(struct tdmstat *t, bool force);
int tdmstat_load_plans(struct tdmstat *t, char *err, size_t errlen);
int tdmstat_poll_tdmd(struct tdmstat *t, char *err, size_t errlen);

/* capture.c */
int tdmstat_capture(struct tdmstat *t);

#endif
