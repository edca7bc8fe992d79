#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The PTP gate with a real ptp4l.  A grandmaster ptp4l runs in the
# coordinator's namespace and a slave ptp4l (software timestamping) in each
# member's, all over the bridge.  Members get their plan while their ptp4l
# is not running: the qdisc is installed held.  PTP messages pass the held
# gate (bypass class), the slaves reach SLAVE, and only then do the members
# release their gates.  A member that also checks the kernel's TAI offset
# stays held while it is 0 and releases once it is set.  Stopping ptp4l on
# one member holds its gate within a bounded time, and nobody else's; its
# return releases the gate again.  The coordinator sees every transition.
#
# The namespaces share one system clock, so every slave measures an offset
# near zero (noise of the emulated machine); the threshold is generous.
# The slaves all steer that one clock's frequency, so ptp4l's check for a
# frequency changed behind its back (sanity_freq_limit) is turned off.

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
tdmd_require
command -v ptp4l >/dev/null || tdm_skip_all "ptp4l (linuxptp) is not installed"

# From ptp4l's exit to tdmd's decision to hold: at most two check intervals
# (ptp_bad_checks 2, 500 ms each) plus the query timeout (200 ms); the bound
# leaves room for TCG's scheduling noise.  Two bad checks, because a guest
# under load sometimes keeps ptp4l from answering within the timeout.  Measured on tdmd's own log clock (CLOCK_MONOTONIC),
# not on how fast tc can read the qdisc back.
HOLD_BOUND_MS=2500

tdmd_topology 3 || tdm_skip_all "cannot build the bridge topology"
tdmd_key "$TDMD_KEY"
tdm_clock_save			# TAI offset and ptp4l's frequency restored at exit
py clock tai 0
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

ptp_start gm "$C" c0 --priority1=1

tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/plan.conf"
tdmd_start coord "$C" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
for i in 1 2 3; do
	tai=off
	[ $i = 3 ] && tai=on
	tdmd_member_conf "$TDM_TMP/m$i.conf" "${NAMES[$i]}" ptp_policy=require \
		"ptp_socket=$TDM_TMP/ptp-m$i" ptp_threshold=5ms ptp_interval=500ms \
		ptp_good_checks=3 ptp_bad_checks=2 "ptp_check_tai=$tai"
	tdmd_start "m$i" "${M[$i]}" "$TDM_TMP/m$i.conf"
done

declare -A Q S
held() { local -A q; tdmd_qsnap q "$1"; tdm_bool "${q[options.hold]:-none}"; }
qver() { local -A q; tdmd_qsnap q "$1"; echo "${q[options.plan_version]:-none}"; }
all_have_plan() { local i; for i in 1 2 3; do [ "$(qver "$i")" = 1 ] || return 1; done; }
released() { [ "$(held "$1")" = 0 ]; }
is_held() { [ "$(held "$1")" = 1 ]; }

# ---- no ptp4l on the members: plans go in held ----
check "every member installs plan v1" tdm_wait_for 30 all_have_plan
for i in 1 2 3; do
	check_eq "member ${NAMES[$i]}: qdisc held while its ptp4l is absent" "$(held "$i")" 1
done
tdmd_jsnap S m1 status
check_eq "member a: unsynced" "${S[sync.state]}" unsynced
check_match "member a: says ptp4l cannot be reached" "${S[sync.reason]}" 'cannot reach ptp4l'
member_field() { # NAME FIELD: a member's field in the coordinator's status
	local -A s
	local k
	tdmd_jsnap s coord status
	for ((k = 0; k < ${s[members.len]:-0}; k++)); do
		[ "${s[members.$k.name]}" = "$1" ] && { echo "${s[members.$k.$2]}"; return; }
	done
}
coord_sees() { [ "$(member_field "$1" "$2")" = "$3" ]; }
check "the coordinator sees a held and unsynced" tdm_wait_for 5 coord_sees a hold true
check_eq "... unsynced" "$(member_field a sync)" unsynced

# Some traffic while held: nothing leaves in a window.
tdmd_qsnap Q 1
w0=${Q[x.window_packets]:-0}
nsx "${M[1]}" "${TDM_PYU[@]}" send --dst $TDMD_IP_C --port 5001 --count 20 \
	--size 200 --rate 1000 >/dev/null
sleep 0.3
tdmd_qsnap Q 1
check_eq "held gate: no packet sent in a window" "$(( ${Q[x.window_packets]:-0} - w0 ))" 0

# ---- ptp4l starts on the members: each releases once SLAVE ----
for i in 1 2 3; do
	ptp_start "m$i" "${M[$i]}" m0 -s
done
check "member a releases its gate" tdm_wait_for 40 released 1
check "member b releases its gate" tdm_wait_for 20 released 2
check_eq "member a's ptp4l reports SLAVE" "$(pmc_state m1)" SLAVE
check_match "member a logged the sync before the release" \
	"$(grep -m1 'PTP in sync' "$TDM_TMP/m1.log")" 'port SLAVE, offset -?[0-9]+ ns\) after 3 good checks: releasing'
check "ptp4l of a reached SLAVE through the held gate" \
	grep -q 'UNCALIBRATED to SLAVE' "$TDM_TMP/ptp-m1.log"
held_ones_left() { local -A q; tdmd_qsnap q 1; [ $(( ${q[x.window_packets]:-0} - w0 )) -ge 20 ]; }
check "a's held packets left in its windows after the release" tdm_wait_for 5 held_ones_left
check "the coordinator sees a synced and released" tdm_wait_for 5 coord_sees a hold false
check_eq "... synced, port SLAVE" "$(member_field a sync):$(member_field a port_state)" \
	"synced:SLAVE"

# Member c also checks the TAI offset, which is 0.
sleep 1
check_eq "member c: still held while the kernel TAI offset is 0" "$(held 3)" 1
tdmd_jsnap S m3 status
check_match "member c: says why" "${S[sync.reason]}" 'kernel TAI offset is 0'
py clock tai 37
check "member c releases once the TAI offset is set" tdm_wait_for 10 released 3

# ---- ptp4l stops on member a: its gate holds, the others' do not ----
read -r t0 _ </proc/uptime		# seconds, 10 ms resolution
ptp_stop m1
check "member a holds its gate" tdm_wait_for 10 is_held 1
t1=$(grep 'PTP out of sync' "$TDM_TMP/m1.log" | tail -n1 | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
ms=$(awk -v a="$t0" -v b="${t1:-1e9}" 'BEGIN { printf "%d", (b - a) * 1000 }')
check_num "member a held within ${HOLD_BOUND_MS} ms (took ${ms} ms)" "$ms" -le $HOLD_BOUND_MS
check_match "member a logged why" "$(grep 'PTP out of sync' "$TDM_TMP/m1.log" | tail -n1)" \
	'cannot reach ptp4l.*holding the gate'
check "the coordinator logged a's hold" tdm_wait_for 5 \
	grep -q 'member a holds its gate' "$TDM_TMP/coord.log"
check_eq "members b and c keep running" "$(held 2):$(held 3)" "0:0"

# ---- and returns ----
ptp_start m1 "${M[1]}" m0 -s
check "member a releases again once ptp4l is back in sync" tdm_wait_for 40 released 1
check_eq "plans untouched by all of this" "$(qver 1):$(qver 2):$(qver 3)" "1:1:1"

for i in 1 2 3; do ptp_stop "m$i"; done
ptp_stop gm
[ "$TDM_FAILS" = 0 ] || { tdmd_show_logs; tail -n 5 "$TDM_TMP"/ptp-*.log | sed 's/^/#   /'; }
tdmd_finish
tdm_exit
