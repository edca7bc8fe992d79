// SPDX-License-Identifier: GPL-2.0
/*
 * tdmctl doctor: gathering the facts.  Everything here only reads:
 * SIOCETHTOOL GET commands, RTM_GETQDISC, RTM_GETDCB, sock_diag dumps
 * (AF_XDP, AF_PACKET) and /proc/PID/fd, the tdmrx GET, ptp4l's GET
 * management messages, adjtimex(2) with modes 0, sysfs and procfs, the BPF
 * programs on the interface.  One exception writes: a tc filter of the
 * BPF recorder whose owner is gone is removed, as the next capture would.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/ethtool.h>
#include <linux/magic.h>
#include <linux/net_tstamp.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include "doctor.h"
#include "tdm_cfg.h"
#include "tdm_nl.h"
#include "tdm_phc.h"
#include "tdm_rx.h"
#include "tdm_rxbpf.h"
#include "tdm_util.h"

#ifndef CAP_BPF
#define CAP_BPF 39	/* linux/capability.h of 5.8 on */
#endif

/* A fact that could not be read: errno e and why (a long path is cut). */
#define FACT_ERR(fact, e, ...) do { \
	(fact).have = false; \
	(fact).err_no = (e); \
	tdm_set_err((fact).err, sizeof((fact).err), __VA_ARGS__); \
} while (0)

/* A PATH_MAX directory and a sysfs file name in it: never cut. */
#define SUBPATH_MAX	(PATH_MAX + 32)

/* Small file into buf; 0 or -1 with errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	size_t n;

	if (!fp)
		return -1;
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	if (ferror(fp)) {
		int e = errno;

		fclose(fp);
		errno = e ? e : EIO;
		return -1;
	}
	fclose(fp);
	return 0;
}

static int read_long(const char *path, long *v)
{
	char buf[64], *end;

	if (read_small(path, buf, sizeof(buf)))
		return -1;
	errno = 0;
	*v = strtol(buf, &end, 10);
	if (errno || end == buf) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* The whole of a procfs file (no size known up front); caller frees. */
static char *read_all(const char *path)
{
	char err[DOC_TEXT];
	size_t n;

	return tdm_read_file(path, 16 * 1024 * 1024, &n, err, sizeof(err));
}

/* ---- ethtool ------------------------------------------------------------- */

static int ethtool(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	tdm_strlcpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name));
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

static const char *eterr(int e)
{
	return e == EOPNOTSUPP ? "the driver does not report it" : strerror(e);
}

static void gather_ethtool(struct doctor_facts *f)
{
	struct ethtool_ringparam ring = { .cmd = ETHTOOL_GRINGPARAM };
	struct ethtool_coalesce co = { .cmd = ETHTOOL_GCOALESCE };
	struct {
		struct ethtool_link_settings s;
		uint32_t masks[3 * 127];
	} ls;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		int e = errno;

		FACT_ERR(f->ts, e, "socket: %s", strerror(e));
		FACT_ERR(f->ring, e, "socket: %s", strerror(e));
		FACT_ERR(f->coal, e, "socket: %s", strerror(e));
		FACT_ERR(f->link, e, "socket: %s", strerror(e));
		return;
	}
	if (tdm_phc_index(f->ifname, &f->ts.phc_index, &f->ts.so_timestamping,
			  NULL, 0) == 0)
		f->ts.have = true;
	else
		FACT_ERR(f->ts, errno, "%s", eterr(errno));
	if (ethtool(fd, f->ifname, &ring) == 0) {
		f->ring.have = true;
		f->ring.rx = ring.rx_pending;
		f->ring.rx_max = ring.rx_max_pending;
		f->ring.tx = ring.tx_pending;
		f->ring.tx_max = ring.tx_max_pending;
	} else {
		FACT_ERR(f->ring, errno, "%s", eterr(errno));
	}
	if (ethtool(fd, f->ifname, &co) == 0) {
		f->coal.have = true;
		f->coal.adaptive_rx = co.use_adaptive_rx_coalesce;
		f->coal.adaptive_tx = co.use_adaptive_tx_coalesce;
		f->coal.rx_usecs = co.rx_coalesce_usecs;
		f->coal.rx_frames = co.rx_max_coalesced_frames;
		f->coal.tx_usecs = co.tx_coalesce_usecs;
		f->coal.tx_frames = co.tx_max_coalesced_frames;
	} else {
		FACT_ERR(f->coal, errno, "%s", eterr(errno));
	}

	/* ETHTOOL_GLINKSETTINGS: the handshake on the mask size first. */
	memset(&ls, 0, sizeof(ls));
	ls.s.cmd = ETHTOOL_GLINKSETTINGS;
	if (ethtool(fd, f->ifname, &ls) == 0 &&
	    ls.s.link_mode_masks_nwords < 0 &&
	    -ls.s.link_mode_masks_nwords <= 127) {
		int8_t nw = (int8_t)-ls.s.link_mode_masks_nwords;

		memset(&ls, 0, sizeof(ls));
		ls.s.cmd = ETHTOOL_GLINKSETTINGS;
		ls.s.link_mode_masks_nwords = nw;
		if (ethtool(fd, f->ifname, &ls) == 0) {
			f->link.have = true;
			f->link.speed_mbps = ls.s.speed;
			f->link.full = ls.s.duplex == DUPLEX_FULL;
		}
	}
	if (!f->link.have) {
		struct ethtool_cmd cmd = { .cmd = ETHTOOL_GSET };

		if (ethtool(fd, f->ifname, &cmd) == 0) {
			f->link.have = true;
			f->link.speed_mbps = ethtool_cmd_speed(&cmd);
			f->link.full = cmd.duplex == DUPLEX_FULL;
		} else {
			FACT_ERR(f->link, errno, "%s", eterr(errno));
		}
	}
	close(fd);
}

