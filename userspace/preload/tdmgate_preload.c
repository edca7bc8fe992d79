// SPDX-License-Identifier: GPL-2.0
/*
 * libtdmgate-preload.so: the tdmwin gate for a UDP sender that was not
 * built for it.  Preloaded before the sender's own stack
 * (LD_PRELOAD=libtdmgate-preload.so:libvma.so ./sender), it takes send(),
 * sendto(), sendmsg(), sendmmsg() and write() first: on a UDP socket each
 * call waits until libtdmgate says its frames may start, then passes it
 * on (dlsym(RTLD_NEXT): the next library's, or libc's); any other file or
 * socket goes straight through.  See libtdmgate-preload(8) and
 * Documentation/bypass.rst.
 *
 * The plan is the tdmwin qdisc's on TDMGATE_DEV, followed through
 * libtdmgate (tdmgate_follow()); one gate for the process, under a lock:
 * every sending thread books the same wire.  A datagram's frames are
 * counted as the kernel sends them: one frame of Ethernet, IP and UDP
 * headers and the payload; IP fragments beyond the MTU; GSO segments
 * (UDP_SEGMENT), which are sent one sendmsg() each so that each waits for
 * its own instant.
 *
 * Environment:
 *   TDMGATE_DEV    the device whose tdmwin qdisc holds the plan (required,
 *                  unless TDMGATE_SOCK: without either nothing is gated,
 *                  said once on stderr)
 *   TDMGATE_SOCK   tdmd's plan store for a device without a netdev
 *                  (tdm.conf gate tdmd, its gate_socket): followed
 *                  instead of TDMGATE_DEV's qdisc (tdmgate_follow_tdmd())
 *   TDMGATE_SPIN   ns to busy-poll before an opening (default 50000)
 *   TDMGATE_MTU    the MTU frames are cut at (default: TDMGATE_DEV's)
 */
#include <dlfcn.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tdmgate.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
#define ETH_HDR		14
#define UDP_HDR		8
#define MAX_FRAMES	64	/* a datagram of 64 kB at an MTU of 1280 */
#define DEFAULT_SPIN	50000

typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int,
			     const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef int (*sendmmsg_fn)(int, struct mmsghdr *, unsigned int, int);
typedef ssize_t (*write_fn)(int, const void *, size_t);

static send_fn real_send;
static sendto_fn real_sendto;
static sendmsg_fn real_sendmsg;
static sendmmsg_fn real_sendmmsg;
static write_fn real_write;

static pthread_once_t gate_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tdmgate *gate;
static int gate_err;		/* why there is no gate: -errno, 0 unset */
static unsigned int mtu = 1500;

__attribute__((constructor)) static void preload_init(void)
{
	real_send = (send_fn)dlsym(RTLD_NEXT, "send");
	real_sendto = (sendto_fn)dlsym(RTLD_NEXT, "sendto");
	real_sendmsg = (sendmsg_fn)dlsym(RTLD_NEXT, "sendmsg");
	real_sendmmsg = (sendmmsg_fn)dlsym(RTLD_NEXT, "sendmmsg");
	real_write = (write_fn)dlsym(RTLD_NEXT, "write");
}

static void say(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "libtdmgate-preload: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/* The gate, made on the first UDP send (its netlink goes straight through). */
static void gate_init(void)
{
	const char *dev = getenv("TDMGATE_DEV"), *sock = getenv("TDMGATE_SOCK");
	const char *v;
	struct tdmgate_plan p;
	struct ifreq ifr;
	int ifindex = 0, fd, err;

	if (sock && !*sock)
		sock = NULL;
	if ((!dev || !*dev) && !sock) {
		say("TDMGATE_DEV and TDMGATE_SOCK not set: %s%snothing is gated", "", "");
		gate_err = 0;
		return;
	}
	if (!dev)
		dev = "";
	ifindex = sock ? 0 : (int)if_nametoindex(dev);
	if (!sock && !ifindex) {
		gate_err = -errno;
		say("TDMGATE_DEV %s: %s: UDP sends fail", dev, strerror(errno));
		return;
	}
	err = sock ? tdmgate_plan_from_tdmd(sock, &p) :
		     tdmgate_plan_from_qdisc(ifindex, &p);
	if (!err)
		err = tdmgate_create(&p, &gate);
	else if (err == -ENOENT) {
		/* No tdmwin qdisc yet: a gate that holds until one comes. */
		memset(&p, 0, sizeof(p));
		p.active.cycle = 1000000;
		p.active.nwin = 1;
		p.active.win[0].length = 1000000;
		p.link_speed = 1000;
		p.clockid = CLOCK_TAI;
		p.hold = true;
		err = tdmgate_create(&p, &gate);
	}
	if (!err)
		err = sock ? tdmgate_follow_tdmd(gate, sock) :
			     tdmgate_follow(gate, ifindex);
	if (err) {
		tdmgate_destroy(gate);
		gate = NULL;
		gate_err = err;
		say("%s: libtdmgate: %s: UDP sends fail", sock ? sock : dev,
		    strerror(-err));
		return;
	}
	v = getenv("TDMGATE_SPIN");
	tdmgate_set_spin(gate, v ? strtoull(v, NULL, 0) : DEFAULT_SPIN);
	v = getenv("TDMGATE_MTU");
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (v)
		mtu = (unsigned int)strtoul(v, NULL, 0);
	else if (fd >= 0 && *dev && !ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = (unsigned int)ifr.ifr_mtu;
	if (fd >= 0)
		close(fd);
	if (mtu < 576)
		mtu = 576;
}

/* ---- what a call sends ------------------------------------------------- */

struct udp_sock {
	unsigned int ip_hdr;	/* 20 or 40 */
	unsigned int gso;	/* the socket's UDP_SEGMENT, 0: none */
};

/* Is @fd a UDP socket?  Its IP header's length and GSO size if so. */
static bool udp_sock(int fd, struct udp_sock *u)
{
	int proto = 0, dom = 0, gso = 0;
	socklen_t len = sizeof(proto);

	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) ||
	    proto != IPPROTO_UDP)
		return false;
	len = sizeof(dom);
	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len);
	u->ip_hdr = dom == AF_INET6 ? 40 : 20;
	len = sizeof(gso);
	if (getsockopt(fd, SOL_UDP, UDP_SEGMENT, &gso, &len) || gso < 0)
		gso = 0;
	u->gso = (unsigned int)gso;
	return true;
}

