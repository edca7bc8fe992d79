// SPDX-License-Identifier: GPL-2.0
/*
 * PHC health: the PHC - CLOCK_TAI offset of an interface's PTP hardware
 * clock, read as phc2sys does (see tdm_phc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/ptp_clock.h>
#include <linux/sockios.h>

#include "tdm_phc.h"
#include "tdm_ptp.h"
#include "tdm_util.h"

/* ---- the pure part ---- */

static const char *const method_names[TDM_PHC_NMETHODS] = {
	[TDM_PHC_PRECISE] = "precise",
	[TDM_PHC_EXTENDED] = "extended",
	[TDM_PHC_BASIC] = "basic",
};

static const char *const ioctl_names[TDM_PHC_NMETHODS] = {
	[TDM_PHC_PRECISE] = "PTP_SYS_OFFSET_PRECISE",
	[TDM_PHC_EXTENDED] = "PTP_SYS_OFFSET_EXTENDED",
	[TDM_PHC_BASIC] = "PTP_SYS_OFFSET",
};

const char *tdm_phc_method_name(int method)
{
	return method >= 0 && method < TDM_PHC_NMETHODS ?
	       method_names[method] : "none";
}

const char *tdm_phc_ioctl_name(int method)
{
	return method >= 0 && method < TDM_PHC_NMETHODS ?
	       ioctl_names[method] : "none";
}

int tdm_phc_best(const struct tdm_phc_sample *s, unsigned int n)
{
	int best = -1;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (s[i].sys_after < s[i].sys_before)
			continue;
		if (best < 0 || s[i].sys_after - s[i].sys_before <
				s[best].sys_after - s[best].sys_before)
			best = (int)i;
	}
	return best;
}

int tdm_phc_offset_of(const struct tdm_phc_sample *s, unsigned int n,
		      int method, int tai, struct tdm_phc_offset *o,
		      char *err, size_t errlen)
{
	int b = tdm_phc_best(s, n);
	int64_t delay, mid;

	if (b < 0)
		return tdm_set_err(err, errlen,
				   "%s: the system clock stepped inside every one of %u samples",
				   tdm_phc_ioctl_name(method), n);
	delay = s[b].sys_after - s[b].sys_before;
	/* before + delay / 2: no overflow of before + after. */
	mid = s[b].sys_before + delay / 2;
	o->offset_ns = s[b].phc - (mid + (int64_t)tai * (int64_t)TDM_NSEC_PER_SEC);
	o->delay_ns = delay;
	o->method = method;
	o->tai_offset = tai;
	return 0;
}

int tdm_phc_fallback(int method, int e)
{
	if (method < 0 || method >= TDM_PHC_BASIC)
		return -1;
	if (e != EOPNOTSUPP && e != EINVAL && e != ENOTTY)
		return -1;
	return method + 1;
}

bool tdm_phc_good(const struct tdm_phc_offset *o, uint64_t threshold_ns,
		  char *reason, size_t len)
{
	uint64_t mag = o->offset_ns < 0 ? -(uint64_t)o->offset_ns :
					   (uint64_t)o->offset_ns;

	if (mag <= threshold_ns)
		return true;
	tdm_set_err(reason, len,
		    "PHC offset %lld ns (PHC - CLOCK_TAI) exceeds %llu ns",
		    (long long)o->offset_ns, (unsigned long long)threshold_ns);
	return false;
}

/* ---- the ioctls ---- */

static int64_t pct_ns(const struct ptp_clock_time *t)
{
	return t->sec * (int64_t)TDM_NSEC_PER_SEC + t->nsec;
}

