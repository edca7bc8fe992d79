// SPDX-License-Identifier: GPL-2.0
/*
 * tdmrx.bpf.c: the receive recorder of tdmwin test traffic as BPF, for
 * receivers that cannot load tdmrx.ko (lockdown, signed kernels, managed
 * nodes) and for those whose packets never reach tdmrx's hook (an AF_XDP
 * receiver takes them at the XDP hook).  It writes the record of tdmrx.ko
 * (kmod/uapi/linux/tdmrx.h) into a BPF ring buffer, so that everything
 * after the rings (libtdm's merge, tdmstat) is the same for all.
 *
 * Three programs, one record-writing path (record()) and one set of maps:
 * tdmrx_bpf at tc ingress (capture --recorder bpf), tdmrx_xdp at the XDP
 * hook through libxdp's dispatcher, beside other XDP programs (--recorder
 * xdp), and tdmrx_xdp_hw, the same loaded device-bound so that it can ask
 * the driver for the NIC's RX stamp (--recorder xdp-hw).  The loader
 * (libtdm's tdm_rxbpf.c) loads one of them.  The XDP programs pass every
 * frame on (XDP_PASS): the dispatcher then runs the next program, an
 * AF_XDP receiver's, or the stack takes the frame.
 *
 * They read only struct __sk_buff and struct xdp_md, whose field accesses
 * the verifier rewrites for the running kernel, and the packet through
 * bpf_skb_load_bytes() / bpf_xdp_load_bytes(): no kernel structure is read
 * directly, so one object loads on 6.1 and 6.12 without relocations.
 *
 * Rings: `rings` is an array of BPF ring buffers, one per CPU (or one
 * shared, nr_rings == 1); the loader (libtdm's tdm_rxbpf.c) sizes and fills
 * it.  A reservation that fails (ring full) is counted in the per-CPU
 * `stats` map (struct tdmrx_stats.dropped): records + dropped = matched.
 *
 * Watermarks (the uapi header, "The receive watermark"): on a matching
 * packet the program sets marks[cpu].in_hook, then takes the
 * CLOCK_MONOTONIC time, and after the record is submitted (or dropped)
 * stores that time into marks[cpu].mark_ns and clears in_hook, each with
 * an atomic exchange (a full barrier: ordered after the submit's release
 * of the ring's producer position).  The reader loads the marks (acquire)
 * before it consumes: every record of that CPU it will find later was
 * hooked at the mark or after.  A tc or XDP program runs with BH off, so one
 * CPU never interleaves two of them: successive marks of a CPU never go
 * back.
 *
 * A quiet CPU: tdmrx.ko's pinned timer moves the mark of a CPU without
 * traffic; here the reader does it.  It reads the clock (T), then in_hook:
 * if it is clear, a hook of that CPU either finished (its record is in the
 * ring, visible to the consume that follows) or has not set in_hook yet,
 * and then reads the clock after T: T is a valid mark for that CPU.  The
 * reader takes T less a margin (tdm_rxbpf.c, RXBPF_QUIET_NS) for packets
 * still waiting in the CPU's backlog.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "../../kmod/uapi/linux/tdmrx.h"
#include "tdmrx_bpf.h"

/* Set by the loader before load (read-only after). */
const volatile __u64 port_map[TDMRX_BPF_PORT_WORDS];	/* a bit per port */
const volatile __u32 nr_rings = 1;	/* 1: one shared ring */
const volatile __u32 wake_bytes;	/* wake the reader at this fill */

/* Written by the loader while running: TAI - REALTIME, for the stamp of a
 * packet the stack did not stamp (TDMRX_F_NOW_TS is REALTIME, and BPF has
 * only the TAI clock).
 */
__s64 tai_offset_ns;

/* The XDP RX metadata kfunc (6.3 on): weak, so that the object loads where
 * the kernel has none; only tdmrx_xdp_hw calls it, and the loader loads
 * that program only where the kernel has it (tdm_rxbpf.c).
 */
extern int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx,
					 __u64 *timestamp) __ksym __weak;

struct ringbuf {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TDMRX_BPF_MIN_RING_BYTES);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);		/* nr_rings, set by the loader */
	__type(key, __u32);
	__array(values, struct ringbuf);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tdmrx_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* possible CPUs, set by the loader */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct tdmrx_bpf_mark);
} marks SEC(".maps");

/* The owner tag (tdmrx_bpf.h): who attached this program, so that the next
 * capture or doctor can tell a live owner from one that is gone.  The
 * program looks it up (bound_to_owner()), or the kernel would not list the
 * map among the program's maps, where the loader finds it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tdmrx_bpf_owner);
} tdmrx_owner SEC(".maps");

static __always_inline int bound_to_owner(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&tdmrx_owner, &zero) != NULL;
}

static __always_inline int port_on(__u16 port)
{
	return !!(port_map[port / 64] & (1ULL << (port % 64)));
}

/*
 * The packet, as each hook sees it: the record-writing code below is one
 * for both hooks, and reads the packet only through load() and these
 * fields.  `hook` is a constant in each program, so the compiler keeps the
 * one branch that hook can take (a tc program never calls an XDP helper).
 */
