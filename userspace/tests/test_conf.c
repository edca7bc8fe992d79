// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdm.conf as tdmd reads it (tdmd/conf.c): the defaults of
 * both roles, every key set, and each refused value with its message and
 * line, as tdmd printed them before the keys became one table; and
 * which changes a reload takes live and which it refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/pkt_sched.h>

#include "tdm_log.h"
#include "tdmd.h"

static char path[64];

/* Load text as a tdm.conf; 0, or -1 with err. */
static int load(const char *text, struct tdmd_conf *c, char *err,
		size_t errlen)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return tdmd_conf_load(path, c, err, errlen);
}

static void test_defaults(void **state)
{
	struct tdmd_conf c;
	char err[512];

	(void)state;
	assert_int_equal(load("role coordinator\nkey_file /k\n", &c, err,
			      sizeof(err)), 0);
	assert_int_equal(c.role, ROLE_COORDINATOR);
	assert_string_equal(c.key_file, "/k");
	assert_string_equal(c.ctl_path, "/run/tdmd.sock");
	assert_int_equal(c.log_level, LOG_INFO);
	assert_int_equal(c.nlisten, 1);
	assert_string_equal(c.listen[0], "::");
	assert_string_equal(c.port, "7453");
	assert_string_equal(c.plan_file, "");
	assert_int_equal(c.quorum, 0);
	assert_int_equal(c.ack_timeout_ns, 5000000000ULL);
	assert_int_equal(c.member_timeout_ns, 5000000000ULL);
	assert_int_equal(c.history, 32);

	assert_int_equal(load("role member\nkey_file /k\ncoordinator c1\ninterface eth0\nname tx1\n",
			      &c, err, sizeof(err)), 0);
	assert_int_equal(c.role, ROLE_MEMBER);
	assert_string_equal(c.name, "tx1");
	assert_string_equal(c.coord.host, "c1");
	assert_string_equal(c.coord.port, "7453");
	assert_string_equal(c.target.ifname, "eth0");
	assert_int_equal(c.target.parent, TC_H_ROOT);
	assert_int_equal(c.target.handle, 0);
	assert_int_equal(c.target.limit, 0);
	assert_int_equal(c.target.link_speed, 0);
	assert_int_equal(c.control_priority, 7);
	assert_int_equal(c.heartbeat_ns, 1000000000ULL);
	assert_int_equal(c.reconnect_min_ns, 100000000ULL);
	assert_int_equal(c.reconnect_max_ns, 5000000000ULL);
	assert_int_equal(c.ptp_policy, PTP_REQUIRE);
	assert_string_equal(c.ptp_socket, "/var/run/ptp4l");
	assert_int_equal(c.ptp_domain, 0);
	assert_int_equal(c.ptp_threshold_ns, 1000);
	assert_int_equal(c.ptp_interval_ns, 250000000ULL);
	assert_int_equal(c.ptp_good_checks, 3);
	assert_int_equal(c.ptp_bad_checks, 1);
	assert_true(c.ptp_check_tai);
	assert_int_equal(c.phc_threshold_ns, 1000);
	assert_int_equal(c.target.lease_ns, 0);
}

