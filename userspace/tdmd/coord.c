// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator: runs on the receiver, holds the plan, and hands it to
 * the members.
 *
 * Start-up: load the plan file, accept members, and once the quorum (all
 * senders of the plan by default) is connected, either adopt the plan the
 * members already run (same content, version and base time: a restarted
 * coordinator changes nothing) or push it as a new version.
 *
 * A push is all or nothing, in two phases.  It picks a base time
 * lead_time ahead and sends the plan as a prepare to every connected
 * member: each installs it as its pending plan, unconfirmed (the kernel
 * holds the gate from the base time until the outcome is known), and
 * acks, or nacks with the kernel's reason.  Once every member answered,
 * or at the deadline (ack_timeout, and commit_lead before the base time),
 * the coordinator decides: COMMIT if every member acked and every sender
 * of the plan (or the quorum) is among them, else ABORT; then it collects
 * the answers to that and replies to tdmctl.  A member cut off before the
 * outcome holds from the base time; when it reconnects it reports the
 * plan it holds prepared and is sent the outcome (a restarted coordinator
 * that never knew it commits it if another member runs it, else aborts
 * it).  A member that connects after a commit gets the current plan at
 * once, with the same version and base time.
 *
 * This file is the logic only, with its state in a struct coord: the
 * connections and the clocks come through a struct coord_io (the network
 * in coord_net.c; fakes in tests/test_coord.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_json.h"
#include "tdm_log.h"
#include "tdm_prom.h"
#include "tdm_ptp.h"
#include "tdm_util.h"
#include "tdmd.h"

#define HANDSHAKE_NS	(5 * (int64_t)TDM_NSEC_PER_SEC)
#define MAX_PEERS	2048	/* below the loop's EV_MAX */

enum ack_state { ACK_NONE, ACK_WAIT, ACK_OK, ACK_NACK, ACK_TIMEOUT };

static const char *const ack_names[] = {
	"none", "waiting", "ok", "nack", "timeout"
};

/* The answer to the outcome (COMMIT or ABORT) sent to a member. */
enum fin_state { FIN_NONE, FIN_WAIT, FIN_OK, FIN_FAIL, FIN_LOST };

static const char *const fin_names[] = {
	"none", "waiting", "done", "failed", "no answer"
};

enum push_phase { PH_PREPARE, PH_COMMIT, PH_ABORT };

struct member {
	char name[TDM_NAME_MAX];
	struct coord_peer *peer;		/* NULL while disconnected */
	char addr[80];
	int64_t since;			/* monotonic: (dis)connected at */
	/* what it said it runs when it registered */
	uint32_t run_version;
	int64_t run_base;
	uint8_t run_digest[32];
	bool has_digest;
	/* its last heartbeat */
	bool hb;
	uint32_t sync_state;
	int64_t offset;
	uint32_t port_state;
	bool hold;
	char reason[160];
	bool has_xstats;
	struct tc_tdmwin_xstats xs;
	uint32_t version, pending_version;
	uint32_t prepared;		/* a plan it holds awaiting the outcome */
	uint32_t proto;			/* the protocol level it speaks */
	/* the answer to the latest plan sent to it */
	enum ack_state ack;
	uint32_t ack_version;
	char ack_msg[256];
	int64_t ack_ns;			/* after the push started */
	/* the answer to the latest COMMIT or ABORT sent to it */
	enum fin_state fin;
	uint16_t fin_type;		/* TDM_MSG_COMMIT or TDM_MSG_ABORT */
	uint32_t fin_version;
	char fin_msg[256];
	int64_t fin_ns;			/* after the push started */
};

/* A connection, registered or not yet. */
struct coord_peer {
	void *link;			/* the transport's */
	char addr[80];			/* "198.18.0.2:40412" */
	struct member *m;		/* after REGISTER */
	int64_t hs_deadline;
	int64_t last_rx;		/* monotonic: its last frame */
	bool busy;			/* inside its own frame */
	bool dead;			/* close when no longer busy */
	char why[160];
	struct coord_peer *next;
};

struct hist {
	uint32_t version;
	int64_t base_time;
	int clockid;
	char source[16];		/* "file", "tdmctl", "adopted" */
	char outcome[12];		/* "preparing", "committed", "aborted" */
	unsigned int sent, acked, nacked;
	int64_t ack_ns;			/* push to last ack */
	int64_t fin_ns;			/* push to last answer to the outcome */
};

struct coord {
	const struct tdmd_conf *cf;
	struct coord_io io;
	uint8_t *frame;			/* TDM_MAX_FRAME bytes */
	struct coord_peer *peers;
	int npeers;
	struct member *members;
	unsigned int nmembers, cap_members;

	struct tdm_plan desired;	/* from the plan file, until pushed */
	bool have_desired;
	bool started;			/* initial adopt/push done */
	struct tdm_plan cur;		/* latest plan committed */
	bool have_cur;
	struct tdm_plan prev;		/* the one before, while cur pending */
	bool have_prev;
	struct tdm_plan next;		/* the plan being prepared */
	bool have_next;
	/*
	 * The highest plan version this coordinator issued, in this run or
	 * (state_file) a run before it: the next plan is numbered above it.
	 * Only a version issued here moves it, never one a member reports.
	 */
	uint32_t issued;
	struct tdm_plan retry;		/* the plan file's, while its push is
					 * retried after an abort
					 */
	bool have_retry;
	int64_t retry_at;		/* monotonic */

	struct {
		bool active;
		enum push_phase phase;
		uint32_t version;
		int64_t base_time;	/* the plan's clock */
		int clockid;
		int64_t commit_by;	/* the plan's clock */
		int64_t start, deadline;	/* monotonic */
		int64_t fin_deadline;		/* monotonic */
		unsigned int sent, waiting;	/* prepares, answers missing */
		unsigned int fin_sent, fin_waiting;
		struct ctl_req *waiter;
		char source[16];
		char why[512];		/* why it was aborted */
		bool sending;		/* inside a send loop */
	} push;

	struct hist *hist;
	unsigned int nhist;
};

static void peer_close(struct coord *co, struct coord_peer *p, const char *why);

static int64_t now_ns(const struct coord *co)
{
	return co->io.mono_ns(co->io.ctx);
}

static int64_t clock_ns(const struct coord *co, int clockid)
{
	return co->io.clock_ns(co->io.ctx, clockid);
}

static struct nlmsghdr *co_frame(struct coord *co, uint16_t type)
{
	return tdm_frame_begin(co->frame, TDM_MAX_FRAME, type);
}

/* Close p now, or once its frame is handled. */
static void peer_fail(struct coord *co, struct coord_peer *p, const char *why)
{
	if (!p->busy) {
		peer_close(co, p, why);
		return;
	}
	p->dead = true;
	tdm_strlcpy(p->why, why, sizeof(p->why));
}

/* ---- members ---- */

static struct member *member_find(const struct coord *co, const char *name)
{
	unsigned int i;

	for (i = 0; i < co->nmembers; i++)
		if (!strcmp(co->members[i].name, name))
			return &co->members[i];
	return NULL;
}

static struct member *member_get(struct coord *co, const char *name)
{
	struct member *m = member_find(co, name);
	unsigned int i;

	if (m)
		return m;
	if (co->nmembers == TDM_MAX_SENDERS)
		return NULL;
	if (co->nmembers == co->cap_members) {
		unsigned int cap = co->cap_members ? co->cap_members * 2 : 16;
		struct member *n = realloc(co->members, cap * sizeof(*n));

		if (!n)
			return NULL;
		co->members = n;
		co->cap_members = cap;
		/* Peers point at members: fix them after the move. */
		for (i = 0; i < co->nmembers; i++)
			if (co->members[i].peer)
				co->members[i].peer->m = &co->members[i];
	}
	m = &co->members[co->nmembers++];
	memset(m, 0, sizeof(*m));
	strcpy(m->name, name);
	return m;
}

static bool in_plan(const struct tdm_plan *p, const char *name)
{
	return tdm_plan_sender(p, name) != NULL;
}

/* Connected, registered members that are senders of plan p. */
static unsigned int connected_in(const struct coord *co,
				 const struct tdm_plan *p)
{
	unsigned int i, n = 0;

	for (i = 0; i < co->nmembers; i++)
		if (co->members[i].peer && in_plan(p, co->members[i].name))
			n++;
	return n;
}

/* v if it is above max so far and at most ceil, else max. */
static uint32_t max_upto(uint32_t max, uint32_t v, uint32_t ceil)
{
	return v > max && v <= ceil ? v : max;
}

/*
 * The highest version in use or seen prepared, here or at a member, of
 * those at most ceil: a member may report any number (a key holder can
 * claim PREPARED 0xffffffff), and only versions issued here are trusted.
 */
static uint32_t highest_version(const struct coord *co, uint32_t ceil)
{
	uint32_t v = co->have_cur ? max_upto(0, co->cur.version, ceil) : 0;
	unsigned int i;

	if (co->have_next)
		v = max_upto(v, co->next.version, ceil);
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];

		v = max_upto(v, m->run_version, ceil);
		v = max_upto(v, m->version, ceil);
		v = max_upto(v, m->pending_version, ceil);
		v = max_upto(v, m->prepared, ceil);
	}
	for (i = 0; i < co->nhist; i++)
		v = max_upto(v, co->hist[i].version, ceil);
	return v;
}

