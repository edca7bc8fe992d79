// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdmd's member logic (tdmd/member.c) on the host, with a
 * fake qdisc, a fake ptp4l, a fake PHC, a fake session and a fake clock
 * (struct member_io): the session and REGISTER, plans installed or
 * refused, the two phases (prepare, then commit or abort, and what a
 * member cut off while prepared does), the PTP and PHC hysteresis that
 * holds and releases the gate, the lease renewed while healthy, and a
 * reload that changes the configuration under a running member; and the
 * metrics it exports, checked by Prometheus' promtool when it is there.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tdm_log.h"
#include "tdm_phc.h"
#include "tdm_plan.h"
#include "tdm_proto.h"
#include "tdm_ptp.h"
#include "tdm_util.h"
#include "tdmd.h"

#define MS		1000000LL
#define SEC		(1000 * MS)
#define TAI_NOW		(1800000000LL * SEC)

static const char plan_ab[] =
	"[global]\n"
	"clock tai\n"
	"cycle_time 10ms\n"
	"guard 2us\n"
	"[sender a]\n"
	"window 0 2ms\n"
	"[sender b]\n"
	"window 5ms 2ms\n";

/* A plan without sender a. */
static const char plan_b[] =
	"[global]\n"
	"clock tai\n"
	"cycle_time 10ms\n"
	"[sender b]\n"
	"window 5ms 2ms\n";

/* 3 x 3 barrel shifters: a sends to x0, x1, x2 (classes 3, 4, 5). */
#define RECEIVERS3 \
	"[receiver x0]\naddress 198.18.1.1\n" \
	"[receiver x1]\naddress 198.18.1.2\n" \
	"[receiver x2]\naddress 2001:db8::3\n"
#define BARREL3 \
	"[barrel]\nsenders a b c\nslot 1ms\ndead_time 100us\n"

static const char plan_nxm[] =
	"[global]\nclock tai\n" RECEIVERS3 BARREL3;

/* x2 dropped. */
static const char plan_nxm2[] =
	"[global]\nclock tai\n"
	"[receiver x0]\naddress 198.18.1.1\n"
	"[receiver x1]\naddress 198.18.1.2\n" BARREL3;

/* x0 and x1 swap addresses: classes 3 and 4 change their meaning. */
static const char plan_nxm_swap[] =
	"[global]\nclock tai\n"
	"[receiver x0]\naddress 198.18.1.2\n"
	"[receiver x1]\naddress 198.18.1.1\n"
	"[receiver x2]\naddress 2001:db8::3\n" BARREL3;

/* What the fake kernel's qdisc holds and what it was asked. */
struct fqdisc {
	struct tc_tdmwin_xstats xs;
	bool present;
	uint32_t version, pending_version;
	bool pending, unconfirmed, hold;
	uint64_t lease_ns;
	unsigned int installs, prepares, confirms, aborts, renews, set_leases,
		     set_holds;
	uint32_t last_confirm, last_abort;
	int fail_install, fail_prepare, fail_confirm, fail_renew, fail_txtime;
	/* the counters per window slot, when nslots > 0 */
	unsigned int nslots;
	struct tdm_qdisc_slot slots[2];
	/* launch times: txtime on over an etf child of this delta */
	bool txtime, etf_offload;
	uint32_t etf_delta;
	unsigned int txtimes;
	/* the destination classes' filters */
	struct tdm_filter filt[TDM_FILTER_MAX];
	unsigned int nfilt, filter_syncs;
	int fail_filter;
};

#define NQ		4		/* TX queues of the fake device */
#define MQ_HANDLE	0x1000000u	/* 100: */

/* The last frame of each kind the member sent. */
struct fsent {
	unsigned int nframes, nacks, nheartbeats, nregisters;
	/* ACK */
	uint32_t ack_version, ack_status, ack_phase;
	char ack_msg[512];
	/* REGISTER */
	uint32_t reg_version, reg_prepared, reg_proto;
	char reg_name[64];
	/* HEARTBEAT */
	uint32_t hb_state, hb_version, hb_prepared;
	uint8_t hb_hold;
};

struct fx {
	struct tdmd_conf conf;
	struct member_io io;
	struct member *me;
	int64_t mono;
	struct fqdisc q;		/* at the root's place */
	/* Under mq: the device's TX queues, mq at its root (0: none) and
	 * a tdmwin under each queue.
	 */
	unsigned int ntx;
	uint32_t mq_handle;
	unsigned int mq_creates;
	struct fqdisc qq[NQ];
	/* ptp4l */
	struct tdm_ptp_status ptp;
	bool ptp_down;			/* no answer */
	unsigned int ptp_queries;
	/* the PHC: index -1 for none */
	int phc_index;
	int64_t phc_offset;
	/* the session */
	unsigned int connects, closes;
	bool connect_fails;
	bool up;			/* connect() called, not closed */
	struct fsent s;
	uint32_t *buf;			/* frames the test builds */
	/* gate tdmd: the plan store instead of the fake qdisc */
	struct store *store;
	char *msg;			/* TDM_QDISC_MSG_MAX bytes */
	unsigned int publishes;		/* changes the store announced */
};

/* ---- the fake io ---- */

/* The fake qdisc at t: a queue's under mq, else the root's. */
static struct fqdisc *fq(struct fx *f, const struct tdm_qdisc_target *t)
{
	uint32_t minor = TC_H_MIN(t->parent);

	if (f->mq_handle && t->parent && TC_H_MAJ(t->parent) == f->mq_handle) {
		assert_true(minor >= 1 && minor <= NQ);
		return &f->qq[minor - 1];
	}
	/* Under mq the root's place is not a tdmwin's. */
	assert_true(t->parent == 0 || t->parent == TC_H_ROOT);
	return &f->q;
}

static int f_resolve(void *ctx, struct tdm_qdisc_target *t, char *err,
		     size_t errlen)
{
	(void)ctx;
	(void)err;
	(void)errlen;
	t->ifindex = 7;
	return 0;
}

static int f_get(void *ctx, const struct tdm_qdisc_target *t,
		 struct tdm_qdisc_info *info, char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	(void)err;
	(void)errlen;
	memset(info, 0, sizeof(*info));
	info->present = q->present;
	info->version = q->version;
	info->pending = q->pending;
	info->pending_version = q->pending_version;
	info->pending_unconfirmed = q->unconfirmed;
	info->hold = q->hold;
	info->lease_ns = q->lease_ns;
	info->lease_left_ns = q->lease_ns / 2;
	info->xstats = q->xs;
	info->xstats.plan_version = q->version;
	info->xstats.hold = q->hold;
	info->packets = q->xs.window_packets + q->xs.bypass_packets;
	info->drops = q->xs.hold_drops;
	info->has_slots = q->nslots > 0;
	info->slots_version = q->version;
	info->nslots = q->nslots;
	memcpy(info->slots, q->slots, sizeof(q->slots));
	return 0;
}

static int f_fail(int *n, char *err, size_t errlen, const char *what)
{
	if (!*n)
		return 0;
	(*n)--;
	snprintf(err, errlen, "kernel: %s refused", what);
	return -1;
}

static int f_install(void *ctx, const struct tdm_qdisc_target *t,
		     const struct tdm_plan *p, const char *name, bool hold,
		     char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	(void)name;
	if (f_fail(&q->fail_install, err, errlen, "install"))
		return -1;
	q->installs++;
	q->present = true;
	q->version = p->version;
	q->hold = hold;
	q->pending = q->unconfirmed = false;
	if (t->lease_ns)
		q->lease_ns = t->lease_ns;
	return 0;
}

static int f_prepare(void *ctx, const struct tdm_qdisc_target *t,
		     const struct tdm_plan *p, const char *name, char *err,
		     size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	(void)name;
	if (f_fail(&q->fail_prepare, err, errlen, "prepare"))
		return -1;
	q->prepares++;
	q->present = true;
	q->pending = q->unconfirmed = true;
	q->pending_version = p->version;
	return 0;
}

static int f_confirm(void *ctx, const struct tdm_qdisc_target *t,
		     uint32_t version, char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	if (f_fail(&q->fail_confirm, err, errlen, "confirm"))
		return -1;
	/* As the kernel: only the unconfirmed plan of that version. */
	if (!q->unconfirmed || (q->pending ? q->pending_version : q->version) != version) {
		snprintf(err, errlen, "kernel: No unconfirmed plan of this version");
		return -1;
	}
	q->confirms++;
	q->last_confirm = version;
	q->version = version;
	q->pending = q->unconfirmed = false;
	return 0;
}

static int f_abort(void *ctx, const struct tdm_qdisc_target *t,
		   uint32_t version, char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	(void)err;
	(void)errlen;
	q->aborts++;
	q->last_abort = version;
	q->pending = q->unconfirmed = false;
	return 0;
}

static int f_renew(void *ctx, const struct tdm_qdisc_target *t, char *err,
		   size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	if (!q->present) {
		snprintf(err, errlen, "no tdmwin qdisc on eth0");
		return -1;
	}
	if (!q->lease_ns) {
		snprintf(err, errlen, "kernel: no lease to renew");
		return -1;
	}
	if (f_fail(&q->fail_renew, err, errlen, "renew"))
		return -1;
	q->renews++;
	return 0;
}

static int f_set_lease(void *ctx, const struct tdm_qdisc_target *t,
		       char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	if (!q->present) {
		snprintf(err, errlen, "no tdmwin qdisc on eth0");
		return -1;
	}
	q->set_leases++;
	q->lease_ns = t->lease_ns;
	return 0;
}

static int f_set_hold(void *ctx, const struct tdm_qdisc_target *t, bool hold,
		      char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	(void)err;
	(void)errlen;
	q->set_holds++;
	q->hold = hold;
	return 0;
}

static int f_tx_queues(void *ctx, const struct tdm_qdisc_target *t,
		       unsigned int *n, char *err, size_t errlen)
{
	(void)t;
	(void)err;
	(void)errlen;
	*n = ((struct fx *)ctx)->ntx;
	return 0;
}

static int f_mq(void *ctx, const struct tdm_qdisc_target *t, bool create,
		uint32_t *handle, char *err, size_t errlen)
{
	struct fx *f = ctx;

	(void)err;
	(void)errlen;
	assert_true(t->parent == TC_H_ROOT);
	if (!f->mq_handle && create) {
		/* It replaces what was at the root. */
		f->mq_handle = t->handle ? t->handle : MQ_HANDLE;
		f->mq_creates++;
		memset(&f->q, 0, sizeof(f->q));
	}
	*handle = f->mq_handle;
	return 0;
}

static int f_txtime(void *ctx, const struct tdm_qdisc_target *t,
		    const struct tdm_etf *etf, char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fqdisc *q = fq(f, t);

	if (!q->present) {
		snprintf(err, errlen, "no tdmwin qdisc for the etf child");
		return -1;
	}
	if (f_fail(&q->fail_txtime, err, errlen, "txtime"))
		return -1;
	q->txtimes++;
	q->txtime = true;
	q->etf_delta = etf->delta_ns;
	q->etf_offload = etf->offload;
	return 0;
}

