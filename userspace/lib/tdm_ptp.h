/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Asking ptp4l whether this node is synchronised, over its management UNIX
 * socket with raw PTP management messages (as pmc, phc2sys -w and
 * isochron do): GET TIME_STATUS_NP (master offset, grandmaster), GET
 * PORT_DATA_SET (port state) and GET TIME_PROPERTIES_DATA_SET (the
 * grandmaster's currentUtcOffset).  Plus the kernel's TAI offset
 * (adjtimex).
 */
#ifndef TDM_PTP_H
#define TDM_PTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TDM_PTP_DEFAULT_SOCKET	"/var/run/ptp4l"

/* linuxptp's port states (fsm.h). */
enum tdm_port_state {
	TDM_PS_INITIALIZING = 1,
	TDM_PS_FAULTY,
	TDM_PS_DISABLED,
	TDM_PS_LISTENING,
	TDM_PS_PRE_MASTER,
	TDM_PS_MASTER,
	TDM_PS_PASSIVE,
	TDM_PS_UNCALIBRATED,
	TDM_PS_SLAVE,
	TDM_PS_GRAND_MASTER,
};

struct tdm_ptp {
	int fd;			/* AF_UNIX datagram socket, bound */
	char local[108];	/* our bound path, unlinked on close */
	char remote[108];	/* ptp4l's socket */
	uint8_t domain;
	uint16_t seq;
	/* Additions: set after tdm_ptp_open() when needed. */
	uint8_t transport_specific;	/* 1 for gPTP (802.1AS) configs */
	uint16_t port_number;		/* our source port: the pid, as pmc */
};

struct tdm_ptp_status {
	bool time_status_ok;	/* TIME_STATUS_NP answered */
	int64_t master_offset;	/* ns */
	bool gm_present;
	uint8_t gm_identity[8];
	bool port_ok;		/* PORT_DATA_SET answered */
	int port_state;		/* enum tdm_port_state */
	int tai_offset;		/* s, from adjtimex */
	/* Addition: PORT_DATA_SET answers (one per port of a boundary
	 * clock).  port_state is then the most telling one: SLAVE, else
	 * UNCALIBRATED, else GRAND_MASTER/MASTER, else the others.
	 */
	unsigned int nports;
	/* Addition: TIME_PROPERTIES_DATA_SET, when ptp4l answered it (it is
	 * asked first and not waited for: tp_ok false without it).
	 */
	bool tp_ok;
	int utc_offset;		/* s, currentUtcOffset */
	bool utc_offset_valid;	/* currentUtcOffsetValid */
};

/*
 * Bind a datagram socket in dir (e.g. /var/run) named tdmd.<pid>.<n>
 * and aim it at ptp4l's socket path (NULL: TDM_PTP_DEFAULT_SOCKET).
 * tdm_ptp_open() binds in the folder of ptp4l's socket, as pmc does;
 * tdm_ptp_open_dir() in dir.  A stale socket of that name is removed.
 */
int tdm_ptp_open(struct tdm_ptp *p, const char *ptp4l_path, uint8_t domain,
		 char *err, size_t errlen);
int tdm_ptp_open_dir(struct tdm_ptp *p, const char *ptp4l_path,
		     uint8_t domain, const char *dir, char *err, size_t errlen);
void tdm_ptp_close(struct tdm_ptp *p);

/*
 * One query round: both GETs, waiting at most timeout_ms for the answers
 * (stale answers to earlier rounds are discarded by sequence id).  Fills
 * st; returns 0 if both answered, -1 with err ("ptp4l did not answer
 * within 100 ms", "ptp4l: management error 0x0003 ...") otherwise.
 */
int tdm_ptp_query(struct tdm_ptp *p, int timeout_ms,
		  struct tdm_ptp_status *st, char *err, size_t errlen);

/* Kernel TAI-UTC offset in seconds (adjtimex), or -1 with err. */
int tdm_tai_offset(int *tai, char *err, size_t errlen);

const char *tdm_port_state_name(int state);

/*
 * The decision, for a node that takes its time from PTP (a member):
 * good when the port is SLAVE (any other state, MASTER included, means
 * the node is not following a grandmaster) and |master_offset| <=
 * threshold, and, if check_tai, the kernel's TAI offset is not zero and,
 * when ptp4l reports a valid currentUtcOffset, equal to it.  reason
 * explains a bad result ("port state MASTER", "offset 1234 ns exceeds
 * 1000 ns", "kernel TAI offset is 0 ...", "kernel TAI offset 36 s is not
 * ptp4l's currentUtcOffset 37 s ...").
 */
bool tdm_ptp_good(const struct tdm_ptp_status *st, uint64_t threshold_ns,
		  bool check_tai, char *reason, size_t len);

/* Pure codec, exported for tests and the fuzzer. */
#define TDM_PTP_MID_TIME_STATUS_NP	0xC000
#define TDM_PTP_MID_PORT_DATA_SET	0x2004
#define TDM_PTP_MID_TIME_PROPERTIES_DATA_SET	0x2003
/*
 * A GET as pmc 3.1 sends it (-b 0): header with the all-ones target
 * port, source port number = our pid, the data field zero-filled to the
 * size of the data set (empty for other ids).  Returns its length, or
 * -1 if len is too small.  _ex takes the transportSpecific nibble and
 * the source port number.
 */
int tdm_ptp_build_get(uint8_t *buf, size_t len, uint8_t domain,
		      uint16_t seq, uint16_t mgmt_id);
int tdm_ptp_build_get_ex(uint8_t *buf, size_t len, uint8_t domain,
			 uint8_t transport_specific, uint16_t port,
			 uint16_t seq, uint16_t mgmt_id);
/* Parse a management response: returns 0 and fills st for the ids above,
 * 1 for a message to ignore (other id / not a response / other seq, or a
 * management error for TIME_PROPERTIES_DATA_SET, which is optional),
 * -1 with err for a malformed message or a management error status.
 * Each call fills only the fields of the one data set it found.
 */
int tdm_ptp_parse(const uint8_t *buf, size_t len, uint16_t expect_seq,
		  struct tdm_ptp_status *st, char *err, size_t errlen);

#endif
