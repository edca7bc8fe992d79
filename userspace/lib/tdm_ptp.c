// SPDX-License-Identifier: GPL-2.0
/*
 * A ptp4l management client over its UNIX datagram socket, speaking raw
 * PTP management messages as pmc does (IEEE 1588-2019 13.3, 15.4, 15.5;
 * linuxptp msg.h, tlv.h, ddt.h).  Byte offsets of a management message:
 *
 *    0  transportSpecific << 4 | messageType (0xD = MANAGEMENT)
 *    1  versionPTP: low nibble 2 (linuxptp 4 sends 0x12, minor version 1)
 *    2  messageLength, big endian like every field
 *    4  domainNumber
 *    5  minorSdoId (reserved)
 *    6  flagField[2]
 *    8  correctionField[8]
 *   16  messageTypeSpecific[4]
 *   20  sourcePortIdentity: clockIdentity[8], portNumber (u16)
 *   30  sequenceId (u16)
 *   32  controlField (4 = management)
 *   33  logMessageInterval (0x7f)
 *   34  targetPortIdentity[10] (all ones: every clock, every port)
 *   44  startingBoundaryHops, 45 boundaryHops (0: do not forward)
 *   46  actionField (low nibble), 47 reserved
 *   48  TLVs: tlvType (u16), lengthField (u16), value[lengthField]
 *
 * A MANAGEMENT TLV (1) holds managementId (u16) and the data set; a
 * MANAGEMENT_ERROR_STATUS TLV (2) holds managementErrorId (u16),
 * managementId (u16), reserved[4] and an optional PTPText.  ptp4l answers
 * a GET with a RESPONSE carrying our sequenceId, one per port for port
 * data sets; newer versions may append an AUTHENTICATION TLV.
 *
 * Everything received comes from another process and is parsed with a
 * bounds check before each read.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tdm_util.h"
#include "tdm_ptp.h"

#define PTP_MSG_MANAGEMENT	0xd
#define PTP_VERSION_MAJOR	2
#define PTP_CTL_MANAGEMENT	4
#define PTP_HDR_LEN		34
#define PTP_MGMT_HDR_LEN	48
#define PTP_TLV_HDR_LEN		4
#define PTP_MAX_MSG		1500	/* linuxptp's message buffer */

enum { ACT_GET, ACT_SET, ACT_RESPONSE, ACT_COMMAND, ACT_ACKNOWLEDGE };

#define TLV_MANAGEMENT			0x0001
#define TLV_MANAGEMENT_ERROR_STATUS	0x0002

/* Data set sizes (linuxptp ddt.h/tlv.h, packed). */
#define TIME_STATUS_NP_LEN	50
#define TSN_GM_PRESENT		38	/* Integer32 gmPresent */
#define TSN_GM_IDENTITY		42	/* ClockIdentity gmIdentity */
#define PORT_DATA_SET_LEN	26
#define PDS_PORT_STATE		10	/* after portIdentity */
#define TIME_PROPERTIES_LEN	4	/* currentUtcOffset, flags, timeSource */
#define TP_UTC_OFF_VALID	(1 << 2)	/* flags, as flagField[1] */

#define ERROR_STATUS_LEN	8	/* without displayData */


static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- names -------------------------------------------------------------- */

static const char *const port_state_names[] = {
	[TDM_PS_INITIALIZING]	= "INITIALIZING",
	[TDM_PS_FAULTY]		= "FAULTY",
	[TDM_PS_DISABLED]	= "DISABLED",
	[TDM_PS_LISTENING]	= "LISTENING",
	[TDM_PS_PRE_MASTER]	= "PRE_MASTER",
	[TDM_PS_MASTER]		= "MASTER",
	[TDM_PS_PASSIVE]	= "PASSIVE",
	[TDM_PS_UNCALIBRATED]	= "UNCALIBRATED",
	[TDM_PS_SLAVE]		= "SLAVE",
	[TDM_PS_GRAND_MASTER]	= "GRAND_MASTER",
};

