// SPDX-License-Identifier: GPL-2.0
/*
 * q_tdmwin.c	tc plugin for the tdmwin qdisc: transmit only inside the
 *		node's own windows of a repeating, PTP-aligned cycle.
 *
 * tc dlopens $TC_LIB_DIR/q_tdmwin.so and looks up tdmwin_qdisc_util.  This
 * file translates between the command line and the attributes of
 * kmod/uapi/linux/tdmwin.h, and between those and `tc qdisc show` (text and
 * JSON from the same print calls).  It rejects malformed input; whether a
 * plan makes sense (windows inside the cycle, no overlaps, long enough at
 * the link speed) is for the kernel to say, in its extack message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "iproute2.h"
#include "../kmod/uapi/linux/tdmwin.h"

/* Bound for the request we add to: tc's MAX_MSG (tc_util.h), well inside
 * its TCA_BUF_MAX buffer; 64 windows take under 2 KiB.
 */
#define TDMWIN_MSG_MAX		16384

/* A bit per TCA_TDMWIN_* attribute, to track what the user gave. */
#define GIVEN(attr)		(1U << (attr))
_Static_assert(TCA_TDMWIN_MAX < 32, "attribute bits must fit a __u32");

#define TDMWIN_NUM_PRIOS	16	/* skb priorities that can bypass */

#define ARRAY_SIZE(arr)		(sizeof(arr) / sizeof((arr)[0]))

static void explain(void)
{
	fprintf(stderr,
		"Usage: ... tdmwin cycle-time TIME base-time BASE WINDOW [WINDOW ...]\n"
		"		[guard TIME] [link-speed MBIT]\n"
		"		[clockid CLOCKID] [bypass-prio P[,P...]] [bypass-ptp on|off]\n"
		"		[hold | release] [plan-version N] [limit PACKETS]\n"
		"		[wire-clock on|off] [txtime on|off] [unconfirmed]\n"
		"		[lease TIME|off] [renew]\n"
		"   or: ... tdmwin { confirm | abort } VERSION\n"
		"\n"
		"cycle-time   length of the repeating cycle\n"
		"base-time    start of cycle 0, on the qdisc's clock\n"
		"window       the gate is open from OFFSET after the start of each\n"
		"             cycle for LENGTH; repeat for more windows per cycle;\n"
		"             with class, for that destination class (its filters\n"
		"             choose its frames) instead of the gated class 1:1\n"
		"guard        margin: a frame must end this long before its window\n"
		"             closes (on top of its wire time)\n"
		"link-speed   for the wire time of frames (default: from ethtool)\n"
		"clockid      the qdisc's clock; fixed once the qdisc exists\n"
		"bypass-prio  skb priorities whose packets skip the gate; repeatable\n"
		"bypass-ptp   whether PTP packets skip the gate (default on)\n"
		"hold         keep the gate closed, the plan unchanged; release: reopen\n"
		"plan-version number of the plan in dumps and counters\n"
		"limit        packets each class queues\n"
		"wire-clock   let a frame go only if it fits its window behind the\n"
		"             frames the wire is still sending (default on)\n"
		"txtime       set each frame's launch time for an etf child at 1:1\n"
		"             (etf clockid CLOCK_TAI ... skip_sock_check); off by default\n"
		"unconfirmed  the new plan (base-time ahead) waits for confirm: at its\n"
		"             base time the gate holds until confirm or abort\n"
		"confirm      let the unconfirmed plan VERSION take over\n"
		"abort        remove the unconfirmed plan VERSION\n"
		"lease        hold the gate when no renewal came for TIME (100ms..1h,\n"
		"             on CLOCK_BOOTTIME; one per device); off: no lease\n"
		"renew        renew the device's lease now\n"
		"\n"
		"TIME    := NS | NUMBER{ns|us|ms|s}, a whole number of ns: 3300us, 1.5ms\n"
		"BASE    := TIME (since the clock's epoch) | now | now+TIME; now is read\n"
		"           from CLOCKID (given or CLOCK_TAI) after all options\n"
		"WINDOW  := window OFFSET LENGTH [class MINOR]\n"
		"OFFSET, LENGTH := TIME\n"
		"MINOR   := 1 (the gated class, default) | 3..34 (destination classes)\n"
		"MBIT    := NUMBER (Mbit/s) | NUMBERmbit | NUMBERgbit | auto (ethtool)\n"
		"CLOCKID := CLOCK_TAI (default) | CLOCK_REALTIME | CLOCK_MONOTONIC |\n"
		"           CLOCK_BOOTTIME, also without CLOCK_, or a number\n"
		"P       := 0..15, or none for no priority\n"
		"\n"
		"On change, options not given stay as they are; see\n"
		"Documentation/tdmwin.rst for how a new plan takes over.\n");
}

/* ---- units and clocks: one table each, for parsing and printing -------- */

static const struct time_unit {
	const char *name;
	__u64 ns;
} time_units[] = {	/* largest first: printing picks the first that fits */
	{ "s",	1000000000ULL },
	{ "ms",	1000000ULL },
	{ "us",	1000ULL },
	{ "ns",	1ULL },
};

static const struct clock_name {
	const char *name;
	__s32 clockid;
} clock_names[] = {
	{ "TAI",	CLOCK_TAI },
	{ "REALTIME",	CLOCK_REALTIME },
	{ "MONOTONIC",	CLOCK_MONOTONIC },
	{ "BOOTTIME",	CLOCK_BOOTTIME },
};

#define DIGITS	"0123456789"

/*
 * The n characters at arg as a number, converted by tc's get_u64().  They
 * must be decimal digits: get_u64() alone (strtoull) would also take
 * blanks, a sign and a base prefix, and wrap "-1" round to UINT64_MAX.
 */
static const char *parse_digits(const char *arg, size_t n, __u64 *val)
{
	char num[21];		/* UINT64_MAX has 20 digits */

	if (!n || strspn(arg, DIGITS) < n)
		return "not a decimal number";
	while (n > 1 && *arg == '0') {
		arg++;
		n--;
	}
	if (n >= sizeof(num))
		return "too large";
	memcpy(num, arg, n);
	num[n] = '\0';
	errno = 0;	/* get_u64() tests for ERANGE but does not clear errno */
	return get_u64(val, num, 10) ? "too large" : NULL;
}

