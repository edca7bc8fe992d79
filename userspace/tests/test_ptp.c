// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the ptp4l management client (tdm_ptp): the GET it builds
 * against bytes captured from pmc 3.1, the parser against answers captured
 * from ptp4l 3.1 and against every malformed variant, the sync decision,
 * and a query round against a fake ptp4l on a UNIX socket.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_ptp.h"

/* Captured from `pmc -u -b 0 'GET TIME_STATUS_NP' 'GET PORT_DATA_SET'`
 * (linuxptp 3.1.1, pid 0x2bcb).
 */
static const char pmc_get_tsn[] =
	"0d0200680000000000000000000000000000000000000000000000002bcb0000047f"
	"ffffffffffffffffffff0000000000010034c0000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000000000000000000"
	"0000";
static const char pmc_get_pds[] =
	"0d0200500000000000000000000000000000000000000000000000002bcb0001047f"
	"ffffffffffffffffffff000000000001001c20040000000000000000000000000000"
	"000000000000000000000000";

/* ptp4l 3.1.1's answers to them: a grandmaster (port MASTER) ... */
static const char gm_tsn[] =
	"0d020068000000000000000000000000000000002e0bfbfffec677ce00000000047f"
	"00000000000000002bcb0000020000010034c0000000000000000000000000000000"
	"000000000000000000000000000000000000000000000000000000002e0bfbfffec6"
	"77ce";
static const char gm_pds[] =
	"0d020050000000000000000000000000000000002e0bfbfffec677ce00010001047f"
	"00000000000000002bcb000002000001001c20042e0bfbfffec677ce000106000000"
	"0000000000000103ff010002";
/* ... and a slave still LISTENING. */
static const char listening_pds[] =
	"0d02005000000000000000000000000000000000165fb0fffe6ba14d00010001047f"
	"00000000000000002bcb000002000001001c2004165fb0fffe6ba14d000104000000"
	"0000000000000103ff010002";

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = strlen(h) / 2, i;

	assert_true(n <= cap);
	for (i = 0; i < n; i++) {
		unsigned int b;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &b), 1);
		out[i] = (uint8_t)b;
	}
	return n;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* ---- building --------------------------------------------------------- */

static void test_build_matches_pmc(void **state)
{
	uint8_t want[256], got[256];
	size_t n;
	int len;

	(void)state;
	n = unhex(pmc_get_tsn, want, sizeof(want));
	len = tdm_ptp_build_get_ex(got, sizeof(got), 0, 0, 0x2bcb, 0,
				   TDM_PTP_MID_TIME_STATUS_NP);
	assert_int_equal(len, n);
	assert_memory_equal(got, want, n);

	n = unhex(pmc_get_pds, want, sizeof(want));
	len = tdm_ptp_build_get_ex(got, sizeof(got), 0, 0, 0x2bcb, 1,
				   TDM_PTP_MID_PORT_DATA_SET);
	assert_int_equal(len, n);
	assert_memory_equal(got, want, n);
}

static void test_build_fields(void **state)
{
	uint8_t b[256];
	int len;

	(void)state;
	len = tdm_ptp_build_get_ex(b, sizeof(b), 24, 1, 7, 0x1234,
				   TDM_PTP_MID_PORT_DATA_SET);
	assert_int_equal(len, 80);
	assert_int_equal(b[0], 0x1d);		/* gPTP transportSpecific */
	assert_int_equal(b[4], 24);		/* domain */
	assert_int_equal(b[30] << 8 | b[31], 0x1234);
	assert_int_equal(b[28] << 8 | b[29], 7);
	/* Another id: no data field. */
	len = tdm_ptp_build_get_ex(b, sizeof(b), 0, 0, 1, 0, 0x0001);
	assert_int_equal(len, 54);
	/* Too small a buffer, a bad nibble, no buffer. */
	assert_int_equal(tdm_ptp_build_get_ex(b, 79, 0, 0, 1, 0,
					      TDM_PTP_MID_PORT_DATA_SET), -1);
	assert_int_equal(tdm_ptp_build_get_ex(b, sizeof(b), 0, 16, 1, 0,
					      TDM_PTP_MID_PORT_DATA_SET), -1);
	assert_int_equal(tdm_ptp_build_get_ex(NULL, 100, 0, 0, 1, 0,
					      TDM_PTP_MID_PORT_DATA_SET), -1);
	/* The plain form uses our pid. */
	len = tdm_ptp_build_get(b, sizeof(b), 0, 9, TDM_PTP_MID_TIME_STATUS_NP);
	assert_int_equal(len, 104);
	assert_int_equal(b[28] << 8 | b[29], (uint16_t)getpid());
}

