// SPDX-License-Identifier: GPL-2.0
/*
 * The local control socket, for tdmctl.  A UNIX stream socket (mode 0660)
 * takes one request per connection:
 *
 *   request:  "COMMAND [json]\n" [body]  then the client shuts down writing
 *   reply:    "ok\n" body   or   "error\n" message
 *
 * Commands: "status", "plan show", "plan history", "plan push" (the body
 * is a plan file), which the role answers (role_ops.control), and
 * "reload", which the daemon answers (ctl_set_reload).  A reply may
 * be deferred (plan push waits for acks): the role keeps the request until
 * it calls ctl_reply().
 *
 * Nothing here blocks the loop: a reply is queued and written as the
 * socket takes it.  A reply larger than CTL_MAX_OUT, or a client that
 * reads nothing of its reply for CTL_STALL_NS, is dropped (logged).
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
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
#define CTL_MAX_OUT	(4 * 1024 * 1024)	/* queued reply bytes per client */
#define CTL_STALL_NS	(10 * (int64_t)TDM_NSEC_PER_SEC)
/* A client that has not finished sending its request after this long is
 * dropped: idle clients would otherwise fill the CTL_MAX_CLIENTS slots
 * and lock tdmctl out.
 */
#define CTL_IDLE_NS	(10 * (int64_t)TDM_NSEC_PER_SEC)
#define CTL_MAX_CLIENTS	64

struct ctl {
	struct ev_loop *loop;
	struct ev lev;
	char path[108];
	struct role *role;
	int (*reload)(void *ctx, char *msg, size_t len);
	void *reload_ctx;
	struct client *clients;
	int nclients;
};

/* One control connection: reading its request, held by the role, or
 * writing its reply.
 */
struct client {
	struct ctl_req req;		/* what the role sees */
	struct ctl *ctl;
	struct ev ev;
	char *in;
	size_t inlen, incap;
	char *out;
	size_t outlen, outoff;
	bool writing;
	int64_t progress;		/* monotonic: last read while reading the
					 * request; reply queued or last written
					 */
	char cmd[640];
	struct client *next;
};

static void client_free(struct client *cl)
{
	struct client **pp;

	for (pp = &cl->ctl->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	}
	cl->ctl->nclients--;
	ev_del(&cl->ev);
	close(cl->ev.fd);
	free(cl->in);
	free(cl->out);
	free(cl);
}

/* Write what the socket takes; 1 when all is out, 0 to wait, -1 on error. */
static int flush_out(struct client *cl)
{
	while (cl->outoff < cl->outlen) {
		ssize_t w = send(cl->ev.fd, cl->out + cl->outoff,
				 cl->outlen - cl->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			log_debug("control: reply not delivered: %s",
				  strerror(errno));
			return -1;
		}
		cl->outoff += w;
		cl->progress = tdm_mono_ns();
	}
	return 1;
}

static void on_writable(struct ev *e, short revents)
{
	struct client *cl = e->ctx;

	(void)revents;
	if (flush_out(cl))
		client_free(cl);
}

static void reply(struct ctl_req *r, bool ok, const char *body)
{
	struct client *cl = (struct client *)((char *)r -
					      offsetof(struct client, req));
	const char *head = ok ? "ok\n" : "error\n";
	size_t hl = strlen(head), bl = body ? strlen(body) : 0;

	if (hl + bl > CTL_MAX_OUT) {
		log_warn("control: a reply of %zu bytes to '%s' is over %d bytes; dropping the client",
			 hl + bl, cl->cmd, CTL_MAX_OUT);
		client_free(cl);
		return;
	}
	cl->out = malloc(hl + bl);
	if (!cl->out) {
		log_warn("control: no memory for a reply to '%s'", cl->cmd);
		client_free(cl);
		return;
	}
	memcpy(cl->out, head, hl);
	if (bl)
		memcpy(cl->out + hl, body, bl);
	cl->outlen = hl + bl;
	cl->progress = tdm_mono_ns();
	if (flush_out(cl)) {
		client_free(cl);
		return;
	}
	cl->writing = true;
	ev_del(&cl->ev);
	cl->ev.events = POLLOUT;
	cl->ev.cb = on_writable;
	if (ev_add(cl->ctl->loop, &cl->ev))
		client_free(cl);
}

