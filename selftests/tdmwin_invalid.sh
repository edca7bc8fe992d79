#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Invalid input is refused with a message that names the problem, and a
# refused change leaves the qdisc exactly as it was (options, plan version,
# pending plan).  Checked twice: through tc and the plugin (the message may
# come from either), and with raw netlink requests built by tdmwin_util.py
# (the kernel's own extack, independent of the plugin).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require

setup_ns A || tdm_skip_all "cannot create network namespaces"
ip -n "$A" link add tdmA type veth peer name tdmB || tdm_skip_all "no veth"
ip -n "$A" link set tdmA up
D=tdmA

tc_a() { tdm_tc -n "$A" "$@"; }
nl_a() { nsx "$A" "${TDM_PYC[@]}" nl "$@"; }


no_tdmwin() {
	check_eq "  ... and no qdisc was created" "$(tc_a qdisc show dev $D | grep -c tdmwin)" 0
}

unchanged() {
	local now
	now=$(tdm_opts_sig "$A" $D)
	if [ "$now" = "$SIG" ]; then
		tdm_ok "  ... and the qdisc is unchanged"
	else
		tdm_fail "  ... and the qdisc is unchanged"
		tdm_log "  before: $SIG"
		tdm_log "  after:  $now"
	fi
}

many_windows() { # N: N windows of 50us every 100us
	local i
	for ((i = 0; i < $1; i++)); do
		echo "window $((i * 100))us 50us"
	done
}

W65=$(many_windows 65)
W64=$(many_windows 64)

# ---- add, through tc ------------------------------------------------------------

add() { tc_a qdisc add dev "$D" root handle 1: tdmwin "$@"; }

check_refused "tc: cycle-time 0" "cycle" add cycle-time 0 window 0 1us
no_tdmwin
check_refused "tc: cycle-time 11s (> 10 s)" "cycle" add cycle-time 11s window 0 1ms
no_tdmwin
check_refused "tc: window past the end of the cycle" "outside|cycle" \
	add cycle-time 20ms window 15ms 10ms
no_tdmwin
check_refused "tc: window offset beyond the cycle" "outside|cycle" \
	add cycle-time 20ms window 25ms 1ms
no_tdmwin
check_refused "tc: overlapping windows" "overlap" \
	add cycle-time 20ms window 0 5ms window 3ms 5ms
no_tdmwin
check_refused "tc: window shorter than a minimum frame (10 Mbit/s: 67.2 us)" \
	"short|minimum" add cycle-time 20ms window 0 50us link-speed 10
no_tdmwin
check_refused "tc: window shorter than a minimum frame plus guard" "short|minimum|guard" \
	add cycle-time 20ms window 0 1us guard 1us link-speed 1000
no_tdmwin
check_refused "tc: window of length 0" "short|minimum|length|window" \
	add cycle-time 20ms window 0 0
no_tdmwin
# shellcheck disable=SC2086
check_refused "tc: 65 windows (> 64)" "64|many|windows" add cycle-time 10ms $W65
no_tdmwin
check_refused "tc: unknown clockid" "clock" add cycle-time 20ms window 0 1ms clockid CLOCK_FOO
no_tdmwin
check_refused "tc: no cycle-time" "cycle" add window 0 1ms
no_tdmwin
check_refused "tc: no window" "window" add cycle-time 20ms
no_tdmwin
check_refused "tc: no options at all" "cycle|window|option" add
no_tdmwin
check_refused "tc: guard 2s (> 1 s)" "guard" add cycle-time 5s window 0 4s guard 2s
no_tdmwin
check_refused "tc: limit 0" "limit" add cycle-time 20ms window 0 1ms limit 0
no_tdmwin
check_refused "tc: link-speed beyond 1.6 Tbit/s" "speed" \
	add cycle-time 20ms window 0 1ms link-speed 2000000
no_tdmwin
check_refused "tc: bypass-prio 16" "prio" add cycle-time 20ms window 0 1ms bypass-prio 16
no_tdmwin
check_refused "tc: hold and release together" "hold|release" \
	add cycle-time 20ms window 0 1ms hold release
no_tdmwin
check_refused "tc: bad TIME" "cycle|time|invalid|illegal" add cycle-time 5parsecs window 0 1ms
no_tdmwin
check_refused "tc: window without a length" "window|length" add cycle-time 20ms window 0
no_tdmwin
check_refused "tc: bad bypass-ptp value" "bypass|ptp|on|off" \
	add cycle-time 20ms window 0 1ms bypass-ptp maybe
