#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Configuration round trip: add / change / replace / delete / show, every
# option read back from `tc -j`, TIME units and now+TIME, classes 1:1 and
# 1:2 with their default pfifo children, grafting fq_codel on 1:1, and the
# hold/release flag in the dump.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
declare -A Q C R

tc_a() { tdm_tc -n "$A" "$@"; }
snap() { tdm_snap Q "$A" $D; }

# ---- add with every option --------------------------------------------------

check "add with every option" tc_a qdisc add dev $D root handle 1: tdmwin \
	cycle-time 1ms base-time 1000000000 window 500us 100us window 0 200us \
	guard 2us link-speed 1000 clockid CLOCK_TAI bypass-prio 3,7 \
	bypass-ptp off plan-version 42 limit 500
snap
tdm_log "dump: $(tc_a qdisc show dev $D | head -n 3)"
check_eq "one tdmwin qdisc" "${Q[count]}" 1
check_eq "handle" "${Q[handle]:-}" "1:"
check_eq "cycle_time" "${Q[options.cycle_time]:-}" 1000000
check_eq "base_time" "${Q[options.base_time]:-}" 1000000000
check_eq "windows: two" "${Q[options.windows.len]:-}" 2
check_eq "windows sorted: 0 offset" "${Q[options.windows.0.offset]:-}" 0
check_eq "windows sorted: 0 length" "${Q[options.windows.0.length]:-}" 200000
check_eq "windows sorted: 1 offset" "${Q[options.windows.1.offset]:-}" 500000
check_eq "windows sorted: 1 length" "${Q[options.windows.1.length]:-}" 100000
check_eq "guard" "${Q[options.guard]:-}" 2000
check_eq "link_speed" "${Q[options.link_speed]:-}" 1000
check_eq "eff_link_speed" "${Q[options.eff_link_speed]:-}" 1000
check_eq "clockid" "$(tdm_clk "${Q[options.clockid]:-}")" TAI
check_eq "bypass_prios" "$(tdm_prios Q)" "3,7"
check_eq "bypass_ptp off" "$(tdm_bool "${Q[options.bypass_ptp]:-}")" 0
check_eq "plan_version" "${Q[options.plan_version]:-}" 42
check_eq "limit" "${Q[options.limit]:-}" 500
check_eq "hold off" "$(tdm_bool "${Q[options.hold]:-}")" 0
check_eq "no pending plan" "${Q[options.pending.cycle_time]:-none}" none
check_eq "xstats plan_version" "${Q[x.plan_version]:-}" 42
check_eq "xstats pending 0" "${Q[x.pending]:-}" 0
check_eq "xstats hold 0" "${Q[x.hold]:-}" 0
for k in windows_opened window_packets window_bytes bypass_packets \
	 bypass_bytes guard_deferrals oversize_drops hold_drops \
	 open_latency_min open_latency_max open_latency_sum \
	 open_latency_count plan_switches; do
	check_eq "xstats $k present and 0" "${Q[x.$k]:-missing}" 0
done
check "xstats open_latency_mean present" test -n "${Q[x.open_latency_mean]:-}"
check "xstats pending_version present" test -n "${Q[x.pending_version]:-}"
check "xstats pending_base_time present" test -n "${Q[x.pending_base_time]:-}"
txt=$(tc_a -s qdisc show dev $D)
check_match "text dump names the qdisc" "$txt" "qdisc tdmwin 1: root"
check_match "text dump shows the cycle" "$txt" "cycle"
check_match "text -s dump shows counters" "$txt" "window_packets|window packets|windows"

# ---- classes and children ---------------------------------------------------

# The default pfifo children are invisible (like mq's): `show invisible`.
child() { # PARENT KEY (from the last snap)
	echo "${Q[child.$1.$2]:-}"
}
tdm_snap_class C "$A" $D 1:1
check_eq "class 1:1 exists" "${C[kind]:-}" tdmwin
check_eq "only classes 1:1 and 1:2" "${C[count]}" 2
check_eq "class 1:1 has a pfifo child" "$(child 1:1 kind)" pfifo
check_eq "child pfifo limit = limit" "$(child 1:1 options.limit)" 500
tdm_snap_class C "$A" $D 1:2
check_eq "class 1:2 exists" "${C[kind]:-}" tdmwin
check "class 1:2 has stats (-s)" test -n "${C[packets]:-}"
check_eq "class 1:2 has a pfifo child" "$(child 1:2 kind)" pfifo
check_eq "child pfifo limit = limit" "$(child 1:2 options.limit)" 500
check "tc -s class show" tc_a -s class show dev $D

