// SPDX-License-Identifier: GPL-2.0
/*
 * What tdmgen's senders past the qdisc share (--stack afxdp in afxdp.c,
 * --stack dpdk in dpdk.c): the frame's addresses, taken from the kernel's
 * connected UDP socket and neighbour table; libtdmgate following the
 * tdmwin qdisc on the device, the plan's one home; and the sending loop,
 * which builds each kick's frames, asks the gate and hands them to the
 * stack (struct bypass_tx: the stack's own two steps).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "tdm_pkt.h"
#include "tdm_util.h"
#include "tdmgate.h"
#include "tdmgen.h"

const char *stack_name(enum tdmgen_stack stack)
{
	switch (stack) {
	case STACK_AFXDP:
		return "afxdp";
	case STACK_DPDK:
		return "dpdk";
	default:
		return "kernel";
	}
}

/* The neighbour entry of @ip (host order) on @ifname, from /proc/net/arp. */
static int arp_lookup(const char *ifname, uint32_t ip, uint8_t mac[6])
{
	char line[256], ipbuf[32], hw[32], dev[IFNAMSIZ + 1];
	unsigned int flags, m[6];
	FILE *f = fopen("/proc/net/arp", "r");
	int found = -1, i;

	if (!f)
		return -1;
	snprintf(ipbuf, sizeof(ipbuf), "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255,
		 (ip >> 8) & 255, ip & 255);
	while (found && fgets(line, sizeof(line), f)) {
		char a[32];

		if (sscanf(line, "%31s %*s %x %31s %*s %16s", a, &flags, hw,
			   dev) != 4 || strcmp(a, ipbuf) || strcmp(dev, ifname) ||
		    !(flags & 2) ||	/* ATF_COM: complete */
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
			   &m[4], &m[5]) != 6)
			continue;
		for (i = 0; i < 6; i++)
			mac[i] = (uint8_t)m[i];
		found = 0;
	}
	fclose(f);
	return found;
}

static int bypass_frame_addr(const struct opts *o, int fd,
			     struct tdm_frame_addr *a)
{
	struct sockaddr_in src, dst;
	socklen_t len = sizeof(src);
	struct ifreq ifr;

	memset(a, 0, sizeof(*a));
	if (getsockname(fd, (struct sockaddr *)&src, &len) ||
	    src.sin_family != AF_INET || (len = sizeof(dst),
	    getpeername(fd, (struct sockaddr *)&dst, &len))) {
		fprintf(stderr, "tdmgen: --stack %s sends IPv4 only\n",
			stack_name(o->stack));
		return -1;
	}
	a->saddr = ntohl(src.sin_addr.s_addr);
	a->sport = ntohs(src.sin_port);
	a->daddr = ntohl(dst.sin_addr.s_addr);
	a->dport = ntohs(dst.sin_port);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, "tdmgen: %s: no MAC address: %s\n", o->ifname,
			strerror(errno));
		return -1;
	}
	memcpy(a->src_mac, ifr.ifr_hwaddr.sa_data, 6);
	if (o->has_dst_mac) {
		memcpy(a->dst_mac, o->dst_mac, 6);
	} else if (arp_lookup(o->ifname, a->daddr, a->dst_mac)) {
		fprintf(stderr, "tdmgen: %s: no neighbour entry for %s on %s (give --dst-mac)\n",
			o->host, o->host, o->ifname);
		return -1;
	}
	return 0;
}

/*
 * libtdmgate following tdmd's plan store at --gate-sock, or NULL (said):
 * one that holds no plan yet is an error here, as a missing qdisc is.
 */
static struct tdmgate *store_gate(const struct opts *o)
{
	struct tdmgate_plan p;
	struct tdmgate *g = NULL;
	int err = tdmgate_plan_from_tdmd(o->gate_sock, &p);

	if (!err)
		err = tdmgate_create(&p, &g);
	if (!err)
		err = tdmgate_follow_tdmd(g, o->gate_sock);
	if (err) {
		fprintf(stderr, "tdmgen: --gate-sock %s: libtdmgate: %s%s\n",
			o->gate_sock, strerror(-err),
			err == -ENOENT ? " (no such socket, or tdmd holds no plan yet)" : "");
		tdmgate_destroy(g);
		return NULL;
	}
	tdmgate_set_spin(g, o->spin_ns);
	return g;
}

/* libtdmgate following the tdmwin qdisc at the root of @ifindex, or NULL (said). */
static struct tdmgate *bypass_gate(const struct opts *o, int ifindex)
{
	struct tdmgate_plan p;
	struct tdmgate *g = NULL;
	int err;

