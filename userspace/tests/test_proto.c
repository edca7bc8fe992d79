// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the control-protocol codec (lib/tdm_proto.c): the
 * handshake, every message type, plans in frames, and the rejection of
 * everything a receiver must refuse: truncation, bad lengths, wrong magic
 * or version, wrong key, tampering (every bit), replay, reordering, frames
 * of other connections, reflection, attribute errors and frames the
 * handshake state does not allow.  Key file loading too.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_proto.h"

static const uint8_t key1[32] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
	0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
};
static const uint8_t key2[32] = { 0x42 };

/* Per-test state: a connected pair of sessions and frame buffers. */
struct fx {
	struct tdm_session srv, cli;
	uint32_t *buf;		/* 4-byte aligned, TDM_MAX_FRAME */
	uint32_t *buf2;
	char err[256];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->buf = malloc(TDM_MAX_FRAME);
	f->buf2 = malloc(TDM_MAX_FRAME);
	assert_non_null(f->buf);
	assert_non_null(f->buf2);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	free(f->buf);
	free(f->buf2);
	free(f);
	return 0;
}

static struct nlmsghdr *begin(void *buf, uint16_t type)
{
	struct nlmsghdr *nlh = tdm_frame_begin(buf, TDM_MAX_FRAME, type);

	assert_non_null(nlh);
	return nlh;
}

static size_t seal(struct tdm_session *s, struct nlmsghdr *nlh)
{
	ssize_t len = tdm_frame_seal(s, nlh, TDM_MAX_FRAME);

	assert_true(len >= (ssize_t)TDM_MIN_FRAME);
	assert_int_equal(len, nlh->nlmsg_len);
	return len;
}

static void open_ok(struct tdm_session *s, const void *buf, size_t len,
		    struct tdm_msg *m)
{
	char err[256] = "";
	int rc = tdm_frame_open(s, buf, len, m, err, sizeof(err));

	if (rc)
		fail_msg("tdm_frame_open: %s", err);
}

/*
 * A frame that must be refused, with expect in the message (if given),
 * and without any change to the session.
 */
static void open_fail(struct tdm_session *s, const void *buf, size_t len,
		      const char *expect)
{
	struct tdm_session before = *s;
	struct tdm_msg m;
	char err[256] = "";

	assert_int_equal(tdm_frame_open(s, buf, len, &m, err, sizeof(err)),
			 -1);
	assert_true(err[0] != '\0');
	if (expect && !strstr(err, expect))
		fail_msg("error '%s' does not contain '%s'", err, expect);
	assert_memory_equal(&before, s, sizeof(*s));
}

static size_t mk_hello(struct tdm_session *srv, void *buf)
{
	struct nlmsghdr *nlh = begin(buf, TDM_MSG_HELLO);

	assert_int_equal(tdm_put_nonce(srv, nlh, TDM_MAX_FRAME), 0);
	mnl_attr_put_u32(nlh, TDM_A_PROTO, TDM_PROTO_VERSION);
	return seal(srv, nlh);
}

static size_t mk_register(struct tdm_session *cli, void *buf)
{
	struct nlmsghdr *nlh = begin(buf, TDM_MSG_REGISTER);

	assert_int_equal(tdm_put_nonce(cli, nlh, TDM_MAX_FRAME), 0);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "node-1");
	return seal(cli, nlh);
}

static size_t mk_welcome(struct tdm_session *srv, void *buf)
{
	struct nlmsghdr *nlh = begin(buf, TDM_MSG_WELCOME);

	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 3);
	return seal(srv, nlh);
}

static size_t mk_heartbeat(struct tdm_session *cli, void *buf)
{
	struct nlmsghdr *nlh = begin(buf, TDM_MSG_HEARTBEAT);
	struct nlattr *nest;

	nest = mnl_attr_nest_start(nlh, TDM_A_SYNC);
	mnl_attr_put_u32(nlh, TDM_S_STATE, 2);
	mnl_attr_put_u64(nlh, TDM_S_OFFSET, (uint64_t)-25);
	mnl_attr_put_u32(nlh, TDM_S_PORT_STATE, 9);
	mnl_attr_put_u8(nlh, TDM_S_HOLD, 1);
	mnl_attr_put_strz(nlh, TDM_S_REASON, "offset 25 ns");
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 3);
	return seal(cli, nlh);
}

static void init_pair(struct tdm_session *srv, struct tdm_session *cli,
		      const uint8_t *skey, const uint8_t *ckey)
{
	assert_int_equal(tdm_session_init(srv, true, skey, 32), 0);
	assert_int_equal(tdm_session_init(cli, false, ckey, 32), 0);
}

/* HELLO, REGISTER, WELCOME between srv and cli. */
static void handshake(struct tdm_session *srv, struct tdm_session *cli,
		      void *buf)
{
	struct tdm_msg m;
	size_t len;

	init_pair(srv, cli, key1, key1);
	len = mk_hello(srv, buf);
	open_ok(cli, buf, len, &m);
	len = mk_register(cli, buf);
	open_ok(srv, buf, len, &m);
	len = mk_welcome(srv, buf);
	open_ok(cli, buf, len, &m);
}

/* ---- handshake and message types ---- */

static void test_handshake(void **state)
{
	struct fx *f = *state;
	uint8_t zero[TDM_NONCE_LEN] = { 0 };
	struct tdm_msg m;
	size_t len;

	init_pair(&f->srv, &f->cli, key1, key1);
	assert_memory_not_equal(f->srv.snonce, zero, TDM_NONCE_LEN);
	assert_memory_equal(f->cli.cnonce, zero, TDM_NONCE_LEN);

	len = mk_hello(&f->srv, f->buf);
	assert_int_equal(len % 4, 0);
	assert_int_equal(tdm_frame_need(f->buf, len, f->err, sizeof(f->err)),
			 len);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_HELLO);
	assert_int_equal(m.seq, 0);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PROTO]), 2);
	assert_memory_equal(f->cli.snonce, f->srv.snonce, TDM_NONCE_LEN);

	len = mk_register(&f->cli, f->buf);
	assert_memory_not_equal(f->cli.cnonce, zero, TDM_NONCE_LEN);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_REGISTER);
	assert_string_equal(mnl_attr_get_str(m.tb[TDM_A_NAME]), "node-1");
	assert_null(m.tb[TDM_A_PLAN_VERSION]);
	assert_memory_equal(f->srv.cnonce, f->cli.cnonce, TDM_NONCE_LEN);
	assert_memory_equal(mnl_attr_get_payload(m.tb[TDM_A_NONCE]),
			    f->cli.cnonce, TDM_NONCE_LEN);

	len = mk_welcome(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_WELCOME);
	assert_int_equal(m.seq, 1);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PLAN_VERSION]), 3);

	assert_int_equal(f->srv.rx_state, TDM_RX_OPEN);
	assert_int_equal(f->cli.rx_state, TDM_RX_OPEN);
	assert_int_equal(f->srv.tx_seq, 2);
	assert_int_equal(f->srv.rx_seq, 1);
	assert_int_equal(f->cli.tx_seq, 1);
	assert_int_equal(f->cli.rx_seq, 2);
}

static void test_register_optional(void **state)
{
	struct fx *f = *state;
	uint8_t digest[32];
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	size_t len;

	memset(digest, 0xa5, sizeof(digest));
	init_pair(&f->srv, &f->cli, key1, key1);
	len = mk_hello(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	assert_int_equal(tdm_put_nonce(&f->cli, nlh, TDM_MAX_FRAME), 0);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "a.b_c-9");
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 41);
	mnl_attr_put_u64(nlh, TDM_A_BASE_TIME, (uint64_t)-5);
	mnl_attr_put(nlh, TDM_A_DIGEST, sizeof(digest), digest);
	/* Level 3: a member says its level to a coordinator that speaks it. */
	mnl_attr_put_u32(nlh, TDM_A_PROTO, TDM_PROTO_LEVEL);
	len = seal(&f->cli, nlh);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PROTO]), TDM_PROTO_LEVEL);
	assert_string_equal(mnl_attr_get_str(m.tb[TDM_A_NAME]), "a.b_c-9");
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PLAN_VERSION]), 41);
	assert_int_equal((int64_t)mnl_attr_get_u64(m.tb[TDM_A_BASE_TIME]), -5);
	assert_memory_equal(mnl_attr_get_payload(m.tb[TDM_A_DIGEST]), digest,
			    32);

	/* WELCOME without the optional version. */
	nlh = begin(f->buf, TDM_MSG_WELCOME);
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_WELCOME);
	assert_null(m.tb[TDM_A_PLAN_VERSION]);
}

