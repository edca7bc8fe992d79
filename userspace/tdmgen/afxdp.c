// SPDX-License-Identifier: GPL-2.0
/*
 * tdmgen --stack afxdp: the same stamped datagrams as AF_XDP frames (libxdp's
 * xsk helpers), which leave through the driver (__dev_direct_xmit() in copy
 * mode, the driver's own ring in zero-copy mode) and never pass the
 * device's root qdisc.  The tdmwin qdisc on the device still holds the
 * plan: libtdmgate follows it (tdmgate_follow()) and answers, for each
 * frame, the instant it may start; tdmgen waits until then (sleeping, then
 * busy-polling the last --spin) and kicks the TX ring.  Frames that fit
 * behind it at once (tdmgate_try()) go in the same kick, up to --batch.
 *
 * Launch time (XDP_TXMD_FLAGS_LAUNCH_TIME, 6.15+, igc and stmmac) would let
 * the NIC wait instead: it is looked up in the device's AF_XDP features
 * (netdev generic netlink) and reported, but this build gates in software
 * on every device (libxdp 1.3 cannot give the umem TX metadata room).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "tdm_pkt.h"
#include "tdm_util.h"
#include "tdm_xdp.h"
#include "tdmgate.h"
#include "tdmgen.h"

#define NUM_FRAMES	4096
#define FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE
#define RING_SIZE	2048
/* Copy mode sends at most 32 frames a kick (the kernel's TX_BATCH_SIZE). */
#define MAX_KICK	32

struct xtx {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod tx, fill;
	struct xsk_ring_cons comp;
	void *area;
	uint64_t free_addr[NUM_FRAMES];
	unsigned int nfree;
	struct tdm_frame_addr addr;
	size_t len;			/* a frame, without FCS */
};

/* ---- the AF_XDP socket ---------------------------------------------------- */

static int xtx_open(const struct opts *o, struct xtx *x)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = RING_SIZE,
		/* TX only: no XDP program for RX redirects. */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	};
	int err;
	unsigned int i;

	x->area = mmap(NULL, (size_t)NUM_FRAMES * FRAME_SIZE,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		fprintf(stderr, "tdmgen: umem: %s\n", strerror(errno));
		return -1;
	}
	err = xsk_umem__create(&x->umem, x->area, (uint64_t)NUM_FRAMES * FRAME_SIZE,
			       &x->fill, &x->comp, NULL);
	if (!err)
		err = xsk_socket__create(&x->xsk, o->ifname, o->queue, x->umem,
					 NULL, &x->tx, &cfg);
	if (err) {
		fprintf(stderr, "tdmgen: AF_XDP socket on %s queue %u: %s\n",
			o->ifname, o->queue, strerror(-err));
		return -1;
	}
	for (i = 0; i < NUM_FRAMES; i++)
		x->free_addr[i] = (uint64_t)i * FRAME_SIZE;
	x->nfree = NUM_FRAMES;
	return 0;
}

static void xtx_close(struct xtx *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, (size_t)NUM_FRAMES * FRAME_SIZE);
}

/* Frames the kernel has sent back to the free list. */
static void xtx_reap(struct xtx *x)
{
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&x->comp, RING_SIZE, &idx);
	for (i = 0; i < n; i++)
		x->free_addr[x->nfree++] = *xsk_ring_cons__comp_addr(&x->comp,
								     idx + i);
	if (n)
		xsk_ring_cons__release(&x->comp, n);
}

/*
 * Build @n (<= MAX_KICK) frames of @pkt, sequence numbers from pkt->seq
 * on, in the frames the next kick takes (the last free ones), before the
 * gate is asked: between its answer and the kick only the stamps are
 * written.  0, or -1 with errno.
 */
static int xtx_prepare(struct xtx *x, struct tdm_pkt *pkt, unsigned int n,
		       size_t payload)
{
	int fd = xsk_socket__fd(x->xsk);
	uint32_t i;

	xtx_reap(x);
	while (x->nfree < n) {
		if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			return -1;
		xtx_reap(x);
	}
	for (i = 0; i < n; i++) {
		tdm_frame_encode(xsk_umem__get_data(x->area,
						    x->free_addr[x->nfree - 1 - i]),
				 x->len, &x->addr, pkt, payload);
		pkt->seq++;
	}
	return 0;
}

/*
 * Send the first @n frames xtx_prepare() built, stamped with the time
 * just before the kick (*now): 0, or -1 with errno.
 */
static int xtx_kick(struct xtx *x, unsigned int n, int64_t *now,
		    uint64_t *retries)
{
	int fd = xsk_socket__fd(x->xsk);
	uint32_t idx, i;

	while (xsk_ring_prod__reserve(&x->tx, n, &idx) != n) {
		if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			return -1;
		xtx_reap(x);
	}
	*now = tdm_clock_ns(CLOCK_TAI);
	for (i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		d->addr = x->free_addr[--x->nfree];
		d->len = (uint32_t)x->len;
		tdm_pkt_stamp((uint8_t *)xsk_umem__get_data(x->area, d->addr) +
			      TDM_FRAME_HDR_LEN, *now);
	}
	xsk_ring_prod__submit(&x->tx, n);
	/* Copy mode sends in the call; EAGAIN: frames left, or the driver's
	 * queue was full (ENOBUFS): kick again.
	 */
	while (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
		if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			return -1;
		(*retries)++;
		xtx_reap(x);
	}
	return 0;
}

/* ---- the gate --------------------------------------------------------------- */

