// SPDX-License-Identifier: GPL-2.0
/*
 * The node's metrics outside the control socket: an HTTP endpoint
 * (metrics_listen, GET /metrics) and a node_exporter textfile
 * (metrics_textfile, rewritten every metrics_interval).
 *
 * One producer: both take their text from the role's answer to the
 * control request "metrics", the one tdmctl metrics prints, which a role
 * answers at once (report_reply_text()).
 *
 * One thread: the HTTP server is libmicrohttpd without a thread of its
 * own (MHD_USE_EPOLL, external mode).  Its epoll descriptor sits in
 * tdmd's poll loop like any socket, MHD_run() is called when it is
 * readable and when MHD_get_timeout() says, and the request handler runs
 * inside MHD_run() on tdmd's one thread: it reads the role's state
 * between two events, as a control request does, and nothing is shared
 * with another thread.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "tdm_cfg.h"
#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

#define HTTP_MAX_CLIENTS	16
#define HTTP_TIMEOUT_S		10
#define PROM_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

/* A "metrics" request to the role, and the reply it got. */
struct grab {
	struct ctl_req r;
	bool done, ok;
	char *body;
};

struct metrics {
	const struct tdmd_conf *cf;	/* the running one (reload swaps it) */
	struct role *role;
	struct grab grab;
	struct MHD_Daemon *httpd;	/* NULL: no metrics_listen */
	struct ev hev;			/* its epoll descriptor */
	int64_t http_due;		/* MHD_run() by then, or INT64_MAX */
	int64_t file_due;		/* the next textfile, or INT64_MAX */
	bool file_failing;		/* the last write failed (logged) */
};

static void grab_reply(struct ctl_req *r, bool ok, const char *body)
{
	struct grab *g = (struct grab *)((char *)r - offsetof(struct grab, r));

	free(g->body);
	g->body = strdup(body ? body : "");
	g->ok = ok && g->body;
	g->done = true;
}

/*
 * The metrics text (malloc'd, its length in *len), or NULL with the
 * reason in err.
 */
static char *metrics_text(struct metrics *m, size_t *len, char *err,
			  size_t errlen)
{
	struct grab *g = &m->grab;
	char *t;

	free(g->body);
	memset(g, 0, sizeof(*g));
	g->r.cmd = "metrics";
	g->r.body = "";
	g->r.reply = grab_reply;
	m->role->ops->control(m->role, &g->r);
	if (!g->done) {
		tdm_set_err(err, errlen, "the %s did not answer 'metrics' at once",
			    tdmd_role_name(m->role->ops->role));
		return NULL;
	}
	if (!g->ok) {
		tdm_set_err(err, errlen, "%.*s", (int)strcspn(g->body ? g->body : "",
							    "\n"),
			    g->body ? g->body : "out of memory");
		return NULL;
	}
	t = g->body;
	g->body = NULL;
	*len = strlen(t);
	return t;
}

/* ---- HTTP ---- */

