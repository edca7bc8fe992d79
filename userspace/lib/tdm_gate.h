/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's gate arithmetic (kmod/tdmwin_gate.h) for user space: the
 * shim it expects from its includer outside the kernel, then the file
 * itself, so that tools that act by the plan (tdmgen --pace windows) ask
 * exactly the question the qdisc asks.  test_gate tests it exhaustively.
 */
#ifndef TDM_GATE_H
#define TDM_GATE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;

#define TDMWIN_TIME_MAX	INT64_MAX

static inline u64 tdmwin_div_rem(u64 a, u64 b, u64 *rem)
{
	*rem = a % b;
	return a / b;
}

#include "../../kmod/uapi/linux/tdmwin.h"
#include "../../kmod/tdmwin_gate.h"

struct tdm_plan;
struct tdm_sender;

/*
 * The schedule of sender @snd of plan @p with cycle 0 at @base: its
 * windows copied into @win (which *sched then points at).
 */
void tdm_gate_sched(struct tdmwin_sched *sched,
		    struct tdmwin_window win[TDMWIN_MAX_WINDOWS],
		    const struct tdm_plan *p, const struct tdm_sender *snd,
		    int64_t base);

#endif
