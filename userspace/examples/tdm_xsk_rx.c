// SPDX-License-Identifier: GPL-2.0
/*
 * tdm-xsk-rx: an AF_XDP receiver that records what it receives into a
 * user-space producer ring (libtdm's tdm_uring.h), for tdmstat capture
 * --recorder ring:NAME.  The example of how a kernel-bypass receiver
 * records: packets taken at the XDP hook never reach tdmrx's hook or tc
 * ingress, so the receiver pushes one record per frame itself, with the
 * stamp it has, and marks the ring after every batch and every empty poll.
 *
 * One socket on one queue (libxdp's xsk helpers; its XDP program goes on
 * through libxdp's dispatcher, so other XDP programs may share the device),
 * copy or zero-copy as the driver offers (--mode), every frame taken: it
 * is recorded if it is UDP to one of the ports, then given back to the
 * fill ring.  The stamp is CLOCK_REALTIME read once per batch, as soon as
 * the batch is seen (TDMRX_F_SW_TS): AF_XDP's copy mode carries no
 * hardware stamp.  Runs until SIGINT or SIGTERM (or -d), then closes the
 * ring, which ends the capture reading it.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "tdm_uring.h"
#include "tdm_util.h"

#define FRAMES		4096
#define FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE
#define BATCH		64

struct rx {
	void *area;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq, rxq;
	struct tdm_uring *u;
	uint64_t frames, records, dropped;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tdm-xsk-rx -i IFACE -n NAME [options]\n"
		"An AF_XDP receiver that records the test packets it receives into the\n"
		"producer ring NAME, for tdmstat capture --recorder ring:NAME.\n"
		"options:\n"
		"  -i, --interface IF   the device\n"
		"  -Q, --queue N        its receive queue (default 0)\n"
		"  -n, --ring NAME      the ring (/dev/shm/tdmrx-ring-NAME)\n"
		"  -r, --records N      records in the ring (default 65536)\n"
		"  -u, --port PORT      UDP destination port to record (repeat; default 8081)\n"
		"  -m, --mode skb|native  the XDP mode (default skb: any device)\n"
		"  -d, --duration TIME  stop after TIME (default: at SIGINT or SIGTERM)\n"
		"  -q, --quiet          no messages but errors\n"
		"  -h, --help           this help\n"
		"      --version        tdm-xsk-rx's version\n");
}

/* The umem, every frame in the fill ring, the socket on ifname's queue. */
static int rx_open(struct rx *r, const char *ifname, unsigned int queue,
		   uint32_t xdp_flags)
{
	struct xsk_socket_config sc = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.xdp_flags = xdp_flags,
		.bind_flags = xdp_flags & XDP_FLAGS_SKB_MODE ? XDP_COPY : 0,
	};
	struct xsk_umem_config uc = {
		.fill_size = FRAMES,
		.comp_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.frame_size = FRAME_SIZE,
	};
	uint32_t idx, i;
	int ret;

	r->area = mmap(NULL, (size_t)FRAMES * FRAME_SIZE,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (r->area == MAP_FAILED) {
		r->area = NULL;
		fprintf(stderr, "tdm-xsk-rx: umem: %s\n", strerror(errno));
		return -1;
	}
	ret = xsk_umem__create(&r->umem, r->area, (uint64_t)FRAMES * FRAME_SIZE,
			       &r->fq, &r->cq, &uc);
	if (ret) {
		fprintf(stderr, "tdm-xsk-rx: xsk_umem__create: %s\n",
			strerror(-ret));
		return -1;
	}
	ret = xsk_socket__create(&r->xsk, ifname, queue, r->umem, &r->rxq,
				 NULL, &sc);
	if (ret) {
		fprintf(stderr, "tdm-xsk-rx: AF_XDP socket on %s queue %u: %s%s\n",
			ifname, queue, strerror(-ret),
			ret == -EPERM ? " (needs CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW)" : "");
		return -1;
	}
	if (xsk_ring_prod__reserve(&r->fq, FRAMES, &idx) != FRAMES) {
		fprintf(stderr, "tdm-xsk-rx: the fill ring takes fewer than %d frames\n",
			FRAMES);
		return -1;
	}
	for (i = 0; i < FRAMES; i++)
		*xsk_ring_prod__fill_addr(&r->fq, idx + i) =
			(uint64_t)i * FRAME_SIZE;
	xsk_ring_prod__submit(&r->fq, FRAMES);
	return 0;
}

static void rx_close(struct rx *r)
{
	if (r->xsk)
		xsk_socket__delete(r->xsk);
	if (r->umem)
		xsk_umem__delete(r->umem);
	if (r->area)
		munmap(r->area, (size_t)FRAMES * FRAME_SIZE);
}

