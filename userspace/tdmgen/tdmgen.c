// SPDX-License-Identifier: GPL-2.0
/*
 * tdmgen: stamped UDP test traffic for tdmwin (replaces the original
 * udp_send).  Every datagram starts with struct tdm_pkt_hdr (magic,
 * sender id, plan version, sequence number, TX time on CLOCK_TAI); the
 * test ends with end markers that carry the number of data packets sent.
 * See tdmgen(1).
 *
 *   tdmgen [-p PORT] [-s SIZE] [-r RATE] [-d TIME | -c COUNT] [-i SENDER]
 *          [-V PLAN_VERSION] [-P PRIO] [-b BATCH] [-I IFACE] [-B ADDR]
 *          [--start TAI_NS | --align TIME] [-E MARKERS] [-j] [-q]
 *          [--pace windows --plan FILE [--name NAME] [--spin TIME]
 *           [--gate window|lib]] HOST
 *   tdmgen ... --plan FILE --corner [--pace rate|windows] [--name NAME]
 *
 * --corner sends the corner turn: to every receiver of the plan (its
 * [receiver] sections, at -p PORT), each with its own sequence numbers
 * and end markers, so that every receiver sees an ordinary stream from
 * this sender.  With --pace windows each packet goes to the receiver of
 * the window it leaves in (the user-space barrel shifter); with --pace
 * rate, free-running, to the receivers in turn, packet by packet, and
 * only a gate in the way (a qdisc class per destination) could time it.
 *
 * --pace windows is the original tool's method, user-space TDM: the
 * sender sends only while one of its own windows is open by its own
 * clock, one packet at a time, so that a window ends at most one packet
 * late (the packet that started just before its end).  With --gate lib
 * it asks libtdmgate instead, the qdisc's own answer for a frame of its
 * size: a packet starts only where it fits its window with the guard,
 * behind the packets before it at the plan's link speed.
 *
 * Exit status: 0 sent, 1 a send failed for good, 2 usage error or an
 * unusable plan.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tdm_gate.h"
#include "tdm_json.h"
#include "tdm_pkt.h"
#include "tdm_plan.h"
#include "tdm_util.h"
#include "tdmgate.h"
#include "tdmgen.h"

#define DEFAULT_PORT	"8081"
#define DEFAULT_SIZE	1024
#define MAX_SIZE	65507
#define MAX_BATCH	1024

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tdmgen [options] HOST\n"
		"  -p, --port PORT          UDP destination port (default " DEFAULT_PORT ")\n"
		"  -s, --size BYTES         UDP payload, 40..65507 (default 1024)\n"
		"  -r, --rate RATE          PPS (\"20000pps\", \"1.5Mpps\"), payload bit rate\n"
		"                           (\"800Mbit\", \"2Gbit\", \"500kbit\") or \"max\" (default)\n"
		"  -d, --duration TIME      stop after TIME (\"10s\", \"500ms\")\n"
		"  -c, --count N            stop after N data packets\n"
		"  -i, --sender ID          sender id: its index in the plan (default 0)\n"
		"  -V, --plan-version N     plan version to put in the header (default 0)\n"
		"  -P, --priority PRIO      socket priority (SO_PRIORITY, 0..15 without CAP_NET_ADMIN)\n"
		"  -b, --batch N            at most N packets per sendmmsg (default 32)\n"
		"  -I, --interface IF       bind to this device (SO_BINDTODEVICE)\n"
		"  -B, --bind ADDR          source address\n"
		"      --start TAI_NS       start at this CLOCK_TAI time (ns)\n"
		"      --align TIME         start at the next multiple of TIME on CLOCK_TAI\n"
		"  -E, --end-markers N      end markers to send (default 5)\n"
		"  -w, --end-wait TIME      pause before the end markers (default 200ms)\n"
		"      --pace rate|windows  rate (default): packets spread evenly at --rate;\n"
		"                           windows: the original tool's method, send only\n"
		"                           while this sender's window is open by its own\n"
		"                           clock (--plan; packets due at --rate while it is\n"
		"                           closed go when it opens)\n"
		"      --plan FILE          the window plan (tdm.conf(5) plan format); cycle 0\n"
		"                           starts at its base_time, else at the start\n"
		"      --name NAME          this sender's name in the plan (default: -i's id)\n"
		"      --spin TIME          sleep until TIME before a packet or window, then\n"
		"                           busy-wait (default 50us)\n"
		"      --gate window|lib    window (default): send while the window is open;\n"
		"                           lib: when libtdmgate says the frame fits, with\n"
		"                           the guard, behind the ones before it at the\n"
		"                           plan's link_speed (the qdisc's rule)\n"
		"      --stack kernel|afxdp|dpdk\n"
		"                           kernel (default): UDP sockets; afxdp: AF_XDP\n"
		"                           frames on -I IFACE (IPv4), past its qdisc; dpdk:\n"
		"                           DPDK frames (the EAL's first port), past it\n"
		"                           too; both gated by libtdmgate following the\n"
		"                           tdmwin qdisc on IFACE\n"
		"      --ungated            afxdp, dpdk: no gate (shows what the qdisc misses)\n"
		"      --gate-sock PATH     dpdk: follow tdmd's plan store at PATH (tdm.conf\n"
		"                           gate tdmd: a device without a netdev) instead\n"
		"                           of the tdmwin qdisc on IFACE\n"
		"      --dst-mac MAC        afxdp, dpdk: the next hop (default: its ARP entry)\n"
		"      --queue N            afxdp: the device queue to bind (default 0)\n"
		"      --eal 'ARGS'         dpdk: the EAL's arguments, split at spaces\n"
		"                           (default: -l CPU --no-huge --no-shconf -m 64\n"
		"                           --no-pci --no-telemetry --log-level=*:warning\n"
		"                           --vdev net_af_packet0,iface=IFACE)\n"
		"      --corner             the corner turn: to every receiver of --plan (no\n"
		"                           HOST), each its own sequence and end markers;\n"
		"                           with --pace windows to the receiver of the open\n"
		"                           window, with --pace rate to each in turn\n"
		"  -j, --json               summary as JSON on stdout\n"
		"  -q, --quiet              no summary\n"
		"  -h, --help               this help\n"
		"      --version            tdmgen's version\n");
}

/* "20000pps", "1.5Mpps", "800Mbit", "2Gbit", "max" -> packets/s for size. */
static int parse_rate(const char *s, size_t size, double *pps)
{
	char *end;
	double v, mult = 1;

	if (!strcmp(s, "max") || !strcmp(s, "0")) {
		*pps = 0;
		return 0;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		mult = 1e3, end++;
	else if (*end == 'M')
		mult = 1e6, end++;
	else if (*end == 'G')
		mult = 1e9, end++;
	if (!strcmp(end, "pps"))
		*pps = v * mult;
	else if (!strcmp(end, "bit") || !strcmp(end, "bps"))
		*pps = v * mult / (8.0 * (double)size);
	else
		return -1;
	return *pps > 0 && *pps <= 1e9 ? 0 : -1;
}

/* A UDP socket of @family with the options of @o, bound if -B says so. */
static int new_socket(const struct opts *o, int family, char *err,
		      size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM,
				  .ai_family = family,
				  .ai_flags = AI_NUMERICHOST | AI_PASSIVE };
	struct addrinfo *src = NULL;
	int fd, rc, sndbuf = 4 << 20;

	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (o->prio >= 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &o->prio, sizeof(o->prio))) {
		snprintf(err, errlen, "SO_PRIORITY %d: %s", o->prio,
			 strerror(errno));
		goto fail;
	}
	if (o->ifname && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o->ifname,
				    strlen(o->ifname))) {
		snprintf(err, errlen, "SO_BINDTODEVICE %s: %s", o->ifname,
			 strerror(errno));
		goto fail;
	}
	if (o->bind_addr) {
		rc = getaddrinfo(o->bind_addr, NULL, &hints, &src);
		if (rc) {
			snprintf(err, errlen, "source %s: %s", o->bind_addr,
				 gai_strerror(rc));
			goto fail;
		}
		if (bind(fd, src->ai_addr, src->ai_addrlen)) {
			snprintf(err, errlen, "bind %s: %s", o->bind_addr,
				 strerror(errno));
			goto fail;
		}
		freeaddrinfo(src);
	}
	return fd;
