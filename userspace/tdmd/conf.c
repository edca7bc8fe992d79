// SPDX-License-Identifier: GPL-2.0
/*
 * tdm.conf: tdmd's configuration, linuxptp style.  Everything is in
 * [global]; see tdm.conf(5).  Each key is allowed once (listen may repeat
 * its values on one line), unknown keys and keys of the other role are
 * errors, and every message names the line.
 */
#include <errno.h>
#include <linux/pkt_sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tdm_cfg.h"
#include "tdm_log.h"
#include "tdm_ptp.h"
#include "tdm_util.h"
#include "tdmd.h"

enum key_role { ANY, COORD, MEMBER };

/* How a key's value is read and where it is stored. */
enum key_type {
	K_STR,		/* char[size] */
	K_NAME,		/* char[size]: a sender name */
	K_TIME,		/* uint64_t ns: a TIME of at least min */
	K_UINT,		/* an unsigned integer of size bytes: min..max, or word */
	K_BOOL,		/* bool */
	K_ENUM,		/* int: the index of the value in names */
	K_LOG_LEVEL,	/* int: a syslog level */
	K_PORT,		/* char[8]: 1-65535 */
	K_HOSTPORT,	/* struct tdmd_hostport: HOST[:PORT], [V6][:PORT] */
	K_HANDLE,	/* uint32_t: MAJ:[MIN] in hex, or word */
	K_LISTEN,	/* char[TDMD_MAX_LISTEN][64] and the count after it */
	K_QUEUES,	/* struct tdmd_queues: root, all, or queues N and N-M */
};

#define K_ZERO_IS_MIN	0x1	/* K_UINT: 0 means min (not an error) */
#define K_NO_MINOR	0x2	/* K_HANDLE: a qdisc handle, MAJ: only */
#define K_OFF_OK	0x4	/* K_TIME: 0 or "off" means off (no min) */
/* Reload (SIGHUP, tdmctl reload): keys without these take a restart. */
#define K_LIVE		0x8	/* changes live */
#define K_LIVE_ON	0x10	/* changes live, but not to or from off */

union key_val {
	uint64_t u;
	const char *s;
};

/*
 * One key: its type, the field it sets (offset, size), its default, its
 * bounds, and for some types a word that stands for a value ("all",
 * "off", "root") or the names of an enumeration.  help ends the message
 * for a value that is none of the allowed ones.
 */
struct key {
	const char *name;
	enum key_role role;
	enum key_type type;
	size_t off, size;
	union key_val def;
	uint64_t min, max;
	unsigned int flags;
	const char *word;
	uint64_t word_val;
	const char *const *names;
	const char *help;
};

struct ctx {
	struct tdmd_conf *c;
	int seen[64];		/* line of each key, 0 if not seen */
	int role_line;
	enum key_role used_role;	/* first role-specific key */
	int used_line;
	const char *used_key;
};

#define F(field)	.off = offsetof(struct tdmd_conf, field), \
			.size = sizeof(((struct tdmd_conf *)0)->field)
#define MS		1000000ULL

/* A second connection registering a name that is connected. */
static const char *const takeover_names[] = { "refuse", "allow", NULL };

static const char *const role_names[] = {
	[ROLE_NONE] = "none",
	[ROLE_COORDINATOR] = "coordinator",
	[ROLE_MEMBER] = "member",
	NULL
};

static const char *const gate_names[] = {
	[GATE_QDISC] = "qdisc",
	[GATE_TDMD] = "tdmd",
	NULL
};

static const char *const ptp_policy_names[] = {
	[PTP_REQUIRE] = "require",
	[PTP_WARN] = "warn",
	[PTP_OFF] = "off",
	NULL
};

