/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stamped test packet (struct tdm_pkt_hdr in kmod/uapi/linux/tdmrx.h)
 * in user space: tdmgen writes it, tdmstat reads it back from captured
 * frames.  A captured frame becomes the same struct tdmrx_record that
 * tdmrx.ko writes, so the statistics engine (tdm_stats.h) sees one kind of
 * input whatever the source.
 */
#ifndef TDM_PKT_H
#define TDM_PKT_H

#include <stddef.h>
#include <stdint.h>

#include "../../kmod/uapi/linux/tdmrx.h"

#define TDM_PKT_HDR_LEN	40	/* sizeof(struct tdm_pkt_hdr) */

/* The header fields in host order. */
struct tdm_pkt {
	uint8_t flags;		/* TDM_PKT_F_* */
	uint32_t sender;
	uint32_t plan_version;
	uint64_t seq;
	int64_t tx_ns;
	uint64_t sent;
};

/* Write the header at buf (at least TDM_PKT_HDR_LEN bytes). */
void tdm_pkt_encode(void *buf, const struct tdm_pkt *p);
/* Only the tx_ns field, for stamping a prepared packet just before send. */
void tdm_pkt_stamp(void *buf, int64_t tx_ns);

/*
 * Fill the header fields of rec from a UDP payload of len bytes (the
 * kernel's rules): TDMRX_F_TRUNC if shorter than the header,
 * TDMRX_F_BAD_MAGIC for a wrong magic or version, TDMRX_F_END for an end
 * marker.  Returns 0 for a valid header, -1 otherwise (rec still filled).
 */
int tdm_pkt_decode(const void *payload, size_t len, struct tdmrx_record *rec);

/*
 * The original tool's data packet (ska-sa/dc_sand udp_send.c, struct
 * UdpTestingPacket): a 4096-byte UDP payload starting with a 56-byte
 * header of native x86-64 (little-endian) fields:
 *
 *   0  i64 tv_sec, 8 i64 tv_usec   gettimeofday() just before sendto
 *  16  u64 packet index            per client, from 0, across windows
 *  24  u64 packets sent            trailing packets only: the total
 *  32  u32 trailing (+4 pad)       non-zero: an end-of-test packet
 *  40  u64 window index            the client's window, 0..n-1
 *  48  u64 client index            0..T-1
 */
#define TDM_ORIG_PAYLOAD_LEN	4096
#define TDM_ORIG_HDR_LEN	56

struct tdm_orig_pkt {
	int64_t tx_sec, tx_usec;
	uint64_t index, sent;
	uint32_t trailing;
	uint64_t window, client;
};

/*
 * Fill rec from an original-tool payload (len bytes of it captured, the
 * datagram udp_len bytes long) as tdm_pkt_decode does for ours: sender =
 * client, seq = index, tx_ns from the timeval (CLOCK_REALTIME, us),
 * plan_version 0 (the latest plan).  A trailing packet becomes an end
 * marker with sent, tx_ns = rec->rx_ns and seq 0 (the original leaves its
 * time and index unset).  A payload that is not 4096 bytes, a client
 * beyond 32 bits or a time that is no timeval is TDMRX_F_BAD_MAGIC, one
 * captured shorter than the header TDMRX_F_TRUNC; then -1.
 */
int tdm_orig_decode(const void *payload, size_t len, size_t udp_len,
		    struct tdmrx_record *rec);
/* Write the 56-byte header at buf (for tests and synthetic captures). */
void tdm_orig_encode(void *buf, const struct tdm_orig_pkt *p);

/* What a UDP payload is expected to be. */
enum tdm_payload {
	TDM_PAYLOAD_TDMG,	/* tdmgen's stamped header (TDM_PKT_MAGIC) */
	TDM_PAYLOAD_ORIG,	/* the original tool's packet */
};

/* Link types understood by tdm_frame_decode (pcap DLT values). */
#define TDM_DLT_NULL		0	/* BSD loopback: 4-byte family */
#define TDM_DLT_EN10MB		1	/* Ethernet, 802.1Q/ad tags allowed */
#define TDM_DLT_RAW		101	/* bare IPv4/IPv6 (also 12, 14) */
#define TDM_DLT_LINUX_SLL	113
#define TDM_DLT_LINUX_SLL2	276