/*
 * The frames of a datagram of @payload bytes sent whole (no GSO): one,
 * or the IP fragments the kernel cuts it into beyond the MTU (IPv6 adds
 * a fragment header to each).  Their lengths in @len; their count.
 */
static unsigned int frames(const struct udp_sock *u, size_t payload,
			   uint32_t *len)
{
	size_t ip = UDP_HDR + payload, frag, room;
	unsigned int n = 0, hdr = u->ip_hdr + (u->ip_hdr == 40 ? 8 : 0);

	if (u->ip_hdr + ip <= mtu) {
		len[0] = (uint32_t)(ETH_HDR + u->ip_hdr + ip);
		return 1;
	}
	room = (mtu - hdr) & ~(size_t)7;
	while (ip && n < MAX_FRAMES) {
		frag = ip < room ? ip : room;
		len[n++] = (uint32_t)(ETH_HDR + hdr + frag);
		ip -= frag;
	}
	return n;
}

/* The GSO size of one message: its UDP_SEGMENT cmsg, else the socket's. */
static unsigned int msg_gso(const struct msghdr *m, const struct udp_sock *u)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *)m, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_SEGMENT &&
		    c->cmsg_len >= CMSG_LEN(sizeof(uint16_t))) {
			uint16_t v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return v;
		}
	return u->gso;
}

