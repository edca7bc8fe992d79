// SPDX-License-Identifier: GPL-2.0
/*
 * tdm_testdev.c	A test double of a NIC with hardware timestamps, for the
 *			tdmwin selftests only (never installed by make install
 *			or DKMS).
 *
 * Loading the module creates two Ethernet devices, tdmt0 and tdmt1, wired
 * to each other like a veth pair: what one transmits, the other receives.
 * Each has its own PTP hardware clock (/dev/ptpN, `ethtool -T` names it)
 * that runs on CLOCK_TAI plus an offset (phc_offset_s at load, 0 by
 * default, so the PHC starts where phc2sys would keep it) and can be
 * stepped and slewed like a NIC's: clock_settime, clock_adjtime
 * (ADJ_SETOFFSET, ADJ_FREQUENCY up to +-500000000 ppb), phc_ctl set / adj /
 * freq.  PTP_SYS_OFFSET and PTP_SYS_OFFSET_EXTENDED work;
 * PTP_SYS_OFFSET_PRECISE is not supported (EOPNOTSUPP), as on most NICs.
 *
 * Receive timestamps: SIOCSHWTSTAMP (hwstamp_ctl -r 1, tdmstat capture)
 * with any filter other than NONE stamps every received frame (the filter
 * reads back as ALL) with the receiving device's PHC in
 * skb_hwtstamps(skb)->hwtstamp; with NONE it sets none.  The frame arrives
 * with skb->tstamp clear, as from a NIC, so the stack's own software stamp
 * (net_enable_timestamp) applies; with the writable parameter rx_edt set,
 * it arrives instead carrying a monotonic delivery time, as a frame
 * forwarded from a local sender with an EDT does, and the stack takes no
 * software receive stamp for it.  No transmit hardware stamps.
 *
 * XDP: native mode (ndo_bpf), run on each received frame as generic XDP
 * runs it on an skb, with the start and end the program moved applied;
 * XDP_PASS and XDP_DROP (XDP_ABORTED), anything else dropped with the
 * kernel's warning.  On 6.3 and later the XDP RX metadata kfunc
 * bpf_xdp_metadata_rx_timestamp() answers the frame's hardware stamp (the
 * PHC's, taken as for the skb: only while the filter is on; -ENODATA
 * otherwise), as a NIC's driver does through xdp_metadata_ops.
 *
 * The pair lives as long as the module: rmmod removes both, wherever they
 * are.  A device left in a network namespace that goes away returns to the
 * initial namespace (it has no rtnl_link_ops).
 */

#include <linux/bpf.h>
#include <linux/errno.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/net_tstamp.h>
#include <linux/netdevice.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <net/xdp.h>
#include <trace/events/xdp.h>

#define TDMT_DRV	"tdm_testdev"
#define TDMT_MAX_PPB	500000000

static long phc_offset_s;
module_param(phc_offset_s, long, 0444);
MODULE_PARM_DESC(phc_offset_s, "initial PHC time minus CLOCK_TAI, seconds (default 0)");

static bool rx_edt;
module_param(rx_edt, bool, 0644);
MODULE_PARM_DESC(rx_edt, "deliver received frames with a monotonic delivery time (no software RX stamp)");

struct tdmt_priv {
	struct net_device __rcu *peer;
	struct net_device *dev;
	struct ptp_clock *ptp;
	struct ptp_clock_info info;
	spinlock_t lock;	/* the clock: base_sys, base_phc, ppb */
	s64 base_sys;		/* CLOCK_TAI at the last change, ns */
	s64 base_phc;		/* the PHC then, ns */
	s32 ppb;		/* its frequency offset */
	int rx_filter;		/* HWTSTAMP_FILTER_NONE or _ALL */
	struct bpf_prog __rcu *xdp_prog;	/* native XDP, under RTNL */
	struct xdp_rxq_info xdp_rxq;
};

/* A received frame as its XDP program sees it, and what the metadata
 * kfuncs read: the skb it came in (its hardware stamp).
 */
struct tdmt_xdp_buff {
	struct xdp_buff xdp;	/* first: the kfunc's ctx points here */
	struct sk_buff *skb;
};

static struct net_device *tdmt_devs[2];

/* Scale ns by ppb without overflow for any elapsed time below ~500 years. */
static s64 tdmt_scale(s64 ns, s32 ppb)
{
	s32 rem;
	s64 sec = div_s64_rem(ns, NSEC_PER_SEC, &rem);

	return sec * ppb + div_s64((s64)rem * ppb, NSEC_PER_SEC);
}

