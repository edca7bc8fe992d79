// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat's plans: plan files (-p) and the plans of the local tdmd (-T),
 * kept in the order they came, the oldest dropped beyond
 * TDMSTAT_MAX_PLANS, and handed to the engine once it exists.  A plan
 * without a base time gets -b's.  --original gives the plan of the
 * original's parameters (lib's [auto] form: tdm_plan_auto).  With
 * --format original every plan must have the original's shape, one T, W
 * and D for the whole run (tdm_orig_shape).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdm_ctl.h"
#include "tdmstat.h"

#define TDMD_TIMEOUT_MS	5000

/* The original's file names can say this plan (and the ones before). */
static int check_original(struct tdmstat *t, const struct tdm_plan *p,
			  char *err, size_t errlen)
{
	struct tdm_orig_shape sh;
	char e[384];

	if (!t->fmt_original)
		return 0;
	if (tdm_orig_shape(p, &sh, e, sizeof(e)) ||
	    (t->orig_shape_set &&
	     tdm_orig_same_shape(&t->orig.shape, &sh, e, sizeof(e)))) {
		snprintf(err, errlen,
			 "--format original cannot name this plan: %s", e);
		return -1;
	}
	if (t->orig_params && t->orig_t != sh.clients) {
		snprintf(err, errlen, "--format original: the plan has %u senders, --original says T=%u",
			 sh.clients, t->orig_t);
		return -1;
	}
	t->orig.shape = sh;
	t->orig_shape_set = true;
	return 0;
}

/*
 * --receiver: a plan with receivers becomes what this receiver sees of it
 * (the same senders, only their windows to it); the whole plan is kept
 * for the receiver's row.  A plan without receivers needs no --receiver.
 */
static int project(struct tdmstat *t, struct tdm_plan *p, char *err,
		   size_t errlen)
{
	struct tdm_plan q;
	char e[384];
	int r;

	if (!p->nreceivers && !t->receiver)
		return 0;
	if (!p->nreceivers) {
		snprintf(err, errlen, "--receiver %s: the plan has no receivers",
			 t->receiver);
		return -1;
	}
	if (!t->receiver) {
		snprintf(err, errlen,
			 "the plan has %u receivers: say which this is with --receiver NAME",
			 p->nreceivers);
		return -1;
	}
	r = tdm_plan_receiver(p, t->receiver);
	if (r < 0) {
		snprintf(err, errlen, "--receiver %s: no such receiver in the plan",
			 t->receiver);
		return -1;
	}
	if (tdm_plan_for_dest(p, (unsigned int)r, &q, e, sizeof(e))) {
		snprintf(err, errlen, "--receiver %s: %s", t->receiver, e);
		return -1;
	}
	tdm_plan_free(&t->rx_plan);
	t->rx_plan = *p;
	t->rx_index = r;
	*p = q;
	return 0;
}

int tdmstat_add_plan(struct tdmstat *t, struct tdm_plan *p, char *err,
		     size_t errlen)
{
	if (project(t, p, err, errlen)) {
		tdm_plan_free(p);
		return -1;
	}
	if (!p->base_time)
		p->base_time = t->base_time;
	if (check_original(t, p, err, errlen)) {
		tdm_plan_free(p);
		return -1;
	}
	if (t->st && tdm_stats_add_plan(t->st, p, err, errlen)) {
		tdm_plan_free(p);
		return -1;
	}
	if (t->nplans == TDMSTAT_MAX_PLANS) {
		tdm_plan_free(&t->plans[0]);
		memmove(t->plans, t->plans + 1, sizeof(t->plans[0]) *
			(TDMSTAT_MAX_PLANS - 1));
		t->nplans--;
	}
	t->plans[t->nplans++] = *p;
	return 0;
}

static bool have_plan(const struct tdmstat *t, const struct tdm_plan *p)
{
	unsigned int i;

	for (i = 0; i < t->nplans; i++)
		if (tdm_plan_equal(&t->plans[i], p))
			return true;
	return false;
}

/* tdmd's plan show: the plan in force, then a pending one, if any. */
int tdmstat_poll_tdmd(struct tdmstat *t, char *err, size_t errlen)
{
	struct tdm_plan got[TDMSTAT_MAX_PLANS];
	char *answer, e[512];
	int i, n, rc = 0;

	if (!t->tdmd_socket)
		return 0;
	switch (tdm_ctl_request(t->tdmd_socket, "plan show\n", NULL,
				TDMD_TIMEOUT_MS, &answer, e, sizeof(e))) {
	case TDM_CTL_OK:
		break;
	case TDM_CTL_REFUSED:
		snprintf(err, errlen, "tdmd: %.200s", answer);
		free(answer);
		return -1;
	default:
		snprintf(err, errlen, "%s", e);
		return -1;
	}
	n = tdm_plan_parse_list(answer, "tdmd", got, TDMSTAT_MAX_PLANS, err,
				errlen);
	free(answer);
	for (i = 0; i < n; i++) {
		if (rc || have_plan(t, &got[i]))
			tdm_plan_free(&got[i]);
		else
			rc = tdmstat_add_plan(t, &got[i], err, errlen);
	}
	return n < 0 ? -1 : rc;
}

/* --original T,n,W,D,T0: T clients, one window each per cycle of
 * T * (W + D), from T0 on CLOCK_REALTIME, as udp_receive planned it.
 */
static int original_plan(struct tdmstat *t, char *err, size_t errlen)
{
	struct tdm_plan p;

	tdm_plan_init(&p);
	p.clockid = CLOCK_REALTIME;
	if (tdm_plan_auto(&p, t->orig_t, NULL, t->orig_w_us * 1000,
			  t->orig_d_us * 1000, 1, err, errlen)) {
		tdm_plan_free(&p);
		return -1;
	}
	p.base_time = t->orig_t0 * 1000000000LL;
	t->orig.windows_per_client = t->orig_n;
	return tdmstat_add_plan(t, &p, err, errlen);
}

int tdmstat_load_plans(struct tdmstat *t, char *err, size_t errlen)
{
	unsigned int i;

	if (t->orig_params && original_plan(t, err, errlen))
		return -1;
	for (i = 0; i < t->nplan_files; i++) {
		struct tdm_plan p;

		if (tdm_plan_load(t->plan_files[i], &p, err, errlen) ||
		    tdmstat_add_plan(t, &p, err, errlen))
			return -1;
	}
	if (tdmstat_poll_tdmd(t, err, errlen))
		return -1;
	if (!t->nplans) {
		snprintf(err, errlen, "no plan: give a plan file (-p), --tdmd or --original");
		return -1;
	}
	return 0;
}

void tdmstat_free_plans(struct tdmstat *t)
{
	while (t->nplans)
		tdm_plan_free(&t->plans[--t->nplans]);
	tdm_plan_free(&t->rx_plan);
}
