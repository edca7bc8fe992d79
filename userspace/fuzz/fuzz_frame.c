// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the control-protocol parser.
 *
 * The first byte picks a mode:
 *  - even: the rest is a raw byte stream as a server, then a client, would
 *    receive it (header checks, length bounds, MAC, state): must be
 *    refused or parsed without a crash;
 *  - odd:  the rest is the attribute area of a frame of the type chosen
 *    by the second byte, sealed with the right key by a peer session
 *    that finished its handshake, so the attribute parser (and for PLAN
 *    the plan decoder and validator, for HEARTBEAT the SYNC nest) sees
 *    inputs that pass the MAC.  No production code is weakened for it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_proto.h"
#include "tdm_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t key[32] = "tdmwin fuzzing key, not secret!";
static struct tdm_session srv0, cli0;	/* after the handshake */
static uint8_t *buf;

static void die(void)
{
	abort();
}

static void handshake(void)
{
	struct tdm_msg m;
	struct nlmsghdr *nlh;
	char err[256];
	ssize_t n;

	buf = malloc(TDM_MAX_FRAME);
	if (!buf || tdm_session_init(&srv0, true, key, sizeof(key)) ||
	    tdm_session_init(&cli0, false, key, sizeof(key)))
		die();
	nlh = tdm_frame_begin(buf, TDM_MAX_FRAME, TDM_MSG_HELLO);
	if (tdm_put_nonce(&srv0, nlh, TDM_MAX_FRAME))
		die();
	mnl_attr_put_u32(nlh, TDM_A_PROTO, TDM_PROTO_VERSION);
	n = tdm_frame_seal(&srv0, nlh, TDM_MAX_FRAME);
	if (n < 0 || tdm_frame_open(&cli0, buf, n, &m, err, sizeof(err)))
		die();
	nlh = tdm_frame_begin(buf, TDM_MAX_FRAME, TDM_MSG_REGISTER);
	if (tdm_put_nonce(&cli0, nlh, TDM_MAX_FRAME))
		die();
	mnl_attr_put_strz(nlh, TDM_A_NAME, "fuzz");
	n = tdm_frame_seal(&cli0, nlh, TDM_MAX_FRAME);
	if (n < 0 || tdm_frame_open(&srv0, buf, n, &m, err, sizeof(err)))
		die();
	nlh = tdm_frame_begin(buf, TDM_MAX_FRAME, TDM_MSG_WELCOME);
	n = tdm_frame_seal(&srv0, nlh, TDM_MAX_FRAME);
	if (n < 0 || tdm_frame_open(&cli0, buf, n, &m, err, sizeof(err)))
		die();
}

/* What a receiver does with an accepted message. */
static void use(const struct tdm_msg *m)
{
	const struct nlattr *tb[TDM_S_MAX + 1];
	struct tdm_plan p;
	char err[512];

	if (m->type == TDM_MSG_PLAN && m->tb[TDM_A_PLAN] &&
	    !tdm_plan_get(m->tb[TDM_A_PLAN], &p, err, sizeof(err)))
		tdm_plan_free(&p);
	if (m->type == TDM_MSG_HEARTBEAT && m->tb[TDM_A_SYNC])
		tdm_sync_get(m->tb[TDM_A_SYNC], tb, err, sizeof(err));
}

/* Feed a stream to a session frame by frame, as tdmd's reader does. */
static void stream(struct tdm_session *s, const uint8_t *d, size_t n)
{
	char err[512];

	while (n) {
		struct tdm_msg m;
		ssize_t need = tdm_frame_need(d, n, err, sizeof(err));

		if (need <= 0 || (size_t)need > n)
			return;
		memcpy(buf, d, need);	/* aligned, as tdmd's buffer is */
		if (tdm_frame_open(s, buf, need, &m, err, sizeof(err)))
			return;
		use(&m);
		d += need;
		n -= need;
	}
}

static void sealed(uint8_t sel, const uint8_t *d, size_t n)
{
	static const uint16_t c2s[] = {
		TDM_MSG_ACK, TDM_MSG_HEARTBEAT, TDM_MSG_ERROR
	};
	static const uint16_t s2c[] = {
		TDM_MSG_PLAN, TDM_MSG_WELCOME, TDM_MSG_ERROR, TDM_MSG_COMMIT,
		TDM_MSG_ABORT
	};
	bool to_server = sel & 1;
	uint16_t type = to_server ? c2s[(sel >> 1) % TDM_ARRAY_SIZE(c2s)] :
				    s2c[(sel >> 1) % TDM_ARRAY_SIZE(s2c)];
	struct tdm_session tx = to_server ? cli0 : srv0;
	struct tdm_session rx = to_server ? srv0 : cli0;
	struct nlmsghdr *nlh;
	struct tdm_msg m;
	char err[512];
	ssize_t len;

	/* WELCOME is only taken once; replay the state before it. */
	if (type == TDM_MSG_WELCOME)
		rx.rx_state = TDM_RX_WELCOME;
	nlh = tdm_frame_begin(buf, TDM_MAX_FRAME, type);
	if (n > TDM_MAX_FRAME - TDM_MIN_FRAME - 4)
		return;
	memcpy((uint8_t *)nlh + nlh->nlmsg_len, d, n);
	memset((uint8_t *)nlh + nlh->nlmsg_len + n, 0, 3);
	nlh->nlmsg_len += (n + 3) & ~3u;
	len = tdm_frame_seal(&tx, nlh, TDM_MAX_FRAME);
	if (len < 0)
		return;
	if (!tdm_frame_open(&rx, buf, len, &m, err, sizeof(err)))
		use(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tdm_session s;

	if (!buf)
		handshake();
	if (size < 2)
		return 0;
	if (data[0] & 1) {
		sealed(data[1], data + 2, size - 2);
		return 0;
	}
	/* Raw: a fresh server, an open server, a fresh client. */
	if (tdm_session_init(&s, true, key, sizeof(key)))
		die();
	stream(&s, data + 1, size - 1);
	s = srv0;
	stream(&s, data + 1, size - 1);
	if (tdm_session_init(&s, false, key, sizeof(key)))
		die();
	stream(&s, data + 1, size - 1);
	return 0;
}
