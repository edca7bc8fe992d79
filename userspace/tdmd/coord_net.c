// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator role on the network: TCP listeners, one authenticated
 * connection (struct conn) per member, and the real clocks.  Everything
 * the coordinator decides is in coord.c, which sees a connection only as
 * an opaque link (struct coord_io).
 */
#include <errno.h>
#include <libgen.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tdm_cfg.h"
#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

struct coord_net {
	struct role role;		/* first: the role_ops callbacks get it */
	const struct tdmd *d;
	struct coord *co;
	struct coord_io io;
	struct ev lev[TDMD_MAX_LISTEN * 2];
	int nlisten;
	int64_t accept_resume;		/* listeners paused until then, or 0 */
};

/* After accept() ran out of descriptors or memory: how long to pause. */
#define ACCEPT_BACKOFF_NS	(100 * 1000000LL)

/* One member connection. */
struct link {
	struct coord_net *net;
	struct conn *c;
	struct coord_peer *peer;
	bool busy;			/* inside its own input */
	bool dropped;			/* free once no longer busy */
};

static void link_free(struct link *l)
{
	conn_free(l->c);
	free(l);
}

static int net_send(void *ctx, void *link, struct nlmsghdr *nlh, char *err,
		    size_t errlen)
{
	struct link *l = link;

	(void)ctx;
	return conn_send(l->c, nlh, err, errlen);
}

static void net_drop(void *ctx, void *link)
{
	struct link *l = link;

	(void)ctx;
	if (!l->busy) {
		link_free(l);
		return;
	}
	l->dropped = true;
	l->c->closing = true;
}

static int64_t net_mono_ns(void *ctx)
{
	(void)ctx;
	return tdm_mono_ns();
}

static int64_t net_clock_ns(void *ctx, int clockid)
{
	(void)ctx;
	return tdm_clock_ns(clockid);
}

/* ---- state_file: the highest plan version issued ---- */

static int state_line(void *ctx, const struct tdm_cfg_line *l, char *err,
		      size_t errlen)
{
	uint32_t *v = ctx;
	uint64_t u;
	char e[128];

	if (!l->key)
		return tdm_set_err(err, errlen, "unexpected section [%s]", l->section);
	if (strcmp(l->key, "issued") || l->argc != 1)
		return tdm_set_err(err, errlen, "expected 'issued VERSION', not '%s'",
				   l->key);
	if (tdm_parse_u64(l->argv[0], UINT32_MAX, &u, e, sizeof(e)))
		return tdm_set_err(err, errlen, "issued: %s", e);
	*v = (uint32_t)u;
	return 0;
}

/*
 * Can a state file be written at path?  Its directory (in dir) must be
 * writable, or missing with a writable parent: then create it (0755) if
 * asked (tdmd), or only say so (tdmd -n).  0, or -1 with errno.
 */
static int state_dir(const char *path, bool create, char *dir, size_t len)
{
	char parent[PATH_MAX];

	tdm_strlcpy(dir, path, len);
	tdm_strlcpy(dir, dirname(dir), len);
	if (!access(dir, W_OK))
		return 0;
	if (errno != ENOENT)
		return -1;
	tdm_strlcpy(parent, dir, sizeof(parent));
	if (access(dirname(parent), W_OK))
		return -1;
	if (!create)
		return 0;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	log_notice("created %s for the state_file", dir);
	return 0;
}

/* The version in path; 0 if the file does not exist (none issued yet). */
static int state_load(const char *path, uint32_t *v, char *err, size_t errlen)
{
	*v = 0;
	if (access(path, F_OK) && errno == ENOENT)
		return 0;
	return tdm_cfg_parse_file(path, state_line, v, err, errlen);
}