/* ---- parsing ---------------------------------------------------------- */

static void test_parse_captured(void **state)
{
	struct tdm_ptp_status st;
	uint8_t b[256];
	char err[256] = "";
	size_t n;

	(void)state;
	memset(&st, 0, sizeof(st));
	n = unhex(gm_tsn, b, sizeof(b));
	assert_int_equal(tdm_ptp_parse(b, n, 0, &st, err, sizeof(err)), 0);
	assert_true(st.time_status_ok);
	assert_false(st.port_ok);
	assert_int_equal(st.master_offset, 0);
	assert_false(st.gm_present);
	assert_int_equal(st.gm_identity[0], 0x2e);
	assert_int_equal(st.gm_identity[7], 0xce);

	n = unhex(gm_pds, b, sizeof(b));
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 0);
	assert_true(st.port_ok);
	assert_int_equal(st.port_state, TDM_PS_MASTER);

	memset(&st, 0, sizeof(st));
	n = unhex(listening_pds, b, sizeof(b));
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 0);
	assert_int_equal(st.port_state, TDM_PS_LISTENING);
	assert_string_equal(tdm_port_state_name(st.port_state), "LISTENING");
}

/* A SLAVE answer made from the captured one: offset -1234 ns, GM present. */
static size_t slave_tsn(uint8_t *b, size_t cap)
{
	size_t n = unhex(gm_tsn, b, cap);
	int64_t off = -1234;
	int i;

	for (i = 0; i < 8; i++)
		b[54 + i] = (uint8_t)((uint64_t)off >> (56 - 8 * i));
	b[54 + 41] = 1;		/* gmPresent, low byte */
	return n;
}

static void test_parse_values(void **state)
{
	struct tdm_ptp_status st;
	uint8_t b[256];
	char err[256] = "";
	size_t n;

	(void)state;
	memset(&st, 0, sizeof(st));
	n = slave_tsn(b, sizeof(b));
	assert_int_equal(tdm_ptp_parse(b, n, 0, &st, err, sizeof(err)), 0);
	assert_int_equal(st.master_offset, -1234);
	assert_true(st.gm_present);

	/* Longer data sets (fields appended by a newer ptp4l) are fine. */
	n = unhex(gm_pds, b, sizeof(b));
	b[n] = 0;
	b[n + 1] = 0;
	put16(b + 2, (uint16_t)(n + 2));
	put16(b + 50, 0x1c + 2);
	assert_int_equal(tdm_ptp_parse(b, n + 2, 1, &st, err, sizeof(err)), 0);
	assert_int_equal(st.port_state, TDM_PS_MASTER);
}

static void parse_bad(const uint8_t *b, size_t n, const char *want);

/* A TIME_PROPERTIES_DATA_SET answer: gm_pds with its TLV replaced. */
static size_t time_props(uint8_t *b, size_t cap, int16_t utc, uint8_t flags)
{
	size_t n = unhex(gm_pds, b, cap);

	assert_true(cap >= 58);
	n = 58;
	put16(b + 2, (uint16_t)n);
	put16(b + 50, 2 + 4);
	put16(b + 52, TDM_PTP_MID_TIME_PROPERTIES_DATA_SET);
	put16(b + 54, (uint16_t)utc);
	b[56] = flags;
	b[57] = 0xa0;		/* timeSource INTERNAL_OSCILLATOR */
	return n;
}

static void test_parse_time_properties(void **state)
{
	struct tdm_ptp_status st;
	uint8_t b[256];
	char err[256] = "";
	size_t n;

	(void)state;
	memset(&st, 0, sizeof(st));
	n = time_props(b, sizeof(b), 37, 0x04 | 0x08);
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 0);
	assert_true(st.tp_ok);
	assert_int_equal(st.utc_offset, 37);
	assert_true(st.utc_offset_valid);
	memset(&st, 0, sizeof(st));
	n = time_props(b, sizeof(b), 36, 0x08);
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 0);
	assert_int_equal(st.utc_offset, 36);
	assert_false(st.utc_offset_valid);
	/* Three bytes: too short. */
	put16(b + 50, 2 + 3);
	put16(b + 2, 57);
	parse_bad(b, 57, "TIME_PROPERTIES_DATA_SET of 3 bytes, expected 4");
}