/*
 * Number p (its own version if it has one, from the plan file or tdmctl,
 * else one above the highest issued) and record the number before the
 * plan leaves: 0, or -1 with err set.  Versions are never reused and
 * never wrap: after 0xffffffff every push is refused (0 means "no plan"
 * to a member, and a lower number would be refused as stale).
 */
static int number_plan(struct coord *co, struct tdm_plan *p, char *err,
		       size_t errlen)
{
	uint32_t seen = highest_version(co, UINT32_MAX);
	char e[256];

	if (p->version && p->version <= co->issued)
		return tdm_set_err(err, errlen, "plan version %u is not above the highest version issued (%u)",
				   p->version, co->issued);
	if (!p->version && co->issued == UINT32_MAX)
		return tdm_set_err(err, errlen, "plan versions are used up: v%u was the last (%s); versions never wrap, see tdmd(8) \"Plan versions\"",
				   co->issued, co->cf->state_file);
	if (!p->version)
		p->version = co->issued + 1;
	if (seen >= p->version)
		log_warn("plan v%u: a member reports v%u, which this coordinator never issued (the highest it issued: v%u, in %s): not trusted; a member that runs a plan numbered above v%u refuses this one as stale (see tdmd(8) \"Plan versions\")",
			 p->version, seen, co->issued, co->cf->state_file,
			 p->version);
	if (co->io.save_issued(co->io.ctx, p->version, e, sizeof(e)))
		return tdm_set_err(err, errlen, "cannot record plan version %u: %s",
				   p->version, e);
	co->issued = p->version;
	return 0;
}

/* ---- sending ---- */

/*
 * A plan: a prepare with commit_by, or installed at once without (0).
 * 0 sent, -1 failed (the link is dropped), 1 refused here: a member of
 * level 2 cannot take a plan with receivers (its decoder refuses their
 * attributes), so it counts as a member that refused the plan.
 */
static int send_plan(struct coord *co, struct coord_peer *p,
		     const struct tdm_plan *plan, int64_t commit_by)
{
	struct nlmsghdr *nlh = co_frame(co, TDM_MSG_PLAN);
	struct member *mb = p->m;
	char err[256];

	if (plan->nreceivers && mb->proto < TDM_PROTO_RECEIVERS) {
		mb->ack = ACK_NACK;
		mb->ack_version = plan->version;
		snprintf(mb->ack_msg, sizeof(mb->ack_msg),
			 "speaks protocol level %u: a plan with receivers needs %u (a newer tdmd)",
			 mb->proto, TDM_PROTO_RECEIVERS);
		log_warn("member %s: plan v%u not sent: it %s", mb->name,
			 plan->version, mb->ack_msg);
		return 1;
	}

	if (tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, plan)) {
		peer_fail(co, p, "the plan does not fit in a frame");
		return -1;
	}
	if (commit_by)
		mnl_attr_put_u64(nlh, TDM_A_COMMIT_BY, (uint64_t)commit_by);
	if (co->io.send(co->io.ctx, p->link, nlh, err, sizeof(err))) {
		peer_fail(co, p, err);
		return -1;
	}
	p->m->ack = ACK_WAIT;
	p->m->ack_version = plan->version;
	p->m->ack_msg[0] = '\0';
	return 0;
}

/* COMMIT or ABORT of version to p's member. */
static int send_outcome(struct coord *co, struct coord_peer *p, uint16_t type,
			uint32_t version, const char *why)
{
	struct nlmsghdr *nlh = co_frame(co, type);
	char err[256];

	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION, version);
	if (type == TDM_MSG_ABORT && why && why[0])
		mnl_attr_put_strz(nlh, TDM_A_MESSAGE, why);
	if (co->io.send(co->io.ctx, p->link, nlh, err, sizeof(err))) {
		peer_fail(co, p, err);
		return -1;
	}
	p->m->fin = FIN_WAIT;
	p->m->fin_type = type;
	p->m->fin_version = version;
	p->m->fin_msg[0] = '\0';
	return 0;
}

static void hist_add(struct coord *co, const struct tdm_plan *p,
		     const char *source, const char *outcome)
{
	struct hist *h;

	if (co->nhist == co->cf->history) {
		memmove(co->hist, co->hist + 1, (co->nhist - 1) * sizeof(*h));
		co->nhist--;
	}
	h = &co->hist[co->nhist++];
	memset(h, 0, sizeof(*h));
	h->version = p->version;
	h->base_time = p->base_time;
	h->clockid = p->clockid;
	tdm_strlcpy(h->source, source, sizeof(h->source));
	tdm_strlcpy(h->outcome, outcome, sizeof(h->outcome));
}

static const struct hist *hist_of(const struct coord *co, uint32_t version)
{
	unsigned int i;

	for (i = co->nhist; i-- > 0;)
		if (co->hist[i].version == version)
			return &co->hist[i];
	return NULL;
}

static struct hist *hist_find(struct coord *co, uint32_t version)
{
	return (struct hist *)hist_of(co, version);
}

/* Make p (already numbered, with its base time) the current plan. */
static void set_current(struct coord *co, struct tdm_plan *p)
{
	int64_t now = clock_ns(co, p->clockid);

	if (co->have_prev)
		tdm_plan_free(&co->prev);
	co->have_prev = false;
	/* Keep the outgoing plan for status until the new one starts. */
	if (co->have_cur && co->cur.base_time <= now && p->base_time > now) {
		co->prev = co->cur;
		co->have_prev = true;
	} else if (co->have_cur) {
		tdm_plan_free(&co->cur);
	}
	co->cur = *p;
	co->have_cur = true;
	memset(p, 0, sizeof(*p));
}

static void push_decide(struct coord *co);
static void push_finish(struct coord *co);

/* How many of the plan being prepared's senders must prepare it. */
static unsigned int push_need(const struct coord *co)
{
	unsigned int need = co->next.nsenders;

	if (co->cf->quorum && co->cf->quorum < need)
		need = co->cf->quorum;
	return need;
}

/*
 * May the prepare be decided before its deadline?  Once every member it
 * was sent to answered, and either one refused or failed (abort) or
 * enough of the plan's senders prepared (commit).  A sender of the plan
 * that is not connected yet may still come before the deadline.
 */
static bool push_ready(const struct coord *co)
{
	unsigned int i, senders = 0, need = push_need(co);

	if (co->push.waiting)
		return false;
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];

		if (m->ack_version != co->push.version)
			continue;
		if (m->ack == ACK_NACK || m->ack == ACK_TIMEOUT)
			return true;
		if (m->ack == ACK_OK && in_plan(&co->next, m->name))
			senders++;
	}
	return senders >= need;
}

/* Send the plan being prepared to p's member; counts it in the push. */
static void push_prepare_one(struct coord *co, struct coord_peer *p)
{
	int rc = send_plan(co, p, &co->next, co->push.commit_by);

	if (rc < 0)
		return;
	co->push.sent++;
	if (!rc) {
		co->push.waiting++;
		return;
	}
	/* Refused here: decided at once, unless the push is still sending. */
	p->m->ack_ns = 0;
	if (!co->push.sending && push_ready(co))
		push_decide(co);
}

/*
 * Number p, pick its base time and send it to everyone connected as a
 * prepare.  Takes ownership of p.
 */
static int push_plan(struct coord *co, struct tdm_plan *p, const char *source,
		     struct ctl_req *waiter, char *err, size_t errlen)
{
	int64_t now_plan = clock_ns(co, p->clockid), now = now_ns(co), dl;
	char tb[64];
	struct coord_peer *pe, *nx;
	struct hist *h;

	/* One PLAN attribute holds at most 64 KiB (nlattr length). */
	if (tdm_plan_put(co_frame(co, TDM_MSG_PLAN), TDM_MAX_FRAME, TDM_A_PLAN, p)) {
		unsigned int i, n = 0;

		for (i = 0; i < p->nsenders; i++)
			n += p->senders[i].nwin;
		snprintf(err, errlen, "the plan is too large to send (%u senders, %u windows): one plan must encode into 64 KiB, about 3000 windows",
			 p->nsenders, n);
		tdm_plan_free(p);
		return -1;
	}
	if (p->lead_ns <= co->cf->commit_lead_ns) {
		snprintf(err, errlen, "lead_time %llu ns leaves no time to prepare: the outcome is due commit_lead (%llu ns) before the base time; make lead_time longer",
			 (unsigned long long)p->lead_ns,
			 (unsigned long long)co->cf->commit_lead_ns);
		tdm_plan_free(p);
		return -1;
	}
	if (number_plan(co, p, err, errlen)) {
		tdm_plan_free(p);
		return -1;
	}
	p->base_time = tdm_plan_pick_base(p, now_plan);
	co->next = *p;
	co->have_next = true;
	memset(p, 0, sizeof(*p));
	hist_add(co, &co->next, source, "preparing");

