// SPDX-License-Identifier: GPL-2.0
/*
 * The stamped test packet: encoding for tdmgen, decoding of the header and
 * of whole captured frames for tdmstat.  Everything is read with explicit
 * byte loads: a capture may put the payload at any alignment.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <netinet/udp.h>

#include "tdm_pkt.h"

_Static_assert(sizeof(struct tdm_pkt_hdr) == TDM_PKT_HDR_LEN,
	       "tdm_pkt_hdr is 40 bytes on the wire");
_Static_assert(sizeof(struct tdmrx_record) == 64, "records are 64 bytes");

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

void tdm_pkt_encode(void *buf, const struct tdm_pkt *p)
{
	uint8_t *b = buf;

	put32(b + 0, TDM_PKT_MAGIC);
	b[4] = TDM_PKT_VERSION;
	b[5] = p->flags;
	put16(b + 6, TDM_PKT_HDR_LEN);
	put32(b + 8, p->sender);
	put32(b + 12, p->plan_version);
	put64(b + 16, p->seq);
	put64(b + 24, (uint64_t)p->tx_ns);
	put64(b + 32, p->sent);
}

void tdm_pkt_stamp(void *buf, int64_t tx_ns)
{
	put64((uint8_t *)buf + 24, (uint64_t)tx_ns);
}

int tdm_pkt_decode(const void *payload, size_t len, struct tdmrx_record *rec)
{
	const uint8_t *b = payload;

	if (len < TDM_PKT_HDR_LEN) {
		rec->flags |= TDMRX_F_TRUNC;
		return -1;
	}
	if (get32(b) != TDM_PKT_MAGIC || b[4] != TDM_PKT_VERSION) {
		rec->flags |= TDMRX_F_BAD_MAGIC;
		return -1;
	}
	if (b[5] & TDM_PKT_F_END)
		rec->flags |= TDMRX_F_END;
	rec->sender = get32(b + 8);
	rec->plan_version = get32(b + 12);
	rec->seq = get64(b + 16);
	rec->tx_ns = (int64_t)get64(b + 24);
	rec->sent = get64(b + 32);
	return 0;
}

/* ---- the original tool's packet ---------------------------------------- */

/* Native (x86-64, little-endian) loads and stores of the original's struct. */
static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

int tdm_orig_decode(const void *payload, size_t len, size_t udp_len,
		    struct tdmrx_record *rec)
{
	const uint8_t *b = payload;
	int64_t sec, usec;
	uint64_t client;

	if (udp_len != TDM_ORIG_PAYLOAD_LEN) {
		rec->flags |= TDMRX_F_BAD_MAGIC;
		return -1;
	}
	if (len < TDM_ORIG_HDR_LEN) {
		rec->flags |= TDMRX_F_TRUNC;
		return -1;
	}
	client = le64(b + 48);
	if (client > UINT32_MAX) {
		rec->flags |= TDMRX_F_BAD_MAGIC;
		return -1;
	}
	rec->sender = (uint32_t)client;
	rec->plan_version = 0;
	if (le64(b + 32) & 0xffffffffu) {
		/* Trailing packet: only the count and the client are set;
		 * its time and index are whatever the sender's stack held.
		 */
		rec->flags |= TDMRX_F_END;
		rec->sent = le64(b + 24);
		rec->seq = 0;
		rec->tx_ns = rec->rx_ns;
		return 0;
	}
	sec = (int64_t)le64(b);
	usec = (int64_t)le64(b + 8);
	if (usec < 0 || usec >= 1000000 || sec < 0 ||
	    sec > INT64_MAX / 1000000000 - 1) {
		rec->flags |= TDMRX_F_BAD_MAGIC;
		return -1;
	}
	rec->tx_ns = sec * 1000000000 + usec * 1000;
	rec->seq = le64(b + 16);
	rec->sent = 0;
	return 0;
}