/* What the device offers for launch time, as said in the summary. */
static const char *launch_time(int ifindex)
{
	uint32_t f;

	if (tdm_xsk_features(ifindex, &f, NULL, 0))
		return errno == ENOENT ? "not reported by this kernel" :
		       "unknown (netdev netlink failed)";
	return f & TDM_XSK_TX_LAUNCH_TIME ? "offered by the driver, unused" :
	       "not offered by the driver";
}

/* ---- sending ----------------------------------------------------------------- */

/*
 * Data: packets due at --rate (all at once without one), each when the
 * gate lets its frame start (the first of a kick waits for it, the rest
 * join while tdmgate_try() books them at once).
 */
static int send_data(const struct opts *o, struct sender *s, struct xtx *x,
		     struct tdmgate *g)
{
	struct tdm_pkt pkt = { .sender = o->sender,
			       .plan_version = o->plan_version };
	unsigned int max = o->batch < MAX_KICK ? o->batch : MAX_KICK;
	int64_t start, end = INT64_MAX, now, due, t;
	uint32_t len = (uint32_t)x->len;
	unsigned int n;
	int err;

	start = begin(o);
	if (o->duration_ns)
		end = start + (int64_t)o->duration_ns;
	while (!tdm_stop && (!o->count || s->sent < o->count)) {
		now = tdm_clock_ns(CLOCK_TAI);
		if (now >= end)
			break;
		/* Packets whose time has come, up to a kick. */
		n = pace_due(o, s, start, now, max, &due);
		if (!n) {
			sleep_until(CLOCK_TAI, due < end ? due : end, SPIN_NS);
			continue;
		}
		pkt.seq = s->sent;
		if (xtx_prepare(x, &pkt, n, o->size))
			goto fail;
		if (g) {
			unsigned int k;

			/* The deadline on the gate's clock. */
			t = end == INT64_MAX ? TDMGATE_NEVER :
			    tdmgate_now(g) + (end - now);
			err = gate_frame(g, len, t, &t, o->ifname);
			if (err > 0)
				continue;
			if (err)
				return 1;
			for (k = 1; k < n && !tdmgate_try(g, len, &t); k++)
				;
			n = k;
		}
		if (xtx_kick(x, n, &now, &s->retries))
			goto fail;
		sender_sent(o, s, n, now);
	}
	return 0;
fail:
	fprintf(stderr, "tdmgen: AF_XDP send on %s: %s\n", o->ifname,
		strerror(errno));
	return -1;
}

/* The end markers, through the gate as well. */
static int send_markers(const struct opts *o, struct sender *s, struct xtx *x,
			struct tdmgate *g)
{
	struct tdm_pkt pkt = { .flags = TDM_PKT_F_END, .sender = o->sender,
			       .plan_version = o->plan_version, .sent = s->sent };
	unsigned int i;
	int64_t t, now;

	if (o->markers && o->end_wait_ns)
		sleep_until(CLOCK_TAI, tdm_clock_ns(CLOCK_TAI) +
				    (int64_t)o->end_wait_ns, SPIN_NS);
	for (i = 0; i < o->markers; i++) {
		pkt.seq = s->sent;
		if (xtx_prepare(x, &pkt, 1, o->size))
			goto fail;
		/* A marker the gate holds for 10 s is given up. */
		if (g && gate_frame(g, (uint32_t)x->len,
				    tdmgate_now(g) + 10000000000LL, &t, o->ifname)) {
			fprintf(stderr, "tdmgen: %s: end marker %u not sent\n",
				o->ifname, i);
			return -1;
		}
		if (xtx_kick(x, 1, &now, &s->retries))
			goto fail;
		if (i + 1 < o->markers)
			usleep(1000);
	}
	return 0;
fail:
	fprintf(stderr, "tdmgen: AF_XDP send on %s: %s\n", o->ifname,
		strerror(errno));
	return -1;
}

int afxdp_run(const struct opts *o, struct sender *s)
{
	struct xtx *x = calloc(1, sizeof(*x));
	struct tdmgate *g = NULL;
	int ifindex, rc = 1;

	if (!x) {
		fprintf(stderr, "tdmgen: out of memory\n");
		return 1;
	}
	ifindex = (int)if_nametoindex(o->ifname);
	if (!ifindex) {
		fprintf(stderr, "tdmgen: %s: %s\n", o->ifname, strerror(errno));
		goto out;
	}
	if (bypass_frame_addr(o, s->fd, &x->addr))
		goto out;
	x->len = TDM_FRAME_HDR_LEN + o->size;
	if (x->len > FRAME_SIZE - XSK_UMEM__DEFAULT_FRAME_HEADROOM) {
		fprintf(stderr, "tdmgen: --stack afxdp sends one frame a datagram: --size at most %d\n",
			FRAME_SIZE - XSK_UMEM__DEFAULT_FRAME_HEADROOM - TDM_FRAME_HDR_LEN);
		goto out;
	}
	s->launch_time = launch_time(ifindex);
	if (!o->ungated) {
		g = bypass_gate(o, ifindex);
		if (!g)
			goto out;
	}
	if (xtx_open(o, x))
		goto out;
	rc = send_data(o, s, x, g);
	if (rc <= 0) {
		tdm_stop = 0;	/* a ^C ends the data, the markers still go out */
		if (send_markers(o, s, x, g))
			rc = -1;
	}
out:
	xtx_close(x);
	tdmgate_destroy(g);
	free(x);
	return rc;
}