const char *tdm_port_state_name(int state)
{
	if (state < TDM_PS_INITIALIZING || state > TDM_PS_GRAND_MASTER)
		return "UNKNOWN";
	return port_state_names[state];
}

static const char *mgmt_id_name(uint16_t id)
{
	switch (id) {
	case TDM_PTP_MID_TIME_STATUS_NP:
		return "TIME_STATUS_NP";
	case TDM_PTP_MID_PORT_DATA_SET:
		return "PORT_DATA_SET";
	case TDM_PTP_MID_TIME_PROPERTIES_DATA_SET:
		return "TIME_PROPERTIES_DATA_SET";
	}
	return "another data set";
}

static const char *mgmt_error_name(uint16_t e)
{
	switch (e) {
	case 0x0001: return "RESPONSE_TOO_BIG";
	case 0x0002: return "NO_SUCH_ID";
	case 0x0003: return "WRONG_LENGTH";
	case 0x0004: return "WRONG_VALUE";
	case 0x0005: return "NOT_SETABLE";
	case 0x0006: return "NOT_SUPPORTED";
	case 0xfffe: return "GENERAL_ERROR";
	}
	return "unknown error";
}

/* ---- building a GET ----------------------------------------------------- */

/* pmc 3.1 sends the data field of a GET zero-filled to the set's size. */
static size_t get_data_len(uint16_t mgmt_id)
{
	switch (mgmt_id) {
	case TDM_PTP_MID_TIME_STATUS_NP:
		return TIME_STATUS_NP_LEN;
	case TDM_PTP_MID_PORT_DATA_SET:
		return PORT_DATA_SET_LEN;
	case TDM_PTP_MID_TIME_PROPERTIES_DATA_SET:
		return TIME_PROPERTIES_LEN;
	}
	return 0;
}

int tdm_ptp_build_get_ex(uint8_t *buf, size_t len, uint8_t domain,
			 uint8_t transport_specific, uint16_t port,
			 uint16_t seq, uint16_t mgmt_id)
{
	size_t dlen = get_data_len(mgmt_id);
	size_t total = PTP_MGMT_HDR_LEN + PTP_TLV_HDR_LEN + 2 + dlen;

	if (!buf || len < total || transport_specific > 0xf)
		return -1;
	memset(buf, 0, total);
	buf[0] = (uint8_t)(transport_specific << 4 | PTP_MSG_MANAGEMENT);
	buf[1] = PTP_VERSION_MAJOR;
	put_be16(buf + 2, (uint16_t)total);
	buf[4] = domain;
	put_be16(buf + 28, port);	/* clockIdentity stays zero */
	put_be16(buf + 30, seq);
	buf[32] = PTP_CTL_MANAGEMENT;
	buf[33] = 0x7f;
	memset(buf + 34, 0xff, 10);
	buf[46] = ACT_GET;
	put_be16(buf + 48, TLV_MANAGEMENT);
	put_be16(buf + 50, (uint16_t)(2 + dlen));
	put_be16(buf + 52, mgmt_id);
	return (int)total;
}

int tdm_ptp_build_get(uint8_t *buf, size_t len, uint8_t domain,
		      uint16_t seq, uint16_t mgmt_id)
{
	return tdm_ptp_build_get_ex(buf, len, domain, 0,
				    (uint16_t)getpid(), seq, mgmt_id);
}

/* ---- parsing an answer -------------------------------------------------- */

static int parse_data_set(const uint8_t *v, size_t vlen,
			  struct tdm_ptp_status *st, char *err, size_t errlen)
{
	uint16_t id;
	const uint8_t *d;
	size_t dlen;

