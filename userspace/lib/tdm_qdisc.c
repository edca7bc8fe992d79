// SPDX-License-Identifier: GPL-2.0
/*
 * Programming the tdmwin qdisc over rtnetlink with libmnl, through libtdm's
 * netlink client (tdm_nl.c: one request at a time, extended acks).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tdm_util.h"
#include "tdm_nl.h"
#include "tdm_qdisc.h"

#define TDMWIN_KIND	"tdmwin"
#define MQ_KIND		"mq"
#define ETF_KIND	"etf"
/* A request: header, tcmsg, kind and at most 64 windows of 28 bytes. */
#define RTNL_SEND_SIZE	8192

/* ---- the socket --------------------------------------------------------- */

int tdm_rtnl_open(struct tdm_rtnl *r, char *err, size_t errlen)
{
	return tdm_nl_open(&r->nl, NETLINK_ROUTE, err, errlen);
}

void tdm_rtnl_close(struct tdm_rtnl *r)
{
	tdm_nl_close(&r->nl);
}

/* ---- reading the qdisc -------------------------------------------------- */

struct dump_ctx {
	int ifindex;
	uint32_t parent;
	struct tdm_qdisc_info *info;
	bool malformed;
};

/* Attribute types and the payload length each must have. */
static const uint8_t tdmwin_attr_len[TCA_TDMWIN_MAX + 1] = {
	[TCA_TDMWIN_CYCLE_TIME]		= 8,
	[TCA_TDMWIN_BASE_TIME]		= 8,
	[TCA_TDMWIN_GUARD]		= 4,
	[TCA_TDMWIN_LINK_SPEED]		= 4,
	[TCA_TDMWIN_CLOCKID]		= 4,
	[TCA_TDMWIN_BYPASS_PRIOS]	= 4,
	[TCA_TDMWIN_BYPASS_PTP]		= 1,
	[TCA_TDMWIN_HOLD]		= 1,
	[TCA_TDMWIN_PLAN_VERSION]	= 4,
	[TCA_TDMWIN_LIMIT]		= 4,
	[TCA_TDMWIN_EFF_LINK_SPEED]	= 4,
	[TCA_TDMWIN_LEASE]		= 8,
	[TCA_TDMWIN_LEASE_LEFT]		= 8,
	[TCA_TDMWIN_UNCONFIRMED]	= 1,
	[TCA_TDMWIN_TXTIME]		= 1,
};

struct opt_tb {
	const struct nlattr *tb[TCA_TDMWIN_MAX + 1];
	bool bad;
};

/* Index the options; unknown (newer) attributes are skipped. */
static int opt_cb(const struct nlattr *a, void *data)
{
	struct opt_tb *o = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type > TCA_TDMWIN_MAX)
		return MNL_CB_OK;
	if (tdmwin_attr_len[type] &&
	    mnl_attr_get_payload_len(a) != tdmwin_attr_len[type]) {
		o->bad = true;
		return MNL_CB_OK;
	}
	o->tb[type] = a;
	return MNL_CB_OK;
}

static uint64_t get_u64(const struct nlattr *a)
{
	uint64_t v;

	/* 64-bit attributes may sit on a 4-byte boundary. */
	memcpy(&v, mnl_attr_get_payload(a), sizeof(v));
	return v;
}

/* One window: offset and length (u64) required, its class (u32) optional. */
static int parse_window(const struct nlattr *w, struct tdm_window *win,
			uint32_t *cls)
{
	const struct nlattr *x;
	bool off = false, len = false;

	*cls = TDMWIN_CLASS_GATED;
	mnl_attr_for_each_nested(x, w) {
		uint16_t type = mnl_attr_get_type(x);

		switch (type) {
		case TCA_TDMWIN_WIN_OFFSET:
		case TCA_TDMWIN_WIN_LENGTH:
			if (mnl_attr_get_payload_len(x) != 8)
				return -1;
			*(type == TCA_TDMWIN_WIN_OFFSET ? &win->offset :
						       &win->length) = get_u64(x);
			*(type == TCA_TDMWIN_WIN_OFFSET ? &off : &len) = true;
			break;
		case TCA_TDMWIN_WIN_CLASS:
			if (mnl_attr_get_payload_len(x) != 4)
				return -1;
			*cls = mnl_attr_get_u32(x);
			break;
		}
	}
	return off && len ? 0 : -1;
}

/* Windows of one plan and their classes: at most TDMWIN_MAX_WINDOWS kept. */
static int parse_windows(const struct nlattr *list, struct tdm_window *win,
			 uint32_t *cls, unsigned int *nwin)
{
	const struct nlattr *w;
	unsigned int n = 0;

	mnl_attr_for_each_nested(w, list) {
		struct tdm_window cur = { 0 };
		uint32_t c;

		if (mnl_attr_get_type(w) != TCA_TDMWIN_WINDOW)
			continue;
		if (parse_window(w, &cur, &c) < 0)
			return -1;
		if (n < TDMWIN_MAX_WINDOWS) {
			win[n] = cur;
			cls[n] = c;
		}
		n++;
	}
	*nwin = n < TDMWIN_MAX_WINDOWS ? n : TDMWIN_MAX_WINDOWS;
	return 0;
}

struct plan_view {
	uint32_t *version;
	uint64_t *cycle;
	int64_t *base;
	uint32_t *guard;
	struct tdm_window *win;
	uint32_t *cls;
	unsigned int *nwin;
};

static int parse_plan(struct opt_tb *o, const struct plan_view *v)
{
	const struct nlattr *const *tb = o->tb;

	if (!tb[TCA_TDMWIN_PLAN_VERSION] || !tb[TCA_TDMWIN_CYCLE_TIME] ||
	    !tb[TCA_TDMWIN_BASE_TIME] || !tb[TCA_TDMWIN_WINDOWS])
		return -1;
	*v->version = mnl_attr_get_u32(tb[TCA_TDMWIN_PLAN_VERSION]);
	*v->cycle = get_u64(tb[TCA_TDMWIN_CYCLE_TIME]);
	*v->base = (int64_t)get_u64(tb[TCA_TDMWIN_BASE_TIME]);
	if (tb[TCA_TDMWIN_GUARD])
		*v->guard = mnl_attr_get_u32(tb[TCA_TDMWIN_GUARD]);
	return parse_windows(tb[TCA_TDMWIN_WINDOWS], v->win, v->cls, v->nwin);
}

