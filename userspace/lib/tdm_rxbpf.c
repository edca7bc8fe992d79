// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF receive recorder's loader and reader (tdm_rxbpf.h): libbpf, the
 * skeleton that `bpftool gen skeleton` made of userspace/bpf/tdmrx.bpf.c,
 * tcx or a tc filter, or the XDP hook (libxdp's dispatcher, or the program
 * alone, device-bound), and the BPF ring buffers into libtdm's merge.
 *
 * Rings.  One BPF ring buffer per CPU by default, in the program's
 * array-of-maps `rings`: a CPU reserves in its own ring only, so no two
 * CPUs contend for a ring's lock, and the records of one CPU come out in
 * the order that CPU hooked them, which is what the per-CPU watermarks
 * promise the merge (a shared ring hands out a record only once every
 * earlier reservation, of any CPU, is committed).  cfg.shared selects one
 * ring for all CPUs, for the comparison (Documentation/tdmrx.rst).
 *
 * Watermarks.  The program stores its hook time into marks[cpu] after the
 * submit (tdmrx.bpf.c).  We load every mark (acquire) before we consume,
 * so every record of that CPU consumed later was hooked at the mark or
 * after: the merge's condition (tdm_merge.h).  A CPU that is not inside the
 * hook gets the time read before we looked, less RXBPF_QUIET_NS, as its
 * mark (tdmrx.bpf.c, "A quiet CPU"), so a CPU without traffic does not hold
 * the merge back.
 *
 * Teardown.  tcx: BPF_LINK_DETACH waits for the programs in flight
 * (synchronize_rcu in the kernel).  tc and XDP: the filter or program is
 * taken off and the programs in flight finish on their own;
 * tdm_rxbpf_drain_final() waits until the counters say every matched
 * packet was recorded or dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/net_tstamp.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <xdp/libxdp.h>

#include "tdm_nl.h"
#include "tdm_rxbpf.h"
#include "tdm_util.h"
#include "tdmrx.skel.h"

/* Not in the 6.1 uapi headers that Debian 12 builds against: the tcx
 * attach point (6.6), a stable value of enum bpf_attach_type.
 */
#define RXBPF_TCX_INGRESS	46
/* Nor the flag that binds an XDP program to a device at load (6.3), which
 * the XDP RX metadata kfuncs need.
 */
#define RXBPF_XDP_DEV_BOUND_ONLY	(1U << 6)
#define RXBPF_RX_TS_KFUNC	"bpf_xdp_metadata_rx_timestamp"

/*
 * A CPU outside the hook gets T - RXBPF_QUIET_NS as its mark (tdmrx.bpf.c,
 * "A quiet CPU"), not T: a packet the stack stamped may still wait in that
 * CPU's backlog, unhooked, and under load (ksoftirqd, a preempted vCPU) for
 * tens of milliseconds, longer than the merge's reorder bound.  The
 * margin covers that wait, as tdmrx's mark timer, which runs in the same
 * CPU's softirq, is held back with the backlog; it delays the results of a
 * quiet CPU by as much.  (tdmrx_bpf.sh saw 31 of 1200 records late with T,
 * on a host at load 9.)
 */
#define RXBPF_QUIET_NS		100000000LL

struct tdm_rxbpf {
	struct tdmrx_bpf *skel;
	struct bpf_program *prog;	/* the one of the three loaded */
	char ifname[IF_NAMESIZE];
	int ifindex;
	enum tdm_rxbpf_hook hook;
	int mode;			/* TDMRX_BPF_MODE_* once attached */
	int link_fd;			/* tcx */
	struct xdp_program *xp;		/* XDP: libxdp's handle of b->prog */
	enum xdp_attach_mode xdp_mode;	/* XDP: the mode it runs in */
	bool xdp_alone;			/* XDP: no dispatcher (libxdp's fallback) */
	char mode_str[112];
	bool attached;
	bool made_clsact;		/* tc: we added the clsact qdisc */
	int *ring_fd;
	unsigned int nrings, ncpus;
	uint32_t ring_bytes, ring_records;
	struct ring_buffer *rb;
	const struct tdmrx_bpf_mark *marks;	/* mmapped, ncpus */
	size_t marks_len;
	int ts_fd;			/* a socket asking for RX stamps */
	uint64_t read;			/* records fed */
	/* feed's context */
	struct tdm_merge *m;
	tdm_rx_cb tap;
	void *tap_ctx;
};

/* ---- helpers ---------------------------------------------------------------- */

uint64_t tdm_proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: count from the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

static int no_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int no_xdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* libbpf's and libxdp's own messages only with TDM_BPF_DEBUG set. */
static void quiet_libbpf(void)
{
	if (!getenv("TDM_BPF_DEBUG")) {
		libbpf_set_print(no_print);
		libxdp_set_print(no_xdp_print);
	}
}

static int set_priv_err(int e, const char *what, char *err, size_t errlen)
{
	if (e == EPERM || e == EACCES)
		return tdm_set_err(err, errlen,
			"%s: %s: the BPF recorder needs CAP_BPF and CAP_NET_ADMIN (or CAP_SYS_ADMIN): run it as root",
			what, strerror(e));
	return tdm_set_err(err, errlen, "%s: %s", what, strerror(e));
}

static uint32_t pow2_at_least(uint64_t v)
{
	uint64_t p = TDMRX_BPF_MIN_RING_BYTES;

	while (p < v && p < (1ULL << 31))
		p <<= 1;
	return (uint32_t)p;
}

