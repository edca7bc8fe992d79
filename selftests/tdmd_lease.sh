#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lease through tdmd: member a has `lease` in its tdm.conf, member b
# has none.  a's member sets the lease on its qdisc and renews it while
# healthy, also with the coordinator gone.  Killed with SIGKILL under
# traffic, it renews no more: the kernel holds a's gate, and the tap on
# a's device sees no departure after the kill + lease + one window; b,
# without a lease, keeps sending.  Restarted, the member finds the held
# qdisc, is healthy (PTP policy off here: in sync at once) and renews:
# the gate runs again.  Bad lease values in tdm.conf are refused.

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
tdmd_require tcpdump

# The tap stamps a frame when the qdisc hands it to the device, on the
# clock the test reads: 100 us covers the stamp's distance from the dequeue.
TDM_TAP_TOL=100000
WINDOW_NS=2000000

tdmd_topology 2 || tdm_skip_all "cannot build the bridge topology"
tdmd_key "$TDMD_KEY"
cat >"$TDM_TMP/plan.conf" <<'PLAN'
[global]
lead_time  2s
base_align 0
clock      realtime
[auto]
senders   a b
window    2ms
dead_time 1ms
PLAN

# ---- bad values -------------------------------------------------------------
for bad in "99ms:must be at least 100ms" "3601s:must be at most 3600s" \
	   "soon:not a time"; do
	tdmd_member_conf "$TDM_TMP/bad.conf" a "lease=${bad%%:*}"
	out=$("$TDMD" -f "$TDM_TMP/bad.conf" --check 2>&1)
	rc=$?
	check_match "tdm.conf lease ${bad%%:*}: refused (exit $rc): $out" \
		"$rc:$out" "^[1-9][0-9]*:.*lease: .*${bad#*:}"
done

# The lease: long against the member's own delays on a slow guest, where
# tdmd's tick and its netlink calls may take a tc call's time.
per_call_ms=$(tdm_tc_call_ms "$C")
LEASE_MS=$(( per_call_ms * 5 < 1000 ? 1000 : (per_call_ms * 5 + 999) / 1000 * 1000 ))
tdm_log "one tc call: ${per_call_ms} ms; lease ${LEASE_MS} ms"

tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/plan.conf"
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
tdmd_member_conf "$TDM_TMP/m1.conf" a "lease=${LEASE_MS}ms"
tdmd_member_conf "$TDM_TMP/m2.conf" b
tdmd_start m1 "${M[1]}" "$TDM_TMP/m1.conf" || tdmd_fatal "member a starts"
tdmd_start m2 "${M[2]}" "$TDM_TMP/m2.conf" || tdmd_fatal "member b starts"
check "both members connected" tdm_wait_for 30 tdmd_all_connected coord 2
has_plan() { local -A q; tdmd_qsnap q "$1"; [ "${q[options.plan_version]:-0}" -ge 1 ]; }
check "a runs the plan" tdm_wait_for 30 has_plan 1
check "b runs the plan" tdm_wait_for 30 has_plan 2

declare -A Q
tdmd_qsnap Q 1
check_eq "a's qdisc has the lease" "${Q[options.lease]:-none}" $((LEASE_MS * 1000000))
tdmd_qsnap Q 2
check_eq "b's qdisc has none" "${Q[options.lease]:-none}" none
renewing() { local -A s; tdmd_jsnap s m1 status; [ "${s[qdisc.lease.renewing]:-}" = true ]; }
check "a's member renews" tdm_wait_for 10 renewing
check_match "tdmctl status shows the lease" "$(tdmctl_at m1 status)" "^lease: ${LEASE_MS} ms, [0-9]+ ms left, 0 expiries, renewing"

# ---- the coordinator goes: renewal goes on ------------------------------------
tdmd_stop coord KILL
sleep $((LEASE_MS * 2 / 1000 + 1))
tdmd_qsnap Q 1
check_eq "no coordinator for two leases: a not held, no expiry" \
	"${Q[x.lease_held]:-x}:${Q[x.lease_expiries]:-x}" 0:0
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator restarts"
check "both members back" tdm_wait_for 30 tdmd_all_connected coord 2

# ---- a's tdmd killed under traffic --------------------------------------------
tdm_sysctl net.core.netdev_max_backlog 100000
tdm_cap_start tapa "${M[1]}" m0 "udp dst port 5001" || tdm_skip_all "tcpdump failed"
for i in 1 2; do
	ip netns exec "${M[$i]}" "${TDM_PYU[@]}" send --dst $TDMD_IP_C --port 5001 \
		--duration 600 --size 200 --rate 500 >/dev/null &
	sender[i]=$!
	TDM_BG_PIDS+=("${sender[i]}")
done
flows() { # I: member I's gate lets packets out
	local -A a b
	tdmd_qsnap a "$1"
	sleep 0.3
	tdmd_qsnap b "$1"
	[ "${b[x.window_packets]:-0}" -gt "${a[x.window_packets]:-0}" ]
}
check "a sends" tdm_wait_for 10 flows 1
check "b sends" tdm_wait_for 10 flows 2

mark=$(tdm_hostload_mark)
tdmd_stop m1 KILL
# Read once the member is dead: it cannot have renewed after this.
t_kill=$(tdm_now)
held() { tdmd_qsnap Q 1; [ "${Q[x.lease_held]:-0}" = 1 ]; }
tdm_wait_for $((LEASE_MS / 1000 + 30)) held
check_eq "a's lease ran out" "${Q[x.lease_held]:-x}" 1
n=${Q[x.window_packets]:-0}
sleep 0.5
tdmd_qsnap Q 1
check_eq "a: nothing gated leaves" "${Q[x.window_packets]:-0}" "$n"
check_eq "a: one expiry" "${Q[x.lease_expiries]:-x}" 1
check "b, without a lease, still sends" flows 2
t_restart=$(tdm_now)

# ---- restarted: healthy again, renews, the gate runs ----------------------------
tdmd_start m1 "${M[1]}" "$TDM_TMP/m1.conf" || tdmd_fatal "member a restarts"
released() { tdmd_qsnap Q 1; [ "${Q[x.lease_held]:-1}" = 0 ]; }
check "restarted: the lease is renewed" tdm_wait_for 30 released
check "restarted: a sends again" tdm_wait_for 10 flows 1
check_eq "restarted: still one expiry" "${Q[x.lease_expiries]:-x}" 1

kill "${sender[1]}" "${sender[2]}"
wait "${sender[1]}" "${sender[2]}" 2>/dev/null
tdm_cap_stop tapa
tdm_quiet_judge "$mark"
tdm_judge before tb span "@$TDM_TMP/tapa.pcap" --port 5001 --to "$t_restart"
bound=$((t_kill + LEASE_MS * 1000000 + WINDOW_NS + TDM_TAP_TOL))
tdm_log "a was killed at $t_kill ns (lease $((LEASE_MS * 1000000)) ns); departures judged on the host"
tdm_timing tdm_judge_check "tap: no departure of a after the kill + lease + one window" before \
	"last_before <= $bound"
tdm_judge after tb span "@$TDM_TMP/tapa.pcap" --port 5001 --from "$bound" --to "$t_restart"
tdm_timing tdm_judge_check "tap: none between that bound and the restart" after 'in_span == 0'

tdmd_finish
tdm_exit
