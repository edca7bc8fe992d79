// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdmd's control socket (tdmd/ctl.c) on its real poll loop
 * (tdmd/loop.c), with a fake role: a request the role holds does not stop
 * others from being answered, a reply larger than the socket takes is
 * queued while the loop goes on and arrives whole, a client that reads
 * nothing of its reply is dropped after the stall time, a reply over the
 * bound is not queued, and the client limit.
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

#define MIB	(1024 * 1024)

struct fake_role {
	struct role role;
	struct ctl_req *held;
	size_t big;			/* body length for "big" */
};

struct fx {
	struct fake_role fr;
	struct ev_loop *loop;
	struct ctl *ctl;
	char path[108];
};

static void fake_control(struct role *r, struct ctl_req *req)
{
	struct fake_role *fr = (struct fake_role *)r;
	char *b;

	if (!strcmp(req->cmd, "hold")) {
		fr->held = req;
	} else if (!strcmp(req->cmd, "big")) {
		b = malloc(fr->big + 1);
		assert_non_null(b);
		memset(b, 'x', fr->big);
		b[fr->big] = '\0';
		ctl_reply(req, true, b);
		free(b);
	} else {
		ctl_reply(req, true, req->cmd);
	}
}

static const struct role_ops fake_ops = { .control = fake_control };

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	f->fr.role.ops = &fake_ops;
	snprintf(f->path, sizeof(f->path), "/tmp/test_ctl.%d.sock", getpid());
	f->loop = ev_loop_new();
	assert_non_null(f->loop);
	f->ctl = ctl_open(f->loop, f->path, &f->fr.role, err, sizeof(err));
	if (!f->ctl)
		fail_msg("ctl_open: %s", err);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	if (f->fr.held)
		ctl_reply(f->fr.held, false, "teardown\n");
	ctl_close(f->ctl);
	assert_int_equal(access(f->path, F_OK), -1);
	ev_loop_free(f->loop);
	free(f);
	return 0;
}

/* ---- the loop ---- */

struct pump {
	int64_t end;
	struct ctl *ctl;
	struct ev_loop *loop;
};

static int64_t pump_tick(void *ctx, int64_t now)
{
	struct pump *p = ctx;
	int64_t next = ctl_tick(p->ctl, now);

	if (now >= p->end)
		ev_stop(p->loop);
	return next < now + 1000000 ? next : now + 1000000;
}

/* Run the loop for about ms milliseconds; how long it really took. */
static int64_t pump(struct fx *f, int ms)
{
	int64_t t0 = tdm_mono_ns();
	struct pump p = { .end = t0 + (int64_t)ms * 1000000, .ctl = f->ctl,
			  .loop = f->loop };

	ev_set_tick(f->loop, pump_tick, &p);
	assert_int_equal(ev_run(f->loop), 0);
	return tdm_mono_ns() - t0;
}

/* ---- clients ---- */

static int ask(struct fx *f, const char *cmd)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char line[128];
	int fd, n;

	strcpy(sun.sun_path, f->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	if (cmd) {
		n = snprintf(line, sizeof(line), "%s\n", cmd);
		assert_int_equal(send(fd, line, n, 0), n);
		assert_int_equal(shutdown(fd, SHUT_WR), 0);
	}
	return fd;
}

/* Bytes waiting on fd now (without blocking), appended to buf. */
static size_t take(int fd, char *buf, size_t len, size_t cap, bool *eof)
{
	for (;;) {
		ssize_t n;

		if (len == cap)
			return len;
		n = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
		if (n > 0) {
			len += n;
			continue;
		}
		if (n == 0)
			*eof = true;
		else
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		return len;
	}
}

/* The whole reply on fd, running the loop meanwhile; its length. */
static size_t read_reply(struct fx *f, int fd, char *buf, size_t cap)
{
	bool eof = false;
	size_t len = 0;
	int i;

	for (i = 0; i < 2000 && !eof; i++) {
		pump(f, 1);
		len = take(fd, buf, len, cap - 1, &eof);
	}
	assert_true(eof);
	buf[len] = '\0';
	close(fd);
	return len;
}

/* ---- tests ---- */

/* The role holds one request; another is answered meanwhile. */
static void test_held_request_blocks_nothing(void **state)
{
	struct fx *f = *state;
	int a, b;
	char buf[256];
	bool eof = false;

	a = ask(f, "hold");
	pump(f, 20);
	assert_non_null(f->fr.held);
	assert_string_equal(f->fr.held->cmd, "hold");
	b = ask(f, "status json");
	read_reply(f, b, buf, sizeof(buf));
	assert_string_equal(buf, "ok\nstatus");
	assert_int_equal(take(a, buf, 0, sizeof(buf), &eof), 0);
	assert_false(eof);
	ctl_reply(f->fr.held, false, "no\n");
	f->fr.held = NULL;
	read_reply(f, a, buf, sizeof(buf));
	assert_string_equal(buf, "error\nno\n");
}

/* A reply larger than the socket takes waits in the queue, not in send. */
static void test_big_reply_queued(void **state)
{
	struct fx *f = *state;
	size_t cap = 3 * MIB, n, i;
	char *buf = malloc(cap);
	char small[64];
	int a, b;

	assert_non_null(buf);
	f->fr.big = 2 * MIB;
	a = ask(f, "big");
	/* Nobody reads a: the loop must still come round at once. */
	assert_true(pump(f, 50) < 500 * 1000000LL);
	b = ask(f, "status");
	read_reply(f, b, small, sizeof(small));
	assert_string_equal(small, "ok\nstatus");
	n = read_reply(f, a, buf, cap);
	assert_int_equal(n, 3 + 2 * MIB);
	assert_memory_equal(buf, "ok\n", 3);
	for (i = 3; i < n; i++)
		if (buf[i] != 'x')
			fail_msg("byte %zu is %d", i, buf[i]);
	free(buf);
}