	co->push.active = true;
	co->push.phase = PH_PREPARE;
	co->push.version = co->next.version;
	co->push.base_time = co->next.base_time;
	co->push.clockid = co->next.clockid;
	co->push.commit_by = co->next.base_time - (int64_t)co->cf->commit_lead_ns;
	co->push.start = now;
	/* Answers are due by ack_timeout, and before the commit deadline. */
	co->push.deadline = now + (int64_t)co->cf->ack_timeout_ns;
	dl = now + (co->push.commit_by - now_plan);
	if (dl < co->push.deadline)
		co->push.deadline = dl;
	co->push.sent = co->push.waiting = 0;
	co->push.fin_sent = co->push.fin_waiting = 0;
	co->push.why[0] = '\0';
	co->push.waiter = waiter;
	tdm_strlcpy(co->push.source, source, sizeof(co->push.source));
	co->push.sending = true;
	for (pe = co->peers; pe; pe = nx) {
		nx = pe->next;
		if (!pe->m || pe->dead)
			continue;
		push_prepare_one(co, pe);
	}
	co->push.sending = false;
	h = hist_find(co, co->push.version);
	if (h)
		h->sent = co->push.sent;
	log_notice("plan v%u (%s): prepare sent to %u member%s, base time %s",
		   co->push.version, source, co->push.sent,
		   co->push.sent == 1 ? "" : "s",
		   fmt_tai(co->push.base_time, co->push.clockid, tb, sizeof(tb)));
	if (push_ready(co))
		push_decide(co);
	return 0;
}

/* The answer to a plan push. */
struct push_result {
	const struct coord *co;
	bool ok;
	unsigned int acked, nacked;
	int64_t elapsed, last_ack, last_fin;
};

static const char *push_outcome(const struct coord *co)
{
	return co->push.phase == PH_COMMIT ? "committed" :
	       co->push.phase == PH_ABORT ? "aborted" : "preparing";
}

static void push_result_text(FILE *f, void *arg)
{
	const struct push_result *pr = arg;
	const struct coord *co = pr->co;
	const struct tdm_plan *plan = co->push.phase == PH_COMMIT ? &co->cur : NULL;
	unsigned int i;
	char tb[64];

	fprintf(f, "plan v%u: %s, base time %s\n", co->push.version,
		push_outcome(co), fmt_tai(co->push.base_time, co->push.clockid,
					  tb, sizeof(tb)));
	if (co->push.phase == PH_ABORT)
		fprintf(f, "  nobody switches: %s\n", co->push.why);
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];
		bool planned = plan ? in_plan(plan, m->name) : true;

		if (m->ack_version != co->push.version || m->ack == ACK_NONE) {
			if (plan && planned)
				fprintf(f, "  %-20s not connected\n", m->name);
			continue;
		}
		fprintf(f, "  %-20s %s", m->name, ack_names[m->ack]);
		if (m->ack == ACK_OK)
			fprintf(f, " in %.3f ms", m->ack_ns / 1e6);
		if (m->ack_msg[0])
			fprintf(f, ": %s", m->ack_msg);
		if (m->fin != FIN_NONE && m->fin_version == co->push.version) {
			fprintf(f, "; %s %s", m->fin_type == TDM_MSG_COMMIT ?
				"commit" : "abort", fin_names[m->fin]);
			if (m->fin == FIN_OK)
				fprintf(f, " in %.3f ms", m->fin_ns / 1e6);
			if (m->fin_msg[0])
				fprintf(f, ": %s", m->fin_msg);
		}
		if (!planned)
			fprintf(f, " (no windows in this plan)");
		fputc('\n', f);
	}
	for (i = 0; plan && i < plan->nsenders; i++)
		if (!member_find(co, plan->senders[i].name))
			fprintf(f, "  %-20s never connected\n",
				plan->senders[i].name);
}

static void push_result_json(struct tdm_json *j, void *arg)
{
	const struct push_result *pr = arg;
	const struct coord *co = pr->co;
	unsigned int i;

	tdm_json_obj_open(j, NULL);
	tdm_json_u64(j, "version", co->push.version);
	tdm_json_s64(j, "base_time", co->push.base_time);
	tdm_json_str(j, "outcome", push_outcome(co));
	tdm_json_str(j, "reason", co->push.why);
	tdm_json_u64(j, "sent", co->push.sent);
	tdm_json_u64(j, "acked", pr->acked);
	tdm_json_u64(j, "nacked", pr->nacked);
	tdm_json_u64(j, "elapsed_ns", pr->elapsed);
	tdm_json_u64(j, "last_ack_ns", pr->last_ack);
	tdm_json_u64(j, "last_outcome_ack_ns", pr->last_fin);
	tdm_json_arr_open(j, "members");
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];
		bool fin = m->fin != FIN_NONE && m->fin_version == co->push.version;

		if (m->ack_version != co->push.version || m->ack == ACK_NONE)
			continue;
		tdm_json_obj_open(j, NULL);
		tdm_json_str(j, "name", m->name);
		tdm_json_str(j, "ack", ack_names[m->ack]);
		tdm_json_u64(j, "ack_ns", m->ack_ns);
		tdm_json_str(j, "message", m->ack_msg);
		tdm_json_str(j, "outcome", fin ? fin_names[m->fin] : "none");
		tdm_json_u64(j, "outcome_ns", fin ? m->fin_ns : 0);
		tdm_json_str(j, "outcome_message", fin ? m->fin_msg : "");
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
	tdm_json_obj_close(j);
}

/*
 * Every answer to the prepare is in, or the deadline came: commit if all
 * acked and the plan's senders (or the quorum of them) are among them,
 * else abort; send the outcome to every member that may hold the plan.
 */
static void push_decide(struct coord *co)
{
	unsigned int i, acked = 0, nacked = 0, missing = 0, senders = 0, need;
	const char *first_bad = NULL;
	uint16_t type;
	struct coord_peer *pe, *nx;
	struct hist *h = hist_find(co, co->push.version);
	int64_t late = clock_ns(co, co->push.clockid) - co->push.commit_by;

	for (i = 0; i < co->nmembers; i++) {
		struct member *m = &co->members[i];

		if (m->ack_version != co->push.version)
			continue;
		if (m->ack == ACK_WAIT) {
			m->ack = ACK_TIMEOUT;
			snprintf(m->ack_msg, sizeof(m->ack_msg),
				 "no answer before the deadline");
		}
		if (m->ack == ACK_OK) {
			acked++;
			if (in_plan(&co->next, m->name))
				senders++;
		} else if (m->ack == ACK_NACK || m->ack == ACK_TIMEOUT) {
			if (m->ack == ACK_NACK)
				nacked++;
			else
				missing++;
			if (!first_bad)
				first_bad = m->name;
		}
	}
	need = push_need(co);
	if (nacked || missing)
		snprintf(co->push.why, sizeof(co->push.why),
			 "%u refused, %u did not answer (first: %s)", nacked,
			 missing, first_bad);
	else if (senders < need)
		snprintf(co->push.why, sizeof(co->push.why),
			 "only %u of the plan's %u senders are connected and prepared (%u needed)",
			 senders, co->next.nsenders, need);
	else if (late >= 0)
		snprintf(co->push.why, sizeof(co->push.why),
			 "the answers came %.3f ms after the commit deadline",
			 late / 1e6);
	co->push.phase = co->push.why[0] ? PH_ABORT : PH_COMMIT;
	type = co->push.phase == PH_COMMIT ? TDM_MSG_COMMIT : TDM_MSG_ABORT;
	if (h) {
		h->acked = acked;
		h->nacked = nacked;
		tdm_strlcpy(h->outcome, push_outcome(co), sizeof(h->outcome));
	}
	if (co->push.phase == PH_COMMIT) {
		set_current(co, &co->next);
		co->have_next = false;
		log_notice("plan v%u: prepared by all %u member%s in %.3f ms; committing",
			   co->push.version, acked, acked == 1 ? "" : "s",
			   (now_ns(co) - co->push.start) / 1e6);
	} else {
		tdm_plan_free(&co->next);
		co->have_next = false;
		log_warn("plan v%u: aborted, nobody switches: %s",
			 co->push.version, co->push.why);
	}
	/* A member that prepared and is cut off holds from the base time
	 * until it reconnects and is sent the outcome (on_register).
	 */
	for (i = 0; i < co->nmembers; i++) {
		struct member *m = &co->members[i];

		if (m->peer || m->ack_version != co->push.version ||
		    m->ack != ACK_OK)
			continue;
		m->fin = FIN_LOST;
		m->fin_type = type;
		m->fin_version = co->push.version;
		snprintf(m->fin_msg, sizeof(m->fin_msg),
			 "cut off before the outcome: it holds from the base time until it reconnects");
	}
	/* Every member that prepared, or may have: its answer may be late. */
	co->push.fin_deadline = now_ns(co) + (int64_t)co->cf->ack_timeout_ns;
	co->push.sending = true;
	for (pe = co->peers; pe; pe = nx) {
		struct member *m = pe->m;

		nx = pe->next;
		if (!m || pe->dead || m->ack_version != co->push.version ||
		    m->ack == ACK_NACK || m->ack == ACK_NONE)
			continue;
		if (send_outcome(co, pe, type, co->push.version, co->push.why))
			continue;
		co->push.fin_sent++;
		co->push.fin_waiting++;
	}
	co->push.sending = false;
	if (!co->push.fin_waiting)
		push_finish(co);
}

