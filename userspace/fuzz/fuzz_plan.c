// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the plan file parser.  Any input must be either
 * refused with a message or parsed into a valid plan; a parsed plan must
 * survive tdm_plan_format -> tdm_plan_parse unchanged, with the same
 * digest.  A plan with receivers ([receiver], [barrel]) must keep its
 * promises: what each receiver sees (tdm_plan_for_dest) is a valid
 * one-receiver plan or refused with a message, and its time adds up to
 * the receiver's share.  Anything else aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct tdm_plan *p)
{
	uint8_t d1[32], d2[32];
	struct tdm_plan q;
	char err[512];
	char *text;

	text = tdm_plan_format_alloc(p);
	if (!text)
		abort();
	if (tdm_plan_parse(text, "formatted", &q, err, sizeof(err))) {
		fprintf(stderr, "formatted plan refused: %s\n%s", err, text);
		abort();
	}
	if (!tdm_plan_equal(p, &q)) {
		fprintf(stderr, "formatted plan differs:\n%s", text);
		abort();
	}
	tdm_plan_digest(p, d1);
	tdm_plan_digest(&q, d2);
	if (memcmp(d1, d2, sizeof(d1)))
		abort();
	free(text);
	tdm_plan_free(&q);
}

static void per_dest(const struct tdm_plan *p)
{
	unsigned int r, i;
	struct tdm_plan q;
	uint64_t t;
	char err[512];

	for (r = 0; r < tdm_plan_ndest(p); r++) {
		err[0] = '\0';
		if (tdm_plan_for_dest(p, r, &q, err, sizeof(err))) {
			if (!err[0] || q.senders)
				abort();
			continue;
		}
		if (tdm_plan_validate(&q, err, sizeof(err)))
			abort();
		for (i = 0, t = 0; i < q.nsenders; i++)
			t += tdm_plan_pair_ns(&q, i, 0);
		if (t != tdm_plan_dest_ns(p, r) || t > p->cycle_ns)
			abort();
		tdm_plan_free(&q);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tdm_plan p;
	char err[512];
	char *text;

	/* The parser takes a C string: stop at the first NUL like a file. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err[0] = '\0';
	if (!tdm_plan_parse(text, "fuzz.conf", &p, err, sizeof(err))) {
		round_trip(&p);
		per_dest(&p);
		tdm_plan_free(&p);
	} else if (!err[0] || p.senders || p.nsenders) {
		/* A refusal always says why and leaves nothing behind. */
		abort();
	}
	free(text);
	return 0;
}
