#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ownership and teardown of the BPF recorder: one owner per device.  A
# second `tdmstat capture --recorder bpf` on the device is refused with the
# owner's pid and name.  The owner killed with SIGKILL: on 6.12 its tcx
# link goes with it, nothing is left; on 6.1 its tc filter stays, and
# tdmctl doctor removes it and says whose it was; a second owner killed
# the same way, the next capture removes its filter, says so, and records.
# A capture that added the clsact qdisc (6.1) removes it when it ends,
# unless somebody else's filters are on it.  A capture without privileges
# is refused with a message that names the capabilities it needs.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
tdm_require
{ [ -x "$TDMSTAT" ] && [ -x "$TDMGEN" ]; } ||
	tdm_skip_all "tdmstat/tdmgen not built in $TS_BUILD (make tools)"
TDMCTL=$TS_BUILD/tdmctl

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
declare -A J
PLAN=$TDM_TMP/plan.conf
printf '[auto]\nsenders 1\nwindow 5ms\ndead_time 2ms\n' >"$PLAN"
chmod 0644 "$PLAN"

# cap NAME ARGS...: capture on tdmB in B, in the background (not in a
# subshell: TS_PID[NAME] is its pid).
cap() {
	local name=$1
	shift
	ip netns exec "$B" "$TDMSTAT" capture --recorder bpf -i tdmB -u 5001 -p "$PLAN" "$@" \
		-o "$TDM_TMP/$name" >"$TDM_TMP/$name.out" 2>"$TDM_TMP/$name.err" &
	TS_PID[$name]=$!
	TDM_BG_PIDS+=($!)
	tdm_wait_for 20 grep -q "recording" "$TDM_TMP/$name.err"
}
progs() { bpftool prog show 2>/dev/null | grep -c 'name tdmrx_bpf'; }
filters() { nsx "$B" tc filter show dev tdmB ingress 2>/dev/null | grep -c 'tdmrx_bpf'; }

cap one -d 60s
check_eq "first owner records" $? 0
pid1=${TS_PID[one]}

# ---- a second owner ------------------------------------------------------------
out=$(nsx "$B" "$TDMSTAT" capture --recorder bpf -i tdmB -u 5001 -p "$PLAN" -d 1s -q \
	-o "$TDM_TMP/two" 2>&1)
check_eq "a second owner: refused" $? 1
check_match "a second owner: the message names the owner" "$out" \
	"BPF recorder is attached to tdmB by pid $pid1 \\(tdmstat\\)"

# ---- the owner goes --------------------------------------------------------------
kill -KILL "$pid1"
wait "$pid1" 2>/dev/null
case "$(uname -r)" in
6.1.*)
	check_eq "6.1: the tc filter outlives its killed owner" "$(filters)" 1
	out=$(nsx "$B" "$TDMCTL" doctor -i tdmB --role receiver 2>&1)
	check_match "doctor: removed the stale filter, names its dead owner" "$out" \
		"removed the BPF recorder's tdmrx_bpf, tc filter \\(prog id [0-9]+\\) on tdmB: its owner, pid $pid1, is gone"
	check_eq "doctor: the stale filter is gone" "$(filters)" 0
	cap two -d 60s
	check_eq "a second owner records" $? 0
	pid1=${TS_PID[two]}
	kill -KILL "$pid1"
	wait "$pid1" 2>/dev/null
	check_eq "6.1: its tc filter outlives it too" "$(filters)" 1
	;;
*)
	tdm_wait_for 5 test "$(progs)" = 0
	check_eq "6.12: the tcx link went with its owner" "$(progs)" 0
	;;
esac
cap three -e 1 -d 30s -j
check_eq "the next owner records" $? 0
if [ "$(uname -r | cut -d. -f1-2)" = 6.1 ]; then
	check_match "the next owner removed the dead owner's filter" \
		"$(cat "$TDM_TMP/three.err")" "removed the BPF recorder's tc filter on tdmB: its owner, pid $pid1, is gone"
fi
nsx "$A" "$TDMGEN" -i 0 -p 5001 -c 20 -r 200pps -s 100 -E 1 -j "$TDM_IP_B" \
	>"$TDM_TMP/send.json" 2>"$TDM_TMP/send.err"
