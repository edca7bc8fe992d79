/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdmctl doctor: check one node for what the tuning guides teach (PTP,
 * NIC timestamping, flow control, rings, coalescing, txqueuelen, BQL,
 * C-states, IRQ affinity, NUMA, qdisc, tdmrx) and say how to fix each
 * finding.  It only reads.  See tdmctl(8), section DOCTOR.
 *
 * Two halves: doctor_facts.c gathers facts (ioctls, netlink, sysfs, procfs)
 * into struct doctor_facts; doctor.c turns facts into findings, one small
 * pure function per check, and prints them.  The checks and the parsers
 * are exported for the unit tests.
 */
#ifndef TDM_DOCTOR_H
#define TDM_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tdm_phc.h"
#include "tdm_ptp.h"
#include "tdm_qdisc.h"
#include "tdm_rxbpf.h"
#include "tdm_xdp.h"

#define DOC_MAX_CPUS		1024
#define DOC_MAX_IRQS		256
#define DOC_MAX_TXQ		256
#define DOC_MAX_STATES		16
#define DOC_TEXT		256
#define DOC_FIX			512

/* Thresholds (documented in tdmctl(8)). */
#define DOC_TXQLEN_MIN		1000	/* packets */
#define DOC_PTP_OFFSET_OK_NS	1000
#define DOC_PTP_OFFSET_FAIL_NS	100000
/* PHC - CLOCK_TAI: tdmd's default phc_threshold, and a fail where the
 * offset would eat a typical guard band (as for ptp4l's offset).
 */
#define DOC_PHC_OFFSET_OK_NS	1000
#define DOC_PHC_OFFSET_FAIL_NS	100000
#define DOC_CSTATE_MAX_US	10	/* exit latency allowed */
#define DOC_BQL_UNLIMITED	1879048192U	/* DQL_MAX_LIMIT: never set */
#define DOC_BQL_US		20	/* driver queue in us at line rate */

enum doc_role { DOC_SENDER, DOC_RECEIVER };
enum doc_sev { DOC_OK, DOC_INFO, DOC_WARN, DOC_FAIL, DOC_SKIP };

struct doc_finding {
	const char *id;
	enum doc_sev sev;
	char seen[DOC_TEXT];
	char want[DOC_TEXT];
	char fix[DOC_FIX];	/* empty: nothing to run */
};

/* A set of CPUs (or IRQ affinity). */
struct doc_cpuset {
	uint64_t bits[DOC_MAX_CPUS / 64];
};

/* One fact: have = it could be read; err says why not. */
#define DOC_FACT_HDR	bool have; int err_no; char err[DOC_TEXT]

struct doctor_facts {
	char ifname[16];
	enum doc_role role;
	bool role_auto;			/* no --role: receiver if tdmrx is
					 * attached to the interface */
	char ptp_socket[108];

	struct {
		DOC_FACT_HDR;
		bool running;		/* socket present */
		struct tdm_ptp_status st;
	} ptp;
	struct { DOC_FACT_HDR; int tai; } tai;

	bool virtual_dev;		/* no /sys/class/net/IF/device */
	bool up;			/* operstate up */
	struct { DOC_FACT_HDR; uint32_t so_timestamping; int phc_index; } ts;
	/* PHC - CLOCK_TAI of ts.phc_index (tdm_phc_read); not read (have
	 * false, err empty) without a PHC.
	 */
	struct { DOC_FACT_HDR; struct tdm_phc_offset off; } phc;
	struct {
		DOC_FACT_HDR;
		uint32_t rx, rx_max, tx, tx_max;
	} ring;
	struct {
		DOC_FACT_HDR;
		bool adaptive_rx, adaptive_tx;
		uint32_t rx_usecs, rx_frames, tx_usecs, tx_frames;
	} coal;
	struct { DOC_FACT_HDR; uint32_t speed_mbps; bool full; } link;
	/* Ethernet flow control.  PAUSE as configured (ETHTOOL_GPAUSEPARAM;
	 * with autoneg the link partner must agree too); PFC from DCB netlink
	 * (DCB_CMD_IEEE_GET), bit n of en: priority n pauses.
	 */
	struct { DOC_FACT_HDR; bool autoneg, rx, tx; } pause;
	struct { DOC_FACT_HDR; uint8_t cap, en; } pfc;
	struct { DOC_FACT_HDR; uint32_t len; } txqlen;
	struct {
		DOC_FACT_HDR;
		unsigned int ntxq;
		uint32_t limit_max[DOC_MAX_TXQ];
	} bql;

	struct {
		DOC_FACT_HDR;
		char driver[32];
		unsigned int nstates;
		struct {
			char name[32];
			uint32_t latency_us;
			unsigned int enabled_on;	/* CPUs with it enabled */
			unsigned int ncpus;
		} st[DOC_MAX_STATES];
	} idle;
	struct { DOC_FACT_HDR; struct doc_cpuset set; } isolated;
	struct {
		DOC_FACT_HDR;
		unsigned int n;
		unsigned int irq[DOC_MAX_IRQS];
		struct doc_cpuset aff[DOC_MAX_IRQS];
	} irqs;
	bool irqbalance;		/* an irqbalance process runs */
	bool phc2sys;			/* a phc2sys process runs */
	struct {
		DOC_FACT_HDR;
		int node;		/* -1: none */
		unsigned int nnodes;
		struct doc_cpuset node_cpus;
	} numa;
	unsigned int ncpus_online;