/* ---- flow control ---------------------------------------------------------- */

static int pfc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct doctor_facts *f = data;

	if (doc_dcb_pfc_parse(nlh, &f->pfc.cap, &f->pfc.en))
		f->pfc.have = true;
	return MNL_CB_OK;
}

static void gather_pfc(struct doctor_facts *f)
{
	char buf[256], err[DOC_TEXT];
	struct nlmsghdr *nlh;
	struct dcbmsg *d;
	struct tdm_nl nl;

	if (tdm_nl_open(&nl, NETLINK_ROUTE, err, sizeof(err))) {
		FACT_ERR(f->pfc, errno, "%s", err);
		return;
	}
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETDCB;
	d = mnl_nlmsg_put_extra_header(nlh, sizeof(*d));
	d->dcb_family = AF_UNSPEC;
	d->cmd = DCB_CMD_IEEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, f->ifname);
	if (tdm_nl_talk(&nl, nlh, false, pfc_cb, f, err, sizeof(err)))
		FACT_ERR(f->pfc, errno, "%s", errno == EOPNOTSUPP ?
			 "no DCB support in the driver" : err);
	else if (!f->pfc.have)
		FACT_ERR(f->pfc, ENOENT, "the driver reports no IEEE PFC settings");
	tdm_nl_close(&nl);
}

static void gather_flow_control(struct doctor_facts *f)
{
	struct ethtool_pauseparam pp = { .cmd = ETHTOOL_GPAUSEPARAM };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		FACT_ERR(f->pause, errno, "socket: %s", strerror(errno));
	} else if (ethtool(fd, f->ifname, &pp) == 0) {
		f->pause.have = true;
		f->pause.autoneg = pp.autoneg;
		f->pause.rx = pp.rx_pause;
		f->pause.tx = pp.tx_pause;
	} else {
		FACT_ERR(f->pause, errno, "%s", eterr(errno));
	}
	if (fd >= 0)
		close(fd);
	gather_pfc(f);
}

/* ---- sysfs of the interface ---------------------------------------------- */

/*
 * The bus device of the interface: /sys/class/net/IF/device, or its parent
 * when that is a virtio device (the PCI function holds numa_node and
 * msi_irqs).  "" for a virtual device.  name gets its basename ("virtio2",
 * "0000:3b:00.0"), which IRQ names often carry instead of IF.
 */
static void bus_device(const char *ifname, char *dir, size_t len,
		       char *name, size_t nlen)
{
	char path[SUBPATH_MAX], real[PATH_MAX];
	struct stat sb;
	const char *base;

	dir[0] = name[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifname);
	if (!realpath(path, real))
		return;
	base = strrchr(real, '/');
	tdm_strlcpy(name, base ? base + 1 : real, nlen);
	snprintf(path, sizeof(path), "%s/numa_node", real);
	if (stat(path, &sb) && !strncmp(name, "virtio", 6)) {
		snprintf(path, sizeof(path), "%s/..", real);
		if (realpath(path, real) == NULL)
			return;
	}
	tdm_strlcpy(dir, real, len);
}

