/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Window plans: who may transmit when.  A plan is a cycle of cycle_ns on a
 * clock, starting at base_time, in which each sender owns one or more
 * windows [offset, offset + length).  Every tool uses this one model.
 *
 * Plan file (linuxptp style; times take ns/us/ms/s units, bare = ns):
 *
 *   [global]
 *   clock            tai         # tai (default), realtime, monotonic, boottime
 *   cycle_time       10ms        # required unless [auto] gives it
 *   guard            2us         # extra guard per window (default 0)
 *   min_dead_time    10us        # smallest gap allowed between any two
 *                                # windows, wrapping round the cycle (default 0)
 *   lead_time        2s          # base time at least this far ahead (default 2s)
 *   base_align       1s          # base time a multiple of this (default 1s;
 *                                # 0 = any cycle boundary)
 *   link_speed       10000       # Mbit/s; 0 (default) = each member's device
 *   bypass_ptp       on          # default on
 *   bypass_prio      6 7         # skb priorities 0..15 that bypass (default none)
 *   version          12          # optional; the coordinator numbers plans
 *   base_time        1700000000000000000 tai
 *                                # optional: when cycle 0 starts, in ns on
 *                                # the plan's clock (named or not; 0 = not
 *                                # chosen); tdmd picks its own
 *
 *   [sender alpha]               # one section per sender: a name or an id
 *   window  0     3ms            # offset length
 *   window  5ms   3ms
 *
 * or the automatic form of the original tool's receiver flags (instead of
 * [sender] sections; cycle_time is then computed and must not be given):
 *
 *   [auto]
 *   senders           3           # a count (names "0", "1", ...) or names
 *   window            1ms         # W
 *   dead_time         100us       # D
 *   windows_per_sender 1          # n (default 1)
 *
 * Sender i (0-based, in the order given) owns window k (0 <= k < n) at
 * offset (k * T + i) * (W + D), length W; the cycle is n * T * (W + D).
 *
 * Many receivers (N senders to M receivers, a corner turn): a window then
 * carries its destination, and "no overlap" holds per receiver (at every
 * instant a receiver has at most one sender) and per sender (a sender
 * sends to at most one receiver at a time).  Receivers are declared before
 * the windows that name them:
 *
 *   [receiver x0]                # one section per receiver, in order
 *   address  198.18.1.1          # numeric IPv4 or IPv6, unique
 *
 *   [sender f0]
 *   window  0     900us  x0      # offset length receiver
 *   window  1ms   900us  x1
 *
 * or the barrel shifter (instead of [sender] sections; the cycle is
 * computed):
 *
 *   [barrel]
 *   senders    f0 f1 f2          # a count or names, as in [auto]
 *   slot       1ms               # S: one window and its dead time
 *   dead_time  100us             # D: the window is S - D
 *
 * With N senders, M receivers and L = max(N, M) slots per cycle, in slot k
 * (0 <= k < L) sender i sends to receiver r = (i + k) mod L, window
 * [k * S, k * S + S - D), and idles when r >= M; the cycle is L * S.  For
 * each k the map i -> r is injective (a rotation of 0..L-1), so a receiver
 * has one sender per slot at most; for each pair (i, r) exactly one k
 * gives r, so every pair gets one window of S - D per cycle.  A receiver
 * is busy N of L slots (all of them when N >= M), a sender M of L.
 */
#ifndef TDM_PLAN_H
#define TDM_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kmod/uapi/linux/tdmwin.h"

#define TDM_NAME_MAX		64	/* including the NUL */
#define TDM_MAX_SENDERS		1024
#define TDM_MAX_PLAN_WINDOWS	4096	/* over all senders */
#define TDM_MAX_PRIO		15	/* TC_PRIO_MAX: bypass_prio 0..15 */
#define TDM_DEFAULT_LEAD_NS	2000000000ULL
#define TDM_DEFAULT_ALIGN_NS	1000000000ULL
/* A barrel shifter gives each sender a window per receiver per cycle. */
#define TDM_MAX_RECEIVERS	TDMWIN_MAX_WINDOWS
#define TDM_ADDR_MAX		46	/* INET6_ADDRSTRLEN */

struct tdm_window {
	uint64_t offset;	/* ns from the start of the cycle */
	uint64_t length;	/* ns */
	uint32_t dest;		/* index in the plan's receivers (0 if none) */
};

