// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat capture: attach a recorder to a device, tdmrx.ko through
 * libtdm's tdm_rx or the BPF recorder (tc ingress or XDP) through
 * tdm_rxbpf (--recorder), or
 * read the rings a kernel-bypass receiver fills itself (tdm_uring.h),
 * drain every per-CPU ring and put the records back into receive order
 * with libtdm's merge (tdm_merge.h) before the engine sees them.  Each
 * ring's watermark says how far its CPU's hook has got; the merge releases
 * what every ring has passed, less the reorder bound, and windows close by
 * that frontier, not by the wall clock, so a receive path that runs late
 * delays the results instead of making packets late.  Ring drops are read
 * from the recorder (the mapped ring headers, or the BPF recorder's
 * per-CPU counters) and counted apart from network loss.  The
 * recorders differ only in struct rec below: what follows the rings is
 * one code path.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/net_tstamp.h>
#include <linux/sockios.h>

#include "tdm_merge.h"
#include "tdm_pkt.h"
#include "tdm_rx.h"
#include "tdm_rxbpf.h"
#include "tdm_uring.h"
#include "tdm_util.h"
#include "tdmstat.h"

extern char **environ;

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

/* ---- the recorder: tdmrx.ko, BPF, or a producer's rings --------------------- */

struct rec {
	bool bpf;			/* bpf, xdp, xdp-hw */
	enum tdm_rxbpf_hook hook;
	bool uring;			/* ring:NAME,... */
	struct tdm_urings ur;
	struct tdm_rx rx;		/* kmod */
	bool rx_open, attached;
	struct tdm_rxbpf *b;		/* bpf */
};

/*
 * modprobe tdmrx: 0 if it ran and succeeded; else what it said (its last
 * line on stderr, "Operation not permitted" under lockdown, say) in WHY.
 */
static int modprobe_tdmrx(char *why, size_t len)
{
	char *argv[] = { "modprobe", "tdmrx", NULL };
	posix_spawn_file_actions_t fa;
	char buf[1024], *line;
	size_t got = 0;
	int pfd[2], st, rc;
	ssize_t n;
	pid_t pid;

	snprintf(why, len, "modprobe did not run");
	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	if (posix_spawn_file_actions_init(&fa)) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
					 O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDERR_FILENO);
	rc = posix_spawnp(&pid, "modprobe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (rc) {
		close(pfd[0]);
		snprintf(why, len, "modprobe: %s", strerror(rc));
		return -1;
	}
	/* Keep the end of what it says: its reason comes last. */
	for (;;) {
		n = read(pfd[0], buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf) - 1) {
			memmove(buf, buf + got / 2, got - got / 2);
			got -= got / 2;
		}
	}
	close(pfd[0]);
	buf[got] = '\0';
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	/* a reason cut to fit is still the reason */
	(void)tdm_strlcpy(why, *line ? line : "modprobe tdmrx failed", len);
	return -1;
}

/* Open the recorder --recorder names; auto: the XDP recorder if the
 * device has an XDP program (an AF_XDP receiver's takes the packets before
 * tdmrx's hook and tc ingress), else tdmrx.ko if it is loaded or modprobe
 * loads it, else BPF at tc ingress.
 */
static int rec_open(struct tdmstat *t, struct rec *r, char *err, size_t errlen)
{
	char kerr[256], why[256], mp[300];
	int n, mode;

	memset(r, 0, sizeof(*r));
	if (!strncmp(t->recorder, "ring:", 5)) {
		r->uring = true;
		return 0;
	}
	r->hook = !strcmp(t->recorder, "xdp") ? TDM_RXBPF_XDP :
		  !strcmp(t->recorder, "xdp-hw") ? TDM_RXBPF_XDP_HW : TDM_RXBPF_TC;
	if (!strcmp(t->recorder, "bpf") || r->hook != TDM_RXBPF_TC) {
		r->bpf = true;
		return 0;
	}
	if (!strcmp(t->recorder, "auto")) {
		n = tdm_rxbpf_xdp_progs(t->ifname, &mode, err, errlen);
		if (n < 0)
			return -1;
		if (n > 0) {
			if (!t->quiet)
				fprintf(stderr, "tdmstat: %s has %d XDP program%s, which may take packets before tdmrx.ko or tc would see them: the XDP recorder\n",
					t->ifname, n, n == 1 ? "" : "s");
			r->bpf = true;
			r->hook = TDM_RXBPF_XDP;
			return 0;
		}
	}
	if (!tdm_rx_open(&r->rx, kerr, sizeof(kerr))) {
		r->rx_open = true;
		return 0;
	}
	if (modprobe_tdmrx(why, sizeof(why)))
		snprintf(mp, sizeof(mp), ", and modprobe tdmrx failed (%s)", why);
	else if (!tdm_rx_open(&r->rx, kerr, sizeof(kerr)))
		r->rx_open = true;
	else
		snprintf(mp, sizeof(mp), " after modprobe tdmrx");
	if (r->rx_open)
		return 0;
	if (!strcmp(t->recorder, "kmod"))
		return tdm_set_err(err, errlen,
				   "%s%s; tdmctl doctor says which recorders can work here, --recorder bpf needs no module",
				   kerr, mp);
	if (!t->quiet)
		fprintf(stderr, "tdmstat: %s%s: the BPF recorder\n", kerr, mp);
	r->bpf = true;
	return 0;
}

