// SPDX-License-Identifier: GPL-2.0
/*
 * The tdmd control protocol codec: framing and TLVs with libmnl, frame
 * authentication with HMAC-SHA256 from OpenSSL's libcrypto.  See
 * tdm_proto.h for the wire format and the rules enforced here.
 *
 * Everything a peer sends is untrusted until its MAC checks out, and the
 * parsers below are written to be safe on any input anyway: lengths are
 * checked against the buffer before anything is read, every attribute is
 * matched against a policy (type, exact or maximum length, flags) and
 * anything left over after the last attribute is an error rather than
 * silently ignored.  Error strings never echo peer-supplied strings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "tdm_proto.h"
#include "tdm_util.h"

/*
 * The wire format is little-endian and this codec reads and writes host
 * integers (libmnl does no byte swapping), so refuse to build where that
 * would silently produce another format.
 */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tdm_proto: the wire format is little-endian; big-endian hosts are not supported"
#endif

#define LABEL_LEN	8
static const char label_c2s[LABEL_LEN] = "tdmw-c2s";
static const char label_s2c[LABEL_LEN] = "tdmw-s2c";
static const uint8_t zero_nonce[TDM_NONCE_LEN];

/* Largest errno a STATUS attribute may carry (Linux's MAX_ERRNO). */
#define TDM_STATUS_MAX	4095

/* ---- attribute policies ---- */

enum akind {
	K_NONE,		/* not an attribute of this space */
	K_U8,		/* 0 or 1 */
	K_U32,
	K_U64,
	K_STR,		/* NUL-terminated, no inner NUL, at most max bytes */
	K_NAME,		/* K_STR, non-empty, [A-Za-z0-9_.-] */
	K_BIN,		/* exactly max bytes */
	K_BINMAX,	/* at most max bytes */
	K_NEST,
};

struct apol {
	const char *name;
	uint8_t kind;
	uint16_t max;
};

static const struct apol a_pol[TDM_A_MAX + 1] = {
	[TDM_A_NONCE]		= { "NONCE", K_BIN, TDM_NONCE_LEN },
	[TDM_A_PROTO]		= { "PROTO", K_U32, 0 },
	[TDM_A_NAME]		= { "NAME", K_NAME, TDM_NAME_MAX },
	[TDM_A_PLAN]		= { "PLAN", K_NEST, 0 },
	[TDM_A_PLAN_VERSION]	= { "PLAN_VERSION", K_U32, 0 },
	[TDM_A_PENDING_VERSION]	= { "PENDING_VERSION", K_U32, 0 },
	[TDM_A_BASE_TIME]	= { "BASE_TIME", K_U64, 0 },
	[TDM_A_DIGEST]		= { "DIGEST", K_BIN, 32 },
	[TDM_A_STATUS]		= { "STATUS", K_U32, 0 },
	[TDM_A_MESSAGE]		= { "MESSAGE", K_STR, TDM_MESSAGE_MAX },
	[TDM_A_SYNC]		= { "SYNC", K_NEST, 0 },
	[TDM_A_QDISC]		= { "QDISC", K_BINMAX, TDM_QDISC_MAX },
	[TDM_A_COMMIT_BY]	= { "COMMIT_BY", K_U64, 0 },
	[TDM_A_PHASE]		= { "PHASE", K_U32, 0 },
	[TDM_A_PREPARED]	= { "PREPARED", K_U32, 0 },
};

static const struct apol p_pol[TDM_P_MAX + 1] = {
	[TDM_P_VERSION]		= { "VERSION", K_U32, 0 },
	[TDM_P_CLOCKID]		= { "CLOCKID", K_U32, 0 },
	[TDM_P_CYCLE]		= { "CYCLE", K_U64, 0 },
	[TDM_P_BASE_TIME]	= { "BASE_TIME", K_U64, 0 },
	[TDM_P_GUARD]		= { "GUARD", K_U32, 0 },
	[TDM_P_MIN_DEAD]	= { "MIN_DEAD", K_U64, 0 },
	[TDM_P_LINK_SPEED]	= { "LINK_SPEED", K_U32, 0 },
	[TDM_P_BYPASS_PRIOS]	= { "BYPASS_PRIOS", K_U32, 0 },
	[TDM_P_BYPASS_PTP]	= { "BYPASS_PTP", K_U8, 0 },
	[TDM_P_SENDER]		= { "SENDER", K_NEST, 0 },
	[TDM_P_RECEIVER]	= { "RECEIVER", K_NEST, 0 },
};

#define WINDOW_LEN	16	/* u64 offset, u64 length */
#define DWINDOW_LEN	20	/* u64 offset, u64 length, u32 receiver */

static const struct apol ps_pol[TDM_PS_MAX + 1] = {
	[TDM_PS_NAME]		= { "NAME", K_NAME, TDM_NAME_MAX },
	[TDM_PS_WINDOW]		= { "WINDOW", K_BIN, WINDOW_LEN },
	[TDM_PS_DWINDOW]	= { "DWINDOW", K_BIN, DWINDOW_LEN },
};

static const struct apol pr_pol[TDM_PR_MAX + 1] = {
	[TDM_PR_NAME]		= { "NAME", K_NAME, TDM_NAME_MAX },
	[TDM_PR_ADDRESS]	= { "ADDRESS", K_STR, TDM_ADDR_MAX },
};