/* Every answer to the outcome is in, or its deadline came: reply. */
static void push_finish(struct coord *co)
{
	unsigned int i, acked = 0, nacked = 0, failed = 0;
	int64_t elapsed = now_ns(co) - co->push.start, last = 0, last_fin = 0;
	struct ctl_req *w = co->push.waiter;
	struct hist *h;

	for (i = 0; i < co->nmembers; i++) {
		struct member *m = &co->members[i];

		if (m->ack_version == co->push.version) {
			if (m->ack == ACK_OK) {
				acked++;
				if (m->ack_ns > last)
					last = m->ack_ns;
			} else if (m->ack == ACK_NACK) {
				nacked++;
			}
		}
		if (m->fin_version != co->push.version || m->fin == FIN_NONE)
			continue;
		if (m->fin == FIN_WAIT) {
			m->fin = FIN_LOST;
			snprintf(m->fin_msg, sizeof(m->fin_msg),
				 "no answer within the ack timeout");
		}
		if (m->fin == FIN_OK) {
			if (m->fin_ns > last_fin)
				last_fin = m->fin_ns;
		} else {
			failed++;
		}
	}
	h = hist_find(co, co->push.version);
	if (h) {
		h->ack_ns = last;
		h->fin_ns = last_fin;
	}
	if (co->push.phase == PH_COMMIT && !failed)
		log_notice("plan v%u: committed by all %u member%s in %.3f ms",
			   co->push.version, acked, acked == 1 ? "" : "s",
			   last_fin / 1e6);
	else if (failed)
		log_warn("plan v%u: %s; %u member%s did not confirm it (they hold from the base time until they do)",
			 co->push.version, push_outcome(co), failed,
			 failed == 1 ? "" : "s");
	co->push.active = false;
	co->push.waiter = NULL;
	/*
	 * The plan file is what should be in force: a start-up push that was
	 * aborted (a member slow or briefly away) is tried again, numbered
	 * anew, after ack_timeout.  Members that prepared it held nothing
	 * yet, or hold with no plan to go back to: they wait for it.
	 */
	if (co->have_retry && co->push.phase == PH_ABORT) {
		co->retry_at = now_ns(co) + (int64_t)co->cf->ack_timeout_ns;
		log_notice("the plan file's push is tried again in %.3f s",
			   co->cf->ack_timeout_ns / 1e9);
	} else if (co->have_retry && !strcmp(co->push.source, "file")) {
		tdm_plan_free(&co->retry);
		co->have_retry = false;
	}
	if (w) {
		struct push_result pr = {
			.co = co, .acked = acked, .nacked = nacked,
			.elapsed = elapsed, .last_ack = last,
			.last_fin = last_fin,
		};

		report_reply(w, co->push.phase == PH_COMMIT && !failed,
			     push_result_json, push_result_text, &pr);
	}
}

/* ---- start-up: adopt or push once the quorum is there ---- */

static bool members_run(const struct coord *co, const struct tdm_plan *p, uint32_t *version,
			int64_t *base)
{
	uint8_t digest[32];
	bool first = true;
	unsigned int i;

	tdm_plan_digest(p, digest);
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];

		if (!m->peer || !in_plan(p, m->name))
			continue;
		if (!m->has_digest || memcmp(m->run_digest, digest, 32))
			return false;
		if (first) {
			*version = m->run_version;
			*base = m->run_base;
			first = false;
		} else if (m->run_version != *version || m->run_base != *base) {
			return false;
		}
	}
	return !first && *version;
}

/* A connected member that runs plan version v (confirmed), or NULL. */
static const struct member *runs_version(const struct coord *co, uint32_t v)
{
	unsigned int i;

	for (i = 0; i < co->nmembers; i++)
		if (co->members[i].peer && (co->members[i].run_version == v ||
					    co->members[i].version == v))
			return &co->members[i];
	return NULL;
}

/*
 * The outcome for a plan v that a member holds prepared: TDM_MSG_COMMIT,
 * TDM_MSG_ABORT (why set), or 0 while it is not known yet.  A version this
 * coordinator does not know (it restarted between prepare and outcome)
 * was committed if a member runs it.  If none does, nobody switched to it
 * and it is aborted, but only once the coordinator has started (the
 * quorum is connected, or a push came): until then a member that runs it
 * may still register.
 */
static uint16_t prepared_outcome(const struct coord *co, uint32_t v,
				 char *why, size_t whylen)
{
	const struct hist *h = hist_of(co, v);

	why[0] = '\0';
	if (co->push.active && co->push.version == v) {
		if (co->push.phase == PH_PREPARE)
			return 0;
		tdm_strlcpy(why, co->push.why, whylen);
		return co->push.phase == PH_COMMIT ? TDM_MSG_COMMIT : TDM_MSG_ABORT;
	}
	if (h && !strcmp(h->outcome, "aborted")) {
		snprintf(why, whylen, "plan v%u was aborted", v);
		return TDM_MSG_ABORT;
	}
	if (h || runs_version(co, v))
		return TDM_MSG_COMMIT;
	if (!co->started)
		return 0;
	snprintf(why, whylen, "plan v%u is unknown to this coordinator (restarted?) and no member runs it",
		 v);
	return TDM_MSG_ABORT;
}

/* Send p's member the outcome of the plan it holds prepared, if known. */
static void resolve_prepared(struct coord *co, struct coord_peer *p)
{
	struct member *m = p->m;
	uint32_t v = m->prepared;
	const struct member *other;
	char why[512];
	uint16_t type;

	if (!v)
		return;
	type = prepared_outcome(co, v, why, sizeof(why));
	if (!type)
		return;
	log_notice("member %s holds plan v%u prepared: sending %s%s%s", m->name,
		   v, tdm_msg_name(type), why[0] ? ": " : "", why);
	if (send_outcome(co, p, type, v, why))
		return;
	if (co->push.active && co->push.version == v) {
		co->push.fin_sent++;
		co->push.fin_waiting++;
	}
	m->prepared = 0;
	if (type != TDM_MSG_COMMIT)
		return;
	/* It runs v from now on, as the member that does. */
	m->run_version = v;
	other = runs_version(co, v);
	if (co->have_cur && co->cur.version == v) {
		m->run_base = co->cur.base_time;
		tdm_plan_digest(&co->cur, m->run_digest);
		m->has_digest = true;
	} else if (other && other != m) {
		m->run_base = other->run_base;
		memcpy(m->run_digest, other->run_digest, 32);
		m->has_digest = other->has_digest;
	}
}

/* Push the plan file's plan p (taken), kept to be tried again if aborted. */
static void push_file(struct coord *co, struct tdm_plan *p)
{
	char err[512];

	if (co->have_retry)
		tdm_plan_free(&co->retry);
	co->have_retry = !tdm_plan_copy(&co->retry, p);
	/* Numbered anew each time: a version given in the file is used once. */
	co->retry.version = 0;
	co->retry_at = 0;
	if (push_plan(co, p, "file", NULL, err, sizeof(err)))
		log_err("cannot push the plan file: %s", err);
}

/* Plans left prepared by a coordinator before us: their outcome. */
static void resolve_all_prepared(struct coord *co)
{
	struct coord_peer *pe;

	for (pe = co->peers; pe; pe = pe->next)
		if (pe->m && !pe->dead)
			resolve_prepared(co, pe);
}

static void try_start(struct coord *co)
{
	unsigned int need, have;
	struct tdm_plan p;
	uint32_t v = 0;
	int64_t base = 0;

	if (co->started || !co->have_desired)
		return;
	need = co->desired.nsenders;
	if (co->cf->quorum && co->cf->quorum < need)
		need = co->cf->quorum;
	have = connected_in(co, &co->desired);
	if (have < need)
		return;
	co->started = true;
	co->have_desired = false;
	resolve_all_prepared(co);
	/* Only a version issued here: a member's word does not number plans. */
	if (members_run(co, &co->desired, &v, &base) && v <= co->issued &&
	    v >= highest_version(co, co->issued)) {
		co->desired.version = v;
		co->desired.base_time = base;
		set_current(co, &co->desired);
		hist_add(co, &co->cur, "adopted", "committed");
		log_notice("quorum reached (%u of %u); the members already run this plan as v%u: adopted",
			   have, co->cur.nsenders, v);
		return;
	}
	log_notice("quorum reached (%u of %u members); pushing the plan",
		   have, co->desired.nsenders);
	p = co->desired;
	memset(&co->desired, 0, sizeof(co->desired));
	push_file(co, &p);
}