check_eq "tdmgen sent" $? 0
ts_capture_wait three 30
check_eq "the next owner's capture exit status" $? 0
ts_json J "$TDM_TMP/three.out"
check_eq "the next owner recorded every packet" "${J[run.received]:-}:${J[run.lost]:-}" "20:0"
check_eq "after the capture: no program left" "$(progs)" 0
check_eq "after the capture: no filter left" "$(filters)" 0

# ---- two captures started together: never both record -------------------------
# (on tcx each looks again after attaching; the race it closes is a few
# milliseconds wide, so this catches a regression only now and then)
for r in r1 r2; do
	ip netns exec "$B" "$TDMSTAT" capture --recorder bpf -i tdmB -u 5001 -p "$PLAN" -d 4s -q \
		-o "$TDM_TMP/$r" >"$TDM_TMP/$r.out" 2>"$TDM_TMP/$r.err" &
	TS_PID[$r]=$!
done
wait "${TS_PID[r1]}"; rc1=$?
wait "${TS_PID[r2]}"; rc2=$?
# (both may give up, if each attached before the other looked)
check_num "two captures started together: never both record (exit $rc1, $rc2)" \
	$(( (rc1 == 0) + (rc2 == 0) )) -le 1
# (the owner by pid when it looked first; on 6.1 a filter added between
# its look and its attach is "added by someone else just now")
check_match "  ... one that gave up says who has the device" \
	"$(cat "$TDM_TMP/r1.err" "$TDM_TMP/r2.err")" \
	"BPF recorder is attached to tdmB by pid|was added by someone else just now"
check_eq "  ... and nothing is left" "$(progs):$(filters)" 0:0

# ---- the clsact qdisc: a capture that added it removes it ----------------------
clsact() { nsx "$B" tc qdisc show dev tdmB 2>/dev/null | grep -c clsact; }
nsx "$B" tc qdisc del dev tdmB clsact 2>/dev/null
# (no traffic: such a capture ends with "no records", exit 1; what counts
# is that it attached)
ip netns exec "$B" "$TDMSTAT" capture --recorder bpf -i tdmB -u 5001 -p "$PLAN" -d 2s \
	-o "$TDM_TMP/four" 2>"$TDM_TMP/four.err"
check_match "a capture on a device without clsact" "$(cat "$TDM_TMP/four.err")" \
	"recording tdmB with the BPF recorder"
check_eq "it leaves no clsact qdisc behind" "$(clsact)" 0
# One that was there, with a filter of somebody else's, stays as it was.
nsx "$B" tc qdisc add dev tdmB clsact
nsx "$B" tc filter add dev tdmB egress prio 7 matchall action pass
ip netns exec "$B" "$TDMSTAT" capture --recorder bpf -i tdmB -u 5001 -p "$PLAN" -d 2s \
	-o "$TDM_TMP/five" 2>"$TDM_TMP/five.err"
check_match "a capture beside somebody else's clsact filter" "$(cat "$TDM_TMP/five.err")" \
	"recording tdmB with the BPF recorder"
check_eq "their clsact qdisc stays" "$(clsact)" 1
check_eq "and their filter" \
	"$(nsx "$B" tc filter show dev tdmB egress | grep -c 'matchall.*handle')" 1

# ---- privileges -------------------------------------------------------------------
if command -v setpriv >/dev/null; then
	d=$(mktemp -d /tmp/tdmrx-bpf-XXXXXX)
	cp "$PLAN" "$d/plan.conf"
	chmod 1777 "$d"
	out=$(nsx "$B" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all \
		"$TDMSTAT" capture --recorder bpf -i tdmB -p "$d/plan.conf" -d 1s -q -o "$d/x" 2>&1)
	check_eq "unprivileged: refused" $? 1
	check_match "unprivileged: the message says what is needed" "$out" \
		"needs CAP_BPF and CAP_NET_ADMIN"
	tdm_log "unprivileged: $out"
	rm -rf "$d"
else
	tdm_skip "unprivileged capture refused" "no setpriv"
fi
ts_san_check "$TDM_TMP"/*.err

tdm_exit