no_tdmwin
# shellcheck disable=SC2086
check "tc: 64 windows are accepted" add cycle-time 10ms $W64
tc_a qdisc del dev $D root 2>/dev/null

# A device that reports no link speed (loopback) needs link-speed.
check_refused "tc: unknown link speed without link-speed" "speed" \
	tc_a qdisc add dev lo root handle 1: tdmwin cycle-time 20ms window 0 1ms
check "tc: ... accepted with link-speed" tc_a qdisc add dev lo root handle 1: tdmwin \
	cycle-time 20ms window 0 1ms link-speed 1000
tc_a qdisc del dev lo root 2>/dev/null

# ---- change, through tc -------------------------------------------------------------

check "base qdisc for refused changes" add cycle-time 20ms base-time 0 \
	window 0 5ms window 10ms 100us plan-version 5 limit 100
chg() { tc_a qdisc change dev "$D" root tdmwin "$@"; }
SIG=$(tdm_opts_sig "$A" $D)

check_refused "tc change: clockid" "clock" chg clockid CLOCK_REALTIME
unchanged
check_refused "tc change: overlapping windows" "overlap" chg window 0 5ms window 4ms 2ms
unchanged
check_refused "tc change: cycle shorter than the windows" "outside|cycle" chg cycle-time 2ms
unchanged
check_refused "tc change: link-speed making a window too short" "short|minimum" \
	chg link-speed 1
unchanged
check_refused "tc change: guard making a window too short" "short|minimum|guard" \
	chg guard 200us
unchanged
check_refused "tc change: cycle-time 0" "cycle" chg cycle-time 0
unchanged
check_refused "tc change: cycle-time 20s" "cycle" chg cycle-time 20s
unchanged
check_refused "tc change: limit 0" "limit" chg limit 0
unchanged
# shellcheck disable=SC2086
check_refused "tc change: 65 windows" "64|many|windows" chg cycle-time 10ms $W65
unchanged
check_refused "tc change: guard 2s" "guard" chg guard 2s
unchanged

# A refused change also keeps a pending plan.
check "pending plan" chg base-time now+60s window 1ms 1ms
SIG=$(tdm_opts_sig "$A" $D)
check "  the signature includes the pending plan" grep -q '"pending"' <<<"$SIG"
check_refused "tc change with a pending plan: overlap" "overlap" \
	chg window 0 5ms window 4ms 2ms
unchanged
check_refused "tc change with a pending plan: clockid" "clock" chg clockid CLOCK_MONOTONIC
unchanged
check "a valid change still works afterwards" chg base-time 0 window 0 6ms
tc_a qdisc del dev $D root

# ---- the kernel's own checks: raw netlink ----------------------------------------------

check_refused "nl: no TCA_OPTIONS" "missing|cycle|window|option" nl_a add $D
no_tdmwin
check_refused "nl: empty options" "missing|cycle" nl_a add $D '{}'
no_tdmwin
check_refused "nl: no windows" "window" nl_a add $D '{"cycle":20000000}'
no_tdmwin
check_refused "nl: no cycle" "cycle" nl_a add $D '{"windows":[[0,1000000]]}'
no_tdmwin
check_refused "nl: cycle 0" "cycle" nl_a add $D '{"cycle":0,"windows":[[0,100]]}'
no_tdmwin
check_refused "nl: cycle 999 ns (< 1 us)" "cycle" nl_a add $D '{"cycle":999,"windows":[[0,100]]}'
no_tdmwin
check_refused "nl: cycle 10 s + 1 ns" "cycle" \
	nl_a add $D '{"cycle":10000000001,"windows":[[0,1000000]]}'
no_tdmwin
check_refused "nl: window outside the cycle" "outside" \
	nl_a add $D '{"cycle":20000000,"windows":[[15000000,6000000]]}'
no_tdmwin
check_refused "nl: window length near 2^64 (overflow)" "outside" \
	nl_a add $D '{"cycle":20000000,"windows":[[1000,18446744073709551000]]}'
no_tdmwin
check_refused "nl: overlapping windows (given out of order)" "overlap" \
	nl_a add $D '{"cycle":20000000,"windows":[[3000000,5000000],[0,5000000]]}'