static void test_every_key(void **state)
{
	struct tdmd_conf c;
	char err[512];

	(void)state;
	assert_int_equal(load("role coordinator\nkey_file /k\nlisten 1.2.3.4 ::1\n"
			      "port 8000\nplan_file /p\nquorum all\nack_timeout 20ms\n"
			      "member_timeout 1s\nhistory 0\nlog_level DEBUG\n"
			      "control_socket /x.sock\nname co\n",
			      &c, err, sizeof(err)), 0);
	assert_int_equal(c.nlisten, 2);
	assert_string_equal(c.listen[1], "::1");
	assert_string_equal(c.port, "8000");
	assert_string_equal(c.plan_file, "/p");
	assert_int_equal(c.quorum, 0);
	assert_int_equal(c.ack_timeout_ns, 20000000);
	assert_int_equal(c.member_timeout_ns, 1000000000);
	assert_int_equal(c.history, 1);
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_string_equal(c.ctl_path, "/x.sock");
	assert_string_equal(c.name, "co");

	assert_int_equal(load("role member\nkey_file /k\ncoordinator [::1]:99\n"
			      "interface eth0\nname tx1\nparent 1:2\nhandle 100:\n"
			      "limit 4294967295\nlink_speed 1000\ncontrol_priority off\n"
			      "heartbeat_interval 10ms\nreconnect_min 1ms\n"
			      "reconnect_max 2s\nptp_policy warn\nptp_socket /s\n"
			      "ptp_domain 255\nptp_threshold 1ns\nptp_interval 10ms\n"
			      "ptp_good_checks 1000\nptp_bad_checks 2\n"
			      "ptp_check_tai no\nlease 1500ms\nphc_threshold 20us\n",
			      &c, err, sizeof(err)), 0);
	assert_int_equal(c.target.lease_ns, 1500000000ULL);
	assert_string_equal(c.coord.host, "::1");
	assert_string_equal(c.coord.port, "99");
	assert_int_equal(c.target.parent, 0x00010002);
	assert_int_equal(c.target.handle, 0x01000000);
	assert_int_equal(c.target.limit, 4294967295U);
	assert_int_equal(c.target.link_speed, 1000);
	assert_int_equal(c.control_priority, -1);
	assert_int_equal(c.heartbeat_ns, 10000000);
	assert_int_equal(c.reconnect_min_ns, 1000000);
	assert_int_equal(c.reconnect_max_ns, 2000000000);
	assert_int_equal(c.ptp_policy, PTP_WARN);
	assert_string_equal(c.ptp_socket, "/s");
	assert_int_equal(c.ptp_domain, 255);
	assert_int_equal(c.ptp_threshold_ns, 1);
	assert_int_equal(c.ptp_interval_ns, 10000000);
	assert_int_equal(c.ptp_good_checks, 1000);
	assert_int_equal(c.ptp_bad_checks, 2);
	assert_false(c.ptp_check_tai);
	assert_int_equal(c.phc_threshold_ns, 20000);
	assert_int_equal(load("role member\nkey_file /k\ncoordinator c\n"
			      "interface eth0\nlease off\nphc_threshold off\n",
			      &c, err, sizeof(err)), 0);
	assert_int_equal(c.target.lease_ns, 0);
	assert_int_equal(c.phc_threshold_ns, 0);
}

