// SPDX-License-Identifier: GPL-2.0
/*
 * Framed, authenticated connections over non-blocking stream sockets.
 * Input is read into a buffer of one maximum frame; the frame length is
 * checked from the header before the rest is awaited, so a peer cannot
 * make us buffer more than TDM_MAX_FRAME.  Output is queued and flushed
 * when the socket is writable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <poll.h>

#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

/* Bounds the queue of a peer that stops reading. */
#define CONN_WMAX	(4 * TDM_MAX_FRAME)

static uint8_t scratch[TDM_MAX_FRAME];

struct nlmsghdr *frame_begin(uint16_t type)
{
	return tdm_frame_begin(scratch, sizeof(scratch), type);
}

size_t frame_size(void)
{
	return sizeof(scratch);
}

void sockaddr_str(const void *sa, char *buf, size_t len)
{
	const struct sockaddr *s = sa;
	char a[INET6_ADDRSTRLEN];

	if (s->sa_family == AF_INET) {
		const struct sockaddr_in *in = sa;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
	} else if (s->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "(family %d)", s->sa_family);
	}
}

/*
 * The read buffer before the peer proved the key: HELLO and REGISTER fit.
 * Anyone can connect, so what a connection may make tdmd hold before that
 * is this much, not TDM_MAX_FRAME (256 KiB times every connection).
 */
#define CONN_RBUF_MIN	4096

struct conn *conn_new(struct ev_loop *loop, int fd, bool server,
		      const uint8_t *key, size_t keylen, ev_cb cb, void *ctx)
{
	struct conn *c = calloc(1, sizeof(*c));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (!c)
		return NULL;
	c->rbuf = malloc(CONN_RBUF_MIN);
	c->rcap = CONN_RBUF_MIN;
	if (!c->rbuf || tdm_session_init(&c->sess, server, key, keylen)) {
		free(c->rbuf);
		free(c);
		return NULL;
	}
	c->ev.fd = fd;
	c->ev.events = POLLIN;
	c->ev.cb = cb;
	c->ev.ctx = ctx;
	c->ev.slot = -1;
	c->last_rx = tdm_mono_ns();
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		sockaddr_str(&ss, c->peer, sizeof(c->peer));
	else
		snprintf(c->peer, sizeof(c->peer), "fd %d", fd);
	if (ev_add(loop, &c->ev)) {
		conn_free(c);
		return NULL;
	}
	return c;
}

void conn_free(struct conn *c)
{
	if (!c)
		return;
	ev_del(&c->ev);
	if (c->ev.fd >= 0)
		close(c->ev.fd);
	/* The session holds the key. */
	tdm_session_clear(&c->sess);
	free(c->rbuf);
	free(c->wbuf);
	free(c);
}

int conn_input(struct conn *c, conn_frame_cb cb, char *err, size_t errlen)
{
	for (;;) {
		ssize_t need, n;
		size_t want;

		need = tdm_frame_need(c->rbuf, c->rlen, err, errlen);
		if (need < 0)
			return -1;
		if ((size_t)need > c->rcap) {
			uint8_t *b;

			if (!c->authed) {
				snprintf(err, errlen,
					 "a frame of %zd bytes before the peer proved the key (at most %d)",
					 need, CONN_RBUF_MIN);
				return -1;
			}
			b = realloc(c->rbuf, need);
			if (!b) {
				snprintf(err, errlen, "out of memory for a frame of %zd bytes",
					 need);
				return -1;
			}
			c->rbuf = b;
			c->rcap = need;
		}
		if (need > 0 && c->rlen >= (size_t)need) {
			struct tdm_msg m;
			int rc;

			if (tdm_frame_open(&c->sess, c->rbuf, need, &m, err,
					   errlen))
				return -1;
			c->authed = true;
			c->last_rx = tdm_mono_ns();
			rc = cb(c, &m, err, errlen);
			if (rc)
				return -1;
			memmove(c->rbuf, c->rbuf + need, c->rlen - need);
			c->rlen -= need;
			if (c->closing)
				return 0;
			continue;
		}
		want = need > 0 ? (size_t)need - c->rlen :
				  sizeof(struct nlmsghdr) - c->rlen;
		n = recv(c->ev.fd, c->rbuf + c->rlen, want, MSG_DONTWAIT);
		if (n > 0) {
			c->rlen += n;
			continue;
		}
		if (n == 0) {
			snprintf(err, errlen, c->rlen ?
				 "connection closed in the middle of a frame (%zu bytes)" :
				 "connection closed by peer", c->rlen);
			return -1;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		snprintf(err, errlen, "recv: %s", strerror(errno));
		return -1;
	}
}

int conn_output(struct conn *c, char *err, size_t errlen)
{
	while (c->wlen) {
		ssize_t n = send(c->ev.fd, c->wbuf, c->wlen,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "send: %s", strerror(errno));
			return -1;
		}
		memmove(c->wbuf, c->wbuf + n, c->wlen - n);
		c->wlen -= n;
	}
	c->ev.events = POLLIN | (c->wlen ? POLLOUT : 0);
	return 0;
}

int conn_send(struct conn *c, struct nlmsghdr *nlh, char *err, size_t errlen)
{
	ssize_t len = tdm_frame_seal(&c->sess, nlh, frame_size());

	if (len < 0) {
		snprintf(err, errlen, "%s frame too large",
			 tdm_msg_name(nlh->nlmsg_type));
		return -1;
	}
	if (c->wlen + len > CONN_WMAX) {
		snprintf(err, errlen, "peer is not reading (%zu bytes queued)",
			 c->wlen);
		return -1;
	}
	if (c->wlen + len > c->wcap) {
		size_t cap = c->wcap ? c->wcap : 4096;
		uint8_t *b;

		while (cap < c->wlen + len)
			cap *= 2;
		b = realloc(c->wbuf, cap);
		if (!b) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		c->wbuf = b;
		c->wcap = cap;
	}
	memcpy(c->wbuf + c->wlen, nlh, len);
	c->wlen += len;
	return conn_output(c, err, errlen);
}
