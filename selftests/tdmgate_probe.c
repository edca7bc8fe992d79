// SPDX-License-Identifier: GPL-2.0
/*
 * tdmgate_probe: libtdmgate against a live tdmwin qdisc, for
 * tdmgate_follow.sh.  Linked against build/us/libtdmgate.so.1 as a user
 * links it; the changes it makes to the qdisc go through libtdm's
 * rtnetlink client (tdm_qdisc.c: the requests tdmd sends).
 *
 *   tdmgate_probe plan DEV
 *	the plan tdmgate_plan_from_qdisc() reads, as key=value lines
 *   tdmgate_probe follow DEV ROUNDS
 *	follows DEV's tdmwin qdisc (one window, open all the cycle) and
 *	changes it ROUNDS times each way, measuring when the library
 *	answers by the change: key=value lines (latencies in ns on
 *	CLOCK_BOOTTIME, from just before the request to the library)
 *
 * In "follow" a sender thread (Q) asks tdmgate_try() for a 64-byte frame
 * every QUERY_NS, as a software-gated sender asks before each frame, and
 * publishes what the gate answers by (state, plan version) with the time
 * it first saw it; a second handle blocks in tdmgate_wait() (W) where a
 * test needs a blocked sender.  The main thread makes the changes and
 * waits (at most WAIT_NS) for the view it expects.
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "tdm_plan.h"
#include "tdm_qdisc.h"
#include "tdmgate.h"

#define QUERY_NS	100000LL	/* Q asks every 100 us */
#define WAIT_NS		5000000000LL	/* a change not seen in 5 s: failed */
#define CYCLE_NS	10000000ULL
#define LEASE_NS	300000000ULL
#define FRAME		64

static struct tdm_rtnl rtnl;
static struct tdm_qdisc_target tgt;
static const char *dev;
static char err[512];

static long long boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void nap(long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	nanosleep(&ts, NULL);
}

static void die(const char *what, int e)
{
	fprintf(stderr, "tdmgate_probe: %s: %s%s%s\n", what, strerror(e),
		err[0] ? ": " : "", err);
	exit(1);
}

/* ---- plan ---------------------------------------------------------------- */

static void print_sched(const char *pfx, const struct tdmgate_sched *s)
{
	unsigned int i;

	printf("%s.version=%u\n%s.guard=%u\n%s.base=%lld\n%s.cycle=%llu\n%s.nwin=%u\n",
	       pfx, s->version, pfx, s->guard, pfx, (long long)s->base, pfx,
	       (unsigned long long)s->cycle, pfx, s->nwin);
	for (i = 0; i < s->nwin; i++)
		printf("%s.win.%u=%llu:%llu\n", pfx, i,
		       (unsigned long long)s->win[i].offset,
		       (unsigned long long)s->win[i].length);
}

static int cmd_plan(int ifindex)
{
	struct tdmgate_plan p;
	struct tdmgate *g;
	int e = tdmgate_plan_from_qdisc(ifindex, &p);

	if (e) {
		printf("error=%d\n", -e);
		return 1;
	}
	print_sched("active", &p.active);
	printf("has_pending=%d\n", p.has_pending);
	if (p.has_pending)
		print_sched("pending", &p.pending);
	printf("unconfirmed=%d\nhold=%d\nlink_speed=%u\nclockid=%d\n"
	       "lease_ns=%llu\nlease_left_ns=%lld\n", p.unconfirmed, p.hold,
	       p.link_speed, p.clockid, (unsigned long long)p.lease_ns,
	       (long long)p.lease_left_ns);
	e = tdmgate_create(&p, &g);
	printf("create=%d\n", -e);
	if (!e)
		printf("state=%d\n", tdmgate_state(g, tdmgate_now(g)));
	tdmgate_destroy(g);
	return 0;
}

/* ---- the sender thread (Q) and the blocked one (W) --------------------- */

