// SPDX-License-Identifier: GPL-2.0
/*
 * tdmgen --stack dpdk: the same stamped datagrams as Ethernet frames sent
 * through DPDK's ethdev (Debian's DPDK), which never enter the kernel's
 * qdisc layer.  By default the EAL runs without hugepages or PCI devices
 * and sends on a net_af_packet vdev over -I IFACE (a TPACKET ring whose
 * socket bypasses the qdisc, PACKET_QDISC_BYPASS); --eal gives the EAL's
 * arguments instead (net_af_xdp, or a real NIC), and tdmgen sends on the
 * first port they make.
 *
 * The plan's home is still the tdmwin qdisc on IFACE: libtdmgate follows
 * it (bypass_gate()) and answers, for each frame, the instant it may
 * start.  Two ways to keep a frame to it:
 *
 *   launch time  the PMD offers RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP (mlx5
 *                with tx_pp, ConnectX-7), the TX timestamp dynamic field
 *                and flag register (rte_mbuf_dyn_tx_timestamp_register())
 *                and IFACE has a PHC: the gate runs on that PHC and each
 *                mbuf carries its tdmgate_next() instant, never one in the
 *                past (the PMD sends such a frame at once);
 *   software     otherwise: tdmgen waits for the instant (tdmgate_wait(),
 *                the last --spin busy-polling) and hands the burst to the
 *                PMD, whose TX call sends it (af_packet: sendto() on the
 *                ring), as --stack afxdp does.
 *
 * The summary says which one ran and why ("launch_time").
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "tdm_phc.h"
#include "tdm_pkt.h"
#include "tdm_util.h"
#include "tdmgate.h"
#include "tdmgen.h"

#define MAX_KICK	BYPASS_MAX_KICK	/* mbufs a TX call, at most */
#define NUM_MBUFS	4095
#define RING_SIZE	1024
#define MAX_EAL_ARGS	64

struct dtx {
	struct bypass_tx bt;		/* first: the loop's view */
	uint16_t port;
	struct rte_mempool *pool;
	struct rte_mbuf *m[MAX_KICK];	/* the next kick's frames, built */
	struct tdm_frame_addr addr;
	size_t len;			/* a frame, without FCS */
	bool eal;			/* rte_eal_init() succeeded */
	bool started;
	/* Launch time: the dynamic field's offset and flag. */
	int ts_off;
	uint64_t ts_flag;
	int phc_fd;
};

/* ---- the EAL and the port --------------------------------------------------- */

/*
 * The EAL's arguments: --eal's, split at blanks, or ours, whose main
 * lcore is the first CPU tdmgen may run on (@cpus; 0 if unknown).  @buf
 * holds the strings; the count, or -1 (said).
 */
static int eal_args(const struct opts *o, const cpu_set_t *cpus, char *buf,
		    size_t buflen, char **argv)
{
	int argc = 0, cpu = 0;
	char *p;

	while (cpus && cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, cpus))
		cpu++;
	if (o->eal) {
		snprintf(buf, buflen, "%s", o->eal);
	} else {
		snprintf(buf, buflen,
			 "-l %d --no-huge --no-shconf -m 64 --no-pci --no-telemetry "
			 "--log-level=*:warning --vdev net_af_packet0,iface=%s",
			 cpu, o->ifname);
	}
	argv[argc++] = "tdmgen";
	for (p = strtok(buf, " \t"); p; p = strtok(NULL, " \t")) {
		if (argc == MAX_EAL_ARGS) {
			fprintf(stderr, "tdmgen: --eal: more than %d arguments\n",
				MAX_EAL_ARGS - 1);
			return -1;
		}
		argv[argc++] = p;
	}
	return argc;
}

/*
 * rte_eal_init(), keeping the thread's CPUs: the EAL pins its main
 * lcore to one CPU, and a sender that sleeps between bursts should run
 * wherever the scheduler finds room.
 */
