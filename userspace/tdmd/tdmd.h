/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdmd: one daemon, two roles.  The coordinator (on the receiver) hands
 * out window plans; members (on the senders) program their tdmwin qdisc
 * and hold its gate while PTP is not in sync.  Single-threaded: one poll
 * loop drives sockets and timers.
 */
#ifndef TDMD_H
#define TDMD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tdm_filter.h"
#include "tdm_plan.h"
#include "tdm_proto.h"
#include "tdm_qdisc.h"

#define TDMD_DEFAULT_CONF	"/etc/tdm/tdm.conf"
#define TDMD_DEFAULT_CTL	"/run/tdmd.sock"
#define TDMD_DEFAULT_STATE	"/var/lib/tdm/coordinator.state"
#define TDMD_METRICS_PORT	9464
#define TDMD_MAX_LISTEN		4

#define TDMD_PORT_LEN		8

struct tdmd_hostport {
	char host[256];
	char port[TDMD_PORT_LEN];
};

enum tdmd_role { ROLE_NONE, ROLE_COORDINATOR, ROLE_MEMBER };

/* Where the member's tdmwin instances go (tdm.conf "queues"). */
#define TDMD_MAX_QUEUES		256
enum tdmd_queues_mode {
	QUEUES_ROOT,		/* one instance at parent (the root) */
	QUEUES_ALL,		/* mq at the root, one under every TX queue */
	QUEUES_LIST,		/* mq at the root, one under each listed queue */
};

struct tdmd_queues {
	uint32_t mode;		/* enum tdmd_queues_mode */
	uint32_t pad;
	uint64_t map[TDMD_MAX_QUEUES / 64];	/* QUEUES_LIST: TX queue n */
};

static inline bool tdmd_queue_listed(const struct tdmd_queues *q,
				     unsigned int n)
{
	return n < TDMD_MAX_QUEUES && (q->map[n / 64] >> (n % 64)) & 1;
}
enum tdmd_ptp_policy { PTP_REQUIRE, PTP_WARN, PTP_OFF };
/* Where the member's plan goes (tdm.conf "gate"). */
enum tdmd_gate {
	GATE_QDISC,		/* the tdmwin qdisc on the netdev "interface" */
	GATE_TDMD,		/* no netdev (vfio): tdmd's plan store, published
				 * on gate_socket for libtdmgate
				 */
};
#define TDMD_GATE_SOCK_DIR	"/run/tdmd"
enum tdmd_takeover { TAKEOVER_REFUSE, TAKEOVER_ALLOW };

struct tdmd_conf {
	enum tdmd_role role;
	char name[TDM_NAME_MAX];
	char key_file[PATH_MAX];
	char ctl_path[108];
	int log_level;
	struct tdmd_hostport metrics_listen;	/* host "": off */
	char metrics_textfile[PATH_MAX];	/* "": off */
	uint64_t metrics_interval_ns;

	/* coordinator */
	char listen[TDMD_MAX_LISTEN][64];
	int nlisten;
	char port[TDMD_PORT_LEN];
	char plan_file[PATH_MAX];
	unsigned int quorum;		/* 0: every sender of the plan */
	uint64_t ack_timeout_ns;
	uint64_t commit_lead_ns;	/* commit or abort this long before base */
	uint64_t member_timeout_ns;	/* silence before a member is dropped */
	int name_takeover;		/* TAKEOVER_REFUSE or TAKEOVER_ALLOW */
	unsigned int history;
	char state_file[PATH_MAX];	/* the highest plan version issued */

	/* member */
	struct tdmd_hostport coord;
	struct tdm_qdisc_target target;
	int control_priority;		/* SO_PRIORITY of the control socket */
	uint64_t heartbeat_ns;
	uint64_t reconnect_min_ns;
	uint64_t reconnect_max_ns;
	enum tdmd_ptp_policy ptp_policy;
	char ptp_socket[108];
	uint8_t ptp_domain;
	uint64_t ptp_threshold_ns;
	uint64_t ptp_interval_ns;
	unsigned int ptp_good_checks;
	unsigned int ptp_bad_checks;
	bool ptp_check_tai;
	uint64_t phc_threshold_ns;	/* 0: the PHC is not checked */
	struct tdmd_queues queues;	/* root, or mq over these TX queues */
	bool txtime;			/* launch times: etf under each tdmwin */
	struct tdm_etf etf;		/* its delta and offload flag */
	int gate;			/* enum tdmd_gate */
	char gate_socket[108];		/* GATE_TDMD: where followers connect */
};

