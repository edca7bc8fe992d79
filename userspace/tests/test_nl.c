// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libtdm's netlink client (tdm_nl_open, tdm_nl_talk) against
 * the host kernel, with requests any user may make: a dump and a get of
 * links over rtnetlink, and the generic netlink controller's family
 * lookup (the one tdm_rx.c makes for tdmrx).
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>

#include "tdm_nl.h"

static struct nlmsghdr *put_getlink(char *buf, int ifindex)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_GETLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	return nlh;
}

struct links {
	unsigned int n;
	bool lo;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct links *l = data;
	struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_ERROR;
	l->n++;
	mnl_attr_for_each(a, nlh, sizeof(struct ifinfomsg))
		if (mnl_attr_get_type(a) == IFLA_IFNAME &&
		    !strcmp(mnl_attr_get_str(a), "lo"))
			l->lo = true;
	return MNL_CB_OK;
}

static int failing_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(unsigned int *)data)++;
	return MNL_CB_ERROR;
}

static void test_rtnl_dump(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], err[256] = "";
	struct links l = { 0 };
	struct tdm_nl nl;

	(void)state;
	assert_int_equal(tdm_nl_open(&nl, NETLINK_ROUTE, err, sizeof(err)), 0);
	assert_non_null(nl.sock);
	assert_int_not_equal(nl.portid, 0);
	assert_int_equal(tdm_nl_talk(&nl, put_getlink(buf, 0), true, link_cb,
				     &l, err, sizeof(err)), 0);
	assert_true(l.n >= 1);
	assert_true(l.lo);
	/* A second request on the same socket: a fresh sequence number. */
	l = (struct links){ 0 };
	assert_int_equal(tdm_nl_talk(&nl, put_getlink(buf, 0), true, link_cb,
				     &l, err, sizeof(err)), 0);
	assert_true(l.lo);
	tdm_nl_close(&nl);
	assert_null(nl.sock);
	tdm_nl_close(&nl);	/* twice is fine */
}

static void test_rtnl_get_and_error(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], err[256] = "";
	struct links l = { 0 };
	unsigned int calls = 0;
	struct tdm_nl nl;

	(void)state;
	assert_int_equal(tdm_nl_open(&nl, NETLINK_ROUTE, err, sizeof(err)), 0);
	/* The answer, then the ack. */
	assert_int_equal(tdm_nl_talk(&nl, put_getlink(buf, (int)if_nametoindex("lo")),
				     false, link_cb, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 1);
	assert_true(l.lo);
	/* An error from the kernel: errno and its text. */
	err[0] = '\0';
	assert_int_equal(tdm_nl_talk(&nl, put_getlink(buf, 0x7ffffff0), false,
				     link_cb, &l, err, sizeof(err)), -1);
	assert_int_equal(errno, ENODEV);
	assert_true(!strcmp(err, strerror(ENODEV)) ||
		    !strncmp(err, "kernel: ", 8));
	/* A callback that fails ends the request with EPROTO. */
	assert_int_equal(tdm_nl_talk(&nl, put_getlink(buf, 0), true, failing_cb,
				     &calls, err, sizeof(err)), -1);
	assert_int_equal(errno, EPROTO);
	assert_int_equal(calls, 1);
	assert_string_equal(err, strerror(EPROTO));
	/* The rest of that dump is skipped: the next request still works. */
	l = (struct links){ 0 };
	assert_int_equal(tdm_nl_talk(&nl, put_getlink(buf, 0), true, link_cb,
				     &l, err, sizeof(err)), 0);
	assert_true(l.lo);
	tdm_nl_close(&nl);
}

static struct nlmsghdr *put_getfamily(char *buf, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = GENL_ID_CTRL;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	return nlh;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			*(uint16_t *)data = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static void test_genl_family(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], err[256] = "";
	struct tdm_nl nl;
	uint16_t id = 0;

	(void)state;
	assert_int_equal(tdm_nl_open(&nl, NETLINK_GENERIC, err, sizeof(err)), 0);
	assert_string_equal(nl.bus, "generic netlink");
	assert_int_equal(tdm_nl_talk(&nl, put_getfamily(buf, "nlctrl"), false,
				     family_cb, &id, err, sizeof(err)), 0);
	assert_int_equal(id, GENL_ID_CTRL);
	assert_int_equal(tdm_nl_talk(&nl, put_getfamily(buf, "tdm-no-such"),
				     false, family_cb, &id, err, sizeof(err)), -1);
	assert_int_equal(errno, ENOENT);
	tdm_nl_close(&nl);
}

static void test_not_open(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], err[256] = "";
	struct tdm_nl nl;

	(void)state;
	assert_int_equal(tdm_nl_open(&nl, NETLINK_ROUTE, err, sizeof(err)), 0);
	assert_string_equal(nl.bus, "rtnetlink");
	tdm_nl_close(&nl);
	assert_int_equal(tdm_nl_talk(&nl, put_getlink(buf, 0), true, NULL, NULL,
				     err, sizeof(err)), -1);
	assert_int_equal(errno, EBADF);
	assert_string_equal(err, "rtnetlink socket is not open");
	/* A family that does not exist: the socket call's error. */
	assert_int_equal(tdm_nl_open(&nl, 31, err, sizeof(err)), -1);
	assert_null(nl.sock);
	assert_true(!strncmp(err, "netlink socket: ", 16));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtnl_dump),
		cmocka_unit_test(test_rtnl_get_and_error),
		cmocka_unit_test(test_genl_family),
		cmocka_unit_test(test_not_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