static void test_msg_ack(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	nlh = begin(f->buf, TDM_MSG_ACK);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 9);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, 0);
	len = seal(&f->cli, nlh);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_ACK);
	assert_int_equal(m.seq, 1);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PLAN_VERSION]), 9);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_STATUS]), 0);
	assert_null(m.tb[TDM_A_MESSAGE]);

	nlh = begin(f->buf, TDM_MSG_ACK);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 10);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, ESTALE);
	mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "plan v10 is not newer");
	len = seal(&f->cli, nlh);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_STATUS]), ESTALE);
	assert_string_equal(mnl_attr_get_str(m.tb[TDM_A_MESSAGE]),
			    "plan v10 is not newer");
}

/*
 * Two-phase plan changes: PLAN may carry COMMIT_BY, COMMIT and ABORT go
 * from server to client only, an ACK names its phase (a known one).
 */
static void test_msg_two_phase(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	nlh = begin(f->buf, TDM_MSG_COMMIT);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 9);
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_COMMIT);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PLAN_VERSION]), 9);

	nlh = begin(f->buf, TDM_MSG_ABORT);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 9);
	mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "b refused");
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	assert_string_equal(tdm_msg_name(m.type), "ABORT");
	assert_string_equal(mnl_attr_get_str(m.tb[TDM_A_MESSAGE]), "b refused");

	/* A client may not send the outcome. */
	nlh = begin(f->buf, TDM_MSG_COMMIT);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 9);
	assert_true(tdm_frame_seal(&f->cli, nlh, TDM_MAX_FRAME) < 0);

	nlh = begin(f->buf, TDM_MSG_ACK);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 9);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, 0);
	mnl_attr_put_u32(nlh, TDM_A_PHASE, TDM_PHASE_COMMIT);
	len = seal(&f->cli, nlh);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PHASE]), TDM_PHASE_COMMIT);

	nlh = begin(f->buf, TDM_MSG_ACK);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 9);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, 0);
	mnl_attr_put_u32(nlh, TDM_A_PHASE, __TDM_PHASE_MAX);
	len = seal(&f->cli, nlh);
	open_fail(&f->srv, f->buf, len, "PHASE 3 in ACK is not a phase");
}

static void test_msg_heartbeat(void **state)
{
	struct fx *f = *state;
	const struct nlattr *stb[TDM_S_MAX + 1];
	struct tc_tdmwin_xstats xs = { .windows_opened = 77, .hold = 1 };
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	struct tdm_msg m;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	len = mk_heartbeat(&f->cli, f->buf);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_HEARTBEAT);
	assert_int_equal(tdm_sync_get(m.tb[TDM_A_SYNC], stb, f->err,
				      sizeof(f->err)), 0);
	assert_int_equal(mnl_attr_get_u32(stb[TDM_S_STATE]), 2);
	assert_int_equal((int64_t)mnl_attr_get_u64(stb[TDM_S_OFFSET]), -25);
	assert_int_equal(mnl_attr_get_u32(stb[TDM_S_PORT_STATE]), 9);
	assert_int_equal(mnl_attr_get_u8(stb[TDM_S_HOLD]), 1);
	assert_string_equal(mnl_attr_get_str(stb[TDM_S_REASON]),
			    "offset 25 ns");
	assert_null(m.tb[TDM_A_QDISC]);
	assert_null(m.tb[TDM_A_PENDING_VERSION]);

	/* With the optional qdisc statistics and pending version; the sync
	 * nest with only its required state.
	 */
	nlh = begin(f->buf, TDM_MSG_HEARTBEAT);
	nest = mnl_attr_nest_start(nlh, TDM_A_SYNC);
	mnl_attr_put_u32(nlh, TDM_S_STATE, 0);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put(nlh, TDM_A_QDISC, sizeof(xs), &xs);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 4);
	mnl_attr_put_u32(nlh, TDM_A_PENDING_VERSION, 5);
	len = seal(&f->cli, nlh);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(mnl_attr_get_payload_len(m.tb[TDM_A_QDISC]),
			 sizeof(xs));
	assert_memory_equal(mnl_attr_get_payload(m.tb[TDM_A_QDISC]), &xs,
			    sizeof(xs));
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_PENDING_VERSION]), 5);
	assert_int_equal(tdm_sync_get(m.tb[TDM_A_SYNC], stb, f->err,
				      sizeof(f->err)), 0);
	assert_null(stb[TDM_S_HOLD]);
}

static void test_msg_error(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	nlh = begin(f->buf, TDM_MSG_ERROR);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, EPERM);
	mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "unknown member");
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_ERROR);
	assert_int_equal(mnl_attr_get_u32(m.tb[TDM_A_STATUS]), EPERM);
	assert_string_equal(mnl_attr_get_str(m.tb[TDM_A_MESSAGE]),
			    "unknown member");

	nlh = begin(f->buf, TDM_MSG_ERROR);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, EINVAL);
	mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "cannot install");
	len = seal(&f->cli, nlh);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_ERROR);
	assert_string_equal(mnl_attr_get_str(m.tb[TDM_A_MESSAGE]),
			    "cannot install");

	/* A client may get ERROR instead of WELCOME. */
	init_pair(&f->srv, &f->cli, key1, key1);
	len = mk_hello(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);
	len = mk_register(&f->cli, f->buf);
	open_ok(&f->srv, f->buf, len, &m);
	nlh = begin(f->buf, TDM_MSG_ERROR);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, EBUSY);
	mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "too many members");
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_ERROR);
}

static void test_msg_names(void **state)
{
	(void)state;
	assert_string_equal(tdm_msg_name(TDM_MSG_HELLO), "HELLO");
	assert_string_equal(tdm_msg_name(TDM_MSG_REGISTER), "REGISTER");
	assert_string_equal(tdm_msg_name(TDM_MSG_WELCOME), "WELCOME");
	assert_string_equal(tdm_msg_name(TDM_MSG_PLAN), "PLAN");
	assert_string_equal(tdm_msg_name(TDM_MSG_ACK), "ACK");
	assert_string_equal(tdm_msg_name(TDM_MSG_HEARTBEAT), "HEARTBEAT");
	assert_string_equal(tdm_msg_name(TDM_MSG_ERROR), "ERROR");
	assert_string_equal(tdm_msg_name(0), "UNKNOWN");
	assert_string_equal(tdm_msg_name(__TDM_MSG_MAX), "UNKNOWN");
}

/* ---- plans ---- */

/* n (<= 5) senders "node-0".. with two windows each in a 10 ms cycle. */
static void make_plan(struct tdm_plan *p, unsigned int n)
{
	unsigned int i;

	tdm_plan_init(p);
	p->version = 7;
	p->clockid = CLOCK_TAI;
	p->cycle_ns = 10000000;
	p->base_time = 1700000000000000000LL;
	p->guard_ns = 2000;
	p->min_dead_ns = 10000;
	p->link_speed = 10000;
	p->bypass_prios = 0xc0;
	p->bypass_ptp = false;
	p->senders = calloc(n, sizeof(*p->senders));
	assert_non_null(p->senders);
	p->nsenders = n;
	for (i = 0; i < n; i++) {
		struct tdm_sender *sd = &p->senders[i];

		snprintf(sd->name, sizeof(sd->name), "node-%u", i);
		sd->nwin = 2;
		sd->win[0].offset = i * 1000000ULL;
		sd->win[0].length = 400000;
		sd->win[1].offset = 5000000 + i * 1000000ULL;
		sd->win[1].length = 400000;
	}
}

