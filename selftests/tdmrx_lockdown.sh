#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A receiver that cannot load modules: in a guest booted with
# lockdown=integrity (tools/check boots one per kernel for this test),
# tdmrx.ko is refused, tdmctl doctor says so and that the BPF recorder can
# work, and `tdmstat capture --recorder auto` falls back to the BPF
# recorder and records every packet tdmgen sent.  `--recorder kmod` fails
# with the kernel's reason.  Without lockdown the test skips: it proves
# nothing on a kernel that loads the module.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmrx_lib.sh
. "$(dirname "$0")/tdmrx_lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
# Not tdm_require: it wants sch_tdmwin, which lockdown refuses too.
[ "$(id -u)" -eq 0 ] || tdm_skip_all "needs root"
{ [ -x "$TDMSTAT" ] && [ -x "$TDMGEN" ]; } ||
	tdm_skip_all "tdmstat/tdmgen not built in $TS_BUILD (make tools)"
TDMCTL=$TS_BUILD/tdmctl
lockdown=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/security/lockdown 2>/dev/null)
case $lockdown in
integrity | confidentiality) ;;
*) tdm_skip_all "the kernel is not locked down (lockdown '${lockdown:-unknown}'): boot with lockdown=integrity" ;;
esac
tdm_log "lockdown: $lockdown"

lsmod | grep -q '^tdmrx ' && tdm_skip_all "tdmrx is loaded (before the lockdown?)"
out=$(modprobe tdmrx 2>&1)
check_eq "modprobe tdmrx: refused" $? 1
tdm_log "modprobe tdmrx: $out"
ko=$TDM_ROOT/build/kmod/$(uname -r)/tdmrx.ko
if [ -f "$ko" ]; then
	out=$(insmod "$ko" 2>&1)
	check_eq "insmod of the build's tdmrx.ko: refused" $? 1
	check_match "  ... for lack of a signature (EPERM/EKEYREJECTED)" "$out" \
		"Operation not permitted|Key was rejected|Required key not available"
fi

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
declare -A J
PLAN=$TDM_TMP/plan.conf
printf '[auto]\nsenders 1\nwindow 5ms\ndead_time 2ms\n' >"$PLAN"

# ip netns exec mounts a /sys of the namespace's own, without securityfs
# (where the lockdown state is): mount it there, as on a booted system.
out=$(nsx "$B" sh -c 'mountpoint -q /sys/kernel/security ||
	mount -t securityfs securityfs /sys/kernel/security; exec "$@"' sh \
	"$TDMCTL" doctor -i tdmB --role receiver 2>&1)
check_match "doctor: tdmrx.ko refused by lockdown" "$out" \
	"tdmrx.ko: refused unless signed \\(lockdown\\); BPF recorder: can load"
tdm_log "doctor: $(grep -m1 'tdmrx.ko:' <<<"$out")"

out=$(nsx "$B" "$TDMSTAT" capture --recorder kmod -i tdmB -u 5001 -p "$PLAN" -d 1s -q \
	-o "$TDM_TMP/k" 2>&1)
check_eq "capture --recorder kmod: fails" $? 1
check_match "capture --recorder kmod: says why modprobe failed" "$out" \
	"modprobe tdmrx failed \\(.*(Operation not permitted|Key was rejected|Required key not available)\\)"
tdm_log "capture --recorder kmod: $out"

ip netns exec "$B" "$TDMSTAT" capture --recorder auto -i tdmB -u 5001 -p "$PLAN" \
	-e 1 -d 60s -j -o "$TDM_TMP/auto" >"$TDM_TMP/auto.out" 2>"$TDM_TMP/auto.err" &
TS_PID[auto]=$!
TDM_BG_PIDS+=($!)
tdm_wait_for 30 grep -q "recording" "$TDM_TMP/auto.err"
check_match "capture --recorder auto: the BPF recorder" "$(cat "$TDM_TMP/auto.err")" \
	"recording tdmB with the BPF recorder"
nsx "$A" "$TDMGEN" -i 0 -p 5001 -c 50 -r 200pps -s 100 -E 1 -j "$TDM_IP_B" \
	>"$TDM_TMP/send.json" 2>"$TDM_TMP/send.err"
check_eq "tdmgen sent" $? 0
ts_capture_wait auto 30
check_eq "capture --recorder auto: exit status" $? 0
ts_json J "$TDM_TMP/auto.out"
check_eq "every packet recorded, none lost" "${J[run.received]:-}:${J[run.lost]:-}" "50:0"
ts_san_check "$TDM_TMP"/*.err

tdm_exit