# ---- change -------------------------------------------------------------------

check "change cycle-time 3ms" tc_a qdisc change dev $D root tdmwin cycle-time 3ms
snap
check_eq "cycle 3ms" "${Q[options.cycle_time]:-}" 3000000
check_eq "windows kept" "${Q[options.windows.len]:-}:${Q[options.windows.1.offset]:-}" 2:500000
check_eq "base kept" "${Q[options.base_time]:-}" 1000000000
check_eq "plan_version 43 (previous + 1)" "${Q[options.plan_version]:-}" 43
check_eq "plan_switches 0 (immediate change)" "${Q[x.plan_switches]:-}" 0

for u in "4000us 4000000" "5000000ns 5000000" "6000000 6000000" "1s 1000000000"; do
	read -r u1 u2 <<<"$u"; set -- "$u1" "$u2"
	tc_a qdisc change dev $D root tdmwin cycle-time "$1"
	snap
	check_eq "TIME unit: cycle-time $1" "${Q[options.cycle_time]:-}" "$2"
done

check "change windows and guard" tc_a qdisc change dev $D root tdmwin \
	cycle-time 20ms window 0 5ms window 10ms 1ms guard 1us
snap
check_eq "new windows" "${Q[options.windows.len]:-}:${Q[options.windows.0.length]:-}:${Q[options.windows.1.offset]:-}" \
	2:5000000:10000000
check_eq "guard 1us" "${Q[options.guard]:-}" 1000
v0=${Q[options.plan_version]:-0}

check "change link-speed 100" tc_a qdisc change dev $D root tdmwin link-speed 100
check "change bypass-prio 1" tc_a qdisc change dev $D root tdmwin bypass-prio 1
check "change bypass-ptp on" tc_a qdisc change dev $D root tdmwin bypass-ptp on
check "change limit 50" tc_a qdisc change dev $D root tdmwin limit 50
snap
check_eq "link_speed 100" "${Q[options.link_speed]:-}/${Q[options.eff_link_speed]:-}" 100/100
check_eq "bypass_prios 1" "$(tdm_prios Q)" 1
check_eq "bypass_ptp on" "$(tdm_bool "${Q[options.bypass_ptp]:-}")" 1
check_eq "limit 50" "${Q[options.limit]:-}" 50
check_eq "option changes keep plan_version" "${Q[options.plan_version]:-}" "$v0"
check_eq "child fifos follow the limit" "$(child 1:1 options.limit):$(child 1:2 options.limit)" 50:50

check "change hold" tc_a qdisc change dev $D root tdmwin hold
snap
check_eq "hold in options" "$(tdm_bool "${Q[options.hold]:-}")" 1
check_eq "hold in xstats" "${Q[x.hold]:-}" 1
check_eq "hold keeps plan_version" "${Q[options.plan_version]:-}" "$v0"
check_eq "hold keeps windows" "${Q[options.windows.len]:-}:${Q[options.windows.0.length]:-}" 2:5000000
check_match "text dump shows hold" "$(tc_a qdisc show dev $D)" "hold"
check "change release" tc_a qdisc change dev $D root tdmwin release
snap
check_eq "released" "$(tdm_bool "${Q[options.hold]:-}"):${Q[x.hold]:-}" 0:0

# now and now+TIME are resolved on the qdisc's clock (TAI here).
t0=$(tdm_now CLOCK_TAI)
check "change base-time now" tc_a qdisc change dev $D root tdmwin base-time now
t1=$(tdm_now CLOCK_TAI)
snap
b=${Q[options.base_time]:-0}
check "base-time now within the call" test "$b" -ge "$t0" -a "$b" -le "$t1"
# now+30s: far enough ahead that the dumps below still find it pending on
# a slow machine (a debug kernel under TCG takes seconds for one tc call),
# and bounded by the clock read before and after the call, as for now.
t0=$(tdm_now CLOCK_TAI)
check "change base-time now+30s" tc_a qdisc change dev $D root tdmwin base-time now+30s
t1=$(tdm_now CLOCK_TAI)
snap
b=${Q[options.pending.base_time]:-0}
check "now+30s makes a pending plan at now+30s" \
	test "$b" -ge $((t0 + 30000000000)) -a "$b" -le $((t1 + 30000000000))
