// SPDX-License-Identifier: GPL-2.0
/*
 * tdmctl doctor: the checks (one small pure function each, from the facts
 * that doctor_facts.c gathered), the parsers they need, and the output.
 * See doctor.h and tdmctl(8), section DOCTOR.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/net_tstamp.h>
#include <linux/rtnetlink.h>

#include "doctor.h"
#include "tdm_cfg.h"
#include "tdm_json.h"
#include "tdm_util.h"

/* ---- CPU sets ------------------------------------------------------------- */

bool doc_cpuset_test(const struct doc_cpuset *s, unsigned int cpu)
{
	return cpu < DOC_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

void doc_cpuset_set(struct doc_cpuset *s, unsigned int cpu)
{
	if (cpu < DOC_MAX_CPUS)
		s->bits[cpu / 64] |= 1ULL << (cpu % 64);
}

unsigned int doc_cpuset_count(const struct doc_cpuset *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < DOC_MAX_CPUS / 64; i++)
		n += (unsigned int)__builtin_popcountll(s->bits[i]);
	return n;
}

bool doc_cpuset_subset(const struct doc_cpuset *a, const struct doc_cpuset *b)
{
	unsigned int i;

	for (i = 0; i < DOC_MAX_CPUS / 64; i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

static unsigned long parse_cpu(const char **p, bool *ok)
{
	char *end;
	unsigned long v;

	if (**p < '0' || **p > '9') {
		*ok = false;
		return 0;
	}
	v = strtoul(*p, &end, 10);
	if (v >= DOC_MAX_CPUS)
		*ok = false;
	*p = end;
	return v;
}

int doc_cpulist_parse(const char *s, struct doc_cpuset *set)
{
	const char *p = s;
	bool ok = true;

	memset(set, 0, sizeof(*set));
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\n' || !*p)
		return 0;	/* empty list */
	for (;;) {
		unsigned long a = parse_cpu(&p, &ok), b = a, c;

		if (!ok)
			return -1;
		if (*p == '-') {
			p++;
			b = parse_cpu(&p, &ok);
			if (!ok || b < a)
				return -1;
		}
		for (c = a; c <= b; c++)
			doc_cpuset_set(set, (unsigned int)c);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		return *p ? -1 : 0;
	}
}

void doc_cpulist_fmt(const struct doc_cpuset *set, char *buf, size_t len)
{
	unsigned int c = 0, a;
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	while (c < DOC_MAX_CPUS) {
		if (!doc_cpuset_test(set, c)) {
			c++;
			continue;
		}
		a = c;
		while (c + 1 < DOC_MAX_CPUS && doc_cpuset_test(set, c + 1))
			c++;
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%u", n ? "," : "", a);
		if (c > a && n < len)
			n += (size_t)snprintf(buf + n, len - n, "-%u", c);
		c++;
	}
}

/* ---- /proc parsers --------------------------------------------------------- */

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* ifname occurs in [s, e) as a whole token. */
static bool has_token(const char *s, const char *e, const char *ifname)
{
	size_t l = strlen(ifname);
	const char *p;

	if (!l)
		return false;
	for (p = s; p + l <= e; p++) {
		if (memcmp(p, ifname, l))
			continue;
		if ((p == s || !is_name_char(p[-1])) &&
		    (p + l == e || !is_name_char(p[l])))
			return true;
	}
	return false;
}

unsigned int doc_irqs_from_interrupts(const char *text, const char *ifname,
				      unsigned int *irqs, unsigned int max)
{
	const char *line = text;
	unsigned int n = 0;

	while (line && *line && n < max) {
		const char *eol = strchr(line, '\n'), *p = line, *name;
		char *end;
		unsigned long irq;

		if (!eol)
			eol = line + strlen(line);
		while (p < eol && *p == ' ')
			p++;
		irq = strtoul(p, &end, 10);
		if (end != p && end < eol && *end == ':' && irq <= 0xffffff) {
			/* The action names follow the counters and the chip
			 * columns; matching the whole rest is enough, since
			 * counters are digits and chip names are not
			 * interface names.
			 */
			name = end + 1;
			if (has_token(name, eol, ifname))
				irqs[n++] = (unsigned int)irq;
		}
		line = *eol ? eol + 1 : NULL;
	}
	return n;
}

int doc_default_iface(const char *route, char *ifname, size_t len)
{
	const char *line = strchr(route, '\n');	/* skip the header */

	while (line && *++line) {
		char name[IF_NAMESIZE + 1];
		unsigned long dst, flags, mask;

		if (sscanf(line, "%16s %lx %*x %lx %*d %*d %*d %lx",
			   name, &dst, &flags, &mask) == 4 &&
		    dst == 0 && mask == 0 && (flags & 1 /* RTF_UP */)) {
			return tdm_strlcpy(ifname, name, len);
		}
		line = strchr(line, '\n');
	}
	return -1;
}

/* ---- the DCB answer --------------------------------------------------------- */

int doc_dcb_pfc_parse(const struct nlmsghdr *nlh, uint8_t *cap, uint8_t *en)
{
	const struct nlattr *a, *b;
	struct ieee_pfc pfc;
	int found = 0;

	if (nlh->nlmsg_type != RTM_GETDCB ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct dcbmsg)))
		return 0;
	mnl_attr_for_each(a, nlh, sizeof(struct dcbmsg)) {
		if (mnl_attr_get_type(a) != DCB_ATTR_IEEE)
			continue;
		mnl_attr_for_each_nested(b, a) {
			if (mnl_attr_get_type(b) != DCB_ATTR_IEEE_PFC ||
			    mnl_attr_get_payload_len(b) < sizeof(pfc))
				continue;
			memcpy(&pfc, mnl_attr_get_payload(b), sizeof(pfc));
			*cap = pfc.pfc_cap;
			*en = pfc.pfc_en;
			found = 1;
		}
	}
	return found;
}

/* ---- the checks --------------------------------------------------------------- */

#define SEEN(...)	tdm_set_err(o->seen, sizeof(o->seen), __VA_ARGS__)
#define WANT(...)	tdm_set_err(o->want, sizeof(o->want), __VA_ARGS__)
#define FIX(...)	tdm_set_err(o->fix, sizeof(o->fix), __VA_ARGS__)

static bool is_sender(const struct doctor_facts *f)
{
	return f->role == DOC_SENDER;
}

static bool hw_stamps(const struct doctor_facts *f)
{
	const uint32_t need = SOF_TIMESTAMPING_TX_HARDWARE |
			      SOF_TIMESTAMPING_RX_HARDWARE |
			      SOF_TIMESTAMPING_RAW_HARDWARE;

	return f->ts.have && (f->ts.so_timestamping & need) == need &&
	       f->ts.phc_index >= 0;
}

static void ptp4l_cmd(const struct doctor_facts *f, struct doc_finding *o)
{
	FIX("ptp4l -i %s%s%s -m", f->ifname, f->ts.have && !hw_stamps(f) ?
	    " -S" : "", is_sender(f) ? " -s" : "");
}