/* A client that reads nothing of its reply for 10 s is dropped. */
static void test_stalled_client_dropped(void **state)
{
	struct fx *f = *state;
	size_t cap = 3 * MIB;
	char *buf = malloc(cap);
	int64_t t0;
	int a, b;

	assert_non_null(buf);
	f->fr.big = 2 * MIB;
	t0 = tdm_mono_ns();
	a = ask(f, "big");
	b = ask(f, "big");
	pump(f, 20);
	/* 9 s without reading: both are kept; a then reads all of it. */
	ctl_tick(f->ctl, t0 + 9 * 1000000000LL);
	assert_int_equal(read_reply(f, a, buf, cap), 3 + 2 * MIB);
	/* 11 s: b, which never read, is gone with its reply cut short. */
	ctl_tick(f->ctl, tdm_mono_ns() + 11 * 1000000000LL);
	assert_true(read_reply(f, b, buf, cap) < 3 + 2 * MIB);
	free(buf);
}

/* A reply over the bound is not queued at all: the client sees EOF. */
static void test_reply_over_bound(void **state)
{
	struct fx *f = *state;
	char buf[64];
	int a;

	f->fr.big = 5 * MIB;
	a = ask(f, "big");
	assert_int_equal(read_reply(f, a, buf, sizeof(buf)), 0);
}

/* 64 clients that send nothing, then a 65th: refused with an error. */
static void fill_clients(struct fx *f, int fds[64])
{
	char buf[128];
	int i, x;

	/* One at a time: the listen backlog is shorter than 64. */
	for (i = 0; i < 64; i++) {
		fds[i] = ask(f, NULL);
		pump(f, 1);
	}
	x = ask(f, NULL);
	read_reply(f, x, buf, sizeof(buf));
	assert_string_equal(buf, "error\ntoo many control clients\n");
}

/* The 65th client at once gets an error. */
static void test_client_limit(void **state)
{
	struct fx *f = *state;
	int fds[64], i, x;
	char buf[128];

	fill_clients(f, fds);
	for (i = 0; i < 64; i++)
		close(fds[i]);
	pump(f, 20);
	x = ask(f, "status");
	read_reply(f, x, buf, sizeof(buf));
	assert_string_equal(buf, "ok\nstatus");
}

/*
 * Idle clients (connected, no complete request) are dropped after 10 s,
 * so that they cannot hold every slot; one that is sending is kept.
 */
static void test_idle_client_dropped(void **state)
{
	struct fx *f = *state;
	int fds[64], i, x, part;
	char buf[128];

	fill_clients(f, fds);
	/* 9 s on, they are all still there: still refused. */
	ctl_tick(f->ctl, tdm_mono_ns() + 9 * 1000000000LL);
	x = ask(f, NULL);
	read_reply(f, x, buf, sizeof(buf));
	assert_string_equal(buf, "error\ntoo many control clients\n");
	/* 11 s on: dropped (each sees its end), and tdmctl is served. */
	ctl_tick(f->ctl, tdm_mono_ns() + 11 * 1000000000LL);
	assert_int_equal(read_reply(f, fds[0], buf, sizeof(buf)), 0);
	for (i = 0; i < 64; i++)
		close(fds[i]);
	x = ask(f, "status");
	read_reply(f, x, buf, sizeof(buf));
	assert_string_equal(buf, "ok\nstatus");

	/* A request sent in parts: each part counts as progress. */
	part = ask(f, NULL);
	assert_int_equal(send(part, "sta", 3, 0), 3);
	pump(f, 20);
	ctl_tick(f->ctl, tdm_mono_ns() + 9 * 1000000000LL);
	assert_int_equal(send(part, "tus\n", 4, 0), 4);
	assert_int_equal(shutdown(part, SHUT_WR), 0);
	read_reply(f, part, buf, sizeof(buf));
	assert_string_equal(buf, "ok\nstatus");
}

/*
 * What ctl_open() may replace at control_socket: a stale socket, and
 * nothing else.  A live socket and a regular file stay as they are.
 */
static void test_socket_path(void **state)
{
	struct fx *f = *state;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char err[256] = "", path[108];
	struct ctl *c;
	FILE *fp;
	int fd;

	/* f->ctl is live at f->path. */
	assert_null(ctl_open(f->loop, f->path, &f->fr.role, err, sizeof(err)));
	assert_non_null(strstr(err, "is served by another tdmd"));
	assert_int_equal(access(f->path, F_OK), 0);

	snprintf(path, sizeof(path), "/tmp/test_ctl.%d.file", getpid());
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("not a socket\n", fp);
	fclose(fp);
	assert_null(ctl_open(f->loop, path, &f->fr.role, err, sizeof(err)));
	assert_non_null(strstr(err, "exists and is not a socket"));
	assert_int_equal(access(path, F_OK), 0);
	unlink(path);

	/* A stale socket: bound, never listened on, its owner gone. */
	snprintf(path, sizeof(path), "/tmp/test_ctl.%d.stale", getpid());
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	c = ctl_open(f->loop, path, &f->fr.role, err, sizeof(err));
	if (!c)
		fail_msg("a stale socket was not replaced: %s", err);
	ctl_close(c);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_held_request_blocks_nothing, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_big_reply_queued, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stalled_client_dropped, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_reply_over_bound, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_client_limit, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_socket_path, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_idle_client_dropped, fx_setup, fx_teardown),
	};

	tdm_log_init("test_ctl", LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