static const struct key keys[] = {
	{ "role", ANY, K_ENUM, F(role), .def.u = ROLE_NONE, .min = ROLE_COORDINATOR,
	  .names = role_names, .help = "is neither 'coordinator' nor 'member'" },
	{ "name", ANY, K_NAME, F(name) },
	{ "key_file", ANY, K_STR, F(key_file) },
	{ "control_socket", ANY, K_STR, F(ctl_path), .def.s = TDMD_DEFAULT_CTL },
	{ "log_level", ANY, K_LOG_LEVEL, F(log_level), .def.u = LOG_INFO,
	  .flags = K_LIVE, .help = "is not one of err, warning, notice, info, debug" },
	{ "metrics_listen", ANY, K_HOSTPORT, F(metrics_listen), .def.u = TDMD_METRICS_PORT },
	{ "metrics_textfile", ANY, K_STR, F(metrics_textfile) },
	{ "metrics_interval", ANY, K_TIME, F(metrics_interval_ns),
	  .def.u = 15 * TDM_NSEC_PER_SEC, .min = 1 * TDM_NSEC_PER_SEC },
	{ "listen", COORD, K_LISTEN, F(listen), .def.s = "::" },
	{ "port", COORD, K_PORT, F(port), .def.u = TDM_DEFAULT_PORT },
	{ "plan_file", COORD, K_STR, F(plan_file) },
	{ "quorum", COORD, K_UINT, F(quorum), .def.u = 0, .min = 1,
	  .max = TDM_MAX_SENDERS, .word = "all", .word_val = 0 },
	{ "ack_timeout", COORD, K_TIME, F(ack_timeout_ns),
	  .def.u = 5 * TDM_NSEC_PER_SEC, .min = 1 * MS, .flags = K_LIVE },
	{ "commit_lead", COORD, K_TIME, F(commit_lead_ns),
	  .def.u = 500 * MS, .min = 1 * MS, .flags = K_LIVE },
	{ "member_timeout", COORD, K_TIME, F(member_timeout_ns),
	  .def.u = 5 * TDM_NSEC_PER_SEC, .min = 100 * MS, .flags = K_LIVE },
	{ "history", COORD, K_UINT, F(history), .def.u = 32, .min = 1,
	  .max = 100000, .flags = K_ZERO_IS_MIN },
	{ "name_takeover", COORD, K_ENUM, F(name_takeover), .def.u = 0,
	  .flags = K_LIVE, .names = takeover_names, .help = "is not one of refuse, allow" },
	{ "state_file", COORD, K_STR, F(state_file), .def.s = TDMD_DEFAULT_STATE },
	{ "coordinator", MEMBER, K_HOSTPORT, F(coord), .def.u = TDM_DEFAULT_PORT },
	{ "interface", MEMBER, K_STR, F(target.ifname) },
	{ "parent", MEMBER, K_HANDLE, F(target.parent), .def.u = TC_H_ROOT,
	  .word = "root", .word_val = TC_H_ROOT },
	{ "handle", MEMBER, K_HANDLE, F(target.handle), .flags = K_NO_MINOR },
	{ "limit", MEMBER, K_UINT, F(target.limit), .max = UINT32_MAX },
	{ "link_speed", MEMBER, K_UINT, F(target.link_speed),
	  .max = TDMWIN_MAX_LINK_SPEED },
	/* 7 is TC_PRIO_CONTROL */
	{ "control_priority", MEMBER, K_UINT, F(control_priority), .def.u = 7,
	  .max = TDM_MAX_PRIO, .word = "off", .word_val = (uint32_t)-1 },
	{ "heartbeat_interval", MEMBER, K_TIME, F(heartbeat_ns),
	  .def.u = TDM_NSEC_PER_SEC, .min = 10 * MS, .flags = K_LIVE },
	{ "reconnect_min", MEMBER, K_TIME, F(reconnect_min_ns), .def.u = 100 * MS,
	  .min = 1 * MS, .flags = K_LIVE },
	{ "reconnect_max", MEMBER, K_TIME, F(reconnect_max_ns),
	  .def.u = 5 * TDM_NSEC_PER_SEC, .min = 1 * MS, .flags = K_LIVE },
	{ "ptp_policy", MEMBER, K_ENUM, F(ptp_policy), .def.u = PTP_REQUIRE,
	  .flags = K_LIVE_ON, .names = ptp_policy_names, .help = "is not one of require, warn, off" },
	{ "ptp_socket", MEMBER, K_STR, F(ptp_socket),
	  .def.s = TDM_PTP_DEFAULT_SOCKET },
	{ "ptp_domain", MEMBER, K_UINT, F(ptp_domain), .max = 255 },
	{ "ptp_threshold", MEMBER, K_TIME, F(ptp_threshold_ns), .def.u = 1000,
	  .min = 1, .flags = K_LIVE },
	{ "ptp_interval", MEMBER, K_TIME, F(ptp_interval_ns), .def.u = 250 * MS,
	  .min = 10 * MS, .flags = K_LIVE },
	{ "ptp_good_checks", MEMBER, K_UINT, F(ptp_good_checks), .def.u = 3,
	  .min = 1, .max = 1000, .flags = K_LIVE },
	{ "ptp_bad_checks", MEMBER, K_UINT, F(ptp_bad_checks), .def.u = 1,
	  .min = 1, .max = 1000, .flags = K_LIVE },
	{ "ptp_check_tai", MEMBER, K_BOOL, F(ptp_check_tai), .def.u = 1,
	  .flags = K_LIVE },
	/* PHC - CLOCK_TAI (phc2sys's work), read with the PTP check; the same
	 * budget as ptp_threshold: the two errors add up at the gate.
	 */
	{ "phc_threshold", MEMBER, K_TIME, F(phc_threshold_ns), .def.u = 1000,
	  .min = 1, .flags = K_OFF_OK | K_LIVE_ON },
	/* The qdisc's lease (tdmwin.rst): renewed while the node is healthy. */
	{ "lease", MEMBER, K_TIME, F(target.lease_ns), .def.u = 0,
	  .min = TDMWIN_MIN_LEASE_NS, .max = TDMWIN_MAX_LEASE_NS,
	  .flags = K_OFF_OK | K_LIVE },
	/* Where the tdmwin instances go: one at parent (root), or mq at the
	 * root with one under every TX queue (all) or under those listed.
	 */
	{ "queues", MEMBER, K_QUEUES, F(queues) },
	/* Launch times: an etf child under each instance (tdmwin.rst). */
	{ "txtime", MEMBER, K_BOOL, F(txtime) },
	/* 200 us: what Intel's TSN guide gives the i210 with offload. */
	{ "etf_delta", MEMBER, K_TIME, F(etf.delta_ns), .def.u = 200000,
	  .min = 1000, .max = TDM_NSEC_PER_SEC },
	{ "etf_offload", MEMBER, K_BOOL, F(etf.offload) },
	/* Where the plan goes: the tdmwin qdisc of the netdev "interface",
	 * or (no netdev: vfio) tdmd's plan store, published on gate_socket
	 * for libtdmgate.
	 */
	{ "gate", MEMBER, K_ENUM, F(gate), .def.u = GATE_QDISC,
	  .names = gate_names, .help = "is not one of qdisc, tdmd" },
	{ "gate_socket", MEMBER, K_STR, F(gate_socket) },
};

