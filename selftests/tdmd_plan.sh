#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmd hands out plans: a coordinator and three members (one over IPv6) on
# a bridge.  Once all three are connected every member's qdisc carries its
# own windows of plan v1.  A pushed plan change is prepared and committed
# on every member, pending with one base time, and all switch then.  A
# plan that does not validate is refused with its line; one the kernel
# refuses comes back as a nack with the kernel's reason, and the change is
# aborted everywhere: nobody switches.  A plan without c's windows holds
# c's gate and commits.

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
tdmd_require

tdmd_topology 3 || tdm_skip_all "cannot build the bridge topology"
tdmd_key "$TDMD_KEY"
NAMES=(- a b c)

cat >"$TDM_TMP/plan1.conf" <<'PLAN'
[global]
cycle_time    10ms
min_dead_time 500us
guard         2us
lead_time     2s
base_align    0

[sender a]
window 0 2ms

[sender b]
window 3ms 2ms

[sender c]
window 6ms 1500us
window 8ms 1ms
PLAN

tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/plan1.conf"
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
for i in 1 2 3; do
	coordinator=$TDMD_IP_C:$TDMD_PORT
	[ $i = 3 ] && coordinator="[$TDMD_IP6_C]:$TDMD_PORT"
	tdmd_member_conf "$TDM_TMP/m$i.conf" "${NAMES[$i]}" "coordinator=$coordinator"
	tdmd_start "m$i" "${M[$i]}" "$TDM_TMP/m$i.conf"
done

qversion() { local -A q; tdmd_qsnap q "$1"; echo "${q[options.plan_version]:-none}"; }
all_at() { # VERSION
	local i
	for i in 1 2 3; do [ "$(qversion "$i")" = "$1" ] || return 1; done
}
check "all three members connect" tdm_wait_for 30 tdmd_all_connected coord 3
check "every member's qdisc runs plan v1" tdm_wait_for 30 all_at 1

declare -A Q S
expect=(- "0:2000000" "3000000:2000000" "6000000:1500000 8000000:1000000")
for i in 1 2 3; do
	tdmd_qsnap Q $i
	got=
	for ((w = 0; w < ${Q[options.windows.len]:-0}; w++)); do
		got="$got ${Q[options.windows.$w.offset]}:${Q[options.windows.$w.length]}"
	done
	check_eq "member ${NAMES[$i]}: its windows" "${got# }" "${expect[$i]}"
	check_eq "member ${NAMES[$i]}: cycle, guard, not held" \
		"${Q[options.cycle_time]}:${Q[options.guard]}:$(tdm_bool "${Q[options.hold]}")" \
		"10000000:2000:0"
	b[i]=${Q[options.base_time]}
done
check_eq "one base time for all" "${b[1]}" "${b[2]}"
check_eq "one base time for all (c)" "${b[1]}" "${b[3]}"

tdmd_jsnap S coord status
check_eq "status: 3 members" "${S[members.len]}" 3
ok=0
for i in 0 1 2; do
	[ "${S[members.$i.ack]}" = ok ] && [ "${S[members.$i.plan_version]}" = 1 ] &&
		ok=$((ok + 1))
done
check_eq "status: every member acked v1" $ok 3
out=$(tdmctl_at coord status)
check_match "status text lists member c as up" "$out" '^ +c +up '
tdmd_jsnap S m1 status
check_eq "member status: connected, plan v1, qdisc present" \
	"${S[coordinator.connected]}:${S[qdisc.plan_version]}:${S[qdisc.present]}" "true:1:true"

# ---- a plan change: pending everywhere with the same base time ----
sed -e 's/^cycle_time .*/cycle_time 12ms/' -e 's/^window 0 2ms/window 0 2500us/' \
	-e 's/^lead_time .*/lead_time 6s/' \
	"$TDM_TMP/plan1.conf" >"$TDM_TMP/plan2.conf"
out=$(tdmctl_at coord -j plan push "$TDM_TMP/plan2.conf")
rc=$?
check_eq "plan push v2: tdmctl succeeds" $rc 0
declare -A P
tdm_kv P "$(py json <<<"$out")"
check_eq "push result: v2 acked by 3 of 3, committed" \
	"${P[version]}:${P[acked]}:${P[sent]}:${P[nacked]}:${P[outcome]}" "2:3:3:0:committed"
base2=${P[base_time]}
# Each member holds v2 as pending until base2.  A snapshot that a slow
# guest only finishes after base2 may already show v2 in force: that is
# accepted only when it carries the same base time.
pend='' early=0
for i in 1 2 3; do
	tdmd_qsnap Q $i
	if [ "$(tdm_now CLOCK_TAI)" -lt "$base2" ]; then
		early=$((early + 1))
		pend="$pend ${Q[x.pending]}:${Q[x.pending_version]}:${Q[x.pending_base_time]}"
	elif [ "${Q[x.pending]}" = 1 ]; then
		pend="$pend ${Q[x.pending]}:${Q[x.pending_version]}:${Q[x.pending_base_time]}"
	else
		pend="$pend 1:${Q[options.plan_version]}:${Q[options.base_time]}"
	fi
done
tdm_log "$early of 3 snapshots finished before the base time"
check_eq "all three hold v2 as pending with the pushed base time" "$pend" \
	" 1:2:$base2 1:2:$base2 1:2:$base2"