static void assert_plan_equal(const struct tdm_plan *a,
			      const struct tdm_plan *b)
{
	unsigned int i, j;

	assert_int_equal(a->version, b->version);
	assert_int_equal(a->clockid, b->clockid);
	assert_int_equal(a->cycle_ns, b->cycle_ns);
	assert_int_equal(a->base_time, b->base_time);
	assert_int_equal(a->guard_ns, b->guard_ns);
	assert_int_equal(a->min_dead_ns, b->min_dead_ns);
	assert_int_equal(a->link_speed, b->link_speed);
	assert_int_equal(a->bypass_prios, b->bypass_prios);
	assert_int_equal(a->bypass_ptp, b->bypass_ptp);
	assert_int_equal(a->nsenders, b->nsenders);
	for (i = 0; i < a->nsenders; i++) {
		assert_string_equal(a->senders[i].name, b->senders[i].name);
		assert_int_equal(a->senders[i].nwin, b->senders[i].nwin);
		for (j = 0; j < a->senders[i].nwin; j++) {
			assert_int_equal(a->senders[i].win[j].offset,
					 b->senders[i].win[j].offset);
			assert_int_equal(a->senders[i].win[j].length,
					 b->senders[i].win[j].length);
		}
	}
}

static void test_plan_roundtrip(void **state)
{
	struct fx *f = *state;
	struct tdm_plan p, q;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	make_plan(&p, 5);
	p.bypass_ptp = true;
	nlh = begin(f->buf, TDM_MSG_PLAN);
	assert_int_equal(tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, &p), 0);
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(m.type, TDM_MSG_PLAN);
	assert_non_null(m.tb[TDM_A_PLAN]);
	if (tdm_plan_get(m.tb[TDM_A_PLAN], &q, f->err, sizeof(f->err)))
		fail_msg("tdm_plan_get: %s", f->err);
	assert_plan_equal(&p, &q);
	tdm_plan_free(&q);

	/* Negative values of signed fields survive the u32/u64 encoding. */
	p.base_time = -3;
	p.clockid = CLOCK_MONOTONIC;
	nlh = begin(f->buf, TDM_MSG_PLAN);
	assert_int_equal(tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, &p), 0);
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	assert_int_equal(tdm_plan_get(m.tb[TDM_A_PLAN], &q, f->err,
				      sizeof(f->err)), 0);
	assert_plan_equal(&p, &q);
	tdm_plan_free(&q);
	tdm_plan_free(&p);
}

static void test_plan_put_limits(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	struct tdm_plan p;
	uint32_t before;
	unsigned int i;

	make_plan(&p, 3);
	/* No room: the frame is left as it was. */
	nlh = begin(f->buf, TDM_MSG_PLAN);
	before = nlh->nlmsg_len;
	errno = 0;
	assert_int_equal(tdm_plan_put(nlh, 100, TDM_A_PLAN, &p), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(nlh->nlmsg_len, before);
	tdm_plan_free(&p);

	/* A nest longer than nla_len can express is refused, not wrapped. */
	tdm_plan_init(&p);
	p.cycle_ns = 10000000;
	p.senders = calloc(1000, sizeof(*p.senders));
	assert_non_null(p.senders);
	p.nsenders = 1000;
	for (i = 0; i < p.nsenders; i++) {
		memset(p.senders[i].name, 'x', TDM_NAME_MAX - 1);
		p.senders[i].nwin = 1;
		p.senders[i].win[0].offset = i * 1000ULL;
		p.senders[i].win[0].length = 500;
	}
	nlh = begin(f->buf, TDM_MSG_PLAN);
	errno = 0;
	assert_int_equal(tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, &p), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(nlh->nlmsg_len, before);
	tdm_plan_free(&p);
}

/* A PLAN frame built by hand: scalars, then fn adds senders. */
static const struct nlattr *raw_plan(void *buf, bool scalars,
				     void (*fn)(struct nlmsghdr *nlh))
{
	struct nlmsghdr *nlh = begin(buf, TDM_MSG_PLAN);
	struct nlattr *nest = mnl_attr_nest_start(nlh, TDM_A_PLAN);

	if (scalars) {
		mnl_attr_put_u32(nlh, TDM_P_VERSION, 1);
		mnl_attr_put_u32(nlh, TDM_P_CLOCKID, CLOCK_TAI);
		mnl_attr_put_u64(nlh, TDM_P_CYCLE, 1000000);
		mnl_attr_put_u64(nlh, TDM_P_BASE_TIME, 0);
		mnl_attr_put_u32(nlh, TDM_P_GUARD, 0);
		mnl_attr_put_u64(nlh, TDM_P_MIN_DEAD, 0);
		mnl_attr_put_u32(nlh, TDM_P_LINK_SPEED, 0);
		mnl_attr_put_u32(nlh, TDM_P_BYPASS_PRIOS, 0);
		mnl_attr_put_u8(nlh, TDM_P_BYPASS_PTP, 1);
	}
	fn(nlh);
	mnl_attr_nest_end(nlh, nest);
	return nest;
}

static void put_window(struct nlmsghdr *nlh, uint64_t off, uint64_t len,
		       size_t size)
{
	uint8_t w[16];

	memcpy(w, &off, 8);
	memcpy(w + 8, &len, 8);
	mnl_attr_put(nlh, TDM_PS_WINDOW, size, w);
}

static void sender_good(struct nlmsghdr *nlh)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);

	mnl_attr_put_strz(nlh, TDM_PS_NAME, "a");
	put_window(nlh, 0, 1000, 16);
	mnl_attr_nest_end(nlh, s);
}

static void sender_unknown_p(struct nlmsghdr *nlh)
{
	sender_good(nlh);
	mnl_attr_put_u32(nlh, TDM_P_MAX + 1, 0);
}

static void sender_unknown_ps(struct nlmsghdr *nlh)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);

	mnl_attr_put_strz(nlh, TDM_PS_NAME, "a");
	put_window(nlh, 0, 1000, 16);
	mnl_attr_put_u32(nlh, TDM_PS_MAX + 1, 0);
	mnl_attr_nest_end(nlh, s);
}

/* ---- plans with receivers (level 3) ---- */

static void put_receiver(struct nlmsghdr *nlh, const char *name,
			 const char *addr)
{
	struct nlattr *r = mnl_attr_nest_start(nlh, TDM_P_RECEIVER);

	if (name)
		mnl_attr_put_strz(nlh, TDM_PR_NAME, name);
	if (addr)
		mnl_attr_put_strz(nlh, TDM_PR_ADDRESS, addr);
	mnl_attr_nest_end(nlh, r);
}

static void put_dwindow(struct nlmsghdr *nlh, uint64_t off, uint64_t len,
			uint32_t dest)
{
	uint8_t w[20];

	memcpy(w, &off, 8);
	memcpy(w + 8, &len, 8);
	memcpy(w + 16, &dest, 4);
	mnl_attr_put(nlh, TDM_PS_DWINDOW, sizeof(w), w);
}

/* Sender "a" with a window to receiver 0 and one to dest. */
static void dsender(struct nlmsghdr *nlh, uint32_t dest)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);

	mnl_attr_put_strz(nlh, TDM_PS_NAME, "a");
	put_dwindow(nlh, 0, 1000, 0);
	put_dwindow(nlh, 2000, 1000, dest);
	mnl_attr_nest_end(nlh, s);
}

static void recv_good(struct nlmsghdr *nlh)
{
	put_receiver(nlh, "x0", "198.18.1.1");
	put_receiver(nlh, "x1", "2001:db8::2");
	dsender(nlh, 1);
}

static void recv_dest_beyond(struct nlmsghdr *nlh)
{
	put_receiver(nlh, "x0", "198.18.1.1");
	put_receiver(nlh, "x1", "198.18.1.2");
	dsender(nlh, 2);
}

/* A window without its destination in a plan with receivers. */
static void recv_plain_window(struct nlmsghdr *nlh)
{
	put_receiver(nlh, "x0", "198.18.1.1");
	sender_good(nlh);
}