static int f_filter_sync(void *ctx, const struct tdm_qdisc_target *t,
			 const struct tdm_filter *want, unsigned int n,
			 char *err, size_t errlen)
{
	struct fqdisc *q = fq(ctx, t);

	if (!q->present) {
		snprintf(err, errlen, "no tdmwin qdisc on eth0 for the filters");
		return -1;
	}
	if (f_fail(&q->fail_filter, err, errlen, "filter"))
		return -1;
	q->filter_syncs++;
	memcpy(q->filt, want, n * sizeof(*want));
	q->nfilt = n;
	return 0;
}

static int f_ptp_open(void *ctx, const char *path, uint8_t domain, char *err,
		      size_t errlen)
{
	(void)ctx;
	(void)path;
	(void)domain;
	(void)err;
	(void)errlen;
	return 0;
}

static int f_ptp_query(void *ctx, int timeout_ms, struct tdm_ptp_status *st,
		       char *err, size_t errlen)
{
	struct fx *f = ctx;

	(void)timeout_ms;
	f->ptp_queries++;
	memset(st, 0, sizeof(*st));
	if (f->ptp_down) {
		snprintf(err, errlen, "ptp4l did not answer within 100 ms");
		return -1;
	}
	*st = f->ptp;
	return 0;
}

static int f_phc_index(void *ctx, const char *ifname, int *index, char *err,
		       size_t errlen)
{
	(void)ifname;
	(void)err;
	(void)errlen;
	*index = ((struct fx *)ctx)->phc_index;
	return 0;
}

static int f_phc_open(void *ctx, int index, char *err, size_t errlen)
{
	(void)ctx;
	(void)index;
	(void)err;
	(void)errlen;
	return 0;
}

static int f_phc_read(void *ctx, struct tdm_phc_offset *o, char *err,
		      size_t errlen)
{
	(void)err;
	(void)errlen;
	memset(o, 0, sizeof(*o));
	o->offset_ns = ((struct fx *)ctx)->phc_offset;
	o->method = TDM_PHC_EXTENDED;
	o->tai_offset = 37;
	return 0;
}

static int f_connect(void *ctx, const struct tdmd_hostport *hp, char *addr,
		     size_t addrlen, char *err, size_t errlen)
{
	struct fx *f = ctx;

	f->connects++;
	snprintf(addr, addrlen, "%s:%s", hp->host, hp->port);
	if (f->connect_fails) {
		snprintf(err, errlen, "cannot connect to %s: Connection refused",
			 hp->host);
		return -1;
	}
	assert_false(f->up);
	f->up = true;
	return 0;
}

static int f_put_nonce(void *ctx, struct nlmsghdr *nlh, char *err,
		       size_t errlen)
{
	(void)ctx;
	(void)err;
	(void)errlen;
	mnl_attr_put(nlh, TDM_A_NONCE, TDM_NONCE_LEN,
		     "0123456789abcdef0123456789abcdef");
	return 0;
}

static int f_send(void *ctx, struct nlmsghdr *nlh, char *err, size_t errlen)
{
	struct fx *f = ctx;
	struct fsent *s = &f->s;
	const struct nlattr *a, *b;

	(void)err;
	(void)errlen;
	assert_true(f->up);
	s->nframes++;
	switch (nlh->nlmsg_type) {
	case TDM_MSG_ACK:
		s->nacks++;
		s->ack_phase = TDM_PHASE_PREPARE;
		s->ack_msg[0] = '\0';
		break;
	case TDM_MSG_REGISTER:
		s->nregisters++;
		s->reg_version = s->reg_prepared = s->reg_proto = 0;
		break;
	case TDM_MSG_HEARTBEAT:
		s->nheartbeats++;
		s->hb_prepared = 0;
		break;
	}
	mnl_attr_for_each(a, nlh, sizeof(struct tdm_fhdr)) {
		uint16_t t = mnl_attr_get_type(a);

		switch (nlh->nlmsg_type) {
		case TDM_MSG_ACK:
			if (t == TDM_A_PLAN_VERSION)
				s->ack_version = mnl_attr_get_u32(a);
			if (t == TDM_A_STATUS)
				s->ack_status = mnl_attr_get_u32(a);
			if (t == TDM_A_PHASE)
				s->ack_phase = mnl_attr_get_u32(a);
			if (t == TDM_A_MESSAGE)
				tdm_strlcpy(s->ack_msg, mnl_attr_get_str(a),
					    sizeof(s->ack_msg));
			break;
		case TDM_MSG_REGISTER:
			if (t == TDM_A_PLAN_VERSION)
				s->reg_version = mnl_attr_get_u32(a);
			if (t == TDM_A_PREPARED)
				s->reg_prepared = mnl_attr_get_u32(a);
			if (t == TDM_A_PROTO)
				s->reg_proto = mnl_attr_get_u32(a);
			if (t == TDM_A_NAME)
				tdm_strlcpy(s->reg_name, mnl_attr_get_str(a),
					    sizeof(s->reg_name));
			break;
		case TDM_MSG_HEARTBEAT:
			if (t == TDM_A_PLAN_VERSION)
				s->hb_version = mnl_attr_get_u32(a);
			if (t == TDM_A_PREPARED)
				s->hb_prepared = mnl_attr_get_u32(a);
			if (t != TDM_A_SYNC)
				break;
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == TDM_S_STATE)
					s->hb_state = mnl_attr_get_u32(b);
				if (mnl_attr_get_type(b) == TDM_S_HOLD)
					s->hb_hold = mnl_attr_get_u8(b);
			}
			break;
		}
	}
	return 0;
}

static void f_close(void *ctx)
{
	struct fx *f = ctx;

	assert_true(f->up);
	f->up = false;
	f->closes++;
}

static int64_t f_mono(void *ctx)
{
	return ((struct fx *)ctx)->mono;
}

/* The plans' clock: TAI_NOW when the monotonic clock reads 0. */
static int64_t f_clock(void *ctx, int clockid)
{
	(void)clockid;
	return TAI_NOW + ((struct fx *)ctx)->mono;
}

static uint64_t f_random(void *ctx)
{
	(void)ctx;
	return 0;
}

/* ---- the fixture ---- */

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->buf = malloc(TDM_MAX_FRAME);
	assert_non_null(f->buf);
	f->conf.role = ROLE_MEMBER;
	strcpy(f->conf.name, "a");
	strcpy(f->conf.coord.host, "198.18.0.1");
	strcpy(f->conf.coord.port, "7453");
	strcpy(f->conf.target.ifname, "eth0");
	f->conf.control_priority = 7;
	f->conf.heartbeat_ns = 1 * SEC;
	f->conf.reconnect_min_ns = 100 * MS;
	f->conf.reconnect_max_ns = 5 * SEC;
	f->conf.ptp_policy = PTP_OFF;
	f->conf.ptp_threshold_ns = 1000;
	f->conf.ptp_interval_ns = 250 * MS;
	f->conf.ptp_good_checks = 3;
	f->conf.ptp_bad_checks = 2;
	f->conf.phc_threshold_ns = 0;
	f->conf.target.parent = TC_H_ROOT;
	f->conf.etf.delta_ns = 200000;
	f->ntx = 1;
	f->mono = 1 * SEC;
	f->phc_index = -1;
	/* ptp4l, when asked: SLAVE, 10 ns off, TAI offset set. */
	f->ptp.port_ok = f->ptp.time_status_ok = true;
	f->ptp.port_state = TDM_PS_SLAVE;
	f->ptp.master_offset = 10;
	f->ptp.tai_offset = 37;
	f->ptp.gm_present = true;
	memcpy(f->ptp.gm_identity, "\x00\x11\x22\xff\xfe\x33\x44\x55", 8);
	f->io = (struct member_io){
		.qdisc_resolve = f_resolve, .qdisc_get = f_get,
		.qdisc_install = f_install, .qdisc_prepare = f_prepare,
		.qdisc_confirm = f_confirm, .qdisc_abort = f_abort,
		.qdisc_renew = f_renew, .qdisc_set_lease = f_set_lease,
		.qdisc_set_hold = f_set_hold,
		.tx_queues = f_tx_queues, .qdisc_mq = f_mq,
		.qdisc_txtime = f_txtime, .filter_sync = f_filter_sync,
		.ptp_open = f_ptp_open, .ptp_query = f_ptp_query,
		.phc_index = f_phc_index, .phc_open = f_phc_open,
		.phc_read = f_phc_read,
		.connect = f_connect, .put_nonce = f_put_nonce,
		.send = f_send, .close = f_close,
		.mono_ns = f_mono, .clock_ns = f_clock, .random = f_random,
		.ctx = f,
	};
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	member_free(f->me);
	/* member_free() closed the session it held. */
	assert_false(f->up);
	store_free(f->store);
	free(f->msg);
	free(f->buf);
	free(f);
	return 0;
}

static void fx_start(struct fx *f)
{
	char err[256];

	f->me = member_new(&f->conf, &f->io, err, sizeof(err));
	if (!f->me)
		fail_msg("member_new: %s", err);
}

static int64_t tick(struct fx *f)
{
	return member_tick(f->me, f->mono);
}

/* Move the clock by ns, ticking at every deadline on the way. */
static void run_for(struct fx *f, int64_t ns)
{
	int64_t end = f->mono + ns;

	for (;;) {
		int64_t next = tick(f);

		if (next > end)
			break;
		f->mono = next > f->mono ? next : f->mono + 1;
	}
	f->mono = end;
	tick(f);
}

static struct nlmsghdr *msg_begin(struct fx *f, uint16_t type)
{
	return tdm_frame_begin(f->buf, TDM_MAX_FRAME, type);
}

/* Hand nlh to the member as the coordinator's; its return value.  An
 * error ends the session, as the transport does.
 */
static int deliver(struct fx *f, struct nlmsghdr *nlh)
{
	struct tdm_msg m = { .type = nlh->nlmsg_type };
	const struct nlattr *a;
	char err[256] = "";

	mnl_attr_for_each(a, nlh, sizeof(struct tdm_fhdr))
		m.tb[mnl_attr_get_type(a)] = a;
	if (!member_frame(f->me, &m, err, sizeof(err)))
		return 0;
	member_lost(f->me, err);
	return -1;
}

/* Connect, HELLO (the coordinator speaks level), REGISTER, WELCOME (the
 * coordinator runs version).
 */