static void gather_netdev(struct doctor_facts *f)
{
	char path[PATH_MAX], buf[64];
	struct stat sb;
	long v;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/sys/class/net/%s/device", f->ifname);
	f->virtual_dev = stat(path, &sb) != 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/flags", f->ifname);
	f->up = read_small(path, buf, sizeof(buf)) == 0 &&
		(strtoul(buf, NULL, 16) & IFF_UP);
	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", f->ifname);
	if (f->up && read_small(path, buf, sizeof(buf)) == 0 &&
	    strncmp(buf, "up", 2) && strncmp(buf, "unknown", 7))
		f->up = false;	/* down, lowerlayerdown, dormant, ... */

	snprintf(path, sizeof(path), "/sys/class/net/%s/tx_queue_len",
		 f->ifname);
	if (read_long(path, &v) == 0 && v >= 0) {
		f->txqlen.have = true;
		f->txqlen.len = (uint32_t)v;
	} else {
		FACT_ERR(f->txqlen, errno, "%s: %s", path, strerror(errno));
	}

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", f->ifname);
	d = opendir(path);
	if (!d) {
		FACT_ERR(f->bql, errno, "%s: %s", path, strerror(errno));
		return;
	}
	f->bql.have = true;
	while ((e = readdir(d))) {
		char *end;
		unsigned long q;

		if (strncmp(e->d_name, "tx-", 3))
			continue;
		q = strtoul(e->d_name + 3, &end, 10);
		if (*end || q >= DOC_MAX_TXQ)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/net/%s/queues/%s/byte_queue_limits/limit_max",
			 f->ifname, e->d_name);
		if (read_long(path, &v)) {
			/* No BQL in this kernel. */
			f->bql.have = false;
			FACT_ERR(f->bql, errno, "no byte_queue_limits (kernel without CONFIG_BQL)");
			break;
		}
		f->bql.limit_max[q] = (uint32_t)v;
		if (q + 1 > f->bql.ntxq)
			f->bql.ntxq = (unsigned int)q + 1;
	}
	closedir(d);
}

/* ---- CPUs, idle states, IRQs, NUMA ----------------------------------------- */

static void gather_cpus(struct doctor_facts *f)
{
	struct doc_cpuset online;
	char path[PATH_MAX], buf[4096];
	unsigned int cpu, s;

	memset(&online, 0, sizeof(online));
	if (read_small("/sys/devices/system/cpu/online", buf, sizeof(buf)) ||
	    doc_cpulist_parse(buf, &online))
		doc_cpuset_set(&online, 0);
	f->ncpus_online = doc_cpuset_count(&online);

	if (read_small("/sys/devices/system/cpu/isolated", buf, sizeof(buf)) ||
	    doc_cpulist_parse(buf, &f->isolated.set))
		FACT_ERR(f->isolated, errno, "/sys/devices/system/cpu/isolated unreadable");
	else
		f->isolated.have = true;

	if (read_small("/sys/devices/system/cpu/cpuidle/current_driver",
		       buf, sizeof(buf)) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		tdm_strlcpy(f->idle.driver, buf, sizeof(f->idle.driver));
	}
	for (cpu = 0; cpu < DOC_MAX_CPUS; cpu++) {
		if (!doc_cpuset_test(&online, cpu))
			continue;
		for (s = 0; s < DOC_MAX_STATES; s++) {
			long lat, dis;

			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%u/cpuidle/state%u/latency",
				 cpu, s);
			if (read_long(path, &lat))
				break;
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%u/cpuidle/state%u/disable",
				 cpu, s);
			if (read_long(path, &dis))
				dis = 0;
			if (s >= f->idle.nstates) {
				f->idle.nstates = s + 1;
				f->idle.st[s].latency_us = (uint32_t)lat;
				snprintf(path, sizeof(path),
					 "/sys/devices/system/cpu/cpu%u/cpuidle/state%u/name",
					 cpu, s);
				if (read_small(path, buf, sizeof(buf)) == 0) {
					buf[strcspn(buf, "\n")] = '\0';
					tdm_strlcpy(f->idle.st[s].name, buf,
						    sizeof(f->idle.st[s].name));
				}
			}
			f->idle.st[s].ncpus++;
			if (!dis)
				f->idle.st[s].enabled_on++;
		}
	}
	if (f->idle.nstates || f->idle.driver[0])
		f->idle.have = true;
	else
		FACT_ERR(f->idle, ENOENT, "no cpuidle states in sysfs (no cpuidle driver)");
}