static void test_parse_ignored(void **state)
{
	struct tdm_ptp_status st;
	uint8_t b[256];
	char err[256] = "";
	size_t n;

	(void)state;
	memset(&st, 0, sizeof(st));
	n = unhex(gm_pds, b, sizeof(b));
	/* Another sequence id: a late answer to an earlier round. */
	assert_int_equal(tdm_ptp_parse(b, n, 2, &st, err, sizeof(err)), 1);
	/* Not a response (a GET echoed, say). */
	b[46] = 0;
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 1);
	/* Not a management message. */
	n = unhex(gm_pds, b, sizeof(b));
	b[0] = 0x00;
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 1);
	/* Another data set. */
	n = unhex(gm_pds, b, sizeof(b));
	put16(b + 52, 0x2000);
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 1);
	assert_false(st.port_ok);
	assert_false(st.time_status_ok);
}

static void parse_bad(const uint8_t *b, size_t n, const char *want)
{
	struct tdm_ptp_status st;
	char err[256] = "";

	memset(&st, 0, sizeof(st));
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	assert_false(st.port_ok);
}

static void test_parse_malformed(void **state)
{
	uint8_t b[256], c[256];
	size_t n, i;

	(void)state;
	n = unhex(gm_pds, b, sizeof(b));

	parse_bad(b, 10, "message of 10 bytes");
	parse_bad(NULL, 0, "message of 0 bytes");
	memcpy(c, b, n);
	c[1] = 0x01;
	parse_bad(c, n, "PTP version 1");
	memcpy(c, b, n);
	put16(c + 2, (uint16_t)(n + 1));
	parse_bad(c, n, "messageLength 81 in a message of 80 bytes");
	put16(c + 2, 40);
	parse_bad(c, n, "messageLength 40");
	/* A TLV longer than the message. */
	memcpy(c, b, n);
	put16(c + 50, 0x1d);
	parse_bad(c, n, "TLV 0x0001 of 29 bytes overruns the message");
	/* Stray bytes after the last TLV. */
	memcpy(c, b, n);
	put16(c + 2, (uint16_t)(n + 3));
	c[n] = c[n + 1] = c[n + 2] = 0;
	parse_bad(c, n + 3, "3 stray bytes after the TLVs");
	/* No TLV at all. */
	memcpy(c, b, n);
	put16(c + 2, 48);
	parse_bad(c, 48, "without a management TLV");
	/* Only another kind of TLV. */
	memcpy(c, b, n);
	put16(c + 48, 0x0003);
	parse_bad(c, n, "without a management TLV");
	/* A data set shorter than its definition. */
	memcpy(c, b, n);
	put16(c + 50, 0x1c - 1);
	put16(c + 2, (uint16_t)(n - 1));
	parse_bad(c, n - 1, "PORT_DATA_SET of 25 bytes, expected 26");
	memcpy(c, b, n);
	put16(c + 50, 1);
	put16(c + 2, 48 + 4 + 1);
	parse_bad(c, 53, "without an id");
	/* A port state no standard defines. */
	memcpy(c, b, n);
	c[54 + 10] = 11;
	parse_bad(c, n, "unknown port state 11");
	c[54 + 10] = 0;
	parse_bad(c, n, "unknown port state 0");

	/* Every truncation of a valid answer is refused or ignored, never
	 * read past (ASan watches).
	 */
	for (i = 0; i < n; i++) {
		struct tdm_ptp_status st;
		uint8_t *t = malloc(i ? i : 1);

		assert_non_null(t);
		memcpy(t, b, i);
		memset(&st, 0, sizeof(st));
		assert_int_equal(tdm_ptp_parse(t, i, 1, &st, NULL, 0), -1);
		free(t);
	}
}

static size_t error_status(uint8_t *b, size_t cap, uint16_t error,
			   uint16_t id, const char *text)
{
	size_t n = unhex(gm_pds, b, cap), tl = text ? strlen(text) : 0;
	size_t vlen = 8 + (text ? 1 + tl : 0);

	n = 48;
	put16(b + 48, 0x0002);
	put16(b + 50, (uint16_t)vlen);
	put16(b + 52, error);
	put16(b + 54, id);
	memset(b + 56, 0, 4);
	if (text) {
		b[60] = (uint8_t)tl;
		memcpy(b + 61, text, tl);
	}
	n = 52 + vlen;
	put16(b + 2, (uint16_t)n);
	return n;
}

