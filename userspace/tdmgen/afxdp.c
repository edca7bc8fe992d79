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
#define MAX_KICK	BYPASS_MAX_KICK

struct xtx {
	struct bypass_tx bt;		/* first: the loop's view */
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod tx, fill;
	struct xsk_ring_cons comp;
	void *area;
	uint64_t free_addr[NUM_FRAMES];
	unsigned int nfree;
	struct tdm_frame_addr addr;
	size_t len;			/* a frame, without FCS */
	const char *ifname;
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

/* The loop's two steps (struct bypass_tx): errors said. */
static int xtx_tx_prepare(struct bypass_tx *t, struct tdm_pkt *pkt,
			  unsigned int n, size_t payload)
{
	struct xtx *x = (struct xtx *)t;

	if (!xtx_prepare(x, pkt, n, payload))
		return 0;
	fprintf(stderr, "tdmgen: AF_XDP send on %s: %s\n", x->ifname,
		strerror(errno));
	return -1;
}

/* Frames built but not sent stay free: the next kick builds them again. */
static int xtx_tx_kick(struct bypass_tx *t, unsigned int k, unsigned int n,
		       const int64_t *launch, int64_t gnow, int64_t *now,
		       uint64_t *retries)
{
	struct xtx *x = (struct xtx *)t;

	(void)n;
	(void)launch;	/* never set: no launch time here */
	(void)gnow;
	if (!k || !xtx_kick(x, k, now, retries))
		return 0;
	fprintf(stderr, "tdmgen: AF_XDP send on %s: %s\n", x->ifname,
		strerror(errno));
	return -1;
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

int afxdp_run(const struct opts *o, struct sender *s)
{
	struct xtx *x = calloc(1, sizeof(*x));
	struct tdmgate *g = NULL;
	int ifindex, rc = 1;

	if (!x) {
		fprintf(stderr, "tdmgen: out of memory\n");
		return 1;
	}
	ifindex = bypass_setup(o, s, FRAME_SIZE - XSK_UMEM__DEFAULT_FRAME_HEADROOM,
			       "frame", &x->addr, &g);
	if (ifindex < 0)
		goto out;
	x->len = TDM_FRAME_HDR_LEN + o->size;
	x->ifname = o->ifname;
	x->bt = (struct bypass_tx){ .len = (uint32_t)x->len, .max = MAX_KICK,
				    .prepare = xtx_tx_prepare,
				    .kick = xtx_tx_kick };
	s->launch_time = launch_time(ifindex);
	if (xtx_open(o, x))
		goto out;
	rc = bypass_send(o, s, &x->bt, g);
out:
	xtx_close(x);
	tdmgate_destroy(g);
	free(x);
	return rc;
}
