// SPDX-License-Identifier: GPL-2.0
/*
 * The client of tdmd's control socket: one request, one answer.  tdmctl
 * prints the answer; tdmstat reads plans from it.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tdm_ctl.h"
#include "tdm_util.h"

static int send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read until EOF into a malloc'd buffer; *len bytes, NUL-terminated. */
static enum tdm_ctl_res read_all(int fd, int timeout_ms, char **out,
				 size_t *len, char *err, size_t errlen)
{
	int64_t end = tdm_mono_ns() +
		      (int64_t)timeout_ms * 1000000;
	size_t cap = 0;
	char *buf = NULL;

	*len = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = end - tdm_mono_ns();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)((left + 999999) / 1000000)) == 0) {
			tdm_set_err(err, errlen, "no answer from tdmd within %d s",
				    (timeout_ms + 999) / 1000);
			free(buf);
			return TDM_CTL_UNREACHABLE;
		}
		if (*len + 65536 + 1 > cap) {
			char *b;

			cap = cap ? cap * 2 : 131072;
			if (cap > TDM_CTL_MAX_ANSWER) {
				tdm_set_err(err, errlen, "answer from tdmd too large");
				free(buf);
				return TDM_CTL_FAILED;
			}
			b = realloc(buf, cap);
			if (!b) {
				tdm_set_err(err, errlen, "out of memory");
				free(buf);
				return TDM_CTL_FAILED;
			}
			buf = b;
		}
		n = recv(fd, buf + *len, cap - *len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		/* After its answer tdmd may close without reading our request
		 * ("too many control clients"): the answer is what counts.
		 */
		if (n < 0 && errno == ECONNRESET && *len)
			break;
		if (n < 0) {
			tdm_set_err(err, errlen, "reading the answer from tdmd: %s",
				    strerror(errno));
			free(buf);
			return TDM_CTL_FAILED;
		}
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	if (!*len) {
		tdm_set_err(err, errlen,
			    "tdmd closed the connection without an answer");
		free(buf);
		return TDM_CTL_UNREACHABLE;
	}
	buf[*len] = '\0';
	*out = buf;
	return TDM_CTL_OK;
}

enum tdm_ctl_res tdm_ctl_request(const char *path, const char *line,
				 const char *body, int timeout_ms,
				 char **answer, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	enum tdm_ctl_res res;
	char *buf = NULL;
	size_t len;
	bool ok;
	int fd;

	*answer = NULL;
	if (tdm_strlcpy(sun.sun_path, path, sizeof(sun.sun_path))) {
		tdm_set_err(err, errlen, "socket path too long: %s", path);
		return TDM_CTL_BAD_PATH;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		tdm_set_err(err, errlen, "cannot reach tdmd at %s: %s", path,
			    strerror(errno));
		if (fd >= 0)
			close(fd);
		return TDM_CTL_UNREACHABLE;
	}
	if (send_all(fd, line, strlen(line)) ||
	    (body && send_all(fd, body, strlen(body))) ||
	    shutdown(fd, SHUT_WR)) {
		int e = errno;

		/* tdmd may have refused us with a reply before closing ("too
		 * many control clients"): that reply says more than EPIPE.
		 */
		if ((e == EPIPE || e == ECONNRESET) &&
		    read_all(fd, timeout_ms, &buf, &len, err, errlen) ==
		    TDM_CTL_OK && !strncmp(buf, "error\n", 6))
			goto answered;
		free(buf);
		buf = NULL;
		tdm_set_err(err, errlen, "sending the request to tdmd: %s",
			    strerror(e));
		close(fd);
		return TDM_CTL_UNREACHABLE;
	}
	res = read_all(fd, timeout_ms, &buf, &len, err, errlen);
	if (res != TDM_CTL_OK) {
		close(fd);
		return res;
	}
answered:
	close(fd);
	ok = !strncmp(buf, "ok\n", 3);
	if (!ok && strncmp(buf, "error\n", 6)) {
		tdm_set_err(err, errlen, "malformed answer from tdmd");
		free(buf);
		return TDM_CTL_FAILED;
	}
	/* The body moves to the front: one allocation for the caller. */
	len -= ok ? 3 : 6;
	memmove(buf, buf + (ok ? 3 : 6), len + 1);
	*answer = buf;
	return ok ? TDM_CTL_OK : TDM_CTL_REFUSED;
}