static void session_up_level(struct fx *f, uint32_t version, uint32_t level)
{
	unsigned int hb;
	struct nlmsghdr *nlh;

	if (!f->up)
		tick(f);
	assert_true(f->up);
	member_connected(f->me);
	nlh = msg_begin(f, TDM_MSG_HELLO);
	mnl_attr_put_u32(nlh, TDM_A_PROTO, level);
	assert_int_equal(deliver(f, nlh), 0);
	assert_string_equal(f->s.reg_name, "a");
	hb = f->s.nheartbeats;
	nlh = msg_begin(f, TDM_MSG_WELCOME);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, version);
	assert_int_equal(deliver(f, nlh), 0);
	assert_int_equal(f->s.nheartbeats, hb + 1);
}

static void session_up(struct fx *f, uint32_t version)
{
	session_up_level(f, version, TDM_PROTO_LEVEL);
}

static void load_plan(const char *text, uint32_t version,
		      struct tdm_plan *p)
{
	char err[256];

	if (tdm_plan_parse(text, "test", p, err, sizeof(err)))
		fail_msg("plan: %s", err);
	p->version = version;
	p->base_time = TAI_NOW + 10 * SEC + version * SEC;
}

/* PLAN version of text, a prepare if commit_by is not 0. */
static int send_plan(struct fx *f, const char *text, uint32_t version,
		     int64_t commit_by)
{
	struct nlmsghdr *nlh = msg_begin(f, TDM_MSG_PLAN);
	struct tdm_plan p;

	load_plan(text, version, &p);
	assert_int_equal(tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, &p), 0);
	if (commit_by)
		mnl_attr_put_u64(nlh, TDM_A_COMMIT_BY, (uint64_t)commit_by);
	tdm_plan_free(&p);
	return deliver(f, nlh);
}

static int outcome(struct fx *f, uint16_t type, uint32_t version)
{
	struct nlmsghdr *nlh = msg_begin(f, type);

	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, version);
	return deliver(f, nlh);
}

static void assert_ack(struct fx *f, uint32_t phase, uint32_t version,
		       uint32_t status, const char *msg)
{
	assert_int_equal(f->s.ack_phase, phase);
	assert_int_equal(f->s.ack_version, version);
	assert_int_equal(f->s.ack_status, status);
	if (msg && !strstr(f->s.ack_msg, msg))
		fail_msg("ack message '%s' lacks '%s'", f->s.ack_msg, msg);
}

/* ---- control requests ---- */

struct req {
	struct ctl_req r;
	bool replied, ok;
	char *body;
};

static void keep_reply(struct ctl_req *r, bool ok, const char *body)
{
	struct req *q = (struct req *)((char *)r - offsetof(struct req, r));

	q->replied = true;
	q->ok = ok;
	q->body = strdup(body ? body : "");
}

/* The status text; the caller frees it. */
static char *status(struct fx *f, bool json)
{
	struct req q = { .r = { .cmd = "status", .json = json, .body = "",
				.reply = keep_reply } };

	member_control(f->me, &q.r);
	assert_true(q.replied && q.ok);
	return q.body;
}

static void assert_status_has(struct fx *f, bool json, const char *needle)
{
	char *s = status(f, json);

	if (!strstr(s, needle)) {
		fprintf(stderr, "%s", s);
		free(s);
		fail_msg("'%s' not in the status", needle);
	}
	free(s);
}

/* ---- the session ---- */

/* REGISTER names us and what we run; heartbeats every interval. */
static void test_register_and_heartbeat(void **state)
{
	struct fx *f = *state;
	unsigned int hb;

	fx_start(f);
	assert_false(f->up);
	tick(f);
	assert_int_equal(f->connects, 1);
	session_up(f, 0);
	assert_int_equal(f->s.reg_version, 0);
	assert_int_equal(f->s.reg_prepared, 0);
	hb = f->s.nheartbeats;
	run_for(f, 3 * SEC);
	assert_int_equal(f->s.nheartbeats, hb + 3);
	assert_status_has(f, false, "connected");
}

/* A refused connection: retried after reconnect_min, doubling to max. */
static void test_reconnect_backoff(void **state)
{
	struct fx *f = *state;
	int64_t t0;

	f->connect_fails = true;
	fx_start(f);
	t0 = f->mono;
	tick(f);
	assert_int_equal(f->connects, 1);
	f->mono = t0 + 99 * MS;
	tick(f);
	assert_int_equal(f->connects, 1);
	f->mono = t0 + 100 * MS;
	tick(f);
	assert_int_equal(f->connects, 2);
	/* then 200 ms */
	f->mono += 199 * MS;
	tick(f);
	assert_int_equal(f->connects, 2);
	f->mono += 1 * MS;
	tick(f);
	assert_int_equal(f->connects, 3);
	/* capped at 5 s: 400 800 1600 3200 5000 5000 ms */
	run_for(f, 20 * SEC);
	assert_int_equal(f->connects, 3 + 6);
	assert_status_has(f, false, "Connection refused");
}

/* A coordinator that accepts but says nothing is left after 10 s. */
static void test_handshake_timeout(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	tick(f);
	member_connected(f->me);
	f->mono += 10 * SEC;
	tick(f);
	assert_true(f->up);
	f->mono += 1;
	tick(f);
	assert_false(f->up);
	assert_int_equal(f->closes, 1);
	assert_status_has(f, false, "no answer to the handshake within 10 s");
	/* and tries again after reconnect_min */
	f->mono += 100 * MS;
	tick(f);
	assert_true(f->up);
	assert_int_equal(f->connects, 2);
}

/* PLAN before WELCOME ends the session. */
static void test_plan_before_welcome(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	tick(f);
	member_connected(f->me);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), -1);
	assert_false(f->up);
	assert_int_equal(f->q.installs, 0);
	assert_status_has(f, false, "PLAN before WELCOME");
}

/* ---- plans in one phase ---- */

static void test_plan_install(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(f->q.installs, 1);
	assert_ack(f, TDM_PHASE_PREPARE, 1, 0, NULL);
	/* the same again: nothing to do */
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(f->q.installs, 1);
	assert_ack(f, TDM_PHASE_PREPARE, 1, 0, "already installed");
	/* an older one: refused */
	assert_int_equal(send_plan(f, plan_ab, 2, 0), 0);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(f->q.installs, 2);
	assert_ack(f, TDM_PHASE_PREPARE, 1, ESTALE, "not newer than the installed v2");
	/* the kernel refuses one: the nack says why, v2 stays */
	f->q.fail_install = 1;
	assert_int_equal(send_plan(f, plan_ab, 3, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 3, EINVAL, "kernel: install refused");
	assert_int_equal(f->q.version, 2);
	/* REGISTER after a reconnect names the plan in force */
	member_lost(f->me, "connection lost");
	f->mono += 100 * MS;
	session_up(f, 2);
	assert_int_equal(f->s.reg_version, 2);
}

/* A plan without windows for us: refused, and the gate holds. */
static void test_plan_without_us(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_false(f->q.hold);
	assert_int_equal(send_plan(f, plan_b, 2, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, ENOENT, "no windows for 'a'");
	assert_true(f->q.hold);
	assert_int_equal(f->q.version, 1);
	/* a plan with our windows again releases it */
	assert_int_equal(send_plan(f, plan_ab, 3, 0), 0);
	assert_false(f->q.hold);
}

/* ---- two phases ---- */

static void prepared_v2(struct fx *f)
{
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	assert_int_equal(f->q.prepares, 1);
	assert_true(f->q.pending && f->q.unconfirmed);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, NULL);
}

static void test_prepare_commit(void **state)
{
	struct fx *f = *state;

	prepared_v2(f);
	/* a repeated prepare is answered, not redone */
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	assert_int_equal(f->q.prepares, 1);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, "already prepared");
	/* heartbeats say what waits */
	run_for(f, 1 * SEC);
	assert_int_equal(f->s.hb_prepared, 2);
	assert_status_has(f, false, "plan v2 prepared, waiting");
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_int_equal(f->q.confirms, 1);
	assert_int_equal(f->q.last_confirm, 2);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, NULL);
	/* a second COMMIT (its ack was lost) */
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_int_equal(f->q.confirms, 1);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, "already committed");
	run_for(f, 1 * SEC);
	assert_int_equal(f->s.hb_prepared, 0);
	/* and the plan in force is v2 */
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 12 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, "already installed");
	assert_int_equal(f->q.prepares + f->q.installs, 2);
}

static void test_prepare_abort(void **state)
{
	struct fx *f = *state;

	prepared_v2(f);
	assert_int_equal(outcome(f, TDM_MSG_ABORT, 2), 0);
	assert_int_equal(f->q.aborts, 1);
	assert_int_equal(f->q.last_abort, 2);
	assert_int_equal(f->q.confirms, 0);
	assert_ack(f, TDM_PHASE_ABORT, 2, 0, NULL);
	assert_int_equal(f->q.version, 1);
	/* nothing left to commit */
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, ENOENT, "no prepared plan v2");
	assert_int_equal(f->q.confirms, 0);
}

/* The kernel refuses the prepare: a nack, and nothing waits. */
static void test_prepare_refused(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	f->q.fail_prepare = 1;
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL, "kernel: prepare refused");
	assert_int_equal(outcome(f, TDM_MSG_ABORT, 2), 0);
	assert_ack(f, TDM_PHASE_ABORT, 2, ENOENT, "prepared: none");
	assert_int_equal(f->q.aborts, 0);
}

/* The confirm fails in the kernel: EIO, and the plan stays prepared. */
static void test_commit_fails(void **state)
{
	struct fx *f = *state;

	prepared_v2(f);
	f->q.fail_confirm = 1;
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, EIO, "kernel: confirm refused");
	assert_status_has(f, false, "plan v2 prepared");
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, NULL);
	assert_int_equal(f->q.confirms, 1);
}

/* A prepare without windows for us holds the gate; abort releases it. */
static void test_prepare_without_us(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_b, 2, TAI_NOW + 11 * SEC), 0);
	assert_int_equal(f->q.prepares, 0);
	assert_true(f->q.hold);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, "no windows for 'a'");
	assert_int_equal(outcome(f, TDM_MSG_ABORT, 2), 0);
	assert_ack(f, TDM_PHASE_ABORT, 2, 0, NULL);
	assert_false(f->q.hold);
	/* committed instead, it keeps holding */
	assert_int_equal(send_plan(f, plan_b, 3, TAI_NOW + 12 * SEC), 0);
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 3), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 3, 0, NULL);
	assert_true(f->q.hold);
	assert_status_has(f, false, "plan v3 has no windows for 'a'");
}

/*
 * Cut off while prepared: the member decides nothing alone (no confirm,
 * no abort: the kernel holds from the base time), asks for the outcome
 * in its next REGISTER, and applies what comes.
 */
static void test_cut_off_while_prepared(void **state)
{
	struct fx *f = *state;

	prepared_v2(f);
	member_lost(f->me, "connection lost");
	assert_false(f->up);
	run_for(f, 30 * SEC);
	assert_int_equal(f->q.confirms + f->q.aborts, 0);
	assert_true(f->q.pending && f->q.unconfirmed);
	/* reconnecting failed meanwhile? No: the fake accepts at once. */
	assert_true(f->up);
	session_up(f, 2);
	assert_int_equal(f->s.reg_version, 1);
	assert_int_equal(f->s.reg_prepared, 2);
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_int_equal(f->q.confirms, 1);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, NULL);
}