/* A file and the message after "PATH". */
static const struct {
	const char *text, *msg;
} bad[] = {
	{ "key_file /k\n",
	  ": 'role coordinator' or 'role member' is required" },
	{ "role bogus\n",
	  ":1: role: 'bogus' is neither 'coordinator' nor 'member'" },
	{ "role none\nkey_file /k\n",
	  ":1: role: 'none' is neither 'coordinator' nor 'member'" },
	{ "role member\nkey_file /k\n",
	  ": a member needs 'coordinator HOST[:PORT]'" },
	{ "role coordinator\nkey_file /k\nlisten a b c d e\n",
	  ":3: listen: at most 4 addresses" },
	{ "role coordinator\nkey_file /k\nlisten xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
	  ":3: listen: address 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' too long" },
	{ "role coordinator\nkey_file /k\nport 0\n",
	  ":3: port: '0' is not a port number (1-65535)" },
	{ "role coordinator\nkey_file /k\nport 65536\n",
	  ":3: port: '65536' is not a port number (1-65535)" },
	{ "role coordinator\nkey_file /k\nport abc\n",
	  ":3: port: 'abc' is not a port number (1-65535)" },
	{ "role coordinator\nkey_file /k\nquorum 0\n",
	  ":3: quorum: must be 'all' or 1 to 1024" },
	{ "role coordinator\nkey_file /k\nquorum 1025\n",
	  ":3: quorum: '1025' is too large (max 1024)" },
	{ "role coordinator\nkey_file /k\nquorum x\n",
	  ":3: quorum: 'x': not a number" },
	{ "role coordinator\nkey_file /k\nack_timeout 0\n",
	  ":3: ack_timeout: must be at least 1ms" },
	{ "role coordinator\nkey_file /k\nack_timeout 999us\n",
	  ":3: ack_timeout: must be at least 1ms" },
	{ "role coordinator\nkey_file /k\nack_timeout x\n",
	  ":3: ack_timeout: 'x': not a time (a number with ns, us, ms or s)" },
	{ "role coordinator\nkey_file /k\nmember_timeout 99ms\n",
	  ":3: member_timeout: must be at least 100ms" },
	{ "role coordinator\nkey_file /k\nhistory 100001\n",
	  ":3: history: '100001' is too large (max 100000)" },
	{ "role coordinator\nkey_file /k\nhistory -1\n",
	  ":3: history: '-1': not a number" },
	{ "role coordinator\nkey_file /k\nport 1 2\n",
	  ":3: 'port' takes one value, not 2" },
	{ "role coordinator\nkey_file /k\nparent 1:\n",
	  ":3: 'parent' is a member key, but this is a coordinator (line 1)" },
	{ "role coordinator\nkey_file /k\nptp_policy off\n",
	  ":3: 'ptp_policy' is a member key, but this is a coordinator (line 1)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ncoordinator [::1]\n",
	  ":5: 'coordinator' given twice (first at line 3)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ncoordinator [::1]:99\n",
	  ":5: 'coordinator' given twice (first at line 3)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nparent 0:\n",
	  ":5: parent: '0:' is not a handle (root or MAJOR:[MINOR] in hex, e.g. 100:)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nparent 1\n",
	  ":5: parent: '1' is not a handle (root or MAJOR:[MINOR] in hex, e.g. 100:)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nparent 10000:\n",
	  ":5: parent: '10000:' is not a handle (root or MAJOR:[MINOR] in hex, e.g. 100:)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nparent 1:10000\n",
	  ":5: parent: '1:10000' is not a handle (root or MAJOR:[MINOR] in hex, e.g. 100:)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nparent x:\n",
	  ":5: parent: 'x:' is not a handle (root or MAJOR:[MINOR] in hex, e.g. 100:)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nhandle root\n",
	  ":5: handle: 'root' is not a handle (MAJOR:[MINOR] in hex, e.g. 100:)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nhandle 1:1\n",
	  ":5: handle: a qdisc handle has no minor number ('1:1')" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nlimit 4294967296\n",
	  ":5: limit: '4294967296' is too large (max 4294967295)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nlimit -1\n",
	  ":5: limit: '-1': not a number" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nlink_speed 1600001\n",
	  ":5: link_speed: '1600001' is too large (max 1600000)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ncontrol_priority 16\n",
	  ":5: control_priority: '16' is too large (max 15)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ncontrol_priority -1\n",
	  ":5: control_priority: '-1': not a number" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nheartbeat_interval 9ms\n",
	  ":5: heartbeat_interval: must be at least 10ms" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nreconnect_min 0\n",
	  ":5: reconnect_min: must be at least 1ms" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nreconnect_max 5ms\n",
	  ": reconnect_max is below reconnect_min" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nreconnect_max 50ms\n",
	  ": reconnect_max is below reconnect_min" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_policy x\n",
	  ":5: ptp_policy: 'x' is not one of require, warn, off" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_domain 256\n",
	  ":5: ptp_domain: '256' is too large (max 255)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_threshold 0\n",
	  ":5: ptp_threshold: must be at least 1ns" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nphc_threshold on\n",
	  ":5: phc_threshold: 'on': not a time (a number with ns, us, ms or s)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nlease 99ms\n",
	  ":5: lease: must be at least 100ms (or off)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nlease 3601s\n",
	  ":5: lease: must be at most 3600s" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_interval 9ms\n",
	  ":5: ptp_interval: must be at least 10ms" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_good_checks 0\n",
	  ":5: ptp_good_checks: must be at least 1" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_good_checks 1001\n",
	  ":5: ptp_good_checks: '1001' is too large (max 1000)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_bad_checks 0\n",
	  ":5: ptp_bad_checks: must be at least 1" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nptp_check_tai maybe\n",
	  ":5: ptp_check_tai: 'maybe': not a boolean (use on/off, yes/no, true/false or 1/0)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nname bad!\n",
	  ":5: name: 'bad!' is not a valid sender name (1 to 63 of A-Z a-z 0-9 _ . -)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nname nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\n",
	  ":5: name: 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn' is not a valid sender name (1 to 63 of A-Z a-z 0-9 _ . -)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nlog_level x\n",
	  ":5: log_level: 'x' is not one of err, warning, notice, info, debug" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nlisten ::\n",
	  ":5: 'listen' is a coordinator key but 'coordinator' (line 3) is a member key" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nquorum 2\n",
	  ":5: 'quorum' is a coordinator key but 'coordinator' (line 3) is a member key" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nbogus 1\n",
	  ":5: unknown key 'bogus'" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\n[sender x]\n\n",
	  ":5: unknown section [sender x] (tdm.conf has only [global])" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\n[global x]\n\n",
	  ":5: unknown section [global x] (tdm.conf has only [global])" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\n[auto]\n\n",
	  ":5: unknown section [auto] (tdm.conf has only [global])" },
	{ "interface e\nrole coordinator\nkey_file /k\n",
	  ":1: 'interface' is a member key, but this is a coordinator (line 2)" },
	{ "port 5\nrole member\nkey_file /k\ncoordinator x\ninterface y\nname z\n",
	  ":4: 'coordinator' is a member key but 'port' (line 1) is a coordinator key" },
	{ "role member\nkey_file /k\ninterface eth0\nname tx1\ncoordinator [::1]x\n",
	  ":5: coordinator: '[::1]x': expected [ADDRESS] or [ADDRESS]:PORT" },
	{ "role member\nkey_file /k\ninterface eth0\nname tx1\ncoordinator [::1\n",
	  ":5: coordinator: '[::1': expected [ADDRESS] or [ADDRESS]:PORT" },
	{ "role member\nkey_file /k\ninterface eth0\nname tx1\ncoordinator a:b\n",
	  ":5: coordinator: 'b' is not a port number (1-65535)" },
	{ "role member\nkey_file /k\ninterface eth0\nname tx1\ncoordinator a:0\n",
	  ":5: coordinator: '0' is not a port number (1-65535)" },
	{ "role member\nkey_file /k\ninterface eth0\nname tx1\ncoordinator :5\n",
	  ":5: coordinator: ':5': bad host" },
	{ "role member\nkey_file /k\ninterface eth0\nname tx1\ncoordinator h:70000\n",
	  ":5: coordinator: '70000' is not a port number (1-65535)" },
	{ "role member\nkey_file /k\ncoordinator c\nname tx1\ninterface eeeeeeeeeeeeeeee\n",
	  ":5: interface: value too long (at most 15 characters)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nqueues 0 4-2\n",
	  ":5: queues: '4-2' is not a TX queue or a range of them (N or N-M, 0 to 255), nor root or all" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nqueues 256\n",
	  ":5: queues: '256' is not a TX queue or a range of them (N or N-M, 0 to 255), nor root or all" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nqueues 1 x\n",
	  ":5: queues: 'x' is not a TX queue or a range of them (N or N-M, 0 to 255), nor root or all" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nqueues -3\n",
	  ":5: queues: '-3' is not a TX queue or a range of them (N or N-M, 0 to 255), nor root or all" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nqueues all 3\n",
	  ":5: queues: 'all' stands alone (no queue numbers after it)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\nqueues all\nparent 1:1\n",
	  ":6: 'parent' places the one instance of 'queues root'; with 'queues' other than root (line 5) the instances go under an mq qdisc at the root" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\netf_delta 300us\n",
	  ":5: 'etf_delta' is for the etf child of 'txtime on', but txtime is off (the default)" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ntxtime off\netf_offload on\n",
	  ":6: 'etf_offload' is for the etf child of 'txtime on', but txtime is off" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ntxtime on\netf_delta 999ns\n",
	  ":6: etf_delta: must be at least 1us" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ntxtime on\netf_delta 2s\n",
	  ":6: etf_delta: must be at most 1s" },
	{ "role member\nkey_file /k\ncoordinator 198.18.0.1\ninterface eth0\ntxtime maybe\n",
	  ":5: txtime: 'maybe': not a boolean (use on/off, yes/no, true/false or 1/0)" },
};

