// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdmctl doctor: the parsers (CPU lists, /proc/interrupts,
 * /proc/net/route) on fixture strings, and each check's decision on facts
 * set by hand.  The gathering itself is tested on a veth pair by
 * tests/tdmctl_doctor.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/net_tstamp.h>
#include <linux/rtnetlink.h>

#include "doctor.h"

/* ---- parsers ------------------------------------------------------------ */

static void test_cpulist(void **state)
{
	struct doc_cpuset s;
	char buf[64];

	(void)state;
	assert_int_equal(doc_cpulist_parse("0-3,8,10-11\n", &s), 0);
	assert_int_equal(doc_cpuset_count(&s), 7);
	assert_true(doc_cpuset_test(&s, 3));
	assert_false(doc_cpuset_test(&s, 4));
	doc_cpulist_fmt(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0-3,8,10-11");

	assert_int_equal(doc_cpulist_parse("\n", &s), 0);
	assert_int_equal(doc_cpuset_count(&s), 0);
	doc_cpulist_fmt(&s, buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(doc_cpulist_parse("5", &s), 0);
	doc_cpulist_fmt(&s, buf, sizeof(buf));
	assert_string_equal(buf, "5");
	assert_int_equal(doc_cpulist_parse("1023", &s), 0);
	assert_true(doc_cpuset_test(&s, 1023));

	assert_int_equal(doc_cpulist_parse("3-1", &s), -1);
	assert_int_equal(doc_cpulist_parse("a", &s), -1);
	assert_int_equal(doc_cpulist_parse("1,,2", &s), -1);
	assert_int_equal(doc_cpulist_parse("1-", &s), -1);
	assert_int_equal(doc_cpulist_parse("1024", &s), -1);
	assert_int_equal(doc_cpulist_parse("0-3 x", &s), -1);
}

static void test_cpuset_subset(void **state)
{
	struct doc_cpuset a, b;

	(void)state;
	doc_cpulist_parse("2-3", &a);
	doc_cpulist_parse("0-7", &b);
	assert_true(doc_cpuset_subset(&a, &b));
	assert_false(doc_cpuset_subset(&b, &a));
	doc_cpulist_parse("7-8", &a);
	assert_false(doc_cpuset_subset(&a, &b));
}

static const char interrupts[] =
	"            CPU0       CPU1       CPU2       CPU3\n"
	"   0:         40          0          0          0   IO-APIC   2-edge      timer\n"
	"  45:     123456          0          0          0  IR-PCI-MSI 524288-edge      eth1-TxRx-0\n"
	"  46:          0     654321          0          0  IR-PCI-MSI 524289-edge      eth1-TxRx-1\n"
	"  47:          1          0          0          0  IR-PCI-MSI 524290-edge      eth1\n"
	"  48:          9          0          0          0  IR-PCI-MSI 526336-edge      eth10-TxRx-0\n"
	"  49:          9          0          0          0  IR-PCI-MSI 526337-edge      xeth1\n"
	"  60:          9          0          0          0  IR-PCI-MSI 1-edge      mlx5_comp0@pci:0000:3b:00.0\n"
	" NMI:          0          0          0          0   Non-maskable interrupts\n"
	" ERR:          0\n"
	"  61:          9          0";	/* no newline at the end */

static void test_interrupts(void **state)
{
	unsigned int irqs[8], n;

	(void)state;
	n = doc_irqs_from_interrupts(interrupts, "eth1", irqs, 8);
	assert_int_equal(n, 3);
	assert_int_equal(irqs[0], 45);
	assert_int_equal(irqs[1], 46);
	assert_int_equal(irqs[2], 47);
	n = doc_irqs_from_interrupts(interrupts, "eth10", irqs, 8);
	assert_int_equal(n, 1);
	assert_int_equal(irqs[0], 48);
	n = doc_irqs_from_interrupts(interrupts, "0000:3b:00.0", irqs, 8);
	assert_int_equal(n, 1);
	assert_int_equal(irqs[0], 60);
	assert_int_equal(doc_irqs_from_interrupts(interrupts, "eth2", irqs, 8), 0);
	assert_int_equal(doc_irqs_from_interrupts(interrupts, "", irqs, 8), 0);
	/* max respected */
	assert_int_equal(doc_irqs_from_interrupts(interrupts, "eth1", irqs, 2), 2);
	assert_int_equal(doc_irqs_from_interrupts("", "eth1", irqs, 8), 0);
}

static void test_default_iface(void **state)
{
	char name[16];

	(void)state;
	assert_int_equal(doc_default_iface(
		"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
		"eth1\t000212C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
		"eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n",
		name, sizeof(name)), 0);
	assert_string_equal(name, "eth0");
	assert_int_equal(doc_default_iface(
		"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
		"eth1\t000212C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n",
		name, sizeof(name)), -1);
	assert_int_equal(doc_default_iface("", name, sizeof(name)), -1);
}

/* An RTM_GETDCB answer as dcbnl_ieee_fill() builds it: IFNAME, then the
 * IEEE nest (without NLA_F_NESTED) with ETS before PFC.
 */
static struct nlmsghdr *dcb_answer(char *buf, bool with_pfc, uint8_t en)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct dcbmsg *d;
	struct nlattr *nest;
	struct ieee_ets ets;
	struct ieee_pfc pfc;

	nlh->nlmsg_type = RTM_GETDCB;
	d = mnl_nlmsg_put_extra_header(nlh, sizeof(*d));
	d->cmd = DCB_CMD_IEEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, "eth1");
	nest = mnl_attr_nest_start(nlh, DCB_ATTR_IEEE);
	nest->nla_type = DCB_ATTR_IEEE;
	memset(&ets, 0, sizeof(ets));
	mnl_attr_put(nlh, DCB_ATTR_IEEE_ETS, sizeof(ets), &ets);
	if (with_pfc) {
		memset(&pfc, 0, sizeof(pfc));
		pfc.pfc_cap = 8;
		pfc.pfc_en = en;
		mnl_attr_put(nlh, DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
	}
	mnl_attr_nest_end(nlh, nest);
	return nlh;
}

static void test_dcb_pfc_parse(void **state)
{
	char buf[512] __attribute__((aligned(4)));
	struct nlmsghdr *nlh;
	uint8_t cap = 0, en = 0;

	(void)state;
	memset(buf, 0, sizeof(buf));
	nlh = dcb_answer(buf, true, 0x18);
	assert_int_equal(doc_dcb_pfc_parse(nlh, &cap, &en), 1);
	assert_int_equal(cap, 8);
	assert_int_equal(en, 0x18);

	memset(buf, 0, sizeof(buf));
	nlh = dcb_answer(buf, false, 0);
	cap = en = 0xff;
	assert_int_equal(doc_dcb_pfc_parse(nlh, &cap, &en), 0);
	assert_int_equal(en, 0xff);	/* untouched */
	memset(buf, 0, sizeof(buf));
	nlh = dcb_answer(buf, true, 0x18);
	nlh->nlmsg_type = RTM_GETLINK;
	assert_int_equal(doc_dcb_pfc_parse(nlh, &cap, &en), 0);
}

/* ---- decisions ----------------------------------------------------------- */

/* A well-tuned sender on a physical NIC, all facts read. */
static struct doctor_facts *good_facts(void)
{
	struct doctor_facts *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->ifname, "eth1");
	strcpy(f->ptp_socket, "/var/run/ptp4l");
	f->role = DOC_SENDER;
	f->ptp.have = f->ptp.running = true;
	f->ptp.st.port_ok = f->ptp.st.time_status_ok = true;
	f->ptp.st.port_state = TDM_PS_SLAVE;
	f->ptp.st.master_offset = -42;
	f->tai.have = true;
	f->tai.tai = 37;
	f->phc2sys = true;
	f->up = true;
	f->ts.have = true;
	f->ts.so_timestamping = SOF_TIMESTAMPING_TX_HARDWARE |
		SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
	f->ts.phc_index = 2;
	f->phc.have = true;
	f->phc.off.offset_ns = -12;
	f->phc.off.delay_ns = 850;
	f->phc.off.method = TDM_PHC_EXTENDED;
	f->phc.off.tai_offset = 37;
	f->ring.have = true;
	f->ring.rx = f->ring.rx_max = 8192;
	f->ring.tx = f->ring.tx_max = 8192;
	f->coal.have = true;
	f->coal.tx_usecs = f->coal.tx_frames = 16;
	f->link.have = true;
	f->link.speed_mbps = 10000;
	f->link.full = true;
	f->pause.have = true;			/* autoneg off rx off tx off */
	strcpy(f->pfc.err, "no DCB support in the driver");
	f->txqlen.have = true;
	f->txqlen.len = 1000;
	f->bql.have = true;
	f->bql.ntxq = 2;
	f->bql.limit_max[0] = f->bql.limit_max[1] = 25000;
	f->idle.have = true;
	f->idle.nstates = 2;
	strcpy(f->idle.st[0].name, "POLL");
	f->idle.st[0].enabled_on = f->idle.st[0].ncpus = 8;
	strcpy(f->idle.st[1].name, "C6");
	f->idle.st[1].latency_us = 133;
	f->idle.st[1].ncpus = 8;		/* disabled everywhere */
	f->isolated.have = true;
	doc_cpulist_parse("3", &f->isolated.set);
	f->ncpus_online = 8;
	f->irqs.have = true;
	f->irqs.n = 2;
	f->irqs.irq[0] = 45;
	f->irqs.irq[1] = 46;
	doc_cpulist_parse("1", &f->irqs.aff[0]);
	doc_cpulist_parse("2", &f->irqs.aff[1]);
	f->numa.have = true;
	f->numa.node = 0;
	f->numa.nnodes = 2;
	doc_cpulist_parse("0-3", &f->numa.node_cpus);
	f->qdisc.have = true;
	f->qdisc.q.present = true;
	f->qdisc.q.version = 3;
	f->qdisc.q.nwin = 1;
	f->qdisc.q.cycle_ns = 3300000;
	f->rx.have = true;
	f->xdp.have = true;
	f->xdp.in.xsk_known = true;
	f->pkt.have = true;
	return f;
}

