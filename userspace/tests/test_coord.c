// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdmd's coordinator logic (tdmd/coord.c) on the host, with
 * a fake transport and fake clocks (struct coord_io): members register,
 * the quorum starts the plan file or adopts what the members run, a plan
 * push goes to several members and collects their acks, a nack, the ack
 * timeout, a member that disconnects in the middle of a push, one that
 * falls silent, a handshake that never ends, a late member, and the
 * control replies (text and JSON) that tdmctl sees.  Plan changes are all
 * or nothing: prepare, then commit or abort (the commit deadline, a member
 * cut off after it prepared, a coordinator restarted in between).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_log.h"
#include "tdm_plan.h"
#include "tdm_proto.h"
#include "tdm_util.h"
#include "tdmd.h"

#define MS		1000000LL
#define SEC		(1000 * MS)
#define TAI_NOW		(1800000000LL * SEC)	/* the plans' clock */
#define NLINKS	8

static const char plan3[] =
	"[global]\n"
	"clock tai\n"
	"cycle_time 10ms\n"
	"guard 2us\n"
	"min_dead_time 100us\n"
	"lead_time 2s\n"
	"base_align 1s\n"
	"[sender a]\n"
	"window 0 2ms\n"
	"[sender b]\n"
	"window 3ms 2ms\n"
	"[sender c]\n"
	"window 6ms 2ms\n";

/* What the coordinator sent on one link, and whether it dropped it. */
struct link {
	int id;
	bool dropped;
	unsigned int nframes;
	uint16_t last_type;
	struct tdm_plan plan;		/* the last PLAN, decoded */
	bool have_plan;
	int64_t commit_by;		/* of the last PLAN: 0 = none */
	uint16_t outcome;		/* the last COMMIT or ABORT */
	uint32_t outcome_version;
	unsigned int ncommit, nabort;
	uint32_t welcome_version;
	struct coord_peer *peer;
	uint32_t level;			/* PROTO in its REGISTER; 0: none */
};

/* A control request whose reply is kept. */
struct req {
	struct ctl_req r;
	bool replied, ok;
	char *body;
};

struct fx {
	struct tdmd_conf conf;
	struct coord_io io;
	struct coord *co;
	int64_t mono;
	struct link links[NLINKS];
	int nlinks;
	uint32_t *buf;			/* frames the test builds */
	char tmp[64];			/* plan file */
	/* state_file: survives a restart (fx_restart) */
	uint32_t issued;
	unsigned int saves;
	bool save_fails;
};

static int fake_send(void *ctx, void *link, struct nlmsghdr *nlh, char *err,
		     size_t errlen)
{
	const struct nlattr *a;
	struct link *l = link;
	char e[256];

	(void)ctx;
	if (l->dropped) {
		snprintf(err, errlen, "link %d: send after drop", l->id);
		fail_msg("%s", err);
	}
	l->nframes++;
	l->last_type = nlh->nlmsg_type;
	if (nlh->nlmsg_type == TDM_MSG_PLAN)
		l->commit_by = 0;
	if (nlh->nlmsg_type == TDM_MSG_COMMIT || nlh->nlmsg_type == TDM_MSG_ABORT) {
		l->outcome = nlh->nlmsg_type;
		l->ncommit += nlh->nlmsg_type == TDM_MSG_COMMIT;
		l->nabort += nlh->nlmsg_type == TDM_MSG_ABORT;
	}
	mnl_attr_for_each(a, nlh, sizeof(struct tdm_fhdr)) {
		uint16_t t = mnl_attr_get_type(a);

		if (nlh->nlmsg_type == TDM_MSG_PLAN && t == TDM_A_COMMIT_BY)
			l->commit_by = (int64_t)mnl_attr_get_u64(a);
		if ((nlh->nlmsg_type == TDM_MSG_COMMIT ||
		     nlh->nlmsg_type == TDM_MSG_ABORT) && t == TDM_A_PLAN_VERSION)
			l->outcome_version = mnl_attr_get_u32(a);
		if (nlh->nlmsg_type == TDM_MSG_PLAN && t == TDM_A_PLAN) {
			if (l->have_plan)
				tdm_plan_free(&l->plan);
			assert_int_equal(tdm_plan_get(a, &l->plan, e, sizeof(e)), 0);
			l->have_plan = true;
		}
		if (nlh->nlmsg_type == TDM_MSG_WELCOME && t == TDM_A_PLAN_VERSION)
			l->welcome_version = mnl_attr_get_u32(a);
	}
	return 0;
}

static void fake_drop(void *ctx, void *link)
{
	struct link *l = link;

	(void)ctx;
	assert_false(l->dropped);
	l->dropped = true;
}

static int64_t fake_mono(void *ctx)
{
	return ((struct fx *)ctx)->mono;
}

/* The plans' clock moves with the monotonic one. */
static int64_t fake_clock(void *ctx, int clockid)
{
	(void)clockid;
	return TAI_NOW + ((struct fx *)ctx)->mono;
}

static int fake_load_issued(void *ctx, uint32_t *v, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	*v = ((struct fx *)ctx)->issued;
	return 0;
}

static int fake_save_issued(void *ctx, uint32_t v, char *err, size_t errlen)
{
	struct fx *f = ctx;

	if (f->save_fails) {
		snprintf(err, errlen, "state: cannot write: No space left on device");
		return -1;
	}
	/* Never backwards: the state only grows. */
	assert_true(v > f->issued);
	f->issued = v;
	f->saves++;
	return 0;
}