void tdm_orig_encode(void *buf, const struct tdm_orig_pkt *p)
{
	uint8_t *b = buf;

	memset(b, 0, TDM_ORIG_HDR_LEN);
	put_le64(b, (uint64_t)p->tx_sec);
	put_le64(b + 8, (uint64_t)p->tx_usec);
	put_le64(b + 16, p->index);
	put_le64(b + 24, p->sent);
	put_le64(b + 32, p->trailing);	/* u32 + 4 bytes of padding */
	put_le64(b + 40, p->window);
	put_le64(b + 48, p->client);
}

/* ---- frames -------------------------------------------------------------- */

#define ETH_P_IPV4	0x0800
#define ETH_P_IPV6_	0x86dd
#define ETH_P_8021Q_	0x8100
#define ETH_P_8021AD_	0x88a8

static bool port_ok(uint16_t dport, const uint16_t *ports, unsigned int n)
{
	unsigned int i;

	if (!n)
		return true;
	for (i = 0; i < n; i++)
		if (ports[i] == dport)
			return true;
	return false;
}

/* FNV-1a over the IPv6 source: the record has 32 bits for it. */
static uint32_t hash_v6(const uint8_t *a)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ a[i]) * 16777619u;
	return h;
}

/* What the frame decoder looks for. */
struct want {
	enum tdm_payload fmt;
	const uint16_t *ports;
	unsigned int nports;
};

static int payload_decode(const struct want *wt, const uint8_t *p,
			  size_t len, size_t ulen, struct tdmrx_record *rec)
{
	if (wt->fmt == TDM_PAYLOAD_ORIG)
		return tdm_orig_decode(p, len, ulen, rec);
	return tdm_pkt_decode(p, len, rec);
}

static enum tdm_frame_res udp(const uint8_t *p, size_t avail, bool first_frag,
			      bool more_frags, const struct want *wt,
			      struct tdmrx_record *rec)
{
	size_t ulen, plen;

	/* The original's datagrams are only counted whole (we do not
	 * reassemble); tdmgen's header is all in the first fragment.
	 */
	if (!first_frag || (more_frags && wt->fmt == TDM_PAYLOAD_ORIG))
		return TDM_FRAME_FRAGMENT;
	if (avail < 8)
		return TDM_FRAME_NOT_UDP;
	rec->sport = get16(p);
	rec->dport = get16(p + 2);
	ulen = get16(p + 4);
	if (ulen < 8)
		return TDM_FRAME_NOT_UDP;
	if (!port_ok(rec->dport, wt->ports, wt->nports))
		return TDM_FRAME_PORT;
	rec->len = ulen - 8;
	plen = avail - 8 < ulen - 8 ? avail - 8 : ulen - 8;
	if (payload_decode(wt, p + 8, plen, ulen - 8, rec))
		return wt->nports ? TDM_FRAME_BAD : TDM_FRAME_PORT;
	return TDM_FRAME_OK;
}

static enum tdm_frame_res ipv4(const uint8_t *p, size_t avail,
			       const struct want *wt, struct tdmrx_record *rec)
{
	size_t ihl, tot;
	uint16_t frag;

	if (avail < 20 || (p[0] >> 4) != 4)
		return TDM_FRAME_NOT_UDP;
	ihl = (size_t)(p[0] & 15) * 4;
	tot = get16(p + 2);
	if (ihl < 20 || tot < ihl || avail < ihl || p[9] != IPPROTO_UDP)
		return TDM_FRAME_NOT_UDP;
	if (avail > tot)
		avail = tot;
	frag = get16(p + 6);
	rec->saddr = get32(p + 12);
	return udp(p + ihl, avail - ihl, (frag & 0x1fff) == 0, frag & 0x2000,
		   wt, rec);
}