static void check_ptp_port(const struct doctor_facts *f, struct doc_finding *o)
{
	int ps = f->ptp.st.port_state;

	if (!f->ptp.running) {
		o->sev = DOC_FAIL;
		SEEN("ptp4l is not running (%s)", f->ptp.err);
		WANT("ptp4l synchronising %s's clock to the grandmaster", f->ifname);
		ptp4l_cmd(f, o);
		return;
	}
	if (!f->ptp.have) {
		o->sev = DOC_FAIL;
		SEEN("ptp4l does not answer at %s: %s", f->ptp_socket, f->ptp.err);
		WANT("ptp4l answering management queries on its UNIX socket");
		FIX("pmc -u -b 0 -s %s 'GET PORT_DATA_SET'", f->ptp_socket);
		return;
	}
	SEEN("port state %s", tdm_port_state_name(ps));
	WANT("SLAVE%s", is_sender(f) ? "" : " (or MASTER if this node is the grandmaster)");
	switch (ps) {
	case TDM_PS_SLAVE:
		o->sev = DOC_OK;
		break;
	case TDM_PS_MASTER:
	case TDM_PS_GRAND_MASTER:
		o->sev = is_sender(f) ? DOC_WARN : DOC_OK;
		if (is_sender(f))
			ptp4l_cmd(f, o);
		break;
	case TDM_PS_FAULTY:
	case TDM_PS_DISABLED:
		o->sev = DOC_FAIL;
		FIX("journalctl -u ptp4l -n 50");
		break;
	default:
		o->sev = DOC_WARN;	/* LISTENING, UNCALIBRATED: not yet */
		FIX("pmc -u -b 0 -s %s 'GET PORT_DATA_SET'", f->ptp_socket);
		break;
	}
}

static void check_ptp_offset(const struct doctor_facts *f, struct doc_finding *o)
{
	int64_t off = f->ptp.st.master_offset;
	uint64_t a = off < 0 ? (uint64_t)-off : (uint64_t)off;

	if (!f->ptp.running || !f->ptp.have) {
		o->sev = DOC_SKIP;
		SEEN("no offset: ptp4l is not answering");
		return;
	}
	if (f->ptp.st.port_state != TDM_PS_SLAVE || !f->ptp.st.time_status_ok) {
		o->sev = DOC_SKIP;
		SEEN("no offset: the port is %s, not SLAVE",
		     tdm_port_state_name(f->ptp.st.port_state));
		return;
	}
	SEEN("offset from master %" PRId64 " ns", off);
	WANT("|offset| <= %d ns", DOC_PTP_OFFSET_OK_NS);
	if (a <= DOC_PTP_OFFSET_OK_NS) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = a <= DOC_PTP_OFFSET_FAIL_NS ? DOC_WARN : DOC_FAIL;
	WANT("|offset| <= %d ns: hardware timestamps, a PTP-aware switch, a converged servo",
	     DOC_PTP_OFFSET_OK_NS);
	FIX("pmc -u -b 0 -s %s 'GET TIME_STATUS_NP'", f->ptp_socket);
}

static void check_ptp_phc2sys(const struct doctor_facts *f, struct doc_finding *o)
{
	if (!f->ts.have || !hw_stamps(f)) {
		o->sev = DOC_SKIP;
		SEEN("no PTP hardware clock on %s: ptp4l -S steers the system clock itself",
		     f->ifname);
		return;
	}
	if (f->phc2sys) {
		o->sev = DOC_OK;
		SEEN("phc2sys is running");
		return;
	}
	o->sev = f->ptp.running ? DOC_FAIL : DOC_WARN;
	SEEN("phc2sys is not running: the system clock (CLOCK_TAI of the qdisc) does not follow /dev/ptp%d",
	     f->ts.phc_index);
	WANT("phc2sys steering the system clock from the NIC's PTP clock");
	FIX("phc2sys -a -r -w");
}

static void check_phc_offset(const struct doctor_facts *f, struct doc_finding *o)
{
	int64_t off = f->phc.off.offset_ns;
	uint64_t a = off < 0 ? -(uint64_t)off : (uint64_t)off;

	if (!f->ts.have || f->ts.phc_index < 0) {
		o->sev = DOC_SKIP;
		SEEN("no PTP hardware clock on %s: nothing for phc2sys to keep the system clock on",
		     f->ifname);
		return;
	}
	if (!f->phc.have) {
		/* Not root: a fact we may not read, not a fault. */
		o->sev = f->phc.err_no == EACCES || f->phc.err_no == EPERM ?
			 DOC_SKIP : DOC_FAIL;
		SEEN("cannot read /dev/ptp%d: %s", f->ts.phc_index, f->phc.err);
		WANT("the PHC readable with PTP_SYS_OFFSET (as root)");
		return;
	}
	SEEN("/dev/ptp%d - CLOCK_TAI %" PRId64 " ns (%s, delay %" PRId64 " ns)",
	     f->ts.phc_index, off, tdm_phc_ioctl_name(f->phc.off.method),
	     f->phc.off.delay_ns);
	WANT("|offset| <= %d ns: phc2sys keeping the system clock on the PHC",
	     DOC_PHC_OFFSET_OK_NS);
	if (a <= DOC_PHC_OFFSET_OK_NS) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = a <= DOC_PHC_OFFSET_FAIL_NS ? DOC_WARN : DOC_FAIL;
	/* phc2sys runs: converging, stuck, or steering another clock. */
	if (f->phc2sys)
		FIX("journalctl -u 'phc2sys*' -n 50");
	else
		FIX("phc2sys -a -r -w");
}

static void check_tai(const struct doctor_facts *f, struct doc_finding *o)
{
	if (!f->tai.have) {
		o->sev = DOC_SKIP;
		SEEN("%s", f->tai.err);
		return;
	}
	SEEN("kernel TAI offset %d s", f->tai.tai);
	WANT("37 s (TAI - UTC), set from ptp4l's UTC offset");
	if (f->tai.tai != 0) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = DOC_FAIL;
	SEEN("kernel TAI offset is 0: CLOCK_TAI equals UTC, windows on CLOCK_TAI are 37 s off");
	FIX("phc2sys -a -r -w");
}

static void check_ts(const struct doctor_facts *f, struct doc_finding *o)
{
	if (!f->ts.have) {
		o->sev = DOC_SKIP;
		SEEN("no timestamping information for %s: %s", f->ifname, f->ts.err);
		return;
	}
	WANT("hardware TX and RX timestamps and a PTP hardware clock");
	if (hw_stamps(f)) {
		o->sev = DOC_OK;
		SEEN("hardware timestamps, PTP clock /dev/ptp%d", f->ts.phc_index);
		return;
	}
	o->sev = DOC_WARN;
	if (f->ts.so_timestamping & (SOF_TIMESTAMPING_TX_SOFTWARE |
				     SOF_TIMESTAMPING_RX_SOFTWARE))
		SEEN("software timestamps only (no PTP hardware clock): sync to tens of us at best");
	else
		SEEN("no timestamping at all");
	FIX("ptp4l -i %s -S -m", f->ifname);
}

