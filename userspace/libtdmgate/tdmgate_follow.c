// SPDX-License-Identifier: GPL-2.0
/*
 * libtdmgate following the tdmwin qdisc on a device: its plan and state
 * from the qdisc's rtnetlink dump (libtdm's tdm_qdisc_get(), one request
 * through tdm_nl_talk()), and every later change from the RTM_NEWQDISC
 * events the kernel sends RTNLGRP_TC when `tc qdisc change` (or tdmd) changes it
 * (read with tdm_nl_events(), parsed by tdm_qdisc_parse()).  A pending
 * plan's switch and a lease's end come with no event: the gate computes
 * them (tdmgate.c).
 *
 * The lease: an event carries the time left on it when the kernel sent
 * it, which is no earlier than the last time the socket was found empty
 * (quiet_boot), so the end is taken as quiet_boot + left: early, never
 * late, by at most the time between two reads.
 *
 * A device without a netdev has no qdisc: tdmd keeps its plan in a store
 * and sends the same messages on a unix socket (tdmgate_follow_tdmd(),
 * tdmd/store_sock.c): the whole state at connect and after every change,
 * read here with the same parser.  When the socket closes (tdmd stopped),
 * the plan with a lease runs until the lease ends, as the qdisc's does
 * without tdmd; one without a lease holds at once.  Either way the
 * socket is tried again at the next read, then every STORE_RETRY_NS, and
 * the state tdmd sends on connect replaces what was kept.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tdm_qdisc.h"
#include "tdmgate_int.h"

/* How often the clock-reading queries read the news: 1 ms. */
#define FOLLOW_EVERY_NS		1000000LL
/* tdmd's store: how long to wait for its first message, and how often to
 * connect again after it went away.
 */
#define STORE_FIRST_MS		1000
#define STORE_RETRY_NS		100000000LL

static void info_sched(struct tdmgate_sched *out, u32 version, u64 cycle,
		       s64 base, u32 guard, const struct tdm_window *win,
		       unsigned int nwin)
{
	unsigned int i;

	memset(out, 0, sizeof(*out));
	out->version = version;
	out->cycle = cycle;
	out->base = base;
	out->guard = guard;
	out->nwin = nwin;
	for (i = 0; i < nwin && i < TDMGATE_MAX_WINDOWS; i++) {
		out->win[i].offset = win[i].offset;
		out->win[i].length = win[i].length;
	}
}

/* What the dump says, as a plan (its lease as of @boot). */
static void info_to_plan(const struct tdm_qdisc_info *in,
			 struct tdmgate_plan *p, s64 boot)
{
	memset(p, 0, sizeof(*p));
	info_sched(&p->active, in->version, in->cycle_ns, in->base_time,
		   in->guard_ns, in->win, in->nwin);
	if (in->pending)
		info_sched(&p->pending, in->pending_version,
			   in->pending_cycle_ns, in->pending_base,
			   in->pending_guard_ns, in->pending_win,
			   in->pending_nwin);
	p->has_pending = in->pending;
	p->unconfirmed = in->pending_unconfirmed;
	p->hold = in->hold;
	p->link_speed = in->eff_link_speed;
	p->clockid = in->clockid;
	p->lease_ns = in->lease_ns;
	p->lease_left_ns = in->lease_ns ? in->lease_left_ns : 0;
	p->lease_at_boot = boot;
}

int tdmgate_plan_from_qdisc(int ifindex, struct tdmgate_plan *plan)
{
	struct tdm_qdisc_target t = { .ifindex = ifindex };
	struct tdm_qdisc_info *in;
	struct tdm_rtnl r;
	s64 boot;
	int err;

	if (!plan || ifindex <= 0)
		return -EINVAL;
	in = malloc(sizeof(*in));
	if (!in)
		return -ENOMEM;
	err = 0;
	if (tdm_rtnl_open(&r, NULL, 0) < 0) {
		err = -errno;
		goto out;
	}
	/* Before the request: the lease was no shorter then. */
	boot = gate_boot_ns();
	if (tdm_qdisc_get(&r, &t, in, NULL, 0) < 0)
		err = errno ? -errno : -EPROTO;
	else if (!in->present)
		err = -ENOENT;
	else
		info_to_plan(in, plan, boot);
	tdm_rtnl_close(&r);
out:
	free(in);
	return err;
}