static bool valid_name(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= TDM_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", s[i]))
			return false;
	return true;
}

/* An integer into a field of 1, 2, 4 or 8 bytes (an int takes -1 as ~0). */
static void store_uint(void *dst, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)dst = v; break;
	case 2: *(uint16_t *)dst = v; break;
	case 4: *(uint32_t *)dst = v; break;
	default: *(uint64_t *)dst = v; break;
	}
}

static int port_arg(char *dst, const char *s, const char *key, char *err,
		    size_t errlen)
{
	uint64_t v;
	char e[128];

	if (tdm_parse_u64(s, 65535, &v, e, sizeof(e)) || !v) {
		snprintf(err, errlen, "%s: '%s' is not a port number (1-65535)",
			 key, s);
		return -1;
	}
	snprintf(dst, TDMD_PORT_LEN, "%u", (unsigned int)v);
	return 0;
}

/* HOST, HOST:PORT, [V6], [V6]:PORT; a bare IPv6 address has no port. */
static int hostport_arg(struct tdmd_hostport *hp, const char *arg,
			const char *key, char *err, size_t errlen)
{
	const char *s = arg, *port = NULL;
	size_t n;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || (e[1] && e[1] != ':')) {
			snprintf(err, errlen, "%s: '%s': expected [ADDRESS] or [ADDRESS]:PORT",
				 key, s);
			return -1;
		}
		n = e - s - 1;
		port = e[1] ? e + 2 : NULL;
		s++;
	} else {
		const char *colon = strchr(s, ':');

		if (colon && !strchr(colon + 1, ':')) {
			n = colon - s;
			port = colon + 1;
		} else {
			n = strlen(s);
		}
	}
	if (!n || n >= sizeof(hp->host)) {
		snprintf(err, errlen, "%s: '%s': bad host", key, arg);
		return -1;
	}
	memcpy(hp->host, s, n);
	hp->host[n] = '\0';
	if (port && port_arg(hp->port, port, key, err, errlen))
		return -1;
	return 0;
}