static int net_load_issued(void *ctx, uint32_t *v, char *err, size_t errlen)
{
	const struct coord_net *net = ctx;
	const char *path = net->d->conf.state_file;

	char dir[PATH_MAX];

	if (state_load(path, v, err, errlen))
		return -1;
	if (state_dir(path, true, dir, sizeof(dir)))
		return tdm_set_err(err, errlen, "state_file %s: cannot write in %s: %s",
				   path, dir, strerror(errno));
	if (access(path, F_OK))
		log_notice("%s does not exist yet: plan versions start at v1",
			   path);
	return 0;
}

static int net_save_issued(void *ctx, uint32_t v, char *err, size_t errlen)
{
	const struct coord_net *net = ctx;
	char text[256];
	int n;

	n = snprintf(text, sizeof(text),
		     "# tdmd(8): the highest plan version this coordinator issued; the\n"
		     "# next plan is numbered above it.  Written by tdmd: do not edit.\n"
		     "issued %u\n", v);
	return tdm_write_file_atomic(net->d->conf.state_file, text, (size_t)n,
				     0644, err, errlen);
}

static int on_frame(struct conn *c, const struct tdm_msg *m, char *err,
		    size_t errlen)
{
	struct link *l = c->ev.ctx;

	return coord_peer_frame(l->net->co, l->peer, m, err, errlen);
}

static void on_link_io(struct ev *e, short revents)
{
	struct link *l = e->ctx;
	struct coord *co = l->net->co;
	char err[256] = "";
	int rc;

	if (revents & (POLLERR | POLLHUP | POLLNVAL) && !(revents & POLLIN)) {
		coord_peer_lost(co, l->peer, "connection lost");
		return;
	}
	if ((revents & POLLOUT) && conn_output(l->c, err, sizeof(err))) {
		coord_peer_lost(co, l->peer, err);
		return;
	}
	if (!(revents & POLLIN))
		return;
	l->busy = true;
	rc = conn_input(l->c, on_frame, err, sizeof(err));
	l->busy = false;
	if (l->dropped)
		link_free(l);
	else if (rc)
		coord_peer_lost(co, l->peer, err);
}

static void on_accept(struct ev *e, short revents)
{
	struct coord_net *net = e->ctx;
	struct nlmsghdr *nlh;
	struct link *l;
	char err[256];
	int fd, one = 1;

	(void)revents;
	fd = accept4(e->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		static struct tdm_ratelimit rl = {
			.interval_ns = 10 * TDM_NSEC_PER_SEC, .burst = 1 };
		unsigned long long missed;
		int i, e_no = errno;

		if (e_no != EMFILE && e_no != ENFILE && e_no != ENOBUFS &&
		    e_no != ENOMEM)
			return;
		/* The connection stays in the backlog and poll() would wake
		 * at once, for ever: stop listening for a while instead.
		 */
		for (i = 0; i < net->nlisten; i++)
			net->lev[i].events = 0;
		net->accept_resume = tdm_mono_ns() + ACCEPT_BACKOFF_NS;
		if (tdm_ratelimit(&rl, tdm_mono_ns(), &missed))
			log_err("accept: %s: not accepting for %lld ms (%llu more times since the last message)",
				strerror(e_no), ACCEPT_BACKOFF_NS / 1000000,
				missed);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return;
	}
	l->net = net;
	l->c = conn_new(net->d->loop, fd, true, net->d->key, net->d->keylen, on_link_io, l);
	if (!l->c) {
		close(fd);
		free(l);
		return;
	}
	l->peer = coord_peer_add(net->co, l, l->c->peer);
	if (!l->peer) {
		link_free(l);
		return;
	}
	nlh = frame_begin(TDM_MSG_HELLO);
	tdm_put_nonce(&l->c->sess, nlh, frame_size());
	mnl_attr_put_u32(nlh, TDM_A_PROTO, TDM_PROTO_LEVEL);
	if (conn_send(l->c, nlh, err, sizeof(err)))
		coord_peer_lost(net->co, l->peer, err);
}