static void test_refused(void **state)
{
	struct tdmd_conf c;
	char err[512], want[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "%s%s", path, bad[i].msg);
		err[0] = '\0';
		if (load(bad[i].text, &c, err, sizeof(err)) != -1)
			fail_msg("accepted:\n%s", bad[i].text);
		if (strcmp(err, want))
			fail_msg("for:\n%swant: %s\ngot:  %s", bad[i].text, want, err);
	}
}

#define MEMBER_BASE	"role member\nkey_file /k\ncoordinator c1\ninterface eth0\nname tx1\n"
#define COORD_BASE	"role coordinator\nkey_file /k\n"

/* Reload from text a to text b: 0 with changed, or -1 with err. */
static int reload_to(const char *a, const char *b, char *changed, char *err)
{
	struct tdmd_conf old, nc;
	char e[512];

	assert_int_equal(load(a, &old, e, sizeof(e)), 0);
	if (load(b, &nc, e, sizeof(e)))
		fail_msg("%s: %s", b, e);
	return tdmd_conf_reloadable(&old, &nc, changed, 512, err, 1024);
}

/* Reload from base to base + extra. */
static int reload(const char *base, const char *extra, char *changed,
		  char *err)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s%s", base, extra);
	return reload_to(base, text, changed, err);
}

