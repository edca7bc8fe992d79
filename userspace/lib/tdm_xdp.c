// SPDX-License-Identifier: GPL-2.0
/*
 * What sends on a device past its qdisc: its XDP program (the link's
 * IFLA_XDP), its AF_XDP sockets (a sock_diag dump of AF_XDP with
 * XDP_SHOW_INFO: each socket's device and queue), the packet sockets with
 * a TX ring (a sock_diag dump of AF_PACKET) and its AF_XDP TX features
 * (netdev generic netlink).  The requests go through libtdm's netlink
 * client (tdm_nl.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/packet_diag.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>

#include "tdm_nl.h"
#include "tdm_util.h"
#include "tdm_xdp.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

static int xdp_attr_cb(const struct nlattr *a, void *data)
{
	struct tdm_xdp_info *in = data;

	if (mnl_attr_get_type(a) == IFLA_XDP_ATTACHED &&
	    !mnl_attr_validate(a, MNL_TYPE_U8))
		in->attached = mnl_attr_get_u8(a);
	else if (mnl_attr_get_type(a) == IFLA_XDP_PROG_ID &&
		 !mnl_attr_validate(a, MNL_TYPE_U32))
		in->prog_id = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg)) {
		if (mnl_attr_get_type(a) == IFLA_XDP)
			mnl_attr_parse_nested(a, xdp_attr_cb, data);
	}
	return MNL_CB_OK;
}

struct xsk_count {
	int ifindex;
	struct tdm_xdp_info *in;
};

static int xsk_cb(const struct nlmsghdr *nlh, void *data)
{
	struct xsk_count *c = data;
	bool ours = false, tx = false;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct xdp_diag_msg)) {
		const struct xdp_diag_info *i;

		switch (mnl_attr_get_type(a)) {
		case XDP_DIAG_INFO:
			if (mnl_attr_get_payload_len(a) < sizeof(*i))
				break;
			i = mnl_attr_get_payload(a);
			ours = (int)i->ifindex == c->ifindex;
			break;
		case XDP_DIAG_TX_RING:
			tx = true;
			break;
		}
	}
	if (ours) {
		c->in->xsks++;
		c->in->xsks_tx += tx;
	}
	return MNL_CB_OK;
}

/* The namespace's AF_XDP sockets: the "XDP" line of /proc/net/protocols. */
static void count_ns_xsks(struct tdm_xdp_info *in)
{
	FILE *f = fopen("/proc/net/protocols", "r");
	char line[256];
	unsigned int n;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "XDP %*u %u", &n) == 1) {
			in->ns_known = true;
			in->ns_xsks = n;
			break;
		}
	fclose(f);
}

/*
 * One sock_diag dump: the request's header (req, len bytes: xdp_diag_req,
 * packet_diag_req, ...) sent on NETLINK_SOCK_DIAG, cb sees each socket.
 * 0, or -1 with errno and err; ENOENT means the kernel has no diag module
 * for the family: "no @what in this kernel".
 */
static int sock_diag_dump(const void *req, size_t len, const char *what,
			  mnl_cb_t cb, void *data, char *err, size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tdm_nl nl;
	int rc, e;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	memcpy(mnl_nlmsg_put_extra_header(nlh, len), req, len);
	if (tdm_nl_open(&nl, NETLINK_SOCK_DIAG, err, errlen))
		return -1;
	rc = tdm_nl_talk(&nl, nlh, true, cb, data, err, errlen);
	e = errno;
	if (rc && e == ENOENT)
		tdm_set_err(err, errlen, "no %s in this kernel", what);
	tdm_nl_close(&nl);
	errno = e;
	return rc;
}

static void count_xsks(int ifindex, struct tdm_xdp_info *in, char *err,
		       size_t errlen)
{
	struct xsk_count c = { .ifindex = ifindex, .in = in };
	struct xdp_diag_req r = {
		.sdiag_family = AF_XDP,
		.xdiag_show = XDP_SHOW_INFO | XDP_SHOW_RING_CFG,
	};

	if (!sock_diag_dump(&r, sizeof(r), "xsk_diag", xsk_cb, &c, err, errlen))
		in->xsk_known = true;
	else
		count_ns_xsks(in);
}

int tdm_xdp_get(int ifindex, struct tdm_xdp_info *in, char *err,
		size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;
	struct tdm_nl nl;
	int rc;

	memset(in, 0, sizeof(*in));
	nlh->nlmsg_type = RTM_GETLINK;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_index = ifindex;
	if (tdm_nl_open(&nl, NETLINK_ROUTE, err, errlen))
		return -1;
	rc = tdm_nl_talk(&nl, nlh, false, link_cb, in, err, errlen);
	tdm_nl_close(&nl);
	if (rc)
		return -1;
	count_xsks(ifindex, in, err, errlen);
	return 0;
}

/* ---- packet sockets ------------------------------------------------------- */

struct pkt_scan {
	int ifindex;
	struct tdm_pkt_info *in;
};

