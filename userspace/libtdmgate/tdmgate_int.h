/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtdmgate's insides, shared by tdmgate.c (the gate) and
 * tdmgate_follow.c (following the qdisc); not installed.
 */
#ifndef TDMGATE_INT_H
#define TDMGATE_INT_H

#include "tdm_gate.h"
#include "tdm_nl.h"
#include "tdmgate.h"

/* A plan as the arithmetic takes it: s.win points at win[]. */
struct gate_plan {
	struct tdmwin_sched s;
	u32 guard;
	u32 version;
	struct tdmwin_window win[TDMWIN_MAX_WINDOWS];
};

/* Following the qdisc on a device (tdmgate_follow()), or tdmd's plan
 * store (tdmgate_follow_tdmd(): the same messages on a unix socket).
 */
struct gate_follow {
	struct tdm_nl ev;		/* subscribed to RTNLGRP_TC */
	int ifindex;			/* 0: the store's (no netdev) */
	bool tdmd;			/* the store's socket, not rtnetlink */
	int sock;			/* the store's; -1 while not connected */
	char path[108];			/* where the store is */
	s64 retry_boot;			/* CLOCK_BOOTTIME of the next connect */
	/* CLOCK_BOOTTIME before the last read that found the socket empty:
	 * what is read next was sent after it (the lease's reference).
	 */
	s64 quiet_boot;
	s64 last_read;			/* gate clock of the last read */
};

struct tdmgate {
	struct gate_plan cur;		/* in force */
	struct gate_plan next;		/* pending, if has_next */
	bool has_next;
	bool unconfirmed;
	bool hold;
	bool gone;			/* the followed qdisc was deleted */
	u32 link_speed;			/* Mbit/s */
	u32 ps_per_byte;
	clockid_t plan_clock;		/* the plan's clockid */
	clockid_t clock;		/* read and waited on */
	bool clock_set;			/* by tdmgate_set_clock() */
	u64 lease_ns;			/* 0: none */
	s64 lease_end_boot;		/* CLOCK_BOOTTIME it runs out at */
	s64 free;			/* the wire is busy until then */
	u64 spin_ns;
	struct gate_follow *follow;	/* NULL: not following */
};

/* CLOCK_BOOTTIME now, ns. */
s64 gate_boot_ns(void);

/*
 * Set the plan with its lease measured from @lease_ref (CLOCK_BOOTTIME,
 * used when plan->lease_at_boot is 0).  0 or -EINVAL.
 */
int gate_set_plan(struct tdmgate *g, const struct tdmgate_plan *plan,
		  s64 lease_ref);

/* Read the followed qdisc's news if @now is a millisecond past the last. */
void gate_follow_tick(struct tdmgate *g, s64 now);

void gate_follow_stop(struct tdmgate *g);

#endif
