// SPDX-License-Identifier: GPL-2.0
/*
 * Number, time and clock helpers.  Parsers are strict on purpose: a plan
 * that says "10xs" or "1.5ns" is a mistake, and guessing what was meant
 * would gate the wrong nanoseconds on every node.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tdm_util.h"

/* isdigit() depends on the locale and is undefined for negative chars. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int tdm_hex_digit(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

struct time_unit {
	const char *name;
	unsigned int exp;	/* ns = value * 10^exp */
};

static const struct time_unit time_units[] = {
	{ "",   0 },
	{ "ns", 0 },
	{ "us", 3 },
	{ "ms", 6 },
	{ "s",  9 },
};

static const uint64_t pow10_tab[] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
	10000000ULL, 100000000ULL, 1000000000ULL,
};

int tdm_parse_time(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	const char *p = s, *frac = NULL;
	const struct time_unit *unit = NULL;
	uint64_t ip = 0, fv = 0, v;
	unsigned int fdig = 0, i;
	bool overflow = false;

	if (!s || !*s)
		return tdm_set_err(err, errlen, "empty time value");
	if (!is_digit(*p))
		return tdm_set_err(err, errlen,
				   "'%s': not a time (a number with ns, us, ms or s)",
				   s);
	for (; is_digit(*p); p++) {
		if (__builtin_mul_overflow(ip, 10, &ip) ||
		    __builtin_add_overflow(ip, (uint64_t)(*p - '0'), &ip))
			overflow = true;
	}
	if (*p == '.') {
		frac = ++p;
		if (!is_digit(*p))
			return tdm_set_err(err, errlen,
					   "'%s': not a time (a number with ns, us, ms or s)",
					   s);
		while (is_digit(*p))
			p++;
		/* Trailing zeros do not change the value: "1.500ms". */
		fdig = (unsigned int)(p - frac);
		while (fdig && frac[fdig - 1] == '0')
			fdig--;
	}
	for (i = 0; i < TDM_ARRAY_SIZE(time_units); i++) {
		if (!strcmp(p, time_units[i].name)) {
			unit = &time_units[i];
			break;
		}
	}
	if (!unit)
		return tdm_set_err(err, errlen,
				   "'%s': unknown unit '%s' (use ns, us, ms or s)",
				   s, p);
	/*
	 * A fraction with its trailing zeros removed ends in a digit that is
	 * not 0, so it is a whole number of ns only if it has at most as many
	 * digits as the unit has powers of ten.
	 */
	if (fdig > unit->exp)
		return tdm_set_err(err, errlen, "'%s' is not a whole number of ns", s);
	for (i = 0; i < fdig; i++)
		fv = fv * 10 + (uint64_t)(frac[i] - '0');
	fv *= pow10_tab[unit->exp - fdig];
	if (overflow ||
	    __builtin_mul_overflow(ip, pow10_tab[unit->exp], &v) ||
	    __builtin_add_overflow(v, fv, &v))
		return tdm_set_err(err, errlen, "'%s' is too large", s);
	*ns = v;
	return 0;
}

int tdm_parse_u64(const char *s, uint64_t max, uint64_t *v,
		  char *err, size_t errlen)
{
	const char *p = s;
	unsigned int base = 10;
	bool overflow = false;
	uint64_t x = 0;
	int d;

	if (!s || !*s)
		return tdm_set_err(err, errlen, "empty number");
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return tdm_set_err(err, errlen, "'%s': not a number", s);
	for (; *p; p++) {
		d = base == 16 ? tdm_hex_digit(*p) : (is_digit(*p) ? *p - '0' : -1);
		if (d < 0)
			return tdm_set_err(err, errlen, "'%s': not a number", s);
		if (__builtin_mul_overflow(x, base, &x) ||
		    __builtin_add_overflow(x, (uint64_t)d, &x))
			overflow = true;
	}
	if (overflow || x > max)
		return tdm_set_err(err, errlen, "'%s' is too large (max %llu)",
				   s, (unsigned long long)max);
	*v = x;
	return 0;
}

int tdm_parse_bool(const char *s, bool *v, char *err, size_t errlen)
{
	static const char *const yes[] = { "on", "yes", "1", "true" };
	static const char *const no[] = { "off", "no", "0", "false" };
	unsigned int i;

	for (i = 0; s && i < TDM_ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*v = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*v = false;
			return 0;
		}
	}
	return tdm_set_err(err, errlen,
			   "'%s': not a boolean (use on/off, yes/no, true/false or 1/0)",
			   s ? s : "");
}

