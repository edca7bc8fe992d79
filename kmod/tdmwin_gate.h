/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tdmwin gate arithmetic: where a point in time falls in the plan's cycle,
 * whether a frame of a given duration may start, and when the gate opens
 * next.  Pure functions on integers, no locking and no allocation, shared by
 * sch_tdmwin.c and the user-space unit test (userspace/tests/test_gate.c),
 * which compiles this file with the shim below.
 *
 * Times are signed 64-bit nanoseconds on the qdisc's clock, as ktime_t.
 * Every sum that could pass S64_MAX saturates to TDMWIN_TIME_MAX instead
 * of wrapping, so a plan near the end of time never yields a time in the
 * past (which would make the caller spin).
 */
#ifndef _TDMWIN_GATE_H
#define _TDMWIN_GATE_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include "uapi/linux/tdmwin.h"
#define TDMWIN_TIME_MAX	S64_MAX
static inline u64 tdmwin_div_rem(u64 a, u64 b, u64 *rem)
{
	return div64_u64_rem(a, b, rem);
}
#endif
/* Outside the kernel, the includer supplies u64, s64, u32, bool,
 * TDMWIN_TIME_MAX, tdmwin_div_rem(), the errno values and the uapi header
 * (userspace/lib/tdm_gate.h).
 */

struct tdmwin_window {
	u64	offset;		/* from the start of the cycle */
	u64	length;
};

/* The part of a plan the arithmetic needs.  Windows are sorted by offset,
 * do not overlap and lie inside [0, cycle); 1 <= nwin; base >= 0.
 */
struct tdmwin_sched {
	s64	base;
	u64	cycle;
	u64	max_len;	/* longest window */
	u32	nwin;
	const struct tdmwin_window *win;
};

enum tdmwin_verdict {
	TDMWIN_SEND,		/* the frame may start now */
	TDMWIN_WAIT,		/* wait until .next */
	TDMWIN_NEVER,		/* longer than every window: drop it */
};

struct tdmwin_gate_result {
	enum tdmwin_verdict verdict;
	/* TDMWIN_SEND: start of the window the frame leaves in.
	 * TDMWIN_WAIT: earliest time the frame may start.
	 */
	s64	when;
	/* TDMWIN_SEND: end of that window (exclusive). */
	s64	end;
	/* TDMWIN_WAIT: true if now lies inside a window that the frame
	 * does not fit into (a guard deferral), false if the gate is closed.
	 */
	bool	in_window;
	/* TDMWIN_WAIT from tdmwin_gate_wire(): the frame could have started
	 * at now, but not behind the frames the wire is still sending.
	 */
	bool	wire;
	/* The window slot (index in the plan) the verdict concerns, or -1:
	 * TDMWIN_SEND, the window the frame leaves in; a wire deferral
	 * (.wire), the window it could have started in at now; else, with
	 * .in_window, the window it did not fit into.
	 */
	int	slot;
};

static inline s64 tdmwin_add_sat(s64 t, u64 d)
{
	if (d > (u64)(TDMWIN_TIME_MAX - t))
		return TDMWIN_TIME_MAX;
	return t + (s64)d;
}