static void refused(const char *base, const char *extra, const char *want)
{
	char changed[512], err[1024] = "";

	if (reload(base, extra, changed, err) != -1)
		fail_msg("reload of '%s' not refused", extra);
	if (!strstr(err, want))
		fail_msg("for '%s': '%s' lacks '%s'", extra, err, want);
	/* The message says what may change live. */
	assert_non_null(strstr(err, "keys that reload live: log_level, "));
}

static void live(const char *base, const char *extra, const char *want)
{
	char changed[512], err[1024] = "";

	if (reload(base, extra, changed, err))
		fail_msg("reload of '%s' refused: %s", extra, err);
	assert_string_equal(changed, want);
}

static void test_reloadable(void **state)
{
	char changed[512], err[1024];

	(void)state;
	live(MEMBER_BASE, "", "");
	live(MEMBER_BASE, "lease 2s\n", "lease");
	/* and off again */
	assert_int_equal(reload_to(MEMBER_BASE "lease 2s\n", MEMBER_BASE,
				   changed, err), 0);
	assert_string_equal(changed, "lease");
	live(MEMBER_BASE, "ptp_threshold 5us\nptp_interval 1s\nlog_level debug\n",
	     "log_level, ptp_threshold, ptp_interval");
	live(MEMBER_BASE, "ptp_policy warn\nphc_threshold 2us\nptp_check_tai off\n",
	     "ptp_policy, ptp_check_tai, phc_threshold");
	live(MEMBER_BASE, "heartbeat_interval 2s\nreconnect_max 10s\nptp_good_checks 5\n",
	     "heartbeat_interval, reconnect_max, ptp_good_checks");
	/* the default spelled out changes nothing */
	assert_int_equal(reload_to(MEMBER_BASE, MEMBER_BASE "ptp_threshold 1us\n",
				   changed, err), 0);
	assert_string_equal(changed, "");
	refused(MEMBER_BASE, "ptp_policy off\n", "'ptp_policy' turned off: that takes a restart");
	refused(MEMBER_BASE, "phc_threshold off\n", "'phc_threshold' turned off");
	assert_int_equal(reload_to(MEMBER_BASE "phc_threshold off\n", MEMBER_BASE,
				   changed, err), -1);
	assert_non_null(strstr(err, "'phc_threshold' turned on"));
	refused(MEMBER_BASE, "parent 1:1\n", "'parent' changed: that takes a restart");
	refused(MEMBER_BASE, "control_priority 6\n", "'control_priority' changed");
	refused(MEMBER_BASE, "ptp_socket /run/ptp4l\n", "'ptp_socket' changed");
	refused(MEMBER_BASE, "control_socket /run/x.sock\n", "'control_socket' changed");
	refused(MEMBER_BASE, "queues all\n", "'queues' changed: that takes a restart");
	assert_int_equal(reload_to(MEMBER_BASE "queues 0-1\n", MEMBER_BASE "queues 0-2\n",
				   changed, err), -1);
	assert_non_null(strstr(err, "'queues' changed"));
	refused(MEMBER_BASE, "txtime on\n", "'txtime' changed");
	refused(MEMBER_BASE "txtime on\n", "etf_delta 1ms\n", "'etf_delta' changed");

	live(COORD_BASE, "ack_timeout 2s\ncommit_lead 1s\nmember_timeout 3s\nname_takeover allow\n",
	     "ack_timeout, commit_lead, member_timeout, name_takeover");
	refused(COORD_BASE, "listen 127.0.0.1\n", "'listen' changed");
	refused(COORD_BASE, "plan_file /p\n", "'plan_file' changed");
	refused(COORD_BASE, "quorum 2\n", "'quorum' changed");
	/* The live keys named are the role's. */
	refused(COORD_BASE, "port 1\n", "keys that reload live: log_level, ack_timeout, commit_lead, member_timeout, name_takeover)");

	/* Another role: the whole file is another daemon's. */
	{
		struct tdmd_conf a, b;
		char e[512];

		assert_int_equal(load(COORD_BASE, &a, e, sizeof(e)), 0);
		assert_int_equal(load(MEMBER_BASE, &b, e, sizeof(e)), 0);
		assert_int_equal(tdmd_conf_reloadable(&a, &b, changed, sizeof(changed),
						      err, sizeof(err)), -1);
		assert_non_null(strstr(err, "'role' changed from coordinator to member"));
	}
}

