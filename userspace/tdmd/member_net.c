// SPDX-License-Identifier: GPL-2.0
/*
 * The member role on the real system: the TCP session with the
 * coordinator (struct conn on the event loop), the tdmwin qdisc over
 * rtnetlink, ptp4l's management socket, the interface's PHC and the
 * clocks.  Everything the member decides is in member.c, which sees
 * these only through a struct member_io.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tdm_log.h"
#include "tdm_phc.h"
#include "tdm_ptp.h"
#include "tdm_util.h"
#include "tdmd.h"

struct member_net {
	struct role role;		/* first: the role_ops callbacks get it */
	const struct tdmd *d;
	struct member *me;
	struct member_io io;
	struct tdm_rtnl rtnl;
	bool rtnl_open;
	/* gate tdmd: the plan store instead of the qdisc, and its socket */
	struct store *store;
	struct store_sock *ss;
	struct tdm_ptp ptp;
	bool ptp_open;
	struct tdm_phc phc;		/* fd -1: closed */
	/* the session: at most one of connecting (cev) and c */
	struct ev cev;			/* connect() in progress */
	struct conn *c;
	bool busy;			/* inside c's input */
	bool dropped;			/* free c once no longer busy */
};

/* ---- the qdisc ---- */

static int net_qdisc_resolve(void *ctx, struct tdm_qdisc_target *t,
			     char *err, size_t errlen)
{
	(void)ctx;
	return tdm_qdisc_resolve(t, err, errlen);
}

static int net_qdisc_get(void *ctx, const struct tdm_qdisc_target *t,
			 struct tdm_qdisc_info *info, char *err, size_t errlen)
{
	return tdm_qdisc_get(&((struct member_net *)ctx)->rtnl, t, info, err,
			     errlen);
}

static int net_qdisc_install(void *ctx, const struct tdm_qdisc_target *t,
			     const struct tdm_plan *p, const char *name,
			     bool hold, char *err, size_t errlen)
{
	return tdm_qdisc_install(&((struct member_net *)ctx)->rtnl, t, p, name,
				 hold, err, errlen);
}

static int net_qdisc_prepare(void *ctx, const struct tdm_qdisc_target *t,
			     const struct tdm_plan *p, const char *name,
			     char *err, size_t errlen)
{
	return tdm_qdisc_prepare(&((struct member_net *)ctx)->rtnl, t, p, name,
				 err, errlen);
}

static int net_qdisc_confirm(void *ctx, const struct tdm_qdisc_target *t,
			     uint32_t version, char *err, size_t errlen)
{
	return tdm_qdisc_confirm(&((struct member_net *)ctx)->rtnl, t, version,
				 err, errlen);
}

static int net_qdisc_abort(void *ctx, const struct tdm_qdisc_target *t,
			   uint32_t version, char *err, size_t errlen)
{
	return tdm_qdisc_abort(&((struct member_net *)ctx)->rtnl, t, version,
			       err, errlen);
}

static int net_qdisc_renew(void *ctx, const struct tdm_qdisc_target *t,
			   char *err, size_t errlen)
{
	return tdm_qdisc_renew(&((struct member_net *)ctx)->rtnl, t, err,
			       errlen);
}

static int net_qdisc_set_lease(void *ctx, const struct tdm_qdisc_target *t,
			       char *err, size_t errlen)
{
	return tdm_qdisc_set_lease(&((struct member_net *)ctx)->rtnl, t, err,
				   errlen);
}

static int net_qdisc_set_hold(void *ctx, const struct tdm_qdisc_target *t,
			      bool hold, char *err, size_t errlen)
{
	return tdm_qdisc_set_hold(&((struct member_net *)ctx)->rtnl, t, hold,
				  err, errlen);
}

static int net_tx_queues(void *ctx, const struct tdm_qdisc_target *t,
			 unsigned int *n, char *err, size_t errlen)
{
	return tdm_qdisc_tx_queues(&((struct member_net *)ctx)->rtnl, t, n,
				   err, errlen);
}

static int net_qdisc_mq(void *ctx, const struct tdm_qdisc_target *t,
			bool create, uint32_t *handle, char *err,
			size_t errlen)
{
	return tdm_qdisc_mq(&((struct member_net *)ctx)->rtnl, t, create,
			    handle, err, errlen);
}

static int net_filter_sync(void *ctx, const struct tdm_qdisc_target *t,
			   const struct tdm_filter *want, unsigned int n,
			   char *err, size_t errlen)
{
	return tdm_filter_sync(&((struct member_net *)ctx)->rtnl, t, want, n,
			       err, errlen);
}

static int net_qdisc_txtime(void *ctx, const struct tdm_qdisc_target *t,
			    const struct tdm_etf *etf, char *err,
			    size_t errlen)
{
	return tdm_qdisc_txtime(&((struct member_net *)ctx)->rtnl, t, etf,
				err, errlen);
}

/* ---- ptp4l and the PHC ---- */

