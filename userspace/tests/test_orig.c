// SPDX-License-Identifier: GPL-2.0
/*
 * The original tool's formats, both ways (lib/tdm_orig.h, tdm_orig_decode
 * in lib/tdm_pkt.h and tdmstat's --format/--input-format original):
 *
 * - which plans the original's (T, W, D) names can express, and the
 *   refusals with the window at fault;
 * - its packet: the native header decoded into records, trailing packets
 *   as end markers, fragments refused;
 * - both output layouts, field by field against answers worked out by hand
 *   for a crafted stream (not by running the same code twice);
 * - end to end: a synthetic pcap of original-sender packets (with a loss,
 *   an overlap, an empty window and trailing packets with garbage in
 *   their unset fields) through the tdmstat binary; the same pcap read as
 *   tdmgen traffic is an error naming the original's packets; a pcap of
 *   fragments is an error; an uneven plan is refused.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_orig.h"
#include "tdm_pkt.h"
#include "tdm_plan.h"
#include "tdm_stats.h"
#include "tdm_util.h"

#ifndef TDMSTAT_BIN
#define TDMSTAT_BIN "tdmstat"
#endif

#define US	1000LL
#define T0	1600000000LL		/* the original's start, epoch s */
#define T0NS	(T0 * 1000000000LL)

/* Split line at sep and compare every field with want[0..n). */
static void check_fields(const char *line, const char *sep,
			 const char *const *want, unsigned int n)
{
	char buf[2048], *p = buf, *q;
	unsigned int i;

	assert_true(strlen(line) < sizeof(buf));
	strcpy(buf, line);
	for (i = 0; i < n; i++) {
		q = strstr(p, sep);
		if (i + 1 < n) {
			if (!q)
				fail_msg("column %u: line '%s' ends early", i + 1,
					 line);
			*q = '\0';
		} else if (q) {
			fail_msg("line '%s' has more than %u columns", line, n);
		}
		if (strcmp(p, want[i]))
			fail_msg("column %u: '%s', want '%s' (line '%s')", i + 1,
				 p, want[i], line);
		if (q)
			p = q + strlen(sep);
	}
}

/* Line k (0-based) of text into buf, without the newline; -1 if none. */
static int line_of(const char *text, unsigned int k, char *buf, size_t len)
{
	const char *e;

	while (k--) {
		text = strchr(text, '\n');
		if (!text)
			return -1;
		text++;
	}
	if (!*text)
		return -1;
	e = strchr(text, '\n');
	if (!e)
		e = text + strlen(text);
	if ((size_t)(e - text) >= len)
		return -1;
	memcpy(buf, text, e - text);
	buf[e - text] = '\0';
	return 0;
}