/* A window with a destination in a plan without receivers. */
static void recv_dwindow_alone(struct nlmsghdr *nlh)
{
	dsender(nlh, 0);
}

static void recv_no_address(struct nlmsghdr *nlh)
{
	put_receiver(nlh, "x0", NULL);
	dsender(nlh, 0);
}

static void recv_bad_address(struct nlmsghdr *nlh)
{
	put_receiver(nlh, "x0", "198.18.1.1");
	put_receiver(nlh, "x1", "host.example");
	dsender(nlh, 1);
}

static void recv_bad_name(struct nlmsghdr *nlh)
{
	put_receiver(nlh, "x 0", "198.18.1.1");
	dsender(nlh, 0);
}

static void recv_unknown_pr(struct nlmsghdr *nlh)
{
	struct nlattr *r = mnl_attr_nest_start(nlh, TDM_P_RECEIVER);

	mnl_attr_put_strz(nlh, TDM_PR_NAME, "x0");
	mnl_attr_put_strz(nlh, TDM_PR_ADDRESS, "198.18.1.1");
	mnl_attr_put_u32(nlh, TDM_PR_MAX + 1, 0);
	mnl_attr_nest_end(nlh, r);
	dsender(nlh, 0);
}

static void recv_long_address(struct nlmsghdr *nlh)
{
	char addr[TDM_ADDR_MAX + 1];

	memset(addr, '1', TDM_ADDR_MAX);
	addr[TDM_ADDR_MAX] = '\0';
	put_receiver(nlh, "x0", addr);
	dsender(nlh, 0);
}

static void sender_short_window(struct nlmsghdr *nlh)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);

	mnl_attr_put_strz(nlh, TDM_PS_NAME, "a");
	put_window(nlh, 0, 1000, 15);
	mnl_attr_nest_end(nlh, s);
}

static void sender_long_name(struct nlmsghdr *nlh)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);
	char name[TDM_NAME_MAX + 1];

	memset(name, 'n', TDM_NAME_MAX);
	name[TDM_NAME_MAX] = '\0';	/* 64 chars: one too many */
	mnl_attr_put_strz(nlh, TDM_PS_NAME, name);
	put_window(nlh, 0, 1000, 16);
	mnl_attr_nest_end(nlh, s);
}

static void sender_no_name(struct nlmsghdr *nlh)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);

	put_window(nlh, 0, 1000, 16);
	mnl_attr_nest_end(nlh, s);
}

static void sender_too_many_windows(struct nlmsghdr *nlh)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);
	unsigned int i;

	mnl_attr_put_strz(nlh, TDM_PS_NAME, "a");
	for (i = 0; i <= TDMWIN_MAX_WINDOWS; i++)
		put_window(nlh, i * 10, 5, 16);
	mnl_attr_nest_end(nlh, s);
}

static void sender_outside_cycle(struct nlmsghdr *nlh)
{
	struct nlattr *s = mnl_attr_nest_start(nlh, TDM_P_SENDER);

	mnl_attr_put_strz(nlh, TDM_PS_NAME, "a");
	put_window(nlh, 999000, 2000, 16);	/* ends after the 1 ms cycle */
	mnl_attr_nest_end(nlh, s);
}

static void sender_dup_scalar(struct nlmsghdr *nlh)
{
	sender_good(nlh);
	mnl_attr_put_u32(nlh, TDM_P_GUARD, 0);
}

static void plan_get_fails(void *buf, bool scalars,
			   void (*fn)(struct nlmsghdr *nlh), const char *expect)
{
	const struct nlattr *nest = raw_plan(buf, scalars, fn);
	struct tdm_plan p;
	char err[256] = "";

	assert_int_equal(tdm_plan_get(nest, &p, err, sizeof(err)), -1);
	if (expect && !strstr(err, expect))
		fail_msg("error '%s' does not contain '%s'", err, expect);
	/* Left freed. */
	assert_null(p.senders);
	assert_int_equal(p.nsenders, 0);
}

static void test_plan_get_rejects(void **state)
{
	struct fx *f = *state;
	const struct nlattr *nest;
	struct tdm_plan p;

	nest = raw_plan(f->buf, true, sender_good);
	if (tdm_plan_get(nest, &p, f->err, sizeof(f->err)))
		fail_msg("tdm_plan_get: %s", f->err);
	assert_int_equal(p.nsenders, 1);
	assert_string_equal(p.senders[0].name, "a");
	assert_int_equal(p.senders[0].win[0].length, 1000);
	tdm_plan_free(&p);

	plan_get_fails(f->buf, true, sender_unknown_p,
		       "unknown attribute 12 in PLAN");
	plan_get_fails(f->buf, true, sender_unknown_ps,
		       "unknown attribute 4 in SENDER 0");
	plan_get_fails(f->buf, true, sender_short_window,
		       "bad length 15 of attribute WINDOW in SENDER 0");
	plan_get_fails(f->buf, true, sender_long_name,
		       "attribute NAME in SENDER 0");
	plan_get_fails(f->buf, true, sender_no_name,
		       "missing attribute NAME in SENDER 0");
	plan_get_fails(f->buf, true, sender_too_many_windows,
		       "65 windows in SENDER 0");
	plan_get_fails(f->buf, false, sender_good,
		       "missing attribute VERSION in PLAN");
	plan_get_fails(f->buf, true, sender_dup_scalar,
		       "duplicate attribute GUARD in PLAN");
	/* Well-formed but invalid: tdm_plan_validate() has the last word. */
	plan_get_fails(f->buf, true, sender_outside_cycle, NULL);

	/* No PLAN attribute at all. */
	assert_int_equal(tdm_plan_get(NULL, &p, f->err, sizeof(f->err)), -1);
}

/* A plan with receivers through a frame, and what is refused in one. */
static void test_plan_receivers(void **state)
{
	struct fx *f = *state;
	const struct nlattr *nest;
	struct tdm_plan p, q;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	unsigned int i;
	size_t len;

	/* The barrel shifter's plan survives the round trip, receivers,
	 * addresses and every window's destination.
	 */
	handshake(&f->srv, &f->cli, f->buf);
	tdm_plan_init(&p);
	p.version = 9;
	p.receivers = calloc(3, sizeof(*p.receivers));
	assert_non_null(p.receivers);
	p.nreceivers = 3;
	for (i = 0; i < 3; i++) {
		snprintf(p.receivers[i].name, TDM_NAME_MAX, "x%u", i);
		snprintf(p.receivers[i].addr, TDM_ADDR_MAX, "198.18.1.%u",
			 i + 1);
	}
	if (tdm_plan_barrel(&p, 3, NULL, 1000000, 100000, f->err,
			    sizeof(f->err)))
		fail_msg("tdm_plan_barrel: %s", f->err);
	nlh = begin(f->buf, TDM_MSG_PLAN);
	assert_int_equal(tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, &p), 0);
	len = seal(&f->srv, nlh);
	open_ok(&f->cli, f->buf, len, &m);
	if (tdm_plan_get(m.tb[TDM_A_PLAN], &q, f->err, sizeof(f->err)))
		fail_msg("tdm_plan_get: %s", f->err);
	assert_true(tdm_plan_equal(&p, &q));
	assert_int_equal(q.nreceivers, 3);
	assert_string_equal(q.receivers[2].addr, "198.18.1.3");
	assert_int_equal(q.senders[1].win[0].dest, 1);
	assert_int_equal(q.senders[1].win[2].dest, 0);
	tdm_plan_free(&q);
	tdm_plan_free(&p);

	/* A plan without receivers is encoded as at level 2: WINDOW only. */
	make_plan(&p, 2);
	nlh = begin(f->buf, TDM_MSG_PLAN);
	assert_int_equal(tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, &p), 0);
	{
		const struct nlattr *a, *pl = NULL, *sd = NULL;

		mnl_attr_for_each(a, nlh, sizeof(struct tdm_fhdr))
			pl = a;
		mnl_attr_for_each_nested(a, pl) {
			assert_int_not_equal(mnl_attr_get_type(a), TDM_P_RECEIVER);
			if (mnl_attr_get_type(a) == TDM_P_SENDER)
				sd = a;
		}
		mnl_attr_for_each_nested(a, sd)
			assert_int_not_equal(mnl_attr_get_type(a), TDM_PS_DWINDOW);
	}
	tdm_plan_free(&p);

	nest = raw_plan(f->buf, true, recv_good);
	if (tdm_plan_get(nest, &p, f->err, sizeof(f->err)))
		fail_msg("tdm_plan_get: %s", f->err);
	assert_int_equal(p.nreceivers, 2);
	assert_string_equal(p.receivers[1].addr, "2001:db8::2");
	assert_int_equal(p.senders[0].win[1].dest, 1);
	tdm_plan_free(&p);

	plan_get_fails(f->buf, true, recv_dest_beyond,
		       "goes to receiver #2, but the plan has 2");
	plan_get_fails(f->buf, true, recv_plain_window,
		       "unknown attribute 2 in SENDER 0");
	plan_get_fails(f->buf, true, recv_dwindow_alone,
		       "unknown attribute 3 in SENDER 0");
	plan_get_fails(f->buf, true, recv_no_address,
		       "missing attribute ADDRESS in RECEIVER 0");
	plan_get_fails(f->buf, true, recv_bad_address, "bad address");
	plan_get_fails(f->buf, true, recv_bad_name,
		       "attribute NAME in RECEIVER 0 is not a name");
	plan_get_fails(f->buf, true, recv_unknown_pr,
		       "unknown attribute 3 in RECEIVER 0");
	plan_get_fails(f->buf, true, recv_long_address,
		       "attribute ADDRESS in RECEIVER 0 is not a string");
}