static enum tdm_frame_res ipv6(const uint8_t *p, size_t avail,
			       const struct want *wt, struct tdmrx_record *rec)
{
	size_t off = 40, plen;
	uint8_t nh;
	bool first = true, more = false;
	int hops;

	if (avail < 40 || (p[0] >> 4) != 6)
		return TDM_FRAME_NOT_UDP;
	plen = get16(p + 4);
	if (avail > 40 + plen)
		avail = 40 + plen;
	nh = p[6];
	rec->saddr = hash_v6(p + 8);
	rec->flags |= TDMRX_F_IPV6;
	/* Skip extension headers: hop-by-hop, routing, fragment, dest opts. */
	for (hops = 0; hops < 8 && nh != IPPROTO_UDP; hops++) {
		if (avail < off + 8)
			return TDM_FRAME_NOT_UDP;
		if (nh == 44) {
			if (get16(p + off + 2) & 0xfff8)
				first = false;
			if (get16(p + off + 2) & 1)
				more = true;
			nh = p[off];
			off += 8;
		} else if (nh == 0 || nh == 43 || nh == 60) {
			nh = p[off];
			off += ((size_t)p[off + 1] + 1) * 8;
		} else {
			return TDM_FRAME_NOT_UDP;
		}
	}
	if (nh != IPPROTO_UDP || avail < off)
		return TDM_FRAME_NOT_UDP;
	return udp(p + off, avail - off, first, more, wt, rec);
}

static enum tdm_frame_res l3(uint16_t proto, const uint8_t *p, size_t avail,
			     const struct want *wt, struct tdmrx_record *rec)
{
	if (proto == ETH_P_IPV4)
		return ipv4(p, avail, wt, rec);
	if (proto == ETH_P_IPV6_)
		return ipv6(p, avail, wt, rec);
	return TDM_FRAME_NOT_UDP;
}

enum tdm_frame_res tdm_frame_decode(int linktype, const uint8_t *data,
				    size_t caplen, int64_t rx_ns,
				    uint16_t rx_flags, const uint16_t *ports,
				    unsigned int nports,
				    struct tdmrx_record *rec)
{
	return tdm_frame_decode_as(TDM_PAYLOAD_TDMG, linktype, data, caplen,
				   rx_ns, rx_flags, ports, nports, rec);
}

enum tdm_frame_res tdm_frame_decode_as(enum tdm_payload fmt, int linktype,
				       const uint8_t *data, size_t caplen,
				       int64_t rx_ns, uint16_t rx_flags,
				       const uint16_t *ports,
				       unsigned int nports,
				       struct tdmrx_record *rec)
{
	const struct want wt = { fmt, ports, nports };
	uint16_t proto;
	size_t off;

	memset(rec, 0, sizeof(*rec));
	rec->rx_ns = rx_ns;
	rec->flags = rx_flags;
	rec->gso_segs = 1;
	switch (linktype) {
	case TDM_DLT_EN10MB:
		if (caplen < 14)
			return TDM_FRAME_NOT_UDP;
		proto = get16(data + 12);
		off = 14;
		while ((proto == ETH_P_8021Q_ || proto == ETH_P_8021AD_) &&
		       caplen >= off + 4) {
			proto = get16(data + off + 2);
			off += 4;
		}
		break;
	case TDM_DLT_LINUX_SLL:
		if (caplen < 16)
			return TDM_FRAME_NOT_UDP;
		proto = get16(data + 14);
		off = 16;
		break;
	case TDM_DLT_LINUX_SLL2:
		if (caplen < 20)
			return TDM_FRAME_NOT_UDP;
		proto = get16(data);
		off = 20;
		break;
	case TDM_DLT_NULL: {
		uint32_t fam;

		if (caplen < 4)
			return TDM_FRAME_NOT_UDP;
		memcpy(&fam, data, 4);
		if (fam > 0xffff)
			fam = __builtin_bswap32(fam);
		proto = fam == 2 ? ETH_P_IPV4 :
			(fam == 24 || fam == 28 || fam == 30) ? ETH_P_IPV6_ : 0;
		off = 4;
		break;
	}
	case TDM_DLT_RAW:
	case 12:
	case 14:
		if (caplen < 1)
			return TDM_FRAME_NOT_UDP;
		proto = (data[0] >> 4) == 6 ? ETH_P_IPV6_ : ETH_P_IPV4;
		off = 0;
		break;
	default:
		return TDM_FRAME_LINKTYPE;
	}
	if (off > caplen)
		return TDM_FRAME_NOT_UDP;
	return l3(proto, data + off, caplen - off, &wt, rec);
}

