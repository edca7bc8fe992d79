// SPDX-License-Identifier: GPL-2.0
/*
 * tdm-dpdk-rx: a DPDK receiver that records what it receives into a
 * user-space producer ring (libtdm's tdm_uring.h), for tdmstat capture
 * --recorder ring:NAME.  A DPDK port never lets the kernel see its
 * packets, so neither tdmrx.ko nor the BPF or XDP recorders can record
 * them: the receiver pushes one record per frame itself, with the stamp it
 * has, and marks the ring after every burst and every empty poll.
 *
 * One port, one receive queue (a receiver with more queues runs a ring per
 * queue and tdmstat reads ring:A,B,...).  With -i the port is a virtual
 * PMD on a kernel device (net_af_packet, or net_af_xdp), and EAL runs
 * without hugepages or PCI devices, so it needs nothing but the device:
 * the example and the tests use it so.  After "--" EAL takes the caller's
 * own arguments instead (a NIC's PCI address, hugepages), and the first
 * port is used.
 *
 * The stamp: where the PMD offers RTE_ETH_RX_OFFLOAD_TIMESTAMP it is
 * switched on, and a frame whose mbuf carries the RX timestamp dynamic
 * field (RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME) is recorded with it, flagged
 * TDMRX_F_HW_TS: nanoseconds on the NIC's clock, as a PHC (tdmstat
 * --hw-offset maps a clock that is not CLOCK_TAI).  Every other frame gets
 * CLOCK_REALTIME read once per burst, as soon as the burst is seen,
 * flagged TDMRX_F_SW_TS as tdm-xsk-rx flags it: the af_packet and af_xdp
 * PMDs of DPDK 22.11 offer no RX timestamp.  The counts at the end are
 * exact: frames taken, records, ring-full drops, and the port's missed
 * frames (for net_af_packet its sockets' own drops, which that PMD does
 * not count).  Runs until SIGINT or SIGTERM
 * (or -d), then closes the ring, which ends the capture reading it.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <linux/if_packet.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "tdm_uring.h"
#include "tdm_util.h"

#define BURST		32
#define RX_DESC		1024
#define TX_DESC		64	/* some PMDs will not start without a TX queue */
#define POOL_MBUFS	4095	/* RX_DESC and the bursts in flight, with room */
#define POOL_CACHE	64
#define EAL_ARGS_MAX	32
/*
 * net_af_packet's socket ring (framecnt; 2 KiB frames): the PMD's 512
 * hold 50 ms at 10 kpps, less than a loaded host preempts a poller for.
 */
#define SOCK_FRAMES	4096
#define SOCK_FRAMES_MAX	(1u << 20)

struct rx {
	uint16_t port;
	bool port_started;
	struct rte_mempool *pool;
	struct tdm_uring *u;
	int ts_off;			/* the RX timestamp dynfield, or -1 */
	uint64_t ts_flag;		/* its ol_flags bit */
	uint64_t frames, records, dropped;
	uint64_t hw_stamps;
	bool af_packet;			/* the port is net_af_packet's */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tdm-dpdk-rx -i IFACE -n NAME [options]\n"
		"       tdm-dpdk-rx -n NAME [options] -- EAL-ARGS...\n"
		"A DPDK receiver that records the test packets it receives into the\n"
		"producer ring NAME, for tdmstat capture --recorder ring:NAME.\n"
		"options:\n"
		"  -i, --interface IF   a kernel device, through a virtual PMD; EAL runs\n"
		"                       with --no-huge --no-shconf --no-pci\n"
		"      --pmd af_packet|af_xdp  that PMD (default af_packet)\n"
		"      --socket-frames N  af_packet: frames in its socket's ring, a\n"
		"                       power of two (default 4096, of 2 KiB each)\n"
		"  -n, --ring NAME      the ring (/dev/shm/tdmrx-ring-NAME)\n"
		"  -r, --records N      records in the ring (default 65536)\n"
		"  -u, --port PORT      UDP destination port to record (repeat; default 8081)\n"
		"      --idle TIME      sleep TIME after a poll that found nothing\n"
		"                       (default 0: busy-poll, as DPDK does)\n"
		"  -d, --duration TIME  stop after TIME (default: at SIGINT or SIGTERM)\n"
		"  -q, --quiet          no messages but errors (EAL's: warnings on)\n"
		"  -h, --help           this help\n"
		"      --version        tdm-dpdk-rx's version\n"
		"  -- EAL-ARGS          EAL's arguments instead of -i's (a NIC, hugepages);\n"
		"                       the first port is used\n");
}