/* "MAJ:MIN" or "MAJ:" in hex, as tc writes handles. */
static int handle_arg(const struct key *k, const char *s, uint32_t *h,
		      char *err, size_t errlen)
{
	unsigned long maj, min = 0;
	char *end;

	errno = 0;
	maj = strtoul(s, &end, 16);
	if (errno || end == s || *end != ':' || maj > 0xffff)
		goto bad;
	if (end[1]) {
		const char *m = end + 1;

		min = strtoul(m, &end, 16);
		if (errno || end == m || *end || min > 0xffff)
			goto bad;
	}
	if (!maj)
		goto bad;
	if (min && (k->flags & K_NO_MINOR)) {
		snprintf(err, errlen, "%s: a qdisc handle has no minor number ('%s')",
			 k->name, s);
		return -1;
	}
	*h = TC_H_MAKE(maj << 16, min);
	return 0;
bad:
	snprintf(err, errlen, "%s: '%s' is not a handle (%s%sMAJOR:[MINOR] in hex, e.g. 100:)",
		 k->name, s, k->word ? k->word : "", k->word ? " or " : "");
	return -1;
}

static int uint_arg(const struct key *k, const char *s, uint64_t *v,
		    char *err, size_t errlen)
{
	char e[128];

	if (k->word && !strcmp(s, k->word)) {
		*v = k->word_val;
		return 0;
	}
	if (tdm_parse_u64(s, k->max, v, e, sizeof(e))) {
		snprintf(err, errlen, "%s: %s", k->name, e);
		return -1;
	}
	if (*v >= k->min)
		return 0;
	if (k->flags & K_ZERO_IS_MIN && !*v) {
		*v = k->min;
		return 0;
	}
	if (k->word)
		snprintf(err, errlen, "%s: must be '%s' or %llu to %llu", k->name,
			 k->word, (unsigned long long)k->min,
			 (unsigned long long)k->max);
	else
		snprintf(err, errlen, "%s: must be at least %llu", k->name,
			 (unsigned long long)k->min);
	return -1;
}

static int enum_arg(const struct key *k, const char *s, uint64_t *v,
		    char *err, size_t errlen)
{
	uint64_t i;

	for (i = k->min; k->names[i]; i++) {
		if (!strcmp(s, k->names[i])) {
			*v = i;
			return 0;
		}
	}
	snprintf(err, errlen, "%s: '%s' %s", k->name, s, k->help);
	return -1;
}

static int listen_arg(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	int i;

	if (l->argc > TDMD_MAX_LISTEN) {
		snprintf(err, errlen, "%s: at most %d addresses", l->key,
			 TDMD_MAX_LISTEN);
		return -1;
	}
	for (i = 0; i < l->argc; i++) {
		if (tdm_strlcpy(c->listen[i], l->argv[i], sizeof(c->listen[i]))) {
			snprintf(err, errlen, "%s: address '%s' too long",
				 l->key, l->argv[i]);
			return -1;
		}
	}
	c->nlisten = l->argc;
	return 0;
}

