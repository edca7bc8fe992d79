// SPDX-License-Identifier: GPL-2.0
/*
 * The poll loop: a table of file descriptors with callbacks and one timer
 * hook.  Callbacks may add and remove entries (their own included) while
 * the loop runs: removal only clears the slot, and the table is compacted
 * between iterations.  A loop is an object (ev_loop_new()) that main()
 * hands to what it starts: no state at file scope.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

#define EV_MAX	2200	/* MAX_PEERS, listeners, control clients */

struct ev_loop {
	struct ev *evs[EV_MAX];
	int nev;
	bool stopping;
	int64_t (*tick_fn)(void *ctx, int64_t now);
	void *tick_ctx;
	struct pollfd pfd[EV_MAX];	/* ev_run()'s scratch */
	struct ev *snap[EV_MAX];
};

struct ev_loop *ev_loop_new(void)
{
	return calloc(1, sizeof(struct ev_loop));
}

void ev_loop_free(struct ev_loop *l)
{
	free(l);
}

int ev_add(struct ev_loop *l, struct ev *e)
{
	if (l->nev == EV_MAX) {
		errno = EMFILE;
		return -1;
	}
	e->loop = l;
	e->slot = l->nev;
	l->evs[l->nev++] = e;
	return 0;
}

void ev_del(struct ev *e)
{
	struct ev_loop *l = e->loop;

	if (l && e->slot >= 0 && e->slot < l->nev && l->evs[e->slot] == e)
		l->evs[e->slot] = NULL;
	e->slot = -1;
}

void ev_set_tick(struct ev_loop *l, int64_t (*tick)(void *ctx, int64_t now),
		 void *ctx)
{
	l->tick_fn = tick;
	l->tick_ctx = ctx;
}

void ev_stop(struct ev_loop *l)
{
	l->stopping = true;
}

static void compact(struct ev_loop *l)
{
	int i, n = 0;

	for (i = 0; i < l->nev; i++) {
		if (!l->evs[i])
			continue;
		l->evs[i]->slot = n;
		l->evs[n++] = l->evs[i];
	}
	l->nev = n;
}

int ev_run(struct ev_loop *l)
{
	struct pollfd *pfd = l->pfd;
	struct ev **snap = l->snap, **evs = l->evs;

	l->stopping = false;
	while (!l->stopping) {
		int64_t now = tdm_mono_ns(), next = INT64_MAX;
		int i, n, timeout = -1;

		if (l->tick_fn)
			next = l->tick_fn(l->tick_ctx, now);
		if (l->stopping)
			break;
		compact(l);
		if (next != INT64_MAX) {
			int64_t ms = (next - tdm_mono_ns() + 999999) / 1000000;

			timeout = ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
		}
		n = l->nev;
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
