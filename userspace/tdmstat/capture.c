// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat capture: attach tdmrx.ko to a device through libtdm's tdm_rx,
 * drain every per-CPU ring, put each round's records back into arrival
 * order and feed them to the engine.  Ring drops are read from the mapped
 * ring headers and counted apart from network loss.
 *
 * Each ring is in arrival order on its own; a round holds one run per ring,
 * merged here by rx_ns.  Records of one CPU that arrive while another ring
 * is being read land in the next round, so arrival-order metrics (overlap,
 * jitter) can see a small disorder across CPUs at round edges; steer the
 * test traffic to one RX queue for exact overlap counts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/net_tstamp.h>
#include <linux/sockios.h>

#include "tdm_pkt.h"
#include "tdm_rx.h"
#include "tdm_util.h"
#include "tdmstat.h"

#define BATCH		(1u << 16)
#define MAX_RUNS	1024

struct batch {
	struct tdmrx_record *rec, *tmp;
	size_t n;
	size_t run_start[MAX_RUNS + 1];
	unsigned int nruns;
	uint16_t last_cpu;
	FILE *out;		/* -w */
};

static int collect(void *ctx, const struct tdmrx_record *r)
{
	struct batch *b = ctx;

	if (!b->n || r->cpu != b->last_cpu) {
		if (b->nruns == MAX_RUNS)
			return 1;
		b->run_start[b->nruns++] = b->n;
		b->last_cpu = r->cpu;
	}
	b->rec[b->n++] = *r;
	return b->n == BATCH;
}

static void merge(const struct tdmrx_record *a, size_t na,
		  const struct tdmrx_record *b, size_t nb,
		  struct tdmrx_record *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na && j < nb)
		out[k++] = b[j].rx_ns < a[i].rx_ns ? b[j++] : a[i++];
	while (i < na)
		out[k++] = a[i++];
	while (j < nb)
		out[k++] = b[j++];
}

/* Merge the rings' runs pairwise until one is left (in b->rec). */
static void order(struct batch *b)
{
	struct tdmrx_record *swap;

	while (b->nruns > 1) {
		unsigned int r, nr = 0;

		b->run_start[b->nruns] = b->n;
		for (r = 0; r < b->nruns; r += 2) {
			size_t st = b->run_start[r];
			size_t m = r + 1 < b->nruns ? b->run_start[r + 1] : b->n;
			size_t e = r + 2 < b->nruns ? b->run_start[r + 2] : b->n;

			merge(b->rec + st, m - st, b->rec + m, e - m, b->tmp + st);
			b->run_start[nr++] = st;
		}
		b->nruns = nr;
		swap = b->rec;
		b->rec = b->tmp;
		b->tmp = swap;
	}
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
	struct batch b = { 0 };
	struct tdm_rx rx;
	struct hwtstamp_config hwts_old;
	char err[512];
	int64_t end = INT64_MAX, next_plan = 0, now;
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
	b.rec = malloc(BATCH * sizeof(*b.rec));
	b.tmp = malloc(BATCH * sizeof(*b.tmp));
	if (!b.rec || !b.tmp) {
		fprintf(stderr, "tdmstat: out of memory\n");
		goto out_free;
	}
	if (t->record_file) {
		uint8_t h[TDM_REC_FILE_HDR_LEN];

		b.out = fopen(t->record_file, "wb");
		if (!b.out) {
			fprintf(stderr, "tdmstat: %s: %s\n", t->record_file,
				strerror(errno));
			goto out_free;
		}
		setvbuf(b.out, NULL, _IOFBF, 1 << 20);
		tdm_rec_file_header(h);
		fwrite(h, 1, sizeof(h), b.out);
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
	if (t->duration_ns)
		end = tdm_mono_ns() + (int64_t)t->duration_ns;
	if (!t->quiet)
		fprintf(stderr, "tdmstat: recording %s, %u rings%s\n", t->ifname,
			rx.nr_rings, t->expect_senders ? "" :
			" (stop with ^C, -d or -e)");

	while (!tdm_stop) {
		size_t i;

		if (tdm_rx_wait(&rx, 100, err, sizeof(err)) < 0) {
			fprintf(stderr, "tdmstat: %s\n", err);
			goto out_detach;
		}
		do {
			b.n = 0;
			b.nruns = 0;
			tdm_rx_drain(&rx, collect, &b, BATCH);
			if (b.out && b.n)
				fwrite(b.rec, sizeof(b.rec[0]), b.n, b.out);
			order(&b);
			for (i = 0; i < b.n; i++)
				tdm_stats_push(t->st, &b.rec[i]);
			t->records_in += b.n;
		} while (b.n == BATCH && !tdm_stop);
		tdm_stats_ring_drops(t->st, tdm_rx_dropped(&rx));
		now = tdm_clock_ns(CLOCK_TAI);
		if (now > 0)
			tdm_stats_advance(t->st, now);
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
	/* The last records, then let go. */
	b.n = 0;
	b.nruns = 0;
	tdm_rx_drain(&rx, collect, &b, BATCH);
	if (b.out && b.n)
		fwrite(b.rec, sizeof(b.rec[0]), b.n, b.out);
	order(&b);
	for (size_t i = 0; i < b.n; i++)
		tdm_stats_push(t->st, &b.rec[i]);
	tdm_stats_ring_drops(t->st, tdm_rx_dropped(&rx));
	if (attached && tdm_rx_detach(&rx, false, err, sizeof(err)))
		fprintf(stderr, "tdmstat: detach: %s\n", err);
out_close:
	tdm_rx_close(&rx);
	if (hwts_changed)
		hwts_restore(t->ifname, &hwts_old);
out_free:
	if (b.out && fclose(b.out)) {
		fprintf(stderr, "tdmstat: %s: %s\n", t->record_file, strerror(errno));
		rc = 1;
	}
	if (tdmstat_finish(t))
		rc = 1;
	free(b.rec);
	free(b.tmp);
	return rc;
}
