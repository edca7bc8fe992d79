// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink answers for libtdm's libmnl clients: errors and extack text.
 */
#include <string.h>

#include <libmnl/libmnl.h>

#include "tdm_nl.h"

static int ack_tlv_cb(const struct nlattr *a, void *data)
{
	const char **msg = data;

	if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		*msg = mnl_attr_get_str(a);
	return MNL_CB_OK;
}

/* The extack message in the TLVs after off bytes of payload, if any. */
static const char *ack_message(const struct nlmsghdr *nlh, size_t off)
{
	const char *msg = NULL;
	size_t plen = mnl_nlmsg_get_payload_len(nlh);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= plen)
		return NULL;
	mnl_attr_parse_payload((const char *)mnl_nlmsg_get_payload(nlh) + off,
			       plen - off, ack_tlv_cb, &msg);
	return msg && *msg ? msg : NULL;
}

int tdm_nl_error(const struct nlmsghdr *nlh, int *error, const char **msg)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return -1;
	/* Without NETLINK_CAP_ACK (old kernels) our request is echoed. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
	    e->msg.nlmsg_len > sizeof(struct nlmsghdr))
		off += MNL_ALIGN(e->msg.nlmsg_len - sizeof(struct nlmsghdr));
	*error = -e->error;
	*msg = e->error ? ack_message(nlh, off) : NULL;
	return 0;
}

void tdm_nl_done(const struct nlmsghdr *nlh, int *error, const char **msg)
{
	int v = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(v))
		memcpy(&v, mnl_nlmsg_get_payload(nlh), sizeof(v));
	*error = v < 0 ? -v : 0;
	*msg = v < 0 ? ack_message(nlh, sizeof(v)) : NULL;
}