static void fx_start(struct fx *f)
{
	char err[512];

	f->co = coord_new(&f->conf, &f->io, err, sizeof(err));
	if (!f->co)
		fail_msg("coord_new: %s", err);
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->buf = malloc(TDM_MAX_FRAME);
	assert_non_null(f->buf);
	f->conf.role = ROLE_COORDINATOR;
	f->conf.ack_timeout_ns = 5 * SEC;
	f->conf.commit_lead_ns = 500 * MS;
	f->conf.member_timeout_ns = 5 * SEC;
	f->conf.history = 32;
	f->mono = 1 * SEC;
	f->io = (struct coord_io){
		.send = fake_send, .drop = fake_drop,
		.mono_ns = fake_mono, .clock_ns = fake_clock,
		.load_issued = fake_load_issued,
		.save_issued = fake_save_issued, .ctx = f,
	};
	tdm_strlcpy(f->conf.state_file, "state", sizeof(f->conf.state_file));
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	bool all_dropped = true;
	int i;

	coord_free(f->co);
	for (i = 0; i < f->nlinks; i++) {
		/* coord_free() dropped every link it still held. */
		all_dropped &= f->links[i].dropped;
		if (f->links[i].have_plan)
			tdm_plan_free(&f->links[i].plan);
	}
	if (f->tmp[0])
		unlink(f->tmp);
	free(f->buf);
	free(f);
	assert_true(all_dropped);
	return 0;
}

/* ---- members ---- */

static struct link *connect_link(struct fx *f)
{
	struct link *l = &f->links[f->nlinks];
	char addr[32];

	assert_true(f->nlinks < NLINKS);
	l->id = f->nlinks++;
	snprintf(addr, sizeof(addr), "198.18.0.%d:4000", l->id + 2);
	l->peer = coord_peer_add(f->co, l, addr);
	assert_non_null(l->peer);
	return l;
}

static struct nlmsghdr *msg_begin(struct fx *f, uint16_t type)
{
	return tdm_frame_begin(f->buf, TDM_MAX_FRAME, type);
}

/* Hand nlh to the coordinator as if it came on l; its return value. */
static int deliver(struct fx *f, struct link *l, struct nlmsghdr *nlh,
		   char *err, size_t errlen)
{
	struct tdm_msg m = { .type = nlh->nlmsg_type };
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct tdm_fhdr))
		m.tb[mnl_attr_get_type(a)] = a;
	return coord_peer_frame(f->co, l->peer, &m, err, errlen);
}

/* Deliver; an error closes the link, as the transport does. */
static int deliver_or_close(struct fx *f, struct link *l,
			    struct nlmsghdr *nlh)
{
	char err[256] = "";

	if (!deliver(f, l, nlh, err, sizeof(err)))
		return 0;
	coord_peer_lost(f->co, l->peer, err);
	return -1;
}

/*
 * REGISTER as name, running plan (version, base, digest) if given, and
 * holding plan version prepared (0: none) awaiting its outcome.
 */
static void register_prepared(struct fx *f, struct link *l, const char *name,
			      const struct tdm_plan *runs, uint32_t prepared)
{
	struct nlmsghdr *nlh = msg_begin(f, TDM_MSG_REGISTER);
	uint8_t digest[32];

	mnl_attr_put_strz(nlh, TDM_A_NAME, name);
	if (runs) {
		tdm_plan_digest(runs, digest);
		mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, runs->version);
		mnl_attr_put_u64(nlh, TDM_A_BASE_TIME, runs->base_time);
		mnl_attr_put(nlh, TDM_A_DIGEST, sizeof(digest), digest);
	}
	if (prepared)
		mnl_attr_put_u32(nlh, TDM_A_PREPARED, prepared);
	if (l->level)
		mnl_attr_put_u32(nlh, TDM_A_PROTO, l->level);
	assert_int_equal(deliver_or_close(f, l, nlh), 0);
	assert_false(l->dropped);
}

static void register_as(struct fx *f, struct link *l, const char *name,
			const struct tdm_plan *runs)
{
	register_prepared(f, l, name, runs, 0);
	assert_int_equal(l->last_type == TDM_MSG_WELCOME ||
			 l->last_type == TDM_MSG_PLAN, 1);
}

static struct link *member(struct fx *f, const char *name)
{
	struct link *l = connect_link(f);

	register_as(f, l, name, NULL);
	return l;
}

/* Start the coordinator; register members a, b and c where asked. */
static void start_abc(struct fx *f, struct link **a, struct link **b,
		      struct link **c)
{
	fx_start(f);
	if (a)
		*a = member(f, "a");
	if (b)
		*b = member(f, "b");
	if (c)
		*c = member(f, "c");
}

/* Point plan_file at a temporary file holding plan3. */
static void write_plan_file(struct fx *f)
{
	FILE *fp;
	int fd;

	strcpy(f->tmp, "/tmp/test_coord.XXXXXX");
	fd = mkstemp(f->tmp);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(plan3, fp);
	fclose(fp);
	tdm_strlcpy(f->conf.plan_file, f->tmp, sizeof(f->conf.plan_file));
}

/* plan3 as a member says it runs it: version v since base. */
static void runs_plan3(struct tdm_plan *runs, uint32_t v, int64_t base)
{
	char err[256];

	assert_int_equal(tdm_plan_parse(plan3, "p", runs, err, sizeof(err)), 0);
	runs->version = v;
	runs->base_time = base;
}

static void ack(struct fx *f, struct link *l, uint32_t version, int status,
		const char *msg)
{
	struct nlmsghdr *nlh = msg_begin(f, TDM_MSG_ACK);

	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, version);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, status);
	if (msg)
		mnl_attr_put_strz(nlh, TDM_A_MESSAGE, msg);
	assert_int_equal(deliver_or_close(f, l, nlh), 0);
}

/* The answer to a COMMIT or ABORT (phase TDM_PHASE_COMMIT or _ABORT). */
static void outcome_ack(struct fx *f, struct link *l, uint32_t phase,
			uint32_t version, int status, const char *msg)
{
	struct nlmsghdr *nlh = msg_begin(f, TDM_MSG_ACK);

	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, version);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, status);
	mnl_attr_put_u32(nlh, TDM_A_PHASE, phase);
	if (msg)
		mnl_attr_put_strz(nlh, TDM_A_MESSAGE, msg);
	assert_int_equal(deliver_or_close(f, l, nlh), 0);
}

/* l was sent COMMIT of version; it answers done. */
static void committed(struct fx *f, struct link *l, uint32_t version)
{
	assert_int_equal(l->outcome, TDM_MSG_COMMIT);
	assert_int_equal(l->outcome_version, version);
	outcome_ack(f, l, TDM_PHASE_COMMIT, version, 0, NULL);
}