/* One word of "queues": N or N-M. */
static int queue_range(const char *key, const char *s, struct tdmd_queues *q,
		       char *err, size_t errlen)
{
	const char *dash = strchr(s, '-');
	uint64_t a, b, i;
	char e[128], first[24];

	if (dash && (size_t)(dash - s) < sizeof(first)) {
		memcpy(first, s, dash - s);
		first[dash - s] = '\0';
	}
	if ((dash && (size_t)(dash - s) >= sizeof(first)) ||
	    tdm_parse_u64(dash ? first : s, TDMD_MAX_QUEUES - 1, &a, e, sizeof(e)) ||
	    tdm_parse_u64(dash ? dash + 1 : s, TDMD_MAX_QUEUES - 1, &b, e, sizeof(e)) ||
	    b < a) {
		snprintf(err, errlen, "%s: '%s' is not a TX queue or a range of them (N or N-M, 0 to %d), nor root or all",
			 key, s, TDMD_MAX_QUEUES - 1);
		return -1;
	}
	for (i = a; i <= b; i++)
		q->map[i / 64] |= 1ULL << (i % 64);
	return 0;
}

/* root, all, or one or more of N and N-M. */
static int queues_arg(const struct key *k, struct tdmd_queues *q,
		      const struct tdm_cfg_line *l, char *err, size_t errlen)
{
	int i;

	memset(q, 0, sizeof(*q));
	if (!strcmp(l->argv[0], "root") || !strcmp(l->argv[0], "all")) {
		if (l->argc > 1) {
			snprintf(err, errlen, "%s: '%s' stands alone (no queue numbers after it)",
				 k->name, l->argv[0]);
			return -1;
		}
		q->mode = l->argv[0][0] == 'r' ? QUEUES_ROOT : QUEUES_ALL;
		return 0;
	}
	q->mode = QUEUES_LIST;
	for (i = 0; i < l->argc; i++)
		if (queue_range(k->name, l->argv[i], q, err, errlen))
			return -1;
	return 0;
}

/* Set key k of c from the values of line l. */
static int key_set(const struct key *k, struct tdmd_conf *c,
		   const struct tdm_cfg_line *l, char *err, size_t errlen)
{
	void *dst = (char *)c + k->off;
	const char *s = l->argv[0];
	uint64_t v = 0;
	char e[128];
	int lv;

	switch (k->type) {
	case K_NAME:
		if (!valid_name(s)) {
			snprintf(err, errlen, "%s: '%s' is not a valid sender name (1 to %d of A-Z a-z 0-9 _ . -)",
				 k->name, s, TDM_NAME_MAX - 1);
			return -1;
		}
		/* fall through */
	case K_STR:
		if (tdm_strlcpy(dst, s, k->size)) {
			snprintf(err, errlen, "%s: value too long (at most %zu characters)",
				 k->name, k->size - 1);
			return -1;
		}
		return 0;
	case K_TIME:
		if ((k->flags & K_OFF_OK) && !strcmp(s, "off")) {
			v = 0;
		} else if (tdm_parse_time(s, &v, e, sizeof(e))) {
			snprintf(err, errlen, "%s: %s", k->name, e);
			return -1;
		}
		if (v < k->min && !(v == 0 && (k->flags & K_OFF_OK))) {
			char b[32];

			snprintf(err, errlen, "%s: must be at least %s%s", k->name,
				 tdm_fmt_time(k->min, b, sizeof(b)),
				 k->flags & K_OFF_OK ? " (or off)" : "");
			return -1;
		}
		if (k->max && v > k->max) {
			char b[32];

			snprintf(err, errlen, "%s: must be at most %s", k->name,
				 tdm_fmt_time(k->max, b, sizeof(b)));
			return -1;
		}
		break;
	case K_UINT:
		if (uint_arg(k, s, &v, err, errlen))
			return -1;
		break;
	case K_BOOL:
		if (tdm_parse_bool(s, dst, e, sizeof(e))) {
			snprintf(err, errlen, "%s: %s", k->name, e);
			return -1;
		}
		return 0;
	case K_ENUM:
		if (enum_arg(k, s, &v, err, errlen))
			return -1;
		break;
	case K_LOG_LEVEL:
		lv = tdm_log_level_parse(s);
		if (lv < 0) {
			snprintf(err, errlen, "%s: '%s' %s", k->name, s, k->help);
			return -1;
		}
		v = lv;
		break;
	case K_PORT:
		return port_arg(dst, s, k->name, err, errlen);
	case K_HOSTPORT:
		return hostport_arg(dst, s, k->name, err, errlen);
	case K_HANDLE:
		if (k->word && !strcmp(s, k->word)) {
			v = k->word_val;
			break;
		}
		return handle_arg(k, s, dst, err, errlen);
	case K_LISTEN:
		return listen_arg(c, l, err, errlen);
	case K_QUEUES:
		return queues_arg(k, dst, l, err, errlen);
	}
	store_uint(dst, k->size, v);
	return 0;
}

