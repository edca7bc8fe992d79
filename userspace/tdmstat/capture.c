// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat capture: attach tdmrx.ko to a device through libtdm's tdm_rx,
 * drain every per-CPU ring and put the records back into receive order
 * with libtdm's merge (tdm_merge.h) before the engine sees them.  Each
 * ring's watermark says how far its CPU's hook has got; the merge releases
 * what every ring has passed, less the reorder bound, and windows close by
 * that frontier, not by the wall clock, so a receive path that runs late
 * delays the results instead of making packets late.  Ring drops are read
 * from the mapped ring headers and counted apart from network loss.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/net_tstamp.h>
#include <linux/sockios.h>

#include "tdm_merge.h"
#include "tdm_pkt.h"
#include "tdm_rx.h"
#include "tdm_util.h"
#include "tdmstat.h"

struct tap {
	FILE *out;			/* -w: records as the rings gave them */
	bool err;
};

static int write_record(void *ctx, const struct tdmrx_record *r)
{
	struct tap *w = ctx;

	if (fwrite(r, sizeof(*r), 1, w->out) != 1)
		w->err = true;
	return 0;
}

static void to_engine(void *ctx, const struct tdmrx_record *r)
{
	struct tdmstat *t = ctx;

	tdm_stats_push(t->st, r);
	t->records_in++;
}

/*
 * One round: every ring into the merge, the clock offset that puts the
 * rings' CLOCK_MONOTONIC watermarks on the plan's clock (through REALTIME:
 * software stamps are REALTIME, hardware ones are put on the plan clock by
 * --hw-offset), out with what every ring has passed, the rings' drops to
 * the windows that are open then (those of the records just out among
 * them), and the windows close up to that frontier.
 */
static void feed_round(struct tdmstat *t, struct tdm_rx *rx,
		       struct tdm_merge *m, struct tap *w)
{
	int64_t mono, frontier;

	tdm_merge_feed_rings(rx->rings, rx->nr_rings, m,
			     w->out ? write_record : NULL, w);
	mono = tdm_mono_ns();
	tdm_merge_clock(m, mono, tdm_clock_ns(CLOCK_REALTIME) - mono +
			tdm_stats_cfg(t->st)->rt_offset_ns);
	frontier = tdm_merge_release(m);
	tdm_stats_behind(t->st, tdm_merge_behind(m));
	tdm_stats_ring_drops(t->st, tdm_rx_dropped(rx));
	if (frontier != INT64_MIN)
		tdm_stats_advance(t->st, frontier);
}

/*
 * Hardware RX timestamps of every packet, as hwstamp_ctl -r 1 does: the
 * recorder takes the NIC's stamp when there is one, and the NIC only stamps
 * what its filter says (PTP packets only, under ptp4l).  The TX setting
 * (ptp4l's) is kept.  Returns 1 if the filter was changed (the old setting
 * in *old, for hwts_restore), 0 if it was already on or the device cannot
 * (veth: software stamps then).
 */
static int hwts_ioctl(const char *ifname, unsigned long req,
		      struct hwtstamp_config *cfg)
{
	struct ifreq ifr;
	int fd, ret;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	tdm_strlcpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name));
	ifr.ifr_data = (void *)cfg;
	ret = ioctl(fd, req, &ifr);
	close(fd);
	return ret;
}

static int hwts_enable(const char *ifname, struct hwtstamp_config *old,
		       bool quiet)
{
	struct hwtstamp_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	if (hwts_ioctl(ifname, SIOCGHWTSTAMP, &cfg) < 0) {
		if (!quiet)
			fprintf(stderr, "tdmstat: %s has no hardware timestamping (%s): software stamps\n",
				ifname, strerror(errno));
		return 0;
	}
	if (cfg.rx_filter == HWTSTAMP_FILTER_ALL)
		return 0;
	*old = cfg;
	cfg.rx_filter = HWTSTAMP_FILTER_ALL;
	if (hwts_ioctl(ifname, SIOCSHWTSTAMP, &cfg) < 0) {
		if (!quiet)
			fprintf(stderr, "tdmstat: %s cannot stamp every received packet (%s): software stamps for what it does not stamp\n",
				ifname, strerror(errno));
		return 0;
	}
	if (!quiet)
		fprintf(stderr, "tdmstat: hardware RX timestamps of every packet on %s (restored at the end)\n",
			ifname);
	return 1;
}

static void hwts_restore(const char *ifname, struct hwtstamp_config *old)
{
	if (hwts_ioctl(ifname, SIOCSHWTSTAMP, old) < 0)
		fprintf(stderr, "tdmstat: cannot restore the timestamping filter of %s: %s\n",
			ifname, strerror(errno));
}

static unsigned int senders_done(struct tdmstat *t)
{
	unsigned int i, n = 0;

	tdm_stats_run(t->st);
	for (i = 0; i < tdm_stats_nsenders(t->st); i++)
		if (tdm_stats_sender(t->st, i)->end_markers)
			n++;
	return n;
}

