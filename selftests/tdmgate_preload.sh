#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unmodified UDP senders gated by libtdmgate-preload.so: the plan is the
# tdmwin qdisc's on a device of its own (tdmplan, a dummy device: the
# plan's home, as the mlx5 netdev is beside libvma), the traffic leaves
# through a veth whose qdisc gates nothing, as a preloaded stack's would.
#
#   ns A (tdmplan: tdmwin; tdmA 198.18.0.1: senders, tcpdump)  ==veth==  ns B (tdmB: receiver)
#
#   1. a plain C sender (tdmgen, sendmmsg()) without the shim: frames
#      leave all over the cycle; with it, inside the windows;
#   2. spead2's UDP sender (PyPI, spead2_send.py: sendmmsg() with GSO
#      where the kernel has it), the library the SKA telescopes use,
#      with the shim: inside the windows;
#   3. hold: UDP sends wait, ICMP (ping) is not touched; release: they go.
# Departures are judged on the host from a capture on tdmA, the sender's
# own tap (TX, with the tolerances and allowance of tdmwin_gate.sh).  The
# gate acts in the sender's thread, so a preemption between its answer and
# the send makes frames late: the gated senders run at real-time priority
# (chrt -f), as a deployment runs them.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump ping chrt

SHIM=$TDM_ROOT/build/us/libtdmgate-preload.so
TDMGEN=$TDM_ROOT/build/us/tdmgen
# spead2 in the testbed's venv (testbed/guest/setup; the guest shares the root).
SPEAD2_SEND=${TDM_SPEAD2_SEND:-${TDMWIN_CACHE:-$HOME/.cache/tdmwin}/venv/bin/spead2_send.py}
{ [ -f "$SHIM" ] && [ -x "$TDMGEN" ]; } || tdm_skip_all "libtdmgate-preload.so, tdmgen not built (make tools)"
setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
{ ip -n "$A" link add tdmplan type dummy && ip -n "$A" link set tdmplan up; } ||
	tdm_skip_all "cannot create a dummy device"
CYCLE=20000000
WINS="2000000:4000000,12000000:3000000"	# [2,6) ms and [12,15) ms
declare -A Q R

tc_a() { tdm_tc -n "$A" "$@"; }
shim() { nsx "$A" env LD_PRELOAD="$SHIM" TDMGATE_DEV=tdmplan "$@"; }

check "add tdmwin on tdmplan: cycle 20ms, windows [2,6) and [12,15) ms, CLOCK_REALTIME" \
	tc_a qdisc add dev tdmplan root handle 1: tdmwin cycle-time 20ms base-time 0 \
	window 2ms 4ms window 12ms 3ms clockid CLOCK_REALTIME link-speed 1000
tdm_snap Q "$A" tdmplan
BASE=${Q[options.base_time]:-0}

# judge NAME PORT: the capture NAME, judged on the host against WINS.
judge() {
	tdm_judge "$1" tb pcap "@$TDM_TMP/$1.pcap" --port "$2" --cycle $CYCLE \
		--base "$BASE" --windows "$WINS" --tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
}

# ---- 1. a plain C sender ------------------------------------------------------

mark=$(tdm_hostload_mark)
tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001,5002,5003 || tdm_fail "receiver"
tdm_cap_start plain "$A" tdmA "udp dst port 5001" || tdm_fail "tcpdump"
nsx "$A" "$TDMGEN" -p 5001 -s 200 -c 600 -r 1000pps -E 0 -q "$TDM_IP_B"
check_eq "ungated: tdmgen sent" $? 0
tdm_cap_stop plain
judge plain 5001
tdm_judge_check "ungated: frames captured" plain 'judged >= 300'
tdm_judge_check "ungated: many frames outside the windows" plain \
	'outside * 100 // (judged + 1) >= 25'

tdm_cap_start plaing "$A" tdmA "udp dst port 5001" || tdm_fail "tcpdump"
shim chrt -f 50 "$TDMGEN" -p 5001 -s 200 -c 1000 -r 1000pps -b 8 -E 0 -q "$TDM_IP_B" \
	2>"$TDM_TMP/plaing.err"
check_eq "gated: tdmgen sent, preloaded" $? 0
sed 's/^/# /' "$TDM_TMP/plaing.err"
tdm_cap_stop plaing
judge plaing 5001
tdm_judge_check "gated: frames captured" plaing 'judged >= 900'
tdm_quiet_judge "$mark"
tdm_timing tdm_judge_check "gated: frames outside the windows, at most the allowance" \
	plaing 'outside <= allowed(judged)'
tdm_judge_check "gated: no reordering" plaing 'reorder == 0'

# ---- 2. spead2's sender --------------------------------------------------------

if ! [ -x "$SPEAD2_SEND" ]; then
	tdm_skip "spead2's sender gated" "no $SPEAD2_SEND (testbed/guest/setup installs spead2)"
else
	mark=$(tdm_hostload_mark)
	tdm_cap_start spead2 "$A" tdmA "udp dst port 5002" || tdm_fail "tcpdump"
	# 300 heaps of 4 kB in packets of at most 1472 bytes, at 20 Mbit/s.
	shim chrt -f 50 "$SPEAD2_SEND" --heaps 300 --heap-size 4096 --packet 1472 --rate 0.02 \
		--log WARNING "$TDM_IP_B:5002" >"$TDM_TMP/spead2.out" 2>&1
	check_eq "spead2: spead2_send.py ran, preloaded" $? 0
	sed 's/^/# spead2: /' "$TDM_TMP/spead2.out" | head -n 20
	tdm_cap_stop spead2
	judge spead2 5002
	tdm_judge_check "spead2: frames captured" spead2 'judged >= 600'
	tdm_quiet_judge "$mark"
	tdm_timing tdm_judge_check "spead2: frames outside the windows, at most the allowance" \
		spead2 'outside <= allowed(judged)'
fi

# ---- 3. hold: UDP waits, ICMP does not -------------------------------------------

check "hold the plan" tc_a qdisc change dev tdmplan root tdmwin hold
# nsenter execs the sender (ip netns exec would fork it): $! is the sender.
LD_PRELOAD="$SHIM" TDMGATE_DEV=tdmplan nsenter --net="/run/netns/$A" \
	"$TDMGEN" -p 5003 -s 200 -c 5 -E 0 -q "$TDM_IP_B" >/dev/null 2>&1 &
held=$!
TDM_BG_PIDS+=("$held")
check "hold: ping (ICMP) passes the shim" shim ping -c 1 -W 5 "$TDM_IP_B"
sleep 1
check "hold: the UDP sender waits" kill -0 "$held"
tdm_recv_stop rx R
check_eq "hold: none of its datagrams left" "${R[udp5003.n]:-0}" 0
tdm_recv_start rx2 "$B" --bind "$TDM_IP_B" --ports 5003
check "release the plan" tc_a qdisc change dev tdmplan root tdmwin release
check "release: the UDP sender finishes" tdm_wait_for 20 sh -c "! kill -0 $held 2>/dev/null"
tdm_recv_wait rx2 5 10
tdm_recv_stop rx2 R
check_eq "release: its datagrams left" "${R[udp5003.n]:-0}" 5

tdm_exit