/* Under p->lock. */
static s64 tdmt_phc_at(const struct tdmt_priv *p, s64 sys)
{
	s64 el = sys - p->base_sys;

	return p->base_phc + el + tdmt_scale(el, p->ppb);
}

/* Under p->lock: restart the clock's line at now, keeping its value. */
static void tdmt_rebase(struct tdmt_priv *p)
{
	s64 sys = ktime_get_clocktai_ns();

	p->base_phc = tdmt_phc_at(p, sys);
	p->base_sys = sys;
}

static s64 tdmt_phc_ns(struct tdmt_priv *p)
{
	unsigned long flags;
	s64 ns;

	spin_lock_irqsave(&p->lock, flags);
	ns = tdmt_phc_at(p, ktime_get_clocktai_ns());
	spin_unlock_irqrestore(&p->lock, flags);
	return ns;
}

static int tdmt_gettimex64(struct ptp_clock_info *info, struct timespec64 *ts,
			   struct ptp_system_timestamp *sts)
{
	struct tdmt_priv *p = container_of(info, struct tdmt_priv, info);
	unsigned long flags;
	s64 sys;

	spin_lock_irqsave(&p->lock, flags);
	ptp_read_system_prets(sts);
	sys = ktime_get_clocktai_ns();
	ptp_read_system_postts(sts);
	*ts = ns_to_timespec64(tdmt_phc_at(p, sys));
	spin_unlock_irqrestore(&p->lock, flags);
	return 0;
}

static int tdmt_settime64(struct ptp_clock_info *info,
			  const struct timespec64 *ts)
{
	struct tdmt_priv *p = container_of(info, struct tdmt_priv, info);
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	p->base_sys = ktime_get_clocktai_ns();
	p->base_phc = timespec64_to_ns(ts);
	spin_unlock_irqrestore(&p->lock, flags);
	return 0;
}

static int tdmt_adjtime(struct ptp_clock_info *info, s64 delta)
{
	struct tdmt_priv *p = container_of(info, struct tdmt_priv, info);
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	tdmt_rebase(p);
	p->base_phc += delta;
	spin_unlock_irqrestore(&p->lock, flags);
	return 0;
}

static int tdmt_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct tdmt_priv *p = container_of(info, struct tdmt_priv, info);
	long ppb = scaled_ppm_to_ppb(scaled_ppm);
	unsigned long flags;

	if (ppb > TDMT_MAX_PPB || ppb < -TDMT_MAX_PPB)
		return -ERANGE;
	spin_lock_irqsave(&p->lock, flags);
	tdmt_rebase(p);
	p->ppb = ppb;
	spin_unlock_irqrestore(&p->lock, flags);
	return 0;
}

static int tdmt_enable(struct ptp_clock_info *info,
		       struct ptp_clock_request *rq, int on)
{
	return -EOPNOTSUPP;
}

static const struct ptp_clock_info tdmt_ptp_info = {
	.owner		= THIS_MODULE,
	.name		= "tdm_testdev",
	.max_adj	= TDMT_MAX_PPB,
	.adjfine	= tdmt_adjfine,
	.adjtime	= tdmt_adjtime,
	.gettimex64	= tdmt_gettimex64,
	.settime64	= tdmt_settime64,
	.enable		= tdmt_enable,
};

/* A NIC's receive path: no software stamp yet, the PHC's if enabled. */
static void tdmt_rx_stamp(struct tdmt_priv *rp, struct sk_buff *skb)
{
	struct skb_shared_hwtstamps *hw = skb_hwtstamps(skb);
	bool edt = READ_ONCE(rx_edt);

	memset(hw, 0, sizeof(*hw));
	if (READ_ONCE(rp->rx_filter) != HWTSTAMP_FILTER_NONE)
		hw->hwtstamp = ns_to_ktime(tdmt_phc_ns(rp));
#ifdef TDMT_HAVE_SKB_CLOCK
	skb_set_delivery_time(skb, edt ? ktime_get() : 0,
			      edt ? SKB_CLOCK_MONOTONIC : SKB_CLOCK_REALTIME);
#else
	skb_set_delivery_time(skb, edt ? ktime_get() : 0, edt);
#endif
}