static void test_parse_error_status(void **state)
{
	struct tdm_ptp_status st;
	uint8_t b[256];
	char err[256] = "";
	size_t n;

	(void)state;
	n = error_status(b, sizeof(b), 0x0002, TDM_PTP_MID_PORT_DATA_SET, NULL);
	parse_bad(b, n, "management error 0x0002 (NO_SUCH_ID) for PORT_DATA_SET");
	n = error_status(b, sizeof(b), 0x0006, TDM_PTP_MID_TIME_STATUS_NP,
			 "not here\x01");
	parse_bad(b, n, "0x0006 (NOT_SUPPORTED) for TIME_STATUS_NP: not here?");
	n = error_status(b, sizeof(b), 0x7777, TDM_PTP_MID_PORT_DATA_SET, "");
	parse_bad(b, n, "0x7777 (unknown error)");
	/* TIME_PROPERTIES_DATA_SET is optional: its error is ignored. */
	n = error_status(b, sizeof(b), 0x0002,
			 TDM_PTP_MID_TIME_PROPERTIES_DATA_SET, NULL);
	memset(&st, 0, sizeof(st));
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 1);
	assert_false(st.tp_ok);
	/* About a data set we did not ask for: ignored. */
	n = error_status(b, sizeof(b), 0x0002, 0x2000, NULL);
	memset(&st, 0, sizeof(st));
	assert_int_equal(tdm_ptp_parse(b, n, 1, &st, err, sizeof(err)), 1);
	/* A PTPText longer than the TLV is not read. */
	n = error_status(b, sizeof(b), 0x0002, TDM_PTP_MID_PORT_DATA_SET, "ab");
	b[60] = 200;
	parse_bad(b, n, "(NO_SUCH_ID) for PORT_DATA_SET");
	/* Shorter than its fixed part. */
	n = error_status(b, sizeof(b), 0x0002, TDM_PTP_MID_PORT_DATA_SET, NULL);
	put16(b + 50, 6);
	put16(b + 2, 58);
	parse_bad(b, 58, "MANAGEMENT_ERROR_STATUS of 6 bytes");
}

/* ---- the decision ----------------------------------------------------- */

static void decide(int port_state, int64_t off, int tai, bool check_tai,
		   bool want, const char *reason)
{
	struct tdm_ptp_status st = {
		.port_ok = true, .time_status_ok = true,
		.port_state = port_state, .master_offset = off,
		.tai_offset = tai,
	};
	char r[256] = "";

	assert_int_equal(tdm_ptp_good(&st, 1000, check_tai, r, sizeof(r)), want);
	if (!strstr(r, reason))
		fail_msg("reason '%s' lacks '%s'", r, reason);
}

