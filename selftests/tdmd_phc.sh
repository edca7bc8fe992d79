#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PHC health on tdm_testdev, whose PTP clock runs on CLOCK_TAI and supports
# PTP_SYS_OFFSET_EXTENDED and the basic PTP_SYS_OFFSET but not _PRECISE (as
# most NICs): the reading falls back to EXTENDED.  A member on tdmt0 (its
# coordinator on tdmt1) with ptp_policy require; its ptp4l is a slave
# (software timestamping) of a grandmaster in the coordinator's
# namespace over a spare veth pair, on the one system clock of both, so
# PTP is in sync (a member is only as SLAVE) and only the PHC decides.  tdmctl status reads the offset near 0.  Then the PHC is stepped
# 1 s away, as when phc2sys has died and the clocks part: the member holds
# the gate (the qdisc's hold in tc -s qdisc) after ptp_bad_checks, the
# coordinator sees why, and tdmctl doctor reads the same 1 s and fails with
# the phc2sys fix.  Stepped back, the gate is released after
# ptp_good_checks good checks.  (Each tdmctl, tc or python call costs
# seconds under TCG: the test reads as little as it needs.)

# shellcheck source=tdmd_lib.sh
. "$(dirname "$0")/tdmd_lib.sh"
# shellcheck source=testdev_lib.sh
. "$(dirname "$0")/testdev_lib.sh"

# A PHC reading is PHC minus the midpoint of a system-clock bracket: its
# error is at most half the bracket, which a vCPU preempted by the host
# stretches to milliseconds under TCG (testbed.md: up to ~3 ms on a loaded
# host).  The member's threshold and the "near 0" bound are 5 ms, still
# 200 times below the 1 s step.
PHC_TOL_NS=5000000
STEP_NS=1000000000

tdmd_require
command -v ptp4l >/dev/null || tdm_skip_all "ptp4l (linuxptp) is not installed"
command -v phc_ctl >/dev/null || tdm_skip_all "phc_ctl (linuxptp) is not installed"
tdmt_require			# phc_offset_s 0: the PHC runs on CLOCK_TAI

setup_ns A B || tdm_skip_all "cannot create network namespaces"
if ! ip link set tdmt0 netns "$A" || ! ip link set tdmt1 netns "$B"; then
	tdm_skip_all "cannot move tdmt0/tdmt1 into namespaces"
fi
tdm_hosts "$A" tdmt0 "$B" tdmt1
PHC=$(tdmt_phc "$A" tdmt0)
[ -c "$PHC" ] || tdm_skip_all "tdmt0 names no PTP hardware clock ($PHC)"
tdmd_key "$TDMD_KEY"

cat >"$TDM_TMP/plan.conf" <<'PLAN'
[global]
lead_time  1s
base_align 0
[auto]
senders   a
window    2ms
dead_time 1ms
PLAN

# The grandmaster in B, the member's ptp4l its slave in A, over a spare
# veth pair: the slave reaches SLAVE within a few announce intervals
# (the bound of the first release below covers it).
if ! ip -n "$A" link add gm0 type veth peer name gm1 netns "$B"; then
	tdm_skip_all "cannot add a veth pair for ptp4l"
fi
ip -n "$A" link set gm0 up
ip -n "$B" link set gm1 up
ptp_start gm "$B" gm1 --priority1=1 --logAnnounceInterval=-2 \
	--announceReceiptTimeout=2
ptp_start a "$A" gm0 -s --logAnnounceInterval=-2 --announceReceiptTimeout=2

tdmd_coord_conf "$TDM_TMP/coord.conf" "$TDM_TMP/plan.conf"
tdmd_start coord "$B" "$TDM_TMP/coord.conf" || tdmd_fatal "the coordinator starts"
tdmd_member_conf "$TDM_TMP/a.conf" a interface=tdmt0 \
	"coordinator=$TDM_IP_B:$TDMD_PORT" ptp_policy=require \
	"ptp_socket=$TDM_TMP/ptp-a" ptp_threshold=5ms ptp_interval=250ms \
	ptp_good_checks=3 ptp_bad_checks=2 ptp_check_tai=off \
	"phc_threshold=${PHC_TOL_NS}ns"
tdmd_start a "$A" "$TDM_TMP/a.conf" || tdmd_fatal "the member starts"

declare -A S D
# The qdisc's plan version and hold, as "1:0" (tc -s qdisc).
qstate() {
	local -A q
	tdm_snap q "$A" tdmt0
	echo "${q[options.plan_version]:-none}:$(tdm_bool "${q[options.hold]:-none}")"
}
released() { [ "$(qstate)" = 1:0 ]; }
# The member's log says when it decides (cheaper to poll than tc), then
# the qdisc is read once.
logged() { grep -q "$1" "$TDM_TMP/a.log"; }
in_sync_twice() {
	[ "$(grep -c 'PHC .* in sync with the system clock' "$TDM_TMP/a.log")" -ge 2 ]
}
abs() { local v=${1:-x}; echo "${v#-}"; }

