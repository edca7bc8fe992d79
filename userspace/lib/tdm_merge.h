/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receive-order merge: records from several sources (tdmrx's per-CPU
 * rings) put back into the order of their receive times, within a stated
 * bound, before the statistics engine sees them.
 *
 * Receive stamps are not monotonic, not even within one ring: one CPU
 * serves several queues, software stamps are taken before RPS and the
 * backlog, hardware stamps before the driver's poll, and REALTIME can step.
 * What is monotonic is the time at which the hook handled a packet, and
 * each ring publishes it as a watermark (struct tdmrx_ring_prod.mark_ns).
 * The merge holds records and releases them in receive-time order once
 * every source's watermark has passed them:
 *
 *	frontier = min over sources of (mark) - bound
 *
 * where bound is the largest delay from a packet's receive stamp to the
 * hook that the merge allows for (the reorder bound).  A record whose key
 * is below the frontier already released is "behind": the merge hands it
 * on at once and counts it, so the order of what came before is kept and
 * the miss is a number, not a guess.  Sources that have neither a mark nor
 * a record yet (a CPU that never ran the hook) do not hold the frontier.
 *
 * Memory: a source whose mark stops (a CPU taken offline) would hold every
 * record for ever, so the frontier never trails the newest key seen by
 * more than hold_ns.
 *
 * Keys are receive times on the plan's clock (tdm_stats_rx_time()); marks
 * are CLOCK_MONOTONIC, as the kernel takes them, and go onto the keys'
 * clock through offsets sampled with tdm_merge_clock().  A forward step of
 * REALTIME must not let the frontier overtake records stamped before it,
 * so the smallest mark is converted with the smallest offset sampled since
 * (mark - bound); a backward step of S puts what is stamped in the next S
 * behind (their stamps go back, the order already released cannot).
 * Equal keys leave in the order they came.
 */
#ifndef TDM_MERGE_H
#define TDM_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "../../kmod/uapi/linux/tdmrx.h"
#include "tdm_rx.h"
#include "tdm_stats.h"

struct tdm_merge_cfg {
	unsigned int nsrc;	/* sources: 0 .. nsrc - 1 */
	int64_t bound_ns;	/* reorder bound, >= 0 */
	int64_t hold_ns;	/* longest hold behind the newest key, > 0 */
	/* The clock offsets of the keys (only rt_offset_ns, hw_offset_ns). */
	const struct tdm_stats_cfg *clock;
	void (*emit)(void *ctx, const struct tdmrx_record *r);
	void *ctx;
};

struct tdm_merge;

/* NULL if out of memory or cfg is invalid (nsrc 0, bound < 0, hold <= 0). */
struct tdm_merge *tdm_merge_new(const struct tdm_merge_cfg *cfg);
void tdm_merge_free(struct tdm_merge *m);

/* A record of source src, in the order the source gave it.  -1 if out of
 * memory (the record is handed on at once then, and counted behind).
 */
int tdm_merge_add(struct tdm_merge *m, unsigned int src,
		  const struct tdmrx_record *r);
/* The watermark of src (CLOCK_MONOTONIC); a smaller one than before is
 * ignored.
 */
void tdm_merge_mark(struct tdm_merge *m, unsigned int src, int64_t mark);
/* keys' clock - CLOCK_MONOTONIC, as it is at mono (REALTIME - MONOTONIC +
 * the stats' rt_offset_ns, read now).  Marks count only once one is given.
 */
void tdm_merge_clock(struct tdm_merge *m, int64_t mono, int64_t offset);
/* Hand on, in key order, every held record below the frontier; returns the
 * frontier (INT64_MIN while there is none).
 */
int64_t tdm_merge_release(struct tdm_merge *m);
/* Hand on everything held, in key order (the end of a run). */
void tdm_merge_flush(struct tdm_merge *m);

/* Drain tdmrx rings[0..n-1] (tdm_rx.h) into the merge, ring i as source
 * i, each record shown to tap first if tap is not NULL (its return is
 * ignored), then give the merge the watermarks read before each ring's
 * prod.  The caller then samples the clock and releases.  Returns the
 * records drained.
 */
size_t tdm_merge_feed_rings(struct tdm_rx_ring *rings, unsigned int n,
			    struct tdm_merge *m, tdm_rx_cb tap, void *tap_ctx);

uint64_t tdm_merge_behind(const struct tdm_merge *m);
size_t tdm_merge_held(const struct tdm_merge *m);
size_t tdm_merge_held_max(const struct tdm_merge *m);

#endif