/* TAI - REALTIME, to the second it is (the kernel's TAI offset). */
static int64_t tai_offset(void)
{
	int64_t r1 = tdm_clock_ns(CLOCK_REALTIME);
	int64_t t = tdm_clock_ns(CLOCK_TAI);
	int64_t r2 = tdm_clock_ns(CLOCK_REALTIME);
	int64_t d = t - r1 / 2 - r2 / 2;

	return (d + (d < 0 ? -500000000 : 500000000)) / 1000000000 * 1000000000;
}

/* ---- the owner tag --------------------------------------------------------- */

/* The owner tag of program id, if it is ours.  1 ours (tag in *o), 0 not
 * ours, -1 error.
 */
static int prog_owner(uint32_t id, struct tdmrx_bpf_owner *o)
{
	struct bpf_prog_info info;
	uint32_t map_ids[16], len = sizeof(info), i;
	int fd, ret = 0;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 16;
	info.map_ids = (uint64_t)(uintptr_t)map_ids;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		close(fd);
		return -1;
	}
	close(fd);
	if (strcmp(info.name, TDMRX_BPF_PROG_NAME) &&
	    strcmp(info.name, TDMRX_XDP_PROG_NAME) &&
	    strcmp(info.name, TDMRX_XDP_HW_PROG_NAME))
		return 0;
	memset(o, 0, sizeof(*o));
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi), key = 0;
		int mfd = bpf_map_get_fd_by_id(map_ids[i]);

		if (mfd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (!bpf_obj_get_info_by_fd(mfd, &mi, &mlen) &&
		    !strcmp(mi.name, TDMRX_BPF_OWNER_MAP) &&
		    !bpf_map_lookup_elem(mfd, &key, o))
			ret = 1;
		close(mfd);
		if (ret)
			break;
	}
	return ret ? 1 : 0;
}

static void fill_state(struct tdm_rxbpf_state *st, uint32_t id, int mode,
		       const struct tdmrx_bpf_owner *o)
{
	st->attached = true;
	st->mode = mode;
	st->prog_id = id;
	st->owner = (pid_t)o->pid;
	st->owner_alive = o->pid && o->start_ticks &&
			  tdm_proc_start_ticks((pid_t)o->pid) == o->start_ticks;
	if (st->owner_alive)
		tdm_proc_comm((int)st->owner, st->owner_comm, sizeof(st->owner_comm));
}

static void tc_hook_of(struct bpf_tc_hook *h, int ifindex)
{
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->ifindex = ifindex;
	h->attach_point = BPF_TC_INGRESS;
}

static void tc_opts_of(struct bpf_tc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->handle = TDMRX_BPF_TC_HANDLE;
	o->priority = TDMRX_BPF_TC_PRIO;
}

/* ---- the XDP hook ------------------------------------------------------------ */

/* libxdp's view of ifindex's XDP programs: NULL with *e = 0 if there are
 * none, NULL with *e = the error if they cannot be listed.
 */
static struct xdp_multiprog *xdp_progs_of(int ifindex, int *e)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	long ret = libxdp_get_error(mp);

	*e = 0;
	if (!ret && mp && xdp_multiprog__main_prog(mp))
		return mp;
	if (ret && ret != -ENOENT)
		*e = (int)-ret;
	if (!ret)
		xdp_multiprog__close(mp);	/* an offloaded one only */
	return NULL;
}

/* The recorder among mp's programs (skip: one of ours to pass over), with
 * its owner tag; NULL if none.
 */
static struct xdp_program *xdp_recorder_in(struct xdp_multiprog *mp,
					   uint32_t skip,
					   struct tdmrx_bpf_owner *o)
{
	struct xdp_program *p;

	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		return xdp_program__id(p) != skip &&
		       prog_owner(xdp_program__id(p), o) == 1 ? p : NULL;
	}
	for (p = xdp_multiprog__next_prog(NULL, mp); p;
	     p = xdp_multiprog__next_prog(p, mp))
		if (xdp_program__id(p) != skip &&
		    prog_owner(xdp_program__id(p), o) == 1)
			return p;
	return NULL;
}

/* Fill st with the XDP recorder on ifindex, if any (not skip); with
 * reap_dead, take it off if its owner is gone: 1 then.  0, or -errno.
 */
static int xdp_recorder(int ifindex, uint32_t skip, struct tdm_rxbpf_state *st,
			bool reap_dead)
{
	struct tdmrx_bpf_owner o;
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	int e, ret = 0;

	mp = xdp_progs_of(ifindex, &e);
	if (!mp)
		return -e;
	p = xdp_recorder_in(mp, skip, &o);
	if (p) {
		fill_state(st, xdp_program__id(p),
			   o.mode ? (int)o.mode : TDMRX_BPF_MODE_XDP, &o);
		if (reap_dead && !st->owner_alive) {
			ret = xdp_program__detach(p, ifindex,
						  xdp_multiprog__attach_mode(mp), 0);
			ret = ret ? ret : 1;
		}
	}
	xdp_multiprog__close(mp);
	return ret;
}