struct tdm_receiver {
	char name[TDM_NAME_MAX];	/* as a sender's name */
	char addr[TDM_ADDR_MAX];	/* numeric IPv4 or IPv6 address */
	int line;		/* where it was defined (0 if not from a file) */
};

struct tdm_sender {
	char name[TDM_NAME_MAX];	/* [A-Za-z0-9_.-], 1..63 chars */
	unsigned int nwin;
	struct tdm_window win[TDMWIN_MAX_WINDOWS]; /* sorted by offset */
	int line;		/* where it was defined (0 if not from a file) */
};

struct tdm_plan {
	uint32_t version;	/* 0 = not numbered yet */
	int32_t clockid;	/* CLOCK_TAI by default */
	uint64_t cycle_ns;
	int64_t base_time;	/* ns on clockid; 0 = not chosen yet */
	uint32_t guard_ns;
	uint64_t min_dead_ns;
	uint64_t lead_ns;
	uint64_t align_ns;
	uint32_t link_speed;	/* Mbit/s, 0 = from the device */
	uint32_t bypass_prios;	/* bit n: skb->priority n bypasses */
	bool bypass_ptp;
	unsigned int nsenders;
	struct tdm_sender *senders;	/* malloc'd array of nsenders */
	/* 0: one destination, the classic plan; else windows name one. */
	unsigned int nreceivers;
	struct tdm_receiver *receivers;	/* malloc'd array of nreceivers */
};

/* A plan with the defaults above and no senders. */
void tdm_plan_init(struct tdm_plan *p);
void tdm_plan_free(struct tdm_plan *p);
/* Deep copy; dst is overwritten (not freed first).  0 or -1 (ENOMEM). */
int tdm_plan_copy(struct tdm_plan *dst, const struct tdm_plan *src);

/*
 * Parse a plan file's text.  file names it in messages.  The result is
 * validated (tdm_plan_validate).  On error returns -1, leaves p freed and
 * err holds "file:line: problem", naming the line of the offending value or
 * section, e.g.
 *   "plan.conf:12: window 2ms+3ms of 'b' overlaps window 0+3ms of 'a' (line 7)"
 *   "plan.conf:9: window 8ms+3ms of 'a' ends at 11ms, after the cycle (10ms)"
 *   "plan.conf:14: duplicate sender 'a' (first at line 6)"
 *   "plan.conf:3: unknown key 'cylce_time' in [global]"
 */
int tdm_plan_parse(const char *text, const char *file, struct tdm_plan *p,
		   char *err, size_t errlen);
int tdm_plan_load(const char *path, struct tdm_plan *p,
		  char *err, size_t errlen);

/*
 * Several plans in one text, as tdmd's "plan show" answers (the active
 * plan, then a pending one), each as tdm_plan_format writes it: a [global]
 * header that follows a [sender] or [auto] section starts the next plan.
 * Parses them into plans[0..max) and returns how many there were (0 for a
 * text without keys or sections), or -1 with err as tdm_plan_parse gives
 * it (lines of the whole text), nothing left allocated.
 */
#define TDM_PLAN_LIST_MAX	16
int tdm_plan_parse_list(const char *text, const char *file,
			struct tdm_plan *plans, unsigned int max,
			char *err, size_t errlen);

/*
 * The [auto] form as a function (used by the parser and the tools).  p must
 * be initialised: its settings (clock, guard, ...) are kept, its senders and
 * cycle replaced.  names: nsenders names, or NULL (or a NULL entry) for
 * "0", "1", ...  The result is validated; on error free p as usual.
 */
int tdm_plan_auto(struct tdm_plan *p, unsigned int nsenders,
		  const char *const *names, uint64_t window_ns,
		  uint64_t dead_ns, unsigned int per_sender,
		  char *err, size_t errlen);

/*
 * Check a plan: cycle within the kernel's limits; 1..TDM_MAX_SENDERS
 * senders with valid, unique names; 0..TDM_MAX_RECEIVERS receivers with
 * valid, unique names and addresses; 1..TDMWIN_MAX_WINDOWS windows each,
 * of non-zero length, inside the cycle, to an existing destination; no
 * two windows to one destination overlapping, nor two of one sender;
 * every gap between consecutive windows to one destination (round the
 * cycle) at least min_dead_ns; guard shorter than every window.  Sorts each
 * sender's windows by offset.  Messages name the sender and, when known,
 * the line as above (prefix "line N: " when file is unknown).
 */
