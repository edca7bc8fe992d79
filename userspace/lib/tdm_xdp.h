/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What sends on a device past its qdisc: an XDP program attached to it
 * (RTM_GETLINK, IFLA_XDP), AF_XDP sockets bound to it (sock_diag,
 * xdp_diag) and packet sockets with a TX ring (sock_diag, packet_diag),
 * and whether its driver launches AF_XDP frames at a given time (the
 * netdev generic netlink family's xsk-features).  For tdmctl doctor (one
 * wire per device) and tdmgen --stack afxdp.
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
 * A packet socket (AF_PACKET) with a TX ring that may send on the device:
 * bound to it, or bound to none (such a socket names the device per
 * send).  What sends from a TX ring with PACKET_QDISC_BYPASS (DPDK's
 * net_af_packet sets it unless qdisc_bypass=0) goes to the driver past
 * the qdisc (dev_direct_xmit); the kernel does not say whether a socket
 * set it (packet_diag has no flag for it, 6.1 to mainline), so a TX ring is
 * the sign of a probable bypass sender (a TX ring without the option
 * sends through the qdisc).  A socket without a TX ring (tcpdump's, with
 * its RX ring) is not listed: it may send one frame per call, and whether
 * past the qdisc or not cannot be seen either.
 */
struct tdm_pkt_sender {
	uint32_t ino;		/* the socket's inode (socket:[INO] in /proc/PID/fd) */
	uint32_t ifindex;	/* bound device; 0: none */
	uint16_t proto;		/* ETH_P_ALL, ... (host order) */
	uint8_t type;		/* SOCK_RAW or SOCK_DGRAM */
	uint32_t tx_frames;	/* frames in its TX ring */
	uint32_t uid;
	int pid;		/* a process holding it; 0: not found */
	char comm[16];		/* its name; "" with pid 0 */
};

#define TDM_PKT_SENDERS_MAX	8

struct tdm_pkt_info {
	unsigned int bound;	/* packet sockets bound to the device, any */
	unsigned int nsenders;	/* of them and the unbound, with a TX ring */
	/* The first TDM_PKT_SENDERS_MAX of them, in the kernel's order. */
	struct tdm_pkt_sender s[TDM_PKT_SENDERS_MAX];
};

/*
 * The packet sockets of this network namespace that may send on device
 * @ifindex past its qdisc, with a process holding each (found in
 * /proc/PID/fd: pid 0 where none is visible, as for a non-root caller).
 * 0, or -1 with errno and err (ENOENT: "no packet_diag in this kernel").
 */
int tdm_pkt_senders(int ifindex, struct tdm_pkt_info *info, char *err,
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
