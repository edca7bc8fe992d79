// SPDX-License-Identifier: GPL-2.0
/*
 * tdmrx.c	Receive-side recorder of tdmwin test traffic.
 *
 * One session at a time attaches to one network device and a set of UDP
 * destination ports.  For every matching IPv4/IPv6 packet the device
 * receives, the hook writes a 64-byte record (RX timestamp, the sender's
 * stamped header) into the ring of the CPU that received it.  User space
 * maps the rings from /dev/tdmrx and drains them; poll() on the device
 * sleeps until a ring fills to the watermark, or a quiet tail has waited
 * flush_us.
 *
 * The contract (packet header, generic netlink family, record, ring layout
 * and protocol) is kmod/uapi/linux/tdmrx.h.
 *
 * Lifetimes: the session (hook, device reference, timer) lives from ATTACH
 * to detach; the rings (struct tdmrx_area) are refcounted and live on while
 * user space maps them, so a detach, the removal of the device or the exit
 * of its namespace never pulls memory from under a reader.  The mapping
 * holds the file, and the file holds the module.
 *
 * Locking: tdmrx_lock serialises attach, detach, get and mmap; attach also
 * takes RTNL (first) so that the device cannot unregister between the
 * lookup and the hook.  The hook runs under RCU and touches only its own
 * CPU's ring.
 */

#include <linux/bitmap.h>
#include <linux/errno.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/udp.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netlink.h>

#include "uapi/linux/tdmrx.h"

/* ---- state ---------------------------------------------------------------- */

/* The ring memory of one session: refcounted by the session, every vma
 * that maps it and every file that mapped it.
 */
struct tdmrx_area {
	struct kref		ref;
	wait_queue_head_t	wq;	/* poll() sleepers */
	void			*mem;	/* vmalloc_user(), nr_rings rings */
	size_t			len;	/* page aligned */
	size_t			ring_bytes;
	u32			nr_rings;
	u32			size;	/* records per ring */
};

/* Kernel-private state of one CPU's ring; only that CPU writes it, with BH
 * disabled: its receive path, or its mark timer (a pinned timer, run in
 * that CPU's softirq, so the two never interleave).
 */
struct tdmrx_ring {
	struct tdmrx_ring_prod	*hdr;	/* shared: we write, user reads */
	struct tdmrx_ring_cons	*ucons;	/* shared: user writes */
	struct tdmrx_record	*rec;
	u64			prod;	/* our copy of hdr->prod */
	u64			cons;	/* cached, clamped consumer position */
	u32			mask;
	int			cpu;
	unsigned long		period;	/* of mark_timer, jiffies */
	struct timer_list	mark_timer;
	struct tdmrx_stats	st;	/* this CPU's counters */
};

struct tdmrx_session {
	struct packet_type	pt4;
	struct packet_type	pt6;
	struct net_device	*dev;
	netdevice_tracker	dev_tracker;
	struct net		*owner_net;	/* compared only, no reference */
	u32			owner;		/* netlink port id */
	bool			owner_gone;	/* owner socket released */
	u32			session;
	u32			watermark;
	u32			flush_us;
	unsigned long		flush_jiffies;
	struct timer_list	timer;		/* quiet-tail wakeups */
	u64			timer_wakeups;	/* timer only */
	struct tdmrx_area	*area;
	struct tdmrx_ring __percpu *rings;
	u16			port_list[TDMRX_MAX_PORTS];
	unsigned int		nports;
	DECLARE_BITMAP(ports, 65536);
#ifndef NL_SET_ERR_MSG_FMT
	const char		*busy_msg;	/* see tdmrx_busy_msgs */
#endif
};

static DEFINE_MUTEX(tdmrx_lock);
static struct tdmrx_session __rcu *tdmrx_cur;	/* under tdmrx_lock */
static u32 tdmrx_session_seq;			/* under tdmrx_lock */
static struct tdmrx_stats tdmrx_last_stats;	/* of the last session */

static void tdmrx_reap(struct work_struct *work);
static DECLARE_WORK(tdmrx_reap_work, tdmrx_reap);

#ifndef NL_SET_ERR_MSG_FMT
/*
 * Kernels before 6.2 have no formatted extack messages, and the message
 * must outlive the handler (the ack is built after it returns).  The EBUSY
 * text of session n is written once, at its attach, into slot n % 16 of
 * static storage: it stays readable for 15 more attaches.
 */
#define TDMRX_BUSY_SLOTS	16
#define TDMRX_BUSY_LEN		80
static char tdmrx_busy_msgs[TDMRX_BUSY_SLOTS][TDMRX_BUSY_LEN];
#endif

/* ---- ring memory ------------------------------------------------------------ */

static void tdmrx_area_release(struct kref *ref)
{
	struct tdmrx_area *area = container_of(ref, struct tdmrx_area, ref);

	vfree(area->mem);
	kfree(area);
}

static void tdmrx_area_put(struct tdmrx_area *area)
{
	kref_put(&area->ref, tdmrx_area_release);
}

static struct tdmrx_ring_prod *tdmrx_area_hdr(struct tdmrx_area *area, u32 i)
{
	return area->mem + (size_t)i * area->ring_bytes;
}