/* The same, answered by an abort. */
static void test_cut_off_then_abort(void **state)
{
	struct fx *f = *state;

	prepared_v2(f);
	member_lost(f->me, "connection lost");
	run_for(f, 1 * SEC);
	session_up(f, 1);
	assert_int_equal(f->s.reg_prepared, 2);
	assert_int_equal(outcome(f, TDM_MSG_ABORT, 2), 0);
	assert_int_equal(f->q.aborts, 1);
	assert_int_equal(f->q.version, 1);
}

/* Restarted with a plan prepared in the kernel: asked for at REGISTER. */
static void test_restart_finds_prepared(void **state)
{
	struct fx *f = *state;

	f->q.present = true;
	f->q.version = 4;
	f->q.pending = f->q.unconfirmed = true;
	f->q.pending_version = 5;
	fx_start(f);
	session_up(f, 5);
	assert_int_equal(f->s.reg_version, 4);
	assert_int_equal(f->s.reg_prepared, 5);
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 5), 0);
	assert_int_equal(f->q.last_confirm, 5);
	assert_ack(f, TDM_PHASE_COMMIT, 5, 0, NULL);
	/* it now runs v5 (from the kernel): v4 is older */
	assert_int_equal(send_plan(f, plan_ab, 4, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 4, ESTALE, "not newer than the installed v5");
	assert_int_equal(f->q.installs, 0);
}

/* ---- the PTP and PHC gates ---- */

static void ptp_require(struct fx *f)
{
	f->conf.ptp_policy = PTP_REQUIRE;
	fx_start(f);
	session_up(f, 1);
	f->ptp_down = true;
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
}

/* Installed held; released after ptp_good_checks, held after bad. */
static void test_ptp_hysteresis(void **state)
{
	struct fx *f = *state;
	unsigned int hb;

	ptp_require(f);
	assert_true(f->q.hold);
	run_for(f, 1 * SEC);
	assert_true(f->q.hold);
	assert_status_has(f, false, "sync: unsynced");
	f->ptp_down = false;
	/* checks every 250 ms: the third good one releases */
	f->mono += 250 * MS;
	tick(f);
	f->mono += 250 * MS;
	tick(f);
	assert_true(f->q.hold);
	hb = f->s.nheartbeats;
	f->mono += 250 * MS;
	tick(f);
	assert_false(f->q.hold);
	assert_int_equal(f->s.nheartbeats, hb + 1);
	assert_int_equal(f->s.hb_hold, 0);
	assert_status_has(f, false, "sync: synced");
	/* one bad check (offset) is not enough, two are */
	f->ptp.master_offset = 5000;
	f->mono += 250 * MS;
	tick(f);
	assert_false(f->q.hold);
	f->ptp.master_offset = 10;
	f->mono += 250 * MS;
	tick(f);
	f->ptp.master_offset = -5000;
	f->mono += 250 * MS;
	tick(f);
	assert_false(f->q.hold);
	f->mono += 250 * MS;
	tick(f);
	assert_true(f->q.hold);
	assert_status_has(f, false, "offset -5000 ns exceeds 1000 ns");
	assert_int_equal(f->s.hb_hold, 1);
}

/* Policy warn: the same checks, the gate never held. */
static void test_ptp_warn(void **state)
{
	struct fx *f = *state;

	f->conf.ptp_policy = PTP_WARN;
	f->ptp_down = true;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_false(f->q.hold);
	run_for(f, 2 * SEC);
	assert_false(f->q.hold);
	assert_true(f->ptp_queries >= 8);
	assert_status_has(f, false, "sync: unsynced (policy warn)");
}

/* The PHC apart from CLOCK_TAI holds the gate as PTP does. */
static void test_phc_hysteresis(void **state)
{
	struct fx *f = *state;

	f->conf.phc_threshold_ns = 5000;
	f->phc_index = 0;
	f->conf.ptp_policy = PTP_REQUIRE;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	run_for(f, 1 * SEC);
	assert_false(f->q.hold);
	assert_status_has(f, false, "phc: synced (/dev/ptp0");
	f->phc_offset = 1000000000;
	f->mono += 250 * MS;
	tick(f);
	assert_false(f->q.hold);
	f->mono += 250 * MS;
	tick(f);
	assert_true(f->q.hold);
	assert_status_has(f, false, "exceeds 5000 ns");
	/* a healthy PTP does not release it; three good PHC checks do */
	f->phc_offset = 100;
	f->mono += 250 * MS;
	tick(f);
	f->mono += 250 * MS;
	tick(f);
	assert_true(f->q.hold);
	f->mono += 250 * MS;
	tick(f);
	assert_false(f->q.hold);
}

/* n checks of PTP, ptp_interval apart. */
static void checks(struct fx *f, int n)
{
	while (n--) {
		f->mono += 250 * MS;
		tick(f);
	}
}

/* Synced and released under require, ptp_check_tai on. */
static void synced(struct fx *f)
{
	f->conf.ptp_policy = PTP_REQUIRE;
	f->conf.ptp_check_tai = true;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	checks(f, 3);
	assert_false(f->q.hold);
}

/* A member whose port is MASTER (or anything but SLAVE) is not synced. */
static void test_ptp_master_not_synced(void **state)
{
	struct fx *f = *state;

	f->ptp.port_state = TDM_PS_MASTER;
	f->conf.ptp_policy = PTP_REQUIRE;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	checks(f, 10);
	assert_true(f->q.hold);
	assert_status_has(f, false, "sync: unsynced (policy require), port MASTER");
	assert_status_has(f, false, ": port state MASTER");
	f->ptp.port_state = TDM_PS_GRAND_MASTER;
	checks(f, 10);
	assert_true(f->q.hold);
	/* SLAVE: released after ptp_good_checks */
	f->ptp.port_state = TDM_PS_SLAVE;
	checks(f, 2);
	assert_true(f->q.hold);
	checks(f, 1);
	assert_false(f->q.hold);
}

/* The kernel's TAI offset against ptp4l's valid currentUtcOffset. */
static void test_ptp_tai_against_utc_offset(void **state)
{
	struct fx *f = *state;

	f->ptp.tp_ok = true;
	f->ptp.utc_offset = 37;
	f->ptp.utc_offset_valid = true;
	f->ptp.tai_offset = 36;
	f->conf.ptp_policy = PTP_REQUIRE;
	f->conf.ptp_check_tai = true;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	checks(f, 5);
	assert_true(f->q.hold);
	assert_status_has(f, false,
			  "kernel TAI offset 36 s is not ptp4l's currentUtcOffset 37 s");
	/* not valid: only its being set counts */
	f->ptp.utc_offset_valid = false;
	checks(f, 3);
	assert_false(f->q.hold);
	/* valid again, and the kernel's is set right */
	f->ptp.utc_offset_valid = true;
	checks(f, 2);
	assert_true(f->q.hold);
	f->ptp.tai_offset = 37;
	checks(f, 3);
	assert_false(f->q.hold);
	assert_status_has(f, true, "\"utc_offset\":37");
}

/* A new grandmaster: held at once, released after ptp_good_checks. */
static void test_gm_change_reruns_hysteresis(void **state)
{
	struct fx *f = *state;
	unsigned int hb;

	synced(f);
	assert_status_has(f, true, "\"grandmaster\":\"001122.fffe.334455\"");
	hb = f->s.nheartbeats;
	f->ptp.gm_identity[7] = 0x56;
	checks(f, 1);
	assert_true(f->q.hold);
	assert_int_equal(f->s.nheartbeats, hb + 1);
	assert_int_equal(f->s.hb_hold, 1);
	assert_int_equal(f->s.hb_state, 2);	/* SYNC_BAD */
	assert_status_has(f, false,
			  "grandmaster changed from 001122.fffe.334455 to 001122.fffe.334456");
	/* that check was the first good one of three */
	checks(f, 1);
	assert_true(f->q.hold);
	checks(f, 1);
	assert_false(f->q.hold);
	assert_status_has(f, false, "sync: synced");
	/* the same grandmaster again: nothing happens */
	checks(f, 5);
	assert_false(f->q.hold);
}

/* Under policy warn a new grandmaster is logged, the gate left open. */
static void test_gm_change_warn(void **state)
{
	struct fx *f = *state;

	f->conf.ptp_policy = PTP_WARN;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	checks(f, 3);
	assert_status_has(f, false, "sync: synced");
	f->ptp.gm_identity[0] = 0x99;
	checks(f, 1);
	assert_false(f->q.hold);
	assert_status_has(f, false, "sync: unsynced");
}

/* ---- the lease ---- */

/* Renewed every lease/4 while healthy; not while PTP is out of sync. */
static void test_lease_renewal(void **state)
{
	struct fx *f = *state;
	unsigned int n;

	f->conf.target.lease_ns = 2 * SEC;
	f->conf.ptp_policy = PTP_REQUIRE;
	fx_start(f);
	session_up(f, 1);
	/* no plan yet: nothing to renew */
	run_for(f, 1 * SEC);
	assert_int_equal(f->q.renews + f->q.set_leases, 0);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(f->q.lease_ns, 2 * SEC);
	n = f->q.renews;
	run_for(f, 2 * SEC);
	/* every 500 ms: 4 in 2 s */
	assert_int_equal(f->q.renews, n + 4);
	assert_status_has(f, true, "\"renewing\":true");
	/* PTP goes bad: the renewals stop (the kernel holds by itself) */
	f->ptp_down = true;
	run_for(f, 600 * MS);
	n = f->q.renews;
	run_for(f, 3 * SEC);
	assert_int_equal(f->q.renews, n);
	assert_status_has(f, true, "\"renewing\":false");
	/* and resume once it is back in sync */
	f->ptp_down = false;
	run_for(f, 3 * SEC);
	assert_true(f->q.renews >= n + 4);
	/* a qdisc without a lease (set by hand) gets ours */
	f->q.lease_ns = 0;
	n = f->q.set_leases;
	run_for(f, 500 * MS);
	assert_int_equal(f->q.set_leases, n + 1);
	assert_int_equal(f->q.lease_ns, 2 * SEC);
}

/* ---- reload ---- */

/* Swap in f->conf as edited by the caller: what tdmd's reload does. */
static void reload(struct fx *f, const struct tdmd_conf *old)
{
	member_reload(f->me, old);
}

/*
 * A reload that changes the lease, a threshold and the heartbeat: the
 * session, the plan and the lease go on (no close, no reconnect, no
 * install, renewals on time), the new lease is set at the next renewal,
 * and heartbeats follow the new interval at once.
 */
