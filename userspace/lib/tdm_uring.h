/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space producer ring: how a receiver that no kernel hook sees
 * (AF_XDP, DPDK, ibverbs) hands its packets to tdmstat.  The receiver
 * creates a named ring in shared memory (/dev/shm/tdmrx-ring-NAME) and
 * pushes one record per test packet, with the receive stamp it has (the
 * NIC's completion stamp, or its own clock); `tdmstat capture --recorder
 * ring:NAME` drains it through the same merge and engine as tdmrx's rings.
 *
 * The ring is laid out exactly as one ring of tdmrx's mapping and follows
 * its protocol (kmod/uapi/linux/tdmrx.h, barriers A-D): one producer per
 * ring (one thread; a receiver with several queues creates a ring per
 * queue, ring:A,B,...), lock-free, never overwriting what is unread.  A
 * push into a full ring is dropped and counted in the ring's `dropped`,
 * so that records read + dropped = pushed, exactly.
 *
 * The watermark: the merge releases records once every ring has passed
 * them, less the reorder bound, so the producer says how far it has got.
 * tdm_uring_mark() publishes "every record pushed after this was received
 * no earlier than now - bound"; call it once per receive batch, and on
 * every poll that found nothing, so that a quiet ring does not hold the
 * others' records until the merge's memory limit lets them go.
 *
 *   struct tdm_uring_cfg c = { .records = 65536 };
 *   struct tdm_uring *u = tdm_uring_create("q0", &c, err, sizeof(err));
 *   for (;;) {
 *       n = receive_batch(pkts);                  // AF_XDP, DPDK, ...
 *       for (i = 0; i < n; i++)
 *           tdm_uring_push_frame(u, pkts[i].data, pkts[i].len,
 *                                pkts[i].stamp, TDMRX_F_HW_TS);
 *       tdm_uring_mark(u);
 *   }
 *   tdm_uring_close(u);        // the reader sees the end
 */
#ifndef TDM_URING_H
#define TDM_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kmod/uapi/linux/tdmrx.h"
#include "tdm_rx.h"

#define TDM_URING_NAME_MAX	64	/* characters of a ring's name */
#define TDM_URING_PREFIX	"tdmrx-ring-"	/* /dev/shm/tdmrx-ring-NAME */

struct tdm_uring_cfg {
	/* Records in the ring: a power of two from TDMRX_MIN_RING to
	 * TDMRX_MAX_RING; 0: TDMRX_DEFAULT_RING.
	 */
	uint32_t records;
	/* tdm_uring_push_frame: the UDP destination ports to record, or
	 * none (then any port, only payloads with the magic).
	 */
	uint16_t ports[TDMRX_MAX_PORTS];
	unsigned int nports;
	uint16_t cpu;		/* the records' cpu field: the receive queue */
};

struct tdm_uring;

/*
 * A producer's options into cfg: --records N (parsed, checked by
 * tdm_uring_create()) and --port PORT (1 to 65535, appended, at most
 * TDMRX_MAX_PORTS).  0, or -1 with err.
 */
int tdm_uring_opt_records(struct tdm_uring_cfg *cfg, const char *arg,
			  char *err, size_t errlen);
int tdm_uring_opt_port(struct tdm_uring_cfg *cfg, const char *arg,
		       char *err, size_t errlen);

/*
 * Create the ring NAME (letters, digits, '_', '-', '.'; not starting with
 * '.'), mode 0600, replacing one left by a producer before (a reader of
 * that one sees it end).  NULL with err.
 */
struct tdm_uring *tdm_uring_create(const char *name,
				   const struct tdm_uring_cfg *cfg,
				   char *err, size_t errlen);
/*
 * One record, as it is (its rx_ns and TDMRX_F_*_TS flag the caller's).
 * 0 if pushed, -1 if the ring was full (counted as dropped).
 */
int tdm_uring_push(struct tdm_uring *u, const struct tdmrx_record *r);
/*
 * One received Ethernet frame (len bytes of it at frame): a record of it
 * if it is UDP to one of the ports (the kernel recorders' rules: one with
 * a bad header is recorded, flagged), stamped rx_ns with ts_flag
 * (TDMRX_F_HW_TS: the NIC's clock, TDMRX_F_SW_TS: CLOCK_REALTIME).
 * 0 if pushed, -1 if dropped (ring full), 1 if not a packet to record.
 */
int tdm_uring_push_frame(struct tdm_uring *u, const void *frame, size_t len,
			 int64_t rx_ns, uint16_t ts_flag);
/* The watermark: CLOCK_MONOTONIC now (above). */
void tdm_uring_mark(struct tdm_uring *u);
/* Pushed (records + dropped) and dropped so far. */
uint64_t tdm_uring_pushed(const struct tdm_uring *u);
uint64_t tdm_uring_dropped(const struct tdm_uring *u);
/*
 * The end: marked detached (the reader drains what is left and stops),
 * unmapped.  The name stays for the reader; tdm_uring_unlink() or the
 * next create of the name removes it.
 */
void tdm_uring_close(struct tdm_uring *u);
int tdm_uring_unlink(const char *name, char *err, size_t errlen);

/* ---- the reader (tdmstat capture --recorder ring:NAME[,NAME...]) ---------- */

struct tdm_urings {
	struct tdm_rx_ring *rings;	/* for tdm_merge_feed_rings() */
	void **maps;
	size_t *lens;
	unsigned int n;
};

/* Map the rings named in list ("A" or "A,B,..."), checking each is one. */
int tdm_urings_open(struct tdm_urings *u, const char *list, char *err,
		    size_t errlen);
/* Their drops and their end: tdm_rx_rings_dropped(), _finished(). */
void tdm_urings_close(struct tdm_urings *u);

#endif