static void dispatch(struct client *cl)
{
	char *nl = memchr(cl->in, '\n', cl->inlen);
	char line[640], *w, *save = NULL;
	size_t n;

	n = nl ? (size_t)(nl - cl->in) : cl->inlen;
	if (n >= sizeof(line)) {
		ctl_reply(&cl->req, false, "request line too long\n");
		return;
	}
	memcpy(line, cl->in, n);
	line[n] = '\0';
	cl->req.body = nl ? nl + 1 : cl->in + cl->inlen;
	cl->cmd[0] = '\0';
	for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(w, "json")) {
			cl->req.json = true;
			continue;
		}
		if (strlen(cl->cmd) + strlen(w) + 2 > sizeof(cl->cmd)) {
			ctl_reply(&cl->req, false, "request too long\n");
			return;
		}
		if (cl->cmd[0])
			strcat(cl->cmd, " ");
		strcat(cl->cmd, w);
	}
	log_debug("control: '%s'%s", cl->cmd, cl->req.json ? " (json)" : "");
	if (!strcmp(cl->cmd, "reload") && cl->ctl->reload) {
		char msg[4096];
		int rc = cl->ctl->reload(cl->ctl->reload_ctx, msg, sizeof(msg));

		ctl_reply(&cl->req, rc == 0, msg);
		return;
	}
	cl->ctl->role->ops->control(cl->ctl->role, &cl->req);
}

static void on_readable(struct ev *e, short revents)
{
	struct client *cl = e->ctx;
	ssize_t n;

	(void)revents;
	if (cl->inlen + 4096 + 1 > cl->incap) {
		size_t cap = cl->incap ? cl->incap * 2 : 8192;
		char *b;

		if (cap > CTL_MAX_REQ + 1) {
			ctl_reply(&cl->req, false, "request too large (at most 1 MiB)\n");
			return;
		}
		b = realloc(cl->in, cap);
		if (!b) {
			ctl_reply(&cl->req, false, "out of memory\n");
			return;
		}
		cl->in = b;
		cl->incap = cap;
	}
	n = recv(e->fd, cl->in + cl->inlen, cl->incap - cl->inlen - 1,
		 MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		client_free(cl);
		return;
	}
	cl->inlen += n;
	cl->in[cl->inlen] = '\0';
	if (n > 0) {
		cl->progress = tdm_mono_ns();
		return;
	}
	/* EOF: the request is complete.  Stop polling; the reply may wait. */
	ev_del(&cl->ev);
	if (!cl->inlen) {
		client_free(cl);
		return;
	}
	if (memchr(cl->in, '\0', cl->inlen)) {
		ctl_reply(&cl->req, false, "request contains a NUL byte\n");
		return;
	}
	dispatch(cl);
}

