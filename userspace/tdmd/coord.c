// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator: runs on the receiver, holds the plan, and hands it to
 * the members.
 *
 * Start-up: load the plan file, accept members, and once the quorum (all
 * senders of the plan by default) is connected, either adopt the plan the
 * members already run (same content, version and base time: a restarted
 * coordinator changes nothing) or push it as a new version.  A push picks
 * a base time lead_time ahead, sends the plan to every connected member,
 * and collects their acks (or nacks with the kernel's reason) until all
 * answered or ack_timeout passed.  Every member installs it as its pending
 * plan, so all switch at the same instant.  A member that connects later
 * gets the current plan with the same version and base time.
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
#include "tdm_ptp.h"
#include "tdm_util.h"
#include "tdmd.h"

#define HANDSHAKE_NS	(5 * (int64_t)TDM_NSEC_PER_SEC)
#define MAX_PEERS	2048	/* below the loop's EV_MAX */

enum ack_state { ACK_NONE, ACK_WAIT, ACK_OK, ACK_NACK, ACK_TIMEOUT };

static const char *const ack_names[] = {
	"none", "waiting", "ok", "nack", "timeout"
};

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
	/* the answer to the latest plan sent to it */
	enum ack_state ack;
	uint32_t ack_version;
	char ack_msg[256];
	int64_t ack_ns;			/* after the push started */
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
	unsigned int sent, acked, nacked;
	int64_t ack_ns;			/* push to last ack */
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
	struct tdm_plan cur;		/* latest plan handed out */
	bool have_cur;
	struct tdm_plan prev;		/* the one before, while cur pending */
	bool have_prev;

	struct {
		bool active;
		uint32_t version;
		int64_t start, deadline;
		unsigned int sent, waiting;
		struct ctl_req *waiter;
		char source[16];
		bool sending;		/* inside the send loop */
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

static uint32_t highest_version(const struct coord *co)
{
	uint32_t v = co->have_cur ? co->cur.version : 0;
	unsigned int i;

	for (i = 0; i < co->nmembers; i++) {
		if (co->members[i].run_version > v)
			v = co->members[i].run_version;
		if (co->members[i].version > v)
			v = co->members[i].version;
		if (co->members[i].pending_version > v)
			v = co->members[i].pending_version;
	}
	for (i = 0; i < co->nhist; i++)
		if (co->hist[i].version > v)
			v = co->hist[i].version;
	return v;
}

/* ---- sending ---- */

static int send_plan(struct coord *co, struct coord_peer *p,
		     const struct tdm_plan *plan)
{
	struct nlmsghdr *nlh = co_frame(co, TDM_MSG_PLAN);
	char err[256];

	if (tdm_plan_put(nlh, TDM_MAX_FRAME, TDM_A_PLAN, plan)) {
		peer_fail(co, p, "the plan does not fit in a frame");
		return -1;
	}
	if (co->io.send(co->io.ctx, p->link, nlh, err, sizeof(err))) {
		peer_fail(co, p, err);
		return -1;
	}
	p->m->ack = ACK_WAIT;
	p->m->ack_version = plan->version;
	p->m->ack_msg[0] = '\0';
	return 0;
}

static void hist_add(struct coord *co, const struct tdm_plan *p,
		     const char *source)
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
}

static struct hist *hist_find(struct coord *co, uint32_t version)
{
	unsigned int i;

	for (i = co->nhist; i-- > 0;)
		if (co->hist[i].version == version)
			return &co->hist[i];
	return NULL;
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

static void push_finish(struct coord *co);

/* Number p, pick its base time, send it to everyone connected.  Takes
 * ownership of p.
 */
static int push_plan(struct coord *co, struct tdm_plan *p, const char *source,
		     struct ctl_req *waiter, char *err, size_t errlen)
{
	uint32_t next = highest_version(co) + 1;
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
	if (p->version && p->version < next) {
		snprintf(err, errlen, "plan version %u is not above the highest version in use (%u)",
			 p->version, next - 1);
		tdm_plan_free(p);
		return -1;
	}
	if (!p->version)
		p->version = next;
	p->base_time = tdm_plan_pick_base(p, clock_ns(co, p->clockid));
	set_current(co, p);
	hist_add(co, &co->cur, source);

	co->push.active = true;
	co->push.version = co->cur.version;
	co->push.start = now_ns(co);
	co->push.deadline = co->push.start + co->cf->ack_timeout_ns;
	co->push.sent = co->push.waiting = 0;
	co->push.waiter = waiter;
	tdm_strlcpy(co->push.source, source, sizeof(co->push.source));
	co->push.sending = true;
	for (pe = co->peers; pe; pe = nx) {
		nx = pe->next;
		if (!pe->m || pe->dead)
			continue;
		if (send_plan(co, pe, &co->cur))
			continue;
		co->push.sent++;
		co->push.waiting++;
	}
	co->push.sending = false;
	h = hist_find(co, co->cur.version);
	if (h)
		h->sent = co->push.sent;
	log_notice("plan v%u (%s): sent to %u member%s, base time %s",
		   co->cur.version, source, co->push.sent,
		   co->push.sent == 1 ? "" : "s",
		   fmt_tai(co->cur.base_time, co->cur.clockid, tb, sizeof(tb)));
	if (!co->push.waiting)
		push_finish(co);
	return 0;
}

/* The answer to a plan push. */
struct push_result {
	const struct coord *co;
	unsigned int acked, nacked;
	int64_t elapsed, last_ack;
};

static void push_result_text(FILE *f, void *arg)
{
	const struct push_result *pr = arg;
	const struct coord *co = pr->co;
	unsigned int i;
	char tb[64];

	fprintf(f, "plan v%u: base time %s\n", co->push.version,
		fmt_tai(co->cur.base_time, co->cur.clockid, tb, sizeof(tb)));
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];
		bool planned = in_plan(&co->cur, m->name);

		if (m->ack_version != co->push.version || m->ack == ACK_NONE) {
			if (planned)
				fprintf(f, "  %-20s not connected\n", m->name);
			continue;
		}
		fprintf(f, "  %-20s %s", m->name, ack_names[m->ack]);
		if (m->ack == ACK_OK)
			fprintf(f, " in %.3f ms", m->ack_ns / 1e6);
		if (m->ack_msg[0])
			fprintf(f, ": %s", m->ack_msg);
		if (!planned)
			fprintf(f, " (no windows in this plan)");
		fputc('\n', f);
	}
	for (i = 0; i < co->cur.nsenders; i++)
		if (!member_find(co, co->cur.senders[i].name))
			fprintf(f, "  %-20s never connected\n",
				co->cur.senders[i].name);
}