# doctor's ptp.phc_offset finding into D (severity, seen, fix), from its
# text output.
doctor_phc() {
	local out
	out=$(nsx "$A" "$TDMCTL" doctor -i tdmt0 --role sender \
		--ptp-socket "$TDM_TMP/ptp-a" 2>/dev/null)
	D[severity]=$(awk '$1 == "ptp.phc_offset" { print tolower($2); exit }' <<<"$out")
	D[seen]=$(awk '$1 == "ptp.phc_offset" { $1 = ""; $2 = ""; sub(/^ +/, "");
		print; exit }' <<<"$out")
	D[fix]=$(awk 'f { sub(/^ +/, ""); print; exit }
		$1 == "#" && $2 == "ptp.phc_offset:" { f = 1 }' <<<"$out")
}
seen_offset() { sed -n 's/.* - CLOCK_TAI \(-\?[0-9]*\) ns .*/\1/p' <<<"${D[seen]:-}"; }

# ---- in sync: the plan goes in and the gate opens ----
check "the member installs plan v1 and releases its gate" tdm_wait_for 30 released
tdmd_jsnap S a status
check_eq "status: PHC synced, read with PTP_SYS_OFFSET_EXTENDED" \
	"${S[phc.state]:-}:${S[phc.method]:-}:${S[phc.device]:-}" "synced:extended:$PHC"
check_num "status: |PHC - CLOCK_TAI| below $PHC_TOL_NS ns (${S[phc.offset_ns]:-?} ns, delay ${S[phc.delay_ns]:-?} ns)" \
	"$(abs "${S[phc.offset_ns]:-}")" -lt $PHC_TOL_NS
check_match "the member logged the fallback to EXTENDED" \
	"$(grep -m1 'PHC .* read with' "$TDM_TMP/a.log")" "PHC $PHC read with PTP_SYS_OFFSET_EXTENDED"

# ---- the PHC steps 1 s away (phc2sys dead, clocks apart): the gate holds ----
phc_ctl "$PHC" -- adj 1 >/dev/null || tdm_fail "phc_ctl steps $PHC by +1 s"
check "the member holds its gate" tdm_wait_for 10 logged 'PHC out of sync'
check_eq "tc -s qdisc: plan v1, held" "$(qstate)" 1:1
check_match "it logged why, naming the PHC offset" \
	"$(grep 'PHC out of sync' "$TDM_TMP/a.log" | tail -n1)" \
	'PHC offset [0-9]{9,10} ns \(PHC - CLOCK_TAI\) exceeds 5000000 ns: holding the gate'
tdmd_jsnap S a status
check_eq "status: PHC unsynced, PTP still synced" "${S[phc.state]:-}:${S[sync.state]:-}" \
	"unsynced:synced"
check_num "status: offset about +1 s (${S[phc.offset_ns]:-?} ns)" \
	"$(abs "$(( ${S[phc.offset_ns]:-0} - STEP_NS ))")" -lt $PHC_TOL_NS
check "the coordinator sees a held, with the PHC reason" tdm_wait_for 5 \
	grep -q 'member a holds its gate: PHC offset' "$TDM_TMP/coord.log"
doctor_phc
check_match "doctor reads the PHC with PTP_SYS_OFFSET_EXTENDED" "${D[seen]:-}" \
	"^$PHC - CLOCK_TAI [0-9]+ ns \\(PTP_SYS_OFFSET_EXTENDED, delay [0-9]+ ns\\)$"
off=$(seen_offset)
check_num "doctor: offset about +1 s (${D[seen]:-?})" \
	"$(abs "$(( ${off:-0} - STEP_NS ))")" -lt $PHC_TOL_NS
check_eq "doctor fails ptp.phc_offset" "${D[severity]:-}" fail
check_eq "... with the phc2sys fix" "${D[fix]:-}" "phc2sys -a -r -w"

# ---- stepped back: released after the good checks ----
phc_ctl "$PHC" -- adj -1 >/dev/null || tdm_fail "phc_ctl steps $PHC back by -1 s"
check "the PHC comes back in sync" tdm_wait_for 10 in_sync_twice
check_match "... after 3 good checks, and the member releases its gate" \
	"$(grep 'PHC .* in sync with the system clock' "$TDM_TMP/a.log" | tail -n1)" \
	'after 3 good checks: releasing the gate'
check_eq "tc -s qdisc: plan v1, released" "$(qstate)" 1:0

ptp_stop a
ptp_stop gm
[ "$TDM_FAILS" = 0 ] || { tdmd_show_logs; tail -n 5 "$TDM_TMP"/ptp-*.log | sed 's/^/#   /'; }
tdmd_finish
tdm_exit