fail:
	if (src)
		freeaddrinfo(src);
	close(fd);
	return -1;
}

/* The socket to HOST: connected. */
static int open_socket(const struct opts *o, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM };
	struct addrinfo *ai;
	int fd, rc;

	rc = getaddrinfo(o->host, o->port, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "%s port %s: %s", o->host, o->port,
			 gai_strerror(rc));
		return -1;
	}
	fd = new_socket(o, ai->ai_family, err, errlen);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		snprintf(err, errlen, "connect %s: %s", o->host, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

void sleep_until(int clk, int64_t t, int64_t spin)
{
	int64_t now = tdm_clock_ns(clk);

	if (t - now > spin) {
		struct timespec ts;
		int64_t wake = t - spin;

		ts.tv_sec = wake / (int64_t)TDM_NSEC_PER_SEC;
		ts.tv_nsec = wake % (int64_t)TDM_NSEC_PER_SEC;
		while (clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL) == EINTR &&
		       !tdm_stop)
			;
	}
	while (!tdm_stop && tdm_clock_ns(clk) < t)
		;
}


/*
 * --corner: the receivers' addresses at -p PORT, and one socket for all
 * (so they must share a family).  -1 with err.
 */
static int corner_socket(const struct opts *o, struct sender *s,
			 const struct tdm_plan *p, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_NUMERICHOST };
	struct addrinfo *ai;
	unsigned int r;
	int rc;

	s->ndest = p->nreceivers;
	s->dest = calloc(s->ndest, sizeof(*s->dest));
	s->dest_len = calloc(s->ndest, sizeof(*s->dest_len));
	s->dsent = calloc(s->ndest, sizeof(*s->dsent));
	if (!s->dest || !s->dest_len || !s->dsent) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (r = 0; r < s->ndest; r++) {
		rc = getaddrinfo(p->receivers[r].addr, o->port, &hints, &ai);
		if (rc) {
			snprintf(err, errlen, "receiver '%s' %s port %s: %s",
				 p->receivers[r].name, p->receivers[r].addr,
				 o->port, gai_strerror(rc));
			return -1;
		}
		memcpy(&s->dest[r], ai->ai_addr, ai->ai_addrlen);
		s->dest_len[r] = ai->ai_addrlen;
		freeaddrinfo(ai);
		if (s->dest[r].ss_family != s->dest[0].ss_family) {
			snprintf(err, errlen,
				 "receivers '%s' and '%s': IPv4 and IPv6 in one plan (--corner sends from one socket)",
				 p->receivers[0].name, p->receivers[r].name);
			return -1;
		}
	}
	return new_socket(o, s->dest[0].ss_family, err, errlen);
}