static int eal_init(const struct opts *o, struct dtx *x)
{
	static char buf[4096];
	char *argv[MAX_EAL_ARGS + 1] = { NULL };
	cpu_set_t cpus;
	bool keep = !sched_getaffinity(0, sizeof(cpus), &cpus);
	int argc = eal_args(o, keep ? &cpus : NULL, buf, sizeof(buf), argv);

	if (argc < 0)
		return -1;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "tdmgen: DPDK's EAL: %s (arguments: %s)\n",
			rte_strerror(rte_errno),
			o->eal ? o->eal : "tdmgen's default, see --help");
		return -1;
	}
	x->eal = true;
	if (keep)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	return 0;
}

/*
 * Launch time, as the summary says it: 0 and x->ts_off set where the PMD
 * and IFACE allow it; else 1 with *why.
 */
static int launch_setup(const struct opts *o, struct dtx *x,
			const struct rte_eth_dev_info *info, const char **why)
{
	char err[256];
	int idx;

	x->ts_off = -1;
	if (!(info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP)) {
		*why = "not offered by the PMD";
		return 1;
	}
	if (o->ungated) {
		*why = "offered by the PMD, unused (ungated)";
		return 1;
	}
	if (rte_mbuf_dyn_tx_timestamp_register(&x->ts_off, &x->ts_flag)) {
		x->ts_off = -1;
		*why = "offered by the PMD, but its dynamic field does not register";
		return 1;
	}
	/* The PMD launches on the NIC's clock: the gate must read it. */
	if (tdm_phc_index(o->ifname, &idx, NULL, err, sizeof(err)) || idx < 0) {
		x->ts_off = -1;
		*why = "offered by the PMD, but IFACE has no PHC for the gate";
		return 1;
	}
	snprintf(err, sizeof(err), "/dev/ptp%d", idx);
	x->phc_fd = open(err, O_RDONLY | O_CLOEXEC);
	if (x->phc_fd < 0) {
		x->ts_off = -1;
		*why = "offered by the PMD, but IFACE's PHC does not open";
		return 1;
	}
	*why = "set in each mbuf (TX timestamp dynamic field), on IFACE's PHC";
	return 0;
}

