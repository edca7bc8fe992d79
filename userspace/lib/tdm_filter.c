// SPDX-License-Identifier: GPL-2.0
/*
 * The flower filters of a tdmwin qdisc's destination classes, over
 * rtnetlink with libmnl through libtdm's netlink client (tdm_nl.c).  See
 * tdm_filter.h for the mapping and what tdmd owns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>

#include "tdm_filter.h"
#include "tdm_util.h"

#define FLOWER_KIND	"flower"
#define FILTER_SEND_SIZE	1024

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

const char *tdm_filter_str(const struct tdm_filter *f, char *buf,
			   size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(f->family, f->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s -> class :%x", a, f->minor);
	return buf;
}

bool tdm_filter_in(const struct tdm_filter *f, const struct tdm_filter *set,
		   unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (set[i].minor == f->minor && set[i].family == f->family &&
		    !memcmp(set[i].addr, f->addr, addr_len(f->family)))
			return true;
	return false;
}

static bool has_window_to(const struct tdm_sender *s, uint32_t dest)
{
	unsigned int k;

	for (k = 0; k < s->nwin; k++)
		if (s->win[k].dest == dest)
			return true;
	return false;
}

int tdm_filter_plan(const struct tdm_plan *p, const char *name,
		    struct tdm_filter *out, unsigned int *n,
		    char *err, size_t errlen)
{
	const struct tdm_sender *s = tdm_plan_sender(p, name);
	unsigned int k;

	*n = 0;
	if (!s || !p->nreceivers)
		return 0;
	for (k = 0; k < p->nreceivers; k++) {
		struct tdm_filter *f = &out[*n];

		if (!has_window_to(s, k))
			continue;
		if (k >= TDM_FILTER_MAX)
			return tdm_set_err(err, errlen,
					   "receiver '%s' is receiver #%u: a tdmwin qdisc has %d destination classes",
					   p->receivers[k].name, k,
					   TDM_FILTER_MAX);
		memset(f, 0, sizeof(*f));
		f->minor = tdm_qdisc_window_class(p, &(struct tdm_window){
							.dest = k });
		if (inet_pton(AF_INET, p->receivers[k].addr, f->addr) == 1)
			f->family = AF_INET;
		else if (inet_pton(AF_INET6, p->receivers[k].addr, f->addr) == 1)
			f->family = AF_INET6;
		else
			return tdm_set_err(err, errlen,
					   "receiver '%s': bad address '%.45s'",
					   p->receivers[k].name,
					   p->receivers[k].addr);
		(*n)++;
	}
	return 0;
}

int tdm_filter_merge(struct tdm_filter *a, unsigned int *na,
		     const struct tdm_filter *b, unsigned int nb,
		     char *err, size_t errlen)
{
	char x[80], y[80];
	unsigned int i, j, n = *na;

	for (j = 0; j < nb; j++) {
		bool same = false;

		for (i = 0; i < n; i++) {
			bool cls = a[i].minor == b[j].minor;
			bool adr = a[i].family == b[j].family &&
				   !memcmp(a[i].addr, b[j].addr,
					   addr_len(b[j].family));

			if (cls && adr) {
				same = true;
				break;
			}
			if (cls || adr)
				return tdm_set_err(err, errlen,
						   "%s in one plan, %s in the other: a class keeps its address while both plans may gate",
						   tdm_filter_str(&a[i], x, sizeof(x)),
						   tdm_filter_str(&b[j], y, sizeof(y)));
		}
		if (same)
			continue;
		if (n == TDM_FILTER_MAX)
			return tdm_set_err(err, errlen,
					   "more than %d destination classes",
					   TDM_FILTER_MAX);
		a[n++] = b[j];
	}
	*na = n;
	return 0;
}

/* ---- reading ---- */

struct dump {
	uint32_t qhandle;		/* the tdmwin qdisc's, MAJ:0 */
	struct tdm_filter *out;
	unsigned int n;
	char *err;
	size_t errlen;
	bool bad;
};

static uint32_t prio_of(int family)
{
	return family == AF_INET ? TDM_FILTER_PRIO_IP : TDM_FILTER_PRIO_IP6;
}

static uint16_t proto_of(int family)
{
	return htons(family == AF_INET ? ETH_P_IP : ETH_P_IPV6);
}

static int dump_bad(struct dump *d, const char *what, uint32_t prio,
		    uint32_t handle)
{
	if (!d->bad)
		tdm_set_err(d->err, d->errlen,
			    "filter prio %u handle %u on the tdmwin qdisc: %s (tdmd owns priorities %d and %d there)",
			    prio, handle, what, TDM_FILTER_PRIO_IP,
			    TDM_FILTER_PRIO_IP6);
	d->bad = true;
	return MNL_CB_OK;
}

