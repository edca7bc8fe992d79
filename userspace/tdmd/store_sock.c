// SPDX-License-Identifier: GPL-2.0
/*
 * The plan store's socket: where libtdmgate (tdmgate_follow_tdmd()) takes
 * the plan of a device that has no netdev.  A SOCK_SEQPACKET unix socket,
 * one message per record: at connect, and after every change of the
 * store, each follower gets the store's state as the one rtnetlink
 * message the kernel would send about a tdmwin qdisc (store_msg(): an
 * RTM_NEWQDISC, or an RTM_DELQDISC while the store holds no plan).  The
 * kernel's news and the store's are read by the same parser.
 *
 * Followers only read; what they write is thrown away.  One that does
 * not keep up (its socket's queue full) is dropped: it sees the socket
 * close, reconnects, and gets the whole state again, so news is never
 * lost without the follower knowing.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

/* Followers at most: senders on one host, each with a handle or two. */
#define STORE_MAX_FOLLOWERS	64

struct follower {
	struct ev ev;
	struct store_sock *ss;
	struct follower *next;
};

struct store_sock {
	struct ev lev;			/* the listening socket */
	struct ev_loop *loop;
	struct store *store;
	char path[108];
	struct follower *followers;
	unsigned int n;
	char *buf;			/* TDM_QDISC_MSG_MAX bytes */
};

static void follower_free(struct follower *f)
{
	struct store_sock *ss = f->ss;
	struct follower **pp;

	for (pp = &ss->followers; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	ss->n--;
	ev_del(&f->ev);
	close(f->ev.fd);
	free(f);
}

/* The store's state to f; -1 (logged) if f must go. */
static int follower_send(struct follower *f, const struct nlmsghdr *nlh)
{
	if (send(f->ev.fd, nlh, nlh->nlmsg_len, MSG_DONTWAIT | MSG_NOSIGNAL) ==
	    (ssize_t)nlh->nlmsg_len)
		return 0;
	log_warn("gate socket %s: dropping a follower: %s", f->ss->path,
		 errno == EAGAIN ? "it does not read its news" : strerror(errno));
	return -1;
}

/* A follower's socket: read and thrown away, or its end. */
static void on_follower(struct ev *e, short revents)
{
	struct follower *f = e->ctx;
	char junk[64];
	ssize_t n;

	(void)revents;
	n = recv(e->fd, junk, sizeof(junk), MSG_DONTWAIT);
	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	log_debug("gate socket %s: a follower left", f->ss->path);
	follower_free(f);
}

static void on_accept(struct ev *e, short revents)
{
	struct store_sock *ss = e->ctx;
	struct follower *f;
	int fd;

	(void)revents;
	fd = accept4(e->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (ss->n == STORE_MAX_FOLLOWERS) {
		log_warn("gate socket %s: %d followers already: one refused",
			 ss->path, STORE_MAX_FOLLOWERS);
		close(fd);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return;
	}
	f->ss = ss;
	f->ev.fd = fd;
	f->ev.events = POLLIN;
	f->ev.cb = on_follower;
	f->ev.ctx = f;
	f->ev.slot = -1;
	if (ev_add(ss->loop, &f->ev)) {
		close(fd);
		free(f);
		return;
	}
	f->next = ss->followers;
	ss->followers = f;
	ss->n++;
	if (follower_send(f, store_msg(ss->store, ss->buf)))
		follower_free(f);
	else
		log_debug("gate socket %s: a follower came (%u)", ss->path, ss->n);
}

void store_sock_changed(struct store_sock *ss)
{
	struct follower *f, *next;
	const struct nlmsghdr *nlh;

	if (!ss || !ss->followers)
		return;
	nlh = store_msg(ss->store, ss->buf);
	for (f = ss->followers; f; f = next) {
		next = f->next;
		if (follower_send(f, nlh))
			follower_free(f);
	}
}

unsigned int store_sock_followers(const struct store_sock *ss)
{
	return ss ? ss->n : 0;
}

/* The socket's directory, made 0755 if missing (one level: /run/tdmd). */
static int sock_dir(const char *path, char *err, size_t errlen)
{
	char dir[108];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "gate socket %s: cannot make %s: %s", path,
			 dir, strerror(errno));
		return -1;
	}
	return 0;
}

struct store_sock *store_sock_open(struct ev_loop *loop, struct store *s,
				   const char *path, char *err, size_t errlen)
{
	struct store_sock *ss = calloc(1, sizeof(*ss));

	if (ss)
		ss->buf = malloc(TDM_QDISC_MSG_MAX);
	if (!ss || !ss->buf) {
		if (ss)
			free(ss);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ss->lev.fd = -1;
	if (tdm_strlcpy(ss->path, path, sizeof(ss->path)) ||
	    sock_dir(path, err, errlen) ||
	    (ss->lev.fd = unix_listen(path, SOCK_SEQPACKET, "gate socket",
				      "gate_socket", err, errlen)) < 0) {
		if (strlen(path) >= sizeof(ss->path))
			snprintf(err, errlen, "gate socket path '%s' too long (at most %zu characters)",
				 path, sizeof(ss->path) - 1);
		free(ss->buf);
		free(ss);
		return NULL;
	}
	ss->loop = loop;
	ss->store = s;
	ss->lev.events = POLLIN;
	ss->lev.cb = on_accept;
	ss->lev.ctx = ss;
	ss->lev.slot = -1;
	if (ev_add(loop, &ss->lev)) {
		snprintf(err, errlen, "too many sockets");
		close(ss->lev.fd);
		unlink(path);
		free(ss->buf);
		free(ss);
		return NULL;
	}
	return ss;
}

void store_sock_close(struct store_sock *ss)
{
	if (!ss)
		return;
	while (ss->followers)
		follower_free(ss->followers);
	ev_del(&ss->lev);
	close(ss->lev.fd);
	unlink(ss->path);
	free(ss->buf);
	free(ss);
}
