// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdm_pkt: the stamped header round trip, and captured
 * frames (Ethernet, VLAN, Linux cooked, raw IP, IPv6, fragments, short and
 * foreign packets) turned into records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tdm_pkt.h"

static const struct tdm_pkt hdr = {
	.sender = 3, .plan_version = 12, .seq = 0x0102030405060708ULL,
	.tx_ns = 1700000000123456789LL,
};

static void test_header(void **state)
{
	struct tdmrx_record r = { 0 };
	uint8_t b[64];

	(void)state;
	tdm_pkt_encode(b, &hdr);
	/* Big-endian on the wire, field by field. */
	assert_int_equal(b[0], 'T');
	assert_int_equal(b[3], 'G');
	assert_int_equal(b[4], TDM_PKT_VERSION);
	assert_int_equal(b[7], 40);
	assert_int_equal(b[11], 3);
	assert_int_equal(b[16], 1);
	assert_int_equal(b[23], 8);
	assert_int_equal(tdm_pkt_decode(b, sizeof(b), &r), 0);
	assert_int_equal(r.sender, 3);
	assert_int_equal(r.plan_version, 12);
	assert_int_equal(r.seq, hdr.seq);
	assert_int_equal(r.tx_ns, hdr.tx_ns);
	assert_int_equal(r.flags, 0);
	tdm_pkt_stamp(b, 42);
	assert_int_equal(tdm_pkt_decode(b, sizeof(b), &r), 0);
	assert_int_equal(r.tx_ns, 42);

	memset(&r, 0, sizeof(r));
	assert_int_equal(tdm_pkt_decode(b, 39, &r), -1);
	assert_int_equal(r.flags, TDMRX_F_TRUNC);
	memset(&r, 0, sizeof(r));
	b[4] = 2;
	assert_int_equal(tdm_pkt_decode(b, sizeof(b), &r), -1);
	assert_int_equal(r.flags, TDMRX_F_BAD_MAGIC);

	memset(&r, 0, sizeof(r));
	tdm_pkt_encode(b, &(struct tdm_pkt){ .flags = TDM_PKT_F_END, .sent = 99 });
	assert_int_equal(tdm_pkt_decode(b, 40, &r), 0);
	assert_int_equal(r.flags, TDMRX_F_END);
	assert_int_equal(r.sent, 99);
}

/* An IPv4/UDP datagram to port 8081 with a header and pad bytes of payload. */
static size_t ipv4_udp(uint8_t *p, size_t pad, uint16_t frag)
{
	size_t plen = 40 + pad, ulen = plen + 8, tot = ulen + 20;

	memset(p, 0, tot);
	p[0] = 0x45;
	p[2] = tot >> 8;
	p[3] = tot;
	p[6] = frag >> 8;
	p[7] = frag;
	p[8] = 64;
	p[9] = 17;
	p[12] = 198; p[13] = 18; p[14] = 0; p[15] = 1;
	p[16] = 198; p[17] = 18; p[18] = 0; p[19] = 2;
	p[20] = 0x9c; p[21] = 0x40;		/* sport 40000 */
	p[22] = 0x1f; p[23] = 0x91;		/* dport 8081 */
	p[24] = ulen >> 8;
	p[25] = ulen;
	tdm_pkt_encode(p + 28, &hdr);
	return tot;
}

static void test_frames(void **state)
{
	const uint16_t port = 8081, other = 9;
	struct tdmrx_record r;
	uint8_t f[2048];
	size_t n;

	(void)state;
	/* Ethernet with two VLAN tags. */
	memset(f, 0, 22);
	f[12] = 0x88; f[13] = 0xa8;
	f[16] = 0x81; f[17] = 0x00;
	f[20] = 0x08; f[21] = 0x00;
	n = 22 + ipv4_udp(f + 22, 1000, 0);
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, n, 77, TDMRX_F_SW_TS,
					  &port, 1, &r), TDM_FRAME_OK);
	assert_int_equal(r.rx_ns, 77);
	assert_int_equal(r.tx_ns, hdr.tx_ns);
	assert_int_equal(r.seq, hdr.seq);
	assert_int_equal(r.len, 1040);
	assert_int_equal(r.sport, 40000);
	assert_int_equal(r.dport, 8081);
	assert_int_equal(r.saddr, 0xc6120001);
	assert_int_equal(r.flags, TDMRX_F_SW_TS);
	/* Snapped after the header: still a full record, len from UDP. */
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, 22 + 28 + 40, 1, 0,
					  NULL, 0, &r), TDM_FRAME_OK);
	assert_int_equal(r.len, 1040);
	/* Snapped inside the header: a truncated record at our port. */
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, 22 + 28 + 20, 1, 0,
					  &port, 1, &r), TDM_FRAME_BAD);
	assert_true(r.flags & TDMRX_F_TRUNC);
	/* ... and just not ours when listening to any port. */
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, 22 + 28 + 20, 1, 0,
					  NULL, 0, &r), TDM_FRAME_PORT);
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, n, 1, 0,
					  &other, 1, &r), TDM_FRAME_PORT);
	/* Truncated Ethernet and IP. */
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, 10, 1, 0, NULL, 0, &r),
			 TDM_FRAME_NOT_UDP);
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, 30, 1, 0, NULL, 0, &r),
			 TDM_FRAME_NOT_UDP);

	/* First fragment (MF) is enough; a later one is not. */
	n = ipv4_udp(f, 1400, 0x2000);
	assert_int_equal(tdm_frame_decode(TDM_DLT_RAW, f, n, 1, 0, &port, 1, &r),
			 TDM_FRAME_OK);
	n = ipv4_udp(f, 1400, 0x00b9);
	assert_int_equal(tdm_frame_decode(TDM_DLT_RAW, f, n, 1, 0, &port, 1, &r),
			 TDM_FRAME_FRAGMENT);

	/* Linux cooked v1 and v2. */
	memset(f, 0, 20);
	f[14] = 0x08;
	n = 16 + ipv4_udp(f + 16, 0, 0);
	assert_int_equal(tdm_frame_decode(TDM_DLT_LINUX_SLL, f, n, 1, 0, &port, 1,
					  &r), TDM_FRAME_OK);
	memset(f, 0, 20);
	f[0] = 0x08;
	n = 20 + ipv4_udp(f + 20, 0, 0);
	assert_int_equal(tdm_frame_decode(TDM_DLT_LINUX_SLL2, f, n, 1, 0, &port, 1,
					  &r), TDM_FRAME_OK);
	assert_int_equal(tdm_frame_decode(999, f, n, 1, 0, &port, 1, &r),
			 TDM_FRAME_LINKTYPE);

	/* IPv6 with a hop-by-hop header. */
	memset(f, 0, 200);
	f[0] = 0x60;
	f[4] = 0; f[5] = 8 + 8 + 40;
	f[6] = 0;			/* hop-by-hop */
	f[40] = 17;
	f[48 + 2] = 0x1f; f[48 + 3] = 0x91;
	f[48 + 5] = 48;
	tdm_pkt_encode(f + 56, &hdr);
	assert_int_equal(tdm_frame_decode(TDM_DLT_RAW, f, 96, 1, 0, &port, 1, &r),
			 TDM_FRAME_OK);
	assert_true(r.flags & TDMRX_F_IPV6);
	assert_int_equal(r.len, 40);
	assert_int_equal(r.seq, hdr.seq);
}