int tdmd_conf_load(const char *path, struct tdmd_conf *c,
		   char *err, size_t errlen);
/*
 * Reload: may a daemon running with old go on with nc (both loaded by
 * tdmd_conf_load()) without a restart?  0, with the keys that differ in
 * changed ("lease, ptp_threshold", "" for none); or -1 with err naming
 * the key that takes a restart and listing the keys that reload live.
 */
int tdmd_conf_reloadable(const struct tdmd_conf *old,
			 const struct tdmd_conf *nc, char *changed,
			 size_t clen, char *err, size_t errlen);
const char *tdmd_role_name(enum tdmd_role r);
const char *tdmd_ptp_policy_name(enum tdmd_ptp_policy p);
const char *tdmd_gate_name(enum tdmd_gate g);

/* ---- event loop (loop.c) ---- */

struct ev;
struct ev_loop;
typedef void (*ev_cb)(struct ev *e, short revents);

struct ev {
	int fd;
	short events;		/* POLLIN, POLLOUT */
	ev_cb cb;
	void *ctx;
	int slot;		/* index in the loop, -1 when not added */
	struct ev_loop *loop;	/* set by ev_add() */
};

/* NULL when out of memory. */
struct ev_loop *ev_loop_new(void);
void ev_loop_free(struct ev_loop *l);
int ev_add(struct ev_loop *l, struct ev *e);
/* Removes e from the loop it was added to (a no-op if none). */
void ev_del(struct ev *e);
/* Timer hook: called every iteration with CLOCK_MONOTONIC now; returns
 * the next deadline (monotonic ns) or INT64_MAX.
 */
void ev_set_tick(struct ev_loop *l, int64_t (*tick)(void *ctx, int64_t now),
		 void *ctx);
void ev_stop(struct ev_loop *l);
int ev_run(struct ev_loop *l);

/* ---- framed, authenticated connections (conn.c) ---- */

struct conn {
	struct ev ev;
	struct tdm_session sess;
	uint8_t *rbuf;			/* rcap bytes: CONN_RBUF_MIN, grown to
					 * TDM_MAX_FRAME once the peer proved
					 * the key
					 */
	size_t rlen, rcap;
	bool authed;			/* a frame with a valid MAC came */
	uint8_t *wbuf;
	size_t wlen, wcap;
	char peer[80];			/* "198.18.0.2:40412" */
	int64_t last_rx;		/* monotonic ns */
	bool closing;
};

/* Returns -1 on error (err set): the connection must be closed. */
typedef int (*conn_frame_cb)(struct conn *c, const struct tdm_msg *m,
			     char *err, size_t errlen);

struct conn *conn_new(struct ev_loop *loop, int fd, bool server,
		      const uint8_t *key, size_t keylen, ev_cb cb, void *ctx);
void conn_free(struct conn *c);
/* Read what is there and hand every complete frame to cb.  0, or -1 with
 * err set (peer closed, protocol error): the caller closes.
 */
int conn_input(struct conn *c, conn_frame_cb cb, char *err, size_t errlen);
/* Write queued bytes; 0, or -1 with err. */
int conn_output(struct conn *c, char *err, size_t errlen);
/* Seal a frame built in a buffer of TDM_MAX_FRAME bytes (frame_begin())
 * and queue it.
 */
int conn_send(struct conn *c, struct nlmsghdr *nlh, char *err,
	      size_t errlen);
/* A scratch frame buffer of TDM_MAX_FRAME bytes. */
struct nlmsghdr *frame_begin(uint16_t type);
size_t frame_size(void);
void sockaddr_str(const void *sa, char *buf, size_t len);

/* ---- roles ---- */

