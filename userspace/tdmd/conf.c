// SPDX-License-Identifier: GPL-2.0
/*
 * tdm.conf: tdmd's configuration, linuxptp style.  Everything is in
 * [global]; see tdm.conf(5).  Each key is allowed once (listen may repeat
 * its values on one line), unknown keys and keys of the other role are
 * errors, and every message names the line.
 */
#include <errno.h>
#include <linux/pkt_sched.h>
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

struct ctx {
	struct tdmd_conf *c;
	int seen[64];		/* line of each key, 0 if not seen */
	int role_line;
	enum key_role used_role;	/* first role-specific key */
	int used_line;
	const char *used_key;
};

typedef int (*setter)(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		      char *err, size_t errlen);

struct key {
	const char *name;
	enum key_role role;
	int min_args, max_args;
	setter set;
};

static int copy_arg(char *dst, size_t size, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	if (tdm_strlcpy(dst, l->argv[0], size)) {
		snprintf(err, errlen, "%s: value too long (at most %zu characters)",
			 l->key, size - 1);
		return -1;
	}
	return 0;
}

static int time_arg(uint64_t *v, uint64_t min, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	char e[128];

	if (tdm_parse_time(l->argv[0], v, e, sizeof(e))) {
		snprintf(err, errlen, "%s: %s", l->key, e);
		return -1;
	}
	if (*v < min) {
		char b[32];

		snprintf(err, errlen, "%s: must be at least %s", l->key,
			 tdm_fmt_time(min, b, sizeof(b)));
		return -1;
	}
	return 0;
}

static int uint_arg(uint64_t *v, uint64_t max, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	char e[128];

	if (tdm_parse_u64(l->argv[0], max, v, e, sizeof(e))) {
		snprintf(err, errlen, "%s: %s", l->key, e);
		return -1;
	}
	return 0;
}

static int set_role(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	if (!strcmp(l->argv[0], "coordinator")) {
		c->role = ROLE_COORDINATOR;
	} else if (!strcmp(l->argv[0], "member")) {
		c->role = ROLE_MEMBER;
	} else {
		snprintf(err, errlen, "role: '%s' is neither 'coordinator' nor 'member'",
			 l->argv[0]);
		return -1;
	}
	return 0;
}

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

static int set_name(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	if (!valid_name(l->argv[0])) {
		snprintf(err, errlen, "name: '%s' is not a valid sender name (1 to %d of A-Z a-z 0-9 _ . -)",
			 l->argv[0], TDM_NAME_MAX - 1);
		return -1;
	}
	return copy_arg(c->name, sizeof(c->name), l, err, errlen);
}

static int set_key_file(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			char *err, size_t errlen)
{
	return copy_arg(c->key_file, sizeof(c->key_file), l, err, errlen);
}

static int set_ctl(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		   char *err, size_t errlen)
{
	return copy_arg(c->ctl_path, sizeof(c->ctl_path), l, err, errlen);
}

static int set_log_level(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			 char *err, size_t errlen)
{
	int lv = tdm_log_level_parse(l->argv[0]);

	if (lv < 0) {
		snprintf(err, errlen, "log_level: '%s' is not one of err, warning, notice, info, debug",
			 l->argv[0]);
		return -1;
	}
	c->log_level = lv;
	return 0;
}

static int set_listen(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	int i;

	if (l->argc > TDMD_MAX_LISTEN) {
		snprintf(err, errlen, "listen: at most %d addresses",
			 TDMD_MAX_LISTEN);
		return -1;
	}
	for (i = 0; i < l->argc; i++) {
		if (tdm_strlcpy(c->listen[i], l->argv[i], sizeof(c->listen[i]))) {
			snprintf(err, errlen, "listen: address '%s' too long",
				 l->argv[i]);
			return -1;
		}
	}
	c->nlisten = l->argc;
	return 0;
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
	snprintf(dst, 8, "%u", (unsigned int)v);
	return 0;
}

static int set_port(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		    char *err, size_t errlen)
{
	return port_arg(c->port, l->argv[0], l->key, err, errlen);
}