/* l was sent ABORT of version; it answers done. */
static void aborted(struct fx *f, struct link *l, uint32_t version)
{
	assert_int_equal(l->outcome, TDM_MSG_ABORT);
	assert_int_equal(l->outcome_version, version);
	outcome_ack(f, l, TDM_PHASE_ABORT, version, 0, NULL);
}

static void heartbeat(struct fx *f, struct link *l, uint32_t version)
{
	struct nlmsghdr *nlh = msg_begin(f, TDM_MSG_HEARTBEAT);
	struct nlattr *nest = mnl_attr_nest_start(nlh, TDM_A_SYNC);

	mnl_attr_put_u32(nlh, TDM_S_STATE, 1);
	mnl_attr_put_u8(nlh, TDM_S_HOLD, 0);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, version);
	assert_int_equal(deliver_or_close(f, l, nlh), 0);
}

/* ---- control requests ---- */

static void keep_reply(struct ctl_req *r, bool ok, const char *body)
{
	struct req *q = (struct req *)((char *)r - offsetof(struct req, r));

	assert_false(q->replied);
	q->replied = true;
	q->ok = ok;
	q->body = strdup(body ? body : "");
}

static void control(struct fx *f, struct req *q, const char *cmd, bool json,
		    const char *body)
{
	memset(q, 0, sizeof(*q));
	q->r.cmd = cmd;
	q->r.json = json;
	q->r.body = body ? body : "";
	q->r.reply = keep_reply;
	coord_control(f->co, &q->r);
}

static void req_done(struct req *q)
{
	free(q->body);
	q->body = NULL;
}

static void assert_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("'%s' not in:\n%s", needle, hay);
}

static void push(struct fx *f, struct req *q)
{
	control(f, q, "plan push", false, plan3);
}

/* ---- tests ---- */

/* A push reaches every connected member; all ack; the reply says so. */
static void test_push_acked_by_all(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c;
	struct req q, h;

	start_abc(f, &a, &b, &c);
	assert_int_equal(a->welcome_version, 0);
	push(f, &q);
	assert_false(q.replied);
	assert_true(a->have_plan && b->have_plan && c->have_plan);
	assert_int_equal(a->plan.version, 1);
	assert_int_equal(a->plan.nsenders, 3);
	assert_true(a->plan.base_time > fake_clock(f, CLOCK_TAI));
	assert_true(a->plan.base_time == b->plan.base_time &&
		    b->plan.base_time == c->plan.base_time);
	/* A prepare: the outcome is due commit_lead before the base. */
	assert_true(a->commit_by == a->plan.base_time - 500 * MS);
	f->mono += 2 * MS;
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, 0, NULL);
	assert_false(q.replied);
	assert_int_equal(a->ncommit + a->nabort, 0);
	f->mono += 1 * MS;
	ack(f, c, 1, 0, NULL);
	/* Every member prepared: all are sent COMMIT at once. */
	assert_int_equal(a->ncommit + b->ncommit + c->ncommit, 3);
	assert_int_equal(a->nabort + b->nabort + c->nabort, 0);
	assert_false(q.replied);
	f->mono += 1 * MS;
	committed(f, a, 1);
	committed(f, b, 1);
	assert_false(q.replied);
	committed(f, c, 1);
	assert_true(q.replied);
	assert_true(q.ok);
	assert_has(q.body, "plan v1: committed, base time");
	assert_has(q.body, "a                    ok in 2.000 ms; commit done in 4.000 ms");
	assert_has(q.body, "c                    ok in 3.000 ms; commit done in 4.000 ms");
	req_done(&q);

	control(f, &h, "plan history", true, NULL);
	assert_true(h.ok);
	assert_has(h.body, "\"version\":1");
	assert_has(h.body, "\"source\":\"tdmctl\"");
	assert_has(h.body, "\"outcome\":\"committed\"");
	assert_has(h.body, "\"sent\":3");
	assert_has(h.body, "\"acked\":3");
	assert_has(h.body, "\"nacked\":0");
	req_done(&h);

	/* The next push is numbered above. */
	push(f, &q);
	assert_int_equal(c->plan.version, 2);
	ack(f, a, 2, 0, NULL);
	ack(f, b, 2, 0, NULL);
	ack(f, c, 2, 0, NULL);
	committed(f, a, 2);
	committed(f, b, 2);
	committed(f, c, 2);
	assert_true(q.replied && q.ok);
	req_done(&q);
}

/* One member refuses: the push fails and names the kernel's reason. */
static void test_push_nack(void **state)
{
	struct fx *f = *state;
	struct link *a, *b;
	struct req q, s;

	f->conf.quorum = 2;
	start_abc(f, &a, &b, NULL);
	control(f, &q, "plan push", true, plan3);
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, EINVAL, "kernel: Window shorter than one minimum frame");
	/* Nobody switches: a, which prepared, is told to abort; b had
	 * nothing to abort.
	 */
	assert_int_equal(a->nabort, 1);
	assert_int_equal(a->ncommit + b->ncommit + b->nabort, 0);
	assert_false(q.replied);
	aborted(f, a, 1);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "\"outcome\":\"aborted\"");
	assert_has(q.body, "\"reason\":\"1 refused, 0 did not answer (first: b)\"");
	assert_has(q.body, "\"acked\":1");
	assert_has(q.body, "\"nacked\":1");
	assert_has(q.body, "\"name\":\"b\",\"ack\":\"nack\"");
	assert_has(q.body, "kernel: Window shorter than one minimum frame");
	req_done(&q);

	control(f, &s, "status", false, NULL);
	assert_true(s.ok);
	assert_has(s.body, "last plan: kernel: Window shorter");
	req_done(&s);

	/* A reason that would forge a log line and repaint a terminal. */
	control(f, &q, "plan push", true, plan3);
	ack(f, a, 2, 0, NULL);
	ack(f, b, 2, EINVAL, "no\nFAKE: member c installed\x1b[2J");
	aborted(f, a, 2);
	req_done(&q);
	control(f, &s, "status", false, NULL);
	assert_has(s.body, "no\\x0aFAKE: member c installed\\x1b[2J");
	assert_null(strstr(s.body, "\nFAKE"));
	assert_null(strchr(s.body, 0x1b));
	req_done(&s);
}