/* Index of the last window whose offset is <= pos (binary search), or -1. */
static inline int tdmwin_window_at(const struct tdmwin_sched *s, u64 pos)
{
	int lo = 0, hi = (int)s->nwin - 1, found = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (s->win[mid].offset <= pos) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

/*
 * First window at or after index @from in the cycle starting at @cstart
 * (wrapping into the next cycle) whose length is at least @need, with
 * 0 <= @from <= nwin.  The caller guarantees need <= s->max_len, so one lap
 * over the windows always finds one.
 */
static inline s64 tdmwin_next_fit(const struct tdmwin_sched *s, s64 cstart,
				  u32 from, u64 need)
{
	u32 i;

	for (i = 0; i < s->nwin; i++) {
		u32 idx = from + i;
		s64 start = cstart;

		if (idx >= s->nwin) {
			idx -= s->nwin;
			start = tdmwin_add_sat(cstart, s->cycle);
		}
		if (s->win[idx].length >= need)
			return tdmwin_add_sat(start, s->win[idx].offset);
	}
	return TDMWIN_TIME_MAX;	/* unreachable when need <= max_len */
}

/*
 * May a frame that occupies the wire for @need ns (wire time plus guard)
 * start at @now?  The frame must end no later than the window's close.
 */
static inline struct tdmwin_gate_result
tdmwin_gate(const struct tdmwin_sched *s, s64 now, u64 need)
{
	struct tdmwin_gate_result r = { .verdict = TDMWIN_WAIT, .slot = -1 };
	s64 cstart;
	u64 pos;
	int i;

	if (need > s->max_len) {
		r.verdict = TDMWIN_NEVER;
		return r;
	}
	if (now < s->base) {
		r.when = tdmwin_next_fit(s, s->base, 0, need);
		return r;
	}
	tdmwin_div_rem((u64)now - (u64)s->base, s->cycle, &pos);
	/* base + k * cycle <= now for some k, so this cannot overflow. */
	cstart = now - (s64)pos;

	i = tdmwin_window_at(s, pos);
	if (i >= 0 && pos - s->win[i].offset < s->win[i].length) {
		u64 end = s->win[i].offset + s->win[i].length;

		r.slot = i;
		if (need <= end - pos) {
			r.verdict = TDMWIN_SEND;
			r.when = cstart + (s64)s->win[i].offset;
			r.end = tdmwin_add_sat(r.when, s->win[i].length);
			return r;
		}
		r.in_window = true;
	}
	r.when = tdmwin_next_fit(s, cstart, (u32)(i + 1), need);
	return r;
}

/*
 * The wire clock.  The link is a server at the link speed: frames released
 * earlier keep it busy for @backlog ns from @now, so the next frame starts
 * on the wire at now + backlog, not at now.  It may be released only if it
 * fits its window from that start, and ends no later than @stop (the base
 * time of a pending plan, or TDMWIN_TIME_MAX; @stop > @now).  A wait sleeps
 * until the next opening after the wire has drained (.when), or until @stop
 * if the frame fits its window but not before the new plan takes over.
 */
static inline struct tdmwin_gate_result
tdmwin_gate_wire(const struct tdmwin_sched *s, s64 now, u64 backlog, u64 need,
		 s64 stop)
{
	s64 start = tdmwin_add_sat(now, backlog);
	struct tdmwin_gate_result r = tdmwin_gate(s, start, need);
	struct tdmwin_gate_result r0;

	if (r.verdict == TDMWIN_SEND &&
	    (start > stop || need > (u64)(stop - start))) {
		r.verdict = TDMWIN_WAIT;
		r.in_window = true;
		r.when = stop;
	}
	if (r.verdict != TDMWIN_WAIT || !backlog)
		return r;
	r0 = tdmwin_gate(s, now, need);
	r.wire = r0.verdict == TDMWIN_SEND && need <= (u64)(stop - now);
	if (r.wire)
		r.slot = r0.slot;
	return r;
}

/*
 * The open latency of a window that starts at @start, whose first frame is
 * released at @now behind @backlog ns of the wire: from the window's start
 * to the frame's start on the wire.  A frame released before its window
 * (the wire was booked past the start) starts on the wire inside it, so
 * the latency is never negative; 0 if it were (a clock step).
 */
static inline u64 tdmwin_open_latency(s64 now, u64 backlog, s64 start)
{
	s64 t = tdmwin_add_sat(now, backlog);

	return t > start ? (u64)t - (u64)start : 0;
}

/*
 * The margin of a frame of @wire ns released at @now behind @backlog ns of
 * the wire, in a window that ends at @end: from the frame's end on the
 * wire to @end, 0 if it ends later (it cannot, once the gate let it go).
 */
static inline u64 tdmwin_margin(s64 now, u64 backlog, u64 wire, s64 end)
{
	s64 t = tdmwin_add_sat(tdmwin_add_sat(now, backlog), wire);

	return end > t ? (u64)end - (u64)t : 0;
}

/*
 * Launch time (txtime): the earliest instant at or after now + @backlog at
 * which a frame occupying the wire for @need ns fits a window, under the
 * plan in force then: @s before @next's base, @next (NULL if none) from
 * it, where the frame needs @need_next.  A frame may not straddle the
 * switch.  TDMWIN_TIME_MAX if no window of the plan in force can take it.
 */
static inline s64 tdmwin_launch(const struct tdmwin_sched *s,
				const struct tdmwin_sched *next, s64 now,
				u64 backlog, u64 need, u64 need_next)
{
	s64 t = tdmwin_add_sat(now, backlog);
	s64 stop = next ? next->base : TDMWIN_TIME_MAX;
	struct tdmwin_gate_result r;
	int i;

	/* Under @s: at t, else at the next window that is long enough,
	 * unless the frame meets @next's base on the way.
	 */
	for (i = 0; i < 2 && t < stop; i++) {
		r = tdmwin_gate_wire(s, t, 0, need, stop);
		if (r.verdict == TDMWIN_SEND)
			return t;
		if (r.verdict == TDMWIN_NEVER)
			break;
		t = r.when < stop ? r.when : stop;
	}
	if (!next)
		return TDMWIN_TIME_MAX;
	if (t < stop)
		t = stop;
	r = tdmwin_gate(next, t, need_next);
	if (r.verdict == TDMWIN_SEND)
		return t;
	return r.verdict == TDMWIN_WAIT ? r.when : TDMWIN_TIME_MAX;
}

/*
 * The qdisc's launch-time rule (txtime on), of which tdmwin_launch() is the
 * arithmetic: the launch time of a frame of @wire ns of wire time behind
 * @backlog, under @s (whose guard is @guard) and, from its base, the
 * pending plan @next (guard @next_guard; NULL if none).  An @unconfirmed
 * latest plan never takes over: the pending one when there is one, and a
 * frame must then end before its base; else @s itself, and nothing may
 * leave.  Returns 0 with *launch, -EAGAIN if the gate holds for the frame
 * (it could leave only after an unconfirmed plan's base), -ENOSPC if no
 * window of the plan in force can take it.
 */
static inline int tdmwin_launch_rule(const struct tdmwin_sched *s, u32 guard,
				     const struct tdmwin_sched *next,
				     u32 next_guard, bool unconfirmed, s64 now,
				     u64 backlog, u64 wire, s64 *launch)
{
	if (unconfirmed && !next)
		return -EAGAIN;
	if (unconfirmed) {
		/* Only the plan in force, and only before the base. */
		*launch = tdmwin_launch(s, NULL, now, backlog, wire + guard, 0);
		if (*launch != TDMWIN_TIME_MAX &&
		    tdmwin_add_sat(*launch, wire + guard) > next->base)
			return -EAGAIN;
	} else {
		*launch = tdmwin_launch(s, next, now, backlog, wire + guard,
					next ? wire + next_guard : 0);
	}
	return *launch == TDMWIN_TIME_MAX ? -ENOSPC : 0;
}

/* Wire time of @bytes of frame data at @ps_per_byte, rounded up. */
static inline u64 tdmwin_wire_ns(u64 bytes, u64 ps_per_byte)
{
	u64 rem;

	return tdmwin_div_rem(bytes * ps_per_byte + 999, 1000, &rem);
}

/* Wire time of one byte at @mbit Mbit/s (1 or more), ps, rounded up. */
static inline u32 tdmwin_ps_per_byte(u32 mbit)
{
	return (8 * 1000 * 1000 + mbit - 1) / mbit;
}

/*
 * Bytes on the wire of @len bytes of frame data (from the MAC header, no
 * FCS) sent as @segs segments (0 counts as 1): each padded to
 * TDMWIN_MIN_FRAME, and each followed by @over bytes of FCS, preamble and
 * gap (TDMWIN_WIRE_OVERHEAD, plus a VLAN tag the NIC inserts).
 */
static inline u64 tdmwin_frame_bytes(u64 len, u32 segs, u32 over)
{
	if (!segs)
		segs = 1;
	if (len < (u64)segs * TDMWIN_MIN_FRAME)
		len = (u64)segs * TDMWIN_MIN_FRAME;
	return len + (u64)segs * over;
}

/* The shortest window a plan may have: one minimum frame plus @guard. */
static inline u64 tdmwin_min_window(u32 ps_per_byte, u32 guard)
{
	return tdmwin_wire_ns(tdmwin_frame_bytes(0, 1, TDMWIN_WIRE_OVERHEAD),
			      ps_per_byte) + guard;
}

/* The longest of @nwin windows (0 if none). */
static inline u64 tdmwin_max_len(const struct tdmwin_window *win, u32 nwin)
{
	u64 m = 0;

	while (nwin--)
		if (win[nwin].length > m)
			m = win[nwin].length;
	return m;
}

/* What is wrong with a schedule, if anything (tdmwin_check_sched()). */
enum tdmwin_sched_check {
	TDMWIN_SCHED_OK,
	TDMWIN_SCHED_CYCLE_SHORT,	/* cycle below TDMWIN_MIN_CYCLE_NS */
	TDMWIN_SCHED_CYCLE_LONG,	/* cycle above TDMWIN_MAX_CYCLE_NS */
	TDMWIN_SCHED_BASE,		/* negative base time */
	TDMWIN_SCHED_OUTSIDE,		/* a window outside [0, cycle) */
	TDMWIN_SCHED_SHORT,		/* a window shorter than @min_len */
	TDMWIN_SCHED_OVERLAP,		/* windows overlap (sorted by offset) */
};

/*
 * Check a schedule whose windows are sorted by offset, each of which must
 * be at least @min_len long (tdmwin_min_window()).  The first problem
 * found, in the order of the enum.
 */
static inline enum tdmwin_sched_check
tdmwin_check_sched(const struct tdmwin_sched *s, u64 min_len)
{
	u32 i;

	if (s->cycle < TDMWIN_MIN_CYCLE_NS)
		return TDMWIN_SCHED_CYCLE_SHORT;
	if (s->cycle > TDMWIN_MAX_CYCLE_NS)
		return TDMWIN_SCHED_CYCLE_LONG;
	if (s->base < 0)
		return TDMWIN_SCHED_BASE;
	for (i = 0; i < s->nwin; i++) {
		const struct tdmwin_window *w = &s->win[i];

		if (w->offset >= s->cycle || w->length > s->cycle - w->offset)
			return TDMWIN_SCHED_OUTSIDE;
		if (w->length < min_len)
			return TDMWIN_SCHED_SHORT;
		if (i && w->offset < s->win[i - 1].offset + s->win[i - 1].length)
			return TDMWIN_SCHED_OVERLAP;
	}
	return TDMWIN_SCHED_OK;
}

#endif /* _TDMWIN_GATE_H */