static int parse_pending(const struct nlattr *nest, struct tdm_qdisc_info *in)
{
	struct opt_tb o;
	const struct plan_view v = {
		&in->pending_version, &in->pending_cycle_ns, &in->pending_base,
		&in->pending_guard_ns, in->pending_win, in->pending_win_class,
		&in->pending_nwin,
	};

	memset(&o, 0, sizeof(o));
	if (mnl_attr_parse_nested(nest, opt_cb, &o) < 0 || o.bad)
		return -1;
	in->pending = true;
	if (o.tb[TCA_TDMWIN_UNCONFIRMED])
		in->pending_unconfirmed =
			mnl_attr_get_u8(o.tb[TCA_TDMWIN_UNCONFIRMED]);
	return parse_plan(&o, &v);
}

/* One slot: its index, and the counters this build knows (u64 each). */
static int parse_slot(const struct nlattr *nest, struct tdm_qdisc_info *in)
{
	uint64_t v[TCA_TDMWIN_SLOT_MAX + 1] = { 0 };
	bool seen[TCA_TDMWIN_SLOT_MAX + 1] = { false };
	struct tdm_qdisc_slot *sl;
	const struct nlattr *a;
	uint32_t index;

	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);

		if (type == TCA_TDMWIN_SLOT_PAD || type > TCA_TDMWIN_SLOT_MAX)
			continue;	/* padding, or a newer counter */
		if (mnl_attr_get_payload_len(a) !=
		    (type == TCA_TDMWIN_SLOT_INDEX ? 4 : 8))
			return -1;
		v[type] = type == TCA_TDMWIN_SLOT_INDEX ?
			  mnl_attr_get_u32(a) : get_u64(a);
		seen[type] = true;
	}
	if (!seen[TCA_TDMWIN_SLOT_INDEX] ||
	    v[TCA_TDMWIN_SLOT_INDEX] >= TDMWIN_MAX_WINDOWS)
		return -1;
	index = (uint32_t)v[TCA_TDMWIN_SLOT_INDEX];
	sl = &in->slots[index];
	sl->frames = v[TCA_TDMWIN_SLOT_FRAMES];
	sl->bytes = v[TCA_TDMWIN_SLOT_BYTES];
	sl->opens = v[TCA_TDMWIN_SLOT_OPENS];
	sl->wire_deferrals = v[TCA_TDMWIN_SLOT_WIRE_DEFERRALS];
	sl->guard_deferrals = v[TCA_TDMWIN_SLOT_GUARD_DEFERRALS];
	sl->latency_count = v[TCA_TDMWIN_SLOT_LATENCY_COUNT];
	sl->latency_sum = v[TCA_TDMWIN_SLOT_LATENCY_SUM];
	sl->latency_max = v[TCA_TDMWIN_SLOT_LATENCY_MAX];
	sl->margin_min = v[TCA_TDMWIN_SLOT_MARGIN_MIN];
	sl->has_margin = seen[TCA_TDMWIN_SLOT_MARGIN_MIN];
	if (index >= in->nslots)
		in->nslots = index + 1;
	return 0;
}

/* TCA_TDMWIN_SLOTS: the plan they count for, and one nest per slot. */
static int parse_slots(const struct nlattr *nest, struct tdm_qdisc_info *in)
{
	const struct nlattr *a;

	memset(in->slots, 0, sizeof(in->slots));
	in->nslots = 0;
	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case TCA_TDMWIN_SLOTS_VERSION:
			if (mnl_attr_get_payload_len(a) != 4)
				return -1;
			in->slots_version = mnl_attr_get_u32(a);
			break;
		case TCA_TDMWIN_SLOTS_SLOT:
			if (parse_slot(a, in) < 0)
				return -1;
			break;
		}
	}
	in->has_slots = true;
	return 0;
}

void tdm_qdisc_worst_slots(const struct tdm_qdisc_info *info,
			   struct tdm_qdisc_worst *w)
{
	unsigned int i;

	w->latency = w->margin = w->guard = w->wire = -1;
	for (i = 0; info->has_slots && i < info->nslots; i++) {
		const struct tdm_qdisc_slot *sl = &info->slots[i];

		if (sl->latency_count && (w->latency < 0 || sl->latency_max >
					  info->slots[w->latency].latency_max))
			w->latency = (int)i;
		if (sl->has_margin && (w->margin < 0 || sl->margin_min <
				       info->slots[w->margin].margin_min))
			w->margin = (int)i;
		if (sl->guard_deferrals && (w->guard < 0 || sl->guard_deferrals >
					    info->slots[w->guard].guard_deferrals))
			w->guard = (int)i;
		if (sl->wire_deferrals && (w->wire < 0 || sl->wire_deferrals >
					   info->slots[w->wire].wire_deferrals))
			w->wire = (int)i;
	}
}

static int parse_options(const struct nlattr *opts, struct tdm_qdisc_info *in)
{
	const struct plan_view v = {
		&in->version, &in->cycle_ns, &in->base_time, &in->guard_ns,
		in->win, in->win_class, &in->nwin,
	};
	const struct nlattr *const *tb;
	struct opt_tb o;

	memset(&o, 0, sizeof(o));
	if (mnl_attr_parse_nested(opts, opt_cb, &o) < 0 || o.bad)
		return -1;
	tb = o.tb;
	if (tb[TCA_TDMWIN_CLOCKID])
		in->clockid = (int32_t)mnl_attr_get_u32(tb[TCA_TDMWIN_CLOCKID]);
	if (tb[TCA_TDMWIN_LINK_SPEED])
		in->link_speed = mnl_attr_get_u32(tb[TCA_TDMWIN_LINK_SPEED]);
	if (tb[TCA_TDMWIN_EFF_LINK_SPEED])
		in->eff_link_speed =
			mnl_attr_get_u32(tb[TCA_TDMWIN_EFF_LINK_SPEED]);
	if (tb[TCA_TDMWIN_BYPASS_PRIOS])
		in->bypass_prios = mnl_attr_get_u32(tb[TCA_TDMWIN_BYPASS_PRIOS]);
	if (tb[TCA_TDMWIN_BYPASS_PTP])
		in->bypass_ptp = mnl_attr_get_u8(tb[TCA_TDMWIN_BYPASS_PTP]);
	if (tb[TCA_TDMWIN_HOLD])
		in->hold = mnl_attr_get_u8(tb[TCA_TDMWIN_HOLD]);
	if (tb[TCA_TDMWIN_LIMIT])
		in->limit = mnl_attr_get_u32(tb[TCA_TDMWIN_LIMIT]);
	if (tb[TCA_TDMWIN_LEASE])
		in->lease_ns = get_u64(tb[TCA_TDMWIN_LEASE]);
	if (tb[TCA_TDMWIN_LEASE_LEFT])
		in->lease_left_ns = (int64_t)get_u64(tb[TCA_TDMWIN_LEASE_LEFT]);
	if (tb[TCA_TDMWIN_TXTIME])
		in->txtime = mnl_attr_get_u8(tb[TCA_TDMWIN_TXTIME]);
	/* At the top level: the plan in force is the unconfirmed one. */
	if (tb[TCA_TDMWIN_UNCONFIRMED])
		in->pending_unconfirmed =
			mnl_attr_get_u8(tb[TCA_TDMWIN_UNCONFIRMED]);
	if (parse_plan(&o, &v) < 0)
		return -1;
	if (tb[TCA_TDMWIN_PENDING] &&
	    parse_pending(tb[TCA_TDMWIN_PENDING], in) < 0)
		return -1;
	if (tb[TCA_TDMWIN_SLOTS] && parse_slots(tb[TCA_TDMWIN_SLOTS], in) < 0)
		return -1;
	return 0;
}