/* A member that does not answer: the push ends at ack_timeout. */
static void test_push_ack_timeout(void **state)
{
	struct fx *f = *state;
	struct link *a, *b;
	struct req q;
	int64_t next;

	f->conf.quorum = 2;
	f->conf.ack_timeout_ns = 1 * SEC;
	f->conf.commit_lead_ns = 100 * MS;
	start_abc(f, &a, &b, NULL);
	push(f, &q);
	ack(f, a, 1, 0, NULL);
	f->mono += 500 * MS;
	heartbeat(f, b, 0);
	next = coord_tick(f->co, f->mono);
	assert_false(q.replied);
	/* The tick asks to be called back at the deadline. */
	assert_true(next == f->mono + 500 * MS);
	f->mono += 500 * MS;
	coord_tick(f->co, f->mono);
	/* Aborted; b too may have prepared by now: told as well. */
	assert_false(q.replied);
	assert_int_equal(a->nabort + b->nabort, 2);
	aborted(f, a, 1);
	outcome_ack(f, b, TDM_PHASE_ABORT, 1, ENOENT, "no prepared plan v1");
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "plan v1: aborted, base time");
	assert_has(q.body, "nobody switches: 0 refused, 1 did not answer (first: b)");
	assert_has(q.body, "b                    timeout: no answer before the deadline; abort done");
	assert_false(b->dropped);
	req_done(&q);
}

/*
 * The commit deadline, commit_lead before the base time, comes before the
 * ack timeout: answers that come after it abort the change.
 */
static void test_commit_deadline(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c;
	struct req q;
	int64_t next;

	f->conf.ack_timeout_ns = 60 * SEC;
	start_abc(f, &a, &b, &c);
	push(f, &q);
	/* base = now + 2 s (lead_time, on a second): the deadline 1.5 s. */
	assert_true(a->commit_by == fake_clock(f, CLOCK_TAI) + 1500 * MS);
	next = coord_tick(f->co, f->mono);
	assert_true(next == f->mono + 1500 * MS);
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, 0, NULL);
	/* c answers after the deadline, before the tick saw it. */
	f->mono += 1600 * MS;
	ack(f, c, 1, 0, NULL);
	assert_int_equal(a->nabort + b->nabort + c->nabort, 3);
	assert_int_equal(a->ncommit + b->ncommit + c->ncommit, 0);
	aborted(f, a, 1);
	aborted(f, b, 1);
	aborted(f, c, 1);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "the answers came 100.000 ms after the commit deadline");
	req_done(&q);

	/* A lead_time that leaves no room before the deadline is refused. */
	f->conf.commit_lead_ns = 2 * SEC;
	push(f, &q);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "lead_time 2000000000 ns leaves no time to prepare");
	req_done(&q);
}

/* A member that disconnects before it answers counts as missing at once. */
static void test_push_member_lost(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c;
	struct req q, s;

	start_abc(f, &a, &b, &c);
	push(f, &q);
	ack(f, a, 1, 0, NULL);
	ack(f, c, 1, 0, NULL);
	assert_false(q.replied);
	coord_peer_lost(f->co, b->peer, "connection closed by peer");
	assert_true(b->dropped);
	aborted(f, a, 1);
	aborted(f, c, 1);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "b                    timeout: disconnected before answering");
	req_done(&q);

	control(f, &s, "status", true, NULL);
	assert_has(s.body, "\"name\":\"b\",\"connected\":false");
	assert_has(s.body, "\"name\":\"a\",\"connected\":true");
	req_done(&s);
}

/* A member that falls silent is dropped after member_timeout. */
static void test_member_timeout(void **state)
{
	struct fx *f = *state;
	struct link *a, *b;
	struct req s;

	start_abc(f, &a, &b, NULL);
	f->mono += 3 * SEC;
	heartbeat(f, a, 0);
	coord_tick(f->co, f->mono);
	assert_false(a->dropped || b->dropped);
	f->mono += 2 * SEC;
	coord_tick(f->co, f->mono);
	assert_true(b->dropped);
	assert_false(a->dropped);
	control(f, &s, "status", false, NULL);
	assert_has(s.body, "members: 2");
	assert_has(s.body, "  b                down 0s");
	req_done(&s);
}

/* A connection that never registers is closed after 5 s. */
/*
 * A member that is gone and in no plan is forgotten after member_timeout
 * more (the table never shrank: after 1,024 names every new one was
 * refused); a sender of the plan stays, shown down.
 */
static void test_member_expiry(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *x;
	struct req q, s;

	f->conf.quorum = 2;
	start_abc(f, &a, &b, NULL);
	x = member(f, "x");
	push(f, &q);
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, 0, NULL);
	ack(f, x, 1, 0, "plan v1 has no windows for 'x': the gate is held");
	committed(f, a, 1);
	committed(f, b, 1);
	committed(f, x, 1);
	assert_true(q.replied && q.ok);
	req_done(&q);
	f->mono += 6 * SEC;
	coord_tick(f->co, f->mono);
	assert_true(a->dropped && b->dropped && x->dropped);
	control(f, &s, "status", false, NULL);
	assert_has(s.body, "members: 3");
	req_done(&s);
	f->mono += 4 * SEC;
	coord_tick(f->co, f->mono);
	control(f, &s, "status", false, NULL);
	assert_has(s.body, "members: 3");	/* not yet */
	req_done(&s);
	f->mono += 2 * SEC;
	coord_tick(f->co, f->mono);
	control(f, &s, "status", false, NULL);
	assert_has(s.body, "members: 2");
	assert_has(s.body, "  a ");
	assert_has(s.body, "  b ");
	assert_null(strstr(s.body, "  x "));
	req_done(&s);
	/* A new name registers, and the one forgotten may come back. */
	x = member(f, "x");
	assert_false(x->dropped);
	control(f, &s, "status", false, NULL);
	assert_has(s.body, "members: 3");
	req_done(&s);
}

