/* SPDX-License-Identifier: GPL-2.0 */
/* What kmod/tdmwin_gate.h expects from its includer outside the kernel. */
#ifndef TDMWIN_KCOMPAT_H
#define TDMWIN_KCOMPAT_H

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;

#define TDMWIN_TIME_MAX	INT64_MAX

static inline u64 tdmwin_div_rem(u64 a, u64 b, u64 *rem)
{
	*rem = a % b;
	return a / b;
}

#endif
