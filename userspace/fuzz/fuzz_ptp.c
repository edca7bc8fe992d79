// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the ptp4l management answer parser: whatever
 * another process sends on the socket is refused with a message, ignored,
 * or parsed into a port state, an offset or the grandmaster's UTC offset
 * (TIME_PROPERTIES_DATA_SET) that the rest of tdmd can use;
 * never read out of bounds (ASan) or left half filled.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tdm_ptp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tdm_ptp_status st;
	uint16_t seq = 0;
	char err[256];
	uint8_t *copy;
	int rc;

	/* An exact-size copy: ASan sees any read past the datagram. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 32)
		seq = (uint16_t)(data[30] << 8 | data[31]);
	memset(&st, 0, sizeof(st));
	err[0] = '\0';
	rc = tdm_ptp_parse(copy, size, seq, &st, err, sizeof(err));
	switch (rc) {
	case -1:
		if (!err[0] || st.port_ok || st.time_status_ok || st.tp_ok)
			abort();
		break;
	case 0:
		/* exactly one data set per answer */
		if (st.port_ok + st.time_status_ok + st.tp_ok != 1)
			abort();
		if (st.port_ok && (st.port_state < TDM_PS_INITIALIZING ||
				   st.port_state > TDM_PS_GRAND_MASTER))
			abort();
		tdm_ptp_good(&st, 1000, true, err, sizeof(err));
		break;
	case 1:
		if (st.port_ok || st.time_status_ok || st.tp_ok)
			abort();
		break;
	default:
		abort();
	}
	free(copy);
	return 0;
}
