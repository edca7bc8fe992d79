// SPDX-License-Identifier: GPL-2.0
/*
 * libtdm's netlink client (libmnl): one request at a time.  Every request
 * carries a fresh sequence number and is followed by reading answers until
 * its ack (or NLMSG_DONE for a dump).  Answers with another sequence number
 * are left-overs of an earlier, abandoned request and are skipped.  The
 * socket asks for extended acks (NETLINK_EXT_ACK) so that a refused request
 * comes back with the kernel's own explanation ("Windows overlap"), and for
 * capped acks (NETLINK_CAP_ACK) so that an error does not echo our request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <linux/genetlink.h>

#include "tdm_nl.h"
#include "tdm_util.h"

/* Big enough for any dump skb the kernel builds for a 32 KiB reader. */
#define NL_RECV_SIZE	32768
/* The kernel always answers; this only bounds a wait on a stuck lock. */
#define NL_TIMEOUT_S	10

/* ---- the socket ---------------------------------------------------------- */

int tdm_nl_open(struct tdm_nl *nl, int family, char *err, size_t errlen)
{
	struct timeval tmo = { .tv_sec = NL_TIMEOUT_S };
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->bus = family == NETLINK_ROUTE ? "rtnetlink" :
		  family == NETLINK_GENERIC ? "generic netlink" : "netlink";
	nl->sock = mnl_socket_open2(family, SOCK_CLOEXEC);
	if (!nl->sock)
		return tdm_set_err(err, errlen, "%s socket: %s", nl->bus,
				   strerror(errno));
	/* Both are optional: without them we still get errno. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(mnl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVTIMEO, &tmo,
		   sizeof(tmo));
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;

		tdm_set_err(err, errlen, "%s bind: %s", nl->bus, strerror(e));
		tdm_nl_close(nl);
		errno = e;
		return -1;
	}
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (uint32_t)time(NULL);
	return 0;
}

void tdm_nl_close(struct tdm_nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
}

/* ---- errors and extack text ---------------------------------------------- */

static int ack_tlv_cb(const struct nlattr *a, void *data)
{
	const char **msg = data;

	if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		*msg = mnl_attr_get_str(a);
	return MNL_CB_OK;
}

/* The extack message in the TLVs after off bytes of payload, if any. */
static const char *ack_message(const struct nlmsghdr *nlh, size_t off)
{
	const char *msg = NULL;
	size_t plen = mnl_nlmsg_get_payload_len(nlh);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= plen)
		return NULL;
	mnl_attr_parse_payload((const char *)mnl_nlmsg_get_payload(nlh) + off,
			       plen - off, ack_tlv_cb, &msg);
	return msg && *msg ? msg : NULL;
}

/*
 * NLMSG_ERROR: *error = the positive errno (0 for an ack), *msg = the
 * extack message or NULL.  Copes with and without NETLINK_CAP_ACK (our
 * request echoed before the TLVs).  0, or -1 if the message is too short.
 */
static int error_msg(const struct nlmsghdr *nlh, int *error, const char **msg)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return -1;
	/* Without NETLINK_CAP_ACK (old kernels) our request is echoed. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
	    e->msg.nlmsg_len > sizeof(struct nlmsghdr))
		off += MNL_ALIGN(e->msg.nlmsg_len - sizeof(struct nlmsghdr));
	*error = -e->error;
	*msg = e->error ? ack_message(nlh, off) : NULL;
	return 0;
}

/* NLMSG_DONE of a dump: the same from its optional error code. */
static void done_msg(const struct nlmsghdr *nlh, int *error, const char **msg)
{
	int v = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(v))
		memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
	*error = v < 0 ? -v : 0;
	*msg = v < 0 ? ack_message(nlh, sizeof(v)) : NULL;
}

/* ---- one request and its answers ----------------------------------------- */

/*
 * Walk one datagram.  Returns 1 when the request is finished (ack, error
 * or end of dump; *error tells which), 0 to read on, -1 on a callback
 * failure or a malformed answer (*error set).
 */
static int walk_answers(const struct tdm_nl *nl, const void *buf, size_t len,
			mnl_cb_t cb, void *data, int *error, const char **msg)
{
	const struct nlmsghdr *nlh = buf;
	int n = (int)len;

	for (; mnl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
		if (nlh->nlmsg_seq != nl->seq ||
		    (nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid))
			continue;
		switch (nlh->nlmsg_type) {
		case NLMSG_ERROR:
			if (error_msg(nlh, error, msg)) {
				*error = EPROTO;
				return -1;
			}
			return 1;
		case NLMSG_DONE:
			done_msg(nlh, error, msg);
			return 1;
		case NLMSG_OVERRUN:
			*error = ENOBUFS;
			return -1;
		default:
			if (nlh->nlmsg_type >= NLMSG_MIN_TYPE && cb &&
			    cb(nlh, data) < MNL_CB_OK) {
				*error = EPROTO;
				return -1;
			}
			break;
		}
	}
	return 0;
}

