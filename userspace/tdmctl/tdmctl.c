// SPDX-License-Identifier: GPL-2.0
/*
 * tdmctl: talk to the local tdmd over its control socket.  See tdmctl(8).
 *
 *   tdmctl [-s SOCKET] [-j] [-t SECONDS] status
 *   tdmctl [-s SOCKET] [-j] plan show | plan history
 *   tdmctl [-s SOCKET] [-j] plan push FILE|-
 *   tdmctl [-s SOCKET] reload
 *   tdmctl [-s SOCKET] metrics
 *   tdmctl plan check FILE|-
 *   tdmctl plan tc FILE|- SENDER DEV
 *   tdmctl doctor [-i IFACE] [--role sender|receiver] [--ptp-socket PATH] [-j]
 *
 * Exit status: 0 success, 1 tdmd refused or reported a failure (a plan
 * not acked by every member), 2 usage error, 3 tdmd unreachable or no
 * answer within -t.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "tdm_cfg.h"
#include "tdm_ctl.h"
#include "tdm_json.h"
#include "tdm_plan.h"
#include "tdm_qdisc.h"
#include "tdm_util.h"

#define MAX_PLAN	(1024 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tdmctl [-s SOCKET] [-j] [-t SECONDS] COMMAND\n"
		"commands:\n"
		"  status               members, plans, sync state, qdisc counters\n"
		"  plan show            the plan in force (and a pending one)\n"
		"  plan history         plans handed out (coordinator)\n"
		"  plan push FILE|-     hand out a new plan (coordinator); waits for acks\n"
		"  plan check FILE|-    validate a plan file locally: no two senders at a\n"
		"                       receiver, no sender at two receivers at once,\n"
		"                       every pair its share; prints each receiver's\n"
		"                       link utilization\n"
		"  plan tc FILE|- SENDER DEV\n"
		"                       SENDER's qdisc on DEV as tc batch lines (tc -b -):\n"
		"                       tdmwin at root handle 1: with its windows, each\n"
		"                       for its receiver's class, and a flower filter on\n"
		"                       each receiver's address to its class\n"
		"  metrics              this node's metrics in the Prometheus text format\n"
		"                       (tdmd's role and state, its qdisc's counters)\n"
		"  reload               tdmd reads its configuration again; refused\n"
		"                       (exit 1, the reason on stderr) if it is bad or\n"
		"                       changes a key that takes a restart\n"
		"  doctor [-i IFACE] [--role sender|receiver] [--ptp-socket PATH]\n"
		"                       check this node's tuning (PTP, NIC, CPUs, qdisc);\n"
		"                       needs no tdmd, changes nothing\n"
		"options:\n"
		"  -s, --socket SOCKET   tdmd's control socket (default %s)\n"
		"  -j, --json            JSON output\n"
		"  -t, --timeout SECONDS how long to wait for an answer (default 30)\n"
		"  -h, --help            this help\n"
		"      --version         tdmctl's version\n",
		TDM_CTL_DEFAULT_SOCKET);
}

static char *read_plan(const char *path, const char **label)
{
	char err[512], *text;
	size_t len;

	if (strcmp(path, "-")) {
		*label = path;
		text = tdm_read_file(path, MAX_PLAN, &len, err, sizeof(err));
		if (!text)
			fprintf(stderr, "tdmctl: %s\n", err);
		return text;
	}
	*label = "<stdin>";
	text = malloc(MAX_PLAN + 1);
	if (!text)
		return NULL;
	len = fread(text, 1, MAX_PLAN + 1, stdin);
	if (len > MAX_PLAN) {
		fprintf(stderr, "tdmctl: plan on stdin larger than 1 MiB\n");
		free(text);
		return NULL;
	}
	text[len] = '\0';
	return text;
}

/* What one destination of a plan gets per cycle. */
struct dest_use {
	uint64_t open_ns;	/* its windows' time, all senders */
	uint64_t pair_min_ns, pair_max_ns;	/* one sender's time */
};