static struct doc_finding fd[32];

static const struct doc_finding *run(const struct doctor_facts *f,
				     const char *id)
{
	size_t i;

	assert_true(doc_nchecks <= 32);
	doctor_run(f, fd);
	for (i = 0; i < doc_nchecks; i++)
		if (!strcmp(fd[i].id, id))
			return &fd[i];
	fail_msg("no finding %s", id);
	return NULL;
}

static void test_all_good(void **state)
{
	struct doctor_facts *f = good_facts();
	size_t i;

	(void)state;
	doctor_run(f, fd);
	for (i = 0; i < doc_nchecks; i++) {
		if (fd[i].sev == DOC_WARN || fd[i].sev == DOC_FAIL)
			fail_msg("%s: %s: %s", fd[i].id, doc_sev_name(fd[i].sev),
				 fd[i].seen);
	}
	assert_int_equal(doctor_worst(fd, doc_nchecks), DOC_OK);
	assert_int_equal(run(f, "nic.numa")->sev, DOC_INFO);
	assert_string_equal(run(f, "nic.numa")->fix, "numactl -N 0 -m 0 tdmgen ...");
	assert_int_equal(run(f, "tdm.tdmrx")->sev, DOC_SKIP);
	free(f);
}

static void test_ptp(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	assert_int_equal(run(f, "ptp.offset")->sev, DOC_OK);
	f->ptp.st.master_offset = -5000;
	assert_int_equal(run(f, "ptp.offset")->sev, DOC_WARN);
	f->ptp.st.master_offset = 500000;
	assert_int_equal(run(f, "ptp.offset")->sev, DOC_FAIL);
	assert_string_equal(run(f, "ptp.offset")->seen,
			    "offset from master 500000 ns");

	f->ptp.st.port_state = TDM_PS_UNCALIBRATED;
	assert_int_equal(run(f, "ptp.port")->sev, DOC_WARN);
	assert_int_equal(run(f, "ptp.offset")->sev, DOC_SKIP);
	f->ptp.st.port_state = TDM_PS_FAULTY;
	assert_int_equal(run(f, "ptp.port")->sev, DOC_FAIL);
	f->ptp.st.port_state = TDM_PS_MASTER;
	assert_int_equal(run(f, "ptp.port")->sev, DOC_WARN);	/* a sender */
	f->role = DOC_RECEIVER;
	assert_int_equal(run(f, "ptp.port")->sev, DOC_OK);	/* grandmaster */

	f->ptp.running = false;
	f->ptp.have = true;
	strcpy(f->ptp.err, "no ptp4l socket at /var/run/ptp4l");
	o = run(f, "ptp.port");
	assert_int_equal(o->sev, DOC_FAIL);
	assert_string_equal(o->fix, "ptp4l -i eth1 -m");
	f->role = DOC_SENDER;
	assert_string_equal(run(f, "ptp.port")->fix, "ptp4l -i eth1 -s -m");
	f->ts.phc_index = -1;	/* software stamps: -S */
	assert_string_equal(run(f, "ptp.port")->fix, "ptp4l -i eth1 -S -s -m");
	assert_int_equal(doctor_worst(fd, doc_nchecks), DOC_FAIL);

	f->ptp.running = true;
	f->ptp.have = false;
	strcpy(f->ptp.err, "ptp4l did not answer within 500 ms");
	o = run(f, "ptp.port");
	assert_int_equal(o->sev, DOC_FAIL);
	assert_non_null(strstr(o->seen, "did not answer"));
	free(f);
}

