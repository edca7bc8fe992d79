// SPDX-License-Identifier: GPL-2.0
/*
 * tdmrx_probe: the tdmrx selftests' reader, on libtdm's tdm_rx.
 *
 *   tdmrx_probe attach DEV PORT[,PORT...] [--ring N] [--watermark N]
 *                [--flush-us N] [--stall SECS [--stall-file FILE]]
 *                [--duration SECS]
 *                [--until-end N] [--ready FILE] [--linger SECS]
 *                [--linger-file FILE] [--idle SECS]
 *   tdmrx_probe get
 *   tdmrx_probe detach [--force]
 *
 * attach: attach (error=... and exit 2 if refused), touch the ready file,
 * optionally stall without reading, then drain until the duration ends,
 * END markers from N senders came, or the session ends from outside
 * (finished=1).  With --idle, it then waits that long without traffic
 * and reads every ring's watermark (mark_*: from this session, not in the
 * future, the oldest's age).  On SIGINT/SIGTERM it closes its netlink socket (the
 * owner goes away: the kernel must detach) and drains until finished.
 * Prints key=value results, then may linger with the rings still mapped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "tdm_rx.h"
#include "tdm_util.h"

#define MAX_SENDERS	16
#define MAX_SEQ		(1u << 22)

struct sender {
	unsigned char *seen;	/* one byte per seq */
	uint64_t n, dup, reorder, last, ends, end_sent;
	int any;
};

struct tally {
	struct sender snd[MAX_SENDERS];
	uint64_t records, hw, sw, now, gso, segs, trunc, bad_magic, ends;
	uint64_t foreign, tx_zero, v6;
	int64_t tai_off, max_delay, min_delay;
	unsigned int ends_wanted;
};

static int record_cb(void *ctx, const struct tdmrx_record *r)
{
	struct tally *t = ctx;
	struct sender *s;
	int64_t d;

	t->records++;
	t->hw += !!(r->flags & TDMRX_F_HW_TS);
	t->sw += !!(r->flags & TDMRX_F_SW_TS);
	t->now += !!(r->flags & TDMRX_F_NOW_TS);
	t->trunc += !!(r->flags & TDMRX_F_TRUNC);
	t->bad_magic += !!(r->flags & TDMRX_F_BAD_MAGIC);
	t->v6 += !!(r->flags & TDMRX_F_IPV6);
	if (r->flags & TDMRX_F_GSO) {
		t->gso++;
		t->segs += r->gso_segs;
	}
	if (r->flags & (TDMRX_F_TRUNC | TDMRX_F_BAD_MAGIC))
		return 0;
	if (r->sender >= MAX_SENDERS) {
		t->foreign++;
		return 0;
	}
	s = &t->snd[r->sender];
	s->any = 1;
	if (r->flags & TDMRX_F_END) {
		s->ends++;
		s->end_sent = r->sent;
		if (s->ends == 1)
			t->ends++;
		return t->ends_wanted && t->ends >= t->ends_wanted;
	}
	if (!r->tx_ns)
		t->tx_zero++;
	/* TX times are TAI; software stamps REALTIME; a PHC runs on TAI */
	d = r->rx_ns - r->tx_ns;
	if (!(r->flags & TDMRX_F_HW_TS))
		d += t->tai_off;
	if (d > t->max_delay)
		t->max_delay = d;
	if (d < t->min_delay)
		t->min_delay = d;
	s->n++;
	if (s->n > 1 && r->seq <= s->last)
		s->reorder++;
	s->last = r->seq;
	if (r->seq < MAX_SEQ) {
		if (!s->seen)
			s->seen = calloc(MAX_SEQ, 1);
		if (s->seen && s->seen[r->seq]++)
			s->dup++;
	}
	return 0;
}

static void print_info(const char *pre, const struct tdm_rx_info *in)
{
	const struct tdmrx_stats *st = &in->stats;

	printf("%sattached=%d\n%sowner=%u\n%ssession=%u\n%sifname=%s\n",
	       pre, in->attached, pre, in->owner, pre, in->session, pre,
	       in->ifname);
	printf("%sseen=%llu\n%smatched=%llu\n%srecords=%llu\n%sdropped=%llu\n",
	       pre, (unsigned long long)st->seen, pre,
	       (unsigned long long)st->matched, pre,
	       (unsigned long long)st->records, pre,
	       (unsigned long long)st->dropped);
	printf("%sbad_header=%llu\n%ssw_stamps=%llu\n%shw_stamps=%llu\n%swakeups=%llu\n",
	       pre, (unsigned long long)st->bad_header, pre,
	       (unsigned long long)st->sw_stamps, pre,
	       (unsigned long long)st->hw_stamps, pre,
	       (unsigned long long)st->wakeups);
	printf("%shw_tstamp=%d\n", pre, in->hw_tstamp);
}

