/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus text exposition format (version 0.0.4), as tdmctl
 * metrics prints it: each family once with its # HELP and # TYPE, then
 * its samples; label values escaped (backslash, double quote, newline);
 * base units (seconds, bytes) and _total for counters, as Prometheus'
 * naming conventions ask.  promtool check metrics accepts what it writes
 * (userspace/tests/tdmctl_metrics.sh).
 *
 * The tdmwin qdisc's counters are one table, TDM_QDISC_PROM_METRICS, so
 * that every counter of the dump has one name wherever it is exported.
 */
#ifndef TDM_PROM_H
#define TDM_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tdm_qdisc.h"

struct tdm_prom {
	FILE *f;
};

void tdm_prom_init(struct tdm_prom *p, FILE *f);
/* # HELP and # TYPE ("counter", "gauge", "summary", "untyped") of name. */
void tdm_prom_family(struct tdm_prom *p, const char *name, const char *type,
		     const char *help);
/*
 * One sample of name (the family's, or its _sum/_count), with labels as
 * NULL-terminated pairs of name and value (labels may be NULL).
 */
void tdm_prom_u64(struct tdm_prom *p, const char *name,
		  const char *const *labels, uint64_t v);
void tdm_prom_s64(struct tdm_prom *p, const char *name,
		  const char *const *labels, int64_t v);
/* A time in ns, written in seconds. */
void tdm_prom_ns(struct tdm_prom *p, const char *name,
		 const char *const *labels, int64_t ns);
/* A family of one sample. */
void tdm_prom_one(struct tdm_prom *p, const char *name, const char *type,
		  const char *help, const char *const *labels, uint64_t v);
void tdm_prom_one_ns(struct tdm_prom *p, const char *name, const char *type,
		     const char *help, const char *const *labels, int64_t ns);

/*
 * X(field, name, type, ns, help): a member of struct tc_tdmwin_xstats,
 * its metric name, "counter" or "gauge", true if in ns (written in
 * seconds), and its help.
 */
#define TDM_QDISC_PROM_METRICS(X) \
	X(windows_opened, "tdmwin_windows_opened_total", "counter", false, "windows in which gated traffic left") \
	X(window_packets, "tdmwin_window_packets_total", "counter", false, "gated packets sent inside windows") \
	X(window_bytes, "tdmwin_window_bytes_total", "counter", false, "bytes of gated packets sent inside windows") \
	X(bypass_packets, "tdmwin_bypass_packets_total", "counter", false, "packets that skipped the gate (bypass class)") \
	X(bypass_bytes, "tdmwin_bypass_bytes_total", "counter", false, "bytes of packets that skipped the gate") \
	X(guard_deferrals, "tdmwin_guard_deferrals_total", "counter", false, "head frames that did not fit before a window's close") \
	X(wire_deferrals, "tdmwin_wire_deferrals_total", "counter", false, "frames that waited for the wire") \
	X(oversize_drops, "tdmwin_oversize_drops_total", "counter", false, "frames that fit in no window of the plan") \
	X(hold_drops, "tdmwin_hold_drops_total", "counter", false, "packets dropped at the limit while the gate held") \
	X(txtime_drops, "tdmwin_txtime_drops_total", "counter", false, "packets the etf child dropped (launch time expired)") \
	X(plan_switches, "tdmwin_plan_switches_total", "counter", false, "pending plans that took over") \
	X(lease_expiries, "tdmwin_lease_expiries_total", "counter", false, "times the lease ran out") \
	X(unconfirmed_holds, "tdmwin_unconfirmed_holds_total", "counter", false, "unconfirmed plans that reached their base time") \
	X(pending_aborts, "tdmwin_pending_aborts_total", "counter", false, "pending plans aborted") \
	X(open_latency_max, "tdmwin_open_latency_max_seconds", "gauge", true, "longest time from a window's start to its first frame on the wire") \
	X(wire_backlog, "tdmwin_wire_backlog_seconds", "gauge", true, "how far ahead the wire is booked") \
	X(wire_backlog_max, "tdmwin_wire_backlog_max_seconds", "gauge", true, "longest the wire was booked ahead") \
	X(plan_version, "tdmwin_plan_version", "gauge", false, "version of the plan in force") \
	X(pending, "tdmwin_plan_pending", "gauge", false, "1 if a plan waits for its base time") \
	X(pending_version, "tdmwin_plan_pending_version", "gauge", false, "version of the pending plan (0: none)") \
	X(pending_unconfirmed, "tdmwin_plan_pending_unconfirmed", "gauge", false, "1 if the pending plan waits for its confirmation") \
	X(hold, "tdmwin_hold", "gauge", false, "1 if the gate is held closed") \
	X(lease_held, "tdmwin_lease_held", "gauge", false, "1 if the gate holds because the lease ran out")

/*
 * X(field, name, type, ns, help): the counters per window slot, members of
 * struct tdm_qdisc_slot, exported with the labels interface and slot (the
 * window's index in the plan in force).  They start from zero when a plan
 * takes force, which Prometheus takes as a counter reset.
 */
#define TDM_SLOT_PROM_METRICS(X) \
	X(frames, "tdmwin_slot_frames_total", "counter", false, "gated frames sent in the window slot") \
	X(bytes, "tdmwin_slot_bytes_total", "counter", false, "bytes of gated frames sent in the window slot") \
	X(opens, "tdmwin_slot_windows_opened_total", "counter", false, "cycles in which the window slot was used") \
	X(wire_deferrals, "tdmwin_slot_wire_deferrals_total", "counter", false, "waits behind the wire in the window slot") \
	X(guard_deferrals, "tdmwin_slot_guard_deferrals_total", "counter", false, "head frames that did not fit before the window slot closed") \
	X(latency_max, "tdmwin_slot_open_latency_max_seconds", "gauge", true, "longest time from the window slot's start to its first frame on the wire")

/* One tdmwin instance of a device, for tdm_prom_qdisc(). */
struct tdm_prom_inst {
	const char *queue;	/* its TX queue under mq (label queue), or NULL */
	const struct tdm_qdisc_info *q;	/* as read by tdm_qdisc_get() */
};

/*
 * The n tdmwin instances of interface ifname (one at the root, or one per
 * TX queue under mq): every metric above, each family once with a sample
 * per instance (labels interface, and queue under mq), the counters per
 * slot (the slot metrics, the open latency as the summary
 * tdmwin_slot_open_latency_seconds, the least margin
 * tdmwin_slot_margin_min_seconds of slots a frame left in, and
 * tdmwin_slot_plan_version), the open latency as a summary (_sum, _count),
 * the qdisc's drops, backlog and queue length, its lease and what is left
 * of it.  An instance that is not there: tdmwin_qdisc_present 0 only.
 * Counters are per instance, never summed: the instances of one device
 * open the same windows, so a sum of windows opened would count one
 * window once per queue.
 */
void tdm_prom_qdisc(struct tdm_prom *p, const char *ifname,
		    const struct tdm_prom_inst *inst, unsigned int n);

#endif