	if (o->gate_sock)
		return store_gate(o);
	err = tdmgate_plan_from_qdisc(ifindex, &p);
	if (!err)
		err = tdmgate_create(&p, &g);
	if (!err)
		err = tdmgate_follow(g, ifindex);
	if (err) {
		fprintf(stderr, "tdmgen: %s: %s%s\n", o->ifname,
			err == -ENOENT ? "no tdmwin qdisc to follow (the plan's home; "
					 "or --ungated)" : "libtdmgate: ",
			err == -ENOENT ? "" : strerror(-err));
		tdmgate_destroy(g);
		return NULL;
	}
	tdmgate_set_spin(g, o->spin_ns);
	return g;
}


int bypass_setup(const struct opts *o, const struct sender *s, size_t max,
		 const char *unit, struct tdm_frame_addr *a, struct tdmgate **g)
{
	int ifindex = (int)if_nametoindex(o->ifname);

	*g = NULL;
	if (!ifindex) {
		fprintf(stderr, "tdmgen: %s: %s\n", o->ifname, strerror(errno));
		return -1;
	}
	if (bypass_frame_addr(o, s->fd, a))
		return -1;
	if (TDM_FRAME_HDR_LEN + o->size > max) {
		fprintf(stderr, "tdmgen: --stack %s sends one %s a datagram: --size at most %zu\n",
			stack_name(o->stack), unit, max - TDM_FRAME_HDR_LEN);
		return -1;
	}
	if (!o->ungated) {
		*g = bypass_gate(o, ifindex);
		if (!*g)
			return -1;
	}
	return ifindex;
}

/* ---- the gate's answer for a kick ------------------------------------------ */

/*
 * Launch time: a frame's instant is at least LAUNCH_LEAD_NS after the
 * query (the way to the NIC: never a time in the past), and a kick goes
 * at most LAUNCH_AHEAD_NS before its first instant, so that a plan
 * change, hold or lease's end reaches the frames not handed over yet.
 */
#define LAUNCH_LEAD_NS	50000
#define LAUNCH_AHEAD_NS	1000000

/* Sleep until @t on the gate's clock (a PHC: the distance, on MONOTONIC). */
static void gate_sleep(struct tdmgate *g, int64_t t)
{
	int64_t d = t - tdmgate_now(g);
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = d / (int64_t)TDM_NSEC_PER_SEC;
	ts.tv_nsec = d % (int64_t)TDM_NSEC_PER_SEC;
	nanosleep(&ts, NULL);
}

/*
 * Launch time: book @n frames of @len from LAUNCH_LEAD_NS on, and return
 * when the first is at most LAUNCH_AHEAD_NS ahead, its instant still in
 * the future: the number booked (launch[], *gnow the gate's time then),
 * 0 when @deadline passed or a signal came, or -1 (no window takes the
 * frame: said).  A booking the plan's news or a late wake-up made stale
 * is given up (its wire time stays booked: the wire idles) and the
 * frames are booked again.
 */
static int launch_book(struct tdmgate *g, uint32_t len, unsigned int n,
		       int64_t deadline, int64_t *launch, int64_t *gnow,
		       const char *where)
{
	uint32_t lens[BYPASS_MAX_KICK];
	unsigned int i;
	int k;

	for (i = 0; i < n; i++)
		lens[i] = len;
	while (!tdm_stop) {
		tdmgate_follow_read(g);
		*gnow = tdmgate_now(g);
		if (*gnow >= deadline)
			return 0;
		k = tdmgate_burst_at(g, *gnow + LAUNCH_LEAD_NS, lens, launch, n);
		if (k == -EAGAIN) {
			/* Closed (hold, a lease out): wait for news. */
			gate_sleep(g, *gnow + 1000000);
			continue;
		}
		if (k < 0) {
			fprintf(stderr, "tdmgen: %s: a frame of %u bytes: %s\n",
				where, len, strerror(-k));
			return -1;
		}
		if (launch[0] - *gnow > LAUNCH_AHEAD_NS) {
			gate_sleep(g, launch[0] - LAUNCH_AHEAD_NS);
			if (tdmgate_follow_read(g) ||
			    tdmgate_state(g, tdmgate_now(g)) != TDMGATE_OPEN)
				continue;	/* news: book again */
		}
		*gnow = tdmgate_now(g);
		if (launch[0] - *gnow >= LAUNCH_LEAD_NS / 2)
			return k;
	}
	return 0;
}

/*
 * How many of the @n frames built go in this kick: without launch times,
 * the first when the gate lets it start (tdmgate_wait()), and those that
 * fit right behind it at once (tdmgate_try()); with them, all that book
 * (launch_book()).  0 when @deadline passed first, -1 when no window takes
 * the frame (said).
 */