static const struct apol s_pol[TDM_S_MAX + 1] = {
	[TDM_S_STATE]		= { "STATE", K_U32, 0 },
	[TDM_S_OFFSET]		= { "OFFSET", K_U64, 0 },
	[TDM_S_PORT_STATE]	= { "PORT_STATE", K_U32, 0 },
	[TDM_S_HOLD]		= { "HOLD", K_U8, 0 },
	[TDM_S_REASON]		= { "REASON", K_STR, TDM_MESSAGE_MAX },
};

#define BIT(t)	(1u << (t))

/* ---- message rules ---- */

enum { DIR_C2S = 1, DIR_S2C = 2 };

struct mrule {
	const char *name;
	uint8_t dir;
	uint32_t required;	/* BIT(TDM_A_*) */
	uint32_t optional;
};

#define A(x)	BIT(TDM_A_##x)

static const struct mrule m_rules[__TDM_MSG_MAX - TDM_MSG_HELLO] = {
	[TDM_MSG_HELLO - TDM_MSG_HELLO] = {
		"HELLO", DIR_S2C, A(NONCE) | A(PROTO), 0 },
	[TDM_MSG_REGISTER - TDM_MSG_HELLO] = {
		"REGISTER", DIR_C2S, A(NONCE) | A(NAME),
		A(PLAN_VERSION) | A(BASE_TIME) | A(DIGEST) | A(PREPARED) |
		A(PROTO) },
	[TDM_MSG_WELCOME - TDM_MSG_HELLO] = {
		"WELCOME", DIR_S2C, 0, A(PLAN_VERSION) },
	[TDM_MSG_PLAN - TDM_MSG_HELLO] = {
		"PLAN", DIR_S2C, A(PLAN), A(COMMIT_BY) },
	[TDM_MSG_ACK - TDM_MSG_HELLO] = {
		"ACK", DIR_C2S, A(PLAN_VERSION) | A(STATUS),
		A(MESSAGE) | A(PHASE) },
	[TDM_MSG_HEARTBEAT - TDM_MSG_HELLO] = {
		"HEARTBEAT", DIR_C2S, A(SYNC) | A(PLAN_VERSION),
		A(QDISC) | A(PENDING_VERSION) | A(PREPARED) },
	[TDM_MSG_ERROR - TDM_MSG_HELLO] = {
		"ERROR", DIR_C2S | DIR_S2C, A(STATUS) | A(MESSAGE), 0 },
	[TDM_MSG_COMMIT - TDM_MSG_HELLO] = {
		"COMMIT", DIR_S2C, A(PLAN_VERSION), 0 },
	[TDM_MSG_ABORT - TDM_MSG_HELLO] = {
		"ABORT", DIR_S2C, A(PLAN_VERSION), A(MESSAGE) },
};

static const struct mrule *msg_rule(uint16_t type)
{
	if (type < TDM_MSG_HELLO || type >= __TDM_MSG_MAX)
		return NULL;
	return &m_rules[type - TDM_MSG_HELLO];
}

const char *tdm_msg_name(uint16_t type)
{
	const struct mrule *r = msg_rule(type);

	return r ? r->name : "UNKNOWN";
}

/* ---- strict attribute parsing ---- */

struct aparse {
	const struct apol *pol;
	unsigned int max;		/* highest type in pol */
	uint32_t allowed;		/* BIT(type) */
	uint32_t repeat;		/* types that may occur more than once */
	const char *where;		/* "HEARTBEAT", "PLAN", "SENDER", ... */
	const struct nlattr **tb;	/* first of each type; may be NULL */
	uint32_t seen;
	unsigned int count[16];		/* occurrences per type */
	const char *start;		/* payload being parsed */
	size_t end;			/* offset after the last attribute */
	char *err;
	size_t errlen;
};

static bool name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' ||
		      *s == '-'))
			return false;
	return true;
}

/* Check one attribute's flags, length and (for u8/string) content. */
static int attr_check(const struct nlattr *a, const struct apol *pol,
		      const char *where, char *err, size_t errlen)
{
	uint16_t flags = a->nla_type & ~NLA_TYPE_MASK;
	uint16_t len = mnl_attr_get_payload_len(a);
	const char *data = mnl_attr_get_payload(a);
	bool nest = pol->kind == K_NEST;

	/* Nests carry NLA_F_NESTED (mnl_attr_nest_start sets it), nothing
	 * else carries any flag: one encoding for each value, so a flipped
	 * flag bit cannot mean the same thing.
	 */
	if (flags != (nest ? NLA_F_NESTED : 0))
		return tdm_set_err(err, errlen, "bad flags 0x%x on attribute %s in %s",
				   flags, pol->name, where);

	switch (pol->kind) {
	case K_U8:
		if (mnl_attr_validate(a, MNL_TYPE_U8) < 0)
			goto badlen;
		if (*(const uint8_t *)data > 1)
			return tdm_set_err(err, errlen,
					   "attribute %s in %s is not 0 or 1",
					   pol->name, where);
		return 0;
	case K_U32:
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			goto badlen;
		return 0;
	case K_U64:
		if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
			goto badlen;
		return 0;
	case K_STR:
	case K_NAME:
		/* (mnl_attr_validate2 wants an exact length: no use here) */
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0 ||
		    len > pol->max || memchr(data, '\0', len) != data + len - 1)
			return tdm_set_err(err, errlen,
					   "attribute %s in %s is not a string of at most %u chars",
					   pol->name, where, pol->max - 1);
		if (pol->kind == K_NAME && (len < 2 || !name_ok(data)))
			return tdm_set_err(err, errlen,
					   "attribute %s in %s is not a name ([A-Za-z0-9_.-], 1..%u chars)",
					   pol->name, where, pol->max - 1);
		return 0;
	case K_BIN:
		if (len != pol->max)
			goto badlen;
		return 0;
	case K_BINMAX:
		if (len > pol->max)
			goto badlen;
		return 0;
	case K_NEST:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0)
			goto badlen;
		return 0;
	}
	return tdm_set_err(err, errlen, "attribute %s in %s has no policy",
			   pol->name, where);
