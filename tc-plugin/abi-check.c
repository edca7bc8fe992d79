// SPDX-License-Identifier: GPL-2.0
/*
 * abi-check.c	Compile-time proof that iproute2.h matches iproute2.
 *
 * abi-check.sh compiles this file against an iproute2 source tree
 * (-I include -I include/uapi -I tc).  It includes iproute2's headers, takes
 * typedefs of everything iproute2.h copies, then includes iproute2.h with
 * every name it defines moved aside to ours_* by the preprocessor, so that
 * both versions live in one translation unit and can be compared:
 *
 * - struct qdisc_util: same size and member offsets, each callback of the
 *   same type (iproute2 >= 6.9 may take a const struct qdisc_util *).
 * - enum output_type, enum color_attr: same size and values (of color_attr
 *   only COLOR_NONE, the one iproute2.h has).
 * - each function and inline: the same prototype.  Where a prototype names
 *   one of the types above, both are matched against one spelling of it
 *   (the *_SIG macros), written over T(type) for theirs or ours.
 * - parse_rtattr_nested: a redefinition that differs is a -Werror warning.
 *
 * It compiles cleanly iff all agree; nothing is run.
 *
 * With -DABI_CHECK_LIST (and no include paths needed) it preprocesses to
 * the lists below instead: "import NAME" for each function the plugin
 * takes from tc, "inline NAME" for each inline copied into iproute2.h.
 * abi-check.sh holds the imports against the plugin's undefined symbols and
 * each tc's exports, the inlines against their uses in q_tdmwin.c.
 */

/* Exported functions whose prototypes name no type of iproute2's own. */
#define PLAIN_FUNCS(X)							\
	X(get_u64)							\
	X(addattr8) X(addattr32) X(addattr64) X(addattr_l)		\
	X(addattr_nest) X(addattr_nest_end) X(parse_rtattr_flags)	\
	X(open_json_object) X(close_json_object) X(print_nl)

/* Inlines whose prototypes name no type of iproute2's own. */
#define PLAIN_INLINES(X)						\
	X(rta_getattr_u8) X(rta_getattr_u32) X(rta_getattr_u64)	\
	X(rta_getattr_s32) X(rta_getattr_s64)

/* <verb>_json_array, exported, taking enum output_type. */
#define JSON_ARRAY_FUNCS(X)	X(open) X(close)

/* The print helpers: print_color_<name>(..., type), exported, and
 * print_<name>, its inline wrapper.
 */
#define PRINT_FUNCS(X)							\
	X(s64, int64_t) X(bool, bool) X(on_off, bool)			\
	X(string, const char *) X(uint, unsigned int) X(u64, uint64_t)

#ifdef ABI_CHECK_LIST

#define LIST_IMPORT(f)		import f
#define LIST_INLINE(f)		inline f
#define LIST_JSON_ARRAY(verb)	import verb##_json_array
#define LIST_PRINT(name, type)	import print_color_##name inline print_##name
PLAIN_FUNCS(LIST_IMPORT)
JSON_ARRAY_FUNCS(LIST_JSON_ARRAY)
PLAIN_INLINES(LIST_INLINE)
PRINT_FUNCS(LIST_PRINT)

#else /* !ABI_CHECK_LIST */

#include "utils.h"
#include "libnetlink.h"
#include "json_print.h"
#include "tc_util.h"

#include <assert.h>
#include <stddef.h>

/* ---- iproute2's, captured before the renames below hide its names --- */

typedef struct qdisc_util theirs_qdisc_util_t;
typedef enum output_type theirs_output_type_t;
typedef enum color_attr theirs_color_attr_t;

enum {
	THEIRS_PRINT_FP = PRINT_FP,
	THEIRS_PRINT_JSON = PRINT_JSON,
	THEIRS_PRINT_ANY = PRINT_ANY,
	THEIRS_COLOR_NONE = COLOR_NONE,
};

