#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# AF_XDP past the qdisc, gated by libtdmgate: tdmgen --stack afxdp sends
# AF_XDP frames (copy mode on veth) on a device whose root qdisc is tdmwin.
# The frames never pass that qdisc (__dev_direct_xmit()): it holds nothing
# and counts nothing, and
#
#   1. without the library (--ungated) they leave all over the cycle
#      although tdmwin is the root qdisc: the gap this closes;
#   2. with it (tdmgen follows the qdisc's plan through libtdmgate and
#      waits for each frame's instant) they leave inside the windows, and
#      after a `tc qdisc change` to a pending plan, inside the new plan's
#      windows from its base time on, the old ones before it.
#
#   ns A (tdmA 198.18.0.1, tdmwin root; tdmgen AF_XDP)  ==veth==  ns B (tdmB: tcpdump, receiver)
#
# Where they leave: AF_XDP copy mode hands frames to the driver without the
# device's TX taps (no dev_queue_xmit_nit()), so a capture on tdmA sees
# none.  tcpdump stamps them at tdmB, the other end of the sender's veth:
# the sender's wire.  The capture is judged on the host (tb pcap), with the
# tolerances and allowance of tdmwin_gate.sh (lib.sh), on a quiet host.
#
# A software gate acts in its sender's thread: a preemption between the
# gate's answer and the kick makes frames late.  The gated sender runs as
# a deployment runs it, at real-time priority (chrt -f), and is the
# release build (the sanitizer build's slower frames run ungated, and in
# tdmctl doctor's check).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump chrt

tdm_use_build "$TDM_ROOT/build/us" "" TDMGEN=tdmgen TDMCTL=tdmctl
{ [ -x "$TDMGEN" ] && [ -x "$TDMCTL" ]; } || tdm_skip_all "tdmgen, tdmctl not built (make tools)"
setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
CYCLE=20000000
WINS="2000000:4000000,12000000:3000000"	# [2,6) ms and [12,15) ms
WINS2="8000000:3000000"			# the pending plan: [8,11) ms
declare -A Q R

tc_a() { tdm_tc -n "$A" "$@"; }
gen() {	# [chrt -f 50 BUILD/tdmgen] ARGS...
	local bin=("$TDMGEN")
	[ "$1" = chrt ] && { bin=("${@:1:4}"); shift 4; }
	nsx "$A" "${bin[@]}" --stack afxdp -I $D -p 5001 -s 200 -E 0 -j "$@" \
		"$TDM_IP_B" 2>"$TDM_TMP/gen.err"
}

check "add tdmwin: cycle 20ms, windows [2,6) and [12,15) ms, CLOCK_REALTIME" \
	tc_a qdisc add dev $D root handle 1: tdmwin cycle-time 20ms base-time 0 \
	window 2ms 4ms window 12ms 3ms clockid CLOCK_REALTIME link-speed 1000
tdm_snap Q "$A" $D
BASE=${Q[options.base_time]:-0}

# run NAME GEN_ARGS...: capture at tdmB and receive while tdmgen sends.
run() {
	local name=$1 out
	shift
	tdm_cap_start "$name" "$B" tdmB "udp dst port 5001" || return 1
	tdm_recv_start "rx$name" "$B" --bind "$TDM_IP_B" --ports 5001 || return 1
	out=$(gen "$@")
	check_eq "$name: tdmgen sent" $? 0
	sed 's/^/# /' "$TDM_TMP/gen.err"
	tdm_log "$name: $out"
	GEN=$out
	tdm_recv_wait "rx$name" "$(sed -n 's/.*"sent":\([0-9]*\).*/\1/p' <<<"$out")" 30
	tdm_cap_stop "$name"
	tdm_recv_stop "rx$name" R
}

# ---- 1. without the library: the qdisc does not see AF_XDP -------------------

mark=$(tdm_hostload_mark)
run ungated --ungated -c 600 -r 1000pps
check_match "ungated: said so" "$GEN" '"gate":"none"'
tdm_snap Q "$A" $D
check_eq "ungated: the qdisc saw none of it" "${Q[x.window_packets]:-}:${Q[qlen]:-}" 0:0
tdm_judge ungated tb pcap "@$TDM_TMP/ungated.pcap" --port 5001 --cycle $CYCLE \
	--base "$BASE" --windows "$WINS" --tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