badlen:
	return tdm_set_err(err, errlen, "bad length %u of attribute %s in %s",
			   len, pol->name, where);
}

static int aparse_cb(const struct nlattr *a, void *data)
{
	struct aparse *ap = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type > ap->max || !(ap->allowed & BIT(type))) {
		tdm_set_err(ap->err, ap->errlen, "unknown attribute %u in %s", type,
			    ap->where);
		return MNL_CB_ERROR;
	}
	if ((ap->seen & BIT(type)) && !(ap->repeat & BIT(type))) {
		tdm_set_err(ap->err, ap->errlen, "duplicate attribute %s in %s",
			    ap->pol[type].name, ap->where);
		return MNL_CB_ERROR;
	}
	if (attr_check(a, &ap->pol[type], ap->where, ap->err, ap->errlen))
		return MNL_CB_ERROR;
	if (ap->tb && !(ap->seen & BIT(type)))
		ap->tb[type] = a;
	ap->seen |= BIT(type);
	ap->count[type]++;
	/* mnl_attr_ok() bounded nla_len by what is left, so this is at most
	 * 3 bytes beyond the payload; the caller turns that into an error.
	 */
	ap->end = (size_t)((const char *)a - ap->start) + MNL_ALIGN(a->nla_len);
	return MNL_CB_OK;
}

/*
 * Parse payload[0..len) strictly: libmnl stops quietly at bytes that do not
 * form an attribute, so anything not consumed exactly (trailing bytes, an
 * attribute running past the end, missing padding) is "truncated".
 */
static int aparse_run(struct aparse *ap, const void *payload, size_t len,
		      uint32_t required)
{
	unsigned int t;

	ap->start = payload;
	ap->end = 0;
	ap->seen = 0;
	memset(ap->count, 0, sizeof(ap->count));
	if (mnl_attr_parse_payload(payload, len, aparse_cb, ap) < 0)
		return -1;
	if (ap->end != len)
		return tdm_set_err(ap->err, ap->errlen, "truncated attribute in %s",
				   ap->where);
	for (t = 1; t <= ap->max; t++)
		if ((required & BIT(t)) && !(ap->seen & BIT(t)))
			return tdm_set_err(ap->err, ap->errlen,
					   "missing attribute %s in %s",
					   ap->pol[t].name, ap->where);
	return 0;
}

static int nest_run(struct aparse *ap, const struct nlattr *nest,
		    uint32_t required)
{
	return aparse_run(ap, mnl_attr_get_payload(nest),
			  mnl_attr_get_payload_len(nest), required);
}

int tdm_sync_get(const struct nlattr *nest,
		 const struct nlattr *tb[TDM_S_MAX + 1],
		 char *err, size_t errlen)
{
	struct aparse ap = {
		.pol = s_pol, .max = TDM_S_MAX, .where = "SYNC",
		.allowed = BIT(TDM_S_STATE) | BIT(TDM_S_OFFSET) |
			   BIT(TDM_S_PORT_STATE) | BIT(TDM_S_HOLD) |
			   BIT(TDM_S_REASON),
		.tb = tb, .err = err, .errlen = errlen,
	};

	memset(tb, 0, sizeof(*tb) * (TDM_S_MAX + 1));
	return nest_run(&ap, nest, BIT(TDM_S_STATE));
}

/* ---- keys and sessions ---- */