static void test_reload_keeps_session_plan_lease(void **state)
{
	struct fx *f = *state;
	struct tdmd_conf old;
	unsigned int renews, hb, sets;

	f->conf.target.lease_ns = 2 * SEC;
	f->conf.heartbeat_ns = 10 * SEC;
	synced(f);
	run_for(f, 2 * SEC);
	assert_true(f->q.renews >= 3);
	renews = f->q.renews;
	sets = f->q.set_leases;
	hb = f->s.nheartbeats;
	old = f->conf;
	f->conf.target.lease_ns = 4 * SEC;
	f->conf.ptp_threshold_ns = 5000;
	f->conf.heartbeat_ns = 500 * MS;
	reload(f, &old);
	tick(f);
	/* the new lease, set once (which renews it) */
	assert_int_equal(f->q.set_leases, sets + 1);
	assert_int_equal(f->q.lease_ns, 4 * SEC);
	/* then renewed every second; heartbeats every 500 ms */
	run_for(f, 3 * SEC);
	assert_int_equal(f->q.renews, renews + 3);
	assert_int_equal(f->q.set_leases, sets + 1);
	assert_true(f->s.nheartbeats >= hb + 6);
	/* nothing else moved */
	assert_true(f->up);
	assert_int_equal(f->connects, 1);
	assert_int_equal(f->closes, 0);
	assert_int_equal(f->q.installs, 1);
	assert_int_equal(f->q.version, 1);
	assert_false(f->q.hold);
	/* the new threshold holds: 3 us is fine now */
	f->ptp.master_offset = 3000;
	checks(f, 4);
	assert_false(f->q.hold);
}

/* Lease off: removed from the qdisc at once, renewals stop. */
static void test_reload_lease_off(void **state)
{
	struct fx *f = *state;
	struct tdmd_conf old;
	unsigned int renews;

	f->conf.target.lease_ns = 2 * SEC;
	synced(f);
	run_for(f, 1 * SEC);
	assert_int_equal(f->q.lease_ns, 2 * SEC);
	old = f->conf;
	f->conf.target.lease_ns = 0;
	reload(f, &old);
	assert_int_equal(f->q.lease_ns, 0);
	renews = f->q.renews;
	run_for(f, 5 * SEC);
	assert_int_equal(f->q.renews, renews);
	assert_status_has(f, true, "\"renewing\":false");
}

/* A lease turned on while PTP is bad is not set until it is good. */
static void test_reload_lease_while_unhealthy(void **state)
{
	struct fx *f = *state;
	struct tdmd_conf old;

	ptp_require(f);
	run_for(f, 1 * SEC);
	assert_true(f->q.hold);
	old = f->conf;
	f->conf.target.lease_ns = 2 * SEC;
	reload(f, &old);
	run_for(f, 3 * SEC);
	assert_int_equal(f->q.set_leases + f->q.renews, 0);
	f->ptp_down = false;
	run_for(f, 1 * SEC);
	assert_false(f->q.hold);
	assert_int_equal(f->q.set_leases, 1);
	assert_int_equal(f->q.lease_ns, 2 * SEC);
}

/* ptp_policy require to warn: a gate held for PTP is released at once. */
static void test_reload_policy_warn(void **state)
{
	struct fx *f = *state;
	struct tdmd_conf old;

	ptp_require(f);
	run_for(f, 1 * SEC);
	assert_true(f->q.hold);
	old = f->conf;
	f->conf.ptp_policy = PTP_WARN;
	reload(f, &old);
	assert_false(f->q.hold);
	old = f->conf;
	f->conf.ptp_policy = PTP_REQUIRE;
	reload(f, &old);
	assert_true(f->q.hold);
	assert_true(f->up);
	assert_int_equal(f->closes, 0);
}

/* ---- metrics ---- */

static char *control_text(struct fx *f, const char *cmd)
{
	struct req q = { .r = { .cmd = cmd, .body = "", .reply = keep_reply } };

	member_control(f->me, &q.r);
	assert_true(q.replied && q.ok);
	return q.body;
}

/*
 * promtool: $PROMTOOL, else the testbed cache's (testbed/guest/setup),
 * else one on PATH; NULL if none.
 */
static const char *find_promtool(char *buf, size_t len)
{
	const char *e = getenv("PROMTOOL"), *cache = getenv("TDMWIN_CACHE");

	if (e && *e)
		return e;
	if (cache && *cache)
		snprintf(buf, len, "%s/promtool", cache);
	else
		snprintf(buf, len, "%s/.cache/tdmwin/promtool",
			 getenv("HOME") ? getenv("HOME") : "");
	if (!access(buf, X_OK))
		return buf;
	if (!system("command -v promtool >/dev/null 2>&1"))
		return "promtool";
	return NULL;
}

static void assert_has_line(const char *text, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("'%s' not in:\n%s", line, text);
}

/* The qdisc's counters and tdmd's state, with Prometheus' conventions. */
static void test_metrics(void **state)
{
	struct fx *f = *state;
	char *m;

	f->conf.target.lease_ns = 2 * SEC;
	synced(f);
	f->q.xs.window_packets = 1234;
	f->q.xs.window_bytes = 5678;
	f->q.xs.open_latency_max = 1500;
	f->q.xs.open_latency_sum = 3000000000ULL;
	f->q.xs.open_latency_count = 4;
	f->q.xs.hold_drops = 7;
	f->q.nslots = 2;
	f->q.slots[0] = (struct tdm_qdisc_slot){ .frames = 1000, .bytes = 5000,
		.opens = 10, .guard_deferrals = 2, .latency_count = 10,
		.latency_sum = 30000, .latency_max = 9000,
		.margin_min = 40000, .has_margin = true };
	f->q.slots[1] = (struct tdm_qdisc_slot){ .frames = 234, .bytes = 678,
		.opens = 10, .wire_deferrals = 5, .latency_count = 4,
		.latency_sum = 4000, .latency_max = 1500,
		.margin_min = 700, .has_margin = true };
	run_for(f, 1 * SEC);
	assert_status_has(f, false, "worst slots (plan v1, 2 slots): open latency 9000 ns in slot 0, margin 700 ns in slot 1, 2 guard deferrals in slot 0, 5 wire deferrals in slot 1,");
	assert_status_has(f, true, "\"worst\":{\"open_latency\":{\"slot\":0,\"open_latency_max\":9000},\"margin\":{\"slot\":1,\"margin_min\":700}");
	m = control_text(f, "metrics");
	assert_has_line(m, "tdmwin_slot_frames_total{interface=\"eth0\",slot=\"1\"} 234");
	assert_has_line(m, "tdmwin_slot_margin_min_seconds{interface=\"eth0\",slot=\"1\"} 0.000000700");
	assert_has_line(m, "tdmwin_slot_open_latency_seconds_count{interface=\"eth0\",slot=\"0\"} 10");
	assert_has_line(m, "tdmd_info{role=\"member\",name=\"a\",version=\"" TDM_VERSION "\"} 1");
	assert_has_line(m, "# TYPE tdmd_sync_state gauge");
	assert_has_line(m, "tdmd_sync_state{state=\"synced\"} 1");
	assert_has_line(m, "tdmd_sync_state{state=\"unsynced\"} 0");
	assert_has_line(m, "tdmd_ptp_port_state_info{state=\"SLAVE\"} 1");
	assert_has_line(m, "tdmd_ptp_offset_seconds 0.000000010");
	assert_has_line(m, "tdmd_plan_version 1");
	assert_has_line(m, "tdmd_lease_renewing 1");
	assert_has_line(m, "# TYPE tdmwin_window_packets_total counter");
	assert_has_line(m, "tdmwin_window_packets_total{interface=\"eth0\"} 1234");
	assert_has_line(m, "tdmwin_window_bytes_total{interface=\"eth0\"} 5678");
	assert_has_line(m, "tdmwin_hold_drops_total{interface=\"eth0\"} 7");
	assert_has_line(m, "tdmwin_open_latency_max_seconds{interface=\"eth0\"} 0.000001500");
	assert_has_line(m, "# TYPE tdmwin_open_latency_seconds summary");
	assert_has_line(m, "tdmwin_open_latency_seconds_sum{interface=\"eth0\"} 3.000000000");
	assert_has_line(m, "tdmwin_open_latency_seconds_count{interface=\"eth0\"} 4");
	assert_has_line(m, "tdmwin_plan_version{interface=\"eth0\"} 1");
	assert_has_line(m, "tdmwin_lease_seconds{interface=\"eth0\"} 2.000000000");
	assert_has_line(m, "tdmwin_lease_left_seconds{interface=\"eth0\"} 1.000000000");
	/* each family once */
	assert_null(strstr(strstr(m, "# TYPE tdmwin_hold ") + 1, "# TYPE tdmwin_hold "));
	free(m);
	/* a PTP offset below zero, and a qdisc that is gone */
	f->ptp.master_offset = -1500000001;
	checks(f, 1);
	f->q.present = false;
	m = control_text(f, "metrics");
	assert_has_line(m, "tdmd_ptp_offset_seconds -1.500000001");
	assert_has_line(m, "tdmwin_qdisc_present{interface=\"eth0\"} 0");
	assert_null(strstr(m, "tdmwin_window_packets_total"));
	free(m);
}

/*
 * Metrics text m through Prometheus' own parser, promtool check metrics;
 * false if there is no promtool (a skip, said by the caller).
 */
static bool promtool_check(const char *m)
{
	char path[] = "/tmp/test_member.XXXXXX", cmd[1024], pbuf[512];
	const char *promtool = find_promtool(pbuf, sizeof(pbuf));
	FILE *out;
	int fd, rc;

	if (!promtool)
		return false;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	out = fdopen(fd, "w");
	assert_non_null(out);
	fputs(m, out);
	fclose(out);
	snprintf(cmd, sizeof(cmd), "'%s' check metrics <%s 2>&1", promtool, path);
	rc = system(cmd);
	unlink(path);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 0);
	return true;
}

/* The same output through Prometheus' own parser: promtool check metrics. */
static void test_metrics_promtool(void **state)
{
	struct fx *f = *state;
	char *m;
	bool checked;

	f->conf.target.lease_ns = 2 * SEC;
	f->conf.phc_threshold_ns = 5000;
	f->phc_index = 0;
	synced(f);
	f->q.xs.window_packets = 10;
	/* the counters per slot too: one used, one not */
	f->q.nslots = 2;
	f->q.slots[0] = (struct tdm_qdisc_slot){ .frames = 10, .bytes = 9000,
		.opens = 2, .latency_count = 1, .latency_sum = 1200,
		.latency_max = 1200, .margin_min = 3000, .has_margin = true };
	run_for(f, 1 * SEC);
	m = control_text(f, "metrics");
	assert_non_null(strstr(m, "tdmwin_slot_frames_total{interface=\"eth0\",slot=\"1\"} 0"));
	checked = promtool_check(m);
	free(m);
	if (!checked) {
		printf("# promtool not found ($PROMTOOL, the testbed cache or PATH; make setup fetches it)\n");
		skip();
	}
}

