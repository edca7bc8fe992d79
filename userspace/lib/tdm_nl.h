/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one netlink client of libtdm (libmnl), for rtnetlink (tdm_qdisc.c)
 * and generic netlink (tdm_rx.c) alike: a socket that asks one question at
 * a time and reads the answers until the ack, the error or the end of the
 * dump.
 *
 *   struct tdm_nl nl;
 *   tdm_nl_open(&nl, NETLINK_ROUTE, err, len);
 *   nlh = mnl_nlmsg_put_header(buf); ...
 *   tdm_nl_talk(&nl, nlh, false, cb, data, err, len);  // cb: each answer
 *   tdm_nl_close(&nl);
 */
#ifndef TDM_NL_H
#define TDM_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

struct tdm_nl {
	struct mnl_socket *sock;	/* NULL: not open */
	uint32_t portid;		/* ours, bound by the kernel */
	uint32_t seq;			/* of the last request */
	const char *bus;		/* "rtnetlink", ...: in error texts */
};

/*
 * Open and bind a socket of that netlink family (NETLINK_ROUTE,
 * NETLINK_GENERIC) asking for extended acks (the kernel's own words on a
 * refusal) and capped acks (no echo of our request).  0, or -1 with err
 * ("rtnetlink socket: ...") and errno.
 */
int tdm_nl_open(struct tdm_nl *nl, int family, char *err, size_t errlen);
void tdm_nl_close(struct tdm_nl *nl);

/*
 * Send nlh (sequence number and the request, ack or dump flags are filled
 * in here) and read answers until the request is finished: the ack or
 * error, or NLMSG_DONE of a dump.  cb (may be NULL) sees every data
 * message.  Answers to an earlier, abandoned request are skipped.  0, or
 * -1 with errno and err: "kernel: <extack>" when the kernel explained its
 * refusal, else strerror (ETIMEDOUT after 10 s without an answer, EPROTO
 * for a malformed answer or a failing cb).
 */
int tdm_nl_talk(struct tdm_nl *nl, struct nlmsghdr *nlh, bool dump,
		mnl_cb_t cb, void *data, char *err, size_t errlen);

/*
 * Notifications: join multicast group @group (RTNLGRP_TC, ...) so that
 * the kernel sends this socket its events, read with tdm_nl_events().
 * Such a socket is for events only: tdm_nl_talk() on it would skip them.
 * 0, or -1 with err and errno.
 */
int tdm_nl_subscribe(struct tdm_nl *nl, unsigned int group, char *err,
		     size_t errlen);

/*
 * Read every event queued on a subscribed socket, without waiting: cb
 * sees each data message in order.  The number of datagrams read (0: none
 * was queued), or -1 with errno and err: ENOBUFS when the kernel dropped
 * events because the socket's queue was full (the state they described
 * must be read afresh), EPROTO when cb failed, ENOSPC for a datagram
 * larger than the buffer.
 */
int tdm_nl_events(struct tdm_nl *nl, mnl_cb_t cb, void *data, char *err,
		  size_t errlen);

/* Generic netlink: a request header (family id @type, @cmd, @version)
 * at @buf, to which attributes are added.
 */
struct nlmsghdr *tdm_genl_put(char *buf, uint16_t type, uint8_t cmd,
			      uint8_t version);

/*
 * The id of generic netlink family @name, asked of the controller on
 * @nl (a NETLINK_GENERIC socket): 0 with *id, or -1 with errno and err
 * (ENOENT: the kernel has no such family, "no generic netlink family").
 */
int tdm_genl_family(struct tdm_nl *nl, const char *name, uint16_t *id,
		    char *err, size_t errlen);

#endif