static int set_plan_file(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			 char *err, size_t errlen)
{
	return copy_arg(c->plan_file, sizeof(c->plan_file), l, err, errlen);
}

static int set_quorum(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	uint64_t v;

	if (!strcmp(l->argv[0], "all")) {
		c->quorum = 0;
		return 0;
	}
	if (uint_arg(&v, TDM_MAX_SENDERS, l, err, errlen))
		return -1;
	if (!v) {
		snprintf(err, errlen, "quorum: must be 'all' or 1 to %d",
			 TDM_MAX_SENDERS);
		return -1;
	}
	c->quorum = v;
	return 0;
}

static int set_ack_timeout(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			   char *err, size_t errlen)
{
	return time_arg(&c->ack_timeout_ns, 1000000, l, err, errlen);
}

static int set_member_timeout(struct tdmd_conf *c,
			      const struct tdm_cfg_line *l, char *err,
			      size_t errlen)
{
	return time_arg(&c->member_timeout_ns, 100000000, l, err, errlen);
}

static int set_history(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		       char *err, size_t errlen)
{
	uint64_t v;

	if (uint_arg(&v, 100000, l, err, errlen))
		return -1;
	c->history = v ? v : 1;
	return 0;
}

/* HOST, HOST:PORT, [V6], [V6]:PORT; a bare IPv6 address has no port. */
static int set_coordinator(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			   char *err, size_t errlen)
{
	const char *s = l->argv[0], *port = NULL;
	char host[256];
	size_t n;

	if (s[0] == '[') {
		const char *e = strchr(s, ']');

		if (!e || (e[1] && e[1] != ':')) {
			snprintf(err, errlen, "coordinator: '%s': expected [ADDRESS] or [ADDRESS]:PORT",
				 s);
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
	if (!n || n >= sizeof(host)) {
		snprintf(err, errlen, "coordinator: '%s': bad host", l->argv[0]);
		return -1;
	}
	memcpy(host, s, n);
	host[n] = '\0';
	strcpy(c->coord_host, host);
	if (port && port_arg(c->coord_port, port, l->key, err, errlen))
		return -1;
	return 0;
}

static int set_interface(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			 char *err, size_t errlen)
{
	return copy_arg(c->target.ifname, sizeof(c->target.ifname), l, err,
			errlen);
}

/* "root", "MAJ:MIN" or "MAJ:" in hex, as tc writes handles. */
static int handle_arg(const char *s, bool allow_root, uint32_t *h,
		      const char *key, char *err, size_t errlen)
{
	unsigned long maj, min = 0;
	char *end;

	if (allow_root && !strcmp(s, "root")) {
		*h = TC_H_ROOT;
		return 0;
	}
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
	*h = TC_H_MAKE(maj << 16, min);
	return 0;
bad:
	snprintf(err, errlen, "%s: '%s' is not a handle (%sMAJOR:[MINOR] in hex, e.g. 100:)",
		 key, s, allow_root ? "root or " : "");
	return -1;
}

static int set_parent(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	return handle_arg(l->argv[0], true, &c->target.parent, l->key, err,
			  errlen);
}

static int set_handle(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	if (handle_arg(l->argv[0], false, &c->target.handle, l->key, err,
		       errlen))
		return -1;
	if (TC_H_MIN(c->target.handle)) {
		snprintf(err, errlen, "handle: a qdisc handle has no minor number ('%s')",
			 l->argv[0]);
		return -1;
	}
	return 0;
}

static int set_limit(struct tdmd_conf *c, const struct tdm_cfg_line *l,
		     char *err, size_t errlen)
{
	uint64_t v;

	if (uint_arg(&v, UINT32_MAX, l, err, errlen))
		return -1;
	c->target.limit = v;
	return 0;
}

static int set_link_speed(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			  char *err, size_t errlen)
{
	uint64_t v;

	if (uint_arg(&v, TDMWIN_MAX_LINK_SPEED, l, err, errlen))
		return -1;
	c->target.link_speed = v;
	return 0;
}

static int set_control_priority(struct tdmd_conf *c,
				const struct tdm_cfg_line *l, char *err,
				size_t errlen)
{
	uint64_t v;

	if (!strcmp(l->argv[0], "off")) {
		c->control_priority = -1;
		return 0;
	}
	if (uint_arg(&v, TDM_MAX_PRIO, l, err, errlen))
		return -1;
	c->control_priority = v;
	return 0;
}

static int set_heartbeat(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			 char *err, size_t errlen)
{
	return time_arg(&c->heartbeat_ns, 10000000, l, err, errlen);
}

static int set_reconnect_min(struct tdmd_conf *c,
			     const struct tdm_cfg_line *l, char *err,
			     size_t errlen)
{
	return time_arg(&c->reconnect_min_ns, 1000000, l, err, errlen);
}

static int set_reconnect_max(struct tdmd_conf *c,
			     const struct tdm_cfg_line *l, char *err,
			     size_t errlen)
{
	return time_arg(&c->reconnect_max_ns, 1000000, l, err, errlen);
}

static int set_ptp_policy(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			  char *err, size_t errlen)
{
	if (!strcmp(l->argv[0], "require")) {
		c->ptp_policy = PTP_REQUIRE;
	} else if (!strcmp(l->argv[0], "warn")) {
		c->ptp_policy = PTP_WARN;
	} else if (!strcmp(l->argv[0], "off")) {
		c->ptp_policy = PTP_OFF;
	} else {
		snprintf(err, errlen, "ptp_policy: '%s' is not one of require, warn, off",
			 l->argv[0]);
		return -1;
	}
	return 0;
}

static int set_ptp_socket(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			  char *err, size_t errlen)
{
	return copy_arg(c->ptp_socket, sizeof(c->ptp_socket), l, err, errlen);
}

static int set_ptp_domain(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			  char *err, size_t errlen)
{
	uint64_t v;

	if (uint_arg(&v, 255, l, err, errlen))
		return -1;
	c->ptp_domain = v;
	return 0;
}

static int set_ptp_threshold(struct tdmd_conf *c,
			     const struct tdm_cfg_line *l, char *err,
			     size_t errlen)
{
	return time_arg(&c->ptp_threshold_ns, 1, l, err, errlen);
}

static int set_ptp_interval(struct tdmd_conf *c,
			    const struct tdm_cfg_line *l, char *err,
			    size_t errlen)
{
	return time_arg(&c->ptp_interval_ns, 10000000, l, err, errlen);
}

static int checks_arg(unsigned int *dst, const struct tdm_cfg_line *l,
		      char *err, size_t errlen)
{
	uint64_t v;

	if (uint_arg(&v, 1000, l, err, errlen))
		return -1;
	if (!v) {
		snprintf(err, errlen, "%s: must be at least 1", l->key);
		return -1;
	}
	*dst = v;
	return 0;
}

static int set_good_checks(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			   char *err, size_t errlen)
{
	return checks_arg(&c->ptp_good_checks, l, err, errlen);
}

static int set_bad_checks(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			  char *err, size_t errlen)
{
	return checks_arg(&c->ptp_bad_checks, l, err, errlen);
}

static int set_check_tai(struct tdmd_conf *c, const struct tdm_cfg_line *l,
			 char *err, size_t errlen)
{
	char e[128];

	if (tdm_parse_bool(l->argv[0], &c->ptp_check_tai, e, sizeof(e))) {
		snprintf(err, errlen, "%s: %s", l->key, e);
		return -1;
	}
	return 0;
}

static const struct key keys[] = {
	{ "role",		ANY,	1, 1, set_role },
	{ "name",		ANY,	1, 1, set_name },
	{ "key_file",		ANY,	1, 1, set_key_file },
	{ "control_socket",	ANY,	1, 1, set_ctl },
	{ "log_level",		ANY,	1, 1, set_log_level },
	{ "listen",		COORD,	1, TDM_CFG_MAX_ARGS, set_listen },
	{ "port",		COORD,	1, 1, set_port },
	{ "plan_file",		COORD,	1, 1, set_plan_file },
	{ "quorum",		COORD,	1, 1, set_quorum },
	{ "ack_timeout",	COORD,	1, 1, set_ack_timeout },
	{ "member_timeout",	COORD,	1, 1, set_member_timeout },
	{ "history",		COORD,	1, 1, set_history },
	{ "coordinator",	MEMBER,	1, 1, set_coordinator },
	{ "interface",		MEMBER,	1, 1, set_interface },
	{ "parent",		MEMBER,	1, 1, set_parent },
	{ "handle",		MEMBER,	1, 1, set_handle },
	{ "limit",		MEMBER,	1, 1, set_limit },
	{ "link_speed",		MEMBER,	1, 1, set_link_speed },
	{ "control_priority",	MEMBER,	1, 1, set_control_priority },
	{ "heartbeat_interval",	MEMBER,	1, 1, set_heartbeat },
	{ "reconnect_min",	MEMBER,	1, 1, set_reconnect_min },
	{ "reconnect_max",	MEMBER,	1, 1, set_reconnect_max },
	{ "ptp_policy",		MEMBER,	1, 1, set_ptp_policy },
	{ "ptp_socket",		MEMBER,	1, 1, set_ptp_socket },
	{ "ptp_domain",		MEMBER,	1, 1, set_ptp_domain },
	{ "ptp_threshold",	MEMBER,	1, 1, set_ptp_threshold },
	{ "ptp_interval",	MEMBER,	1, 1, set_ptp_interval },
	{ "ptp_good_checks",	MEMBER,	1, 1, set_good_checks },
	{ "ptp_bad_checks",	MEMBER,	1, 1, set_bad_checks },
	{ "ptp_check_tai",	MEMBER,	1, 1, set_check_tai },
};

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
	if (l->argc < keys[i].min_args || l->argc > keys[i].max_args) {
		snprintf(err, errlen, "'%s' takes %s value%s, not %d", l->key,
			 keys[i].max_args == 1 ? "one" : "one or more",
			 keys[i].max_args == 1 ? "" : "s", l->argc);
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
	return keys[i].set(x->c, l, err, errlen);
}

static void defaults(struct tdmd_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->log_level = LOG_INFO;
	strcpy(c->ctl_path, TDMD_DEFAULT_CTL);
	snprintf(c->port, sizeof(c->port), "%d", TDM_DEFAULT_PORT);
	snprintf(c->coord_port, sizeof(c->coord_port), "%d", TDM_DEFAULT_PORT);
	c->ack_timeout_ns = 5 * TDM_NSEC_PER_SEC;
	c->member_timeout_ns = 5 * TDM_NSEC_PER_SEC;
	c->history = 32;
	c->target.parent = TC_H_ROOT;
	c->control_priority = 7;	/* TC_PRIO_CONTROL */
	c->heartbeat_ns = TDM_NSEC_PER_SEC;
	c->reconnect_min_ns = 100000000;
	c->reconnect_max_ns = 5 * TDM_NSEC_PER_SEC;
	c->ptp_policy = PTP_REQUIRE;
	strcpy(c->ptp_socket, TDM_PTP_DEFAULT_SOCKET);
	c->ptp_threshold_ns = 1000;
	c->ptp_interval_ns = 250000000;
	c->ptp_good_checks = 3;
	c->ptp_bad_checks = 1;
	c->ptp_check_tai = true;
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
		if (!c->coord_host[0]) {
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
	}
	if (c->role == ROLE_COORDINATOR && !c->nlisten) {
		strcpy(c->listen[0], "::");
		c->nlisten = 1;
	}
	return 0;
}

const char *tdmd_role_name(enum tdmd_role r)
{
	return r == ROLE_COORDINATOR ? "coordinator" :
	       r == ROLE_MEMBER ? "member" : "none";
}

const char *tdmd_ptp_policy_name(enum tdmd_ptp_policy p)
{
	return p == PTP_REQUIRE ? "require" : p == PTP_WARN ? "warn" : "off";
}