static void test_tai_phc2sys(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	assert_int_equal(run(f, "ptp.tai_offset")->sev, DOC_OK);
	f->tai.tai = 0;
	o = run(f, "ptp.tai_offset");
	assert_int_equal(o->sev, DOC_FAIL);
	assert_string_equal(o->fix, "phc2sys -a -r -w");

	assert_int_equal(run(f, "ptp.phc2sys")->sev, DOC_OK);
	f->phc2sys = false;
	o = run(f, "ptp.phc2sys");
	assert_int_equal(o->sev, DOC_FAIL);
	assert_string_equal(o->fix, "phc2sys -a -r -w");
	f->ts.phc_index = -1;
	assert_int_equal(run(f, "ptp.phc2sys")->sev, DOC_SKIP);
	o = run(f, "nic.timestamping");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "ptp4l -i eth1 -S -m");
	free(f);
}

static void test_phc_offset(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	o = run(f, "ptp.phc_offset");
	assert_int_equal(o->sev, DOC_OK);
	assert_string_equal(o->seen, "/dev/ptp2 - CLOCK_TAI -12 ns (PTP_SYS_OFFSET_EXTENDED, delay 850 ns)");
	f->phc.off.offset_ns = 1000;		/* the bound is inclusive */
	assert_int_equal(run(f, "ptp.phc_offset")->sev, DOC_OK);
	f->phc.off.offset_ns = -1001;
	f->phc.off.method = TDM_PHC_BASIC;
	o = run(f, "ptp.phc_offset");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "/dev/ptp2 - CLOCK_TAI -1001 ns (PTP_SYS_OFFSET, delay 850 ns)");
	/* phc2sys runs, yet the clocks are apart: its log says why. */
	assert_string_equal(o->fix, "journalctl -u 'phc2sys*' -n 50");
	/* Stepped away (phc2sys dead): the fix starts it. */
	f->phc.off.offset_ns = 1000000123;
	f->phc.off.method = TDM_PHC_PRECISE;
	f->phc.off.delay_ns = 0;
	f->phc2sys = false;
	o = run(f, "ptp.phc_offset");
	assert_int_equal(o->sev, DOC_FAIL);
	assert_string_equal(o->seen, "/dev/ptp2 - CLOCK_TAI 1000000123 ns (PTP_SYS_OFFSET_PRECISE, delay 0 ns)");
	assert_string_equal(o->want, "|offset| <= 1000 ns: phc2sys keeping the system clock on the PHC");
	assert_string_equal(o->fix, "phc2sys -a -r -w");
	f->phc.off.offset_ns = -100000;		/* warn up to 100 us */
	assert_int_equal(run(f, "ptp.phc_offset")->sev, DOC_WARN);
	f->phc.off.offset_ns = -100001;
	assert_int_equal(run(f, "ptp.phc_offset")->sev, DOC_FAIL);
	/* Unreadable: as a user, a skip; any other error fails. */
	f->phc.have = false;
	f->phc.err_no = EACCES;
	strcpy(f->phc.err, "/dev/ptp2: Permission denied");
	o = run(f, "ptp.phc_offset");
	assert_int_equal(o->sev, DOC_SKIP);
	assert_string_equal(o->seen, "cannot read /dev/ptp2: /dev/ptp2: Permission denied");
	f->phc.err_no = EIO;
	strcpy(f->phc.err, "PTP_SYS_OFFSET on /dev/ptp2: Input/output error");
	assert_int_equal(run(f, "ptp.phc_offset")->sev, DOC_FAIL);
	/* No PHC (software timestamping), or nothing known of it. */
	f->ts.phc_index = -1;
	o = run(f, "ptp.phc_offset");
	assert_int_equal(o->sev, DOC_SKIP);
	assert_string_equal(o->seen, "no PTP hardware clock on eth1: nothing for phc2sys to keep the system clock on");
	f->ts.phc_index = 2;
	f->ts.have = false;
	assert_int_equal(run(f, "ptp.phc_offset")->sev, DOC_SKIP);
	free(f);
}