static struct dest_use dest_use(const struct tdm_plan *p, unsigned int r)
{
	struct dest_use u = { .pair_min_ns = UINT64_MAX };
	unsigned int i;
	uint64_t t;

	for (i = 0; i < p->nsenders; i++) {
		t = tdm_plan_pair_ns(p, i, r);
		u.open_ns += t;
		if (t < u.pair_min_ns)
			u.pair_min_ns = t;
		if (t > u.pair_max_ns)
			u.pair_max_ns = t;
	}
	return u;
}

/*
 * Each destination's link: the time its windows are open per cycle, as a
 * share of the cycle, and the least and most one sender gets.
 */
static void print_use(const struct tdm_plan *p, const char *label,
		      unsigned int nwin, bool json)
{
	unsigned int r, nd = tdm_plan_ndest(p);
	struct tdm_json j;
	struct dest_use u;
	const char *t;

	if (!json) {
		printf("%s: valid plan, %u senders, %u windows, cycle %llu ns\n",
		       label, p->nsenders, nwin,
		       (unsigned long long)p->cycle_ns);
		printf("%-16s %-40s %14s %12s %12s %12s\n", "receiver",
		       "address", "open_ns", "utilization", "pair_min_ns",
		       "pair_max_ns");
	}
	tdm_json_init(&j);
	tdm_json_obj_open(&j, NULL);
	tdm_json_str(&j, "plan", label);
	tdm_json_u64(&j, "senders", p->nsenders);
	tdm_json_u64(&j, "windows", nwin);
	tdm_json_u64(&j, "cycle_ns", p->cycle_ns);
	tdm_json_arr_open(&j, "receivers");
	for (r = 0; r < nd; r++) {
		u = dest_use(p, r);
		if (!json)
			printf("%-16s %-40s %14llu %11.3f%% %12llu %12llu\n",
			       p->nreceivers ? p->receivers[r].name : "-",
			       p->nreceivers ? p->receivers[r].addr : "-",
			       (unsigned long long)u.open_ns,
			       100.0 * (double)u.open_ns / (double)p->cycle_ns,
			       (unsigned long long)u.pair_min_ns,
			       (unsigned long long)u.pair_max_ns);
		tdm_json_obj_open(&j, NULL);
		tdm_json_str(&j, "name", p->nreceivers ? p->receivers[r].name
						       : "");
		tdm_json_str(&j, "address", p->nreceivers ?
			     p->receivers[r].addr : "");
		tdm_json_u64(&j, "open_ns", u.open_ns);
		tdm_json_u64(&j, "pair_min_ns", u.pair_min_ns);
		tdm_json_u64(&j, "pair_max_ns", u.pair_max_ns);
		tdm_json_obj_close(&j);
	}
	tdm_json_arr_close(&j);
	tdm_json_obj_close(&j);
	t = tdm_json_finish(&j);
	if (json && t)
		fputs(t, stdout);
	tdm_json_free(&j);
}

/*
 * Parse locally first: errors come back without a daemon round trip.
 * The parse checks that at every instant a receiver has one sender at
 * most and a sender one receiver; here every pair must have its share.
 */
static int check_plan(const char *text, const char *label, bool quiet,
		      bool json)
{
	struct tdm_plan p;
	char err[512];
	unsigned int i, n = 0;

	if (tdm_plan_parse(text, label, &p, err, sizeof(err))) {
		fprintf(stderr, "tdmctl: %s\n", err);
		return 1;
	}
	if (tdm_plan_check_pairs(&p, err, sizeof(err))) {
		fprintf(stderr, "tdmctl: %s: %s\n", label, err);
		tdm_plan_free(&p);
		return 1;
	}
	for (i = 0; i < p.nsenders; i++)
		n += p.senders[i].nwin;
	if (!quiet)
		print_use(&p, label, n, json);
	tdm_plan_free(&p);
	return 0;
}

