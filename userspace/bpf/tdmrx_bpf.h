/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the BPF receive recorder (tdmrx.bpf.c) and its
 * loader (userspace/lib/tdm_rxbpf.c), beside the record and counters of
 * kmod/uapi/linux/tdmrx.h that both recorders share.
 */
#ifndef TDMRX_BPF_H
#define TDMRX_BPF_H

#include <linux/types.h>

#define TDMRX_BPF_PROG_NAME	"tdmrx_bpf"	/* the programs, as bpftool shows them */
#define TDMRX_XDP_PROG_NAME	"tdmrx_xdp"
#define TDMRX_XDP_HW_PROG_NAME	"tdmrx_xdp_hw"
/* Where the dispatcher runs it: before an AF_XDP receiver's program
 * (libxdp's xsk program runs at 20, a program without a run config at 50).
 */
#define TDMRX_XDP_RUN_PRIO	10
#define TDMRX_BPF_OWNER_MAP	"tdmrx_owner"	/* the owner tag's map */
#define TDMRX_BPF_PORT_WORDS	1024		/* 65536 ports, a bit each */
/* A BPF ring buffer is a power of two pages; a record takes its 64 bytes
 * and an 8-byte header: 56 records in the smallest ring.
 */
#define TDMRX_BPF_MIN_RING_BYTES 4096
#define TDMRX_BPF_REC_BYTES	72
/* The tc filter of the 6.1 path (no tcx there): a fixed handle and priority
 * on clsact ingress, so that any tdmstat or doctor finds it.
 */
#define TDMRX_BPF_TC_HANDLE	0x7464
#define TDMRX_BPF_TC_PRIO	0x7464

/* One CPU's receive watermark (CLOCK_MONOTONIC ns; 0: none yet) and
 * whether the program is between its clock read and its mark on that CPU
 * (in_hook), a cache line each; tdmrx.bpf.c says how the reader uses them.
 */
struct tdmrx_bpf_mark {
	__s64	mark_ns;
	__u64	in_hook;
	__u64	pad[6];
};

/* The owner: pid and its start time (/proc/PID/stat field 22, clock ticks
 * since boot), so that a pid reused by another process is not taken for
 * the owner; the attach mode (1 tcx link, 2 tc filter, 3 XDP through
 * libxdp, 4 XDP device-bound, alone on the device).
 */
struct tdmrx_bpf_owner {
	__u32	pid;
	__u32	mode;
	__u64	start_ticks;
};

#define TDMRX_BPF_MODE_TCX	1
#define TDMRX_BPF_MODE_TC	2
#define TDMRX_BPF_MODE_XDP	3
#define TDMRX_BPF_MODE_XDP_HW	4

#endif