static int net_ptp_open(void *ctx, const char *path, uint8_t domain,
			char *err, size_t errlen)
{
	struct member_net *net = ctx;

	if (tdm_ptp_open(&net->ptp, path, domain, err, errlen))
		return -1;
	net->ptp_open = true;
	return 0;
}

static int net_ptp_query(void *ctx, int timeout_ms,
			 struct tdm_ptp_status *st, char *err, size_t errlen)
{
	return tdm_ptp_query(&((struct member_net *)ctx)->ptp, timeout_ms, st,
			     err, errlen);
}

static int net_phc_index(void *ctx, const char *ifname, int *index,
			 char *err, size_t errlen)
{
	struct member_net *net = ctx;

	/* A device without a netdev shows the kernel no PHC. */
	if (net->store) {
		*index = -1;
		return 0;
	}
	return tdm_phc_index(ifname, index, NULL, err, errlen);
}

static int net_phc_open(void *ctx, int index, char *err, size_t errlen)
{
	return tdm_phc_open(&((struct member_net *)ctx)->phc, index, err,
			    errlen);
}

static int net_phc_read(void *ctx, struct tdm_phc_offset *o, char *err,
			size_t errlen)
{
	return tdm_phc_read(&((struct member_net *)ctx)->phc, o, err, errlen);
}

/* ---- the session ---- */

static void session_free(struct member_net *net)
{
	if (net->cev.fd >= 0) {
		ev_del(&net->cev);
		close(net->cev.fd);
		net->cev.fd = -1;
	}
	if (net->c && net->busy) {
		net->dropped = true;
		return;
	}
	conn_free(net->c);
	net->c = NULL;
}

static void net_close(void *ctx)
{
	session_free(ctx);
}

static int net_put_nonce(void *ctx, struct nlmsghdr *nlh, char *err,
			 size_t errlen)
{
	struct member_net *net = ctx;

	if (tdm_put_nonce(&net->c->sess, nlh, TDM_MAX_FRAME)) {
		snprintf(err, errlen, "cannot make a nonce: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int net_send(void *ctx, struct nlmsghdr *nlh, char *err,
		    size_t errlen)
{
	struct member_net *net = ctx;

	if (!net->c || net->dropped) {
		snprintf(err, errlen, "not connected");
		return -1;
	}
	return conn_send(net->c, nlh, err, errlen);
}

static int on_frame(struct conn *c, const struct tdm_msg *m, char *err,
		    size_t errlen)
{
	struct member_net *net = c->ev.ctx;

	/* The member closed the session inside an earlier frame. */
	if (net->dropped) {
		snprintf(err, errlen, "closed");
		return -1;
	}
	return member_frame(net->me, m, err, errlen);
}

static void on_conn_io(struct ev *e, short revents)
{
	struct member_net *net = e->ctx;
	char err[256] = "";
	int rc;

	if ((revents & (POLLERR | POLLHUP | POLLNVAL)) && !(revents & POLLIN)) {
		member_lost(net->me, "connection lost");
		return;
	}
	if ((revents & POLLOUT) && conn_output(net->c, err, sizeof(err))) {
		member_lost(net->me, err);
		return;
	}
	if (!(revents & POLLIN))
		return;
	net->busy = true;
	rc = conn_input(net->c, on_frame, err, sizeof(err));
	net->busy = false;
	if (net->dropped) {
		net->dropped = false;
		conn_free(net->c);
		net->c = NULL;
	} else if (rc) {
		member_lost(net->me, err);
	}
}

static void on_connected(struct ev *e, short revents)
{
	struct member_net *net = e->ctx;
	int fd = e->fd, soerr = 0;
	socklen_t sl = sizeof(soerr);

	(void)revents;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
		member_lost(net->me, strerror(soerr ? soerr : errno));
		return;
	}
	ev_del(e);
	e->fd = -1;
	net->c = conn_new(net->d->loop, fd, false, net->d->key, net->d->keylen,
			  on_conn_io, net);
	if (!net->c) {
		close(fd);
		member_lost(net->me, "out of memory");
		return;
	}
	member_connected(net->me);
}

static int net_connect(void *ctx, const struct tdmd_hostport *hp, char *addr,
		       size_t addrlen, char *err, size_t errlen)
{
	struct member_net *net = ctx;
	const struct tdmd_conf *cf = &net->d->conf;
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	}, *res, *ai;
	int rc, fd = -1, one = 1;

	rc = getaddrinfo(hp->host, hp->port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "cannot resolve %s: %s", hp->host,
			 gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		/* Our own control traffic takes the bypass class. */
		if (cf->control_priority >= 0 &&
		    setsockopt(fd, SOL_SOCKET, SO_PRIORITY,
			       &cf->control_priority, sizeof(int)))
			log_warn("SO_PRIORITY %d: %s", cf->control_priority,
				 strerror(errno));
		sockaddr_str(ai->ai_addr, addr, addrlen);
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    errno == EINPROGRESS)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to %s: %s", hp->host,
			 strerror(errno));
		return -1;
	}
	net->cev.fd = fd;
	net->cev.events = POLLOUT;
	net->cev.cb = on_connected;
	net->cev.ctx = net;
	if (ev_add(net->d->loop, &net->cev)) {
		close(fd);
		net->cev.fd = -1;
		snprintf(err, errlen, "too many sockets");
		return -1;
	}
	return 0;
}

