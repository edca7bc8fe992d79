// SPDX-License-Identifier: GPL-2.0
/* The gate arithmetic's schedule for one sender of a plan (tdm_gate.h). */
#include <string.h>

#include "tdm_gate.h"
#include "tdm_plan.h"

void tdm_gate_sched(struct tdmwin_sched *sched,
		    struct tdmwin_window win[TDMWIN_MAX_WINDOWS],
		    const struct tdm_plan *p, const struct tdm_sender *snd,
		    int64_t base)
{
	unsigned int i;

	memset(sched, 0, sizeof(*sched));
	for (i = 0; i < snd->nwin && i < TDMWIN_MAX_WINDOWS; i++) {
		win[i].offset = snd->win[i].offset;
		win[i].length = snd->win[i].length;
		if (win[i].length > sched->max_len)
			sched->max_len = win[i].length;
	}
	sched->base = base;
	sched->cycle = p->cycle_ns;
	sched->nwin = i;
	sched->win = win;
}
