#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Plan changes are all or nothing (tdmd's prepare, then commit or abort).
# A coordinator and members a, b, c on a bridge, each sending UDP.  c is
# cut off by dropping everything through its bridge port (tc matchall
# drop, both ways), which TCP survives; b is made late by stopping its
# tdmd (SIGSTOP): what the coordinator sends waits in its socket.
#
#  1. b stopped while a and c prepare v2; then c is cut off and b goes on:
#     b's prepare completes the change, a and b commit and switch at the
#     base time.  c, which prepared but never heard the outcome, holds its
#     gate from the base time: the tap on c's device sees none of c's
#     traffic leave from then until c is let back.  Back, c is sent the
#     commit and runs v2 with the others' base time.
#  2. b stopped again; once a and c prepared v3 the coordinator is killed
#     (SIGKILL): nobody switches.  Past v3's base time every member still
#     runs v2, and the members that prepared hold.  The coordinator
#     restarted aborts v3 (nobody runs it) and puts its plan file in force
#     above it.
#
# (One member refusing, so that nobody switches, is in tdmd_plan.sh.)

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
tdmd_require tcpdump

# The tap stamps a frame when the qdisc hands it to the device, on the
# clock the test reads: 100 us covers the stamp's distance from the dequeue.
TDM_TAP_TOL=100000

tdmd_topology 3 || tdm_skip_all "cannot build the bridge topology"
tdmd_key "$TDMD_KEY"
NAMES=(- a b c)

# The lead time covers what the test does between the push and b's
# prepare (two status polls through tdmctl and python, three tc calls):
# it scales with a tc call here, 10 s on a quiet TCG guest (a tc call
# takes about 0.3 s there), a minute and more on a loaded one.
per_call_ms=$(tdm_tc_call_ms "$C")
LEAD_S=$(( per_call_ms * 30 < 10000 ? 10 : (per_call_ms * 30 + 999) / 1000 ))
tdm_log "one tc call: ${per_call_ms} ms; lead time ${LEAD_S} s"

plan() { # FILE WINDOW
	cat >"$1" <<PLAN
[global]
lead_time  ${LEAD_S}s
base_align 0
clock      realtime
[auto]
senders   a b c
window    $2
dead_time 1ms
PLAN
}
plan "$TDM_TMP/plan1.conf" 2ms
plan "$TDM_TMP/plan2.conf" 2500us
plan "$TDM_TMP/plan3.conf" 3ms

# Members stay connected through a cut or a stop: TCP delivers what waited.
tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/plan1.conf" member_timeout=120s \
	ack_timeout=120s
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
for i in 1 2 3; do
	tdmd_member_conf "$TDM_TMP/m$i.conf" "${NAMES[$i]}"
	tdmd_start "m$i" "${M[$i]}" "$TDM_TMP/m$i.conf" || tdmd_fatal "member ${NAMES[$i]} starts"
done
qversion() { local -A q; tdmd_qsnap q "$1"; echo "${q[options.plan_version]:-none}"; }
at() { # VERSION I...: members I... run VERSION
	local v=$1 i
	shift
	for i in "$@"; do [ "$(qversion "$i")" = "$v" ] || return 1; done
}
check "all three connect" tdm_wait_for 30 tdmd_all_connected coord 3
check "all three run v1" tdm_wait_for 30 at 1 1 2 3

# acked NAME VERSION: the coordinator has NAME's ack of VERSION
acked() {
	local -A s
	local i
	tdmd_jsnap s coord status
	for ((i = 0; i < ${s[members.len]:-0}; i++)); do
		[ "${s[members.$i.name]}" = "$1" ] || continue
		[ "${s[members.$i.ack_version]}" = "$2" ] &&
			[ "${s[members.$i.ack]}" = ok ] && return 0
	done
	return 1
}
# cut I on|off: drop everything through member I's bridge port, both ways
# (one tc call: the test must act quickly between a prepare and a commit).
cut() {
	if [ "$2" = on ]; then
		printf 'filter add dev swm%s %s pref 1 matchall action drop\n' \
			"$1" ingress "$1" egress | tdm_tc -n "$SW" -batch -
	else
		printf 'filter del dev swm%s %s pref 1\n' "$1" ingress "$1" egress |
			tdm_tc -n "$SW" -batch -
	fi
}
tdm_tc -n "$SW" qdisc add dev swm3 clsact || tdm_skip_all "no clsact qdisc"
# ---- 1. c cut off after it prepared v2 ----------------------------------------
tdm_sysctl net.core.netdev_max_backlog 100000
tdm_cap_start tapc "${M[3]}" m0 "udp dst port 5001" || tdm_skip_all "tcpdump failed"
for i in 1 2 3; do
	ip netns exec "${M[$i]}" "${TDM_PYU[@]}" send --dst "$TDMD_IP_C" --port 5001 \
		--duration 900 --size 200 --rate 200 >/dev/null &
	sender[i]=$!
	TDM_BG_PIDS+=("${sender[i]}")