/* ---- clocks ---- */

static int64_t net_clock_ns(void *ctx, int clockid)
{
	(void)ctx;
	return tdm_clock_ns(clockid);
}

static int64_t net_mono_ns(void *ctx)
{
	(void)ctx;
	return tdm_mono_ns();
}

static uint64_t net_random(void *ctx)
{
	uint64_t r;

	(void)ctx;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = 0;
	return r;
}

/* ---- the plan store (gate tdmd) ---- */

static void store_changed(void *ctx)
{
	store_sock_changed(((struct member_net *)ctx)->ss);
}

static unsigned int net_gate_followers(void *ctx)
{
	return store_sock_followers(((struct member_net *)ctx)->ss);
}

/* The store for the device and its socket; its qdisc operations in io. */
static int store_start(struct member_net *net, char *err, size_t errlen)
{
	const struct tdmd_conf *cf = &net->d->conf;
	const struct store_ops ops = {
		.clock_ns = net_clock_ns,
		.changed = store_changed,
		.ctx = net,
	};

	net->store = store_new(cf->target.ifname, &ops, err, errlen);
	if (!net->store)
		return -1;
	net->ss = store_sock_open(net->d->loop, net->store, cf->gate_socket,
				  err, errlen);
	if (!net->ss)
		return -1;
	store_member_io(net->store, &net->io);
	net->io.gate_followers = net_gate_followers;
	log_info("gate tdmd: the plan of %s is kept here, for libtdmgate on %s",
		 cf->target.ifname, cf->gate_socket);
	return 0;
}

/* ---- the role ---- */

static void net_stop(struct role *r)
{
	struct member_net *net = (struct member_net *)r;

	member_free(net->me);
	store_sock_close(net->ss);
	store_free(net->store);
	net->busy = false;
	session_free(net);
	if (net->ptp_open)
		tdm_ptp_close(&net->ptp);
	tdm_phc_close(&net->phc);
	if (net->rtnl_open)
		tdm_rtnl_close(&net->rtnl);
	free(net);
}

static struct role *net_start(const struct tdmd *d, char *err, size_t errlen)
{
	struct member_net *net = calloc(1, sizeof(*net));

	if (!net) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	net->role.ops = &member_role_ops;
	net->d = d;
	net->cev.fd = -1;
	net->cev.slot = -1;
	net->phc.fd = -1;
	net->phc.index = -1;
	net->io = (struct member_io){
		.qdisc_resolve = net_qdisc_resolve,
		.qdisc_get = net_qdisc_get,
		.qdisc_install = net_qdisc_install,
		.qdisc_prepare = net_qdisc_prepare,
		.qdisc_confirm = net_qdisc_confirm,
		.qdisc_abort = net_qdisc_abort,
		.qdisc_renew = net_qdisc_renew,
		.qdisc_set_lease = net_qdisc_set_lease,
		.qdisc_set_hold = net_qdisc_set_hold,
		.tx_queues = net_tx_queues,
		.qdisc_mq = net_qdisc_mq,
		.qdisc_txtime = net_qdisc_txtime,
		.filter_sync = net_filter_sync,
		.ptp_open = net_ptp_open,
		.ptp_query = net_ptp_query,
		.phc_index = net_phc_index,
		.phc_open = net_phc_open,
		.phc_read = net_phc_read,
		.connect = net_connect,
		.put_nonce = net_put_nonce,
		.send = net_send,
		.close = net_close,
		.mono_ns = net_mono_ns,
		.clock_ns = net_clock_ns,
		.random = net_random,
		.ctx = net,
	};
	if (d->conf.gate == GATE_TDMD) {
		if (store_start(net, err, errlen)) {
			net_stop(&net->role);
			return NULL;
		}
	} else {
		if (tdm_rtnl_open(&net->rtnl, err, errlen)) {
			net_stop(&net->role);
			return NULL;
		}
		net->rtnl_open = true;
	}
	net->me = member_new(&d->conf, &net->io, err, errlen);
	if (!net->me) {
		net_stop(&net->role);
		return NULL;
	}
	return &net->role;
}

static int64_t net_tick(struct role *r, int64_t now)
{
	return member_tick(((struct member_net *)r)->me, now);
}

static void net_control(struct role *r, struct ctl_req *req)
{
	member_control(((struct member_net *)r)->me, req);
}

static void net_reload(struct role *r, const struct tdmd_conf *old)
{
	member_reload(((struct member_net *)r)->me, old);
}

const struct role_ops member_role_ops = {
	.role = ROLE_MEMBER,
	.net_admin = true,
	.start = net_start,
	.tick = net_tick,
	.control = net_control,
	.reload = net_reload,
	.stop = net_stop,
};