static void push_result_json(struct tdm_json *j, void *arg)
{
	const struct push_result *pr = arg;
	const struct coord *co = pr->co;
	unsigned int i;

	tdm_json_obj_open(j, NULL);
	tdm_json_u64(j, "version", co->push.version);
	tdm_json_s64(j, "base_time", co->cur.base_time);
	tdm_json_u64(j, "sent", co->push.sent);
	tdm_json_u64(j, "acked", pr->acked);
	tdm_json_u64(j, "nacked", pr->nacked);
	tdm_json_u64(j, "elapsed_ns", pr->elapsed);
	tdm_json_u64(j, "last_ack_ns", pr->last_ack);
	tdm_json_arr_open(j, "members");
	for (i = 0; i < co->nmembers; i++) {
		const struct member *m = &co->members[i];

		if (m->ack_version != co->push.version || m->ack == ACK_NONE)
			continue;
		tdm_json_obj_open(j, NULL);
		tdm_json_str(j, "name", m->name);
		tdm_json_str(j, "ack", ack_names[m->ack]);
		tdm_json_u64(j, "ack_ns", m->ack_ns);
		tdm_json_str(j, "message", m->ack_msg);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
	tdm_json_obj_close(j);
}

static void push_finish(struct coord *co)
{
	unsigned int i, acked = 0, nacked = 0, missing = 0;
	int64_t elapsed = now_ns(co) - co->push.start, last = 0;
	struct ctl_req *w = co->push.waiter;
	struct hist *h;

	for (i = 0; i < co->nmembers; i++) {
		struct member *m = &co->members[i];

		if (m->ack_version != co->push.version)
			continue;
		if (m->ack == ACK_OK) {
			acked++;
			if (m->ack_ns > last)
				last = m->ack_ns;
		} else if (m->ack == ACK_NACK) {
			nacked++;
		} else if (m->ack == ACK_WAIT) {
			m->ack = ACK_TIMEOUT;
			snprintf(m->ack_msg, sizeof(m->ack_msg),
				 "no answer within the ack timeout");
			missing++;
		} else if (m->ack == ACK_TIMEOUT) {
			missing++;
		}
	}
	h = hist_find(co, co->push.version);
	if (h) {
		h->acked = acked;
		h->nacked = nacked;
		h->ack_ns = last;
	}
	if (nacked || missing)
		log_warn("plan v%u: %u acked, %u refused, %u did not answer (%.3f ms)",
			 co->push.version, acked, nacked, missing, elapsed / 1e6);
	else
		log_notice("plan v%u: acked by all %u member%s in %.3f ms",
			   co->push.version, acked, acked == 1 ? "" : "s",
			   last / 1e6);
	co->push.active = false;
	co->push.waiter = NULL;
	if (w) {
		struct push_result pr = {
			.co = co, .acked = acked, .nacked = nacked,
			.elapsed = elapsed, .last_ack = last,
		};

		report_reply(w, !nacked && !missing, push_result_json,
			     push_result_text, &pr);
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

static void try_start(struct coord *co)
{
	unsigned int need, have;
	struct tdm_plan p;
	uint32_t v = 0;
	int64_t base = 0;
	char err[512];

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
	if (members_run(co, &co->desired, &v, &base) && v >= highest_version(co)) {
		co->desired.version = v;
		co->desired.base_time = base;
		set_current(co, &co->desired);
		hist_add(co, &co->cur, "adopted");
		log_notice("quorum reached (%u of %u); the members already run this plan as v%u: adopted",
			   have, co->cur.nsenders, v);
		return;
	}
	log_notice("quorum reached (%u of %u members); pushing the plan",
		   have, co->desired.nsenders);
	p = co->desired;
	memset(&co->desired, 0, sizeof(co->desired));
	if (push_plan(co, &p, "file", NULL, err, sizeof(err)))
		log_err("cannot push the plan file: %s", err);
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
	mb->hb = false;
	mb->ack = ACK_NONE;
	log_notice("member %s registered from %s (running plan v%u)%s", name,
		   p->addr, mb->run_version,
		   co->have_cur && !in_plan(&co->cur, name) ?
		   "; it has no windows in the current plan" : "");

	nlh = co_frame(co, TDM_MSG_WELCOME);
	mnl_attr_put_u32(nlh, TDM_A_PLAN_VERSION,
			 co->have_cur ? co->cur.version : 0);
	if (co->io.send(co->io.ctx, p->link, nlh, err, errlen))
		return -1;

	if (!co->started) {
		try_start(co);
		return 0;
	}
	/* A late member gets the current plan unless it already runs it. */
	if (co->have_cur && (mb->run_version != co->cur.version ||
			    mb->run_base != co->cur.base_time)) {
		if (send_plan(co, p, &co->cur))
			return 0;
		if (co->push.active && co->push.version == co->cur.version) {
			co->push.sent++;
			co->push.waiting++;
		}
	} else if (co->have_cur) {
		mb->ack = ACK_OK;
		mb->ack_version = co->cur.version;
	}
	return 0;
}

static int on_ack(struct coord *co, struct coord_peer *p, const struct tdm_msg *m)
{
	struct member *mb = p->m;
	uint32_t v = mnl_attr_get_u32(m->tb[TDM_A_PLAN_VERSION]);
	uint32_t status = mnl_attr_get_u32(m->tb[TDM_A_STATUS]);
	char msg[sizeof(mb->ack_msg)];

	/* The member's text goes into logs and onto terminals: escaped. */
	tdm_text_escape(msg, m->tb[TDM_A_MESSAGE] ?
			mnl_attr_get_str(m->tb[TDM_A_MESSAGE]) : "", sizeof(msg));
	if (mb->ack != ACK_WAIT || v != mb->ack_version) {
		log_info("member %s: unexpected ack for plan v%u ignored",
			 mb->name, v);
		return 0;
	}
	mb->ack = status ? ACK_NACK : ACK_OK;
	tdm_strlcpy(mb->ack_msg, msg, sizeof(mb->ack_msg));
	if (co->push.active && v == co->push.version) {
		mb->ack_ns = now_ns(co) - co->push.start;
		if (co->push.waiting)
			co->push.waiting--;
	}
	if (status)
		log_warn("member %s refused plan v%u: %s (%s)", mb->name, v,
			 msg[0] ? msg : "no reason given", strerror(status));
	else
		log_info("member %s installed plan v%u", mb->name, v);
	if (co->push.active && !co->push.waiting)
		push_finish(co);
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
		    p->m->ack_version == co->push.version) {
			p->m->ack = ACK_TIMEOUT;
			snprintf(p->m->ack_msg, sizeof(p->m->ack_msg),
				 "disconnected before answering");
			if (co->push.waiting)
				co->push.waiting--;
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
	if (co->push.active && !co->push.waiting && !co->push.sending)
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
	if (conf->plan_file[0]) {
		if (tdm_plan_load(conf->plan_file, &co->desired, err, errlen)) {
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

/* Is this member a sender of a plan the coordinator knows? */
static bool in_any_plan(const struct coord *co, const char *name)
{
	return (co->have_cur && in_plan(&co->cur, name)) ||
	       (co->have_prev && in_plan(&co->prev, name)) ||
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
		if (now >= co->push.deadline)
			push_finish(co);
		else if (co->push.deadline < next)
			next = co->push.deadline;
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
		tdm_json_str(j, "ack", ack_names[m->ack]);
		tdm_json_u64(j, "ack_version", m->ack_version);
		tdm_json_str(j, "ack_message", m->ack_msg);
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
	if (co->push.active)
		fprintf(f, "push of v%u in progress: %u of %u answers missing\n",
			co->push.version, co->push.waiting, co->push.sent);
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
		tdm_json_u64(j, "sent", h->sent);
		tdm_json_u64(j, "acked", h->acked);
		tdm_json_u64(j, "nacked", h->nacked);
		tdm_json_u64(j, "ack_ns", h->ack_ns);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
}

static void history_text(FILE *f, void *arg)
{
	const struct coord *co = arg;
	unsigned int i;
	char tb[64];

	fprintf(f, "%-8s %-36s %-8s %5s %5s %5s %12s\n", "VERSION",
		"ACTIVATION", "SOURCE", "SENT", "ACKED", "NACKS", "ACKED IN");
	for (i = 0; i < co->nhist; i++) {
		const struct hist *h = &co->hist[i];

		fprintf(f, "v%-7u %-36s %-8s %5u %5u %5u %9.3f ms\n",
			h->version, fmt_tai(h->base_time, h->clockid, tb, sizeof(tb)),
			h->source, h->sent, h->acked, h->nacked, h->ack_ns / 1e6);
	}
}

static void ctl_push(struct coord *co, struct ctl_req *r, const char *label)
{
	struct tdm_plan p;
	char err[512], msg[600];

	if (co->push.active) {
		snprintf(msg, sizeof(msg), "a push of plan v%u is in progress (%u answers missing); try again\n",
			 co->push.version, co->push.waiting);
		ctl_reply(r, false, msg);
		return;
	}
	if (tdm_plan_parse(r->body, label[0] ? label : "plan", &p, err, sizeof(err))) {
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
	if (push_plan(co, &p, "tdmctl", r, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "%s\n", err);
		ctl_reply(r, false, msg);
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
	else
		ctl_reply(r, false, "unknown command (status, plan show, plan history, plan push)\n");
}

void coord_free(struct coord *co)
{
	if (!co)
		return;
	if (co->push.waiter) {
		ctl_reply(co->push.waiter, false, "tdmd is shutting down\n");
		co->push.waiter = NULL;
	}
	while (co->peers)
		peer_close(co, co->peers, "tdmd is shutting down");
	if (co->have_desired)
		tdm_plan_free(&co->desired);
	if (co->have_cur)
		tdm_plan_free(&co->cur);
	if (co->have_prev)
		tdm_plan_free(&co->prev);
	free(co->members);
	free(co->hist);
	free(co->frame);
	free(co);
}