int tdm_rxbpf_xdp_progs(const char *ifname, int *mode, char *err,
			size_t errlen)
{
	struct xdp_multiprog *mp;
	int ifindex, e, n;

	quiet_libbpf();
	*mode = XDP_MODE_UNSPEC;
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex)
		return tdm_set_err(err, errlen, "no such device: %s", ifname);
	mp = xdp_progs_of(ifindex, &e);
	if (!mp)
		return e ? set_priv_err(e, "cannot list the device's XDP programs",
					err, errlen) : 0;
	*mode = xdp_multiprog__attach_mode(mp);
	n = xdp_multiprog__is_legacy(mp) ? 1 : xdp_multiprog__program_count(mp);
	xdp_multiprog__close(mp);
	return n > 0 ? n : 1;
}

int tdm_rxbpf_xdp_kfunc(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id;

	if (libbpf_get_error(btf))
		return -1;
	id = btf__find_by_name_kind(btf, RXBPF_RX_TS_KFUNC, BTF_KIND_FUNC);
	btf__free(btf);
	return id > 0;
}

static const char *xdp_mode_name(enum xdp_attach_mode m)
{
	return m == XDP_MODE_SKB ? "skb" : m == XDP_MODE_NATIVE ? "native" :
	       m == XDP_MODE_HW ? "offload" : "?";
}

/* How it is attached, in words, once attached. */
static void mode_name(struct tdm_rxbpf *b)
{
	const char *how = b->mode == TDMRX_BPF_MODE_XDP_HW ?
			  "device-bound, alone" :
			  b->xdp_alone ? "alone: libxdp loaded no dispatcher (bpffs at /sys/fs/bpf?)" :
			  "libxdp dispatcher";

	if (b->mode == TDMRX_BPF_MODE_TCX || b->mode == TDMRX_BPF_MODE_TC)
		snprintf(b->mode_str, sizeof(b->mode_str), "%s",
			 b->mode == TDMRX_BPF_MODE_TCX ? "tcx" : "tc");
	else
		snprintf(b->mode_str, sizeof(b->mode_str), "xdp %s, %s",
			 xdp_mode_name(b->xdp_mode), how);
}

/* Through libxdp, in the mode of the programs already there (a dispatcher
 * holds one mode), else as the kernel chooses (native where the driver
 * has XDP).  This loads the object: as an extension of the dispatcher, or
 * alone as XDP where libxdp has no dispatcher (no bpffs).
 */
static int attach_xdp(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xo, .obj = b->skel->obj,
			    .prog_name = TDMRX_XDP_PROG_NAME);
	struct xdp_multiprog *mp;
	int mode, ret, e;

	if (tdm_rxbpf_xdp_progs(b->ifname, &mode, err, errlen) < 0)
		return -1;
	b->xp = xdp_program__create(&xo);
	if (libxdp_get_error(b->xp)) {
		ret = (int)-libxdp_get_error(b->xp);
		b->xp = NULL;
		return set_priv_err(ret, "cannot open the XDP recorder", err, errlen);
	}
	if (xdp_program__set_run_prio(b->xp, TDMRX_XDP_RUN_PRIO) ||
	    xdp_program__set_chain_call_enabled(b->xp, XDP_PASS, true))
		return tdm_set_err(err, errlen, "cannot set the XDP recorder's run order");
	ret = xdp_program__attach(b->xp, b->ifindex, (enum xdp_attach_mode)mode, 0);
	if (ret == -EBUSY || ret == -EEXIST) {
		errno = EBUSY;
		return tdm_set_err(err, errlen,
			"%s has an XDP program that is not libxdp's dispatcher (libxdp loads none without bpffs at /sys/fs/bpf, or where the kernel refuses its extensions: TDM_BPF_DEBUG=1 shows why), and a device holds one XDP program only",
			b->ifname);
	}
	if (ret)
		return set_priv_err(-ret, "cannot attach the XDP recorder (libxdp)",
				    err, errlen);
	b->attached = true;
	b->mode = TDMRX_BPF_MODE_XDP;
	mp = xdp_progs_of(b->ifindex, &e);
	b->xdp_mode = mp ? xdp_multiprog__attach_mode(mp) : XDP_MODE_UNSPEC;
	b->xdp_alone = !mp || xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	return 0;
}

/* The device-bound program, alone in native mode: no dispatcher can hold
 * it, and a device that has an XDP program already is refused (EBUSY).
 */
static int attach_xdp_hw(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	int ret = bpf_xdp_attach(b->ifindex, bpf_program__fd(b->prog),
				 XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST,
				 NULL);

	if (ret == -EBUSY || ret == -EEXIST) {
		errno = EBUSY;
		return tdm_set_err(err, errlen,
			"%s has an XDP program already: --recorder xdp-hw must be alone on the device (its program is device-bound, which libxdp's dispatcher cannot hold); --recorder xdp records beside it",
			b->ifname);
	}
	if (ret)
		return set_priv_err(-ret, "cannot attach the device-bound XDP recorder in native mode",
				    err, errlen);
	b->attached = true;
	b->mode = TDMRX_BPF_MODE_XDP_HW;
	b->xdp_mode = XDP_MODE_NATIVE;
	b->xdp_alone = true;
	return 0;
}

/* Another XDP recorder beside ours (two captures that attached at once):
 * as tcx_rival().
 */
