// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdm_phc's arithmetic with synthetic samples: the narrowest
 * bracket, its midpoint, the kernel TAI offset, the fallback from one
 * ioctl to the next as phc2sys does it, and the threshold.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tdm_phc.h"

#define S(b, p, a)	{ .sys_before = (b), .phc = (p), .sys_after = (a) }
#define SEC		1000000000LL

static void test_best_narrowest(void **state)
{
	const struct tdm_phc_sample s[] = {
		S(1000, 5000, 1900),	/* 900 */
		S(2000, 6000, 2300),	/* 300: the narrowest */
		S(3000, 7000, 3700),	/* 700 */
		S(4000, 8000, 4300),	/* 300 too: the first one wins */
		S(5000, 9000, 6000),
	};

	(void)state;
	assert_int_equal(tdm_phc_best(s, 5), 1);
	assert_int_equal(tdm_phc_best(s, 1), 0);
	assert_int_equal(tdm_phc_best(s + 2, 2), 1);	/* 700 vs 300 */
	assert_int_equal(tdm_phc_best(s, 0), -1);
}

static void test_best_skips_steps(void **state)
{
	/* A system clock step backwards inside a sample: after < before. */
	const struct tdm_phc_sample s[] = {
		S(5000, 5000, 4000),
		S(6000, 6100, 6400),
		S(7000, 7000, 6999),
	};
	const struct tdm_phc_sample bad[] = {
		S(5000, 5000, 4000),
		S(7000, 7000, 6999),
	};
	const struct tdm_phc_sample zero[] = { S(10, 10, 10) };

	(void)state;
	assert_int_equal(tdm_phc_best(s, 3), 1);
	assert_int_equal(tdm_phc_best(bad, 2), -1);
	assert_int_equal(tdm_phc_best(zero, 1), 0);	/* PRECISE: no bracket */
}

static void test_offset_midpoint_tai(void **state)
{
	/* System (REALTIME) 100 s, PHC 137 s + 250 ns over a 1000 ns bracket
	 * that starts 10 us earlier: midpoint at 100 s - 9500 ns.
	 */
	const struct tdm_phc_sample s[] = {
		S(100 * SEC - 20000, 137 * SEC, 100 * SEC - 15000),
		S(100 * SEC - 10000, 137 * SEC + 250, 100 * SEC - 9000),
	};
	struct tdm_phc_offset o;
	char err[128] = "";

	(void)state;
	assert_int_equal(tdm_phc_offset_of(s, 2, TDM_PHC_EXTENDED, 37, &o,
					   err, sizeof(err)), 0);
	assert_int_equal(o.offset_ns, 250 + 9500);
	assert_int_equal(o.delay_ns, 1000);
	assert_int_equal(o.method, TDM_PHC_EXTENDED);
	assert_int_equal(o.tai_offset, 37);

	/* The same PHC with a TAI offset of 0: 37 s ahead of CLOCK_TAI. */
	assert_int_equal(tdm_phc_offset_of(s, 2, TDM_PHC_BASIC, 0, &o, err,
					   sizeof(err)), 0);
	assert_int_equal(o.offset_ns, 37 * SEC + 250 + 9500);
	assert_int_equal(o.method, TDM_PHC_BASIC);
}

static void test_offset_behind_and_odd(void **state)
{
	/* PHC behind, an odd bracket (mid rounds toward before). */
	const struct tdm_phc_sample s[] = { S(1000, 1000, 1003) };
	/* Near the end of int64 ns (year 2262): no overflow of before + after. */
	const struct tdm_phc_sample big[] = {
		S(INT64_MAX - 2000, INT64_MAX - 500, INT64_MAX - 1000),
	};
	struct tdm_phc_offset o;

	(void)state;
	assert_int_equal(tdm_phc_offset_of(s, 1, TDM_PHC_BASIC, 0, &o, NULL, 0), 0);
	assert_int_equal(o.offset_ns, -1);
	assert_int_equal(o.delay_ns, 3);
	assert_int_equal(tdm_phc_offset_of(big, 1, TDM_PHC_BASIC, 0, &o, NULL, 0), 0);
	assert_int_equal(o.offset_ns, 1000);
}

static void test_offset_precise(void **state)
{
	const struct tdm_phc_sample s[] = { S(50 * SEC, 87 * SEC - 42, 50 * SEC) };
	struct tdm_phc_offset o;

	(void)state;
	assert_int_equal(tdm_phc_offset_of(s, 1, TDM_PHC_PRECISE, 37, &o, NULL, 0), 0);
	assert_int_equal(o.offset_ns, -42);
	assert_int_equal(o.delay_ns, 0);
	assert_int_equal(o.method, TDM_PHC_PRECISE);
}

static void test_offset_unusable(void **state)
{
	const struct tdm_phc_sample s[] = { S(10, 10, 9), S(20, 20, 1) };
	struct tdm_phc_offset o = { .offset_ns = 77 };
	char err[128] = "";

	(void)state;
	assert_int_equal(tdm_phc_offset_of(s, 2, TDM_PHC_BASIC, 37, &o, err,
					   sizeof(err)), -1);
	assert_string_equal(err, "PTP_SYS_OFFSET: the system clock stepped inside every one of 2 samples");
	assert_int_equal(o.offset_ns, 77);	/* untouched */
}

