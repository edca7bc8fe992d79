/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client side of tdmd's control socket (tdmd/ctl.c), for tdmctl and
 * tdmstat: one request per connection,
 *
 *   request:  "COMMAND [json]\n" [body], then the client shuts down writing
 *   answer:   "ok\n" body   or   "error\n" message, then tdmd closes
 */
#ifndef TDM_CTL_H
#define TDM_CTL_H

#include <stddef.h>

#define TDM_CTL_DEFAULT_SOCKET	"/run/tdmd.sock"
#define TDM_CTL_MAX_ANSWER	(16 * 1024 * 1024)

/* What tdm_ctl_request() returns. */
enum tdm_ctl_res {
	TDM_CTL_OK = 0,		/* "ok": *answer is its body */
	TDM_CTL_REFUSED,	/* "error": *answer is tdmd's message */
	TDM_CTL_BAD_PATH,	/* the socket path does not fit */
	TDM_CTL_UNREACHABLE,	/* no connection, no answer in time, or
				 * closed without one */
	TDM_CTL_FAILED,		/* reading failed, malformed or too large
				 * answer, out of memory */
};

/*
 * Send line (with its '\n') and body (NULL: none) to the socket at path
 * and read the answer until tdmd closes the connection, for at most
 * timeout_ms in all.  For TDM_CTL_OK and TDM_CTL_REFUSED, *answer is the
 * malloc'd, NUL-terminated text after the first line (free() it);
 * otherwise *answer is NULL and err says what went wrong, e.g.
 * "cannot reach tdmd at /run/tdmd.sock: No such file or directory" or
 * "no answer from tdmd within 5 s".
 */
enum tdm_ctl_res tdm_ctl_request(const char *path, const char *line,
				 const char *body, int timeout_ms,
				 char **answer, char *err, size_t errlen);

#endif