#ifdef TDMT_HAVE_XDP_METADATA
static int tdmt_xdp_rx_timestamp(const struct xdp_md *ctx, u64 *timestamp)
{
	const struct tdmt_xdp_buff *b = (const struct tdmt_xdp_buff *)ctx;
	ktime_t t = skb_hwtstamps(b->skb)->hwtstamp;

	if (!t)
		return -ENODATA;
	*timestamp = ktime_to_ns(t);
	return 0;
}

static const struct xdp_metadata_ops tdmt_xdp_metadata_ops = {
	.xmo_rx_timestamp	= tdmt_xdp_rx_timestamp,
};
#endif

/* Put back into skb what the program moved (bpf_xdp_adjust_head/tail). */
static void tdmt_xdp_adjust(struct sk_buff *skb, const struct xdp_buff *xdp,
			    void *orig_data, void *orig_end, __be16 orig_proto)
{
	int off = xdp->data - orig_data;
	struct ethhdr *eth;

	if (off) {
		if (off > 0)
			__skb_pull(skb, off);
		else
			__skb_push(skb, -off);
		skb->mac_header += off;
		skb_reset_network_header(skb);
	}
	off = xdp->data_end - orig_end;
	if (off) {
		skb_set_tail_pointer(skb, xdp->data_end - xdp->data);
		skb->len += off;
	}
	eth = (struct ethhdr *)xdp->data;
	if (eth->h_proto != orig_proto) {
		__skb_push(skb, ETH_HLEN);
		skb->protocol = eth_type_trans(skb, skb->dev);
	}
}

/*
 * The receiving device's XDP program on skb, as generic XDP runs it (the
 * frame from its MAC header, linear): true to pass it on, false if it is
 * to be dropped.  Under rcu_read_lock().
 */
static bool tdmt_run_xdp(struct tdmt_priv *rp, struct sk_buff *skb)
{
	struct bpf_prog *prog = rcu_dereference(rp->xdp_prog);
#ifdef TDMT_HAVE_BPF_NET_CTX
	struct bpf_net_context __bpf_net_ctx, *bpf_net_ctx;
#endif
	struct tdmt_xdp_buff b;
	void *orig_data, *orig_end, *hard_start;
	u32 act, mac_len, frame_sz;
	__be16 orig_proto;

	if (!prog)
		return true;
	if (skb_linearize(skb))
		return false;
	mac_len = skb->data - skb_mac_header(skb);
	hard_start = skb->data - skb_headroom(skb);
	frame_sz = (void *)skb_end_pointer(skb) - hard_start +
		   SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	xdp_init_buff(&b.xdp, frame_sz, &rp->xdp_rxq);
	xdp_prepare_buff(&b.xdp, hard_start, skb_headroom(skb) - mac_len,
			 skb_headlen(skb) + mac_len, true);
	b.skb = skb;
	orig_data = b.xdp.data;
	orig_end = b.xdp.data_end;
	orig_proto = ((struct ethhdr *)orig_data)->h_proto;
#ifdef TDMT_HAVE_BPF_NET_CTX
	bpf_net_ctx = bpf_net_ctx_set(&__bpf_net_ctx);
#endif
	act = bpf_prog_run_xdp(prog, &b.xdp);
#ifdef TDMT_HAVE_BPF_NET_CTX
	bpf_net_ctx_clear(bpf_net_ctx);
#endif
	switch (act) {
	case XDP_PASS:
		tdmt_xdp_adjust(skb, &b.xdp, orig_data, orig_end, orig_proto);
		return true;
	default:
		bpf_warn_invalid_xdp_action(rp->dev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(rp->dev, prog, act);
		fallthrough;
	case XDP_DROP:
		return false;
	}
}

/* Serialised by the queue's lock: our TX and the peer's RX counters. */
static netdev_tx_t tdmt_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct tdmt_priv *p = netdev_priv(dev);
	struct net_device *peer;
	unsigned int len = skb->len;

	skb_tx_timestamp(skb);
	rcu_read_lock();
	peer = rcu_dereference(p->peer);
	/* the shared info (hwtstamps) of a clone belongs to others too */
	if (!peer || !netif_running(peer) || skb_unclone(skb, GFP_ATOMIC)) {
		kfree_skb(skb);
		goto drop;
	}
	if (__dev_forward_skb(peer, skb))	/* freed it */
		goto drop;
	tdmt_rx_stamp(netdev_priv(peer), skb);
	if (!tdmt_run_xdp(netdev_priv(peer), skb)) {
		kfree_skb(skb);
		peer->stats.rx_dropped++;
	} else if (netif_rx(skb) != NET_RX_SUCCESS) {
		peer->stats.rx_dropped++;
	} else {
		peer->stats.rx_packets++;
		peer->stats.rx_bytes += len;
	}
	dev->stats.tx_packets++;
	dev->stats.tx_bytes += len;
	rcu_read_unlock();
	return NETDEV_TX_OK;
drop:
	dev->stats.tx_dropped++;
	rcu_read_unlock();
	return NETDEV_TX_OK;
}