/* Message @i goes to receiver @d (--corner): its address, its sequence. */
static uint64_t aim(struct sender *s, unsigned int i, unsigned int d)
{
	s->msgs[i].msg_hdr.msg_name = &s->dest[d];
	s->msgs[i].msg_hdr.msg_namelen = s->dest_len[d];
	return s->dsent[d]++;
}

/* Send n prepared packets; retry the rest after a partial send or a
 * transient error.  0 or -1 (errno).
 */
static int send_batch(struct sender *s, unsigned int n)
{
	unsigned int done = 0;

	while (done < n) {
		int r = sendmmsg(s->fd, s->msgs + done, n - done, 0);

		if (r > 0) {
			done += r;
			continue;
		}
		if (r < 0 && (errno == EINTR || errno == ENOBUFS ||
			      errno == EAGAIN || errno == ECONNREFUSED)) {
			s->retries++;
			if (errno == ENOBUFS || errno == EAGAIN)
				usleep(50);
			if (tdm_stop && errno != EINTR && s->retries > 1000000)
				return -1;
			continue;
		}
		return -1;
	}
	return 0;
}

int64_t begin(const struct opts *o)
{
	int64_t start = o->start_ns, now;

	if (!start && o->align_ns) {
		now = tdm_clock_ns(CLOCK_TAI);
		start = (now / (int64_t)o->align_ns + 1) * (int64_t)o->align_ns;
	}
	if (start)
		sleep_until(CLOCK_TAI, start, SPIN_NS);
	else
		start = tdm_clock_ns(CLOCK_TAI);
	return start;
}

void sender_sent(const struct opts *o, struct sender *s, unsigned int n,
		 int64_t now)
{
	if (!s->sent)
		s->first_tx = now;
	s->last_tx = now;
	s->sent += n;
	s->bytes += (uint64_t)n * o->size;
}

unsigned int pace_due(const struct opts *o, const struct sender *s,
		      int64_t start, int64_t now, unsigned int max,
		      int64_t *next)
{
	unsigned int n = max;

	if (o->count && o->count - s->sent < n)
		n = (unsigned int)(o->count - s->sent);
	if (o->pps <= 0)
		return n;
	*next = start + (int64_t)((double)s->sent * 1e9 / o->pps);
	if (now < *next)
		return 0;
	for (unsigned int k = 1; k < n; k++)
		if (start + (int64_t)((double)(s->sent + k) * 1e9 / o->pps) > now)
			return k;
	return n;
}

/*
 * Stamp one prepared packet just before it goes and send it, with
 * --corner to receiver @dest.
 */
static int send_one(const struct opts *o, struct sender *s,
		    struct tdm_pkt *pkt, unsigned int dest)
{
	int64_t now;

	pkt->seq = s->ndest ? aim(s, 0, dest) : s->sent;
	now = tdm_clock_ns(CLOCK_TAI);
	pkt->tx_ns = now;
	tdm_pkt_encode(s->bufs, pkt);
	if (send_batch(s, 1))
		return -1;
	sender_sent(o, s, 1, now);
	return 0;
}

/*
 * The original method: before each packet, ask the gate's own question
 * (tdmwin_gate(), as the qdisc does) of this sender's windows on the
 * plan's clock, with a frame of 1 ns: is a window open now?  If not,
 * sleep until the next one opens (then spin).  A packet is sent while
 * now < end, so the one sent last in a window may end after it: one
 * packet of overshoot, as the original udp_send.  With a rate, packets
 * become due as with --pace rate (the same offered load) from @start on
 * the plan's clock, and those due while the window is closed go at its
 * opening, one after the other.
 */
/*
 * The receiver of @snd's window open at @t (the gate said so): the
 * window the gate's own search finds there.
 */
static unsigned int window_dest(const struct tdmwin_sched *sched,
				const struct tdm_sender *snd, int64_t t)
{
	u64 pos;
	int i;

	if (t < sched->base)
		return 0;
	tdmwin_div_rem((u64)(t - sched->base), sched->cycle, &pos);
	i = tdmwin_window_at(sched, pos);
	return i < 0 ? 0 : snd->win[i].dest;
}