/* The flower options of one of ours: classid, destination, full mask. */
static int flower_opts(struct dump *d, const struct nlattr *opts,
		       struct tdm_filter *f, uint32_t prio, uint32_t handle)
{
	uint16_t dst = f->family == AF_INET ? TCA_FLOWER_KEY_IPV4_DST :
		       TCA_FLOWER_KEY_IPV6_DST;
	uint16_t msk = f->family == AF_INET ? TCA_FLOWER_KEY_IPV4_DST_MASK :
		       TCA_FLOWER_KEY_IPV6_DST_MASK;
	size_t len = addr_len(f->family);
	const struct nlattr *a, *addr = NULL, *mask = NULL;
	uint32_t classid = 0;
	uint8_t full[16];

	memset(full, 0xff, sizeof(full));
	mnl_attr_for_each_nested(a, opts) {
		uint16_t type = mnl_attr_get_type(a);

		if (type == TCA_FLOWER_CLASSID &&
		    mnl_attr_get_payload_len(a) == 4)
			classid = mnl_attr_get_u32(a);
		else if (type == dst && mnl_attr_get_payload_len(a) == len)
			addr = a;
		else if (type == msk && mnl_attr_get_payload_len(a) == len)
			mask = a;
	}
	if (!addr || !mask || memcmp(mnl_attr_get_payload(mask), full, len))
		return dump_bad(d, "not a whole destination address", prio,
				handle);
	if (classid != TC_H_MAKE(d->qhandle, handle))
		return dump_bad(d, "its class is not its handle's", prio, handle);
	memcpy(f->addr, mnl_attr_get_payload(addr), len);
	return 0;
}

static int filter_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	const struct tcmsg *tcm;
	const struct nlattr *a, *opts = NULL;
	const char *kind = NULL;
	struct tdm_filter f;
	uint32_t prio;

	if (nlh->nlmsg_type != RTM_NEWTFILTER ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*tcm))
		return MNL_CB_OK;
	tcm = mnl_nlmsg_get_payload(nlh);
	prio = TC_H_MAJ(tcm->tcm_info) >> 16;
	if (tcm->tcm_parent != d->qhandle ||
	    (prio != TDM_FILTER_PRIO_IP && prio != TDM_FILTER_PRIO_IP6))
		return MNL_CB_OK;
	/* The classifier's own entry (handle 0) precedes its filters. */
	if (!tcm->tcm_handle)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(a) == TCA_KIND &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			kind = mnl_attr_get_str(a);
		else if (mnl_attr_get_type(a) == TCA_OPTIONS)
			opts = a;
	}
	memset(&f, 0, sizeof(f));
	f.family = prio == TDM_FILTER_PRIO_IP ? AF_INET : AF_INET6;
	f.minor = tcm->tcm_handle;
	if (!kind || strcmp(kind, FLOWER_KIND) || !opts)
		return dump_bad(d, "not a flower filter", prio, f.minor);
	if (TC_H_MIN(tcm->tcm_info) != proto_of(f.family))
		return dump_bad(d, "another protocol", prio, f.minor);
	if (f.minor < TDMWIN_CLASS_DEST_FIRST ||
	    f.minor >= TDMWIN_CLASS_DEST_FIRST + TDM_FILTER_MAX)
		return dump_bad(d, "not a destination class's", prio, f.minor);
	if (flower_opts(d, opts, &f, prio, f.minor) || d->bad)
		return MNL_CB_OK;
	if (d->n == TDM_FILTER_MAX)
		return dump_bad(d, "one too many", prio, f.minor);
	d->out[d->n++] = f;
	return MNL_CB_OK;
}

/* The handle (MAJ:0) of the tdmwin qdisc at t; 0 with err if none. */
static uint32_t qdisc_handle(struct tdm_rtnl *r,
			     const struct tdm_qdisc_target *t,
			     char *err, size_t errlen)
{
	struct tdm_qdisc_info *in = malloc(sizeof(*in));
	uint32_t h = 0;

	if (!in) {
		tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
		return 0;
	}
	if (!tdm_qdisc_get(r, t, in, err, errlen)) {
		if (in->present)
			h = in->handle;
		else
			tdm_set_err(err, errlen, "no tdmwin qdisc on %s for the filters",
				    t->ifname);
	}
	free(in);
	return h;
}

static int dump_filters(struct tdm_rtnl *r, int ifindex, uint32_t qhandle,
			struct tdm_filter *out, unsigned int *n,
			char *err, size_t errlen)
{
	char buf[FILTER_SEND_SIZE];
	struct dump d = {
		.qhandle = qhandle, .out = out, .err = err, .errlen = errlen,
	};
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = tdm_tc_header(buf, RTM_GETTFILTER, 0, ifindex, qhandle, 0);
	if (tdm_nl_talk(&r->nl, nlh, true, filter_cb, &d, err, errlen) < 0)
		return -1;
	if (d.bad) {
		errno = EEXIST;
		return -1;
	}
	*n = d.n;
	return 0;
}