static struct tdmrx_ring_cons *tdmrx_area_cons(struct tdmrx_area *area, u32 i)
{
	return area->mem + (size_t)i * area->ring_bytes + TDMRX_PAGE;
}

static struct tdmrx_area *tdmrx_area_alloc(u32 size)
{
	struct tdmrx_area *area;
	size_t ring_bytes;

	BUILD_BUG_ON(sizeof(struct tdmrx_record) != 64);
	BUILD_BUG_ON(sizeof(struct tdmrx_ring_prod) > TDMRX_PAGE);

	area = kzalloc(sizeof(*area), GFP_KERNEL);
	if (!area)
		return NULL;
	ring_bytes = TDMRX_RING_DATA_OFF +
		     (size_t)size * sizeof(struct tdmrx_record);
	area->ring_bytes = ring_bytes;
	area->nr_rings = nr_cpu_ids;
	area->size = size;
	area->len = PAGE_ALIGN(ring_bytes * area->nr_rings);
	area->mem = vmalloc_user(area->len);	/* zeroed */
	if (!area->mem) {
		kfree(area);
		return NULL;
	}
	kref_init(&area->ref);
	init_waitqueue_head(&area->wq);
	return area;
}

/* Records waiting in any ring (the reader's view). */
static bool tdmrx_area_pending(struct tdmrx_area *area)
{
	u32 i;

	for (i = 0; i < area->nr_rings; i++)
		if (READ_ONCE(tdmrx_area_hdr(area, i)->prod) !=
		    READ_ONCE(tdmrx_area_cons(area, i)->cons))
			return true;
	return false;
}

/* ---- the ring protocol -------------------------------------------------------
 *
 * One single-producer/single-consumer ring per CPU.  The producer is the
 * receive path of that CPU (BH disabled), the consumer is user space.
 * prod and cons are free-running u64 counters; record n lives in slot
 * n & mask.  The producer keeps private copies of prod, dropped and a
 * cached cons; the shared pages are only ever written from those copies,
 * so nothing user space writes can confuse the kernel.
 *
 *   producer (tdmrx_push)                consumer (lib/tdm_rx.c)
 *
 *   if (ring looks full)                 prod = load_acquire(&hdr->prod)  (C)
 *       cons = load_acquire(&ucons->cons)  (A)
 *   if (still full) { dropped++; return } read records [cons, prod)
 *   write record at prod & mask          store_release(&ucons->cons, cons) (D)
 *   store_release(&hdr->prod, prod + 1)  (B)
 *
 * (A) pairs with (D): the consumer's reads of a slot happen before the
 *     producer's next write to it.
 * (B) pairs with (C): the record's contents are visible before the consumer
 *     sees the new prod.
 *
 * A full ring drops the newest record and counts it in hdr->dropped;
 * unread records are never overwritten.  The cons value read at (A) is
 * clamped to [prod - size, prod].  On detach, hdr->detached is set with a
 * store-release after the last prod, so a reader that load-acquires
 * detached == 1 sees the final prod and dropped.
 *
 * The receive watermark (hdr->mark_ns, see the uapi header) is the
 * CLOCK_MONOTONIC time taken when the hook started on a matching packet,
 * store-released after that packet's (B), whether it was published or
 * dropped; between packets the ring's pinned timer stores the time it ran.
 * Both run on this CPU with BH disabled, so successive marks never go back
 * and a record hooked before a mark is published before that mark.
 *
 * Wakeups: after publishing, if the fill (against the cached cons) reaches
 * the watermark, cons is re-read (A) and, if the fill is still at the
 * watermark and someone sleeps in poll() (wq_has_sleeper(), whose barrier
 * pairs with the one in poll_wait()), the sleeper is woken.  A timer wakes
 * sleepers every flush_us while any ring holds records.
 */

static u64 tdmrx_load_cons(struct tdmrx_ring *rg)
{
	u64 cons = smp_load_acquire(&rg->ucons->cons);	/* (A) */
	u64 used = rg->prod - cons;

	if ((s64)used < 0)		/* ahead of us: clamp to empty */
		return rg->prod;
	if (used > rg->mask + 1ULL)	/* too far behind: clamp to full */
		return rg->prod - (rg->mask + 1ULL);
	return cons;
}

static void tdmrx_push(struct tdmrx_session *s, struct tdmrx_ring *rg,
		       const struct tdmrx_record *r)
{
	u64 prod = rg->prod;
	u64 size = rg->mask + 1ULL;

	if (prod - rg->cons >= size) {
		rg->cons = tdmrx_load_cons(rg);
		if (prod - rg->cons >= size) {
			rg->st.dropped++;
			WRITE_ONCE(rg->hdr->dropped, rg->st.dropped);
			return;
		}
	}
	rg->rec[prod & rg->mask] = *r;
	rg->prod = ++prod;
	smp_store_release(&rg->hdr->prod, prod);	/* (B) */
	rg->st.records++;

	if (prod - rg->cons >= s->watermark) {
		rg->cons = tdmrx_load_cons(rg);
		if (prod - rg->cons >= s->watermark &&
		    wq_has_sleeper(&s->area->wq)) {
			rg->st.wakeups++;
			wake_up_interruptible(&s->area->wq);
		}
	}
}

