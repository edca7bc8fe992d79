// SPDX-License-Identifier: GPL-2.0
/*
 * tdmd: the tdmwin daemon.  See tdmd(8) and tdm.conf(5).
 *
 *   tdmd [-f FILE] [-l LEVEL] [-n] | --help | --version
 *
 * Reads its configuration, opens its sockets, then drops every capability
 * but CAP_NET_ADMIN (a member needs it for rtnetlink and SO_PRIORITY; a
 * coordinator keeps none) and runs its poll loop until SIGINT or SIGTERM.
 * SIGHUP, like tdmctl reload, reloads the configuration: the new one is
 * read and checked first, and swapped in only if nothing in it takes a
 * restart (tdmd_conf_reloadable()); else it is refused with the reason
 * and the running one stays.  Sessions, plans and the lease go on.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "tdm_log.h"
#include "tdm_util.h"
#include "tdmd.h"

/* What runs: the loop, the role and the control socket that serves it. */
struct daemon {
	struct ev_loop *loop;
	struct role *role;
	struct ctl *ctl;
	struct metrics *metrics;	/* NULL: none configured */
	struct tdmd *tdmd;		/* what the role runs with */
	const char *path;		/* the configuration file */
	int level;			/* -l, or -1 */
};

static struct ev sigev = { .fd = -1, .slot = -1 };

/* tdmd_conf_load() accepts only these two. */
static const struct role_ops *const roles[] = {
	[ROLE_COORDINATOR] = &coord_role_ops,
	[ROLE_MEMBER] = &member_role_ops,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tdmd [-f FILE] [-l LEVEL] [-n]\n"
		"  -f, --config FILE      configuration (default %s)\n"
		"  -l, --log-level LEVEL  err, warning, notice, info, debug\n"
		"                         (overrides log_level in the file)\n"
		"  -n, --check            check the configuration (and the plan\n"
		"                         file) and exit\n"
		"  -h, --help             this help\n"
		"  -v, --version          version (and wire protocol version)\n",
		TDMD_DEFAULT_CONF);
}

/*
 * Read and check the configuration file again, then swap it in: 0 with
 * what changed in msg, or -1 with why not (the running one stays).
 */
static int reload(void *arg, char *msg, size_t len)
{
	struct daemon *dm = arg;
	struct tdmd *d = dm->tdmd;
	struct tdmd_conf nc, old;
	uint8_t key[TDM_KEY_MAX];
	size_t keylen;
	char err[PATH_MAX + 1024], changed[1024];
	int rc = -1;

	if (tdmd_conf_load(dm->path, &nc, err, sizeof(err)))
		goto refused;
	if (tdm_key_load(nc.key_file, key, &keylen, err, sizeof(err)))
		goto refused;
	if (keylen != d->keylen || memcmp(key, d->key, keylen)) {
		snprintf(err, sizeof(err), "the key in %s changed: a new key takes a restart (of every node)",
			 nc.key_file);
		goto refused;
	}
	if (tdmd_conf_reloadable(&d->conf, &nc, changed, sizeof(changed), err,
				 sizeof(err)))
		goto refused;
	old = d->conf;
	d->conf = nc;
	if (dm->role->ops->reload)
		dm->role->ops->reload(dm->role, &old);
	tdm_log_set_level(dm->level >= 0 ? dm->level : d->conf.log_level);
	snprintf(msg, len, "reloaded %s: %s\n", dm->path,
		 changed[0] ? changed : "nothing changed");
	log_notice("%.*s", (int)strcspn(msg, "\n"), msg);
	rc = 0;
	goto out;
refused:
	snprintf(msg, len, "reload refused, the running configuration stays: %s\n",
		 err);
	log_err("%.*s", (int)strcspn(msg, "\n"), msg);
out:
	explicit_bzero(key, sizeof(key));
	return rc;
}

static void on_signal(struct ev *e, short revents)
{
	struct signalfd_siginfo si;
	char msg[4096];

	(void)revents;
	if (read(e->fd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		reload(e->ctx, msg, sizeof(msg));
		return;
	}
	log_notice("signal %u: shutting down (qdiscs are left running)",
		   si.ssi_signo);
	ev_stop(e->loop);
}

static int setup_signals(struct daemon *dm)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	sigev.fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigev.fd < 0)
		return -1;
	sigev.events = POLLIN;
	sigev.cb = on_signal;
	sigev.ctx = dm;
	return ev_add(dm->loop, &sigev);
}

/*
 * Keep only the capabilities this role needs, in every set, and forbid
 * gaining any back (no_new_privs, bounding set).  A process that lacks
 * them already (a test run as a user) keeps what it has.
 */