static void test_good(void **state)
{
	struct tdm_ptp_status st;
	char r[256];

	(void)state;
	decide(TDM_PS_SLAVE, 0, 37, true, true, "port state SLAVE, offset 0 ns");
	decide(TDM_PS_SLAVE, 1000, 37, true, true, "offset 1000 ns");
	decide(TDM_PS_SLAVE, -1000, 37, true, true, "offset -1000 ns");
	decide(TDM_PS_SLAVE, 1001, 37, true, false, "offset 1001 ns exceeds 1000 ns");
	decide(TDM_PS_SLAVE, -1001, 37, true, false, "offset -1001 ns exceeds");
	decide(TDM_PS_SLAVE, INT64_MIN, 37, true, false, "exceeds 1000 ns");
	/* A member follows a grandmaster: only SLAVE is in sync. */
	decide(TDM_PS_MASTER, 0, 37, true, false, "port state MASTER");
	decide(TDM_PS_GRAND_MASTER, 0, 37, true, false, "port state GRAND_MASTER");
	decide(TDM_PS_PASSIVE, 0, 37, true, false, "port state PASSIVE");
	decide(TDM_PS_PRE_MASTER, 0, 37, true, false, "port state PRE_MASTER");
	decide(TDM_PS_UNCALIBRATED, 0, 37, true, false, "port state UNCALIBRATED");
	decide(TDM_PS_LISTENING, 0, 37, true, false, "port state LISTENING");
	decide(TDM_PS_FAULTY, 0, 37, true, false, "FAULTY");
	decide(99, 0, 37, true, false, "port state UNKNOWN");
	decide(TDM_PS_SLAVE, 0, 0, true, false, "kernel TAI offset is 0");
	decide(TDM_PS_MASTER, 0, 0, false, false, "port state MASTER");
	decide(TDM_PS_SLAVE, 0, 0, false, true, "SLAVE");

	/* The kernel's TAI offset against ptp4l's currentUtcOffset. */
	memset(&st, 0, sizeof(st));
	st.port_ok = st.time_status_ok = st.tp_ok = true;
	st.port_state = TDM_PS_SLAVE;
	st.tai_offset = 36;
	st.utc_offset = 37;
	st.utc_offset_valid = true;
	assert_false(tdm_ptp_good(&st, 1000, true, r, sizeof(r)));
	assert_string_equal(r, "kernel TAI offset 36 s is not ptp4l's currentUtcOffset 37 s: phc2sys -a or -w sets it from ptp4l");
	assert_true(tdm_ptp_good(&st, 1000, false, r, sizeof(r)));
	st.tai_offset = 37;
	assert_true(tdm_ptp_good(&st, 1000, true, r, sizeof(r)));
	/* Not valid (a grandmaster nobody told): only non-zero counts. */
	st.tai_offset = 36;
	st.utc_offset_valid = false;
	assert_true(tdm_ptp_good(&st, 1000, true, r, sizeof(r)));
	st.utc_offset_valid = true;
	st.tp_ok = false;
	assert_true(tdm_ptp_good(&st, 1000, true, r, sizeof(r)));

	memset(&st, 0, sizeof(st));
	assert_false(tdm_ptp_good(&st, 1000, false, r, sizeof(r)));
	assert_string_equal(r, "ptp4l gave no port state");
	st.port_ok = true;
	st.port_state = TDM_PS_SLAVE;
	assert_false(tdm_ptp_good(&st, 1000, false, r, sizeof(r)));
	assert_string_equal(r, "ptp4l gave no master offset");
	/* No reason buffer. */
	assert_false(tdm_ptp_good(&st, 1000, false, NULL, 0));
}

/* ---- a query round against a fake ptp4l -------------------------------- */

struct fake {
	int fd;
	char path[108];
};