/* ---- the receive hook --------------------------------------------------------- */

/* The stamped header after the UDP header, into r.  Counts bad ones. */
static void tdmrx_parse_payload(const struct sk_buff *skb, unsigned int off,
				struct tdmrx_record *r, struct tdmrx_ring *rg)
{
	const struct tdm_pkt_hdr *h;
	struct tdm_pkt_hdr _h;

	h = r->len >= sizeof(_h) ?
	    skb_header_pointer(skb, off, sizeof(_h), &_h) : NULL;
	if (!h) {
		r->flags |= TDMRX_F_TRUNC;
		rg->st.bad_header++;
		return;
	}
	if (h->magic != htonl(TDM_PKT_MAGIC) || h->version != TDM_PKT_VERSION) {
		r->flags |= TDMRX_F_BAD_MAGIC;
		rg->st.bad_header++;
		return;
	}
	r->tx_ns = (s64)be64_to_cpu(h->tx_ns);
	r->seq = be64_to_cpu(h->seq);
	r->sent = be64_to_cpu(h->sent);
	r->sender = be32_to_cpu(h->sender);
	r->plan_version = be32_to_cpu(h->plan_version);
	if (h->flags & TDM_PKT_F_END)
		r->flags |= TDMRX_F_END;
}

/*
 * Match a packet against the ports and fill the addressing part of r.
 * Returns the offset of the UDP payload, or 0 if the packet is not ours.
 * Only the first fragment of a datagram carries the UDP header; IPv6 only
 * with UDP as the first next header.
 */
static unsigned int tdmrx_match(const struct tdmrx_session *s,
				const struct sk_buff *skb,
				struct tdmrx_record *r)
{
	unsigned int off, end;
	const struct udphdr *uh;
	struct udphdr _uh;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph;
		struct iphdr _iph;

		iph = skb_header_pointer(skb, 0, sizeof(_iph), &_iph);
		if (!iph || iph->version != 4 || iph->ihl < 5 ||
		    iph->protocol != IPPROTO_UDP ||
		    (iph->frag_off & htons(IP_OFFSET)))
			return 0;
		off = iph->ihl * 4;
		end = ntohs(iph->tot_len);
		r->saddr = ntohl(iph->saddr);
	} else {
		const struct ipv6hdr *ip6h;
		struct ipv6hdr _ip6h;

		ip6h = skb_header_pointer(skb, 0, sizeof(_ip6h), &_ip6h);
		if (!ip6h || ip6h->version != 6 || ip6h->nexthdr != IPPROTO_UDP)
			return 0;
		off = sizeof(*ip6h);
		end = off + ntohs(ip6h->payload_len);
		r->saddr = ntohl((__force __be32)ipv6_addr_hash(&ip6h->saddr));
		r->flags |= TDMRX_F_IPV6;
	}
	/* GRO rewrites the lengths; padding may follow a short frame. */
	if (skb_is_gso(skb) || end > skb->len || end < off)
		end = skb->len;

	uh = skb_header_pointer(skb, off, sizeof(_uh), &_uh);
	if (!uh || !test_bit(ntohs(uh->dest), s->ports))
		return 0;
	r->sport = ntohs(uh->source);
	r->dport = ntohs(uh->dest);
	off += sizeof(*uh);
	r->len = end > off ? end - off : 0;
	return off;
}

static void tdmrx_stamp(struct sk_buff *skb, struct tdmrx_record *r,
			struct tdmrx_ring *rg)
{
	ktime_t t = skb_hwtstamps(skb)->hwtstamp;

	if (t) {
		r->flags |= TDMRX_F_HW_TS;
		rg->st.hw_stamps++;
	} else {
		t = skb_tstamp(skb);
		if (t) {
			r->flags |= TDMRX_F_SW_TS;
			rg->st.sw_stamps++;
		} else {
			t = ktime_get_real();
			r->flags |= TDMRX_F_NOW_TS;
		}
	}
	r->rx_ns = ktime_to_ns(t);
}

/* Runs on this CPU's ring only, with BH disabled. */
static void tdmrx_record_skb(struct tdmrx_session *s, struct tdmrx_ring *rg,
			     struct sk_buff *skb)
{
	struct tdmrx_record r = { .gso_segs = 1 };
	unsigned int off;
	s64 hook;

	rg->st.seen++;
	off = tdmrx_match(s, skb, &r);
	if (!off)
		return;
	hook = ktime_get_ns();
	rg->st.matched++;
	tdmrx_stamp(skb, &r, rg);
	if (skb_is_gso(skb)) {
		r.flags |= TDMRX_F_GSO;
		r.gso_segs = skb_shinfo(skb)->gso_segs;
	}
	r.cpu = smp_processor_id();
	tdmrx_parse_payload(skb, off, &r, rg);
	tdmrx_push(s, rg, &r);
	smp_store_release(&rg->hdr->mark_ns, hook);	/* after (B) */
}

/* The skb is shared with the rest of the stack: read it, never change it. */
static int tdmrx_rcv(struct sk_buff *skb, struct net_device *dev,
		     struct packet_type *pt, struct net_device *orig_dev)
{
	struct tdmrx_session *s = pt->af_packet_priv;