static unsigned int count_lines(const char *text)
{
	unsigned int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* ---- which plans ------------------------------------------------------- */

static void plan_text(struct tdm_plan *p, const char *text)
{
	char err[512];

	if (tdm_plan_parse(text, "t.conf", p, err, sizeof(err)))
		fail_msg("%s", err);
}

static void refused(const char *text, const char *why)
{
	struct tdm_orig_shape s;
	struct tdm_plan p;
	char err[512];

	plan_text(&p, text);
	assert_int_equal(tdm_orig_shape(&p, &s, err, sizeof(err)), -1);
	if (!strstr(err, why))
		fail_msg("message '%s' does not say '%s'", err, why);
	tdm_plan_free(&p);
}

static void test_shape(void **state)
{
	struct tdm_orig_shape s, s2;
	struct tdm_plan p;
	char err[512];

	(void)state;
	/* udp_receive -t 3 -w 1000 -d 100, one or several windows a cycle */
	plan_text(&p, "[auto]\nsenders 3\nwindow 1ms\ndead_time 100us\n");
	assert_int_equal(tdm_orig_shape(&p, &s, err, sizeof(err)), 0);
	assert_int_equal(s.clients, 3);
	assert_int_equal(s.window_us, 1000);
	assert_int_equal(s.dead_us, 100);
	assert_int_equal(s.phase_ns, 0);
	tdm_plan_free(&p);
	plan_text(&p, "[auto]\nsenders 3\nwindow 1ms\ndead_time 100us\nwindows_per_sender 4\n");
	assert_int_equal(tdm_orig_shape(&p, &s2, err, sizeof(err)), 0);
	assert_int_equal(tdm_orig_same_shape(&s, &s2, err, sizeof(err)), 0);
	tdm_plan_free(&p);
	/* D = 0 and a phase within the dead time are the same timeline. */
	plan_text(&p, "[global]\ncycle_time 2200us\n[sender a]\nwindow 50us 1ms\n"
		  "[sender b]\nwindow 1150us 1ms\n");
	assert_int_equal(tdm_orig_shape(&p, &s2, err, sizeof(err)), 0);
	assert_int_equal(s2.phase_ns, 50 * US);
	assert_int_equal(s2.dead_us, 100);
	assert_int_equal(tdm_orig_same_shape(&s, &s2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "T3 W1000 D100 and T2 W1000 D100"));
	tdm_plan_free(&p);
	plan_text(&p, "[auto]\nsenders 2\nwindow 1ms\ndead_time 0\n");
	assert_int_equal(tdm_orig_shape(&p, &s2, err, sizeof(err)), 0);
	assert_int_equal(s2.dead_us, 0);
	tdm_plan_free(&p);

	/* Uneven windows, gaps, turns, counts, units and clocks. */
	refused("[global]\ncycle_time 10ms\n[sender a]\nwindow 0 3ms\n[sender b]\nwindow 5ms 2ms\n",
		"the window at 5ms of sender 'b' is 2ms long, the first one 3ms");
	refused("[global]\ncycle_time 10ms\n[sender a]\nwindow 0 3ms\n[sender b]\nwindow 4ms 3ms\n",
		"the gap after the window at 4ms of sender 'b' is 3ms, the first one 1ms");
	refused("[global]\ncycle_time 8ms\n[sender a]\nwindow 0 1ms\nwindow 2ms 1ms\n"
		"[sender b]\nwindow 4ms 1ms\nwindow 6ms 1ms\n",
		"the window at 2ms belongs to sender 'a' (id 0), but the original's clients take turns in id order: turn 1 of the cycle is client 1's");
	refused("[global]\ncycle_time 6ms\n[sender a]\nwindow 0 1ms\nwindow 4ms 1ms\n"
		"[sender b]\nwindow 2ms 1ms\n",
		"3 windows for 2 senders");
	refused("[auto]\nsenders 2\nwindow 1500ns\ndead_time 1us\n",
		"must be whole microseconds");
	refused("[global]\nclock monotonic\n[auto]\nsenders 2\nwindow 1ms\ndead_time 1ms\n",
		"monotonic clock");
}

/* ---- the packet ---------------------------------------------------------- */

static void test_decode(void **state)
{
	struct tdm_orig_pkt op = {
		.tx_sec = T0, .tx_usec = 123456, .index = 77, .sent = 999,
		.window = 5, .client = 2,
	};
	uint8_t b[TDM_ORIG_PAYLOAD_LEN] = { 0 };
	struct tdmrx_record r;

	(void)state;
	tdm_orig_encode(b, &op);
	/* Native little-endian at the C struct's offsets. */
	assert_int_equal(b[16], 77);
	assert_int_equal(b[17], 0);
	assert_int_equal(b[48], 2);
	memset(&r, 0, sizeof(r));
	r.rx_ns = 5;
	assert_int_equal(tdm_orig_decode(b, sizeof(b), sizeof(b), &r), 0);
	assert_int_equal(r.tx_ns, T0NS + 123456 * US);
	assert_int_equal(r.seq, 77);
	assert_int_equal(r.sender, 2);
	assert_int_equal(r.sent, 0);		/* only trailing packets */
	assert_int_equal(r.plan_version, 0);
	assert_int_equal(r.flags, 0);

	/* Trailing: an end marker; its unset time and index are ignored. */
	op.trailing = 1;
	op.tx_sec = -77;
	op.tx_usec = 123456789;
	tdm_orig_encode(b, &op);
	b[36] = 0xff;				/* garbage in the padding */
	memset(&r, 0, sizeof(r));
	r.rx_ns = 42;
	assert_int_equal(tdm_orig_decode(b, sizeof(b), sizeof(b), &r), 0);
	assert_true(r.flags & TDMRX_F_END);
	assert_int_equal(r.sent, 999);
	assert_int_equal(r.tx_ns, 42);
	assert_int_equal(r.seq, 0);
	/* Padding alone is no trailing flag. */
	op.trailing = 0;
	op.tx_sec = T0;
	op.tx_usec = 1;
	tdm_orig_encode(b, &op);
	b[36] = 0xff;
	memset(&r, 0, sizeof(r));
	assert_int_equal(tdm_orig_decode(b, sizeof(b), sizeof(b), &r), 0);
	assert_false(r.flags & TDMRX_F_END);

	/* Wrong size, short capture, no timeval, client beyond 32 bits. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(tdm_orig_decode(b, 4000, 4000, &r), -1);
	assert_true(r.flags & TDMRX_F_BAD_MAGIC);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tdm_orig_decode(b, 40, sizeof(b), &r), -1);
	assert_true(r.flags & TDMRX_F_TRUNC);
	op.tx_usec = 1000000;
	tdm_orig_encode(b, &op);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tdm_orig_decode(b, sizeof(b), sizeof(b), &r), -1);
	assert_true(r.flags & TDMRX_F_BAD_MAGIC);
	op.tx_usec = 0;
	op.client = 1ULL << 32;
	tdm_orig_encode(b, &op);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tdm_orig_decode(b, sizeof(b), sizeof(b), &r), -1);
}

/* ---- frames and pcaps ---------------------------------------------------- */

#define FRAME_LEN	(TDM_FRAME_HDR_LEN + TDM_ORIG_PAYLOAD_LEN)

/* An Ethernet/IPv4/UDP frame to 8081 carrying the original's packet. */
static size_t orig_frame(uint8_t *f, const struct tdm_orig_pkt *op)
{
	const struct tdm_frame_addr a = {
		.saddr = 0x0a000001 + (uint32_t)op->client, .daddr = 0x0a000064,
		.sport = 40000, .dport = 8081,
	};
	const struct tdm_pkt dummy = { 0 };
	size_t n = tdm_frame_encode(f, FRAME_LEN, &a, &dummy,
				    TDM_ORIG_PAYLOAD_LEN);

	assert_int_equal(n, FRAME_LEN);
	tdm_orig_encode(f + TDM_FRAME_HDR_LEN, op);
	return n;
}

/* Fragment i of 3 of the frame (IPv4 MTU 1500: 1480 bytes of IP payload). */
static size_t fragment(uint8_t *out, const uint8_t *f, unsigned int i)
{
	size_t ip_payload = 8 + TDM_ORIG_PAYLOAD_LEN, off = i * 1480;
	size_t len = ip_payload - off < 1480 ? ip_payload - off : 1480;
	uint16_t fo = (uint16_t)(off / 8) | (i < 2 ? 0x2000 : 0);
	uint16_t tot = (uint16_t)(20 + len);

	memcpy(out, f, 34);
	memcpy(out + 34, f + 34 + off, len);
	out[16] = tot >> 8;
	out[17] = tot;
	out[20] = fo >> 8;
	out[21] = fo;
	return 34 + len;
}

static void test_frames(void **state)
{
	struct tdm_orig_pkt op = { .tx_sec = T0, .index = 3, .client = 1 };
	uint8_t f[FRAME_LEN], g[FRAME_LEN];
	struct tdmrx_record r;
	const uint16_t port = 8081;
	size_t n;

	(void)state;
	n = orig_frame(f, &op);
	assert_int_equal(tdm_frame_decode_as(TDM_PAYLOAD_ORIG, TDM_DLT_EN10MB,
					     f, n, 9, TDMRX_F_SW_TS, &port, 1,
					     &r), TDM_FRAME_OK);
	assert_int_equal(r.seq, 3);
	assert_int_equal(r.sender, 1);
	assert_int_equal(r.len, TDM_ORIG_PAYLOAD_LEN);
	assert_int_equal(r.rx_ns, 9);
	/* A capture snapped at 128 bytes still has the header. */
	assert_int_equal(tdm_frame_decode_as(TDM_PAYLOAD_ORIG, TDM_DLT_EN10MB,
					     f, 128, 9, 0, &port, 1, &r),
			 TDM_FRAME_OK);
	/* As tdmgen traffic it has no magic. */
	assert_int_equal(tdm_frame_decode(TDM_DLT_EN10MB, f, n, 9, 0, &port, 1,
					  &r), TDM_FRAME_BAD);
	assert_true(r.flags & TDMRX_F_BAD_MAGIC);
	/* Every fragment, the first one too, is refused. */
	n = fragment(g, f, 0);
	assert_int_equal(tdm_frame_decode_as(TDM_PAYLOAD_ORIG, TDM_DLT_EN10MB,
					     g, n, 9, 0, &port, 1, &r),
			 TDM_FRAME_FRAGMENT);
	n = fragment(g, f, 2);
	assert_int_equal(tdm_frame_decode_as(TDM_PAYLOAD_ORIG, TDM_DLT_EN10MB,
					     g, n, 9, 0, &port, 1, &r),
			 TDM_FRAME_FRAGMENT);
}

/* ---- the layouts, on the crafted stream --------------------------------- */

/*
 * The stream (T = 2, W = 1000 us, D = 100 us, from T0; client 0's windows
 * at 0 and 2.2 ms, client 1's at 1.1 and 3.3 ms), in arrival order:
 *
 *   client index  tx (us)  rx (ns after T0)
 *   0      0         0        50400
 *   0      1       300       350400
 *   1      0      1100      1150400
 *   0      3       900      1200000   (index 2 lost; arrives late: overlap)
 *   1      1      1400      1450400
 *   0      5      2500      2550400   (index 4 lost, before window 1's first)
 *
 * and client 1 sends nothing in its window 1.
 */
struct spkt {
	uint32_t client;
	uint64_t index;
	int64_t tx_us, rx_ns;
};

static const struct spkt stream[] = {
	{ 0, 0, 0, 50400 },
	{ 0, 1, 300, 350400 },
	{ 1, 0, 1100, 1150400 },
	{ 0, 3, 900, 1200000 },
	{ 1, 1, 1400, 1450400 },
	{ 0, 5, 2500, 2550400 },
};

/* What the original's per-window CSV must hold for it, worked by hand. */
static const char *const want_win[4][17] = {
	/* i 0: 3 packets; 1 missing (2; the original: 2); rx 50.4..1200 us;
	 * tx 0..900 us; rate 2 * 4096 * 8 bit / 900 us = 72817778 bit/s =
	 * 0.067817 Gibit/s; transit 50.4, 50.4, 300 us: avg 133.6; a packet
	 * after the first one of window 1: overlap back 1.
	 */
	{ "0", "0", "0", "3", "1", "0.001150", "0.000900", "0.067817",
	  "0.000134", "0.000050", "0.000300", "0", "1",
	  "1600000000.000000", "1600000000.000900", "1600000000.000050",
	  "1600000000.001200" },
	/* i 1: client 1 window 0: 300 us each way, 4096 * 8 bit / 300 us =
	 * 0.101725 Gibit/s, one packet before window 0's last: front 1.
	 */
	{ "1", "1", "0", "2", "0", "0.000300", "0.000300", "0.101725",
	  "0.000050", "0.000050", "0.000050", "1", "0",
	  "1600000000.001100", "1600000000.001400", "1600000000.001150",
	  "1600000000.001450" },
	/* i 2: one packet; index 4 lost before it (the original: 0); no
	 * rate from one packet.
	 */
	{ "2", "0", "1", "1", "1", "0.000000", "0.000000", "nan",
	  "0.000050", "0.000050", "0.000050", "0", "0",
	  "1600000000.002500", "1600000000.002500", "1600000000.002550",
	  "1600000000.002550" },
	/* i 3: client 1's window 1, empty. */
	{ "3", "1", "1", "0", "0", "nan", "nan", "nan", "nan", "nan", "nan",
	  "0", "0", "nan", "nan", "nan", "nan" },
};

static const char *const want_pkt[6][6] = {
	{ "0", "0", "0", "0", "1600000000.000000", "1600000000.000050" },
	{ "1", "0", "0", "1", "1600000000.000300", "1600000000.000350" },
	{ "2", "1", "0", "0", "1600000000.001100", "1600000000.001150" },
	{ "3", "0", "0", "3", "1600000000.000900", "1600000000.001200" },
	{ "4", "1", "0", "1", "1600000000.001400", "1600000000.001450" },
	{ "5", "0", "1", "5", "1600000000.002500", "1600000000.002550" },
};

static void check_window_csv(const char *text, unsigned int rows)
{
	char line[2048];
	unsigned int i;

	assert_int_equal(count_lines(text), rows);
	for (i = 0; i < rows; i++) {
		assert_int_equal(line_of(text, i, line, sizeof(line)), 0);
		check_fields(line, ", ", want_win[i], 17);
	}
}

static void check_packet_csv(const char *text)
{
	char line[2048];
	unsigned int i;

	assert_int_equal(count_lines(text), 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(line_of(text, i, line, sizeof(line)), 0);
		check_fields(line, ",", want_pkt[i], 6);
	}
}

/* The per-window text file: the same values, labelled. */
static void check_window_txt(const char *text)
{
	char line[2048];

	assert_int_equal(line_of(text, 0, line, sizeof(line)), 0);
	assert_string_equal(line,
			    "i:        0, Client:  0,  Window:        0, Packets:      3, Missing:      1, "
			    "Rx_Runtime: 0.001150, Tx_Runtime: 0.000900, DataRate(Gibs): 0.067817, "
			    "Avg Tx/Rx:  0.000134, Min Tx/Rx:  0.000050, Max Tx/Rx  0.000300, "
			    "Overlap Front      0, Overlap Back      1, Start Tx 1600000000.000000, "
			    "End Tx 1600000000.000900, Start Rx 1600000000.000050, End Rx 1600000000.001200");
}

/* The per-packet text file: lines with the differences to the previous
 * packet, then the summary.
 */
static void check_packet_txt(const char *text)
{
	char line[2048];

	assert_int_equal(line_of(text, 0, line, sizeof(line)), 0);
	assert_string_equal(line, "Packet 0 Client 0 Window 0 Client Packet ID 0 TX 1600000000.000000s, "
			    "RX 1600000000.000050s, Diff RX/TX 0.000050s, Diff TX/TX 0.000000s, Diff RX/RX 0.000000s");
	assert_int_equal(line_of(text, 3, line, sizeof(line)), 0);
	assert_string_equal(line, "Packet 3 Client 0 Window 0 Client Packet ID 3 TX 1600000000.000900s, "
			    "RX 1600000000.001200s, Diff RX/TX 0.000300s, Diff TX/TX -0.000200s, Diff RX/RX 0.000050s");
	/* transit avg (50.4 * 5 + 300) / 6 = 92 us; TX/TX over 5 pairs
	 * (300, 800, -200, 500, 1100): avg 500 us; RX/RX (300, 800, 49.6,
	 * 250.4, 1100): avg 500, min 49.6.
	 */
	assert_non_null(strstr(text, "TX/RX| 0.000092| 0.000050| 0.000300|\n"));
	assert_non_null(strstr(text, "TX/TX| 0.000500|-0.000200| 0.001100|\n"));
	assert_non_null(strstr(text, "RX/RX| 0.000500| 0.000050| 0.001100|\n"));
	assert_non_null(strstr(text, "It took 0.002500 seconds to receive 24576 bytes of data (6 packets)"));
	/* Each client's indexes only grow (the overlap is across clients). */
	assert_non_null(strstr(text, "\nData Received in order\n"));
	assert_non_null(strstr(text, "6 of 8 packets received. Drop rate = 25.00 %"));
}

struct mem_out {
	char *win_csv, *win_txt, *pkt_csv, *pkt_txt;
	size_t l[4];
	struct tdm_orig o;
};

static void on_window(void *ctx, const struct tdm_win_result *w)
{
	tdm_orig_window(&((struct mem_out *)ctx)->o, w);
}

static void on_packet(void *ctx, const struct tdm_pkt_result *p)
{
	tdm_orig_packet(&((struct mem_out *)ctx)->o, p);
}

static void push(struct tdm_stats *st, uint32_t client, uint64_t seq,
		 int64_t tx, int64_t rx, bool end, uint64_t sent)
{
	struct tdmrx_record r = {
		.rx_ns = rx, .tx_ns = tx, .seq = seq, .sender = client,
		.len = TDM_ORIG_PAYLOAD_LEN, .flags = TDMRX_F_SW_TS,
		.gso_segs = 1, .sent = sent,
	};

	if (end)
		r.flags |= TDMRX_F_END;
	tdm_stats_push(st, &r);
}

/* The engine and the writers on the stream, files in memory. */
static void test_layouts(void **state)
{
	struct mem_out m = { 0 };
	struct tdm_stats_cfg cfg = {
		.on_window = on_window, .on_packet = on_packet, .ctx = &m,
	};
	struct tdm_stats *st;
	struct tdm_plan p;
	const struct tdm_run_result *r;
	char err[512], name[256];
	unsigned int i;

	(void)state;
	plan_text(&p, "[global]\nclock realtime\nbase_time 1600000000s\n"
		  "[auto]\nsenders 2\nwindow 1000us\ndead_time 100us\n");
	st = tdm_stats_new(&cfg);
	assert_non_null(st);
	assert_int_equal(tdm_stats_add_plan(st, &p, err, sizeof(err)), 0);
	assert_int_equal(tdm_orig_shape(&p, &m.o.shape, err, sizeof(err)), 0);
	m.o.windows_per_client = 2;
	m.o.win_csv = open_memstream(&m.win_csv, &m.l[0]);
	m.o.win_txt = open_memstream(&m.win_txt, &m.l[1]);
	m.o.pkt_csv = open_memstream(&m.pkt_csv, &m.l[2]);
	m.o.pkt_txt = open_memstream(&m.pkt_txt, &m.l[3]);
	for (i = 0; i < TDM_ARRAY_SIZE(stream); i++)
		push(st, stream[i].client, stream[i].index,
		     T0NS + stream[i].tx_us * US, T0NS + stream[i].rx_ns,
		     false, 0);
	push(st, 0, 0, T0NS + 1500000000LL, T0NS + 1500000000LL, true, 6);
	push(st, 1, 0, T0NS + 1500000000LL, T0NS + 1500000000LL, true, 2);
	tdm_stats_finish(st);
	tdm_orig_windows_done(&m.o);
	r = tdm_stats_run(st);
	tdm_orig_packet_summary(&m.o, r->received, r->sent);
	assert_int_equal(tdm_orig_window_base(&m.o, "x", name, sizeof(name)), 0);
	assert_string_equal(name, "x_N2_W1000_D100_T2");
	fclose(m.o.win_csv);
	fclose(m.o.win_txt);
	fclose(m.o.pkt_csv);
	fclose(m.o.pkt_txt);
	check_window_csv(m.win_csv, 4);
	check_window_txt(m.win_txt);
	check_packet_csv(m.pkt_csv);
	check_packet_txt(m.pkt_txt);
	assert_int_equal(m.o.empty_rows, 1);
	free(m.win_csv);
	free(m.win_txt);
	free(m.pkt_csv);
	free(m.pkt_txt);
	tdm_orig_free(&m.o);
	tdm_stats_free(st);
	tdm_plan_free(&p);
}

/* A correction row (late packets after the row was written), a gap of
 * empty windows, n from the rows, times from a TAI plan made epoch.
 */
static void test_rows(void **state)
{
	struct tdm_orig o = { .shape = { .clients = 3, .window_us = 1000,
					 .dead_us = 100 },
			      .epoch_off_ns = -37000000000LL };
	struct tdm_win_result w;
	char *text = NULL, line[512], name[128];
	size_t len;
	static const char *const corr[17] = {
		"7", "1", "2", "4", "0", "nan", "nan", "nan", "nan", "nan",
		"nan", "0", "0", "nan", "nan", "nan", "nan" };
	static const char *const gap[17] = {
		"6", "0", "2", "0", "0", "nan", "nan", "nan", "nan", "nan",
		"nan", "0", "0", "nan", "nan", "nan", "nan" };

	(void)state;
	o.win_csv = open_memstream(&text, &len);
	memset(&w, 0, sizeof(w));
	w.window = 4;
	w.sender = 1;
	w.sender_window = 1;
	w.packets = 1;
	w.missing = TDM_NA_U64;
	w.missing_before = TDM_NA_U64;
	w.rate_bps = TDM_NA_U64;
	w.start_tx_ns = w.end_tx_ns = 37000000000LL + 1500000;
	w.start_rx_ns = w.end_rx_ns = 37000000000LL - 1;
	tdm_orig_window(&o, &w);	/* no rows before: n unknown */
	w.window = 7;
	w.sender_window = 2;
	tdm_orig_window(&o, &w);	/* i 5 and 6 empty */
	memset(&w, 0, sizeof(w));
	w.window = 7;
	w.sender = 1;
	w.sender_window = 2;
	w.late = 4;
	tdm_orig_window(&o, &w);	/* the correction row */
	tdm_orig_windows_done(&o);	/* n unknown: nothing */
	fclose(o.win_csv);
	assert_int_equal(count_lines(text), 5);
	assert_int_equal(line_of(text, 0, line, sizeof(line)), 0);
	/* TAI 37.0015 s is epoch 0.0015 s; epoch -1 ns rounds to 0. */
	assert_non_null(strstr(line, ", 0.001500, 0.001500, 0.000000, 0.000000"));
	assert_int_equal(line_of(text, 2, line, sizeof(line)), 0);
	check_fields(line, ", ", gap, 17);
	assert_int_equal(line_of(text, 4, line, sizeof(line)), 0);
	check_fields(line, ", ", corr, 17);
	assert_int_equal(o.correction_rows, 1);
	assert_int_equal(tdm_orig_window_base(&o, "r", name, sizeof(name)), 0);
	assert_string_equal(name, "r_N3_W1000_D100_T3");
	free(text);
	tdm_orig_free(&o);
}

/* The engine's late packet: a correction row at the end of the file. */
static void test_late_row(void **state)
{
	struct mem_out m = { 0 };
	struct tdm_stats_cfg cfg = { .on_window = on_window, .ctx = &m };
	static const char *const corr[17] = {
		"0", "0", "0", "1", "0", "nan", "nan", "nan", "nan", "nan",
		"nan", "0", "0", "nan", "nan", "nan", "nan" };
	struct tdm_stats *st;
	struct tdm_plan p;
	char err[512], line[2048];

	(void)state;
	plan_text(&p, "[global]\nclock realtime\nbase_time 1600000000s\n"
		  "[auto]\nsenders 2\nwindow 1000us\ndead_time 100us\n");
	cfg.assign_rx = false;
	st = tdm_stats_new(&cfg);
	assert_non_null(st);
	assert_int_equal(tdm_stats_add_plan(st, &p, err, sizeof(err)), 0);
	assert_int_equal(tdm_orig_shape(&p, &m.o.shape, err, sizeof(err)), 0);
	m.o.win_csv = open_memstream(&m.win_csv, &m.l[0]);
	push(st, 0, 0, T0NS, T0NS + 50 * US, false, 0);
	/* Client 1 in cycle 90 (i 181), 198 ms later: window 0 is written. */
	push(st, 1, 0, T0NS + 199100 * US, T0NS + 199150 * US, false, 0);
	/* Client 0's index 1, sent in window 0, arrives now: late. */
	push(st, 0, 1, T0NS + 300 * US, T0NS + 199200 * US, false, 0);
	tdm_stats_finish(st);
	fclose(m.o.win_csv);
	/* i 0, the empty i 1..180, i 181, the correction row of i 0. */
	assert_int_equal(count_lines(m.win_csv), 183);
	assert_int_equal(line_of(m.win_csv, 0, line, sizeof(line)), 0);
	assert_int_equal(strncmp(line, "0, 0, 0, 1, 0, ", 15), 0);
	assert_int_equal(line_of(m.win_csv, 181, line, sizeof(line)), 0);
	assert_int_equal(strncmp(line, "181, 1, 90, 1, 0, ", 18), 0);
	assert_int_equal(line_of(m.win_csv, 182, line, sizeof(line)), 0);
	check_fields(line, ", ", corr, 17);
	assert_int_equal(m.o.correction_rows, 1);
	assert_int_equal(m.o.empty_rows, 180);
	free(m.win_csv);
	tdm_orig_free(&m.o);
	tdm_stats_free(st);
	tdm_plan_free(&p);
}

static void test_secs(void **state)
{
	char b[64];

	(void)state;
	tdm_orig_secs(b, sizeof(b), 1499);
	assert_string_equal(b, "0.000001");
	tdm_orig_secs(b, sizeof(b), 500);
	assert_string_equal(b, "0.000001");
	tdm_orig_secs(b, sizeof(b), 499);
	assert_string_equal(b, "0.000000");
	tdm_orig_secs(b, sizeof(b), -2500000);
	assert_string_equal(b, "-0.002500");
	tdm_orig_secs(b, sizeof(b), T0NS + 999999500);
	assert_string_equal(b, "1600000001.000000");
	tdm_orig_secs(b, sizeof(b), TDM_NA_S64);
	assert_string_equal(b, "nan");
}

/* ---- end to end through tdmstat ----------------------------------------- */

static char dir[] = "/tmp/test_orig.XXXXXX";

static void write_pcap(const char *path, bool fragments)
{
	pcap_t *pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							  PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d;
	uint8_t f[FRAME_LEN], g[FRAME_LEN];
	unsigned int i, k;

	assert_non_null(pd);
	d = pcap_dump_open(pd, path);
	assert_non_null(d);
	for (i = 0; i < TDM_ARRAY_SIZE(stream); i++) {
		struct tdm_orig_pkt op = {
			.tx_sec = T0 + stream[i].tx_us / 1000000,
			.tx_usec = stream[i].tx_us % 1000000,
			.index = stream[i].index,
			.sent = 0xdeadbeef,	/* unset in data packets */
			.window = stream[i].tx_us >= 2200 ? 1 : 0,
			.client = stream[i].client,
		};
		int64_t rx = T0NS + stream[i].rx_ns;
		struct pcap_pkthdr h = {
			.ts = { .tv_sec = rx / 1000000000,
				.tv_usec = rx % 1000000000 },
		};
		size_t n = orig_frame(f, &op);

		if (!fragments) {
			h.caplen = h.len = n;
			pcap_dump((u_char *)d, &h, f);
			continue;
		}
		for (k = 0; k < 3; k++) {
			h.caplen = h.len = fragment(g, f, k);
			pcap_dump((u_char *)d, &h, g);
		}
	}
	/* 5 trailing packets a client, 1.5 s later, time and index unset. */
	for (i = 0; i < 10 && !fragments; i++) {
		struct tdm_orig_pkt op = {
			.tx_sec = -3, .tx_usec = 77777777, .index = 12345,
			.sent = i % 2 ? 2 : 6, .trailing = 1,
			.window = 999, .client = i % 2,
		};
		int64_t rx = T0NS + 1500000000LL + i * 1000;
		struct pcap_pkthdr h = {
			.ts = { .tv_sec = rx / 1000000000,
				.tv_usec = rx % 1000000000 },
		};

		h.caplen = h.len = orig_frame(f, &op);
		pcap_dump((u_char *)d, &h, f);
	}
	pcap_dump_close(d);
	pcap_close(pd);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* Run tdmstat with args (in dir); its exit status, stderr in dir/err. */
static int tdmstat(const char *args)
{
	char cmd[4096];
	int rc;

	snprintf(cmd, sizeof(cmd), "cd %s && %s %s >out 2>err", dir,
		 TDMSTAT_BIN, args);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static void err_says(const char *what)
{
	char path[256], *e;

	snprintf(path, sizeof(path), "%s/err", dir);
	e = slurp(path);
	if (!strstr(e, what))
		fail_msg("tdmstat's stderr '%s' does not say '%s'", e, what);
	free(e);
}

static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (getenv("TEST_ORIG_KEEP"))
		return 0;
	return system(cmd) ? -1 : 0;
}

static void test_analyze_original(void **state)
{
	char path[256], *text;

	(void)state;
	snprintf(path, sizeof(path), "%s/orig.pcap", dir);
	write_pcap(path, false);
	assert_int_equal(tdmstat("analyze -q -j --input-format original --original 2,2,1000,100,1600000000 --format original -P -o run orig.pcap"), 0);
	snprintf(path, sizeof(path), "%s/run_N2_W1000_D100_T2.csv", dir);
	text = slurp(path);
	check_window_csv(text, 4);
	free(text);
	snprintf(path, sizeof(path), "%s/run_N2_W1000_D100_T2.txt", dir);
	text = slurp(path);
	check_window_txt(text);
	free(text);
	snprintf(path, sizeof(path), "%s/run.csv", dir);
	text = slurp(path);
	check_packet_csv(text);
	free(text);
	snprintf(path, sizeof(path), "%s/run.txt", dir);
	text = slurp(path);
	check_packet_txt(text);
	free(text);
	/* The JSON: the trailing packets' counts, nothing bad. */
	snprintf(path, sizeof(path), "%s/out", dir);
	text = slurp(path);
	assert_non_null(strstr(text, "\"end_markers\":10"));
	assert_non_null(strstr(text, "\"bad_records\":0"));
	assert_non_null(strstr(text, "\"sent\":8"));
	assert_non_null(strstr(text, "\"lost\":2"));
	free(text);

	/* The same plan from a plan file: n from the rows (2). */
	snprintf(path, sizeof(path), "%s/orig.conf", dir);
	text = (char *)"[global]\nclock realtime\nbase_time 1600000000s\n"
		"[auto]\nsenders 2\nwindow 1ms\ndead_time 100us\n";
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	}
	assert_int_equal(tdmstat("analyze -q --input-format original -p orig.conf --format original -o file orig.pcap"), 0);
	snprintf(path, sizeof(path), "%s/file_N2_W1000_D100_T2.csv", dir);
	text = slurp(path);
	/* Without n the empty window after the last row is not written. */
	check_window_csv(text, 3);
	free(text);
}

static void test_analyze_errors(void **state)
{
	char path[256];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/orig.pcap", dir);
	write_pcap(path, false);
	/* Read as tdmgen's traffic: an error that names the original. */
	assert_int_equal(tdmstat("analyze -q --original 2,2,1000,100,1600000000 -u 8081 -o a orig.pcap"), 1);
	err_says("16 records, none a tdmgen data packet: 16 bad");
	err_says("16 of 4096-byte UDP payload without the TDMG magic: the original tool's packets? use --input-format original");
	assert_int_equal(tdmstat("analyze -q --original 2,2,1000,100,1600000000 -o a orig.pcap"), 1);
	err_says("no records: 16 frames, none a UDP datagram with a test packet");
	err_says("use --input-format original");

	/* Fragments: refused, not half counted. */
	snprintf(path, sizeof(path), "%s/frag.pcap", dir);
	write_pcap(path, true);
	assert_int_equal(tdmstat("analyze -q --input-format original --original 2,2,1000,100,1600000000 -o fr frag.pcap"), 1);
	err_says("18 IP fragments: the original's 4096-byte datagrams were fragmented");

	/* A plan the original's names cannot express. */
	snprintf(path, sizeof(path), "%s/uneven.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[global]\nclock realtime\ncycle_time 10ms\n[sender a]\nwindow 0 3ms\n[sender b]\nwindow 5ms 2ms\n", f);
	fclose(f);
	assert_int_equal(tdmstat("analyze -q --input-format original -p uneven.conf --format original -o u orig.pcap"), 1);
	err_says("--format original cannot name this plan: plan v0: the window at 5ms of sender 'b' is 2ms long, the first one 3ms: the original has one window length (-w)");
	/* ... which our own format takes. */
	assert_int_equal(tdmstat("analyze -q --input-format original -p uneven.conf -o u orig.pcap"), 0);
	/* --original and a plan of another T. */
	assert_int_equal(tdmstat("analyze -q --input-format original --original 3,2,1000,100,1600000000 -o u orig.pcap"), 0);
	assert_int_equal(tdmstat("analyze -q --original 2,x,1,1,1 orig.pcap"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_secs),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_late_row),
		cmocka_unit_test(test_analyze_original),
		cmocka_unit_test(test_analyze_errors),
	};

	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