/* TCA_STATS2: basic and queue counters, and our xstats as TCA_STATS_APP. */
static int parse_stats(const struct nlattr *stats, struct tdm_qdisc_info *in)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, stats) {
		const void *p = mnl_attr_get_payload(a);
		uint16_t len = mnl_attr_get_payload_len(a);

		switch (mnl_attr_get_type(a)) {
		case TCA_STATS_BASIC: {
			struct gnet_stats_basic b;

			/* 12 bytes of data; the struct may be padded. */
			if (len < 12)
				return -1;
			memset(&b, 0, sizeof(b));
			memcpy(&b, p, len < sizeof(b) ? len : sizeof(b));
			in->bytes = b.bytes;
			in->packets = b.packets;
			break;
		}
		case TCA_STATS_QUEUE: {
			struct gnet_stats_queue q;

			if (len < sizeof(q))
				return -1;
			memcpy(&q, p, sizeof(q));
			in->qlen = q.qlen;
			in->backlog = q.backlog;
			in->drops = q.drops;
			break;
		}
		case TCA_STATS_APP:
			/* Fields are only appended: take what both know. */
			memcpy(&in->xstats, p, len < sizeof(in->xstats) ?
			       len : sizeof(in->xstats));
			break;
		}
	}
	return 0;
}

int tdm_qdisc_parse(const struct nlmsghdr *nlh, int ifindex, uint32_t parent,
		    struct tdm_qdisc_info *in)
{
	const struct tcmsg *tcm;
	const struct nlattr *a, *opts = NULL, *stats = NULL;
	const char *kind = NULL;

	if ((nlh->nlmsg_type != RTM_NEWQDISC &&
	     nlh->nlmsg_type != RTM_DELQDISC) ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*tcm))
		return 0;
	tcm = mnl_nlmsg_get_payload(nlh);
	if (tcm->tcm_ifindex != ifindex || tcm->tcm_parent != parent)
		return 0;

	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		switch (mnl_attr_get_type(a)) {
		case TCA_KIND:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				kind = mnl_attr_get_str(a);
			break;
		case TCA_OPTIONS:
			opts = a;
			break;
		case TCA_STATS2:
			stats = a;
			break;
		}
	}
	if (!kind)
		return 0;
	snprintf(in->kind, sizeof(in->kind), "%s", kind);
	in->handle = tcm->tcm_handle;
	in->deleted = nlh->nlmsg_type == RTM_DELQDISC;
	if (strcmp(kind, TDMWIN_KIND)) {
		in->other = true;
		return 1;
	}
	in->present = true;
	if (in->deleted)
		return 1;
	if (!opts || parse_options(opts, in) < 0 ||
	    (stats && parse_stats(stats, in) < 0))
		return -1;
	return 1;
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *ctx = data;

	if (tdm_qdisc_parse(nlh, ctx->ifindex, ctx->parent, ctx->info) < 0)
		ctx->malformed = true;
	return MNL_CB_OK;
}

static int target_ifindex(const struct tdm_qdisc_target *t,
			  char *err, size_t errlen)
{
	int ifindex = t->ifindex;

	if (ifindex <= 0 && t->ifname[0] &&
	    memchr(t->ifname, 0, sizeof(t->ifname)))
		ifindex = (int)if_nametoindex(t->ifname);
	if (ifindex <= 0)
		tdm_set_err(err, errlen, "no interface '%.*s'",
			(int)sizeof(t->ifname), t->ifname);
	return ifindex;
}

static uint32_t target_parent(const struct tdm_qdisc_target *t)
{
	return t->parent ? t->parent : TC_H_ROOT;
}

int tdm_qdisc_resolve(struct tdm_qdisc_target *t, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	unsigned int idx;

	if (!t->ifname[0] && t->ifindex > 0) {
		if (!if_indextoname((unsigned int)t->ifindex, name)) {
			tdm_set_err(err, errlen, "no interface with index %d: %s",
				t->ifindex, strerror(errno));
			return -1;
		}
		snprintf(t->ifname, sizeof(t->ifname), "%s", name);
		return 0;
	}
	if (!memchr(t->ifname, 0, sizeof(t->ifname)) || !t->ifname[0]) {
		tdm_set_err(err, errlen, "no interface name given");
		return -1;
	}
	idx = if_nametoindex(t->ifname);
	if (!idx) {
		tdm_set_err(err, errlen, "no interface '%s': %s", t->ifname,
			strerror(errno));
		return -1;
	}
	t->ifindex = (int)idx;
	return 0;
}

static struct nlmsghdr *put_tc_header(char *buf, uint16_t type,
				      uint16_t flags, int ifindex,
				      uint32_t parent, uint32_t handle)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	return nlh;
}

/* Every qdisc of the device ifindex, each to cb (which filters: the
 * kernel may or may not).
 */
static int qdisc_dump(struct tdm_rtnl *r, int ifindex, mnl_cb_t cb,
		      void *data, char *err, size_t errlen)
{
	char buf[MNL_ALIGN(sizeof(struct nlmsghdr)) +
		 MNL_ALIGN(sizeof(struct tcmsg))];
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = put_tc_header(buf, RTM_GETQDISC, 0, ifindex, 0, 0);
	return tdm_nl_talk(&r->nl, nlh, true, cb, data, err, errlen);
}