static void check_link(const struct doctor_facts *f, struct doc_finding *o)
{
	if (!f->up) {
		o->sev = DOC_FAIL;
		SEEN("%s is not up", f->ifname);
		WANT("link up");
		FIX("ip link set dev %s up", f->ifname);
		return;
	}
	if (!f->link.have) {
		o->sev = DOC_SKIP;
		SEEN("link up, speed unknown: %s", f->link.err);
		return;
	}
	if (f->link.speed_mbps == 0 || f->link.speed_mbps == (uint32_t)-1) {
		o->sev = DOC_INFO;
		SEEN("link up, speed unknown");
		WANT("set the qdisc's link-speed explicitly");
		return;
	}
	SEEN("link up, %u Mbit/s, %s duplex", f->link.speed_mbps,
	     f->link.full ? "full" : "half");
	WANT("full duplex");
	o->sev = f->link.full ? DOC_OK : DOC_WARN;
	if (!f->link.full)
		FIX("ethtool -s %s duplex full autoneg on", f->ifname);
}

static const char *on_off(bool on)
{
	return on ? "on" : "off";
}

/* "PAUSE autoneg on rx on tx off; PFC on priorities 3-4", or what is unknown. */
static void flow_control_seen(const struct doctor_facts *f,
			      struct doc_finding *o)
{
	char pause[DOC_TEXT / 2], pfc[DOC_TEXT / 2], prios[32];
	struct doc_cpuset set;
	unsigned int p;

	if (f->pause.have)
		snprintf(pause, sizeof(pause), "PAUSE autoneg %s rx %s tx %s",
			 on_off(f->pause.autoneg), on_off(f->pause.rx),
			 on_off(f->pause.tx));
	else
		snprintf(pause, sizeof(pause), "PAUSE unknown (%.100s)", f->pause.err);
	memset(&set, 0, sizeof(set));
	for (p = 0; p < 8; p++)
		if (f->pfc.en & (1U << p))
			doc_cpuset_set(&set, p);
	doc_cpulist_fmt(&set, prios, sizeof(prios));
	if (!f->pfc.have)
		snprintf(pfc, sizeof(pfc), "PFC unknown (%.100s)", f->pfc.err);
	else if (prios[0])
		snprintf(pfc, sizeof(pfc), "PFC on priorities %s", prios);
	else
		snprintf(pfc, sizeof(pfc), "PFC off");
	SEEN("%s; %s", pause, pfc);
}

/*
 * Ethernet flow control.  A sender's NIC that obeys PAUSE (rx) or PFC
 * stops sending while the switch asks it to: the frames the qdisc released
 * leave later than the wire clock, which assumes the link sends at link
 * speed, booked them.  tx pause only pauses the switch's sending to this
 * node.  On a receiver it is the other way round, and a choice.
 */
static void check_flow_control(const struct doctor_facts *f,
			       struct doc_finding *o)
{
	bool rx = f->pause.have && f->pause.rx;
	bool tx = f->pause.have && f->pause.tx;
	bool pfc = f->pfc.have && f->pfc.en;
	char pause_fix[64] = "";

	flow_control_seen(f, o);
	if (!f->pause.have && !pfc) {
		o->sev = DOC_SKIP;
		return;
	}
	if (!is_sender(f)) {
		o->sev = tx || pfc ? DOC_INFO : DOC_OK;
		WANT("a choice: with tx pause or PFC this NIC stops the switch port when its receive buffers fill, so frames wait in the switch (and arrive later) instead of being dropped here");
		return;
	}
	WANT("PAUSE and PFC off: a paused NIC stops sending behind the qdisc's back, and the wire clock assumes that the link sends at link speed");
	if (rx || pfc)
		o->sev = DOC_WARN;
	else if (tx)
		o->sev = DOC_INFO;	/* pauses the switch, not this wire */
	else
		o->sev = DOC_OK;
	if (tx && !rx && !pfc)
		WANT("tx pause off: it does not stretch this node's own sending, but it stops the switch's sending to it (PTP included)");
	if (rx || tx)
		snprintf(pause_fix, sizeof(pause_fix),
			 "ethtool -A %s autoneg off rx off tx off", f->ifname);
	if (pfc)
		FIX("%s%sdcb pfc set dev %s prio-pfc all:off", pause_fix,
		    pause_fix[0] ? "; " : "", f->ifname);
	else
		FIX("%s", pause_fix);
}

static void check_ring(const struct doctor_facts *f, struct doc_finding *o,
		       bool rx)
{
	uint32_t cur = rx ? f->ring.rx : f->ring.tx;
	uint32_t max = rx ? f->ring.rx_max : f->ring.tx_max;
	const char *d = rx ? "rx" : "tx";
	bool matters = rx ? !is_sender(f) : is_sender(f);

	if (!f->ring.have) {
		o->sev = DOC_SKIP;
		SEEN("%s has no ring parameters: %s%s", f->ifname, f->ring.err,
		     f->virtual_dev ? " (virtual device)" : "");
		return;
	}
	if (!max) {
		o->sev = DOC_SKIP;
		SEEN("%s has no %s ring", f->ifname, d);
		return;
	}
	SEEN("%s ring %u of at most %u", d, cur, max);
	WANT("%s ring at its maximum (%u): bursts at line rate%s", d, max,
	     rx ? " must not overrun it" : " fill it while the gate is open");
	if (cur >= max) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = matters ? DOC_WARN : DOC_INFO;
	FIX("ethtool -G %s %s %u", f->ifname, d, max);
}

static void check_rx_ring(const struct doctor_facts *f, struct doc_finding *o)
{
	check_ring(f, o, true);
}

static void check_tx_ring(const struct doctor_facts *f, struct doc_finding *o)
{
	check_ring(f, o, false);
}

static void check_rx_coal(const struct doctor_facts *f, struct doc_finding *o)
{
	const struct doctor_facts *c = f;

	if (!f->coal.have) {
		o->sev = DOC_SKIP;
		SEEN("%s has no interrupt coalescing settings: %s", f->ifname,
		     f->coal.err);
		return;
	}
	SEEN("adaptive-rx %s rx-usecs %u rx-frames %u",
	     c->coal.adaptive_rx ? "on" : "off", c->coal.rx_usecs,
	     c->coal.rx_frames);
	WANT("adaptive-rx off rx-usecs 0 rx-frames 0: every packet interrupts at once (fewest drops)");
	if (!c->coal.adaptive_rx && !c->coal.rx_usecs && c->coal.rx_frames <= 1) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = is_sender(f) ? DOC_INFO : DOC_WARN;
	FIX("ethtool -C %s adaptive-rx off rx-usecs 0 rx-frames 0", f->ifname);
}

static void check_tx_coal(const struct doctor_facts *f, struct doc_finding *o)
{
	if (!f->coal.have) {
		o->sev = DOC_SKIP;
		SEEN("%s has no interrupt coalescing settings: %s", f->ifname,
		     f->coal.err);
		return;
	}
	SEEN("adaptive-tx %s tx-usecs %u tx-frames %u",
	     f->coal.adaptive_tx ? "on" : "off", f->coal.tx_usecs,
	     f->coal.tx_frames);
	WANT("adaptive-tx off tx-usecs 16 tx-frames 16: completions free the ring in time");
	if (!f->coal.adaptive_tx && f->coal.tx_usecs <= 16 &&
	    f->coal.tx_frames <= 16) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = is_sender(f) ? DOC_WARN : DOC_INFO;
	FIX("ethtool -C %s adaptive-tx off tx-usecs 16 tx-frames 16", f->ifname);
}