/*
 * Sender name's qdisc on dev as tc batch lines, what a tdmd member
 * installs through libtdm (tdm_qdisc_install: the same attributes, each
 * window's class from tdm_qdisc_window_class), for a device without tdmd:
 * the tdmwin qdisc at root handle 1:, then a flower filter on each
 * receiver's address to its class.  The plan needs its base_time (tc
 * needs one; tdmd picks its own).
 */
static int plan_tc(const char *text, const char *label, const char *name,
		   const char *dev)
{
	const struct tdm_sender *s;
	struct tdm_plan p;
	char err[512];
	uint64_t used = 0;
	unsigned int i, r;
	int rc = 1;

	if (tdm_plan_parse(text, label, &p, err, sizeof(err))) {
		fprintf(stderr, "tdmctl: %s\n", err);
		return 1;
	}
	s = tdm_plan_sender(&p, name);
	if (!s) {
		fprintf(stderr, "tdmctl: %s: no sender '%s' in the plan\n",
			label, name);
		goto out;
	}
	if (!p.base_time) {
		fprintf(stderr, "tdmctl: %s: the plan has no base_time (tc needs one)\n",
			label);
		goto out;
	}
	if (strspn(dev, "0123456789abcdefghijklmnopqrstuvwxyz"
		   "ABCDEFGHIJKLMNOPQRSTUVWXYZ_.-@") != strlen(dev) ||
	    !*dev || strlen(dev) >= 16) {
		fprintf(stderr, "tdmctl: '%s' is not a device name\n", dev);
		goto out;
	}
	for (i = 0; i < s->nwin; i++)
		if (p.nreceivers && s->win[i].dest >= TDMWIN_MAX_DESTS) {
			fprintf(stderr, "tdmctl: %s: receiver '%s' is destination %u: the qdisc has %u destination classes\n",
				label, p.receivers[s->win[i].dest].name,
				s->win[i].dest + 1, TDMWIN_MAX_DESTS);
			goto out;
		}
	printf("qdisc replace dev %s root handle 1: tdmwin cycle-time %lluns base-time %lld clockid %s guard %uns",
	       dev, (unsigned long long)p.cycle_ns, (long long)p.base_time,
	       tdm_clock_name(p.clockid), p.guard_ns);
	if (p.link_speed)
		printf(" link-speed %u", p.link_speed);
	printf(" bypass-ptp %s", p.bypass_ptp ? "on" : "off");
	for (i = 0; i <= TDM_MAX_PRIO; i++)
		if (p.bypass_prios & (1u << i))
			printf("%s%u", p.bypass_prios & ((1u << i) - 1) ?
			       "," : " bypass-prio ", i);
	if (p.version)
		printf(" plan-version %u", p.version);
	for (i = 0; i < s->nwin; i++) {
		uint32_t cls = tdm_qdisc_window_class(&p, &s->win[i]);

		printf(" window %lluns %lluns",
		       (unsigned long long)s->win[i].offset,
		       (unsigned long long)s->win[i].length);
		if (cls != TDMWIN_CLASS_GATED)
			printf(" class %u", cls);
	}
	printf("\n");
	for (i = 0; i < s->nwin; i++) {
		const struct tdm_window *w = &s->win[i];

		r = w->dest;
		if (!p.nreceivers || (used & (1ULL << r)))
			continue;
		used |= 1ULL << r;
		/* tc reads a classid's minor in hex (the window's class is
		 * decimal above).
		 */
		printf("filter add dev %s parent 1: protocol %s prio 1 flower dst_ip %s classid 1:%x\n",
		       dev, strchr(p.receivers[r].addr, ':') ? "ipv6" : "ip",
		       p.receivers[r].addr, tdm_qdisc_window_class(&p, w));
	}
	rc = 0;
out:
	tdm_plan_free(&p);
	return rc;
}