static void print_tally(const struct tally *t)
{
	uint64_t dup = 0, reorder = 0, data = 0, end_sent = 0, missing = 0;
	unsigned int i, senders = 0;

	for (i = 0; i < MAX_SENDERS; i++) {
		const struct sender *s = &t->snd[i];

		if (!s->any)
			continue;
		senders++;
		dup += s->dup;
		reorder += s->reorder;
		data += s->n;
		end_sent += s->end_sent;
		if (s->end_sent > s->n)
			missing += s->end_sent - s->n;
		printf("sender%u.records=%llu\nsender%u.end_sent=%llu\n", i,
		       (unsigned long long)s->n, i,
		       (unsigned long long)s->end_sent);
	}
	printf("records=%llu\ndata=%llu\nsenders=%u\nends=%llu\nend_sent=%llu\n",
	       (unsigned long long)t->records, (unsigned long long)data,
	       senders, (unsigned long long)t->ends,
	       (unsigned long long)end_sent);
	printf("dup=%llu\nreorder=%llu\nmissing=%llu\ntx_zero=%llu\n",
	       (unsigned long long)dup, (unsigned long long)reorder,
	       (unsigned long long)missing, (unsigned long long)t->tx_zero);
	printf("hw=%llu\nsw=%llu\nnow=%llu\ngso=%llu\nsegs=%llu\nipv6=%llu\n",
	       (unsigned long long)t->hw, (unsigned long long)t->sw,
	       (unsigned long long)t->now, (unsigned long long)t->gso,
	       (unsigned long long)t->segs, (unsigned long long)t->v6);
	printf("trunc=%llu\nbad_magic=%llu\nforeign=%llu\n",
	       (unsigned long long)t->trunc,
	       (unsigned long long)t->bad_magic,
	       (unsigned long long)t->foreign);
	if (data)
		printf("max_delay_us=%lld\nmin_delay_us=%lld\n",
		       (long long)(t->max_delay / 1000),
		       (long long)(t->min_delay / 1000));
}

/* After idle seconds without traffic, every ring's mark: the kernel sets
 * it at the attach and its timer moves it on while the ring is idle.
 */
static void print_marks(struct tdm_rx *rx, int64_t t_attach, double idle)
{
	int64_t now, age_max = 0;
	unsigned int r, before = 0, future = 0;

	usleep((useconds_t)(idle * 1e6));
	now = tdm_mono_ns();
	for (r = 0; r < rx->nr_rings; r++) {
		int64_t m = __atomic_load_n(&rx->rings[r].prod->mark_ns,
					    __ATOMIC_ACQUIRE);

		before += m < t_attach;
		future += m > now;
		if (now - m > age_max)
			age_max = now - m;
	}
	printf("mark_rings=%u\nmark_before_attach=%u\nmark_future=%u\nmark_age_max_ms=%lld\n",
	       rx->nr_rings, before, future, (long long)(age_max / 1000000));
}

static int parse_ports(const char *s, struct tdm_rx_cfg *cfg)
{
	char *end;

	while (*s) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v > 65535 || cfg->nports == TDMRX_MAX_PORTS)
			return -1;
		cfg->ports[cfg->nports++] = (uint16_t)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return cfg->nports ? 0 : -1;
}

static void touch(const char *path)
{
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f)
		fclose(f);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: tdmrx_probe attach DEV PORTS [--ring N] [--watermark N] [--flush-us N]\n"
		"                  [--stall S [--stall-file F]] [--duration S] [--until-end N]\n"
		"                  [--ready FILE]\n"
		"                  [--linger S] [--linger-file FILE] [--idle S]\n"
		"       tdmrx_probe get | detach [--force]\n");
	exit(64);
}