/* irqbalance and phc2sys, by their /proc/PID/comm. */
static void gather_procs(struct doctor_facts *f)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], comm[64];

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (read_small(path, comm, sizeof(comm)))
			continue;
		if (!strcmp(comm, "irqbalance\n"))
			f->irqbalance = true;
		if (!strcmp(comm, "phc2sys\n"))
			f->phc2sys = true;
	}
	closedir(d);
}

static void add_irq(struct doctor_facts *f, unsigned int irq)
{
	unsigned int i;

	for (i = 0; i < f->irqs.n; i++)
		if (f->irqs.irq[i] == irq)
			return;
	if (f->irqs.n < DOC_MAX_IRQS)
		f->irqs.irq[f->irqs.n++] = irq;
}

static void gather_irqs(struct doctor_facts *f)
{
	char path[SUBPATH_MAX], buf[8192];
	unsigned int i, found[DOC_MAX_IRQS], n;
	char *text, dev[PATH_MAX], devname[64];
	DIR *d;

	bus_device(f->ifname, dev, sizeof(dev), devname, sizeof(devname));
	snprintf(path, sizeof(path), "%s/msi_irqs", dev);
	d = dev[0] ? opendir(path) : NULL;
	if (d) {
		struct dirent *e;

		while ((e = readdir(d))) {
			char *end;
			unsigned long irq = strtoul(e->d_name, &end, 10);

			if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && !*end)
				add_irq(f, (unsigned int)irq);
		}
		closedir(d);
	}
	text = read_all("/proc/interrupts");
	if (text) {
		n = doc_irqs_from_interrupts(text, f->ifname, found,
					     DOC_MAX_IRQS);
		for (i = 0; i < n; i++)
			add_irq(f, found[i]);
		if (devname[0]) {
			n = doc_irqs_from_interrupts(text, devname, found,
						     DOC_MAX_IRQS);
			for (i = 0; i < n; i++)
				add_irq(f, found[i]);
		}
		free(text);
	} else if (!f->irqs.n) {
		FACT_ERR(f->irqs, errno, "/proc/interrupts: %s", strerror(errno));
		return;
	}
	f->irqs.have = true;
	for (i = 0; i < f->irqs.n; i++) {
		snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list",
			 f->irqs.irq[i]);
		if (read_small(path, buf, sizeof(buf)) ||
		    doc_cpulist_parse(buf, &f->irqs.aff[i]))
			memset(&f->irqs.aff[i], 0, sizeof(f->irqs.aff[i]));
	}
}

static void gather_numa(struct doctor_facts *f)
{
	char path[SUBPATH_MAX], buf[4096];
	char dev[PATH_MAX], devname[64];
	long node;
	DIR *d;
	struct dirent *e;

	f->numa.node = -1;
	d = opendir("/sys/devices/system/node");
	if (d) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "node", 4) &&
			    e->d_name[4] >= '0' && e->d_name[4] <= '9')
				f->numa.nnodes++;
		closedir(d);
	}
	if (!f->numa.nnodes)
		f->numa.nnodes = 1;
	bus_device(f->ifname, dev, sizeof(dev), devname, sizeof(devname));
	snprintf(path, sizeof(path), "%s/numa_node", dev);
	if (!dev[0] || read_long(path, &node)) {
		FACT_ERR(f->numa, errno, "%s", f->virtual_dev ?
			 "virtual device: no NUMA node" : strerror(errno));
		return;
	}
	f->numa.have = true;
	f->numa.node = (int)node;
	if (node >= 0) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%ld/cpulist", node);
		if (read_small(path, buf, sizeof(buf)) == 0)
			doc_cpulist_parse(buf, &f->numa.node_cpus);
	}
}

/* ---- PTP, PHC, qdisc, tdmrx ------------------------------------------------- */