/* A synthesized frame: a valid IPv4 header checksum, and it decodes back. */
static void test_frame_encode(void **state)
{
	static const struct tdm_frame_addr a = {
		.src_mac = { 2, 0, 0, 0, 0, 1 },
		.saddr = 0xc6120005, .daddr = 0xc6130001,
		.sport = 40000, .dport = 8081,
	};
	/* The example of RFC 1071 4.1 and its checksum. */
	static const uint8_t rfc[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5,
				       0xf6, 0xf7 };
	const uint16_t port = 8081;
	struct tdmrx_record r;
	uint8_t f[256], *ip = f + 14;
	size_t n;

	(void)state;
	assert_int_equal(tdm_ip_csum(rfc, sizeof(rfc)), (uint16_t)~0xddf2);
	assert_int_equal(tdm_ip_csum(rfc, 3), (uint16_t)~0xf201);	/* odd: 0 pad */

	memset(f, 0xee, sizeof(f));
	n = tdm_frame_encode(f, 128, &a, &hdr, 1480);
	assert_int_equal(n, 14 + 20 + 8 + 1480);
	assert_int_equal(f[12] << 8 | f[13], 0x0800);
	assert_memory_equal(f + 6, a.src_mac, 6);
	assert_int_equal(ip[0], 0x45);
	assert_int_equal(ip[2] << 8 | ip[3], 20 + 8 + 1480);
	assert_int_equal(ip[8], 64);
	assert_int_equal(ip[9], 17);
	assert_int_not_equal(ip[10] << 8 | ip[11], 0);
	/* Summed with its checksum the header adds up to 0xffff. */
	assert_int_equal(tdm_ip_csum(ip, 20), 0);
	ip[15] ^= 1;
	assert_int_not_equal(tdm_ip_csum(ip, 20), 0);
	ip[15] ^= 1;
	/* The snapped payload after the header is zero, nothing past 128. */
	assert_int_equal(f[14 + 28 + 40], 0);
	assert_int_equal(f[127], 0);
	assert_int_equal(f[128], 0xee);

	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, 128, 5, TDMRX_F_HW_TS,
					  &port, 1, &r), TDM_FRAME_OK);
	assert_int_equal(r.sender, hdr.sender);
	assert_int_equal(r.plan_version, hdr.plan_version);
	assert_int_equal(r.seq, hdr.seq);
	assert_int_equal(r.tx_ns, hdr.tx_ns);
	assert_int_equal(r.len, 1480);
	assert_int_equal(r.saddr, a.saddr);
	assert_int_equal(r.sport, a.sport);
	assert_int_equal(r.dport, a.dport);

	/* Too small a buffer, too small or too large a payload. */
	assert_int_equal(tdm_frame_encode(f, 14 + 28 + 39, &a, &hdr, 40), 0);
	assert_int_equal(tdm_frame_encode(f, 128, &a, &hdr, 39), 0);
	assert_int_equal(tdm_frame_encode(f, 128, &a, &hdr, 65535 - 27), 0);
	assert_int_equal(tdm_frame_encode(f, 128, &a, &hdr, 65535 - 28),
			 14 + 65535);
	assert_int_equal(tdm_ip_csum(ip, 20), 0);
}

static void test_rec_file(void **state)
{
	uint8_t h[TDM_REC_FILE_HDR_LEN];
	char err[256];

	(void)state;
	tdm_rec_file_header(h);
	assert_int_equal(tdm_rec_file_check(h, sizeof(h), err, sizeof(err)), 0);
	assert_int_equal(tdm_rec_file_check(h, 8, err, sizeof(err)), -1);
	h[8]++;
	assert_int_equal(tdm_rec_file_check(h, sizeof(h), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "version 2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_frame_encode),
		cmocka_unit_test(test_rec_file),
	};

	return cmocka_run_group_tests_name("tdm_pkt", tests, NULL, NULL);
}