int tdm_phc_index(const char *ifname, int *index, uint32_t *so_timestamping,
		  char *err, size_t errlen)
{
	struct ethtool_ts_info ts = { .cmd = ETHTOOL_GET_TS_INFO };
	struct ifreq ifr;
	int fd, e;

	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return tdm_set_err(err, errlen, "'%s': interface name too long", ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		tdm_set_err(err, errlen, "socket: %s", strerror(e));
		errno = e;
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	tdm_strlcpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name));
	ifr.ifr_data = (void *)&ts;
	if (ioctl(fd, SIOCETHTOOL, &ifr)) {
		e = errno;
		close(fd);
		tdm_set_err(err, errlen, "%s: ETHTOOL_GET_TS_INFO: %s", ifname,
			    e == EOPNOTSUPP ? "the driver does not report it" :
			    strerror(e));
		errno = e;
		return -1;
	}
	close(fd);
	*index = ts.phc_index;
	if (so_timestamping)
		*so_timestamping = ts.so_timestamping;
	return 0;
}

int tdm_phc_open(struct tdm_phc *p, int index, char *err, size_t errlen)
{
	int e;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	p->index = index;
	p->method = TDM_PHC_PRECISE;
	snprintf(p->path, sizeof(p->path), "/dev/ptp%d", index);
	p->fd = open(p->path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		e = errno;
		tdm_set_err(err, errlen, "%s: %s", p->path, strerror(e));
		errno = e;
		return -1;
	}
	return 0;
}

int tdm_phc_clockid(int fd)
{
	/* CLOCKFD (3) in the low bits, the fd's complement above them. */
	return (int)((~(unsigned int)fd << 3) | 3);
}

void tdm_phc_close(struct tdm_phc *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* One ioctl of method into s[]: the number of samples, or -1 with errno. */
static int sample(int fd, int method, struct tdm_phc_sample *s)
{
	unsigned int i;

	switch (method) {
	case TDM_PHC_PRECISE: {
		struct ptp_sys_offset_precise pr;

		memset(&pr, 0, sizeof(pr));
		if (ioctl(fd, PTP_SYS_OFFSET_PRECISE, &pr))
			return -1;
		s[0].sys_before = s[0].sys_after = pct_ns(&pr.sys_realtime);
		s[0].phc = pct_ns(&pr.device);
		return 1;
	}
	case TDM_PHC_EXTENDED: {
		struct ptp_sys_offset_extended ex;

		memset(&ex, 0, sizeof(ex));	/* clockid 0: CLOCK_REALTIME */
		ex.n_samples = TDM_PHC_SAMPLES;
		if (ioctl(fd, PTP_SYS_OFFSET_EXTENDED, &ex))
			return -1;
		for (i = 0; i < TDM_PHC_SAMPLES; i++) {
			s[i].sys_before = pct_ns(&ex.ts[i][0]);
			s[i].phc = pct_ns(&ex.ts[i][1]);
			s[i].sys_after = pct_ns(&ex.ts[i][2]);
		}
		return TDM_PHC_SAMPLES;
	}
	default: {
		struct ptp_sys_offset so;

		memset(&so, 0, sizeof(so));
		so.n_samples = TDM_PHC_SAMPLES;
		if (ioctl(fd, PTP_SYS_OFFSET, &so))
			return -1;
		/* system, phc, system, phc, ..., system */
		for (i = 0; i < TDM_PHC_SAMPLES; i++) {
			s[i].sys_before = pct_ns(&so.ts[2 * i]);
			s[i].phc = pct_ns(&so.ts[2 * i + 1]);
			s[i].sys_after = pct_ns(&so.ts[2 * i + 2]);
		}
		return TDM_PHC_SAMPLES;
	}
	}
}

int tdm_phc_read(struct tdm_phc *p, struct tdm_phc_offset *o, char *err,
		 size_t errlen)
{
	struct tdm_phc_sample s[TDM_PHC_SAMPLES];
	int m = p->method, n, next, tai;

	if (p->fd < 0)
		return tdm_set_err(err, errlen, "the PHC is not open");
	for (;;) {
		n = sample(p->fd, m, s);
		if (n > 0)
			break;
		next = tdm_phc_fallback(m, errno);
		if (next < 0)
			return tdm_set_err(err, errlen, "%s on %s: %s",
					   tdm_phc_ioctl_name(m), p->path,
					   strerror(errno));
		m = next;
	}
	p->method = m;
	if (tdm_tai_offset(&tai, err, errlen))
		return -1;
	return tdm_phc_offset_of(s, (unsigned int)n, m, tai, o, err, errlen);
}