static void test_handshake_timeout(void **state)
{
	struct fx *f = *state;
	struct link *l;

	fx_start(f);
	l = connect_link(f);
	f->mono += 4 * SEC;
	assert_true(coord_tick(f->co, f->mono) <= f->mono + 1 * SEC);
	assert_false(l->dropped);
	f->mono += 1 * SEC;
	coord_tick(f->co, f->mono);
	assert_true(l->dropped);
}

/* Frames before REGISTER, or REGISTER twice, close the connection. */
static void test_protocol_errors(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	struct link *l, *m;
	char err[256];

	fx_start(f);
	l = connect_link(f);
	nlh = msg_begin(f, TDM_MSG_ACK);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, 1);
	mnl_attr_put_u32(nlh, TDM_A_STATUS, 0);
	assert_int_equal(deliver(f, l, nlh, err, sizeof(err)), -1);
	assert_string_equal(err, "ACK before REGISTER");
	coord_peer_lost(f->co, l->peer, err);
	assert_true(l->dropped);

	m = member(f, "a");
	nlh = msg_begin(f, TDM_MSG_REGISTER);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "a");
	assert_int_equal(deliver(f, m, nlh, err, sizeof(err)), -1);
	assert_string_equal(err, "REGISTER twice");
	coord_peer_lost(f->co, m->peer, err);
}

/* The plan file goes out once every sender is there, and not before. */
static void test_quorum_pushes_file(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c;
	struct req h;

	write_plan_file(f);
	start_abc(f, &a, &b, NULL);
	assert_false(a->have_plan || b->have_plan);
	c = member(f, "c");
	assert_true(a->have_plan && b->have_plan && c->have_plan);
	assert_int_equal(c->plan.version, 1);
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, 0, NULL);
	ack(f, c, 1, 0, NULL);
	control(f, &h, "plan history", false, NULL);
	assert_has(h.body, "file");
	req_done(&h);
}

/*
 * The plan file is what should be in force: its start-up push, aborted
 * (c refused it), is tried again after ack_timeout, numbered anew, and
 * commits; a push by hand in the meantime replaces it.
 */
static void test_file_push_retried(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c;
	int64_t next;

	write_plan_file(f);
	start_abc(f, &a, &b, &c);
	assert_int_equal(c->plan.version, 1);
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, 0, NULL);
	ack(f, c, 1, EBUSY, "busy");
	aborted(f, a, 1);
	aborted(f, b, 1);
	next = coord_tick(f->co, f->mono);
	assert_true(next <= f->mono + 5 * SEC);
	f->mono += 5 * SEC;
	heartbeat(f, a, 0);
	heartbeat(f, b, 0);
	heartbeat(f, c, 0);
	coord_tick(f->co, f->mono);
	assert_int_equal(c->plan.version, 2);
	assert_true(c->commit_by != 0);
	ack(f, a, 2, 0, NULL);
	ack(f, b, 2, 0, NULL);
	ack(f, c, 2, 0, NULL);
	committed(f, a, 2);
	committed(f, b, 2);
	committed(f, c, 2);
	/* Committed: no more tries. */
	f->mono += 10 * SEC;
	heartbeat(f, a, 2);
	heartbeat(f, b, 2);
	heartbeat(f, c, 2);
	coord_tick(f->co, f->mono);
	assert_int_equal(c->plan.version, 2);
}

/*
 * A second connection registering a connected name: refused by default
 * while the first is alive; taken over once the first has been silent for
 * member_timeout, or at once with name_takeover allow.
 */
static void test_name_takeover(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *a2;
	struct nlmsghdr *nlh;

	start_abc(f, &a, &b, NULL);
	a2 = connect_link(f);
	nlh = msg_begin(f, TDM_MSG_REGISTER);
	mnl_attr_put_strz(nlh, TDM_A_NAME, "a");
	assert_int_equal(deliver_or_close(f, a2, nlh), -1);
	assert_true(a2->dropped);
	assert_false(a->dropped);
	/* a silent for longer than member_timeout: dead, the new one wins. */
	f->mono += 4 * SEC;
	heartbeat(f, b, 0);
	f->mono += 2 * SEC;
	a2 = connect_link(f);
	register_as(f, a2, "a", NULL);
	assert_false(a2->dropped);
	assert_true(a->dropped);
	/* With the policy allow, a live one is replaced too. */
	f->conf.name_takeover = TAKEOVER_ALLOW;
	a = connect_link(f);
	register_as(f, a, "b", NULL);
	assert_false(a->dropped);
	assert_true(b->dropped);
}

/* Members that connect after a push get the same plan, version and base. */
static void test_late_member(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c;
	struct req q;

	f->conf.quorum = 1;
	start_abc(f, &a, NULL, NULL);
	push(f, &q);
	ack(f, a, 1, 0, NULL);
	committed(f, a, 1);
	assert_true(q.replied && q.ok);
	assert_has(q.body, "b                    never connected");
	req_done(&q);
	f->mono += 10 * SEC;
	heartbeat(f, a, 1);
	b = member(f, "b");
	c = member(f, "c");
	assert_true(b->have_plan && c->have_plan);
	assert_int_equal(b->plan.version, a->plan.version);
	assert_true(b->plan.base_time == a->plan.base_time);
	/* Committed already: installed at once, not prepared. */
	assert_true(b->commit_by == 0);
	assert_int_equal(c->welcome_version, 1);
}

/* A member that registers while a prepare goes on joins it. */
static void test_member_joins_prepare(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c;
	struct req q;

	start_abc(f, &a, &b, NULL);
	push(f, &q);
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, 0, NULL);
	assert_int_equal(a->ncommit, 0);	/* c, a sender, is missing */
	c = member(f, "c");
	assert_true(c->have_plan && c->commit_by == a->commit_by);
	ack(f, c, 1, 0, NULL);
	committed(f, a, 1);
	committed(f, b, 1);
	committed(f, c, 1);
	assert_true(q.replied && q.ok);
	req_done(&q);
}

/*
 * A member cut off after it prepared: the others commit without it (it
 * prepared); it holds from the base time, and when it reconnects it
 * reports the plan it holds prepared and is sent the commit.
 */