/* Key k of c to its default. */
static void key_default(const struct key *k, struct tdmd_conf *c)
{
	void *dst = (char *)c + k->off;
	struct tdmd_hostport *hp = dst;

	switch (k->type) {
	case K_STR:
	case K_NAME:
		if (k->def.s)
			tdm_strlcpy(dst, k->def.s, k->size);
		break;
	case K_LISTEN:
		tdm_strlcpy(c->listen[0], k->def.s, sizeof(c->listen[0]));
		c->nlisten = 1;
		break;
	case K_PORT:
		snprintf(dst, TDMD_PORT_LEN, "%u", (unsigned int)k->def.u);
		break;
	case K_HOSTPORT:
		snprintf(hp->port, sizeof(hp->port), "%u", (unsigned int)k->def.u);
		break;
	case K_BOOL:
		*(bool *)dst = k->def.u;
		break;
	case K_QUEUES:
		break;		/* root: all zero */
	default:
		store_uint(dst, k->size, k->def.u);
		break;
	}
}

static int on_line(void *arg, const struct tdm_cfg_line *l, char *err,
		   size_t errlen)
{
	struct ctx *x = arg;
	size_t i;

	if (!l->key) {
		if (strcmp(l->section, "global") || l->section_arg) {
			snprintf(err, errlen, "unknown section [%s%s%s] (tdm.conf has only [global])",
				 l->section, l->section_arg ? " " : "",
				 l->section_arg ? l->section_arg : "");
			return -1;
		}
		return 0;
	}
	for (i = 0; i < TDM_ARRAY_SIZE(keys); i++)
		if (!strcmp(keys[i].name, l->key))
			break;
	if (i == TDM_ARRAY_SIZE(keys)) {
		snprintf(err, errlen, "unknown key '%s'", l->key);
		return -1;
	}
	if (x->seen[i]) {
		snprintf(err, errlen, "'%s' given twice (first at line %d)",
			 l->key, x->seen[i]);
		return -1;
	}
	x->seen[i] = l->lineno;
	/* Only listen and queues take several values (the reader gives at
	 * least one).
	 */
	if (l->argc > 1 && keys[i].type != K_LISTEN &&
	    keys[i].type != K_QUEUES) {
		snprintf(err, errlen, "'%s' takes one value, not %d", l->key,
			 l->argc);
		return -1;
	}
	if (keys[i].role != ANY && !x->used_key) {
		x->used_role = keys[i].role;
		x->used_line = l->lineno;
		x->used_key = keys[i].name;
	} else if (keys[i].role != ANY && keys[i].role != x->used_role) {
		snprintf(err, errlen, "'%s' is a %s key but '%s' (line %d) is a %s key",
			 l->key, keys[i].role == COORD ? "coordinator" : "member",
			 x->used_key, x->used_line,
			 x->used_role == COORD ? "coordinator" : "member");
		return -1;
	}
	if (!strcmp(l->key, "role"))
		x->role_line = l->lineno;
	return key_set(&keys[i], x->c, l, err, errlen);
}

static void defaults(struct tdmd_conf *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < TDM_ARRAY_SIZE(keys); i++)
		key_default(&keys[i], c);
}

/* The line key name was given on, 0 if it was not. */
static int seen_at(const struct ctx *x, const char *name)
{
	size_t i;

	for (i = 0; i < TDM_ARRAY_SIZE(keys); i++)
		if (!strcmp(keys[i].name, name))
			return x->seen[i];
	return 0;
}