/* ---- protocol ---- */

static int on_register(struct coord *co, struct coord_peer *p, const struct tdm_msg *m, char *err,
		       size_t errlen)
{
	const char *name = mnl_attr_get_str(m->tb[TDM_A_NAME]);
	struct member *mb;
	struct nlmsghdr *nlh;

	if (p->m) {
		snprintf(err, errlen, "REGISTER twice");
		return -1;
	}
	mb = member_get(co, name);
	if (!mb) {
		snprintf(err, errlen, "too many members (%d)", TDM_MAX_SENDERS);
		return -1;
	}
	if (mb->peer) {
		/*
		 * Someone with the key registers a name that is connected.
		 * By default the live connection wins: a key holder must not
		 * cut a member off by taking its name.  One silent for
		 * member_timeout is dead whatever the policy (a member whose
		 * host rebooted comes back under its name).
		 */
		bool alive = now_ns(co) - mb->peer->last_rx <
			     (int64_t)co->cf->member_timeout_ns;

		if (alive && co->cf->name_takeover == TAKEOVER_REFUSE) {
			log_warn("member %s: a second connection from %s refused: the name is connected from %s (name_takeover refuse)",
				 name, p->addr, mb->addr);
			snprintf(err, errlen, "the name '%s' is connected from %s",
				 name, mb->addr);
			return -1;
		}
		log_warn("member %s: taken over by a new connection from %s; closing the old one from %s (%s)",
			 name, p->addr, mb->addr,
			 alive ? "name_takeover allow" : "silent");
		peer_close(co, mb->peer, "replaced by a new connection");
	}
	p->m = mb;
	mb->peer = p;
	mb->since = now_ns(co);
	tdm_strlcpy(mb->addr, p->addr, sizeof(mb->addr));
	mb->run_version = m->tb[TDM_A_PLAN_VERSION] ?
			  mnl_attr_get_u32(m->tb[TDM_A_PLAN_VERSION]) : 0;
	mb->run_base = m->tb[TDM_A_BASE_TIME] ?
		       (int64_t)mnl_attr_get_u64(m->tb[TDM_A_BASE_TIME]) : 0;
	mb->has_digest = m->tb[TDM_A_DIGEST] != NULL;
	if (mb->has_digest)
		memcpy(mb->run_digest, mnl_attr_get_payload(m->tb[TDM_A_DIGEST]), 32);
	mb->prepared = m->tb[TDM_A_PREPARED] ?
		       mnl_attr_get_u32(m->tb[TDM_A_PREPARED]) : 0;
	/* A member that says no level speaks 2, the framing's. */
	mb->proto = m->tb[TDM_A_PROTO] ?
		    mnl_attr_get_u32(m->tb[TDM_A_PROTO]) : TDM_PROTO_VERSION;
	mb->hb = false;
	mb->ack = ACK_NONE;
	mb->fin = FIN_NONE;
	log_notice("member %s registered from %s (running plan v%u%s)%s", name,
		   p->addr, mb->run_version, mb->prepared ? ", one prepared" : "",
		   co->have_cur && !in_plan(&co->cur, name) ?
		   "; it has no windows in the current plan" : "");

	nlh = co_frame(co, TDM_MSG_WELCOME);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION,
			 co->have_cur ? co->cur.version : 0);
	if (co->io.send(co->io.ctx, p->link, nlh, err, errlen))
		return -1;

	resolve_prepared(co, p);
	if (!co->started) {
		try_start(co);
		return 0;
	}
	/* A late member gets the current plan unless it already runs it,
	 * and joins a prepare going on.
	 */
	if (co->have_cur && (mb->run_version != co->cur.version ||
			    mb->run_base != co->cur.base_time)) {
		if (send_plan(co, p, &co->cur, 0))
			return 0;	/* dropped, or refused (logged) */
	} else if (co->have_cur) {
		mb->ack = ACK_OK;
		mb->ack_version = co->cur.version;
	}
	if (co->push.active && co->push.phase == PH_PREPARE)
		push_prepare_one(co, p);
	return 0;
}

/* The answer to a COMMIT or ABORT. */
static int on_outcome_ack(struct coord *co, struct member *mb, uint32_t phase,
			  uint32_t v, uint32_t status, const char *msg)
{
	uint16_t type = phase == TDM_PHASE_COMMIT ? TDM_MSG_COMMIT : TDM_MSG_ABORT;
	bool ok;

	if (mb->fin != FIN_WAIT || v != mb->fin_version || type != mb->fin_type) {
		log_info("member %s: unexpected answer to %s of plan v%u ignored",
			 mb->name, tdm_msg_name(type), v);
		return 0;
	}
	/* Nothing to abort (its prepare had failed) is an abort done. */
	ok = !status || (type == TDM_MSG_ABORT && status == ENOENT);
	mb->fin = ok ? FIN_OK : FIN_FAIL;
	tdm_strlcpy(mb->fin_msg, msg, sizeof(mb->fin_msg));
	if (ok && mb->prepared == v)
		mb->prepared = 0;
	if (ok)
		log_info("member %s: %s of plan v%u done", mb->name,
			 tdm_msg_name(type), v);
	else
		log_warn("member %s: %s of plan v%u failed: %s (%s)", mb->name,
			 tdm_msg_name(type), v, msg[0] ? msg : "no reason given",
			 strerror(status));
	if (co->push.active && co->push.phase != PH_PREPARE &&
	    v == co->push.version) {
		mb->fin_ns = now_ns(co) - co->push.start;
		if (co->push.fin_waiting && !--co->push.fin_waiting)
			push_finish(co);
	}
	return 0;
}

static int on_ack(struct coord *co, struct coord_peer *p, const struct tdm_msg *m)
{
	struct member *mb = p->m;
	uint32_t v = mnl_attr_get_u32(m->tb[TDM_A_PLAN_VERSION]);
	uint32_t status = mnl_attr_get_u32(m->tb[TDM_A_STATUS]);
	uint32_t phase = m->tb[TDM_A_PHASE] ?
			 mnl_attr_get_u32(m->tb[TDM_A_PHASE]) : TDM_PHASE_PREPARE;
	bool in_push = co->push.active && co->push.phase == PH_PREPARE &&
		       v == co->push.version;
	char msg[sizeof(mb->ack_msg)];

	/* The member's text goes into logs and onto terminals: escaped. */
	tdm_text_escape(msg, m->tb[TDM_A_MESSAGE] ?
			mnl_attr_get_str(m->tb[TDM_A_MESSAGE]) : "", sizeof(msg));
	if (phase != TDM_PHASE_PREPARE)
		return on_outcome_ack(co, mb, phase, v, status, msg);
	if (mb->ack != ACK_WAIT || v != mb->ack_version) {
		log_info("member %s: unexpected ack for plan v%u ignored",
			 mb->name, v);
		return 0;
	}
	mb->ack = status ? ACK_NACK : ACK_OK;
	tdm_strlcpy(mb->ack_msg, msg, sizeof(mb->ack_msg));
	if (in_push) {
		mb->ack_ns = now_ns(co) - co->push.start;
		if (!status)
			mb->prepared = v;
		if (co->push.waiting)
			co->push.waiting--;
	}
	if (status)
		log_warn("member %s refused plan v%u: %s (%s)", mb->name, v,
			 msg[0] ? msg : "no reason given", strerror(status));
	else
		log_info("member %s %s plan v%u", mb->name,
			 in_push ? "prepared" : "installed", v);
	if (in_push && push_ready(co))
		push_decide(co);
	return 0;
}