/*
 * One message: 0 if it is not about the root qdisc of @ifindex, 1 if it
 * is a tdmwin qdisc's (*in filled), -ENOENT if that qdisc was deleted or
 * another kind is there, -EPROTO if its options are malformed.
 */
static int classify(const struct nlmsghdr *nlh, int ifindex,
		    struct tdm_qdisc_info *in)
{
	int r;

	memset(in, 0, sizeof(*in));
	r = tdm_qdisc_parse(nlh, ifindex, TC_H_ROOT, in);
	if (r <= 0)
		return r < 0 ? -EPROTO : 0;
	return in->present && !in->deleted ? 1 : -ENOENT;
}

int tdmgate_plan_from_msg(const void *buf, size_t len, int ifindex,
			  struct tdmgate_plan *plan)
{
	const struct nlmsghdr *nlh = buf;
	int n = (int)(len > INT32_MAX ? INT32_MAX : len);
	struct tdm_qdisc_info *in;
	int ret = 0;

	if (!buf || !plan || ifindex <= 0)
		return -EINVAL;
	in = calloc(2, sizeof(*in));
	if (!in)
		return -ENOMEM;
	/* mnl_nlmsg_ok() takes a length of 2^32 - 1 for -1: not here. */
	for (; mnl_nlmsg_ok(nlh, n) && nlh->nlmsg_len <= (uint32_t)n;
	     nlh = mnl_nlmsg_next(nlh, &n)) {
		int r = classify(nlh, ifindex, in);

		if (!r)
			continue;
		ret = r;
		if (r == 1)
			in[1] = in[0];
	}
	if (ret == 1)
		info_to_plan(in + 1, plan, 0);
	free(in);
	return ret;
}

/* ---- following ---------------------------------------------------------- */

struct follow_ctx {
	struct tdmgate *g;
	struct tdm_qdisc_info *in;
	int applied;
	int err;
};

/* One event: a change of the qdisc applied, a deletion closes the gate. */
static int follow_cb(const struct nlmsghdr *nlh, void *data)
{
	struct follow_ctx *f = data;
	struct tdmgate *g = f->g;
	struct tdmgate_plan *p;
	int r = classify(nlh, g->follow->ifindex, f->in);

	if (r == -ENOENT) {
		g->gone = true;
		f->applied++;
	} else if (r < 0) {
		f->err = r;
	} else if (r > 0) {
		p = malloc(sizeof(*p));
		if (!p) {
			f->err = -ENOMEM;
			return MNL_CB_OK;
		}
		info_to_plan(f->in, p, g->follow->quiet_boot);
		if (gate_set_plan(g, p, 0)) {
			/* Not the old plan either: hold until one is usable. */
			g->gone = true;
			f->err = -EPROTO;
		}
		f->applied++;
		free(p);
	}
	return MNL_CB_OK;
}

static int discard_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

