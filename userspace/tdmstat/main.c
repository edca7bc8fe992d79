// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat: statistics of tdmwin test traffic (replaces the analysis of the
 * original udp_receive).  See tdmstat(1) and Documentation/tdmstat.rst.
 *
 *   tdmstat capture -i IFACE [-p PLAN | --tdmd] [options]  (tdmrx.ko)
 *   tdmstat analyze FILE     [-p PLAN | --tdmd] [options]  (pcap, pcapng,
 *                                                           record file)
 *   tdmstat bench [-n RECORDS] [-S SENDERS]                 (records/s)
 *   tdmstat synth -n RECORDS -o FILE [-S SENDERS]           (test input)
 *   tdmstat metrics [-j]                                    (the names)
 *   tdmstat combine [-j] [-o PREFIX] FILE...                (receivers'
 *                                                           rows, one table)
 *
 * Every command feeds struct tdmrx_record values to one engine
 * (lib/tdm_stats.h), so capture and analyze agree on the same traffic.
 *
 * Exit status: 0 done, 1 failure (input, module, plan), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tdm_ctl.h"
#include "tdm_pkt.h"
#include "tdm_util.h"
#include "tdmstat.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tdmstat capture -i IFACE [options]\n"
		"       tdmstat capture --recorder ring:NAME[,NAME...] [options]\n"
		"       tdmstat analyze [options] FILE    (pcap/pcapng with ns stamps, or record file)\n"
		"       tdmstat bench [-n RECORDS] [-S SENDERS] [-p PLAN]\n"
		"       tdmstat synth [-n RECORDS] [-S SENDERS] [-p PLAN] -o FILE(.pcap|.rec)\n"
		"       tdmstat metrics [-j]\n"
		"       tdmstat combine [-j] [-o PREFIX] PREFIX-receiver.csv...\n"
		"                         the receivers of a corner turn in one table (with -o\n"
		"                         also PREFIX-receivers.csv)\n"
		"       tdmstat --help | --version\n"
		"options:\n"
		"  -p, --plan FILE        plan file (repeat for plan changes; by version)\n"
		"      --receiver NAME    this is receiver NAME of the plans' [receiver]s: judge\n"
		"                         its own windows; writes PREFIX-receiver.csv\n"
		"  -T, --tdmd [SOCKET]    read the plan from the local tdmd (default " TDM_CTL_DEFAULT_SOCKET ")\n"
		"  -b, --base-time NS     base time (TAI ns) of plans that have none (default 0)\n"
		"  -o, --output PREFIX    PREFIX-windows.csv, -senders.csv, -packets.csv, .json\n"
		"                         (default tdmstat)\n"
		"  -P, --packets          write the per-packet CSV too\n"
		"  -F, --format tdmstat|original\n"
		"                         original: the original udp_receive's files instead of\n"
		"                         PREFIX-windows.csv and -packets.csv: per window\n"
		"                         PREFIX_N<n>_W<us>_D<us>_T<t>.csv and .txt, with -P per\n"
		"                         packet PREFIX.csv and .txt (plan: the original's shape)\n"
		"      --input-format tdmstat|original\n"
		"                         analyze: payloads are tdmgen's (default) or the\n"
		"                         original udp_send's 4096-byte packets (whole\n"
		"                         datagrams only: fragments are refused)\n"
		"      --original T,n,W,D,T0\n"
		"                         the plan of the original's udp_receive -t T -n n\n"
		"                         -w W -d D (us), started at T0 (epoch s, CLOCK_REALTIME)\n"
		"  -u, --port PORT        UDP destination port (repeat; capture default 8081,\n"
		"                         analyze default any port)\n"
		"  -g, --grace TIME       close a window this long after its end (default 100ms)\n"
		"  -A, --assign rx|tx     a packet's window is the one its RX time (default:\n"
		"                         gated senders) or its TX time (app-paced senders) is in\n"
		"      --rt-offset NS     add to software RX stamps (default: the kernel's TAI-UTC;\n"
		"                         0 if every plan is on CLOCK_REALTIME)\n"
		"      --hw-offset NS     add to hardware RX stamps (default 0)\n"
		"      --pcap-ts sw|hw    what the pcap stamps are (default sw)\n"
		"  -i, --interface IF     capture: the device\n"
		"  -d, --duration TIME    capture: stop after TIME\n"
		"  -e, --senders N        capture: stop once N senders sent their end markers\n"
		"  -r, --ring RECORDS     capture: records per CPU ring\n"
		"      --recorder kmod|bpf|xdp|xdp-hw|auto|ring:NAME[,NAME...]  capture:\n"
		"                         tdmrx.ko, the BPF recorder at tc ingress, at\n"
		"                         the XDP hook through libxdp (beside an AF_XDP\n"
		"                         receiver), at the XDP hook device-bound with\n"
		"                         the NIC's stamps (6.3+, alone on the device);\n"
		"                         auto (default): xdp if the device has an XDP\n"
		"                         program, else tdmrx.ko if it is loaded or\n"
		"                         loadable, else bpf; or the user-space\n"
		"                         producer rings NAME (no -i)\n"
		"      --shared-ring      capture, BPF: one ring for every CPU\n"
		"      --reorder-bound TIME  longest delay from a packet's receive\n"
		"                         stamp to the recorder (default 10ms): capture's\n"
		"                         merge of the rings, analyze's of a record file\n"
		"  -w, --write FILE       capture: also write the records to FILE\n"
		"  -n, --records N        bench/synth: records (default 50000000 / 1000000)\n"
		"  -S, --nsenders N       bench/synth: senders (default 3)\n"
		"  -j, --json             JSON summary on stdout instead of the table\n"
		"  -q, --quiet            no table, no progress line\n"
		"  -h, --help             this help\n");
}