/*
 * EAL's arguments for -i: no hugepages, no shared files, no PCI scan, no
 * telemetry socket, the virtual PMD on the device, and the main lcore
 * free to run on any CPU it may (not pinned to CPU 0).
 */
static int eal_args_vdev(char **av, char *buf, size_t buflen,
			 const char *prog, const char *pmd, const char *ifname,
			 unsigned int frames, bool quiet)
{
	char cpus[256] = "";
	size_t used = 0, n = 0;
	cpu_set_t set;
	int ac = 0, cpu, len;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		len = snprintf(cpus + n, sizeof(cpus) - n, "%s%d",
			       n ? "," : "", cpu);
		if (len < 0 || (size_t)len >= sizeof(cpus) - n)
			return -1;
		n += (size_t)len;
	}
#define ARG(...) do {							\
		len = snprintf(buf + used, buflen - used, __VA_ARGS__);	\
		if (len < 0 || (size_t)len >= buflen - used)		\
			return -1;					\
		av[ac++] = buf + used;					\
		used += (size_t)len + 1;				\
	} while (0)
	ARG("%s", prog);
	ARG("--no-huge");
	ARG("-m");
	ARG("64");
	ARG("--no-shconf");
	ARG("--no-pci");
	ARG("--no-telemetry");
	ARG("--log-level=%s", quiet ? "warning" : "notice");
	ARG("--vdev");
	if (strcmp(pmd, "af_packet"))
		ARG("net_%s0,iface=%s", pmd, ifname);
	else
		ARG("net_af_packet0,iface=%s,framecnt=%u", ifname, frames);
	ARG("--lcores");
	ARG("0@(%s)", cpus);
#undef ARG
	av[ac] = NULL;
	return ac;
}

/*
 * The frames net_af_packet's sockets dropped (their rings full) since the
 * last call: DPDK 22.11's PMD does not count them in imissed, so they are
 * read here, with PACKET_STATISTICS (which resets them) on every AF_PACKET
 * socket of the process, which are the PMD's.  -1 if one cannot be read.
 */
static int64_t packet_socket_drops(void)
{
	struct tpacket_stats_v3 st;
	int64_t drops = 0;
	struct dirent *e;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		socklen_t len = sizeof(int);
		int fd, domain;

		fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == dirfd(d) ||
		    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) ||
		    domain != AF_PACKET)
			continue;
		len = sizeof(st);
		if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len)) {
			drops = -1;
			break;
		}
		drops += st.tp_drops;
	}
	closedir(d);
	return drops;
}

/* The first port: one RX queue (and one TX queue), the stamp switched on. */
static int rx_open(struct rx *r)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t nrx = RX_DESC, ntx = TX_DESC, port;
	int ret, socket;

	r->ts_off = -1;
	RTE_ETH_FOREACH_DEV(port)
		break;
	if (port >= RTE_MAX_ETHPORTS) {
		fprintf(stderr, "tdm-dpdk-rx: no DPDK port (EAL's messages above say why)\n");
		return -1;
	}
	r->port = port;
	ret = rte_eth_dev_info_get(port, &info);
	if (ret) {
		fprintf(stderr, "tdm-dpdk-rx: port %u: info: %s\n", port,
			strerror(-ret));
		return -1;
	}
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (!ret)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (ret) {
		fprintf(stderr, "tdm-dpdk-rx: port %u (%s): configure: %s\n",
			port, info.driver_name, strerror(-ret));
		return -1;
	}
	socket = rte_eth_dev_socket_id(port);
	r->pool = rte_pktmbuf_pool_create("tdm_dpdk_rx", POOL_MBUFS, POOL_CACHE,
					  0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  socket < 0 ? (int)SOCKET_ID_ANY : socket);
	if (!r->pool) {
		fprintf(stderr, "tdm-dpdk-rx: mbuf pool of %d: %s\n",
			POOL_MBUFS, rte_strerror(rte_errno));
		return -1;
	}
	ret = rte_eth_rx_queue_setup(port, 0, nrx, (unsigned int)socket, NULL,
				     r->pool);
	if (!ret)
		ret = rte_eth_tx_queue_setup(port, 0, ntx, (unsigned int)socket,
					     NULL);
	if (ret) {
		fprintf(stderr, "tdm-dpdk-rx: port %u (%s): queue: %s\n",
			port, info.driver_name, strerror(-ret));
		return -1;
	}
	ret = rte_eth_dev_start(port);
	if (ret) {
		fprintf(stderr, "tdm-dpdk-rx: port %u (%s): start: %s\n",
			port, info.driver_name, strerror(-ret));
		return -1;
	}
	r->port_started = true;
	r->af_packet = !strcmp(info.driver_name, "net_af_packet");
	/* The PMD registered the field when the offload went on. */
	if (conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_TIMESTAMP) {
		ret = rte_mbuf_dyn_rx_timestamp_register(&r->ts_off, &r->ts_flag);
		if (ret) {
			fprintf(stderr, "tdm-dpdk-rx: the RX timestamp field: %s\n",
				rte_strerror(rte_errno));
			return -1;
		}
	}
	rte_eth_stats_reset(port);
	/* From here on, as the port's counts. */
	if (r->af_packet && packet_socket_drops() < 0) {
		fprintf(stderr, "tdm-dpdk-rx: the af_packet sockets' drops: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* One burst: every frame recorded (or not a test packet), then freed. */
static unsigned int rx_burst(struct rx *r)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n, i;
	int64_t now;

	n = rte_eth_rx_burst(r->port, 0, pkts, BURST);
	if (!n)
		return 0;
	now = tdm_clock_ns(CLOCK_REALTIME);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		int64_t stamp = now;
		uint16_t flag = TDMRX_F_SW_TS;
		int rc;

		if (r->ts_off >= 0 && (m->ol_flags & r->ts_flag)) {
			stamp = (int64_t)*RTE_MBUF_DYNFIELD(m, r->ts_off,
							    rte_mbuf_timestamp_t *);
			flag = TDMRX_F_HW_TS;
		}
		/* The headers are in the first segment. */
		rc = tdm_uring_push_frame(r->u, rte_pktmbuf_mtod(m, void *),
					  rte_pktmbuf_data_len(m), stamp, flag);
		r->records += rc == 0;
		r->dropped += rc < 0;
		r->hw_stamps += rc <= 0 && flag == TDMRX_F_HW_TS;
	}
	r->frames += n;
	rte_pktmbuf_free_bulk(pkts, n);
	return n;
}

