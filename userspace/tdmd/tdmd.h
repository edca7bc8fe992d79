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
#include <sys/types.h>

#include "tdm_plan.h"
#include "tdm_proto.h"
#include "tdm_qdisc.h"

#define TDMD_DEFAULT_CONF	"/etc/tdm/tdm.conf"
#define TDMD_DEFAULT_CTL	"/run/tdmd.sock"
#define TDMD_MAX_LISTEN		4

#define TDMD_PORT_LEN		8

struct tdmd_hostport {
	char host[256];
	char port[TDMD_PORT_LEN];
};

enum tdmd_role { ROLE_NONE, ROLE_COORDINATOR, ROLE_MEMBER };
enum tdmd_ptp_policy { PTP_REQUIRE, PTP_WARN, PTP_OFF };

struct tdmd_conf {
	enum tdmd_role role;
	char name[TDM_NAME_MAX];
	char key_file[PATH_MAX];
	char ctl_path[108];
	int log_level;

	/* coordinator */
	char listen[TDMD_MAX_LISTEN][64];
	int nlisten;
	char port[TDMD_PORT_LEN];
	char plan_file[PATH_MAX];
	unsigned int quorum;		/* 0: every sender of the plan */
	uint64_t ack_timeout_ns;
	uint64_t member_timeout_ns;	/* silence before a member is dropped */
	unsigned int history;

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
};

int tdmd_conf_load(const char *path, struct tdmd_conf *c,
		   char *err, size_t errlen);
const char *tdmd_role_name(enum tdmd_role r);
const char *tdmd_ptp_policy_name(enum tdmd_ptp_policy p);

/* ---- event loop (loop.c) ---- */

struct ev;
typedef void (*ev_cb)(struct ev *e, short revents);

struct ev {
	int fd;
	short events;		/* POLLIN, POLLOUT */
	ev_cb cb;
	void *ctx;
	int slot;		/* index in the loop, -1 when not added */
};

int ev_add(struct ev *e);
void ev_del(struct ev *e);
/* Timer hook: called every iteration with CLOCK_MONOTONIC now; returns
 * the next deadline (monotonic ns) or INT64_MAX.
 */
void ev_set_tick(int64_t (*tick)(int64_t now));
void ev_stop(void);
int ev_run(void);

/* ---- framed, authenticated connections (conn.c) ---- */

struct conn {
	struct ev ev;
	struct tdm_session sess;
	uint8_t *rbuf;			/* TDM_MAX_FRAME bytes */
	size_t rlen;
	uint8_t *wbuf;
	size_t wlen, wcap;
	char peer[80];			/* "198.18.0.2:40412" */
	int64_t last_rx;		/* monotonic ns */
	bool closing;
};

/* Returns -1 on error (err set): the connection must be closed. */
typedef int (*conn_frame_cb)(struct conn *c, const struct tdm_msg *m,
			     char *err, size_t errlen);

struct conn *conn_new(int fd, bool server, const uint8_t *key, size_t keylen,
		      ev_cb cb, void *ctx);
void conn_free(struct conn *c);
/* Read what is there and hand every complete frame to cb.  0, or -1 with
 * err set (peer closed, protocol error): the caller closes.
 */
int conn_input(struct conn *c, conn_frame_cb cb, char *err, size_t errlen);
/* Write queued bytes; 0, or -1 with err. */
int conn_output(struct conn *c, char *err, size_t errlen);
/* Seal a frame built with frame_begin() and queue it. */
int conn_send(struct conn *c, struct nlmsghdr *nlh, char *err,
	      size_t errlen);
/* A scratch frame buffer of TDM_MAX_FRAME bytes. */
struct nlmsghdr *frame_begin(uint16_t type);
size_t frame_size(void);
void sockaddr_str(const void *sa, char *buf, size_t len);

/* ---- control socket (ctl.c) ---- */

struct ctl_req {
	struct ev ev;
	char *in;
	size_t inlen, incap;
	bool json;
	char cmd[640];		/* "status", "plan show", "plan push", ... */
	const char *body;	/* after the request line */
};

int ctl_open(const char *path, char *err, size_t errlen);
void ctl_close(void);
/* Send the reply and free the request. ok=false: body is the message. */
void ctl_reply(struct ctl_req *r, bool ok, const char *body);

/* ---- roles ---- */

struct tdmd {
	struct tdmd_conf conf;
	uint8_t key[TDM_KEY_MAX];
	size_t keylen;
};

extern struct tdmd tdmd;

int coord_start(char *err, size_t errlen);
int64_t coord_tick(int64_t now);
void coord_ctl(struct ctl_req *r);
void coord_stop(void);

int member_start(char *err, size_t errlen);
int64_t member_tick(int64_t now);
void member_ctl(struct ctl_req *r);
void member_stop(void);

/* Shared printing of a plan and of qdisc counters (report.c). */
struct tdm_json;
void report_plan_json(struct tdm_json *j, const char *key,
		      const struct tdm_plan *p);
char *report_plan_text(const struct tdm_plan *p);
void report_xstats_json(struct tdm_json *j, const char *key,
			const struct tc_tdmwin_xstats *x);
const char *fmt_tai(int64_t t, int clockid, char *buf, size_t len);

#endif