int tdm_qdisc_get(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		  struct tdm_qdisc_info *info, char *err, size_t errlen)
{
	struct dump_ctx ctx;

	memset(info, 0, sizeof(*info));
	ctx.ifindex = target_ifindex(t, err, errlen);
	if (ctx.ifindex <= 0)
		return -1;
	ctx.parent = target_parent(t);
	ctx.info = info;
	ctx.malformed = false;

	if (qdisc_dump(r, ctx.ifindex, qdisc_cb, &ctx, err, errlen) < 0)
		return -1;
	if (ctx.malformed) {
		tdm_set_err(err, errlen,
			"unexpected tdmwin options in the kernel's dump");
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* ---- changing the qdisc ------------------------------------------------- */

enum install_mode {
	MODE_CREATE,	/* nothing there */
	MODE_REPLACE,	/* another kind there, perhaps a default (handle 0) */
	MODE_CHANGE,	/* our kind there */
};

struct install_req {
	const struct tdm_qdisc_target *t;
	const struct tdm_plan *p;
	const struct tdm_sender *s;
	int ifindex;
	bool hold;
	bool unconfirmed;
	bool had_lease;		/* the qdisc there has a lease */
	enum install_mode mode;
	uint32_t handle;	/* of the existing qdisc when changing */
};

uint32_t tdm_qdisc_window_class(const struct tdm_plan *p,
				const struct tdm_window *w)
{
	if (!p->nreceivers)
		return TDMWIN_CLASS_GATED;
	return TDMWIN_CLASS_DEST_FIRST + w->dest;
}

/* One TCA_TDMWIN_WINDOW, its class only when it is not 1:1. */
static void put_window(struct nlmsghdr *nlh, const struct tdm_window *win,
		       uint32_t cls)
{
	struct nlattr *w = mnl_attr_nest_start(nlh, TCA_TDMWIN_WINDOW);

	mnl_attr_put_u64(nlh, TCA_TDMWIN_WIN_OFFSET, win->offset);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_WIN_LENGTH, win->length);
	if (cls != TDMWIN_CLASS_GATED)
		mnl_attr_put_u32(nlh, TCA_TDMWIN_WIN_CLASS, cls);
	mnl_attr_nest_end(nlh, w);
}

void tdm_qdisc_put_windows(struct nlmsghdr *nlh, const struct tdm_plan *p,
			   const struct tdm_sender *s)
{
	struct nlattr *list;
	unsigned int i;

	list = mnl_attr_nest_start(nlh, TCA_TDMWIN_WINDOWS);
	for (i = 0; i < s->nwin; i++)
		put_window(nlh, &s->win[i],
			   tdm_qdisc_window_class(p, &s->win[i]));
	mnl_attr_nest_end(nlh, list);
}

static struct nlmsghdr *build_install(char *buf, const struct install_req *q)
{
	const struct tdm_plan *p = q->p;
	uint16_t flags = NLM_F_CREATE | NLM_F_EXCL;
	uint32_t handle = q->t->handle;
	uint32_t speed;
	struct nlmsghdr *nlh;
	struct nlattr *opts;

	if (q->mode == MODE_REPLACE)
		flags = NLM_F_CREATE | NLM_F_REPLACE;
	if (q->mode == MODE_CHANGE) {
		flags = 0;
		handle = q->handle;
	}
	nlh = put_tc_header(buf, RTM_NEWQDISC, flags, q->ifindex,
			    target_parent(q->t), handle);
	mnl_attr_put_strz(nlh, TCA_KIND, TDMWIN_KIND);

	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_CYCLE_TIME, p->cycle_ns);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_BASE_TIME, (uint64_t)p->base_time);
	tdm_qdisc_put_windows(nlh, p, q->s);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_GUARD, p->guard_ns);
	/* The kernel refuses any clockid on change, even the same one. */
	if (q->mode != MODE_CHANGE)
		mnl_attr_put_u32(nlh, TCA_TDMWIN_CLOCKID, (uint32_t)p->clockid);
	/*
	 * On change an absent link speed keeps the old one, which may be an
	 * override no longer wanted: there 0 ("from the device") is sent.
	 */
	speed = q->t->link_speed ? q->t->link_speed : p->link_speed;
	if (speed || q->mode == MODE_CHANGE)
		mnl_attr_put_u32(nlh, TCA_TDMWIN_LINK_SPEED, speed);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_BYPASS_PRIOS,
			 p->bypass_prios | q->t->extra_bypass);
	mnl_attr_put_u8(nlh, TCA_TDMWIN_BYPASS_PTP, p->bypass_ptp ? 1 : 0);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_PLAN_VERSION, p->version);
	mnl_attr_put_u8(nlh, TCA_TDMWIN_HOLD, q->hold ? 1 : 0);
	if (q->t->limit)
		mnl_attr_put_u32(nlh, TCA_TDMWIN_LIMIT, q->t->limit);
	/* The member owns the lease: 0 clears one left from before (and
	 * is not sent otherwise, for a module that predates leases).
	 */
	if (q->t->lease_ns || q->had_lease)
		mnl_attr_put_u64(nlh, TCA_TDMWIN_LEASE, q->t->lease_ns);
	if (q->unconfirmed)
		mnl_attr_put_u8(nlh, TCA_TDMWIN_UNCONFIRMED, 1);
	mnl_attr_nest_end(nlh, opts);
	return nlh;
}

/* Does the kernel hold sender s's windows of plan p, classes and all? */
static bool same_windows(const struct tdm_window *a, const uint32_t *cls,
			 unsigned int na, const struct tdm_plan *p,
			 const struct tdm_sender *s)
{
	unsigned int i;

	if (na != s->nwin)
		return false;
	for (i = 0; i < na; i++)
		if (a[i].offset != s->win[i].offset ||
		    a[i].length != s->win[i].length ||
		    cls[i] != tdm_qdisc_window_class(p, &s->win[i]))
			return false;
	return true;
}

/* A struct tdm_qdisc_info on the heap (it holds two plans' windows). */
static struct tdm_qdisc_info *info_alloc(char *err, size_t errlen)
{
	struct tdm_qdisc_info *in = malloc(sizeof(*in));

	if (!in)
		tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
	return in;
}

/*
 * Read back what the kernel holds: the plan must be the active or the
 * pending one, with our version, base time, cycle and windows (both
 * sides sorted by offset).
 */