int tdm_filter_get(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		   struct tdm_filter *out, unsigned int *n,
		   char *err, size_t errlen)
{
	int ifindex = tdm_qdisc_ifindex(t, err, errlen);
	uint32_t qh;

	*n = 0;
	if (ifindex <= 0)
		return -1;
	qh = qdisc_handle(r, t, err, errlen);
	if (!qh)
		return -1;
	return dump_filters(r, ifindex, qh, out, n, err, errlen);
}

/* ---- changing ---- */

static int filter_del(struct tdm_rtnl *r, int ifindex, uint32_t qh,
		      const struct tdm_filter *f, char *err, size_t errlen)
{
	char buf[FILTER_SEND_SIZE];
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;

	memset(buf, 0, sizeof(buf));
	nlh = tdm_tc_header(buf, RTM_DELTFILTER, 0, ifindex, qh, f->minor);
	tcm = mnl_nlmsg_get_payload(nlh);
	tcm->tcm_info = TC_H_MAKE(prio_of(f->family) << 16, proto_of(f->family));
	mnl_attr_put_strz(nlh, TCA_KIND, FLOWER_KIND);
	return tdm_nl_talk(&r->nl, nlh, false, NULL, NULL, err, errlen);
}

static int filter_add(struct tdm_rtnl *r, int ifindex, uint32_t qh,
		      const struct tdm_filter *f, char *err, size_t errlen)
{
	size_t len = addr_len(f->family);
	char buf[FILTER_SEND_SIZE];
	struct nlmsghdr *nlh;
	struct nlattr *opts;
	struct tcmsg *tcm;
	uint8_t full[16];

	memset(buf, 0, sizeof(buf));
	memset(full, 0xff, sizeof(full));
	nlh = tdm_tc_header(buf, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL,
			    ifindex, qh, f->minor);
	tcm = mnl_nlmsg_get_payload(nlh);
	tcm->tcm_info = TC_H_MAKE(prio_of(f->family) << 16, proto_of(f->family));
	mnl_attr_put_strz(nlh, TCA_KIND, FLOWER_KIND);
	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_FLOWER_CLASSID, TC_H_MAKE(qh, f->minor));
	/* The class is what counts, and only software classifies into it. */
	mnl_attr_put_u32(nlh, TCA_FLOWER_FLAGS, TCA_CLS_FLAGS_SKIP_HW);
	mnl_attr_put_u16(nlh, TCA_FLOWER_KEY_ETH_TYPE, proto_of(f->family));
	if (f->family == AF_INET) {
		mnl_attr_put(nlh, TCA_FLOWER_KEY_IPV4_DST, len, f->addr);
		mnl_attr_put(nlh, TCA_FLOWER_KEY_IPV4_DST_MASK, len, full);
	} else {
		mnl_attr_put(nlh, TCA_FLOWER_KEY_IPV6_DST, len, f->addr);
		mnl_attr_put(nlh, TCA_FLOWER_KEY_IPV6_DST_MASK, len, full);
	}
	mnl_attr_nest_end(nlh, opts);
	return tdm_nl_talk(&r->nl, nlh, false, NULL, NULL, err, errlen);
}

int tdm_filter_sync(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    const struct tdm_filter *want, unsigned int n,
		    char *err, size_t errlen)
{
	struct tdm_filter have[TDM_FILTER_MAX];
	char what[80], e[400];
	unsigned int nh, i;
	int ifindex;
	uint32_t qh;

	ifindex = tdm_qdisc_ifindex(t, err, errlen);
	if (ifindex <= 0)
		return -1;
	qh = qdisc_handle(r, t, err, errlen);
	if (!qh || dump_filters(r, ifindex, qh, have, &nh, err, errlen))
		return -1;
	/* Those not wanted go first: a class's new address may take their
	 * handle.
	 */
	for (i = 0; i < nh; i++) {
		if (tdm_filter_in(&have[i], want, n))
			continue;
		if (filter_del(r, ifindex, qh, &have[i], e, sizeof(e)))
			return tdm_set_err(err, errlen, "removing the filter %s: %s",
					   tdm_filter_str(&have[i], what, sizeof(what)),
					   e);
	}
	for (i = 0; i < n; i++) {
		if (tdm_filter_in(&want[i], have, nh))
			continue;
		if (filter_add(r, ifindex, qh, &want[i], e, sizeof(e)))
			return tdm_set_err(err, errlen, "adding the filter %s: %s",
					   tdm_filter_str(&want[i], what, sizeof(what)),
					   e);
	}
	/* Read back: exactly want, nothing more. */
	if (dump_filters(r, ifindex, qh, have, &nh, err, errlen))
		return -1;
	for (i = 0; i < n; i++)
		if (!tdm_filter_in(&want[i], have, nh))
			break;
	if (i < n) {
		errno = EPROTO;
		return tdm_set_err(err, errlen,
				   "the filter %s is not in the kernel after adding it",
				   tdm_filter_str(&want[i], what, sizeof(what)));
	}
	if (nh != n) {
		errno = EPROTO;
		return tdm_set_err(err, errlen,
				   "%u filters in the kernel after the change, %u wanted",
				   nh, n);
	}
	return 0;
}
