/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tdmd control protocol (coordinator <-> member, over TCP).
 *
 * Frame (all integers little-endian; the codec refuses to build on a
 * big-endian host rather than silently misreading):
 *
 *   struct nlmsghdr  nlmsg_len   = total frame length, MAC included
 *                    nlmsg_type  = TDM_MSG_*
 *                    nlmsg_flags = 0
 *                    nlmsg_seq   = per-direction sequence, 0, 1, 2, ...
 *                    nlmsg_pid   = 0
 *   struct tdm_fhdr  magic "TDMW", version TDM_PROTO_VERSION
 *   attributes       struct nlattr TLVs (libmnl), 4-byte aligned
 *   MAC              32 bytes: HMAC-SHA256(key, ctx || frame without MAC)
 *
 * ctx binds a frame to its connection and direction:
 *   ctx = "tdmw-c2s" or "tdmw-s2c" || server nonce (16) || client nonce (16)
 * (the HELLO frame, which carries the server nonce, uses an all-zero
 * client nonce).  Nonces come from the OS CSPRNG (getrandom).
 *
 * Handshake: server -> HELLO{nonce}; client -> REGISTER{nonce, name,
 * plan version/base/digest it runs}; server -> WELCOME.  Afterwards frames
 * must arrive with nlmsg_seq exactly one more than the last one: a replayed,
 * dropped or reordered frame is refused, and so is a frame from another
 * connection (other nonces) or the other direction (other label).
 *
 * Receivers reject, with a reason, and close the connection: a length
 * below the minimum or above TDM_MAX_FRAME (checked from the header before
 * reading the rest), a wrong magic or version, a bad MAC, a wrong sequence,
 * a message type not allowed in the current state, malformed or unknown
 * attributes, a missing required attribute.
 */
#ifndef TDM_PROTO_H
#define TDM_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

#include "tdm_plan.h"

/* 2: two-phase plan changes (COMMIT, ABORT).  A version-1 member would
 * install a plan for its base time alone, so the versions do not mix.
 * This is the frame header's version: the framing of every later level.
 */
#define TDM_PROTO_VERSION	2
/*
 * Levels above the framing, negotiated in the handshake: HELLO's PROTO
 * is the highest level the coordinator speaks; a member answers with its
 * own highest in REGISTER's PROTO, but only to a coordinator whose HELLO
 * says TDM_PROTO_RECEIVERS or more (a level-2 coordinator refuses
 * attributes it does not know).  A member that sends none speaks 2.
 *
 * 3: plans with receivers (TDM_P_RECEIVER, TDM_PS_DWINDOW: a window with
 *    its destination).  A plan without receivers is encoded as in 2, and
 *    a plan with receivers goes only to members that spoke 3.
 */
#define TDM_PROTO_RECEIVERS	3
#define TDM_PROTO_LEVEL		3	/* the highest level this build speaks */
#define TDM_MAGIC		0x574d4454u	/* "TDMW" little-endian */
#define TDM_DEFAULT_PORT	7453
#define TDM_MAX_FRAME		(256 * 1024)
#define TDM_MAC_LEN		32
#define TDM_NONCE_LEN		16
#define TDM_KEY_MIN		16	/* bytes */
#define TDM_KEY_MAX		128
#define TDM_MESSAGE_MAX		512	/* MESSAGE, S_REASON, NUL included */
#define TDM_QDISC_MAX		1024	/* TDM_A_QDISC payload */

struct tdm_fhdr {
	uint32_t magic;
	uint8_t version;
	uint8_t reserved[3];	/* zero */
};

#define TDM_HDR_LEN	(sizeof(struct nlmsghdr) + sizeof(struct tdm_fhdr))
#define TDM_MIN_FRAME	(TDM_HDR_LEN + TDM_MAC_LEN)

enum tdm_msg_type {
	TDM_MSG_HELLO = 16,	/* s->c: NONCE, PROTO */
	TDM_MSG_REGISTER,	/* c->s: NONCE, NAME, [PLAN_VERSION, BASE_TIME, DIGEST],
				 * [PREPARED], [PROTO]
				 */
	TDM_MSG_WELCOME,	/* s->c: [PLAN_VERSION] (the coordinator's) */
	TDM_MSG_PLAN,		/* s->c: PLAN, [COMMIT_BY] */
	TDM_MSG_ACK,		/* c->s: PLAN_VERSION, STATUS, [MESSAGE], [PHASE] */
	TDM_MSG_HEARTBEAT,	/* c->s: SYNC, [QDISC], PLAN_VERSION, [PENDING_VERSION],
				 * [PREPARED]
				 */
	TDM_MSG_ERROR,		/* either: STATUS, MESSAGE; then close */
	TDM_MSG_COMMIT,		/* s->c: PLAN_VERSION */
	TDM_MSG_ABORT,		/* s->c: PLAN_VERSION, [MESSAGE] */
	__TDM_MSG_MAX,
};