check "all three switch to v2" tdm_wait_for 15 all_at 2
sw=
for i in 1 2 3; do
	tdmd_qsnap Q $i
	sw="$sw ${Q[options.base_time]}:${Q[options.cycle_time]}:${Q[x.plan_switches]}"
done
check_eq "v2 took over at its base time on every member" "$sw" \
	" $base2:12000000:1 $base2:12000000:1 $base2:12000000:1"

# ---- bad plans ----
printf '[global]\ncycle_time 10ms\n[sender a]\nwindow 0 4ms\n[sender b]\nwindow 3ms 2ms\n' \
	>"$TDM_TMP/bad.conf"
out=$(tdmctl_at coord plan push "$TDM_TMP/bad.conf" 2>&1)
rc=$?
check_eq "overlapping plan: tdmctl fails" $rc 1
check_match "overlapping plan: the line and the problem" "$out" 'bad\.conf:6: .*overlaps'
check "overlapping plan: nothing changed" all_at 2

# Valid for the plan library, too short for the kernel: at the members'
# 1000 Mbit/s (their link_speed, which wins over the plan's) a minimum frame
# takes 672 ns, plus the 2 us guard is more than c's 2.5 us window.
sed -e 's/^lead_time .*/lead_time 2s/' -e 's/^window 8ms 1ms/window 8ms 2500ns/' \
	"$TDM_TMP/plan2.conf" >"$TDM_TMP/plan3.conf"
out=$(tdmctl_at coord plan push "$TDM_TMP/plan3.conf" 2>&1)
rc=$?
check_eq "plan the kernel refuses: tdmctl fails" $rc 1
check_match "the nack carries the kernel's reason" "$out" 'c +nack: kernel: '
check_match "the change is aborted" "$out" '^plan v3: aborted, base time'
check_match "nobody switches, and why" "$out" '^ +nobody switches: 1 refused, 0 did not answer \(first: c\)'
check_match "a, which prepared, aborted it" "$out" 'a +ok in [0-9.]+ ms; abort done'
tdmd_jsnap S coord status
check_eq "coordinator status: c nacked v3" "${S[members.2.name]}:${S[members.2.ack]}" "c:nack"
# Nobody switches: every member stays on v2 with nothing pending, and
# the two that had prepared v3 removed it.
nothing_pending() {
	local i
	for i in 1 2 3; do
		tdmd_qsnap Q "$i"
		[ "${Q[x.pending]:-x}" = 0 ] || return 1
	done
}
check "v3 pending nowhere" tdm_wait_for 10 nothing_pending
check "everyone still on v2" all_at 2
aborts=
for i in 1 2 3; do tdmd_qsnap Q $i; aborts="$aborts ${Q[x.pending_aborts]:-x}"; done
check_eq "a and b aborted v3 in the kernel, c had nothing to abort" "$aborts" " 1 1 0"

out=$(tdmctl_at coord plan history)
check_match "history lists v1 from the file" "$out" '^v1 .* file '
check_match "history lists v2 from tdmctl, committed, 3 acked" "$out" '^v2 .* tdmctl +committed +3 +3 +0'
check_match "history lists v3 aborted" "$out" '^v3 .* tdmctl +aborted +3 +2 +1'
out=$(tdmctl_at m1 plan push "$TDM_TMP/plan2.conf" 2>&1)
check_match "a member refuses plan push" "$out" 'member'
out=$(tdmctl_at m1 plan show)
check_match "member plan show prints its plan" "$out" '^\[sender a\]'

# ---- a plan without c's windows: c holds its gate and acks ----
# Its old windows may be another sender's in the new plan.
hold_of() { local -A q; tdmd_qsnap q "$1"; tdm_bool "${q[options.hold]:-}"; }
sed -e 's/^lead_time .*/lead_time 2s/' "$TDM_TMP/plan2.conf" |
	awk '/^\[sender c\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' >"$TDM_TMP/plan4.conf"
out=$(tdmctl_at coord plan push "$TDM_TMP/plan4.conf" 2>&1)
rc=$?
check_eq "a plan without c: committed" $rc 0
check_match "c's ack says why" "$out" "c +ok in [0-9.]+ ms: plan v[0-9]+ has no windows for 'c': the gate is held; commit done"
held_c() { [ "$(hold_of 3)" = 1 ]; }
check "c's gate is held" tdm_wait_for 10 held_c
check_eq "a and b are not held" "$(hold_of 1):$(hold_of 2)" 0:0
check_match "c's status says so" "$(tdmctl_at m3 status)" "has no windows for 'c': the gate is held"
# A plan with c again: installed, released.
sed -e 's/^lead_time .*/lead_time 2s/' "$TDM_TMP/plan2.conf" >"$TDM_TMP/plan5.conf"
out=$(tdmctl_at coord plan push "$TDM_TMP/plan5.conf" 2>&1)
check_eq "a plan with c again: acked" "$?" 0
released_c() { [ "$(hold_of 3)" = 0 ]; }
check "c's gate runs again" tdm_wait_for 10 released_c

[ "$TDM_FAILS" = 0 ] || tdmd_show_logs
tdmd_finish
tdm_exit
