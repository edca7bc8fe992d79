#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pending plans: `tc qdisc change` with a base-time in the future installs a
# pending plan (shown in the dump and in xstats) that takes over at exactly
# that instant; tcpdump on the receiver sees the old windows before it and
# the new ones after it, with no packet lost or reordered.  Without a future
# base-time a change is immediate.  A later change replaces a pending plan.
# Tolerances as in tdmwin_gate.sh (TCG: +1.5 ms late, -1 ms early, 0.5 %).

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
declare -A Q R

tc_a() { tdm_tc -n "$A" "$@"; }
chg() { tc_a qdisc change dev "$D" root tdmwin clockid CLOCK_REALTIME "$@"; }

check "add: cycle 20ms, window [0,5) ms, plan-version 7, CLOCK_REALTIME" \
	tc_a qdisc add dev "$D" root handle 1: tdmwin cycle-time 20ms base-time 0 \
	window 0 5ms clockid CLOCK_REALTIME plan-version 7
tdm_snap Q "$A" $D
BASE1=${Q[options.base_time]:-0}

tdm_cap_start cap "$B" tdmB "udp dst port 5001" || tdm_skip_all "tcpdump failed"
tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001
ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --duration 8 \
	--rate 500 --size 200 >/dev/null &
sender=$!
TDM_BG_PIDS+=("$sender")
sleep 1

t0=$(tdm_now)
check "change: base-time now+4s, window [10,15) ms" chg base-time now+4s window 10ms 5ms
# Both dumps first, python after them: on a slow guest a tc call and a
# python start take seconds, and the dumps must show the plan pending.
text=$(tc_a qdisc show dev $D)
json=$(tdm_tc -n "$A" -j -s qdisc show dev "$D" invisible)
t_dump=$(tdm_now)
tdm_snap_json Q "$json"
B2=${Q[options.pending.base_time]:-0}
# switched already (see below): the plan in force is the new one
[ "$B2" = 0 ] && [ "${Q[options.plan_version]:-}" = 8 ] && B2=${Q[options.base_time]:-0}
check "pending base_time is now+4s" test "$B2" -ge $((t0 + 4000000000)) -a \
	"$B2" -le $((t0 + 5000000000))
if [ "$t_dump" -ge "$B2" ]; then
	# The dumps may have been taken after the switch: what they show
	# says nothing of the pending plan.
	TDM_LOADED="the dumps ended $(( (t_dump - t0) / 1000000 )) ms after the change, past its base time (4 s): too slow a guest to see the plan pending"
fi
tdm_timing check_eq "pending windows in the dump" \
	"${Q[options.pending.windows.0.offset]:-}:${Q[options.pending.windows.0.length]:-}" \
	10000000:5000000
tdm_timing check_eq "pending plan_version 8" "${Q[options.pending.plan_version]:-}" 8
tdm_timing check_eq "pending cycle kept" "${Q[options.pending.cycle_time]:-}" 20000000
tdm_timing check_eq "active plan unchanged until then" \
	"${Q[options.windows.0.offset]:-}:${Q[options.plan_version]:-}" 0:7
tdm_timing check_eq "xstats: pending 1, version 8" "${Q[x.pending]:-}:${Q[x.pending_version]:-}" 1:8
tdm_timing check_eq "xstats: pending_base_time" "${Q[x.pending_base_time]:-}" "$B2"
tdm_timing check_eq "xstats: plan_version 7, no switch yet" \
	"${Q[x.plan_version]:-}:${Q[x.plan_switches]:-}" 7:0
tdm_timing check_match "text dump shows pending" "$text" "pending"
TDM_LOADED=

# Wait past the switch (tdm_now is realtime, B2 is realtime).
now=$(tdm_now)
sleep "$(awk -v d=$((B2 - now)) 'BEGIN { s = d / 1e9 + 0.5; print (s > 0 ? s : 0) }')"
tdm_snap Q "$A" $D
check_eq "after the base time: no pending plan" \
	"${Q[x.pending]:-}:${Q[options.pending.base_time]:-none}" 0:none
check_eq "after the base time: new windows in force" \
	"${Q[options.windows.0.offset]:-}:${Q[options.base_time]:-}" "10000000:$B2"