	local_bh_disable();	/* one producer per ring, even off softirq */
	tdmrx_record_skb(s, this_cpu_ptr(s->rings), skb);
	local_bh_enable();
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* ---- quiet-tail timer ---------------------------------------------------------- */

static void tdmrx_flush_timer(struct timer_list *t)
{
	struct tdmrx_session *s = from_timer(s, t, timer);

	if (tdmrx_area_pending(s->area) && wq_has_sleeper(&s->area->wq)) {
		s->timer_wakeups++;
		wake_up_interruptible(&s->area->wq);
	}
	mod_timer(&s->timer, jiffies + s->flush_jiffies);
}

/*
 * The watermark of a quiet ring.  Pinned to the ring's CPU, it runs in
 * that CPU's softirq and so never between the hook's clock read and its
 * mark.  While the CPU is offline the timer runs elsewhere: the clock is
 * read before the CPU is seen offline, so whatever the CPU hooks once it
 * is back comes later.  That store may land after one of the CPU's own
 * and so go back; the reader keeps the largest mark it has seen.  The
 * timer goes home when the CPU is back.
 */
static void tdmrx_mark_timer(struct timer_list *t)
{
	struct tdmrx_ring *rg = from_timer(rg, t, mark_timer);
	s64 now = ktime_get_ns();

	if (smp_processor_id() == rg->cpu) {
		/* after every (B) of this CPU, as the hook's mark */
		smp_store_release(&rg->hdr->mark_ns, now);
		mod_timer(t, jiffies + rg->period);
		return;
	}
	smp_rmb();	/* the clock, then the CPU's state */
	if (cpu_online(rg->cpu)) {
		add_timer_on(t, rg->cpu);
		return;
	}
	/* after the CPU's last (B), which it did before going offline */
	smp_store_release(&rg->hdr->mark_ns, now);
	mod_timer(t, jiffies + rg->period);
}

/* ---- sessions -------------------------------------------------------------------- */

static struct tdmrx_session *tdmrx_cur_locked(void)
{
	return rcu_dereference_protected(tdmrx_cur,
					 lockdep_is_held(&tdmrx_lock));
}

static void tdmrx_sum_stats(const struct tdmrx_session *s,
			    struct tdmrx_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct tdmrx_ring *rg = per_cpu_ptr(s->rings, cpu);

		sum->seen += READ_ONCE(rg->st.seen);
		sum->matched += READ_ONCE(rg->st.matched);
		sum->records += READ_ONCE(rg->st.records);
		sum->dropped += READ_ONCE(rg->st.dropped);
		sum->bad_header += READ_ONCE(rg->st.bad_header);
		sum->hw_stamps += READ_ONCE(rg->st.hw_stamps);
		sum->sw_stamps += READ_ONCE(rg->st.sw_stamps);
		sum->wakeups += READ_ONCE(rg->st.wakeups);
	}
	sum->wakeups += READ_ONCE(s->timer_wakeups);
}

/*
 * End the session: unhook (no hook runs after synchronize_net()), stop the
 * timer, mark every ring detached, wake poll() and let the rings go (they
 * live on while mapped).  Under tdmrx_lock.
 */
static void tdmrx_detach_locked(struct tdmrx_session *s)
{
	struct tdmrx_area *area = s->area;
	int cpu;

	rcu_assign_pointer(tdmrx_cur, NULL);
	__dev_remove_pack(&s->pt4);
	__dev_remove_pack(&s->pt6);
	synchronize_net();
	timer_shutdown_sync(&s->timer);	/* it re-arms: none after this */
	for_each_possible_cpu(cpu)
		timer_shutdown_sync(&per_cpu_ptr(s->rings, cpu)->mark_timer);

	tdmrx_sum_stats(s, &tdmrx_last_stats);
	for_each_possible_cpu(cpu) {
		struct tdmrx_ring *rg = per_cpu_ptr(s->rings, cpu);

		WRITE_ONCE(rg->hdr->dropped, rg->st.dropped);
		smp_store_release(&rg->hdr->detached, 1);	/* after (B) */
	}
	wake_up_interruptible_all(&area->wq);

	net_disable_timestamp();
	netdev_put(s->dev, &s->dev_tracker);
	free_percpu(s->rings);
	tdmrx_area_put(area);
	kfree(s);
}

static void tdmrx_detach_if(bool (*match)(struct tdmrx_session *s, void *arg),
			    void *arg)
{
	struct tdmrx_session *s;

	mutex_lock(&tdmrx_lock);
	s = tdmrx_cur_locked();
	if (s && match(s, arg))
		tdmrx_detach_locked(s);
	mutex_unlock(&tdmrx_lock);
}

static void tdmrx_init_rings(struct tdmrx_session *s)
{
	struct tdmrx_area *area = s->area;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct tdmrx_ring *rg = per_cpu_ptr(s->rings, cpu);

		rg->hdr = tdmrx_area_hdr(area, cpu);
		rg->ucons = tdmrx_area_cons(area, cpu);
		rg->rec = (void *)rg->hdr + TDMRX_RING_DATA_OFF;
		rg->mask = area->size - 1;
		rg->cpu = cpu;
		rg->period = s->flush_jiffies;
		timer_setup(&rg->mark_timer, tdmrx_mark_timer, TIMER_PINNED);
		rg->hdr->size = area->size;
		rg->hdr->rec_size = sizeof(struct tdmrx_record);
		rg->hdr->cpu = cpu;
		rg->hdr->session = s->session;
		/* before the hook is added: nothing is hooked earlier */
		rg->hdr->mark_ns = ktime_get_ns();
	}
}