static void test_cut_off_after_prepare(void **state)
{
	struct fx *f = *state;
	struct link *a, *b, *c, *c2;
	struct req q;

	start_abc(f, &a, &b, &c);
	push(f, &q);
	ack(f, c, 1, 0, NULL);
	coord_peer_lost(f->co, c->peer, "connection reset");
	ack(f, a, 1, 0, NULL);
	ack(f, b, 1, 0, NULL);
	assert_int_equal(a->ncommit + b->ncommit, 2);
	assert_int_equal(c->ncommit + c->nabort, 0);
	committed(f, a, 1);
	committed(f, b, 1);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "plan v1: committed");
	assert_has(q.body, "c                    ok in 0.000 ms; commit no answer: cut off before the outcome: it holds from the base time until it reconnects");
	req_done(&q);

	c2 = connect_link(f);
	register_prepared(f, c2, "c", NULL, 1);
	assert_int_equal(c2->ncommit, 1);
	assert_int_equal(c2->outcome_version, 1);
	/* It runs the plan now: not sent it again. */
	assert_false(c2->have_plan);
	outcome_ack(f, c2, TDM_PHASE_COMMIT, 1, 0, NULL);
}

/*
 * A coordinator that restarted between prepare and outcome: a plan no
 * member runs is aborted everywhere once the quorum is there (not
 * before: a member that runs it may still come), then the plan file is
 * adopted or pushed as usual; one that a member runs was committed, and
 * the others are sent its commit at once.
 */
static void test_restart_resolves_prepared(void **state)
{
	struct fx *f = *state;
	struct tdm_plan runs;
	struct link *l[3];
	struct req h;
	char err[256];
	int i;

	write_plan_file(f);
	assert_int_equal(tdm_plan_parse(plan3, "p", &runs, err, sizeof(err)), 0);
	runs.version = 4;
	runs.base_time = TAI_NOW - 100 * SEC;
	f->issued = 5;		/* v5 was recorded before its prepare left */
	fx_start(f);
	for (i = 0; i < 3; i++) {
		l[i] = connect_link(f);
		register_prepared(f, l[i], (const char *[]){ "a", "b", "c" }[i],
				  &runs, 5);
		if (i < 2)
			assert_int_equal(l[i]->nabort + l[i]->ncommit, 0);
	}
	for (i = 0; i < 3; i++) {
		assert_int_equal(l[i]->nabort, 1);
		assert_int_equal(l[i]->ncommit, 0);
		assert_int_equal(l[i]->outcome_version, 5);
		/* Back on v4, which is the plan file: adopted, not sent. */
		assert_false(l[i]->have_plan);
		outcome_ack(f, l[i], TDM_PHASE_ABORT, 5, 0, NULL);
	}
	control(f, &h, "plan history", true, NULL);
	assert_has(h.body, "\"version\":4");
	assert_has(h.body, "\"source\":\"adopted\"");
	req_done(&h);
	/* The next plan is numbered above the aborted v5, not as v5 again. */
	control(f, &h, "plan push", false, plan3);
	assert_int_equal(l[0]->plan.version, 6);
	for (i = 0; i < 3; i++)
		ack(f, l[i], 6, 0, NULL);
	for (i = 0; i < 3; i++)
		committed(f, l[i], 6);
	assert_true(h.replied && h.ok);
	req_done(&h);
	tdm_plan_free(&runs);
}

static void test_restart_commits_what_runs(void **state)
{
	struct fx *f = *state;
	struct tdm_plan runs;
	struct link *l[3];
	char err[256];
	int i;

	assert_int_equal(tdm_plan_parse(plan3, "p", &runs, err, sizeof(err)), 0);
	runs.version = 5;
	runs.base_time = TAI_NOW - 1 * SEC;
	f->issued = 5;
	fx_start(f);
	/* a got the commit of v5 before the old coordinator died. */
	l[0] = connect_link(f);
	register_prepared(f, l[0], "a", &runs, 0);
	runs.version = 4;
	for (i = 1; i < 3; i++) {
		l[i] = connect_link(f);
		register_prepared(f, l[i], (const char *[]){ "a", "b", "c" }[i],
				  &runs, 5);
		assert_int_equal(l[i]->ncommit, 1);
		assert_int_equal(l[i]->outcome_version, 5);
		assert_int_equal(l[i]->nabort, 0);
	}
	assert_int_equal(l[0]->ncommit + l[0]->nabort, 0);
	tdm_plan_free(&runs);
}

/* A restarted coordinator adopts the plan every member already runs. */
static void test_adopt(void **state)
{
	struct fx *f = *state;
	struct link *l[3];
	struct tdm_plan runs;
	struct req h;
	int i;

	write_plan_file(f);
	runs_plan3(&runs, 7, TAI_NOW - 100 * SEC);
	f->issued = 7;		/* the coordinator before it issued v7 */
	fx_start(f);
	for (i = 0; i < 3; i++) {
		l[i] = connect_link(f);
		register_as(f, l[i], (const char *[]){ "a", "b", "c" }[i], &runs);
	}
	for (i = 0; i < 3; i++)
		assert_false(l[i]->have_plan);
	control(f, &h, "plan history", true, NULL);
	assert_has(h.body, "\"version\":7");
	assert_has(h.body, "\"source\":\"adopted\"");
	req_done(&h);
	tdm_plan_free(&runs);
}

/* Push plan3 to the n links and see every one prepare and commit it as v. */
static void push_commit(struct fx *f, struct link **l, int n, uint32_t v)
{
	struct req q;
	int i;

	push(f, &q);
	for (i = 0; i < n; i++) {
		assert_int_equal(l[i]->plan.version, v);
		ack(f, l[i], v, 0, NULL);
	}
	for (i = 0; i < n; i++)
		committed(f, l[i], v);
	assert_true(q.replied && q.ok);
	req_done(&q);
	assert_int_equal(f->issued, v);
}