static int verify_install(struct tdm_rtnl *r, const struct install_req *q,
			  char *err, size_t errlen)
{
	const struct tdm_plan *p = q->p;
	struct tdm_qdisc_info *in;
	int ret = -1;

	in = info_alloc(err, errlen);
	if (!in)
		return -1;
	if (tdm_qdisc_get(r, q->t, in, err, errlen) < 0)
		goto out;
	if (!in->present) {
		tdm_set_err(err, errlen, "no tdmwin qdisc found after installing it%s%s",
			in->other ? "; there is " : "",
			in->other ? in->kind : "");
		goto out;
	}
	if (in->version == p->version && in->base_time == p->base_time) {
		ret = in->cycle_ns == p->cycle_ns &&
		      same_windows(in->win, in->win_class, in->nwin, p, q->s) ?
		      0 : 1;
	} else if (in->pending && in->pending_version == p->version &&
		   in->pending_base == p->base_time) {
		ret = in->pending_cycle_ns == p->cycle_ns &&
		      same_windows(in->pending_win, in->pending_win_class,
				   in->pending_nwin, p, q->s) ?
		      0 : 1;
	}
	if (!ret && q->unconfirmed && !in->pending_unconfirmed) {
		tdm_set_err(err, errlen,
			"plan version %u is in the kernel, but not as unconfirmed",
			p->version);
		errno = EPROTO;
		ret = -1;
		goto out;
	}
	if (ret > 0)
		tdm_set_err(err, errlen,
			"plan version %u is in the kernel with another cycle or other windows",
			p->version);
	else if (ret < 0)
		tdm_set_err(err, errlen,
			"the qdisc does not carry plan version %u (base %lld): active version %u (base %lld)%s",
			p->version, (long long)p->base_time, in->version,
			(long long)in->base_time,
			in->pending ? ", another one pending" : "");
	if (ret) {
		errno = EPROTO;
		ret = -1;
	}
out:
	free(in);
	return ret;
}