/* ---- every TX queue: the instances under mq ---- */

/* A member with tdmwin under each of the NQ queues of the fake device. */
static void mq_start(struct fx *f)
{
	f->ntx = NQ;
	f->conf.queues.mode = QUEUES_ALL;
	fx_start(f);
	session_up(f, 1);
}

/* Every instance i in [0, NQ): plan version v, unconfirmed or not. */
static void assert_all(struct fx *f, uint32_t v, bool pending)
{
	unsigned int i;

	for (i = 0; i < NQ; i++) {
		const struct fqdisc *q = &f->qq[i];

		if (!q->present)
			fail_msg("queue %u: no tdmwin", i);
		if ((pending ? q->pending_version : q->version) != v ||
		    q->unconfirmed != pending)
			fail_msg("queue %u: v%u%s, v%u pending%s; want v%u%s", i,
				 q->version, "", q->pending_version,
				 q->unconfirmed ? " unconfirmed" : "", v,
				 pending ? " unconfirmed" : "");
	}
}

/* queues all: mq at the root once, the plan on every queue, read back. */
static void test_mq_install_all(void **state)
{
	struct fx *f = *state;

	mq_start(f);
	assert_int_equal(f->mq_creates, 0);	/* made with the first plan */
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 1, 0, NULL);
	assert_int_equal(f->mq_creates, 1);
	assert_all(f, 1, false);
	assert_false(f->q.present);
	assert_int_equal(send_plan(f, plan_ab, 2, 0), 0);
	assert_int_equal(f->mq_creates, 1);
	assert_all(f, 2, false);
	assert_status_has(f, false, "instances: 4 under mq 100:");
	assert_status_has(f, false, "  queue 3: plan v2, running");
	assert_status_has(f, true, "\"tree\":\"mq\"");
}

/* A list of queues: those only; a queue the device lacks is refused. */
static void test_mq_list(void **state)
{
	struct fx *f = *state;
	char err[256];

	f->ntx = NQ;
	f->conf.queues.mode = QUEUES_LIST;
	f->conf.queues.map[0] = 1u << 1 | 1u << 3;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_false(f->qq[0].present || f->qq[2].present);
	assert_true(f->qq[1].present && f->qq[3].present);
	assert_int_equal(f->qq[3].version, 1);
	member_free(f->me);
	f->me = NULL;
	f->up = false;
	f->conf.queues.map[0] |= 1u << 5;
	assert_null(member_new(&f->conf, &f->io, err, sizeof(err)));
	assert_string_equal(err, "queues: eth0 has no TX queue 5 (it has 4: 0 to 3)");
	/* mq needs a multi-queue device */
	f->ntx = 1;
	f->conf.queues.mode = QUEUES_ALL;
	assert_null(member_new(&f->conf, &f->io, err, sizeof(err)));
	assert_string_equal(err, "queues: eth0 has one TX queue, and mq needs more: set 'queues root'");
}

/*
 * Metrics under mq: a sample per instance, labelled with its queue, each
 * family once, and nothing summed across the queues.
 */
static void test_mq_metrics(void **state)
{
	struct fx *f = *state;
	char *m;

	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_all(f, 1, false);
	f->qq[0].xs.window_packets = 11;
	f->qq[3].xs.window_packets = 44;
	f->qq[3].xs.windows_opened = 7;
	f->qq[1].nslots = 1;
	f->qq[1].slots[0] = (struct tdm_qdisc_slot){ .frames = 5, .bytes = 50,
		.opens = 1, .margin_min = 900, .has_margin = true };
	f->qq[2].present = false;
	m = control_text(f, "metrics");
	assert_has_line(m, "tdmwin_qdisc_present{interface=\"eth0\",queue=\"2\"} 0");
	assert_has_line(m, "tdmwin_qdisc_present{interface=\"eth0\",queue=\"3\"} 1");
	assert_has_line(m, "tdmwin_window_packets_total{interface=\"eth0\",queue=\"0\"} 11");
	assert_has_line(m, "tdmwin_window_packets_total{interface=\"eth0\",queue=\"3\"} 44");
	assert_has_line(m, "tdmwin_windows_opened_total{interface=\"eth0\",queue=\"3\"} 7");
	assert_has_line(m, "tdmwin_slot_frames_total{interface=\"eth0\",queue=\"1\",slot=\"0\"} 5");
	assert_has_line(m, "tdmwin_slot_margin_min_seconds{interface=\"eth0\",queue=\"1\",slot=\"0\"} 0.000000900");
	/* the missing instance has no counters; each family once */
	assert_null(strstr(m, "tdmwin_window_packets_total{interface=\"eth0\",queue=\"2\"}"));
	assert_null(strstr(strstr(m, "# TYPE tdmwin_window_packets_total ") + 1,
			   "# TYPE tdmwin_window_packets_total "));
	if (!promtool_check(m))
		printf("# promtool not found: the mq metrics not checked by it\n");
	free(m);
}

/*
 * An install refused on queue 2: queues 0 and 1 run the new plan, 2 and 3
 * the old: all are held (none may send alone) until a plan goes into
 * all, which releases them.
 */
static void test_mq_install_partial(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	f->qq[2].fail_install = 1;
	assert_int_equal(send_plan(f, plan_ab, 2, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL, "queue 2: kernel: install refused");
	assert_int_equal(f->qq[1].version, 2);
	assert_int_equal(f->qq[3].version, 1);
	for (i = 0; i < NQ; i++)
		assert_true(f->qq[i].hold);
	assert_status_has(f, false, "plan v2 is in force on some instances only: all held");
	/* the lease is not renewed meanwhile: the node is not healthy */
	assert_int_equal(send_plan(f, plan_ab, 3, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 3, 0, NULL);
	assert_all(f, 3, false);
	for (i = 0; i < NQ; i++)
		assert_false(f->qq[i].hold);
}

/* A prepare refused on queue 2: the two prepared before it are aborted. */
static void test_mq_prepare_none(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	f->qq[2].fail_prepare = 1;
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL,
		   "queue 2: kernel: prepare refused; aborted on the 2 prepared");
	for (i = 0; i < NQ; i++) {
		assert_int_equal(f->qq[i].aborts, i < 2 ? 1 : 0);
		assert_false(f->qq[i].unconfirmed);
	}
	assert_int_equal(f->qq[3].prepares, 0);
	assert_all(f, 1, false);
	/* nothing waits for an outcome */
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, ENOENT, "no prepared plan v2");
}

/* txtime: the etf child fails on queue 1: queues 0 and 1 are aborted. */
static void test_mq_prepare_txtime_fails(void **state)
{
	struct fx *f = *state;

	f->conf.txtime = true;
	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	f->qq[1].fail_txtime = 1;
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL,
		   "queue 1: kernel: txtime refused; aborted on the 2 prepared");
	assert_int_equal(f->qq[0].aborts + f->qq[1].aborts, 2);
	assert_int_equal(f->qq[2].prepares + f->qq[2].aborts, 0);
}

static void mq_prepared_v2(struct fx *f)
{
	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, NULL);
	assert_all(f, 2, true);
}

/* COMMIT and ABORT reach every instance. */
static void test_mq_commit_abort(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	mq_prepared_v2(f);
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, NULL);
	assert_all(f, 2, false);
	assert_int_equal(send_plan(f, plan_ab, 3, TAI_NOW + 12 * SEC), 0);
	assert_int_equal(outcome(f, TDM_MSG_ABORT, 3), 0);
	assert_ack(f, TDM_PHASE_ABORT, 3, 0, NULL);
	for (i = 0; i < NQ; i++)
		assert_int_equal(f->qq[i].last_abort, 3);
	assert_all(f, 2, false);
}

/*
 * A commit that the kernel refuses on queue 2 of 4: queues 0 and 1 were
 * confirmed, and are rolled back (v2 prepared again, unconfirmed): none
 * is committed, all hold from v2's base until the next word.  The
 * coordinator's COMMIT again then commits all.
 */
static void test_mq_commit_rolled_back(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	mq_prepared_v2(f);
	f->qq[2].fail_confirm = 1;
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, EIO,
		   "queue 2: kernel: confirm refused; rolled back on the 2 confirmed before: committed on none");
	for (i = 0; i < NQ; i++)
		assert_int_equal(f->qq[i].confirms, i < 2 ? 1 : 0);
	assert_int_equal(f->qq[0].prepares, 2);
	assert_int_equal(f->qq[1].prepares, 2);
	assert_int_equal(f->qq[3].prepares, 1);
	assert_all(f, 2, true);
	assert_status_has(f, false, "plan v2 prepared, waiting");
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, NULL);
	assert_all(f, 2, false);
}

/* A queue that lost the prepared plan: the read-back fails the commit
 * before any instance is confirmed.
 */
static void test_mq_commit_checked_first(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	mq_prepared_v2(f);
	f->qq[3].pending = f->qq[3].unconfirmed = false;
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, EIO,
		   "queue 3: plan v2 is not prepared there (v1 in force): committed on none");
	for (i = 0; i < NQ; i++)
		assert_int_equal(f->qq[i].confirms, 0);
}

/* A hold reaches every instance, and so does its release. */
static void test_mq_hold_all(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_b, 2, 0), 0);
	for (i = 0; i < NQ; i++)
		assert_true(f->qq[i].hold);
	assert_int_equal(send_plan(f, plan_ab, 3, 0), 0);
	for (i = 0; i < NQ; i++)
		assert_false(f->qq[i].hold);
}

/* The device's lease: renewed through the first instance that takes it. */
static void test_mq_lease(void **state)
{
	struct fx *f = *state;
	unsigned int n;

	f->conf.target.lease_ns = 2 * SEC;
	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	n = f->qq[0].renews;
	run_for(f, 2 * SEC);
	assert_int_equal(f->qq[0].renews, n + 4);
	assert_int_equal(f->qq[1].renews + f->qq[1].set_leases, 0);
	/* queue 0's qdisc deleted by hand: queue 1's renews (sets) it */
	memset(&f->qq[0], 0, sizeof(f->qq[0]));
	f->qq[0].fail_renew = 1000;
	run_for(f, 1 * SEC);
	assert_true(f->qq[1].set_leases + f->qq[1].renews >= 2);
	assert_status_has(f, true, "\"renewing\":true");
}

/* txtime: an etf child of the configured delta under every instance. */
static void test_mq_txtime(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	f->conf.txtime = true;
	f->conf.etf.delta_ns = 300000;
	f->conf.etf.offload = true;
	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	for (i = 0; i < NQ; i++) {
		assert_true(f->qq[i].txtime && f->qq[i].etf_offload);
		assert_int_equal(f->qq[i].etf_delta, 300000);
		assert_int_equal(f->qq[i].txtimes, 2);
	}
	assert_status_has(f, false, "launch times by etf (delta 300000 ns, offload)");
}