static int drop_caps(bool net_admin, char *err, size_t errlen)
{
	cap_value_t keep[] = { CAP_NET_ADMIN };
	int nkeep = net_admin ? 1 : 0;
	cap_flag_value_t have;
	cap_t cur, caps;
	cap_value_t c;
	int i, n = 0;

	cur = cap_get_proc();
	caps = cap_init();
	if (!cur || !caps) {
		snprintf(err, errlen, "libcap: %s", strerror(errno));
		cap_free(cur);
		cap_free(caps);
		return -1;
	}
	for (i = 0; i < nkeep; i++) {
		if (cap_get_flag(cur, keep[i], CAP_PERMITTED, &have) || !have)
			continue;
		cap_set_flag(caps, CAP_PERMITTED, 1, &keep[i], CAP_SET);
		cap_set_flag(caps, CAP_EFFECTIVE, 1, &keep[i], CAP_SET);
		n++;
	}
	/* The bounding set needs CAP_SETPCAP, so it goes first. */
	if (CAP_IS_SUPPORTED(CAP_SETPCAP) &&
	    !cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &have) && have) {
		for (c = 0; c <= CAP_LAST_CAP; c++) {
			bool kept = false;

			for (i = 0; i < nkeep; i++)
				kept |= keep[i] == c;
			if (!kept && CAP_IS_SUPPORTED(c))
				prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
		}
	}
	if (cap_set_proc(caps)) {
		snprintf(err, errlen, "dropping capabilities: %s", strerror(errno));
		cap_free(cur);
		cap_free(caps);
		return -1;
	}
	cap_free(cur);
	cap_free(caps);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	log_debug("capabilities: kept %s", n ? "CAP_NET_ADMIN" : "none");
	return 0;
}

static int64_t tick(void *arg, int64_t now)
{
	struct daemon *dm = arg;
	int64_t next = dm->role->ops->tick(dm->role, now);
	int64_t c = ctl_tick(dm->ctl, now);
	int64_t mt = metrics_tick(dm->metrics, now);

	if (c < next)
		next = c;
	return mt < next ? mt : next;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "check", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 }
	};
	struct tdmd tdmd = { 0 };
	const char *conf = TDMD_DEFAULT_CONF;
	const struct role_ops *ops;
	struct daemon dm = { 0 };
	int opt, level = -1, rc;
	bool check = false;
	char err[1024];

	while ((opt = getopt_long(argc, argv, "f:l:nhv", lo, NULL)) != -1) {
		switch (opt) {
		case 'f':
			conf = optarg;
			break;
		case 'l':
			level = tdm_log_level_parse(optarg);
			if (level < 0) {
				fprintf(stderr, "tdmd: -l: unknown level '%s' (err, warning, notice, info, debug)\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			printf("tdmd %s\nwire protocol %d, level %d\n",
			       TDM_VERSION, TDM_PROTO_VERSION, TDM_PROTO_LEVEL);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tdmd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	tdm_log_init("tdmd", LOG_INFO);
	if (tdmd_conf_load(conf, &tdmd.conf, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	tdm_log_set_level(level >= 0 ? level : tdmd.conf.log_level);
	if (tdm_key_load(tdmd.conf.key_file, tdmd.key, &tdmd.keylen, err,
			 sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	ops = roles[tdmd.conf.role];
	if (check) {
		if (ops->check && ops->check(&tdmd, err, sizeof(err))) {
			log_err("%s", err);
			return 1;
		}
		printf("%s: configuration OK (%s)\n", conf,
		       tdmd_role_name(ops->role));
		return 0;
	}
	/* A coordinator may hold a socket per member. */
	{
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 4096) {
			rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	dm.loop = tdmd.loop = ev_loop_new();
	if (!dm.loop) {
		log_err("out of memory");
		return 1;
	}
	dm.tdmd = &tdmd;
	dm.path = conf;
	dm.level = level;
	if (setup_signals(&dm)) {
		log_err("signals: %s", strerror(errno));
		return 1;
	}
	dm.role = ops->start(&tdmd, err, sizeof(err));
	rc = dm.role ? 0 : -1;
	if (!rc) {
		dm.ctl = ctl_open(dm.loop, tdmd.conf.ctl_path, dm.role, err, sizeof(err));
		rc = dm.ctl ? 0 : -1;
	}
	if (!rc) {
		dm.metrics = metrics_open(dm.loop, &tdmd.conf, dm.role, err, sizeof(err));
		rc = dm.metrics || (!tdmd.conf.metrics_listen.host[0] &&
				    !tdmd.conf.metrics_textfile[0]) ? 0 : -1;
	}
	if (!rc) {
		ctl_set_reload(dm.ctl, reload, &dm);
		rc = drop_caps(ops->net_admin, err, sizeof(err));
	}
	if (rc) {
		log_err("%s", err);
		metrics_close(dm.metrics);
		if (dm.role)
			ops->stop(dm.role);
		ctl_close(dm.ctl);
		ev_loop_free(dm.loop);
		return 1;
	}
	log_notice("started as %s (control socket %s)",
		   tdmd_role_name(ops->role), tdmd.conf.ctl_path);
	ev_set_tick(dm.loop, tick, &dm);
	rc = ev_run(dm.loop);
	metrics_close(dm.metrics);
	ops->stop(dm.role);
	ctl_close(dm.ctl);
	ev_del(&sigev);
	close(sigev.fd);
	ev_loop_free(dm.loop);
	explicit_bzero(tdmd.key, sizeof(tdmd.key));
	return rc ? 1 : 0;
}