/* Exit status: 0 ok, 1 refused or failed, 2 bad path, 3 unreachable. */
static int request(const char *path, const char *line, const char *body,
		   int timeout_s, bool json)
{
	static const int rc[] = {
		[TDM_CTL_OK] = 0, [TDM_CTL_REFUSED] = 1, [TDM_CTL_BAD_PATH] = 2,
		[TDM_CTL_UNREACHABLE] = 3, [TDM_CTL_FAILED] = 1,
	};
	enum tdm_ctl_res res;
	char err[512], *answer;

	res = tdm_ctl_request(path, line, body, timeout_s * 1000, &answer,
			      err, sizeof(err));
	if (res == TDM_CTL_OK || (res == TDM_CTL_REFUSED && json))
		fputs(answer, stdout);
	else if (res != TDM_CTL_REFUSED)
		fprintf(stderr, "tdmctl: %s\n", err);
	else if (strchr(answer, '\n') && strchr(answer, '\n')[1])
		fputs(answer, stderr);	/* a report, e.g. who refused a plan */
	else
		fprintf(stderr, "tdmctl: %s", answer);
	free(answer);
	return rc[res];
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sock = getenv("TDMD_SOCKET"), *label;
	int opt, timeout = 30, rc;
	bool json = false;
	char line[PATH_MAX + 64], *text;

	if (!sock)
		sock = TDM_CTL_DEFAULT_SOCKET;
	while ((opt = getopt_long(argc, argv, "+s:jt:h", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			sock = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 3600) {
				fprintf(stderr, "tdmctl: -t: '%s' is not a number of seconds (1-3600)\n",
					optarg);
				return 2;
			}
			timeout = v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("tdmctl %s\n", TDM_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc >= 1 && !strcmp(argv[0], "doctor"))
		return doctor_main(argc, argv, json);
	if (argc == 1 && !strcmp(argv[0], "status")) {
		snprintf(line, sizeof(line), "status%s\n", json ? " json" : "");
		return request(sock, line, NULL, timeout, json);
	}
	if (argc == 1 && !strcmp(argv[0], "reload"))
		return request(sock, "reload\n", NULL, timeout, false);
	if (argc == 1 && !strcmp(argv[0], "metrics"))
		return request(sock, "metrics\n", NULL, timeout, false);
	if (argc == 2 && !strcmp(argv[0], "plan") &&
	    (!strcmp(argv[1], "show") || !strcmp(argv[1], "history"))) {
		snprintf(line, sizeof(line), "plan %s%s\n", argv[1],
			 json ? " json" : "");
		return request(sock, line, NULL, timeout, json);
	}
	if (argc == 3 && !strcmp(argv[0], "plan") &&
	    (!strcmp(argv[1], "push") || !strcmp(argv[1], "check"))) {
		text = read_plan(argv[2], &label);
		if (!text)
			return 1;
		rc = check_plan(text, label, !strcmp(argv[1], "push"), json);
		if (!rc && !strcmp(argv[1], "push")) {
			char name[PATH_MAX];
			size_t i;

			/* The label goes on the request line: no spaces in it. */
			tdm_strlcpy(name, label, sizeof(name));
			for (i = 0; name[i]; i++)
				if (name[i] == ' ' || name[i] == '\t' || name[i] == '\n')
					name[i] = '_';
			snprintf(line, sizeof(line), "plan push %s%s\n", name,
				 json ? " json" : "");
			rc = request(sock, line, text, timeout, json);
		}
		free(text);
		return rc;
	}
	if (argc == 5 && !strcmp(argv[0], "plan") && !strcmp(argv[1], "tc")) {
		text = read_plan(argv[2], &label);
		if (!text)
			return 1;
		rc = plan_tc(text, label, argv[3], argv[4]);
		free(text);
		return rc;
	}
	if (argc == 0)
		fprintf(stderr, "tdmctl: no command given\n");
	else
		fprintf(stderr, "tdmctl: unknown command '%s%s%s'\n", argv[0],
			argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
	usage(stderr);
	return 2;
}
