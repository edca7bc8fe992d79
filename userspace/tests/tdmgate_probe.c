// SPDX-License-Identifier: GPL-2.0
/*
 * tdmgate-probe: a follower of tdmd's plan store through libtdmgate, for
 * the host test tests/tdmd_store.sh.  It follows the store at SOCKET
 * (tdmgate_follow_tdmd()), asks the gate for a 64-byte frame every
 * millisecond (which lets a pending plan take over at its base, as a
 * sender's queries do), and prints one line whenever what the gate
 * answers by changes:
 *
 *   real=NS mono=NS gate=NS launch=NS v=V base=NS pv=V pbase=NS unconf=0|1 hold=0|1 lease=NS state=S
 *
 * real, mono: CLOCK_REALTIME and CLOCK_MONOTONIC when seen (to compare
 * with other processes and with tdmd's log), gate:
 * the gate's clock (the plan's); launch: the gate's answer for the frame
 * then (tdmgate_next_at(), -1 when it holds); v, base: the plan in force; pv, pbase:
 * the pending one (0 if none); lease: the lease, 0 if none; state: open,
 * hold, lease_out, unconfirmed or gone (tdmgate_state()).  It stops after
 * --for TIME seconds or at SIGTERM; exit 0, or 1 with the library's error
 * on stderr ("tdmgate-probe: SOCKET: No such file or directory").
 *
 *   tdmgate-probe [--for SECONDS] SOCKET
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdmgate.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static long long clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

static const char *state_name(enum tdmgate_state s)
{
	static const char *const names[] = {
		"open", "hold", "lease_out", "unconfirmed", "gone"
	};

	return (unsigned int)s < 5 ? names[s] : "?";
}

/* The line's fields but the times: what changed is printed. */
static int snapshot(struct tdmgate *g, int64_t now, char *buf, size_t len)
{
	struct tdmgate_plan p;

	if (tdmgate_get_plan(g, &p))
		return -1;
	snprintf(buf, len, "v=%u base=%lld pv=%u pbase=%lld unconf=%d hold=%d lease=%llu state=%s",
		 p.active.version, (long long)p.active.base,
		 p.has_pending ? p.pending.version : 0,
		 p.has_pending ? (long long)p.pending.base : 0LL,
		 p.unconfirmed, p.hold, (unsigned long long)p.lease_ns,
		 state_name(tdmgate_state(g, now)));
	return 0;
}

/* A gate that holds until the store has a plan (as the preload shim's). */
static void holding_plan(struct tdmgate_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->active.cycle = 1000000;
	p->active.nwin = 1;
	p->active.win[0].length = 1000000;
	p->link_speed = 1000;
	p->clockid = CLOCK_TAI;
	p->hold = true;
}

int main(int argc, char **argv)
{
	double secs = 3600;
	struct tdmgate_plan p;
	struct tdmgate *g = NULL;
	char last[512] = "", cur[512];
	const char *path;
	long long end;
	int err;

	if (argc == 4 && !strcmp(argv[1], "--for")) {
		secs = strtod(argv[2], NULL);
		argv += 2;
		argc -= 2;
	}
	if (argc != 2 || !strcmp(argv[1], "--help")) {
		fprintf(stderr, "usage: tdmgate-probe [--for SECONDS] SOCKET\n");
		return argc == 2 ? 0 : 2;
	}
	path = argv[1];
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	err = tdmgate_plan_from_tdmd(path, &p);
	if (err == -ENOENT)
		holding_plan(&p);
	else if (err)
		goto fail;
	err = tdmgate_create(&p, &g);
	if (!err)
		err = tdmgate_follow_tdmd(g, path);
	if (err)
		goto fail;
	setvbuf(stdout, NULL, _IOLBF, 0);
	end = real_ns() + (long long)(secs * 1e9);
	while (!stop && real_ns() < end) {
		struct pollfd pfd = { .fd = tdmgate_follow_fd(g), .events = POLLIN };
		int64_t now, launch;

		poll(&pfd, 1, 1);
		if (tdmgate_follow_read(g) == -EPROTO)
			fprintf(stderr, "tdmgate-probe: %s: %s\n", path,
				strerror(EPROTO));
		now = tdmgate_now(g);
		if (tdmgate_next_at(g, now, 64, &launch))
			launch = -1;
		if (snapshot(g, now, cur, sizeof(cur)) || !strcmp(cur, last))
			continue;
		printf("real=%lld mono=%lld gate=%lld launch=%lld %s\n",
		       real_ns(), clock_ns(CLOCK_MONOTONIC), (long long)now,
		       (long long)launch, cur);
		strcpy(last, cur);
	}
	tdmgate_destroy(g);
	return 0;
fail:
	fprintf(stderr, "tdmgate-probe: %s: %s\n", path, strerror(-err));
	tdmgate_destroy(g);
	return 1;
}