static int send_install(struct tdm_rtnl *r, const struct install_req *q,
			char *err, size_t errlen)
{
	struct nlmsghdr *nlh;
	char *buf;
	int ret;

	buf = calloc(1, RTNL_SEND_SIZE);
	if (!buf) {
		tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	nlh = build_install(buf, q);
	ret = tdm_nl_talk(&r->nl, nlh, false, NULL, NULL, err, errlen);
	free(buf);
	return ret;
}

static int send_delete(struct tdm_rtnl *r, int ifindex, uint32_t parent,
		       uint32_t handle, char *err, size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = put_tc_header(buf, RTM_DELQDISC, 0, ifindex, parent, handle);
	/* The kernel then refuses to delete a qdisc of another kind. */
	mnl_attr_put_strz(nlh, TCA_KIND, TDMWIN_KIND);
	return tdm_nl_talk(&r->nl, nlh, false, NULL, NULL, err, errlen);
}

/* What sits at the target decides create, replace or change. */
static int choose_mode(struct tdm_rtnl *r, struct install_req *q,
		       char *err, size_t errlen)
{
	struct tdm_qdisc_info *in;
	int ret = 0;

	in = info_alloc(err, errlen);
	if (!in)
		return -1;
	if (tdm_qdisc_get(r, q->t, in, err, errlen) < 0) {
		ret = -1;
	} else if (in->present && in->clockid != q->p->clockid) {
		/*
		 * The kernel cannot change a qdisc's clock: start afresh.
		 * Queued packets are lost, as when replacing another kind.
		 */
		ret = send_delete(r, q->ifindex, target_parent(q->t),
				  in->handle, err, errlen);
		q->mode = MODE_CREATE;
	} else if (in->present) {
		q->mode = MODE_CHANGE;
		q->handle = in->handle;
		q->had_lease = in->lease_ns != 0;
	} else {
		q->mode = in->other ? MODE_REPLACE : MODE_CREATE;
	}
	free(in);
	return ret;
}

static int install(struct tdm_rtnl *r, struct install_req *qr,
		   const char *name, char *err, size_t errlen)
{
	struct install_req q = *qr;

	q.s = tdm_plan_sender(q.p, name);
	if (!q.s) {
		tdm_set_err(err, errlen, "the plan has no sender '%s'", name);
		errno = ENOENT;
		return -1;
	}
	if (!q.s->nwin || q.s->nwin > TDMWIN_MAX_WINDOWS) {
		tdm_set_err(err, errlen, "sender '%s' has %u windows (1 to %d)",
			name, q.s->nwin, TDMWIN_MAX_WINDOWS);
		errno = EINVAL;
		return -1;
	}
	q.ifindex = target_ifindex(q.t, err, errlen);
	if (q.ifindex <= 0) {
		errno = ENODEV;
		return -1;
	}
	if (choose_mode(r, &q, err, errlen) < 0 ||
	    send_install(r, &q, err, errlen) < 0)
		return -1;
	return verify_install(r, &q, err, errlen);
}

int tdm_qdisc_install(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      const struct tdm_plan *p, const char *name, bool hold,
		      char *err, size_t errlen)
{
	struct install_req q = { .t = t, .p = p, .hold = hold };

	return install(r, &q, name, err, errlen);
}

int tdm_qdisc_prepare(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      const struct tdm_plan *p, const char *name,
		      char *err, size_t errlen)
{
	struct install_req q = { .t = t, .p = p, .unconfirmed = true };
	struct tdm_qdisc_info *in;
	int ret;

	/* A change keeps the qdisc's hold as it is; a new qdisc has none. */
	in = info_alloc(err, errlen);
	if (!in)
		return -1;
	ret = tdm_qdisc_get(r, t, in, err, errlen);
	q.hold = ret == 0 && in->present && in->hold;
	free(in);
	if (ret < 0)
		return -1;
	return install(r, &q, name, err, errlen);
}

/*
 * Send an option-only change to the tdmwin qdisc at the target: the
 * attributes put() adds.  *in is read before (for the handle) and after.
 */
static int change_opts(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		       struct tdm_qdisc_info *in,
		       void (*put)(struct nlmsghdr *nlh, uint64_t arg),
		       uint64_t arg, char *err, size_t errlen)
{
	struct nlmsghdr *nlh;
	struct nlattr *opts;
	char buf[256];

	if (tdm_qdisc_get(r, t, in, err, errlen) < 0)
		return -1;
	if (!in->present) {
		tdm_set_err(err, errlen, "no tdmwin qdisc on %s", t->ifname);
		errno = ENOENT;
		return -1;
	}
	memset(buf, 0, sizeof(buf));
	nlh = put_tc_header(buf, RTM_NEWQDISC, 0, target_ifindex(t, NULL, 0),
			    target_parent(t), in->handle);
	mnl_attr_put_strz(nlh, TCA_KIND, TDMWIN_KIND);
	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	put(nlh, arg);
	mnl_attr_nest_end(nlh, opts);
	if (tdm_nl_talk(&r->nl, nlh, false, NULL, NULL, err, errlen) < 0)
		return -1;
	return tdm_qdisc_get(r, t, in, err, errlen);
}

static void put_confirm(struct nlmsghdr *nlh, uint64_t version)
{
	mnl_attr_put_u32(nlh, TCA_TDMWIN_CONFIRM, version);
}

static void put_abort(struct nlmsghdr *nlh, uint64_t version)
{
	mnl_attr_put_u32(nlh, TCA_TDMWIN_ABORT, version);
}

static void put_renew(struct nlmsghdr *nlh, uint64_t unused)
{
	(void)unused;
	mnl_attr_put(nlh, TCA_TDMWIN_RENEW, 0, NULL);
}

static void put_lease(struct nlmsghdr *nlh, uint64_t ns)
{
	mnl_attr_put_u64(nlh, TCA_TDMWIN_LEASE, ns);
}

static void put_hold(struct nlmsghdr *nlh, uint64_t hold)
{
	mnl_attr_put_u8(nlh, TCA_TDMWIN_HOLD, hold ? 1 : 0);
}

/*
 * change_opts(), then check() says what the dump shows did not take
 * (NULL: all did).
 */
static int change_checked(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
			  void (*put)(struct nlmsghdr *nlh, uint64_t arg),
			  uint64_t arg,
			  const char *(*check)(const struct tdm_qdisc_info *in,
					       uint64_t arg),
			  char *err, size_t errlen)
{
	struct tdm_qdisc_info *in;
	const char *why;
	int ret = -1;

	in = info_alloc(err, errlen);
	if (!in)
		return -1;
	if (change_opts(r, t, in, put, arg, err, errlen) < 0)
		goto out;
	why = check(in, arg);
	if (why) {
		tdm_set_err(err, errlen, "the qdisc on %s %s", t->ifname, why);
		errno = EPROTO;
		goto out;
	}
	ret = 0;
out:
	free(in);
	return ret;
}

static const char *settled(const struct tdm_qdisc_info *in, uint64_t version)
{
	(void)version;
	return in->pending_unconfirmed ?
	       "still has an unconfirmed plan (confirm or abort did not take)" :
	       NULL;
}

static const char *renewed(const struct tdm_qdisc_info *in, uint64_t unused)
{
	(void)unused;
	return in->lease_ns && in->lease_left_ns <= 0 ?
	       "shows its lease run out after the renewal" : NULL;
}

static const char *leased(const struct tdm_qdisc_info *in, uint64_t ns)
{
	if (in->lease_ns != ns)
		return "did not take the lease";
	return in->lease_ns && in->lease_left_ns <= 0 ?
	       "shows its lease run out after setting it" : NULL;
}

static const char *held(const struct tdm_qdisc_info *in, uint64_t hold)
{
	if (in->present && in->hold == !!hold)
		return NULL;
	return hold ? "did not take hold on" : "did not take hold off";
}

int tdm_qdisc_confirm(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      uint32_t version, char *err, size_t errlen)
{
	return change_checked(r, t, put_confirm, version, settled, err, errlen);
}

int tdm_qdisc_abort(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    uint32_t version, char *err, size_t errlen)
{
	return change_checked(r, t, put_abort, version, settled, err, errlen);
}

int tdm_qdisc_renew(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    char *err, size_t errlen)
{
	return change_checked(r, t, put_renew, 0, renewed, err, errlen);
}

int tdm_qdisc_set_lease(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
			char *err, size_t errlen)
{
	return change_checked(r, t, put_lease, t->lease_ns, leased, err, errlen);
}

int tdm_qdisc_set_hold(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		       bool hold, char *err, size_t errlen)
{
	return change_checked(r, t, put_hold, hold, held, err, errlen);
}

/* ---- the tree around tdmwin: mq at the root, etf under tdmwin ---------- */

struct link_ctx {
	int ifindex;
	bool found;
	uint32_t ntx;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_ctx *l = data;
	const struct ifinfomsg *ifi;
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	if (ifi->ifi_index != l->ifindex)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(a) == IFLA_NUM_TX_QUEUES &&
		    mnl_attr_validate(a, MNL_TYPE_U32) == 0) {
			l->ntx = mnl_attr_get_u32(a);
			l->found = true;
		}
	}
	return MNL_CB_OK;
}

int tdm_qdisc_tx_queues(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
			unsigned int *n, char *err, size_t errlen)
{
	char buf[MNL_ALIGN(sizeof(struct nlmsghdr)) +
		 MNL_ALIGN(sizeof(struct ifinfomsg))];
	struct link_ctx l = { 0 };
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;

	l.ifindex = target_ifindex(t, err, errlen);
	if (l.ifindex <= 0) {
		errno = ENODEV;
		return -1;
	}
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = l.ifindex;
	if (tdm_nl_talk(&r->nl, nlh, false, link_cb, &l, err, errlen) < 0)
		return -1;
	if (!l.found || !l.ntx) {
		tdm_set_err(err, errlen, "%s: the kernel did not say how many TX queues it has",
			    t->ifname);
		errno = EPROTO;
		return -1;
	}
	*n = l.ntx;
	return 0;
}

/* What sits at the root of t's device: its kind and handle in *in. */
static int root_get(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    struct tdm_qdisc_info *in, char *err, size_t errlen)
{
	struct tdm_qdisc_target root = *t;

	root.parent = TC_H_ROOT;
	return tdm_qdisc_get(r, &root, in, err, errlen);
}