/* ---- rejections ---- */

static void test_need_bounds(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = (struct nlmsghdr *)f->buf;

	memset(nlh, 0, sizeof(*nlh));
	assert_int_equal(tdm_frame_need(f->buf, 0, f->err, sizeof(f->err)), 0);
	assert_int_equal(tdm_frame_need(f->buf, sizeof(*nlh) - 1, f->err,
					sizeof(f->err)), 0);

	nlh->nlmsg_len = TDM_MAX_FRAME + 1;
	f->err[0] = '\0';
	assert_int_equal(tdm_frame_need(f->buf, sizeof(*nlh), f->err,
					sizeof(f->err)), -1);
	assert_string_equal(f->err, "frame length 262145 out of bounds (56..262144)");
	nlh->nlmsg_len = 0xffffffff;
	assert_int_equal(tdm_frame_need(f->buf, sizeof(*nlh), f->err,
					sizeof(f->err)), -1);
	nlh->nlmsg_len = TDM_MIN_FRAME - 1;
	assert_int_equal(tdm_frame_need(f->buf, sizeof(*nlh), f->err,
					sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "frame length 55 out of bounds"));
	nlh->nlmsg_len = 0;
	assert_int_equal(tdm_frame_need(f->buf, sizeof(*nlh), f->err,
					sizeof(f->err)), -1);
	nlh->nlmsg_len = TDM_MIN_FRAME;
	assert_int_equal(tdm_frame_need(f->buf, sizeof(*nlh), f->err,
					sizeof(f->err)), TDM_MIN_FRAME);
	nlh->nlmsg_len = TDM_MAX_FRAME;
	assert_int_equal(tdm_frame_need(f->buf, sizeof(*nlh), f->err,
					sizeof(f->err)), TDM_MAX_FRAME);

	/* tdm_frame_open applies the same bounds. */
	init_pair(&f->srv, &f->cli, key1, key1);
	open_fail(&f->srv, f->buf, TDM_MAX_FRAME + 4, "out of bounds");
}

static void test_truncated(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = (struct nlmsghdr *)f->buf2;
	size_t len, l;

	handshake(&f->srv, &f->cli, f->buf);
	len = mk_heartbeat(&f->cli, f->buf);
	for (l = 0; l < len; l++) {
		ssize_t need = tdm_frame_need(f->buf, l, f->err,
					      sizeof(f->err));

		assert_int_equal(need, l < sizeof(struct nlmsghdr) ? 0 :
				 (ssize_t)len);
		/* Every prefix as given, with the header's length... */
		open_fail(&f->srv, f->buf, l, NULL);
		/* ...and with a header that claims just the prefix. */
		memcpy(f->buf2, f->buf, l);
		if (l >= sizeof(*nlh)) {
			nlh->nlmsg_len = l;
			open_fail(&f->srv, f->buf2, l, NULL);
		}
	}
	open_fail(&f->srv, f->buf, len - 4, "frame length");
	memcpy(f->buf2, f->buf, len);
	nlh->nlmsg_len = len - 4;
	open_fail(&f->srv, f->buf2, len - 4, "bad MAC");
	/* The frame itself is still good. */
	{
		struct tdm_msg m;

		open_ok(&f->srv, f->buf, len, &m);
	}
}

static void test_magic_version(void **state)
{
	struct fx *f = *state;
	struct tdm_fhdr *fh;
	size_t len;

	init_pair(&f->srv, &f->cli, key1, key1);
	len = mk_hello(&f->srv, f->buf);
	fh = (struct tdm_fhdr *)((char *)f->buf + sizeof(struct nlmsghdr));

	fh->magic = 0x50545448;		/* "HTTP" */
	open_fail(&f->cli, f->buf, len, "wrong magic 0x50545448");
	fh->magic = TDM_MAGIC;
	fh->version = TDM_PROTO_VERSION + 1;
	open_fail(&f->cli, f->buf, len,
		  "protocol version 3 not supported (speaks 2)");
	fh->version = 1;	/* before two-phase plan changes */
	open_fail(&f->cli, f->buf, len,
		  "protocol version 1 not supported (speaks 2)");
	fh->version = TDM_PROTO_VERSION;
	fh->reserved[1] = 1;
	open_fail(&f->cli, f->buf, len, "reserved");
	fh->reserved[1] = 0;
	((struct nlmsghdr *)f->buf)->nlmsg_type = 99;
	open_fail(&f->cli, f->buf, len, "unknown message type 99");
}

static void test_wrong_key(void **state)
{
	struct fx *f = *state;
	struct tdm_msg m;
	size_t len;

	/* HELLO is the first frame checked against the key. */
	init_pair(&f->srv, &f->cli, key1, key2);
	len = mk_hello(&f->srv, f->buf);
	open_fail(&f->cli, f->buf, len,
		  "bad MAC (wrong key or tampered frame)");

	/* A client with the right key but a server with the wrong one:
	 * REGISTER is refused.
	 */
	init_pair(&f->srv, &f->cli, key2, key1);
	memcpy(f->srv.key, key1, 32);
	len = mk_hello(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);
	memcpy(f->srv.key, key2, 32);
	len = mk_register(&f->cli, f->buf);
	open_fail(&f->srv, f->buf, len, "bad MAC");

	/* Same key bytes, different length. */
	assert_int_equal(tdm_session_init(&f->srv, true, key1, 32), 0);
	assert_int_equal(tdm_session_init(&f->cli, false, key1, 31), 0);
	len = mk_hello(&f->srv, f->buf);
	open_fail(&f->cli, f->buf, len, "bad MAC");
}

/* Flip every bit of a frame in turn: each must be refused. */
static void flip_all(struct tdm_session *rx, uint32_t *frame, size_t len)
{
	uint8_t *b = (uint8_t *)frame;
	struct tdm_msg m;
	size_t i;
	int bit;

	for (i = 0; i < len; i++) {
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= 1u << bit;
			open_fail(rx, frame, len, NULL);
			b[i] ^= 1u << bit;
		}
	}
	open_ok(rx, frame, len, &m);
}