static void on_heartbeat(struct coord_peer *p, const struct tdm_msg *m)
{
	struct member *mb = p->m;
	const struct nlattr *tb[TDM_S_MAX + 1] = { NULL };
	const struct nlattr *a;
	char reason[sizeof(mb->reason)];
	bool hold;

	mnl_attr_for_each_nested(a, m->tb[TDM_A_SYNC]) {
		uint16_t t = mnl_attr_get_type(a);

		if (t <= TDM_S_MAX)
			tb[t] = a;
	}
	hold = tb[TDM_S_HOLD] && mnl_attr_get_u8(tb[TDM_S_HOLD]);
	/* The member's text goes into logs and onto terminals: escaped. */
	tdm_text_escape(reason, tb[TDM_S_REASON] ?
			mnl_attr_get_str(tb[TDM_S_REASON]) : "", sizeof(reason));
	if (mb->hb && hold != mb->hold)
		log_notice("member %s %s its gate%s%s", mb->name,
			   hold ? "holds" : "released", reason[0] ? ": " : "",
			   reason);
	mb->hb = true;
	mb->hold = hold;
	mb->sync_state = tb[TDM_S_STATE] ? mnl_attr_get_u32(tb[TDM_S_STATE]) : 0;
	mb->offset = tb[TDM_S_OFFSET] ? (int64_t)mnl_attr_get_u64(tb[TDM_S_OFFSET]) : 0;
	mb->port_state = tb[TDM_S_PORT_STATE] ?
			 mnl_attr_get_u32(tb[TDM_S_PORT_STATE]) : 0;
	tdm_strlcpy(mb->reason, reason, sizeof(mb->reason));
	mb->version = mnl_attr_get_u32(m->tb[TDM_A_PLAN_VERSION]);
	mb->pending_version = m->tb[TDM_A_PENDING_VERSION] ?
			      mnl_attr_get_u32(m->tb[TDM_A_PENDING_VERSION]) : 0;
	mb->prepared = m->tb[TDM_A_PREPARED] ?
		       mnl_attr_get_u32(m->tb[TDM_A_PREPARED]) : 0;
	mb->has_xstats = m->tb[TDM_A_QDISC] != NULL;
	memset(&mb->xs, 0, sizeof(mb->xs));
	if (mb->has_xstats) {
		size_t n = mnl_attr_get_payload_len(m->tb[TDM_A_QDISC]);

		memcpy(&mb->xs, mnl_attr_get_payload(m->tb[TDM_A_QDISC]),
		       n < sizeof(mb->xs) ? n : sizeof(mb->xs));
	}
}

static int on_frame(struct coord *co, struct coord_peer *p,
		    const struct tdm_msg *m, char *err, size_t errlen)
{
	if (m->type == TDM_MSG_REGISTER)
		return on_register(co, p, m, err, errlen);
	if (!p->m) {
		snprintf(err, errlen, "%s before REGISTER", tdm_msg_name(m->type));
		return -1;
	}
	switch (m->type) {
	case TDM_MSG_ACK:
		return on_ack(co, p, m);
	case TDM_MSG_HEARTBEAT:
		on_heartbeat(p, m);
		return 0;
	case TDM_MSG_ERROR:
	{
		char msg[256];

		tdm_text_escape(msg, m->tb[TDM_A_MESSAGE] ?
				mnl_attr_get_str(m->tb[TDM_A_MESSAGE]) : "?",
				sizeof(msg));
		snprintf(err, errlen, "member reports an error: %s", msg);
		return -1;
	}
	default:
		snprintf(err, errlen, "unexpected %s", tdm_msg_name(m->type));
		return -1;
	}
}

