// SPDX-License-Identifier: GPL-2.0
/*
 * The user side of tdmrx.ko: generic netlink control with libmnl and the
 * reader of the per-CPU record rings mapped from /dev/tdmrx.
 *
 * Netlink through libtdm's client (tdm_nl.c): one request at a time,
 * extended acks so that a refusal carries the kernel's own words
 * ("kernel: tdmrx is attached to eth1 by port id 1234").
 *
 * The ring protocol, with its barriers A-D, is described once in
 * kmod/uapi/linux/tdmrx.h (and in kmod/tdmrx.c); this file is the consumer
 * side: (C) load-acquire of prod, read the records, (D) store-release of
 * cons.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "tdm_util.h"
#include "tdm_nl.h"
#include "tdm_rx.h"

#define RX_DEV_PATH	"/dev/" TDMRX_DEV_NAME
#define RX_SEND_SIZE	1024
/* Release cons at least every this many records within one batch. */
#define RX_RELEASE_BATCH 256


/* ---- the ring reader ------------------------------------------------------ */

void tdm_rx_ring_init(struct tdm_rx_ring *r, void *base)
{
	r->prod = base;
	r->cons = (struct tdmrx_ring_cons *)((char *)base + TDMRX_PAGE);
	r->rec = (const struct tdmrx_record *)((char *)base +
					       TDMRX_RING_DATA_OFF);
	r->mask = r->prod->size ? r->prod->size - 1 : 0;
	r->mark_ns = INT64_MIN;
	/* (C) */
	r->cached_prod = __atomic_load_n(&r->prod->prod, __ATOMIC_ACQUIRE);
	r->cached_cons = __atomic_load_n(&r->cons->cons, __ATOMIC_RELAXED);
}

/* Hand over [cached_cons, prod); *stopped when cb asked to stop. */
static size_t ring_drain(struct tdm_rx_ring *r, tdm_rx_cb cb, void *ctx,
			 size_t max, bool *stopped)
{
	uint64_t size = (uint64_t)r->mask + 1;
	uint64_t cons = r->cached_cons, prod, used;
	int64_t mark;
	size_t n = 0;

	if (!r->prod || !r->prod->size)
		return 0;
	/* The watermark before prod: it is store-released after the prod of
	 * the packet it was taken for, so what follows this prod was hooked
	 * no earlier.  0 means none yet; it never goes back.
	 */
	mark = __atomic_load_n(&r->prod->mark_ns, __ATOMIC_ACQUIRE);
	if (mark > 0 && mark > r->mark_ns)
		r->mark_ns = mark;
	prod = __atomic_load_n(&r->prod->prod, __ATOMIC_ACQUIRE);	/* (C) */
	r->cached_prod = prod;
	used = prod - cons;
	if ((int64_t)used < 0)
		cons = prod;		/* we claim more than was written */
	else if (used > size)
		cons = prod - size;	/* cannot be: the kernel never overwrites */

	while (cons != prod && (!max || n < max)) {
		const struct tdmrx_record *rec = &r->rec[cons & r->mask];
		int stop = cb ? cb(ctx, rec) : 0;

		cons++;
		n++;
		if (stop) {
			*stopped = true;
			break;
		}
		if (!(n % RX_RELEASE_BATCH))	/* (D): slots free early */
			__atomic_store_n(&r->cons->cons, cons, __ATOMIC_RELEASE);
	}
	if (cons != r->cached_cons || n)
		__atomic_store_n(&r->cons->cons, cons, __ATOMIC_RELEASE); /* (D) */
	r->cached_cons = cons;
	return n;
}

size_t tdm_rx_ring_drain(struct tdm_rx_ring *r, tdm_rx_cb cb, void *ctx,
			 size_t max)
{
	bool stopped = false;

	return ring_drain(r, cb, ctx, max, &stopped);
}