	if (vlen < 2) {
		tdm_set_err(err, errlen, "ptp4l: MANAGEMENT TLV without an id");
		return -1;
	}
	id = get_be16(v);
	d = v + 2;
	dlen = vlen - 2;
	switch (id) {
	case TDM_PTP_MID_TIME_STATUS_NP:
		if (dlen < TIME_STATUS_NP_LEN)
			break;
		st->master_offset = (int64_t)get_be64(d);
		st->gm_present = get_be32(d + TSN_GM_PRESENT) != 0;
		memcpy(st->gm_identity, d + TSN_GM_IDENTITY,
		       sizeof(st->gm_identity));
		st->time_status_ok = true;
		return 0;
	case TDM_PTP_MID_PORT_DATA_SET:
		if (dlen < PORT_DATA_SET_LEN)
			break;
		if (d[PDS_PORT_STATE] < TDM_PS_INITIALIZING ||
		    d[PDS_PORT_STATE] > TDM_PS_GRAND_MASTER) {
			tdm_set_err(err, errlen, "ptp4l: unknown port state %u",
				d[PDS_PORT_STATE]);
			return -1;
		}
		st->port_state = d[PDS_PORT_STATE];
		st->port_ok = true;
		return 0;
	case TDM_PTP_MID_TIME_PROPERTIES_DATA_SET:
		if (dlen < TIME_PROPERTIES_LEN)
			break;
		st->utc_offset = (int16_t)get_be16(d);
		st->utc_offset_valid = d[2] & TP_UTC_OFF_VALID;
		st->tp_ok = true;
		return 0;
	default:
		return 1;
	}
	/* Longer data sets are fine (fields appended), shorter are not. */
	tdm_set_err(err, errlen, "ptp4l: %s of %zu bytes, expected %zu",
		mgmt_id_name(id), dlen, get_data_len(id));
	return -1;
}