static int xdp_rival(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	struct tdm_rxbpf_state st = { 0 };
	int ret = xdp_recorder(b->ifindex, tdm_rxbpf_prog_id(b), &st, false);

	if (ret < 0)
		return set_priv_err(-ret, "cannot list the device's XDP programs",
				    err, errlen);
	if (!st.attached)
		return 0;
	errno = EBUSY;
	return tdm_set_err(err, errlen,
		"the XDP recorder is attached to %s by pid %d (%s), prog id %u (it attached at the same time as this one)",
		b->ifname, (int)st.owner, st.owner_comm[0] ? st.owner_comm : "?",
		st.prog_id);
}

int tdm_rxbpf_query(const char *ifname, struct tdm_rxbpf_state *st,
		    char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_prog_query_opts, q);
	struct tdmrx_bpf_owner o;
	struct bpf_tc_hook h;
	struct bpf_tc_opts t;
	uint32_t ids[64], i;
	int ifindex, ret;

	memset(st, 0, sizeof(*st));
	quiet_libbpf();
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex)
		return tdm_set_err(err, errlen, "no such device: %s", ifname);
	/* tcx (6.6 on): the programs on the device's ingress */
	q.prog_ids = ids;
	q.prog_cnt = 64;
	if (!bpf_prog_query_opts(ifindex, RXBPF_TCX_INGRESS, &q)) {
		for (i = 0; i < q.prog_cnt && i < 64; i++)
			if (prog_owner(ids[i], &o) == 1) {
				fill_state(st, ids[i], TDMRX_BPF_MODE_TCX, &o);
				return 0;
			}
	} else if (errno == EPERM || errno == EACCES) {
		return set_priv_err(errno, "cannot list the device's BPF programs",
				    err, errlen);
	}
	/* the tc filter of the 6.1 path */
	tc_hook_of(&h, ifindex);
	tc_opts_of(&t);
	ret = bpf_tc_query(&h, &t);
	if (ret == -EPERM || ret == -EACCES)
		return set_priv_err(-ret, "cannot list the device's tc filters",
				    err, errlen);
	if (!ret && t.prog_id && prog_owner(t.prog_id, &o) == 1) {
		fill_state(st, t.prog_id, TDMRX_BPF_MODE_TC, &o);
		return 0;
	}
	/* the XDP hook */
	ret = xdp_recorder(ifindex, 0, st, false);
	if (ret < 0)
		return set_priv_err(-ret, "cannot list the device's XDP programs",
				    err, errlen);
	return 0;
}

int tdm_rxbpf_reap(const char *ifname, char *err, size_t errlen)
{
	struct tdm_rxbpf_state st;
	struct bpf_tc_hook h;
	struct bpf_tc_opts t;
	int ret;

	if (tdm_rxbpf_query(ifname, &st, err, errlen))
		return -1;
	if (!st.attached || st.mode == TDMRX_BPF_MODE_TCX || st.owner_alive)
		return 0;
	if (st.mode != TDMRX_BPF_MODE_TC) {
		memset(&st, 0, sizeof(st));
		ret = xdp_recorder((int)if_nametoindex(ifname), 0, &st, true);
		if (ret < 0)
			return set_priv_err(-ret, "cannot remove the stale XDP recorder",
					    err, errlen);
		return ret;
	}
	tc_hook_of(&h, (int)if_nametoindex(ifname));
	tc_opts_of(&t);
	ret = bpf_tc_detach(&h, &t);
	if (ret && ret != -ENOENT) {
		set_priv_err(-ret, "cannot remove the stale tc filter", err, errlen);
		return -1;
	}
	return ret ? 0 : 1;
}

/* ---- attach ---------------------------------------------------------------- */

static int attach_tcx(struct tdm_rxbpf *b)
{
	int fd = bpf_link_create(bpf_program__fd(b->prog),
				 b->ifindex, RXBPF_TCX_INGRESS, NULL);

	if (fd < 0)
		return -errno;
	b->link_fd = fd;
	b->mode = TDMRX_BPF_MODE_TCX;
	return 0;
}

static int count_msg(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	++*(unsigned int *)data;
	return MNL_CB_OK;
}

/* The tc filters on ifindex's clsact qdisc, ingress and egress: how many
 * dump messages (0: none), -1 if it cannot be asked.
 */
static int clsact_filters(int ifindex)
{
	static const uint32_t parents[] = {
		TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
		TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS),
	};
	char buf[MNL_SOCKET_BUFFER_SIZE], err[128];
	unsigned int n = 0, i;
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;
	struct tdm_nl nl;
	int ret = 0;

	if (tdm_nl_open(&nl, NETLINK_ROUTE, err, sizeof(err)))
		return -1;
	for (i = 0; i < sizeof(parents) / sizeof(parents[0]) && !ret; i++) {
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_GETTFILTER;
		tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
		tcm->tcm_family = AF_UNSPEC;
		tcm->tcm_ifindex = ifindex;
		tcm->tcm_parent = parents[i];
		ret = tdm_nl_talk(&nl, nlh, true, count_msg, &n, err, sizeof(err));
	}
	tdm_nl_close(&nl);
	return ret ? -1 : (int)n;
}