int tdm_qdisc_mq(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		 bool create, uint32_t *handle, char *err, size_t errlen)
{
	struct tdm_qdisc_info *in;
	struct nlmsghdr *nlh;
	char buf[256];
	int ifindex, ret = -1;

	*handle = 0;
	in = info_alloc(err, errlen);
	if (!in)
		return -1;
	if (root_get(r, t, in, err, errlen) < 0)
		goto out;
	if (in->other && !strcmp(in->kind, MQ_KIND) && in->handle) {
		*handle = in->handle;
		ret = 0;
		goto out;
	}
	if (!create) {
		ret = 0;
		goto out;
	}
	ifindex = target_ifindex(t, err, errlen);
	if (ifindex <= 0)
		goto out;
	memset(buf, 0, sizeof(buf));
	nlh = put_tc_header(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE,
			    ifindex, TC_H_ROOT, t->handle);
	mnl_attr_put_strz(nlh, TCA_KIND, MQ_KIND);
	if (tdm_nl_talk(&r->nl, nlh, false, NULL, NULL, err, errlen) < 0 ||
	    root_get(r, t, in, err, errlen) < 0)
		goto out;
	if (!in->other || strcmp(in->kind, MQ_KIND) || !in->handle) {
		tdm_set_err(err, errlen, "no mq qdisc at the root of %s after creating it%s%s",
			    t->ifname, in->other || in->present ? "; there is " : "",
			    in->other || in->present ? in->kind : "");
		errno = EPROTO;
		goto out;
	}
	*handle = in->handle;
	ret = 0;
out:
	free(in);
	return ret;
}

struct etf_ctx {
	int ifindex;
	uint32_t parent;	/* the tdmwin's class 1:1 */
	bool found, etf;
	struct tc_etf_qopt q;
};

static int etf_cb(const struct nlmsghdr *nlh, void *data)
{
	struct etf_ctx *x = data;
	const struct nlattr *a, *o, *kind = NULL, *opts = NULL;
	const struct tcmsg *tcm;

	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*tcm))
		return MNL_CB_OK;
	tcm = mnl_nlmsg_get_payload(nlh);
	if (tcm->tcm_ifindex != x->ifindex || tcm->tcm_parent != x->parent)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*tcm)) {
		if (mnl_attr_get_type(a) == TCA_KIND &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			kind = a;
		if (mnl_attr_get_type(a) == TCA_OPTIONS)
			opts = a;
	}
	x->found = true;
	if (!kind || strcmp(mnl_attr_get_str(kind), ETF_KIND) || !opts)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(o, opts) {
		if (mnl_attr_get_type(o) == TCA_ETF_PARMS &&
		    mnl_attr_get_payload_len(o) >= sizeof(x->q)) {
			memcpy(&x->q, mnl_attr_get_payload(o), sizeof(x->q));
			x->etf = true;
		}
	}
	return MNL_CB_OK;
}

/* The child at class 1:1 of the tdmwin qdisc at t (in: read by the caller). */
static int etf_read(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    const struct tdm_qdisc_info *in, struct etf_ctx *x,
		    char *err, size_t errlen)
{
	memset(x, 0, sizeof(*x));
	x->ifindex = target_ifindex(t, err, errlen);
	if (x->ifindex <= 0)
		return -1;
	x->parent = TC_H_MAKE(in->handle, 1);
	return qdisc_dump(r, x->ifindex, etf_cb, x, err, errlen);
}

/* An etf that keeps the launch times tdmwin sets, as etf asks. */
static bool etf_is(const struct etf_ctx *x, const struct tdm_etf *want)
{
	uint32_t flags = TC_ETF_SKIP_SOCK_CHECK |
			 (want->offload ? TC_ETF_OFFLOAD_ON : 0);

	return x->etf && x->q.clockid == CLOCK_TAI &&
	       (uint32_t)x->q.delta == want->delta_ns &&
	       (x->q.flags & (TC_ETF_SKIP_SOCK_CHECK | TC_ETF_OFFLOAD_ON |
			      TC_ETF_DEADLINE_MODE_ON)) == flags;
}

int tdm_qdisc_etf_get(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		      struct tdm_etf *etf, char *err, size_t errlen)
{
	struct tdm_qdisc_info *in;
	struct etf_ctx x;
	int ret = -1;

	memset(etf, 0, sizeof(*etf));
	in = info_alloc(err, errlen);
	if (!in)
		return -1;
	if (tdm_qdisc_get(r, t, in, err, errlen) < 0)
		goto out;
	ret = 0;
	if (!in->present)
		goto out;
	if (etf_read(r, t, in, &x, err, errlen) < 0) {
		ret = -1;
		goto out;
	}
	if (x.etf && x.q.clockid == CLOCK_TAI && x.q.delta >= 0 &&
	    (x.q.flags & TC_ETF_SKIP_SOCK_CHECK) &&
	    !(x.q.flags & TC_ETF_DEADLINE_MODE_ON)) {
		etf->delta_ns = (uint32_t)x.q.delta;
		etf->offload = x.q.flags & TC_ETF_OFFLOAD_ON;
		ret = 1;
	}
out:
	free(in);
	return ret;
}

static void put_txtime(struct nlmsghdr *nlh, uint64_t on)
{
	mnl_attr_put_u8(nlh, TCA_TDMWIN_TXTIME, on ? 1 : 0);
}

/* Replace the child at class 1:1 of the tdmwin qdisc (in) with etf. */
static int etf_put(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		   const struct tdm_qdisc_info *in, const struct tdm_etf *etf,
		   char *err, size_t errlen)
{
	struct tc_etf_qopt q = {
		.delta = (int32_t)etf->delta_ns,
		.clockid = CLOCK_TAI,
		.flags = TC_ETF_SKIP_SOCK_CHECK |
			 (etf->offload ? TC_ETF_OFFLOAD_ON : 0),
	};
	struct nlmsghdr *nlh;
	struct nlattr *opts;
	char buf[256];

	memset(buf, 0, sizeof(buf));
	nlh = put_tc_header(buf, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE,
			    target_ifindex(t, NULL, 0),
			    TC_H_MAKE(in->handle, 1), 0);
	mnl_attr_put_strz(nlh, TCA_KIND, ETF_KIND);
	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_ETF_PARMS, sizeof(q), &q);
	mnl_attr_nest_end(nlh, opts);
	return tdm_nl_talk(&r->nl, nlh, false, NULL, NULL, err, errlen);
}