static void test_nic(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	f->ring.rx = 512;
	o = run(f, "nic.rx_ring");
	assert_int_equal(o->sev, DOC_INFO);	/* a sender: rx matters less */
	assert_string_equal(o->fix, "ethtool -G eth1 rx 8192");
	f->role = DOC_RECEIVER;
	assert_int_equal(run(f, "nic.rx_ring")->sev, DOC_WARN);
	f->ring.tx = 256;
	assert_int_equal(run(f, "nic.tx_ring")->sev, DOC_INFO);
	f->role = DOC_SENDER;
	o = run(f, "nic.tx_ring");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "ethtool -G eth1 tx 8192");

	f->ring.have = false;
	strcpy(f->ring.err, "the driver does not report it");
	f->virtual_dev = true;
	o = run(f, "nic.rx_ring");
	assert_int_equal(o->sev, DOC_SKIP);
	assert_string_equal(o->seen, "eth1 has no ring parameters: the driver does not report it (virtual device)");
	assert_int_equal(run(f, "net.bql")->sev, DOC_SKIP);

	f->coal.adaptive_rx = true;
	f->coal.rx_usecs = 50;
	f->role = DOC_RECEIVER;
	o = run(f, "nic.rx_coalesce");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "ethtool -C eth1 adaptive-rx off rx-usecs 0 rx-frames 0");
	f->role = DOC_SENDER;
	assert_int_equal(run(f, "nic.rx_coalesce")->sev, DOC_INFO);
	f->coal.adaptive_tx = true;
	o = run(f, "nic.tx_coalesce");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "ethtool -C eth1 adaptive-tx off tx-usecs 16 tx-frames 16");

	f->up = false;
	o = run(f, "nic.link");
	assert_int_equal(o->sev, DOC_FAIL);
	assert_string_equal(o->fix, "ip link set dev eth1 up");
	free(f);
}