/* ---- generic netlink ----------------------------------------------------------- */

static struct netlink_range_validation tdmrx_ring_range = {
	.min = TDMRX_MIN_RING,
	.max = TDMRX_MAX_RING,
};

static struct netlink_range_validation tdmrx_flush_range = {
	.min = 100,			/* 100 us */
	.max = 10 * USEC_PER_SEC,	/* 10 s */
};

static const struct nla_policy tdmrx_port_policy[TDMRX_A_PORT + 1] = {
	[TDMRX_A_PORT]		= NLA_POLICY_MIN(NLA_U16, 1),
};

static const struct nla_policy tdmrx_policy[TDMRX_A_MAX + 1] = {
	[TDMRX_A_PAD]		= { .type = NLA_REJECT },
	[TDMRX_A_IFINDEX]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TDMRX_A_IFNAME]	= { .type = NLA_REJECT },
	[TDMRX_A_PORTS]		= NLA_POLICY_NESTED(tdmrx_port_policy),
	[TDMRX_A_PORT]		= { .type = NLA_REJECT },
	[TDMRX_A_RING_RECORDS]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&tdmrx_ring_range),
	[TDMRX_A_WATERMARK]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TDMRX_A_FLUSH_US]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&tdmrx_flush_range),
	[TDMRX_A_FORCE]		= { .type = NLA_FLAG },
	[TDMRX_A_ATTACHED]	= { .type = NLA_REJECT },
	[TDMRX_A_OWNER]		= { .type = NLA_REJECT },
	[TDMRX_A_NR_RINGS]	= { .type = NLA_REJECT },
	[TDMRX_A_RING_BYTES]	= { .type = NLA_REJECT },
	[TDMRX_A_SESSION]	= { .type = NLA_REJECT },
	[TDMRX_A_STATS]		= { .type = NLA_REJECT },
	[TDMRX_A_HW_TSTAMP]	= { .type = NLA_REJECT },
};

static struct genl_family tdmrx_genl_family;

/* Attach parameters, validated before any state changes. */
struct tdmrx_params {
	u32	ifindex;
	u32	ring;
	u32	watermark;
	u32	flush_us;
	u16	ports[TDMRX_MAX_PORTS];
	unsigned int nports;
};

static int tdmrx_parse_params(struct genl_info *info, struct tdmrx_params *p)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	struct nlattr *a;
	int rem;

	if (!tb[TDMRX_A_IFINDEX]) {
		NL_SET_ERR_MSG(extack, "TDMRX_A_IFINDEX (the device) is required");
		return -EINVAL;
	}
	if (!tb[TDMRX_A_PORTS]) {
		NL_SET_ERR_MSG(extack, "TDMRX_A_PORTS (UDP ports) is required");
		return -EINVAL;
	}
	p->ifindex = nla_get_u32(tb[TDMRX_A_IFINDEX]);
	p->nports = 0;
	nla_for_each_nested(a, tb[TDMRX_A_PORTS], rem) {
		if (nla_type(a) != TDMRX_A_PORT)
			continue;	/* the nested policy rejects others */
		if (p->nports == TDMRX_MAX_PORTS) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "too many ports (at most 16)");
			return -E2BIG;
		}
		p->ports[p->nports++] = nla_get_u16(a);
	}
	if (!p->nports) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TDMRX_A_PORTS],
				    "TDMRX_A_PORTS holds no TDMRX_A_PORT");
		return -EINVAL;
	}

	p->ring = TDMRX_DEFAULT_RING;
	if (tb[TDMRX_A_RING_RECORDS]) {
		p->ring = nla_get_u32(tb[TDMRX_A_RING_RECORDS]);
		if (!is_power_of_2(p->ring)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TDMRX_A_RING_RECORDS],
					    "ring records must be a power of two");
			return -EINVAL;
		}
	}
	p->watermark = p->ring / 4;
	if (tb[TDMRX_A_WATERMARK]) {
		p->watermark = nla_get_u32(tb[TDMRX_A_WATERMARK]);
		if (p->watermark > p->ring) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TDMRX_A_WATERMARK],
					    "watermark is larger than the ring");
			return -EINVAL;
		}
	}
	p->flush_us = TDMRX_DEFAULT_FLUSH_US;
	if (tb[TDMRX_A_FLUSH_US])
		p->flush_us = nla_get_u32(tb[TDMRX_A_FLUSH_US]);
	return 0;
}