int tdm_qdisc_txtime(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		     const struct tdm_etf *etf, char *err, size_t errlen)
{
	struct tdm_qdisc_info *in;
	struct etf_ctx x;
	int ret = -1;

	if (etf->delta_ns > INT32_MAX) {
		tdm_set_err(err, errlen, "etf delta %u ns: at most %d ns",
			    etf->delta_ns, INT32_MAX);
		errno = EINVAL;
		return -1;
	}
	in = info_alloc(err, errlen);
	if (!in)
		return -1;
	if (tdm_qdisc_get(r, t, in, err, errlen) < 0)
		goto out;
	if (!in->present) {
		tdm_set_err(err, errlen, "no tdmwin qdisc on %s for the etf child",
			    t->ifname);
		errno = ENOENT;
		goto out;
	}
	if (etf_read(r, t, in, &x, err, errlen) < 0)
		goto out;
	if (!etf_is(&x, etf)) {
		/* The kernel keeps txtime's child while txtime is on. */
		if (in->txtime &&
		    change_opts(r, t, in, put_txtime, 0, err, errlen) < 0)
			goto out;
		if (etf_put(r, t, in, etf, err, errlen) < 0)
			goto out;
		in->txtime = false;
	}
	if (!in->txtime &&
	    change_opts(r, t, in, put_txtime, 1, err, errlen) < 0)
		goto out;
	/* Read back: txtime on, over the etf child asked for. */
	if (tdm_qdisc_get(r, t, in, err, errlen) < 0 ||
	    etf_read(r, t, in, &x, err, errlen) < 0)
		goto out;
	if (!in->present || !in->txtime || !etf_is(&x, etf)) {
		tdm_set_err(err, errlen,
			    "the qdisc on %s %s after setting launch times",
			    t->ifname, !in->present ? "is gone" :
			    !in->txtime ? "has txtime off" :
			    "has no etf child with the delta and flags asked for");
		errno = EPROTO;
		goto out;
	}
	ret = 0;
out:
	free(in);
	return ret;
}

/* ---- the dump, as the kernel sends it (tdm_qdisc_put_info()) ---------- */

/* One plan: version, cycle, base, guard and its windows with classes. */
static void put_plan(struct nlmsghdr *nlh, uint32_t version, uint64_t cycle,
		     int64_t base, uint32_t guard, const struct tdm_window *win,
		     const uint32_t *cls, unsigned int nwin)
{
	struct nlattr *list;
	unsigned int i;

	mnl_attr_put_u32(nlh, TCA_TDMWIN_PLAN_VERSION, version);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_CYCLE_TIME, cycle);
	mnl_attr_put_u64(nlh, TCA_TDMWIN_BASE_TIME, (uint64_t)base);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_GUARD, guard);
	list = mnl_attr_nest_start(nlh, TCA_TDMWIN_WINDOWS);
	for (i = 0; i < nwin && i < TDMWIN_MAX_WINDOWS; i++)
		put_window(nlh, &win[i], cls[i]);
	mnl_attr_nest_end(nlh, list);
}

static void put_dump_options(struct nlmsghdr *nlh,
			     const struct tdm_qdisc_info *in)
{
	struct nlattr *opts, *pend;

	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_CLOCKID, (uint32_t)in->clockid);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_LINK_SPEED, in->link_speed);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_EFF_LINK_SPEED, in->eff_link_speed);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_BYPASS_PRIOS, in->bypass_prios);
	mnl_attr_put_u8(nlh, TCA_TDMWIN_BYPASS_PTP, in->bypass_ptp);
	mnl_attr_put_u8(nlh, TCA_TDMWIN_HOLD, in->hold);
	mnl_attr_put_u8(nlh, TCA_TDMWIN_TXTIME, in->txtime);
	mnl_attr_put_u32(nlh, TCA_TDMWIN_LIMIT, in->limit);
	if (in->lease_ns) {
		mnl_attr_put_u64(nlh, TCA_TDMWIN_LEASE, in->lease_ns);
		mnl_attr_put_u64(nlh, TCA_TDMWIN_LEASE_LEFT,
				 (uint64_t)in->lease_left_ns);
	}
	/* At the top level only when no plan is pending, as the kernel. */
	if (in->pending_unconfirmed && !in->pending)
		mnl_attr_put_u8(nlh, TCA_TDMWIN_UNCONFIRMED, 1);
	put_plan(nlh, in->version, in->cycle_ns, in->base_time, in->guard_ns,
		 in->win, in->win_class, in->nwin);
	if (in->pending) {
		pend = mnl_attr_nest_start(nlh, TCA_TDMWIN_PENDING);
		put_plan(nlh, in->pending_version, in->pending_cycle_ns,
			 in->pending_base, in->pending_guard_ns,
			 in->pending_win, in->pending_win_class,
			 in->pending_nwin);
		if (in->pending_unconfirmed)
			mnl_attr_put_u8(nlh, TCA_TDMWIN_UNCONFIRMED, 1);
		mnl_attr_nest_end(nlh, pend);
	}
	mnl_attr_nest_end(nlh, opts);
}

static void put_dump_stats(struct nlmsghdr *nlh,
			   const struct tdm_qdisc_info *in)
{
	struct gnet_stats_basic b = { .bytes = in->bytes,
				      .packets = (uint32_t)in->packets };
	struct gnet_stats_queue q = { .qlen = (uint32_t)in->qlen,
				      .backlog = (uint32_t)in->backlog,
				      .drops = (uint32_t)in->drops };
	struct nlattr *stats;

	stats = mnl_attr_nest_start(nlh, TCA_STATS2);
	mnl_attr_put(nlh, TCA_STATS_BASIC, sizeof(b), &b);
	mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(q), &q);
	mnl_attr_put(nlh, TCA_STATS_APP, sizeof(in->xstats), &in->xstats);
	mnl_attr_nest_end(nlh, stats);
}

struct nlmsghdr *tdm_qdisc_put_info(char *buf, int ifindex, uint32_t parent,
				    const struct tdm_qdisc_info *in)
{
	struct nlmsghdr *nlh;

	bool gone = in->deleted || (!in->present && !in->other);

	memset(buf, 0, TDM_QDISC_MSG_MAX);
	nlh = put_tc_header(buf, gone ? RTM_DELQDISC : RTM_NEWQDISC, 0, ifindex,
			    parent, in->handle);
	mnl_attr_put_strz(nlh, TCA_KIND, in->other ? in->kind : TDMWIN_KIND);
	if (gone || in->other)
		return nlh;
	put_dump_options(nlh, in);
	put_dump_stats(nlh, in);
	return nlh;
}

/* ---- for the other rtnetlink users of libtdm (tdm_filter.c) ---- */

struct nlmsghdr *tdm_tc_header(char *buf, uint16_t type, uint16_t flags,
			       int ifindex, uint32_t parent, uint32_t handle)
{
	return put_tc_header(buf, type, flags, ifindex, parent, handle);
}

int tdm_qdisc_ifindex(const struct tdm_qdisc_target *t, char *err,
		      size_t errlen)
{
	return target_ifindex(t, err, errlen);
}