/* Hex digits with whitespace anywhere; the digits never reach err. */
static int key_parse(const char *path, const char *text, size_t n,
		     uint8_t *key, size_t *keylen, char *err, size_t errlen)
{
	size_t i, digits = 0;
	int hi = -1;

	for (i = 0; i < n; i++) {
		int c = (unsigned char)text[i], v;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\v' || c == '\f')
			continue;
		v = tdm_hex_digit(c);
		if (v < 0)
			return tdm_set_err(err, errlen,
					   "key file %s: not a hex digit at offset %zu",
					   path, i);
		if (digits == 2 * TDM_KEY_MAX)
			return tdm_set_err(err, errlen,
					   "key file %s: key longer than %d bytes",
					   path, TDM_KEY_MAX);
		if (hi < 0) {
			hi = v;
		} else {
			key[digits / 2] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
		digits++;
	}
	if (digits % 2)
		return tdm_set_err(err, errlen,
				   "key file %s: odd number of hex digits (%zu)",
				   path, digits);
	if (digits < 2 * TDM_KEY_MIN)
		return tdm_set_err(err, errlen,
				   "key file %s: key too short (%zu bytes, need at least %d)",
				   path, digits / 2, TDM_KEY_MIN);
	*keylen = digits / 2;
	return 0;
}

int tdm_key_load(const char *path, uint8_t *key, size_t *keylen,
		 char *err, size_t errlen)
{
	/* Room for the longest key with generous whitespace; more than this
	 * is not a key file.
	 */
	static const uint8_t zeros[TDM_KEY_MAX];
	char text[8 * TDM_KEY_MAX];
	uint8_t tmp[TDM_KEY_MAX];
	size_t n = 0, len = 0;
	struct stat st;
	int fd, rc;

	/* O_NONBLOCK: opening a FIFO must not hang before fstat refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return tdm_set_err(err, errlen, "key file %s: %s", path,
				   strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = tdm_set_err(err, errlen, "key file %s: %s", path,
				 strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = tdm_set_err(err, errlen, "key file %s is not a regular file",
				 path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rc = tdm_set_err(err, errlen,
				 "key file %s is readable by group or others; chmod 600 it",
				 path);
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, text + n, sizeof(text) - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = tdm_set_err(err, errlen, "key file %s: %s", path,
					 strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		n += r;
		if (n == sizeof(text)) {
			rc = tdm_set_err(err, errlen, "key file %s is too large",
					 path);
			goto out;
		}
	}
	rc = key_parse(path, text, n, tmp, &len, err, errlen);
	if (!rc && !CRYPTO_memcmp(tmp, zeros, len))
		rc = tdm_set_err(err, errlen,
				 "key file %s holds an all-zero key; make a random one (tdmd(8), SECURITY)",
				 path);
	if (!rc) {
		memcpy(key, tmp, len);
		*keylen = len;
	}
out:
	OPENSSL_cleanse(text, sizeof(text));
	OPENSSL_cleanse(tmp, sizeof(tmp));
	close(fd);
	return rc;
}

static int random_bytes(uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t r = getrandom(buf, len, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		len -= r;
	}
	return 0;
}

int tdm_session_init(struct tdm_session *s, bool server,
		     const uint8_t *key, size_t keylen)
{
	memset(s, 0, sizeof(*s));
	if (keylen < TDM_KEY_MIN || keylen > TDM_KEY_MAX) {
		errno = EINVAL;
		return -1;
	}
	memcpy(s->key, key, keylen);
	s->keylen = keylen;
	s->server = server;
	s->rx_state = TDM_RX_HANDSHAKE;
	if (server && random_bytes(s->snonce, TDM_NONCE_LEN)) {
		OPENSSL_cleanse(s, sizeof(*s));
		return -1;
	}
	return 0;
}

void tdm_session_clear(struct tdm_session *s)
{
	OPENSSL_cleanse(s, sizeof(*s));
}

/* ---- MAC ---- */

/*
 * HMAC-SHA256(key, label || snonce || cnonce || frame[0..len)).  The
 * label and the nonces are not sent; they bind the frame to one
 * direction of one connection.
 */
static int frame_mac(const struct tdm_session *s, const char *label,
		     const uint8_t *snonce, const uint8_t *cnonce,
		     const void *frame, size_t len, uint8_t out[TDM_MAC_LEN])
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						 (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC_CTX *ctx = NULL;
	EVP_MAC *mac;
	size_t outl = 0;
	int rc = -1;

	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (!mac)
		return -1;
	ctx = EVP_MAC_CTX_new(mac);
	if (ctx && EVP_MAC_init(ctx, s->key, s->keylen, params) &&
	    EVP_MAC_update(ctx, (const uint8_t *)label, LABEL_LEN) &&
	    EVP_MAC_update(ctx, snonce, TDM_NONCE_LEN) &&
	    EVP_MAC_update(ctx, cnonce, TDM_NONCE_LEN) &&
	    EVP_MAC_update(ctx, frame, len) &&
	    EVP_MAC_final(ctx, out, &outl, TDM_MAC_LEN) &&
	    outl == TDM_MAC_LEN)
		rc = 0;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return rc;
}

/* ---- building frames ---- */

struct nlmsghdr *tdm_frame_begin(void *buf, size_t size, uint16_t type)
{
	struct nlmsghdr *nlh;
	struct tdm_fhdr *fh;

	if (!buf || size < TDM_MIN_FRAME)
		return NULL;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	fh = mnl_nlmsg_put_extra_header(nlh, sizeof(*fh));
	fh->magic = TDM_MAGIC;
	fh->version = TDM_PROTO_VERSION;
	return nlh;
}

int tdm_put_nonce(struct tdm_session *s, struct nlmsghdr *nlh, size_t size)
{
	uint8_t nonce[TDM_NONCE_LEN];

	if (s->server)
		memcpy(nonce, s->snonce, TDM_NONCE_LEN);
	else if (random_bytes(nonce, TDM_NONCE_LEN))
		return -1;
	if (!mnl_attr_put_check(nlh, size, TDM_A_NONCE, TDM_NONCE_LEN,
				nonce)) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

/* Our own frame's NONCE (first one), or NULL. */
static const uint8_t *own_nonce(const struct nlmsghdr *nlh)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct tdm_fhdr))
		if (mnl_attr_get_type(a) == TDM_A_NONCE &&
		    mnl_attr_get_payload_len(a) == TDM_NONCE_LEN)
			return mnl_attr_get_payload(a);
	return NULL;
}

/* May this side send type now?  Catches our own protocol bugs early. */
static bool may_send(const struct tdm_session *s, uint16_t type)
{
	const struct mrule *r = msg_rule(type);
	bool first = type == TDM_MSG_HELLO || type == TDM_MSG_REGISTER;

	if (!r || !(r->dir & (s->server ? DIR_S2C : DIR_C2S)))
		return false;
	if (first != (s->tx_seq == 0))
		return false;
	/* Until the peer's handshake frame arrived the MAC context is not
	 * complete: a client lacks snonce, a server the cnonce.
	 */
	if (s->rx_state == TDM_RX_HANDSHAKE)
		return s->server && type == TDM_MSG_HELLO;
	return true;
}