static int tdmt_hwtstamp_get(struct tdmt_priv *p, struct ifreq *ifr)
{
	struct hwtstamp_config cfg = {
		.tx_type = HWTSTAMP_TX_OFF,
		.rx_filter = READ_ONCE(p->rx_filter),
	};

	return copy_to_user(ifr->ifr_data, &cfg, sizeof(cfg)) ? -EFAULT : 0;
}

static int tdmt_hwtstamp_set(struct tdmt_priv *p, struct ifreq *ifr)
{
	struct hwtstamp_config cfg;

	if (copy_from_user(&cfg, ifr->ifr_data, sizeof(cfg)))
		return -EFAULT;
	if (cfg.flags)
		return -EINVAL;
	if (cfg.tx_type != HWTSTAMP_TX_OFF)
		return -ERANGE;
	if (cfg.rx_filter != HWTSTAMP_FILTER_NONE)
		cfg.rx_filter = HWTSTAMP_FILTER_ALL;
	WRITE_ONCE(p->rx_filter, cfg.rx_filter);
	return copy_to_user(ifr->ifr_data, &cfg, sizeof(cfg)) ? -EFAULT : 0;
}

/* SIOC[SG]HWTSTAMP reach here on 6.1 and, without ndo_hwtstamp_*, on 6.12. */
static int tdmt_eth_ioctl(struct net_device *dev, struct ifreq *ifr, int cmd)
{
	struct tdmt_priv *p = netdev_priv(dev);

	switch (cmd) {
	case SIOCSHWTSTAMP:
		return tdmt_hwtstamp_set(p, ifr);
	case SIOCGHWTSTAMP:
		return tdmt_hwtstamp_get(p, ifr);
	default:
		return -EOPNOTSUPP;
	}
}

/* Native XDP: the core hands us the program's reference (NULL: none). */
static int tdmt_bpf(struct net_device *dev, struct netdev_bpf *bpf)
{
	struct tdmt_priv *p = netdev_priv(dev);
	struct bpf_prog *old;

	if (bpf->command != XDP_SETUP_PROG)
		return -EINVAL;
	old = rtnl_dereference(p->xdp_prog);
	rcu_assign_pointer(p->xdp_prog, bpf->prog);
	if (old)
		bpf_prog_put(old);
	return 0;
}

static const struct net_device_ops tdmt_netdev_ops = {
	.ndo_start_xmit		= tdmt_xmit,
	.ndo_eth_ioctl		= tdmt_eth_ioctl,
	.ndo_bpf		= tdmt_bpf,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

static void tdmt_get_drvinfo(struct net_device *dev,
			     struct ethtool_drvinfo *info)
{
	strscpy(info->driver, TDMT_DRV, sizeof(info->driver));
}

#ifdef TDMT_HAVE_KERNEL_TS_INFO
static int tdmt_get_ts_info(struct net_device *dev,
			    struct kernel_ethtool_ts_info *info)
#else
static int tdmt_get_ts_info(struct net_device *dev,
			    struct ethtool_ts_info *info)
#endif
{
	struct tdmt_priv *p = netdev_priv(dev);

	info->so_timestamping = SOF_TIMESTAMPING_TX_SOFTWARE |
				SOF_TIMESTAMPING_RX_SOFTWARE |
				SOF_TIMESTAMPING_SOFTWARE |
				SOF_TIMESTAMPING_RX_HARDWARE |
				SOF_TIMESTAMPING_RAW_HARDWARE;
	info->phc_index = ptp_clock_index(p->ptp);
	info->tx_types = BIT(HWTSTAMP_TX_OFF);
	info->rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_ALL);
	return 0;
}