/*
 * The example's member block (examples/tdm.conf.example, found from the
 * folder the unit tests run in), uncommented as a user would: it loads,
 * and enables the lease at the value tdm.conf(5) justifies.
 */
static void test_example_member(void **state)
{
	FILE *f = fopen("examples/tdm.conf.example", "r");
	char line[256], text[4096] = "", err[512];
	struct tdmd_conf c;
	bool in = false;

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *hash;

		if (strstr(line, "---- sender: a member"))
			in = true;
		/* The block ends at the first empty comment after its keys. */
		if (in && text[0] && !strcmp(line, "#\n"))
			break;
		if (!in || strncmp(line, "# ", 2) || line[2] == ' ' ||
		    !strchr("[abcdefghijklmnopqrstuvwxyz", line[2]))
			continue;
		hash = strchr(line + 2, '#');
		if (hash)
			strcpy(hash, "\n");
		strncat(text, line + 2, sizeof(text) - strlen(text) - 1);
	}
	fclose(f);
	if (load(text, &c, err, sizeof(err)))
		fail_msg("%s\n%s", err, text);
	assert_int_equal(c.role, ROLE_MEMBER);
	assert_int_equal(c.target.lease_ns, 2000000000ULL);
	assert_int_equal(c.ptp_policy, PTP_REQUIRE);
}

