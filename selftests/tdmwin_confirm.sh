#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two-phase plan changes in the qdisc.  A plan installed `unconfirmed`
# (base-time ahead) waits as the pending plan and is never promoted: before
# its base the plan in force runs; from its base the gated class holds
# until `confirm VERSION` (the new plan takes over) or `abort VERSION` (it
# is removed and the old plan goes on).  A qdisc created with an
# unconfirmed plan holds until it is confirmed; aborted, it holds for good
# (hold on).  Confirm and abort of a version that is not pending are
# refused with the kernel's reason.  No packet is lost across any of it.
#
# Departures are judged at a tap on the sender's device: after a confirm,
# every frame falls in the new plan's window; tolerance as in
# tdmwin_pending.sh (TCG timer noise: +1.5 ms late, -1 ms early).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
declare -A Q

tc_a() { tdm_tc -n "$A" "$@"; }
chg() { tc_a qdisc change dev "$D" root tdmwin "$@"; }
sent() { tdm_snap Q "$A" $D; echo "${Q[x.window_packets]:-0}"; }
# flows SECONDS: gated packets left during SECONDS
flows() {
	local n0
	n0=$(sent)
	sleep "$1"
	[ "$(sent)" -gt "$n0" ]
}
sent_is() { [ "$(sent)" = "$1" ]; }
# uholds N: the unconfirmed holds counted so far are N
uholds() { tdm_snap Q "$A" "$D"; [ "${Q[x.unconfirmed_holds]:-0}" = "$1" ]; }
# until_ns T: sleep until CLOCK_REALTIME passes T (+50 ms)
until_ns() {
	local now
	now=$(tdm_now)
	sleep "$(awk -v d=$(($1 - now)) 'BEGIN { s = d / 1e9 + 0.05; print (s > 0 ? s : 0) }')"
}

# Base times must lie far enough ahead for the checks made before them:
# several tc calls, a few hundred ms each under TCG, seconds on a debug
# kernel.  AHEAD: twelve calls' worth, at least 5 s, in whole seconds.
per_call_ms=$(tdm_tc_call_ms "$A")
AHEAD=$(( per_call_ms * 12 < 5000 ? 5 : (per_call_ms * 12 + 999) / 1000 ))
tdm_log "one tc call: ${per_call_ms} ms; base times ${AHEAD} s ahead"

check "add: cycle 20ms, window [0,10) ms, plan-version 1, CLOCK_REALTIME" \
	tc_a qdisc add dev "$D" root handle 1: tdmwin cycle-time 20ms base-time 0 \
	window 0 10ms clockid CLOCK_REALTIME plan-version 1 limit 20000

# ---- bad input ---------------------------------------------------------------
check_refused "confirm with nothing pending" "No unconfirmed plan of this version" \
	chg confirm 1
check_refused "abort with nothing pending" "No unconfirmed plan of this version" \
	chg abort 1
check_refused "unconfirmed base-time 1 (long past)" \
	"An unconfirmed plan needs a base time in the future" \
	chg unconfirmed base-time 1 window 10ms 5ms
check_refused "unconfirmed without a base time (tc)" "needs the plan's base-time" \
	chg unconfirmed window 10ms 5ms
check_refused "confirm and abort together (tc)" "exclude each other" \
	chg confirm 2 abort 2
check_refused "confirm without a version (tc)" "needs VERSION" chg confirm
check_refused "unconfirmed without a plan (netlink)" "Unconfirmed goes with a new plan" \
	nsx "$A" "${TDM_PYC[@]}" nl change "$D" '{"unconfirmed": 1}'
tdm_snap Q "$A" $D
check_eq "refused requests changed nothing" \
	"${Q[options.plan_version]:-}:${Q[x.pending]:-}:${Q[x.pending_unconfirmed]:-}" 1:0:0

tdm_sysctl net.core.netdev_max_backlog 100000
mark=$(tdm_hostload_mark)
tdm_cap_start tap "$A" "$D" "udp dst port 5001" || tdm_skip_all "tcpdump failed"
tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001
ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --duration 600 \
	--rate 500 --size 200 >"$TDM_TMP/rx.sender" &
sender=$!
TDM_BG_PIDS+=("$sender")
tdm_recv_wait rx 50

# ---- prepared, base passes, held, confirmed -------------------------------------
check "v2 unconfirmed: base-time now+${AHEAD}s, window [10,15) ms" \
	chg unconfirmed base-time now+${AHEAD}s window 10ms 5ms
tdm_snap Q "$A" $D
B2=${Q[options.pending.base_time]:-0}
check_eq "dump: pending v2, unconfirmed" \
	"${Q[options.pending.plan_version]:-}:$(tdm_bool "${Q[options.pending.unconfirmed]:-}")" 2:1
check_eq "xstats: pending_unconfirmed 1" "${Q[x.pending_unconfirmed]:-}" 1
check_match "text: pending ... unconfirmed" "$(tc_a qdisc show dev $D)" "pending.*unconfirmed"
check_refused "confirm of another version" "No unconfirmed plan of this version" \
	chg confirm 3
check "before its base, the old plan runs" flows 0.5
until_ns "$B2"
tdm_wait_for 10 uholds 1
n0=$(sent)
sleep 0.5
tdm_snap Q "$A" $D
check_eq "past its base: nothing gated leaves" "${Q[x.window_packets]:-0}" "$n0"
check_eq "past its base: not switched (v1 in force, v2 pending)" \
	"${Q[options.plan_version]:-}:${Q[options.pending.plan_version]:-}:${Q[x.plan_switches]:-}" 1:2:0