static int port_open(const struct opts *o, struct dtx *x, struct sender *s)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t rxd = RING_SIZE, txd = RING_SIZE, mtu;
	int err;

	if (!rte_eth_dev_count_avail()) {
		fprintf(stderr, "tdmgen: DPDK: no port (the EAL's arguments name no device)\n");
		return -1;
	}
	x->port = (uint16_t)rte_eth_find_next_owned_by(0, RTE_ETH_DEV_NO_OWNER);
	err = rte_eth_dev_info_get(x->port, &info);
	if (err)
		goto fail;
	s->launching = !launch_setup(o, x, &info, &s->launch_time);
	if (s->launching)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP;
	x->pool = rte_pktmbuf_pool_create("tdmgen", NUM_MBUFS, 0, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (!x->pool) {
		fprintf(stderr, "tdmgen: DPDK: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	/* One RX queue: PMDs want one to start; nothing is read from it. */
	err = rte_eth_dev_configure(x->port, 1, 1, &conf);
	if (!err)
		err = rte_eth_dev_adjust_nb_rx_tx_desc(x->port, &rxd, &txd);
	if (!err)
		err = rte_eth_rx_queue_setup(x->port, 0, rxd,
					     (unsigned int)rte_eth_dev_socket_id(x->port),
					     NULL, x->pool);
	if (!err)
		err = rte_eth_tx_queue_setup(x->port, 0, txd,
					     (unsigned int)rte_eth_dev_socket_id(x->port),
					     NULL);
	if (!err)
		err = rte_eth_dev_start(x->port);
	if (err)
		goto fail;
	x->started = true;
	if (!rte_eth_dev_get_mtu(x->port, &mtu) &&
	    x->len > (size_t)mtu + RTE_ETHER_HDR_LEN) {
		fprintf(stderr, "tdmgen: DPDK port %u (MTU %u) sends one frame a datagram: --size at most %u\n",
			x->port, mtu, mtu - (TDM_FRAME_HDR_LEN - RTE_ETHER_HDR_LEN));
		return -1;
	}
	return 0;
fail:
	fprintf(stderr, "tdmgen: DPDK port %u (%s): %s\n", x->port,
		info.driver_name ? info.driver_name : "?", rte_strerror(-err));
	return -1;
}

static void dtx_close(struct dtx *x)
{
	if (x->pool)
		rte_pktmbuf_free_bulk(x->m, MAX_KICK);
	if (x->started) {
		rte_eth_dev_stop(x->port);
		rte_eth_dev_close(x->port);
	}
	rte_mempool_free(x->pool);
	if (x->phc_fd >= 0)
		close(x->phc_fd);
	if (x->eal)
		rte_eal_cleanup();
}

/* ---- frames ---------------------------------------------------------------- */

/* The loop's two steps (struct bypass_tx): the frames in x->m[]. */
static int dtx_prepare(struct bypass_tx *t, struct tdm_pkt *pkt,
		       unsigned int n, size_t payload)
{
	struct dtx *x = (struct dtx *)t;
	unsigned int i;

	if (rte_pktmbuf_alloc_bulk(x->pool, x->m, n)) {
		fprintf(stderr, "tdmgen: DPDK: no mbuf left\n");
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = x->m[i];

		tdm_frame_encode(rte_pktmbuf_append(m, (uint16_t)x->len), x->len,
				 &x->addr, pkt, payload);
		pkt->seq++;
	}
	return 0;
}

/*
 * Frames the PMD leaves are handed over again (it sends in the call:
 * af_packet's ring waits for the kernel); those built but not sent are
 * freed.
 */
static int dtx_kick(struct bypass_tx *t, unsigned int n, unsigned int built,
		    const int64_t *launch, int64_t gnow, int64_t *now,
		    uint64_t *retries)
{
	struct dtx *x = (struct dtx *)t;
	unsigned int i, done = 0;

	*now = tdm_clock_ns(CLOCK_TAI);
	for (i = 0; i < n; i++) {
		uint8_t *p = rte_pktmbuf_mtod(x->m[i], uint8_t *);

		if (launch) {
			*RTE_MBUF_DYNFIELD(x->m[i], x->ts_off, int64_t *) = launch[i];
			x->m[i]->ol_flags |= x->ts_flag;
			/* The datagram says when it leaves, on CLOCK_TAI. */
			tdm_pkt_stamp(p + TDM_FRAME_HDR_LEN,
				      *now + (launch[i] - gnow));
		} else {
			tdm_pkt_stamp(p + TDM_FRAME_HDR_LEN, *now);
		}
	}
	while (done < n) {
		done += rte_eth_tx_burst(x->port, 0, x->m + done,
					 (uint16_t)(n - done));
		if (done < n)
			(*retries)++;
	}
	if (built > n)
		rte_pktmbuf_free_bulk(x->m + n, built - n);
	memset(x->m, 0, sizeof(x->m));
	return 0;
}

int dpdk_run(const struct opts *o, struct sender *s)
{
	struct dtx *x = calloc(1, sizeof(*x));
	struct tdmgate *g = NULL;
	int rc = 1;

	if (!x) {
		fprintf(stderr, "tdmgen: out of memory\n");
		return 1;
	}
	x->phc_fd = -1;
	if (bypass_setup(o, s, RTE_MBUF_DEFAULT_DATAROOM, "mbuf", &x->addr, &g) < 0)
		goto out;
	x->len = TDM_FRAME_HDR_LEN + o->size;
	x->bt = (struct bypass_tx){ .len = (uint32_t)x->len, .max = MAX_KICK,
				    .prepare = dtx_prepare, .kick = dtx_kick };
	if (eal_init(o, x) || port_open(o, x, s))
		goto out;
	if (s->launching && tdmgate_set_clock(g, tdmgate_phc_clock(x->phc_fd))) {
		fprintf(stderr, "tdmgen: %s: the gate cannot read the PHC\n",
			o->ifname);
		goto out;
	}
	rc = bypass_send(o, s, &x->bt, g);
out:
	dtx_close(x);
	tdmgate_destroy(g);
	free(x);
	return rc;
}