static int attach_tc(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts t;
	int ret;

	tc_hook_of(&h, b->ifindex);
	ret = bpf_tc_hook_create(&h);	/* clsact */
	if (ret && ret != -EEXIST)
		return set_priv_err(-ret, "cannot add the clsact qdisc", err, errlen);
	b->made_clsact = !ret;	/* then removed when we go, if left empty */
	tc_opts_of(&t);
	t.prog_fd = bpf_program__fd(b->prog);
	ret = bpf_tc_attach(&h, &t);	/* no REPLACE: EEXIST if taken */
	if (ret == -EEXIST) {
		errno = EBUSY;
		return tdm_set_err(err, errlen,
			"the tc filter of the BPF recorder (ingress handle 0x%x prio 0x%x) was added by someone else just now",
			TDMRX_BPF_TC_HANDLE, TDMRX_BPF_TC_PRIO);
	}
	if (ret)
		return set_priv_err(-ret, "cannot attach the tc filter", err, errlen);
	b->mode = TDMRX_BPF_MODE_TC;
	return 0;
}

/*
 * tcx has no exclusive attach: two captures that both checked for an owner
 * before either attached would both attach.  So each also looks after
 * attaching: the owner tag is in place before the attach (load()), and a
 * capture that finds another tdmrx_bpf program on the ingress besides its
 * own lets go and reports that one.  Of two that raced, at least one sees
 * the other; both may give up, but two never record at once.
 */
static int tcx_rival(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_prog_query_opts, q);
	uint32_t ids[64], mine = tdm_rxbpf_prog_id(b), i;
	struct tdm_rxbpf_state st = { 0 };
	struct tdmrx_bpf_owner o;

	q.prog_ids = ids;
	q.prog_cnt = 64;
	if (bpf_prog_query_opts(b->ifindex, RXBPF_TCX_INGRESS, &q))
		return set_priv_err(errno, "cannot list the device's BPF programs",
				    err, errlen);
	for (i = 0; i < q.prog_cnt && i < 64; i++) {
		if (ids[i] == mine || prog_owner(ids[i], &o) != 1)
			continue;
		fill_state(&st, ids[i], TDMRX_BPF_MODE_TCX, &o);
		errno = EBUSY;
		return tdm_set_err(err, errlen,
			"the BPF recorder is attached to %s by pid %d (%s), tcx link, prog id %u (it attached at the same time as this one)",
			b->ifname, (int)st.owner,
			st.owner_comm[0] ? st.owner_comm : "?", st.prog_id);
	}
	return 0;
}

/* Refuse a live owner, remove a dead one's filter. */
static int check_owner(struct tdm_rxbpf *b, bool quiet, char *err, size_t errlen)
{
	struct tdm_rxbpf_state st;
	int ret;

	if (tdm_rxbpf_query(b->ifname, &st, err, errlen))
		return -1;
	if (!st.attached)
		return 0;
	if (st.owner_alive || st.mode == TDMRX_BPF_MODE_TCX) {
		errno = EBUSY;
		return tdm_set_err(err, errlen,
			"the BPF recorder is attached to %s by pid %d (%s), %s prog id %u",
			b->ifname, (int)st.owner,
			st.owner_comm[0] ? st.owner_comm : "?",
			st.mode == TDMRX_BPF_MODE_TCX ? "tcx link," :
			st.mode == TDMRX_BPF_MODE_TC ? "tc filter," : "XDP,",
			st.prog_id);
	}
	ret = tdm_rxbpf_reap(b->ifname, err, errlen);
	if (ret < 0)
		return -1;
	if (ret && !quiet)
		fprintf(stderr, "tdmstat: removed the BPF recorder's %s on %s: its owner, pid %d, is gone\n",
			st.mode == TDMRX_BPF_MODE_TC ? "tc filter" : "XDP program",
			b->ifname, (int)st.owner);
	return 0;
}

/* ---- rings ---------------------------------------------------------------- */

static int on_record(void *ctx, void *data, size_t size)
{
	struct tdm_rxbpf *b = ctx;
	struct tdmrx_record r;
	unsigned int src;

	if (size < sizeof(r))
		return 0;
	memcpy(&r, data, sizeof(r));
	b->read++;
	if (b->tap)
		b->tap(b->tap_ctx, &r);
	src = r.cpu < b->ncpus ? r.cpu : 0;
	if (b->m)
		tdm_merge_add(b->m, src, &r);
	return 0;
}

/* The ring buffers, before the load: the first is the template of the
 * array's inner map (its size is checked against every ring put in).
 */
static int create_rings(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	unsigned int i;

	b->ring_fd = calloc(b->nrings, sizeof(*b->ring_fd));
	if (!b->ring_fd)
		return tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
	for (i = 0; i < b->nrings; i++)
		b->ring_fd[i] = -1;
	for (i = 0; i < b->nrings; i++) {
		b->ring_fd[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "tdmrx_ring",
					       0, 0, b->ring_bytes, NULL);
		if (b->ring_fd[i] < 0)
			return set_priv_err(errno, "cannot create a BPF ring buffer",
					    err, errlen);
	}
	if (bpf_map__set_inner_map_fd(b->skel->maps.rings, b->ring_fd[0]))
		return tdm_set_err(err, errlen, "cannot set the rings' template");
	return 0;
}

/* After the load: the rings into the array, and mapped for reading. */
static int install_rings(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	int outer = bpf_map__fd(b->skel->maps.rings);
	unsigned int i;

	for (i = 0; i < b->nrings; i++) {
		if (bpf_map_update_elem(outer, &i, &b->ring_fd[i], BPF_ANY))
			return set_priv_err(errno, "cannot install a ring", err, errlen);
		if (!i)
			b->rb = ring_buffer__new(b->ring_fd[i], on_record, b, NULL);
		else if (b->rb &&
			 ring_buffer__add(b->rb, b->ring_fd[i], on_record, b))
			return set_priv_err(errno, "cannot map a ring", err, errlen);
		if (!b->rb)
			return set_priv_err(errno, "cannot map a ring", err, errlen);
	}
	return 0;
}