static void test_flow_control(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	o = run(f, "nic.flow_control");
	assert_int_equal(o->sev, DOC_OK);
	assert_string_equal(o->seen, "PAUSE autoneg off rx off tx off; PFC unknown (no DCB support in the driver)");

	/* A sender that obeys PAUSE: its wire stretches behind the qdisc. */
	f->pause.autoneg = f->pause.rx = f->pause.tx = true;
	o = run(f, "nic.flow_control");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "PAUSE autoneg on rx on tx on; PFC unknown (no DCB support in the driver)");
	assert_string_equal(o->fix, "ethtool -A eth1 autoneg off rx off tx off");
	assert_non_null(strstr(o->want, "wire clock"));
	assert_int_equal(doctor_worst(fd, doc_nchecks), DOC_WARN);
	f->pause.tx = false;
	assert_int_equal(run(f, "nic.flow_control")->sev, DOC_WARN);
	/* tx pause only stops the switch's sending to this node. */
	f->pause.rx = false;
	f->pause.tx = true;
	o = run(f, "nic.flow_control");
	assert_int_equal(o->sev, DOC_INFO);
	assert_string_equal(o->fix, "ethtool -A eth1 autoneg off rx off tx off");

	/* PFC, read from DCB netlink. */
	f->pause.tx = false;
	f->pfc.have = true;
	f->pfc.cap = 8;
	assert_int_equal(run(f, "nic.flow_control")->sev, DOC_OK);
	assert_non_null(strstr(run(f, "nic.flow_control")->seen, "; PFC off"));
	f->pfc.en = 0x18;
	o = run(f, "nic.flow_control");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "PAUSE autoneg on rx off tx off; PFC on priorities 3-4");
	assert_string_equal(o->fix, "dcb pfc set dev eth1 prio-pfc all:off");
	f->pause.rx = true;
	assert_string_equal(run(f, "nic.flow_control")->fix,
			    "ethtool -A eth1 autoneg off rx off tx off; dcb pfc set dev eth1 prio-pfc all:off");
	/* PAUSE unreadable: PFC alone still decides. */
	f->pause.have = false;
	strcpy(f->pause.err, "the driver does not report it");
	o = run(f, "nic.flow_control");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "dcb pfc set dev eth1 prio-pfc all:off");
	f->pfc.have = false;
	o = run(f, "nic.flow_control");
	assert_int_equal(o->sev, DOC_SKIP);
	assert_string_equal(o->seen, "PAUSE unknown (the driver does not report it); PFC unknown (no DCB support in the driver)");

	/* A receiver: information, and no fix to run. */
	f->role = DOC_RECEIVER;
	f->pause.have = true;
	f->pause.rx = f->pause.tx = true;
	o = run(f, "nic.flow_control");
	assert_int_equal(o->sev, DOC_INFO);
	assert_string_equal(o->fix, "");
	assert_non_null(strstr(o->want, "stops the switch port"));
	f->pause.tx = false;
	assert_int_equal(run(f, "nic.flow_control")->sev, DOC_OK);

	/* JSON carries it like every other finding. */
	{
		char *j;

		f->role = DOC_SENDER;
		doctor_run(f, fd);
		j = doctor_json(f, fd, doc_nchecks);
		assert_non_null(j);
		assert_non_null(strstr(j, "{\"id\":\"nic.flow_control\",\"severity\":\"warn\",\"seen\":\"PAUSE autoneg on rx on tx off; PFC unknown (no DCB support in the driver)\""));
		assert_non_null(strstr(j, "\"fix\":\"ethtool -A eth1 autoneg off rx off tx off\""));
		free(j);
	}
	free(f);
}

