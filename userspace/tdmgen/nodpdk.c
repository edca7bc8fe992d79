// SPDX-License-Identifier: GPL-2.0
/*
 * tdmgen --stack dpdk in a tdmgen built without DPDK (no libdpdk for
 * pkg-config at build time): the option is known, and says why it
 * cannot run.
 */
#include <stdio.h>

#include "tdmgen.h"

int dpdk_run(const struct opts *o, struct sender *s)
{
	(void)o;
	(void)s;
	fprintf(stderr, "tdmgen: --stack dpdk: this tdmgen was built without DPDK (install libdpdk-dev, then make tools)\n");
	return 1;
}