int tdm_plan_validate(struct tdm_plan *p, char *err, size_t errlen);

/*
 * The barrel shifter as a function (the [barrel] section): p must be
 * initialised with its receivers (1..TDM_MAX_RECEIVERS); its senders and
 * cycle are replaced as above.  names as for tdm_plan_auto.  The result
 * is validated; on error free p as usual.
 */
int tdm_plan_barrel(struct tdm_plan *p, unsigned int nsenders,
		    const char *const *names, uint64_t slot_ns,
		    uint64_t dead_ns, char *err, size_t errlen);

/* Destinations: the receivers, or the one implicit receiver (1). */
static inline unsigned int tdm_plan_ndest(const struct tdm_plan *p)
{
	return p->nreceivers ? p->nreceivers : 1;
}

/* Time per cycle sender s sends to destination r (ns). */
uint64_t tdm_plan_pair_ns(const struct tdm_plan *p, unsigned int s,
			  unsigned int r);

/* Time per cycle destination r receives, from all senders (ns). */
uint64_t tdm_plan_dest_ns(const struct tdm_plan *p, unsigned int r);

/*
 * Every pair gets its share: each sender has a window to each
 * destination.  0, or -1 with err naming the first pair without one.
 */
int tdm_plan_check_pairs(const struct tdm_plan *p, char *err, size_t errlen);

/*
 * What receiver r sees of plan p, as a one-destination plan: the same
 * settings and senders (in the same order, so ids stay), each with only
 * its windows to r.  out is overwritten.  -1 with err if r is not a
 * destination of p or a sender sends nothing to r (out left empty).
 */
int tdm_plan_for_dest(const struct tdm_plan *p, unsigned int r,
		      struct tdm_plan *out, char *err, size_t errlen);

/* The receiver called name (its index), or -1. */
int tdm_plan_receiver(const struct tdm_plan *p, const char *name);

/* The sender called name, or NULL. */
const struct tdm_sender *tdm_plan_sender(const struct tdm_plan *p,
					 const char *name);

/*
 * Base-time policy: the smallest t >= now + lead_ns with
 * (t % align_ns) == 0 (align_ns 0: t = now + lead_ns rounded up to a
 * multiple of cycle_ns).  Times are on the plan's clock.  Negative now is
 * fine (floor rounding); if the answer does not fit in int64 (now + lead
 * near INT64_MAX) it returns INT64_MAX, a time that never comes.
 */
int64_t tdm_plan_pick_base(const struct tdm_plan *p, int64_t now);

/*
 * SHA-256 over the plan's content: clock, cycle, guard, link speed,
 * bypass settings and every sender's windows, but not version, base time,
 * lead, alignment or min_dead_time.  Senders count in the plan's order,
 * windows in offset order.  Two plans with the same digest gate identically
 * apart from their phase.
 */
void tdm_plan_digest(const struct tdm_plan *p, uint8_t out[32]);

/*
 * Write the plan in the file format above (round-trips through parse; an
 * [auto] plan comes out as [sender] sections).  Returns the text's length
 * without the NUL, or -1 (errno ENOSPC) if it does not fit in len.
 */
int tdm_plan_format(const struct tdm_plan *p, char *buf, size_t len);

/* Additions. */

/* The same text in a malloc'd string (free() it), or NULL (ENOMEM). */
char *tdm_plan_format_alloc(const struct tdm_plan *p);

/*
 * Same plan: every field, senders in the same order with the same windows
 * in the same order.  Ignores where senders were defined (line).
 */
bool tdm_plan_equal(const struct tdm_plan *a, const struct tdm_plan *b);

/*
 * The plan as a JSON object (member key, or NULL in an array), the one
 * schema every tool writes: version, clock, cycle_ns, base_time (ns on the
 * plan's clock, 0 = not chosen), guard_ns, min_dead_ns, link_speed
 * (Mbit/s), bypass_prios (bit n: priority n), bypass_ptp, and senders: an
 * array of sender (its index), name and windows, an array of offset_ns
 * and length_ns.
 */
struct tdm_json;
void tdm_plan_json(struct tdm_json *j, const char *key,
		   const struct tdm_plan *p);

#endif