static int gate_burst(const struct bypass_tx *t, struct tdmgate *g,
		      bool launching, unsigned int n, int64_t deadline,
		      int64_t *launch, int64_t *gnow, const char *where)
{
	int64_t when;
	unsigned int k;
	int err;

	if (launching)
		return launch_book(g, t->len, n, deadline, launch, gnow, where);
	err = gate_frame(g, t->len, deadline, &when, where);
	if (err)
		return err > 0 ? 0 : -1;
	for (k = 1; k < n && !tdmgate_try(g, t->len, &when); k++)
		;
	return (int)k;
}

/*
 * Gate the @n frames built and send those the gate lets go (the rest are
 * given up, built again next time): how many, 0 (@deadline passed), -1
 * (no window takes the frame) or -2 (the send failed); said.  *now: the
 * TAI time the stamps were written.
 */
static int gate_kick(struct bypass_tx *t, struct tdmgate *g, struct sender *s,
		     unsigned int n, int64_t deadline, int64_t *now,
		     const char *where)
{
	int64_t launch[BYPASS_MAX_KICK], gnow = 0;
	bool launching = g && s->launching;
	int k = (int)n;

	if (g)
		k = gate_burst(t, g, launching, n, deadline, launch, &gnow, where);
	if (t->kick(t, k > 0 ? (unsigned int)k : 0, n, launching ? launch : NULL,
		    gnow, now, &s->retries))
		return -2;
	return k;
}

/* ---- sending ----------------------------------------------------------------- */

/* Data: packets due at --rate (all at once without one), gated. */
static int send_data(const struct opts *o, struct sender *s,
		     struct bypass_tx *t, struct tdmgate *g)
{
	struct tdm_pkt pkt = { .sender = o->sender,
			       .plan_version = o->plan_version };
	unsigned int max = o->batch < t->max ? o->batch : t->max;
	int64_t start, end = INT64_MAX, now, due, dl = TDMGATE_NEVER;
	unsigned int n;
	int k;

	start = begin(o);
	if (o->duration_ns)
		end = start + (int64_t)o->duration_ns;
	while (!tdm_stop && (!o->count || s->sent < o->count)) {
		now = tdm_clock_ns(CLOCK_TAI);
		if (now >= end)
			break;
		/* Packets whose time has come, up to a kick. */
		n = pace_due(o, s, start, now, max, &due);
		if (!n) {
			sleep_until(CLOCK_TAI, due < end ? due : end, SPIN_NS);
			continue;
		}
		pkt.seq = s->sent;
		if (t->prepare(t, &pkt, n, o->size))
			return -1;
		/* The deadline on the gate's clock. */
		if (g && end != INT64_MAX)
			dl = tdmgate_now(g) + (end - now);
		k = gate_kick(t, g, s, n, dl, &now, o->ifname);
		if (k < 0)
			return k == -1 ? 1 : -1;
		if (k)
			sender_sent(o, s, (unsigned int)k, now);
	}
	return 0;
}

/* The end markers, through the gate as well. */
static int send_markers(const struct opts *o, struct sender *s,
			struct bypass_tx *t, struct tdmgate *g)
{
	struct tdm_pkt pkt = { .flags = TDM_PKT_F_END, .sender = o->sender,
			       .plan_version = o->plan_version, .sent = s->sent };
	unsigned int i;
	int64_t now;

	if (o->markers && o->end_wait_ns)
		sleep_until(CLOCK_TAI, tdm_clock_ns(CLOCK_TAI) +
				    (int64_t)o->end_wait_ns, SPIN_NS);
	for (i = 0; i < o->markers; i++) {
		pkt.seq = s->sent;
		if (t->prepare(t, &pkt, 1, o->size))
			return -1;
		/* A marker the gate holds for 10 s is given up. */
		if (gate_kick(t, g, s, 1, g ? tdmgate_now(g) + 10000000000LL : 0,
			      &now, o->ifname) != 1) {
			fprintf(stderr, "tdmgen: %s: end marker %u not sent\n",
				o->ifname, i);
			return -1;
		}
		if (i + 1 < o->markers)
			usleep(1000);
	}
	return 0;
}

int bypass_send(const struct opts *o, struct sender *s, struct bypass_tx *t,
		struct tdmgate *g)
{
	int rc = send_data(o, s, t, g);

	if (rc <= 0) {
		tdm_stop = 0;	/* a ^C ends the data, the markers still go out */
		if (send_markers(o, s, t, g))
			rc = -1;
	}
	return rc;
}