done
mark=$(tdm_hostload_mark)
kill -STOP "${TDMD_PID[m2]}"
tdmctl_at coord -j -t 300 plan push "$TDM_TMP/plan2.conf" >"$TDM_TMP/push2.json" 2>&1 &
push=$!
check "c prepares v2" tdm_wait_for 60 acked c 2
cut 3 on || tdmd_fatal "cut c off"
t_cut=$(tdm_now)
check "a prepares v2" tdm_wait_for 60 acked a 2
check_fails "b, stopped, has not" acked b 2
kill -CONT "${TDMD_PID[m2]}"
check "b, going on, prepares v2" tdm_wait_for 60 acked b 2
tdm_log "b prepared $(( ($(tdm_now) - t_cut) / 1000000 )) ms after c was cut off"
declare -A P Q S
# Committed once b prepared: the coordinator has v2 pending (or, on a slow
# machine, already active).
tdmd_jsnap S coord status
base2=${S[pending_base_time]:-${S[active_base_time]:-0}}
tdm_log "c cut off $(( (base2 - t_cut) / 1000000 )) ms before the base time"
check "a and b switch to v2" tdm_wait_for 60 at 2 1 2
past_base2() { [ "$(tdm_now)" -gt $((base2 + 500000000)) ]; }
tdm_wait_for 120 past_base2
tdmd_qsnap Q 3
check_eq "c: still v1, v2 pending and unconfirmed" \
	"${Q[options.plan_version]}:${Q[x.pending_version]:-x}:${Q[x.pending_unconfirmed]:-x}" 1:2:1
holds() { # I N: member I counted more than N unconfirmed holds
	tdmd_qsnap Q "$1"
	[ "${Q[x.unconfirmed_holds]:-0}" -gt "$2" ]
}
check "c holds from the base time" tdm_wait_for 10 holds 3 0
n=${Q[x.window_packets]:-0}
sleep 1
tdmd_qsnap Q 3
check_eq "c: nothing gated leaves while it holds" "${Q[x.window_packets]:-0}" "$n"
check_match "c's status says what it waits for" "$(tdmctl_at m3 status)" \
	"^plan v2 prepared, waiting for the coordinator's commit or abort"
t_back=$(tdm_now)
cut 3 off || tdm_fail "let c back"
check "c back: sent the commit, runs v2" tdm_wait_for 120 at 2 3
check_match "c's log: committed" "$(cat "$TDM_TMP/m3.log")" "plan v2 committed on m0"
tdmd_qsnap Q 3
check_eq "c: the base time of the others" "${Q[options.base_time]}" "$base2"
wait "$push"
tdm_kv P "$(py json <"$TDM_TMP/push2.json")"
check_eq "v2: committed, all three prepared" "${P[outcome]:-x}:${P[acked]:-x}:${P[base_time]:-x}" \
	"committed:3:$base2"
kill "${sender[3]}"
tdm_cap_stop tapc
tdm_quiet_judge "$mark"
tdm_judge held tb span "@$TDM_TMP/tapc.pcap" --port 5001 \
	--from $((base2 + TDM_TAP_TOL)) --to "$t_back"
tdm_timing tdm_judge_check "tap: no departure of c from the base time until it was let back" \
	held 'in_span == 0'

# ---- 2. the coordinator dies between prepare and outcome ----------------------
for i in 1 3; do tdmd_qsnap Q "$i"; uh[i]=${Q[x.unconfirmed_holds]:-0}; done
ip netns exec "${M[3]}" "${TDM_PYU[@]}" send --dst "$TDMD_IP_C" --port 5001 \
	--duration 900 --size 200 --rate 200 >/dev/null &
sender[3]=$!
TDM_BG_PIDS+=("${sender[3]}")
kill -STOP "${TDMD_PID[m2]}"
tdmctl_at coord -j -t 300 plan push "$TDM_TMP/plan3.conf" >"$TDM_TMP/push3.json" 2>&1 &
push=$!
check "a prepares v3" tdm_wait_for 60 acked a 3
check "c prepares v3" tdm_wait_for 60 acked c 3
check_fails "b, stopped, has not" acked b 3
tdmd_jsnap S coord status
base3=${S[push_base_time]:-0}
tdmd_stop coord KILL
wait "$push"
# b goes on: it finds v3 in its socket, prepares it, and its ack finds
# no coordinator.
kill -CONT "${TDMD_PID[m2]}"
tdmd_qsnap Q 1
check_eq "a holds v3 prepared, unconfirmed" \
	"${Q[x.pending_version]:-x}:${Q[x.pending_unconfirmed]:-x}" 3:1
past_base3() { [ "$(tdm_now)" -gt $((base3 + 500000000)) ]; }
tdm_wait_for 120 past_base3
check_eq "past v3's base time: nobody switched" \
	"$(qversion 1):$(qversion 2):$(qversion 3)" 2:2:2
check "a holds" tdm_wait_for 10 holds 1 "${uh[1]}"
check "c holds" tdm_wait_for 10 holds 3 "${uh[3]}"
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator restarts"
check "all three back" tdm_wait_for 60 tdmd_all_connected coord 3
aborted_v3() { grep -q "plan v3 aborted on m0" "$TDM_TMP/m$1.log"; }
check "a is sent the abort of v3" tdm_wait_for 60 aborted_v3 1
check "c is sent the abort of v3" tdm_wait_for 60 aborted_v3 3
committed_v3() { grep -q "plan v3 committed" "$TDM_TMP/m$1.log"; }
for i in 1 2 3; do
	check_fails "member ${NAMES[$i]} never committed v3" committed_v3 "$i"
done
# The restarted coordinator then puts its plan file (v1's content) in
# force above everything in use.
above3() { local i; for i in 1 2 3; do [ "$(qversion "$i")" -gt 3 ] || return 1; done; }
check "then all run the plan file above v3" tdm_wait_for 120 above3
released() { tdmd_qsnap Q "$1"; [ "${Q[x.pending]:-1}" = 0 ] && [ "$(tdm_bool "${Q[options.hold]}")" = 0 ]; }
for i in 1 2 3; do
	check "member ${NAMES[$i]}: nothing pending, not held" tdm_wait_for 30 released "$i"
done
kill "${sender[@]}" 2>/dev/null

[ "$TDM_FAILS" = 0 ] || tdmd_show_logs
tdmd_finish
tdm_exit
