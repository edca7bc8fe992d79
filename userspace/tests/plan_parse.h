/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The plan tests' parse helpers (test_plan.c, test_corner.c), after
 * cmocka.h and tdm_plan.h: a text that must parse, one that must be
 * refused with exactly the given message, leaving nothing allocated, and
 * a plan that must come back the same, digest and all, through
 * tdm_plan_format and tdm_plan_parse.
 */
#ifndef PLAN_PARSE_H
#define PLAN_PARSE_H

static void parse_ok(const char *text, struct tdm_plan *p)
{
	char err[512] = "";

	if (tdm_plan_parse(text, "plan.conf", p, err, sizeof(err)))
		fail_msg("refused: %s\n%s", err, text);
}

static void parse_bad(const char *text, const char *want)
{
	struct tdm_plan p;
	char err[512] = "";

	memset(&p, 0xa5, sizeof(p));	/* parse must not trust p */
	if (!tdm_plan_parse(text, "plan.conf", &p, err, sizeof(err))) {
		tdm_plan_free(&p);
		fail_msg("accepted, expected: %s\n%s", want, text);
	}
	assert_string_equal(err, want);
	assert_null(p.senders);
	assert_int_equal(p.nsenders, 0);
	assert_null(p.receivers);
	assert_int_equal(p.nreceivers, 0);
	tdm_plan_free(&p);	/* harmless after a failed parse */
}

static void round_trip(const struct tdm_plan *p)
{
	uint8_t d1[32], d2[32];
	char err[512], *text;
	struct tdm_plan q;

	text = tdm_plan_format_alloc(p);
	assert_non_null(text);
	if (tdm_plan_parse(text, "formatted", &q, err, sizeof(err)))
		fail_msg("%s\n%s", err, text);
	assert_true(tdm_plan_equal(p, &q));
	tdm_plan_digest(p, d1);
	tdm_plan_digest(&q, d2);
	assert_memory_equal(d1, d2, sizeof(d1));
	tdm_plan_free(&q);
	free(text);
}

#endif