/* What both roles are started with. */
struct tdmd {
	struct tdmd_conf conf;
	struct ev_loop *loop;		/* the roles' sockets go on it */
	uint8_t key[TDM_KEY_MAX];
	size_t keylen;
};

/*
 * A control request as a role sees it: the command, and the one way to
 * answer it.  The role may keep r (a plan push waits for acks) until it
 * calls ctl_reply(); r is gone afterwards.
 */
struct ctl_req {
	const char *cmd;	/* "status", "plan show", "plan push LABEL", ... */
	bool json;
	const char *body;	/* after the request line */
	void (*reply)(struct ctl_req *r, bool ok, const char *body);
};

/* Queue the reply; ok=false: body is the message. */
static inline void ctl_reply(struct ctl_req *r, bool ok, const char *body)
{
	r->reply(r, ok, body);
}

/*
 * A role, as linuxptp's clock drives its ports: start() builds its state
 * (NULL with err set on failure, nothing left behind), the others take
 * that state.  tick() is called every loop iteration and returns the
 * next deadline (monotonic ns) or INT64_MAX; stop() answers a request
 * it still holds and frees everything.  check() (tdmd -n, may be NULL)
 * checks what the configuration names beyond itself (the plan file).
 * reload() (may be NULL) is called after a reload swapped the
 * configuration under the role (only keys tdmd_conf_reloadable()
 * allows changed; old is what it was): it applies what does not take
 * effect by itself, without dropping sessions or plans.
 */
struct role;

struct role_ops {
	enum tdmd_role role;
	bool net_admin;		/* keeps CAP_NET_ADMIN (rtnetlink, SO_PRIORITY) */
	int (*check)(const struct tdmd *d, char *err, size_t errlen);
	struct role *(*start)(const struct tdmd *d, char *err, size_t errlen);
	int64_t (*tick)(struct role *r, int64_t now);
	void (*control)(struct role *r, struct ctl_req *req);
	void (*reload)(struct role *r, const struct tdmd_conf *old);
	void (*stop)(struct role *r);
};

struct role {
	const struct role_ops *ops;
};

extern const struct role_ops coord_role_ops;	/* coord_net.c */
extern const struct role_ops member_role_ops;	/* member_net.c */

/* ---- metrics over HTTP and in a textfile (metrics.c) ---- */

/*
 * Serve metrics_listen and write metrics_textfile from the role's answer
 * to "metrics" (as tdmctl metrics gets it).  NULL when neither is
 * configured, or with err set on failure.  metrics_tick() returns the
 * next deadline; both take NULL.
 */
struct metrics;
struct metrics *metrics_open(struct ev_loop *loop, const struct tdmd_conf *cf,
			     struct role *role, char *err, size_t errlen);
int64_t metrics_tick(struct metrics *m, int64_t now);
/* Stops the server and removes the textfile. */
void metrics_close(struct metrics *m);

/* ---- control socket (ctl.c) ---- */

struct ctl;

/* Serve path; requests go to role->ops->control(). */
struct ctl *ctl_open(struct ev_loop *loop, const char *path,
		     struct role *role, char *err, size_t errlen);
/*
 * "reload" is answered by fn, not the role: 0 (ok) or -1 (refused), with
 * the reply (one line or more, ending in a newline) in msg.
 */
void ctl_set_reload(struct ctl *c, int (*fn)(void *ctx, char *msg, size_t len),
		    void *ctx);
/*
 * A listening unix socket of type (SOCK_STREAM, SOCK_SEQPACKET) at path,
 * mode 0660, non-blocking: its fd, or -1 with err ("WHAT PATH: why").  A
 * stale socket there (nobody accepts) is replaced; a live one, or a file
 * that is not a socket (err names key, the setting to change), is not.
 */
int unix_listen(const char *path, int type, const char *what,
		const char *key, char *err, size_t errlen);
/* Drops clients that stopped reading their reply; next deadline. */
int64_t ctl_tick(struct ctl *c, int64_t now);
void ctl_close(struct ctl *c);

/* ---- the coordinator's logic (coord.c) ---- */