static void check_txqlen(const struct doctor_facts *f, struct doc_finding *o)
{
	if (!f->txqlen.have) {
		o->sev = DOC_SKIP;
		SEEN("%s", f->txqlen.err);
		return;
	}
	SEEN("txqueuelen %u", f->txqlen.len);
	WANT("txqueuelen >= %d: the qdisc holds a closed gate's worth of packets (its default limit)",
	     DOC_TXQLEN_MIN);
	if (f->txqlen.len >= DOC_TXQLEN_MIN) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = DOC_WARN;
	FIX("ip link set dev %s txqueuelen %d", f->ifname, DOC_TXQLEN_MIN);
}

static void check_bql(const struct doctor_facts *f, struct doc_finding *o)
{
	uint64_t want;
	unsigned int i, unlimited = 0, big = 0;

	if (f->virtual_dev) {
		o->sev = DOC_SKIP;
		SEEN("%s is a virtual device: no driver queue, BQL unused", f->ifname);
		return;
	}
	if (!f->bql.have || !f->bql.ntxq) {
		o->sev = DOC_SKIP;
		SEEN("no byte queue limits: %s", f->bql.have ? "no TX queues" : f->bql.err);
		return;
	}
	/* The bytes the line sends in DOC_BQL_US, at least two full frames. */
	want = (uint64_t)(f->link.have && f->link.speed_mbps &&
			  f->link.speed_mbps != (uint32_t)-1 ?
			  f->link.speed_mbps : 10000) * DOC_BQL_US / 8;
	if (want < 3028)
		want = 3028;
	for (i = 0; i < f->bql.ntxq; i++) {
		if (f->bql.limit_max[i] >= DOC_BQL_UNLIMITED)
			unlimited++;
		else if (f->bql.limit_max[i] > want)
			big++;
	}
	if (unlimited)
		SEEN("limit_max unlimited on %u of %u TX queues", unlimited,
		     f->bql.ntxq);
	else if (big)
		SEEN("limit_max above %" PRIu64 " bytes on %u of %u TX queues",
		     want, big, f->bql.ntxq);
	else
		SEEN("limit_max <= %" PRIu64 " bytes on all %u TX queues", want,
		     f->bql.ntxq);
	WANT("limit_max about %" PRIu64 " bytes (%d us at line rate): bypass frames (PTP) wait behind what the NIC holds, and that much leaves late if the wire is slower than the qdisc's link speed",
	     want, DOC_BQL_US);
	if (!unlimited && !big) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = is_sender(f) ? DOC_WARN : DOC_INFO;
	FIX("for q in /sys/class/net/%s/queues/tx-*/byte_queue_limits; do echo %" PRIu64 " > $q/limit_max; done",
	    f->ifname, want);
}

static void check_cstates(const struct doctor_facts *f, struct doc_finding *o)
{
	unsigned int i, deep = 0;
	size_t n = 0;

	if (!f->idle.have) {
		o->sev = DOC_SKIP;
		SEEN("%s", f->idle.err);
		return;
	}
	WANT("no idle state with an exit latency above %d us enabled (or C-states off in the BIOS)",
	     DOC_CSTATE_MAX_US);
	for (i = 0; i < f->idle.nstates; i++) {
		if (f->idle.st[i].latency_us <= DOC_CSTATE_MAX_US ||
		    !f->idle.st[i].enabled_on)
			continue;
		deep++;
		if (n < sizeof(o->seen))
			n += (size_t)snprintf(o->seen + n, sizeof(o->seen) - n,
					      "%s%s (%u us) enabled on %u of %u CPUs",
					      n ? ", " : "", f->idle.st[i].name,
					      f->idle.st[i].latency_us,
					      f->idle.st[i].enabled_on,
					      f->idle.st[i].ncpus);
	}
	if (!deep) {
		o->sev = DOC_OK;
		SEEN("%s: %u idle states, none deeper than %d us enabled",
		     f->idle.driver[0] ? f->idle.driver : "cpuidle",
		     f->idle.nstates, DOC_CSTATE_MAX_US);
		return;
	}
	o->sev = DOC_WARN;
	FIX("cpupower idle-set -D %d", DOC_CSTATE_MAX_US);
}

static void check_isolcpus(const struct doctor_facts *f, struct doc_finding *o)
{
	char list[128];
	unsigned int cpu;

	if (!f->isolated.have) {
		o->sev = DOC_SKIP;
		SEEN("%s", f->isolated.err);
		return;
	}
	if (f->ncpus_online < 2) {
		o->sev = DOC_SKIP;
		SEEN("one CPU: nothing to isolate");
		return;
	}
	doc_cpulist_fmt(&f->isolated.set, list, sizeof(list));
	WANT("a CPU for the NIC's interrupts and the %s, kept from the scheduler",
	     is_sender(f) ? "sender" : "recorder");
	if (list[0]) {
		o->sev = DOC_OK;
		SEEN("isolated CPUs: %s", list);
		return;
	}
	o->sev = DOC_INFO;
	SEEN("no isolated CPUs");
	/* The last CPU of the NIC's node, else the last online CPU. */
	cpu = f->ncpus_online - 1;
	if (f->numa.have && f->numa.node >= 0 &&
	    doc_cpuset_count(&f->numa.node_cpus)) {
		unsigned int c;

		for (c = 0; c < DOC_MAX_CPUS; c++)
			if (doc_cpuset_test(&f->numa.node_cpus, c))
				cpu = c;
	}
	FIX("sed -i 's/^GRUB_CMDLINE_LINUX=\"/&isolcpus=nohz,domain,managed_irq,%u /' /etc/default/grub && update-grub && reboot",
	    cpu);
}

static void check_irq(const struct doctor_facts *f, struct doc_finding *o)
{
	struct doc_cpuset target;
	char tl[128];
	unsigned int i, c, bad = 0, spread = 0, cand[DOC_MAX_IRQS], ncand = 0;
	size_t n = 0;

	if (!f->irqs.have) {
		o->sev = DOC_SKIP;
		SEEN("%s", f->irqs.err);
		return;
	}
	if (!f->irqs.n) {
		o->sev = DOC_SKIP;
		SEEN("no interrupts of %s in /proc/interrupts%s", f->ifname,
		     f->virtual_dev ? " (virtual device)" : "");
		return;
	}
	/* Where they belong: the NIC's node if known, else all CPUs. */
	memset(&target, 0, sizeof(target));
	if (f->numa.have && f->numa.node >= 0 && f->numa.nnodes > 1 &&
	    doc_cpuset_count(&f->numa.node_cpus))
		target = f->numa.node_cpus;
	doc_cpulist_fmt(&target, tl, sizeof(tl));
	/* One CPU per IRQ, round robin over the node's (or all) CPUs. */
	for (c = 0; c < DOC_MAX_CPUS && ncand < DOC_MAX_IRQS; c++)
		if (tl[0] ? doc_cpuset_test(&target, c) : c < f->ncpus_online)
			cand[ncand++] = c;
	if (!ncand)
		cand[ncand++] = 0;
	for (i = 0; i < f->irqs.n; i++) {
		const struct doc_cpuset *a = &f->irqs.aff[i];
		bool off = tl[0] && !doc_cpuset_subset(a, &target);

		if (off)
			bad++;
		else if (doc_cpuset_count(a) > 1)
			spread++;
		else
			continue;
		if (n < sizeof(o->fix))
			n += (size_t)snprintf(o->fix + n, sizeof(o->fix) - n,
					      "%secho %u > /proc/irq/%u/smp_affinity_list",
					      n ? "; " : "",
					      cand[(bad + spread - 1) % ncand],
					      f->irqs.irq[i]);
	}
	SEEN("%u IRQs; %u outside the NIC's NUMA node, %u on more than one CPU%s",
	     f->irqs.n, bad, spread, f->irqbalance ? "; irqbalance runs" : "");
	WANT("each queue's IRQ pinned to one CPU%s%s%s",
	     tl[0] ? " of node " : "", tl[0] ? tl : "",
	     f->irqbalance ? ", irqbalance stopped" : "");
	if (!bad && !spread && !f->irqbalance) {
		o->sev = DOC_OK;
		o->fix[0] = '\0';
		return;
	}
	o->sev = bad || f->irqbalance ? DOC_WARN : DOC_INFO;
	if (f->irqbalance) {
		char rest[DOC_FIX];

		tdm_strlcpy(rest, o->fix, sizeof(rest));
		FIX("systemctl disable --now irqbalance%s%s", rest[0] ? "; " : "",
		    rest);
	}
}

