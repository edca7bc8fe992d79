// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus text format (tdm_prom.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_prom.h"

void tdm_prom_init(struct tdm_prom *p, FILE *f)
{
	p->f = f;
}

/* HELP text: backslash and newline escaped. */
static void put_help(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

void tdm_prom_family(struct tdm_prom *p, const char *name, const char *type,
		     const char *help)
{
	fprintf(p->f, "# HELP %s ", name);
	put_help(p->f, help);
	fprintf(p->f, "\n# TYPE %s %s\n", name, type);
}

/* name{a="x",b="y"} with the values escaped. */
static void put_name(FILE *f, const char *name, const char *const *labels)
{
	const char *s;
	int i;

	fputs(name, f);
	if (!labels || !labels[0])
		return;
	fputc('{', f);
	for (i = 0; labels[i] && labels[i + 1]; i += 2) {
		fprintf(f, "%s%s=\"", i ? "," : "", labels[i]);
		for (s = labels[i + 1]; *s; s++) {
			if (*s == '\\' || *s == '"')
				fprintf(f, "\\%c", *s);
			else if (*s == '\n')
				fputs("\\n", f);
			else
				fputc(*s, f);
		}
		fputc('"', f);
	}
	fputc('}', f);
}

void tdm_prom_u64(struct tdm_prom *p, const char *name,
		  const char *const *labels, uint64_t v)
{
	put_name(p->f, name, labels);
	fprintf(p->f, " %" PRIu64 "\n", v);
}

void tdm_prom_s64(struct tdm_prom *p, const char *name,
		  const char *const *labels, int64_t v)
{
	put_name(p->f, name, labels);
	fprintf(p->f, " %" PRId64 "\n", v);
}

void tdm_prom_ns(struct tdm_prom *p, const char *name,
		 const char *const *labels, int64_t ns)
{
	uint64_t m = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	/* Exact decimal seconds, not a double's rounding. */
	put_name(p->f, name, labels);
	fprintf(p->f, " %s%" PRIu64 ".%09" PRIu64 "\n", ns < 0 ? "-" : "",
		m / 1000000000, m % 1000000000);
}

void tdm_prom_one(struct tdm_prom *p, const char *name, const char *type,
		  const char *help, const char *const *labels, uint64_t v)
{
	tdm_prom_family(p, name, type, help);
	tdm_prom_u64(p, name, labels, v);
}

void tdm_prom_one_ns(struct tdm_prom *p, const char *name, const char *type,
		     const char *help, const char *const *labels, int64_t ns)
{
	tdm_prom_family(p, name, type, help);
	tdm_prom_ns(p, name, labels, ns);
}

/* The counters per window slot, a family at a time, a sample per slot. */
static void prom_slots(struct tdm_prom *p, const char *ifname,
		       const struct tdm_qdisc_info *q)
{
	const char *const l[] = { "interface", ifname, NULL };
	char idx[TDMWIN_MAX_WINDOWS][12];
	const char *sl[TDMWIN_MAX_WINDOWS][5];
	unsigned int i;

	tdm_prom_one(p, "tdmwin_slot_plan_version", "gauge",
		     "version of the plan whose window slots are counted", l,
		     q->slots_version);
	for (i = 0; i < q->nslots; i++) {
		snprintf(idx[i], sizeof(idx[i]), "%u", i);
		sl[i][0] = "interface";
		sl[i][1] = ifname;
		sl[i][2] = "slot";
		sl[i][3] = idx[i];
		sl[i][4] = NULL;
	}
#define TDM_PROM_SLOT_X(field, name, type, ns, help)			\
	tdm_prom_family(p, name, type, help);				\
	for (i = 0; i < q->nslots; i++) {				\
		if (ns)							\
			tdm_prom_ns(p, name, sl[i],			\
				    (int64_t)q->slots[i].field);	\
		else							\
			tdm_prom_u64(p, name, sl[i], q->slots[i].field); \
	}
	TDM_SLOT_PROM_METRICS(TDM_PROM_SLOT_X)
#undef TDM_PROM_SLOT_X
	tdm_prom_family(p, "tdmwin_slot_open_latency_seconds", "summary",
			"time from the window slot's start to its first frame on the wire, of the openings frames waited for");
	for (i = 0; i < q->nslots; i++) {
		tdm_prom_ns(p, "tdmwin_slot_open_latency_seconds_sum", sl[i],
			    (int64_t)q->slots[i].latency_sum);
		tdm_prom_u64(p, "tdmwin_slot_open_latency_seconds_count", sl[i],
			     q->slots[i].latency_count);
	}
	for (i = 0; i < q->nslots && !q->slots[i].has_margin; i++)
		;
	if (i == q->nslots)
		return;		/* no frame left yet: no margin to tell */
	tdm_prom_family(p, "tdmwin_slot_margin_min_seconds", "gauge",
			"least time from a frame's end on the wire to the window slot's end");
	for (i = 0; i < q->nslots; i++)
		if (q->slots[i].has_margin)
			tdm_prom_ns(p, "tdmwin_slot_margin_min_seconds", sl[i],
				    (int64_t)q->slots[i].margin_min);
}

void tdm_prom_qdisc(struct tdm_prom *p, const char *ifname,
		    const struct tdm_qdisc_info *q)
{
	const char *const l[] = { "interface", ifname, NULL };
	const struct tc_tdmwin_xstats *x = &q->xstats;

	tdm_prom_one(p, "tdmwin_qdisc_present", "gauge",
		     "1 if a tdmwin qdisc is at the configured place", l,
		     q->present);
	if (!q->present)
		return;
#define TDM_PROM_X(field, name, type, ns, help)			\
	do {							\
		if (ns)						\
			tdm_prom_one_ns(p, name, type, help, l,	\
					(int64_t)x->field);	\
		else						\
			tdm_prom_one(p, name, type, help, l,	\
				     (uint64_t)x->field);	\
	} while (0);
	TDM_QDISC_PROM_METRICS(TDM_PROM_X)
#undef TDM_PROM_X
	tdm_prom_family(p, "tdmwin_open_latency_seconds", "summary",
			"time from a window's start to its first frame on the wire");
	tdm_prom_ns(p, "tdmwin_open_latency_seconds_sum", l,
		    (int64_t)x->open_latency_sum);
	tdm_prom_u64(p, "tdmwin_open_latency_seconds_count", l,
		     x->open_latency_count);
	tdm_prom_one(p, "tdmwin_sent_packets_total", "counter",
		     "packets the qdisc sent", l, q->packets);
	tdm_prom_one(p, "tdmwin_sent_bytes_total", "counter",
		     "bytes the qdisc sent", l, q->bytes);
	tdm_prom_one(p, "tdmwin_drops_total", "counter",
		     "packets the qdisc dropped", l, q->drops);
	tdm_prom_one(p, "tdmwin_backlog_bytes", "gauge",
		     "bytes queued in the qdisc", l, q->backlog);
	tdm_prom_one(p, "tdmwin_queue_packets", "gauge",
		     "packets queued in the qdisc", l, q->qlen);
	tdm_prom_one_ns(p, "tdmwin_lease_seconds", "gauge",
			"the qdisc's lease (0: none)", l, (int64_t)q->lease_ns);
	if (q->lease_ns)
		tdm_prom_one_ns(p, "tdmwin_lease_left_seconds", "gauge",
				"what is left of the lease (negative: ran out that long ago)",
				l, q->lease_left_ns);
	if (q->has_slots)
		prom_slots(p, ifname, q);
}