static const struct ethtool_ops tdmt_ethtool_ops = {
	.get_drvinfo	= tdmt_get_drvinfo,
	.get_link	= ethtool_op_get_link,
	.get_ts_info	= tdmt_get_ts_info,
};

static void tdmt_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->netdev_ops = &tdmt_netdev_ops;
	dev->ethtool_ops = &tdmt_ethtool_ops;
#ifdef TDMT_HAVE_XDP_METADATA
	dev->xdp_metadata_ops = &tdmt_xdp_metadata_ops;
#endif
	dev->max_mtu = 9000;
	eth_hw_addr_random(dev);
}

static struct net_device *tdmt_alloc(const char *name)
{
	struct net_device *dev;
	struct tdmt_priv *p;
	int err;

	dev = alloc_netdev(sizeof(*p), name, NET_NAME_USER, tdmt_setup);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	p = netdev_priv(dev);
	p->dev = dev;
	p->rx_filter = HWTSTAMP_FILTER_NONE;
	spin_lock_init(&p->lock);
	p->base_sys = ktime_get_clocktai_ns();
	p->base_phc = p->base_sys + phc_offset_s * NSEC_PER_SEC;
	p->info = tdmt_ptp_info;
	p->ptp = ptp_clock_register(&p->info, NULL);
	if (IS_ERR_OR_NULL(p->ptp)) {
		long err = p->ptp ? PTR_ERR(p->ptp) : -EOPNOTSUPP;

		free_netdev(dev);
		return ERR_PTR(err);
	}
	err = xdp_rxq_info_reg(&p->xdp_rxq, dev, 0, 0);
	if (err) {
		ptp_clock_unregister(p->ptp);
		free_netdev(dev);
		return ERR_PTR(err);
	}
	return dev;
}

static void tdmt_free(struct net_device *dev)
{
	struct tdmt_priv *p = netdev_priv(dev);

	xdp_rxq_info_unreg(&p->xdp_rxq);
	ptp_clock_unregister(p->ptp);
	free_netdev(dev);
}

static void tdmt_destroy(unsigned int registered)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tdmt_devs); i++)
		if (tdmt_devs[i])
			RCU_INIT_POINTER(((struct tdmt_priv *)
					  netdev_priv(tdmt_devs[i]))->peer, NULL);
	synchronize_net();
	for (i = 0; i < registered; i++)
		unregister_netdev(tdmt_devs[i]);
	for (i = 0; i < ARRAY_SIZE(tdmt_devs); i++) {
		if (tdmt_devs[i])
			tdmt_free(tdmt_devs[i]);
		tdmt_devs[i] = NULL;
	}
}

static int __init tdmt_init(void)
{
	static const char * const names[] = { "tdmt0", "tdmt1" };
	struct tdmt_priv *p0, *p1;
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(tdmt_devs); i++) {
		struct net_device *dev = tdmt_alloc(names[i]);

		if (IS_ERR(dev)) {
			pr_err(TDMT_DRV ": cannot create %s's PTP clock: %ld\n",
			       names[i], PTR_ERR(dev));
			tdmt_destroy(0);
			return PTR_ERR(dev);
		}
		tdmt_devs[i] = dev;
	}
	p0 = netdev_priv(tdmt_devs[0]);
	p1 = netdev_priv(tdmt_devs[1]);
	rcu_assign_pointer(p0->peer, tdmt_devs[1]);
	rcu_assign_pointer(p1->peer, tdmt_devs[0]);
	for (i = 0; i < ARRAY_SIZE(tdmt_devs); i++) {
		err = register_netdev(tdmt_devs[i]);
		if (err) {
			pr_err(TDMT_DRV ": cannot register %s: %d\n",
			       names[i], err);
			tdmt_destroy(i);
			return err;
		}
	}
	pr_info(TDMT_DRV ": %s (PHC %d) <-> %s (PHC %d)\n",
		tdmt_devs[0]->name, ptp_clock_index(p0->ptp),
		tdmt_devs[1]->name, ptp_clock_index(p1->ptp));
	return 0;
}

static void __exit tdmt_exit(void)
{
	tdmt_destroy(ARRAY_SIZE(tdmt_devs));
}

module_init(tdmt_init);
module_exit(tdmt_exit);

MODULE_AUTHOR("tdmwin authors");
MODULE_DESCRIPTION("tdmwin selftests: a NIC test double with RX hardware timestamps, a PHC and native XDP");
MODULE_LICENSE("GPL");