/* ---- synthesized frames -------------------------------------------------- */

uint16_t tdm_ip_csum(const void *data, size_t len)
{
	const uint8_t *b = data;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get16(b + i);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t tdm_frame_encode(void *buf, size_t len, const struct tdm_frame_addr *a,
			const struct tdm_pkt *p, size_t payload_len)
{
	struct ether_header eth = { .ether_type = htons(ETHERTYPE_IP) };
	struct iphdr ip = {
		.version = 4,
		.ihl = sizeof(ip) / 4,
		.ttl = 64,
		.protocol = IPPROTO_UDP,
		.saddr = htonl(a->saddr),
		.daddr = htonl(a->daddr),
	};
	struct udphdr udp = {
		.source = htons(a->sport),
		.dest = htons(a->dport),
	};
	size_t wire = sizeof(eth) + sizeof(ip) + sizeof(udp) + payload_len;
	uint8_t *b = buf;

	_Static_assert(sizeof(eth) + sizeof(ip) + sizeof(udp) ==
		       TDM_FRAME_HDR_LEN, "Ethernet, IPv4 and UDP headers");
	if (len < TDM_FRAME_HDR_LEN + TDM_PKT_HDR_LEN ||
	    payload_len < TDM_PKT_HDR_LEN ||
	    payload_len > 0xffff - sizeof(ip) - sizeof(udp))
		return 0;
	memcpy(eth.ether_dhost, a->dst_mac, ETH_ALEN);
	memcpy(eth.ether_shost, a->src_mac, ETH_ALEN);
	ip.tot_len = htons((uint16_t)(sizeof(ip) + sizeof(udp) + payload_len));
	ip.check = htons(tdm_ip_csum(&ip, sizeof(ip)));
	udp.len = htons((uint16_t)(sizeof(udp) + payload_len));
	if (len > wire)
		len = wire;
	memset(b, 0, len);
	memcpy(b, &eth, sizeof(eth));
	memcpy(b + sizeof(eth), &ip, sizeof(ip));
	memcpy(b + sizeof(eth) + sizeof(ip), &udp, sizeof(udp));
	tdm_pkt_encode(b + TDM_FRAME_HDR_LEN, p);
	return wire;
}

/* ---- record files ------------------------------------------------------- */

void tdm_rec_file_header(uint8_t out[TDM_REC_FILE_HDR_LEN])
{
	uint32_t v = TDM_REC_FILE_VERSION, sz = sizeof(struct tdmrx_record);

	memcpy(out, TDM_REC_FILE_MAGIC, 8);
	memcpy(out + 8, &v, 4);
	memcpy(out + 12, &sz, 4);
}

int tdm_rec_file_check(const uint8_t *hdr, size_t len, char *err,
		       size_t errlen)
{
	uint32_t v, sz;

	if (len < TDM_REC_FILE_HDR_LEN || memcmp(hdr, TDM_REC_FILE_MAGIC, 8)) {
		if (err && errlen)
			snprintf(err, errlen, "not a tdmstat record file");
		return -1;
	}
	memcpy(&v, hdr + 8, 4);
	memcpy(&sz, hdr + 12, 4);
	if (v != TDM_REC_FILE_VERSION || sz != sizeof(struct tdmrx_record)) {
		if (err && errlen)
			snprintf(err, errlen,
				 "record file version %u with %u-byte records (this tdmstat reads version %u, %zu bytes)",
				 v, sz, TDM_REC_FILE_VERSION,
				 sizeof(struct tdmrx_record));
		return -1;
	}
	return 0;
}