#define TAKE(f)		typedef __typeof__(&f) theirs_##f;
#define TAKE_PRINT(name, type)						\
	typedef __typeof__(&print_color_##name) theirs_print_color_##name; \
	typedef __typeof__(&print_##name) theirs_print_##name;

#define TAKE_JSON_ARRAY(verb)	TAKE(verb##_json_array)

PLAIN_FUNCS(TAKE)
PLAIN_INLINES(TAKE)
JSON_ARRAY_FUNCS(TAKE_JSON_ARRAY)
PRINT_FUNCS(TAKE_PRINT)

/* ---- ours, every name prefixed ---------------------------------------- */

#define qdisc_util		ours_qdisc_util
#define output_type		ours_output_type
#define PRINT_FP		OURS_PRINT_FP
#define PRINT_JSON		OURS_PRINT_JSON
#define PRINT_ANY		OURS_PRINT_ANY
#define color_attr		ours_color_attr
#define COLOR_NONE		OURS_COLOR_NONE
#define get_u64			ours_get_u64
#define addattr8		ours_addattr8
#define addattr32		ours_addattr32
#define addattr64		ours_addattr64
#define addattr_l		ours_addattr_l
#define addattr_nest		ours_addattr_nest
#define addattr_nest_end	ours_addattr_nest_end
#define parse_rtattr_flags	ours_parse_rtattr_flags
#define rta_getattr_u8		ours_rta_getattr_u8
#define rta_getattr_u32		ours_rta_getattr_u32
#define rta_getattr_u64		ours_rta_getattr_u64
#define rta_getattr_s32		ours_rta_getattr_s32
#define rta_getattr_s64		ours_rta_getattr_s64
#define open_json_object	ours_open_json_object
#define close_json_object	ours_close_json_object
#define open_json_array		ours_open_json_array
#define close_json_array	ours_close_json_array
#define print_nl		ours_print_nl
#define print_color_s64		ours_print_color_s64
#define print_color_bool	ours_print_color_bool
#define print_color_on_off	ours_print_color_on_off
#define print_color_string	ours_print_color_string
#define print_color_uint	ours_print_color_uint
#define print_color_u64		ours_print_color_u64
#define print_s64		ours_print_s64
#define print_bool		ours_print_bool
#define print_on_off		ours_print_on_off
#define print_string		ours_print_string
#define print_uint		ours_print_uint
#define print_u64		ours_print_u64

#include "iproute2.h"

typedef struct ours_qdisc_util ours_qdisc_util_t;
typedef enum ours_output_type ours_output_type_t;
typedef enum ours_color_attr ours_color_attr_t;

/* ---- the comparison ---------------------------------------------------- */

#define THEIRS(type)	theirs_##type##_t
#define OURS(type)	ours_##type##_t
#define SAME_TYPE(a, b)	__builtin_types_compatible_p(a, b)

/* Enums: size and every value. */
static_assert(sizeof(OURS(output_type)) == sizeof(THEIRS(output_type)),
	      "enum output_type: size differs");
static_assert(sizeof(OURS(color_attr)) == sizeof(THEIRS(color_attr)),
	      "enum color_attr: size differs");
#define SAME_VALUE(name)						\
	static_assert((long long)OURS_##name == (long long)THEIRS_##name,	\
		      #name ": value differs");
SAME_VALUE(PRINT_FP)
SAME_VALUE(PRINT_JSON)
SAME_VALUE(PRINT_ANY)
SAME_VALUE(COLOR_NONE)

/* Prototypes that name no type of iproute2's own compare directly. */
#define SAME_PLAIN(f)							\
	static_assert(SAME_TYPE(theirs_##f, __typeof__(&ours_##f)),	\
		      #f ": prototype differs");
PLAIN_FUNCS(SAME_PLAIN)
PLAIN_INLINES(SAME_PLAIN)

/* The others, each against one spelling over T(). */
#define PRINT_COLOR_SIG(T, type)					\
	int (*)(T(output_type), T(color_attr), const char *, const char *, type)
#define PRINT_SIG(T, type)						\
	int (*)(T(output_type), const char *, const char *, type)
#define JSON_ARRAY_SIG(T)	void (*)(T(output_type), const char *)

#define SAME_SIG(f, sig_theirs, sig_ours)				\
	static_assert(SAME_TYPE(theirs_##f, sig_theirs),		\
		      #f ": iproute2's prototype is not " #sig_theirs);	\
	static_assert(SAME_TYPE(__typeof__(&ours_##f), sig_ours),	\
		      #f ": our prototype is not " #sig_ours);
#define SAME_PRINT(name, type)						\
	SAME_SIG(print_color_##name, PRINT_COLOR_SIG(THEIRS, type),	\
		 PRINT_COLOR_SIG(OURS, type))				\
	SAME_SIG(print_##name, PRINT_SIG(THEIRS, type),		\
		 PRINT_SIG(OURS, type))
PRINT_FUNCS(SAME_PRINT)
#define SAME_JSON_ARRAY(verb)						\
	SAME_SIG(verb##_json_array, JSON_ARRAY_SIG(THEIRS),		\
		 JSON_ARRAY_SIG(OURS))
JSON_ARRAY_FUNCS(SAME_JSON_ARRAY)

/* struct qdisc_util: layout, then callback types.  C is the qualifier of
 * the callbacks' first parameter: none up to iproute2 6.8 (ours), const
 * from 6.9.
 */
static_assert(sizeof(OURS(qdisc_util)) == sizeof(THEIRS(qdisc_util)),
	      "struct qdisc_util: size differs");
#define SAME_OFFSET(m)							\
	static_assert(offsetof(OURS(qdisc_util), m) ==			\
		      offsetof(THEIRS(qdisc_util), m),			\
		      "struct qdisc_util: offset of " #m " differs");
SAME_OFFSET(next)
SAME_OFFSET(id)
SAME_OFFSET(parse_qopt)
SAME_OFFSET(print_qopt)
SAME_OFFSET(print_xstats)
SAME_OFFSET(parse_copt)
SAME_OFFSET(print_copt)
SAME_OFFSET(has_block)

#define MEMBER(T, m)	__typeof__(((T(qdisc_util) *)0)->m)
#define NEXT_SIG(T, C)	T(qdisc_util) *
#define ID_SIG(T, C)	const char *
#define PARSE_SIG(T, C)							\
	int (*)(C T(qdisc_util) *, int, char **, struct nlmsghdr *, const char *)
#define PRINT_OPT_SIG(T, C)						\
	int (*)(C T(qdisc_util) *, FILE *, struct rtattr *)
#define HAS_BLOCK_SIG(T, C)						\
	int (*)(C T(qdisc_util) *, struct rtattr *, __u32, bool *)

#define SAME_MEMBER(m, SIG)						\
	static_assert(SAME_TYPE(MEMBER(THEIRS, m), SIG(THEIRS, )) ||	\
		      SAME_TYPE(MEMBER(THEIRS, m), SIG(THEIRS, const)),	\
		      "struct qdisc_util: iproute2's " #m " is not " #SIG); \
	static_assert(SAME_TYPE(MEMBER(OURS, m), SIG(OURS, )),		\
		      "struct qdisc_util: our " #m " is not " #SIG);
SAME_MEMBER(next, NEXT_SIG)
SAME_MEMBER(id, ID_SIG)
SAME_MEMBER(parse_qopt, PARSE_SIG)
SAME_MEMBER(print_qopt, PRINT_OPT_SIG)
SAME_MEMBER(print_xstats, PRINT_OPT_SIG)
SAME_MEMBER(parse_copt, PARSE_SIG)
SAME_MEMBER(print_copt, PRINT_OPT_SIG)
SAME_MEMBER(has_block, HAS_BLOCK_SIG)

#endif /* ABI_CHECK_LIST */