static void check_numa(const struct doctor_facts *f, struct doc_finding *o)
{
	char list[128];
	const char *tool = is_sender(f) ? "tdmgen" : "tdmstat capture";

	if (!f->numa.have) {
		o->sev = DOC_SKIP;
		SEEN("%s", f->numa.err);
		return;
	}
	if (f->numa.nnodes < 2) {
		o->sev = DOC_OK;
		SEEN("one NUMA node");
		return;
	}
	if (f->numa.node < 0) {
		o->sev = DOC_INFO;
		SEEN("%u NUMA nodes; the firmware names none for %s", f->numa.nnodes,
		     f->ifname);
		WANT("run the %s on the NIC's node", tool);
		return;
	}
	doc_cpulist_fmt(&f->numa.node_cpus, list, sizeof(list));
	o->sev = DOC_INFO;
	SEEN("%s is on NUMA node %d (CPUs %s) of %u", f->ifname, f->numa.node,
	     list, f->numa.nnodes);
	WANT("the %s's CPU and memory on node %d", tool, f->numa.node);
	FIX("numactl -N %d -m %d %s ...", f->numa.node, f->numa.node, tool);
}

static void check_qdisc(const struct doctor_facts *f, struct doc_finding *o)
{
	const struct tdm_qdisc_info *q = &f->qdisc.q;
	char t[32];

	if (!f->qdisc.have) {
		o->sev = DOC_SKIP;
		SEEN("cannot read the qdiscs of %s: %s", f->ifname, f->qdisc.err);
		return;
	}
	if (!q->present) {
		o->sev = is_sender(f) ? DOC_WARN : DOC_INFO;
		SEEN("no tdmwin qdisc at the root of %s%s%s", f->ifname,
		     q->other ? "; root qdisc is " : "", q->other ? q->kind : "");
		WANT(is_sender(f) ?
		     "a tdmwin qdisc at the root (tdmd installs it; or by hand with tc)" :
		     "none needed on a receiver that does not send in windows");
		FIX("tc qdisc replace dev %s root handle 1: tdmwin cycle-time 3300us base-time now+2s window 0us 1000us",
		    f->ifname);
		return;
	}
	SEEN("tdmwin plan v%u, %u windows, cycle %s%s%s", q->version, q->nwin,
	     tdm_fmt_time(q->cycle_ns, t, sizeof(t)),
	     q->hold ? ", gate held closed" : "",
	     q->pending ? ", a plan pending" : "");
	WANT("tdmwin at the root, gate released");
	if (q->hold) {
		o->sev = DOC_WARN;
		FIX("tc qdisc change dev %s root tdmwin release", f->ifname);
		return;
	}
	o->sev = DOC_OK;
}

/* An XDP program's mode, as ip link shows it. */
static const char *xdp_mode(uint8_t attached)
{
	switch (attached) {
	case 1: return "native";	/* XDP_ATTACHED_DRV */
	case 2: return "generic";	/* XDP_ATTACHED_SKB */
	case 3: return "offloaded";	/* XDP_ATTACHED_HW */
	default: return "several";	/* XDP_ATTACHED_MULTI */
	}
}

/*
 * The packet sockets with a TX ring, for tdm.bypass's text: "no packet
 * socket with a TX ring", "1 packet socket with a TX ring (pid 812
 * dpdk-app, inode 4711)", "3 ... (unbound, owner not found, inode 4711,
 * and 2 more)"; the first is named.
 */
static void fmt_pkt_senders(const struct doctor_facts *f, char *buf,
			    size_t len)
{
	const struct tdm_pkt_info *p = &f->pkt.in;
	const struct tdm_pkt_sender *s = &p->s[0];
	char who[80] = "owner not found", more[32] = "", comm[64];

	if (!f->pkt.have) {
		snprintf(buf, len, "packet sockets not listed (%.60s)", f->pkt.err);
		return;
	}
	if (!p->nsenders) {
		snprintf(buf, len, "no packet socket with a TX ring");
		return;
	}
	if (s->pid) {
		tdm_text_escape(comm, s->comm, sizeof(comm));
		snprintf(who, sizeof(who), "pid %d %s", s->pid, comm);
	}
	if (p->nsenders > 1)
		snprintf(more, sizeof(more), ", and %u more", p->nsenders - 1);
	snprintf(buf, len, "%u packet socket%s with a TX ring (%s%s, inode %u%s)",
		 p->nsenders, p->nsenders == 1 ? "" : "s",
		 s->ifindex ? "" : "unbound, ", who, s->ino, more);
}

/*
 * One wire per device: frames sent past the qdisc (AF_XDP sockets, an XDP
 * program's XDP_TX or redirects, packet sockets with PACKET_QDISC_BYPASS)
 * are not on its wire clock, and the qdisc cannot gate them.  On a device
 * with tdmwin they must be gated by libtdmgate (or sent through the qdisc)
 * and the kernel's own traffic kept to what fits the dead time
 * (Documentation/bypass.rst, "Kernel and bypass traffic on one device").
 * The kernel does not say which packet sockets bypass the qdisc: one with
 * a TX ring (DPDK's net_af_packet) counts as a sender past it.
 */