static const char *parse_u64(const char *arg, __u64 *val)
{
	return parse_digits(arg, strlen(arg), val);
}

static const char *parse_u32(const char *arg, __u32 *val)
{
	const char *err;
	__u64 v;

	err = parse_u64(arg, &v);
	if (err)
		return err;
	if (v > UINT32_MAX)
		return "too large";
	*val = v;
	return NULL;
}

/*
 * TIME: DIGITS[.DIGITS][UNIT], no unit meaning ns.  The result must be a
 * whole number of nanoseconds (1.5us is, 1.0005us is not).  Returns NULL
 * or what is wrong.
 *
 * Not tc's get_time64(): it computes in a double (inexact above 2^53 ns,
 * and 1.5 or 1.0000005ms are cut to whole ns without a word), takes a
 * sign, exponents, hex and blanks, and ends at INT64_MAX, where cycle-time
 * is a __u64.
 */
static const char *parse_time(const char *arg, __u64 *ns)
{
	size_t nint = strspn(arg, DIGITS), nfrac = 0, i;
	const char *frac = arg + nint, *unit = frac;
	const struct time_unit *u = NULL;
	const char *err;
	__u64 v, scale;

	if (*frac == '.') {
		frac++;
		nfrac = strspn(frac, DIGITS);
		unit = frac + nfrac;
	}
	if (!nint || (unit != arg + nint && !nfrac))
		return "not a number";
	if (!*unit) {
		u = &time_units[ARRAY_SIZE(time_units) - 1];
	} else {
		for (i = 0; i < ARRAY_SIZE(time_units); i++)
			if (strcmp(unit, time_units[i].name) == 0)
				u = &time_units[i];
		if (!u)
			return "unknown unit (use ns, us, ms or s)";
	}

	err = parse_digits(arg, nint, &v);
	if (err)
		return err;
	if (v > UINT64_MAX / u->ns)
		return "too large";
	v *= u->ns;

	/* Fraction digit i is worth u->ns / 10^(i+1), until that is < 1 ns. */
	for (scale = u->ns, i = 0; i < nfrac; i++) {
		unsigned int d = frac[i] - '0';

		scale /= 10;
		if (!scale) {
			if (d)
				return "finer than a nanosecond";
			continue;
		}
		if (v > UINT64_MAX - d * scale)
			return "too large";
		v += d * scale;
	}
	*ns = v;
	return NULL;
}

/* Exact, in the largest unit that divides: 3300us, 1ms, 250ns, 0ns.  (tc's
 * sprint_time64() rounds to three digits: 3.3ms, and 1s for 1000000001ns.)
 */
static const char *sprint_ns(__u64 ns, char *buf, size_t len)
{
	const struct time_unit *u = &time_units[ARRAY_SIZE(time_units) - 1];
	size_t i;

	for (i = 0; ns && i < ARRAY_SIZE(time_units); i++) {
		if (ns % time_units[i].ns == 0) {
			u = &time_units[i];
			break;
		}
	}
	snprintf(buf, len, "%" PRIu64 "%s", (uint64_t)(ns / u->ns), u->name);
	return buf;
}

static int parse_clockid(const char *arg, __s32 *clockid)
{
	const char *name = arg;
	__u32 num;
	size_t i;

	if (strncasecmp(name, "CLOCK_", 6) == 0)
		name += 6;
	for (i = 0; i < ARRAY_SIZE(clock_names); i++) {
		if (strcasecmp(name, clock_names[i].name) == 0) {
			*clockid = clock_names[i].clockid;
			return 0;
		}
	}
	if (parse_u32(arg, &num) || num > INT32_MAX)
		return -1;
	*clockid = num;
	return 0;
}

static const char *sprint_clockid(__s32 clockid, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(clock_names); i++)
		if (clock_names[i].clockid == clockid)
			return clock_names[i].name;
	snprintf(buf, len, "%d", clockid);
	return buf;
}

/* ---- parse ------------------------------------------------------------- */

struct tdmwin_args {
	__u32	given;		/* GIVEN(attr) for each attribute to send */
	__s32	clockid;
	__u64	cycle_time;
	__s64	base_time;	/* absolute, or after now if base_now */
	bool	base_now;
	__u32	guard;
	__u32	link_speed;
	__u32	bypass_prios;
	bool	bypass_none;	/* "bypass-prio none" was given */
	__u8	bypass_ptp;
	__u8	hold;
	__u8	wire_clock;
	__u8	txtime;
	__u32	plan_version;
	__u32	limit;
	__u64	lease;
	__u32	confirm;
	__u32	abort;
	unsigned int nwin;
	struct {
		__u64	offset;
		__u64	length;
		__u32	cls;	/* minor of its class; 0: not given (1:1) */
	} win[TDMWIN_MAX_WINDOWS];
};

static int missing_arg(const char *opt, const char *what)
{
	fprintf(stderr, "tdmwin: \"%s\" needs %s\n", opt, what);
	return -1;
}

static int invalid_arg(const char *opt, const char *what, const char *arg,
		       const char *why)
{
	fprintf(stderr, "tdmwin: invalid %s \"%s\" for \"%s\": %s\n",
		what, arg, opt, why);
	return -1;
}

/* Like iproute2's NEXT_ARG(), but says what is missing and returns. */
#define NEXT_ARG_FOR(opt, what)						\
	do {								\
		argv++;							\
		if (--argc <= 0)					\
			return missing_arg(opt, what);			\
	} while (0)

/* Single-valued options may be given once. */
static int take_once(struct tdmwin_args *a, int attr, const char *opt)
{
	if (a->given & GIVEN(attr)) {
		fprintf(stderr, "tdmwin: duplicate \"%s\"\n", opt);
		return -1;
	}
	a->given |= GIVEN(attr);
	return 0;
}

static int parse_time_arg(const char *opt, const char *what, const char *arg,
			  __u64 *ns)
{
	const char *err = parse_time(arg, ns);

	return err ? invalid_arg(opt, what, arg, err) : 0;
}

static int parse_u32_arg(const char *opt, const char *what, const char *arg,
			 __u32 *val)
{
	const char *err = parse_u32(arg, val);

	return err ? invalid_arg(opt, what, arg, err) : 0;
}