static struct tdmgate *gq, *gw;
static atomic_int q_pause, q_stop, q_paused;
/* What Q saw last: state, active version; when first (boot, gate clock). */
static atomic_int v_state, v_version, v_seq;
static atomic_llong v_boot, v_gate, q_lease_out_boot;
static atomic_int w_arm;
static atomic_llong w_boot;
static atomic_int w_err;

static void *query_thread(void *arg)
{
	int last_state = -1, last_version = -1;
	struct tdmgate_plan p;
	int64_t when, now;

	(void)arg;
	while (!atomic_load(&q_stop)) {
		if (atomic_load(&q_pause)) {
			atomic_store(&q_paused, 1);
			nap(QUERY_NS);
			continue;
		}
		atomic_store(&q_paused, 0);
		tdmgate_try(gq, FRAME, &when);
		now = tdmgate_now(gq);
		tdmgate_get_plan(gq, &p);
		int st = tdmgate_state(gq, now);

		if (st != last_state || (int)p.active.version != last_version) {
			long long b = boot_ns();

			if (st == TDMGATE_LEASE_OUT && last_state != st)
				atomic_store(&q_lease_out_boot, b);
			last_state = st;
			last_version = (int)p.active.version;
			atomic_store(&v_boot, b);
			atomic_store(&v_gate, now);
			atomic_store(&v_state, st);
			atomic_store(&v_version, last_version);
			atomic_fetch_add(&v_seq, 1);
		}
		nap(QUERY_NS);
	}
	return NULL;
}

static void *wait_thread(void *arg)
{
	int64_t start;

	(void)arg;
	while (!atomic_load(&q_stop)) {
		if (!atomic_load(&w_arm)) {
			nap(QUERY_NS);
			continue;
		}
		int e = tdmgate_wait(gw, FRAME, tdmgate_now(gw) + WAIT_NS, &start);

		atomic_store(&w_boot, boot_ns());
		atomic_store(&w_err, -e);
		atomic_store(&w_arm, 0);
	}
	return NULL;
}

/* Wait until Q saw @state (and @version, if >= 0): its time, or -1. */
static long long seen(int state, int version)
{
	long long end = boot_ns() + WAIT_NS;

	while (boot_ns() < end) {
		int seq = atomic_load(&v_seq);
		long long b = atomic_load(&v_boot);

		if (atomic_load(&v_state) == state &&
		    (version < 0 || atomic_load(&v_version) == version) &&
		    seq == atomic_load(&v_seq))
			return b;
		nap(QUERY_NS);
	}
	return -1;
}

/* ---- changes ------------------------------------------------------------- */

/* A plan of one window open all the cycle (but @gap), version @v. */
static void plan_make(struct tdm_plan *p, struct tdm_sender *s, uint32_t v,
		      int64_t base, uint64_t gap)
{
	tdm_plan_init(p);
	memset(s, 0, sizeof(*s));
	strcpy(s->name, "p");
	s->nwin = 1;
	s->win[0].offset = 0;
	s->win[0].length = CYCLE_NS - gap;
	p->version = v;
	p->cycle_ns = CYCLE_NS;
	p->base_time = base;
	p->link_speed = 1000;
	p->senders = s;
	p->nsenders = 1;
}

static void install(uint32_t v, int64_t base)
{
	struct tdm_sender s;
	struct tdm_plan p;

	plan_make(&p, &s, v, base, 1000000);
	if (tdm_qdisc_install(&rtnl, &tgt, &p, "p", false, err, sizeof(err)))
		die("install", errno);
}

static void set_hold(bool hold)
{
	if (tdm_qdisc_set_hold(&rtnl, &tgt, hold, err, sizeof(err)))
		die(hold ? "hold" : "release", errno);
}

static void del_root(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_DELQDISC;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = tgt.ifindex;
	tcm->tcm_parent = TC_H_ROOT;
	if (tdm_nl_talk(&rtnl.nl, nlh, false, NULL, NULL, err, sizeof(err)))
		die("delete", errno);
}