static void peer_close(struct coord *co, struct coord_peer *p, const char *why)
{
	struct coord_peer **pp;

	if (p->m) {
		log_notice("member %s (%s) disconnected: %s; its gate keeps the last plan",
			   p->m->name, p->addr, why);
		if (p->m->ack == ACK_WAIT && co->push.active &&
		    co->push.phase == PH_PREPARE &&
		    p->m->ack_version == co->push.version) {
			p->m->ack = ACK_TIMEOUT;
			snprintf(p->m->ack_msg, sizeof(p->m->ack_msg),
				 "disconnected before answering");
			if (co->push.waiting)
				co->push.waiting--;
		}
		if (p->m->fin == FIN_WAIT && co->push.active &&
		    co->push.phase != PH_PREPARE &&
		    p->m->fin_version == co->push.version) {
			p->m->fin = FIN_LOST;
			snprintf(p->m->fin_msg, sizeof(p->m->fin_msg),
				 "disconnected before answering: it holds from the base time until it reconnects");
			if (co->push.fin_waiting)
				co->push.fin_waiting--;
		}
		p->m->peer = NULL;
		p->m->since = now_ns(co);
	} else {
		/* A peer without the key can cause these: rate-limited. */
		static struct tdm_ratelimit rl = {
			.interval_ns = 10 * TDM_NSEC_PER_SEC, .burst = 10 };
		unsigned long long missed;

		if (tdm_ratelimit(&rl, now_ns(co), &missed)) {
			if (missed)
				log_warn("%llu more connections were refused (not logged)",
					 missed);
			log_warn("connection from %s refused: %s", p->addr, why);
		}
	}
	for (pp = &co->peers; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	co->npeers--;
	co->io.drop(co->io.ctx, p->link);
	free(p);
	if (!co->push.active || co->push.sending)
		return;
	if (co->push.phase == PH_PREPARE && push_ready(co))
		push_decide(co);
	else if (co->push.phase != PH_PREPARE && !co->push.fin_waiting)
		push_finish(co);
}

int coord_peer_frame(struct coord *co, struct coord_peer *p,
		     const struct tdm_msg *m, char *err, size_t errlen)
{
	int rc;

	p->last_rx = now_ns(co);
	p->busy = true;
	rc = on_frame(co, p, m, err, errlen);
	p->busy = false;
	if (p->dead) {
		tdm_strlcpy(err, p->why, errlen);
		return -1;
	}
	return rc;
}

void coord_peer_lost(struct coord *co, struct coord_peer *p, const char *why)
{
	peer_close(co, p, why);
}

struct coord_peer *coord_peer_add(struct coord *co, void *link,
				  const char *addr)
{
	struct coord_peer *p;

	if (co->npeers >= MAX_PEERS) {
		static struct tdm_ratelimit rl = {
			.interval_ns = 10 * TDM_NSEC_PER_SEC, .burst = 1 };
		unsigned long long missed;

		if (tdm_ratelimit(&rl, now_ns(co), &missed))
			log_warn("too many connections (%d); refusing new ones (%llu more refused since the last message)",
				 MAX_PEERS, missed);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->link = link;
	tdm_strlcpy(p->addr, addr, sizeof(p->addr));
	p->last_rx = now_ns(co);
	p->hs_deadline = p->last_rx + HANDSHAKE_NS;
	p->next = co->peers;
	co->peers = p;
	co->npeers++;
	log_debug("connection from %s", p->addr);
	return p;
}

struct coord *coord_new(const struct tdmd_conf *conf,
			const struct coord_io *io, char *err, size_t errlen)
{
	struct coord *co = calloc(1, sizeof(*co));

	if (!co) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	co->cf = conf;
	co->io = *io;
	co->frame = malloc(TDM_MAX_FRAME);
	co->hist = calloc(conf->history, sizeof(*co->hist));
	if (!co->frame || !co->hist) {
		snprintf(err, errlen, "out of memory");
		coord_free(co);
		return NULL;
	}
	if (co->io.load_issued(co->io.ctx, &co->issued, err, errlen)) {
		coord_free(co);
		return NULL;
	}
	log_info("plan versions: v%u issued so far (%s)", co->issued,
		 conf->state_file);
	if (conf->plan_file[0]) {
		if (tdm_plan_load(conf->plan_file, &co->desired, err, errlen) ||
		    coord_plan_pushable(&co->desired, conf->plan_file, err,
					errlen)) {
			tdm_plan_free(&co->desired);
			coord_free(co);
			return NULL;
		}
		co->have_desired = true;
		log_info("plan %s: %u senders, cycle %llu ns; waiting for %s",
			 conf->plan_file, co->desired.nsenders,
			 (unsigned long long)co->desired.cycle_ns,
			 conf->quorum ? "the quorum" : "every sender");
	} else {
		log_info("no plan_file: waiting for 'tdmctl plan push'");
	}
	return co;
}

int coord_plan_pushable(const struct tdm_plan *p, const char *label,
			char *err, size_t errlen)
{
	if (p->nreceivers <= TDMWIN_MAX_DESTS)
		return 0;
	return tdm_set_err(err, errlen,
			   "%s: a plan with %u receivers: a tdmwin qdisc has %d destination classes, one per receiver",
			   label, p->nreceivers, TDMWIN_MAX_DESTS);
}

/* Is this member a sender of a plan the coordinator knows? */
static bool in_any_plan(const struct coord *co, const char *name)
{
	return (co->have_cur && in_plan(&co->cur, name)) ||
	       (co->have_prev && in_plan(&co->prev, name)) ||
	       (co->have_next && in_plan(&co->next, name)) ||
	       (co->have_desired && in_plan(&co->desired, name));
}

/*
 * Members that are gone: disconnected for longer than member_timeout and
 * a sender of no plan known here.  Without this the table only grew, and
 * once TDM_MAX_SENDERS names had registered every new one was refused.
 * Senders of a plan stay (status shows them down).  Returns the next
 * deadline.
 */
static int64_t expire_members(struct coord *co, int64_t now)
{
	int64_t next = INT64_MAX, dl;
	unsigned int i = 0;

	while (i < co->nmembers) {
		struct member *m = &co->members[i];

		if (m->peer || in_any_plan(co, m->name)) {
			i++;
			continue;
		}
		dl = m->since + (int64_t)co->cf->member_timeout_ns;
		if (now < dl) {
			if (dl < next)
				next = dl;
			i++;
			continue;
		}
		log_info("member %s: gone for longer than member_timeout and in no plan; forgotten",
			 m->name);
		/* The last one moves into its place: fix its peer. */
		*m = co->members[--co->nmembers];
		if (i < co->nmembers && m->peer)
			m->peer->m = m;
	}
	return next;
}

int64_t coord_tick(struct coord *co, int64_t now)
{
	int64_t next = expire_members(co, now);
	struct coord_peer *p, *nx;

	for (p = co->peers; p; p = nx) {
		int64_t dl;

		nx = p->next;
		if (!p->m) {
			dl = p->hs_deadline;
			if (now >= dl) {
				peer_close(co, p, "no REGISTER within 5 s");
				continue;
			}
		} else {
			dl = p->last_rx + (int64_t)co->cf->member_timeout_ns;
			if (now >= dl) {
				peer_close(co, p, "silent for longer than member_timeout");
				continue;
			}
		}
		if (dl < next)
			next = dl;
	}
	if (co->push.active) {
		bool prep = co->push.phase == PH_PREPARE;
		int64_t dl = prep ? co->push.deadline : co->push.fin_deadline;

		if (now < dl) {
			if (dl < next)
				next = dl;
		} else if (prep) {
			push_decide(co);
			/* Now waiting for the answers to the outcome. */
			if (co->push.active && co->push.fin_deadline < next)
				next = co->push.fin_deadline;
		} else {
			push_finish(co);
		}
	}
	if (co->have_retry && co->retry_at && !co->push.active) {
		if (now >= co->retry_at) {
			struct tdm_plan again;

			co->retry_at = 0;
			if (tdm_plan_copy(&again, &co->retry)) {
				log_err("cannot copy the plan file's plan: out of memory");
			} else {
				log_notice("pushing the plan file again");
				push_file(co, &again);
			}
		} else if (co->retry_at < next) {
			next = co->retry_at;
		}
	}
	/* Show the new plan as active once its base time has passed. */
	if (co->have_prev) {
		int64_t t = clock_ns(co, co->cur.clockid);

		if (t >= co->cur.base_time) {
			tdm_plan_free(&co->prev);
			co->have_prev = false;
		} else {
			int64_t in = now + (co->cur.base_time - t);

			if (in < next)
				next = in;
		}
	}
	return next;
}

/* ---- control requests ---- */

static const char *sync_state_name(uint32_t s)
{
	static const char *const n[] = { "unknown", "synced", "unsynced", "off" };

	return s < TDM_ARRAY_SIZE(n) ? n[s] : "?";
}

static void status_json(struct tdm_json *j, void *arg)
{
	const struct coord *co = arg;
	int64_t now = now_ns(co);
	unsigned int i;

	tdm_json_obj_open(j, NULL);
	tdm_json_str(j, "role", "coordinator");
	tdm_json_bool(j, "started", co->started);
	if (co->have_cur) {
		const struct tdm_plan *act = co->have_prev ? &co->prev : &co->cur;

		tdm_json_u64(j, "active_version", act->version);
		tdm_json_s64(j, "active_base_time", act->base_time);
		if (co->have_prev) {
			tdm_json_u64(j, "pending_version", co->cur.version);
			tdm_json_s64(j, "pending_base_time", co->cur.base_time);
		}
	}
	tdm_json_bool(j, "push_in_progress", co->push.active);
	if (co->push.active) {
		tdm_json_u64(j, "push_version", co->push.version);
		tdm_json_str(j, "push_phase", push_outcome(co));
		tdm_json_s64(j, "push_base_time", co->push.base_time);
		tdm_json_s64(j, "push_commit_by", co->push.commit_by);
	}
	tdm_json_arr_open(j, "members");
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];

		tdm_json_obj_open(j, NULL);
		tdm_json_str(j, "name", m->name);
		tdm_json_bool(j, "connected", m->peer != NULL);
		tdm_json_str(j, "address", m->addr);
		tdm_json_u64(j, "since_ms", (now - m->since) / 1000000);
		tdm_json_bool(j, "in_plan", co->have_cur && in_plan(&co->cur, m->name));
		tdm_json_u64(j, "plan_version", m->version);
		tdm_json_u64(j, "pending_version", m->pending_version);
		tdm_json_u64(j, "prepared_version", m->prepared);
		tdm_json_str(j, "ack", ack_names[m->ack]);
		tdm_json_u64(j, "ack_version", m->ack_version);
		tdm_json_str(j, "ack_message", m->ack_msg);
		tdm_json_str(j, "outcome", fin_names[m->fin]);
		tdm_json_u64(j, "outcome_version", m->fin_version);
		tdm_json_str(j, "outcome_message", m->fin_msg);
		tdm_json_str(j, "sync", sync_state_name(m->sync_state));
		tdm_json_bool(j, "hold", m->hold);
		tdm_json_s64(j, "offset_ns", m->offset);
		tdm_json_str(j, "port_state", m->port_state ? tdm_port_state_name(m->port_state) : "-");
		tdm_json_str(j, "reason", m->reason);
		if (m->has_xstats)
			report_xstats_json(j, "qdisc", &m->xs);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
	tdm_json_obj_close(j);
}

static void status_text(FILE *f, void *arg)
{
	const struct coord *co = arg;
	int64_t now = now_ns(co);
	unsigned int i;
	char tb[64];

	fprintf(f, "role: coordinator\n");
	if (!co->have_cur) {
		fprintf(f, "plan: none yet (%s)\n", co->have_desired ?
			"waiting for the quorum" : "waiting for 'tdmctl plan push'");
	} else {
		const struct tdm_plan *act = co->have_prev ? &co->prev : &co->cur;

		fprintf(f, "active plan: v%u since %s\n", act->version,
			fmt_tai(act->base_time, act->clockid, tb, sizeof(tb)));
		if (co->have_prev)
			fprintf(f, "pending plan: v%u at %s\n", co->cur.version,
				fmt_tai(co->cur.base_time, co->cur.clockid, tb, sizeof(tb)));
	}
	if (co->push.active && co->push.phase == PH_PREPARE)
		fprintf(f, "push of v%u: preparing, %u of %u answers missing, outcome due by %s\n",
			co->push.version, co->push.waiting, co->push.sent,
			fmt_tai(co->push.commit_by, co->push.clockid, tb, sizeof(tb)));
	else if (co->push.active)
		fprintf(f, "push of v%u: %s, %u of %u answers missing\n",
			co->push.version, push_outcome(co), co->push.fin_waiting,
			co->push.fin_sent);
	fprintf(f, "members: %u\n", co->nmembers);
	fprintf(f, "  %-16s %-12s %-5s %-8s %-6s %-9s %-5s %12s %14s %10s\n",
		"NAME", "STATE", "PLAN", "PENDING", "ACK", "SYNC", "HOLD",
		"OFFSET(ns)", "PACKETS", "DROPS");
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];
		char st[32], pend[12];

		snprintf(st, sizeof(st), "%s %llds", m->peer ? "up" : "down",
			 (long long)((now - m->since) / 1000000000));
		snprintf(pend, sizeof(pend), m->pending_version ? "v%u" : "-",
			 m->pending_version);
		fprintf(f, "  %-16s %-12s v%-4u %-8s %-6s %-9s %-5s %12lld %14llu %10llu\n",
			m->name, st, m->version, pend, ack_names[m->ack],
			sync_state_name(m->sync_state), m->hold ? "yes" : "no",
			(long long)m->offset,
			(unsigned long long)m->xs.window_packets,
			(unsigned long long)(m->xs.oversize_drops + m->xs.hold_drops));
		if (m->ack == ACK_NACK || (m->ack_msg[0] && m->ack != ACK_OK))
			fprintf(f, "      last plan: %s\n", m->ack_msg);
		if (m->hold && m->reason[0])
			fprintf(f, "      held: %s\n", m->reason);
		if (m->fin == FIN_FAIL || m->fin == FIN_LOST)
			fprintf(f, "      %s of plan v%u: %s\n",
				m->fin_type == TDM_MSG_COMMIT ? "commit" : "abort",
				m->fin_version, m->fin_msg);
	}
}

static void show_json(struct tdm_json *j, void *arg)
{
	const struct coord *co = arg;
	tdm_json_obj_open(j, NULL);
	if (co->have_prev)
		tdm_plan_json(j, "active", &co->prev);
	if (co->have_cur)
		tdm_plan_json(j, co->have_prev ? "pending" : "active", &co->cur);
	if (co->have_next)
		tdm_plan_json(j, "preparing", &co->next);
	tdm_json_obj_close(j);
}

static void show_text(FILE *f, void *arg)
{
	const struct coord *co = arg;
	char *t;

	if (!co->have_cur) {
		fprintf(f, "# no plan has been handed out yet\n");
		return;
	}
	if (co->have_prev) {
		t = report_plan_text(&co->prev);
		fprintf(f, "# active\n%s\n# pending\n", t ? t : "");
		free(t);
	}
	t = report_plan_text(&co->cur);
	fputs(t ? t : "", f);
	free(t);
}