static void on_accept(struct ev *e, short revents)
{
	static const char busy[] = "error\ntoo many control clients\n";
	struct ctl *ctl = e->ctx;
	struct client *cl;
	int fd;

	(void)revents;
	fd = accept4(e->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (ctl->nclients >= CTL_MAX_CLIENTS) {
		/* A fresh socket takes these few bytes at once. */
		if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			log_debug("control: reply not delivered: %s",
				  strerror(errno));
		close(fd);
		return;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(fd);
		return;
	}
	cl->ctl = ctl;
	cl->next = ctl->clients;
	ctl->clients = cl;
	ctl->nclients++;
	cl->req.cmd = cl->cmd;
	cl->req.reply = reply;
	cl->ev.fd = fd;
	cl->ev.events = POLLIN;
	cl->ev.cb = on_readable;
	cl->ev.ctx = cl;
	cl->ev.slot = -1;
	cl->progress = tdm_mono_ns();
	if (ev_add(cl->ctl->loop, &cl->ev))
		client_free(cl);
}

int64_t ctl_tick(struct ctl *ctl, int64_t now)
{
	int64_t next = INT64_MAX;
	struct client *cl, *nx;

	for (cl = ctl->clients; cl; cl = nx) {
		int64_t dl = cl->progress + CTL_STALL_NS;

		nx = cl->next;
		if (!cl->writing && cl->ev.slot >= 0) {
			/* Still reading its request. */
			dl = cl->progress + CTL_IDLE_NS;
			if (now >= dl) {
				log_info("control: a client sent no complete request in %lld s; dropped",
					 (long long)(CTL_IDLE_NS / TDM_NSEC_PER_SEC));
				client_free(cl);
				continue;
			}
			if (dl < next)
				next = dl;
			continue;
		}
		if (!cl->writing)
			continue;
		if (now >= dl) {
			log_warn("control: the client asking '%s' read nothing of its reply for %lld s (%zu bytes left); dropped",
				 cl->cmd, (long long)(CTL_STALL_NS / TDM_NSEC_PER_SEC),
				 cl->outlen - cl->outoff);
			client_free(cl);
			continue;
		}
		if (dl < next)
			next = dl;
	}
	return next;
}

int unix_listen(const char *path, int type, const char *what,
		const char *key, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, probe;

	if (tdm_strlcpy(sun.sun_path, path, sizeof(sun.sun_path))) {
		snprintf(err, errlen, "%s path '%s' too long (at most %zu characters)",
			 what, path, sizeof(sun.sun_path) - 1);
		return -1;
	}
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/*
	 * Only a stale socket (a crashed tdmd's: nobody accepts on it) is
	 * removed.  A live one, or anything that is not a socket, is an
	 * error: the key may point at a file that is not ours.
	 */
	if (lstat(path, &st) == 0) {
		const char *why = NULL;

		if (!S_ISSOCK(st.st_mode)) {
			why = "exists and is not a socket; remove it or set";
		} else {
			probe = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
			if (probe < 0)
				why = "cannot be probed";
			else if (connect(probe, (struct sockaddr *)&sun,
					 sizeof(sun)) == 0)
				why = "is served by another tdmd";
			else if (errno != ECONNREFUSED)
				why = strerror(errno);
			if (probe >= 0)
				close(probe);
		}
		if (why) {
			snprintf(err, errlen, "%s %s %s%s%s", what, path, why,
				 S_ISSOCK(st.st_mode) ? "" : " ",
				 S_ISSOCK(st.st_mode) ? "" : key);
			close(fd);
			return -1;
		}
		unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(path, 0660) || listen(fd, 16)) {
		snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct ctl *ctl_open(struct ev_loop *loop, const char *path,
		     struct role *role, char *err, size_t errlen)
{
	struct ctl *ctl;
	int fd;

	ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	fd = unix_listen(path, SOCK_STREAM, "control socket", "control_socket",
			 err, errlen);
	if (fd < 0) {
		free(ctl);
		return NULL;
	}
	ctl->role = role;
	strcpy(ctl->path, path);	/* unix_listen() checked its length */
	ctl->lev.fd = fd;
	ctl->lev.events = POLLIN;
	ctl->lev.cb = on_accept;
	ctl->lev.ctx = ctl;
	ctl->lev.slot = -1;
	ctl->loop = loop;
	if (ev_add(loop, &ctl->lev)) {
		snprintf(err, errlen, "too many sockets");
		close(fd);
		unlink(path);
		free(ctl);
		return NULL;
	}
	return ctl;
}

void ctl_set_reload(struct ctl *c, int (*fn)(void *ctx, char *msg, size_t len),
		    void *ctx)
{
	c->reload = fn;
	c->reload_ctx = ctx;
}

/*
 * After the role stopped (it holds no request any more): what is left of
 * the replies gets one last chance to go out.
 */
void ctl_close(struct ctl *ctl)
{
	if (!ctl)
		return;
	while (ctl->clients) {
		struct client *cl = ctl->clients;

		if (cl->writing && flush_out(cl) == 0)
			log_debug("control: %zu bytes of a reply to '%s' not delivered",
				  cl->outlen - cl->outoff, cl->cmd);
		client_free(cl);
	}
	ev_del(&ctl->lev);
	close(ctl->lev.fd);
	unlink(ctl->path);
	free(ctl);
}