size_t tdm_rx_drain(struct tdm_rx *rx, tdm_rx_cb cb, void *ctx, size_t max)
{
	bool stopped = false;
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < rx->nr_rings && !stopped; i++) {
		if (max && n >= max)
			break;
		n += ring_drain(&rx->rings[i], cb, ctx, max ? max - n : 0,
				&stopped);
	}
	return n;
}

uint64_t tdm_rx_rings_dropped(const struct tdm_rx_ring *rings, unsigned int n)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += __atomic_load_n(&rings[i].prod->dropped,
				       __ATOMIC_RELAXED);
	return sum;
}

uint64_t tdm_rx_dropped(const struct tdm_rx *rx)
{
	return tdm_rx_rings_dropped(rx->rings, rx->nr_rings);
}

bool tdm_rx_ring_finished(const struct tdm_rx_ring *r)
{
	/* detached before prod: then prod is final (kernel release) */
	return __atomic_load_n(&r->prod->detached, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&r->prod->prod, __ATOMIC_ACQUIRE) ==
	       r->cached_cons;
}

bool tdm_rx_rings_finished(const struct tdm_rx_ring *rings, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!tdm_rx_ring_finished(&rings[i]))
			return false;
	return n > 0;
}

bool tdm_rx_finished(const struct tdm_rx *rx)
{
	return tdm_rx_rings_finished(rx->rings, rx->nr_rings);
}

/* ---- netlink ---------------------------------------------------------------- */

static int resolve_family(struct tdm_rx *rx, char *err, size_t errlen)
{
	if (!tdm_genl_family(&rx->nl, TDMRX_GENL_NAME, &rx->family, err, errlen))
		return 0;
	if (errno == ENOENT)
		tdm_set_err(err, errlen,
			    "tdmrx.ko is not loaded (no generic netlink family '%s')",
			    TDMRX_GENL_NAME);
	return -1;
}

/* ---- replies -------------------------------------------------------------------- */

