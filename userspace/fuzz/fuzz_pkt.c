// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the captured-frame decoder (tdm_frame_decode_as,
 * tdmgen's and the original tool's payloads) and the engine behind it: the
 * first byte picks the link type, the payload format and the ports, the
 * rest is a frame; a decoded record goes through tdm_stats with a small plan.  Any
 * out-of-bounds read, overflow or a record with a length beyond the UDP
 * limit aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_pkt.h"
#include "tdm_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int types[] = { TDM_DLT_EN10MB, TDM_DLT_RAW, TDM_DLT_LINUX_SLL,
			     TDM_DLT_LINUX_SLL2, TDM_DLT_NULL, 12 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tdm_stats *st;
	const uint16_t port = 8081;
	struct tdmrx_record r;
	enum tdm_frame_res res;
	uint8_t *copy;

	if (size < 1)
		return 0;
	if (!st) {
		struct tdm_stats_cfg cfg = { .grace_ns = 1000000 };
		struct tdm_plan p;
		char err[256];

		tdm_plan_init(&p);
		if (tdm_plan_auto(&p, 3, NULL, 100000, 10000, 2, err, sizeof(err)))
			abort();
		st = tdm_stats_new(&cfg);
		if (!st || tdm_stats_add_plan(st, &p, err, sizeof(err)))
			abort();
		tdm_plan_free(&p);
	}
	/* An exact-size copy, so that ASan sees reads past the frame. */
	copy = malloc(size - 1 ? size - 1 : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, size - 1);
	res = tdm_frame_decode_as(data[0] & 0x40 ? TDM_PAYLOAD_ORIG :
				  TDM_PAYLOAD_TDMG, types[data[0] % 6], copy,
				  size - 1, 12345, TDMRX_F_SW_TS,
				  data[0] & 0x80 ? &port : NULL,
				  data[0] & 0x80 ? 1 : 0, &r);
	if (res == TDM_FRAME_OK || res == TDM_FRAME_BAD) {
		if (r.len > 65535)
			abort();
		tdm_stats_push(st, &r);
	}
	free(copy);
	return 0;
}
