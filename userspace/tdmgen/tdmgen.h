/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdmgen's options and sender state, shared by tdmgen.c (the kernel's
 * UDP sockets), afxdp.c (--stack afxdp: AF_XDP frames past the qdisc),
 * dpdk.c (--stack dpdk: DPDK's ethdev, past it too) and bypass.c (what
 * the two share).
 */
#ifndef TDMGEN_H
#define TDMGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Busy-wait the last 50 us before a packet or a window: a timer wakes a
 * task tens of microseconds late, more on a loaded or virtual machine.
 */
#define SPIN_NS		50000

/* --stack: the way the datagrams leave. */
enum tdmgen_stack {
	STACK_KERNEL,		/* UDP sockets, through the qdisc */
	STACK_AFXDP,		/* AF_XDP frames, past it */
	STACK_DPDK,		/* DPDK ethdev frames, past it */
};

struct opts {
	const char *host, *port, *bind_addr, *ifname;
	size_t size;
	double pps;		/* 0 = unlimited */
	uint64_t duration_ns, count;
	uint32_t sender, plan_version;
	int prio;		/* -1 = leave */
	unsigned int batch, markers;
	int64_t start_ns;	/* 0 = now */
	uint64_t align_ns, end_wait_ns;
	bool json, quiet;
	bool pace_windows;	/* --pace windows */
	bool gate_lib;		/* --gate lib: libtdmgate decides */
	bool corner;		/* --corner: to every receiver of --plan */
	const char *plan_file, *name;
	uint64_t spin_ns;
	enum tdmgen_stack stack;
	bool ungated;		/* --ungated: past the qdisc without the gate */
	bool has_dst_mac;	/* --dst-mac */
	uint8_t dst_mac[6];
	unsigned int queue;	/* --queue: the AF_XDP socket's queue */
	const char *eal;	/* --eal: DPDK's EAL arguments, NULL: ours */
	const char *gate_sock;	/* --gate-sock: tdmd's plan store, not the
				 * qdisc on -I (a device without a netdev)
				 */
};

struct sender {
	int fd;
	uint8_t *bufs;
	struct mmsghdr *msgs;
	struct iovec *iov;
	uint64_t sent, bytes, retries;
	int64_t first_tx, last_tx;
	uint64_t windows;	/* --pace windows: windows that had packets */
	/* Past the qdisc: what became of launch time, and whether the NIC
	 * launches the frames at the gate's instants (else tdmgen waits).
	 */
	const char *launch_time;
	bool launching;
	/* --corner: the plan's receivers, 0 without; the socket is not
	 * connected and every packet names its receiver.
	 */
	unsigned int ndest;
	struct sockaddr_storage *dest;
	socklen_t *dest_len;
	uint64_t *dsent;	/* data packets sent to each receiver */
	unsigned int next;	/* --pace rate: the receiver of the next one */
};

/* Until @t on @clk: sleep until @spin before it, then busy-wait. */
void sleep_until(int clk, int64_t t, int64_t spin);

/* Wait for the start (--start, --align, or now); returns it, on TAI. */
int64_t begin(const struct opts *o);

/*
 * --rate pacing from @start: the packets due at @now, at most @max (and
 * what --count leaves); 0 when the next is not due yet, *next its time.
 */
unsigned int pace_due(const struct opts *o, const struct sender *s,
		      int64_t start, int64_t now, unsigned int max,
		      int64_t *next);

/* Count @n packets sent at @now. */
void sender_sent(const struct opts *o, struct sender *s, unsigned int n,
		 int64_t now);

struct tdmgate;
/*
 * libtdmgate's blocking wait for a frame of @len (until @deadline on the
 * gate's clock), *start its instant: 0; 1 to ask again (the deadline
 * passed, a signal); -1 when no window takes it (said, naming @where).
 */
int gate_frame(struct tdmgate *g, uint32_t len, int64_t deadline,
	       int64_t *start, const char *where);

/* "kernel", "afxdp", "dpdk". */
const char *stack_name(enum tdmgen_stack stack);

struct tdm_frame_addr;
struct tdm_pkt;
/*
 * Past the qdisc, the set-up common to the stacks: a frame's addresses in
 * *a, from the connected UDP socket s->fd (IPv4), o->ifname's MAC and the
 * next hop's (--dst-mac, else the neighbour table); its length (at most
 * @max bytes: one @unit a datagram); and libtdmgate following the tdmwin
 * qdisc on o->ifname (or tdmd's plan store at --gate-sock), with --spin,
 * in *g (NULL with --ungated).  The
 * device's ifindex, or -1 (said on stderr; *g NULL).
 */
int bypass_setup(const struct opts *o, const struct sender *s, size_t max,
		 const char *unit, struct tdm_frame_addr *a, struct tdmgate **g);

/* Frames a kick past the qdisc, at most (AF_XDP copy mode's batch). */
#define BYPASS_MAX_KICK	32

/* A stack past the qdisc, as the sending loop (bypass_send()) drives it. */
struct bypass_tx {
	uint32_t len;		/* a frame, without FCS */
	unsigned int max;	/* frames a kick, at most BYPASS_MAX_KICK */
	/*
	 * Build @n frames of @pkt, sequence numbers from pkt->seq on, for
	 * the next kick (before the gate is asked: after its answer only the
	 * stamps are written).  0, or -1 (said).
	 */
	int (*prepare)(struct bypass_tx *t, struct tdm_pkt *pkt,
		       unsigned int n, size_t payload);
	/*
	 * Send the first @k of the @n frames built and give up the rest,
	 * stamped with the TAI time just before (*now), each to be launched
	 * at @launch[i] on the gate's clock (@gnow there at *now) unless
	 * @launch is NULL.  0, or -1 (said).
	 */
	int (*kick)(struct bypass_tx *t, unsigned int k, unsigned int n,
		    const int64_t *launch, int64_t gnow, int64_t *now,
		    uint64_t *retries);
};

/*
 * The data (packets due at --rate, all at once without one) and the end
 * markers through @t, each kick when @g lets it go (NULL: ungated): with
 * s->launching the NIC launches the frames at the gate's instants, else
 * tdmgen waits for them.  0, -1 (a send failed) or 1 (no window takes
 * the frame); said on stderr.
 */
int bypass_send(const struct opts *o, struct sender *s, struct bypass_tx *t,
		struct tdmgate *g);

/*
 * --stack afxdp: the data and the end markers as AF_XDP frames on
 * o->ifname, gated by libtdmgate following the device's tdmwin qdisc
 * (unless o->ungated).  0, -1 (a send failed: said on stderr) or 1 (bad
 * input or set-up: said on stderr).
 */
int afxdp_run(const struct opts *o, struct sender *s);

/*
 * --stack dpdk: the same through DPDK's ethdev (port 0 of the EAL's
 * devices: by default a net_af_packet vdev on o->ifname, no hugepages),
 * gated by libtdmgate as afxdp_run(); the NIC's launch time (the mbuf's
 * TX timestamp) where the PMD offers it.  0, -1 or 1 as afxdp_run().
 * Without DPDK at build time: 1, said.
 */
int dpdk_run(const struct opts *o, struct sender *s);

#endif
