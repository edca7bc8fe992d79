// SPDX-License-Identifier: GPL-2.0
/* Printing plans and qdisc counters for the control socket. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tdm_json.h"
#include "tdm_prom.h"
#include "tdm_util.h"
#include "tdmd.h"

/* An absolute time on clockid as "2026-11-22T10:00:03.000000000 TAI". */
const char *fmt_tai(int64_t t, int clockid, char *buf, size_t len)
{
	time_t sec = t / (int64_t)TDM_NSEC_PER_SEC;
	long ns = t % (int64_t)TDM_NSEC_PER_SEC;
	struct tm tm;
	char d[32];

	if (ns < 0) {
		ns += TDM_NSEC_PER_SEC;
		sec--;
	}
	if ((clockid != CLOCK_TAI && clockid != CLOCK_REALTIME) ||
	    !gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "%lld.%09ld (%s)", (long long)sec, ns,
			 tdm_clock_name(clockid));
		return buf;
	}
	strftime(d, sizeof(d), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09ld %s", d, ns,
		 clockid == CLOCK_TAI ? "TAI" : "UTC");
	return buf;
}

/* The plan in plan-file syntax, with the version and base time as
 * comments.  malloc'd; NULL on failure.
 */
char *report_plan_text(const struct tdm_plan *p)
{
	size_t len = 4096 + (size_t)p->nsenders * (96 + 48 * TDMWIN_MAX_WINDOWS);
	char *buf = malloc(len), tb[64];
	int n;

	if (!buf)
		return NULL;
	n = snprintf(buf, len, "# plan version %u, base time %s\n",
		     p->version, fmt_tai(p->base_time, p->clockid, tb, sizeof(tb)));
	if (tdm_plan_format(p, buf + n, len - n) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void report_xstats_json(struct tdm_json *j, const char *key,
			const struct tc_tdmwin_xstats *x)
{
	tdm_json_obj_open(j, key);
	tdm_json_u64(j, "windows_opened", x->windows_opened);
	tdm_json_u64(j, "window_packets", x->window_packets);
	tdm_json_u64(j, "window_bytes", x->window_bytes);
	tdm_json_u64(j, "bypass_packets", x->bypass_packets);
	tdm_json_u64(j, "bypass_bytes", x->bypass_bytes);
	tdm_json_u64(j, "guard_deferrals", x->guard_deferrals);
	tdm_json_u64(j, "oversize_drops", x->oversize_drops);
	tdm_json_u64(j, "hold_drops", x->hold_drops);
	tdm_json_u64(j, "plan_switches", x->plan_switches);
	tdm_json_u64(j, "open_latency_max", x->open_latency_max);
	tdm_json_u64(j, "open_latency_mean", x->open_latency_count ?
		     x->open_latency_sum / x->open_latency_count : 0);
	tdm_json_u64(j, "plan_version", x->plan_version);
	tdm_json_bool(j, "pending", x->pending);
	if (x->pending) {
		tdm_json_u64(j, "pending_version", x->pending_version);
		tdm_json_s64(j, "pending_base_time", x->pending_base_time);
	}
	tdm_json_bool(j, "hold", x->hold);
	tdm_json_obj_close(j);
}

/* TX's text as the reply, a success if OK and the text was written. */
static void reply_text(struct ctl_req *r, bool ok,
		       void (*tx)(FILE *f, void *arg), void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f) {
		tx(f, arg);
		fclose(f);
	}
	ctl_reply(r, ok && text, text ? text : "out of memory\n");
	free(text);
}

void report_reply_text(struct ctl_req *r, void (*tx)(FILE *f, void *arg),
		       void *arg)
{
	reply_text(r, true, tx, arg);
}

void report_prom_info(struct tdm_prom *p, const char *role, const char *name)
{
	const char *const l[] = { "role", role, "name", name,
				  "version", TDM_VERSION, NULL };

	tdm_prom_one(p, "tdmd_info", "gauge",
		     "tdmd's role, sender name and version (always 1)", l, 1);
}

void report_prom_states(struct tdm_prom *p, const char *family,
			const char *help, const char *label,
			const char *const *states, unsigned int n,
			unsigned int cur, const char *const *labels)
{
	const char *l[8];
	unsigned int i, k = 0;

	while (labels && labels[k] && k < 4) {
		l[k] = labels[k];
		k++;
	}
	l[k] = label;
	l[k + 2] = NULL;
	tdm_prom_family(p, family, "gauge", help);
	for (i = 0; i < n; i++) {
		l[k + 1] = states[i];
		tdm_prom_u64(p, family, l, i == cur);
	}
}

void report_reply(struct ctl_req *r, bool ok,
		  void (*js)(struct tdm_json *j, void *arg),
		  void (*tx)(FILE *f, void *arg), void *arg)
{
	if (r->json) {
		struct tdm_json j;
		const char *s;

		tdm_json_init(&j);
		js(&j, arg);
		s = tdm_json_finish(&j);
		ctl_reply(r, ok && s, s ? s : "out of memory\n");
		tdm_json_free(&j);
	} else {
		reply_text(r, ok, tx, arg);
	}
}
