/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PHC health: the offset between a network interface's PTP hardware clock
 * (/dev/ptpN, which ptp4l steers) and the system clock (CLOCK_TAI, which
 * the tdmwin qdisc runs on, and which phc2sys steers from the PHC), read
 * as phc2sys reads it: PTP_SYS_OFFSET_PRECISE (a cross timestamp), else
 * PTP_SYS_OFFSET_EXTENDED, else the basic PTP_SYS_OFFSET, taking the
 * sample with the narrowest system-time bracket and its midpoint.  The
 * kernel's system stamps are CLOCK_REALTIME: the kernel's TAI offset
 * (adjtimex) is added to compare them with the PHC's TAI timescale.
 *
 * The ioctls are a thin layer over pure arithmetic (tdm_phc_best,
 * tdm_phc_offset_of, tdm_phc_fallback, tdm_phc_good), which test_phc
 * checks with synthetic samples.
 */
#ifndef TDM_PHC_H
#define TDM_PHC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Samples per reading: phc2sys's default (-N 5). */
#define TDM_PHC_SAMPLES		5

/* In the order tried: each falls back to the next. */
enum tdm_phc_method {
	TDM_PHC_PRECISE,	/* PTP_SYS_OFFSET_PRECISE: no bracket */
	TDM_PHC_EXTENDED,	/* PTP_SYS_OFFSET_EXTENDED */
	TDM_PHC_BASIC,		/* PTP_SYS_OFFSET */
	TDM_PHC_NMETHODS
};

/* One sample, ns; sys_* on CLOCK_REALTIME.  PRECISE: before = after. */
struct tdm_phc_sample {
	int64_t sys_before;
	int64_t phc;
	int64_t sys_after;
};

struct tdm_phc_offset {
	int64_t offset_ns;	/* PHC - CLOCK_TAI (REALTIME + tai) */
	int64_t delay_ns;	/* the bracket of the sample used; 0: PRECISE */
	int method;		/* enum tdm_phc_method */
	int tai_offset;		/* s, added to the REALTIME stamps */
};

struct tdm_phc {
	int fd;			/* /dev/ptpN, read only; -1: closed */
	int index;
	int method;		/* first to try: the last one that worked */
	char path[24];
};

/*
 * The interface's PHC index (ETHTOOL_GET_TS_INFO): 0 with *index -1 when
 * it has none, and its SOF_TIMESTAMPING_* capabilities if so_timestamping
 * is not NULL; -1 with err (no such device, the driver does not report
 * it: errno is kept).
 */
int tdm_phc_index(const char *ifname, int *index, uint32_t *so_timestamping,
		  char *err, size_t errlen);

/* Open /dev/ptp<index> read only: 0, or -1 with err (errno kept). */
int tdm_phc_open(struct tdm_phc *p, int index, char *err, size_t errlen);
void tdm_phc_close(struct tdm_phc *p);

/*
 * The dynamic POSIX clock of an open PHC fd, for clock_gettime() (the
 * kernel's FD_TO_CLOCKID: ~fd << 3 | CLOCKFD).  Only reading and
 * clock_nanosleep's refusal (EOPNOTSUPP) come with it: a dynamic clock
 * cannot be slept on.
 */
int tdm_phc_clockid(int fd);

/*
 * One reading: the best method the device supports (remembered for the
 * next call), TDM_PHC_SAMPLES samples, the narrowest.  0, or -1 with err
 * ("PTP_SYS_OFFSET on /dev/ptp0: Input/output error").
 */
int tdm_phc_read(struct tdm_phc *p, struct tdm_phc_offset *o, char *err,
		 size_t errlen);

/* ---- the pure part ---- */

/*
 * The index of the sample with the narrowest bracket (the first of equal
 * ones), or -1 if none has after >= before (a system clock step inside
 * every sample).
 */
int tdm_phc_best(const struct tdm_phc_sample *s, unsigned int n);

/*
 * From n samples of method and the kernel TAI offset tai (s): the best
 * sample's PHC minus the midpoint of its bracket plus tai, in o.  0, or
 * -1 with err when no sample is usable.
 */
int tdm_phc_offset_of(const struct tdm_phc_sample *s, unsigned int n,
		      int method, int tai, struct tdm_phc_offset *o,
		      char *err, size_t errlen);

/*
 * The method to try after method failed with errno e: the next one when
 * e says the device or the kernel lacks it (EOPNOTSUPP, EINVAL, ENOTTY),
 * as phc2sys falls back; -1 for any other error or after the last method.
 */
int tdm_phc_fallback(int method, int e);

/* "precise", "extended", "basic" (the ioctl's name by tdm_phc_ioctl_name). */
const char *tdm_phc_method_name(int method);
const char *tdm_phc_ioctl_name(int method);

/*
 * The decision: good when |offset| <= threshold_ns.  reason explains a
 * bad one ("PHC offset 1000000123 ns (PHC - CLOCK_TAI) exceeds 5000 ns").
 */
bool tdm_phc_good(const struct tdm_phc_offset *o, uint64_t threshold_ns,
		  char *reason, size_t len);

#endif