/* queues: root (the default), all, or queues and ranges of them. */
static void test_queues(void **state)
{
	struct tdmd_conf c;
	char err[512];

	(void)state;
	assert_int_equal(load(MEMBER_BASE, &c, err, sizeof(err)), 0);
	assert_int_equal(c.queues.mode, QUEUES_ROOT);
	assert_false(c.txtime);
	assert_int_equal(c.etf.delta_ns, 200000);
	assert_false(c.etf.offload);
	assert_int_equal(load(MEMBER_BASE "queues all\nhandle 100:\n", &c, err,
			      sizeof(err)), 0);
	assert_int_equal(c.queues.mode, QUEUES_ALL);
	assert_int_equal(c.target.handle, 0x01000000);
	assert_int_equal(load(MEMBER_BASE "queues 0 2-3 255\ntxtime on\n"
			      "etf_delta 2ms\netf_offload on\n", &c, err,
			      sizeof(err)), 0);
	assert_int_equal(c.queues.mode, QUEUES_LIST);
	assert_true(tdmd_queue_listed(&c.queues, 0));
	assert_false(tdmd_queue_listed(&c.queues, 1));
	assert_true(tdmd_queue_listed(&c.queues, 2));
	assert_true(tdmd_queue_listed(&c.queues, 3));
	assert_false(tdmd_queue_listed(&c.queues, 4));
	assert_true(tdmd_queue_listed(&c.queues, 255));
	assert_true(c.txtime);
	assert_int_equal(c.etf.delta_ns, 2000000);
	assert_true(c.etf.offload);
	assert_int_equal(load(MEMBER_BASE "queues root\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.queues.mode, QUEUES_ROOT);
}

/* gate: the qdisc (default), or tdmd's plan store with its socket. */
static void test_gate(void **state)
{
	struct tdmd_conf c;
	char err[512];

	(void)state;
	assert_int_equal(load(MEMBER_BASE, &c, err, sizeof(err)), 0);
	assert_int_equal(c.gate, GATE_QDISC);
	assert_string_equal(c.gate_socket, "");
	assert_string_equal(tdmd_gate_name(c.gate), "qdisc");
	assert_int_equal(load(MEMBER_BASE "gate tdmd\n", &c, err, sizeof(err)), 0);
	assert_int_equal(c.gate, GATE_TDMD);
	assert_string_equal(c.gate_socket, "/run/tdmd/gate-eth0.sock");
	assert_string_equal(tdmd_gate_name(c.gate), "tdmd");
	assert_int_equal(load(MEMBER_BASE "gate tdmd\ngate_socket /x/g.sock\n",
			      &c, err, sizeof(err)), 0);
	assert_string_equal(c.gate_socket, "/x/g.sock");
	/* what places a qdisc has no place with the store */
	assert_int_equal(load(MEMBER_BASE "gate tdmd\nqueues all\n", &c, err,
			      sizeof(err)), -1);
	assert_non_null(strstr(err, ":7: 'queues' places a tdmwin qdisc, but 'gate tdmd' (line 6) has none: the plan goes to tdmd's store"));
	assert_int_equal(load(MEMBER_BASE "txtime on\ngate tdmd\n", &c, err,
			      sizeof(err)), -1);
	assert_non_null(strstr(err, ":6: 'txtime' places a tdmwin qdisc"));
	assert_int_equal(load(MEMBER_BASE "gate_socket /g\n", &c, err,
			      sizeof(err)), -1);
	assert_non_null(strstr(err, ":6: 'gate_socket' is for 'gate tdmd', but the gate is the qdisc (the default)"));
	assert_int_equal(load(MEMBER_BASE "gate vfio\n", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "gate: 'vfio' is not one of qdisc, tdmd"));
	/* a coordinator has no gate */
	assert_int_equal(load("role coordinator\nkey_file /k\ngate tdmd\n", &c, err,
			      sizeof(err)), -1);
	assert_non_null(strstr(err, "'gate' is a member key"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_reloadable),
		cmocka_unit_test(test_example_member),
		cmocka_unit_test(test_queues),
		cmocka_unit_test(test_gate),
	};
	int rc;

	tdm_log_init("test_conf", LOG_ERR);
	snprintf(path, sizeof(path), "/tmp/test_conf.%d.conf", getpid());
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return rc;
}