static void check_bypass(const struct doctor_facts *f, struct doc_finding *o)
{
	const struct tdm_xdp_info *x = &f->xdp.in;
	char socks[128], prog[64] = "no XDP program", pkts[192];
	unsigned int senders, npkt = f->pkt.have ? f->pkt.in.nsenders : 0;
	bool listed;

	if (!f->xdp.have) {
		o->sev = DOC_SKIP;
		SEEN("cannot read the XDP state of %s: %s", f->ifname, f->xdp.err);
		return;
	}
	if (x->attached)
		snprintf(prog, sizeof(prog), "an XDP program (%s, id %u)",
			 xdp_mode(x->attached), x->prog_id);
	if (x->xsk_known)
		snprintf(socks, sizeof(socks), "%u AF_XDP socket%s (%u with TX)",
			 x->xsks, x->xsks == 1 ? "" : "s", x->xsks_tx);
	else if (x->ns_known)
		snprintf(socks, sizeof(socks),
			 "%u AF_XDP socket%s in its namespace (devices unknown: %.40s)",
			 x->ns_xsks, x->ns_xsks == 1 ? "" : "s", f->xdp.err);
	else
		snprintf(socks, sizeof(socks), "AF_XDP sockets not listed (%.60s)",
			 f->xdp.err);
	fmt_pkt_senders(f, pkts, sizeof(pkts));
	SEEN("%s and %s on %s%s; %s", prog, socks, f->ifname,
	     f->qdisc.have && f->qdisc.q.present ? ", beside its tdmwin qdisc" : "",
	     pkts);
	/* Sockets of the namespace may be on this device: counted as if. */
	senders = (x->xsk_known ? x->xsks : x->ns_known ? x->ns_xsks : 0) + npkt;
	listed = (x->xsk_known || x->ns_known) && f->pkt.have;
	if (!f->qdisc.have || !f->qdisc.q.present || (!x->attached && !senders)) {
		o->sev = listed || !f->qdisc.q.present ? DOC_OK : DOC_INFO;
		WANT("every frame on the tdmwin device's wire gated by one plan");
		return;
	}
	o->sev = DOC_WARN;
	if (npkt)
		WANT("one wire: senders past the qdisc gated by libtdmgate following it "
		     "(tdmgen --stack dpdk is) or sending through it (net_af_packet's "
		     "qdisc_bypass=0); kernel traffic on %s only PTP and control "
		     "(Documentation/bypass.rst)", f->ifname);
	else
		WANT("one wire: senders past the qdisc gated by libtdmgate following it, "
		     "kernel traffic on %s only PTP and control that fits the dead time "
		     "(Documentation/bypass.rst)", f->ifname);
}

static void check_tdmrx(const struct doctor_facts *f, struct doc_finding *o)
{
	if (is_sender(f)) {
		o->sev = DOC_SKIP;
		SEEN("receiver check (--role receiver)");
		return;
	}
	WANT("tdmrx.ko loaded and attached to %s by tdmstat capture", f->ifname);
	if (!f->rx.have) {
		o->sev = DOC_FAIL;
		SEEN("cannot ask tdmrx: %s", f->rx.err);
		FIX("ls -l /dev/tdmrx");
		return;
	}
	if (!f->rx.loaded) {
		o->sev = DOC_WARN;
		SEEN("tdmrx.ko is not loaded (no generic netlink family 'tdmrx')");
		FIX("modprobe tdmrx");
		return;
	}
	if (f->rx.attached && !strcmp(f->rx.attached_to, f->ifname)) {
		o->sev = DOC_OK;
		SEEN("tdmrx attached to %s, %u UDP ports", f->ifname, f->rx.nports);
		return;
	}
	o->sev = f->rx.attached ? DOC_WARN : DOC_INFO;
	if (f->rx.attached)
		SEEN("tdmrx is attached to %s, not %s", f->rx.attached_to, f->ifname);
	else
		SEEN("tdmrx loaded, not attached");
	FIX("tdmstat capture -i %s -p plan.conf -o run1", f->ifname);
}

/* Which recorders can work here: tdmrx.ko (loaded, or loadable: in the
 * module tree, CAP_SYS_MODULE, and no lockdown, which refuses an unsigned
 * module), the BPF recorder (CAP_BPF and CAP_NET_ADMIN, or CAP_SYS_ADMIN;
 * lockdown does not stop a tc program), and of the XDP recorder what the
 * node offers: libxdp's dispatcher (bpffs), the kernel's RX timestamp
 * kfunc (xdp-hw), and whether the interface has XDP programs already,
 * whose redirected packets only the XDP recorder sees.
 */
static void check_recorders(const struct doctor_facts *f, struct doc_finding *o)
{
	const char *ld = f->node.lockdown[0] ? f->node.lockdown : "unknown";
	bool locked = f->node.lockdown[0] && strcmp(f->node.lockdown, "none");
	bool kmod = f->rx.loaded ||
		    (f->node.kmod_found && f->node.cap_sys_module && !locked);
	bool bpf = (f->node.cap_bpf && f->node.cap_net_admin) ||
		   f->node.cap_sys_admin;
	const char *kwhy;

	if (is_sender(f)) {
		o->sev = DOC_SKIP;
		SEEN("receiver check (--role receiver)");
		return;
	}
	WANT("a receive recorder that can work: tdmrx.ko, or the BPF recorder");
	if (f->rx.loaded)
		kwhy = "loaded";
	else if (!f->node.kmod_found)
		kwhy = "not in the module tree";
	else if (locked)
		kwhy = "refused unless signed (lockdown)";
	else if (!f->node.cap_sys_module)
		kwhy = "loadable, but not by us (no CAP_SYS_MODULE)";
	else if (!f->node.lockdown[0])
		kwhy = "loadable unless lockdown refuses it (state unknown: no /sys/kernel/security/lockdown, securityfs not mounted here)";
	else
		kwhy = "loadable";
	SEEN("tdmrx.ko: %s; BPF recorder: %s; lockdown %s; BTF %s; XDP recorder: %s; xdp-hw: %s%s",
	     kwhy, bpf ? "can load (CAP_BPF, CAP_NET_ADMIN)" :
	     "no CAP_BPF and CAP_NET_ADMIN (run as root)", ld,
	     f->node.btf ? "present" : "absent (not needed)",
	     f->node.bpffs ? "beside other XDP programs (libxdp's dispatcher, bpffs at /sys/fs/bpf)" :
	     "alone only (no bpffs at /sys/fs/bpf for libxdp's dispatcher)",
	     f->node.xdp_kfunc > 0 ? "the kernel has the XDP RX timestamp kfunc (the NIC's stamps where the driver gives them)" :
	     f->node.xdp_kfunc == 0 ? "no XDP RX timestamp kfunc in this kernel (6.3 on)" :
	     "unknown (no kernel BTF)",
	     f->bpf.have && f->bpf.xdp_progs > 0 ?
	     "; the interface has XDP programs: what they redirect (AF_XDP) never reaches tdmrx.ko or tc, record it with --recorder xdp (auto does)" : "");
	if (kmod || bpf) {
		o->sev = DOC_OK;
		return;
	}
	o->sev = DOC_FAIL;
	FIX("run tdmstat capture as root (the BPF recorder needs CAP_BPF and CAP_NET_ADMIN)");
}

/* How a recorder program hangs on the device (tdmrx_bpf.h's modes). */
static const char *recorder_how(int mode)
{
	switch (mode) {
	case TDMRX_BPF_MODE_TCX:
		return "tdmrx_bpf, tcx link";
	case TDMRX_BPF_MODE_TC:
		return "tdmrx_bpf, tc filter";
	case TDMRX_BPF_MODE_XDP:
		return "tdmrx_xdp, XDP through libxdp";
	case TDMRX_BPF_MODE_XDP_HW:
		return "tdmrx_xdp_hw, XDP device-bound";
	default:
		return "?";
	}
}