static int parse_base(struct tdmwin_args *a, const char *arg)
{
	const char *err = NULL;
	__u64 ns = 0;

	if (strcmp(arg, "now") == 0) {
		a->base_now = true;
	} else if (strncmp(arg, "now+", 4) == 0) {
		a->base_now = true;
		err = parse_time(arg + 4, &ns);
	} else {
		err = parse_time(arg, &ns);
	}
	if (!err && ns > INT64_MAX)
		err = "too large";
	if (err)
		return invalid_arg("base-time", "BASE", arg, err);
	a->base_time = ns;
	return 0;
}

static int parse_link_speed(const char *arg, __u32 *mbit)
{
	static const struct {
		const char *suffix;
		__u32 mbit;
	} units[] = { { "", 1 }, { "mbit", 1 }, { "gbit", 1000 } };
	size_t n = strspn(arg, DIGITS), i;
	__u64 v;

	if (strcmp(arg, "auto") == 0) {
		*mbit = 0;
		return 0;
	}
	for (i = 0; n && i < ARRAY_SIZE(units); i++) {
		if (strcasecmp(arg + n, units[i].suffix))
			continue;
		if (parse_digits(arg, n, &v) || v > UINT32_MAX / units[i].mbit)
			return invalid_arg("link-speed", "MBIT", arg,
					   "too large");
		*mbit = v * units[i].mbit;
		return 0;
	}
	return invalid_arg("link-speed", "MBIT", arg,
			   "expected Mbit/s, NUMBERGbit or auto");
}

/* P[,P...] or none; adds to what earlier bypass-prio options gave. */
static int parse_prios(struct tdmwin_args *a, const char *arg)
{
	const char *p = arg;

	if (strcmp(arg, "none") == 0) {
		a->bypass_none = true;
		return 0;
	}
	for (;;) {
		size_t n = strspn(p, DIGITS);
		__u64 prio;

		if (!n || n > 2 || (p[n] != ',' && p[n] != '\0'))
			return invalid_arg("bypass-prio", "priority list", arg,
					   "expected P[,P...] with P in 0..15, or none");
		if (parse_digits(p, n, &prio) || prio >= TDMWIN_NUM_PRIOS)
			return invalid_arg("bypass-prio", "priority list", arg,
					   "priorities are 0..15");
		a->bypass_prios |= 1U << prio;
		if (p[n] == '\0')
			return 0;
		p += n + 1;
	}
}

static int tdmwin_parse_switch(const char *opt, const char *arg, __u8 *val)
{
	if (strcmp(arg, "on") == 0)
		*val = 1;
	else if (strcmp(arg, "off") == 0)
		*val = 0;
	else
		return invalid_arg(opt, "value", arg, "use on or off");
	return 0;
}