check_eq "one unconfirmed hold counted" "${Q[x.unconfirmed_holds]:-}" 1
check_num "packets queue" "${Q[qlen]:-0}" -gt 0
T_CONFIRM=$(tdm_now)
check "confirm 2" chg confirm 2
tdm_snap Q "$A" $D
check_eq "confirmed: v2 in force, nothing pending" \
	"${Q[options.plan_version]:-}:${Q[x.pending]:-}:${Q[x.pending_unconfirmed]:-}" 2:0:0
check_eq "confirmed: window [10,15) ms" \
	"${Q[options.windows.0.offset]:-}:${Q[options.windows.0.length]:-}" 10000000:5000000
check "confirmed: traffic flows" flows 0.5

# ---- aborted before its base -------------------------------------------------------
check "v3 unconfirmed: base-time now+${AHEAD}s, window [0,5) ms" \
	chg unconfirmed base-time now+${AHEAD}s window 0 5ms
tdm_snap Q "$A" $D
B3=${Q[options.pending.base_time]:-0}
check "abort 3" chg abort 3
tdm_snap Q "$A" $D
check_eq "aborted: nothing pending, v2 in force, one abort" \
	"${Q[x.pending]:-}:${Q[options.plan_version]:-}:${Q[x.pending_aborts]:-}" 0:2:1
until_ns "$B3"
check "past v3's base: v2 still runs" flows 0.5
check_refused "abort of the aborted version" "No unconfirmed plan of this version" \
	chg abort 3

# ---- held at its base, then aborted -------------------------------------------------
check "v4 unconfirmed: base-time now+${AHEAD}s" chg unconfirmed base-time \
	now+${AHEAD}s window 0 5ms plan-version 4
tdm_snap Q "$A" $D
until_ns "${Q[options.pending.base_time]:-0}"
n0=$(sent)
sleep 0.5
check_eq "v4 past its base: held" "$(sent)" "$n0"
check "abort 4" chg abort 4
tdm_snap Q "$A" $D
check_eq "aborted after its base: v2 in force, two aborts, two holds" \
	"${Q[options.plan_version]:-}:${Q[x.pending_aborts]:-}:${Q[x.unconfirmed_holds]:-}" 2:2:2
check "after the abort, v2 runs again" flows 0.5

got=$(tdm_recv_count rx)
tdm_recv_wait rx $((got + 50))
tdm_held_account rx "$sender" "$A" "$D" tap

# Departures: v1's window before the confirm, v2's after it (the v3 and v4
# episodes left v2 in force); none while held, from v2's base (plus the
# late tolerance: a frame that left at the end of v1's last window) to the
# confirm.
tdm_quiet_judge "$mark"
tdm_judge tap tb pcap "@$TDM_TMP/tap.pcap" --port 5001 --cycle 20000000 \
	--windows 0:10000000 --switch "$T_CONFIRM" --base2 "$B2" --windows2 10000000:5000000 \
	--tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
tdm_judge_check "tap: departures captured" tap 'judged > 0'
tdm_timing tdm_judge_check "tap: departures outside their plan's window, at most the allowance" \
	tap 'outside <= allowed(judged)'
tdm_judge held tb span "@$TDM_TMP/tap.pcap" --port 5001 --from $((B2 + TOL_LATE)) \
	--to "$T_CONFIRM"
tdm_judge_check "tap: no departure while held, before the confirm" held 'in_span == 0'

# ---- created unconfirmed -----------------------------------------------------------
check "delete" tc_a qdisc del dev "$D" root
check "add unconfirmed v9: base-time now+${AHEAD}s" tc_a qdisc add dev "$D" root handle 1: \
	tdmwin cycle-time 20ms base-time now+${AHEAD}s window 0 10ms clockid CLOCK_REALTIME \
	plan-version 9 unconfirmed
tdm_snap Q "$A" $D
check_eq "dump: v9 in force, unconfirmed" \
	"${Q[options.plan_version]:-}:$(tdm_bool "${Q[options.unconfirmed]:-}"):${Q[x.pending_unconfirmed]:-}" 9:1:1
nsx "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --count 20 --size 200 \
	--rate 200 >/dev/null
tdm_snap Q "$A" $D
check_eq "created unconfirmed: nothing leaves" "${Q[x.window_packets]:-x}:${Q[qlen]:-x}" 0:20
check "confirm 9" chg confirm 9
tdm_wait_for $((AHEAD + 10)) sent_is 20
check_eq "confirmed: the 20 queued packets leave" "$(sent)" 20
check "delete" tc_a qdisc del dev "$D" root
check "add unconfirmed v9 again" tc_a qdisc add dev "$D" root handle 1: \
	tdmwin cycle-time 20ms base-time now+${AHEAD}s window 0 10ms clockid CLOCK_REALTIME \
	plan-version 9 unconfirmed
check "abort 9" chg abort 9
tdm_snap Q "$A" $D
check_eq "aborted with no plan to go back to: hold" \
	"$(tdm_bool "${Q[options.hold]:-}"):${Q[x.pending_unconfirmed]:-}:${Q[x.pending_aborts]:-}" 1:0:1

tdm_exit
