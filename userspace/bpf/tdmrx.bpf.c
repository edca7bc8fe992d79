// SPDX-License-Identifier: GPL-2.0
/*
 * tdmrx.bpf.c: the receive recorder of tdmwin test traffic as a tc ingress
 * program, for receivers that cannot load tdmrx.ko (lockdown, signed
 * kernels, managed nodes).  It writes the record of tdmrx.ko
 * (kmod/uapi/linux/tdmrx.h) into a BPF ring buffer, so that everything
 * after the rings (libtdm's merge, tdmstat) is the same for both.
 *
 * It reads only struct __sk_buff, whose field accesses the verifier
 * rewrites for the running kernel, and the packet through
 * bpf_skb_load_bytes(): no kernel structure is read directly, so one object
 * loads on 6.1 and 6.12 without relocations.
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
 * hooked at the mark or after.  A tc program runs with BH off, so one CPU
 * never interleaves two of them: successive marks of a CPU never go back.
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

/* The stamped header at off (the UDP payload) into r; counts bad ones. */
static __always_inline void parse_payload(struct __sk_buff *skb, __u32 off,
					  struct tdmrx_record *r,
					  struct tdmrx_stats *st)
{
	struct tdm_pkt_hdr h;

	if (r->len < sizeof(h) || bpf_skb_load_bytes(skb, off, &h, sizeof(h))) {
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
static __always_inline __u32 match(struct __sk_buff *skb, struct tdmrx_record *r)
{
	__u32 nh = ETH_HLEN, off, end, len = skb->len - ETH_HLEN;
	struct udphdr uh;

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr iph;

		if (bpf_skb_load_bytes(skb, nh, &iph, sizeof(iph)) ||
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

		if (bpf_skb_load_bytes(skb, nh, &ip6h, sizeof(ip6h)) ||
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
	if (skb->gso_size || end > len || end < off)
		end = len;
	if (bpf_skb_load_bytes(skb, nh + off, &uh, sizeof(uh)))
		return 0;
	if (!port_on(bpf_ntohs(uh.dest)))
		return 0;
	r->sport = bpf_ntohs(uh.source);
	r->dport = bpf_ntohs(uh.dest);
	off += sizeof(uh);
	r->len = end > off ? end - off : 0;
	return nh + off;
}

static __always_inline void stamp(struct __sk_buff *skb, struct tdmrx_record *r,
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
		if (t) {
			r->flags |= TDMRX_F_SW_TS;
			st->sw_stamps++;
		} else {
			t = (__s64)bpf_ktime_get_tai_ns() - tai_offset_ns;
			r->flags |= TDMRX_F_NOW_TS;
		}
	}
	r->rx_ns = t;
}

SEC("tc")
int tdmrx_bpf(struct __sk_buff *skb)
{
	struct tdmrx_record r = { .gso_segs = 1 };
	struct tdmrx_bpf_mark *mk;
	struct tdmrx_stats *st;
	struct tdmrx_record *e;
	__u32 zero = 0, cpu, idx, off;
	void *rb;
	__s64 hook;

	if (skb->protocol != bpf_htons(ETH_P_IP) &&
	    skb->protocol != bpf_htons(ETH_P_IPV6))
		return TC_ACT_UNSPEC;
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return TC_ACT_UNSPEC;
	st->seen++;
	off = match(skb, &r);
	if (!off || !bound_to_owner())
		return TC_ACT_UNSPEC;
	cpu = bpf_get_smp_processor_id();
	mk = bpf_map_lookup_elem(&marks, &cpu);
	if (mk)
		__atomic_exchange_n(&mk->in_hook, 1, __ATOMIC_SEQ_CST);	/* before the clock */
	hook = (__s64)bpf_ktime_get_ns();
	st->matched++;
	stamp(skb, &r, st);
	if (skb->gso_size) {
		r.flags |= TDMRX_F_GSO;
		r.gso_segs = skb->gso_segs;
	}
	r.cpu = cpu;
	parse_payload(skb, off, &r, st);

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
		__atomic_exchange_n(&mk->mark_ns, hook, __ATOMIC_SEQ_CST);	/* after the submit */
		__atomic_exchange_n(&mk->in_hook, 0, __ATOMIC_SEQ_CST);	/* after the mark */
	}
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