/* A management error status for one of our ids: fail with its text. */
static int parse_error_status(const uint8_t *v, size_t vlen,
			      char *err, size_t errlen)
{
	uint16_t error, id;
	char text[64] = "";
	size_t i, n;

	if (vlen < ERROR_STATUS_LEN) {
		tdm_set_err(err, errlen,
			"ptp4l: MANAGEMENT_ERROR_STATUS of %zu bytes", vlen);
		return -1;
	}
	error = get_be16(v);
	id = get_be16(v + 2);
	/* Not one of ours, or the optional one: the round goes on. */
	if (!get_data_len(id) || id == TDM_PTP_MID_TIME_PROPERTIES_DATA_SET)
		return 1;
	/* displayData: a PTPText (length, text), printable bytes only. */
	if (vlen > ERROR_STATUS_LEN) {
		n = v[ERROR_STATUS_LEN];
		if (n > vlen - ERROR_STATUS_LEN - 1)
			n = 0;
		if (n > sizeof(text) - 3)
			n = sizeof(text) - 3;
		text[0] = n ? ':' : 0;
		text[1] = n ? ' ' : 0;
		for (i = 0; i < n; i++) {
			uint8_t c = v[ERROR_STATUS_LEN + 1 + i];

			text[2 + i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		}
		text[n ? 2 + n : 0] = 0;
	}
	tdm_set_err(err, errlen, "ptp4l: management error 0x%04x (%s) for %s%s",
		error, mgmt_error_name(error), mgmt_id_name(id), text);
	return -1;
}

int tdm_ptp_parse(const uint8_t *buf, size_t len, uint16_t expect_seq,
		  struct tdm_ptp_status *st, char *err, size_t errlen)
{
	const uint8_t *found = NULL;
	uint16_t found_type = 0, found_len = 0;
	size_t mlen, off;

	if (!buf || len < PTP_HDR_LEN) {
		tdm_set_err(err, errlen, "ptp4l: message of %zu bytes", len);
		return -1;
	}
	if ((buf[0] & 0xf) != PTP_MSG_MANAGEMENT)
		return 1;
	if ((buf[1] & 0xf) != PTP_VERSION_MAJOR) {
		tdm_set_err(err, errlen, "ptp4l: PTP version %u", buf[1] & 0xf);
		return -1;
	}
	mlen = get_be16(buf + 2);
	if (mlen > len || mlen < PTP_MGMT_HDR_LEN) {
		tdm_set_err(err, errlen,
			"ptp4l: messageLength %zu in a message of %zu bytes",
			mlen, len);
		return -1;
	}
	if (get_be16(buf + 30) != expect_seq ||
	    (buf[46] & 0xf) != ACT_RESPONSE)
		return 1;

	/* Check the whole TLV chain before using any of it. */
	for (off = PTP_MGMT_HDR_LEN; off < mlen;) {
		uint16_t type, tlen;

		if (mlen - off < PTP_TLV_HDR_LEN) {
			tdm_set_err(err, errlen, "ptp4l: %zu stray bytes after the TLVs",
				mlen - off);
			return -1;
		}
		type = get_be16(buf + off);
		tlen = get_be16(buf + off + 2);
		if (tlen > mlen - off - PTP_TLV_HDR_LEN) {
			tdm_set_err(err, errlen,
				"ptp4l: TLV 0x%04x of %u bytes overruns the message",
				type, tlen);
			return -1;
		}
		if (!found && (type == TLV_MANAGEMENT ||
			       type == TLV_MANAGEMENT_ERROR_STATUS)) {
			found = buf + off + PTP_TLV_HDR_LEN;
			found_type = type;
			found_len = tlen;
		}
		off += PTP_TLV_HDR_LEN + tlen;
	}
	if (!found) {
		tdm_set_err(err, errlen, "ptp4l: response without a management TLV");
		return -1;
	}
	if (found_type == TLV_MANAGEMENT)
		return parse_data_set(found, found_len, st, err, errlen);
	return parse_error_status(found, found_len, err, errlen);
}

/* ---- the socket --------------------------------------------------------- */

int tdm_ptp_open_dir(struct tdm_ptp *p, const char *ptp4l_path,
		     uint8_t domain, const char *dir, char *err, size_t errlen)
{
	static unsigned int counter;
	struct sockaddr_un sun;
	char dirbuf[sizeof(p->remote)];
	unsigned int n;
	int len;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (!ptp4l_path)
		ptp4l_path = TDM_PTP_DEFAULT_SOCKET;
	if (!*ptp4l_path || strlen(ptp4l_path) >= sizeof(p->remote)) {
		tdm_set_err(err, errlen, "bad ptp4l socket path '%s'", ptp4l_path);
		return -1;
	}
	strcpy(p->remote, ptp4l_path);
	if (!dir) {
		/* pmc binds beside ptp4l's socket: /var/run/pmc.<pid>. */
		char *slash;

		strcpy(dirbuf, ptp4l_path);
		slash = strrchr(dirbuf, '/');
		if (!slash)
			strcpy(dirbuf, ".");
		else
			slash[slash == dirbuf ? 1 : 0] = 0;
		dir = dirbuf;
	}
	n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	len = snprintf(p->local, sizeof(p->local), "%s/tdmd.%d.%u", dir,
		       (int)getpid(), n);
	if (len < 0 || (size_t)len >= sizeof(p->local)) {
		tdm_set_err(err, errlen, "socket folder '%s' is too long", dir);
		p->local[0] = 0;
		return -1;
	}
	p->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		tdm_set_err(err, errlen, "socket: %s", strerror(errno));
		p->local[0] = 0;
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, p->local, strlen(p->local) + 1);
	/* A socket of our name is left over from a dead process. */
	unlink(p->local);
	if (bind(p->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		tdm_set_err(err, errlen, "bind %s: %s", p->local, strerror(errno));
		close(p->fd);
		p->fd = -1;
		p->local[0] = 0;
		return -1;
	}
	/* ptp4l may run as another user of our group (linuxptp's 0660). */
	chmod(p->local, 0660);
	p->domain = domain;
	p->port_number = (uint16_t)getpid();
	return 0;
}

int tdm_ptp_open(struct tdm_ptp *p, const char *ptp4l_path, uint8_t domain,
		 char *err, size_t errlen)
{
	return tdm_ptp_open_dir(p, ptp4l_path, domain, NULL, err, errlen);
}

void tdm_ptp_close(struct tdm_ptp *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (p->local[0])
		unlink(p->local);
	p->local[0] = 0;
}

/* ---- one query round ---------------------------------------------------- */

static int send_get(struct tdm_ptp *p, uint16_t seq, uint16_t id,
		    char *err, size_t errlen)
{
	struct sockaddr_un sun;
	uint8_t buf[128];
	int len;

	len = tdm_ptp_build_get_ex(buf, sizeof(buf), p->domain,
				   p->transport_specific, p->port_number,
				   seq, id);
	if (len < 0) {
		tdm_set_err(err, errlen, "cannot build a GET %s", mgmt_id_name(id));
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, p->remote, strnlen(p->remote, sizeof(p->remote) - 1));
	/*
	 * Never block: a ptp4l that stopped reading fills its queue
	 * (EAGAIN); none listening gives ECONNREFUSED, no socket ENOENT.
	 */
	if (sendto(p->fd, buf, (size_t)len, MSG_DONTWAIT,
		   (struct sockaddr *)&sun, sizeof(sun)) != len) {
		tdm_set_err(err, errlen, "cannot reach ptp4l at %s: %s", p->remote,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Several ports answer PORT_DATA_SET: keep the most telling state. */
static int state_rank(int state)
{
	switch (state) {
	case TDM_PS_SLAVE:		return 9;
	case TDM_PS_UNCALIBRATED:	return 8;
	case TDM_PS_GRAND_MASTER:	return 7;
	case TDM_PS_MASTER:		return 6;
	case TDM_PS_PRE_MASTER:		return 5;
	case TDM_PS_PASSIVE:		return 4;
	case TDM_PS_LISTENING:		return 3;
	case TDM_PS_DISABLED:		return 2;
	case TDM_PS_FAULTY:		return 1;
	}
	return 0;
}

static void merge(struct tdm_ptp_status *st, const struct tdm_ptp_status *m)
{
	if (m->time_status_ok) {
		st->time_status_ok = true;
		st->master_offset = m->master_offset;
		st->gm_present = m->gm_present;
		memcpy(st->gm_identity, m->gm_identity,
		       sizeof(st->gm_identity));
	}
	if (m->port_ok) {
		if (!st->port_ok ||
		    state_rank(m->port_state) > state_rank(st->port_state))
			st->port_state = m->port_state;
		st->port_ok = true;
		st->nports++;
	}
	if (m->tp_ok) {
		st->tp_ok = true;
		st->utc_offset = m->utc_offset;
		st->utc_offset_valid = m->utc_offset_valid;
	}
}

/* Read one datagram if there is one: 1 read, 0 none, -1 error in it. */
static int recv_one(struct tdm_ptp *p, uint16_t seq,
		    struct tdm_ptp_status *st, char *err, size_t errlen)
{
	uint8_t buf[PTP_MAX_MSG + 64];
	struct tdm_ptp_status m;
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh;
	ssize_t n;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	n = recvmsg(p->fd, &mh, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		tdm_set_err(err, errlen, "receive from ptp4l: %s", strerror(errno));
		return -1;
	}
	/* Too big for a PTP message: not an answer of ptp4l's. */
	if (mh.msg_flags & MSG_TRUNC)
		return 1;
	memset(&m, 0, sizeof(m));
	switch (tdm_ptp_parse(buf, (size_t)n, seq, &m, err, errlen)) {
	case 0:
		merge(st, &m);
		return 1;
	case 1:
		return 1;
	}
	return -1;
}

/* Drop what earlier rounds left queued (late answers after a timeout). */
static void drain(struct tdm_ptp *p)
{
	uint8_t buf[64];
	int i;

	for (i = 0; i < 256; i++)
		if (recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT) < 0)
			break;
}

int tdm_ptp_query(struct tdm_ptp *p, int timeout_ms,
		  struct tdm_ptp_status *st, char *err, size_t errlen)
{
	uint16_t seq = p->seq++;
	int64_t deadline;
	int i, ret;

	memset(st, 0, sizeof(*st));
	/* Left 0 on failure: a TAI check then fails safe. */
	if (tdm_tai_offset(&st->tai_offset, NULL, 0) < 0)
		st->tai_offset = 0;
	if (p->fd < 0) {
		tdm_set_err(err, errlen, "ptp4l client is not open");
		return -1;
	}
	drain(p);
	/*
	 * TIME_PROPERTIES_DATA_SET first: ptp4l answers in order, so its
	 * answer is queued by the time the two the round waits for came.
	 */
	if (send_get(p, seq, TDM_PTP_MID_TIME_PROPERTIES_DATA_SET, err,
		     errlen) < 0 ||
	    send_get(p, seq, TDM_PTP_MID_TIME_STATUS_NP, err, errlen) < 0 ||
	    send_get(p, seq, TDM_PTP_MID_PORT_DATA_SET, err, errlen) < 0)
		return -1;

	deadline = tdm_mono_ns() / 1000000 + (timeout_ms > 0 ? timeout_ms : 0);
	while (!st->time_status_ok || !st->port_ok) {
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		int64_t left = deadline - tdm_mono_ns() / 1000000;

		if (left <= 0)
			break;
		ret = poll(&pfd, 1, (int)left);
		if (ret < 0 && errno != EINTR) {
			tdm_set_err(err, errlen, "poll: %s", strerror(errno));
			return -1;
		}
		if (ret > 0 && recv_one(p, seq, st, err, errlen) < 0)
			return -1;
	}
	if (!st->time_status_ok || !st->port_ok) {
		tdm_set_err(err, errlen, "ptp4l did not answer within %d ms%s",
			timeout_ms, st->time_status_ok ? " (PORT_DATA_SET)" :
			st->port_ok ? " (TIME_STATUS_NP)" : "");
		return -1;
	}
	/*
	 * ptp4l sends the answers of all its ports at once: any other port's
	 * is already queued.  Bounded, against a flood.
	 */
	for (i = 0; i < 64; i++) {
		ret = recv_one(p, seq, st, err, errlen);
		if (ret < 0)
			return -1;
		if (!ret)
			break;
	}
	return 0;
}

/* ---- the decision ------------------------------------------------------- */

int tdm_tai_offset(int *tai, char *err, size_t errlen)
{
	struct timex tx;

	memset(&tx, 0, sizeof(tx));	/* modes 0: read only */
	if (adjtimex(&tx) < 0) {
		tdm_set_err(err, errlen, "adjtimex: %s", strerror(errno));
		return -1;
	}
	*tai = tx.tai;
	return 0;
}

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

bool tdm_ptp_good(const struct tdm_ptp_status *st, uint64_t threshold_ns,
		  bool check_tai, char *reason, size_t len)
{
	int s = st->port_state;

	if (!st->port_ok) {
		tdm_set_err(reason, len, "ptp4l gave no port state");
		return false;
	}
	/* MASTER or GRAND_MASTER: this node follows no grandmaster. */
	if (s != TDM_PS_SLAVE) {
		tdm_set_err(reason, len, "port state %s", tdm_port_state_name(s));
		return false;
	}
	if (!st->time_status_ok) {
		tdm_set_err(reason, len, "ptp4l gave no master offset");
		return false;
	}
	if (magnitude(st->master_offset) > threshold_ns) {
		tdm_set_err(reason, len, "offset %lld ns exceeds %llu ns",
			(long long)st->master_offset,
			(unsigned long long)threshold_ns);
		return false;
	}
	if (check_tai && st->tai_offset == 0) {
		tdm_set_err(reason, len,
			"kernel TAI offset is 0 (CLOCK_TAI = CLOCK_REALTIME): phc2sys -a or -w sets it from ptp4l");
		return false;
	}
	if (check_tai && st->tp_ok && st->utc_offset_valid &&
	    st->tai_offset != st->utc_offset) {
		tdm_set_err(reason, len,
			"kernel TAI offset %d s is not ptp4l's currentUtcOffset %d s: phc2sys -a or -w sets it from ptp4l",
			st->tai_offset, st->utc_offset);
		return false;
	}
	tdm_set_err(reason, len, "port state SLAVE, offset %lld ns",
		(long long)st->master_offset);
	return true;
}