static int run_windows(const struct opts *o, struct sender *s,
		       const struct tdmwin_sched *sched,
		       const struct tdm_sender *snd, int clk, int64_t start)
{
	struct tdm_pkt pkt = { .sender = o->sender,
			       .plan_version = o->plan_version };
	int64_t end = INT64_MAX, now, due, last_win = INT64_MIN;
	struct tdmwin_gate_result r;

	if (o->duration_ns)
		end = start + (int64_t)o->duration_ns;
	while (!tdm_stop && (!o->count || s->sent < o->count)) {
		now = tdm_clock_ns(clk);
		if (now >= end)
			break;
		r = tdmwin_gate(sched, now, 1);
		if (r.verdict != TDMWIN_SEND) {
			sleep_until(clk, r.when < end ? r.when : end,
				    (int64_t)o->spin_ns);
			continue;
		}
		due = o->pps > 0 ? start + (int64_t)((double)s->sent * 1e9 / o->pps) :
		      now;
		if (now < due) {
			sleep_until(clk, due < r.end ? due : r.end,
				    (int64_t)o->spin_ns);
			continue;
		}
		if (r.when != last_win) {
			last_win = r.when;
			s->windows++;
		}
		if (send_one(o, s, &pkt, window_dest(sched, snd, now)))
			return -1;
	}
	return 0;
}

int gate_frame(struct tdmgate *g, uint32_t len, int64_t deadline,
	       int64_t *start, const char *where)
{
	int err = tdmgate_wait(g, len, deadline, start);

	if (err == -ETIMEDOUT || err == -EINTR)
		return 1;
	if (err) {
		fprintf(stderr, "tdmgen: %s: a frame of %u bytes: %s\n", where,
			len, strerror(-err));
		return -1;
	}
	return 0;
}

/* The frame the NIC gets for a datagram of @size: MAC, IP, UDP headers. */
static uint32_t frame_len(const struct sender *s, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	size_t ip = 20;

	if (!getsockname(s->fd, (struct sockaddr *)&ss, &len) &&
	    ss.ss_family == AF_INET6)
		ip = 40;
	return (uint32_t)(14 + ip + 8 + size);
}

/* The sender's schedule as libtdmgate takes it: a gate, or NULL (said). */
static struct tdmgate *lib_gate(const struct opts *o, const struct tdm_plan *p,
				const struct tdm_sender *snd, int64_t base)
{
	struct tdmgate_plan gp;
	struct tdmgate *g;
	unsigned int i;
	int err;

	if (!p->link_speed) {
		fprintf(stderr, "tdmgen: %s: --gate lib needs the plan's link_speed\n",
			o->plan_file);
		return NULL;
	}
	memset(&gp, 0, sizeof(gp));
	gp.active.version = p->version;
	gp.active.guard = p->guard_ns;
	gp.active.base = base;
	gp.active.cycle = p->cycle_ns;
	gp.active.nwin = snd->nwin;
	for (i = 0; i < snd->nwin && i < TDMGATE_MAX_WINDOWS; i++) {
		gp.active.win[i].offset = snd->win[i].offset;
		gp.active.win[i].length = snd->win[i].length;
	}
	gp.link_speed = p->link_speed;
	gp.clockid = p->clockid;
	err = tdmgate_create(&gp, &g);
	if (err) {
		fprintf(stderr, "tdmgen: %s: libtdmgate refuses the plan: %s\n",
			o->plan_file, strerror(-err));
		return NULL;
	}
	tdmgate_set_spin(g, o->spin_ns);
	return g;
}

/*
 * --gate lib: before each packet, libtdmgate's blocking call says when a
 * frame of this size may start (and books the wire for it); packets due
 * at --rate wait for their time first.  No packet overshoots a window,
 * unless the process wakes too late to send at the instant it was given.
 * 0, -1 (a send failed, errno) or 1 (no window can take the frame).
 */
static int run_lib(const struct opts *o, struct sender *s, struct tdmgate *g,
		   const struct tdmwin_sched *sched,
		   const struct tdm_sender *snd, int clk, int64_t start)
{
	struct tdm_pkt pkt = { .sender = o->sender,
			       .plan_version = o->plan_version };
	int64_t end = INT64_MAX, now, due, t, last_win = INT64_MIN;
	uint32_t len = frame_len(s, o->size);
	unsigned int dest;
	int err;

	if (o->duration_ns)
		end = start + (int64_t)o->duration_ns;
	while (!tdm_stop && (!o->count || s->sent < o->count)) {
		now = tdm_clock_ns(clk);
		if (now >= end)
			break;
		due = o->pps > 0 ? start + (int64_t)((double)s->sent * 1e9 / o->pps) :
		      now;
		if (now < due) {
			sleep_until(clk, due < end ? due : end, (int64_t)o->spin_ns);
			continue;
		}
		err = gate_frame(g, len, end, &t, o->plan_file);
		if (err > 0)
			continue;
		if (err)
			return 1;
		/* The window it starts in: its opening, as --gate window counts. */
		dest = window_dest(sched, snd, t);
		t = tdmwin_gate(sched, t, 1).when;
		if (t != last_win) {
			last_win = t;
			s->windows++;
		}
		if (send_one(o, s, &pkt, dest))
			return -1;
	}
	return 0;
}