int tdmstat_capture(struct tdmstat *t)
{
	struct tdm_rx_cfg cfg = { 0 };
	struct tap w = { 0 };
	struct tdm_merge *m = NULL;
	struct tdm_rx rx;
	struct hwtstamp_config hwts_old;
	char err[512];
	int64_t end = INT64_MAX, next_plan = 0;
	int rc = 1, hwts_changed = 0;
	bool attached = false;

	if (!t->ifname) {
		fprintf(stderr, "tdmstat: capture needs -i IFACE\n");
		return 2;
	}
	if (tdm_strlcpy(cfg.ifname, t->ifname, sizeof(cfg.ifname))) {
		fprintf(stderr, "tdmstat: interface name too long: %s\n", t->ifname);
		return 2;
	}
	if (t->nports) {
		memcpy(cfg.ports, t->ports, t->nports * sizeof(t->ports[0]));
		cfg.nports = t->nports;
	} else {
		cfg.ports[0] = 8081;
		cfg.nports = 1;
	}
	cfg.ring_records = t->ring_records;
	if (tdmstat_load_plans(t, err, sizeof(err)) ||
	    tdmstat_open_outputs(t, err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s\n", err);
		return 1;
	}
	if (t->record_file) {
		uint8_t h[TDM_REC_FILE_HDR_LEN];

		w.out = fopen(t->record_file, "wb");
		if (!w.out) {
			fprintf(stderr, "tdmstat: %s: %s\n", t->record_file,
				strerror(errno));
			goto out_free;
		}
		setvbuf(w.out, NULL, _IOFBF, 1 << 20);
		tdm_rec_file_header(h);
		if (fwrite(h, 1, sizeof(h), w.out) != sizeof(h))
			w.err = true;
	}
	if (tdm_rx_open(&rx, err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s\n", err);
		goto out_free;
	}
	hwts_changed = hwts_enable(t->ifname, &hwts_old, t->quiet);
	if (tdm_rx_attach(&rx, &cfg, err, sizeof(err))) {
		fprintf(stderr, "tdmstat: attach to %s: %s\n", t->ifname, err);
		goto out_close;
	}
	attached = true;
	{
		const struct tdm_stats_cfg *sc = tdm_stats_cfg(t->st);
		struct tdm_merge_cfg mc = {
			.nsrc = rx.nr_rings,
			.bound_ns = (int64_t)t->reorder_bound_ns,
			.hold_ns = sc->grace_ns + (int64_t)t->reorder_bound_ns,
			.clock = sc,
			.emit = to_engine,
			.ctx = t,
		};

		m = tdm_merge_new(&mc);
		if (!m) {
			fprintf(stderr, "tdmstat: out of memory\n");
			goto out_detach;
		}
	}
	if (t->duration_ns)
		end = tdm_mono_ns() + (int64_t)t->duration_ns;
	if (!t->quiet)
		fprintf(stderr, "tdmstat: recording %s, %u rings%s\n", t->ifname,
			rx.nr_rings, t->expect_senders ? "" :
			" (stop with ^C, -d or -e)");

	while (!tdm_stop) {
		if (tdm_rx_wait(&rx, 100, err, sizeof(err)) < 0) {
			fprintf(stderr, "tdmstat: %s\n", err);
			goto out_detach;
		}
		feed_round(t, &rx, m, &w);
		tdmstat_progress(t, false);
		if (tdm_rx_finished(&rx)) {
			fprintf(stderr, "tdmstat: the recorder was detached\n");
			break;
		}
		if (tdm_mono_ns() >= end)
			break;
		if (t->expect_senders && senders_done(t) >= t->expect_senders)
			break;
		if (t->tdmd_socket && tdm_mono_ns() >= next_plan) {
			if (tdmstat_poll_tdmd(t, err, sizeof(err)))
				fprintf(stderr, "tdmstat: %s\n", err);
			next_plan = tdm_mono_ns() + 1000000000LL;
		}
	}
	rc = 0;
out_detach:
	/* Let go first: the rings stay mapped, their prod is then final. */
	if (attached && tdm_rx_detach(&rx, false, err, sizeof(err)))
		fprintf(stderr, "tdmstat: detach: %s\n", err);
	if (m) {
		feed_round(t, &rx, m, &w);
		tdm_merge_flush(m);
		tdm_stats_behind(t->st, tdm_merge_behind(m));
	}
	tdm_stats_ring_drops(t->st, tdm_rx_dropped(&rx));
out_close:
	tdm_rx_close(&rx);
	if (hwts_changed)
		hwts_restore(t->ifname, &hwts_old);
out_free:
	if (w.out && (fclose(w.out) || w.err)) {
		fprintf(stderr, "tdmstat: %s: %s\n", t->record_file,
			w.err ? "short write" : strerror(errno));
		rc = 1;
	}
	if (tdmstat_finish(t))
		rc = 1;
	tdm_merge_free(m);
	return rc;
}