check_eq "after the base time: plan_version 8" "${Q[options.plan_version]:-}:${Q[x.plan_version]:-}" 8:8
check_eq "plan_switches 1" "${Q[x.plan_switches]:-}" 1

wait "$sender"
sleep 0.5
tdm_cap_stop cap
tdm_recv_stop rx R
tdm_judge cap tb pcap "@$TDM_TMP/cap.pcap" --port 5001 --cycle 20000000 --base "$BASE1" \
	--windows 0:5000000 --switch "$B2" --base2 "$B2" --windows2 10000000:5000000 \
	--tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
tdm_judge_check "packets under the old plan" cap 'phase1 >= 200'
tdm_judge_check "packets under the new plan" cap 'phase2 >= 200'
tdm_timing tdm_judge_check "packets outside their plan's windows, at most the allowance" cap \
	'outside <= allowed(judged)'
check_eq "no packet lost across the switch" "${R[udp5001.lost]:-x}" 0
check_eq "no packet reordered across the switch at the receiver" "${R[udp5001.reorder]:-x}" 0
tdm_judge_check "no packet reordered across the switch in the capture" cap 'reorder == 0'
tdm_judge_check "every captured packet received" cap "total <= ${R[udp5001.n]:-0}"

# ---- immediate changes -------------------------------------------------------

check "change without base-time: immediate" chg window 0 5ms
tdm_snap Q "$A" $D
check_eq "immediate: new window, version 9, no pending" \
	"${Q[options.windows.0.offset]:-}:${Q[options.plan_version]:-}:${Q[x.pending]:-}" 0:9:0
check_eq "immediate: not a plan switch" "${Q[x.plan_switches]:-}" 1
check "change with a past base-time: immediate" chg base-time 0 window 1ms 5ms
tdm_snap Q "$A" $D
check_eq "past base: applied at once" \
	"${Q[options.base_time]:-}:${Q[options.windows.0.offset]:-}:${Q[x.pending]:-}" 0:1000000:0

# ---- replacing a pending plan ----------------------------------------------------

t0=$(tdm_now)
check "pending A at now+30s" chg base-time now+30s window 2ms 1ms
check "pending B at now+40s replaces it" chg base-time now+40s window 3ms 1ms
tdm_snap Q "$A" $D
pb=${Q[options.pending.base_time]:-0}
check "one pending plan, at now+40s" test "$pb" -ge $((t0 + 40000000000)) -a \
	"$pb" -le $((t0 + 45000000000))
check_eq "its window is B's" "${Q[options.pending.windows.0.offset]:-}" 3000000
check_eq "its version counts from the pending one (11 -> 12)" "${Q[x.pending_version]:-}" 12
check "plan-version 50 alone amends the pending plan" chg plan-version 50
tdm_snap Q "$A" $D
check_eq "still pending, version 50, same base" \
	"${Q[x.pending]:-}:${Q[x.pending_version]:-}:${Q[options.pending.base_time]:-}" "1:50:$pb"
check_eq "active plan untouched" "${Q[options.plan_version]:-}:${Q[options.windows.0.offset]:-}" \
	10:1000000
check "base-time 0 applies it at once" chg base-time 0
tdm_snap Q "$A" $D
check_eq "applied: version 51, window of the pending plan, nothing pending" \
	"${Q[options.plan_version]:-}:${Q[options.windows.0.offset]:-}:${Q[x.pending]:-}" 51:3000000:0

# ---- a pending plan takes over without traffic (the dump catches up) -----------

check "pending at now+1s, no traffic" chg base-time now+1s window 4ms 1ms
sleep 1.5
tdm_snap Q "$A" $D
check_eq "switched without traffic" \
	"${Q[x.pending]:-}:${Q[options.windows.0.offset]:-}:${Q[x.plan_switches]:-}" 0:4000000:2

# A qdisc deleted with a pending plan frees it (kmemleak, if enabled, sees it).
check "pending plan, then delete" chg base-time now+60s window 5ms 1ms
check "delete with a pending plan" tc_a qdisc del dev $D root

tdm_exit