static void test_bit_flips(void **state)
{
	struct fx *f = *state;
	struct tdm_plan p;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	size_t len;

	init_pair(&f->srv, &f->cli, key1, key1);
	len = mk_hello(&f->srv, f->buf);
	flip_all(&f->cli, f->buf, len);
	len = mk_register(&f->cli, f->buf);
	flip_all(&f->srv, f->buf, len);
	len = mk_welcome(&f->srv, f->buf);
	flip_all(&f->cli, f->buf, len);
	len = mk_heartbeat(&f->cli, f->buf);
	flip_all(&f->srv, f->buf, len);

	make_plan(&p, 2);
	nlh = begin(f->buf, TDM_MSG_PLAN);
	assert_int_equal(tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, &p), 0);
	len = seal(&f->srv, nlh);
	flip_all(&f->cli, f->buf, len);
	tdm_plan_free(&p);

	/* A flip inside an attribute of an authenticated type is a MAC
	 * failure, not a parse error: attributes are read after the MAC.
	 */
	len = mk_heartbeat(&f->cli, f->buf);
	((uint8_t *)f->buf)[TDM_HDR_LEN + 2] ^= 0x40;
	open_fail(&f->srv, f->buf, len, "bad MAC");
	((uint8_t *)f->buf)[TDM_HDR_LEN + 2] ^= 0x40;
	open_ok(&f->srv, f->buf, len, &m);
}

static void test_replay(void **state)
{
	struct fx *f = *state;
	struct tdm_msg m;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	len = mk_heartbeat(&f->cli, f->buf);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(m.seq, 1);
	open_fail(&f->srv, f->buf, len,
		  "sequence 1, expected 2 (replayed or reordered frame)");
	len = mk_heartbeat(&f->cli, f->buf);
	open_ok(&f->srv, f->buf, len, &m);
	assert_int_equal(m.seq, 2);
}

static void test_reorder(void **state)
{
	struct fx *f = *state;
	struct tdm_msg m;
	size_t len1, len2;

	handshake(&f->srv, &f->cli, f->buf);
	len1 = mk_heartbeat(&f->cli, f->buf);
	len2 = mk_heartbeat(&f->cli, f->buf2);
	open_fail(&f->srv, f->buf2, len2,
		  "sequence 2, expected 1 (replayed or reordered frame)");
	open_ok(&f->srv, f->buf, len1, &m);
	open_ok(&f->srv, f->buf2, len2, &m);

	/* A dropped frame: the next one is out of sequence too. */
	mk_heartbeat(&f->cli, f->buf);
	len1 = mk_heartbeat(&f->cli, f->buf);
	open_fail(&f->srv, f->buf, len1, "sequence 4, expected 3");
}

static void test_other_connection(void **state)
{
	struct fx *f = *state;
	struct tdm_session srv2, cli2;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	handshake(&srv2, &cli2, f->buf);
	assert_memory_not_equal(f->srv.snonce, srv2.snonce, TDM_NONCE_LEN);

	/* Same key, same sequence numbers, other nonces. */
	len = mk_heartbeat(&f->cli, f->buf);
	open_fail(&srv2, f->buf, len, "bad MAC");
	{
		struct nlmsghdr *nlh = begin(f->buf, TDM_MSG_ERROR);

		mnl_attr_put_u32(nlh, TDM_A_STATUS, 1);
		mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "x");
		len = seal(&srv2, nlh);
	}
	open_fail(&f->cli, f->buf, len, "bad MAC");

	/* A HELLO of another connection cannot be replayed into a client
	 * that already has one.
	 */
	assert_int_equal(tdm_session_init(&srv2, true, key1, 32), 0);
	len = mk_hello(&srv2, f->buf);
	open_fail(&f->cli, f->buf, len, "HELLO after the handshake");
	tdm_session_clear(&srv2);
	tdm_session_clear(&cli2);
}

static void test_other_connection_register(void **state)
{
	struct fx *f = *state;
	struct tdm_session srv2, cli2;
	struct tdm_msg m;
	size_t len;

	/* A REGISTER made for one server's nonce, fed to another server. */
	init_pair(&f->srv, &f->cli, key1, key1);
	init_pair(&srv2, &cli2, key1, key1);
	len = mk_hello(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);
	len = mk_register(&f->cli, f->buf);
	open_fail(&srv2, f->buf, len, "bad MAC");
	open_ok(&f->srv, f->buf, len, &m);
}

static void test_reflected(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);

	/* A server frame fed back to the server. */
	len = mk_welcome(&f->srv, f->buf);
	open_fail(&f->srv, f->buf, len,
		  "WELCOME is not a client->server message");
	nlh = begin(f->buf, TDM_MSG_PLAN);
	mnl_attr_put(nlh, TDM_A_PLAN, 0, NULL);
	len = seal(&f->srv, nlh);
	open_fail(&f->srv, f->buf, len, "PLAN is not a client->server message");

	/* ERROR goes both ways: the direction label catches it. */
	nlh = begin(f->buf, TDM_MSG_ERROR);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, 5);
	mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "x");
	f->srv.rx_seq = f->srv.tx_seq;	/* the sequence would fit */
	len = seal(&f->srv, nlh);
	open_fail(&f->srv, f->buf, len, "bad MAC");

	/* And the client's own frames fed back to the client. */
	len = mk_heartbeat(&f->cli, f->buf);
	open_fail(&f->cli, f->buf, len,
		  "HEARTBEAT is not a server->client message");
	nlh = begin(f->buf, TDM_MSG_ERROR);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, 5);
	mnl_attr_put_strz(nlh, TDM_A_MESSAGE, "x");
	f->cli.rx_seq = f->cli.tx_seq;
	len = seal(&f->cli, nlh);
	open_fail(&f->cli, f->buf, len, "bad MAC");

	/* A HELLO fed back to its server. */
	init_pair(&f->srv, &f->cli, key1, key1);
	open_fail(&f->srv, f->buf, mk_hello(&f->srv, f->buf),
		  "HELLO is not a client->server message");
}

/* A sealed HEARTBEAT from fn's attributes, opened by the server. */
static void hb_fails(struct fx *f, void (*fn)(struct nlmsghdr *nlh),
		     const char *expect)
{
	struct nlmsghdr *nlh = begin(f->buf, TDM_MSG_HEARTBEAT);
	size_t len;

	fn(nlh);
	len = seal(&f->cli, nlh);
	open_fail(&f->srv, f->buf, len, expect);
	f->cli.tx_seq--;	/* reuse the sequence number for the next */
}

static void sync_ok(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TDM_A_SYNC);

	mnl_attr_put_u32(nlh, TDM_S_STATE, 1);
	mnl_attr_nest_end(nlh, n);
}