static int parse_args(struct tdmwin_args *a, int argc, char **argv)
{
	while (argc > 0) {
		if (strcmp(*argv, "cycle-time") == 0) {
			NEXT_ARG_FOR("cycle-time", "TIME");
			if (take_once(a, TCA_TDMWIN_CYCLE_TIME, "cycle-time") ||
			    parse_time_arg("cycle-time", "TIME", *argv,
					   &a->cycle_time))
				return -1;
		} else if (strcmp(*argv, "base-time") == 0) {
			NEXT_ARG_FOR("base-time", "BASE");
			if (take_once(a, TCA_TDMWIN_BASE_TIME, "base-time") ||
			    parse_base(a, *argv))
				return -1;
		} else if (strcmp(*argv, "window") == 0) {
			__u64 offset, length;

			NEXT_ARG_FOR("window", "OFFSET and LENGTH");
			if (parse_time_arg("window", "OFFSET", *argv, &offset))
				return -1;
			NEXT_ARG_FOR("window", "a LENGTH after the OFFSET");
			if (parse_time_arg("window", "LENGTH", *argv, &length))
				return -1;
			if (a->nwin == TDMWIN_MAX_WINDOWS) {
				fprintf(stderr,
					"tdmwin: too many windows: at most %d per cycle\n",
					TDMWIN_MAX_WINDOWS);
				return -1;
			}
			a->win[a->nwin].offset = offset;
			a->win[a->nwin].length = length;
			a->win[a->nwin].cls = 0;
			if (argc > 1 && strcmp(argv[1], "class") == 0) {
				NEXT_ARG_FOR("window", "class MINOR");
				NEXT_ARG_FOR("class", "MINOR");
				if (parse_u32_arg("class", "MINOR", *argv,
						  &a->win[a->nwin].cls))
					return -1;
				if (!a->win[a->nwin].cls)
					return invalid_arg("class", "MINOR", *argv,
							   "classes start at 1");
			}
			a->nwin++;
			a->given |= GIVEN(TCA_TDMWIN_WINDOWS);
		} else if (strcmp(*argv, "guard") == 0) {
			__u64 ns;

			NEXT_ARG_FOR("guard", "TIME");
			if (take_once(a, TCA_TDMWIN_GUARD, "guard") ||
			    parse_time_arg("guard", "TIME", *argv, &ns))
				return -1;
			if (ns > UINT32_MAX)
				return invalid_arg("guard", "TIME", *argv,
						   "too large");
			a->guard = ns;
		} else if (strcmp(*argv, "link-speed") == 0) {
			NEXT_ARG_FOR("link-speed", "MBIT");
			if (take_once(a, TCA_TDMWIN_LINK_SPEED, "link-speed") ||
			    parse_link_speed(*argv, &a->link_speed))
				return -1;
		} else if (strcmp(*argv, "clockid") == 0) {
			NEXT_ARG_FOR("clockid", "CLOCKID");
			if (take_once(a, TCA_TDMWIN_CLOCKID, "clockid"))
				return -1;
			if (parse_clockid(*argv, &a->clockid))
				return invalid_arg("clockid", "CLOCKID", *argv,
						   "use CLOCK_TAI, CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME or a number");
		} else if (strcmp(*argv, "bypass-prio") == 0) {
			NEXT_ARG_FOR("bypass-prio", "P[,P...] or none");
			if (parse_prios(a, *argv))
				return -1;
			a->given |= GIVEN(TCA_TDMWIN_BYPASS_PRIOS);
		} else if (strcmp(*argv, "bypass-ptp") == 0) {
			NEXT_ARG_FOR("bypass-ptp", "on or off");
			if (take_once(a, TCA_TDMWIN_BYPASS_PTP, "bypass-ptp") ||
			    tdmwin_parse_switch("bypass-ptp", *argv, &a->bypass_ptp))
				return -1;
		} else if (strcmp(*argv, "wire-clock") == 0) {
			NEXT_ARG_FOR("wire-clock", "on or off");
			if (take_once(a, TCA_TDMWIN_WIRE_CLOCK, "wire-clock") ||
			    tdmwin_parse_switch("wire-clock", *argv, &a->wire_clock))
				return -1;
		} else if (strcmp(*argv, "txtime") == 0) {
			NEXT_ARG_FOR("txtime", "on or off");
			if (take_once(a, TCA_TDMWIN_TXTIME, "txtime") ||
			    tdmwin_parse_switch("txtime", *argv, &a->txtime))
				return -1;
		} else if (strcmp(*argv, "hold") == 0 ||
			   strcmp(*argv, "release") == 0) {
			__u8 hold = strcmp(*argv, "hold") == 0;

			if ((a->given & GIVEN(TCA_TDMWIN_HOLD)) &&
			    a->hold != hold) {
				fprintf(stderr,
					"tdmwin: \"hold\" and \"release\" exclude each other\n");
				return -1;
			}
			if (take_once(a, TCA_TDMWIN_HOLD, *argv))
				return -1;
			a->hold = hold;
		} else if (strcmp(*argv, "plan-version") == 0) {
			NEXT_ARG_FOR("plan-version", "N");
			if (take_once(a, TCA_TDMWIN_PLAN_VERSION, "plan-version") ||
			    parse_u32_arg("plan-version", "N", *argv, &a->plan_version))
				return -1;
		} else if (strcmp(*argv, "limit") == 0) {
			NEXT_ARG_FOR("limit", "PACKETS");
			if (take_once(a, TCA_TDMWIN_LIMIT, "limit") ||
			    parse_u32_arg("limit", "PACKETS", *argv, &a->limit))
				return -1;
		} else if (strcmp(*argv, "lease") == 0) {
			NEXT_ARG_FOR("lease", "TIME or off");
			if (take_once(a, TCA_TDMWIN_LEASE, "lease"))
				return -1;
			if (strcmp(*argv, "off") != 0 &&
			    parse_time_arg("lease", "TIME", *argv, &a->lease))
				return -1;
		} else if (strcmp(*argv, "renew") == 0) {
			if (take_once(a, TCA_TDMWIN_RENEW, "renew"))
				return -1;
		} else if (strcmp(*argv, "unconfirmed") == 0) {
			if (take_once(a, TCA_TDMWIN_UNCONFIRMED, "unconfirmed"))
				return -1;
		} else if (strcmp(*argv, "confirm") == 0) {
			NEXT_ARG_FOR("confirm", "VERSION");
			if (take_once(a, TCA_TDMWIN_CONFIRM, "confirm") ||
			    parse_u32_arg("confirm", "VERSION", *argv, &a->confirm))
				return -1;
		} else if (strcmp(*argv, "abort") == 0) {
			NEXT_ARG_FOR("abort", "VERSION");
			if (take_once(a, TCA_TDMWIN_ABORT, "abort") ||
			    parse_u32_arg("abort", "VERSION", *argv, &a->abort))
				return -1;
		} else if (strcmp(*argv, "help") == 0) {
			explain();
			return -1;
		} else {
			fprintf(stderr, "tdmwin: unknown option \"%s\"\n",
				*argv);
			explain();
			return -1;
		}
		argc--;
		argv++;
	}

	if (a->bypass_none && a->bypass_prios) {
		fprintf(stderr,
			"tdmwin: \"bypass-prio none\" and priorities exclude each other\n");
		return -1;
	}
	if ((a->given & GIVEN(TCA_TDMWIN_CONFIRM)) &&
	    (a->given & GIVEN(TCA_TDMWIN_ABORT))) {
		fprintf(stderr,
			"tdmwin: \"confirm\" and \"abort\" exclude each other\n");
		return -1;
	}
	if ((a->given & GIVEN(TCA_TDMWIN_UNCONFIRMED)) &&
	    !(a->given & GIVEN(TCA_TDMWIN_BASE_TIME))) {
		fprintf(stderr,
			"tdmwin: \"unconfirmed\" needs the plan's base-time (in the future)\n");
		return -1;
	}
	return 0;
}