static int parse_s64(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

/* --original T,n,W,D,T0: udp_receive's -t -n -w -d and its start time. */
static int parse_original(const char *arg, struct tdmstat *t, char *err,
			  size_t errlen)
{
	unsigned long long v[4];
	long long t0;
	int used = 0;

	if (sscanf(arg, "%llu,%llu,%llu,%llu,%lld%n", &v[0], &v[1], &v[2],
		   &v[3], &t0, &used) != 5 || arg[used] ||
	    strchr(arg, '-')) {
		snprintf(err, errlen,
			 "'%s': give T,n,W,D,T0: clients, windows per client, window and dead time in us, start in epoch seconds",
			 arg);
		return -1;
	}
	if (!v[0] || v[0] > TDM_MAX_SENDERS || !v[1] || !v[2] ||
	    v[2] > INT32_MAX || v[3] > INT32_MAX || t0 > INT64_MAX / 1000000000) {
		snprintf(err, errlen,
			 "'%s': T 1..%d, n and W at least 1, W and D below 2^31 us",
			 arg, TDM_MAX_SENDERS);
		return -1;
	}
	t->orig_params = true;
	t->orig_t = (unsigned int)v[0];
	t->orig_n = v[1];
	t->orig_w_us = v[2];
	t->orig_d_us = v[3];
	t->orig_t0 = t0;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "plan", required_argument, NULL, 'p' },
		{ "tdmd", optional_argument, NULL, 'T' },
		{ "base-time", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "packets", no_argument, NULL, 'P' },
		{ "format", required_argument, NULL, 'F' },
		{ "input-format", required_argument, NULL, 4 },
		{ "original", required_argument, NULL, 5 },
		{ "port", required_argument, NULL, 'u' },
		{ "grace", required_argument, NULL, 'g' },
		{ "rt-offset", required_argument, NULL, 1 },
		{ "hw-offset", required_argument, NULL, 2 },
		{ "pcap-ts", required_argument, NULL, 3 },
		{ "reorder-bound", required_argument, NULL, 6 },
		{ "recorder", required_argument, NULL, 7 },
		{ "shared-ring", no_argument, NULL, 8 },
		{ "assign", required_argument, NULL, 'A' },
		{ "interface", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "senders", required_argument, NULL, 'e' },
		{ "ring", required_argument, NULL, 'r' },
		{ "write", required_argument, NULL, 'w' },
		{ "records", required_argument, NULL, 'n' },
		{ "nsenders", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "receiver", required_argument, NULL, 9 },
		{ NULL, 0, NULL, 0 }
	};
	struct tdmstat t = { .prefix = "tdmstat", .pcap_ts = "sw",
			     .bench_senders = 3,
			     .reorder_bound_ns = 10000000,
			     .recorder = "auto", .rx_index = -1 };
	bool prefix_set = false;
	char err[256];
	uint64_t v;
	int c, rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tdmstat %s\n", TDM_VERSION);
		return 0;
	}
	t.cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "p:T::b:o:PF:u:g:A:i:d:e:r:w:n:S:jqh",
				lo, NULL)) != -1) {
		err[0] = '\0';
		switch (c) {
		case 'p':
			if (t.nplan_files == TDMSTAT_MAX_PLANS)
				goto bad;
			t.plan_files[t.nplan_files++] = optarg;
			break;
		case 'T':
			t.tdmd_socket = optarg ? optarg :
					getenv("TDMD_SOCKET") ? getenv("TDMD_SOCKET") :
					TDM_CTL_DEFAULT_SOCKET;
			break;
		case 'b':
			if (parse_s64(optarg, &t.base_time))
				goto bad;
			break;
		case 'o':
			t.prefix = strcmp(optarg, "-") ? optarg : NULL;
			prefix_set = true;
			break;
		case 'P':
			t.packets = true;
			break;
		case 'F':
			if (!strcmp(optarg, "original")) {
				t.fmt_original = true;
			} else if (!strcmp(optarg, "tdmstat")) {
				t.fmt_original = false;
			} else {
				snprintf(err, sizeof(err), "use tdmstat or original");
				goto bad;
			}
			break;
		case 4:
			if (!strcmp(optarg, "original")) {
				t.input_fmt = TDM_PAYLOAD_ORIG;
			} else if (!strcmp(optarg, "tdmstat")) {
				t.input_fmt = TDM_PAYLOAD_TDMG;
			} else {
				snprintf(err, sizeof(err), "use tdmstat or original");
				goto bad;
			}
			break;
		case 5:
			if (parse_original(optarg, &t, err, sizeof(err)))
				goto bad;
			break;
		case 'u':
			if (tdm_parse_u64(optarg, 65535, &v, err, sizeof(err)) || !v ||
			    t.nports == TDMSTAT_MAX_PORTS)
				goto bad;
			t.ports[t.nports++] = v;
			break;
		case 'g':
			if (tdm_parse_time(optarg, &t.grace_ns, err, sizeof(err)))
				goto bad;
			break;
		case 1:
			if (parse_s64(optarg, &t.rt_offset))
				goto bad;
			t.rt_offset_set = true;
			break;
		case 2:
			if (parse_s64(optarg, &t.hw_offset))
				goto bad;
			break;
		case 3:
			if (strcmp(optarg, "sw") && strcmp(optarg, "hw"))
				goto bad;
			t.pcap_ts = optarg;
			break;
		case 6:
			if (tdm_parse_time(optarg, &t.reorder_bound_ns, err,
					   sizeof(err)))
				goto bad;
			break;
		case 'A':
			t.assign_set = true;
			if (!strcmp(optarg, "rx")) {
				t.assign_tx = false;
			} else if (!strcmp(optarg, "tx")) {
				t.assign_tx = true;
			} else {
				snprintf(err, sizeof(err), "use rx or tx");
				goto bad;
			}
			break;
		case 'i':
			t.ifname = optarg;
			break;
		case 7:
			if (strcmp(optarg, "kmod") && strcmp(optarg, "bpf") &&
			    strcmp(optarg, "xdp") && strcmp(optarg, "xdp-hw") &&
			    strcmp(optarg, "auto") &&
			    (strncmp(optarg, "ring:", 5) || !optarg[5])) {
				snprintf(err, sizeof(err),
					 "use kmod, bpf, xdp, xdp-hw, auto or ring:NAME[,NAME...]");
				goto bad;
			}
			t.recorder = optarg;
			break;
		case 8:
			t.shared_ring = true;
			break;
		case 9:
			t.receiver = optarg;
			break;
		case 'd':
			if (tdm_parse_time(optarg, &t.duration_ns, err, sizeof(err)))
				goto bad;
			break;
		case 'e':
			if (tdm_parse_u64(optarg, TDM_MAX_SENDERS, &v, err, sizeof(err)))
				goto bad;
			t.expect_senders = v;
			break;
		case 'r':
			if (tdm_parse_u64(optarg, TDMRX_MAX_RING, &v, err, sizeof(err)))
				goto bad;
			t.ring_records = v;
			break;
		case 'w':
			t.record_file = optarg;
			break;
		case 'n':
			if (tdm_parse_u64(optarg, UINT64_MAX, &t.bench_records, err,
					  sizeof(err)))
				goto bad;
			break;
		case 'S':
			if (tdm_parse_u64(optarg, 1000, &v, err, sizeof(err)) || !v)
				goto bad;
			t.bench_senders = v;
			break;
		case 'j':
			t.json = true;
			break;
		case 'q':
			t.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	t.progress = !t.quiet && isatty(STDERR_FILENO);
	tdm_stop_on_signals();

	if (!strcmp(t.cmd, "metrics"))
		rc = tdmstat_metrics(&t);
	else if (!strcmp(t.cmd, "combine")) {
		if (!prefix_set)	/* -o only when given */
			t.prefix = NULL;
		rc = tdmstat_combine(&t, argc - optind, argv + optind);
	}
	else if (!strcmp(t.cmd, "analyze")) {
		if (optind != argc - 1) {
			usage(stderr);
			return 2;
		}
		t.input = argv[optind];
		rc = tdmstat_analyze(&t);
	} else if (!strcmp(t.cmd, "bench")) {
		if (!prefix_set)
			t.prefix = NULL;
		t.progress = false;
		rc = tdmstat_bench(&t);
	} else if (!strcmp(t.cmd, "synth")) {
		if (!prefix_set)
			t.prefix = NULL;
		rc = tdmstat_synth(&t);
	} else if (!strcmp(t.cmd, "capture")) {
#ifdef TDMSTAT_CAPTURE
		rc = tdmstat_capture(&t);
#else
		fprintf(stderr, "tdmstat: built without the tdmrx ring reader (lib/tdm_rx.c): capture is not available\n");
		rc = 1;
#endif
	} else {
		fprintf(stderr, "tdmstat: unknown command '%s'\n", t.cmd);
		usage(stderr);
		return 2;
	}
	if (t.st)
		tdm_stats_free(t.st);
	tdmstat_free_plans(&t);
	return rc;
bad:
	for (rc = 0; c < 32 && lo[rc].name && lo[rc].val != c; rc++)
		;
	if (c < 32 && lo[rc].name)
		fprintf(stderr, "tdmstat: option --%s: %s\n", lo[rc].name,
			err[0] ? err : "bad value");
	else
		fprintf(stderr, "tdmstat: option -%c: %s\n", c,
			err[0] ? err : "bad value");
	return 2;
}