enum hook { HOOK_TC, HOOK_XDP, HOOK_XDP_HW };

struct pkt {
	void *ctx;		/* struct __sk_buff or struct xdp_md */
	__u32 len;		/* from the MAC header */
	__u16 proto;		/* the EtherType, network order */
	__u16 gso;		/* a GSO/GRO skb (tc only) */
	__u32 gso_segs;		/* its segments */
};

static __always_inline long load(const struct pkt *p, enum hook hook,
				 __u32 off, void *to, __u32 len)
{
	if (hook == HOOK_TC)
		return bpf_skb_load_bytes(p->ctx, off, to, len);
	return bpf_xdp_load_bytes(p->ctx, off, to, len);
}

/* The stamped header at off (the UDP payload) into r; counts bad ones. */
static __always_inline void parse_payload(const struct pkt *p, enum hook hook,
					  __u32 off, struct tdmrx_record *r,
					  struct tdmrx_stats *st)
{
	struct tdm_pkt_hdr h;

	if (r->len < sizeof(h) || load(p, hook, off, &h, sizeof(h))) {
		r->flags |= TDMRX_F_TRUNC;
		st->bad_header++;
		return;
	}
	if (h.magic != bpf_htonl(TDM_PKT_MAGIC) || h.version != TDM_PKT_VERSION) {
		r->flags |= TDMRX_F_BAD_MAGIC;
		st->bad_header++;
		return;
	}
	r->tx_ns = (__s64)bpf_be64_to_cpu(h.tx_ns);
	r->seq = bpf_be64_to_cpu(h.seq);
	r->sent = bpf_be64_to_cpu(h.sent);
	r->sender = bpf_ntohl(h.sender);
	r->plan_version = bpf_ntohl(h.plan_version);
	if (h.flags & TDM_PKT_F_END)
		r->flags |= TDMRX_F_END;
}

/*
 * Match as tdmrx_match() does: IPv4 (first fragment) or IPv6 with UDP as
 * the first next header, to one of the ports.  Returns the offset of the
 * UDP payload from the MAC header, 0 if the packet is not ours.
 */
static __always_inline __u32 match(const struct pkt *p, enum hook hook,
				   struct tdmrx_record *r)
{
	__u32 nh = ETH_HLEN, off, end, len = p->len - ETH_HLEN;
	struct udphdr uh;

	if (p->proto == bpf_htons(ETH_P_IP)) {
		struct iphdr iph;

		if (load(p, hook, nh, &iph, sizeof(iph)) ||
		    iph.version != 4 || iph.ihl < 5 ||
		    iph.protocol != IPPROTO_UDP ||
		    (iph.frag_off & bpf_htons(0x1fff)))
			return 0;
		off = iph.ihl * 4;
		end = bpf_ntohs(iph.tot_len);
		r->saddr = bpf_ntohl(iph.saddr);
	} else {
		struct ipv6hdr ip6h;
		__u32 hash;

		if (load(p, hook, nh, &ip6h, sizeof(ip6h)) ||
		    ip6h.version != 6 || ip6h.nexthdr != IPPROTO_UDP)
			return 0;
		off = sizeof(ip6h);
		end = off + bpf_ntohs(ip6h.payload_len);
		/* ipv6_addr_hash(): the xor of the four words */
		hash = ip6h.saddr.in6_u.u6_addr32[0] ^ ip6h.saddr.in6_u.u6_addr32[1] ^
		       ip6h.saddr.in6_u.u6_addr32[2] ^ ip6h.saddr.in6_u.u6_addr32[3];
		r->saddr = bpf_ntohl(hash);
		r->flags |= TDMRX_F_IPV6;
	}
	/* GRO rewrites the lengths; padding may follow a short frame. */
	if (p->gso || end > len || end < off)
		end = len;
	if (load(p, hook, nh + off, &uh, sizeof(uh)))
		return 0;
	if (!port_on(bpf_ntohs(uh.dest)))
		return 0;
	r->sport = bpf_ntohs(uh.source);
	r->dport = bpf_ntohs(uh.dest);
	off += sizeof(uh);
	r->len = end > off ? end - off : 0;
	return nh + off;
}

/* No stamp of the NIC's nor the stack's: the time at the hook, REALTIME. */
static __always_inline void stamp_now(struct tdmrx_record *r)
{
	r->rx_ns = (__s64)bpf_ktime_get_tai_ns() - tai_offset_ns;
	r->flags |= TDMRX_F_NOW_TS;
}

static __always_inline void stamp_skb(struct __sk_buff *skb,
				      struct tdmrx_record *r,
				      struct tdmrx_stats *st)
{
	__s64 t = (__s64)skb->hwtstamp;

