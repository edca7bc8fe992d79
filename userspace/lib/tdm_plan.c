// SPDX-License-Identifier: GPL-2.0
/*
 * Window plans: the model, the plan file parser, validation, the [auto]
 * form, the base-time policy, the digest and the writer.
 *
 * Validation messages say where the problem is (file:line) and what it is
 * in the file's own terms, because the person reading them is editing a
 * plan for dozens of nodes and must find the one bad line quickly.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "tdm_cfg.h"
#include "tdm_json.h"
#include "tdm_plan.h"
#include "tdm_util.h"

#define PLAN_MAX_FILE	(1024 * 1024)
#define TIME_STR_MAX	24	/* "18446744073709551615ns" */

/* A printable time for one argument of one message. */
#define TSTR(ns) \
	tdm_fmt_time((ns), (char[TIME_STR_MAX]){ 0 }, TIME_STR_MAX)

typedef int (*line_of_t)[TDMWIN_MAX_WINDOWS];

/* Where the parts of a plan came from, for messages. */
struct plan_where {
	const char *file;	/* NULL: not parsed from a file */
	line_of_t wline;	/* each window's line; NULL: the sender's */
	int cycle_line;
	int guard_line;
	int link_line;
	int clock_line;
};

/*
 * libtdm's error helpers under this file's short names: fail_at() puts
 * "FILE:LINE: " of the plan in front, msg() nothing.
 */
#define fail_at(w, line, err, errlen, ...) \
	tdm_set_err_at(err, errlen, (w)->file, line, __VA_ARGS__)
#define msg(err, errlen, ...)	tdm_set_err(err, errlen, __VA_ARGS__)

/*
 * " (line N)" or " (first at line N)" pointing at another place, or "" if
 * that place is unknown or the line the message is already at.
 */
static const char *line_note(char *buf, size_t len, const char *what,
			     int line, int here)
{
	if (line <= 0 || line == here)
		return "";
	snprintf(buf, len, " (%sline %d)", what, line);
	return buf;
}

#define OTHER(line, here) \
	line_note((char[40]){ 0 }, 40, "", (line), (here))
#define FIRST_AT(line, here) \
	line_note((char[40]){ 0 }, 40, "first at ", (line), (here))

/*
 * " to 'NAME'" naming window destination d in a plan with receivers, ""
 * in a one-destination plan (whose messages stay as they were).
 */
static const char *dest_note(char *buf, size_t len, const char *prep,
			     const struct tdm_plan *p, uint32_t d)
{
	if (!p->nreceivers)
		return "";
	if (d >= p->nreceivers)
		snprintf(buf, len, " %s receiver #%u", prep, d);
	else
		snprintf(buf, len, " %s '%.63s'", prep, p->receivers[d].name);
	return buf;
}

#define TO(p, d) dest_note((char[TDM_NAME_MAX + 24]){ 0 }, \
			   TDM_NAME_MAX + 24, "to", (p), (d))
#define AT(p, d) dest_note((char[TDM_NAME_MAX + 24]){ 0 }, \
			   TDM_NAME_MAX + 24, "at", (p), (d))

/* ---- the model -------------------------------------------------------- */

void tdm_plan_init(struct tdm_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->clockid = CLOCK_TAI;
	p->lead_ns = TDM_DEFAULT_LEAD_NS;
	p->align_ns = TDM_DEFAULT_ALIGN_NS;
	p->bypass_ptp = true;
}

void tdm_plan_free(struct tdm_plan *p)
{
	if (!p)
		return;
	free(p->senders);
	free(p->receivers);
	tdm_plan_init(p);
}

int tdm_plan_copy(struct tdm_plan *dst, const struct tdm_plan *src)
{
	*dst = *src;
	dst->senders = NULL;
	dst->receivers = NULL;
	if (src->nsenders)
		dst->senders = malloc(src->nsenders * sizeof(*src->senders));
	if (src->nreceivers)
		dst->receivers = malloc(src->nreceivers *
					sizeof(*src->receivers));
	if ((src->nsenders && !dst->senders) ||
	    (src->nreceivers && !dst->receivers)) {
		free(dst->senders);
		free(dst->receivers);
		tdm_plan_init(dst);
		errno = ENOMEM;
		return -1;
	}
	if (src->nsenders)
		memcpy(dst->senders, src->senders,
		       src->nsenders * sizeof(*src->senders));
	if (src->nreceivers)
		memcpy(dst->receivers, src->receivers,
		       src->nreceivers * sizeof(*src->receivers));
	return 0;
}

const struct tdm_sender *tdm_plan_sender(const struct tdm_plan *p,
					 const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nsenders; i++)
		if (!strncmp(p->senders[i].name, name, TDM_NAME_MAX))
			return &p->senders[i];
	return NULL;
}

int tdm_plan_receiver(const struct tdm_plan *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nreceivers; i++)
		if (!strncmp(p->receivers[i].name, name, TDM_NAME_MAX))
			return (int)i;
	return -1;
}

static bool same_windows(const struct tdm_sender *x,
			 const struct tdm_sender *y)
{
	unsigned int k;

	if (x->nwin != y->nwin || x->nwin > TDMWIN_MAX_WINDOWS)
		return false;
	for (k = 0; k < x->nwin; k++)
		if (x->win[k].offset != y->win[k].offset ||
		    x->win[k].length != y->win[k].length ||
		    x->win[k].dest != y->win[k].dest)
			return false;
	return true;
}

bool tdm_plan_equal(const struct tdm_plan *a, const struct tdm_plan *b)
{
	const struct tdm_sender *x, *y;
	unsigned int i;

	if (a->version != b->version || a->clockid != b->clockid ||
	    a->cycle_ns != b->cycle_ns || a->base_time != b->base_time ||
	    a->guard_ns != b->guard_ns || a->min_dead_ns != b->min_dead_ns ||
	    a->lead_ns != b->lead_ns || a->align_ns != b->align_ns ||
	    a->link_speed != b->link_speed ||
	    a->bypass_prios != b->bypass_prios ||
	    a->bypass_ptp != b->bypass_ptp || a->nsenders != b->nsenders ||
	    a->nreceivers != b->nreceivers)
		return false;
	for (i = 0; i < a->nreceivers; i++)
		if (strncmp(a->receivers[i].name, b->receivers[i].name,
			    TDM_NAME_MAX) ||
		    strncmp(a->receivers[i].addr, b->receivers[i].addr,
			    TDM_ADDR_MAX))
			return false;
	for (i = 0; i < a->nsenders; i++) {
		x = &a->senders[i];
		y = &b->senders[i];
		if (strncmp(x->name, y->name, TDM_NAME_MAX) ||
		    !same_windows(x, y))
			return false;
	}
	return true;
}