/* State and counters, as the reply of ATTACH and GET.  Under tdmrx_lock. */
static int tdmrx_fill(struct sk_buff *msg, struct genl_info *info, u8 cmd)
{
	struct tdmrx_session *s = tdmrx_cur_locked();
	struct tdmrx_stats st;
	struct nlattr *ports;
	bool hw = false;
	unsigned int i;
	void *hdr;

	hdr = genlmsg_put_reply(msg, info, &tdmrx_genl_family, 0, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (s)
		tdmrx_sum_stats(s, &st);
	else
		st = tdmrx_last_stats;
	hw = st.hw_stamps > 0;

	if (nla_put_u8(msg, TDMRX_A_ATTACHED, !!s) ||
	    nla_put_u32(msg, TDMRX_A_SESSION, tdmrx_session_seq) ||
	    nla_put(msg, TDMRX_A_STATS, sizeof(st), &st) ||
	    nla_put_u8(msg, TDMRX_A_HW_TSTAMP, hw))
		goto cancel;
	if (!s)
		goto out;
	if (nla_put_u32(msg, TDMRX_A_IFINDEX, s->dev->ifindex) ||
	    nla_put_string(msg, TDMRX_A_IFNAME, s->dev->name) ||
	    nla_put_u32(msg, TDMRX_A_OWNER, s->owner) ||
	    nla_put_u32(msg, TDMRX_A_RING_RECORDS, s->area->size) ||
	    nla_put_u32(msg, TDMRX_A_WATERMARK, s->watermark) ||
	    nla_put_u32(msg, TDMRX_A_FLUSH_US, s->flush_us) ||
	    nla_put_u32(msg, TDMRX_A_NR_RINGS, s->area->nr_rings) ||
	    nla_put_u64_64bit(msg, TDMRX_A_RING_BYTES, s->area->ring_bytes,
			      TDMRX_A_PAD))
		goto cancel;
	ports = nla_nest_start(msg, TDMRX_A_PORTS);
	if (!ports)
		goto cancel;
	for (i = 0; i < s->nports; i++)
		if (nla_put_u16(msg, TDMRX_A_PORT, s->port_list[i]))
			goto cancel;
	nla_nest_end(msg, ports);
out:
	genlmsg_end(msg, hdr);
	return 0;
cancel:
	genlmsg_cancel(msg, hdr);
	return -EMSGSIZE;
}

static void tdmrx_set_busy(struct netlink_ext_ack *extack,
			   const struct tdmrx_session *s)
{
#ifdef NL_SET_ERR_MSG_FMT
	NL_SET_ERR_MSG_FMT(extack, "tdmrx is attached to %s by port id %u",
			   netdev_name(s->dev), s->owner);
#else
	if (extack)
		extack->_msg = s->busy_msg;
#endif
}

static void tdmrx_note_busy(struct tdmrx_session *s)
{
#ifndef NL_SET_ERR_MSG_FMT
	char *m = tdmrx_busy_msgs[s->session % TDMRX_BUSY_SLOTS];

	snprintf(m, TDMRX_BUSY_LEN - 1, "tdmrx is attached to %s by port id %u",
		 netdev_name(s->dev), s->owner);
	s->busy_msg = m;
#endif
}

/* Each ring's mark timer on its CPU; the timer of a CPU that is offline
 * waits here and goes home when the CPU comes up.  Only the timer itself
 * re-arms it after this.
 */
static void tdmrx_start_marks(struct tdmrx_session *s)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct tdmrx_ring *rg = per_cpu_ptr(s->rings, cpu);

		rg->mark_timer.expires = jiffies + rg->period;
		if (cpu_online(cpu))
			add_timer_on(&rg->mark_timer, cpu);
		else
			add_timer(&rg->mark_timer);
	}
}

/* Under RTNL and tdmrx_lock: hook s up to the device. */
static int tdmrx_start(struct tdmrx_session *s, struct genl_info *info,
		       const struct tdmrx_params *p)
{
	struct net_device *dev;

	dev = __dev_get_by_index(genl_info_net(info), p->ifindex);
	if (!dev || dev->reg_state != NETREG_REGISTERED) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[TDMRX_A_IFINDEX],
				    "no such device in this network namespace");
		return -ENODEV;
	}
	s->dev = dev;
	netdev_hold(dev, &s->dev_tracker, GFP_KERNEL);
	s->owner = info->snd_portid;
	s->owner_net = genl_info_net(info);
	s->session = ++tdmrx_session_seq;
	tdmrx_note_busy(s);
	tdmrx_init_rings(s);

	s->pt4.type = htons(ETH_P_IP);
	s->pt6.type = htons(ETH_P_IPV6);
	s->pt4.dev = dev;
	s->pt6.dev = dev;
	s->pt4.func = tdmrx_rcv;
	s->pt6.func = tdmrx_rcv;
	s->pt4.af_packet_priv = s;
	s->pt6.af_packet_priv = s;

	net_enable_timestamp();
	timer_setup(&s->timer, tdmrx_flush_timer, 0);
	mod_timer(&s->timer, jiffies + s->flush_jiffies);
	tdmrx_start_marks(s);
	rcu_assign_pointer(tdmrx_cur, s);
	dev_add_pack(&s->pt4);
	dev_add_pack(&s->pt6);
	return 0;
}