/* PHC - CLOCK_TAI, once the ethtool facts named the PHC. */
static void gather_phc(struct doctor_facts *f)
{
	struct tdm_phc p;
	char err[DOC_TEXT];

	if (!f->ts.have || f->ts.phc_index < 0)
		return;
	if (tdm_phc_open(&p, f->ts.phc_index, err, sizeof(err))) {
		FACT_ERR(f->phc, errno, "%s", err);
		return;
	}
	if (tdm_phc_read(&p, &f->phc.off, err, sizeof(err)))
		FACT_ERR(f->phc, errno, "%s", err);
	else
		f->phc.have = true;
	tdm_phc_close(&p);
}

static void gather_ptp(struct doctor_facts *f)
{
	struct tdm_ptp p;
	struct stat sb;
	char err[DOC_TEXT];
	int tai;

	if (tdm_tai_offset(&tai, err, sizeof(err)) == 0) {
		f->tai.have = true;
		f->tai.tai = tai;
	} else {
		FACT_ERR(f->tai, errno, "%s", err);
	}

	if (stat(f->ptp_socket, &sb) || !S_ISSOCK(sb.st_mode)) {
		/* Not running is a fact, not a failure to read one. */
		f->ptp.have = true;
		f->ptp.running = false;
		snprintf(f->ptp.err, sizeof(f->ptp.err), "no ptp4l socket at %s",
			 f->ptp_socket);
		return;
	}
	f->ptp.running = true;
	if (tdm_ptp_open(&p, f->ptp_socket, 0, err, sizeof(err))) {
		FACT_ERR(f->ptp, errno, "%s", err);
		return;
	}
	p.port_number = (uint16_t)getpid();
	if (tdm_ptp_query(&p, 500, &f->ptp.st, err, sizeof(err)) &&
	    !f->ptp.st.port_ok)
		FACT_ERR(f->ptp, errno, "%s", err);
	else
		f->ptp.have = true;
	tdm_ptp_close(&p);
}

static void gather_qdisc(struct doctor_facts *f)
{
	struct tdm_qdisc_target t = { .parent = TC_H_ROOT };
	struct tdm_rtnl r;
	char err[DOC_TEXT];

	tdm_strlcpy(t.ifname, f->ifname, sizeof(t.ifname));
	if (tdm_rtnl_open(&r, err, sizeof(err))) {
		FACT_ERR(f->qdisc, errno, "%s", err);
		return;
	}
	if (tdm_qdisc_resolve(&t, err, sizeof(err)) ||
	    tdm_qdisc_get(&r, &t, &f->qdisc.q, err, sizeof(err)))
		FACT_ERR(f->qdisc, errno, "%s", err);
	else
		f->qdisc.have = true;
	tdm_rtnl_close(&r);
}

/* What sends on the interface past its qdisc (tdm.bypass): its XDP
 * program and AF_XDP sockets, the packet sockets with a TX ring.
 */
static void gather_bypass(struct doctor_facts *f)
{
	char err[DOC_TEXT] = "";
	int ifindex = (int)if_nametoindex(f->ifname), e = errno;

	if (!ifindex) {
		FACT_ERR(f->xdp, e, "%s: %s", f->ifname, strerror(e));
		FACT_ERR(f->pkt, e, "%s: %s", f->ifname, strerror(e));
		return;
	}
	if (tdm_xdp_get(ifindex, &f->xdp.in, err, sizeof(err))) {
		FACT_ERR(f->xdp, errno, "%s", err);
	} else {
		f->xdp.have = true;
		if (!f->xdp.in.xsk_known)
			tdm_strlcpy(f->xdp.err, err, sizeof(f->xdp.err));
	}
	if (tdm_pkt_senders(ifindex, &f->pkt.in, err, sizeof(err)))
		FACT_ERR(f->pkt, errno, "%s", err);
	else
		f->pkt.have = true;
}

static void gather_rx(struct doctor_facts *f)
{
	struct tdm_rx rx;
	struct tdm_rx_info info;
	char err[DOC_TEXT];
	unsigned int i;

	if (tdm_rx_open(&rx, err, sizeof(err))) {
		if (strstr(err, "not loaded")) {
			f->rx.have = true;
			f->rx.loaded = false;
		} else {
			FACT_ERR(f->rx, errno, "%s", err);
		}
		return;
	}
	f->rx.loaded = true;
	if (tdm_rx_get(&rx, &info, err, sizeof(err))) {
		FACT_ERR(f->rx, errno, "%s", err);
	} else {
		f->rx.have = true;
		f->rx.attached = info.attached;
		tdm_strlcpy(f->rx.attached_to, info.ifname,
			    sizeof(f->rx.attached_to));
		if (!f->rx.attached_to[0] && info.ifindex)
			if_indextoname(info.ifindex, f->rx.attached_to);
		f->rx.nports = info.nports;
		for (i = 0; i < info.nports && i < 16; i++)
			f->rx.ports[i] = info.ports[i];
	}
	tdm_rx_close(&rx);
}