check_eq "dump shows pending" "${Q[x.pending]:-}" 1
check "an immediate change drops the pending plan" \
	tc_a qdisc change dev $D root tdmwin base-time 0
snap
check_eq "no pending after immediate change" \
	"${Q[x.pending]:-}:${Q[options.pending.base_time]:-none}" 0:none

# ---- graft fq_codel on 1:1 ----------------------------------------------------

tc_a qdisc change dev $D root tdmwin cycle-time 10ms base-time 0 window 0 9ms
check "graft fq_codel on 1:1" tc_a qdisc add dev $D parent 1:1 handle 10: fq_codel
snap
check_eq "fq_codel under 1:1" "$(child 1:1 kind)" fq_codel
tdm_snap_class C "$A" $D 1:1
check_eq "class 1:1 leaf is 10:" "${C[leaf]:-}" "10:"
tdm_recv_start r "$B" --bind "$TDM_IP_B" --ports 5001
nsx "$A" "${TDM_PYC[@]}" send --dst "$TDM_IP_B" --port 5001 --count 50 --rate 500 >/dev/null
tdm_recv_wait r 50
tdm_recv_stop r R
check_eq "traffic through the grafted fq_codel" "${R[udp5001.n]:-0}" 50
snap
check_num "fq_codel counted it" "$(child 1:1 packets)" -ge 50
check_num "window_packets counted it" "${Q[x.window_packets]:-0}" -ge 50
check "limit change with a grafted child" tc_a qdisc change dev $D root tdmwin limit 60
snap
check_eq "bypass fifo limit followed, fq_codel untouched" \
	"$(child 1:2 options.limit):$(child 1:1 options.limit)" 60:10240
check "delete the grafted child" tc_a qdisc del dev $D parent 1:1 handle 10:
check_eq "tdmwin still there" "$(tc_a qdisc show dev $D | grep -c 'qdisc tdmwin')" 1
# Like prio, tbf and mq, deleting a child leaves the class without a leaf
# (noop); grafting a new one restores the path.
check "graft pfifo on 1:1 again" tc_a qdisc add dev $D parent 1:1 handle 11: pfifo limit 100
tdm_recv_start r "$B" --bind "$TDM_IP_B" --ports 5001
nsx "$A" "${TDM_PYC[@]}" send --dst "$TDM_IP_B" --port 5001 --count 20 --rate 500 >/dev/null
tdm_recv_wait r 20
tdm_recv_stop r R
check_eq "traffic through the new child" "${R[udp5001.n]:-0}" 20

# ---- replace and delete -----------------------------------------------------------

check "replace with a new plan" tc_a qdisc replace dev $D root handle 1: tdmwin \
	cycle-time 2ms window 0 1ms
snap
check_eq "replaced plan" "${Q[options.cycle_time]:-}:${Q[options.windows.len]:-}" 2000000:1
check "delete" tc_a qdisc del dev $D root
snap
check_eq "no tdmwin after delete" "${Q[count]}" 0

# ---- defaults -------------------------------------------------------------------

check "add with only cycle-time and a window" tc_a qdisc add dev $D root handle 1: \
	tdmwin cycle-time 2ms window 0 1ms
snap
check_eq "default base_time 0" "${Q[options.base_time]:-}" 0
check_eq "default clockid TAI" "$(tdm_clk "${Q[options.clockid]:-}")" TAI
check_eq "default guard 0" "${Q[options.guard]:-}" 0
check_eq "default link_speed 0 (ethtool)" "${Q[options.link_speed]:-}" 0
check_eq "eff_link_speed from ethtool (veth: 10000)" "${Q[options.eff_link_speed]:-}" 10000
check_eq "default bypass_ptp on" "$(tdm_bool "${Q[options.bypass_ptp]:-}")" 1
check_eq "default no bypass prios" "$(tdm_prios Q)" ""
check_eq "default limit = txqueuelen" "${Q[options.limit]:-}" \
	"$(nsx "$A" cat /sys/class/net/$D/tx_queue_len)"
