/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by every tdmwin tool: parsing numbers and times with
 * precise errors, clock names, reading the clocks.
 */
#ifndef TDM_UTIL_H
#define TDM_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define TDM_NSEC_PER_SEC	1000000000ULL
#define TDM_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * A time with an optional unit: "250", "250ns", "1.5us", "10ms", "2s".
 * A bare number is nanoseconds.  Fractions are allowed as long as the
 * result is a whole number of ns.  Returns 0, or -1 with a message in err
 * ("'10xs': unknown unit 'xs' (use ns, us, ms or s)", "... is too large").
 */
int tdm_parse_time(const char *s, uint64_t *ns, char *err, size_t errlen);

/* Unsigned decimal or 0x-hex integer with an upper bound; same errors. */
int tdm_parse_u64(const char *s, uint64_t max, uint64_t *v,
		  char *err, size_t errlen);

/* The value of one hex digit (0-9, a-f, A-F), or -1. */
int tdm_hex_digit(char c);

/* "on"/"off", "yes"/"no", "1"/"0", "true"/"false". */
int tdm_parse_bool(const char *s, bool *v, char *err, size_t errlen);

/* Print ns as the shortest exact form: "10ms", "1500us", "7ns". */
const char *tdm_fmt_time(uint64_t ns, char *buf, size_t len);

/* "tai", "realtime", "monotonic", "boottime" (any case, with or without a
 * CLOCK_ prefix) <-> clockid.  tdm_clock_parse() returns 0 or -1.
 * tdm_clock_name() returns "tai" etc., "unknown" for other ids (never NULL).
 */
int tdm_clock_parse(const char *s, int *clockid);
const char *tdm_clock_name(int clockid);

/* Nanoseconds on clockid (CLOCK_TAI, ...); -1 if the clock cannot be read. */
int64_t tdm_clock_ns(int clockid);
/* Nanoseconds on CLOCK_MONOTONIC, for deadlines and durations. */
int64_t tdm_mono_ns(void);

/*
 * tdm_stop_on_signals(): SIGINT and SIGTERM set tdm_stop instead of ending
 * the process, so that a tool's loop can finish and report.  Installed
 * without SA_RESTART: a blocking read, poll or sleep returns EINTR at once.
 * 0, or -1 with errno.  A tool may clear tdm_stop to go on after one.
 */
extern volatile sig_atomic_t tdm_stop;
int tdm_stop_on_signals(void);

/*
 * A rate limit for log lines a peer can cause: at most burst in each
 * interval.  tdm_ratelimit() says whether the event at now may be logged;
 * on the first one allowed after some were not, *missed gets how many
 * were not (else 0), to be logged with it.
 */
struct tdm_ratelimit {
	int64_t interval_ns;
	unsigned int burst;
	int64_t start;		/* of the current interval */
	unsigned int n;		/* events in it */
	unsigned long long missed;
};

bool tdm_ratelimit(struct tdm_ratelimit *rl, int64_t now,
		   unsigned long long *missed);

/*
 * Hysteresis of a health check (tdmd's PTP and PHC checks): ok turns
 * false after need_bad consecutive bad results and true again after
 * need_good consecutive good ones; it starts false (not yet proven).
 * tdm_hyst_step() counts one result and returns true if ok changed.
 */
struct tdm_hyst {
	unsigned int good, bad;	/* consecutive results of each kind */
	bool ok;
};

bool tdm_hyst_step(struct tdm_hyst *h, bool good, unsigned int need_good,
		   unsigned int need_bad);

/* The name of process pid (/proc/PID/comm, no newline); "" if gone. */
void tdm_proc_comm(int pid, char *comm, size_t len);

/* Bounded string copy that always terminates; returns -1 if truncated. */
int tdm_strlcpy(char *dst, const char *src, size_t size);
/*
 * Copy text that came from a peer so that it can go into a log line or a
 * terminal: printable ASCII and spaces as they are, a backslash as "\\",
 * every other byte (newlines, escape sequences, UTF-8) as "\xNN".  Always
 * terminates, never cuts an escape; returns -1 if truncated.
 */
int tdm_text_escape(char *dst, const char *src, size_t size);
/*
 * printf into err[errlen] (cut to fit), if err is not NULL: the error text
 * of every tdmwin function.  Returns -1, so that a parser can end with
 * "return tdm_set_err(err, errlen, ...);".
 */
int tdm_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The same behind "FILE:LINE: " for an error in a file: "FILE: " when line
 * is not positive, "line LINE: " when file is NULL, nothing when neither.
 */
int tdm_set_err_at(char *err, size_t errlen, const char *file, int line,
		   const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