/* txtime at the root of a multi-queue device: refused at start. */
static void test_txtime_root_multiqueue(void **state)
{
	struct fx *f = *state;
	char err[256];

	f->conf.txtime = true;
	f->ntx = NQ;
	assert_null(member_new(&f->conf, &f->io, err, sizeof(err)));
	assert_non_null(strstr(err, "txtime: eth0 has 4 TX queues"));
	assert_non_null(strstr(err, "set 'queues all'"));
	/* one queue: txtime at the root is fine */
	f->ntx = 1;
	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_true(f->q.txtime);
}

/* ---- plans with receivers: destination classes and their filters ---- */

/* q carries exactly the filters of classes minors[0..n) (in any order). */
static void assert_filters(const struct fqdisc *q, const uint32_t *minors,
			   unsigned int n)
{
	unsigned int i, j;

	if (q->nfilt != n)
		fail_msg("%u filters, want %u", q->nfilt, n);
	for (i = 0; i < n; i++) {
		for (j = 0; j < q->nfilt; j++)
			if (q->filt[j].minor == minors[i])
				break;
		if (j == q->nfilt)
			fail_msg("no filter for class :%x", minors[i]);
	}
}

static const uint32_t cls_none[1], cls_3[] = { 3, 4, 5 }, cls_2[] = { 3, 4 };

/* REGISTER says our level to a coordinator of level 3, not to one of 2. */
static void test_register_level(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up_level(f, 0, 2);
	assert_int_equal(f->s.reg_proto, 0);
	member_lost(f->me, "connection lost");
	f->mono += 100 * MS;
	session_up_level(f, 0, TDM_PROTO_LEVEL);
	assert_int_equal(f->s.reg_proto, TDM_PROTO_LEVEL);
}

/*
 * From a classic plan to the 3 x 3 barrel shifter: the filters of the
 * new classes go in with the prepare (before the base time), one per
 * receiver, with its address; the commit keeps them.
 */
static void test_nxm_prepare_commit(void **state)
{
	struct fx *f = *state;
	char a[80];

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_filters(&f->q, cls_none, 0);
	assert_int_equal(send_plan(f, plan_nxm, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, NULL);
	assert_int_equal(f->q.prepares, 1);
	assert_filters(&f->q, cls_3, 3);
	assert_string_equal(tdm_filter_str(&f->q.filt[0], a, sizeof(a)),
			    "198.18.1.1 -> class :3");
	assert_string_equal(tdm_filter_str(&f->q.filt[2], a, sizeof(a)),
			    "2001:db8::3 -> class :5");
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, NULL);
	run_for(f, 20 * SEC);
	assert_filters(&f->q, cls_3, 3);
	assert_status_has(f, false,
			  "filters: 198.18.1.1 -> class :3, 198.18.1.2 -> class :4, 2001:db8::3 -> class :5");
	assert_status_has(f, true,
			  "\"filters\":[{\"address\":\"198.18.1.1\",\"class\":3},");
	/* Back to a classic plan: its base time has passed here, so the
	 * filters go at the next tick after the commit, not with the prepare.
	 */
	assert_int_equal(send_plan(f, plan_ab, 3, TAI_NOW + 30 * SEC), 0);
	assert_filters(&f->q, cls_3, 3);
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 3), 0);
	assert_filters(&f->q, cls_3, 3);
	tick(f);
	assert_filters(&f->q, cls_none, 0);
}

/* A plan that drops x2: its filter stays until the base time, then goes. */
static void test_nxm_drop_receiver(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_nxm, 1, 0), 0);
	assert_filters(&f->q, cls_3, 3);
	/* v2's base is TAI_NOW + 12 s: mono 12 s. */
	assert_int_equal(send_plan(f, plan_nxm2, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, NULL);
	assert_filters(&f->q, cls_3, 3);
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_filters(&f->q, cls_3, 3);
	run_for(f, 12 * SEC - f->mono - 1);
	assert_filters(&f->q, cls_3, 3);
	run_for(f, 1);
	assert_filters(&f->q, cls_2, 2);
}

/* An abort takes out the filters the prepare put in. */
static void test_nxm_abort(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_nxm, 2, TAI_NOW + 11 * SEC), 0);
	assert_filters(&f->q, cls_3, 3);
	assert_int_equal(outcome(f, TDM_MSG_ABORT, 2), 0);
	assert_ack(f, TDM_PHASE_ABORT, 2, 0, NULL);
	assert_int_equal(f->q.aborts, 1);
	assert_filters(&f->q, cls_none, 0);
	run_for(f, 20 * SEC);
	assert_filters(&f->q, cls_none, 0);
}

/* The filters fail: the prepare is nacked, the plan aborted, none left. */
static void test_nxm_filter_fails(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	f->q.fail_filter = 1;
	assert_int_equal(send_plan(f, plan_nxm, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL, "kernel: filter refused");
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL, "the plan was aborted");
	assert_int_equal(f->q.prepares, 1);
	assert_int_equal(f->q.aborts, 1);
	assert_false(f->q.pending);
	assert_filters(&f->q, cls_none, 0);
	/* nothing waits for an outcome */
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, ENOENT, "prepared: none");
}

/* Classes that would change their address while both plans gate:
 * refused before anything changes.
 */
static void test_nxm_class_remap_refused(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_nxm, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_nxm_swap, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL,
		   "198.18.1.1 -> class :3 in one plan, 198.18.1.2 -> class :3 in the other");
	assert_int_equal(f->q.prepares, 0);
	assert_int_equal(f->q.filter_syncs, 1);
	assert_filters(&f->q, cls_3, 3);
	assert_int_equal(f->q.filt[0].family, AF_INET);
}

/* Under mq: every instance gets the filters; one refusing them aborts
 * the plan on all and leaves none with the new filters.
 */
static void test_nxm_mq(void **state)
{
	struct fx *f = *state;
	unsigned int i;

	mq_start(f);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	f->qq[2].fail_filter = 1;
	assert_int_equal(send_plan(f, plan_nxm, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL, "queue 2: kernel: filter refused");
	for (i = 0; i < NQ; i++) {
		assert_int_equal(f->qq[i].aborts, 1);
		assert_filters(&f->qq[i], cls_none, 0);
	}
	assert_int_equal(send_plan(f, plan_nxm, 3, TAI_NOW + 12 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 3, 0, NULL);
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 3), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 3, 0, NULL);
	assert_all(f, 3, false);
	for (i = 0; i < NQ; i++)
		assert_filters(&f->qq[i], cls_3, 3);
}

/* A decided plan (a late member) goes in with its filters. */
static void test_nxm_install(void **state)
{
	struct fx *f = *state;

	fx_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_nxm, 1, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 1, 0, NULL);
	assert_int_equal(f->q.installs, 1);
	assert_filters(&f->q, cls_3, 3);
	/* filters refused: nacked, and the gate holds until a plan goes in */
	f->q.fail_filter = 1;
	assert_int_equal(send_plan(f, plan_nxm2, 2, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL, "kernel: filter refused");
	assert_true(f->q.hold);
	assert_int_equal(send_plan(f, plan_nxm2, 3, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 3, 0, NULL);
	assert_false(f->q.hold);
	run_for(f, 20 * SEC);
	assert_filters(&f->q, cls_2, 2);
}

/* ---- gate tdmd: the plan store of a device without a netdev ---- */

/* The fields of the dump a follower acts on: the same in a and b. */
static void assert_same_info(const struct tdm_qdisc_info *a,
			     const struct tdm_qdisc_info *b)
{
	unsigned int i;

	assert_int_equal(a->present, b->present);
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->base_time, b->base_time);
	assert_int_equal(a->cycle_ns, b->cycle_ns);
	assert_int_equal(a->guard_ns, b->guard_ns);
	assert_int_equal(a->nwin, b->nwin);
	for (i = 0; i < a->nwin; i++) {
		assert_int_equal(a->win[i].offset, b->win[i].offset);
		assert_int_equal(a->win[i].length, b->win[i].length);
		assert_int_equal(a->win_class[i], b->win_class[i]);
	}
	assert_int_equal(a->pending, b->pending);
	if (a->pending) {
		assert_int_equal(a->pending_version, b->pending_version);
		assert_int_equal(a->pending_base, b->pending_base);
		assert_int_equal(a->pending_cycle_ns, b->pending_cycle_ns);
		assert_int_equal(a->pending_nwin, b->pending_nwin);
		for (i = 0; i < a->pending_nwin; i++)
			assert_int_equal(a->pending_win[i].offset,
					 b->pending_win[i].offset);
	}
	assert_int_equal(a->pending_unconfirmed, b->pending_unconfirmed);
	assert_int_equal(a->hold, b->hold);
	assert_int_equal(a->clockid, b->clockid);
	assert_int_equal(a->eff_link_speed, b->eff_link_speed);
	assert_int_equal(a->bypass_prios, b->bypass_prios);
	assert_int_equal(a->lease_ns, b->lease_ns);
	assert_int_equal(a->lease_left_ns, b->lease_left_ns);
	assert_memory_equal(&a->xstats, &b->xstats, sizeof(a->xstats));
}

/*
 * Every change the store announces: its message, read back with the
 * kernel's parser, says what the store holds.
 */
static void store_changed(void *ctx)
{
	struct fx *f = ctx;
	struct tdm_qdisc_info *got = calloc(2, sizeof(*got));
	const struct nlmsghdr *nlh;

	assert_non_null(got);
	nlh = store_msg(f->store, f->msg);
	assert_int_equal(nlh->nlmsg_type, RTM_NEWQDISC);
	assert_true(nlh->nlmsg_len <= TDM_QDISC_MSG_MAX);
	assert_int_equal(tdm_qdisc_parse(nlh, 0, TC_H_ROOT, &got[0]), 1);
	assert_true(got[0].present && !got[0].deleted);
	store_get(f->store, &got[1]);
	assert_same_info(&got[0], &got[1]);
	f->publishes++;
	free(got);
}

static void store_setup(struct fx *f)
{
	const struct store_ops ops = {
		.clock_ns = f_clock, .changed = store_changed, .ctx = f,
	};
	char err[256];

	f->conf.gate = GATE_TDMD;
	strcpy(f->conf.target.ifname, "0000:03:00.0");
	strcpy(f->conf.gate_socket, "/run/tdmd/gate-0000:03:00.0.sock");
	f->msg = malloc(TDM_QDISC_MSG_MAX);
	assert_non_null(f->msg);
	f->store = store_new(f->conf.target.ifname, &ops, err, sizeof(err));
	if (!f->store)
		fail_msg("store_new: %s", err);
	store_member_io(f->store, &f->io);
}

static void store_start(struct fx *f)
{
	store_setup(f);
	f->conf.target.link_speed = 10000;
	fx_start(f);
}