static bool cap_on(cap_t c, cap_value_t v)
{
	cap_flag_value_t on = CAP_CLEAR;

	return c && !cap_get_flag(c, v, CAP_EFFECTIVE, &on) && on == CAP_SET;
}

/* The word in brackets of /sys/kernel/security/lockdown ("[none]
 * integrity confidentiality").
 */
static void read_lockdown(char *out, size_t len)
{
	char buf[128], *a, *b;
	FILE *fp = fopen("/sys/kernel/security/lockdown", "re");

	out[0] = 0;
	if (!fp)
		return;
	if (fgets(buf, sizeof(buf), fp) && (a = strchr(buf, '[')) &&
	    (b = strchr(a, ']'))) {
		*b = 0;
		tdm_strlcpy(out, a + 1, len);
	}
	fclose(fp);
}

/* tdmrx.ko in modules.dep of the running kernel (modprobe can find it). */
static bool kmod_in_tree(void)
{
	char path[PATH_MAX], line[1024];
	struct utsname u;
	bool found = false;
	FILE *fp;

	if (uname(&u))
		return false;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		char *c = strchr(line, ':');

		if (c && c - line >= 8 && !strncmp(c - 8, "tdmrx.ko", 8) &&
		    (c - line == 8 || c[-9] == '/'))
			found = true;
	}
	fclose(fp);
	return found;
}

static void gather_node(struct doctor_facts *f)
{
	cap_t c = cap_get_proc();
	struct statfs sfs;

	read_lockdown(f->node.lockdown, sizeof(f->node.lockdown));
	f->node.btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	f->node.kmod_found = kmod_in_tree();
	f->node.cap_sys_module = cap_on(c, CAP_SYS_MODULE);
	f->node.cap_bpf = cap_on(c, CAP_BPF);
	f->node.cap_net_admin = cap_on(c, CAP_NET_ADMIN);
	f->node.cap_sys_admin = cap_on(c, CAP_SYS_ADMIN);
	if (c)
		cap_free(c);
	f->node.bpffs = !statfs("/sys/fs/bpf", &sfs) &&
			(unsigned long)sfs.f_type == BPF_FS_MAGIC;
	f->node.xdp_kfunc = tdm_rxbpf_xdp_kfunc();
	f->node.have = true;
}

static void gather_bpf(struct doctor_facts *f)
{
	char err[DOC_TEXT];
	int r, mode;

	if (tdm_rxbpf_query(f->ifname, &f->bpf.st, err, sizeof(err))) {
		FACT_ERR(f->bpf, errno, "%s", err);
		return;
	}
	f->bpf.have = true;
	f->bpf.xdp_progs = tdm_rxbpf_xdp_progs(f->ifname, &mode, err, sizeof(err));
	if (f->bpf.st.attached && f->bpf.st.mode != TDMRX_BPF_MODE_TCX &&
	    !f->bpf.st.owner_alive) {
		r = tdm_rxbpf_reap(f->ifname, err, sizeof(err));
		if (r > 0)
			f->bpf.reaped = true;
		else if (r < 0)
			FACT_ERR(f->bpf, errno, "%s", err);
	}
}

void doctor_gather(struct doctor_facts *f)
{
	gather_ptp(f);
	gather_netdev(f);
	gather_ethtool(f);
	gather_phc(f);
	gather_flow_control(f);
	gather_cpus(f);
	gather_irqs(f);
	gather_numa(f);
	gather_qdisc(f);
	gather_bypass(f);
	gather_rx(f);
	gather_node(f);
	gather_bpf(f);
	gather_procs(f);
	if (f->role_auto)
		f->role = (f->rx.attached &&
			   !strcmp(f->rx.attached_to, f->ifname)) ||
			  (f->bpf.st.attached && !f->bpf.reaped) ?
			  DOC_RECEIVER : DOC_SENDER;
}