no_tdmwin
check_refused "nl: window shorter than a minimum frame (10 Gbit/s: 68 ns)" "short|minimum" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,60]]}'
no_tdmwin
wl=
for ((i = 0; i < 65; i++)); do wl+="${wl:+,}[$((i * 100000)),50000]"; done
check_refused "nl: 65 windows" "64|many" nl_a add $D "{\"cycle\":10000000,\"windows\":[$wl]}"
no_tdmwin
check_refused "nl: clockid 99" "clock" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"clockid":99}'
no_tdmwin
check_refused "nl: negative base time" "base|negative" \
	nl_a add $D '{"cycle":20000000,"base":-5,"windows":[[0,1000000]]}'
no_tdmwin
check_refused "nl: window without a length" "window|length" \
	nl_a add $D '{"cycle":20000000,"windows":[[0]]}'
no_tdmwin
check_refused "nl: empty window list" "window" nl_a add $D '{"cycle":20000000,"windows":[]}'
no_tdmwin
check_refused "nl: guard above 1 s" "guard" \
	nl_a add $D '{"cycle":5000000000,"windows":[[0,4000000000]],"guard":1000000001}'
no_tdmwin
check_refused "nl: limit 0" "limit" nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"limit":0}'
no_tdmwin
check_refused "nl: link speed above the maximum" "speed" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"link_speed":1600001}'
no_tdmwin
check_refused "nl: bypass priority 16 (bit outside the mask)" "bit|prio|mask|range|invalid" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"bypass_prios":65536}'
no_tdmwin
check_refused "nl: bypass_ptp 2" "range|invalid|ptp" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"bypass_ptp":2}'
no_tdmwin
check_refused "nl: hold 2" "range|invalid|hold" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"hold":2}'
no_tdmwin
check_refused "nl: wire_clock 2" "range|invalid|wire" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"wire_clock":2}'
no_tdmwin
check_refused "nl: txtime 2" "range|invalid|txtime" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"txtime":2}'
no_tdmwin
check_refused "nl: txtime at add (no etf child yet)" "etf child first" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"clockid":11,"txtime":1}'
no_tdmwin
check_refused "nl: dump-only attribute (pending)" "policy|reject|invalid|pending" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"pending":1}'
no_tdmwin
check_refused "nl: dump-only attribute (eff_link_speed)" "policy|reject|invalid|speed" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,1000000]],"eff_link_speed":100}'
no_tdmwin
check_refused "nl: loopback without link speed" "speed" \
	nl_a add lo '{"cycle":20000000,"windows":[[0,1000000]]}'
check "nl: a valid add" nl_a add $D '{"cycle":20000000,"windows":[[0,5000000]],"plan_version":9}'
SIG=$(tdm_opts_sig "$A" $D)
check_refused "nl change: clockid" "clock" nl_a change $D '{"clockid":0}'
unchanged
check_refused "nl change: unknown clockid" "clock" nl_a change $D '{"clockid":3}'
unchanged
check_refused "nl change: link speed makes the window too short" "short|minimum" \
	nl_a change $D '{"link_speed":1,"windows":[[0,100000]]}'
unchanged
check_refused "nl change: cycle shorter than the window" "outside" nl_a change $D '{"cycle":4000000}'
unchanged
check_refused "nl change: negative base" "base|negative" nl_a change $D '{"base":-1}'
unchanged
check_refused "nl change: limit 0" "limit" nl_a change $D '{"limit":0}'
unchanged
check_refused "nl change: txtime with the default fifo child" "etf" nl_a change $D '{"txtime":1}'
unchanged
check_refused "nl change: wire_clock 7" "range|invalid|wire" nl_a change $D '{"wire_clock":7}'
unchanged
check_refused "nl: add on an existing qdisc (exclusive)" "exclusiv|exist" \
	nl_a add $D '{"cycle":20000000,"windows":[[0,5000000]]}'
unchanged
check "nl change: a valid change" nl_a change $D '{"windows":[[1000000,2000000]]}'
declare -A Q
tdm_snap Q "$A" $D
check_eq "nl change applied: window and version 10" \
	"${Q[options.windows.0.offset]:-}:${Q[options.plan_version]:-}" 1000000:10

tdm_exit
