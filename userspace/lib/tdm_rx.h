/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user side of tdmrx.ko: the generic netlink client (libmnl) that
 * attaches the recorder to a device and UDP ports, and the reader of the
 * per-CPU record rings mapped from /dev/tdmrx.  The ring protocol and its
 * barriers are described in kmod/uapi/linux/tdmrx.h; tdm_rx.c points back
 * to them at each acquire/release.
 *
 *   struct tdm_rx rx;
 *   tdm_rx_open(&rx, err, len);                  // genl family + /dev/tdmrx
 *   tdm_rx_attach(&rx, &cfg, err, len);          // we own it now
 *   while (running) {
 *       tdm_rx_wait(&rx, 100, err, len);         // poll() the device
 *       n = tdm_rx_drain(&rx, cb, ctx, max);     // every ring, in batches
 *   }
 *   tdm_rx_detach(&rx, err, len); tdm_rx_close(&rx);
 */
#ifndef TDM_RX_H
#define TDM_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kmod/uapi/linux/tdmrx.h"
#include "tdm_nl.h"

struct tdm_rx_cfg {
	char ifname[16];
	uint16_t ports[TDMRX_MAX_PORTS];
	unsigned int nports;
	uint32_t ring_records;	/* per CPU; 0 = TDMRX_DEFAULT_RING */
	uint32_t watermark;	/* 0 = kernel default (a quarter ring) */
	uint32_t flush_us;	/* 0 = TDMRX_DEFAULT_FLUSH_US */
};

/* What TDMRX_CMD_GET (or the ATTACH reply) says. */
struct tdm_rx_info {
	bool attached;
	uint32_t ifindex;
	char ifname[16];
	uint16_t ports[TDMRX_MAX_PORTS];
	unsigned int nports;
	uint32_t owner;		/* netlink port id */
	uint32_t session;
	uint32_t nr_rings;
	uint64_t ring_bytes;
	uint32_t ring_records;
	bool hw_tstamp;
	struct tdmrx_stats stats;	/* zeroed fields the kernel lacks */
};

struct tdm_rx_ring {
	struct tdmrx_ring_prod *prod;	/* kernel-written page */
	struct tdmrx_ring_cons *cons;	/* our page */
	const struct tdmrx_record *rec;
	uint64_t cached_prod, cached_cons;
	uint32_t mask;
	/* The ring's receive watermark (CLOCK_MONOTONIC ns, see the uapi
	 * header) as read before cached_prod: every record after
	 * cached_prod was hooked at mark_ns or later.  INT64_MIN: none yet.
	 */
	int64_t mark_ns;
};

struct tdm_rx {
	struct tdm_nl nl;		/* generic netlink */
	uint16_t family;		/* resolved genl family id */
	int dev_fd;			/* /dev/tdmrx */
	void *map;
	size_t map_len;
	struct tdm_rx_ring *rings;
	unsigned int nr_rings;
	struct tdm_rx_info info;	/* of our attach */
};

/* Resolve the family and open /dev/tdmrx.  -1 with err ("tdmrx.ko is not
 * loaded (no generic netlink family 'tdmrx')", ...).
 */
int tdm_rx_open(struct tdm_rx *rx, char *err, size_t errlen);
void tdm_rx_close(struct tdm_rx *rx);

/* Attach and map the rings.  Errors carry the kernel's extack text
 * ("kernel: tdmrx is attached to eth1 by port id 1234").
 */
int tdm_rx_attach(struct tdm_rx *rx, const struct tdm_rx_cfg *cfg,
		  char *err, size_t errlen);
/* Detach our session (force: anyone's, needs CAP_NET_ADMIN). */
int tdm_rx_detach(struct tdm_rx *rx, bool force, char *err, size_t errlen);
int tdm_rx_get(struct tdm_rx *rx, struct tdm_rx_info *info,
	       char *err, size_t errlen);

/* Wait up to timeout_ms for records (poll on the device): 1 ready, 0
 * timeout, -1 error.
 */
int tdm_rx_wait(struct tdm_rx *rx, int timeout_ms, char *err, size_t errlen);

/* Hand every available record (at most max, 0 = no limit) to cb, ring by
 * ring, releasing each batch as it goes.  Returns the number handed over.
 * cb returns 0 to go on, non-zero to stop early (the record counts as read).
 */
typedef int (*tdm_rx_cb)(void *ctx, const struct tdmrx_record *r);
size_t tdm_rx_drain(struct tdm_rx *rx, tdm_rx_cb cb, void *ctx, size_t max);


/* Records dropped so far by the kernel because a ring was full (sum over
 * the rings, from the mapped headers).
 */
uint64_t tdm_rx_dropped(const struct tdm_rx *rx);
/* True once the kernel marked our session detached and every ring is
 * drained.
 */
bool tdm_rx_finished(const struct tdm_rx *rx);

/*
 * The ring reader alone, on memory laid out as one ring of the mapping
 * (unit tests, and the user-space producer rings of tdm_uring.h).
 */
void tdm_rx_ring_init(struct tdm_rx_ring *r, void *base);
size_t tdm_rx_ring_drain(struct tdm_rx_ring *r, tdm_rx_cb cb, void *ctx,
			 size_t max);
/* Its producer let go (detached) and every record it published is read. */
bool tdm_rx_ring_finished(const struct tdm_rx_ring *r);
/* The same for every one of n rings (false for none), and their drops. */
bool tdm_rx_rings_finished(const struct tdm_rx_ring *rings, unsigned int n);
uint64_t tdm_rx_rings_dropped(const struct tdm_rx_ring *rings, unsigned int n);

#endif