static struct tdmrx_session *tdmrx_session_alloc(const struct tdmrx_params *p)
{
	struct tdmrx_session *s;
	unsigned int i;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	s->rings = alloc_percpu(struct tdmrx_ring);
	s->area = tdmrx_area_alloc(p->ring);
	if (!s->rings || !s->area) {
		free_percpu(s->rings);
		if (s->area)
			tdmrx_area_put(s->area);
		kfree(s);
		return NULL;
	}
	for (i = 0; i < p->nports; i++) {
		if (test_and_set_bit(p->ports[i], s->ports))
			continue;	/* a duplicate */
		s->port_list[s->nports++] = p->ports[i];
	}
	s->watermark = p->watermark;
	s->flush_us = p->flush_us;
	s->flush_jiffies = max(1UL, usecs_to_jiffies(p->flush_us));
	return s;
}

static void tdmrx_session_free(struct tdmrx_session *s)
{
	free_percpu(s->rings);
	tdmrx_area_put(s->area);
	kfree(s);
}

static int tdmrx_cmd_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct tdmrx_session *s, *cur;
	struct tdmrx_params p;
	struct sk_buff *msg;
	int err;

	err = tdmrx_parse_params(info, &p);
	if (err)
		return err;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	s = tdmrx_session_alloc(&p);
	if (!s) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[TDMRX_A_RING_RECORDS],
				    "cannot allocate the rings (too many records?)");
		nlmsg_free(msg);
		return -ENOMEM;
	}

	rtnl_lock();
	mutex_lock(&tdmrx_lock);
	cur = tdmrx_cur_locked();
	if (cur) {
		tdmrx_set_busy(info->extack, cur);
		err = -EBUSY;
	} else {
		err = tdmrx_start(s, info, &p);
	}
	if (!err) {
		err = tdmrx_fill(msg, info, TDMRX_CMD_ATTACH);
		if (err)	/* no reply, no session */
			tdmrx_detach_locked(s);
	}
	mutex_unlock(&tdmrx_lock);
	rtnl_unlock();

	if (err) {
		if (!s->dev)	/* never started; else detach freed it */
			tdmrx_session_free(s);
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int tdmrx_cmd_detach(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct tdmrx_session *s;
	int err = 0;

	mutex_lock(&tdmrx_lock);
	s = tdmrx_cur_locked();
	if (!s) {
		NL_SET_ERR_MSG(extack, "tdmrx is not attached");
		err = -ENOENT;
	} else if ((s->owner != info->snd_portid ||
		    !net_eq(s->owner_net, genl_info_net(info))) &&
		   !info->attrs[TDMRX_A_FORCE]) {
		NL_SET_ERR_MSG(extack,
			       "not the owner of the session: detach needs TDMRX_A_FORCE");
		err = -EPERM;
	} else {
		tdmrx_detach_locked(s);
	}
	mutex_unlock(&tdmrx_lock);
	return err;
}

static int tdmrx_cmd_get(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&tdmrx_lock);
	err = tdmrx_fill(msg, info, TDMRX_CMD_GET);
	mutex_unlock(&tdmrx_lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static const struct genl_small_ops tdmrx_ops[] = {
	{
		.cmd	= TDMRX_CMD_ATTACH,
		.doit	= tdmrx_cmd_attach,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= TDMRX_CMD_DETACH,
		.doit	= tdmrx_cmd_detach,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= TDMRX_CMD_GET,
		.doit	= tdmrx_cmd_get,
	},
};

static struct genl_family tdmrx_genl_family __ro_after_init = {
	.name		= TDMRX_GENL_NAME,
	.version	= TDMRX_GENL_VERSION,
	.maxattr	= TDMRX_A_MAX,
	.policy		= tdmrx_policy,
	.netnsok	= true,
	.parallel_ops	= true,		/* tdmrx_lock serialises */
	.module		= THIS_MODULE,
	.small_ops	= tdmrx_ops,
	.n_small_ops	= ARRAY_SIZE(tdmrx_ops),
	.resv_start_op	= TDMRX_CMD_GET + 1,	/* strict for every command */
};

/* ---- automatic detach: owner gone, device gone, namespace gone ------------- */

static bool tdmrx_match_owner_gone(struct tdmrx_session *s, void *arg)
{
	return READ_ONCE(s->owner_gone);
}

static void tdmrx_reap(struct work_struct *work)
{
	tdmrx_detach_if(tdmrx_match_owner_gone, NULL);
}

/* Atomic context: mark the session and detach from a work item. */
static int tdmrx_netlink_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct netlink_notify *n = ptr;
	struct tdmrx_session *s;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC)
		return NOTIFY_DONE;
	rcu_read_lock();
	s = rcu_dereference(tdmrx_cur);
	if (s && s->owner == n->portid && net_eq(s->owner_net, n->net)) {
		WRITE_ONCE(s->owner_gone, true);
		schedule_work(&tdmrx_reap_work);
	}
	rcu_read_unlock();
	return NOTIFY_DONE;
}

static struct notifier_block tdmrx_netlink_nb = {
	.notifier_call = tdmrx_netlink_event,
};

static bool tdmrx_match_dev(struct tdmrx_session *s, void *arg)
{
	return s->dev == arg;
}

static int tdmrx_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	if (event == NETDEV_UNREGISTER)
		tdmrx_detach_if(tdmrx_match_dev, netdev_notifier_info_to_dev(ptr));
	return NOTIFY_DONE;
}