/* Read the plan afresh (after lost events, and at the start). */
static int follow_dump(struct tdmgate *g)
{
	struct tdmgate_plan *p = malloc(sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	err = tdmgate_plan_from_qdisc(g->follow->ifindex, p);
	if (!err && tdmgate_set_plan(g, p))
		err = -EPROTO;
	if (err == -ENOENT || err == -EPROTO)
		g->gone = true;
	free(p);
	return err;
}

/* ---- tdmd's plan store ---------------------------------------------------- */

/* A connected SOCK_SEQPACKET socket to the store at path: fd or -errno. */
static int store_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, err;

	if (!path || !path[0])
		return -EINVAL;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * One message from the store, waiting up to @ms (0: not at all): its
 * length in buf (TDM_QDISC_MSG_MAX bytes), 0 when the store closed the
 * socket, -EAGAIN when there is none, -ETIMEDOUT when none came in time,
 * -EPROTO when it is no single netlink message, or the socket's error.
 */
static int store_recv(int fd, char *buf, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	const struct nlmsghdr *nlh = (const void *)buf;
	ssize_t n;

	if (ms > 0) {
		int rc = poll(&pfd, 1, ms);

		if (rc < 0)
			return -errno;
		if (!rc)
			return -ETIMEDOUT;
	}
	n = recv(fd, buf, TDM_QDISC_MSG_MAX, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return 0;
	if (n > TDM_QDISC_MSG_MAX || (size_t)n < sizeof(*nlh) ||
	    nlh->nlmsg_len != (uint32_t)n)
		return -EPROTO;
	return (int)n;
}

/*
 * A store's message as the kernel's: 1 (a plan, *in), -ENOENT (no plan),
 * -EPROTO (not the store's qdisc, or malformed).
 */
static int store_classify(const char *buf, struct tdm_qdisc_info *in)
{
	int r = classify((const struct nlmsghdr *)buf, 0, in);

	return r ? r : -EPROTO;
}

/* The store's first message on fd, as a plan (its lease as of @boot). */
static int store_first(int fd, struct tdmgate_plan *plan, s64 boot)
{
	struct tdm_qdisc_info *in = malloc(sizeof(*in));
	char *buf = malloc(TDM_QDISC_MSG_MAX);
	int r = -ENOMEM;

	if (in && buf) {
		r = store_recv(fd, buf, STORE_FIRST_MS);
		if (r == 0)
			r = -ECONNRESET;
		else if (r > 0)
			r = store_classify(buf, in);
		if (r == 1) {
			info_to_plan(in, plan, boot);
			r = 0;
		}
	}
	free(in);
	free(buf);
	return r;
}

int tdmgate_plan_from_tdmd(const char *path, struct tdmgate_plan *plan)
{
	s64 boot = gate_boot_ns();
	int fd, err;

	if (!plan)
		return -EINVAL;
	fd = store_connect(path);
	if (fd < 0)
		return fd;
	err = store_first(fd, plan, boot);
	close(fd);
	return err;
}

/*
 * The store went away, or dropped us (we read too late: its queue to us
 * was full): the lease decides, or the gate holds.  The next read tries
 * at once (a dropped follower gets the whole state again), then every
 * STORE_RETRY_NS.
 */
static void store_lost(struct tdmgate *g, s64 boot)
{
	struct gate_follow *fo = g->follow;

	close(fo->sock);
	fo->sock = -1;
	fo->retry_boot = boot;
	if (!g->lease_ns)
		g->gone = true;
}

/* What the store sent since the last read, each as the kernel's news. */
static void store_read(struct tdmgate *g, struct follow_ctx *f, s64 boot)
{
	struct gate_follow *fo = g->follow;
	char *buf;
	int n;

	if (fo->sock < 0) {
		if (boot < fo->retry_boot)
			return;
		fo->sock = store_connect(fo->path);
		if (fo->sock < 0) {
			fo->retry_boot = boot + STORE_RETRY_NS;
			return;
		}
	}
	buf = malloc(TDM_QDISC_MSG_MAX);
	if (!buf) {
		f->err = -ENOMEM;
		return;
	}
	for (;;) {
		n = store_recv(fo->sock, buf, 0);
		if (n == -EAGAIN)
			break;
		if (n > 0 && classify((const struct nlmsghdr *)buf, 0, f->in)) {
			follow_cb((const struct nlmsghdr *)buf, f);
			continue;
		}
		/* Closed, an error, or garbage: the stream is over. */
		if (n != 0)
			f->err = n < 0 ? n : -EPROTO;
		store_lost(g, boot);
		f->applied++;
		break;
	}
	free(buf);
}

int tdmgate_follow_tdmd(struct tdmgate *g, const char *path)
{
	struct tdmgate_plan *p;
	struct gate_follow *f;
	s64 boot = gate_boot_ns();
	int fd, err;

	if (!g || !path)
		return -EINVAL;
	fd = store_connect(path);
	if (fd < 0)
		return fd;
	p = malloc(sizeof(*p));
	f = calloc(1, sizeof(*f));
	if (!p || !f) {
		err = -ENOMEM;
		goto fail;
	}
	err = store_first(fd, p, boot);
	if (err && err != -ENOENT)
		goto fail;
	if (!err && tdmgate_set_plan(g, p)) {
		err = -EPROTO;
		goto fail;
	}
	f->tdmd = true;
	f->sock = fd;
	f->quiet_boot = boot;
	strcpy(f->path, path);	/* store_connect() checked its length */
	gate_follow_stop(g);
	g->follow = f;
	/* No plan in the store yet: hold until one comes. */
	if (err == -ENOENT)
		g->gone = true;
	free(p);
	return 0;
fail:
	close(fd);
	free(p);
	free(f);
	return err;
}

int tdmgate_follow_read(struct tdmgate *g)
{
	struct follow_ctx f = { .g = g };
	s64 boot;
	int n;

	if (!g)
		return -EINVAL;
	if (!g->follow)
		return -EBADF;
	f.in = malloc(sizeof(*f.in));
	if (!f.in)
		return -ENOMEM;
	boot = gate_boot_ns();
	if (g->follow->tdmd) {
		store_read(g, &f, boot);
		n = 0;
	} else {
		n = tdm_nl_events(&g->follow->ev, follow_cb, &f, NULL, 0);
	}
	if (n < 0 && errno == ENOBUFS) {
		/*
		 * The kernel dropped news: the newest, those that found the
		 * queue full.  What is still queued is older than what was
		 * lost: thrown away, then the state read afresh.  News queued
		 * after this is no older than the dump, and ends on the
		 * newest state.
		 */
		while (tdm_nl_events(&g->follow->ev, discard_cb, NULL, NULL, 0) < 0 &&
		       errno == ENOBUFS)
			;
		f.err = follow_dump(g);
		f.applied++;
	} else if (n < 0) {
		f.err = -errno;
	}
	/* Found empty after boot: what comes next was sent later. */
	g->follow->quiet_boot = boot;
	free(f.in);
	return f.err ? f.err : f.applied;
}

void gate_follow_tick(struct tdmgate *g, s64 now)
{
	/* Both >= 0; a clock stepped back reads at once. */
	if (!g->follow || (now >= g->follow->last_read &&
			   now - g->follow->last_read < FOLLOW_EVERY_NS))
		return;
	g->follow->last_read = now;
	tdmgate_follow_read(g);
}

int tdmgate_follow_fd(const struct tdmgate *g)
{
	if (g && g->follow && g->follow->tdmd)
		return g->follow->sock >= 0 ? g->follow->sock : -EBADF;
	if (!g || !g->follow || !g->follow->ev.sock)
		return -EBADF;
	return mnl_socket_get_fd(g->follow->ev.sock);
}

void gate_follow_stop(struct tdmgate *g)
{
	if (!g->follow)
		return;
	if (g->follow->tdmd && g->follow->sock >= 0)
		close(g->follow->sock);
	tdm_nl_close(&g->follow->ev);
	free(g->follow);
	g->follow = NULL;
}

int tdmgate_follow(struct tdmgate *g, int ifindex)
{
	struct gate_follow *f;
	int err;

	if (!g || ifindex <= 0)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->ifindex = ifindex;
	f->last_read = 0;
	if (tdm_nl_open(&f->ev, NETLINK_ROUTE, NULL, 0) < 0 ||
	    tdm_nl_subscribe(&f->ev, RTNLGRP_TC, NULL, 0) < 0) {
		err = -errno;
		tdm_nl_close(&f->ev);
		free(f);
		return err;
	}
	/* Subscribed first: no change between the dump and the events. */
	f->quiet_boot = gate_boot_ns();
	gate_follow_stop(g);
	g->follow = f;
	err = follow_dump(g);
	if (err && err != -ENOENT)
		gate_follow_stop(g);
	return err == -ENOENT ? 0 : err;
}