static void test_queues(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	f->txqlen.len = 10;
	o = run(f, "net.txqueuelen");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "txqueuelen 10");
	assert_string_equal(o->fix, "ip link set dev eth1 txqueuelen 1000");

	assert_int_equal(run(f, "net.bql")->sev, DOC_OK);
	f->bql.limit_max[1] = DOC_BQL_UNLIMITED;
	o = run(f, "net.bql");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "limit_max unlimited on 1 of 2 TX queues");
	assert_string_equal(o->fix, "for q in /sys/class/net/eth1/queues/tx-*/byte_queue_limits; do echo 25000 > $q/limit_max; done");
	f->link.speed_mbps = 1000;	/* 2500 bytes: at least two frames */
	assert_non_null(strstr(run(f, "net.bql")->fix, "echo 3028 >"));
	f->role = DOC_RECEIVER;
	assert_int_equal(run(f, "net.bql")->sev, DOC_INFO);
	free(f);
}

static void test_cpus(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	assert_int_equal(run(f, "cpu.cstates")->sev, DOC_OK);
	f->idle.st[1].enabled_on = 6;
	o = run(f, "cpu.cstates");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "C6 (133 us) enabled on 6 of 8 CPUs");
	assert_string_equal(o->fix, "cpupower idle-set -D 10");
	f->idle.have = false;
	strcpy(f->idle.err, "no cpuidle states in sysfs (no cpuidle driver)");
	assert_int_equal(run(f, "cpu.cstates")->sev, DOC_SKIP);

	memset(&f->isolated.set, 0, sizeof(f->isolated.set));
	o = run(f, "cpu.isolcpus");
	assert_int_equal(o->sev, DOC_INFO);
	assert_non_null(strstr(o->fix, "isolcpus=nohz,domain,managed_irq,3 "));
	f->ncpus_online = 1;
	assert_int_equal(run(f, "cpu.isolcpus")->sev, DOC_SKIP);
	free(f);
}

static void test_irq(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	assert_int_equal(run(f, "nic.irq_affinity")->sev, DOC_OK);
	doc_cpulist_parse("5", &f->irqs.aff[1]);	/* other node */
	o = run(f, "nic.irq_affinity");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "echo 0 > /proc/irq/46/smp_affinity_list");
	doc_cpulist_parse("0-7", &f->irqs.aff[0]);
	o = run(f, "nic.irq_affinity");
	assert_string_equal(o->fix, "echo 0 > /proc/irq/45/smp_affinity_list; echo 1 > /proc/irq/46/smp_affinity_list");
	f->irqbalance = true;
	o = run(f, "nic.irq_affinity");
	assert_int_equal(o->sev, DOC_WARN);
	assert_non_null(strstr(o->fix, "systemctl disable --now irqbalance; echo"));
	/* One node, spread over all CPUs: pin, but only informs. */
	f->irqbalance = false;
	f->numa.nnodes = 1;
	doc_cpulist_parse("4", &f->irqs.aff[1]);
	o = run(f, "nic.irq_affinity");
	assert_int_equal(o->sev, DOC_INFO);
	assert_string_equal(o->fix, "echo 0 > /proc/irq/45/smp_affinity_list");
	f->irqs.n = 0;
	assert_int_equal(run(f, "nic.irq_affinity")->sev, DOC_SKIP);
	free(f);
}