static int run(const struct opts *o, struct sender *s)
{
	struct tdm_pkt pkt = { .sender = o->sender,
			       .plan_version = o->plan_version };
	int64_t start, end = INT64_MAX, now;
	unsigned int i;

	start = begin(o);
	if (o->duration_ns)
		end = start + (int64_t)o->duration_ns;

	while (!tdm_stop && (!o->count || s->sent < o->count)) {
		unsigned int n;
		int64_t due;

		now = tdm_clock_ns(CLOCK_TAI);
		if (now >= end)
			break;
		/* Packets whose scheduled time has come, up to a batch. */
		n = pace_due(o, s, start, now, o->batch, &due);
		if (!n) {
			sleep_until(CLOCK_TAI, due < end ? due : end, SPIN_NS);
			continue;
		}
		for (i = 0; i < n; i++) {
			pkt.seq = s->sent + i;
			if (s->ndest) {
				pkt.seq = aim(s, i, s->next);
				s->next = (s->next + 1) % s->ndest;
			}
			pkt.tx_ns = now;
			tdm_pkt_encode(s->bufs + (size_t)i * o->size, &pkt);
		}
		/* The stamp is the time just before the batch goes down. */
		now = tdm_clock_ns(CLOCK_TAI);
		for (i = 0; i < n; i++)
			tdm_pkt_stamp(s->bufs + (size_t)i * o->size, now);
		if (send_batch(s, n))
			return -1;
		sender_sent(o, s, n, now);
	}
	return 0;
}

/*
 * --plan: load it and find this sender (--name, else -i's id).  0 with
 * *snd, or 1 (said on stderr; p freed).
 */
static int load_plan(const struct opts *o, struct tdm_plan *p,
		     const struct tdm_sender **snd)
{
	char err[512], id[16];
	const char *name = o->name;

	if (tdm_plan_load(o->plan_file, p, err, sizeof(err))) {
		fprintf(stderr, "tdmgen: %s\n", err);
		return 1;
	}
	if (!name) {
		snprintf(id, sizeof(id), "%u", o->sender);
		name = id;
	}
	*snd = tdm_plan_sender(p, name);
	if (!*snd || !(*snd)->nwin) {
		fprintf(stderr, "tdmgen: %s: %s '%s' (give its name with --name)\n",
			o->plan_file, *snd ? "no windows for sender" : "no sender",
			name);
		goto bad;
	}
	if (o->corner && !p->nreceivers) {
		fprintf(stderr, "tdmgen: %s: --corner needs a plan with [receiver] sections\n",
			o->plan_file);
		goto bad;
	}
	if (!o->corner && p->nreceivers) {
		fprintf(stderr, "tdmgen: %s: a plan with receivers: send the corner turn with --corner\n",
			o->plan_file);
		goto bad;
	}
	if (tdm_clock_ns(p->clockid) < 0) {
		fprintf(stderr, "tdmgen: %s: cannot read the plan's clock %d\n",
			o->plan_file, p->clockid);
		goto bad;
	}
	return 0;
bad:
	tdm_plan_free(p);
	return 1;
}

/*
 * --pace windows: start, and run by this sender's windows.  0, -1 (a
 * send failed, errno) or 1 (the plan is unusable: said on stderr).
 */
static int run_plan(const struct opts *o, struct sender *s,
		    const struct tdm_plan *p, const struct tdm_sender *snd)
{
	static struct tdmwin_window win[TDMWIN_MAX_WINDOWS];
	struct tdmwin_sched sched;
	int64_t start, base;
	int rc = 1;

	start = begin(o);
	/* The start on the plan's clock; cycle 0 then if the plan has no base. */
	start = tdm_clock_ns(p->clockid) - (tdm_clock_ns(CLOCK_TAI) - start);
	base = p->base_time ? p->base_time : start;
	tdm_gate_sched(&sched, win, p, snd, base);
	if (o->gate_lib) {
		struct tdmgate *g = lib_gate(o, p, snd, base);

		if (g)
			rc = run_lib(o, s, g, &sched, snd, p->clockid, start);
		tdmgate_destroy(g);
	} else {
		rc = run_windows(o, s, &sched, snd, p->clockid, start);
	}
	return rc;
}

static int send_markers(const struct opts *o, struct sender *s)
{
	struct tdm_pkt pkt = { .flags = TDM_PKT_F_END, .sender = o->sender,
			       .plan_version = o->plan_version,
			       .seq = s->sent, .sent = s->sent };
	unsigned int i;

	unsigned int d;

	if (o->markers && o->end_wait_ns)
		sleep_until(CLOCK_TAI, tdm_clock_ns(CLOCK_TAI) +
				    (int64_t)o->end_wait_ns, SPIN_NS);
	for (i = 0; i < o->markers; i++) {
		/* --corner: each receiver its own count. */
		for (d = 0; d < (s->ndest ? s->ndest : 1); d++) {
			if (s->ndest) {
				s->msgs[0].msg_hdr.msg_name = &s->dest[d];
				s->msgs[0].msg_hdr.msg_namelen = s->dest_len[d];
				pkt.seq = pkt.sent = s->dsent[d];
			}
			pkt.tx_ns = tdm_clock_ns(CLOCK_TAI);
			tdm_pkt_encode(s->bufs, &pkt);
			if (send_batch(s, 1))
				return -1;
		}
		if (i + 1 < o->markers)
			usleep(1000);
	}
	return 0;
}

/* Past the qdisc: who keeps the frames to their instants. */
static const char *gating(const struct opts *o, const struct sender *s)
{
	return o->ungated ? "none" : s->launching ? "launch time" : "software";
}