enum tdm_attr {
	TDM_A_UNSPEC,
	TDM_A_NONCE,		/* binary, TDM_NONCE_LEN */
	TDM_A_PROTO,		/* u32, highest protocol version spoken */
	TDM_A_NAME,		/* string, member name */
	TDM_A_PLAN,		/* nest, TDM_P_* */
	TDM_A_PLAN_VERSION,	/* u32 */
	TDM_A_PENDING_VERSION,	/* u32 */
	TDM_A_BASE_TIME,	/* u64 (s64 value) */
	TDM_A_DIGEST,		/* binary, 32 */
	TDM_A_STATUS,		/* u32: 0 or a positive errno */
	TDM_A_MESSAGE,		/* string, at most 512 bytes */
	TDM_A_SYNC,		/* nest, TDM_S_* */
	TDM_A_QDISC,		/* binary, struct tc_tdmwin_xstats (any length) */
	TDM_A_COMMIT_BY,	/* u64 (s64 ns, the plan's clock) */
	TDM_A_PHASE,		/* u32, enum tdm_phase */
	TDM_A_PREPARED,		/* u32: version of a plan awaiting COMMIT */
	__TDM_A_MAX,
};
#define TDM_A_MAX (__TDM_A_MAX - 1)

/*
 * Two-phase plan changes.  A PLAN with COMMIT_BY is a prepare: the member
 * installs it as the pending plan, unconfirmed (from its base time the
 * gate holds until the outcome is known), and acks (PHASE_PREPARE).  The
 * coordinator then sends COMMIT (the plan takes over at its base) or
 * ABORT (it is removed), before COMMIT_BY when it can; the member acks
 * each with its phase.  A PLAN without COMMIT_BY is installed at once, as
 * a plan already committed (a member that joins late).  An ACK without
 * PHASE answers a PLAN.
 */
enum tdm_phase {
	TDM_PHASE_PREPARE,	/* answers a PLAN */
	TDM_PHASE_COMMIT,
	TDM_PHASE_ABORT,
	__TDM_PHASE_MAX,
};

enum tdm_plan_attr {
	TDM_P_UNSPEC,
	TDM_P_VERSION,		/* u32 */
	TDM_P_CLOCKID,		/* u32 (s32 value) */
	TDM_P_CYCLE,		/* u64 */
	TDM_P_BASE_TIME,	/* u64 (s64 value) */
	TDM_P_GUARD,		/* u32 */
	TDM_P_MIN_DEAD,		/* u64 */
	TDM_P_LINK_SPEED,	/* u32 */
	TDM_P_BYPASS_PRIOS,	/* u32 */
	TDM_P_BYPASS_PTP,	/* u8 */
	TDM_P_SENDER,		/* nest, TDM_PS_*; repeated */
	TDM_P_RECEIVER,		/* nest, TDM_PR_*; repeated, in the plan's
				 * order (level 3; none: one destination)
				 */
	__TDM_P_MAX,
};
#define TDM_P_MAX (__TDM_P_MAX - 1)

enum tdm_plan_sender_attr {
	TDM_PS_UNSPEC,
	TDM_PS_NAME,		/* string */
	TDM_PS_WINDOW,		/* binary: u64 offset, u64 length; repeated
				 * (a plan without receivers)
				 */
	TDM_PS_DWINDOW,		/* binary: u64 offset, u64 length, u32 the
				 * receiver's index; repeated (a plan with
				 * receivers, level 3)
				 */
	__TDM_PS_MAX,
};
#define TDM_PS_MAX (__TDM_PS_MAX - 1)

enum tdm_plan_receiver_attr {
	TDM_PR_UNSPEC,
	TDM_PR_NAME,		/* string, a name as a sender's */
	TDM_PR_ADDRESS,		/* string, numeric IPv4 or IPv6 address */
	__TDM_PR_MAX,
};
#define TDM_PR_MAX (__TDM_PR_MAX - 1)

enum tdm_sync_attr {
	TDM_S_UNSPEC,
	TDM_S_STATE,		/* u32, enum tdm_sync_state */
	TDM_S_OFFSET,		/* u64 (s64 ns, master offset) */
	TDM_S_PORT_STATE,	/* u32, linuxptp port state */
	TDM_S_HOLD,		/* u8, the member holds its gate */
	TDM_S_REASON,		/* string */
	__TDM_S_MAX,
};
#define TDM_S_MAX (__TDM_S_MAX - 1)

