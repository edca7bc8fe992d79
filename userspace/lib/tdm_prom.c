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

/*
 * The labels of instance k (interface, and queue when there is one) and,
 * with a slot (>= 0), the slot too: NULL-terminated pairs in l.
 */
struct inst_labels {
	const char *l[7];
	char slot[12];
};

static const char *const *inst_labels(struct inst_labels *b, const char *ifname,
				      const struct tdm_prom_inst *in, int slot)
{
	unsigned int n = 0;

	b->l[n++] = "interface";
	b->l[n++] = ifname;
	if (in->queue) {
		b->l[n++] = "queue";
		b->l[n++] = in->queue;
	}
	if (slot >= 0) {
		snprintf(b->slot, sizeof(b->slot), "%d", slot);
		b->l[n++] = "slot";
		b->l[n++] = b->slot;
	}
	b->l[n] = NULL;
	return b->l;
}

/* Does any instance there have a sample of the family sel picks? */
enum fam_sel { SEL_PRESENT, SEL_LEASE, SEL_SLOTS, SEL_MARGIN };

static bool inst_has(const struct tdm_qdisc_info *q, enum fam_sel sel)
{
	unsigned int i;

	if (!q->present)
		return false;
	switch (sel) {
	case SEL_PRESENT:
		return true;
	case SEL_LEASE:
		return q->lease_ns;
	case SEL_SLOTS:
		return q->has_slots;
	case SEL_MARGIN:
		for (i = 0; q->has_slots && i < q->nslots; i++)
			if (q->slots[i].has_margin)
				return true;
		return false;
	}
	return false;
}

static bool any_has(const struct tdm_prom_inst *inst, unsigned int n,
		    enum fam_sel sel)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		if (inst_has(inst[k].q, sel))
			return true;
	return false;
}

/*
 * A family, once, then a sample per instance that has it (per slot with
 * per_slot).  VALUE is an expression of q (the instance) and, per slot,
 * s (the slot); AS_NS writes it in seconds.
 */
#define PROM_FAMILY(name, type, help, sel, per_slot, as_ns, VALUE)		\
	do {									\
		unsigned int k_, i_;						\
									\
		if (!any_has(inst, n, (sel)))					\
			break;							\
		tdm_prom_family(p, (name), (type), (help));			\
		for (k_ = 0; k_ < n; k_++) {					\
			const struct tdm_qdisc_info *q = inst[k_].q;		\
			struct inst_labels b_;					\
									\
			if (!inst_has(q, (sel)))				\
				continue;					\
			for (i_ = 0; i_ < ((per_slot) ? q->nslots : 1); i_++) { \
				const struct tdm_qdisc_slot *s = &q->slots[i_]; \
				const char *const *l_ = inst_labels(&b_, ifname, \
					&inst[k_], (per_slot) ? (int)i_ : -1);	\
									\
				(void)s;					\
				if ((sel) == SEL_MARGIN && !s->has_margin)	\
					continue;				\
				if (as_ns)					\
					tdm_prom_ns(p, (name), l_,		\
						    (int64_t)(VALUE));		\
				else						\
					tdm_prom_u64(p, (name), l_,		\
						     (uint64_t)(VALUE));	\
			}							\
		}								\
	} while (0)

void tdm_prom_qdisc(struct tdm_prom *p, const char *ifname,
		    const struct tdm_prom_inst *inst, unsigned int n)
{
	unsigned int k;

	tdm_prom_family(p, "tdmwin_qdisc_present", "gauge",
			"1 if a tdmwin qdisc is at the configured place");
	for (k = 0; k < n; k++) {
		struct inst_labels b;

		tdm_prom_u64(p, "tdmwin_qdisc_present",
			     inst_labels(&b, ifname, &inst[k], -1),
			     inst[k].q->present);
	}
#define TDM_PROM_X(field, name, type, ns, help)				\
	PROM_FAMILY(name, type, help, SEL_PRESENT, false, ns, q->xstats.field);
	TDM_QDISC_PROM_METRICS(TDM_PROM_X)
#undef TDM_PROM_X
	if (any_has(inst, n, SEL_PRESENT))
		tdm_prom_family(p, "tdmwin_open_latency_seconds", "summary",
				"time from a window's start to its first frame on the wire");
	for (k = 0; k < n; k++) {
		const struct tdm_qdisc_info *q = inst[k].q;
		struct inst_labels b;
		const char *const *l = inst_labels(&b, ifname, &inst[k], -1);

		if (!q->present)
			continue;
		tdm_prom_ns(p, "tdmwin_open_latency_seconds_sum", l,
			    (int64_t)q->xstats.open_latency_sum);
		tdm_prom_u64(p, "tdmwin_open_latency_seconds_count", l,
			     q->xstats.open_latency_count);
	}
	PROM_FAMILY("tdmwin_sent_packets_total", "counter",
		    "packets the qdisc sent", SEL_PRESENT, false, false,
		    q->packets);
	PROM_FAMILY("tdmwin_sent_bytes_total", "counter",
		    "bytes the qdisc sent", SEL_PRESENT, false, false, q->bytes);
	PROM_FAMILY("tdmwin_drops_total", "counter",
		    "packets the qdisc dropped", SEL_PRESENT, false, false,
		    q->drops);
	PROM_FAMILY("tdmwin_backlog_bytes", "gauge",
		    "bytes queued in the qdisc", SEL_PRESENT, false, false,
		    q->backlog);
	PROM_FAMILY("tdmwin_queue_packets", "gauge",
		    "packets queued in the qdisc", SEL_PRESENT, false, false,
		    q->qlen);
	PROM_FAMILY("tdmwin_lease_seconds", "gauge",
		    "the qdisc's lease (0: none)", SEL_PRESENT, false, true,
		    q->lease_ns);
	PROM_FAMILY("tdmwin_lease_left_seconds", "gauge",
		    "what is left of the lease (negative: ran out that long ago)",
		    SEL_LEASE, false, true, q->lease_left_ns);
	/* The counters per window slot: a sample per instance and slot. */
	PROM_FAMILY("tdmwin_slot_plan_version", "gauge",
		    "version of the plan whose window slots are counted",
		    SEL_SLOTS, false, false, q->slots_version);
#define TDM_PROM_SLOT_X(field, name, type, ns, help)			\
	PROM_FAMILY(name, type, help, SEL_SLOTS, true, ns, s->field);
	TDM_SLOT_PROM_METRICS(TDM_PROM_SLOT_X)
#undef TDM_PROM_SLOT_X
	if (any_has(inst, n, SEL_SLOTS))
		tdm_prom_family(p, "tdmwin_slot_open_latency_seconds", "summary",
				"time from the window slot's start to its first frame on the wire, of the openings frames waited for");
	for (k = 0; k < n; k++) {
		const struct tdm_qdisc_info *q = inst[k].q;
		unsigned int i;

		if (!inst_has(q, SEL_SLOTS))
			continue;
		for (i = 0; i < q->nslots; i++) {
			struct inst_labels b;
			const char *const *l = inst_labels(&b, ifname, &inst[k],
							   (int)i);

			tdm_prom_ns(p, "tdmwin_slot_open_latency_seconds_sum", l,
				    (int64_t)q->slots[i].latency_sum);
			tdm_prom_u64(p, "tdmwin_slot_open_latency_seconds_count",
				     l, q->slots[i].latency_count);
		}
	}
	/* Only slots a frame left in have a margin to tell. */
	PROM_FAMILY("tdmwin_slot_margin_min_seconds", "gauge",
		    "least time from a frame's end on the wire to the window slot's end",
		    SEL_MARGIN, true, true, s->margin_min);
}
