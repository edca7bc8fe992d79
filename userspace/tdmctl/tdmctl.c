// SPDX-License-Identifier: GPL-2.0
/*
 * tdmctl: talk to the local tdmd over its control socket.  See tdmctl(8).
 *
 *   tdmctl [-s SOCKET] [-j] [-t SECONDS] status
 *   tdmctl [-s SOCKET] [-j] plan show | plan history
 *   tdmctl [-s SOCKET] [-j] plan push FILE|-
 *   tdmctl plan check FILE|-
 *   tdmctl doctor [-i IFACE] [--role sender|receiver] [--ptp-socket PATH] [-j]
 *
 * Exit status: 0 success, 1 tdmd refused or reported a failure (a plan
 * not acked by every member), 2 usage error, 3 tdmd unreachable or no
 * answer within -t.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"
#include "tdm_cfg.h"
#include "tdm_plan.h"
#include "tdm_util.h"

#define DEFAULT_SOCKET	"/run/tdmd.sock"
#define MAX_REPLY	(16 * 1024 * 1024)
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
		"  plan check FILE|-    validate a plan file locally\n"
		"  doctor [-i IFACE] [--role sender|receiver] [--ptp-socket PATH]\n"
		"                       check this node's tuning (PTP, NIC, CPUs, qdisc);\n"
		"                       needs no tdmd, changes nothing\n"
		"options:\n"
		"  -s, --socket SOCKET   tdmd's control socket (default %s)\n"
		"  -j, --json            JSON output\n"
		"  -t, --timeout SECONDS how long to wait for an answer (default 30)\n"
		"  -h, --help            this help\n"
		"      --version         tdmctl's version\n",
		DEFAULT_SOCKET);
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

/* Parse locally first: errors come back without a daemon round trip. */
static int check_plan(const char *text, const char *label, bool quiet)
{
	struct tdm_plan p;
	char err[512];
	unsigned int i, n = 0;

	if (tdm_plan_parse(text, label, &p, err, sizeof(err))) {
		fprintf(stderr, "tdmctl: %s\n", err);
		return 1;
	}
	for (i = 0; i < p.nsenders; i++)
		n += p.senders[i].nwin;
	if (!quiet)
		printf("%s: valid plan, %u senders, %u windows, cycle %llu ns\n",
		       label, p.nsenders, n, (unsigned long long)p.cycle_ns);
	tdm_plan_free(&p);
	return 0;
}

static int send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= w;
	}
	return 0;
}

static int request(const char *path, const char *line, const char *body,
		   int timeout_s, bool json)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int64_t t0 = tdm_mono_ns();
	char *reply = NULL, *nl;
	size_t len = 0, cap = 0;
	int fd, rc = 1;
	bool ok;

	if (tdm_strlcpy(sun.sun_path, path, sizeof(sun.sun_path))) {
		fprintf(stderr, "tdmctl: socket path too long: %s\n", path);
		return 2;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		fprintf(stderr, "tdmctl: cannot reach tdmd at %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 3;
	}
	if (send_all(fd, line, strlen(line)) ||
	    (body && send_all(fd, body, strlen(body))) ||
	    shutdown(fd, SHUT_WR)) {
		fprintf(stderr, "tdmctl: sending the request: %s\n", strerror(errno));
		close(fd);
		return 3;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left;
		ssize_t n;

		left = timeout_s * 1000L - (long)((tdm_mono_ns() - t0) / 1000000);
		if (left <= 0 || poll(&p, 1, left) == 0) {
			fprintf(stderr, "tdmctl: no answer from tdmd within %d s\n",
				timeout_s);
			rc = 3;
			goto out;
		}
		if (len + 65536 + 1 > cap) {
			char *b;

			cap = cap ? cap * 2 : 131072;
			if (cap > MAX_REPLY) {
				fprintf(stderr, "tdmctl: answer too large\n");
				goto out;
			}
			b = realloc(reply, cap);
			if (!b) {
				fprintf(stderr, "tdmctl: out of memory\n");
				goto out;
			}
			reply = b;
		}
		n = recv(fd, reply + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "tdmctl: reading the answer: %s\n",
				strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += n;
	}
	if (!reply) {
		fprintf(stderr, "tdmctl: tdmd closed the connection without an answer\n");
		rc = 3;
		goto out;
	}
	reply[len] = '\0';
	nl = strchr(reply, '\n');
	if (!nl || (strncmp(reply, "ok\n", 3) && strncmp(reply, "error\n", 6))) {
		fprintf(stderr, "tdmctl: malformed answer from tdmd\n");
		goto out;
	}
	ok = reply[0] == 'o';
	nl++;
	if (ok || json)
		fputs(nl, stdout);
	else if (strchr(nl, '\n') && strchr(nl, '\n')[1])
		fputs(nl, stderr);	/* a report, e.g. who refused a plan */
	else
		fprintf(stderr, "tdmctl: %s", nl);
	rc = ok ? 0 : 1;
out:
	free(reply);
	close(fd);
	return rc;
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
		sock = DEFAULT_SOCKET;
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
		rc = check_plan(text, label, !strcmp(argv[1], "push"));
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
	if (argc == 0)
		fprintf(stderr, "tdmctl: no command given\n");
	else
		fprintf(stderr, "tdmctl: unknown command '%s%s%s'\n", argv[0],
			argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
	usage(stderr);
	return 2;
}