static struct notifier_block tdmrx_netdev_nb = {
	.notifier_call = tdmrx_netdev_event,
};

static bool tdmrx_match_net(struct tdmrx_session *s, void *arg)
{
	return net_eq(dev_net(s->dev), arg) || net_eq(s->owner_net, arg);
}

static void tdmrx_net_exit(struct net *net)
{
	tdmrx_detach_if(tdmrx_match_net, net);
}

static struct pernet_operations tdmrx_net_ops = {
	.exit = tdmrx_net_exit,
};

/* ---- /dev/tdmrx ------------------------------------------------------------------ */

static void tdmrx_vm_open(struct vm_area_struct *vma)
{
	struct tdmrx_area *area = vma->vm_private_data;

	kref_get(&area->ref);
}

static void tdmrx_vm_close(struct vm_area_struct *vma)
{
	tdmrx_area_put(vma->vm_private_data);
}

static const struct vm_operations_struct tdmrx_vm_ops = {
	.open	= tdmrx_vm_open,
	.close	= tdmrx_vm_close,
};

static int tdmrx_open(struct inode *inode, struct file *file)
{
	file->private_data = NULL;	/* the area, once mapped */
	return 0;
}

static int tdmrx_release(struct inode *inode, struct file *file)
{
	struct tdmrx_area *area = file->private_data;

	if (area)
		tdmrx_area_put(area);
	return 0;
}

/* Map the rings of the current session; one session per open file. */
static int tdmrx_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct tdmrx_session *s;
	struct tdmrx_area *area;
	int err;

	if (vma->vm_pgoff)
		return -EINVAL;
	mutex_lock(&tdmrx_lock);
	s = tdmrx_cur_locked();
	err = -ENODEV;
	if (!s)
		goto out;
	area = s->area;
	err = -EBUSY;
	if (file->private_data && file->private_data != area)
		goto out;
	err = remap_vmalloc_range(vma, area->mem, 0);
	if (err)
		goto out;
	vma->vm_ops = &tdmrx_vm_ops;
	vma->vm_private_data = area;
	kref_get(&area->ref);
	if (!file->private_data) {
		kref_get(&area->ref);
		/* pairs with the acquire in tdmrx_poll() */
		smp_store_release(&file->private_data, area);
	}
out:
	mutex_unlock(&tdmrx_lock);
	return err;
}

static __poll_t tdmrx_poll(struct file *file, poll_table *wait)
{
	/* pairs with the release in tdmrx_mmap() */
	struct tdmrx_area *area = smp_load_acquire(&file->private_data);
	__poll_t mask = 0;

	if (!area)
		return EPOLLERR;
	poll_wait(file, &area->wq, wait);
	if (tdmrx_area_pending(area))
		mask |= EPOLLIN | EPOLLRDNORM;
	/* pairs with the release in tdmrx_detach_locked() */
	else if (smp_load_acquire(&tdmrx_area_hdr(area, 0)->detached))
		mask |= EPOLLHUP;
	return mask;
}

static const struct file_operations tdmrx_fops = {
	.owner		= THIS_MODULE,
	.open		= tdmrx_open,
	.release	= tdmrx_release,
	.mmap		= tdmrx_mmap,
	.poll		= tdmrx_poll,
	.llseek		= noop_llseek,
};

static struct miscdevice tdmrx_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= TDMRX_DEV_NAME,
	.fops	= &tdmrx_fops,
	.mode	= 0600,
};

/* ---- module ------------------------------------------------------------------------ */

static bool tdmrx_match_any(struct tdmrx_session *s, void *arg)
{
	return true;
}

static int __init tdmrx_module_init(void)
{
	int err;

	err = register_pernet_subsys(&tdmrx_net_ops);
	if (err)
		return err;
	err = register_netdevice_notifier(&tdmrx_netdev_nb);
	if (err)
		goto err_pernet;
	err = netlink_register_notifier(&tdmrx_netlink_nb);
	if (err)
		goto err_netdev;
	err = misc_register(&tdmrx_misc);
	if (err)
		goto err_netlink;
	err = genl_register_family(&tdmrx_genl_family);
	if (err)
		goto err_misc;
	return 0;

err_misc:
	misc_deregister(&tdmrx_misc);
err_netlink:
	netlink_unregister_notifier(&tdmrx_netlink_nb);
err_netdev:
	unregister_netdevice_notifier(&tdmrx_netdev_nb);
err_pernet:
	unregister_pernet_subsys(&tdmrx_net_ops);
	return err;
}

static void __exit tdmrx_module_exit(void)
{
	genl_unregister_family(&tdmrx_genl_family);	/* no new sessions */
	misc_deregister(&tdmrx_misc);
	netlink_unregister_notifier(&tdmrx_netlink_nb);
	cancel_work_sync(&tdmrx_reap_work);
	tdmrx_detach_if(tdmrx_match_any, NULL);
	unregister_netdevice_notifier(&tdmrx_netdev_nb);
	unregister_pernet_subsys(&tdmrx_net_ops);
}

module_init(tdmrx_module_init);
module_exit(tdmrx_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Receive-side recorder of tdmwin test traffic");
MODULE_ALIAS_GENL_FAMILY(TDMRX_GENL_NAME);