check_eq "default plan_version 1" "${Q[options.plan_version]:-}" 1
tc_a qdisc del dev $D root

check "replace creates when absent" tc_a qdisc replace dev $D root handle 1: \
	tdmwin cycle-time 2ms window 0 1ms hold
snap
check_eq "hold at creation" "$(tdm_bool "${Q[options.hold]:-}"):${Q[x.hold]:-}" 1:1
check "replace by another kind (new handle)" tc_a qdisc replace dev $D root handle 2: pfifo
snap
check_eq "tdmwin replaced by pfifo" "${Q[count]}" 0
tc_a qdisc del dev $D root

for clk in CLOCK_REALTIME CLOCK_MONOTONIC CLOCK_BOOTTIME CLOCK_TAI; do
	t0=$(tdm_now $clk)
	check "add with clockid $clk and base-time now" tc_a qdisc add dev $D root \
		handle 1: tdmwin cycle-time 2ms base-time now window 0 1ms clockid $clk
	t1=$(tdm_now $clk)
	snap
	check_eq "clockid $clk" "$(tdm_clk "${Q[options.clockid]:-}")" "${clk#CLOCK_}"
	b=${Q[options.base_time]:-0}
	check "base-time now resolved on $clk" test "$b" -ge "$t0" -a "$b" -le "$t1"
	check "change giving the same clockid" tc_a qdisc change dev $D root tdmwin \
		clockid $clk cycle-time 4ms
	tc_a qdisc del dev $D root
done

# Multiple tdmwin qdiscs on two devices at once, each its own state.
tc_a qdisc add dev $D root handle 1: tdmwin cycle-time 2ms window 0 1ms
check "a second instance on the peer" tdm_tc -n "$B" qdisc add dev tdmB root \
	handle 2: tdmwin cycle-time 3ms window 1ms 1ms
declare -A Q2
tdm_snap Q2 "$B" tdmB
snap
check_eq "instances are independent" "${Q[options.cycle_time]}:${Q2[options.cycle_time]:-}" \
	2000000:3000000

# ---- stock tc 6.15 against the module -------------------------------------

# The newest supported tc (iproute2 6.15 from bookworm-backports, fetched by
# testbed/guest/setup: kinfo tc-new) with the plugin against the real
# module, not only through tc-plugin's netlink shim: add, change, show in
# text and JSON (with -s), delete.  Its text must be tc 6.1's, word for
# word, and its JSON the values given.
tcnew=${TDM_TC_NEW:-$("$TDM_ROOT/testbed/guest/kinfo" tc-new 2>/dev/null)}
if [ -z "$tcnew" ] || [ ! -x "$tcnew" ]; then
	tdm_skip "stock tc 6.15 with the plugin" \
		"no stock tc 6.15 here (testbed/guest/setup fetches it; TDM_TC_NEW=PATH)"
