/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The classifiers of a tdmwin qdisc's destination classes: one flower
 * filter per receiver a sender sends to, programmed over rtnetlink with
 * libmnl (no tc binary), as tdmd's members install them.
 *
 * The mapping (Documentation/tdmd.rst, "Plans with receivers"): receiver
 * k of a plan (0-based, in the plan's order) is class minor
 * TDMWIN_CLASS_DEST_FIRST + k of every sender's tdmwin qdisc; a frame
 * whose IP destination is the receiver's address goes there:
 *
 *   tc filter add dev D parent H: protocol ip prio 1 handle 3 \
 *      flower skip_hw dst_ip 198.18.1.1/32 classid H:3
 *
 * tdmd owns the flower filters of priorities TDM_FILTER_PRIO_IP (IPv4)
 * and TDM_FILTER_PRIO_IP6 (IPv6) on the tdmwin qdisc, each with its
 * class minor as its handle; tdm_filter_sync() makes them exactly the
 * set it is given and leaves filters of other priorities alone.  Unmatched
 * frames go to the gated class 1 (the qdisc's default).
 */
#ifndef TDM_FILTER_H
#define TDM_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tdm_plan.h"
#include "tdm_qdisc.h"

#define TDM_FILTER_PRIO_IP	1	/* IPv4 destinations */
#define TDM_FILTER_PRIO_IP6	2	/* IPv6 destinations */
#define TDM_FILTER_MAX		TDMWIN_MAX_DESTS

/* A destination class and the address classified into it. */
struct tdm_filter {
	uint32_t minor;		/* TDMWIN_CLASS_DEST_FIRST + receiver */
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network order; the first 4 for AF_INET */
};

/* "198.18.1.1 -> class :3", for messages. */
const char *tdm_filter_str(const struct tdm_filter *f, char *buf,
			   size_t len);

/*
 * The filters sender @name needs for plan @p: one per receiver it has a
 * window to, by class minor.  A plan without receivers needs none.  0
 * with *n, or -1 with err (a receiver beyond the qdisc's TDMWIN_MAX_DESTS
 * classes, an address that does not parse).
 */
int tdm_filter_plan(const struct tdm_plan *p, const char *name,
		    struct tdm_filter *out, unsigned int *n,
		    char *err, size_t errlen);

/*
 * Add b's filters to a (a holds TDM_FILTER_MAX): the set two plans need
 * while both may gate (the one in force and one prepared).  -1 with err
 * when they give one class two addresses, or one address two classes: a
 * frame queued for one plan would leave in the other's windows to
 * another receiver.
 */
int tdm_filter_merge(struct tdm_filter *a, unsigned int *na,
		     const struct tdm_filter *b, unsigned int nb,
		     char *err, size_t errlen);

/* Is f in set[0..n) (same class, family and address)? */
bool tdm_filter_in(const struct tdm_filter *f, const struct tdm_filter *set,
		   unsigned int n);

/*
 * tdmd's filters on the tdmwin qdisc at t (out holds TDM_FILTER_MAX),
 * by class minor.  -1 with err: no tdmwin qdisc there, a filter of
 * tdmd's priorities that is not one of its own (another kind, a mask
 * other than the whole address, a class of another qdisc), the dump.
 */
int tdm_filter_get(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		   struct tdm_filter *out, unsigned int *n,
		   char *err, size_t errlen);

/*
 * Make tdmd's filters on the tdmwin qdisc at t exactly want[0..n):
 * delete those not in it, add the missing ones, then read them back
 * (tdm_filter_get) and compare.  0, or -1 with err (the kernel's extack
 * when it gave one): what was done before the failure stays done, and a
 * caller that wants all or nothing syncs back to the set it had.
 */
int tdm_filter_sync(struct tdm_rtnl *r, const struct tdm_qdisc_target *t,
		    const struct tdm_filter *want, unsigned int n,
		    char *err, size_t errlen);

#endif
