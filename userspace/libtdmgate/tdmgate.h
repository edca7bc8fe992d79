/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtdmgate: the tdmwin gate for senders the kernel's qdisc never sees
 * (AF_XDP, DPDK, preloaded socket stacks).  For a frame of a given length
 * it answers the earliest instant the frame may start on the wire, under
 * the same plan, with the same arithmetic (kmod/tdmwin_gate.h) and the
 * same rules as the tdmwin qdisc with its wire clock: the wire is booked
 * at the link speed, the guard ends every window early, a pending plan
 * takes over at its base time, and hold, an expired lease and an
 * unconfirmed plan close the gate.  See tdmgate(3) and
 * Documentation/libtdmgate.rst.
 *
 *   struct tdmgate *g;
 *   struct tdmgate_plan p;
 *   tdmgate_plan_from_qdisc(if_nametoindex("eth0"), &p);
 *   tdmgate_create(&p, &g);
 *   tdmgate_follow(g, if_nametoindex("eth0"));   // follow tc qdisc change
 *   // no netdev (vfio): tdmgate_plan_from_tdmd() and tdmgate_follow_tdmd()
 *   for (;;) {
 *           tdmgate_next(g, len, &launch);        // a NIC with launch times
 *           // or: tdmgate_wait(g, len, TDMGATE_NEVER, &start); then send
 *   }
 *   tdmgate_destroy(g);
 *
 * Times are signed 64-bit nanoseconds on the gate's clock: the plan's
 * clockid (CLOCK_TAI for the qdisc's default) unless tdmgate_set_clock()
 * chose another, such as a NIC's PHC.  Functions return 0 (or a count) on
 * success and a negative errno on failure; none sets errno.  A handle is
 * not thread-safe: one thread at a time (one handle per device: each
 * handle books the wire of its own frames only).
 *
 * ABI: soname libtdmgate.so.1.  struct tdmgate_plan is part of it; its
 * reserved words must be zero.
 */
#ifndef TDMGATE_H
#define TDMGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TDMGATE_MAX_WINDOWS	64
/* "Not before the plan or its state changes": hold, lease, unconfirmed. */
#define TDMGATE_NEVER		INT64_MAX

struct tdmgate_window {
	uint64_t offset;		/* ns from the start of the cycle */
	uint64_t length;		/* ns */
};

/* One plan: the schedule of this sender's windows. */
struct tdmgate_sched {
	uint32_t version;		/* the plan version (reported only) */
	uint32_t guard;			/* ns added to every frame's wire time */
	int64_t base;			/* ns: cycle 0 starts here (>= 0) */
	uint64_t cycle;			/* ns, 1 us to 10 s */
	unsigned int nwin;		/* 1 to TDMGATE_MAX_WINDOWS */
	struct tdmgate_window win[TDMGATE_MAX_WINDOWS]; /* any order */
};

/*
 * Everything the gate decides by: what the tdmwin qdisc's dump holds
 * (tdmgate_plan_from_qdisc() fills it from there).
 */
struct tdmgate_plan {
	struct tdmgate_sched active;	/* in force (or from its base on) */
	struct tdmgate_sched pending;	/* if has_pending: from its base on */
	bool has_pending;
	/*
	 * The latest plan awaits a confirm: the pending one, which then never
	 * takes over (the gate holds from its base), or with no pending plan
	 * the active one (the gate holds).
	 */
	bool unconfirmed;
	bool hold;			/* the gate is held closed */
	uint32_t link_speed;		/* Mbit/s, 1 to 1600000 */
	int clockid;		/* the plan's clock: CLOCK_TAI, ... */
	uint64_t lease_ns;		/* 0: no lease */
	/* Left on the lease at lease_at_boot (<= 0: it ran out). */
	int64_t lease_left_ns;
	/* CLOCK_BOOTTIME ns when lease_left_ns was true; 0: when the plan is set. */
	int64_t lease_at_boot;
	uint64_t reserved[8];		/* zero */
};

/* Why the gate is closed whatever the windows say (tdmgate_state()). */
enum tdmgate_state {
	TDMGATE_OPEN,			/* the windows decide */
	TDMGATE_HOLD,			/* the plan's hold */
	TDMGATE_LEASE_OUT,		/* the lease ran out */
	TDMGATE_UNCONFIRMED,		/* an unconfirmed plan's base came */
	TDMGATE_GONE,			/* the followed qdisc was deleted, or
					 * holds a plan this library refuses
					 */
};

struct tdmgate;

/* ---- the handle ------------------------------------------------------- */

/*
 * A gate for @plan, its wire idle, in *gp.  0, -EINVAL (a bad plan: the
 * checks the qdisc makes, a clock that cannot be read, reserved words not
 * zero, NULL), -ENOMEM.
 */
int tdmgate_create(const struct tdmgate_plan *plan, struct tdmgate **gp);

/* Free the handle and stop following (NULL is fine). */
void tdmgate_destroy(struct tdmgate *g);

/*
 * Replace the plan and its state, as `tc qdisc change` does: the frames
 * booked so far keep the wire busy.  0 or -EINVAL (the gate unchanged).
 */
int tdmgate_set_plan(struct tdmgate *g, const struct tdmgate_plan *plan);

/*
 * The plan in force now, after the switches its queries made (a pending
 * plan that took over is the active one), its lease left as of now.
 */
int tdmgate_get_plan(const struct tdmgate *g, struct tdmgate_plan *plan);

/*
 * Read and wait on @clockid instead of the plan's clock (kept until the
 * handle is destroyed), e.g. tdmgate_phc_clock() of the NIC whose launch
 * times are on its PHC.  It must run on the plan's timescale (ptp4l keeps
 * a PHC on TAI).  0, or -EINVAL if it cannot be read.
 */
int tdmgate_set_clock(struct tdmgate *g, int clockid);

/* The clock of a PHC open on @fd (/dev/ptpN): for tdmgate_set_clock(). */
int tdmgate_phc_clock(int fd);

/* The gate's clock now, ns (a negative errno if it cannot be read). */
int64_t tdmgate_now(const struct tdmgate *g);

/*
 * tdmgate_wait() sleeps until @ns before an opening, then busy-polls the
 * rest (default 0: it sleeps all the way, waking as late as the timer).
 */
void tdmgate_set_spin(struct tdmgate *g, uint64_t ns);

/* Whether the gate is closed whatever the windows say, at @now. */
enum tdmgate_state tdmgate_state(const struct tdmgate *g, int64_t now);

/* The wire time of a frame of @len bytes at the plan's link speed, ns. */
uint64_t tdmgate_wire_ns(const struct tdmgate *g, uint32_t len);

/* ---- queries ------------------------------------------------------------
 *
 * @len is the frame as the NIC gets it: from the MAC header, without the
 * FCS (padding, FCS, preamble and gap are added, as the qdisc does).  A
 * query that succeeds books the wire for the frame: send it as answered.
 * Errors common to all: -EINVAL (NULL, @len 0, @now < 0: clocks start
 * at 0), -EMSGSIZE (no window of
 * the plan in force, or of the pending plan after its base, is long enough
 * for the frame plus the guard: it never fits), -EAGAIN (nothing booked):
 * the gate is closed for it, *when or *launch is TDMGATE_NEVER
 * (tdmgate_state() says why) or, for tdmgate_try(), the instant to retry.
 * The functions without _at read the gate's clock and, when following,
 * the qdisc's news (at most every millisecond).
 */

/*
 * The launch time: the earliest instant at or after @now, behind the
 * frames booked, at which the frame fits a window of the plan in force
 * then, in *launch (the qdisc's txtime rule).  For a NIC that launches
 * frames at a given time (AF_XDP launch time, DPDK's TX timestamp).
 */
int tdmgate_next_at(struct tdmgate *g, int64_t now, uint32_t len,
		    int64_t *launch);
int tdmgate_next(struct tdmgate *g, uint32_t len, int64_t *launch);

/*
 * A burst: launch[i] for frame len[i], i < @n, booked one after the
 * other, exactly as @n calls of tdmgate_next_at().  The number booked:
 * @n, or the first i that failed if i > 0, else that frame's negative
 * errno (as sendmmsg(2)).
 */
int tdmgate_burst_at(struct tdmgate *g, int64_t now, const uint32_t *len,
		     int64_t *launch, unsigned int n);
int tdmgate_burst(struct tdmgate *g, const uint32_t *len, int64_t *launch,
		  unsigned int n);

/*
 * Non-blocking, for a NIC without launch times (the qdisc's dequeue):
 * may the frame be handed to the NIC at @now?  0 if so, booked, with *when
 * the instant it starts on the wire (now, or behind the frames booked);
 * else -EAGAIN and nothing booked, *when the instant to try again.
 */
int tdmgate_try_at(struct tdmgate *g, int64_t now, uint32_t len,
		   int64_t *when);
int tdmgate_try(struct tdmgate *g, uint32_t len, int64_t *when);

/*
 * Blocking: tdmgate_try() until it books the frame (0, *start as *when
 * there), sleeping on the gate's clock in between (clock_nanosleep; on a
 * PHC, which cannot be slept on, on CLOCK_MONOTONIC; at most 10 ms at a
 * time, and woken by the qdisc's news when following).  -ETIMEDOUT when
 * @deadline (on the gate's clock; TDMGATE_NEVER: none) passed first,
 * -EINTR when a signal interrupted a sleep.
 */
int tdmgate_wait(struct tdmgate *g, uint32_t len, int64_t deadline,
		 int64_t *start);

/* The same, busy-polling the clock instead of sleeping. */
int tdmgate_poll(struct tdmgate *g, uint32_t len, int64_t deadline,
		 int64_t *start);

/* ---- following the tdmwin qdisc -------------------------------------- */

/*
 * The plan and state of the tdmwin qdisc at the root of device @ifindex,
 * from its rtnetlink dump.  0, -ENOENT (no tdmwin qdisc there), -EPROTO
 * (a dump it cannot read), or the netlink error (-ENODEV, ...).
 */
int tdmgate_plan_from_qdisc(int ifindex, struct tdmgate_plan *plan);

/*
 * Apply rtnetlink messages (@len bytes at @buf: a datagram read from an
 * RTNLGRP_TC socket) to *plan: the last one about the root qdisc of
 * @ifindex counts.  1 if one was a tdmwin qdisc's (*plan replaced, its
 * lease as of when the plan is set: set lease_at_boot to when the socket
 * was last found empty if it was read late), 0 if none was about that
 * qdisc, -ENOENT if it was deleted or is another kind now (hold), -EPROTO
 * if it could not be read.
 */
int tdmgate_plan_from_msg(const void *buf, size_t len, int ifindex,
			  struct tdmgate_plan *plan);

/*
 * Follow the tdmwin qdisc at the root of @ifindex: subscribe to RTNLGRP_TC,
 * read its plan (tdmgate_set_plan()), and apply every change later read
 * by tdmgate_follow_read() (which the clock-reading queries call).  With
 * no tdmwin qdisc there (yet), 0 and the gate holds (TDMGATE_GONE) until
 * one is added.  Else 0, or the netlink error as tdmgate_plan_from_qdisc()
 * (-EPROTO also for a qdisc whose plan this library refuses).
 */
int tdmgate_follow(struct tdmgate *g, int ifindex);

/* The socket to poll for the qdisc's news, or -EBADF when not following. */
int tdmgate_follow_fd(const struct tdmgate *g);

/*
 * Apply the qdisc's news queued on the socket, without waiting: the
 * number of changes applied (0: none), or a negative errno (-EBADF when
 * not following).  Lost news (the socket's queue overflowed) is recovered
 * by reading the plan afresh.
 */
int tdmgate_follow_read(struct tdmgate *g);

/* ---- following tdmd's plan store (a device without a netdev) -------- */

/*
 * A device bound to vfio (DPDK) has no netdev and no qdisc: tdmd keeps
 * its plan ("gate tdmd" in tdm.conf) and publishes it on a unix socket,
 * @path (tdm.conf's gate_socket; /run/tdmd/gate-DEVICE.sock by default),
 * as the messages the qdisc's rtnetlink news would carry.  Everything
 * above holds for it as for the qdisc.
 */

/*
 * The plan and state in the store at @path.  0, -ENOENT (the store holds
 * no plan yet, or no socket at @path), -ECONNREFUSED (no tdmd serves it),
 * -EACCES, -ENAMETOOLONG, -ETIMEDOUT (tdmd sent nothing within 1 s),
 * -EPROTO (a message this library cannot read), -EINVAL.
 */
int tdmgate_plan_from_tdmd(const char *path, struct tdmgate_plan *plan);

/*
 * Follow the store at @path as tdmgate_follow() follows a qdisc: its
 * state now (tdmgate_set_plan()), then every change, read by
 * tdmgate_follow_read() (which the clock-reading queries call) from the
 * socket tdmgate_follow_fd() gives.  With no plan in the store yet, 0 and
 * the gate holds (TDMGATE_GONE) until one comes.  When tdmd goes away
 * (the socket closes), a plan with a lease runs until the lease ends and
 * one without a lease holds at once (TDMGATE_GONE), as with the qdisc
 * when tdmd dies or the qdisc is deleted; the socket is tried again
 * at the next read, then every 100 ms, and what tdmd holds then replaces
 * it (a follower too slow to read its news is dropped by tdmd, and so
 * gets the whole state again).  Errors as
 * tdmgate_plan_from_tdmd() (-EPROTO also for a plan this library
 * refuses), the gate unchanged.
 */
int tdmgate_follow_tdmd(struct tdmgate *g, const char *path);

/* The library's version ("0.1.0"), as every tdmwin tool's --version. */
const char *tdmgate_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TDMGATE_H */
