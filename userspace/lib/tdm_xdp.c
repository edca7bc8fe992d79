// SPDX-License-Identifier: GPL-2.0
/*
 * XDP on a device: its program (the link's IFLA_XDP), its AF_XDP sockets
 * (a sock_diag dump of AF_XDP with XDP_SHOW_INFO: each socket's device
 * and queue) and its AF_XDP TX features (netdev generic netlink).  The
 * requests go through libtdm's netlink client (tdm_nl.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
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

static void count_xsks(int ifindex, struct tdm_xdp_info *in, char *err,
		       size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct xsk_count c = { .ifindex = ifindex, .in = in };
	struct xdp_diag_req *r;
	struct tdm_nl nl;

	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
	r->sdiag_family = AF_XDP;
	r->xdiag_show = XDP_SHOW_INFO | XDP_SHOW_RING_CFG;
	if (tdm_nl_open(&nl, NETLINK_SOCK_DIAG, err, errlen))
		return;
	if (!tdm_nl_talk(&nl, nlh, true, xsk_cb, &c, err, errlen))
		in->xsk_known = true;
	else if (errno == ENOENT)
		tdm_set_err(err, errlen,
			    "no xsk_diag in this kernel");
	tdm_nl_close(&nl);
	if (!in->xsk_known)
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