/*
 * Latencies of one kind of change, printed as NAME.{n,min,max,mean}: from
 * the request's answer (the kernel sends its news before it answers) to
 * the library's answer, 0 if the library answered first; and as
 * NAME.req.{min,max,mean}: from just before the request (the kernel's
 * own time included).
 */
struct lat {
	const char *name;
	long long n, min, max, sum, rmin, rmax, rsum;
};

static void lat_seen(struct lat *l, long long t0, long long ack, long long t)
{
	long long ns = t - ack, req = t - t0;

	if (t < 0) {
		printf("%s.lost=1\n", l->name);
		return;
	}
	if (ns < 0)
		ns = 0;
	if (!l->n || ns < l->min)
		l->min = ns;
	if (!l->n || req < l->rmin)
		l->rmin = req;
	if (ns > l->max)
		l->max = ns;
	if (req > l->rmax)
		l->rmax = req;
	l->sum += ns;
	l->rsum += req;
	l->n++;
}

static void lat_print(const struct lat *l)
{
	long long n = l->n ? l->n : 1;

	printf("%s.n=%lld\n%s.min=%lld\n%s.max=%lld\n%s.mean=%lld\n"
	       "%s.req.min=%lld\n%s.req.max=%lld\n%s.req.mean=%lld\n",
	       l->name, l->n, l->name, l->min, l->name, l->max, l->name,
	       l->sum / n, l->name, l->rmin, l->name, l->rmax, l->name,
	       l->rsum / n);
}