	if (t) {
		r->flags |= TDMRX_F_HW_TS;
		st->hw_stamps++;
	} else {
		/* 0 unless the stack stamps (a socket asked for RX stamps,
		 * tdm_rxbpf.c holds one), and 0 for a delivery time that a
		 * forwarded skb still carries (the verifier's rewrite).
		 */
		t = (__s64)skb->tstamp;
		if (!t) {
			stamp_now(r);
			return;
		}
		r->flags |= TDMRX_F_SW_TS;
		st->sw_stamps++;
	}
	r->rx_ns = t;
}

/*
 * At the XDP hook the stack has stamped nothing yet.  The device-bound
 * program asks the driver for the NIC's stamp of the frame (the XDP RX
 * metadata kfunc, 6.3 on; a driver without it, or a frame it did not
 * stamp, answers an error); anything else is stamped at the hook.
 */
static __always_inline void stamp_xdp(struct xdp_md *ctx, enum hook hook,
				      struct tdmrx_record *r,
				      struct tdmrx_stats *st)
{
	__u64 t = 0;

	if (hook == HOOK_XDP_HW &&
	    !bpf_xdp_metadata_rx_timestamp(ctx, &t) && t) {
		r->rx_ns = (__s64)t;
		r->flags |= TDMRX_F_HW_TS;
		st->hw_stamps++;
		return;
	}
	stamp_now(r);
}

/*
 * One packet: match it, and if it is ours write its record into this
 * CPU's ring (or count the drop), between the watermark's in_hook and
 * mark (the file's comment).  The same for every hook.
 */
static __always_inline void record(const struct pkt *p, enum hook hook)
{
	struct tdmrx_record r = { .gso_segs = 1 };
	struct tdmrx_bpf_mark *mk;
	struct tdmrx_stats *st;
	struct tdmrx_record *e;
	__u32 zero = 0, cpu, idx, off;
	void *rb;
	__s64 t_hook;

	if (p->proto != bpf_htons(ETH_P_IP) && p->proto != bpf_htons(ETH_P_IPV6))
		return;
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return;
	st->seen++;
	off = match(p, hook, &r);
	if (!off || !bound_to_owner())
		return;
	cpu = bpf_get_smp_processor_id();
	mk = bpf_map_lookup_elem(&marks, &cpu);
	if (mk)
		__atomic_exchange_n(&mk->in_hook, 1, __ATOMIC_SEQ_CST);	/* before the clock */
	t_hook = (__s64)bpf_ktime_get_ns();
	st->matched++;
	if (hook == HOOK_TC)
		stamp_skb(p->ctx, &r, st);
	else
		stamp_xdp(p->ctx, hook, &r, st);
	if (p->gso) {
		r.flags |= TDMRX_F_GSO;
		r.gso_segs = p->gso_segs;
	}
	r.cpu = cpu;
	parse_payload(p, hook, off, &r, st);

	idx = nr_rings == 1 ? 0 : cpu;
	rb = bpf_map_lookup_elem(&rings, &idx);
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (e) {
		__u64 flags = BPF_RB_NO_WAKEUP;

		*e = r;
		if (wake_bytes &&
		    bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) + sizeof(*e) + 8 >=
		    wake_bytes)
			flags = BPF_RB_FORCE_WAKEUP;
		bpf_ringbuf_submit(e, flags);
		st->records++;
	} else {
		st->dropped++;
	}
	if (mk) {
		__atomic_exchange_n(&mk->mark_ns, t_hook, __ATOMIC_SEQ_CST);	/* after the submit */
		__atomic_exchange_n(&mk->in_hook, 0, __ATOMIC_SEQ_CST);	/* after the mark */
	}
}

SEC("tc")
int tdmrx_bpf(struct __sk_buff *skb)
{
	struct pkt p = {
		.ctx = skb,
		.len = skb->len,
		.proto = (__u16)skb->protocol,
		.gso = !!skb->gso_size,
		.gso_segs = skb->gso_segs,
	};

	record(&p, HOOK_TC);
	return TC_ACT_UNSPEC;
}

/* The XDP hook: the EtherType from the frame itself (no VLAN tag is
 * followed, as tdmrx.ko's hook sees no tagged frame of ours either).
 */
static __always_inline int xdp_record(struct xdp_md *ctx, enum hook hook)
{
	struct pkt p = { .ctx = ctx, .len = (__u32)bpf_xdp_get_buff_len(ctx) };
	struct ethhdr eth;

	if (p.len > ETH_HLEN &&
	    !bpf_xdp_load_bytes(ctx, 0, &eth, sizeof(eth))) {
		p.proto = eth.h_proto;
		record(&p, hook);
	}
	return XDP_PASS;
}

/* Through libxdp's dispatcher, beside other XDP programs (an AF_XDP
 * receiver's): it runs first and passes every frame on.
 */
SEC("xdp")
int tdmrx_xdp(struct xdp_md *ctx)
{
	return xdp_record(ctx, HOOK_XDP);
}

/* Device-bound (the kfunc needs it), alone on the device. */
SEC("xdp")
int tdmrx_xdp_hw(struct xdp_md *ctx)
{
	return xdp_record(ctx, HOOK_XDP_HW);
}

char LICENSE[] SEC("license") = "GPL";