static int map_marks(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)b->ncpus * sizeof(struct tdmrx_bpf_mark);
	void *p;

	len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED,
		 bpf_map__fd(b->skel->maps.marks), 0);
	if (p == MAP_FAILED)
		return tdm_set_err(err, errlen, "cannot map the watermarks: %s",
				   strerror(errno));
	b->marks = p;
	b->marks_len = len;
	return 0;
}

/* A socket that asks for software RX stamps, held open while we record: the
 * stack stamps every packet (skb->tstamp, CLOCK_REALTIME) only while
 * someone asks (net_enable_timestamp(); tdmrx.ko calls it itself).
 */
static int rx_stamps_on(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	int on = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;

	b->ts_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (b->ts_fd < 0 ||
	    setsockopt(b->ts_fd, SOL_SOCKET, SO_TIMESTAMPING, &on, sizeof(on)))
		return tdm_set_err(err, errlen,
			"cannot turn on software RX timestamps (SO_TIMESTAMPING): %s",
			strerror(errno));
	return 0;
}

/* TAI - REALTIME into the program's .bss (its only variable), through
 * the map: libxdp loads the object in the XDP case, so the skeleton's
 * mapping of .bss is not the map's there.
 */
static void put_tai_offset(struct tdm_rxbpf *b)
{
	__typeof__(*b->skel->bss) v;
	uint32_t key = 0;

	memset(&v, 0, sizeof(v));
	v.tai_offset_ns = tai_offset();
	bpf_map_update_elem(bpf_map__fd(b->skel->maps.bss), &key, &v, BPF_ANY);
}

/* Which program, and for the device-bound one whether the kernel can. */
static int pick_prog(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	struct bpf_program *p;

	b->prog = b->hook == TDM_RXBPF_TC ? b->skel->progs.tdmrx_bpf :
		  b->hook == TDM_RXBPF_XDP ? b->skel->progs.tdmrx_xdp :
		  b->skel->progs.tdmrx_xdp_hw;
	bpf_object__for_each_program(p, b->skel->obj)
		bpf_program__set_autoload(p, p == b->prog);
	if (b->hook != TDM_RXBPF_XDP_HW)
		return 0;
	if (tdm_rxbpf_xdp_kfunc() != 1) {
		errno = EOPNOTSUPP;
		return tdm_set_err(err, errlen,
			"the kernel has no XDP RX timestamp kfunc (%s, 6.3 on): --recorder xdp records at the XDP hook with software stamps",
			RXBPF_RX_TS_KFUNC);
	}
	bpf_program__set_ifindex(b->prog, (__u32)b->ifindex);
	return bpf_program__set_flags(b->prog, bpf_program__flags(b->prog) |
					       RXBPF_XDP_DEV_BOUND_ONLY) ?
	       tdm_set_err(err, errlen, "cannot bind the XDP recorder to %s",
			   b->ifname) : 0;
}

static int load(struct tdm_rxbpf *b, const struct tdm_rxbpf_cfg *cfg,
		char *err, size_t errlen)
{
	struct tdmrx_bpf_owner own = { 0 };
	uint32_t records = cfg->ring_records ? cfg->ring_records : TDMRX_DEFAULT_RING;
	uint32_t wm, key = 0;
	unsigned int i;
	int ncpu, ret;

	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return tdm_set_err(err, errlen, "cannot count the possible CPUs");
	b->ncpus = (unsigned int)ncpu;
	b->nrings = cfg->shared ? 1 : b->ncpus;
	b->ring_bytes = pow2_at_least((uint64_t)records * TDMRX_BPF_REC_BYTES);
	b->ring_records = b->ring_bytes / TDMRX_BPF_REC_BYTES;
	wm = cfg->watermark ? cfg->watermark : b->ring_records / 4;
	if (wm > b->ring_records)
		wm = b->ring_records;

	b->skel = tdmrx_bpf__open();
	if (!b->skel)
		return tdm_set_err(err, errlen, "cannot open the BPF object: %s",
				   strerror(errno));
	for (i = 0; i < cfg->nports; i++)
		b->skel->rodata->port_map[cfg->ports[i] / 64] |=
			1ULL << (cfg->ports[i] % 64);
	b->skel->rodata->nr_rings = b->nrings;
	b->skel->rodata->wake_bytes = wm * TDMRX_BPF_REC_BYTES;
	if (bpf_map__set_max_entries(b->skel->maps.rings, b->nrings) ||
	    bpf_map__set_max_entries(b->skel->maps.marks, b->ncpus))
		return tdm_set_err(err, errlen, "cannot size the BPF maps");
	if (create_rings(b, err, errlen) || pick_prog(b, err, errlen))
		return -1;
	if (b->hook == TDM_RXBPF_XDP) {
		if (attach_xdp(b, err, errlen))	/* libxdp loads it */
			return -1;
	} else {
		ret = tdmrx_bpf__load(b->skel);
		if (ret == -EOPNOTSUPP && b->hook == TDM_RXBPF_XDP_HW) {
			errno = EOPNOTSUPP;
			return tdm_set_err(err, errlen,
				"cannot bind the XDP recorder to %s: its driver has no native XDP (ndo_bpf)",
				b->ifname);
		}
		if (ret)
			return set_priv_err(-ret, "cannot load the BPF recorder",
					    err, errlen);
	}
	put_tai_offset(b);
	own.pid = (uint32_t)getpid();
	own.start_ticks = tdm_proc_start_ticks(getpid());
	if (install_rings(b, err, errlen) || map_marks(b, err, errlen))
		return -1;
	/* the tag names the mode once it is known: written again below */
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.tdmrx_owner), &key,
				&own, BPF_ANY))
		return set_priv_err(errno, "cannot write the owner tag", err, errlen);
	return 0;
}

