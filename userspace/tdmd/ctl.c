// SPDX-License-Identifier: GPL-2.0
/*
 * The local control socket, for tdmctl.  A UNIX stream socket (mode 0660)
 * takes one request per connection:
 *
 *   request:  "COMMAND [json]\n" [body]  then the client shuts down writing
 *   reply:    "ok\n" body   or   "error\n" message
 *
 * Commands: "status", "plan show", "plan history", "plan push" (the body
 * is a plan file).  A reply may be deferred (plan push waits for acks);
 * the role keeps the request until it calls ctl_reply().
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

#define CTL_MAX_REQ	(1024 * 1024)
#define CTL_MAX_CLIENTS	64

static struct ev lev = { .fd = -1, .slot = -1 };
static char ctl_path[108];
static int nclients;

static void req_free(struct ctl_req *r)
{
	ev_del(&r->ev);
	close(r->ev.fd);
	free(r->in);
	free(r);
	nclients--;
}

/* Write the whole reply, blocking for at most a second at a time. */
static void write_all(int fd, const char *s, size_t n)
{
	struct timeval tv = { .tv_sec = 1 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = { .fd = fd, .events = POLLOUT };

				if (poll(&p, 1, 1000) > 0)
					continue;
			}
			log_debug("control: reply not delivered: %s",
				  strerror(errno));
			return;
		}
		s += w;
		n -= w;
	}
}

void ctl_reply(struct ctl_req *r, bool ok, const char *body)
{
	const char *head = ok ? "ok\n" : "error\n";

	write_all(r->ev.fd, head, strlen(head));
	if (body)
		write_all(r->ev.fd, body, strlen(body));
	req_free(r);
}

static void dispatch(struct ctl_req *r)
{
	char *nl = memchr(r->in, '\n', r->inlen);
	char line[640], *w, *save = NULL;
	size_t n;

	n = nl ? (size_t)(nl - r->in) : r->inlen;
	if (n >= sizeof(line)) {
		ctl_reply(r, false, "request line too long\n");
		return;
	}
	memcpy(line, r->in, n);
	line[n] = '\0';
	r->body = nl ? nl + 1 : r->in + r->inlen;
	r->cmd[0] = '\0';
	for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(w, "json")) {
			r->json = true;
			continue;
		}
		if (strlen(r->cmd) + strlen(w) + 2 > sizeof(r->cmd)) {
			ctl_reply(r, false, "request too long\n");
			return;
		}
		if (r->cmd[0])
			strcat(r->cmd, " ");
		strcat(r->cmd, w);
	}
	log_debug("control: '%s'%s", r->cmd, r->json ? " (json)" : "");
	if (tdmd.conf.role == ROLE_COORDINATOR)
		coord_ctl(r);
	else
		member_ctl(r);
}

static void on_client(struct ev *e, short revents)
{
	struct ctl_req *r = e->ctx;
	ssize_t n;

	(void)revents;
	if (r->inlen + 4096 + 1 > r->incap) {
		size_t cap = r->incap ? r->incap * 2 : 8192;
		char *b;

		if (cap > CTL_MAX_REQ + 1) {
			ctl_reply(r, false, "request too large (at most 1 MiB)\n");
			return;
		}
		b = realloc(r->in, cap);
		if (!b) {
			ctl_reply(r, false, "out of memory\n");
			return;
		}
		r->in = b;
		r->incap = cap;
	}
	n = recv(e->fd, r->in + r->inlen, r->incap - r->inlen - 1,
		 MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		req_free(r);
		return;
	}
	r->inlen += n;
	r->in[r->inlen] = '\0';
	if (n > 0)
		return;
	/* EOF: the request is complete.  Stop polling; the reply may wait. */
	ev_del(&r->ev);
	if (!r->inlen) {
		req_free(r);
		return;
	}
	if (memchr(r->in, '\0', r->inlen)) {
		ctl_reply(r, false, "request contains a NUL byte\n");
		return;
	}
	dispatch(r);
}

static void on_accept(struct ev *e, short revents)
{
	struct ctl_req *r;
	int fd;

	(void)revents;
	fd = accept4(e->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (nclients >= CTL_MAX_CLIENTS) {
		write_all(fd, "error\ntoo many control clients\n", 31);
		close(fd);
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		return;
	}
	nclients++;
	r->ev.fd = fd;
	r->ev.events = POLLIN;
	r->ev.cb = on_client;
	r->ev.ctx = r;
	r->ev.slot = -1;
	if (ev_add(&r->ev))
		req_free(r);
}

int ctl_open(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, probe;

	if (tdm_strlcpy(sun.sun_path, path, sizeof(sun.sun_path))) {
		snprintf(err, errlen, "control socket path '%s' too long", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* A stale socket from a crashed tdmd is removed; a live one is not. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 &&
	    connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		close(probe);
		close(fd);
		snprintf(err, errlen, "another tdmd is serving %s", path);
		return -1;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(path, 0660) || listen(fd, 16)) {
		snprintf(err, errlen, "control socket %s: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	lev.fd = fd;
	lev.events = POLLIN;
	lev.cb = on_accept;
	if (ev_add(&lev)) {
		snprintf(err, errlen, "too many sockets");
		close(fd);
		return -1;
	}
	strcpy(ctl_path, path);
	return 0;
}

void ctl_close(void)
{
	if (lev.fd < 0)
		return;
	ev_del(&lev);
	close(lev.fd);
	lev.fd = -1;
	unlink(ctl_path);
}