/* Stop the coordinator and start a new one on the same state_file. */
static void fx_restart(struct fx *f)
{
	int i;

	coord_free(f->co);
	for (i = 0; i < f->nlinks; i++) {
		assert_true(f->links[i].dropped);
		if (f->links[i].have_plan)
			tdm_plan_free(&f->links[i].plan);
	}
	memset(f->links, 0, sizeof(f->links));
	f->nlinks = 0;
	fx_start(f);
}

/*
 * A key holder that is no member (x, y) reports versions this coordinator
 * never issued: a plan prepared far above the last one, the last version
 * there is, a plan it runs and a heartbeat with it.  It is told to abort
 * what it prepared, and numbering goes on from what was issued: v2, v3,
 * never v1002, never v0.
 */
static void test_hostile_versions(void **state)
{
	struct fx *f = *state;
	struct link *l[6], *x, *y;
	struct tdm_plan runs;

	runs_plan3(&runs, UINT32_MAX, TAI_NOW);
	start_abc(f, &l[0], &l[1], &l[2]);
	push_commit(f, l, 3, 1);

	/* Connected, x and y are sent the prepares too, and answer them. */
	x = l[3] = connect_link(f);
	register_prepared(f, x, "x", NULL, 1 + 1000);
	assert_int_equal(x->nabort, 1);
	assert_int_equal(x->outcome_version, 1001);
	outcome_ack(f, x, TDM_PHASE_ABORT, 1001, 0, NULL);
	push_commit(f, l, 4, 2);

	y = l[4] = connect_link(f);
	register_prepared(f, y, "y", NULL, UINT32_MAX);
	assert_int_equal(y->nabort, 1);
	assert_int_equal(y->outcome_version, UINT32_MAX);
	outcome_ack(f, y, TDM_PHASE_ABORT, UINT32_MAX, 0, NULL);
	heartbeat(f, y, UINT32_MAX);
	push_commit(f, l, 5, 3);

	l[5] = connect_link(f);
	register_as(f, l[5], "z", &runs);
	push_commit(f, l, 6, 4);
	assert_int_equal(f->saves, 4);
	tdm_plan_free(&runs);
}

/*
 * Across a restart the numbering goes on from the state_file, not from
 * what members say: the plan they all run (v2, issued) is adopted while a
 * key holder claims v0xffffffff; a plan "run" by every sender under a
 * version never issued (v1002) is not adopted but pushed as v3.
 */
static void test_restart_hostile_versions(void **state)
{
	struct fx *f = *state;
	const char *const names[] = { "a", "b", "c" };
	struct link *l[4], *x;
	struct tdm_plan runs;
	struct req h;
	int i;

	write_plan_file(f);
	runs_plan3(&runs, 2, TAI_NOW - 100 * SEC);
	f->issued = 2;
	fx_start(f);
	x = connect_link(f);
	runs.version = UINT32_MAX;
	register_prepared(f, x, "x", &runs, 2 + 1000);
	runs.version = 2;
	for (i = 0; i < 3; i++) {
		l[i] = connect_link(f);
		register_as(f, l[i], names[i], &runs);
	}
	/* Quorum: x's prepared plan is aborted, v2 adopted, nothing sent. */
	assert_int_equal(x->nabort, 1);
	assert_int_equal(x->outcome_version, 1002);
	for (i = 0; i < 3; i++)
		assert_false(l[i]->have_plan);
	control(f, &h, "plan history", true, NULL);
	assert_has(h.body, "\"version\":2,");
	assert_has(h.body, "\"source\":\"adopted\"");
	req_done(&h);
	l[3] = x;
	push_commit(f, l, 4, 3);

	/* Every sender claims v1002, never issued: pushed anew, as v4. */
	fx_restart(f);
	runs.version = 1002;
	for (i = 0; i < 3; i++) {
		l[i] = connect_link(f);
		register_prepared(f, l[i], names[i], &runs, 0);
	}
	for (i = 0; i < 3; i++) {
		assert_true(l[i]->have_plan);
		assert_int_equal(l[i]->plan.version, 4);
	}
	assert_int_equal(f->issued, 4);
	tdm_plan_free(&runs);
}

/*
 * Versions never wrap: v0xffffffff is the last one issued; after it every
 * push is refused with the reason and nothing is sent.  A push whose
 * version cannot be recorded is refused too.
 */
static void test_versions_exhausted(void **state)
{
	struct fx *f = *state;
	struct link *l[3];
	char body[512];
	unsigned int n;
	struct req q;

	f->issued = UINT32_MAX - 1;
	start_abc(f, &l[0], &l[1], &l[2]);
	push_commit(f, l, 3, UINT32_MAX);
	n = l[0]->nframes;
	push(f, &q);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "plan versions are used up: v4294967295 was the last (state); versions never wrap");
	req_done(&q);
	assert_int_equal(l[0]->nframes, n);
	assert_int_equal(f->issued, UINT32_MAX);
	/* Nor does a version given by hand go back. */
	snprintf(body, sizeof(body), "version 7\n%s", plan3);
	control(f, &q, "plan push", false, body);
	assert_false(q.ok);
	assert_has(q.body, "plan version 7 is not above the highest version issued (4294967295)");
	req_done(&q);
	assert_int_equal(l[0]->nframes, n);
}

/* A version that cannot be recorded is not issued: nothing leaves. */
static void test_issued_not_recorded(void **state)
{
	struct fx *f = *state;
	struct link *a;
	struct req q;

	start_abc(f, &a, NULL, NULL);
	f->save_fails = true;
	push(f, &q);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "cannot record plan version 1: state: cannot write: No space left on device");
	req_done(&q);
	assert_false(a->have_plan);
	f->save_fails = false;
	f->conf.quorum = 1;
	push_commit(f, &a, 1, 1);
}

/* The 3 x 3 barrel shifter, senders a b c. */
static const char plan_nxm[] =
	"[receiver x0]\naddress 198.18.1.1\n"
	"[receiver x1]\naddress 198.18.1.2\n"
	"[receiver x2]\naddress 198.18.1.3\n"
	"[barrel]\nsenders a b c\nslot 1ms\ndead_time 100us\n";

/* A member of level 3. */
static struct link *member3(struct fx *f, const char *name)
{
	struct link *l = connect_link(f);

