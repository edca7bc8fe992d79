#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Launch times (txtime on): tdmwin stamps each gated frame with the first
# instant it fits a window behind everything booked on the wire, and an etf
# child holds it until then.  On the wire testbed of tdmwin_wire.sh:
#
#   ns A tdmA (tdmwin, etf at 1:1) ==veth== ns M [netem 50mbit, 64 frames] ==veth== ns B
#
# What the testbed can show: that the stamps are right.  etf runs without
# offload here (veth has no launch time), so it lets a frame go in
# [launch - DELTA, launch] by a kernel timer and the emulated NIC sends it
# at once: a frame may reach the wire up to DELTA early.  Frames are judged
# as in tdmwin_wire.sh (the sender's tap on a perfect wire, and after the
# NIC), with DELTA more allowed on the early side.  etf drops a frame
# stamped in the past or before the frame ahead of it, so a wrong or
# out-of-order stamp would be dropped every time; etf also drops a frame
# its timer releases more than DELTA late, which TCG's stalls of a few
# milliseconds do now and then (35 and 84 of 5800 frames in two runs on a
# quiet host with DELTA 2 ms): so at most 20 % (WIRE_NIC_PERMILLE) may be
# dropped.  That a
# NIC's launch time makes departures precise to tens of nanoseconds is a
# hardware claim this testbed cannot check.
#
# Then every refusal: txtime at add, without an etf child, with an etf that
# would not keep the stamps, on another clock, with the wire clock off, as
# root of a multi-queue device, and the etf child replaced while txtime is
# on; each with its message and the running qdisc unchanged.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump
tdm_require taskset

MBIT=$WIRE_MBIT
# etf's delta: how long before its launch time etf lets a frame go.  Above
# TCG's timer latency and its tail (2 ms), or etf drops frames as late.
DELTA=2000000

tdm_wire_setup
D=tdmA
declare -A Q

tc_a() { tdm_tc -n "$A" "$@"; }
# etf has no change operation: a child with a new handle replaces it.
# (check runs its command in a subshell: the counter lives in a file.)
echo 20 >"$TDM_TMP/handle"
child() { # QDISC ARGS...: a new child at 1:1
	local h
	h=$(( $(cat "$TDM_TMP/handle") + 1 ))
	echo "$h" >"$TDM_TMP/handle"
	tc_a qdisc replace dev "$D" parent 1:1 handle "$h:" "$@"
}

# The plan runs on TAI, tcpdump stamps on REALTIME: shift by the kernel's
# TAI offset (whole seconds).
TAI_OFF=$(py clock tai)
BASE=$(( -TAI_OFF * 1000000000 ))

run() { tdm_wire_run "$1" "$BASE" "$2" "$WIRE_GUARD"; }

TDMWIN=(tdmwin cycle-time 20ms base-time 0 window 2ms 6ms window 12ms 4ms
	clockid CLOCK_TAI guard "${WIRE_GUARD}ns" link-speed "$MBIT")
ETF=(etf clockid CLOCK_TAI delta "$DELTA" skip_sock_check)

# ---- 1. refusals ---------------------------------------------------------------

refused() { # DESCRIPTION ERE CMD...: CMD fails with a message matching ERE
	local desc=$1 ere=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		tdm_fail "$desc: accepted"
		return 1
	fi
	check_match "$desc: refused with a message" "$out" "$ere"
}

refused "txtime at add" "etf child first" \
	tc_a qdisc add dev $D root handle 1: "${TDMWIN[@]}" txtime on
check "add tdmwin on TAI" tc_a qdisc add dev $D root handle 1: "${TDMWIN[@]}"
SIG=$(tdm_opts_sig "$A" $D)
refused "txtime with the default pfifo child" "needs an etf qdisc" \
	tc_a qdisc change dev $D root tdmwin txtime on
check "etf without skip_sock_check at 1:1" child etf clockid CLOCK_TAI delta $DELTA
refused "txtime over an etf that checks sockets" "skip_sock_check" \
	tc_a qdisc change dev $D root tdmwin txtime on