static void fake_open(struct fake *f, const char *dir)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	snprintf(f->path, sizeof(f->path), "%s/ptp4l", dir);
	f->fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	assert_true(f->fd >= 0);
	strcpy(sun.sun_path, f->path);
	assert_int_equal(bind(f->fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
}

/* Read the three GETs (TIME_PROPERTIES_DATA_SET first), then answer
 * (the time properties in mode 0 only, then the port data set, so that
 * every port's answer is queued before the round can end): mode 0 as
 * asked, 1 with a stale sequence id first, 2 not at all, 3 with two
 * ports (MASTER and SLAVE), 4 with a PTPv1 answer.
 */
static void fake_answer(struct fake *f, int mode)
{
	struct sockaddr_un from;
	socklen_t fl = sizeof(from);
	uint8_t q[3][256];
	int k, order[2];

	for (k = 0; k < 3; k++) {
		ssize_t qn = recvfrom(f->fd, q[k], sizeof(q[k]), 0,
				      (struct sockaddr *)&from, &fl);

		assert_true(qn >= 54);
	}
	assert_int_equal(q[0][52] << 8 | q[0][53],
			 TDM_PTP_MID_TIME_PROPERTIES_DATA_SET);
	if (mode == 2)
		return;
	if (mode == 0) {
		uint8_t a[256];
		size_t n = time_props(a, sizeof(a), 37, 0x04);

		memcpy(a + 30, q[0] + 30, 2);	/* sequenceId */
		assert_int_equal(sendto(f->fd, a, n, 0,
					(struct sockaddr *)&from, fl),
				 (ssize_t)n);
	}
	order[0] = q[1][53] == (TDM_PTP_MID_PORT_DATA_SET & 0xff) ? 1 : 2;
	order[1] = order[0] == 1 ? 2 : 1;
	for (k = 0; k < 2; k++) {
		const uint8_t *g = q[order[k]];
		uint16_t id = (uint16_t)(g[52] << 8 | g[53]);
		uint8_t a[256];
		size_t n;

		if (id == TDM_PTP_MID_TIME_STATUS_NP)
			n = slave_tsn(a, sizeof(a));
		else
			n = unhex(gm_pds, a, sizeof(a));
		memcpy(a + 30, g + 30, 2);	/* sequenceId */
		if (mode == 4 && id == TDM_PTP_MID_PORT_DATA_SET) {
			a[1] = 1;
		} else if (mode == 1) {
			uint8_t s[256];

			memcpy(s, a, n);
			s[31] ^= 0x55;
			s[54 + 10] = TDM_PS_FAULTY;
			assert_int_equal(sendto(f->fd, s, n, 0,
						(struct sockaddr *)&from, fl),
					 (ssize_t)n);
		}
		if (id == TDM_PTP_MID_PORT_DATA_SET && mode == 3) {
			assert_int_equal(sendto(f->fd, a, n, 0,
						(struct sockaddr *)&from, fl),
					 (ssize_t)n);
			a[54 + 10] = TDM_PS_SLAVE;
		}
		assert_int_equal(sendto(f->fd, a, n, 0,
					(struct sockaddr *)&from, fl),
				 (ssize_t)n);
	}
}

static void test_query(void **state)
{
	char dir[] = "/tmp/test_ptp.XXXXXX", err[256], local[108];
	struct tdm_ptp p;
	struct tdm_ptp_status st;
	struct fake f;
	int mode;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fake_open(&f, dir);
	assert_int_equal(tdm_ptp_open(&p, f.path, 0, err, sizeof(err)), 0);
	/* Bound beside ptp4l's socket, as pmc does. */
	assert_int_equal(strncmp(p.local, dir, strlen(dir)), 0);
	strcpy(local, p.local);
	assert_int_equal(access(local, F_OK), 0);

	for (mode = 0; mode <= 4; mode++) {
		int rc;

		/* The fake answers from a child, the query waits in us. */
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			fake_answer(&f, mode);
			_exit(0);
		}
		memset(err, 0, sizeof(err));
		rc = tdm_ptp_query(&p, 300, &st, err, sizeof(err));
		switch (mode) {
		case 0:
		case 1:
			assert_int_equal(rc, 0);
			assert_true(st.port_ok && st.time_status_ok);
			assert_int_equal(st.port_state, TDM_PS_MASTER);
			assert_int_equal(st.master_offset, -1234);
			assert_int_equal(st.nports, 1);
			/* Asked first, so answered within the round. */
			assert_int_equal(st.tp_ok, mode == 0);
			if (mode == 0)
				assert_int_equal(st.utc_offset, 37);
			break;
		case 2:
			assert_int_equal(rc, -1);
			assert_string_equal(err, "ptp4l did not answer within 300 ms");
			break;
		case 3:
			assert_int_equal(rc, 0);
			assert_int_equal(st.nports, 2);
			assert_int_equal(st.port_state, TDM_PS_SLAVE);
			break;
		case 4:
			assert_int_equal(rc, -1);
			assert_string_equal(err, "ptp4l: PTP version 1");
			break;
		}
		assert_int_equal(waitpid(pid, NULL, 0), pid);
	}

	/* ptp4l gone: an immediate, precise error. */
	close(f.fd);
	unlink(f.path);
	assert_int_equal(tdm_ptp_query(&p, 300, &st, err, sizeof(err)), -1);
	if (!strstr(err, "cannot reach ptp4l at ") || !strstr(err, "No such file"))
		fail_msg("unexpected error '%s'", err);
	tdm_ptp_close(&p);
	assert_int_equal(access(local, F_OK), -1);
	assert_int_equal(rmdir(dir), 0);

	/* Paths that cannot work. */
	assert_int_equal(tdm_ptp_open(&p, "", 0, err, sizeof(err)), -1);
	assert_string_equal(err, "bad ptp4l socket path ''");
	assert_int_equal(tdm_ptp_open_dir(&p, "/x", 0, "/nonexistent-dir",
					  err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bind /nonexistent-dir/tdmd."));
	tdm_ptp_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_matches_pmc),
		cmocka_unit_test(test_build_fields),
		cmocka_unit_test(test_parse_captured),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_time_properties),
		cmocka_unit_test(test_parse_ignored),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_error_status),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
