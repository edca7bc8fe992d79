// SPDX-License-Identifier: GPL-2.0
/*
 * What tdmgen's senders past the qdisc share (--stack afxdp in afxdp.c,
 * --stack dpdk in dpdk.c): the frame's addresses, taken from the kernel's
 * connected UDP socket and neighbour table, and libtdmgate following the
 * tdmwin qdisc on the device, the plan's one home.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "tdm_pkt.h"
#include "tdmgate.h"
#include "tdmgen.h"

const char *stack_name(enum tdmgen_stack stack)
{
	switch (stack) {
	case STACK_AFXDP:
		return "afxdp";
	case STACK_DPDK:
		return "dpdk";
	default:
		return "kernel";
	}
}

/* The neighbour entry of @ip (host order) on @ifname, from /proc/net/arp. */
static int arp_lookup(const char *ifname, uint32_t ip, uint8_t mac[6])
{
	char line[256], ipbuf[32], hw[32], dev[IFNAMSIZ + 1];
	unsigned int flags, m[6];
	FILE *f = fopen("/proc/net/arp", "r");
	int found = -1, i;

	if (!f)
		return -1;
	snprintf(ipbuf, sizeof(ipbuf), "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255,
		 (ip >> 8) & 255, ip & 255);
	while (found && fgets(line, sizeof(line), f)) {
		char a[32];

		if (sscanf(line, "%31s %*s %x %31s %*s %16s", a, &flags, hw,
			   dev) != 4 || strcmp(a, ipbuf) || strcmp(dev, ifname) ||
		    !(flags & 2) ||	/* ATF_COM: complete */
		    sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
			   &m[4], &m[5]) != 6)
			continue;
		for (i = 0; i < 6; i++)
			mac[i] = (uint8_t)m[i];
		found = 0;
	}
	fclose(f);
	return found;
}

int bypass_frame_addr(const struct opts *o, int fd, struct tdm_frame_addr *a)
{
	struct sockaddr_in src, dst;
	socklen_t len = sizeof(src);
	struct ifreq ifr;

	memset(a, 0, sizeof(*a));
	if (getsockname(fd, (struct sockaddr *)&src, &len) ||
	    src.sin_family != AF_INET || (len = sizeof(dst),
	    getpeername(fd, (struct sockaddr *)&dst, &len))) {
		fprintf(stderr, "tdmgen: --stack %s sends IPv4 only\n",
			stack_name(o->stack));
		return -1;
	}
	a->saddr = ntohl(src.sin_addr.s_addr);
	a->sport = ntohs(src.sin_port);
	a->daddr = ntohl(dst.sin_addr.s_addr);
	a->dport = ntohs(dst.sin_port);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, "tdmgen: %s: no MAC address: %s\n", o->ifname,
			strerror(errno));
		return -1;
	}
	memcpy(a->src_mac, ifr.ifr_hwaddr.sa_data, 6);
	if (o->has_dst_mac) {
		memcpy(a->dst_mac, o->dst_mac, 6);
	} else if (arp_lookup(o->ifname, a->daddr, a->dst_mac)) {
		fprintf(stderr, "tdmgen: %s: no neighbour entry for %s on %s (give --dst-mac)\n",
			o->host, o->host, o->ifname);
		return -1;
	}
	return 0;
}

struct tdmgate *bypass_gate(const struct opts *o, int ifindex)
{
	struct tdmgate_plan p;
	struct tdmgate *g = NULL;
	int err = tdmgate_plan_from_qdisc(ifindex, &p);

	if (!err)
		err = tdmgate_create(&p, &g);
	if (!err)
		err = tdmgate_follow(g, ifindex);
	if (err) {
		fprintf(stderr, "tdmgen: %s: %s%s\n", o->ifname,
			err == -ENOENT ? "no tdmwin qdisc to follow (the plan's home; "
					 "or --ungated)" : "libtdmgate: ",
			err == -ENOENT ? "" : strerror(-err));
		tdmgate_destroy(g);
		return NULL;
	}
	tdmgate_set_spin(g, o->spin_ns);
	return g;
}