int tdm_nl_talk(struct tdm_nl *nl, struct nlmsghdr *nlh, bool dump,
		mnl_cb_t cb, void *data, char *err, size_t errlen)
{
	const char *msg = NULL;
	int error = 0, ret = 0;
	char *buf;

	if (!nl->sock) {
		tdm_set_err(err, errlen, "%s socket is not open",
			    nl->bus ? nl->bus : "netlink");
		errno = EBADF;
		return -1;
	}
	/* Not a test of NLM_F_DUMP: its NLM_F_ROOT bit is NLM_F_REPLACE. */
	nlh->nlmsg_flags |= NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK);
	nlh->nlmsg_seq = ++nl->seq;

	buf = malloc(NL_RECV_SIZE);
	if (!buf) {
		tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
		errno = ENOMEM;
		return -1;
	}
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0) {
		error = errno;
		goto out;
	}
	while (!ret) {
		ssize_t n = mnl_socket_recvfrom(nl->sock, buf, NL_RECV_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/*
			 * ENOSPC: an answer was bigger than our buffer;
			 * EAGAIN: no answer within NL_TIMEOUT_S.
			 */
			error = errno == EAGAIN ? ETIMEDOUT : errno;
			break;
		}
		ret = walk_answers(nl, buf, (size_t)n, cb, data, &error, &msg);
	}
out:
	/* The extack text has no trailing newline. */
	if (error && msg)
		tdm_set_err(err, errlen, "kernel: %s", msg);
	else if (error)
		tdm_set_err(err, errlen, "%s", strerror(error));
	free(buf);
	errno = error;
	return error ? -1 : 0;
}

/* ---- events -------------------------------------------------------------- */

int tdm_nl_subscribe(struct tdm_nl *nl, unsigned int group, char *err,
		     size_t errlen)
{
	int g = (int)group;

	if (!nl->sock) {
		errno = EBADF;
		return tdm_set_err(err, errlen, "%s socket is not open",
				   nl->bus ? nl->bus : "netlink");
	}
	if (mnl_socket_setsockopt(nl->sock, NETLINK_ADD_MEMBERSHIP, &g,
				  sizeof(g)) < 0) {
		int e = errno;

		tdm_set_err(err, errlen, "%s group %u: %s", nl->bus, group,
			    strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

/* Each data message of one datagram of events to cb: 0, or -1 (errno). */
static int walk_events(const void *buf, size_t len, mnl_cb_t cb, void *data)
{
	const struct nlmsghdr *nlh = buf;
	int n = (int)len;

	for (; mnl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
		if (nlh->nlmsg_type == NLMSG_OVERRUN) {
			errno = ENOBUFS;
			return -1;
		}
		if (nlh->nlmsg_type >= NLMSG_MIN_TYPE && cb(nlh, data) < MNL_CB_OK) {
			errno = EPROTO;
			return -1;
		}
	}
	return 0;
}

int tdm_nl_events(struct tdm_nl *nl, mnl_cb_t cb, void *data, char *err,
		  size_t errlen)
{
	int count = 0, ret = 0;
	char *buf;

	if (!nl->sock) {
		errno = EBADF;
		return tdm_set_err(err, errlen, "%s socket is not open",
				   nl->bus ? nl->bus : "netlink");
	}
	buf = malloc(NL_RECV_SIZE);
	if (!buf) {
		errno = ENOMEM;
		return tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
	}
	for (;;) {
		struct iovec iov = { buf, NL_RECV_SIZE };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(mnl_socket_get_fd(nl->sock), &msg,
				    MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n >= 0 && (msg.msg_flags & MSG_TRUNC))
			errno = ENOSPC;
		if (n < 0 || (msg.msg_flags & MSG_TRUNC) ||
		    walk_events(buf, (size_t)n, cb, data) < 0) {
			tdm_set_err(err, errlen, "%s events: %s", nl->bus,
				    strerror(errno));
			ret = -1;
			break;
		}
		count++;
	}
	if (ret < 0) {
		int e = errno;

		free(buf);
		errno = e;
		return -1;
	}
	free(buf);
	return count;
}

/* ---- generic netlink ----------------------------------------------------- */

struct nlmsghdr *tdm_genl_put(char *buf, uint16_t type, uint8_t cmd,
			      uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(a, MNL_TYPE_U16) == 0)
			*(uint16_t *)data = mnl_attr_get_u16(a);
	}
	return MNL_CB_OK;
}

int tdm_genl_family(struct tdm_nl *nl, const char *name, uint16_t *id,
		    char *err, size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh;

	*id = 0;
	nlh = tdm_genl_put(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	if (tdm_nl_talk(nl, nlh, false, family_cb, id, err, errlen)) {
		if (errno == ENOENT)
			tdm_set_err(err, errlen, "no generic netlink family '%s'",
				    name);
		return -1;
	}
	if (!*id) {
		errno = EPROTO;
		return tdm_set_err(err, errlen,
				   "no id for generic netlink family '%s'", name);
	}
	return 0;
}