/* ---- validation ------------------------------------------------------- */

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, TDM_NAME_MAX), i;
	char c;

	if (!n || n >= TDM_NAME_MAX)
		return false;
	for (i = 0; i < n; i++) {
		c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

static int bad_name(const struct plan_where *w, int line, const char *name,
		    char *err, size_t errlen)
{
	/* %.63s: a name from a built plan need not be terminated. */
	return fail_at(w, line, err, errlen,
		       "bad sender name '%.63s' (1..63 characters of A-Z a-z 0-9 _ . -)",
		       name);
}

static int win_line(const struct tdm_plan *p, const struct plan_where *w,
		    unsigned int s, unsigned int i)
{
	return w->wline ? w->wline[s][i] : p->senders[s].line;
}

static int check_globals(const struct tdm_plan *p, const struct plan_where *w,
			 char *err, size_t errlen)
{
	if (p->cycle_ns < TDMWIN_MIN_CYCLE_NS ||
	    p->cycle_ns > TDMWIN_MAX_CYCLE_NS)
		return fail_at(w, w->cycle_line, err, errlen,
			       "cycle_time %s is outside %s..%s",
			       TSTR(p->cycle_ns), TSTR(TDMWIN_MIN_CYCLE_NS),
			       TSTR(TDMWIN_MAX_CYCLE_NS));
	if (p->bypass_prios >> (TDM_MAX_PRIO + 1))
		return fail_at(w, 0, err, errlen,
			       "bypass priorities 0x%x: only 0..%d exist",
			       p->bypass_prios, TDM_MAX_PRIO);
	if (p->guard_ns > TDMWIN_MAX_GUARD_NS)
		return fail_at(w, w->guard_line, err, errlen,
			       "guard %s is more than %s", TSTR(p->guard_ns),
			       TSTR(TDMWIN_MAX_GUARD_NS));
	if (p->link_speed > TDMWIN_MAX_LINK_SPEED)
		return fail_at(w, w->link_line, err, errlen,
			       "link_speed %u is more than %u Mbit/s",
			       p->link_speed, TDMWIN_MAX_LINK_SPEED);
	if (tdm_clock_parse(tdm_clock_name(p->clockid), &(int){ 0 }))
		return fail_at(w, w->clock_line, err, errlen,
			       "unsupported clock id %d", (int)p->clockid);
	if (!p->nsenders)
		return fail_at(w, 0, err, errlen, "plan has no senders");
	if (p->nsenders > TDM_MAX_SENDERS)
		return fail_at(w, 0, err, errlen, "too many senders (max %d)",
			       TDM_MAX_SENDERS);
	if (p->nreceivers > TDM_MAX_RECEIVERS)
		return fail_at(w, 0, err, errlen,
			       "too many receivers (max %d)", TDM_MAX_RECEIVERS);
	return 0;
}

/* A numeric IPv4 or IPv6 address, as inet_pton reads it. */
static bool addr_ok(const char *a)
{
	unsigned char buf[16];

	if (!memchr(a, '\0', TDM_ADDR_MAX))
		return false;
	return inet_pton(AF_INET, a, buf) == 1 ||
	       inet_pton(AF_INET6, a, buf) == 1;
}

static int check_receivers(const struct tdm_plan *p,
			   const struct plan_where *w, char *err,
			   size_t errlen)
{
	const struct tdm_receiver *r, *q;
	unsigned int i, j;

	for (i = 0; i < p->nreceivers; i++) {
		r = &p->receivers[i];
		if (!name_ok(r->name))
			return fail_at(w, r->line, err, errlen,
				       "bad receiver name '%.63s' (1..63 characters of A-Z a-z 0-9 _ . -)",
				       r->name);
		if (!addr_ok(r->addr))
			return fail_at(w, r->line, err, errlen,
				       "receiver '%s': bad address '%.45s' (a numeric IPv4 or IPv6 address)",
				       r->name, r->addr);
		for (j = 0; j < i; j++) {
			q = &p->receivers[j];
			if (!strcmp(r->name, q->name))
				return fail_at(w, r->line, err, errlen,
					       "duplicate receiver '%s'%s",
					       r->name,
					       FIRST_AT(q->line, r->line));
			if (!strcmp(r->addr, q->addr))
				return fail_at(w, r->line, err, errlen,
					       "receivers '%s' and '%s'%s have the same address %s",
					       q->name, r->name,
					       OTHER(q->line, r->line), r->addr);
		}
	}
	return 0;
}

static int check_senders(const struct tdm_plan *p, const struct plan_where *w,
			 char *err, size_t errlen)
{
	const struct tdm_sender *s, *t;
	unsigned int i, j, total = 0;

	for (i = 0; i < p->nsenders; i++) {
		s = &p->senders[i];
		if (!name_ok(s->name))
			return bad_name(w, s->line, s->name, err, errlen);
		for (j = 0; j < i; j++) {
			t = &p->senders[j];
			if (!strcmp(s->name, t->name))
				return fail_at(w, s->line, err, errlen,
					       "duplicate sender '%s'%s", s->name,
					       FIRST_AT(t->line, s->line));
		}
		if (!s->nwin)
			return fail_at(w, s->line, err, errlen,
				       "sender '%s' has no windows", s->name);
		if (s->nwin > TDMWIN_MAX_WINDOWS)
			return fail_at(w, s->line, err, errlen,
				       "too many windows for sender '%s' (max %d)",
				       s->name, TDMWIN_MAX_WINDOWS);
		total += s->nwin;
	}
	if (total > TDM_MAX_PLAN_WINDOWS)
		return fail_at(w, 0, err, errlen,
			       "too many windows in the plan (max %d)",
			       TDM_MAX_PLAN_WINDOWS);
	return 0;
}

static int check_window(const struct tdm_plan *p, const struct plan_where *w,
			unsigned int si, unsigned int wi,
			char *err, size_t errlen)
{
	const struct tdm_sender *s = &p->senders[si];
	const struct tdm_window *x = &s->win[wi];
	int line = win_line(p, w, si, wi);
	uint64_t end;

	if (!x->length)
		return fail_at(w, line, err, errlen,
			       "window %s+%s of '%s' has zero length",
			       TSTR(x->offset), TSTR(x->length), s->name);
	if (__builtin_add_overflow(x->offset, x->length, &end))
		return fail_at(w, line, err, errlen,
			       "window %s+%s of '%s' ends after the cycle (%s)",
			       TSTR(x->offset), TSTR(x->length), s->name,
			       TSTR(p->cycle_ns));
	if (end > p->cycle_ns)
		return fail_at(w, line, err, errlen,
			       "window %s+%s of '%s' ends at %s, after the cycle (%s)",
			       TSTR(x->offset), TSTR(x->length), s->name,
			       TSTR(end), TSTR(p->cycle_ns));
	if (p->guard_ns >= x->length)
		return fail_at(w, line, err, errlen,
			       "guard %s is not shorter than window %s+%s of '%s'",
			       TSTR(p->guard_ns), TSTR(x->offset),
			       TSTR(x->length), s->name);
	if (x->dest >= tdm_plan_ndest(p))
		return fail_at(w, line, err, errlen,
			       "window %s+%s of '%s' goes to receiver #%u, but the plan has %u",
			       TSTR(x->offset), TSTR(x->length), s->name,
			       x->dest, p->nreceivers);
	return 0;
}

/* Sort one sender's windows by offset, carrying their lines along. */
static void sort_sender(struct tdm_sender *s, int *lines)
{
	struct tdm_window x;
	unsigned int i, j;
	int l;

	for (i = 1; i < s->nwin; i++) {
		x = s->win[i];
		l = lines ? lines[i] : 0;
		for (j = i; j && s->win[j - 1].offset > x.offset; j--) {
			s->win[j] = s->win[j - 1];
			if (lines)
				lines[j] = lines[j - 1];
		}
		s->win[j] = x;
		if (lines)
			lines[j] = l;
	}
}

/* One window of the whole plan, for the checks across senders. */
struct win_ref {
	uint64_t offset;
	uint64_t length;
	uint32_t dest;
	unsigned int sender;
	unsigned int index;
	int line;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct win_ref *x = a, *y = b;

	if (x->dest != y->dest)
		return x->dest < y->dest ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	if (x->sender != y->sender)
		return x->sender < y->sender ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int overlap(const struct tdm_plan *p, const struct plan_where *w,
		   const struct win_ref *a, const struct win_ref *b,
		   char *err, size_t errlen)
{
	const struct win_ref *here = b, *there = a;

	/* Report at the window defined later: that is the one just added. */
	if (a->line > b->line) {
		here = a;
		there = b;
	}
	if (a->sender == b->sender && a->dest != b->dest)
		return fail_at(w, here->line, err, errlen,
			       "window %s+%s of '%s'%s overlaps its window %s+%s%s%s: a sender sends to one receiver at a time",
			       TSTR(here->offset), TSTR(here->length),
			       p->senders[here->sender].name,
			       TO(p, here->dest), TSTR(there->offset),
			       TSTR(there->length), TO(p, there->dest),
			       OTHER(there->line, here->line));
	return fail_at(w, here->line, err, errlen,
		       "window %s+%s of '%s'%s overlaps window %s+%s of '%s'%s",
		       TSTR(here->offset), TSTR(here->length),
		       p->senders[here->sender].name, TO(p, here->dest),
		       TSTR(there->offset), TSTR(there->length),
		       p->senders[there->sender].name,
		       OTHER(there->line, here->line));
}

static int short_gap(const struct tdm_plan *p, const struct plan_where *w,
		     const struct win_ref *a, const struct win_ref *b,
		     uint64_t gap, char *err, size_t errlen)
{
	int here = a->line > b->line ? a->line : b->line;
	bool wrap = b->offset <= a->offset;

	if (a == b)
		return fail_at(w, here, err, errlen,
			       "only %s of dead time%s between window %s+%s of '%s' and its next instance, less than min_dead_time %s",
			       TSTR(gap), AT(p, a->dest), TSTR(a->offset),
			       TSTR(a->length), p->senders[a->sender].name,
			       TSTR(p->min_dead_ns));
	return fail_at(w, here, err, errlen,
		       "only %s of dead time%s between window %s+%s of '%s'%s and window %s+%s of '%s'%s%s, less than min_dead_time %s",
		       TSTR(gap), AT(p, a->dest), TSTR(a->offset),
		       TSTR(a->length), p->senders[a->sender].name,
		       OTHER(a->line, here), TSTR(b->offset), TSTR(b->length),
		       p->senders[b->sender].name, OTHER(b->line, here),
		       wrap ? " round the cycle" : "", TSTR(p->min_dead_ns));
}

/*
 * One destination's windows [r, r + n), sorted by offset: windows that do
 * not overlap their successor do not overlap at all; and the gaps that
 * matter are those between neighbours, plus the one from the last window
 * round to the first.
 */
static int check_dest(const struct tdm_plan *p, const struct plan_where *w,
		      const struct win_ref *r, unsigned int n,
		      char *err, size_t errlen)
{
	const struct win_ref *a, *b;
	unsigned int i;
	uint64_t gap;

	for (i = 0; i + 1 < n; i++)
		if (r[i].offset + r[i].length > r[i + 1].offset)
			return overlap(p, w, &r[i], &r[i + 1], err, errlen);
	for (i = 0; i < n && p->min_dead_ns; i++) {
		a = &r[i];
		b = &r[(i + 1) % n];
		/* Every window lies inside the cycle, so this cannot wrap. */
		if (i + 1 < n)
			gap = b->offset - (a->offset + a->length);
		else
			gap = p->cycle_ns - (a->offset + a->length) + b->offset;
		if (gap < p->min_dead_ns)
			return short_gap(p, w, a, b, gap, err, errlen);
	}
	return 0;
}

/* A sender's own windows (sorted by offset) to different destinations. */
static int check_sender_alone(const struct tdm_plan *p,
			      const struct plan_where *w, unsigned int si,
			      char *err, size_t errlen)
{
	const struct tdm_sender *s = &p->senders[si];
	struct win_ref a, b;
	unsigned int k;

	for (k = 0; k + 1 < s->nwin; k++) {
		if (s->win[k].offset + s->win[k].length <= s->win[k + 1].offset)
			continue;
		a = (struct win_ref){ s->win[k].offset, s->win[k].length,
				      s->win[k].dest, si, k,
				      win_line(p, w, si, k) };
		b = (struct win_ref){ s->win[k + 1].offset,
				      s->win[k + 1].length,
				      s->win[k + 1].dest, si, k + 1,
				      win_line(p, w, si, k + 1) };
		return overlap(p, w, &a, &b, err, errlen);
	}
	return 0;
}

/*
 * At every instant a destination has at most one sender (its windows do
 * not overlap, with min_dead_ns between them) and a sender at most one
 * destination (its own windows do not overlap).  With one destination
 * the first implies the second.
 */
static int check_timeline(const struct tdm_plan *p, const struct plan_where *w,
			  char *err, size_t errlen)
{
	struct win_ref *r;
	unsigned int i, j, n = 0;
	int ret = 0;

	for (i = 0; i < p->nsenders; i++)
		n += p->senders[i].nwin;
	r = calloc(n, sizeof(*r));
	if (!r)
		return fail_at(w, 0, err, errlen, "out of memory");
	n = 0;
	for (i = 0; i < p->nsenders; i++) {
		for (j = 0; j < p->senders[i].nwin; j++, n++) {
			r[n].offset = p->senders[i].win[j].offset;
			r[n].length = p->senders[i].win[j].length;
			r[n].dest = p->senders[i].win[j].dest;
			r[n].sender = i;
			r[n].index = j;
			r[n].line = win_line(p, w, i, j);
		}
	}
	qsort(r, n, sizeof(*r), cmp_ref);
	for (i = 0; i < n && !ret; i = j) {
		for (j = i + 1; j < n && r[j].dest == r[i].dest; j++)
			;
		ret = check_dest(p, w, r + i, j - i, err, errlen);
	}
	for (i = 0; i < p->nsenders && !ret; i++)
		ret = check_sender_alone(p, w, i, err, errlen);
	free(r);
	return ret;
}

static int plan_check(struct tdm_plan *p, const struct plan_where *w,
		      char *err, size_t errlen)
{
	unsigned int i, j;

	if (check_globals(p, w, err, errlen) ||
	    check_receivers(p, w, err, errlen) ||
	    check_senders(p, w, err, errlen))
		return -1;
	for (i = 0; i < p->nsenders; i++)
		for (j = 0; j < p->senders[i].nwin; j++)
			if (check_window(p, w, i, j, err, errlen))
				return -1;
	for (i = 0; i < p->nsenders; i++)
		sort_sender(&p->senders[i], w->wline ? w->wline[i] : NULL);
	return check_timeline(p, w, err, errlen);
}

int tdm_plan_validate(struct tdm_plan *p, char *err, size_t errlen)
{
	const struct plan_where w = { 0 };

	return plan_check(p, &w, err, errlen);
}

/* ---- the [auto] form -------------------------------------------------- */

/*
 * n senders named names[i] (or "0", "1", ... where NULL) into *out
 * (calloc'd).  0; 1 for a name too long, -1 out of memory (err says).
 */
static int new_senders(unsigned int n, const char *const *names,
		       struct tdm_sender **out, char *err, size_t errlen)
{
	struct tdm_sender *s;
	unsigned int i;

	for (i = 0; names && i < n; i++)
		if (names[i] && strlen(names[i]) >= TDM_NAME_MAX)
			return -bad_name(&(struct plan_where){ 0 }, 0, names[i],
					 err, errlen);
	s = calloc(n, sizeof(*s));
	if (!s)
		return msg(err, errlen, "out of memory");
	for (i = 0; i < n; i++) {
		if (names && names[i])
			strcpy(s[i].name, names[i]);
		else
			snprintf(s[i].name, sizeof(s[i].name), "%u", i);
	}
	*out = s;
	return 0;
}

enum auto_key { A_SENDERS, A_WINDOW, A_DEAD, A_PER, A_NKEYS };

/*
 * Build the senders of the automatic form into p, replacing its senders
 * and cycle.  *which names the key at fault on error (-1: the section).
 */
static int auto_build(struct tdm_plan *p, unsigned int n,
		      const char *const *names, uint64_t wlen, uint64_t dead,
		      unsigned int per, int *which, char *err, size_t errlen)
{
	struct tdm_sender *s;
	uint64_t slot, cycle;
	unsigned int i, k;
	int rc;

	*which = A_SENDERS;
	if (!n || n > TDM_MAX_SENDERS)
		return msg(err, errlen, "senders must be 1..%d, not %u",
			   TDM_MAX_SENDERS, n);
	*which = A_PER;
	if (!per || per > TDMWIN_MAX_WINDOWS)
		return msg(err, errlen,
			   "windows_per_sender must be 1..%d, not %u",
			   TDMWIN_MAX_WINDOWS, per);
	*which = A_WINDOW;
	if (!wlen)
		return msg(err, errlen, "window must not be 0");
	*which = -1;
	if ((uint64_t)n * per > TDM_MAX_PLAN_WINDOWS)
		return msg(err, errlen, "too many windows in the plan (max %d)",
			   TDM_MAX_PLAN_WINDOWS);
	if (__builtin_add_overflow(wlen, dead, &slot) ||
	    __builtin_mul_overflow(slot, (uint64_t)n * per, &cycle) ||
	    cycle > TDMWIN_MAX_CYCLE_NS)
		return msg(err, errlen,
			   "cycle windows_per_sender x senders x (window + dead_time) is longer than %s",
			   TSTR(TDMWIN_MAX_CYCLE_NS));
	*which = A_SENDERS;
	rc = new_senders(n, names, &s, err, errlen);
	if (rc) {
		*which = rc > 0 ? A_SENDERS : -1;
		return -1;
	}
	for (i = 0; i < n; i++) {
		s[i].nwin = per;
		for (k = 0; k < per; k++) {
			s[i].win[k].offset = ((uint64_t)k * n + i) * slot;
			s[i].win[k].length = wlen;
		}
	}
	free(p->senders);
	p->senders = s;
	p->nsenders = n;
	p->cycle_ns = cycle;
	return 0;
}

int tdm_plan_auto(struct tdm_plan *p, unsigned int nsenders,
		  const char *const *names, uint64_t window_ns,
		  uint64_t dead_ns, unsigned int per_sender,
		  char *err, size_t errlen)
{
	int which;

	if (auto_build(p, nsenders, names, window_ns, dead_ns, per_sender,
		       &which, err, errlen))
		return -1;
	return tdm_plan_validate(p, err, errlen);
}

/* ---- the barrel shifter ---------------------------------------------- */

enum barrel_key { B_SENDERS, B_SLOT, B_DEAD, B_NKEYS };

/*
 * The windows of tdm_plan.h's barrel shifter into p (its receivers set),
 * replacing its senders and cycle; *which names the key at fault.
 */
static int barrel_build(struct tdm_plan *p, unsigned int n,
			const char *const *names, uint64_t slot,
			uint64_t dead, int *which, char *err, size_t errlen)
{
	unsigned int m = p->nreceivers, l, i, k, r;
	struct tdm_sender *s;
	uint64_t cycle;
	int rc;

	*which = B_SENDERS;
	if (!n || n > TDM_MAX_SENDERS)
		return msg(err, errlen, "senders must be 1..%d, not %u",
			   TDM_MAX_SENDERS, n);
	*which = -1;
	if (!m || m > TDM_MAX_RECEIVERS)
		return msg(err, errlen,
			   "a barrel shifter needs 1..%d receivers, not %u",
			   TDM_MAX_RECEIVERS, m);
	*which = B_DEAD;
	if (dead >= slot)
		return msg(err, errlen,
			   "dead_time %s leaves no window in slot %s",
			   TSTR(dead), TSTR(slot));
	*which = -1;
	if ((uint64_t)n * m > TDM_MAX_PLAN_WINDOWS)
		return msg(err, errlen,
			   "too many windows in the plan (max %d): senders x receivers is %llu",
			   TDM_MAX_PLAN_WINDOWS,
			   (unsigned long long)n * m);
	l = n > m ? n : m;
	*which = B_SLOT;
	if (__builtin_mul_overflow(slot, (uint64_t)l, &cycle) ||
	    cycle > TDMWIN_MAX_CYCLE_NS)
		return msg(err, errlen,
			   "cycle max(senders, receivers) x slot is longer than %s",
			   TSTR(TDMWIN_MAX_CYCLE_NS));
	rc = new_senders(n, names, &s, err, errlen);
	if (rc) {
		*which = rc > 0 ? B_SENDERS : -1;
		return -1;
	}
	/* Slot k: sender i to (i + k) mod l, idle if that is no receiver. */
	for (i = 0; i < n; i++) {
		for (k = 0; k < l; k++) {
			r = (i + k) % l;
			if (r >= m)
				continue;
			s[i].win[s[i].nwin++] = (struct tdm_window){
				.offset = (uint64_t)k * slot,
				.length = slot - dead,
				.dest = r,
			};
		}
	}
	free(p->senders);
	p->senders = s;
	p->nsenders = n;
	p->cycle_ns = cycle;
	return 0;
}

int tdm_plan_barrel(struct tdm_plan *p, unsigned int nsenders,
		    const char *const *names, uint64_t slot_ns,
		    uint64_t dead_ns, char *err, size_t errlen)
{
	int which;

	if (barrel_build(p, nsenders, names, slot_ns, dead_ns, &which, err,
			 errlen))
		return -1;
	return tdm_plan_validate(p, err, errlen);
}

/* ---- destinations ----------------------------------------------------- */

uint64_t tdm_plan_pair_ns(const struct tdm_plan *p, unsigned int s,
			  unsigned int r)
{
	const struct tdm_sender *x = &p->senders[s];
	uint64_t t = 0;
	unsigned int k;

	for (k = 0; k < x->nwin && k < TDMWIN_MAX_WINDOWS; k++)
		if (x->win[k].dest == r)
			t += x->win[k].length;
	return t;
}

uint64_t tdm_plan_dest_ns(const struct tdm_plan *p, unsigned int r)
{
	uint64_t t = 0;
	unsigned int i;

	for (i = 0; i < p->nsenders; i++)
		t += tdm_plan_pair_ns(p, i, r);
	return t;
}

static const char *dest_name(const struct tdm_plan *p, unsigned int r)
{
	return p->nreceivers ? p->receivers[r].name : "the receiver";
}

int tdm_plan_check_pairs(const struct tdm_plan *p, char *err, size_t errlen)
{
	unsigned int i, r;

	for (r = 0; r < tdm_plan_ndest(p); r++)
		for (i = 0; i < p->nsenders; i++)
			if (!tdm_plan_pair_ns(p, i, r))
				return msg(err, errlen,
					   "sender '%s' has no window to '%s'",
					   p->senders[i].name,
					   dest_name(p, r));
	return 0;
}

int tdm_plan_for_dest(const struct tdm_plan *p, unsigned int r,
		      struct tdm_plan *out, char *err, size_t errlen)
{
	struct tdm_sender *x;
	unsigned int i, k, n;

	tdm_plan_init(out);
	if (r >= tdm_plan_ndest(p))
		return msg(err, errlen, "the plan has no receiver #%u", r);
	if (tdm_plan_copy(out, p))
		return msg(err, errlen, "out of memory");
	free(out->receivers);
	out->receivers = NULL;
	out->nreceivers = 0;
	for (i = 0; i < out->nsenders; i++) {
		x = &out->senders[i];
		for (k = 0, n = 0; k < x->nwin; k++)
			if (x->win[k].dest == r)
				x->win[n++] = (struct tdm_window){
					.offset = x->win[k].offset,
					.length = x->win[k].length,
				};
		x->nwin = n;
		if (!n) {
			msg(err, errlen, "sender '%s' sends nothing to '%s'",
			    x->name, dest_name(p, r));
			tdm_plan_free(out);
			return -1;
		}
	}
	return 0;
}

/* ---- the parser ------------------------------------------------------- */

enum global_key {
	G_CLOCK, G_CYCLE, G_GUARD, G_MIN_DEAD, G_LEAD, G_ALIGN, G_LINK,
	G_BYPASS_PTP, G_BYPASS_PRIO, G_VERSION, G_BASE, G_NKEYS
};

static const char *const global_keys[G_NKEYS] = {
	[G_CLOCK] = "clock",
	[G_CYCLE] = "cycle_time",
	[G_GUARD] = "guard",
	[G_MIN_DEAD] = "min_dead_time",
	[G_LEAD] = "lead_time",
	[G_ALIGN] = "base_align",
	[G_LINK] = "link_speed",
	[G_BYPASS_PTP] = "bypass_ptp",
	[G_BYPASS_PRIO] = "bypass_prio",
	[G_VERSION] = "version",
	[G_BASE] = "base_time",
};

static const char *const barrel_keys[B_NKEYS] = {
	[B_SENDERS] = "senders",
	[B_SLOT] = "slot",
	[B_DEAD] = "dead_time",
};

static const char *const auto_keys[A_NKEYS] = {
	[A_SENDERS] = "senders",
	[A_WINDOW] = "window",
	[A_DEAD] = "dead_time",
	[A_PER] = "windows_per_sender",
};

enum section { SEC_GLOBAL, SEC_SENDER, SEC_AUTO, SEC_RECEIVER, SEC_BARREL };

struct plan_parser {
	struct tdm_plan *p;
	const char *file;
	enum section sec;
	int gline[G_NKEYS];	/* where each key was given, 0 = not */
	int base_clock;		/* the clock base_time names, -1: none */
	int aline[A_NKEYS];
	int auto_line;
	int first_sender_line;
	int bline[B_NKEYS];
	int barrel_line;
	int addr_line;		/* the current [receiver]'s address */
	unsigned int rcap;	/* receivers allocated in p */
	unsigned int cap;	/* senders allocated in p and wline */
	line_of_t wline;
	unsigned int nwindows;
	/* [auto] and [barrel] */
	bool count_form;
	uint64_t count, wlen, dead, per, slot;
	char (*names)[TDM_NAME_MAX];
	int *name_line;
	unsigned int nnames;
};

static int find_key(const char *const *keys, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(keys[i], key))
			return i;
	return -1;
}

static int one_value(const struct tdm_cfg_line *l, char *err, size_t errlen)
{
	if (l->argc == 1)
		return 0;
	return msg(err, errlen, "'%s' takes one value", l->key);
}

static int key_time(const struct tdm_cfg_line *l, const char *s,
		    uint64_t *v, char *err, size_t errlen)
{
	char e[256];

	if (!tdm_parse_time(s, v, e, sizeof(e)))
		return 0;
	return msg(err, errlen, "%s: %s", l->key, e);
}

static int key_u64(const struct tdm_cfg_line *l, const char *s, uint64_t max,
		   uint64_t *v, char *err, size_t errlen)
{
	char e[256];

	if (!tdm_parse_u64(s, max, v, e, sizeof(e)))
		return 0;
	return msg(err, errlen, "%s: %s", l->key, e);
}

/* A key may be given once; list keys may repeat and add up. */
static int once(int *seen, const struct tdm_cfg_line *l, bool repeats,
		char *err, size_t errlen)
{
	if (*seen && !repeats)
		return msg(err, errlen, "duplicate key '%s' (first at line %d)",
			   l->key, *seen);
	if (!*seen)
		*seen = l->lineno;
	return 0;
}

/*
 * base_time TIME [CLOCK]: a time on the plan's clock, at least 0.  The
 * clock it names (what the writer adds) must be the plan's; that is
 * checked in finish(), once the clock key has been read wherever it is.
 */
static int base_key(struct plan_parser *pp, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	uint64_t v;

	if (l->argc > 2)
		return msg(err, errlen, "'%s' takes TIME [CLOCK]", l->key);
	if (l->argv[0][0] == '-')
		return msg(err, errlen, "%s '%s' is negative", l->key,
			   l->argv[0]);
	if (key_time(l, l->argv[0], &v, err, errlen))
		return -1;
	if (v > INT64_MAX)
		return msg(err, errlen, "%s: '%s' is too large (max %s)",
			   l->key, l->argv[0], TSTR(INT64_MAX));
	if (l->argc == 2 && tdm_clock_parse(l->argv[1], &pp->base_clock))
		return msg(err, errlen,
			   "%s: unknown clock '%s' (use tai, realtime, monotonic or boottime)",
			   l->key, l->argv[1]);
	pp->p->base_time = (int64_t)v;
	return 0;
}

static int global_key(struct plan_parser *pp, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	struct tdm_plan *p = pp->p;
	int k = find_key(global_keys, G_NKEYS, l->key), clk, i;
	uint64_t v;
	char e[256];
	bool b;

	if (k < 0)
		return msg(err, errlen, "unknown key '%s' in [global]", l->key);
	if (once(&pp->gline[k], l, k == G_BYPASS_PRIO, err, errlen))
		return -1;
	if (k != G_BYPASS_PRIO && k != G_BASE && one_value(l, err, errlen))
		return -1;

	switch (k) {
	case G_CLOCK:
		if (tdm_clock_parse(l->argv[0], &clk))
			return msg(err, errlen,
				   "unknown clock '%s' (use tai, realtime, monotonic or boottime)",
				   l->argv[0]);
		p->clockid = clk;
		return 0;
	case G_CYCLE:
		return key_time(l, l->argv[0], &p->cycle_ns, err, errlen);
	case G_GUARD:
		if (key_time(l, l->argv[0], &v, err, errlen))
			return -1;
		if (v > TDMWIN_MAX_GUARD_NS)
			return msg(err, errlen, "guard %s is more than %s",
				   TSTR(v), TSTR(TDMWIN_MAX_GUARD_NS));
		p->guard_ns = (uint32_t)v;
		return 0;
	case G_MIN_DEAD:
		return key_time(l, l->argv[0], &p->min_dead_ns, err, errlen);
	case G_LEAD:
		return key_time(l, l->argv[0], &p->lead_ns, err, errlen);
	case G_ALIGN:
		return key_time(l, l->argv[0], &p->align_ns, err, errlen);
	case G_LINK:
		if (key_u64(l, l->argv[0], TDMWIN_MAX_LINK_SPEED, &v,
			    err, errlen))
			return -1;
		p->link_speed = (uint32_t)v;
		return 0;
	case G_BYPASS_PTP:
		if (tdm_parse_bool(l->argv[0], &b, e, sizeof(e)))
			return msg(err, errlen, "%s: %s", l->key, e);
		p->bypass_ptp = b;
		return 0;
	case G_BYPASS_PRIO:
		/* The kernel takes priorities 0..15 (TC_PRIO_MAX). */
		for (i = 0; i < l->argc; i++) {
			if (key_u64(l, l->argv[i], TDM_MAX_PRIO, &v, err, errlen))
				return -1;
			p->bypass_prios |= 1U << v;
		}
		return 0;
	case G_VERSION:
		if (key_u64(l, l->argv[0], UINT32_MAX, &v, err, errlen))
			return -1;
		p->version = (uint32_t)v;
		return 0;
	case G_BASE:
		return base_key(pp, l, err, errlen);
	}
	return 0;
}

static int sender_key(struct plan_parser *pp, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	struct tdm_sender *s = &pp->p->senders[pp->p->nsenders - 1];
	struct tdm_window x = { 0 };
	int r;

	if (strcmp(l->key, "window"))
		return msg(err, errlen, "unknown key '%s' in [sender %s]",
			   l->key, s->name);
	if (!pp->p->nreceivers && l->argc == 3)
		return msg(err, errlen,
			   "'window' takes OFFSET LENGTH: no [receiver] section before it names a receiver");
	if (!pp->p->nreceivers && l->argc != 2)
		return msg(err, errlen, "'window' takes OFFSET LENGTH");
	if (pp->p->nreceivers && l->argc != 3)
		return msg(err, errlen,
			   "'window' takes OFFSET LENGTH RECEIVER in a plan with receivers");
	if (key_time(l, l->argv[0], &x.offset, err, errlen) ||
	    key_time(l, l->argv[1], &x.length, err, errlen))
		return -1;
	if (pp->p->nreceivers) {
		r = tdm_plan_receiver(pp->p, l->argv[2]);
		if (r < 0)
			return msg(err, errlen,
				   "unknown receiver '%.63s' (declare [receiver %.63s] before the windows that send to it)",
				   l->argv[2], l->argv[2]);
		x.dest = (uint32_t)r;
	}
	if (s->nwin == TDMWIN_MAX_WINDOWS)
		return msg(err, errlen,
			   "too many windows for sender '%s' (max %d)",
			   s->name, TDMWIN_MAX_WINDOWS);
	if (pp->nwindows == TDM_MAX_PLAN_WINDOWS)
		return msg(err, errlen, "too many windows in the plan (max %d)",
			   TDM_MAX_PLAN_WINDOWS);
	pp->wline[pp->p->nsenders - 1][s->nwin] = l->lineno;
	s->win[s->nwin++] = x;
	pp->nwindows++;
	return 0;
}

static bool all_digits(const char *s)
{
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int auto_names(struct plan_parser *pp, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	const struct plan_where nowhere = { 0 };
	unsigned int n = pp->nnames + (unsigned int)l->argc;
	void *names, *lines;
	int i;

	if (n > TDM_MAX_SENDERS)
		return msg(err, errlen, "too many senders (max %d)",
			   TDM_MAX_SENDERS);
	for (i = 0; i < l->argc; i++)
		if (!name_ok(l->argv[i]))
			return bad_name(&nowhere, 0, l->argv[i], err, errlen);
	names = realloc(pp->names, n * sizeof(*pp->names));
	if (!names)
		return msg(err, errlen, "out of memory");
	pp->names = names;
	lines = realloc(pp->name_line, n * sizeof(*pp->name_line));
	if (!lines)
		return msg(err, errlen, "out of memory");
	pp->name_line = lines;
	for (i = 0; i < l->argc; i++, pp->nnames++) {
		strcpy(pp->names[pp->nnames], l->argv[i]);
		pp->name_line[pp->nnames] = l->lineno;
	}
	return 0;
}

/* senders in [auto] or [barrel]: a count, or names over lines. */
static int senders_key(struct plan_parser *pp, const struct tdm_cfg_line *l,
		       int *seen, char *err, size_t errlen)
{
	bool count = l->argc == 1 && all_digits(l->argv[0]);

	if (once(seen, l, !count && !pp->count_form && pp->nnames,
		 err, errlen))
		return -1;
	if (!count)
		return auto_names(pp, l, err, errlen);
	pp->count_form = true;
	return key_u64(l, l->argv[0], TDM_MAX_SENDERS, &pp->count,
		       err, errlen);
}

static int barrel_key(struct plan_parser *pp, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	int k = find_key(barrel_keys, B_NKEYS, l->key);

	if (k < 0)
		return msg(err, errlen, "unknown key '%s' in [barrel]", l->key);
	if (k == B_SENDERS)
		return senders_key(pp, l, &pp->bline[k], err, errlen);
	if (once(&pp->bline[k], l, false, err, errlen) ||
	    one_value(l, err, errlen))
		return -1;
	return key_time(l, l->argv[0], k == B_SLOT ? &pp->slot : &pp->dead,
			err, errlen);
}

static int receiver_key(struct plan_parser *pp, const struct tdm_cfg_line *l,
			char *err, size_t errlen)
{
	struct tdm_receiver *r = &pp->p->receivers[pp->p->nreceivers - 1];

	if (strcmp(l->key, "address"))
		return msg(err, errlen, "unknown key '%s' in [receiver %s]",
			   l->key, r->name);
	if (once(&pp->addr_line, l, false, err, errlen) ||
	    one_value(l, err, errlen))
		return -1;
	if (strlen(l->argv[0]) >= TDM_ADDR_MAX || !addr_ok(l->argv[0]))
		return msg(err, errlen,
			   "receiver '%s': bad address '%.45s' (a numeric IPv4 or IPv6 address)",
			   r->name, l->argv[0]);
	strcpy(r->addr, l->argv[0]);
	return 0;
}

static int auto_key(struct plan_parser *pp, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	int k = find_key(auto_keys, A_NKEYS, l->key);

	if (k < 0)
		return msg(err, errlen, "unknown key '%s' in [auto]", l->key);
	if (k == A_SENDERS)
		return senders_key(pp, l, &pp->aline[k], err, errlen);
	if (once(&pp->aline[k], l, false, err, errlen) ||
	    one_value(l, err, errlen))
		return -1;
	switch (k) {
	case A_WINDOW:
		return key_time(l, l->argv[0], &pp->wlen, err, errlen);
	case A_DEAD:
		return key_time(l, l->argv[0], &pp->dead, err, errlen);
	case A_PER:
		return key_u64(l, l->argv[0], TDMWIN_MAX_WINDOWS, &pp->per,
			       err, errlen);
	}
	return 0;
}

/* *arr (of elements of size bytes) reallocated to cap; -1 if not. */
static int grow(void **arr, size_t size, unsigned int cap)
{
	void *q = realloc(*arr, cap * size);

	if (!q)
		return -1;
	*arr = q;
	return 0;
}

static int open_sender(struct plan_parser *pp, const struct tdm_cfg_line *l,
		       char *err, size_t errlen)
{
	const struct plan_where nowhere = { 0 };
	struct tdm_plan *p = pp->p;
	struct tdm_sender *s;
	unsigned int i, cap;

	if (!l->section_arg)
		return msg(err, errlen, "[sender] needs a name");
	if (pp->auto_line)
		return msg(err, errlen,
			   "[auto] and [sender] sections cannot be mixed (line %d)",
			   pp->auto_line);
	if (pp->barrel_line)
		return msg(err, errlen,
			   "[barrel] and [sender] sections cannot be mixed (line %d)",
			   pp->barrel_line);
	if (!name_ok(l->section_arg))
		return bad_name(&nowhere, 0, l->section_arg, err, errlen);
	for (i = 0; i < p->nsenders; i++)
		if (!strcmp(p->senders[i].name, l->section_arg))
			return msg(err, errlen,
				   "duplicate sender '%s' (first at line %d)",
				   l->section_arg, p->senders[i].line);
	if (p->nsenders == TDM_MAX_SENDERS)
		return msg(err, errlen, "too many senders (max %d)",
			   TDM_MAX_SENDERS);
	if (p->nsenders == pp->cap) {
		cap = pp->cap ? pp->cap * 2 : 8;
		if (grow((void **)&p->senders, sizeof(*p->senders), cap) ||
		    grow((void **)&pp->wline, sizeof(*pp->wline), cap))
			return msg(err, errlen, "out of memory");
		pp->cap = cap;
	}
	s = &p->senders[p->nsenders++];
	memset(s, 0, sizeof(*s));
	strcpy(s->name, l->section_arg);
	s->line = l->lineno;
	if (!pp->first_sender_line)
		pp->first_sender_line = l->lineno;
	pp->sec = SEC_SENDER;
	return 0;
}

/* The form of the plan seen so far, for "cannot be mixed" messages. */
static int form_line(const struct plan_parser *pp, const char **name)
{
	if (pp->auto_line) {
		*name = "[auto]";
		return pp->auto_line;
	}
	if (pp->barrel_line) {
		*name = "[barrel]";
		return pp->barrel_line;
	}
	*name = "[sender]";
	return pp->first_sender_line;
}

static int open_receiver(struct plan_parser *pp, const struct tdm_cfg_line *l,
			 char *err, size_t errlen)
{
	struct tdm_plan *p = pp->p;
	struct tdm_receiver *r;
	unsigned int cap;
	const char *form;
	int i, line;

	if (!l->section_arg)
		return msg(err, errlen, "[receiver] needs a name");
	if (pp->auto_line)
		return msg(err, errlen,
			   "[auto] plans have one receiver: no [receiver] sections (line %d)",
			   pp->auto_line);
	line = form_line(pp, &form);
	if (line)
		return msg(err, errlen,
			   "[receiver] sections come before %s (line %d)", form,
			   line);
	if (!name_ok(l->section_arg))
		return msg(err, errlen,
			   "bad receiver name '%.63s' (1..63 characters of A-Z a-z 0-9 _ . -)",
			   l->section_arg);
	i = tdm_plan_receiver(p, l->section_arg);
	if (i >= 0)
		return msg(err, errlen,
			   "duplicate receiver '%s' (first at line %d)",
			   l->section_arg, p->receivers[i].line);
	if (p->nreceivers == TDM_MAX_RECEIVERS)
		return msg(err, errlen, "too many receivers (max %d)",
			   TDM_MAX_RECEIVERS);
	if (p->nreceivers == pp->rcap) {
		cap = pp->rcap ? pp->rcap * 2 : 8;
		if (grow((void **)&p->receivers, sizeof(*p->receivers), cap))
			return msg(err, errlen, "out of memory");
		pp->rcap = cap;
	}
	r = &p->receivers[p->nreceivers++];
	memset(r, 0, sizeof(*r));
	strcpy(r->name, l->section_arg);
	r->line = l->lineno;
	pp->addr_line = 0;
	pp->sec = SEC_RECEIVER;
	return 0;
}

static int open_barrel(struct plan_parser *pp, const struct tdm_cfg_line *l,
		       char *err, size_t errlen)
{
	const char *form;
	int line = form_line(pp, &form);

	if (l->section_arg)
		return msg(err, errlen, "[barrel] takes no argument");
	if (pp->barrel_line)
		return msg(err, errlen,
			   "duplicate section [barrel] (first at line %d)",
			   pp->barrel_line);
	if (line)
		return msg(err, errlen,
			   "%s and [barrel] sections cannot be mixed (line %d)",
			   form, line);
	pp->barrel_line = l->lineno;
	pp->sec = SEC_BARREL;
	return 0;
}

static int open_section(struct plan_parser *pp, const struct tdm_cfg_line *l,
			char *err, size_t errlen)
{
	struct tdm_plan *p = pp->p;

	/* The receiver before a new section must have its address. */
	if (pp->sec == SEC_RECEIVER && !pp->addr_line)
		return msg(err, errlen, "receiver '%s' (line %d) has no address",
			   p->receivers[p->nreceivers - 1].name,
			   p->receivers[p->nreceivers - 1].line);
	if (!strcmp(l->section, "receiver"))
		return open_receiver(pp, l, err, errlen);
	if (!strcmp(l->section, "barrel"))
		return open_barrel(pp, l, err, errlen);
	if (!strcmp(l->section, "sender"))
		return open_sender(pp, l, err, errlen);
	if (!strcmp(l->section, "global")) {
		if (l->section_arg)
			return msg(err, errlen, "[global] takes no argument");
		pp->sec = SEC_GLOBAL;
		return 0;
	}
	if (!strcmp(l->section, "auto")) {
		if (l->section_arg)
			return msg(err, errlen, "[auto] takes no argument");
		if (pp->auto_line)
			return msg(err, errlen,
				   "duplicate section [auto] (first at line %d)",
				   pp->auto_line);
		if (pp->first_sender_line)
			return msg(err, errlen,
				   "[auto] and [sender] sections cannot be mixed (line %d)",
				   pp->first_sender_line);
		if (pp->barrel_line)
			return msg(err, errlen,
				   "[barrel] and [auto] sections cannot be mixed (line %d)",
				   pp->barrel_line);
		if (p->nreceivers)
			return msg(err, errlen,
				   "[auto] plans have one receiver: no [receiver] sections (line %d)",
				   p->receivers[0].line);
		pp->auto_line = l->lineno;
		pp->sec = SEC_AUTO;
		return 0;
	}
	return msg(err, errlen, "unknown section [%s]", l->section);
}

static int plan_line(void *ctx, const struct tdm_cfg_line *l,
		     char *err, size_t errlen)
{
	struct plan_parser *pp = ctx;

	if (!l->key)
		return open_section(pp, l, err, errlen);
	switch (pp->sec) {
	case SEC_SENDER:
		return sender_key(pp, l, err, errlen);
	case SEC_AUTO:
		return auto_key(pp, l, err, errlen);
	case SEC_RECEIVER:
		return receiver_key(pp, l, err, errlen);
	case SEC_BARREL:
		return barrel_key(pp, l, err, errlen);
	case SEC_GLOBAL:
		break;
	}
	return global_key(pp, l, err, errlen);
}

/*
 * The senders of [auto] or [barrel]: their count, and in *names their
 * names (NULL for a count: "0", "1", ...; free() it).  -1: out of memory.
 */
static int form_senders(const struct plan_parser *pp, const char ***names,
			unsigned int *n)
{
	unsigned int i;

	*names = NULL;
	*n = pp->count_form ? (unsigned int)pp->count : pp->nnames;
	if (pp->count_form)
		return 0;
	*names = calloc(*n ? *n : 1, sizeof(**names));
	if (!*names)
		return -1;
	for (i = 0; i < *n; i++)
		(*names)[i] = pp->names[i];
	return 0;
}

/*
 * After [auto] or [barrel] made the senders: each sender defined where
 * its name (or the count, at @count_line) was, each window where the key
 * @win_line that made it was, for the messages that follow.
 */
static int form_lines(struct plan_parser *pp, const struct plan_where *w,
		      int count_line, int win_line, char *err, size_t errlen)
{
	unsigned int i, k;

	pp->cap = pp->p->nsenders;
	pp->wline = calloc(pp->cap, sizeof(*pp->wline));
	if (!pp->wline)
		return fail_at(w, 0, err, errlen, "out of memory");
	for (i = 0; i < pp->p->nsenders; i++) {
		pp->p->senders[i].line = pp->count_form ? count_line
							: pp->name_line[i];
		for (k = 0; k < pp->p->senders[i].nwin; k++)
			pp->wline[i][k] = win_line;
	}
	return 0;
}

/* Expand [auto] into senders, with lines for the messages that follow. */
static int finish_auto(struct plan_parser *pp, const struct plan_where *w,
		       char *err, size_t errlen)
{
	const char **names;
	unsigned int n, k;
	int which, ret, line;
	char e[256];

	if (pp->gline[G_CYCLE])
		return fail_at(w, pp->gline[G_CYCLE], err, errlen,
			       "cycle_time cannot be given with [auto] (the cycle is computed)");
	for (k = 0; k < A_NKEYS; k++)
		if (!pp->aline[k] && k != A_PER)
			return fail_at(w, pp->auto_line, err, errlen,
				       "[auto] is missing '%s'", auto_keys[k]);
	if (form_senders(pp, &names, &n))
		return fail_at(w, 0, err, errlen, "out of memory");
	ret = auto_build(pp->p, n, names, pp->wlen, pp->dead,
			 pp->aline[A_PER] ? (unsigned int)pp->per : 1,
			 &which, e, sizeof(e));
	free(names);
	if (ret) {
		line = which >= 0 && pp->aline[which] ? pp->aline[which]
						      : pp->auto_line;
		return fail_at(w, line, err, errlen, "%s", e);
	}
	/* The windows came from the window key; senders from their names. */
	return form_lines(pp, w, pp->aline[A_SENDERS], pp->aline[A_WINDOW],
			  err, errlen);
}

/* Expand [barrel] into senders, with lines for the messages that follow. */
static int finish_barrel(struct plan_parser *pp, const struct plan_where *w,
			 char *err, size_t errlen)
{
	const char **names;
	unsigned int n, k;
	int which, ret, line;
	char e[256];

	if (pp->gline[G_CYCLE])
		return fail_at(w, pp->gline[G_CYCLE], err, errlen,
			       "cycle_time cannot be given with [barrel] (the cycle is computed)");
	for (k = 0; k < B_NKEYS; k++)
		if (!pp->bline[k])
			return fail_at(w, pp->barrel_line, err, errlen,
				       "[barrel] is missing '%s'", barrel_keys[k]);
	if (!pp->p->nreceivers)
		return fail_at(w, pp->barrel_line, err, errlen,
			       "[barrel] needs [receiver] sections before it");
	if (form_senders(pp, &names, &n))
		return fail_at(w, 0, err, errlen, "out of memory");
	ret = barrel_build(pp->p, n, names, pp->slot, pp->dead, &which, e,
			   sizeof(e));
	free(names);
	if (ret) {
		line = which >= 0 && pp->bline[which] ? pp->bline[which]
						      : pp->barrel_line;
		return fail_at(w, line, err, errlen, "%s", e);
	}
	/* The windows came from the slot key. */
	return form_lines(pp, w, pp->bline[B_SENDERS], pp->bline[B_SLOT],
			  err, errlen);
}

static int finish(struct plan_parser *pp, char *err, size_t errlen)
{
	struct plan_where w = {
		.file = pp->file,
		.cycle_line = pp->gline[G_CYCLE],
		.guard_line = pp->gline[G_GUARD],
		.link_line = pp->gline[G_LINK],
		.clock_line = pp->gline[G_CLOCK],
	};

	if (pp->sec == SEC_RECEIVER && !pp->addr_line)
		return fail_at(&w, pp->p->receivers[pp->p->nreceivers - 1].line,
			       err, errlen, "receiver '%s' has no address",
			       pp->p->receivers[pp->p->nreceivers - 1].name);
	if (pp->auto_line) {
		if (finish_auto(pp, &w, err, errlen))
			return -1;
		w.cycle_line = pp->auto_line;
	} else if (pp->barrel_line) {
		if (finish_barrel(pp, &w, err, errlen))
			return -1;
		w.cycle_line = pp->barrel_line;
	} else if (!pp->gline[G_CYCLE]) {
		return fail_at(&w, 0, err, errlen,
			       "missing cycle_time in [global]");
	} else if (!pp->p->nsenders) {
		return fail_at(&w, 0, err, errlen,
			       "no [sender], [auto] or [barrel] section");
	}
	if (pp->base_clock >= 0 && pp->base_clock != pp->p->clockid)
		return fail_at(&w, pp->gline[G_BASE], err, errlen,
			       "base_time is on the %s clock, not on the plan's clock (%s)",
			       tdm_clock_name(pp->base_clock),
			       tdm_clock_name(pp->p->clockid));
	w.wline = pp->wline;
	return plan_check(pp->p, &w, err, errlen);
}

int tdm_plan_parse(const char *text, const char *file, struct tdm_plan *p,
		   char *err, size_t errlen)
{
	struct plan_parser pp = { .p = p, .file = file, .base_clock = -1 };
	int ret;

	tdm_plan_init(p);
	ret = tdm_cfg_parse_text(text, file, plan_line, &pp, err, errlen);
	if (!ret)
		ret = finish(&pp, err, errlen);
	free(pp.wline);
	free(pp.names);
	free(pp.name_line);
	if (ret)
		tdm_plan_free(p);
	return ret;
}

/* Where the plans of a list start: lines of the [global] that opens each. */
struct plan_split {
	int start[TDM_PLAN_LIST_MAX + 1];
	unsigned int n;
	bool senders;		/* the current plan had [sender] or [auto] */
	bool any;		/* it has any line at all */
};

static int split_line(void *ctx, const struct tdm_cfg_line *l, char *err,
		      size_t errlen)
{
	struct plan_split *sp = ctx;
	bool global = !l->key && !strcmp(l->section, "global");

	if (global && sp->senders) {
		if (sp->n == TDM_PLAN_LIST_MAX)
			return msg(err, errlen, "more than %d plans",
				   TDM_PLAN_LIST_MAX);
		sp->start[sp->n++] = l->lineno;
		sp->senders = false;
	}
	if (!sp->any) {
		sp->any = true;
		sp->start[sp->n++] = 1;
	}
	if (!l->key && !global)
		sp->senders = true;
	return 0;
}

int tdm_plan_parse_list(const char *text, const char *file,
			struct tdm_plan *plans, unsigned int max,
			char *err, size_t errlen)
{
	struct plan_split sp = { .n = 0 };
	size_t len = strlen(text), i;
	unsigned int k, n = 0;
	char *part;
	int line;

	if (tdm_cfg_parse_text(text, file, split_line, &sp, err, errlen))
		return -1;
	if (sp.n > max)
		return fail_at(&(struct plan_where){ .file = file },
			       sp.start[max], err, errlen,
			       "more than %u plans", max);
	part = malloc(len + 1);
	if (!part)
		return msg(err, errlen, "out of memory");
	sp.start[sp.n] = INT_MAX;
	/* Each plan on its own lines, the others blanked: lines stay true. */
	for (k = 0; k < sp.n; k++) {
		for (i = 0, line = 1; i < len; i++) {
			bool in = line >= sp.start[k] && line < sp.start[k + 1];

			part[i] = in || text[i] == '\n' ? text[i] : ' ';
			line += text[i] == '\n';
		}
		part[len] = '\0';
		if (tdm_plan_parse(part, file, &plans[n], err, errlen))
			break;
		n++;
	}
	free(part);
	if (k < sp.n) {
		while (n)
			tdm_plan_free(&plans[--n]);
		return -1;
	}
	return (int)n;
}

int tdm_plan_load(const char *path, struct tdm_plan *p,
		  char *err, size_t errlen)
{
	size_t len;
	char *text;
	int ret;

	tdm_plan_init(p);
	text = tdm_read_file(path, PLAN_MAX_FILE, &len, err, errlen);
	if (!text)
		return -1;
	if (strlen(text) != len) {
		msg(err, errlen, "%s: contains a NUL byte", path);
		free(text);
		return -1;
	}
	ret = tdm_plan_parse(text, path, p, err, errlen);
	free(text);
	return ret;
}

/* ---- base time -------------------------------------------------------- */

int64_t tdm_plan_pick_base(const struct tdm_plan *p, int64_t now)
{
	__int128 t = (__int128)now + p->lead_ns, m, r;

	m = p->align_ns ? p->align_ns : p->cycle_ns;
	if (m) {
		/* Round up to a multiple of m; floor modulo for t < 0. */
		r = t % m;
		if (r < 0)
			r += m;
		if (r)
			t += m - r;
	}
	if (t > INT64_MAX)
		return INT64_MAX;
	return (int64_t)t;
}

/* ---- digest ----------------------------------------------------------- */

static void put_be(uint8_t *b, uint64_t v, unsigned int bytes)
{
	while (bytes--) {
		b[bytes] = (uint8_t)v;
		v >>= 8;
	}
}

static int digest_u(EVP_MD_CTX *ctx, uint64_t v, unsigned int bytes)
{
	uint8_t b[8];

	put_be(b, v, bytes);
	return EVP_DigestUpdate(ctx, b, bytes) == 1 ? 0 : -1;
}

static int digest_str(EVP_MD_CTX *ctx, const char *str, size_t max)
{
	size_t n = strnlen(str, max);

	return digest_u(ctx, n, 1) || EVP_DigestUpdate(ctx, str, n) != 1 ? -1
									 : 0;
}

/* Destinations count only in a plan with receivers: old digests stay. */
static int digest_sender(EVP_MD_CTX *ctx, const struct tdm_sender *s,
			 bool dests)
{
	struct tdm_sender tmp;
	unsigned int i, nwin = s->nwin;

	/* Windows in offset order, whether or not the plan was validated. */
	if (nwin > TDMWIN_MAX_WINDOWS)
		nwin = TDMWIN_MAX_WINDOWS;
	tmp.nwin = nwin;
	memcpy(tmp.win, s->win, nwin * sizeof(s->win[0]));
	sort_sender(&tmp, NULL);
	if (digest_str(ctx, s->name, TDM_NAME_MAX) || digest_u(ctx, nwin, 4))
		return -1;
	for (i = 0; i < nwin; i++)
		if (digest_u(ctx, tmp.win[i].offset, 8) ||
		    digest_u(ctx, tmp.win[i].length, 8) ||
		    (dests && digest_u(ctx, tmp.win[i].dest, 4)))
			return -1;
	return 0;
}

void tdm_plan_digest(const struct tdm_plan *p, uint8_t out[32])
{
	static const char tag[] = "tdmwin plan v1";
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int i, len = 0;
	int bad;

	bad = !ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	      EVP_DigestUpdate(ctx, tag, sizeof(tag)) != 1 ||
	      digest_u(ctx, (uint32_t)p->clockid, 4) ||
	      digest_u(ctx, p->cycle_ns, 8) ||
	      digest_u(ctx, p->guard_ns, 4) ||
	      digest_u(ctx, p->link_speed, 4) ||
	      digest_u(ctx, p->bypass_prios, 4) ||
	      digest_u(ctx, p->bypass_ptp, 1) ||
	      digest_u(ctx, p->nsenders, 4);
	if (!bad && p->nreceivers)
		bad = digest_u(ctx, p->nreceivers, 4);
	for (i = 0; !bad && i < p->nreceivers; i++)
		bad = digest_str(ctx, p->receivers[i].name, TDM_NAME_MAX) ||
		      digest_str(ctx, p->receivers[i].addr, TDM_ADDR_MAX);
	for (i = 0; !bad && i < p->nsenders; i++)
		bad = digest_sender(ctx, &p->senders[i], p->nreceivers);
	if (!bad)
		bad = EVP_DigestFinal_ex(ctx, out, &len) != 1 || len != 32;
	if (bad)
		memset(out, 0, 32);
	EVP_MD_CTX_free(ctx);
}

/* ---- writer ----------------------------------------------------------- */

struct out {
	char *buf;
	size_t len;
	size_t pos;	/* what the whole text needs, even past len */
};

static void out(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(o->pos < o->len ? o->buf + o->pos : NULL,
		      o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (r > 0)
		o->pos += (size_t)r;
}

static void format_plan(const struct tdm_plan *p, struct out *o)
{
	const struct tdm_sender *s;
	unsigned int i, k, n;

	out(o, "# tdmwin window plan\n[global]\n");
	out(o, "%-14s %s\n", "clock", tdm_clock_name(p->clockid));
	out(o, "%-14s %s\n", "cycle_time", TSTR(p->cycle_ns));
	out(o, "%-14s %s\n", "guard", TSTR(p->guard_ns));
	out(o, "%-14s %s\n", "min_dead_time", TSTR(p->min_dead_ns));
	out(o, "%-14s %s\n", "lead_time", TSTR(p->lead_ns));
	out(o, "%-14s %s\n", "base_align", TSTR(p->align_ns));
	out(o, "%-14s %u\n", "link_speed", p->link_speed);
	out(o, "%-14s %s\n", "bypass_ptp", p->bypass_ptp ? "on" : "off");
	/* A line takes TDM_CFG_MAX_ARGS values; the key may repeat. */
	for (i = 0, n = 0; i <= TDM_MAX_PRIO; i++) {
		if (!(p->bypass_prios & (1U << i)))
			continue;
		if (n % TDM_CFG_MAX_ARGS == 0)
			out(o, "%s%-14s", n ? "\n" : "", "bypass_prio");
		out(o, " %u", i);
		n++;
	}
	if (n)
		out(o, "\n");
	if (p->version)
		out(o, "%-14s %u\n", "version", p->version);
	if (p->base_time)
		out(o, "%-14s %lld %s\n", "base_time", (long long)p->base_time,
		    tdm_clock_name(p->clockid));
	for (i = 0; i < p->nreceivers; i++)
		out(o, "\n[receiver %.63s]\naddress %.45s\n",
		    p->receivers[i].name, p->receivers[i].addr);
	for (i = 0; i < p->nsenders; i++) {
		s = &p->senders[i];
		out(o, "\n[sender %.63s]\n", s->name);
		for (k = 0; k < s->nwin && k < TDMWIN_MAX_WINDOWS; k++) {
			out(o, "window %-10s %s", TSTR(s->win[k].offset),
			    TSTR(s->win[k].length));
			if (s->win[k].dest < p->nreceivers)
				out(o, " %.63s",
				    p->receivers[s->win[k].dest].name);
			out(o, "\n");
		}
	}
}

int tdm_plan_format(const struct tdm_plan *p, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = buf ? len : 0 };

	format_plan(p, &o);
	if (o.pos >= o.len || o.pos > INT_MAX) {
		errno = ENOSPC;
		return -1;
	}
	return (int)o.pos;
}

char *tdm_plan_format_alloc(const struct tdm_plan *p)
{
	struct out o = { 0 };

	format_plan(p, &o);
	o.len = o.pos + 1;
	o.buf = malloc(o.len);
	if (!o.buf)
		return NULL;
	o.pos = 0;
	format_plan(p, &o);
	return o.buf;
}

/* ---- JSON ------------------------------------------------------------- */

void tdm_plan_json(struct tdm_json *j, const char *key,
		   const struct tdm_plan *p)
{
	const struct tdm_sender *s;
	unsigned int i, k;

	tdm_json_obj_open(j, key);
	tdm_json_u64(j, "version", p->version);
	tdm_json_str(j, "clock", tdm_clock_name(p->clockid));
	tdm_json_u64(j, "cycle_ns", p->cycle_ns);
	tdm_json_s64(j, "base_time", p->base_time);
	tdm_json_u64(j, "guard_ns", p->guard_ns);
	tdm_json_u64(j, "min_dead_ns", p->min_dead_ns);
	tdm_json_u64(j, "link_speed", p->link_speed);
	tdm_json_u64(j, "bypass_prios", p->bypass_prios);
	tdm_json_bool(j, "bypass_ptp", p->bypass_ptp);
	if (p->nreceivers) {
		tdm_json_arr_open(j, "receivers");
		for (i = 0; i < p->nreceivers; i++) {
			tdm_json_obj_open(j, NULL);
			tdm_json_u64(j, "receiver", i);
			tdm_json_str(j, "name", p->receivers[i].name);
			tdm_json_str(j, "address", p->receivers[i].addr);
			tdm_json_obj_close(j);
		}
		tdm_json_arr_close(j);
	}
	tdm_json_arr_open(j, "senders");
	for (i = 0; i < p->nsenders; i++) {
		s = &p->senders[i];
		tdm_json_obj_open(j, NULL);
		tdm_json_u64(j, "sender", i);
		tdm_json_str(j, "name", s->name);
		tdm_json_arr_open(j, "windows");
		for (k = 0; k < s->nwin && k < TDMWIN_MAX_WINDOWS; k++) {
			tdm_json_obj_open(j, NULL);
			tdm_json_u64(j, "offset_ns", s->win[k].offset);
			tdm_json_u64(j, "length_ns", s->win[k].length);
			if (p->nreceivers)
				tdm_json_u64(j, "receiver", s->win[k].dest);
			tdm_json_obj_close(j);
		}
		tdm_json_arr_close(j);
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
	tdm_json_obj_close(j);
}