/* The keys of the qdisc tree: what one needs of another. */
static int tree_check(const struct ctx *x, const char *path, char *err,
		      size_t errlen)
{
	const struct tdmd_conf *c = x->c;
	static const char *const etf_keys[] = { "etf_delta", "etf_offload" };
	size_t i;

	for (i = 0; i < TDM_ARRAY_SIZE(etf_keys); i++) {
		if (c->txtime || !seen_at(x, etf_keys[i]))
			continue;
		snprintf(err, errlen, "%s:%d: '%s' is for the etf child of 'txtime on', but txtime is off%s",
			 path, seen_at(x, etf_keys[i]), etf_keys[i],
			 seen_at(x, "txtime") ? "" : " (the default)");
		return -1;
	}
	if (c->gate == GATE_TDMD) {
		static const char *const tree_keys[] = {
			"queues", "txtime", "parent", "handle"
		};

		for (i = 0; i < TDM_ARRAY_SIZE(tree_keys); i++) {
			if (!seen_at(x, tree_keys[i]))
				continue;
			snprintf(err, errlen, "%s:%d: '%s' places a tdmwin qdisc, but 'gate tdmd' (line %d) has none: the plan goes to tdmd's store",
				 path, seen_at(x, tree_keys[i]), tree_keys[i],
				 seen_at(x, "gate"));
			return -1;
		}
	} else if (seen_at(x, "gate_socket")) {
		snprintf(err, errlen, "%s:%d: 'gate_socket' is for 'gate tdmd', but the gate is the qdisc%s",
			 path, seen_at(x, "gate_socket"),
			 seen_at(x, "gate") ? "" : " (the default)");
		return -1;
	}
	if (c->queues.mode != QUEUES_ROOT && c->target.parent != TC_H_ROOT) {
		snprintf(err, errlen, "%s:%d: 'parent' places the one instance of 'queues root'; with 'queues' other than root (line %d) the instances go under an mq qdisc at the root",
			 path, seen_at(x, "parent"), seen_at(x, "queues"));
		return -1;
	}
	return 0;
}

int tdmd_conf_load(const char *path, struct tdmd_conf *c, char *err,
		   size_t errlen)
{
	struct ctx x = { .c = c };

	defaults(c);
	if (tdm_cfg_parse_file(path, on_line, &x, err, errlen))
		return -1;
	if (c->role == ROLE_NONE) {
		snprintf(err, errlen, "%s: 'role coordinator' or 'role member' is required",
			 path);
		return -1;
	}
	if (x.used_key && (x.used_role == COORD) != (c->role == ROLE_COORDINATOR)) {
		snprintf(err, errlen, "%s:%d: '%s' is a %s key, but this is a %s (line %d)",
			 path, x.used_line, x.used_key,
			 x.used_role == COORD ? "coordinator" : "member",
			 tdmd_role_name(c->role), x.role_line);
		return -1;
	}
	if (!c->key_file[0]) {
		snprintf(err, errlen, "%s: 'key_file' is required", path);
		return -1;
	}
	if (c->role == ROLE_MEMBER) {
		if (!c->coord.host[0]) {
			snprintf(err, errlen, "%s: a member needs 'coordinator HOST[:PORT]'",
				 path);
			return -1;
		}
		if (!c->target.ifname[0]) {
			snprintf(err, errlen, "%s: a member needs 'interface IFNAME'",
				 path);
			return -1;
		}
		if (!c->name[0] && gethostname(c->name, sizeof(c->name)))
			c->name[0] = '\0';
		c->name[sizeof(c->name) - 1] = '\0';
		if (!valid_name(c->name)) {
			snprintf(err, errlen, "%s: no 'name' and the host name '%s' is not a valid sender name",
				 path, c->name);
			return -1;
		}
		if (c->reconnect_max_ns < c->reconnect_min_ns) {
			snprintf(err, errlen, "%s: reconnect_max is below reconnect_min",
				 path);
			return -1;
		}
		if (tree_check(&x, path, err, errlen))
			return -1;
		if (c->gate == GATE_TDMD && !c->gate_socket[0] &&
		    (size_t)snprintf(c->gate_socket, sizeof(c->gate_socket),
				     "%s/gate-%s.sock", TDMD_GATE_SOCK_DIR,
				     c->target.ifname) >= sizeof(c->gate_socket)) {
			snprintf(err, errlen, "%s: the default gate_socket for '%s' is too long: set gate_socket",
				 path, c->target.ifname);
			return -1;
		}
	}
	return 0;
}