else
	tn() { TDM_TC_BIN=$tcnew tdm_tc -n "$A" "$@"; }
	ver=$("$tcnew" -V 2>&1)
	check_match "tc-new is iproute2 6.15 ($ver)" "$ver" "iproute2-6\.15"
	tc_a qdisc del dev $D root 2>/dev/null
	tc_a qdisc del dev $D root 2>/dev/null
	check "tc 6.15: add with every option" tn qdisc add dev $D root handle 1: \
		tdmwin cycle-time 1ms base-time 1000000000 window 500us 100us \
		window 0 200us guard 2us link-speed 1000 clockid CLOCK_TAI \
		bypass-prio 3,7 bypass-ptp off plan-version 42 limit 500 hold
	txt=$(tn qdisc show dev $D)
	tdm_log "tc 6.15: $txt"
	check_eq "tc 6.15: text as tc 6.1 prints it" "$txt" "$(tc_a qdisc show dev $D)"
	check_match "tc 6.15: text names the plan" "$(head -n 1 <<<"$txt")" \
		"^qdisc tdmwin 1: root refcnt [0-9]+ clockid TAI cycle-time 1ms base-time 1000000000 plan-version 42 link-speed 1000Mbit guard 2us bypass-prio 3,7 bypass-ptp off wire-clock on txtime off limit 500 hold[[:space:]]*\$"
	check_match "tc 6.15: text lists the windows, sorted" "$txt" \
		"^[[:space:]]+windows 0ns\+200us 500us\+100us[[:space:]]*\$"
	txt=$(tn -s qdisc show dev $D)
	check_match "tc 6.15: -s text gives the counters" "$txt" \
		"^ windows 0 sent 0 pkts 0 bytes bypass 0 pkts 0 bytes\$"
	check_match "tc 6.15: -s text gives the plan and hold" "$txt" \
		"open-latency .*plan-version 42 .*hold\$"
	TDM_TC_BIN=$tcnew tdm_snap Q "$A" $D
	check_eq "tc 6.15 JSON: one tdmwin qdisc, handle 1:" "${Q[count]}:${Q[handle]:-}" "1:1:"
	check_eq "tc 6.15 JSON: cycle, base, plan version" \
		"${Q[options.cycle_time]:-}:${Q[options.base_time]:-}:${Q[options.plan_version]:-}" \
		1000000:1000000000:42
	check_eq "tc 6.15 JSON: windows sorted" \
		"${Q[options.windows.len]:-}:${Q[options.windows.0.offset]:-}+${Q[options.windows.0.length]:-}:${Q[options.windows.1.offset]:-}+${Q[options.windows.1.length]:-}" \
		"2:0+200000:500000+100000"
	check_eq "tc 6.15 JSON: guard, link speed, clock" \
		"${Q[options.guard]:-}:${Q[options.link_speed]:-}:$(tdm_clk "${Q[options.clockid]:-}")" \
		2000:1000:TAI
	check_eq "tc 6.15 JSON: bypass, limit, hold" \
		"$(tdm_prios Q):$(tdm_bool "${Q[options.bypass_ptp]:-}"):${Q[options.limit]:-}:$(tdm_bool "${Q[options.hold]:-}")" \
		"3,7:0:500:1"
	check_eq "tc 6.15 JSON: xstats" \
		"${Q[x.plan_version]:-}:${Q[x.hold]:-}:${Q[x.window_packets]:-}:${Q[x.pending]:-}" 42:1:0:0
	check_eq "tc 6.15 JSON: the options tc 6.1 gives" \
		"$(TDM_TC_BIN=$tcnew tdm_opts_sig "$A" $D)" "$(tdm_opts_sig "$A" $D)"
	check "tc 6.15: change cycle-time 3ms, a window, release" tn qdisc change \
		dev $D root tdmwin cycle-time 3ms window 1ms 1ms release
	TDM_TC_BIN=$tcnew tdm_snap Q "$A" $D
	check_eq "tc 6.15 JSON after change: cycle, windows, version, hold" \
		"${Q[options.cycle_time]:-}:${Q[options.windows.len]:-}:${Q[options.windows.0.offset]:-}:${Q[options.plan_version]:-}:$(tdm_bool "${Q[options.hold]:-}")" \
		3000000:1:1000000:43:0
	txt=$(tn qdisc show dev $D)
	check_match "tc 6.15: text after change: the plan, released" "$(head -n 1 <<<"$txt")" \
		" cycle-time 3ms base-time 1000000000 plan-version 43 .* limit 500[[:space:]]*\$"
	check_match "tc 6.15: text after change: the window" "$txt" \
		"^[[:space:]]+windows 1ms\+1ms[[:space:]]*\$"
	check_fails "tc 6.15: a bad option is refused" tn qdisc change dev $D root \
		tdmwin cycle-time 3xs
	check_match "tc 6.15: with the plugin's message naming it" \
		"$(tn qdisc change dev $D root tdmwin cycle-time 3xs 2>&1)" "invalid TIME \"3xs\" for \"cycle-time\""
	check "tc 6.15: delete" tn qdisc del dev $D root
	TDM_TC_BIN=$tcnew tdm_snap Q "$A" $D
	check_eq "tc 6.15 JSON: no tdmwin after delete" "${Q[count]}" 0
fi

tdm_exit
