/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The statistics engine of tdmstat: fed with struct tdmrx_record values in
 * arrival order (from tdmrx.ko's rings, or converted from a pcap file by
 * tdm_frame_decode), it assigns every data packet to a window of its sender
 * in the plan in force and computes per-packet, per-window, per-sender and
 * per-run statistics.
 *
 * Window assignment.  A record names its plan by version (an unknown
 * version or 0 means the plan added last).  Its sender's windows repeat
 * every cycle_ns from the plan's base_time; the packet belongs to the
 * window of its sender that contains tx_ns, the window [start, end) where
 * start = base_time + cycle * cycle_ns + offset.  A packet whose TX time is
 * in none of its sender's windows is "tx_outside" and goes to the nearest
 * of them (an early packet to the next window, a late one to the window it
 * overran); "rx_outside" is the same test for its RX time.  With
 * cfg.assign_rx the RX time picks the window instead (and closes windows):
 * right for gated senders, whose application stamps a packet when it hands
 * it to the qdisc, which may hold it until the next window opens.
 *
 * Windows are closed, and handed to on_window in order of start, once the
 * TX times of the traffic (or tdm_stats_advance) have moved grace_ns past
 * their end, so memory stays bounded on runs of any length.  Records should
 * come in receive order (tdm_merge.h puts tdmrx's rings back into it).
 *
 * Late is not lost.  A packet of a window whose row has been written is
 * received all the same and counted "late" (per sender and per run).  Its
 * window gets a correction row: the same window fields, `late` and
 * `packets` both the number of such packets, bytes, duplicates, reordered,
 * tx_outside and rx_outside, every other metric missing; regular rows have
 * late 0.  Correction rows are written at tdm_stats_finish (and early, in
 * batches, if very many windows need one), in order of window start, so the
 * packets of all rows add up to the run's received.  "lost" is sent -
 * received against the sender's end marker and nothing else: missing
 * without one.
 *
 * Every metric is named once, in the tables below (an X-macro: name, kind,
 * unit, description).  The names are the CSV header columns, the JSON keys,
 * the rows of `tdmstat metrics`, the documentation's tables and what
 * tdmplot reads.  Missing values (no previous window, one packet, ...) are
 * TDM_NA_U64 / TDM_NA_S64: an empty CSV field, JSON null.
 */
#ifndef TDM_STATS_H
#define TDM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../kmod/uapi/linux/tdmrx.h"
#include "tdm_json.h"
#include "tdm_plan.h"

#define TDM_NA_U64	UINT64_MAX
#define TDM_NA_S64	INT64_MIN

/* X(name, kind, unit, description); kind: U (u64), S (s64), T (string). */
#define TDM_WIN_METRICS(X) \
	X(window, U, "", "window index in the plan: cycle * windows per cycle + slot (the original tool's i)") \
	X(sender, U, "", "sender id: index in the plan (the original's client)") \
	X(name, T, "", "sender name in the plan") \
	X(sender_window, U, "", "the sender's own window number: cycle * its windows per cycle + k (the original's window)") \
	X(plan_version, U, "", "plan of the window") \
	X(cycle, S, "", "cycle number since the plan's base time") \
	X(slot, U, "", "position of the window in the cycle, 0-based, in offset order over all senders") \
	X(win_start_ns, S, "ns", "planned window start, plan clock (TAI)") \
	X(win_end_ns, S, "ns", "planned window end") \
	X(packets, U, "", "data packets received, duplicates not counted") \
	X(bytes, U, "B", "UDP payload bytes of those packets") \
	X(late, U, "", "packets that arrived after the window's row was written: 0 in a regular row; a correction row (written at the end) carries them, packets = late") \
	X(missing, U, "", "sequence numbers lost between the window's first and last packet (fixed: a gap of g counts g, reordering counts nothing)") \
	X(missing_before, U, "", "sequence numbers lost between the sender's previous window's last packet and this window's first") \
	X(duplicates, U, "", "packets received again") \
	X(reordered, U, "", "packets with a lower sequence number than one received before them") \
	X(tx_outside, U, "", "packets whose TX time is in none of the sender's windows") \
	X(rx_outside, U, "", "packets whose RX time is in none of the sender's windows") \
	X(rx_runtime_ns, S, "ns", "end_rx_ns - start_rx_ns") \
	X(tx_runtime_ns, S, "ns", "end_tx_ns - start_tx_ns") \
	X(rate_bps, U, "bit/s", "payload bit rate: bytes of all packets but the last sent, times 8, over tx_runtime_ns") \
	X(transit_min_ns, S, "ns", "smallest RX - TX") \
	X(transit_avg_ns, S, "ns", "mean RX - TX") \
	X(transit_max_ns, S, "ns", "largest RX - TX") \
	X(jitter_ns, S, "ns", "RFC 3550 interarrival jitter of the sender after the window's last packet") \
	X(overlap_front, U, "", "packets of this window that arrived before the last packet of an earlier window") \
	X(overlap_back, U, "", "packets of this window that arrived after the first packet of a later window") \
	X(start_tx_ns, S, "ns", "first TX time") \
	X(end_tx_ns, S, "ns", "last TX time") \
	X(start_rx_ns, S, "ns", "first arrival") \
	X(end_rx_ns, S, "ns", "last arrival") \
	X(first_tx_offset_ns, S, "ns", "start_tx_ns - win_start_ns") \
	X(last_tx_offset_ns, S, "ns", "end_tx_ns - win_end_ns (positive: sent after the window closed)") \
	X(first_rx_offset_ns, S, "ns", "start_rx_ns - win_start_ns") \
	X(last_rx_offset_ns, S, "ns", "end_rx_ns - win_end_ns") \
	X(dead_rx_ns, S, "ns", "observed dead time: start_rx_ns - end_rx_ns of the previous window (any sender); negative when they overlap") \
	X(ring_drops, U, "", "records the kernel rings dropped while the window was open (not network loss)") \
	X(ts_source, T, "", "RX timestamp source: hw, sw, now (at the hook), or mixed")

#define TDM_PKT_METRICS(X) \
	X(arrival, U, "", "arrival index of the data packet, 0-based") \
	X(sender, U, "", "sender id") \
	X(window, U, "", "window index in the plan (as in the window table)") \
	X(sender_window, U, "", "the sender's own window number") \
	X(plan_version, U, "", "plan of the window") \
	X(seq, U, "", "sequence number") \
	X(tx_ns, S, "ns", "TX time (TAI)") \
	X(rx_ns, S, "ns", "RX time, on the TX clock (TAI)") \
	X(transit_ns, S, "ns", "rx_ns - tx_ns") \
	X(tx_offset_ns, S, "ns", "tx_ns - window start") \
	X(rx_offset_ns, S, "ns", "rx_ns - window start") \
	X(len, U, "B", "UDP payload bytes") \
	X(duplicate, U, "", "1 if received before") \
	X(reordered, U, "", "1 if a higher sequence number arrived before it") \
	X(tx_outside, U, "", "1 if the TX time is in none of the sender's windows") \
	X(rx_outside, U, "", "1 if the RX time is in none of the sender's windows") \
	X(late, U, "", "1 if its window's row was written before it arrived (its window's correction row counts it)") \
	X(ts_source, T, "", "RX timestamp source")

#define TDM_SENDER_METRICS(X) \
	X(sender, U, "", "sender id") \
	X(name, T, "", "sender name in the plan") \
	X(sent, U, "", "data packets sent, from the sender's end marker (empty without one)") \
	X(received, U, "", "data packets received, duplicates not counted") \
	X(lost, U, "", "sent - received, late packets received too; empty without an end marker (unknown)") \
	X(lost_tail, U, "", "sent - (highest sequence number + 1): lost after the last packet received") \
	X(duplicates, U, "", "packets received again") \
	X(reordered, U, "", "packets that arrived after a higher sequence number") \
	X(tx_outside, U, "", "packets sent outside the sender's windows") \
	X(rx_outside, U, "", "packets received outside the sender's windows") \
	X(late, U, "", "packets received after their window's row was written (received, in a correction row)") \
	X(windows, U, "", "windows with at least one packet") \
	X(transit_min_ns, S, "ns", "smallest RX - TX") \
	X(transit_avg_ns, S, "ns", "mean RX - TX") \
	X(transit_max_ns, S, "ns", "largest RX - TX") \
	X(jitter_ns, S, "ns", "RFC 3550 interarrival jitter at the end") \
	X(start_rx_ns, S, "ns", "first arrival") \
	X(end_rx_ns, S, "ns", "last arrival") \
	X(end_markers, U, "", "end markers received") \
	X(bytes, U, "B", "UDP payload bytes of the packets received, duplicates not counted")

#define TDM_RUN_METRICS(X) \
	X(records, U, "", "records read (data, end markers, bad ones)") \
	X(data_packets, U, "", "data packet records, duplicates included") \
	X(end_markers, U, "", "end marker records") \
	X(bad_records, U, "", "records without a valid header (truncated, wrong magic or version), or with RX - TX beyond 69 s") \
	X(unknown_sender, U, "", "data records whose sender is not in their plan") \
	X(unknown_plan, U, "", "records naming a plan version we do not have (the latest plan was used)") \
	X(late, U, "", "packets received after their window's row was written: received, never lost") \
	X(behind, U, "", "records that reached the reader behind the merge frontier (stamped more than the reorder bound before their hook): out of receive order") \
	X(gso_records, U, "", "records of GRO/GSO skbs: one stamp for several datagrams") \
	X(ring_drops, U, "", "records dropped by the kernel rings: counted apart from network loss") \
	X(windows, U, "", "window rows written, correction rows not counted") \
	X(correction_rows, U, "", "correction rows written (late packets of windows already written)") \
	X(senders, U, "", "senders that sent data") \
	X(sent, U, "", "data packets sent, over the senders with an end marker (empty if none has one)") \
	X(received, U, "", "data packets received, duplicates not counted") \
	X(lost, U, "", "sum of the senders' lost, over the senders with an end marker (empty if none has one)") \
	X(lost_unknown, U, "", "senders with data but no end marker: their loss is unknown") \
	X(duplicates, U, "", "duplicates") \
	X(reordered, U, "", "reordered packets") \
	X(tx_outside, U, "", "packets sent outside their sender's windows") \
	X(rx_outside, U, "", "packets received outside their sender's windows") \
	X(overlap_windows, U, "", "windows with overlap_front or overlap_back") \
	X(hw_stamps, U, "", "records with a NIC timestamp") \
	X(sw_stamps, U, "", "records with a software (skb) timestamp") \
	X(now_stamps, U, "", "records stamped at the hook (no skb timestamp)") \
	X(ts_source, T, "", "hw, sw, now, mixed or none") \
	X(start_rx_ns, S, "ns", "first arrival") \
	X(end_rx_ns, S, "ns", "last arrival") \
	X(bytes, U, "B", "UDP payload bytes of the packets received, duplicates not counted")

/*
 * One receiver of a plan with many (tdm_plan.h's [receiver]s): what its
 * tdmstat judged of its own windows, one row per receiver, the rows of
 * all receivers combined by tdmstat combine.
 */
#define TDM_RECEIVER_METRICS(X) \
	X(receiver, T, "", "receiver name in the plan") \
	X(address, T, "", "its address in the plan") \
	X(senders_planned, U, "", "senders with windows to it") \
	X(open_ns, U, "ns", "time per cycle its windows are open, all senders") \
	X(cycle_ns, U, "ns", "the plan's cycle") \
	X(planned_ppm, U, "ppm", "open_ns / cycle_ns, in millionths, rounded down: the plan's utilization of its link") \
	X(link_speed, U, "Mbit/s", "the plan's link_speed (empty if the plan leaves it to the device)") \
	X(senders, U, "", "senders that sent data to it") \
	X(sent, U, "", "data packets sent to it, over the senders with an end marker") \
	X(received, U, "", "data packets received, duplicates not counted") \
	X(lost, U, "", "sent - received over the senders with an end marker") \
	X(lost_unknown, U, "", "senders with data but no end marker") \
	X(overlap_windows, U, "", "its windows whose packets arrived interleaved with another window's: two senders at once") \
	X(rx_outside, U, "", "packets received outside their sender's windows to it") \
	X(bytes, U, "B", "UDP payload bytes received") \
	X(start_rx_ns, S, "ns", "first arrival") \
	X(end_rx_ns, S, "ns", "last arrival") \
	X(payload_ppm, U, "ppm", "bytes * 8 over link_speed times (end_rx_ns - start_rx_ns), in millionths, rounded down: the link's utilization by payload (empty without link_speed or with fewer than two arrivals)")

#define TDM_KIND_U	uint64_t
#define TDM_KIND_S	int64_t
#define TDM_KIND_T	const char *
#define TDM_FIELD(name, kind, unit, desc)	TDM_KIND_##kind name;

struct tdm_win_result { TDM_WIN_METRICS(TDM_FIELD) };
struct tdm_pkt_result { TDM_PKT_METRICS(TDM_FIELD) };
struct tdm_sender_result { TDM_SENDER_METRICS(TDM_FIELD) };
struct tdm_run_result { TDM_RUN_METRICS(TDM_FIELD) };
struct tdm_receiver_result { TDM_RECEIVER_METRICS(TDM_FIELD) };

enum tdm_metric_kind { TDM_MK_U, TDM_MK_S, TDM_MK_T };

struct tdm_metric {
	const char *name;
	enum tdm_metric_kind kind;
	size_t off;		/* in the result struct */
	const char *unit;
	const char *desc;
};

struct tdm_metric_table {
	const char *name;	/* "window", "packet", "sender", "run" */
	const struct tdm_metric *m;
	unsigned int n;
};

extern const struct tdm_metric_table tdm_win_table, tdm_pkt_table,
	tdm_sender_table, tdm_run_table, tdm_receiver_table;

/* One table as CSV: a header row of the names; a row of one result. */
void tdm_metrics_csv_header(FILE *f, const struct tdm_metric_table *t);
void tdm_metrics_csv_row(FILE *f, const struct tdm_metric_table *t,
			 const void *res);
/* One result as a JSON object (key NULL inside arrays). */
void tdm_metrics_json(struct tdm_json *j, const char *key,
		      const struct tdm_metric_table *t, const void *res);
/*
 * The reverse of tdm_metrics_csv_header and _row: a row of @t's CSV
 * under @header (the same names in the same order) into @res; an empty
 * field is not available (TDM_NA_*).  Text fields point into @row, which
 * is split in place (no quoted fields: names and addresses need none).
 * 0, or -1 with err.
 */
int tdm_metrics_csv_read(const struct tdm_metric_table *t, const char *header,
			 char *row, void *res, char *err, size_t errlen);

/*
 * Metrics for people: a u64 as digits, or "-" when it is not available
 * (TDM_NA_U64); millionths as a percentage with all four decimals
 * ("90.0000%"), exact, or "-".  Both return buf.
 */
const char *tdm_fmt_u64_na(uint64_t v, char *buf, size_t len);
const char *tdm_fmt_ppm(uint64_t ppm, char *buf, size_t len);

struct tdm_plan;
/*
 * Receiver @r of plan @full: its planned share and what the run of the
 * tdmstat judging its windows found (@run after tdm_stats_finish).
 * Text fields point into @full.
 */
void tdm_receiver_result(struct tdm_receiver_result *out,
			 const struct tdm_plan *full, unsigned int r,
			 const struct tdm_run_result *run);

struct tdm_stats_cfg {
	int64_t grace_ns;	/* 0: 100 ms */
	bool assign_rx;		/* windows by RX time, not TX time */
	/* Added to rx_ns of records stamped in software or at the hook
	 * (CLOCK_REALTIME) to put them on the plan's clock: TAI - UTC.
	 */
	int64_t rt_offset_ns;
	/* Added to rx_ns of hardware-stamped records (PHC - TAI, usually 0). */
	int64_t hw_offset_ns;
	void (*on_window)(void *ctx, const struct tdm_win_result *w);
	void (*on_packet)(void *ctx, const struct tdm_pkt_result *p); /* opt. */
	void *ctx;
};

struct tdm_stats;

struct tdm_stats *tdm_stats_new(const struct tdm_stats_cfg *cfg);
void tdm_stats_free(struct tdm_stats *s);
const struct tdm_stats_cfg *tdm_stats_cfg(const struct tdm_stats *s);

/*
 * Add a plan (copied).  The plan added last is the one in force for
 * records that do not name a known version (adding a plan equal to one
 * already there makes that one the latest again).  At most
 * TDM_STATS_MAX_PLANS are kept: the oldest without open windows goes.
 * 0, or -1 with err.
 */
#define TDM_STATS_MAX_PLANS	64
int tdm_stats_add_plan(struct tdm_stats *s, const struct tdm_plan *p,
		       char *err, size_t errlen);
unsigned int tdm_stats_nplans(const struct tdm_stats *s);

/* One record, in arrival order. */
void tdm_stats_push(struct tdm_stats *s, const struct tdmrx_record *r);
/* The kernel's ring drop counter (a running total). */
void tdm_stats_ring_drops(struct tdm_stats *s, uint64_t total);
/* The merge's count of records behind its frontier (a running total). */
void tdm_stats_behind(struct tdm_stats *s, uint64_t total);
/* A record's receive time on the plan's clock: rx_ns plus hw_offset_ns for
 * a hardware stamp, rt_offset_ns for a software or hook stamp (saturated).
 */
int64_t tdm_stats_rx_time(const struct tdm_stats_cfg *cfg,
			  const struct tdmrx_record *r);
/* Close the windows that ended grace_ns before now (plan clock): for quiet
 * periods, when no records move time on.
 */
void tdm_stats_advance(struct tdm_stats *s, int64_t now);
/* Close every window; the sender and run results are final. */
void tdm_stats_finish(struct tdm_stats *s);

/* Results so far (final after tdm_stats_finish); also computes the sender
 * results below.
 */
const struct tdm_run_result *tdm_stats_run(struct tdm_stats *s);
/* Senders with data or end markers, in id order: index 0..n-1, as of the
 * last tdm_stats_run or tdm_stats_finish.
 */
unsigned int tdm_stats_nsenders(const struct tdm_stats *s);
const struct tdm_sender_result *tdm_stats_sender(struct tdm_stats *s,
						 unsigned int i);
/* Windows open now (for the progress line). */
unsigned int tdm_stats_open_windows(const struct tdm_stats *s);

#endif