static void summary(const struct opts *o, const struct sender *s,
		    const struct tdm_plan *p)
{
	unsigned int d;

	double secs = s->sent > 1 ? (double)(s->last_tx - s->first_tx) / 1e9 : 0;
	double pps = secs > 0 ? (double)(s->sent - 1) / secs : 0;
	double bps = pps * 8.0 * (double)o->size;

	if (o->quiet)
		return;
	if (o->json) {
		struct tdm_json j;
		const char *t;

		tdm_json_init(&j);
		tdm_json_obj_open(&j, NULL);
		tdm_json_u64(&j, "sender", o->sender);
		tdm_json_u64(&j, "plan_version", o->plan_version);
		tdm_json_u64(&j, "sent", s->sent);
		tdm_json_u64(&j, "bytes", s->bytes);
		tdm_json_u64(&j, "payload", o->size);
		tdm_json_s64(&j, "first_tx_ns", s->first_tx);
		tdm_json_s64(&j, "last_tx_ns", s->last_tx);
		tdm_json_u64(&j, "pps", (uint64_t)(pps + 0.5));
		tdm_json_u64(&j, "rate_bps", (uint64_t)(bps + 0.5));
		tdm_json_u64(&j, "retries", s->retries);
		tdm_json_u64(&j, "end_markers", o->markers);
		tdm_json_str(&j, "pace", o->pace_windows ? "windows" : "rate");
		tdm_json_str(&j, "stack", stack_name(o->stack));
		if (o->stack != STACK_KERNEL) {
			tdm_json_str(&j, "gate", o->ungated ? "none" : "lib");
			tdm_json_str(&j, "gating", gating(o, s));
			tdm_json_str(&j, "launch_time", s->launch_time);
		}
		if (o->pace_windows) {
			tdm_json_u64(&j, "windows", s->windows);
			tdm_json_str(&j, "gate", o->gate_lib ? "lib" : "window");
		}
		if (s->ndest) {
			tdm_json_arr_open(&j, "receivers");
			for (d = 0; d < s->ndest; d++) {
				tdm_json_obj_open(&j, NULL);
				tdm_json_str(&j, "name", p->receivers[d].name);
				tdm_json_str(&j, "address", p->receivers[d].addr);
				tdm_json_u64(&j, "sent", s->dsent[d]);
				tdm_json_obj_close(&j);
			}
			tdm_json_arr_close(&j);
		}
		tdm_json_obj_close(&j);
		t = tdm_json_finish(&j);
		if (t)
			printf("%s\n", t);
		tdm_json_free(&j);
		return;
	}
	printf("tdmgen: sender %u sent %llu packets of %zu bytes in %.6f s: %.0f pps, %.3f Mbit/s payload",
	       o->sender, (unsigned long long)s->sent, o->size, secs, pps,
	       bps / 1e6);
	if (o->pace_windows)
		printf(", in %llu windows", (unsigned long long)s->windows);
	for (d = 0; d < s->ndest; d++)
		printf("%s %s %llu", d ? "," : "; to", p->receivers[d].name,
		       (unsigned long long)s->dsent[d]);
	if (s->retries)
		printf(", %llu retries", (unsigned long long)s->retries);
	if (o->stack != STACK_KERNEL)
		printf(", %s on %s, %s (launch time: %s)",
		       o->stack == STACK_AFXDP ? "AF_XDP" : "DPDK", o->ifname,
		       o->ungated ? "ungated" : s->launching ?
		       "launch times from libtdmgate" : "software gating by libtdmgate",
		       s->launch_time);
	printf("\n");
}

/* @arg is @a or @b: 0 with *is_b, else -1 with err ("use a or b"). */
static int parse_either(const char *arg, const char *a, const char *b,
			bool *is_b, char *err, size_t errlen)
{
	if (strcmp(arg, a) && strcmp(arg, b)) {
		snprintf(err, errlen, "'%s': use %s or %s", arg, a, b);
		return -1;
	}
	*is_b = !strcmp(arg, b);
	return 0;
}

