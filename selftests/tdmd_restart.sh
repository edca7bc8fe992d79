#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Losing the coordinator changes nothing on the wire: with the coordinator
# killed, every member's qdisc keeps its plan and keeps sending in its
# windows.  When the coordinator returns, the members reconnect by
# themselves, and the coordinator adopts the plan they run (same content,
# version and base time) instead of pushing a new one.  Version numbers
# continue from there.

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
tdmd_require

tdmd_topology 3 || tdm_skip_all "cannot build the bridge topology"
tdmd_key "$TDMD_KEY"
NAMES=(- a b c)
cat >"$TDM_TMP/plan.conf" <<'PLAN'
[global]
lead_time  2s
base_align 0
[auto]
senders   a b c
window    2ms
dead_time 1ms
PLAN

tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/plan.conf"
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
for i in 1 2 3; do
	tdmd_member_conf "$TDM_TMP/m$i.conf" "${NAMES[$i]}"
	tdmd_start "m$i" "${M[$i]}" "$TDM_TMP/m$i.conf"
done

declare -A Q H
sig() { # the plan signature of member I: version, base, switches
	local -A q
	tdmd_qsnap q "$1"
	echo "${q[options.plan_version]:-none}:${q[options.base_time]:-}:${q[x.plan_switches]:-}"
}
all_v1() { local i; for i in 1 2 3; do [[ "$(sig "$i")" == 1:* ]] || return 1; done; }
check "three members connected" tdm_wait_for 30 tdmd_all_connected coord 3
check "all run plan v1 (auto form: cycle 9 ms)" tdm_wait_for 30 all_v1
tdmd_qsnap Q 2
check_eq "member b: window 3ms+2ms of a 9 ms cycle" \
	"${Q[options.cycle_time]}:${Q[options.windows.0.offset]}:${Q[options.windows.0.length]}" \
	"9000000:3000000:2000000"
for i in 1 2 3; do before[i]=$(sig "$i"); done

# ---- the coordinator dies ----
tdmd_stop coord KILL
gone() { local -A s; tdmd_jsnap s "m$1" status; [ "${s[coordinator.connected]}" = false ]; }
check "members notice the coordinator is gone" tdm_wait_for 10 gone 1
pk0=$(tdmd_qsnap Q 1; echo "${Q[x.window_packets]:-0}")
nsx "${M[1]}" "${TDM_PYU[@]}" send --dst $TDMD_IP_C --port 5001 --count 200 \
	--size 200 --rate 2000 >/dev/null
tdmd_qsnap Q 1
check_num "gate keeps sending in windows without a coordinator" \
	$(( ${Q[x.window_packets]:-0} - pk0 )) -ge 200
check_eq "hold stays off, no drops" "$(tdm_bool "${Q[options.hold]}"):${Q[drops]}" "0:0"
for i in 1 2 3; do
	check_eq "member ${NAMES[$i]}: plan untouched" "$(sig $i)" "${before[$i]}"
done

# ---- it comes back ----
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdm_fail "coordinator restart"
check "members reconnect by themselves" tdm_wait_for 20 tdmd_all_connected coord 3
sleep 1
tdmd_jsnap H coord plan history
check_eq "the running plan is adopted, not pushed again" \
	"${H[len]}:${H[0.version]}:${H[0.source]}" "1:1:adopted"
for i in 1 2 3; do
	check_eq "member ${NAMES[$i]}: no new plan after the restart" "$(sig $i)" "${before[$i]}"
done

sed 's/^window .*/window 2500us/' "$TDM_TMP/plan.conf" >"$TDM_TMP/plan2.conf"
out=$(tdmctl_at coord plan push "$TDM_TMP/plan2.conf" 2>&1)
check_match "a push after the restart is v2, acked by all" "$out" '^plan v2:'
check_eq "nobody refused" "$(grep -c 'nack\|not connected' <<<"$out")" 0

[ "$TDM_FAILS" = 0 ] || tdmd_show_logs
tdmd_finish
tdm_exit