static void test_qdisc_tdmrx(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	assert_string_equal(run(f, "tdm.qdisc")->seen,
			    "tdmwin plan v3, 1 windows, cycle 3300us");
	f->qdisc.q.hold = true;
	o = run(f, "tdm.qdisc");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "tc qdisc change dev eth1 root tdmwin release");
	memset(&f->qdisc.q, 0, sizeof(f->qdisc.q));
	f->qdisc.q.other = true;
	strcpy(f->qdisc.q.kind, "mq");
	o = run(f, "tdm.qdisc");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "no tdmwin qdisc at the root of eth1; root qdisc is mq");
	assert_non_null(strstr(o->fix, "tc qdisc replace dev eth1 root handle 1: tdmwin"));

	f->role = DOC_RECEIVER;
	assert_int_equal(run(f, "tdm.qdisc")->sev, DOC_INFO);
	f->rx.loaded = false;
	o = run(f, "tdm.tdmrx");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->fix, "modprobe tdmrx");
	f->rx.loaded = true;
	assert_int_equal(run(f, "tdm.tdmrx")->sev, DOC_INFO);
	f->rx.attached = true;
	strcpy(f->rx.attached_to, "eth2");
	assert_int_equal(run(f, "tdm.tdmrx")->sev, DOC_WARN);
	strcpy(f->rx.attached_to, "eth1");
	assert_int_equal(run(f, "tdm.tdmrx")->sev, DOC_OK);
	f->rx.have = false;
	strcpy(f->rx.err, "cannot open /dev/tdmrx: Permission denied");
	assert_int_equal(run(f, "tdm.tdmrx")->sev, DOC_FAIL);
	free(f);
}

static void test_bypass(void **state)
{
	struct doctor_facts *f = good_facts();
	const struct doc_finding *o;

	(void)state;
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_OK);
	assert_string_equal(o->seen, "no XDP program and 0 AF_XDP sockets (0 with TX) "
			    "on eth1, beside its tdmwin qdisc; no packet socket with a TX ring");
	/* An AF_XDP sender beside the qdisc: two wires. */
	f->xdp.in.xsks = 1;
	f->xdp.in.xsks_tx = 1;
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "no XDP program and 1 AF_XDP socket (1 with TX) "
			    "on eth1, beside its tdmwin qdisc; no packet socket with a TX ring");
	assert_non_null(strstr(o->want, "libtdmgate"));
	/* An XDP program alone (XDP_TX and redirects pass the qdisc too). */
	f->xdp.in.xsks = f->xdp.in.xsks_tx = 0;
	f->xdp.in.attached = 2;
	f->xdp.in.prog_id = 17;
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "an XDP program (generic, id 17) and 0 AF_XDP sockets "
			    "(0 with TX) on eth1, beside its tdmwin qdisc; no packet "
			    "socket with a TX ring");
	/* No tdmwin qdisc: nothing to share a wire with. */
	f->qdisc.q.present = false;
	assert_int_equal(run(f, "tdm.bypass")->sev, DOC_OK);
	/* Sockets that cannot be listed beside tdmwin: said, not judged. */
	f->qdisc.q.present = true;
	f->xdp.in.attached = 0;
	f->xdp.in.xsk_known = false;
	strcpy(f->xdp.err, "no xsk_diag in this kernel");
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_INFO);
	assert_string_equal(o->seen, "no XDP program and AF_XDP sockets not listed "
			    "(no xsk_diag in this kernel) on eth1, beside its tdmwin qdisc; "
			    "no packet socket with a TX ring");
	/* Without xsk_diag, the namespace's count (6.1): one may be ours. */
	f->xdp.in.ns_known = true;
	f->xdp.in.ns_xsks = 1;
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "no XDP program and 1 AF_XDP socket in its namespace "
			    "(devices unknown: no xsk_diag in this kernel) on eth1, "
			    "beside its tdmwin qdisc; no packet socket with a TX ring");
	f->xdp.in.ns_xsks = 0;
	assert_int_equal(run(f, "tdm.bypass")->sev, DOC_OK);
	f->xdp.have = false;
	strcpy(f->xdp.err, "Operation not permitted");
	assert_int_equal(run(f, "tdm.bypass")->sev, DOC_SKIP);
	free(f);
}