/* ---- reload ---- */

/* Key k of a and b: the same value? */
static bool key_same(const struct key *k, const struct tdmd_conf *a,
		     const struct tdmd_conf *b)
{
	const void *x = (const char *)a + k->off, *y = (const char *)b + k->off;
	const struct tdmd_hostport *hx = x, *hy = y;
	int i;

	switch (k->type) {
	case K_STR:
	case K_NAME:
	case K_PORT:
		return !strcmp(x, y);
	case K_HOSTPORT:
		return !strcmp(hx->host, hy->host) && !strcmp(hx->port, hy->port);
	case K_LISTEN:
		if (a->nlisten != b->nlisten)
			return false;
		for (i = 0; i < a->nlisten; i++)
			if (strcmp(a->listen[i], b->listen[i]))
				return false;
		return true;
	case K_BOOL:
		return *(const bool *)x == *(const bool *)y;
	default:
		return !memcmp(x, y, k->size);
	}
}

/* Key k (K_TIME with K_OFF_OK, or K_ENUM with an "off") is off in c. */
static bool key_off(const struct key *k, const struct tdmd_conf *c)
{
	const void *v = (const char *)c + k->off;

	if (k->type == K_ENUM)
		return !strcmp(k->names[*(const int *)v], "off");
	return *(const uint64_t *)v == 0;
}

/* The keys of role that change live, as "a, b, c". */
static void live_keys(enum tdmd_role role, char *buf, size_t len)
{
	enum key_role kr = role == ROLE_COORDINATOR ? COORD : MEMBER;
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < TDM_ARRAY_SIZE(keys); i++) {
		if (!(keys[i].flags & (K_LIVE | K_LIVE_ON)) ||
		    (keys[i].role != ANY && keys[i].role != kr))
			continue;
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s%s",
			      n ? ", " : "", keys[i].name,
			      keys[i].flags & K_LIVE_ON ? " (not to or from off)" : "");
	}
}

int tdmd_conf_reloadable(const struct tdmd_conf *old,
			 const struct tdmd_conf *nc, char *changed,
			 size_t clen, char *err, size_t errlen)
{
	char live[1024];
	size_t i, n = 0;

	changed[0] = '\0';
	live_keys(old->role, live, sizeof(live));
	if (old->role != nc->role) {
		snprintf(err, errlen, "'role' changed from %s to %s: that takes a restart (keys that reload live: %s)",
			 tdmd_role_name(old->role), tdmd_role_name(nc->role),
			 live);
		return -1;
	}
	for (i = 0; i < TDM_ARRAY_SIZE(keys); i++) {
		const struct key *k = &keys[i];

		if (key_same(k, old, nc))
			continue;
		if (!(k->flags & (K_LIVE | K_LIVE_ON))) {
			snprintf(err, errlen, "'%s' changed: that takes a restart (keys that reload live: %s)",
				 k->name, live);
			return -1;
		}
		if ((k->flags & K_LIVE_ON) && key_off(k, old) != key_off(k, nc)) {
			snprintf(err, errlen, "'%s' turned %s: that takes a restart (keys that reload live: %s)",
				 k->name, key_off(k, nc) ? "off" : "on", live);
			return -1;
		}
		n += snprintf(changed + n, n < clen ? clen - n : 0, "%s%s",
			      n ? ", " : "", k->name);
	}
	return 0;
}

const char *tdmd_role_name(enum tdmd_role r)
{
	return r <= ROLE_MEMBER ? role_names[r] : "none";
}

const char *tdmd_gate_name(enum tdmd_gate g)
{
	return g <= GATE_TDMD ? gate_names[g] : "qdisc";
}

const char *tdmd_ptp_policy_name(enum tdmd_ptp_policy p)
{
	return p <= PTP_OFF ? ptp_policy_names[p] : "off";
}