/* What of the BPF recorder is on the interface. */
static void check_bpf_recorder(const struct doctor_facts *f,
			       struct doc_finding *o)
{
	const struct tdm_rxbpf_state *st = &f->bpf.st;

	if (is_sender(f)) {
		o->sev = DOC_SKIP;
		SEEN("receiver check (--role receiver)");
		return;
	}
	WANT("the BPF recorder attached by a live tdmstat capture, or nothing");
	if (!f->bpf.have) {
		o->sev = DOC_INFO;
		SEEN("cannot look: %s", f->bpf.err);
		return;
	}
	if (f->bpf.reaped) {
		o->sev = DOC_WARN;
		SEEN("removed the BPF recorder's %s (prog id %u) on %s: its owner, pid %d, is gone",
		     recorder_how(st->mode), st->prog_id, f->ifname, (int)st->owner);
		return;
	}
	if (!st->attached) {
		o->sev = DOC_INFO;
		SEEN("the BPF recorder is not attached to %s", f->ifname);
		return;
	}
	if (st->owner_alive) {
		o->sev = DOC_OK;
		SEEN("the BPF recorder (prog id %u, %s) is attached to %s by pid %d (%s)",
		     st->prog_id, recorder_how(st->mode), f->ifname,
		     (int)st->owner, st->owner_comm);
		return;
	}
	o->sev = DOC_WARN;
	SEEN("the BPF recorder (prog id %u, %s) is attached to %s, its owner, pid %d, is gone",
	     st->prog_id, recorder_how(st->mode), f->ifname, (int)st->owner);
	if (st->mode == TDMRX_BPF_MODE_XDP)
		FIX("xdp-loader unload %s --id %u", f->ifname, st->prog_id);
	else if (st->mode == TDMRX_BPF_MODE_XDP_HW)
		FIX("ip link set dev %s xdpdrv off", f->ifname);
	else
		FIX("tc filter del dev %s ingress pref %u handle 0x%x bpf",
		    f->ifname, TDMRX_BPF_TC_PRIO, TDMRX_BPF_TC_HANDLE);
}

const struct doc_check doc_checks[] = {
	{ "ptp.port",		check_ptp_port },
	{ "ptp.offset",		check_ptp_offset },
	{ "ptp.phc2sys",	check_ptp_phc2sys },
	{ "ptp.phc_offset",	check_phc_offset },
	{ "ptp.tai_offset",	check_tai },
	{ "nic.timestamping",	check_ts },
	{ "nic.link",		check_link },
	{ "nic.flow_control",	check_flow_control },
	{ "nic.rx_ring",	check_rx_ring },
	{ "nic.tx_ring",	check_tx_ring },
	{ "nic.rx_coalesce",	check_rx_coal },
	{ "nic.tx_coalesce",	check_tx_coal },
	{ "net.txqueuelen",	check_txqlen },
	{ "net.bql",		check_bql },
	{ "cpu.cstates",	check_cstates },
	{ "cpu.isolcpus",	check_isolcpus },
	{ "nic.irq_affinity",	check_irq },
	{ "nic.numa",		check_numa },
	{ "tdm.qdisc",		check_qdisc },
	{ "tdm.bypass",		check_bypass },
	{ "tdm.tdmrx",		check_tdmrx },
	{ "tdm.recorders",	check_recorders },
	{ "tdm.bpf_recorder",	check_bpf_recorder },
};
const size_t doc_nchecks = TDM_ARRAY_SIZE(doc_checks);

void doctor_run(const struct doctor_facts *f, struct doc_finding *out)
{
	size_t i;

	for (i = 0; i < doc_nchecks; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].id = doc_checks[i].id;
		doc_checks[i].fn(f, &out[i]);
	}
}

/* The worst severity (skip and info count as ok). */
int doctor_worst(const struct doc_finding *fd, size_t n)
{
	int w = DOC_OK;
	size_t i;

	for (i = 0; i < n; i++)
		if ((fd[i].sev == DOC_WARN || fd[i].sev == DOC_FAIL) &&
		    (int)fd[i].sev > w)
			w = fd[i].sev;
	return w;
}

const char *doc_sev_name(enum doc_sev s)
{
	static const char *const names[] = { "ok", "info", "warn", "fail", "skip" };

	return (unsigned int)s < TDM_ARRAY_SIZE(names) ? names[s] : "?";
}

static const char *role_name(const struct doctor_facts *f)
{
	return f->role == DOC_SENDER ? "sender" : "receiver";
}

/* ---- output ------------------------------------------------------------------ */

/*
 * What text output says to do about a finding: its fix command, or for a
 * warning or failure without one (tdm.bypass: which senders to gate is
 * the user's call) what is recommended.
 */
static bool has_advice(const struct doc_finding *d)
{
	if (d->sev == DOC_OK)
		return false;
	return d->fix[0] ||
	       (d->want[0] && (d->sev == DOC_WARN || d->sev == DOC_FAIL));
}

void doctor_print_text(FILE *o, const struct doctor_facts *f,
		       const struct doc_finding *fd, size_t n)
{
	size_t i, w = 2, nfix = 0;
	unsigned int count[5] = { 0 };

	for (i = 0; i < n; i++)
		if (strlen(fd[i].id) > w)
			w = strlen(fd[i].id);
	fprintf(o, "tdmctl doctor: %s, role %s%s\n\n", f->ifname, role_name(f),
		f->role_auto ? " (guessed; --role to set)" : "");
	fprintf(o, "%-*s  %-6s %s\n", (int)w, "ID", "STATUS", "SEEN");
	for (i = 0; i < n; i++) {
		char sev[8];
		size_t k;

		snprintf(sev, sizeof(sev), "%s", doc_sev_name(fd[i].sev));
		for (k = 0; sev[k]; k++)
			sev[k] = (char)(sev[k] - 'a' + 'A');
		fprintf(o, "%-*s  %-6s %s\n", (int)w, fd[i].id, sev, fd[i].seen);
		count[fd[i].sev]++;
		if (has_advice(&fd[i]))
			nfix++;
	}
	if (nfix) {
		fprintf(o, "\nFixes (tdmctl doctor changes nothing itself):\n");
		for (i = 0; i < n; i++) {
			if (!has_advice(&fd[i]))
				continue;
			fprintf(o, "  # %s: %s\n", fd[i].id, fd[i].want);
			if (fd[i].fix[0])
				fprintf(o, "  %s\n", fd[i].fix);
		}
	}
	fprintf(o, "\n%u ok, %u info, %u warn, %u fail, %u skipped\n",
		count[DOC_OK], count[DOC_INFO], count[DOC_WARN], count[DOC_FAIL],
		count[DOC_SKIP]);
}

/*
 * tdm.bypass's packet sockets as fields: "packet_senders", each with its
 * inode, device (null: unbound), protocol, TX ring frames, uid and owner
 * (pid, comm; null: not found), the first TDM_PKT_SENDERS_MAX of
 * "packet_senders_total"; both null when they could not be listed.
 */