static void test_fallback(void **state)
{
	(void)state;
	/* What a device or kernel without the method answers. */
	assert_int_equal(tdm_phc_fallback(TDM_PHC_PRECISE, EOPNOTSUPP), TDM_PHC_EXTENDED);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_PRECISE, EINVAL), TDM_PHC_EXTENDED);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_PRECISE, ENOTTY), TDM_PHC_EXTENDED);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_EXTENDED, EOPNOTSUPP), TDM_PHC_BASIC);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_EXTENDED, ENOTTY), TDM_PHC_BASIC);
	/* Nothing after the basic ioctl. */
	assert_int_equal(tdm_phc_fallback(TDM_PHC_BASIC, EOPNOTSUPP), -1);
	/* Real errors are not hidden behind another method. */
	assert_int_equal(tdm_phc_fallback(TDM_PHC_PRECISE, EIO), -1);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_PRECISE, EBUSY), -1);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_EXTENDED, ENODEV), -1);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_EXTENDED, EFAULT), -1);
	assert_int_equal(tdm_phc_fallback(-1, EOPNOTSUPP), -1);
	assert_int_equal(tdm_phc_fallback(TDM_PHC_NMETHODS, EOPNOTSUPP), -1);
}

static void test_good(void **state)
{
	struct tdm_phc_offset o = { .offset_ns = 5000, .method = TDM_PHC_BASIC };
	char reason[128] = "";

	(void)state;
	assert_true(tdm_phc_good(&o, 5000, reason, sizeof(reason)));
	assert_string_equal(reason, "");
	o.offset_ns = -5000;
	assert_true(tdm_phc_good(&o, 5000, reason, sizeof(reason)));
	o.offset_ns = -5001;
	assert_false(tdm_phc_good(&o, 5000, reason, sizeof(reason)));
	assert_string_equal(reason, "PHC offset -5001 ns (PHC - CLOCK_TAI) exceeds 5000 ns");
	o.offset_ns = 1000000123;
	assert_false(tdm_phc_good(&o, 1000, reason, sizeof(reason)));
	assert_string_equal(reason, "PHC offset 1000000123 ns (PHC - CLOCK_TAI) exceeds 1000 ns");
	o.offset_ns = INT64_MIN;
	assert_false(tdm_phc_good(&o, (uint64_t)INT64_MAX, NULL, 0));
	assert_true(tdm_phc_good(&o, (uint64_t)INT64_MAX + 1, NULL, 0));
	o.offset_ns = 0;
	assert_true(tdm_phc_good(&o, 0, NULL, 0));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(tdm_phc_method_name(TDM_PHC_PRECISE), "precise");
	assert_string_equal(tdm_phc_method_name(TDM_PHC_EXTENDED), "extended");
	assert_string_equal(tdm_phc_method_name(TDM_PHC_BASIC), "basic");
	assert_string_equal(tdm_phc_method_name(-1), "none");
	assert_string_equal(tdm_phc_method_name(TDM_PHC_NMETHODS), "none");
	assert_string_equal(tdm_phc_ioctl_name(TDM_PHC_PRECISE), "PTP_SYS_OFFSET_PRECISE");
	assert_string_equal(tdm_phc_ioctl_name(TDM_PHC_BASIC), "PTP_SYS_OFFSET");
}

/* The ioctl layer where the host has no PHC: precise errors. */
static void test_open_errors(void **state)
{
	struct tdm_phc p;
	struct tdm_phc_offset o;
	char err[128] = "";
	int idx = 5;

	(void)state;
	assert_int_equal(tdm_phc_open(&p, 999999, err, sizeof(err)), -1);
	assert_string_equal(err, "/dev/ptp999999: No such file or directory");
	assert_int_equal(tdm_phc_read(&p, &o, err, sizeof(err)), -1);
	assert_string_equal(err, "the PHC is not open");
	tdm_phc_close(&p);
	assert_int_equal(tdm_phc_index("no-such-if0", &idx, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "no-such-if0: ETHTOOL_GET_TS_INFO: No such device");
	assert_int_equal(idx, 5);
	assert_int_equal(tdm_phc_index("a-name-too-long-for-ifnamsiz", &idx, NULL,
				       err, sizeof(err)), -1);
	assert_string_equal(err, "'a-name-too-long-for-ifnamsiz': interface name too long");
	/* Loopback has no PHC: index -1, and software stamping. */
	if (tdm_phc_index("lo", &idx, NULL, err, sizeof(err)) == 0)
		assert_int_equal(idx, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_best_narrowest),
		cmocka_unit_test(test_best_skips_steps),
		cmocka_unit_test(test_offset_midpoint_tai),
		cmocka_unit_test(test_offset_behind_and_odd),
		cmocka_unit_test(test_offset_precise),
		cmocka_unit_test(test_offset_unusable),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
