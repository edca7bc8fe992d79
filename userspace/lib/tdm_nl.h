/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Netlink answers shared by libtdm's two libmnl clients (rtnetlink in
 * tdm_qdisc.c, generic netlink in tdm_rx.c): the error code and the
 * kernel's extack text of an NLMSG_ERROR or NLMSG_DONE message.
 */
#ifndef TDM_NL_H
#define TDM_NL_H

#include <linux/netlink.h>

/*
 * NLMSG_ERROR: *error = the positive errno (0 for an ack), *msg = the
 * extack message or NULL.  Copes with and without NETLINK_CAP_ACK (our
 * request echoed before the TLVs).  0, or -1 if the message is too short.
 */
int tdm_nl_error(const struct nlmsghdr *nlh, int *error, const char **msg);

/* NLMSG_DONE of a dump: the same from its optional error code. */
void tdm_nl_done(const struct nlmsghdr *nlh, int *error, const char **msg);

#endif