const char *tdm_fmt_time(uint64_t ns, char *buf, size_t len)
{
	static const struct time_unit units[] = {
		{ "s", 9 }, { "ms", 6 }, { "us", 3 },
	};
	unsigned int i;
	uint64_t scale;

	if (!buf || !len)
		return "";
	if (!ns) {
		snprintf(buf, len, "0");
		return buf;
	}
	/* The largest unit that divides exactly: 1500000 -> "1500us". */
	for (i = 0; i < TDM_ARRAY_SIZE(units); i++) {
		scale = pow10_tab[units[i].exp];
		if (ns % scale == 0) {
			snprintf(buf, len, "%llu%s",
				 (unsigned long long)(ns / scale),
				 units[i].name);
			return buf;
		}
	}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

struct clock_name {
	const char *name;
	int id;
};

static const struct clock_name clock_names[] = {
	{ "tai",       CLOCK_TAI },
	{ "realtime",  CLOCK_REALTIME },
	{ "monotonic", CLOCK_MONOTONIC },
	{ "boottime",  CLOCK_BOOTTIME },
};

int tdm_clock_parse(const char *s, int *clockid)
{
	unsigned int i;

	if (!s)
		return -1;
	if (!strncasecmp(s, "CLOCK_", 6))
		s += 6;
	for (i = 0; i < TDM_ARRAY_SIZE(clock_names); i++) {
		if (!strcasecmp(s, clock_names[i].name)) {
			*clockid = clock_names[i].id;
			return 0;
		}
	}
	return -1;
}

const char *tdm_clock_name(int clockid)
{
	unsigned int i;

	for (i = 0; i < TDM_ARRAY_SIZE(clock_names); i++)
		if (clock_names[i].id == clockid)
			return clock_names[i].name;
	return "unknown";
}

int64_t tdm_clock_ns(int clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts))
		return -1;
	return (int64_t)ts.tv_sec * (int64_t)TDM_NSEC_PER_SEC + ts.tv_nsec;
}

int64_t tdm_mono_ns(void)
{
	return tdm_clock_ns(CLOCK_MONOTONIC);
}

volatile sig_atomic_t tdm_stop;

static void stop_handler(int sig)
{
	(void)sig;
	tdm_stop = 1;
}

int tdm_stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = stop_handler };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -1;
	return 0;
}

bool tdm_ratelimit(struct tdm_ratelimit *rl, int64_t now,
		   unsigned long long *missed)
{
	*missed = 0;
	if (!rl->start || now - rl->start >= rl->interval_ns) {
		rl->start = now;
		rl->n = 0;
	}
	if (rl->n >= rl->burst) {
		rl->missed++;
		return false;
	}
	rl->n++;
	*missed = rl->missed;
	rl->missed = 0;
	return true;
}

bool tdm_hyst_step(struct tdm_hyst *h, bool good, unsigned int need_good,
		   unsigned int need_bad)
{
	bool was = h->ok;

	if (good) {
		h->good++;
		h->bad = 0;
		if (!h->ok && h->good >= need_good)
			h->ok = true;
	} else {
		h->bad++;
		h->good = 0;
		if (h->ok && h->bad >= need_bad)
			h->ok = false;
	}
	return h->ok != was;
}

int tdm_text_escape(char *dst, const char *src, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!size)
		return -1;
	for (; *src; src++) {
		unsigned char c = (unsigned char)*src;
		size_t need = c == '\\' ? 2 : (c >= 0x20 && c < 0x7f) ? 1 : 4;

		if (o + need >= size) {
			dst[o] = '\0';
			return -1;
		}
		if (c == '\\') {
			dst[o++] = '\\';
			dst[o++] = '\\';
		} else if (need == 1) {
			dst[o++] = (char)c;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	dst[o] = '\0';
	return 0;
}

void tdm_proc_comm(int pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	if (!len)
		return;
	comm[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(comm, (int)len, f))
		comm[0] = 0;
	comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

int tdm_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n;

	if (!size)
		return -1;
	n = strnlen(src, size);
	if (n == size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -1;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

int tdm_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int tdm_set_err_at(char *err, size_t errlen, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err || !errlen)
		return -1;
	if (file && line > 0)
		n = snprintf(err, errlen, "%s:%d: ", file, line);
	else if (file)
		n = snprintf(err, errlen, "%s: ", file);
	else if (line > 0)
		n = snprintf(err, errlen, "line %d: ", line);
	if (n < 0 || (size_t)n >= errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}