/* now and now+TIME are read from the qdisc's clock once all is parsed. */
static int resolve_base(struct tdmwin_args *a)
{
	__s32 clockid = a->given & GIVEN(TCA_TDMWIN_CLOCKID) ?
			a->clockid : CLOCK_TAI;
	struct timespec ts;
	__s64 now;

	if (!a->base_now)
		return 0;
	if (clock_gettime(clockid, &ts)) {
		fprintf(stderr, "tdmwin: cannot read clock %d for base-time now: %m\n",
			clockid);
		return -1;
	}
	now = (__s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	if (a->base_time > INT64_MAX - now) {
		fprintf(stderr, "tdmwin: base-time now+TIME is too large\n");
		return -1;
	}
	a->base_time += now;
	return 0;
}

static int add_windows(struct nlmsghdr *n, const struct tdmwin_args *a)
{
	struct rtattr *list, *w;
	unsigned int i;
	int err = 0;

	list = addattr_nest(n, TDMWIN_MSG_MAX, TCA_TDMWIN_WINDOWS | NLA_F_NESTED);
	for (i = 0; i < a->nwin; i++) {
		w = addattr_nest(n, TDMWIN_MSG_MAX,
				 TCA_TDMWIN_WINDOW | NLA_F_NESTED);
		err |= addattr64(n, TDMWIN_MSG_MAX, TCA_TDMWIN_WIN_OFFSET,
				 a->win[i].offset);
		err |= addattr64(n, TDMWIN_MSG_MAX, TCA_TDMWIN_WIN_LENGTH,
				 a->win[i].length);
		if (a->win[i].cls)
			err |= addattr32(n, TDMWIN_MSG_MAX,
					 TCA_TDMWIN_WIN_CLASS, a->win[i].cls);
		addattr_nest_end(n, w);
	}
	addattr_nest_end(n, list);
	return err;
}

/* Only what was given: on change, an absent attribute means unchanged. */
static int add_options(struct nlmsghdr *n, const struct tdmwin_args *a)
{
	struct rtattr *opts;
	int err = 0;

	opts = addattr_nest(n, TDMWIN_MSG_MAX, TCA_OPTIONS | NLA_F_NESTED);
	if (a->given & GIVEN(TCA_TDMWIN_CLOCKID))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_CLOCKID,
				 (__u32)a->clockid);
	if (a->given & GIVEN(TCA_TDMWIN_CYCLE_TIME))
		err |= addattr64(n, TDMWIN_MSG_MAX, TCA_TDMWIN_CYCLE_TIME,
				 a->cycle_time);
	if (a->given & GIVEN(TCA_TDMWIN_BASE_TIME))
		err |= addattr64(n, TDMWIN_MSG_MAX, TCA_TDMWIN_BASE_TIME,
				 (__u64)a->base_time);
	if (a->given & GIVEN(TCA_TDMWIN_WINDOWS))
		err |= add_windows(n, a);
	if (a->given & GIVEN(TCA_TDMWIN_GUARD))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_GUARD, a->guard);
	if (a->given & GIVEN(TCA_TDMWIN_LINK_SPEED))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_LINK_SPEED,
				 a->link_speed);
	if (a->given & GIVEN(TCA_TDMWIN_BYPASS_PRIOS))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_BYPASS_PRIOS,
				 a->bypass_prios);
	if (a->given & GIVEN(TCA_TDMWIN_BYPASS_PTP))
		err |= addattr8(n, TDMWIN_MSG_MAX, TCA_TDMWIN_BYPASS_PTP,
				a->bypass_ptp);
	if (a->given & GIVEN(TCA_TDMWIN_HOLD))
		err |= addattr8(n, TDMWIN_MSG_MAX, TCA_TDMWIN_HOLD, a->hold);
	if (a->given & GIVEN(TCA_TDMWIN_WIRE_CLOCK))
		err |= addattr8(n, TDMWIN_MSG_MAX, TCA_TDMWIN_WIRE_CLOCK,
				a->wire_clock);
	if (a->given & GIVEN(TCA_TDMWIN_TXTIME))
		err |= addattr8(n, TDMWIN_MSG_MAX, TCA_TDMWIN_TXTIME, a->txtime);
	if (a->given & GIVEN(TCA_TDMWIN_PLAN_VERSION))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_PLAN_VERSION,
				 a->plan_version);
	if (a->given & GIVEN(TCA_TDMWIN_LIMIT))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_LIMIT, a->limit);
	if (a->given & GIVEN(TCA_TDMWIN_LEASE))
		err |= addattr64(n, TDMWIN_MSG_MAX, TCA_TDMWIN_LEASE, a->lease);
	if (a->given & GIVEN(TCA_TDMWIN_RENEW))
		err |= addattr_l(n, TDMWIN_MSG_MAX, TCA_TDMWIN_RENEW, NULL, 0);
	if (a->given & GIVEN(TCA_TDMWIN_UNCONFIRMED))
		err |= addattr8(n, TDMWIN_MSG_MAX, TCA_TDMWIN_UNCONFIRMED, 1);
	if (a->given & GIVEN(TCA_TDMWIN_CONFIRM))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_CONFIRM,
				 a->confirm);
	if (a->given & GIVEN(TCA_TDMWIN_ABORT))
		err |= addattr32(n, TDMWIN_MSG_MAX, TCA_TDMWIN_ABORT, a->abort);
	addattr_nest_end(n, opts);
	return err;
}

static int tdmwin_parse_opt(struct qdisc_util *qu, int argc, char **argv,
			    struct nlmsghdr *n, const char *dev)
{
	struct tdmwin_args a = { 0 };

	(void)qu;
	(void)dev;
	if (parse_args(&a, argc, argv) || resolve_base(&a))
		return -1;
	if (add_options(n, &a)) {
		fprintf(stderr, "tdmwin: options do not fit in one netlink message\n");
		return -1;
	}
	return 0;
}

/* ---- print ------------------------------------------------------------- */

static bool has_attr(const struct rtattr *rta, size_t len)
{
	return rta && RTA_PAYLOAD(rta) >= len;
}

/* JSON: raw ns under key; text: fmt with the time in a readable unit. */
static void print_ns(const char *key, const char *fmt, __u64 ns)
{
	char buf[32];

	print_u64(PRINT_JSON, key, NULL, ns);
	print_string(PRINT_FP, NULL, fmt, sprint_ns(ns, buf, sizeof(buf)));
}

static void print_ns_attr(const struct rtattr *rta, const char *key,
			  const char *fmt)
{
	if (has_attr(rta, sizeof(__u64)))
		print_ns(key, fmt, rta_getattr_u64(rta));
}

static void print_guard(const struct rtattr *rta)
{
	if (has_attr(rta, sizeof(__u32)))
		print_ns("guard", "guard %s ", rta_getattr_u32(rta));
}

static void print_base_time(const struct rtattr *rta)
{
	if (has_attr(rta, sizeof(__s64)))
		print_s64(PRINT_ANY, "base_time", "base-time %" PRId64 " ",
			  rta_getattr_s64(rta));
}

static void print_plan_version(const struct rtattr *rta)
{
	if (has_attr(rta, sizeof(__u32)))
		print_uint(PRINT_ANY, "plan_version", "plan-version %u ",
			   rta_getattr_u32(rta));
}

static void print_clockid(const struct rtattr *rta)
{
	char buf[16];

	if (has_attr(rta, sizeof(__s32)))
		print_string(PRINT_ANY, "clockid", "clockid %s ",
			     sprint_clockid(rta_getattr_s32(rta), buf,
					    sizeof(buf)));
}

/* link-speed 10000Mbit, or link-speed auto (10000Mbit) from ethtool. */
static void print_link_speed(struct rtattr *tb[])
{
	const struct rtattr *conf = tb[TCA_TDMWIN_LINK_SPEED];
	const struct rtattr *eff = tb[TCA_TDMWIN_EFF_LINK_SPEED];
	__u32 mbit = 0;

	if (has_attr(conf, sizeof(__u32))) {
		mbit = rta_getattr_u32(conf);
		print_uint(PRINT_JSON, "link_speed", NULL, mbit);
		if (mbit)
			print_uint(PRINT_FP, NULL, "link-speed %uMbit ", mbit);
		else
			print_string(PRINT_FP, NULL, "link-speed %s ", "auto");
	}
	if (has_attr(eff, sizeof(__u32))) {
		print_uint(PRINT_JSON, "eff_link_speed", NULL,
			   rta_getattr_u32(eff));
		if (mbit != rta_getattr_u32(eff))
			print_uint(PRINT_FP, NULL, "(%uMbit) ",
				   rta_getattr_u32(eff));
	}
}