static void history_json(struct tdm_json *j, void *arg)
{
	const struct coord *co = arg;
	unsigned int i;

	tdm_json_arr_open(j, NULL);
	for (i = 0; i < co->nhist; i++) {
		const struct hist *h = &co->hist[i];

		tdm_json_obj_open(j, NULL);
		tdm_json_u64(j, "version", h->version);
		tdm_json_s64(j, "base_time", h->base_time);
		tdm_json_str(j, "clock", tdm_clock_name(h->clockid));
		tdm_json_str(j, "source", h->source);
		tdm_json_str(j, "outcome", h->outcome);
		tdm_json_u64(j, "sent", h->sent);
		tdm_json_u64(j, "acked", h->acked);
		tdm_json_u64(j, "nacked", h->nacked);
		tdm_json_u64(j, "ack_ns", h->ack_ns);
		tdm_json_u64(j, "outcome_ack_ns", h->fin_ns);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
}

static void history_text(FILE *f, void *arg)
{
	const struct coord *co = arg;
	unsigned int i;
	char tb[64];

	fprintf(f, "%-8s %-36s %-8s %-10s %5s %5s %5s %12s %12s\n", "VERSION",
		"ACTIVATION", "SOURCE", "OUTCOME", "SENT", "ACKED", "NACKS",
		"ACKED IN", "DONE IN");
	for (i = 0; i < co->nhist; i++) {
		const struct hist *h = &co->hist[i];

		fprintf(f, "v%-7u %-36s %-8s %-10s %5u %5u %5u %9.3f ms %9.3f ms\n",
			h->version, fmt_tai(h->base_time, h->clockid, tb, sizeof(tb)),
			h->source, h->outcome, h->sent, h->acked, h->nacked,
			h->ack_ns / 1e6, h->fin_ns / 1e6);
	}
}

static void ctl_push(struct coord *co, struct ctl_req *r, const char *label)
{
	struct tdm_plan p;
	char err[512], msg[600];

	if (co->push.active) {
		snprintf(msg, sizeof(msg), "a push of plan v%u is in progress (%s, %u answers missing); try again\n",
			 co->push.version, push_outcome(co),
			 co->push.phase == PH_PREPARE ? co->push.waiting :
			 co->push.fin_waiting);
		ctl_reply(r, false, msg);
		return;
	}
	if (tdm_plan_parse(r->body, label[0] ? label : "plan", &p, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "%s\n", err);
		ctl_reply(r, false, msg);
		return;
	}
	if (coord_plan_pushable(&p, label[0] ? label : "plan", err,
				sizeof(err))) {
		tdm_plan_free(&p);
		snprintf(msg, sizeof(msg), "%s\n", err);
		ctl_reply(r, false, msg);
		return;
	}
	/* A push replaces a plan file still waiting for its quorum. */
	if (co->have_desired) {
		tdm_plan_free(&co->desired);
		co->have_desired = false;
	}
	co->started = true;
	/* A plan pushed by hand replaces the plan file's, retried or not. */
	if (co->have_retry) {
		tdm_plan_free(&co->retry);
		co->have_retry = false;
	}
	resolve_all_prepared(co);
	if (push_plan(co, &p, "tdmctl", r, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "%s\n", err);
		ctl_reply(r, false, msg);
	}
}

/* tdmctl metrics: the Prometheus text format (tdm_prom.h). */
static void metrics_text(FILE *f, void *arg)
{
	static const char *const syncs[] = { "unknown", "synced", "unsynced", "off" };
	const struct coord *co = arg;
	unsigned int i, up = 0;
	struct tdm_prom p;

	tdm_prom_init(&p, f);
	report_prom_info(&p, "coordinator", co->cf->name);
	tdm_prom_one(&p, "tdmd_plan_version", "gauge",
		     "version of the plan committed last (0: none)", NULL,
		     co->have_cur ? co->cur.version : 0);
	tdm_prom_one(&p, "tdmd_plan_issued_version", "gauge",
		     "highest plan version this coordinator issued; the next is numbered above it",
		     NULL, co->issued);
	tdm_prom_one(&p, "tdmd_plan_push_active", "gauge",
		     "1 while a plan change is being prepared or decided", NULL,
		     co->push.active);
	tdm_prom_one(&p, "tdmd_plan_preparing_version", "gauge",
		     "version of the plan being pushed (0: none)", NULL,
		     co->push.active ? co->push.version : 0);
	for (i = 0; i < co->nmembers; i++)
		up += co->members[i].peer != NULL;
	tdm_prom_family(&p, "tdmd_members", "gauge",
			"members that ever registered, by connection state");
	{
		const char *const lu[] = { "state", "up", NULL };
		const char *const ld[] = { "state", "down", NULL };

		tdm_prom_u64(&p, "tdmd_members", lu, up);
		tdm_prom_u64(&p, "tdmd_members", ld, co->nmembers - up);
	}
	if (!co->nmembers)
		return;
#define EACH_MEMBER(family, type, help, value)				\
	do {								\
		tdm_prom_family(&p, family, type, help);		\
		for (i = 0; i < co->nmembers; i++) {			\
			const struct member *m = &co->members[i];	\
			const char *const l[] = { "member", m->name, NULL }; \
									\
			tdm_prom_u64(&p, family, l, (value));		\
		}							\
	} while (0)
	EACH_MEMBER("tdmd_member_up", "gauge", "1 while the member is connected",
		    m->peer != NULL);
	EACH_MEMBER("tdmd_member_synced", "gauge",
		    "1 if the member's last heartbeat said PTP is in sync",
		    m->hb && m->sync_state == 1);
	EACH_MEMBER("tdmd_member_hold", "gauge",
		    "1 if the member's last heartbeat said its gate is held",
		    m->hb && m->hold);
	EACH_MEMBER("tdmd_member_plan_version", "gauge",
		    "plan in force in the member's qdisc (last heartbeat)", m->version);
	EACH_MEMBER("tdmd_member_pending_version", "gauge",
		    "pending plan in the member's qdisc (0: none)", m->pending_version);
	EACH_MEMBER("tdmd_member_prepared_version", "gauge",
		    "plan the member holds prepared, awaiting the outcome (0: none)",
		    m->prepared);
	EACH_MEMBER("tdmd_member_window_packets_total", "counter",
		    "gated packets the member's qdisc sent in windows (last heartbeat)",
		    m->has_xstats ? m->xs.window_packets : 0);
	EACH_MEMBER("tdmd_member_hold_drops_total", "counter",
		    "packets the member's qdisc dropped while held (last heartbeat)",
		    m->has_xstats ? m->xs.hold_drops : 0);
#undef EACH_MEMBER
	tdm_prom_family(&p, "tdmd_member_ptp_offset_seconds", "gauge",
			"the member's PTP offset from master (last heartbeat)");
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];
		const char *const l[] = { "member", m->name, NULL };

		if (m->hb)
			tdm_prom_ns(&p, "tdmd_member_ptp_offset_seconds", l, m->offset);
	}
	tdm_prom_family(&p, "tdmd_member_sync_state", "gauge",
			"the member's sync state (1 for the current one)");
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];
		unsigned int k;

		for (k = 0; k < TDM_ARRAY_SIZE(syncs); k++) {
			const char *const l[] = { "member", m->name, "state",
						  syncs[k], NULL };

			tdm_prom_u64(&p, "tdmd_member_sync_state", l,
				     m->sync_state == k);
		}
	}
}

void coord_control(struct coord *co, struct ctl_req *r)
{
	if (!strcmp(r->cmd, "status"))
		report_reply(r, true, status_json, status_text, co);
	else if (!strcmp(r->cmd, "plan show"))
		report_reply(r, true, show_json, show_text, co);
	else if (!strcmp(r->cmd, "plan history"))
		report_reply(r, true, history_json, history_text, co);
	else if (!strncmp(r->cmd, "plan push", 9) &&
		 (r->cmd[9] == '\0' || r->cmd[9] == ' '))
		ctl_push(co, r, r->cmd[9] ? r->cmd + 10 : "");
	else if (!strcmp(r->cmd, "metrics"))
		report_reply_text(r, metrics_text, co);
	else
		ctl_reply(r, false, "unknown command (status, plan show, plan history, plan push, metrics)\n");
}

void coord_free(struct coord *co)
{
	if (!co)
		return;
	if (co->push.waiter) {
		ctl_reply(co->push.waiter, false, "tdmd is shutting down\n");
		co->push.waiter = NULL;
	}
	/* A prepare in flight stays undecided: members hold from its base
	 * time, and the next coordinator sends them its outcome (abort).
	 */
	co->push.active = false;
	while (co->peers)
		peer_close(co, co->peers, "tdmd is shutting down");
	if (co->have_desired)
		tdm_plan_free(&co->desired);
	if (co->have_cur)
		tdm_plan_free(&co->cur);
	if (co->have_prev)
		tdm_plan_free(&co->prev);
	if (co->have_next)
		tdm_plan_free(&co->next);
	if (co->have_retry)
		tdm_plan_free(&co->retry);
	free(co->members);
	free(co->hist);
	free(co->frame);
	free(co);
}