int tdm_rxbpf_open(struct tdm_rxbpf **out, const struct tdm_rxbpf_cfg *cfg,
		   bool quiet, char *err, size_t errlen)
{
	struct tdmrx_bpf_owner own;
	struct tdm_rxbpf *b;
	uint32_t key = 0;
	int ret;

	*out = NULL;
	if (!cfg->nports || cfg->nports > TDMRX_MAX_PORTS) {
		errno = EINVAL;
		return tdm_set_err(err, errlen, "between 1 and %d ports, not %u",
				   TDMRX_MAX_PORTS, cfg->nports);
	}
	quiet_libbpf();
	b = calloc(1, sizeof(*b));
	if (!b) {
		errno = ENOMEM;
		return tdm_set_err(err, errlen, "%s", strerror(ENOMEM));
	}
	b->link_fd = -1;
	b->ts_fd = -1;
	b->hook = cfg->hook;
	tdm_strlcpy(b->ifname, cfg->ifname, sizeof(b->ifname));
	b->ifindex = (int)if_nametoindex(cfg->ifname);
	if (!b->ifindex) {
		tdm_set_err(err, errlen, "no such device: %s", cfg->ifname);
		errno = ENODEV;
		goto fail;
	}
	/* an owner first: the XDP hook attaches as it loads */
	if (check_owner(b, quiet, err, errlen) || load(b, cfg, err, errlen))
		goto fail;
	if (b->hook == TDM_RXBPF_TC) {
		if (rx_stamps_on(b, err, errlen))
			goto fail;
		ret = attach_tcx(b);
		if (ret == -EPERM || ret == -EACCES) {
			set_priv_err(-ret, "cannot attach to tcx", err, errlen);
			goto fail;
		}
		if (ret && attach_tc(b, err, errlen))	/* no tcx: 6.1 */
			goto fail;
	} else if (b->hook == TDM_RXBPF_XDP_HW && attach_xdp_hw(b, err, errlen)) {
		goto fail;
	}
	b->attached = true;
	if (b->mode == TDMRX_BPF_MODE_TCX && tcx_rival(b, err, errlen))
		goto fail;	/* tdm_rxbpf_close() detaches */
	if (b->hook != TDM_RXBPF_TC && xdp_rival(b, err, errlen))
		goto fail;
	mode_name(b);
	own.pid = (uint32_t)getpid();
	own.mode = (uint32_t)b->mode;
	own.start_ticks = tdm_proc_start_ticks(getpid());
	bpf_map_update_elem(bpf_map__fd(b->skel->maps.tdmrx_owner), &key, &own,
			    BPF_ANY);
	*out = b;
	return 0;
fail:
	ret = errno;
	tdm_rxbpf_close(b);
	errno = ret;
	return -1;
}

int tdm_rxbpf_detach(struct tdm_rxbpf *b, char *err, size_t errlen)
{
	struct bpf_tc_hook h;
	struct bpf_tc_opts t;
	int ret = 0;

	if (!b->attached)
		return 0;
	b->attached = false;
	if (b->mode == TDMRX_BPF_MODE_TCX) {
		/* waits for the programs in flight */
		if (bpf_link_detach(b->link_fd))
			ret = tdm_set_err(err, errlen, "cannot detach the tcx link: %s",
					  strerror(errno));
		close(b->link_fd);
		b->link_fd = -1;
	} else if (b->mode == TDMRX_BPF_MODE_TC) {
		tc_hook_of(&h, b->ifindex);
		tc_opts_of(&t);
		ret = bpf_tc_detach(&h, &t);
		if (ret && ret != -ENOENT)
			ret = tdm_set_err(err, errlen, "cannot remove the tc filter: %s",
					  strerror(-ret));
		else
			ret = 0;
		/* The clsact qdisc we added goes too, unless somebody put
		 * filters of their own on it meanwhile (a filter added between
		 * the count and the removal would go with it: the window is
		 * one netlink round trip).
		 */
		if (!ret && b->made_clsact && clsact_filters(b->ifindex) == 0) {
			h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&h);
		}
		b->made_clsact = false;
	} else if (b->mode == TDMRX_BPF_MODE_XDP) {
		ret = xdp_program__detach(b->xp, b->ifindex, b->xdp_mode, 0);
		if (ret)
			ret = tdm_set_err(err, errlen,
					  "cannot take the XDP recorder off %s: %s",
					  b->ifname, strerror(-ret));
	} else if (b->mode == TDMRX_BPF_MODE_XDP_HW) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o,
			    .old_prog_fd = bpf_program__fd(b->prog));

		ret = bpf_xdp_detach(b->ifindex, XDP_FLAGS_DRV_MODE, &o);
		if (ret)
			ret = tdm_set_err(err, errlen,
					  "cannot take the XDP recorder off %s: %s",
					  b->ifname, strerror(-ret));
	}
	return ret;
}