/* bypass-prio 5,7 or none; JSON: "bypass_prios": [5, 7]. */
static void print_bypass_prios(const struct rtattr *rta)
{
	unsigned int prio;
	bool first = true;
	__u32 mask;

	if (!has_attr(rta, sizeof(__u32)))
		return;
	mask = rta_getattr_u32(rta);
	print_string(PRINT_FP, NULL, "%s", "bypass-prio ");
	open_json_array(PRINT_JSON, "bypass_prios");
	for (prio = 0; prio < 32; prio++) {
		if (!(mask & (1U << prio)))
			continue;
		print_uint(PRINT_ANY, NULL, first ? "%u" : ",%u", prio);
		first = false;
	}
	close_json_array(PRINT_JSON, NULL);
	print_string(PRINT_FP, NULL, "%s ", first ? "none" : "");
}

/*
 * windows 0ns+1ms 2200us+500us class 3; JSON: [{"offset": 0, "length":
 * ...}, {..., "class": 3}]: the class of a window that is not 1:1's.
 */
static void print_windows(struct rtattr *list)
{
	struct rtattr *wtb[TCA_TDMWIN_WIN_MAX + 1];
	struct rtattr *w;
	int rem;

	if (!list)
		return;
	print_string(PRINT_FP, NULL, "%s", "windows ");
	open_json_array(PRINT_JSON, "windows");
	for (w = RTA_DATA(list), rem = RTA_PAYLOAD(list); RTA_OK(w, rem);
	     w = RTA_NEXT(w, rem)) {
		if ((w->rta_type & NLA_TYPE_MASK) != TCA_TDMWIN_WINDOW)
			continue;
		parse_rtattr_nested(wtb, TCA_TDMWIN_WIN_MAX, w);
		open_json_object(NULL);
		print_ns_attr(wtb[TCA_TDMWIN_WIN_OFFSET], "offset", "%s+");
		print_ns_attr(wtb[TCA_TDMWIN_WIN_LENGTH], "length", "%s ");
		if (wtb[TCA_TDMWIN_WIN_CLASS] &&
		    RTA_PAYLOAD(wtb[TCA_TDMWIN_WIN_CLASS]) >= sizeof(__u32))
			print_uint(PRINT_ANY, "class", "class %u ",
				   rta_getattr_u32(wtb[TCA_TDMWIN_WIN_CLASS]));
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

/* The plan that waits for its base time. */
static void print_unconfirmed(const struct rtattr *rta)
{
	bool on = has_attr(rta, sizeof(__u8)) && rta_getattr_u8(rta);

	print_bool(PRINT_JSON, "unconfirmed", NULL, on);
	if (on)
		print_string(PRINT_FP, NULL, "%s", "unconfirmed ");
}

/* lease 500ms left 320ms | lease 500ms ran-out 1200ms ago */
static void print_lease(struct rtattr *tb[])
{
	const struct rtattr *rta = tb[TCA_TDMWIN_LEASE];
	char buf[64];
	__s64 left;

	if (!has_attr(rta, sizeof(__u64)))
		return;
	print_ns("lease", "lease %s ", rta_getattr_u64(rta));
	rta = tb[TCA_TDMWIN_LEASE_LEFT];
	if (!has_attr(rta, sizeof(__s64)))
		return;
	left = rta_getattr_s64(rta);
	print_s64(PRINT_JSON, "lease_left", NULL, left);
	/* In whole milliseconds: it changes while one reads it. */
	if (left > 0)
		print_string(PRINT_FP, NULL, "left %s ",
			     sprint_ns((__u64)left / 1000000 * 1000000, buf,
				       sizeof(buf)));
	else
		print_string(PRINT_FP, NULL, "ran-out %s ago ",
			     sprint_ns(-(__u64)left / 1000000 * 1000000, buf,
				       sizeof(buf)));
}

static void print_pending(struct rtattr *nest)
{
	struct rtattr *tb[TCA_TDMWIN_MAX + 1];

	parse_rtattr_nested(tb, TCA_TDMWIN_MAX, nest);
	print_nl();
	print_string(PRINT_FP, NULL, "%s", "\tpending ");
	open_json_object("pending");
	print_plan_version(tb[TCA_TDMWIN_PLAN_VERSION]);
	print_base_time(tb[TCA_TDMWIN_BASE_TIME]);
	print_ns_attr(tb[TCA_TDMWIN_CYCLE_TIME], "cycle_time", "cycle-time %s ");
	print_guard(tb[TCA_TDMWIN_GUARD]);
	print_unconfirmed(tb[TCA_TDMWIN_UNCONFIRMED]);
	print_windows(tb[TCA_TDMWIN_WINDOWS]);
	close_json_object();
}

/*
 * The counters per window slot come in the options (TCA_TDMWIN_SLOTS) but
 * are counters: tc prints them under -s only, after the xstats.  tc calls
 * print_qopt and then, with -s, print_xstats for the same message, so
 * print_qopt keeps where they are for print_xstats, which forgets it.
 */
static const struct rtattr *slots_seen;

static int tdmwin_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt)
{
	struct rtattr *tb[TCA_TDMWIN_MAX + 1];
	const struct rtattr *rta;

	(void)qu;
	(void)f;
	slots_seen = NULL;
	if (!opt)
		return 0;
	parse_rtattr_nested(tb, TCA_TDMWIN_MAX, opt);
	slots_seen = tb[TCA_TDMWIN_SLOTS];

	print_clockid(tb[TCA_TDMWIN_CLOCKID]);
	print_ns_attr(tb[TCA_TDMWIN_CYCLE_TIME], "cycle_time", "cycle-time %s ");
	print_base_time(tb[TCA_TDMWIN_BASE_TIME]);
	print_plan_version(tb[TCA_TDMWIN_PLAN_VERSION]);
	print_link_speed(tb);
	print_guard(tb[TCA_TDMWIN_GUARD]);
	print_bypass_prios(tb[TCA_TDMWIN_BYPASS_PRIOS]);
	rta = tb[TCA_TDMWIN_BYPASS_PTP];
	if (has_attr(rta, sizeof(__u8)))
		print_on_off(PRINT_ANY, "bypass_ptp", "bypass-ptp %s ",
			     rta_getattr_u8(rta));
	rta = tb[TCA_TDMWIN_WIRE_CLOCK];
	if (has_attr(rta, sizeof(__u8)))
		print_on_off(PRINT_ANY, "wire_clock", "wire-clock %s ",
			     rta_getattr_u8(rta));
	rta = tb[TCA_TDMWIN_TXTIME];
	if (has_attr(rta, sizeof(__u8)))
		print_on_off(PRINT_ANY, "txtime", "txtime %s ",
			     rta_getattr_u8(rta));
	rta = tb[TCA_TDMWIN_LIMIT];
	if (has_attr(rta, sizeof(__u32)))
		print_uint(PRINT_ANY, "limit", "limit %u ",
			   rta_getattr_u32(rta));
	rta = tb[TCA_TDMWIN_HOLD];
	if (has_attr(rta, sizeof(__u8))) {
		print_bool(PRINT_JSON, "hold", NULL, rta_getattr_u8(rta));
		if (rta_getattr_u8(rta))
			print_string(PRINT_FP, NULL, "%s", "hold ");
	}
	print_lease(tb);
	if (tb[TCA_TDMWIN_UNCONFIRMED])
		print_unconfirmed(tb[TCA_TDMWIN_UNCONFIRMED]);
	if (tb[TCA_TDMWIN_WINDOWS]) {
		print_nl();
		print_string(PRINT_FP, NULL, "%s", "\t");
		print_windows(tb[TCA_TDMWIN_WINDOWS]);
	}
	if (tb[TCA_TDMWIN_PENDING])
		print_pending(tb[TCA_TDMWIN_PENDING]);
	return 0;
}

/* Did the kernel's struct (len bytes) include this field?  Fields are only
 * ever appended, so an older kernel sends a prefix of ours.
 */
#define XSTAT_SENT(len, field)						\
	((len) >= offsetof(struct tc_tdmwin_xstats, field) +		\
		  sizeof(((struct tc_tdmwin_xstats *)0)->field))

/* JSON key: the field's name, as in the uapi struct. */
#define print_xstat(st, len, field, fmt)				\
	do {								\
		if (XSTAT_SENT(len, field))				\
			print_u64(PRINT_ANY, #field, fmt, (st)->field);	\
	} while (0)

/* open-latency min 1200ns mean 3400ns max 9000ns (120 samples) */
static void print_open_latency(const struct tc_tdmwin_xstats *st, size_t len)
{
	__u64 n, mean;

	if (!XSTAT_SENT(len, open_latency_count))
		return;
	n = st->open_latency_count;
	mean = n ? st->open_latency_sum / n : 0;
	print_string(PRINT_FP, NULL, "%s", " open-latency");
	print_u64(PRINT_JSON, "open_latency_min", NULL, st->open_latency_min);
	print_u64(PRINT_JSON, "open_latency_max", NULL, st->open_latency_max);
	print_u64(PRINT_JSON, "open_latency_sum", NULL, st->open_latency_sum);
	print_u64(PRINT_JSON, "open_latency_count", NULL, n);
	print_u64(PRINT_JSON, "open_latency_mean", NULL, mean);
	if (n) {
		print_u64(PRINT_FP, NULL, " min %" PRIu64 "ns",
			  st->open_latency_min);
		print_u64(PRINT_FP, NULL, " mean %" PRIu64 "ns", mean);
		print_u64(PRINT_FP, NULL, " max %" PRIu64 "ns",
			  st->open_latency_max);
	}
	print_u64(PRINT_FP, NULL, " (%" PRIu64 " samples)", n);
}

static void print_slot_u64(struct rtattr *tb[], int type, const char *key,
			   const char *fmt)
{
	if (has_attr(tb[type], sizeof(__u64)))
		print_u64(PRINT_ANY, key, fmt, rta_getattr_u64(tb[type]));
}

/*
 * slot 0: sent 120 pkts 180000 bytes in 40 windows wire-deferrals 0
 *   guard-deferrals 3 open-latency mean 250000ns max 900000ns (40 samples)
 *   margin-min 12000ns
 * JSON: "slots": [{"index": 0, "frames": 120, ...}], as the attributes.
 */
static void print_slot(struct rtattr *nest)
{
	struct rtattr *tb[TCA_TDMWIN_SLOT_MAX + 1];
	__u64 n = 0, sum = 0;

	parse_rtattr_nested(tb, TCA_TDMWIN_SLOT_MAX, nest);
	print_nl();
	open_json_object(NULL);
	if (has_attr(tb[TCA_TDMWIN_SLOT_INDEX], sizeof(__u32)))
		print_uint(PRINT_ANY, "index", " slot %u:",
			   rta_getattr_u32(tb[TCA_TDMWIN_SLOT_INDEX]));
	print_slot_u64(tb, TCA_TDMWIN_SLOT_FRAMES, "frames", " sent %" PRIu64 " pkts");
	print_slot_u64(tb, TCA_TDMWIN_SLOT_BYTES, "bytes", " %" PRIu64 " bytes");
	print_slot_u64(tb, TCA_TDMWIN_SLOT_OPENS, "opens", " in %" PRIu64 " windows");
	print_slot_u64(tb, TCA_TDMWIN_SLOT_WIRE_DEFERRALS, "wire_deferrals",
		       " wire-deferrals %" PRIu64);
	print_slot_u64(tb, TCA_TDMWIN_SLOT_GUARD_DEFERRALS, "guard_deferrals",
		       " guard-deferrals %" PRIu64);
	if (has_attr(tb[TCA_TDMWIN_SLOT_LATENCY_COUNT], sizeof(__u64)) &&
	    has_attr(tb[TCA_TDMWIN_SLOT_LATENCY_SUM], sizeof(__u64))) {
		n = rta_getattr_u64(tb[TCA_TDMWIN_SLOT_LATENCY_COUNT]);
		sum = rta_getattr_u64(tb[TCA_TDMWIN_SLOT_LATENCY_SUM]);
		print_u64(PRINT_JSON, "open_latency_count", NULL, n);
		print_u64(PRINT_JSON, "open_latency_sum", NULL, sum);
		print_u64(PRINT_JSON, "open_latency_mean", NULL, n ? sum / n : 0);
		if (n)
			print_u64(PRINT_FP, NULL, " open-latency mean %" PRIu64 "ns",
				  sum / n);
	}
	if (has_attr(tb[TCA_TDMWIN_SLOT_LATENCY_MAX], sizeof(__u64))) {
		print_u64(PRINT_JSON, "open_latency_max", NULL,
			  rta_getattr_u64(tb[TCA_TDMWIN_SLOT_LATENCY_MAX]));
		if (n)
			print_u64(PRINT_FP, NULL, " max %" PRIu64 "ns",
				  rta_getattr_u64(tb[TCA_TDMWIN_SLOT_LATENCY_MAX]));
	}
	if (tb[TCA_TDMWIN_SLOT_LATENCY_COUNT])
		print_u64(PRINT_FP, NULL, " (%" PRIu64 " samples)", n);
	print_slot_u64(tb, TCA_TDMWIN_SLOT_MARGIN_MIN, "margin_min",
		       " margin-min %" PRIu64 "ns");
	close_json_object();
}

/* slots of plan-version 3:  then one line per slot (print_slot). */
static void print_slots(const struct rtattr *slots)
{
	struct rtattr *tb[TCA_TDMWIN_SLOTS_MAX + 1];
	struct rtattr *sl;
	int rem;

	parse_rtattr_nested(tb, TCA_TDMWIN_SLOTS_MAX, slots);
	print_nl();
	if (has_attr(tb[TCA_TDMWIN_SLOTS_VERSION], sizeof(__u32)))
		print_uint(PRINT_ANY, "slots_plan_version",
			   " slots of plan-version %u:",
			   rta_getattr_u32(tb[TCA_TDMWIN_SLOTS_VERSION]));
	open_json_array(PRINT_JSON, "slots");
	for (sl = RTA_DATA(slots), rem = RTA_PAYLOAD(slots); RTA_OK(sl, rem);
	     sl = RTA_NEXT(sl, rem))
		if ((sl->rta_type & NLA_TYPE_MASK) == TCA_TDMWIN_SLOTS_SLOT)
			print_slot(sl);
	close_json_array(PRINT_JSON, NULL);
}

static int tdmwin_print_xstats(struct qdisc_util *qu, FILE *f,
			       struct rtattr *xstats)
{
	const struct rtattr *slots = slots_seen;
	struct tc_tdmwin_xstats _st = { 0 }, *st = &_st;
	size_t len;

	(void)qu;
	(void)f;
	slots_seen = NULL;
	if (!xstats)
		return 0;
	len = RTA_PAYLOAD(xstats);
	memcpy(st, RTA_DATA(xstats), len < sizeof(*st) ? len : sizeof(*st));

	open_json_object("xstats");
	print_xstat(st, len, windows_opened, " windows %" PRIu64);
	print_xstat(st, len, window_packets, " sent %" PRIu64 " pkts");
	print_xstat(st, len, window_bytes, " %" PRIu64 " bytes");
	print_xstat(st, len, bypass_packets, " bypass %" PRIu64 " pkts");
	print_xstat(st, len, bypass_bytes, " %" PRIu64 " bytes");
	if (XSTAT_SENT(len, guard_deferrals))
		print_nl();
	print_xstat(st, len, guard_deferrals, " guard-deferrals %" PRIu64);
	print_xstat(st, len, oversize_drops, " oversize-drops %" PRIu64);
	print_xstat(st, len, hold_drops, " hold-drops %" PRIu64);
	print_xstat(st, len, nowindow_drops, " nowindow-drops %" PRIu64);
	print_xstat(st, len, plan_switches, " plan-switches %" PRIu64);
	if (XSTAT_SENT(len, wire_backlog))
		print_nl();
	print_xstat(st, len, wire_deferrals, " wire-deferrals %" PRIu64);
	print_xstat(st, len, wire_backlog, " wire-backlog %" PRIu64 "ns");
	print_xstat(st, len, wire_backlog_max, " max %" PRIu64 "ns");
	print_xstat(st, len, txtime_drops, " txtime-drops %" PRIu64);
	if (XSTAT_SENT(len, lease_expiries))
		print_nl();
	print_xstat(st, len, lease_expiries, " lease-expiries %" PRIu64);
	print_xstat(st, len, unconfirmed_holds, " unconfirmed-holds %" PRIu64);
	print_xstat(st, len, pending_aborts, " pending-aborts %" PRIu64);
	if (XSTAT_SENT(len, open_latency_count))
		print_nl();
	print_open_latency(st, len);

	if (XSTAT_SENT(len, plan_version))
		print_uint(PRINT_ANY, "plan_version", " plan-version %u",
			   st->plan_version);
	if (XSTAT_SENT(len, pending)) {
		print_uint(PRINT_JSON, "pending", NULL, st->pending);
		print_uint(PRINT_JSON, "pending_version", NULL,
			   st->pending_version);
		print_s64(PRINT_JSON, "pending_base_time", NULL,
			  st->pending_base_time);
		if (st->pending) {
			print_uint(PRINT_FP, NULL, " pending %u",
				   st->pending_version);
			print_s64(PRINT_FP, NULL, " at %" PRId64,
				  st->pending_base_time);
		}
	}
	if (XSTAT_SENT(len, hold)) {
		print_uint(PRINT_JSON, "hold", NULL, st->hold);
		if (st->hold)
			print_string(PRINT_FP, NULL, "%s", " hold");
	}
	if (XSTAT_SENT(len, lease_held)) {
		print_uint(PRINT_JSON, "lease_held", NULL, st->lease_held);
		if (st->lease_held)
			print_string(PRINT_FP, NULL, "%s", " lease-held");
	}
	if (XSTAT_SENT(len, pending_unconfirmed)) {
		print_uint(PRINT_JSON, "pending_unconfirmed", NULL,
			   st->pending_unconfirmed);
		if (st->pending_unconfirmed)
			print_string(PRINT_FP, NULL, "%s", " unconfirmed");
	}
	if (slots)
		print_slots(slots);
	close_json_object();
	return 0;
}

struct qdisc_util tdmwin_qdisc_util = {
	.id		= "tdmwin",
	.parse_qopt	= tdmwin_parse_opt,
	.print_qopt	= tdmwin_print_opt,
	.print_xstats	= tdmwin_print_xstats,
};