/*
 * The coordinator holds no socket and reads no clock itself: its
 * transport and its clocks come in a struct coord_io (coord_net.c for the
 * network, fakes in the unit tests).  A transport hands each accepted,
 * authenticated connection ("link") to coord_peer_add(), its frames to
 * coord_peer_frame() and its loss to coord_peer_lost(); the coordinator
 * sends through send() and ends a link only through drop(), after which
 * the transport frees it (later, if it is inside that link's input).
 */
struct coord;
struct coord_peer;

struct coord_io {
	/* Seal and queue nlh (in a buffer of TDM_MAX_FRAME bytes); 0 or
	 * -1 with err set.
	 */
	int (*send)(void *ctx, void *link, struct nlmsghdr *nlh, char *err,
		    size_t errlen);
	void (*drop)(void *ctx, void *link);
	int64_t (*mono_ns)(void *ctx);		/* CLOCK_MONOTONIC */
	int64_t (*clock_ns)(void *ctx, int clockid);	/* a plan's clock */
	/*
	 * The highest plan version this coordinator (this run or one
	 * before it) issued, kept across restarts (state_file).  load()
	 * gives 0 when none was ever recorded; save() records v before a
	 * plan numbered v leaves.  Both 0, or -1 with err set.
	 */
	int (*load_issued)(void *ctx, uint32_t *v, char *err, size_t errlen);
	int (*save_issued)(void *ctx, uint32_t v, char *err, size_t errlen);
	void *ctx;
};

/* Loads conf->plan_file if set; NULL with err set on failure. */
struct coord *coord_new(const struct tdmd_conf *conf,
			const struct coord_io *io, char *err, size_t errlen);
/* Answers a waiting plan push, drops every link, frees co. */
void coord_free(struct coord *co);
/*
 * A plan tdmd can hand out: at most TDMWIN_MAX_DESTS receivers (a class
 * of every member's qdisc each).  0, or -1 with err saying why not.
 */
int coord_plan_pushable(const struct tdm_plan *p, const char *label,
			char *err, size_t errlen);
/* NULL (logged) when the coordinator holds too many connections. */
struct coord_peer *coord_peer_add(struct coord *co, void *link,
				  const char *addr);
/* 0, or -1 with err set: the transport closes (coord_peer_lost). */
int coord_peer_frame(struct coord *co, struct coord_peer *p,
		     const struct tdm_msg *m, char *err, size_t errlen);
void coord_peer_lost(struct coord *co, struct coord_peer *p, const char *why);
int64_t coord_tick(struct coord *co, int64_t now);
void coord_control(struct coord *co, struct ctl_req *r);

/* ---- the member's logic (member.c) ---- */

/*
 * The member, like the coordinator, holds no socket and reads no clock
 * or device itself: the tdmwin qdisc (rtnetlink), ptp4l, the PHC, its
 * session with the coordinator and its clocks come in a struct member_io
 * (member_net.c for the real ones, fakes in tests/test_member.c).  The
 * member asks for a session with connect(); the transport reports it up
 * with member_connected(), hands each frame to member_frame() and its
 * loss (or a failed attempt) to member_lost().  The member sends through
 * send() and ends a session or an attempt only through close(), after
 * which the transport frees it (later, if inside its input) and hands
 * it no more frames.
 */
struct member;
struct tdm_ptp_status;
struct tdm_phc_offset;