	l->level = TDM_PROTO_LEVEL;
	register_as(f, l, name, NULL);
	return l;
}

/*
 * An N x M plan goes to members of level 3 with its receivers and every
 * window's destination, in two phases as any plan; a late member gets
 * it with them too.
 */
static void test_push_nxm(void **state)
{
	struct fx *f = *state;
	struct link *l[3], *c;
	struct req q;
	unsigned int i;

	fx_start(f);
	l[0] = member3(f, "a");
	l[1] = member3(f, "b");
	/* The level is the session's: a heartbeat does not change it. */
	heartbeat(f, l[0], 0);
	f->conf.quorum = 2;
	control(f, &q, "plan push", false, plan_nxm);
	assert_false(q.replied);
	for (i = 0; i < 2; i++) {
		assert_true(l[i]->have_plan);
		assert_int_equal(l[i]->plan.nreceivers, 3);
		assert_string_equal(l[i]->plan.receivers[2].addr, "198.18.1.3");
		assert_int_equal(l[i]->plan.senders[1].win[0].dest, 1);
		assert_true(l[i]->commit_by != 0);
		ack(f, l[i], 1, 0, NULL);
	}
	for (i = 0; i < 2; i++)
		committed(f, l[i], 1);
	assert_true(q.replied && q.ok);
	req_done(&q);
	/* c comes late: the plan, decided, with its receivers */
	c = member3(f, "c");
	assert_true(c->have_plan);
	assert_int_equal(c->commit_by, 0);
	assert_int_equal(c->plan.nreceivers, 3);
	assert_int_equal(c->plan.senders[2].win[0].dest, 2);
}

/*
 * A member of level 2 cannot take a plan with receivers: it counts as
 * refusing (nobody switches), and is never sent the plan; a
 * one-destination plan still goes to it.
 */
static void test_push_nxm_old_member(void **state)
{
	struct fx *f = *state;
	struct link *l[3];
	struct req q;

	fx_start(f);
	l[0] = member3(f, "a");
	l[1] = member3(f, "b");
	l[2] = member(f, "c");		/* no PROTO: level 2 */
	control(f, &q, "plan push", true, plan_nxm);
	assert_false(l[2]->have_plan);
	assert_false(q.replied);
	ack(f, l[0], 1, 0, NULL);
	ack(f, l[1], 1, 0, NULL);
	/* refused: a and b, which prepared, abort */
	assert_int_equal(l[0]->nabort + l[1]->nabort, 2);
	assert_int_equal(l[0]->ncommit + l[1]->ncommit, 0);
	aborted(f, l[0], 1);
	aborted(f, l[1], 1);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "\"outcome\":\"aborted\"");
	assert_has(q.body, "1 refused, 0 did not answer (first: c)");
	assert_has(q.body, "speaks protocol level 2: a plan with receivers needs 3");
	req_done(&q);
	assert_false(l[2]->have_plan);
	/* a one-destination plan goes to all three, c included */
	push_commit(f, l, 3, 2);
	assert_true(l[2]->have_plan);
	assert_int_equal(l[2]->plan.nreceivers, 0);
}

/* More receivers than a qdisc has destination classes: refused at push. */
static void test_push_too_many_receivers(void **state)
{
	struct fx *f = *state;
	struct link *l[2];
	char plan[4096];
	struct req q;
	size_t n = 0;
	int i;

	for (i = 0; i <= TDMWIN_MAX_DESTS; i++)
		n += (size_t)snprintf(plan + n, sizeof(plan) - n,
				      "[receiver x%d]\naddress 198.18.1.%d\n",
				      i, i + 1);
	snprintf(plan + n, sizeof(plan) - n,
		 "[barrel]\nsenders a b\nslot 100us\ndead_time 10us\n");
	start_abc(f, &l[0], &l[1], NULL);
	control(f, &q, "plan push", false, plan);
	assert_true(q.replied);
	assert_false(q.ok);
	assert_has(q.body, "a plan with 33 receivers: a tdmwin qdisc has 32 destination classes");
	req_done(&q);
	assert_false(l[0]->have_plan);
	assert_false(l[1]->have_plan);
}

/* A second push while one waits for acks is refused. */
static void test_push_while_pushing(void **state)
{
	struct fx *f = *state;
	struct link *a, *b;
	struct req q, q2;

	start_abc(f, &a, &b, NULL);
	push(f, &q);
	ack(f, a, 1, 0, NULL);
	push(f, &q2);
	assert_true(q2.replied);
	assert_false(q2.ok);
	assert_has(q2.body, "a push of plan v1 is in progress (preparing, 1 answers missing)");
	req_done(&q2);
	f->conf.quorum = 2;
	ack(f, b, 1, 0, NULL);
	push(f, &q2);
	assert_has(q2.body, "a push of plan v1 is in progress (committed, 2 answers missing)");
	req_done(&q2);
	committed(f, a, 1);
	committed(f, b, 1);
	assert_true(q.replied && q.ok);
	req_done(&q);
}

/* Stopping answers a waiting push and drops every link. */
static void test_stop_answers_waiter(void **state)
{
	struct fx *f = *state;
	struct link *a;
	struct req q;

	start_abc(f, &a, NULL, NULL);
	push(f, &q);
	coord_free(f->co);
	f->co = NULL;
	assert_true(q.replied);
	assert_false(q.ok);
	assert_string_equal(q.body, "tdmd is shutting down\n");
	req_done(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_push_acked_by_all, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_push_nack, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_member_expiry, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_name_takeover, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_push_ack_timeout, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_push_member_lost, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_member_timeout, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_handshake_timeout, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_protocol_errors, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_quorum_pushes_file, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_late_member, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_adopt, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_push_while_pushing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stop_answers_waiter, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_commit_deadline, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_file_push_retried, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_member_joins_prepare, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_cut_off_after_prepare, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_restart_resolves_prepared, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_restart_commits_what_runs, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_versions, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_restart_hostile_versions, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_versions_exhausted, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_issued_not_recorded, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_push_nxm, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_push_nxm_old_member, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_push_too_many_receivers, fx_setup, fx_teardown),
	};

	tdm_log_init("test_coord", LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