static size_t iov_len(const struct iovec *iov, size_t n)
{
	size_t i, len = 0;

	for (i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

/* ---- the gate ---------------------------------------------------------------- */

/*
 * Wait until the first of @n frames may start and book them all (the
 * rest right behind it: they leave in one call).  Under gate_lock.  0,
 * or -1 with errno (EINTR; ENETDOWN without a gate; EMSGSIZE for a frame
 * no window takes).
 */
static int gate_frames(const uint32_t *len, unsigned int n)
{
	int64_t t;
	unsigned int i;
	int err;

	if (!gate) {
		errno = gate_err ? -gate_err : ENETDOWN;
		return -1;
	}
	err = tdmgate_wait(gate, len[0], TDMGATE_NEVER, &t);
	for (i = 1; !err && i < n; i++)
		err = tdmgate_next(gate, len[i], &t);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

/* Whether to gate @fd: 0 no (not UDP, or no TDMGATE_DEV), 1 yes. */
static int gated(int fd, struct udp_sock *u)
{
	if (!udp_sock(fd, u))
		return 0;
	pthread_once(&gate_once, gate_init);
	return gate || gate_err;
}

/* One datagram of @payload bytes, no GSO: gate its frames (locked). */
static int gate_datagram_locked(const struct udp_sock *u, size_t payload)
{
	uint32_t len[MAX_FRAMES];

	return gate_frames(len, frames(u, payload, len));
}

static int gate_datagram(const struct udp_sock *u, size_t payload)
{
	int rc;

	pthread_mutex_lock(&gate_lock);
	rc = gate_datagram_locked(u, payload);
	pthread_mutex_unlock(&gate_lock);
	return rc;
}

/*
 * May message @m (one frame, no GSO) leave in the same call as the one
 * before it?  Booked if so (locked).
 */
static bool batch_fits(const struct msghdr *m, const struct udp_sock *u)
{
	size_t len = iov_len(m->msg_iov, m->msg_iovlen);
	unsigned int gso = msg_gso(m, u);
	uint32_t flen[MAX_FRAMES];
	int64_t when;

	if ((gso && len > gso) || frames(u, len, flen) != 1)
		return false;
	return !tdmgate_try(gate, flen[0], &when);
}

/*
 * A GSO message: each segment as a message of its own, gated and sent
 * alone (the UDP_SEGMENT cmsg left out; a segment no longer than the
 * GSO size is not segmented).  The bytes sent, or -1 with errno if none.
 */
static ssize_t send_gso(int fd, const struct msghdr *m, int flags,
			const struct udp_sock *u, unsigned int gso)
{
	size_t total = iov_len(m->msg_iov, m->msg_iovlen), off = 0;
	struct iovec seg[64];

	while (off < total) {
		size_t want = total - off < gso ? total - off : gso, skip = off;
		struct msghdr one = { .msg_name = m->msg_name,
				      .msg_namelen = m->msg_namelen,
				      .msg_iov = seg };
		size_t i, got = 0;
		ssize_t r;

		for (i = 0; i < m->msg_iovlen && got < want &&
			    one.msg_iovlen < 64; i++) {
			const struct iovec *v = &m->msg_iov[i];

			if (skip >= v->iov_len) {
				skip -= v->iov_len;
				continue;
			}
			seg[one.msg_iovlen].iov_base = (char *)v->iov_base + skip;
			seg[one.msg_iovlen].iov_len = v->iov_len - skip;
			if (seg[one.msg_iovlen].iov_len > want - got)
				seg[one.msg_iovlen].iov_len = want - got;
			got += seg[one.msg_iovlen++].iov_len;
			skip = 0;
		}
		if (gate_datagram(u, got))
			return off ? (ssize_t)off : -1;
		r = real_sendmsg(fd, &one, flags);
		if (r < 0)
			return off ? (ssize_t)off : -1;
		off += got;
	}
	return (ssize_t)off;
}

/* ---- the calls ----------------------------------------------------------------- */

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct udp_sock u;

	if (gated(fd, &u)) {
		struct iovec v = { (void *)buf, len };
		struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

		if (u.gso && len > u.gso)
			return send_gso(fd, &m, flags, &u, u.gso);
		if (gate_datagram(&u, len))
			return -1;
	}
	return real_send(fd, buf, len, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *to, socklen_t tolen)
{
	struct udp_sock u;

	if (gated(fd, &u)) {
		struct iovec v = { (void *)buf, len };
		struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tolen,
				    .msg_iov = &v, .msg_iovlen = 1 };

		if (u.gso && len > u.gso)
			return send_gso(fd, &m, flags, &u, u.gso);
		if (gate_datagram(&u, len))
			return -1;
	}
	return real_sendto(fd, buf, len, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	struct udp_sock u;

	if (m && gated(fd, &u)) {
		size_t len = iov_len(m->msg_iov, m->msg_iovlen);
		unsigned int gso = msg_gso(m, &u);

		if (gso && len > gso)
			return send_gso(fd, m, flags, &u, gso);
		if (gate_datagram(&u, len))
			return -1;
	}
	return real_sendmsg(fd, m, flags);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct udp_sock u;

	if (gated(fd, &u)) {
		struct iovec v = { (void *)buf, len };
		struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };

		if (u.gso && len > u.gso)
			return send_gso(fd, &m, 0, &u, u.gso);
		if (gate_datagram(&u, len))
			return -1;
	}
	return real_write(fd, buf, len);
}

/*
 * A batch: the first message waits for its instant, those whose frames
 * fit right behind it at once (tdmgate_try()) join it in one call of the
 * real sendmmsg(); a GSO message goes alone (send_gso()).  Returns the
 * messages sent, as sendmmsg() does.  A message booked but not sent by a
 * short real sendmmsg() leaves its booking (the wire is kept busy longer,
 * never shorter).
 */
int sendmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags)
{
	struct udp_sock u;
	unsigned int i = 0;

	if (!vec || !gated(fd, &u))
		return real_sendmmsg(fd, vec, n, flags);
	while (i < n) {
		struct msghdr *m = &vec[i].msg_hdr;
		size_t len = iov_len(m->msg_iov, m->msg_iovlen);
		unsigned int gso = msg_gso(m, &u), k = 1;
		int r;

		if (gso && len > gso) {
			ssize_t s = send_gso(fd, m, flags, &u, gso);

			if (s < 0)
				return i ? (int)i : -1;
			vec[i++].msg_len = (unsigned int)s;
			continue;
		}
		pthread_mutex_lock(&gate_lock);
		if (gate_datagram_locked(&u, len)) {
			pthread_mutex_unlock(&gate_lock);
			return i ? (int)i : -1;
		}
		while (i + k < n && batch_fits(&vec[i + k].msg_hdr, &u))
			k++;
		pthread_mutex_unlock(&gate_lock);
		r = real_sendmmsg(fd, vec + i, k, flags);
		if (r < 0)
			return i ? (int)i : -1;
		i += (unsigned int)r;
		if ((unsigned int)r < k)
			break;
	}
	return (int)i;
}