static void json_pkt_senders(struct tdm_json *j, const struct doctor_facts *f)
{
	const struct tdm_pkt_info *p = &f->pkt.in;
	unsigned int k;

	if (!f->pkt.have) {
		tdm_json_null(j, "packet_senders_total");
		tdm_json_null(j, "packet_senders");
		return;
	}
	tdm_json_u64(j, "packet_senders_total", p->nsenders);
	tdm_json_arr_open(j, "packet_senders");
	for (k = 0; k < p->nsenders && k < TDM_PKT_SENDERS_MAX; k++) {
		const struct tdm_pkt_sender *s = &p->s[k];

		tdm_json_obj_open(j, NULL);
		tdm_json_u64(j, "inode", s->ino);
		tdm_json_u64(j, "ifindex", s->ifindex);
		if (s->ifindex)
			tdm_json_str(j, "device", f->ifname);
		else
			tdm_json_null(j, "device");
		tdm_json_u64(j, "protocol", s->proto);
		tdm_json_u64(j, "tx_ring_frames", s->tx_frames);
		tdm_json_u64(j, "uid", s->uid);
		if (s->pid) {
			tdm_json_u64(j, "pid", (uint64_t)s->pid);
			tdm_json_str(j, "comm", s->comm);
		} else {
			tdm_json_null(j, "pid");
			tdm_json_null(j, "comm");
		}
		tdm_json_obj_close(j);
	}
	tdm_json_arr_close(j);
}

char *doctor_json(const struct doctor_facts *f,
		  const struct doc_finding *fd, size_t n)
{
	struct tdm_json j;
	unsigned int count[5] = { 0 };
	const char *text;
	char *out = NULL;
	size_t i;

	tdm_json_init(&j);
	tdm_json_obj_open(&j, NULL);
	tdm_json_str(&j, "interface", f->ifname);
	tdm_json_str(&j, "role", role_name(f));
	tdm_json_bool(&j, "role_guessed", f->role_auto);
	tdm_json_str(&j, "worst", doc_sev_name(doctor_worst(fd, n)));
	tdm_json_arr_open(&j, "findings");
	for (i = 0; i < n; i++) {
		count[fd[i].sev]++;
		tdm_json_obj_open(&j, NULL);
		tdm_json_str(&j, "id", fd[i].id);
		tdm_json_str(&j, "severity", doc_sev_name(fd[i].sev));
		tdm_json_str(&j, "seen", fd[i].seen);
		if (fd[i].want[0])
			tdm_json_str(&j, "recommended", fd[i].want);
		else
			tdm_json_null(&j, "recommended");
		if (fd[i].fix[0] && fd[i].sev != DOC_OK)
			tdm_json_str(&j, "fix", fd[i].fix);
		else
			tdm_json_null(&j, "fix");
		if (!strcmp(fd[i].id, "tdm.bypass"))
			json_pkt_senders(&j, f);
		tdm_json_obj_close(&j);
	}
	tdm_json_arr_close(&j);
	tdm_json_obj_open(&j, "summary");
	for (i = 0; i < 5; i++)
		tdm_json_u64(&j, doc_sev_name((enum doc_sev)i), count[i]);
	tdm_json_obj_close(&j);
	tdm_json_obj_close(&j);
	text = tdm_json_finish(&j);
	if (text)
		out = strdup(text);
	tdm_json_free(&j);
	return out;
}

/* ---- the command ----------------------------------------------------------------- */

static void doctor_usage(FILE *o)
{
	fprintf(o,
		"usage: tdmctl doctor [-i IFACE] [--role sender|receiver] [--ptp-socket PATH] [-j]\n"
		"  -i, --interface IFACE  the TDM interface (default: that of the default route)\n"
		"  --role ROLE            sender or receiver (default: receiver if tdmrx is\n"
		"                         attached to IFACE, else sender)\n"
		"  --ptp-socket PATH      ptp4l's management socket (default %s)\n"
		"  -j, --json             JSON output\n"
		"Checks this node against the tuning guides and prints each finding with\n"
		"the command that fixes it; changes nothing.  Exit status: 0 no failure,\n"
		"1 a check failed, 2 usage error.\n", TDM_PTP_DEFAULT_SOCKET);
}

int doctor_main(int argc, char **argv, bool json)
{
	static const struct option opts[] = {
		{ "interface", required_argument, NULL, 'i' },
		{ "role", required_argument, NULL, 'r' },
		{ "ptp-socket", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct doctor_facts *f;
	struct doc_finding *fd;
	const char *ifname = NULL, *sock = TDM_PTP_DEFAULT_SOCKET;
	char defif[IF_NAMESIZE];
	int opt, rc, role = -1;

	optind = 0;	/* glibc: restart parsing after tdmctl's options */
	while ((opt = getopt_long(argc, argv, "+i:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			ifname = optarg;
			break;
		case 'r':
			if (!strcmp(optarg, "sender")) {
				role = DOC_SENDER;
			} else if (!strcmp(optarg, "receiver")) {
				role = DOC_RECEIVER;
			} else {
				fprintf(stderr, "tdmctl doctor: --role: '%s' is neither 'sender' nor 'receiver'\n",
					optarg);
				return 2;
			}
			break;
		case 'p':
			sock = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			doctor_usage(stdout);
			return 0;
		default:
			doctor_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tdmctl doctor: unexpected argument '%s'\n",
			argv[optind]);
		doctor_usage(stderr);
		return 2;
	}
	if (strlen(sock) >= sizeof(((struct doctor_facts *)0)->ptp_socket)) {
		fprintf(stderr, "tdmctl doctor: --ptp-socket: path longer than 107 bytes: %s\n",
			sock);
		return 2;
	}
	if (!ifname) {
		char err[128], *route;
		size_t len;

		route = tdm_read_file("/proc/net/route", 1 << 20, &len, err,
				      sizeof(err));
		if (!route || doc_default_iface(route, defif, sizeof(defif))) {
			free(route);
			fprintf(stderr, "tdmctl doctor: no -i given and no IPv4 default route to take the interface from; name it with -i IFACE\n");
			return 2;
		}
		free(route);
		ifname = defif;
	}
	if (strlen(ifname) >= IF_NAMESIZE || !if_nametoindex(ifname)) {
		fprintf(stderr, "tdmctl doctor: -i: no interface '%s' in this network namespace\n",
			ifname);
		return 2;
	}

	f = calloc(1, sizeof(*f));
	fd = calloc(doc_nchecks, sizeof(*fd));
	if (!f || !fd) {
		fprintf(stderr, "tdmctl doctor: out of memory\n");
		free(f);
		free(fd);
		return 1;
	}
	tdm_strlcpy(f->ifname, ifname, sizeof(f->ifname));
	tdm_strlcpy(f->ptp_socket, sock, sizeof(f->ptp_socket));
	f->role_auto = role < 0;
	f->role = role < 0 ? DOC_SENDER : (enum doc_role)role;
	doctor_gather(f);
	doctor_run(f, fd);
	rc = doctor_worst(fd, doc_nchecks) == DOC_FAIL ? 1 : 0;
	if (json) {
		char *text = doctor_json(f, fd, doc_nchecks);

		if (!text) {
			fprintf(stderr, "tdmctl doctor: out of memory\n");
			rc = 1;
		} else {
			fputs(text, stdout);
			fputc('\n', stdout);
			free(text);
		}
	} else {
		doctor_print_text(stdout, f, fd, doc_nchecks);
	}
	free(f);
	free(fd);
	return rc;
}