/* Where the receive side of a session is in the handshake. */
enum tdm_rx_state {
	TDM_RX_HANDSHAKE,	/* client: wants HELLO; server: wants REGISTER */
	TDM_RX_WELCOME,		/* client: wants WELCOME (or ERROR) */
	TDM_RX_OPEN,		/* handshake done */
};

/* Connection state for MACs and sequence numbers. */
struct tdm_session {
	uint8_t key[TDM_KEY_MAX];
	size_t keylen;
	bool server;			/* which side we are */
	uint8_t snonce[TDM_NONCE_LEN];	/* server's nonce */
	uint8_t cnonce[TDM_NONCE_LEN];	/* client's nonce (zero until known) */
	uint32_t tx_seq;		/* next to send */
	uint32_t rx_seq;		/* next expected */
	uint8_t rx_state;		/* enum tdm_rx_state */
};

/* A received frame after tdm_frame_open(): attributes by type. */
struct tdm_msg {
	uint16_t type;
	uint32_t seq;
	const struct nlattr *tb[TDM_A_MAX + 1];
};

/*
 * Read a key file: hex (at least 2 * TDM_KEY_MIN digits, whitespace and a
 * trailing newline ignored).  Refuses files readable by group or others.
 */
int tdm_key_load(const char *path, uint8_t *key, size_t *keylen,
		 char *err, size_t errlen);

/* Start a session: server picks snonce, client zeroes cnonce (set when
 * it builds REGISTER).  0, or -1 if the CSPRNG fails.
 */
int tdm_session_init(struct tdm_session *s, bool server,
		     const uint8_t *key, size_t keylen);

/* Wipe the key from a session (before freeing or reusing it). */
void tdm_session_clear(struct tdm_session *s);

/*
 * Add our nonce as TDM_A_NONCE: the server's snonce (HELLO), or for a
 * client a fresh one from getrandom, which becomes cnonce when the
 * REGISTER frame carrying it is sealed.  0, or -1 (no room, CSPRNG).
 */
int tdm_put_nonce(struct tdm_session *s, struct nlmsghdr *nlh, size_t size);

/* Begin a frame of type in buf (size >= TDM_MAX_FRAME is always enough);
 * add attributes with mnl_attr_put*() on the returned header.
 */
struct nlmsghdr *tdm_frame_begin(void *buf, size_t size, uint16_t type);

/* Set the sequence number, append the MAC; returns the frame length to
 * send, or -1 if the frame would exceed the buffer or TDM_MAX_FRAME
 * (errno EMSGSIZE), or the type is not ours to send now (EINVAL: a
 * server->client type from a client or vice versa, HELLO/REGISTER other
 * than first, anything but HELLO/ERROR from a server before REGISTER,
 * anything from a client before HELLO, REGISTER without TDM_A_NONCE).
 */
ssize_t tdm_frame_seal(struct tdm_session *s, struct nlmsghdr *nlh,
		       size_t size);

/*
 * How many bytes the frame starting at buf needs in total, once at least
 * sizeof(struct nlmsghdr) bytes are there: 0 if more header is needed,
 * the total length, or -1 with err set for a length out of bounds.
 */
ssize_t tdm_frame_need(const void *buf, size_t have, char *err,
		       size_t errlen);

/*
 * Check a complete frame (len from tdm_frame_need; buf 4-byte aligned) and parse its
 * attributes for its type: magic, version, MAC, sequence, attribute
 * types, lengths, required and unknown attributes.  On HELLO (client side)
 * it records snonce before checking the MAC; on REGISTER (server side) it
 * records cnonce.  Returns 0 or -1 with err set ("bad MAC", "sequence 7,
 * expected 5 (replayed or reordered frame)", ...).
 */
int tdm_frame_open(struct tdm_session *s, const void *buf, size_t len,
		   struct tdm_msg *m, char *err, size_t errlen);

/*
 * A TDM_A_SYNC nest by attribute type (S_STATE required; the others
 * optional).  tdm_frame_open() has already checked it for HEARTBEAT.
 */
int tdm_sync_get(const struct nlattr *nest,
		 const struct nlattr *tb[TDM_S_MAX + 1],
		 char *err, size_t errlen);

/* Plans in frames: a nest of attribute type (TDM_A_PLAN); 0, or -1 when
 * it does not fit size or the 64 KiB limit of one attribute (EMSGSIZE).
 * A plan with receivers needs level TDM_PROTO_RECEIVERS of the peer.
 */
int tdm_plan_put(struct nlmsghdr *nlh, size_t size, uint16_t type,
		 const struct tdm_plan *p);
/* Decode and validate (tdm_plan_validate) a TDM_A_PLAN nest into p
 * (overwritten, not freed first; left freed on error).
 */
int tdm_plan_get(const struct nlattr *nest, struct tdm_plan *p,
		 char *err, size_t errlen);

const char *tdm_msg_name(uint16_t type);

#endif