/* Packet sockets with a TX ring: DPDK's net_af_packet and its kind. */
static void test_bypass_packet(void **state)
{
	struct doctor_facts *f = good_facts();
	struct tdm_pkt_sender *s = &f->pkt.in.s[0];
	const struct doc_finding *o;

	(void)state;
	f->pkt.in.nsenders = 1;
	s->ino = 4711;
	s->ifindex = 3;
	s->pid = 812;
	strcpy(s->comm, "dpdk-app");
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_WARN);
	assert_string_equal(o->seen, "no XDP program and 0 AF_XDP sockets (0 with TX) "
			    "on eth1, beside its tdmwin qdisc; 1 packet socket with a "
			    "TX ring (pid 812 dpdk-app, inode 4711)");
	/* What to do: gate it, or send through the qdisc. */
	assert_non_null(strstr(o->want, "libtdmgate"));
	assert_non_null(strstr(o->want, "qdisc_bypass=0"));
	/* Several, the first unbound and its owner not found; a name that
	 * would reach a terminal escaped.
	 */
	f->pkt.in.nsenders = 3;
	s->ifindex = 0;
	s->pid = 0;
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_WARN);
	assert_non_null(strstr(o->seen, "; 3 packet sockets with a TX ring (unbound, "
			       "owner not found, inode 4711, and 2 more)"));
	s->pid = 9;
	strcpy(s->comm, "x\033[2J");
	assert_non_null(strstr(run(f, "tdm.bypass")->seen, "(unbound, pid 9 x\\x1b[2J,"));
	/* No tdmwin on the device: no second wire to warn of. */
	f->qdisc.q.present = false;
	assert_int_equal(run(f, "tdm.bypass")->sev, DOC_OK);
	/* Packet sockets not listed beside tdmwin: said, not judged. */
	f->qdisc.q.present = true;
	f->pkt.have = false;
	f->pkt.in.nsenders = 0;
	strcpy(f->pkt.err, "no packet_diag in this kernel");
	o = run(f, "tdm.bypass");
	assert_int_equal(o->sev, DOC_INFO);
	assert_non_null(strstr(o->seen, "; packet sockets not listed (no packet_diag in "
			       "this kernel)"));
	free(f);
}

static void test_json_text(void **state)
{
	struct doctor_facts *f = good_facts();
	char *j, *buf = NULL;
	size_t len = 0;
	FILE *o;

	(void)state;
	f->txqlen.len = 10;
	doctor_run(f, fd);
	j = doctor_json(f, fd, doc_nchecks);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"interface\":\"eth1\""));
	assert_non_null(strstr(j, "\"worst\":\"warn\""));
	assert_non_null(strstr(j, "{\"id\":\"net.txqueuelen\",\"severity\":\"warn\",\"seen\":\"txqueuelen 10\""));
	assert_non_null(strstr(j, "\"fix\":\"ip link set dev eth1 txqueuelen 1000\""));
	free(j);

	o = open_memstream(&buf, &len);
	assert_non_null(o);
	doctor_print_text(o, f, fd, doc_nchecks);
	fclose(o);
	assert_non_null(strstr(buf, "net.txqueuelen    WARN   txqueuelen 10\n"));
	assert_non_null(strstr(buf, "\n  ip link set dev eth1 txqueuelen 1000\n"));
	free(buf);

	/* A packet sender: its fields in JSON, the advice in text (no fix). */
	f->pkt.in.nsenders = 1;
	f->pkt.in.s[0] = (struct tdm_pkt_sender){
		.ino = 4711, .ifindex = 3, .proto = 3, .type = 3,
		.tx_frames = 512, .uid = 0, .pid = 812, .comm = "dpdk-app",
	};
	doctor_run(f, fd);
	j = doctor_json(f, fd, doc_nchecks);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"packet_senders_total\":1,\"packet_senders\":["
			       "{\"inode\":4711,\"ifindex\":3,\"device\":\"eth1\","
			       "\"protocol\":3,\"tx_ring_frames\":512,\"uid\":0,"
			       "\"pid\":812,\"comm\":\"dpdk-app\"}]"));
	free(j);
	o = open_memstream(&buf, &len);
	assert_non_null(o);
	doctor_print_text(o, f, fd, doc_nchecks);
	fclose(o);
	assert_non_null(strstr(buf, "\n  # tdm.bypass: one wire: senders past the qdisc "
			       "gated by libtdmgate"));
	free(buf);
	f->pkt.have = false;
	doctor_run(f, fd);
	j = doctor_json(f, fd, doc_nchecks);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"packet_senders_total\":null,\"packet_senders\":null"));
	free(j);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_cpuset_subset),
		cmocka_unit_test(test_interrupts),
		cmocka_unit_test(test_default_iface),
		cmocka_unit_test(test_dcb_pfc_parse),
		cmocka_unit_test(test_all_good),
		cmocka_unit_test(test_ptp),
		cmocka_unit_test(test_tai_phc2sys),
		cmocka_unit_test(test_phc_offset),
		cmocka_unit_test(test_nic),
		cmocka_unit_test(test_flow_control),
		cmocka_unit_test(test_queues),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_irq),
		cmocka_unit_test(test_qdisc_tdmrx),
		cmocka_unit_test(test_bypass),
		cmocka_unit_test(test_bypass_packet),
		cmocka_unit_test(test_json_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