static void hb_unknown14(struct nlmsghdr *nlh)
{
	sync_ok(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	mnl_attr_put_u32(nlh, 14, 1);
}

static void hb_foreign(struct nlmsghdr *nlh)
{
	sync_ok(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "x");
}

static void hb_missing(struct nlmsghdr *nlh)
{
	sync_ok(nlh);
}

static void hb_missing_sync(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_u64_version(struct nlmsghdr *nlh)
{
	sync_ok(nlh);
	mnl_attr_put_u64(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_u16_version(struct nlmsghdr *nlh)
{
	sync_ok(nlh);
	mnl_attr_put_u16(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_big_qdisc(struct nlmsghdr *nlh)
{
	static const uint8_t q[TDM_QDISC_MAX + 1];

	sync_ok(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	mnl_attr_put(nlh, TDM_A_QDISC, sizeof(q), q);
}

static void hb_dup(struct nlmsghdr *nlh)
{
	sync_ok(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 2);
}

static void hb_sync_unknown(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TDM_A_SYNC);

	mnl_attr_put_u32(nlh, TDM_S_STATE, 1);
	mnl_attr_put_u32(nlh, 9, 1);
	mnl_attr_nest_end(nlh, n);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_sync_no_state(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TDM_A_SYNC);

	mnl_attr_put_u8(nlh, TDM_S_HOLD, 1);
	mnl_attr_nest_end(nlh, n);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_sync_hold2(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TDM_A_SYNC);

	mnl_attr_put_u32(nlh, TDM_S_STATE, 1);
	mnl_attr_put_u8(nlh, TDM_S_HOLD, 2);
	mnl_attr_nest_end(nlh, n);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_sync_not_nested(struct nlmsghdr *nlh)
{
	uint8_t state[8] = { 8, 0, TDM_S_STATE, 0, 1, 0, 0, 0 };

	mnl_attr_put(nlh, TDM_A_SYNC, sizeof(state), state);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_reason_no_nul(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TDM_A_SYNC);

	mnl_attr_put_u32(nlh, TDM_S_STATE, 1);
	mnl_attr_put(nlh, TDM_S_REASON, 3, "abc");
	mnl_attr_nest_end(nlh, n);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_reason_inner_nul(struct nlmsghdr *nlh)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, TDM_A_SYNC);

	mnl_attr_put_u32(nlh, TDM_S_STATE, 1);
	mnl_attr_put(nlh, TDM_S_REASON, 4, "a\0b");
	mnl_attr_nest_end(nlh, n);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
}

static void hb_trailing(struct nlmsghdr *nlh)
{
	sync_ok(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	/* Four bytes that are not an attribute (nla_len 2). */
	memset(mnl_nlmsg_get_payload_tail(nlh), 0, 4);
	*(uint16_t *)mnl_nlmsg_get_payload_tail(nlh) = 2;
	nlh->nlmsg_len += 4;
}

static void hb_overrun(struct nlmsghdr *nlh)
{
	struct nlattr *a;

	sync_ok(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	/* The last attribute claims more than there is. */
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PENDING_VERSION, 1);
	a->nla_len = 12;
}

static void hb_flags(struct nlmsghdr *nlh)
{
	struct nlattr *a;

	sync_ok(nlh);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	a->nla_type |= NLA_F_NET_BYTEORDER;
}

static void test_attr_errors(void **state)
{
	struct fx *f = *state;
	struct tdm_msg m;
	size_t len;

	handshake(&f->srv, &f->cli, f->buf);
	hb_fails(f, hb_unknown14, "unknown attribute 14 in HEARTBEAT");
	hb_fails(f, hb_foreign, "unknown attribute 3 in HEARTBEAT");
	hb_fails(f, hb_missing, "missing attribute PLAN_VERSION in HEARTBEAT");
	hb_fails(f, hb_missing_sync, "missing attribute SYNC in HEARTBEAT");
	hb_fails(f, hb_u64_version,
		 "bad length 8 of attribute PLAN_VERSION in HEARTBEAT");
	hb_fails(f, hb_u16_version,
		 "bad length 2 of attribute PLAN_VERSION in HEARTBEAT");
	hb_fails(f, hb_big_qdisc, "bad length 1025 of attribute QDISC");
	hb_fails(f, hb_dup, "duplicate attribute PLAN_VERSION in HEARTBEAT");
	hb_fails(f, hb_sync_unknown, "unknown attribute 9 in SYNC");
	hb_fails(f, hb_sync_no_state, "missing attribute STATE in SYNC");
	hb_fails(f, hb_sync_hold2, "attribute HOLD in SYNC is not 0 or 1");
	hb_fails(f, hb_sync_not_nested, "bad flags 0x0 on attribute SYNC");
	hb_fails(f, hb_reason_no_nul, "attribute REASON in SYNC");
	hb_fails(f, hb_reason_inner_nul, "attribute REASON in SYNC");
	hb_fails(f, hb_trailing, "truncated attribute in HEARTBEAT");
	hb_fails(f, hb_overrun, "truncated attribute in HEARTBEAT");
	hb_fails(f, hb_flags, "bad flags 0x4000 on attribute PLAN_VERSION");

	/* After all that, the connection's sequence is intact. */
	len = mk_heartbeat(&f->cli, f->buf);
	open_ok(&f->srv, f->buf, len, &m);
}

static void test_handshake_attr_errors(void **state)
{
	struct fx *f = *state;
	uint8_t nonce[TDM_NONCE_LEN + 1] = { 0 };
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	char name[TDM_NAME_MAX + 1];
	size_t len;

	init_pair(&f->srv, &f->cli, key1, key1);
	len = mk_hello(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);

	/* REGISTER without NAME. */
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	assert_int_equal(tdm_put_nonce(&f->cli, nlh, TDM_MAX_FRAME), 0);
	len = seal(&f->cli, nlh);
	open_fail(&f->srv, f->buf, len, "missing attribute NAME in REGISTER");

	/* A nonce of 15 bytes (sealing needs a real one: add it after). */
	f->cli.tx_seq = 0;
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	mnl_attr_put(nlh, TDM_A_NONCE, TDM_NONCE_LEN - 1, nonce);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "a");
	assert_int_equal(tdm_put_nonce(&f->cli, nlh, TDM_MAX_FRAME), 0);
	len = seal(&f->cli, nlh);
	open_fail(&f->srv, f->buf, len,
		  "bad length 15 of attribute NONCE in REGISTER");

	/* A name of 64 chars, and one with a space. */
	f->cli.tx_seq = 0;
	memset(name, 'n', TDM_NAME_MAX);
	name[TDM_NAME_MAX] = '\0';
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	assert_int_equal(tdm_put_nonce(&f->cli, nlh, TDM_MAX_FRAME), 0);
	mnl_attr_put_strz(nlh, TDM_A_NAME, name);
	len = seal(&f->cli, nlh);
	open_fail(&f->srv, f->buf, len, "attribute NAME in REGISTER");
	f->cli.tx_seq = 0;
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	assert_int_equal(tdm_put_nonce(&f->cli, nlh, TDM_MAX_FRAME), 0);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "a b");
	len = seal(&f->cli, nlh);
	open_fail(&f->srv, f->buf, len, "is not a name");

	/* Digest of 31 bytes. */
	f->cli.tx_seq = 0;
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	assert_int_equal(tdm_put_nonce(&f->cli, nlh, TDM_MAX_FRAME), 0);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "a");
	mnl_attr_put(nlh, TDM_A_DIGEST, 31, key1);
	len = seal(&f->cli, nlh);
	open_fail(&f->srv, f->buf, len,
		  "bad length 31 of attribute DIGEST in REGISTER");

	/* HELLO without PROTO, on a fresh client. */
	init_pair(&f->srv, &f->cli, key1, key1);
	nlh = begin(f->buf, TDM_MSG_HELLO);
	assert_int_equal(tdm_put_nonce(&f->srv, nlh, TDM_MAX_FRAME), 0);
	len = seal(&f->srv, nlh);
	open_fail(&f->cli, f->buf, len, "missing attribute PROTO in HELLO");
}

static void test_state_rules(void **state)
{
	struct fx *f = *state;
	struct tdm_session fake;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	size_t len;

	/* First frames: client must get HELLO, server REGISTER. */
	handshake(&f->srv, &f->cli, f->buf);
	fake = f->srv;
	len = mk_welcome(&fake, f->buf);
	init_pair(&f->srv, &f->cli, key1, key1);
	open_fail(&f->cli, f->buf, len, "expected HELLO first, got WELCOME");
	handshake(&f->srv, &f->cli, f->buf);
	fake = f->cli;
	len = mk_heartbeat(&fake, f->buf);
	init_pair(&f->srv, &f->cli, key1, key1);
	open_fail(&f->srv, f->buf, len,
		  "expected REGISTER first, got HEARTBEAT");

	/* Client: WELCOME must follow HELLO. */
	len = mk_hello(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);
	len = mk_register(&f->cli, f->buf);
	open_ok(&f->srv, f->buf, len, &m);
	fake = f->srv;
	nlh = begin(f->buf, TDM_MSG_PLAN);
	mnl_attr_put(nlh, TDM_A_PLAN, 0, NULL);
	len = seal(&fake, nlh);
	open_fail(&f->cli, f->buf, len, "expected WELCOME, got PLAN");
	len = mk_welcome(&f->srv, f->buf);
	open_ok(&f->cli, f->buf, len, &m);

	/* After the handshake: HELLO, REGISTER, WELCOME refused. */
	fake = f->srv;
	fake.tx_seq = 0;
	len = mk_hello(&fake, f->buf);
	open_fail(&f->cli, f->buf, len, "HELLO after the handshake");
	len = mk_welcome(&f->srv, f->buf);
	open_fail(&f->cli, f->buf, len, "WELCOME after the handshake");
	fake = f->cli;
	fake.tx_seq = 0;
	len = mk_register(&fake, f->buf);
	open_fail(&f->srv, f->buf, len, "REGISTER after the handshake");
}

static void test_seal_rules(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	size_t len;

	init_pair(&f->srv, &f->cli, key1, key1);

	/* A client cannot seal before HELLO (no snonce yet). */
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	assert_int_equal(tdm_put_nonce(&f->cli, nlh, TDM_MAX_FRAME), 0);
	errno = 0;
	assert_int_equal(tdm_frame_seal(&f->cli, nlh, TDM_MAX_FRAME), -1);
	assert_int_equal(errno, EINVAL);

	/* A server sends HELLO first, and nothing else before REGISTER. */
	nlh = begin(f->buf, TDM_MSG_WELCOME);
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, TDM_MAX_FRAME), -1);
	nlh = begin(f->buf, TDM_MSG_REGISTER);
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, TDM_MAX_FRAME), -1);
	/* HELLO must carry the session's own nonce. */
	nlh = begin(f->buf, TDM_MSG_HELLO);
	mnl_attr_put(nlh, TDM_A_NONCE, TDM_NONCE_LEN, key2);
	mnl_attr_put_u32(nlh, TDM_A_PROTO, 1);
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, TDM_MAX_FRAME), -1);
	assert_int_equal(f->srv.tx_seq, 0);

	/* No room for the MAC. */
	nlh = begin(f->buf, TDM_MSG_HELLO);
	assert_int_equal(tdm_put_nonce(&f->srv, nlh, TDM_MAX_FRAME), 0);
	errno = 0;
	len = nlh->nlmsg_len;
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, len + 31), -1);
	assert_int_equal(errno, EMSGSIZE);
	assert_int_equal(nlh->nlmsg_len, len);
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, len + 32), len + 32);
	/* Only once. */
	nlh = begin(f->buf, TDM_MSG_HELLO);
	assert_int_equal(tdm_put_nonce(&f->srv, nlh, TDM_MAX_FRAME), 0);
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, TDM_MAX_FRAME), -1);

	/* Types of the other direction and unknown types. */
	handshake(&f->srv, &f->cli, f->buf);
	nlh = begin(f->buf, TDM_MSG_PLAN);
	assert_int_equal(tdm_frame_seal(&f->cli, nlh, TDM_MAX_FRAME), -1);
	nlh = begin(f->buf, TDM_MSG_ACK);
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, TDM_MAX_FRAME), -1);
	nlh = begin(f->buf, 3);
	assert_int_equal(tdm_frame_seal(&f->srv, nlh, TDM_MAX_FRAME), -1);

	/* Buffers too small to begin a frame. */
	assert_null(tdm_frame_begin(f->buf, TDM_MIN_FRAME - 1, TDM_MSG_ACK));
	assert_null(tdm_frame_begin(NULL, TDM_MAX_FRAME, TDM_MSG_ACK));

	/* Keys outside the allowed lengths. */
	assert_int_equal(tdm_session_init(&f->srv, true, key1, TDM_KEY_MIN - 1),
			 -1);
	assert_int_equal(tdm_session_init(&f->srv, true, key1, 0), -1);
	tdm_session_clear(&f->srv);
	assert_int_equal(f->srv.keylen, 0);
}