static int pkt_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct packet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	const struct packet_diag_info *i = NULL;
	const struct packet_diag_ring *tx = NULL;
	struct pkt_scan *c = data;
	struct tdm_pkt_sender *s;
	uint32_t uid = 0;
	struct nlattr *a;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m))
		return MNL_CB_ERROR;
	mnl_attr_for_each(a, nlh, sizeof(*m)) {
		switch (mnl_attr_get_type(a)) {
		case PACKET_DIAG_INFO:
			if (mnl_attr_get_payload_len(a) >= sizeof(*i))
				i = mnl_attr_get_payload(a);
			break;
		case PACKET_DIAG_TX_RING:
			if (mnl_attr_get_payload_len(a) >= sizeof(*tx))
				tx = mnl_attr_get_payload(a);
			break;
		case PACKET_DIAG_UID:
			if (!mnl_attr_validate(a, MNL_TYPE_U32))
				uid = mnl_attr_get_u32(a);
			break;
		}
	}
	/* Without its device (an older kernel's answer): cannot be judged. */
	if (!i)
		return MNL_CB_ERROR;
	if ((int)i->pdi_index == c->ifindex)
		c->in->bound++;
	if (!tx || ((int)i->pdi_index != c->ifindex && i->pdi_index))
		return MNL_CB_OK;
	if (c->in->nsenders++ >= TDM_PKT_SENDERS_MAX)
		return MNL_CB_OK;
	s = &c->in->s[c->in->nsenders - 1];
	s->ino = m->pdiag_ino;
	s->ifindex = i->pdi_index;
	s->proto = m->pdiag_num;
	s->type = m->pdiag_type;
	s->tx_frames = tx->pdr_frame_nr;
	s->uid = uid;
	return MNL_CB_OK;
}

/* The inode of a /proc/PID/fd/N link to a socket ("socket:[INO]"); 0. */
static uint32_t fd_socket_ino(int dirfd, const char *name)
{
	char link[64];
	unsigned int ino;
	ssize_t n = readlinkat(dirfd, name, link, sizeof(link) - 1);

	if (n <= 0)
		return 0;
	link[n] = 0;
	return sscanf(link, "socket:[%u]", &ino) == 1 ? ino : 0;
}

/* Which of the n senders process @pid holds: hit[k]; whether any. */
static bool pid_holds(int pid, const struct tdm_pkt_info *in,
		      unsigned int n, bool *hit)
{
	char path[64];
	struct dirent *e;
	bool any = false;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return false;	/* gone, or not ours to look at */
	while ((e = readdir(d))) {
		uint32_t ino = e->d_name[0] != '.' ?
			       fd_socket_ino(dirfd(d), e->d_name) : 0;
		unsigned int k;

		for (k = 0; ino && k < n; k++)
			if (in->s[k].ino == ino)
				hit[k] = any = true;
	}
	closedir(d);
	return any;
}

/*
 * A process holding each sender, in one pass over /proc/PID/fd (as ss -p
 * does): the first found (after a fork both hold it).  A process that
 * cannot be looked at (not root, another pid namespace) or comes and goes
 * meanwhile leaves pid 0.
 */
static void find_owners(struct tdm_pkt_info *in)
{
	unsigned int k, n = in->nsenders < TDM_PKT_SENDERS_MAX ?
			    in->nsenders : TDM_PKT_SENDERS_MAX, left = n;
	struct dirent *e;
	DIR *d;

	if (!n || !(d = opendir("/proc")))
		return;
	while (left && (e = readdir(d))) {
		bool hit[TDM_PKT_SENDERS_MAX] = { false };
		int pid;

		pid = e->d_name[0] >= '1' && e->d_name[0] <= '9' ?
		      atoi(e->d_name) : 0;
		if (pid <= 0 || !pid_holds(pid, in, n, hit))
			continue;
		for (k = 0; k < n; k++) {
			if (!hit[k] || in->s[k].pid)
				continue;
			in->s[k].pid = pid;
			tdm_proc_comm(pid, in->s[k].comm, sizeof(in->s[k].comm));
			left--;
		}
	}
	closedir(d);
}

int tdm_pkt_senders(int ifindex, struct tdm_pkt_info *in, char *err,
		    size_t errlen)
{
	struct pkt_scan c = { .ifindex = ifindex, .in = in };
	struct packet_diag_req r = {
		.sdiag_family = AF_PACKET,
		.pdiag_show = PACKET_SHOW_INFO | PACKET_SHOW_RING_CFG,
	};

	memset(in, 0, sizeof(*in));
	if (sock_diag_dump(&r, sizeof(r), "packet_diag", pkt_cb, &c, err,
			   errlen))
		return -1;
	find_owners(in);
	return 0;
}

/* ---- AF_XDP TX features ------------------------------------------------------ */

static int features_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == TDM_NETDEV_A_DEV_XSK_FEATURES &&
		    !mnl_attr_validate(a, MNL_TYPE_U64)) {
			*(uint64_t *)data = mnl_attr_get_u64(a) | (1ULL << 63);
		}
	}
	return MNL_CB_OK;
}

int tdm_xsk_features(int ifindex, uint32_t *features, char *err,
		     size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh;
	struct tdm_nl nl;
	uint64_t f = 0;
	uint16_t id;
	int rc = -1;

	*features = 0;
	if (tdm_nl_open(&nl, NETLINK_GENERIC, err, errlen))
		return -1;
	if (tdm_genl_family(&nl, TDM_NETDEV_FAMILY, &id, err, errlen))
		goto out;
	nlh = tdm_genl_put(buf, id, TDM_NETDEV_CMD_DEV_GET, 1);
	mnl_attr_put_u32(nlh, TDM_NETDEV_A_DEV_IFINDEX, (uint32_t)ifindex);
	if (tdm_nl_talk(&nl, nlh, false, features_cb, &f, err, errlen))
		goto out;
	if (!(f >> 63)) {
		errno = ENOENT;
		tdm_set_err(err, errlen, "the kernel reports no AF_XDP TX features");
		goto out;
	}
	*features = (uint32_t)f;
	rc = 0;
out:
	tdm_nl_close(&nl);
	return rc;
}
