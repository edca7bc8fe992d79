#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where a departure outside the windows was decided (issue 27, item 8:
# clusters of frames at the sender's tap 0.5-2.5 ms after a window, 6 us
# apart).  tdmwin at the root of a veth with two TX queues (what `ip link
# add type veth` gives a 2-CPU guest), the item's plan, a UDP flood.
#
# On a device with more than one TX queue the kernel hands a root qdisc's
# frames to the driver in batches: dequeue_skb() calls ->dequeue up to 9
# times (try_bulk_dequeue_skb_slow) before it transmits the first.  A
# stall of the vCPU between a batch's dequeue and its transmission sends
# the rest of the batch late, 6 us apart (a frame's cost under TCG): the
# clusters.  So each departure is judged where it was decided, from the
# kernel's own trace, not from when it reached the tap:
#   kprobe return on tdmwin_dequeue   each frame the qdisc hands out, when
#   qdisc:qdisc_dequeue               each batch (packets=N)
#   net:net_dev_start_xmit            each frame to the driver, right after
#                                     the tap (dev_queue_xmit_nit)
# paired in order on the host (testbed/tb inflight); only the probe's
# frames and non-empty batches are kept, so that 2 s of flood fit the
# ring (an overwritten event fails the check on completeness).  Every frame must be
# decided inside a window (not a timing check: the decision's own time),
# and every frame that left far outside must be one decided inside and
# held in flight.  How far such frames left is reported, not judged.
#
# The plan runs on CLOCK_MONOTONIC, the trace clock "mono": one clock.
# The trace events and the probe are enabled before the flood and removed
# after it, while no CPU runs the code they patch (testbed/guest/README,
# "Static keys and TCG").

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

TR=/sys/kernel/tracing
INST=$TR/instances/tdm_inflight
PROBE=tdm_inflight/decide
[ -w "$TR/kprobe_events" ] || tdm_skip_all "no tracefs with kprobe events at $TR"
grep -qw tdmwin_dequeue /proc/kallsyms ||
	tdm_skip_all "tdmwin_dequeue is not in /proc/kallsyms"

# The release build: a flood, not a test of tdmgen's memory.
TDMGEN=$TDM_ROOT/build/us/tdmgen
[ -x "$TDMGEN" ] || tdm_skip_all "tdmgen not built in build/us (make tools)"

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" 2 || tdm_skip_all "cannot create a veth pair"
D=tdmA
declare -A Q

trace_off() {
	[ -d "$INST" ] && {
		echo 0 >"$INST/tracing_on"
		echo 0 >"$INST/events/enable"
		rmdir "$INST"
	}
	grep -q ":$PROBE " "$TR/kprobe_events" 2>/dev/null &&
		echo "-:$PROBE" >>"$TR/kprobe_events"
}
trap 'trace_off; tdm_cleanup' EXIT

CYCLE=10000000
WINS="1300000:1700000,6100000:900000"	# [1.3,3.0) and [6.1,7.0) ms

check "add tdmwin: cycle 10ms, windows [1.3,3.0) [6.1,7.0) ms, 10 Gbit/s, CLOCK_MONOTONIC" \
	tdm_tc -n "$A" qdisc add dev $D root handle 1: tdmwin cycle-time 10ms \
	base-time 0 window 1300us 1700us window 6100us 900us link-speed 10000 \
	clockid CLOCK_MONOTONIC
IFINDEX=$(ip netns exec "$A" cat /sys/class/net/$D/ifindex)

trace_on() {
	echo "r:$PROBE tdmwin_dequeue ret=\$retval" >>"$TR/kprobe_events" &&
	mkdir "$INST" && echo mono >"$INST/trace_clock" &&
	echo 16384 >"$INST/buffer_size_kb" &&
	echo 'ret != 0' >"$INST/events/${PROBE%/*}/decide/filter" &&
	echo 'packets > 0' >"$INST/events/qdisc/qdisc_dequeue/filter" &&
	echo 1 >"$INST/events/${PROBE%/*}/decide/enable" &&
	echo 1 >"$INST/events/qdisc/qdisc_dequeue/enable" &&
	echo 1 >"$INST/events/net/net_dev_start_xmit/enable"
}
check "trace: probe on tdmwin_dequeue, qdisc_dequeue, net_dev_start_xmit" trace_on ||
	tdm_skip_all "cannot trace here"

echo 1 >"$INST/tracing_on"
nsx "$A" "$TDMGEN" -r max -d 2s -E 0 -q "$TDM_IP_B"
echo 0 >"$INST/tracing_on"
cat "$INST/trace" >"$TDM_TMP/inflight.trace"
trace_off

tdm_snap Q "$A" $D
check_eq "no requeues (the pairing's premise)" "${Q[requeues]:-x}" 0
check_eq "no bypass traffic" "${Q[x.bypass_packets]:-x}" 0

tdm_judge inflight tb inflight "@$TDM_TMP/inflight.trace" --dev $D \
	--ifindex "$IFINDEX" --cycle $CYCLE --windows "$WINS" --decide decide
tdm_judge_check "departures traced" inflight 'judged >= 1000'
tdm_judge_check "trace complete: nothing lost, each departure paired" inflight \
	'lost == 0 and orphans == 0 and decisions == judged'
tdm_judge_check "the kernel batched the dequeues (the item's set-up)" inflight \
	'max_batch > 1'
tdm_judge_check "every frame decided inside a window" inflight \
	'decided_outside == 0'
tdm_judge_check "every departure far outside was decided inside (held in flight)" \
	inflight 'far_decided_outside == 0 and far_inflight == far'

tdm_exit