static int rec_attach(struct tdmstat *t, struct rec *r,
		      const struct tdm_rx_cfg *cfg, char *err, size_t errlen)
{
	if (r->uring) {
		if (tdm_urings_open(&r->ur, t->recorder + 5, err, errlen))
			return -1;
	} else if (r->bpf) {
		struct tdm_rxbpf_cfg bc = { .nports = cfg->nports,
					    .hook = r->hook,
					    .ring_records = cfg->ring_records,
					    .shared = t->shared_ring };

		memcpy(bc.ifname, cfg->ifname, sizeof(bc.ifname));
		memcpy(bc.ports, cfg->ports, sizeof(bc.ports));
		if (tdm_rxbpf_open(&r->b, &bc, t->quiet, err, errlen))
			return -1;
	} else if (tdm_rx_attach(&r->rx, cfg, err, errlen)) {
		return -1;
	}
	r->attached = true;
	return 0;
}

/* The merge's sources: tdmrx's rings, or the CPUs the BPF records name. */
static unsigned int rec_nsrc(const struct rec *r)
{
	if (r->uring)
		return r->ur.n;
	return r->bpf ? tdm_rxbpf_nsrc(r->b) : r->rx.nr_rings;
}

/* A producer's rings have nothing to poll: a nap, a round every 1 ms. */
static int rec_wait(struct rec *r, int ms, char *err, size_t errlen)
{
	if (r->uring) {
		struct timespec ts = { 0, 1000000 };

		(void)ms;
		nanosleep(&ts, NULL);
		return 0;
	}
	return r->bpf ? tdm_rxbpf_wait(r->b, ms, err, errlen) :
			tdm_rx_wait(&r->rx, ms, err, errlen);
}

static void rec_feed(struct rec *r, struct tdm_merge *m, tdm_rx_cb tap,
		     void *ctx)
{
	if (r->uring)
		tdm_merge_feed_rings(r->ur.rings, r->ur.n, m, tap, ctx);
	else if (r->bpf)
		tdm_rxbpf_feed(r->b, m, tap, ctx);
	else
		tdm_merge_feed_rings(r->rx.rings, r->rx.nr_rings, m, tap, ctx);
}

static uint64_t rec_dropped(const struct rec *r)
{
	if (r->uring)
		return tdm_rx_rings_dropped(r->ur.rings, r->ur.n);
	if (r->bpf)
		return r->b ? tdm_rxbpf_dropped(r->b) : 0;
	return tdm_rx_dropped(&r->rx);
}

static bool rec_finished(const struct rec *r)
{
	if (r->uring)
		return tdm_rx_rings_finished(r->ur.rings, r->ur.n);
	return !r->bpf && tdm_rx_finished(&r->rx);
}

static int rec_detach(struct rec *r, char *err, size_t errlen)
{
	if (!r->attached)
		return 0;
	r->attached = false;
	if (r->uring)
		return 0;	/* the producer ends its rings */
	return r->bpf ? tdm_rxbpf_detach(r->b, err, errlen) :
			tdm_rx_detach(&r->rx, false, err, errlen);
}

static void rec_close(struct rec *r)
{
	if (r->uring)
		tdm_urings_close(&r->ur);
	else if (r->bpf)
		tdm_rxbpf_close(r->b);
	else if (r->rx_open)
		tdm_rx_close(&r->rx);
	r->b = NULL;
	r->rx_open = false;
}

/*
 * One round: every ring into the merge, the clock offset that puts the
 * rings' CLOCK_MONOTONIC watermarks on the plan's clock (through REALTIME:
 * software stamps are REALTIME, hardware ones are put on the plan clock by
 * --hw-offset), out with what every ring has passed, the rings' drops to
 * the windows that are open then (those of the records just out among
 * them), and the windows close up to that frontier.
 */
static void feed_round(struct tdmstat *t, struct rec *rx,
		       struct tdm_merge *m, struct tap *w)
{
	int64_t mono, frontier;