static int ports_cb(const struct nlattr *a, void *data)
{
	struct tdm_rx_info *info = data;

	if (mnl_attr_get_type(a) == TDMRX_A_PORT &&
	    mnl_attr_validate(a, MNL_TYPE_U16) == 0 &&
	    info->nports < TDMRX_MAX_PORTS)
		info->ports[info->nports++] = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static int info_attr_cb(const struct nlattr *a, void *data)
{
	struct tdm_rx_info *info = data;
	uint16_t len = mnl_attr_get_payload_len(a);

	switch (mnl_attr_get_type(a)) {
	case TDMRX_A_ATTACHED:
		if (!mnl_attr_validate(a, MNL_TYPE_U8))
			info->attached = mnl_attr_get_u8(a);
		break;
	case TDMRX_A_IFINDEX:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			info->ifindex = mnl_attr_get_u32(a);
		break;
	case TDMRX_A_IFNAME:
		if (!mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
			snprintf(info->ifname, sizeof(info->ifname), "%s",
				 mnl_attr_get_str(a));
		break;
	case TDMRX_A_PORTS:
		mnl_attr_parse_nested(a, ports_cb, info);
		break;
	case TDMRX_A_OWNER:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			info->owner = mnl_attr_get_u32(a);
		break;
	case TDMRX_A_SESSION:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			info->session = mnl_attr_get_u32(a);
		break;
	case TDMRX_A_NR_RINGS:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			info->nr_rings = mnl_attr_get_u32(a);
		break;
	case TDMRX_A_RING_RECORDS:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			info->ring_records = mnl_attr_get_u32(a);
		break;
	case TDMRX_A_RING_BYTES:
		if (!mnl_attr_validate(a, MNL_TYPE_U64))
			info->ring_bytes = mnl_attr_get_u64(a);
		break;
	case TDMRX_A_HW_TSTAMP:
		if (!mnl_attr_validate(a, MNL_TYPE_U8))
			info->hw_tstamp = mnl_attr_get_u8(a);
		break;
	case TDMRX_A_STATS:
		/* Older kernels send fewer counters: the rest stay 0. */
		memcpy(&info->stats, mnl_attr_get_payload(a),
		       len < sizeof(info->stats) ? len : sizeof(info->stats));
		break;
	}
	return MNL_CB_OK;
}

static int info_cb(const struct nlmsghdr *nlh, void *data)
{
	memset(data, 0, sizeof(struct tdm_rx_info));
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), info_attr_cb,
			      data) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

/* ---- the client ------------------------------------------------------------------ */

int tdm_rx_open(struct tdm_rx *rx, char *err, size_t errlen)
{
	memset(rx, 0, sizeof(*rx));
	rx->dev_fd = -1;
	if (tdm_nl_open(&rx->nl, NETLINK_GENERIC, err, errlen))
		return -1;
	if (resolve_family(rx, err, errlen))
		goto fail;
	rx->dev_fd = open(RX_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (rx->dev_fd < 0) {
		tdm_set_err(err, errlen, "cannot open %s: %s", RX_DEV_PATH,
			strerror(errno));
		goto fail;
	}
	return 0;
fail:
	tdm_rx_close(rx);
	return -1;
}

static void rx_unmap(struct tdm_rx *rx)
{
	if (rx->map)
		munmap(rx->map, rx->map_len);
	free(rx->rings);
	rx->map = NULL;
	rx->map_len = 0;
	rx->rings = NULL;
	rx->nr_rings = 0;
}

void tdm_rx_close(struct tdm_rx *rx)
{
	rx_unmap(rx);
	if (rx->dev_fd >= 0)
		close(rx->dev_fd);
	rx->dev_fd = -1;
	tdm_nl_close(&rx->nl);	/* the kernel detaches us */
}

/* Map the rings of the session in rx->info. */
static int rx_map(struct tdm_rx *rx, char *err, size_t errlen)
{
	const struct tdm_rx_info *in = &rx->info;
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i;
	size_t len;

	if (!in->nr_rings || in->ring_bytes < TDMRX_RING_DATA_OFF) {
		tdm_set_err(err, errlen, "kernel reply without the ring layout");
		errno = EPROTO;
		return -1;
	}
	len = (size_t)in->nr_rings * in->ring_bytes;
	len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	/* A file maps one session: a new session needs a new file. */
	if (rx->map) {
		rx_unmap(rx);
		close(rx->dev_fd);
		rx->dev_fd = open(RX_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (rx->dev_fd < 0) {
			tdm_set_err(err, errlen, "cannot open %s: %s", RX_DEV_PATH,
				strerror(errno));
			return -1;
		}
	}
	rx->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       rx->dev_fd, 0);
	if (rx->map == MAP_FAILED) {
		rx->map = NULL;
		tdm_set_err(err, errlen, "cannot map the rings (%zu bytes): %s%s",
			len, strerror(errno),
			errno == ENODEV ? " (the session ended already)" : "");
		return -1;
	}
	rx->map_len = len;
	rx->rings = calloc(in->nr_rings, sizeof(*rx->rings));
	if (!rx->rings) {
		tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
		rx_unmap(rx);
		errno = ENOMEM;
		return -1;
	}
	rx->nr_rings = in->nr_rings;
	for (i = 0; i < rx->nr_rings; i++) {
		struct tdm_rx_ring *r = &rx->rings[i];

		tdm_rx_ring_init(r, (char *)rx->map + (size_t)i * in->ring_bytes);
		if (r->prod->session != in->session ||
		    r->prod->rec_size != sizeof(struct tdmrx_record) ||
		    r->prod->size != in->ring_records) {
			tdm_set_err(err, errlen,
				"ring %u does not belong to session %u (session %u, record size %u)",
				i, in->session, r->prod->session,
				r->prod->rec_size);
			rx_unmap(rx);
			errno = ESTALE;
			return -1;
		}
	}
	return 0;
}

int tdm_rx_attach(struct tdm_rx *rx, const struct tdm_rx_cfg *cfg,
		  char *err, size_t errlen)
{
	char buf[RX_SEND_SIZE];
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	unsigned int ifindex, i;

	if (!cfg->nports || cfg->nports > TDMRX_MAX_PORTS) {
		tdm_set_err(err, errlen, "between 1 and %d ports, not %u",
			TDMRX_MAX_PORTS, cfg->nports);
		errno = EINVAL;
		return -1;
	}
	ifindex = if_nametoindex(cfg->ifname);
	if (!ifindex) {
		tdm_set_err(err, errlen, "no such device: %s", cfg->ifname);
		errno = ENODEV;
		return -1;
	}
	nlh = tdm_genl_put(buf, rx->family, TDMRX_CMD_ATTACH, TDMRX_GENL_VERSION);
	mnl_attr_put_u32(nlh, TDMRX_A_IFINDEX, ifindex);
	nest = mnl_attr_nest_start(nlh, TDMRX_A_PORTS);
	for (i = 0; i < cfg->nports; i++)
		mnl_attr_put_u16(nlh, TDMRX_A_PORT, cfg->ports[i]);
	mnl_attr_nest_end(nlh, nest);
	if (cfg->ring_records)
		mnl_attr_put_u32(nlh, TDMRX_A_RING_RECORDS, cfg->ring_records);
	if (cfg->watermark)
		mnl_attr_put_u32(nlh, TDMRX_A_WATERMARK, cfg->watermark);
	if (cfg->flush_us)
		mnl_attr_put_u32(nlh, TDMRX_A_FLUSH_US, cfg->flush_us);
	if (tdm_nl_talk(&rx->nl, nlh, false, info_cb, &rx->info, err, errlen))
		return -1;
	if (!rx->info.attached || rx->info.owner != rx->nl.portid) {
		tdm_set_err(err, errlen, "kernel reply does not show our session");
		errno = EPROTO;
		return -1;
	}
	if (rx_map(rx, err, errlen)) {
		int e = errno;

		tdm_rx_detach(rx, false, NULL, 0);
		errno = e;
		return -1;
	}
	return 0;
}

int tdm_rx_detach(struct tdm_rx *rx, bool force, char *err, size_t errlen)
{
	char buf[RX_SEND_SIZE];
	struct nlmsghdr *nlh;

	nlh = tdm_genl_put(buf, rx->family, TDMRX_CMD_DETACH, TDMRX_GENL_VERSION);
	if (force)
		mnl_attr_put(nlh, TDMRX_A_FORCE, 0, NULL);
	return tdm_nl_talk(&rx->nl, nlh, false, NULL, NULL, err, errlen);
}

int tdm_rx_get(struct tdm_rx *rx, struct tdm_rx_info *info,
	       char *err, size_t errlen)
{
	char buf[RX_SEND_SIZE];
	struct nlmsghdr *nlh;

	memset(info, 0, sizeof(*info));
	nlh = tdm_genl_put(buf, rx->family, TDMRX_CMD_GET, TDMRX_GENL_VERSION);
	return tdm_nl_talk(&rx->nl, nlh, false, info_cb, info, err, errlen);
}

int tdm_rx_wait(struct tdm_rx *rx, int timeout_ms, char *err, size_t errlen)
{
	struct pollfd p = { .fd = rx->dev_fd, .events = POLLIN };
	int n;

	n = poll(&p, 1, timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		tdm_set_err(err, errlen, "poll %s: %s", RX_DEV_PATH,
			strerror(errno));
		return -1;
	}
	if (n && (p.revents & (POLLERR | POLLNVAL))) {
		tdm_set_err(err, errlen, "poll %s: no rings mapped", RX_DEV_PATH);
		errno = EBADF;
		return -1;
	}
	return n > 0;
}
