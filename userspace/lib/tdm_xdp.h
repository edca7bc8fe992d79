/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sends on a device past its qdisc: an XDP program attached to it
 * (RTM_GETLINK, IFLA_XDP) and AF_XDP sockets bound to it (sock_diag,
 * xdp_diag), and whether its driver launches AF_XDP frames at a given
 * time (the netdev generic netlink family's xsk-features).  For tdmctl
 * doctor (one wire per device) and tdmgen --stack afxdp.
 */
#ifndef TDM_XDP_H
#define TDM_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* include/uapi/linux/netdev.h (6.3+, xsk-features 6.8+, launch 6.15+). */
#define TDM_NETDEV_FAMILY		"netdev"
#define TDM_NETDEV_CMD_DEV_GET		1
#define TDM_NETDEV_A_DEV_IFINDEX	1
#define TDM_NETDEV_A_DEV_XSK_FEATURES	6
#define TDM_XSK_TX_LAUNCH_TIME		4	/* _FLAGS_TX_LAUNCH_TIME_FIFO */

struct tdm_xdp_info {
	uint8_t attached;	/* IFLA_XDP_ATTACHED: 0 none, XDP_ATTACHED_* */
	uint32_t prog_id;	/* IFLA_XDP_PROG_ID (0: none or several) */
	bool xsk_known;		/* the AF_XDP sockets could be listed */
	unsigned int xsks;	/* AF_XDP sockets bound to the device */
	unsigned int xsks_tx;	/* of them, with a TX ring */
	/*
	 * Without xsk_diag (Debian's 6.1 has none): the AF_XDP sockets of
	 * the network namespace, device unknown (/proc/net/protocols).
	 */
	bool ns_known;
	unsigned int ns_xsks;
};

/*
 * The XDP program and the AF_XDP sockets of device @ifindex, in this
 * network namespace.  0, or -1 with errno and err when the link cannot be
 * read; sockets that cannot be listed (no xsk_diag) leave xsk_known false
 * and say why in err with 0 returned, and are counted for the namespace
 * (ns_known, ns_xsks) if /proc/net/protocols can be read.
 */
int tdm_xdp_get(int ifindex, struct tdm_xdp_info *info, char *err,
		size_t errlen);

/*
 * The device's AF_XDP TX features (NETDEV_XSK_FLAGS_*): 0 with *features,
 * or -1 with errno and err: ENOENT when the kernel does not report them
 * (no netdev family before 6.3, no xsk-features before 6.8: no launch
 * time either).
 */
int tdm_xsk_features(int ifindex, uint32_t *features, char *err,
		     size_t errlen);

#endif