static void rx_report(struct rx *r)
{
	struct rte_eth_stats st = { 0 };
	int64_t drops;

	if (r->port_started)
		rte_eth_stats_get(r->port, &st);
	if (r->af_packet) {
		drops = packet_socket_drops();
		if (drops < 0)
			fprintf(stderr, "tdm-dpdk-rx: the af_packet sockets' drops: %s\n",
				strerror(errno));
		else
			st.imissed += (uint64_t)drops;
	}
	fprintf(stderr, "tdm-dpdk-rx: %llu frames, %llu records, %llu dropped (ring full), %llu hw stamps; port: %llu missed, %llu errors, %llu no mbuf\n",
		(unsigned long long)r->frames,
		(unsigned long long)r->records,
		(unsigned long long)r->dropped,
		(unsigned long long)r->hw_stamps,
		(unsigned long long)st.imissed,
		(unsigned long long)st.ierrors,
		(unsigned long long)st.rx_nombuf);
}

static void rx_close(struct rx *r)
{
	if (r->port_started) {
		rte_eth_dev_stop(r->port);
		rte_eth_dev_close(r->port);
	}
	rte_mempool_free(r->pool);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "pmd", required_argument, NULL, 2 },
		{ "ring", required_argument, NULL, 'n' },
		{ "records", required_argument, NULL, 'r' },
		{ "port", required_argument, NULL, 'u' },
		{ "idle", required_argument, NULL, 3 },
		{ "socket-frames", required_argument, NULL, 4 },
		{ "duration", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 1 },
		{ NULL, 0, NULL, 0 },
	};
	const char *ifname = NULL, *name = NULL, *pmd = "af_packet";
	uint64_t v, duration = 0, idle = 0;
	unsigned int frames = SOCK_FRAMES;
	char *eal_av[EAL_ARGS_MAX + 1];
	struct tdm_uring_cfg cfg = { 0 };
	char err[256], eal_buf[1024];
	int64_t end = INT64_MAX;
	struct rx r = { 0 };
	bool quiet = false;
	int c, eal_ac, rc = 1;

	while ((c = getopt_long(argc, argv, "+i:n:r:u:d:qh", lo, NULL)) != -1) {
		err[0] = '\0';
		switch (c) {
		case 'i':
			ifname = optarg;
			break;
		case 2:
			if (strcmp(optarg, "af_packet") && strcmp(optarg, "af_xdp")) {
				snprintf(err, sizeof(err), "af_packet or af_xdp");
				goto bad;
			}
			pmd = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'r':
			if (tdm_uring_opt_records(&cfg, optarg, err, sizeof(err)))
				goto bad;
			break;
		case 'u':
			if (tdm_uring_opt_port(&cfg, optarg, err, sizeof(err)))
				goto bad;
			break;
		case 3:
			if (tdm_parse_time(optarg, &idle, err, sizeof(err)))
				goto bad;
			break;
		case 4:
			if (tdm_parse_u64(optarg, SOCK_FRAMES_MAX, &v, err, sizeof(err)) ||
			    v < 2 || (v & (v - 1))) {
				snprintf(err, sizeof(err), "a power of two from 2 to %u",
					 SOCK_FRAMES_MAX);
				goto bad;
			}
			frames = (unsigned int)v;
			break;
		case 'd':
			if (tdm_parse_time(optarg, &duration, err, sizeof(err)))
				goto bad;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 1:
			printf("tdm-dpdk-rx %s\n", TDM_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* getopt_long stops at "--" (the "+": and at the first non-option) */
	if (!name || (optind < argc && strcmp(argv[optind - 1], "--")) ||
	    !ifname == (optind == argc) || argc - optind > EAL_ARGS_MAX - 1) {
		fprintf(stderr, "tdm-dpdk-rx: %s\n",
			!name ? "-n NAME is needed" :
			optind < argc && strcmp(argv[optind - 1], "--") ?
			"no arguments besides the options (EAL's go after --)" :
			ifname && optind < argc ? "-i IFACE or -- EAL-ARGS, not both" :
			!ifname && optind == argc ? "-i IFACE or -- EAL-ARGS is needed" :
			"too many EAL arguments");
		usage(stderr);
		return 2;
	}
	if (ifname && !if_nametoindex(ifname)) {
		fprintf(stderr, "tdm-dpdk-rx: no such device: %s\n", ifname);
		return 1;
	}
	if (!cfg.nports) {
		cfg.ports[0] = 8081;
		cfg.nports = 1;
	}
	if (ifname) {
		eal_ac = eal_args_vdev(eal_av, eal_buf, sizeof(eal_buf), argv[0],
				       pmd, ifname, frames, quiet);
		if (eal_ac < 0) {
			fprintf(stderr, "tdm-dpdk-rx: EAL's arguments for %s do not fit\n",
				ifname);
			return 1;
		}
	} else {
		eal_av[0] = argv[0];
		for (eal_ac = 1; optind < argc; optind++)
			eal_av[eal_ac++] = argv[optind];
		eal_av[eal_ac] = NULL;
	}
	/* EAL takes over the process: threads, memory, the PMD's device. */
	if (rte_eal_init(eal_ac, eal_av) < 0) {
		fprintf(stderr, "tdm-dpdk-rx: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (tdm_stop_on_signals()) {
		fprintf(stderr, "tdm-dpdk-rx: signals: %s\n", strerror(errno));
		goto eal;
	}
	r.u = tdm_uring_create(name, &cfg, err, sizeof(err));
	if (!r.u) {
		fprintf(stderr, "tdm-dpdk-rx: %s\n", err);
		goto eal;
	}
	if (rx_open(&r))
		goto out;
	if (duration)
		end = tdm_mono_ns() + (int64_t)duration;
	if (!quiet) {
		struct rte_eth_dev_info info;

		rte_eth_dev_info_get(r.port, &info);
		fprintf(stderr, "tdm-dpdk-rx: receiving on port %u (%s%s%s), stamps %s, into ring %s\n",
			r.port, info.driver_name, ifname ? " on " : "",
			ifname ? ifname : "",
			r.ts_off >= 0 ? "the PMD's where it gives them" : "software",
			name);
	}
	while (!tdm_stop && tdm_mono_ns() < end) {
		if (rx_burst(&r) || !idle) {
			tdm_uring_mark(r.u);
			continue;
		}
		/* An empty poll: what comes next is stamped later. */
		tdm_uring_mark(r.u);
		nanosleep(&(struct timespec){ .tv_sec = (time_t)(idle / 1000000000),
					      .tv_nsec = (long)(idle % 1000000000) },
			  NULL);
	}
	/* What the port holds still: received before the stop. */
	while (rx_burst(&r))
		;
	tdm_uring_mark(r.u);
	rc = 0;
out:
	if (!quiet || rc)
		rx_report(&r);
	rx_close(&r);
	tdm_uring_close(r.u);
eal:
	rte_eal_cleanup();
	return rc;
bad:
	fprintf(stderr, "tdm-dpdk-rx: option %s: %s\n", argv[optind - 1], err);
	return 2;
}