/* Why tdm_frame_decode did not produce a record. */
enum tdm_frame_res {
	TDM_FRAME_OK = 0,
	TDM_FRAME_NOT_UDP,	/* not IPv4/IPv6 UDP, or truncated L2-L4 */
	TDM_FRAME_PORT,		/* UDP, but not to one of the ports */
	TDM_FRAME_FRAGMENT,	/* a non-first IP fragment (any, for the original) */
	TDM_FRAME_BAD,		/* UDP to the port without a valid header */
	TDM_FRAME_LINKTYPE,	/* a link type we do not know */
};

/*
 * Turn one captured frame (caplen bytes of it captured) into a record with
 * rx_ns and flags |= rx_flags (TDMRX_F_SW_TS for a pcap file).  ports:
 * nports UDP destination ports to accept, or 0 for any port (then only
 * payloads with the magic count).  The first fragment of a fragmented
 * datagram is enough: the header is at the start of the payload and len
 * comes from the UDP header.  TDM_FRAME_BAD still fills rec (flags tell
 * why), like the kernel which records such packets.
 */
enum tdm_frame_res tdm_frame_decode(int linktype, const uint8_t *data,
				    size_t caplen, int64_t rx_ns,
				    uint16_t rx_flags, const uint16_t *ports,
				    unsigned int nports,
				    struct tdmrx_record *rec);

/*
 * The same for payloads of format fmt.  With TDM_PAYLOAD_ORIG every IP
 * fragment, the first one too, is TDM_FRAME_FRAGMENT: the original's
 * datagrams count only whole (fragments are not reassembled).
 */
enum tdm_frame_res tdm_frame_decode_as(enum tdm_payload fmt, int linktype,
				       const uint8_t *data, size_t caplen,
				       int64_t rx_ns, uint16_t rx_flags,
				       const uint16_t *ports,
				       unsigned int nports,
				       struct tdmrx_record *rec);

/*
 * The internet checksum (RFC 1071) of len bytes: the ones' complement of
 * their ones' complement sum in 16-bit big-endian words, in host order.
 * Over an IPv4 header that holds its checksum it is 0.
 */
uint16_t tdm_ip_csum(const void *data, size_t len);

/* The addresses of a synthesized frame, in host order. */
struct tdm_frame_addr {
	uint8_t dst_mac[6], src_mac[6];
	uint32_t saddr, daddr;
	uint16_t sport, dport;
};

#define TDM_FRAME_HDR_LEN	42	/* Ethernet 14 + IPv4 20 + UDP 8 */

/*
 * An Ethernet II / IPv4 / UDP frame carrying the stamped header p and
 * payload_len bytes of UDP payload in all (zeros after the header), as a
 * capture of len bytes of it: the headers, with a correct IPv4 header
 * checksum (TTL 64, no options, not fragmented) and no UDP checksum, and
 * as much of the payload as fits.  Returns the frame's length on the
 * wire (without FCS), or 0 if len cannot hold the headers and p or the
 * payload does not fit in an IPv4 packet.
 */
size_t tdm_frame_encode(void *buf, size_t len, const struct tdm_frame_addr *a,
			const struct tdm_pkt *p, size_t payload_len);

/*
 * Record files: what `tdmstat capture -w` writes and `tdmstat analyze`
 * reads besides pcap: a 16-byte header ("TDMRXREC", u32 version 1,
 * u32 record size 64, host order) followed by the records as they were
 * read from the rings.
 */
#define TDM_REC_FILE_MAGIC	"TDMRXREC"
#define TDM_REC_FILE_VERSION	1
#define TDM_REC_FILE_HDR_LEN	16

void tdm_rec_file_header(uint8_t out[TDM_REC_FILE_HDR_LEN]);
/* 0 if hdr is a record file header we can read, else -1 with err. */
int tdm_rec_file_check(const uint8_t *hdr, size_t len, char *err,
		       size_t errlen);

#endif