static int cmd_attach(int argc, char **argv)
{
	double stall = 0, duration = 10, linger = 0, idle = 0;
	int64_t t_end, t_attach;
	const char *ready = NULL, *linger_file = NULL, *stall_file = NULL;
	struct tdm_rx_cfg cfg = { .nports = 0 };
	struct tdm_rx_info info;
	struct tally t = { .min_delay = INT64_MAX, .max_delay = INT64_MIN };
	char err[512];
	struct tdm_rx rx;
	int finished = 0, owner_closed = 0, i;
	uint64_t linger_prod = 0;
	unsigned int r;

	if (argc < 4)
		usage();
	snprintf(cfg.ifname, sizeof(cfg.ifname), "%s", argv[2]);
	if (parse_ports(argv[3], &cfg))
		usage();
	for (i = 4; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(o, "--ring"))
			cfg.ring_records = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(o, "--watermark"))
			cfg.watermark = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(o, "--flush-us"))
			cfg.flush_us = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(o, "--stall"))
			stall = atof(v);
		else if (!strcmp(o, "--stall-file"))
			stall_file = v;
		else if (!strcmp(o, "--duration"))
			duration = atof(v);
		else if (!strcmp(o, "--until-end"))
			t.ends_wanted = (unsigned int)atoi(v);
		else if (!strcmp(o, "--ready"))
			ready = v;
		else if (!strcmp(o, "--linger"))
			linger = atof(v);
		else if (!strcmp(o, "--linger-file"))
			linger_file = v;
		else if (!strcmp(o, "--idle"))
			idle = atof(v);
		else
			usage();
	}
	tdm_stop_on_signals();
	t.tai_off = tdm_clock_ns(CLOCK_TAI) - tdm_clock_ns(CLOCK_REALTIME);
	t_attach = tdm_mono_ns();

	if (tdm_rx_open(&rx, err, sizeof(err))) {
		printf("error=%s\n", err);
		return 3;
	}
	if (tdm_rx_attach(&rx, &cfg, err, sizeof(err))) {
		printf("error=%s\n", err);
		fflush(stdout);
		tdm_rx_close(&rx);
		return 2;
	}
	printf("portid=%u\nsession=%u\nnr_rings=%u\nring_records=%u\n",
	       rx.nl.portid, rx.info.session, rx.nr_rings, rx.info.ring_records);
	fflush(stdout);
	touch(ready);

	/* a reader that does not read: for stall seconds or until the file */
	t_end = tdm_mono_ns() + (int64_t)(stall * 1e9);
	while (!tdm_stop && tdm_mono_ns() < t_end &&
	       (!stall_file || access(stall_file, F_OK)))
		usleep(10000);
	t_end = tdm_mono_ns() + (int64_t)(duration * 1e9);
	while (!tdm_stop && tdm_mono_ns() < t_end) {
		if (tdm_rx_wait(&rx, 100, err, sizeof(err)) < 0) {
			printf("error=%s\n", err);
			break;
		}
		tdm_rx_drain(&rx, record_cb, &t, 0);
		if (t.ends_wanted && t.ends >= t.ends_wanted)
			break;
		if (tdm_rx_finished(&rx)) {
			finished = 1;
			break;
		}
	}
	if (idle > 0 && !finished)
		print_marks(&rx, t_attach, idle);
	if (tdm_stop && !finished) {
		/* The owner goes away: the kernel detaches on its own. */
		tdm_nl_close(&rx.nl);
		owner_closed = 1;
		/* ends as soon as the kernel detaches: generous for slow guests */
		t_end = tdm_mono_ns() + 30 * (int64_t)TDM_NSEC_PER_SEC;
		while (!tdm_rx_finished(&rx) && tdm_mono_ns() < t_end) {
			tdm_rx_wait(&rx, 100, err, sizeof(err));
			tdm_rx_drain(&rx, record_cb, &t, 0);
		}
		finished = tdm_rx_finished(&rx);
	}
	if (rx.nl.sock && !finished) {
		/* our own detach, then the final counters of the session */
		if (tdm_rx_detach(&rx, false, err, sizeof(err)))
			printf("detach_error=%s\n", err);
		t_end = tdm_mono_ns() + 30 * (int64_t)TDM_NSEC_PER_SEC;
		while (!tdm_rx_finished(&rx) && tdm_mono_ns() < t_end) {
			tdm_rx_wait(&rx, 100, err, sizeof(err));
			tdm_rx_drain(&rx, record_cb, &t, 0);
		}
	}
	if (rx.nl.sock && !tdm_rx_get(&rx, &info, err, sizeof(err)))
		print_info("k_", &info);
	tdm_rx_drain(&rx, record_cb, &t, 0);
	printf("finished=%d\nowner_closed=%d\nring_dropped=%llu\ndetached_seen=%d\n",
	       finished, owner_closed, (unsigned long long)tdm_rx_dropped(&rx),
	       tdm_rx_finished(&rx));
	print_tally(&t);
	fflush(stdout);

	if (linger > 0) {
		/* only the mapping is left: it alone must hold the module */
		tdm_nl_close(&rx.nl);
		close(rx.dev_fd);
		rx.dev_fd = -1;
		touch(linger_file);
		t_end = tdm_mono_ns() + (int64_t)(linger * 1e9);
		while (!tdm_stop && tdm_mono_ns() < t_end)
			usleep(20000);
		/* still mapped and readable, whatever happened meanwhile */
		for (r = 0; r < rx.nr_rings; r++)
			linger_prod += rx.rings[r].prod->prod;
		printf("linger_prod=%llu\n", (unsigned long long)linger_prod);
	}
	tdm_rx_close(&rx);
	for (i = 0; i < MAX_SENDERS; i++)
		free(t.snd[i].seen);
	return 0;
}

int main(int argc, char **argv)
{
	struct tdm_rx_info info;
	struct tdm_rx rx;
	char err[512];
	int rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "attach"))
		return cmd_attach(argc, argv);
	if (tdm_rx_open(&rx, err, sizeof(err))) {
		printf("error=%s\n", err);
		return 3;
	}
	if (!strcmp(argv[1], "get")) {
		if (tdm_rx_get(&rx, &info, err, sizeof(err))) {
			printf("error=%s\n", err);
			rc = 1;
		} else {
			print_info("", &info);
		}
	} else if (!strcmp(argv[1], "detach")) {
		bool force = argc > 2 && !strcmp(argv[2], "--force");

		if (tdm_rx_detach(&rx, force, err, sizeof(err))) {
			printf("error=%s\n", err);
			rc = 1;
		} else {
			printf("detached=1\n");
		}
	} else {
		usage();
	}
	tdm_rx_close(&rx);
	return rc;
}