struct member_io {
	/* The tdmwin qdisc at t: as tdm_qdisc.h's functions of those names. */
	int (*qdisc_resolve)(void *ctx, struct tdm_qdisc_target *t, char *err,
			     size_t errlen);
	int (*qdisc_get)(void *ctx, const struct tdm_qdisc_target *t,
			 struct tdm_qdisc_info *info, char *err, size_t errlen);
	int (*qdisc_install)(void *ctx, const struct tdm_qdisc_target *t,
			     const struct tdm_plan *p, const char *name,
			     bool hold, char *err, size_t errlen);
	int (*qdisc_prepare)(void *ctx, const struct tdm_qdisc_target *t,
			     const struct tdm_plan *p, const char *name,
			     char *err, size_t errlen);
	int (*qdisc_confirm)(void *ctx, const struct tdm_qdisc_target *t,
			     uint32_t version, char *err, size_t errlen);
	int (*qdisc_abort)(void *ctx, const struct tdm_qdisc_target *t,
			   uint32_t version, char *err, size_t errlen);
	int (*qdisc_renew)(void *ctx, const struct tdm_qdisc_target *t,
			   char *err, size_t errlen);
	int (*qdisc_set_lease)(void *ctx, const struct tdm_qdisc_target *t,
			       char *err, size_t errlen);
	int (*qdisc_set_hold)(void *ctx, const struct tdm_qdisc_target *t,
			      bool hold, char *err, size_t errlen);
	/* The tree around it (tdm_qdisc.h): the device's TX queues, mq at
	 * its root, an etf child under a tdmwin with txtime on.
	 */
	int (*tx_queues)(void *ctx, const struct tdm_qdisc_target *t,
			 unsigned int *n, char *err, size_t errlen);
	int (*qdisc_mq)(void *ctx, const struct tdm_qdisc_target *t,
			bool create, uint32_t *handle, char *err,
			size_t errlen);
	int (*qdisc_txtime)(void *ctx, const struct tdm_qdisc_target *t,
			    const struct tdm_etf *etf, char *err,
			    size_t errlen);
	/* The flower filters of its destination classes (tdm_filter.h):
	 * make them exactly want[0..n), read back.
	 */
	int (*filter_sync)(void *ctx, const struct tdm_qdisc_target *t,
			   const struct tdm_filter *want, unsigned int n,
			   char *err, size_t errlen);
	/* ptp4l's management socket (tdm_ptp.h): opened once, then asked. */
	int (*ptp_open)(void *ctx, const char *path, uint8_t domain, char *err,
			size_t errlen);
	int (*ptp_query)(void *ctx, int timeout_ms, struct tdm_ptp_status *st,
			 char *err, size_t errlen);
	/* The interface's PHC (tdm_phc.h): its index (-1: none), opened
	 * once, then read.
	 */
	int (*phc_index)(void *ctx, const char *ifname, int *index, char *err,
			 size_t errlen);
	int (*phc_open)(void *ctx, int index, char *err, size_t errlen);
	int (*phc_read)(void *ctx, struct tdm_phc_offset *o, char *err,
			size_t errlen);
	/* The session: start connecting to hp (addr: the address tried);
	 * 0, or -1 with err set (nothing left open).
	 */
	int (*connect)(void *ctx, const struct tdmd_hostport *hp, char *addr,
		       size_t addrlen, char *err, size_t errlen);
	/* Our nonce into nlh (REGISTER), and seal and queue nlh (in a
	 * buffer of TDM_MAX_FRAME bytes): 0 or -1 with err set.
	 */
	int (*put_nonce)(void *ctx, struct nlmsghdr *nlh, char *err,
			 size_t errlen);
	int (*send)(void *ctx, struct nlmsghdr *nlh, char *err, size_t errlen);
	void (*close)(void *ctx);
	int64_t (*mono_ns)(void *ctx);		/* CLOCK_MONOTONIC */
	int64_t (*clock_ns)(void *ctx, int clockid);	/* a plan's clock */
	uint64_t (*random)(void *ctx);		/* the reconnect jitter */
	/* GATE_TDMD: the followers connected to the store's socket. */
	unsigned int (*gate_followers)(void *ctx);
	void *ctx;
	/* What the qdisc's operations above (qdisc_* to filter_sync) get
	 * for their ctx; NULL: ctx.  The store's (store_member_io()).
	 */
	void *qdisc_ctx;
};

/* Resolves the interface and reads its qdisc; NULL with err set. */
struct member *member_new(const struct tdmd_conf *conf,
			  const struct member_io *io, char *err, size_t errlen);
/* Closes the session (io.close) and frees me. */
void member_free(struct member *me);
void member_connected(struct member *me);
/* 0, or -1 with err set: the transport reports the loss (member_lost). */
int member_frame(struct member *me, const struct tdm_msg *m, char *err,
		 size_t errlen);