	struct { DOC_FACT_HDR; struct tdm_qdisc_info q; } qdisc;
	/* What sends on the interface past its qdisc (tdm.bypass): an XDP
	 * program, AF_XDP sockets (xdp.in.xsk_known false: not listed, why
	 * in xdp.err).
	 */
	struct { DOC_FACT_HDR; struct tdm_xdp_info in; } xdp;
	/* Packet sockets with a TX ring that may send on it past its qdisc
	 * (tdm.bypass; have false: not listed, why in pkt.err).
	 */
	struct { DOC_FACT_HDR; struct tdm_pkt_info in; } pkt;
	struct {
		DOC_FACT_HDR;
		bool loaded;
		bool attached;
		char attached_to[16];
		unsigned int nports;
		uint16_t ports[16];
	} rx;
	/* What the recorders need on this node (tdm.recorders). */
	struct {
		DOC_FACT_HDR;
		char lockdown[32];	/* the [selected] word; "" unknown */
		bool btf;		/* /sys/kernel/btf/vmlinux */
		bool kmod_found;	/* tdmrx.ko in the module tree */
		bool cap_sys_module, cap_bpf, cap_net_admin, cap_sys_admin;
		bool bpffs;		/* a bpffs at /sys/fs/bpf (libxdp) */
		int xdp_kfunc;		/* XDP RX timestamp kfunc: 1, 0, -1 unknown */
	} node;
	/* The BPF recorder on the interface (tdm.bpf_recorder); a tc filter
	 * or XDP program whose owner is gone is removed (reaped), as capture
	 * would.
	 */
	struct {
		DOC_FACT_HDR;
		struct tdm_rxbpf_state st;
		bool reaped;
		int xdp_progs;		/* XDP programs on it (any); -1 unknown */
	} bpf;
};

/* Gather every fact (doctor_facts.c).  Never fails: unreadable facts are
 * left with have = false and a reason.
 */
void doctor_gather(struct doctor_facts *f);

/* Checks: fill one finding from the facts. */
typedef void (*doc_check_fn)(const struct doctor_facts *f,
			     struct doc_finding *out);
struct doc_check {
	const char *id;
	doc_check_fn fn;
};
extern const struct doc_check doc_checks[];
extern const size_t doc_nchecks;

/* Run every check: out must hold doc_nchecks findings. */
void doctor_run(const struct doctor_facts *f, struct doc_finding *out);
int doctor_worst(const struct doc_finding *fd, size_t n);
const char *doc_sev_name(enum doc_sev s);
void doctor_print_text(FILE *o, const struct doctor_facts *f,
		       const struct doc_finding *fd, size_t n);
/* JSON text (malloc'd) or NULL on out of memory. */
char *doctor_json(const struct doctor_facts *f,
		  const struct doc_finding *fd, size_t n);

/* `tdmctl doctor ...`: argv[0] is "doctor"; json from tdmctl's -j. */
int doctor_main(int argc, char **argv, bool json);

/* ---- pure parsers ------------------------------------------------------ */

/* "0-3,8,10-11\n" -> set; 0, or -1 on a malformed list. */
int doc_cpulist_parse(const char *s, struct doc_cpuset *set);
/* set -> "0-3,8"; "" for none. */
void doc_cpulist_fmt(const struct doc_cpuset *set, char *buf, size_t len);
unsigned int doc_cpuset_count(const struct doc_cpuset *set);
bool doc_cpuset_subset(const struct doc_cpuset *a, const struct doc_cpuset *b);
bool doc_cpuset_test(const struct doc_cpuset *s, unsigned int cpu);
void doc_cpuset_set(struct doc_cpuset *s, unsigned int cpu);

/* IRQ numbers of the /proc/interrupts text whose action names contain
 * ifname as a whole token ("eth1" matches "eth1-TxRx-0", "eth1", not
 * "eth10-rx").  Returns how many were stored (at most max).
 */
unsigned int doc_irqs_from_interrupts(const char *text, const char *ifname,
				      unsigned int *irqs, unsigned int max);

/* The IPv4 default route's interface from /proc/net/route text; 0 or -1. */
int doc_default_iface(const char *route, char *ifname, size_t len);

/* PFC (DCB_ATTR_IEEE_PFC in DCB_ATTR_IEEE) of an RTM_GETDCB answer to
 * DCB_CMD_IEEE_GET: 1 with *cap and *en (bit n: priority n) set, 0 if
 * the message carries none.
 */
struct nlmsghdr;
int doc_dcb_pfc_parse(const struct nlmsghdr *nlh, uint8_t *cap, uint8_t *en);

#endif
