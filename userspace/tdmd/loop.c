// SPDX-License-Identifier: GPL-2.0
/*
 * The poll loop: a table of file descriptors with callbacks and one timer
 * hook.  Callbacks may add and remove entries (their own included) while
 * the loop runs: removal only clears the slot, and the table is compacted
 * between iterations.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

#define EV_MAX	2200	/* MAX_PEERS, listeners, control clients */

static struct ev *evs[EV_MAX];
static int nev;
static bool stopping;
static int64_t (*tick_fn)(void *ctx, int64_t now);
static void *tick_ctx;

int ev_add(struct ev *e)
{
	if (nev == EV_MAX) {
		errno = EMFILE;
		return -1;
	}
	e->slot = nev;
	evs[nev++] = e;
	return 0;
}

void ev_del(struct ev *e)
{
	if (e->slot >= 0 && e->slot < nev && evs[e->slot] == e)
		evs[e->slot] = NULL;
	e->slot = -1;
}

void ev_set_tick(int64_t (*tick)(void *ctx, int64_t now), void *ctx)
{
	tick_fn = tick;
	tick_ctx = ctx;
}

void ev_stop(void)
{
	stopping = true;
}

static void compact(void)
{
	int i, n = 0;

	for (i = 0; i < nev; i++) {
		if (!evs[i])
			continue;
		evs[i]->slot = n;
		evs[n++] = evs[i];
	}
	nev = n;
}

int ev_run(void)
{
	static struct pollfd pfd[EV_MAX];
	static struct ev *snap[EV_MAX];

	stopping = false;
	while (!stopping) {
		int64_t now = tdm_mono_ns(), next = INT64_MAX;
		int i, n, timeout = -1;

		if (tick_fn)
			next = tick_fn(tick_ctx, now);
		if (stopping)
			break;
		compact();
		if (next != INT64_MAX) {
			int64_t ms = (next - tdm_mono_ns() + 999999) / 1000000;

			timeout = ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
		}
		n = nev;
		for (i = 0; i < n; i++) {
			snap[i] = evs[i];
			pfd[i].fd = evs[i]->fd;
			pfd[i].events = evs[i]->events;
			pfd[i].revents = 0;
		}
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			log_err("poll: %s", strerror(errno));
			return -1;
		}
		for (i = 0; i < n; i++) {
			/* Skip entries removed by an earlier callback. */
			if (!pfd[i].revents || snap[i]->slot < 0 ||
			    evs[snap[i]->slot] != snap[i])
				continue;
			snap[i]->cb(snap[i], pfd[i].revents);
		}
	}
	return 0;
}