tdm_judge_check "ungated: frames captured" ungated 'judged >= 400'
tdm_judge_check "ungated: many frames outside the windows though tdmwin is root" ungated \
	'outside * 100 // (judged + 1) >= 25'

# tdmctl doctor sees an AF_XDP sender beside the qdisc (one wire per
# device): by device with xsk_diag (6.12), else the namespace's count (6.1).
modprobe -q xsk_diag 2>/dev/null
doctor() { nsx "$A" "$TDMCTL" doctor -i $D 2>&1 | grep '^tdm.bypass'; }
# nsenter execs tdmgen (ip netns exec would fork it): $! is the sender.
nsenter --net="/run/netns/$A" "$TDMGEN" --stack afxdp --ungated -I $D -p 5009 \
	-c 1000 -r 100pps -E 0 -q "$TDM_IP_B" >/dev/null 2>&1 &
dpid=$!
TDM_BG_PIDS+=("$dpid")
sleep 0.5
doc=$(doctor)
tdm_log "doctor while an AF_XDP sender runs: $doc"
check_match "doctor: the AF_XDP sender beside tdmwin, a warning" "$doc" \
	'WARN +no XDP program and 1 AF_XDP socket (\(1 with TX\) on tdmA|in its namespace).*beside its tdmwin'
kill -TERM "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
check_match "doctor: no AF_XDP socket once it is done" "$(doctor)" \
	'OK +no XDP program and 0 AF_XDP sockets'

# ---- 2. gated by libtdmgate, through a plan change ----------------------------

tdm_cap_start gated "$B" tdmB "udp dst port 5001" || tdm_fail "tcpdump did not start"
tdm_recv_start rxgated "$B" --bind "$TDM_IP_B" --ports 5001
gen chrt -f 50 "$TDM_ROOT/build/us/tdmgen" -c 3000 -r 1000pps >"$TDM_TMP/gated.json" &
gpid=$!
TDM_BG_PIDS+=("$gpid")
# Once frames flow, a pending plan whose base is a cycle boundary 1.5 s
# ahead: frames before it under the first plan, after it under the new.
tdm_recv_wait rxgated 100 30
t0=$(tdm_now)
B2=$(( (t0 / CYCLE + 75) * CYCLE ))
check "change: pending plan, window [8,11) ms from base $B2" tc_a qdisc change \
	dev $D root tdmwin clockid CLOCK_REALTIME base-time "$B2" window 8ms 3ms \
	plan-version 2
t1=$(tdm_now)
slow=
[ "$t1" -lt "$B2" ] ||
	slow="tc took $(( (t1 - t0) / 1000000 )) ms, past the pending base: too slow a guest"
wait "$gpid"
check_eq "gated: tdmgen sent" $? 0
GEN=$(cat "$TDM_TMP/gated.json")
sed 's/^/# /' "$TDM_TMP/gen.err"
tdm_log "gated: $GEN"
tdm_recv_wait rxgated 3000 30
tdm_cap_stop gated
tdm_recv_stop rxgated R
tdm_quiet_judge "$mark"
[ -z "$slow" ] || TDM_LOADED=$slow
check_match "gated: software gating by libtdmgate, said" "$GEN" \
	'"gate":"lib","gating":"software"'
check_match "gated: launch time looked up and said" "$GEN" '"launch_time":"[a-z]'
check_eq "gated: the receiver got all" "${R[udp5001.n]:-x}:${R[udp5001.lost]:-x}" 3000:0
tdm_snap Q "$A" $D
check_eq "gated: the qdisc saw none of it" "${Q[x.window_packets]:-}:${Q[qlen]:-}" 0:0
check_eq "gated: the qdisc switched to the pending plan" "${Q[options.plan_version]:-}" 2

tdm_judge gated tb pcap "@$TDM_TMP/gated.pcap" --port 5001 --cycle $CYCLE --base "$BASE" \
	--windows "$WINS" --switch "$B2" --base2 "$B2" --windows2 "$WINS2" \
	--tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
tdm_timing tdm_judge_check "gated: frames under the first plan" gated 'phase1 >= 300'
tdm_timing tdm_judge_check "gated: frames under the pending plan, after its base" gated \
	'phase2 >= 300'
tdm_timing tdm_judge_check "gated: frames outside their plan's windows, at most the allowance" \
	gated 'outside <= allowed(judged)'
tdm_judge_check "gated: no reordering" gated 'reorder == 0'

tdm_exit