check "etf in deadline mode at 1:1" child "${ETF[@]}" deadline_mode
refused "txtime over an etf in deadline mode" "deadline mode" \
	tc_a qdisc change dev $D root tdmwin txtime on
check "etf as it should be at 1:1" child "${ETF[@]}"
refused "txtime with the wire clock off" "wire clock" \
	tc_a qdisc change dev $D root tdmwin txtime on wire-clock off
check_eq "the refusals left tdmwin as it was" "$(tdm_opts_sig "$A" $D | py flat --kind tdmwin |
	grep -E '^options\.(txtime|wire_clock)=')" "$(py flat --kind tdmwin <<<"$SIG" |
	grep -E '^options\.(txtime|wire_clock)=')"
check "txtime on over the etf child" tc_a qdisc change dev $D root tdmwin txtime on
tdm_snap Q "$A" $D
check_eq "the dump says txtime on" "${Q[options.txtime]:-}" true
refused "replacing the etf child while txtime is on" "needs an etf qdisc" \
	child pfifo
refused "an etf child that would drop the stamps" "deadline mode" \
	child "${ETF[@]}" deadline_mode
check_match "the etf child stayed" "$(tc_a qdisc show dev $D)" "etf"

# ---- 2. departures with and without launch times ------------------------------

tdm_quiet_wait 60 || tdm_log "$TDM_LOADED"
run txtime $((DELTA + WIRE_SLACK))
tdm_snap Q "$A" $D
# The two taps are judged on the host (txtime_tx: the sender's, on a
# perfect wire; txtime: after the NIC), the txtime drops against them.
tdm_judge_check "txtime: frames reached the wire" txtime 'judged > 0'
tdm_timing tdm_judge_check "txtime: enough frames to judge" txtime "judged >= $WIRE_MIN_FRAMES"
tdm_timing tdm_judge_check "txtime: etf dropped at most $WIRE_NIC_PERMILLE per mille: stamps in the future and in order" \
	txtime "${Q[x.txtime_drops]:-99999} <= judged * $WIRE_NIC_PERMILLE // 1000"
tdm_timing tdm_judge_check "txtime: frames released too late for their window, $DELTA ns early allowed, at most $WIRE_STRAY_PERMILLE per mille" \
	txtime_tx "outside <= judged * $WIRE_STRAY_PERMILLE // 1000"
tdm_timing tdm_judge_check "txtime: after the emulated NIC, frames outside their windows that netem's lateness beyond the guard does not explain, as many" \
	txtime "outside_gate <= txtime_tx.judged * $WIRE_STRAY_PERMILLE // 1000"
check_num "txtime: the wire was booked ahead (wire_backlog_max)" \
	"${Q[x.wire_backlog_max]:-0}" -gt 0

check "txtime off (the wire clock at dequeue)" tc_a qdisc change dev $D root tdmwin txtime off
check "a fifo at 1:1 again" child pfifo limit 1000
run wireclock "$WIRE_SLACK"
tdm_log "outside their windows with launch times and with the wire clock at dequeue:" \
	"the host's judgement of txtime and wireclock"

# ---- 3. where txtime cannot be ------------------------------------------------

tc_a qdisc del dev $D root
check "tdmwin on CLOCK_REALTIME" tc_a qdisc add dev $D root handle 1: tdmwin \
	cycle-time 20ms window 2ms 6ms clockid CLOCK_REALTIME link-speed "$MBIT"
check "etf at 1:1" child "${ETF[@]}"
refused "txtime on CLOCK_REALTIME" "CLOCK_TAI" \
	tc_a qdisc change dev $D root tdmwin txtime on
tc_a qdisc del dev $D root
ip -n "$A" link del $D
ip link add tdmA netns "$A" numtxqueues 4 numrxqueues 4 type veth \
	peer name tdmQ netns "$M" numtxqueues 4 numrxqueues 4
check "tdmwin as root of a 4-queue device" tc_a qdisc add dev $D root handle 1: \
	"${TDMWIN[@]}"
check "etf at 1:1" child "${ETF[@]}"
refused "txtime as root of a multi-queue device" "use mq" \
	tc_a qdisc change dev $D root tdmwin txtime on

tdm_exit
