/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF receive recorder (userspace/bpf/tdmrx.bpf.c): load it with
 * libbpf from the skeleton built in, attach it to a device's tc ingress or
 * XDP hook (cfg.hook), read its BPF ring buffers and hand the records,
 * with the per-CPU watermarks, to libtdm's merge (tdm_merge.h), as tdm_rx.c
 * does for tdmrx.ko.  The record and the counters are tdmrx's (tdmrx.h).
 *
 * Ownership: one owner per device.  On kernels with tcx (6.6 on) the
 * program hangs on a BPF link that only the owner's file descriptor holds,
 * so it goes away with the owner.  Without tcx (6.1) it is a tc filter on
 * clsact ingress with a fixed handle and priority (tdmrx_bpf.h), which
 * outlives its process: the owner tag (pid and start time, in the
 * program's tdmrx_owner map) tells the next owner, or tdmctl doctor,
 * whether its owner is gone, and then the filter is removed.  An XDP
 * program outlives its process too (a libxdp dispatcher is pinned in
 * bpffs): the same tag, the same removal.
 *
 * The XDP hooks: TDM_RXBPF_XDP goes through libxdp's multi-program
 * dispatcher, before other programs on the device (an AF_XDP receiver's),
 * in the mode the device's dispatcher already runs in (else native, or
 * skb where the driver has no XDP), stamping at the hook.  TDM_RXBPF_XDP_HW
 * loads the program device-bound, which the XDP RX metadata kfunc needs
 * (6.3 on) and libxdp's dispatcher cannot hold (1.3 to 1.5), so it is
 * alone on the device in native mode, with the NIC's stamps where the
 * driver gives them.
 *
 *   struct tdm_rxbpf *b;
 *   tdm_rxbpf_open(&b, &cfg, err, len);          // load, attach: we own it
 *   while (running) {
 *       tdm_rxbpf_wait(b, 100, err, len);
 *       tdm_rxbpf_feed(b, merge, tap, ctx);      // rings + marks -> merge
 *   }
 *   tdm_rxbpf_detach(b, ...); tdm_rxbpf_feed(...); tdm_rxbpf_close(b);
 */
#ifndef TDM_RXBPF_H
#define TDM_RXBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../kmod/uapi/linux/tdmrx.h"
#include "../bpf/tdmrx_bpf.h"
#include "tdm_merge.h"
#include "tdm_rx.h"

enum tdm_rxbpf_hook {
	TDM_RXBPF_TC,		/* tc ingress: tcx, or a tc filter */
	TDM_RXBPF_XDP,		/* XDP through libxdp */
	TDM_RXBPF_XDP_HW,	/* XDP device-bound, NIC stamps, alone */
};

struct tdm_rxbpf_cfg {
	char ifname[16];
	enum tdm_rxbpf_hook hook;
	uint16_t ports[TDMRX_MAX_PORTS];
	unsigned int nports;
	uint32_t ring_records;	/* per ring, at least; 0 = TDMRX_DEFAULT_RING */
	uint32_t watermark;	/* records; 0 = a quarter ring */
	uint32_t flush_us;	/* poll timeout cap; 0 = TDMRX_DEFAULT_FLUSH_US */
	bool shared;		/* one ring for every CPU instead of one each */
};

/* What is attached to a device (tdm_rxbpf_query). */
struct tdm_rxbpf_state {
	bool attached;		/* a recorder program is on its ingress or XDP */
	int mode;		/* TDMRX_BPF_MODE_* */
	uint32_t prog_id;
	pid_t owner;		/* 0: unknown */
	bool owner_alive;
	char owner_comm[32];
};

struct tdm_rxbpf;

/* Load and attach.  -1 with err, errno EBUSY if another live owner has the
 * device ("the BPF recorder is attached to eth1 by pid 1234 (tdmstat)"),
 * EPERM with what is missing ("loading the BPF recorder needs CAP_BPF and
 * CAP_NET_ADMIN ...").  A filter whose owner is gone is removed first and
 * said so on stderr unless quiet.
 */
int tdm_rxbpf_open(struct tdm_rxbpf **out, const struct tdm_rxbpf_cfg *cfg,
		   bool quiet, char *err, size_t errlen);
/* Take the program off the device (idempotent); the rings stay readable,
 * and once this returned and the rings were fed, nothing more comes.
 */
int tdm_rxbpf_detach(struct tdm_rxbpf *b, char *err, size_t errlen);
void tdm_rxbpf_close(struct tdm_rxbpf *b);	/* detaches too */

/* Wait up to timeout_ms for a ring to reach the watermark: 1, 0, -1. */
int tdm_rxbpf_wait(struct tdm_rxbpf *b, int timeout_ms, char *err,
		   size_t errlen);
/* Every record available into m (source: the record's CPU), each shown to
 * tap first if not NULL, then the CPUs' watermarks read before the rings.
 * Returns the records fed.
 */
size_t tdm_rxbpf_feed(struct tdm_rxbpf *b, struct tdm_merge *m, tdm_rx_cb tap,
		      void *tap_ctx);
/* After tdm_rxbpf_detach(): feed until every matched packet is accounted
 * for (records read + dropped = matched), giving up once timeout_ms pass
 * with nothing read.  0, or -1 if the counts did not settle, with
 * *unread = the records matched, not dropped and not read.
 */
int tdm_rxbpf_drain_final(struct tdm_rxbpf *b, struct tdm_merge *m,
			  tdm_rx_cb tap, void *tap_ctx, int timeout_ms,
			  uint64_t *unread);

/* The merge's sources: the possible CPUs. */
unsigned int tdm_rxbpf_nsrc(const struct tdm_rxbpf *b);
unsigned int tdm_rxbpf_nrings(const struct tdm_rxbpf *b);
uint32_t tdm_rxbpf_ring_records(const struct tdm_rxbpf *b);
/* "tcx", "tc", "xdp skb, libxdp dispatcher", "xdp native, device-bound"... */
const char *tdm_rxbpf_mode(const struct tdm_rxbpf *b);
uint32_t tdm_rxbpf_prog_id(const struct tdm_rxbpf *b);
/* The counters summed over the CPUs (the per-CPU stats map). */
int tdm_rxbpf_stats(const struct tdm_rxbpf *b, struct tdmrx_stats *sum);
/* Records dropped because a ring was full (exact: failed reservations). */
uint64_t tdm_rxbpf_dropped(const struct tdm_rxbpf *b);
uint64_t tdm_rxbpf_read(const struct tdm_rxbpf *b);	/* records fed */

/* What is on ifname's ingress.  0, or -1 with err (no such device, no
 * privilege to ask).
 */
int tdm_rxbpf_query(const char *ifname, struct tdm_rxbpf_state *st,
		    char *err, size_t errlen);
/* The XDP programs on ifname (any, ours or not): how many (0: none; a
 * dispatcher's count as theirs), the mode they run in (XDP_MODE_* of
 * libxdp) in *mode, -1 with err.
 */
int tdm_rxbpf_xdp_progs(const char *ifname, int *mode, char *err,
			size_t errlen);
/* Whether the running kernel has the XDP RX timestamp kfunc (6.3 on):
 * 1, 0, or -1 if its BTF cannot be read.
 */
int tdm_rxbpf_xdp_kfunc(void);

/* Remove the tc filter or XDP program of an owner that is gone.  1
 * removed, 0 nothing to remove (none, a tcx link, or a live owner), -1
 * with err.
 */
int tdm_rxbpf_reap(const char *ifname, char *err, size_t errlen);

/* /proc/PID/stat's start time (field 22), 0 if there is no such process. */
uint64_t tdm_proc_start_ticks(pid_t pid);

#endif