void tdm_rxbpf_close(struct tdm_rxbpf *b)
{
	unsigned int i;

	if (!b)
		return;
	tdm_rxbpf_detach(b, NULL, 0);
	ring_buffer__free(b->rb);
	if (b->marks)
		munmap((void *)b->marks, b->marks_len);
	if (b->ring_fd) {
		for (i = 0; i < b->nrings; i++)
			if (b->ring_fd[i] >= 0)
				close(b->ring_fd[i]);
		free(b->ring_fd);
	}
	if (b->ts_fd >= 0)
		close(b->ts_fd);
	xdp_program__close(b->xp);	/* not the object: the skeleton's */
	tdmrx_bpf__destroy(b->skel);
	free(b);
}

/* ---- reading ---------------------------------------------------------------- */

int tdm_rxbpf_wait(struct tdm_rxbpf *b, int timeout_ms, char *err,
		   size_t errlen)
{
	struct pollfd p = { .fd = ring_buffer__epoll_fd(b->rb), .events = POLLIN };
	int n;

	n = poll(&p, 1, timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		return tdm_set_err(err, errlen, "poll the BPF rings: %s",
				   strerror(errno));
	}
	return n > 0;
}

size_t tdm_rxbpf_feed(struct tdm_rxbpf *b, struct tdm_merge *m, tdm_rx_cb tap,
		      void *tap_ctx)
{
	int64_t mark[256], now;
	uint64_t before = b->read;
	unsigned int i, n = b->ncpus < 256 ? b->ncpus : 256;

	/* the marks before the rings (the file's comment); the clock before
	 * in_hook
	 */
	now = tdm_mono_ns();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		mark[i] = __atomic_load_n(&b->marks[i].mark_ns, __ATOMIC_ACQUIRE);
		if (!__atomic_load_n(&b->marks[i].in_hook, __ATOMIC_ACQUIRE) &&
		    now - RXBPF_QUIET_NS > mark[i])
			mark[i] = now - RXBPF_QUIET_NS;
	}
	b->m = m;
	b->tap = tap;
	b->tap_ctx = tap_ctx;
	ring_buffer__consume(b->rb);
	b->m = NULL;
	b->tap = NULL;
	if (m)
		for (i = 0; i < n; i++)
			if (mark[i] > 0)
				tdm_merge_mark(m, i, mark[i]);
	put_tai_offset(b);
	return (size_t)(b->read - before);
}

int tdm_rxbpf_drain_final(struct tdm_rxbpf *b, struct tdm_merge *m,
			  tdm_rx_cb tap, void *tap_ctx, int timeout_ms,
			  uint64_t *unread)
{
	int64_t idle = (int64_t)timeout_ms * 1000000;
	int64_t end = tdm_mono_ns() + idle;
	struct tdmrx_stats s;

	/* The deadline counts from the last record read, not from the
	 * start: a reader held to a small CPU quota drains a full ring
	 * slowly but surely, and giving up on it would lose records that
	 * are there.  Only a ring that stops yielding ends the wait.
	 */
	for (;;) {
		bool got = tdm_rxbpf_feed(b, m, tap, tap_ctx) > 0;
		bool ok = !tdm_rxbpf_stats(b, &s);

		if (ok && s.records + s.dropped == s.matched &&
		    b->read == s.records) {
			*unread = 0;
			return 0;
		}
		if (got)
			end = tdm_mono_ns() + idle;
		if (tdm_mono_ns() >= end) {
			/* matched and not dropped, yet never read */
			*unread = ok && s.matched > s.dropped + b->read ?
				  s.matched - s.dropped - b->read : 0;
			return -1;
		}
		usleep(1000);
	}
}

int tdm_rxbpf_stats(const struct tdm_rxbpf *b, struct tdmrx_stats *sum)
{
	struct tdmrx_stats *v;
	uint32_t key = 0;
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	v = calloc(b->ncpus, sizeof(*v));
	if (!v)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.stats), &key, v)) {
		free(v);
		return -1;
	}
	for (i = 0; i < b->ncpus; i++) {
		sum->seen += v[i].seen;
		sum->matched += v[i].matched;
		sum->records += v[i].records;
		sum->dropped += v[i].dropped;
		sum->bad_header += v[i].bad_header;
		sum->hw_stamps += v[i].hw_stamps;
		sum->sw_stamps += v[i].sw_stamps;
	}
	free(v);
	return 0;
}

uint64_t tdm_rxbpf_dropped(const struct tdm_rxbpf *b)
{
	struct tdmrx_stats s;

	return tdm_rxbpf_stats(b, &s) ? 0 : s.dropped;
}

uint64_t tdm_rxbpf_read(const struct tdm_rxbpf *b)
{
	return b->read;
}

unsigned int tdm_rxbpf_nsrc(const struct tdm_rxbpf *b)
{
	return b->ncpus;
}

unsigned int tdm_rxbpf_nrings(const struct tdm_rxbpf *b)
{
	return b->nrings;
}

uint32_t tdm_rxbpf_ring_records(const struct tdm_rxbpf *b)
{
	return b->ring_records;
}

const char *tdm_rxbpf_mode(const struct tdm_rxbpf *b)
{
	return b->mode_str;
}

uint32_t tdm_rxbpf_prog_id(const struct tdm_rxbpf *b)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(b->prog), &info, &len))
		return 0;
	return info.id;
}