static int cmd_follow(int ifindex, int rounds)
{
	struct lat hold = { .name = "hold" }, rel = { .name = "release" },
		   chg = { .name = "change" }, gone = { .name = "gone" },
		   back = { .name = "back" };
	uint32_t ver = 1;
	pthread_t tq, tw;
	long long t0, t;
	int i, e;

	install(ver, CYCLE_NS);
	e = tdmgate_plan_from_qdisc(ifindex, &(struct tdmgate_plan){ 0 });
	if (e)
		die("plan_from_qdisc", -e);
	{
		struct tdmgate_plan p;

		tdmgate_plan_from_qdisc(ifindex, &p);
		if (tdmgate_create(&p, &gq) || tdmgate_create(&p, &gw))
			die("create", EINVAL);
	}
	e = tdmgate_follow(gq, ifindex);
	if (!e)
		e = tdmgate_follow(gw, ifindex);
	if (e)
		die("follow", -e);
	atomic_store(&v_state, -1);
	pthread_create(&tq, NULL, query_thread, NULL);
	pthread_create(&tw, NULL, wait_thread, NULL);
	if (seen(TDMGATE_OPEN, (int)ver) < 0)
		die("the followed plan", ETIMEDOUT);

	for (i = 0; i < rounds; i++) {
		/* Hold: a sender that asks sees the gate closed. */
		t0 = boot_ns();
		set_hold(true);
		t = boot_ns();
		lat_seen(&hold, t0, t, seen(TDMGATE_HOLD, -1));
		/* Release: a sender blocked in tdmgate_wait() goes. */
		atomic_store(&w_arm, 1);
		nap(50000000);	/* W is asleep on the news socket */
		t0 = boot_ns();
		set_hold(false);
		t = boot_ns();
		while (atomic_load(&w_arm) && boot_ns() - t0 < WAIT_NS)
			nap(QUERY_NS / 10);
		lat_seen(&rel, t0, t, atomic_load(&w_arm) || atomic_load(&w_err) ?
			 -1 : atomic_load(&w_boot));
		/* A new plan (tc qdisc change, tdmd's plan change). */
		t0 = boot_ns();
		install(++ver, CYCLE_NS);
		t = boot_ns();
		lat_seen(&chg, t0, t, seen(TDMGATE_OPEN, (int)ver));
		/* Deleted: closed.  Added again: open on its plan. */
		t0 = boot_ns();
		del_root();
		t = boot_ns();
		lat_seen(&gone, t0, t, seen(TDMGATE_GONE, -1));
		t0 = boot_ns();
		install(++ver, CYCLE_NS);
		t = boot_ns();
		lat_seen(&back, t0, t, seen(TDMGATE_OPEN, (int)ver));
	}
	lat_print(&hold);
	lat_print(&rel);
	lat_print(&chg);
	lat_print(&gone);
	lat_print(&back);

	/* A pending plan takes over at its base, not before. */
	{
		int64_t base = (tdmgate_now(gq) / (int64_t)CYCLE_NS + 40) *
			       (int64_t)CYCLE_NS;	/* 0.4 s ahead */

		install(++ver, base);
		t = seen(TDMGATE_OPEN, (int)ver);
		printf("pending.base=%lld\npending.seen=%lld\n", (long long)base,
		       t < 0 ? -1LL : (long long)atomic_load(&v_gate));
	}

	/* Lease: set (a renewal), never renewed again; the qdisc's end. */
	tgt.lease_ns = LEASE_NS;
	t0 = boot_ns();
	if (tdm_qdisc_set_lease(&rtnl, &tgt, err, sizeof(err)))
		die("lease", errno);
	t = boot_ns();
	{
		struct tdm_qdisc_info *in = calloc(1, sizeof(*in));
		long long b0, out;

		/* The qdisc's end: its lease left, read back, from before. */
		b0 = boot_ns();
		if (!in || tdm_qdisc_get(&rtnl, &tgt, in, err, sizeof(err)))
			die("get", errno);
		out = seen(TDMGATE_LEASE_OUT, -1);
		printf("lease.ns=%llu\nlease.req=%lld\nlease.ack=%lld\n"
		       "lease.qdisc_end_min=%lld\nlease.lib_out=%lld\n",
		       (unsigned long long)LEASE_NS, t0, t, b0 + in->lease_left_ns,
		       out < 0 ? -1 : (long long)atomic_load(&q_lease_out_boot));
		free(in);
	}
	tgt.lease_ns = 0;
	if (tdm_qdisc_set_lease(&rtnl, &tgt, err, sizeof(err)))
		die("lease off", errno);
	printf("lease.off_seen=%d\n", seen(TDMGATE_OPEN, -1) >= 0);

	/* Lost news: Q's socket holds 2 kB; 40 changes while Q sleeps
	 * overflow it, and the last (a new version) is among those lost.
	 */
	{
		int fd = tdmgate_follow_fd(gq), small = 1;

		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		atomic_store(&q_pause, 1);
		while (!atomic_load(&q_paused))
			nap(QUERY_NS);
		for (i = 0; i < 20; i++) {
			set_hold(true);
			set_hold(false);
		}
		install(++ver, CYCLE_NS);
		t0 = boot_ns();
		atomic_store(&q_pause, 0);
		printf("flood.version=%u\nflood.seen=%d\n", ver,
		       seen(TDMGATE_OPEN, (int)ver) >= 0);
	}

	atomic_store(&q_stop, 1);
	pthread_join(tq, NULL);
	pthread_join(tw, NULL);
	tdmgate_destroy(gq);
	tdmgate_destroy(gw);
	return 0;
}

int main(int argc, char **argv)
{
	int ifindex;

	if (argc < 3) {
		fprintf(stderr, "usage: tdmgate_probe plan|follow DEV [ROUNDS]\n");
		return 2;
	}
	dev = argv[2];
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex)
		die(dev, errno);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "plan"))
		return cmd_plan(ifindex);
	if (strcmp(argv[1], "follow") || argc != 4)
		return 2;
	snprintf(tgt.ifname, sizeof(tgt.ifname), "%s", dev);
	tgt.ifindex = ifindex;
	tgt.parent = TC_H_ROOT;
	if (tdm_rtnl_open(&rtnl, err, sizeof(err)))
		die("rtnetlink", errno);
	return cmd_follow(ifindex, atoi(argv[3]));
}