/* "aa:bb:cc:dd:ee:ff" -> mac; 0 or -1. */
static int parse_mac(const char *arg, uint8_t mac[6])
{
	unsigned int m[6];
	char end;
	int i;

	if (sscanf(arg, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5], &end) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "sender", required_argument, NULL, 'i' },
		{ "plan-version", required_argument, NULL, 'V' },
		{ "priority", required_argument, NULL, 'P' },
		{ "batch", required_argument, NULL, 'b' },
		{ "interface", required_argument, NULL, 'I' },
		{ "bind", required_argument, NULL, 'B' },
		{ "start", required_argument, NULL, 1 },
		{ "align", required_argument, NULL, 2 },
		{ "end-markers", required_argument, NULL, 'E' },
		{ "end-wait", required_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 3 },
		{ "pace", required_argument, NULL, 4 },
		{ "plan", required_argument, NULL, 5 },
		{ "name", required_argument, NULL, 6 },
		{ "spin", required_argument, NULL, 7 },
		{ "gate", required_argument, NULL, 8 },
		{ "stack", required_argument, NULL, 9 },
		{ "ungated", no_argument, NULL, 10 },
		{ "dst-mac", required_argument, NULL, 11 },
		{ "queue", required_argument, NULL, 12 },
		{ "corner", no_argument, NULL, 13 },
		{ "eal", required_argument, NULL, 14 },
		{ "gate-sock", required_argument, NULL, 15 },
		{ NULL, 0, NULL, 0 }
	};
	const char *rate = "max";
	char err[256];
	uint64_t v;
	int c;

	*o = (struct opts){ .port = DEFAULT_PORT, .size = DEFAULT_SIZE,
			    .prio = -1, .batch = 32, .markers = 5,
			    .end_wait_ns = 200000000, .spin_ns = SPIN_NS };
	while ((c = getopt_long(argc, argv, "p:s:r:d:c:i:V:P:b:I:B:E:w:jqh",
				lo, NULL)) != -1) {
		err[0] = '\0';
		switch (c) {
		case 'p':
			if (tdm_parse_u64(optarg, 65535, &v, err, sizeof(err)) || !v)
				goto bad;
			o->port = optarg;
			break;
		case 's':
			if (tdm_parse_u64(optarg, MAX_SIZE, &v, err, sizeof(err)) ||
			    v < TDM_PKT_HDR_LEN) {
				snprintf(err, sizeof(err), "size must be %d..%d bytes",
					 TDM_PKT_HDR_LEN, MAX_SIZE);
				goto bad;
			}
			o->size = v;
			break;
		case 'r':
			rate = optarg;
			break;
		case 'd':
			if (tdm_parse_time(optarg, &o->duration_ns, err, sizeof(err)))
				goto bad;
			break;
		case 'c':
			if (tdm_parse_u64(optarg, UINT64_MAX, &o->count, err,
					  sizeof(err)))
				goto bad;
			break;
		case 'i':
			if (tdm_parse_u64(optarg, UINT32_MAX, &v, err, sizeof(err)))
				goto bad;
			o->sender = v;
			break;
		case 'V':
			if (tdm_parse_u64(optarg, UINT32_MAX, &v, err, sizeof(err)))
				goto bad;
			o->plan_version = v;
			break;
		case 'P':
			if (tdm_parse_u64(optarg, INT32_MAX, &v, err, sizeof(err)))
				goto bad;
			o->prio = (int)v;
			break;
		case 'b':
			if (tdm_parse_u64(optarg, MAX_BATCH, &v, err, sizeof(err)) || !v) {
				snprintf(err, sizeof(err), "batch must be 1..%d", MAX_BATCH);
				goto bad;
			}
			o->batch = v;
			break;
		case 'I':
			o->ifname = optarg;
			break;
		case 'B':
			o->bind_addr = optarg;
			break;
		case 1:
			if (tdm_parse_u64(optarg, INT64_MAX, &v, err, sizeof(err)))
				goto bad;
			o->start_ns = (int64_t)v;
			break;
		case 2:
			if (tdm_parse_time(optarg, &o->align_ns, err, sizeof(err)))
				goto bad;
			break;
		case 'E':
			if (tdm_parse_u64(optarg, 1000, &v, err, sizeof(err)))
				goto bad;
			o->markers = v;
			break;
		case 'w':
			if (tdm_parse_time(optarg, &o->end_wait_ns, err, sizeof(err)))
				goto bad;
			break;
		case 'j':
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 3:
			printf("tdmgen %s\n", TDM_VERSION);
			exit(0);
		case 4:
			if (parse_either(optarg, "rate", "windows",
					 &o->pace_windows, err, sizeof(err)))
				goto bad;
			break;
		case 5:
			o->plan_file = optarg;
			break;
		case 6:
			o->name = optarg;
			break;
		case 7:
			if (tdm_parse_time(optarg, &o->spin_ns, err, sizeof(err)))
				goto bad;
			break;
		case 8:
			if (parse_either(optarg, "window", "lib", &o->gate_lib,
					 err, sizeof(err)))
				goto bad;
			break;
		case 9:
			if (!strcmp(optarg, "kernel")) {
				o->stack = STACK_KERNEL;
			} else if (!strcmp(optarg, "afxdp")) {
				o->stack = STACK_AFXDP;
			} else if (!strcmp(optarg, "dpdk")) {
				o->stack = STACK_DPDK;
			} else {
				snprintf(err, sizeof(err), "'%s': use kernel, afxdp or dpdk",
					 optarg);
				goto bad;
			}
			break;
		case 10:
			o->ungated = true;
			break;
		case 15:
			o->gate_sock = optarg;
			break;
		case 11:
			if (parse_mac(optarg, o->dst_mac)) {
				snprintf(err, sizeof(err), "'%s': a MAC address is aa:bb:cc:dd:ee:ff",
					 optarg);
				goto bad;
			}
			o->has_dst_mac = true;
			break;
		case 12:
			if (tdm_parse_u64(optarg, UINT32_MAX, &v, err, sizeof(err)))
				goto bad;
			o->queue = (unsigned int)v;
			break;
		case 13:
			o->corner = true;
			break;
		case 14:
			o->eal = optarg;
			break;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (o->corner ? optind != argc : optind != argc - 1) {
		if (o->corner)
			fprintf(stderr, "tdmgen: --corner sends to the plan's receivers: no HOST\n");
		usage(stderr);
		return -1;
	}
	o->host = o->corner ? NULL : argv[optind];
	if (parse_rate(rate, o->size, &o->pps)) {
		fprintf(stderr, "tdmgen: bad rate '%s' (e.g. 20000pps, 1.5Mpps, 800Mbit, max)\n",
			rate);
		return -1;
	}
	if (o->start_ns && o->align_ns) {
		fprintf(stderr, "tdmgen: --start and --align exclude each other\n");
		return -1;
	}
	if (o->corner && !o->plan_file) {
		fprintf(stderr, "tdmgen: --corner needs --plan FILE\n");
		return -1;
	}
	if (o->pace_windows != !!o->plan_file && !o->corner) {
		fprintf(stderr, "tdmgen: --pace windows and --plan FILE go together\n");
		return -1;
	}
	if (o->gate_lib && !o->pace_windows) {
		fprintf(stderr, "tdmgen: --gate lib goes with --pace windows\n");
		return -1;
	}
	if (o->stack != STACK_KERNEL && (!o->ifname || o->pace_windows)) {
		fprintf(stderr, "tdmgen: --stack %s needs -I IFACE and takes its plan from the tdmwin qdisc there (no --pace windows)\n",
			stack_name(o->stack));
		return -1;
	}
	if (o->stack != STACK_KERNEL && o->corner) {
		fprintf(stderr, "tdmgen: --corner sends from a UDP socket, not with --stack %s\n",
			stack_name(o->stack));
		return -1;
	}
	if (o->stack == STACK_KERNEL && (o->ungated || o->has_dst_mac)) {
		fprintf(stderr, "tdmgen: --ungated and --dst-mac go with --stack afxdp or dpdk\n");
		return -1;
	}
	if (o->stack != STACK_AFXDP && o->queue) {
		fprintf(stderr, "tdmgen: --queue goes with --stack afxdp\n");
		return -1;
	}
	if ((o->stack != STACK_DPDK || o->ungated) && o->gate_sock) {
		fprintf(stderr, "tdmgen: --gate-sock goes with --stack dpdk, gated\n");
		return -1;
	}
	if (o->stack != STACK_DPDK && o->eal) {
		fprintf(stderr, "tdmgen: --eal goes with --stack dpdk\n");
		return -1;
	}
	if (o->name && !o->plan_file) {
		fprintf(stderr, "tdmgen: --name names a sender of --plan\n");
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "tdmgen: option -%c: %s\n", c < 32 ? '-' : c,
		err[0] ? err : "bad value");
	return -1;
}

int main(int argc, char **argv)
{
	const struct tdm_sender *snd = NULL;
	struct sender s = { .fd = -1 };
	struct tdm_plan p;
	struct opts o;
	char err[512];
	unsigned int i;
	int rc = 0;

	tdm_plan_init(&p);
	if (parse_opts(argc, argv, &o))
		return 2;
	if (tdm_clock_ns(CLOCK_TAI) < 0) {
		fprintf(stderr, "tdmgen: cannot read CLOCK_TAI\n");
		return 1;
	}
	if (o.plan_file && load_plan(&o, &p, &snd))
		return 2;
	/* --corner: the header names the sender by its index in the plan. */
	if (o.corner)
		o.sender = (uint32_t)(snd - p.senders);
	if (o.corner)
		s.fd = corner_socket(&o, &s, &p, err, sizeof(err));
	else
		s.fd = open_socket(&o, err, sizeof(err));
	if (s.fd < 0) {
		fprintf(stderr, "tdmgen: %s\n", err);
		rc = 1;
		goto out;
	}
	s.bufs = calloc(o.batch, o.size);
	s.msgs = calloc(o.batch, sizeof(*s.msgs));
	s.iov = calloc(o.batch, sizeof(*s.iov));
	if (!s.bufs || !s.msgs || !s.iov) {
		fprintf(stderr, "tdmgen: out of memory\n");
		rc = 1;
		goto out;
	}
	for (i = 0; i < o.batch; i++) {
		s.iov[i].iov_base = s.bufs + (size_t)i * o.size;
		s.iov[i].iov_len = o.size;
		s.msgs[i].msg_hdr.msg_iov = &s.iov[i];
		s.msgs[i].msg_hdr.msg_iovlen = 1;
	}
	tdm_stop_on_signals();

	if (o.stack != STACK_KERNEL) {
		rc = o.stack == STACK_AFXDP ? afxdp_run(&o, &s) : dpdk_run(&o, &s);
		if (rc > 0) {
			rc = 2;
			goto out;
		}
		rc = rc < 0 ? 1 : 0;
		summary(&o, &s, &p);
		goto out;
	}
	if (o.pace_windows)
		rc = run_plan(&o, &s, &p, snd);
	else if (run(&o, &s))
		rc = -1;
	if (rc > 0) {
		rc = 2;		/* the plan: bad input */
		goto out;
	}
	if (rc < 0) {
		fprintf(stderr, "tdmgen: send: %s\n", strerror(errno));
		rc = 1;
	}
	tdm_stop = 0;	/* a ^C ends the data, the markers still go out */
	if (send_markers(&o, &s)) {
		fprintf(stderr, "tdmgen: sending the end markers: %s\n",
			strerror(errno));
		rc = 1;
	}
	summary(&o, &s, &p);
out:
	if (s.fd >= 0)
		close(s.fd);
	free(s.bufs);
	free(s.msgs);
	free(s.iov);
	free(s.dest);
	free(s.dest_len);
	free(s.dsent);
	tdm_plan_free(&p);
	return rc;
}