ssize_t tdm_frame_seal(struct tdm_session *s, struct nlmsghdr *nlh,
		       size_t size)
{
	size_t len = nlh->nlmsg_len;
	const uint8_t *cnonce = s->cnonce, *nonce;

	if (len < TDM_HDR_LEN || len % 4 || !may_send(s, nlh->nlmsg_type) ||
	    s->tx_seq == UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (len + TDM_MAC_LEN > size || len + TDM_MAC_LEN > TDM_MAX_FRAME) {
		errno = EMSGSIZE;
		return -1;
	}
	if (nlh->nlmsg_type == TDM_MSG_HELLO) {
		/* The client takes snonce from here; it must be ours. */
		nonce = own_nonce(nlh);
		if (!nonce || memcmp(nonce, s->snonce, TDM_NONCE_LEN)) {
			errno = EINVAL;
			return -1;
		}
		cnonce = zero_nonce;
	} else if (nlh->nlmsg_type == TDM_MSG_REGISTER) {
		/* From here on the client's nonce is part of the context. */
		nonce = own_nonce(nlh);
		if (!nonce) {
			errno = EINVAL;
			return -1;
		}
		memcpy(s->cnonce, nonce, TDM_NONCE_LEN);
	}
	nlh->nlmsg_len = len + TDM_MAC_LEN;
	nlh->nlmsg_flags = 0;
	nlh->nlmsg_seq = s->tx_seq;
	nlh->nlmsg_pid = 0;
	if (frame_mac(s, s->server ? label_s2c : label_c2s, s->snonce, cnonce,
		      nlh, len, (uint8_t *)nlh + len)) {
		nlh->nlmsg_len = len;
		errno = EIO;
		return -1;
	}
	s->tx_seq++;
	return len + TDM_MAC_LEN;
}

/* ---- receiving frames ---- */

ssize_t tdm_frame_need(const void *buf, size_t have, char *err,
		       size_t errlen)
{
	struct nlmsghdr nlh;

	if (have < sizeof(nlh))
		return 0;
	memcpy(&nlh, buf, sizeof(nlh));
	if (nlh.nlmsg_len < TDM_MIN_FRAME || nlh.nlmsg_len > TDM_MAX_FRAME)
		return tdm_set_err(err, errlen,
				   "frame length %u out of bounds (%zu..%u)",
				   nlh.nlmsg_len, TDM_MIN_FRAME,
				   (unsigned int)TDM_MAX_FRAME);
	return nlh.nlmsg_len;
}

/* Header fields that need no key: length, magic, version, zeroes. */
static int check_header(const void *buf, size_t len, struct nlmsghdr *nlh,
			char *err, size_t errlen)
{
	struct tdm_fhdr fh;

	if (len < TDM_MIN_FRAME || len > TDM_MAX_FRAME)
		return tdm_set_err(err, errlen,
				   "frame length %zu out of bounds (%zu..%u)",
				   len, TDM_MIN_FRAME, (unsigned int)TDM_MAX_FRAME);
	/* nlattr and nlmsghdr fields are read in place. */
	if ((uintptr_t)buf % 4)
		return tdm_set_err(err, errlen, "frame buffer not 4-byte aligned");
	memcpy(nlh, buf, sizeof(*nlh));
	memcpy(&fh, (const char *)buf + sizeof(*nlh), sizeof(fh));
	if (nlh->nlmsg_len != len)
		return tdm_set_err(err, errlen, "frame length %u, %zu bytes given",
				   nlh->nlmsg_len, len);
	if (len % 4)
		return tdm_set_err(err, errlen, "frame length %zu not a multiple of 4",
				   len);
	if (fh.magic != TDM_MAGIC)
		return tdm_set_err(err, errlen, "wrong magic 0x%08x (not a tdmd peer?)",
				   fh.magic);
	if (fh.version != TDM_PROTO_VERSION)
		return tdm_set_err(err, errlen,
				   "protocol version %u not supported (speaks %u)",
				   fh.version, TDM_PROTO_VERSION);
	if (fh.reserved[0] || fh.reserved[1] || fh.reserved[2] ||
	    nlh->nlmsg_flags || nlh->nlmsg_pid)
		return tdm_set_err(err, errlen, "non-zero reserved header fields");
	return 0;
}

/* Is type acceptable now, in this direction and handshake state? */
static int check_state(const struct tdm_session *s, uint16_t type,
		       char *err, size_t errlen)
{
	const struct mrule *r = msg_rule(type);
	uint16_t first = s->server ? TDM_MSG_REGISTER : TDM_MSG_HELLO;

	if (!r)
		return tdm_set_err(err, errlen, "unknown message type %u", type);
	/* A server never takes a server's frame: that also stops a frame
	 * reflected back at its sender before the MAC label does.
	 */
	if (!(r->dir & (s->server ? DIR_C2S : DIR_S2C)))
		return tdm_set_err(err, errlen, "%s is not a %s message", r->name,
				   s->server ? "client->server" : "server->client");
	switch (s->rx_state) {
	case TDM_RX_HANDSHAKE:
		if (type != first)
			return tdm_set_err(err, errlen, "expected %s first, got %s",
					   tdm_msg_name(first), r->name);
		return 0;
	case TDM_RX_WELCOME:
		if (type != TDM_MSG_WELCOME && type != TDM_MSG_ERROR)
			return tdm_set_err(err, errlen, "expected WELCOME, got %s",
					   r->name);
		return 0;
	default:
		if (type == TDM_MSG_HELLO || type == TDM_MSG_REGISTER ||
		    type == TDM_MSG_WELCOME)
			return tdm_set_err(err, errlen, "%s after the handshake",
					   r->name);
		return 0;
	}
}

static int parse_msg(const struct mrule *r, const void *buf, size_t len,
		     struct tdm_msg *m, char *err, size_t errlen)
{
	struct aparse ap = {
		.pol = a_pol, .max = TDM_A_MAX, .where = r->name,
		.allowed = r->required | r->optional, .tb = m->tb,
		.err = err, .errlen = errlen,
	};
	const struct nlattr *stb[TDM_S_MAX + 1];

	memset(m->tb, 0, sizeof(m->tb));
	if (aparse_run(&ap, (const char *)buf + TDM_HDR_LEN,
		       len - TDM_HDR_LEN - TDM_MAC_LEN, r->required))
		return -1;
	if (m->tb[TDM_A_STATUS] &&
	    mnl_attr_get_u32(m->tb[TDM_A_STATUS]) > TDM_STATUS_MAX)
		return tdm_set_err(err, errlen, "STATUS %u in %s is not an errno",
				   mnl_attr_get_u32(m->tb[TDM_A_STATUS]), r->name);
	if (m->tb[TDM_A_PHASE] &&
	    mnl_attr_get_u32(m->tb[TDM_A_PHASE]) >= __TDM_PHASE_MAX)
		return tdm_set_err(err, errlen, "PHASE %u in %s is not a phase",
				   mnl_attr_get_u32(m->tb[TDM_A_PHASE]), r->name);
	/* The sync nest has no decoder of its own to check it later. */
	if (m->tb[TDM_A_SYNC] &&
	    tdm_sync_get(m->tb[TDM_A_SYNC], stb, err, errlen))
		return -1;
	return 0;
}

int tdm_frame_open(struct tdm_session *s, const void *buf, size_t len,
		   struct tdm_msg *m, char *err, size_t errlen)
{
	const uint8_t *snonce = s->snonce, *cnonce = s->cnonce;
	uint8_t mac[TDM_MAC_LEN];
	const struct mrule *r;
	struct nlmsghdr nlh;
	bool parsed = false;

	memset(m, 0, sizeof(*m));
	if (check_header(buf, len, &nlh, err, errlen) ||
	    check_state(s, nlh.nlmsg_type, err, errlen))
		return -1;
	r = msg_rule(nlh.nlmsg_type);

	/*
	 * The handshake frames carry the nonce that completes their own MAC
	 * context, so they are parsed (safely, but unauthenticated) first;
	 * everything else is authenticated before its attributes are read.
	 */
	if (nlh.nlmsg_type == TDM_MSG_HELLO ||
	    nlh.nlmsg_type == TDM_MSG_REGISTER) {
		if (parse_msg(r, buf, len, m, err, errlen))
			goto bad;
		parsed = true;
		if (nlh.nlmsg_type == TDM_MSG_HELLO) {
			snonce = mnl_attr_get_payload(m->tb[TDM_A_NONCE]);
			cnonce = zero_nonce;
		} else {
			cnonce = mnl_attr_get_payload(m->tb[TDM_A_NONCE]);
		}
	}
	if (frame_mac(s, s->server ? label_c2s : label_s2c, snonce, cnonce,
		      buf, len - TDM_MAC_LEN, mac)) {
		tdm_set_err(err, errlen, "cannot compute the MAC (libcrypto failed)");
		goto bad;
	}
	if (CRYPTO_memcmp(mac, (const uint8_t *)buf + len - TDM_MAC_LEN,
			  TDM_MAC_LEN)) {
		tdm_set_err(err, errlen, "bad MAC (wrong key or tampered frame)");
		goto bad;
	}
	if (nlh.nlmsg_seq != s->rx_seq) {
		tdm_set_err(err, errlen,
			    "sequence %u, expected %u (replayed or reordered frame)",
			    nlh.nlmsg_seq, s->rx_seq);
		goto bad;
	}
	if (!parsed && parse_msg(r, buf, len, m, err, errlen))
		goto bad;

	/* Accepted: only now does the session change. */
	switch (nlh.nlmsg_type) {
	case TDM_MSG_HELLO:
		memcpy(s->snonce, snonce, TDM_NONCE_LEN);
		s->rx_state = TDM_RX_WELCOME;
		break;
	case TDM_MSG_REGISTER:
		memcpy(s->cnonce, cnonce, TDM_NONCE_LEN);
		s->rx_state = TDM_RX_OPEN;
		break;
	case TDM_MSG_WELCOME:
		s->rx_state = TDM_RX_OPEN;
		break;
	}
	s->rx_seq++;
	m->type = nlh.nlmsg_type;
	m->seq = nlh.nlmsg_seq;
	OPENSSL_cleanse(mac, sizeof(mac));
	return 0;
bad:
	memset(m, 0, sizeof(*m));
	OPENSSL_cleanse(mac, sizeof(mac));
	return -1;
}

/* ---- plans ---- */

static bool put_plan_scalars(struct nlmsghdr *nlh, size_t size,
			     const struct tdm_plan *p)
{
	return mnl_attr_put_u32_check(nlh, size, TDM_P_VERSION, p->version) &&
	       mnl_attr_put_u32_check(nlh, size, TDM_P_CLOCKID,
				      (uint32_t)p->clockid) &&
	       mnl_attr_put_u64_check(nlh, size, TDM_P_CYCLE, p->cycle_ns) &&
	       mnl_attr_put_u64_check(nlh, size, TDM_P_BASE_TIME,
				      (uint64_t)p->base_time) &&
	       mnl_attr_put_u32_check(nlh, size, TDM_P_GUARD, p->guard_ns) &&
	       mnl_attr_put_u64_check(nlh, size, TDM_P_MIN_DEAD,
				      p->min_dead_ns) &&
	       mnl_attr_put_u32_check(nlh, size, TDM_P_LINK_SPEED,
				      p->link_speed) &&
	       mnl_attr_put_u32_check(nlh, size, TDM_P_BYPASS_PRIOS,
				      p->bypass_prios) &&
	       mnl_attr_put_u8_check(nlh, size, TDM_P_BYPASS_PTP,
				     p->bypass_ptp ? 1 : 0);
}

/* A window: WINDOW in a plan without receivers, else DWINDOW. */
static bool put_sender(struct nlmsghdr *nlh, size_t size,
		       const struct tdm_sender *sd, bool dest)
{
	struct nlattr *nest;
	unsigned int i;

	nest = mnl_attr_nest_start_check(nlh, size, TDM_P_SENDER);
	if (!nest || !mnl_attr_put_strz_check(nlh, size, TDM_PS_NAME,
					      sd->name))
		return false;
	for (i = 0; i < sd->nwin; i++) {
		uint8_t w[DWINDOW_LEN];

		memcpy(w, &sd->win[i].offset, 8);
		memcpy(w + 8, &sd->win[i].length, 8);
		memcpy(w + 16, &sd->win[i].dest, 4);
		if (!mnl_attr_put_check(nlh, size,
					dest ? TDM_PS_DWINDOW : TDM_PS_WINDOW,
					dest ? DWINDOW_LEN : WINDOW_LEN, w))
			return false;
	}
	mnl_attr_nest_end(nlh, nest);
	return true;
}

static bool put_receiver(struct nlmsghdr *nlh, size_t size,
			 const struct tdm_receiver *r)
{
	struct nlattr *nest;

	nest = mnl_attr_nest_start_check(nlh, size, TDM_P_RECEIVER);
	if (!nest ||
	    !mnl_attr_put_strz_check(nlh, size, TDM_PR_NAME, r->name) ||
	    !mnl_attr_put_strz_check(nlh, size, TDM_PR_ADDRESS, r->addr))
		return false;
	mnl_attr_nest_end(nlh, nest);
	return true;
}

int tdm_plan_put(struct nlmsghdr *nlh, size_t size, uint16_t type,
		 const struct tdm_plan *p)
{
	struct nlattr *nest;
	unsigned int i;

	for (i = 0; i < p->nsenders; i++)
		if (p->senders[i].nwin > TDMWIN_MAX_WINDOWS ||
		    !memchr(p->senders[i].name, '\0', TDM_NAME_MAX)) {
			errno = EINVAL;
			return -1;
		}
	for (i = 0; i < p->nreceivers; i++)
		if (!memchr(p->receivers[i].name, '\0', TDM_NAME_MAX) ||
		    !memchr(p->receivers[i].addr, '\0', TDM_ADDR_MAX)) {
			errno = EINVAL;
			return -1;
		}
	nest = mnl_attr_nest_start_check(nlh, size, type);
	if (!nest)
		goto nospace;
	if (!put_plan_scalars(nlh, size, p))
		goto cancel;
	/* Receivers first: the windows name them by index. */
	for (i = 0; i < p->nreceivers; i++)
		if (!put_receiver(nlh, size, &p->receivers[i]))
			goto cancel;
	for (i = 0; i < p->nsenders; i++)
		if (!put_sender(nlh, size, &p->senders[i], p->nreceivers))
			goto cancel;
	/* nla_len is 16 bits; libmnl would silently truncate it. */
	if ((size_t)((char *)mnl_nlmsg_get_payload_tail(nlh) - (char *)nest) >
	    UINT16_MAX)
		goto cancel;
	mnl_attr_nest_end(nlh, nest);
	return 0;
cancel:
	mnl_attr_nest_cancel(nlh, nest);
nospace:
	errno = EMSGSIZE;
	return -1;
}

/*
 * A sender's windows: WINDOW in a plan without receivers, DWINDOW (with
 * the receiver) in one with them; the other kind is refused, so that a
 * window never goes to a destination by default.
 */
static int sender_get(const struct nlattr *nest, unsigned int idx,
		      bool dest, struct tdm_sender *sd, char *err,
		      size_t errlen)
{
	const struct nlattr *tb[TDM_PS_MAX + 1] = { NULL };
	uint16_t wtype = dest ? TDM_PS_DWINDOW : TDM_PS_WINDOW;
	char where[32];
	struct aparse ap = {
		.pol = ps_pol, .max = TDM_PS_MAX, .where = where,
		.allowed = BIT(TDM_PS_NAME) | BIT(wtype),
		.repeat = BIT(wtype), .tb = tb,
		.err = err, .errlen = errlen,
	};
	const struct nlattr *a;

	snprintf(where, sizeof(where), "SENDER %u", idx);
	if (nest_run(&ap, nest, BIT(TDM_PS_NAME)))
		return -1;
	if (ap.count[wtype] > TDMWIN_MAX_WINDOWS)
		return tdm_set_err(err, errlen, "%u windows in %s (at most %d)",
				   ap.count[wtype], where,
				   TDMWIN_MAX_WINDOWS);
	/* K_NAME bounded it to TDM_NAME_MAX with its NUL. */
	memcpy(sd->name, mnl_attr_get_payload(tb[TDM_PS_NAME]),
	       mnl_attr_get_payload_len(tb[TDM_PS_NAME]));
	mnl_attr_for_each_nested(a, nest) {
		const uint8_t *w = mnl_attr_get_payload(a);

		if (mnl_attr_get_type(a) != wtype)
			continue;
		memcpy(&sd->win[sd->nwin].offset, w, 8);
		memcpy(&sd->win[sd->nwin].length, w + 8, 8);
		if (dest)
			memcpy(&sd->win[sd->nwin].dest, w + 16, 4);
		sd->nwin++;
	}
	return 0;
}

static int receiver_get(const struct nlattr *nest, unsigned int idx,
			struct tdm_receiver *r, char *err, size_t errlen)
{
	const struct nlattr *tb[TDM_PR_MAX + 1] = { NULL };
	char where[32];
	struct aparse ap = {
		.pol = pr_pol, .max = TDM_PR_MAX, .where = where,
		.allowed = BIT(TDM_PR_NAME) | BIT(TDM_PR_ADDRESS), .tb = tb,
		.err = err, .errlen = errlen,
	};

	snprintf(where, sizeof(where), "RECEIVER %u", idx);
	if (nest_run(&ap, nest, ap.allowed))
		return -1;
	/* The policies bounded both to their fields, NUL included. */
	memcpy(r->name, mnl_attr_get_payload(tb[TDM_PR_NAME]),
	       mnl_attr_get_payload_len(tb[TDM_PR_NAME]));
	memcpy(r->addr, mnl_attr_get_payload(tb[TDM_PR_ADDRESS]),
	       mnl_attr_get_payload_len(tb[TDM_PR_ADDRESS]));
	return 0;
}

static int plan_get(const struct nlattr *nest, struct tdm_plan *p,
		    char *err, size_t errlen)
{
	const struct nlattr *tb[TDM_P_MAX + 1] = { NULL };
	struct aparse ap = {
		.pol = p_pol, .max = TDM_P_MAX, .where = "PLAN",
		.allowed = BIT(TDM_P_MAX + 1) - 2,	/* all but UNSPEC */
		.repeat = BIT(TDM_P_SENDER) | BIT(TDM_P_RECEIVER), .tb = tb,
		.err = err, .errlen = errlen,
	};
	const struct nlattr *a;
	unsigned int n, nr, i = 0, k = 0;
	uint8_t ptp;

	if (mnl_attr_validate(nest, MNL_TYPE_NESTED) < 0 ||
	    !(nest->nla_type & NLA_F_NESTED))
		return tdm_set_err(err, errlen, "PLAN is not a nest");
	/* Every scalar is sent, so each must be there: no silent defaults. */
	if (nest_run(&ap, nest,
		     ap.allowed & ~(BIT(TDM_P_SENDER) | BIT(TDM_P_RECEIVER))))
		return -1;
	n = ap.count[TDM_P_SENDER];
	if (n > TDM_MAX_SENDERS)
		return tdm_set_err(err, errlen, "%u senders in PLAN (at most %d)", n,
				   TDM_MAX_SENDERS);
	nr = ap.count[TDM_P_RECEIVER];
	if (nr > TDM_MAX_RECEIVERS)
		return tdm_set_err(err, errlen, "%u receivers in PLAN (at most %d)",
				   nr, TDM_MAX_RECEIVERS);
	p->version = mnl_attr_get_u32(tb[TDM_P_VERSION]);
	p->clockid = (int32_t)mnl_attr_get_u32(tb[TDM_P_CLOCKID]);
	p->cycle_ns = mnl_attr_get_u64(tb[TDM_P_CYCLE]);
	p->base_time = (int64_t)mnl_attr_get_u64(tb[TDM_P_BASE_TIME]);
	p->guard_ns = mnl_attr_get_u32(tb[TDM_P_GUARD]);
	p->min_dead_ns = mnl_attr_get_u64(tb[TDM_P_MIN_DEAD]);
	p->link_speed = mnl_attr_get_u32(tb[TDM_P_LINK_SPEED]);
	p->bypass_prios = mnl_attr_get_u32(tb[TDM_P_BYPASS_PRIOS]);
	ptp = mnl_attr_get_u8(tb[TDM_P_BYPASS_PTP]);
	p->bypass_ptp = ptp != 0;
	if (n) {
		p->senders = calloc(n, sizeof(*p->senders));
		if (!p->senders)
			return tdm_set_err(err, errlen, "out of memory");
	}
	p->nsenders = n;
	if (nr) {
		p->receivers = calloc(nr, sizeof(*p->receivers));
		if (!p->receivers)
			return tdm_set_err(err, errlen, "out of memory");
	}
	p->nreceivers = nr;
	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) == TDM_P_RECEIVER) {
			if (receiver_get(a, k, &p->receivers[k], err, errlen))
				return -1;
			k++;
		}
		if (mnl_attr_get_type(a) != TDM_P_SENDER)
			continue;
		if (sender_get(a, i, nr != 0, &p->senders[i], err, errlen))
			return -1;
		i++;
	}
	return tdm_plan_validate(p, err, errlen);
}

int tdm_plan_get(const struct nlattr *nest, struct tdm_plan *p,
		 char *err, size_t errlen)
{
	tdm_plan_init(p);
	if (!nest)
		return tdm_set_err(err, errlen, "missing attribute PLAN");
	if (plan_get(nest, p, err, errlen)) {
		tdm_plan_free(p);
		tdm_plan_init(p);
		return -1;
	}
	return 0;
}