void member_lost(struct member *me, const char *why);
int64_t member_tick(struct member *me, int64_t now);
void member_control(struct member *me, struct ctl_req *r);
/* The configuration changed under me (role_ops.reload). */
void member_reload(struct member *me, const struct tdmd_conf *old);

/* ---- the plan store of a device without a netdev (store.c) ---- */

/*
 * What the store is given: the clocks (a plan's, and CLOCK_BOOTTIME for
 * the lease, as member_io.clock_ns) and changed(), called after every
 * change (NULL: none), as the kernel sends RTM_NEWQDISC after each.
 */
struct store_ops {
	int64_t (*clock_ns)(void *ctx, int clockid);
	void (*changed)(void *ctx);
	void *ctx;
};

struct store;
/* An empty store for device dev (no plan: as no qdisc); NULL with err. */
struct store *store_new(const char *dev, const struct store_ops *ops,
			char *err, size_t errlen);
void store_free(struct store *s);
const char *store_dev(const struct store *s);
/*
 * The store's qdisc, as tdm_qdisc.h's functions of those names do it on
 * the kernel's, with the kernel's rules and its messages ("store: ...").
 */
int store_get(struct store *s, struct tdm_qdisc_info *info);
int store_install(struct store *s, const struct tdm_qdisc_target *t,
		  const struct tdm_plan *p, const char *name, bool hold,
		  char *err, size_t errlen);
int store_prepare(struct store *s, const struct tdm_qdisc_target *t,
		  const struct tdm_plan *p, const char *name, char *err,
		  size_t errlen);
int store_confirm(struct store *s, uint32_t version, char *err, size_t errlen);
int store_abort(struct store *s, uint32_t version, char *err, size_t errlen);
int store_renew(struct store *s, char *err, size_t errlen);
int store_set_lease(struct store *s, uint64_t lease_ns, char *err,
		    size_t errlen);
int store_set_hold(struct store *s, bool hold, char *err, size_t errlen);
/*
 * The store's state now as the kernel's RTM_NEWQDISC (RTM_DELQDISC with
 * no plan), at ifindex 0, parent root, in buf (TDM_QDISC_MSG_MAX bytes).
 */
struct nlmsghdr *store_msg(struct store *s, char *buf);
/* The member's qdisc operations on the store (qdisc_ctx = s). */
void store_member_io(struct store *s, struct member_io *io);

/*
 * The store's socket (store_sock.c): a SOCK_SEQPACKET unix socket at
 * path (mode 0660; its directory made 0755 if missing) on which every
 * follower gets store_msg() at connect and after every change.  NULL
 * with err.  store_sock_changed() is the store's changed().
 */
struct store_sock;
struct store_sock *store_sock_open(struct ev_loop *loop, struct store *s,
				   const char *path, char *err, size_t errlen);
void store_sock_changed(struct store_sock *ss);
unsigned int store_sock_followers(const struct store_sock *ss);
/* Closes every follower (they see the gate go) and removes the socket. */
void store_sock_close(struct store_sock *ss);

/* Shared printing of a plan and of qdisc counters (report.c). */
struct tdm_json;
char *report_plan_text(const struct tdm_plan *p);
void report_xstats_json(struct tdm_json *j, const char *key,
			const struct tc_tdmwin_xstats *x);
const char *fmt_tai(int64_t t, int clockid, char *buf, size_t len);
/* Reply to r with what js (r->json) or tx writes; ok=false: a failure. */
void report_reply_text(struct ctl_req *r, void (*tx)(FILE *f, void *arg),
		       void *arg);
/* The metrics both roles export: tdmd_info and tdmd_sync_state-like
 * state sets (one sample per state, 1 for the current one).
 */
struct tdm_prom;
void report_prom_info(struct tdm_prom *p, const char *role, const char *name);
void report_prom_states(struct tdm_prom *p, const char *family,
			const char *help, const char *label,
			const char *const *states, unsigned int n,
			unsigned int cur, const char *const *labels);
/* Reply to r with what js (r->json) or tx writes; ok=false: a failure. */
void report_reply(struct ctl_req *r, bool ok,
		  void (*js)(struct tdm_json *j, void *arg),
		  void (*tx)(FILE *f, void *arg), void *arg);

#endif
