/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iproute2.h	The part of iproute2's tc that q_tdmwin.so uses.
 *
 * There is no iproute2-dev package, so this header carries copies of the
 * iproute2 declarations q_tdmwin.so uses, and only those, taken from
 * tc/tc_util.h, include/utils.h, include/json_print.h, include/color.h and
 * include/libnetlink.h.  tc is linked with -export-dynamic and resolves
 * the plugin's undefined symbols from itself: declare here only functions
 * that every supported tc (iproute2 6.1 to 6.15) exports, see
 * `nm -D /usr/sbin/tc`.  The print_* and rta_getattr_* helpers are static
 * inlines in iproute2 too and are copied as such.
 *
 * abi-check.sh compiles this header next to iproute2's own headers (6.1,
 * and 6.15 when its source can be fetched) and fails on any difference in
 * layout, enum value or prototype; it also fails if the plugin imports a
 * function that abi-check.c does not compare, or abi-check.c compares one
 * the plugin does not import.  Keep the three in step.
 *
 * struct qdisc_util: the callbacks take `struct qdisc_util *` up to
 * iproute2 6.8 and `const struct qdisc_util *` from 6.9 on (commit
 * 8576afbb, "tc: make qdisc_util arg const").  Only the qualifier of the
 * pointee changed; layout and calling convention are the same, so one
 * binary serves both.  This header uses the 6.1 spelling.
 */
#ifndef _TDMWIN_IPROUTE2_H_
#define _TDMWIN_IPROUTE2_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/* tc/tc_util.h */
struct qdisc_util {
	struct qdisc_util *next;
	const char *id;
	int (*parse_qopt)(struct qdisc_util *qu, int argc,
			  char **argv, struct nlmsghdr *n, const char *dev);
	int (*print_qopt)(struct qdisc_util *qu,
			  FILE *f, struct rtattr *opt);
	int (*print_xstats)(struct qdisc_util *qu,
			    FILE *f, struct rtattr *xstats);

	int (*parse_copt)(struct qdisc_util *qu, int argc,
			  char **argv, struct nlmsghdr *n, const char *dev);
	int (*print_copt)(struct qdisc_util *qu, FILE *f, struct rtattr *opt);
	int (*has_block)(struct qdisc_util *qu, struct rtattr *opt, __u32 block_idx, bool *p_has);
};

/* include/utils.h */
int get_u64(__u64 *val, const char *arg, int base);

/* include/libnetlink.h */
int addattr8(struct nlmsghdr *n, int maxlen, int type, __u8 data);
int addattr32(struct nlmsghdr *n, int maxlen, int type, __u32 data);
int addattr64(struct nlmsghdr *n, int maxlen, int type, __u64 data);
int addattr_l(struct nlmsghdr *n, int maxlen, int type, const void *data,
	      int alen);
struct rtattr *addattr_nest(struct nlmsghdr *n, int maxlen, int type);
int addattr_nest_end(struct nlmsghdr *n, struct rtattr *nest);
int parse_rtattr_flags(struct rtattr *tb[], int max, struct rtattr *rta,
			      int len, unsigned short flags);

#define parse_rtattr_nested(tb, max, rta) \
	(parse_rtattr_flags((tb), (max), RTA_DATA(rta), RTA_PAYLOAD(rta), \
			    NLA_F_NESTED))

static inline __u8 rta_getattr_u8(const struct rtattr *rta)
{
	return *(__u8 *)RTA_DATA(rta);
}
static inline __u32 rta_getattr_u32(const struct rtattr *rta)
{
	return *(__u32 *)RTA_DATA(rta);
}
static inline __u64 rta_getattr_u64(const struct rtattr *rta)
{
	__u64 tmp;

	memcpy(&tmp, RTA_DATA(rta), sizeof(__u64));
	return tmp;
}
static inline __s32 rta_getattr_s32(const struct rtattr *rta)
{
	return *(__s32 *)RTA_DATA(rta);
}
static inline __s64 rta_getattr_s64(const struct rtattr *rta)
{
	__s64 tmp;

	memcpy(&tmp, RTA_DATA(rta), sizeof(tmp));
	return tmp;
}

/* include/color.h: of its colors only the one the print_* inlines pass */
enum color_attr {
	COLOR_NONE = 6
};

/* include/json_print.h */
enum output_type {
	PRINT_FP = 1,
	PRINT_JSON = 2,
	PRINT_ANY = 4,
};

void open_json_object(const char *str);
void close_json_object(void);
void open_json_array(enum output_type type, const char *delim);
void close_json_array(enum output_type type, const char *delim);

void print_nl(void);

#define _PRINT_FUNC(type_name, type)					\
	int print_color_##type_name(enum output_type t,			\
				    enum color_attr color,		\
				    const char *key,			\
				    const char *fmt,			\
				    type value);			\
									\
	static inline int print_##type_name(enum output_type t,		\
					    const char *key,		\
					    const char *fmt,		\
					    type value)			\
	{								\
		return print_color_##type_name(t, COLOR_NONE, key, fmt,	\
					       value);			\
	}

_PRINT_FUNC(s64, int64_t)
_PRINT_FUNC(bool, bool)
_PRINT_FUNC(on_off, bool)
_PRINT_FUNC(string, const char*)
_PRINT_FUNC(uint, unsigned int)
_PRINT_FUNC(u64, uint64_t)
#undef _PRINT_FUNC

#endif /* _TDMWIN_IPROUTE2_H_ */