static enum MHD_Result http_reply(struct MHD_Connection *c, unsigned int status,
				  char *text, const char *type)
{
	struct MHD_Response *rsp;
	enum MHD_Result rc;

	rsp = MHD_create_response_from_buffer(strlen(text), text,
					      MHD_RESPMEM_MUST_FREE);
	if (!rsp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(rsp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(rsp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = MHD_queue_response(c, status, rsp);
	MHD_destroy_response(rsp);
	return rc;
}

static enum MHD_Result http_error(struct MHD_Connection *c, unsigned int status,
				  const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum MHD_Result http_error(struct MHD_Connection *c, unsigned int status,
				  const char *fmt, ...)
{
	char *text;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return http_reply(c, status, text, "text/plain; charset=utf-8");
}

static enum MHD_Result on_http(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload,
			       size_t *upload_size, void **state)
{
	struct metrics *m = cls;
	char err[512], *text;
	size_t len;

	(void)version;
	(void)upload;
	/* Called first with the headers only: answer then, read no body. */
	*upload_size = 0;
	*state = NULL;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return http_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "%s: only GET and HEAD\n", method);
	if (strcmp(url, "/metrics"))
		return http_error(c, MHD_HTTP_NOT_FOUND,
				  "not found: the metrics are at /metrics\n");
	text = metrics_text(m, &len, err, sizeof(err));
	if (!text)
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "%s\n", err);
	return http_reply(c, MHD_HTTP_OK, text, PROM_CONTENT_TYPE);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_warn("metrics_listen: %.*s", (int)strcspn(msg, "\n"), msg);
}

/* Run MHD and note when it wants to run again. */
static void http_run(struct metrics *m, int64_t now)
{
	MHD_UNSIGNED_LONG_LONG ms;

	MHD_run(m->httpd);
	if (MHD_get_timeout(m->httpd, &ms) == MHD_YES)
		m->http_due = now + (int64_t)(ms > 60000 ? 60000 : ms) * 1000000;
	else
		m->http_due = INT64_MAX;
}

static void on_http_io(struct ev *e, short revents)
{
	(void)revents;
	http_run(e->ctx, tdm_mono_ns());
}

static int http_open(struct metrics *m, struct ev_loop *loop, char *err,
		     size_t errlen)
{
	const struct tdmd_hostport *hp = &m->cf->metrics_listen;
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
	}, *ai;
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	int rc;

	rc = getaddrinfo(hp->host, hp->port, &hints, &ai);
	if (rc)
		return tdm_set_err(err, errlen, "metrics_listen %s: %s (give a numeric address)",
				   hp->host, gai_strerror(rc));
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->httpd = MHD_start_daemon(flags, 0, NULL, NULL, on_http, m,
				    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, m,
				    MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CLIENTS,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
				    MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!m->httpd)
		return tdm_set_err(err, errlen, "metrics_listen %s port %s: cannot serve HTTP there (in use? the log says why)",
				   hp->host, hp->port);
	info = MHD_get_daemon_info(m->httpd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info)
		return tdm_set_err(err, errlen, "metrics_listen: libmicrohttpd has no epoll descriptor");
	m->hev = (struct ev){ .fd = info->epoll_fd, .events = POLLIN,
			      .cb = on_http_io, .ctx = m, .slot = -1 };
	if (ev_add(loop, &m->hev))
		return tdm_set_err(err, errlen, "metrics_listen: %s", strerror(errno));
	m->http_due = INT64_MAX;
	log_info("metrics at http://%s%s%s:%s/metrics", strchr(hp->host, ':') ? "[" : "",
		 hp->host, strchr(hp->host, ':') ? "]" : "", hp->port);
	return 0;
}

/* ---- textfile ---- */

static void file_write(struct metrics *m)
{
	const char *path = m->cf->metrics_textfile;
	char err[PATH_MAX + 512], *text;
	size_t len;
	bool ok;

	text = metrics_text(m, &len, err, sizeof(err));
	/* node_exporter reads it as another user: 0644. */
	ok = text && !tdm_write_file_atomic(path, text, len, 0644, err, sizeof(err));
	free(text);
	if (ok) {
		if (m->file_failing)
			log_notice("metrics_textfile %s: written again", path);
		m->file_failing = false;
		return;
	}
	/* Once per run of failures, not every interval. */
	if (!m->file_failing)
		log_err("metrics_textfile: %s (tried again every %llu ms)", err,
			(unsigned long long)(m->cf->metrics_interval_ns / 1000000));
	m->file_failing = true;
}

/* ---- the daemon's side ---- */

struct metrics *metrics_open(struct ev_loop *loop, const struct tdmd_conf *cf,
			     struct role *role, char *err, size_t errlen)
{
	struct metrics *m;

	if (!cf->metrics_listen.host[0] && !cf->metrics_textfile[0])
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		tdm_set_err(err, errlen, "out of memory");
		return NULL;
	}
	m->cf = cf;
	m->role = role;
	m->hev.slot = -1;
	m->http_due = m->file_due = INT64_MAX;
	if (cf->metrics_listen.host[0] && http_open(m, loop, err, errlen)) {
		metrics_close(m);
		return NULL;
	}
	if (cf->metrics_textfile[0]) {
		m->file_due = 0;	/* at once */
		log_info("metrics to %s every %llu ms", cf->metrics_textfile,
			 (unsigned long long)(cf->metrics_interval_ns / 1000000));
	}
	return m;
}

int64_t metrics_tick(struct metrics *m, int64_t now)
{
	if (!m)
		return INT64_MAX;
	if (m->httpd && now >= m->http_due)
		http_run(m, now);
	if (m->cf->metrics_textfile[0] && now >= m->file_due) {
		file_write(m);
		m->file_due = now + (int64_t)m->cf->metrics_interval_ns;
	}
	return m->http_due < m->file_due ? m->http_due : m->file_due;
}

void metrics_close(struct metrics *m)
{
	if (!m)
		return;
	if (m->httpd) {
		ev_del(&m->hev);
		MHD_stop_daemon(m->httpd);
	}
	/* Stale metrics would say tdmd runs: gone with it. */
	if (m->cf->metrics_textfile[0] && unlink(m->cf->metrics_textfile) &&
	    errno != ENOENT)
		log_warn("metrics_textfile %s: cannot remove it: %s",
			 m->cf->metrics_textfile, strerror(errno));
	free(m->grab.body);
	free(m);
}