/* One batch: every frame recorded (or not a test packet), then refilled. */
static void rx_batch(struct rx *r)
{
	uint32_t idx_rx, idx_fq, n, i;
	int64_t stamp;

	n = xsk_ring_cons__peek(&r->rxq, BATCH, &idx_rx);
	if (!n)
		return;
	stamp = tdm_clock_ns(CLOCK_REALTIME);
	/* Room for the frames' return: the fill ring holds every frame. */
	while (xsk_ring_prod__reserve(&r->fq, n, &idx_fq) != n)
		;
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&r->rxq,
								 idx_rx + i);
		uint64_t addr = xsk_umem__add_offset_to_addr(d->addr);
		int rc = tdm_uring_push_frame(r->u,
					      xsk_umem__get_data(r->area, addr),
					      d->len, stamp, TDMRX_F_SW_TS);

		r->records += rc == 0;
		r->dropped += rc < 0;
		*xsk_ring_prod__fill_addr(&r->fq, idx_fq + i) =
			xsk_umem__extract_addr(d->addr);
	}
	r->frames += n;
	xsk_ring_prod__submit(&r->fq, n);
	xsk_ring_cons__release(&r->rxq, n);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "queue", required_argument, NULL, 'Q' },
		{ "ring", required_argument, NULL, 'n' },
		{ "records", required_argument, NULL, 'r' },
		{ "port", required_argument, NULL, 'u' },
		{ "mode", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 1 },
		{ NULL, 0, NULL, 0 },
	};
	struct tdm_uring_cfg cfg = { 0 };
	const char *ifname = NULL, *name = NULL;
	uint32_t xdp_flags = XDP_FLAGS_SKB_MODE;
	uint64_t v, duration = 0;
	unsigned int queue = 0;
	int64_t end = INT64_MAX;
	struct rx r = { 0 };
	bool quiet = false;
	char err[256];
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "i:Q:n:r:u:m:d:qh", lo, NULL)) != -1) {
		err[0] = '\0';
		switch (c) {
		case 'i':
			ifname = optarg;
			break;
		case 'Q':
			if (tdm_parse_u64(optarg, UINT32_MAX, &v, err, sizeof(err)))
				goto bad;
			queue = (unsigned int)v;
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
		case 'm':
			if (!strcmp(optarg, "skb")) {
				xdp_flags = XDP_FLAGS_SKB_MODE;
			} else if (!strcmp(optarg, "native")) {
				xdp_flags = XDP_FLAGS_DRV_MODE;
			} else {
				snprintf(err, sizeof(err), "skb or native");
				goto bad;
			}
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
			printf("tdm-xsk-rx %s\n", TDM_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !ifname || !name) {
		fprintf(stderr, "tdm-xsk-rx: %s\n", optind < argc ?
			"no arguments besides the options" :
			"-i IFACE and -n NAME are needed");
		usage(stderr);
		return 2;
	}
	if (!if_nametoindex(ifname)) {
		fprintf(stderr, "tdm-xsk-rx: no such device: %s\n", ifname);
		return 1;
	}
	if (!cfg.nports) {
		cfg.ports[0] = 8081;
		cfg.nports = 1;
	}
	cfg.cpu = (uint16_t)queue;
	if (tdm_stop_on_signals()) {
		fprintf(stderr, "tdm-xsk-rx: signals: %s\n", strerror(errno));
		return 1;
	}
	r.u = tdm_uring_create(name, &cfg, err, sizeof(err));
	if (!r.u) {
		fprintf(stderr, "tdm-xsk-rx: %s\n", err);
		return 1;
	}
	if (rx_open(&r, ifname, queue, xdp_flags))
		goto out;
	if (duration)
		end = tdm_mono_ns() + (int64_t)duration;
	if (!quiet)
		fprintf(stderr, "tdm-xsk-rx: receiving on %s queue %u (%s mode) into ring %s\n",
			ifname, queue, xdp_flags & XDP_FLAGS_SKB_MODE ? "skb" : "native",
			name);
	while (!tdm_stop && tdm_mono_ns() < end) {
		struct pollfd p = { .fd = xsk_socket__fd(r.xsk), .events = POLLIN };

		if (poll(&p, 1, 10) < 0 && errno != EINTR) {
			fprintf(stderr, "tdm-xsk-rx: poll: %s\n", strerror(errno));
			goto out;
		}
		rx_batch(&r);
		/* After the batch (and after an empty poll): what comes next
		 * is stamped later.
		 */
		tdm_uring_mark(r.u);
	}
	rc = 0;
out:
	if (!quiet || rc)
		fprintf(stderr, "tdm-xsk-rx: %llu frames, %llu records, %llu dropped (ring full)\n",
			(unsigned long long)r.frames,
			(unsigned long long)r.records,
			(unsigned long long)r.dropped);
	rx_close(&r);
	tdm_uring_close(r.u);
	return rc;
bad:
	fprintf(stderr, "tdm-xsk-rx: option %s: %s\n", argv[optind - 1], err);
	return 2;
}