static int listen_one(struct coord_net *net, const char *host, char *err,
		      size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST,
	}, *res, *ai;
	int rc, n = 0;

	if (!strcmp(host, "*") || !strcmp(host, "any"))
		host = "::";
	rc = getaddrinfo(host, net->d->conf.port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "listen %s: %s (give a numeric address)",
			 host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		struct ev *e = &net->lev[net->nlisten];
		int fd, one = 1, zero = 0;
		char a[80];

		if (net->nlisten == (int)TDM_ARRAY_SIZE(net->lev))
			break;
		sockaddr_str(ai->ai_addr, a, sizeof(a));
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* "::" also takes IPv4 (mapped), as a dual-stack listener. */
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
			snprintf(err, errlen, "listen on %s: %s", a, strerror(errno));
			close(fd);
			freeaddrinfo(res);
			return -1;
		}
		e->fd = fd;
		e->events = POLLIN;
		e->cb = on_accept;
		e->ctx = net;
		e->slot = -1;
		if (ev_add(net->d->loop, e)) {
			close(fd);
			break;
		}
		net->nlisten++;
		n++;
		log_info("listening on %s", a);
	}
	freeaddrinfo(res);
	if (!n) {
		snprintf(err, errlen, "listen %s: no usable address", host);
		return -1;
	}
	return 0;
}

static void net_stop(struct role *r)
{
	struct coord_net *net = (struct coord_net *)r;
	int i;

	coord_free(net->co);
	for (i = 0; i < net->nlisten; i++) {
		ev_del(&net->lev[i]);
		close(net->lev[i].fd);
	}
	free(net);
}

static struct role *net_start(const struct tdmd *d, char *err, size_t errlen)
{
	struct coord_net *net = calloc(1, sizeof(*net));
	int i;

	if (!net) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	net->role.ops = &coord_role_ops;
	net->d = d;
	net->io = (struct coord_io){
		.send = net_send,
		.drop = net_drop,
		.mono_ns = net_mono_ns,
		.clock_ns = net_clock_ns,
		.load_issued = net_load_issued,
		.save_issued = net_save_issued,
		.ctx = net,
	};
	net->co = coord_new(&d->conf, &net->io, err, errlen);
	if (!net->co) {
		free(net);
		return NULL;
	}
	for (i = 0; i < d->conf.nlisten; i++) {
		if (listen_one(net, d->conf.listen[i], err, errlen)) {
			net_stop(&net->role);
			return NULL;
		}
	}
	return &net->role;
}

static int64_t net_tick(struct role *r, int64_t now)
{
	struct coord_net *net = (struct coord_net *)r;
	int64_t next = coord_tick(net->co, now);
	int i;

	if (net->accept_resume && now >= net->accept_resume) {
		for (i = 0; i < net->nlisten; i++)
			net->lev[i].events = POLLIN;
		net->accept_resume = 0;
	}
	if (net->accept_resume && net->accept_resume < next)
		next = net->accept_resume;
	return next;
}

static void net_control(struct role *r, struct ctl_req *req)
{
	coord_control(((struct coord_net *)r)->co, req);
}

/* tdmd -n: the state file must load, its directory take a new one, and
 * the plan file load.
 */
static int net_check(const struct tdmd *d, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct tdm_plan p;
	uint32_t v;
	int rc;

	if (state_load(d->conf.state_file, &v, err, errlen))
		return -1;
	if (state_dir(d->conf.state_file, false, dir, sizeof(dir))) {
		snprintf(err, errlen, "state_file %s: cannot write in %s: %s",
			 d->conf.state_file, dir, strerror(errno));
		return -1;
	}
	if (!d->conf.plan_file[0])
		return 0;
	if (tdm_plan_load(d->conf.plan_file, &p, err, errlen))
		return -1;
	rc = coord_plan_pushable(&p, d->conf.plan_file, err, errlen);
	tdm_plan_free(&p);
	return rc;
}

const struct role_ops coord_role_ops = {
	.role = ROLE_COORDINATOR,
	.check = net_check,
	.start = net_start,
	.tick = net_tick,
	.control = net_control,
	.stop = net_stop,
};