	rec_feed(rx, m, w->out ? write_record : NULL, w);
	mono = tdm_mono_ns();
	tdm_merge_clock(m, mono, tdm_clock_ns(CLOCK_REALTIME) - mono +
			tdm_stats_cfg(t->st)->rt_offset_ns);
	frontier = tdm_merge_release(m);
	tdm_stats_behind(t->st, tdm_merge_behind(m));
	tdm_stats_ring_drops(t->st, rec_dropped(rx));
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
	struct rec rx;
	struct hwtstamp_config hwts_old;
	char err[512];
	int64_t end = INT64_MAX, next_plan = 0;
	int rc = 1, hwts_changed = 0;
	uint64_t unread = 0;

	if (!strncmp(t->recorder, "ring:", 5)) {
		if (t->ifname) {
			fprintf(stderr, "tdmstat: --recorder ring:NAME reads a producer's rings: no -i\n");
			return 2;
		}
	} else if (!t->ifname) {
		fprintf(stderr, "tdmstat: capture needs -i IFACE\n");
		return 2;
	}
	if (t->ifname && tdm_strlcpy(cfg.ifname, t->ifname, sizeof(cfg.ifname))) {
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
	if (rec_open(t, &rx, err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s\n", err);
		goto out_free;
	}
	if (t->ifname)
		hwts_changed = hwts_enable(t->ifname, &hwts_old, t->quiet);
	if (rec_attach(t, &rx, &cfg, err, sizeof(err))) {
		if (rx.uring)
			fprintf(stderr, "tdmstat: %s\n", err);
		else
			fprintf(stderr, "tdmstat: attach %s to %s: %s\n",
				rx.hook != TDM_RXBPF_TC ? "the XDP recorder" :
				rx.bpf ? "the BPF recorder" : "tdmrx",
				t->ifname, err);
		goto out_close;
	}
	{
		const struct tdm_stats_cfg *sc = tdm_stats_cfg(t->st);
		struct tdm_merge_cfg mc = {
			.nsrc = rec_nsrc(&rx),
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
	if (!t->quiet && rx.uring)
		fprintf(stderr, "tdmstat: reading %u producer ring%s (%s)%s\n",
			rx.ur.n, rx.ur.n == 1 ? "" : "s", t->recorder + 5,
			t->expect_senders ? "" :
			" (stops when the producers close them, or ^C, -d, -e)");
	else if (!t->quiet && rx.bpf)
		fprintf(stderr, "tdmstat: recording %s with the %s recorder (%s, prog id %u), %u rings of %u records%s\n",
			t->ifname, rx.hook == TDM_RXBPF_TC ? "BPF" : "XDP",
			tdm_rxbpf_mode(rx.b), tdm_rxbpf_prog_id(rx.b),
			tdm_rxbpf_nrings(rx.b), tdm_rxbpf_ring_records(rx.b),
			t->expect_senders ? "" : " (stop with ^C, -d or -e)");
	else if (!t->quiet)
		fprintf(stderr, "tdmstat: recording %s with tdmrx, %u rings%s\n",
			t->ifname, rx.rx.nr_rings, t->expect_senders ? "" :
			" (stop with ^C, -d or -e)");

	while (!tdm_stop) {
		if (rec_wait(&rx, 100, err, sizeof(err)) < 0) {
			fprintf(stderr, "tdmstat: %s\n", err);
			goto out_detach;
		}
		feed_round(t, &rx, m, &w);
		tdmstat_progress(t, false);
		if (rec_finished(&rx)) {
			if (!rx.uring)
				fprintf(stderr, "tdmstat: the recorder was detached\n");
			else if (!t->quiet)
				fprintf(stderr, "tdmstat: the producers closed their rings\n");
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
	/* Let go first: the rings stay mapped, their prod is then final (the
	 * BPF recorder: once every matched packet is accounted for).
	 */
	if (rec_detach(&rx, err, sizeof(err)))
		fprintf(stderr, "tdmstat: detach: %s\n", err);
	if (m && rx.bpf && rx.b &&
	    tdm_rxbpf_drain_final(rx.b, m, w.out ? write_record : NULL, &w,
				  1000, &unread)) {
		fprintf(stderr, "tdmstat: the BPF recorder's rings yielded nothing for 1 s with %llu matched records not read: the counts below are short by that many\n",
			(unsigned long long)unread);
		rc = 1;
	}
	if (m) {
		feed_round(t, &rx, m, &w);
		tdm_merge_flush(m);
		tdm_stats_behind(t->st, tdm_merge_behind(m));
	}
	tdm_stats_ring_drops(t->st, rec_dropped(&rx));
out_close:
	rec_close(&rx);
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