static void store_read(struct fx *f, struct tdm_qdisc_info *in)
{
	assert_int_equal(store_get(f->store, in), 0);
}

/* A plan, a prepare, its commit, and the pending plan at its base. */
static void test_store_plan_commit(void **state)
{
	struct fx *f = *state;
	struct tdm_qdisc_info in;
	unsigned int n;

	store_start(f);
	store_read(f, &in);
	assert_false(in.present);
	/* Empty: the message is the qdisc's deletion. */
	assert_int_equal(store_msg(f->store, f->msg)->nlmsg_type, RTM_DELQDISC);
	assert_status_has(f, false, "no plan in the store of 0000:03:00.0 yet");
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 1, 0, NULL);
	assert_int_equal(f->q.installs, 0);	/* not the kernel's */
	store_read(f, &in);
	assert_true(in.present && !in.pending && !in.hold);
	assert_int_equal(in.version, 1);
	assert_int_equal(in.base_time, TAI_NOW + 11 * SEC);
	assert_int_equal(in.cycle_ns, 10 * MS);
	assert_int_equal(in.nwin, 1);
	assert_int_equal(in.win[0].offset, 0);
	assert_int_equal(in.win[0].length, 2 * MS);
	assert_int_equal(in.guard_ns, 2000);
	assert_int_equal(in.eff_link_speed, 10000);
	assert_int_equal(in.bypass_prios, 1u << 7);	/* control_priority */
	n = f->publishes;
	assert_true(n >= 1);
	/* v2 prepared, base at +12 s: pending and unconfirmed */
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, 0, NULL);
	store_read(f, &in);
	assert_true(in.pending && in.pending_unconfirmed);
	assert_int_equal(in.pending_version, 2);
	assert_int_equal(in.pending_base, TAI_NOW + 12 * SEC);
	assert_true(f->publishes > n);
	n = f->publishes;
	assert_int_equal(outcome(f, TDM_MSG_COMMIT, 2), 0);
	assert_ack(f, TDM_PHASE_COMMIT, 2, 0, NULL);
	store_read(f, &in);
	assert_true(in.pending && !in.pending_unconfirmed);
	assert_int_equal(in.version, 1);
	assert_int_equal(f->publishes, n + 1);
	/* at its base (the clock reads TAI_NOW + mono) it takes over */
	f->mono = 12 * SEC - 1;
	store_read(f, &in);
	assert_int_equal(in.version, 1);
	f->mono = 12 * SEC;
	store_read(f, &in);
	assert_false(in.pending);
	assert_int_equal(in.version, 2);
	assert_int_equal(in.base_time, TAI_NOW + 12 * SEC);
	assert_int_equal(in.xstats.plan_switches, 1);
	assert_int_equal(in.xstats.plan_version, 2);
	assert_status_has(f, false, "gate: tdmd (no netdev): the plan store, on /run/tdmd/gate-0000:03:00.0.sock, 0 followers");
	assert_status_has(f, false, "active plan: v2");
	assert_status_has(f, true, "\"kind\":\"tdmd\"");
}

/* An abort: back to the plan in force, or a hold with none. */
static void test_store_abort(void **state)
{
	struct fx *f = *state;
	struct tdm_qdisc_info in;
	struct tdm_plan p;
	char err[256];

	store_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_int_equal(send_plan(f, plan_ab, 2, TAI_NOW + 11 * SEC), 0);
	/* confirm and abort name the unconfirmed plan's version */
	assert_int_equal(store_confirm(f->store, 3, err, sizeof(err)), -1);
	assert_string_equal(err, "store: No unconfirmed plan of this version");
	assert_int_equal(outcome(f, TDM_MSG_ABORT, 2), 0);
	assert_ack(f, TDM_PHASE_ABORT, 2, 0, NULL);
	store_read(f, &in);
	assert_false(in.pending || in.pending_unconfirmed || in.hold);
	assert_int_equal(in.version, 1);
	assert_int_equal(in.xstats.pending_aborts, 1);
	assert_int_equal(store_abort(f->store, 2, err, sizeof(err)), -1);
	assert_string_equal(err, "store: No unconfirmed plan of this version");

	/* A store whose only plan is the unconfirmed one: an abort holds. */
	store_free(f->store);
	free(f->msg);
	store_setup(f);
	load_plan(plan_ab, 5, &p);
	f->conf.target.link_speed = 10000;
	assert_int_equal(store_prepare(f->store, &f->conf.target, &p, "a", err,
				       sizeof(err)), 0);
	store_read(f, &in);
	assert_true(in.present && !in.pending && in.pending_unconfirmed);
	assert_int_equal(store_abort(f->store, 5, err, sizeof(err)), 0);
	store_read(f, &in);
	assert_true(in.hold);
	assert_false(in.pending_unconfirmed);
	/* an unconfirmed plan needs its base ahead */
	p.version = 6;
	p.base_time = TAI_NOW + f->mono;
	assert_int_equal(store_prepare(f->store, &f->conf.target, &p, "a", err,
				       sizeof(err)), -1);
	assert_string_equal(err, "store: An unconfirmed plan needs a base time in the future");
	tdm_plan_free(&p);
}

/* The lease: on CLOCK_BOOTTIME, its end counted once, renewed. */
static void test_store_lease(void **state)
{
	struct fx *f = *state;
	struct tdm_qdisc_info in;
	char err[256];
	unsigned int n;

	f->conf.target.lease_ns = 2 * SEC;
	store_start(f);
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	store_read(f, &in);
	assert_int_equal(in.lease_ns, 2 * SEC);
	assert_int_equal(in.lease_left_ns, 2 * SEC);
	/* the member renews every 500 ms, each one news */
	n = f->publishes;
	run_for(f, 2 * SEC);
	assert_int_equal(f->publishes, n + 4);
	store_read(f, &in);
	assert_int_equal(in.lease_left_ns, 2 * SEC);
	assert_false(in.xstats.lease_held);
	/* nobody renews (tdmd stopped): it runs out, counted once */
	f->mono += 2 * SEC - 1;
	store_read(f, &in);
	assert_false(in.xstats.lease_held);
	assert_int_equal(in.lease_left_ns, 1);
	f->mono += 1;
	store_read(f, &in);
	assert_true(in.xstats.lease_held);
	assert_int_equal(in.xstats.lease_expiries, 1);
	f->mono += SEC;
	store_read(f, &in);
	assert_int_equal(in.lease_left_ns, -SEC);
	assert_int_equal(in.xstats.lease_expiries, 1);
	assert_int_equal(store_renew(f->store, err, sizeof(err)), 0);
	store_read(f, &in);
	assert_false(in.xstats.lease_held);
	assert_int_equal(in.lease_left_ns, 2 * SEC);
	assert_int_equal(in.xstats.lease_expiries, 1);
	assert_int_equal(store_set_lease(f->store, 50 * MS, err, sizeof(err)), -1);
	assert_string_equal(err, "store: Lease must be 0 (none) or from 100 ms to 1 h");
	assert_int_equal(store_set_lease(f->store, 0, err, sizeof(err)), 0);
	assert_int_equal(store_renew(f->store, err, sizeof(err)), -1);
	assert_string_equal(err, "store: Nothing to renew: the device has no lease (set one with lease TIME)");
}

/* Plans the store refuses, as the kernel would, with the reason in the nack. */
static void test_store_refused(void **state)
{
	struct fx *f = *state;
	struct tdm_qdisc_info in;
	char err[256];

	store_setup(f);
	fx_start(f);	/* no link_speed: neither tdm.conf nor the plan has one */
	assert_int_equal(store_set_hold(f->store, true, err, sizeof(err)), -1);
	assert_string_equal(err, "no tdmwin plan in the store of 0000:03:00.0");
	session_up(f, 1);
	assert_int_equal(send_plan(f, plan_ab, 1, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 1, EINVAL,
		   "store: 0000:03:00.0 has no netdev to take its link speed from: set link_speed in tdm.conf or in the plan");
	store_read(f, &in);
	assert_false(in.present);
	assert_int_equal(f->publishes, 0);
	/* the plan's 10 Mbit/s: a 10 us window holds no minimum frame */
	assert_int_equal(send_plan(f, "[global]\nclock tai\ncycle_time 10ms\nlink_speed 10\n"
				   "[sender a]\nwindow 0 10us\n", 2, 0), 0);
	assert_ack(f, TDM_PHASE_PREPARE, 2, EINVAL,
		   "store: Window shorter than one minimum frame plus guard at this link speed");
	store_read(f, &in);
	assert_false(in.present);
	/* and mq or etf have no place without a netdev */
	assert_int_equal(f->io.qdisc_txtime(f->io.qdisc_ctx, &f->conf.target,
					    &f->conf.etf, err, sizeof(err)), -1);
	assert_string_equal(err, "store of 0000:03:00.0: no etf child without a netdev");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
		T(test_register_and_heartbeat),
		T(test_reconnect_backoff),
		T(test_handshake_timeout),
		T(test_plan_before_welcome),
		T(test_plan_install),
		T(test_plan_without_us),
		T(test_prepare_commit),
		T(test_prepare_abort),
		T(test_prepare_refused),
		T(test_commit_fails),
		T(test_prepare_without_us),
		T(test_cut_off_while_prepared),
		T(test_cut_off_then_abort),
		T(test_restart_finds_prepared),
		T(test_ptp_hysteresis),
		T(test_ptp_warn),
		T(test_phc_hysteresis),
		T(test_ptp_master_not_synced),
		T(test_ptp_tai_against_utc_offset),
		T(test_gm_change_reruns_hysteresis),
		T(test_gm_change_warn),
		T(test_lease_renewal),
		T(test_reload_keeps_session_plan_lease),
		T(test_reload_lease_off),
		T(test_reload_lease_while_unhealthy),
		T(test_reload_policy_warn),
		T(test_metrics),
		T(test_metrics_promtool),
		T(test_mq_install_all),
		T(test_mq_list),
		T(test_mq_install_partial),
		T(test_mq_metrics),
		T(test_mq_prepare_none),
		T(test_mq_prepare_txtime_fails),
		T(test_mq_commit_abort),
		T(test_mq_commit_rolled_back),
		T(test_mq_commit_checked_first),
		T(test_mq_hold_all),
		T(test_mq_lease),
		T(test_mq_txtime),
		T(test_txtime_root_multiqueue),
		T(test_register_level),
		T(test_nxm_prepare_commit),
		T(test_nxm_drop_receiver),
		T(test_nxm_abort),
		T(test_nxm_filter_fails),
		T(test_nxm_class_remap_refused),
		T(test_nxm_mq),
		T(test_nxm_install),
		T(test_store_plan_commit),
		T(test_store_abort),
		T(test_store_lease),
		T(test_store_refused),
#undef T
	};

	tdm_log_init("test_member", LOG_EMERG);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