/* ---- key files ---- */

static char keydir[64];

static int key_setup(void **state)
{
	(void)state;
	snprintf(keydir, sizeof(keydir), "/tmp/test_proto.XXXXXX");
	return mkdtemp(keydir) ? 0 : -1;
}

static int key_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", keydir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *key_file(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", keydir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static void key_fails(const char *path, const char *expect)
{
	uint8_t key[TDM_KEY_MAX];
	size_t len = 99;
	char err[256] = "";

	assert_int_equal(tdm_key_load(path, key, &len, err, sizeof(err)), -1);
	assert_int_equal(len, 99);
	if (!strstr(err, expect))
		fail_msg("error '%s' does not contain '%s'", err, expect);
}

static void test_key_load(void **state)
{
	uint8_t key[TDM_KEY_MAX];
	char err[256] = "", text[2 * TDM_KEY_MAX + 8], path[128];
	const char *p;
	size_t len = 0;

	(void)state;
	p = key_file("good", "00112233 44556677\n8899AABBccddeeff\r\n"
			     "\t0123456789abcdeffedcba9876543210\n", 0600);
	if (tdm_key_load(p, key, &len, err, sizeof(err)))
		fail_msg("tdm_key_load: %s", err);
	assert_int_equal(len, 32);
	assert_memory_equal(key, key1, 32);

	/* Exactly the minimum and the maximum. */
	memset(text, 'a', 2 * TDM_KEY_MIN);
	text[2 * TDM_KEY_MIN] = '\0';
	p = key_file("min", text, 0400);
	assert_int_equal(tdm_key_load(p, key, &len, err, sizeof(err)), 0);
	assert_int_equal(len, TDM_KEY_MIN);
	memset(text, 'b', 2 * TDM_KEY_MAX);
	strcpy(text + 2 * TDM_KEY_MAX, "\n");
	p = key_file("max", text, 0600);
	assert_int_equal(tdm_key_load(p, key, &len, err, sizeof(err)), 0);
	assert_int_equal(len, TDM_KEY_MAX);
	assert_int_equal(key[TDM_KEY_MAX - 1], 0xbb);

	strcpy(text + 2 * TDM_KEY_MAX, "bb\n");
	key_fails(key_file("long", text, 0600), "key longer than 128 bytes");
	key_fails(key_file("short", "00112233445566778899aabbccddee\n", 0600),
		  "key too short (15 bytes, need at least 16)");
	key_fails(key_file("empty", "", 0600), "key too short (0 bytes");
	key_fails(key_file("odd", "00112233445566778899aabbccddeeff0\n",
			   0600), "odd number of hex digits (33)");
	key_fails(key_file("nonhex", "00112233445566778899aabbccddeefg\n",
			   0600), "not a hex digit at offset 31");
	key_fails(key_file("prefix", "0x00112233445566778899aabbccddeeff\n",
			   0600), "not a hex digit at offset 1");
	p = key_file("group", "00112233445566778899aabbccddeeff\n", 0644);
	key_fails(p, "is readable by group or others; chmod 600 it");
	key_fails(key_file("gw", "00112233445566778899aabbccddeeff\n", 0620),
		  "chmod 600");
	key_fails(key_file("zero", "00000000000000000000000000000000"
			   "00000000000000000000000000000000\n", 0600),
		  "holds an all-zero key");
	snprintf(path, sizeof(path), "%s/missing", keydir);
	key_fails(path, "No such file or directory");
	key_fails(keydir, "not a regular file");
	snprintf(path, sizeof(path), "%s/fifo", keydir);
	assert_int_equal(mkfifo(path, 0600), 0);
	key_fails(path, "not a regular file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
		T(test_handshake),
		T(test_register_optional),
		T(test_msg_ack),
		T(test_msg_two_phase),
		T(test_msg_heartbeat),
		T(test_msg_error),
		T(test_msg_names),
		T(test_plan_roundtrip),
		T(test_plan_put_limits),
		T(test_plan_get_rejects),
		T(test_plan_receivers),
		T(test_need_bounds),
		T(test_truncated),
		T(test_magic_version),
		T(test_wrong_key),
		T(test_bit_flips),
		T(test_replay),
		T(test_reorder),
		T(test_other_connection),
		T(test_other_connection_register),
		T(test_reflected),
		T(test_attr_errors),
		T(test_handshake_attr_errors),
		T(test_state_rules),
		T(test_seal_rules),
		cmocka_unit_test_setup_teardown(test_key_load, key_setup,
						key_teardown),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
