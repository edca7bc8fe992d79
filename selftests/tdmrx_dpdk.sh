#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A DPDK receiver's producer ring against a tap on the same traffic.
#
# Two tdmgen senders, each paced into its own window by its own clock
# (--pace windows on one plan: user space only, no qdisc), send to R
# through the switch.  On R's r0, tdm-dpdk-rx (Debian's DPDK, EAL without
# hugepages or PCI, the net_af_packet virtual PMD on r0) takes every frame
# with rte_eth_rx_burst and pushes one record per test packet into its
# producer ring; tdmstat capture --recorder ring:NAME drains it.  tcpdump
# taps r0 beside it: the kernel gives each packet socket on r0 its own
# copy, so the tap sees what the PMD sees.  Checked, exactly whatever the
# load: the capture's records and ring drops are the receiver's, and
# records + drops = the test packets the receiver pushed.  Where neither
# packet socket lost a frame (the PMD's missed count and tcpdump's kernel
# drops are 0; else a skip with the counts): records + drops = the test
# packets the tap saw, received = sent, and per window and per sender the
# ring gives what the tap gives (tdmstat analyze of tcpdump's pcap, on the
# host).  The receiver stamps in user space, the tap in the kernel, so
# windows are assigned by TX time (-A tx) for the comparison.  User space
# only (USERSPACE_PROGS): no module is loaded.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tdmstat_lib.sh
. "$(dirname "$0")/tdmstat_lib.sh"
tdm_require tcpdump
tdm_use_build "$TS_BUILD" "${TDMSTAT_RELEASE:-}" DPDKRX=tdm-dpdk-rx
{ [ -x "$TDMSTAT" ] && [ -x "$TDMGEN" ]; } ||
	tdm_skip_all "tdmstat/tdmgen not built in $TS_BUILD (make tools)"
[ -x "$DPDKRX" ] ||
	tdm_skip_all "tdm-dpdk-rx not built in $TS_BUILD (make tools with libdpdk-dev)"

RATE=${TS_RATE:-300pps}
DUR=${TS_DURATION:-2s}
RING=dpdk$$
declare -A Q

dpdk_cleanup() {
	tdm_stop_bg
	rm -f "/dev/shm/tdmrx-ring-$RING"
	tdm_cleanup
}
trap dpdk_cleanup EXIT

ts_topology 2 || tdm_skip_all "cannot create the namespaces, bridge and veths"
# A 14 ms cycle, a 5 ms window each, 2 ms dead time after each; cycle 0 at
# 14 ms after the epoch of CLOCK_TAI, so that both senders and tdmstat
# count the same cycles (base_time 0 would be "not chosen yet": each
# sender's own start).
PLAN=$TDM_TMP/plan.conf
cat >"$PLAN" <<'EOF'
[global]
clock tai
cycle_time 14ms
base_time 14ms

[sender s1]
window 0 5ms

[sender s2]
window 7ms 5ms
EOF

# Sleeps 200 us when a poll finds nothing: a busy-polling receiver would
# take one of the guest's two vCPUs from the senders.
ip netns exec "$R" "$DPDKRX" -i r0 -n "$RING" -u $TS_PORT --idle 200us \
	>"$TDM_TMP/dpdk.out" 2>"$TDM_TMP/dpdk.err" &
DPID=$!
TDM_BG_PIDS+=("$DPID")
if ! tdm_wait_for 30 grep -q receiving "$TDM_TMP/dpdk.err"; then
	sed 's/^/#   /' "$TDM_TMP/dpdk.err"
	tdm_fail "tdm-dpdk-rx receives on r0"
	tdm_exit
fi
check_match "tdm-dpdk-rx: the af_packet PMD on r0, software stamps" \
	"$(grep receiving "$TDM_TMP/dpdk.err")" 'net_af_packet on r0\), stamps software, into ring'
# A long grace: a loaded host delays packets past a window's row, and the
# late ones would go into correction rows that the tap's analyze, which
# has the whole file, does not write.  No -e: the capture ends when the
# receiver closes its ring, having read every record pushed (-e would stop
# it at the first END marker of the last sender, before the others).
ts_capture_start --in "$R" - ring --recorder "ring:$RING" -p "$PLAN" -A tx -g 2s \
	-d 60s -j -o "$TDM_TMP/ring" ||
	{ tdm_fail "tdmstat capture --recorder ring:$RING starts"; tdm_exit; }
ip netns exec "$R" tcpdump -i r0 -Q in -n -s 256 --immediate-mode -U -w "$TDM_TMP/tap.pcap" \
	udp dst port $TS_PORT 2>"$TDM_TMP/tap.err" &
TPID=$!
TDM_BG_PIDS+=("$TPID")
tdm_wait_for 20 grep -q "listening on" "$TDM_TMP/tap.err" ||
	{ tdm_fail "tcpdump taps r0"; tdm_exit; }

for i in 1 2; do
	ts_send $i --pace windows --plan "$PLAN" --name s$i -r "$RATE" -d "$DUR" \
		-s 200 -E 3 -w 300ms
done
ts_send_wait
check_eq "every tdmgen sender finished" $? 0
# The last frames through the switch, then the receiver stops and closes
# its ring, which ends the capture.
sleep 1
kill -TERM "$DPID" 2>/dev/null
wait "$DPID"
check_eq "tdm-dpdk-rx exit status (SIGTERM)" $? 0
ts_capture_wait ring 60
check_eq "capture ring: exit status (the ring closed)" $? 0
sed 's/^/#   ring: /' "$TDM_TMP/ring.err" | tail -n 2
kill -INT "$TPID" 2>/dev/null
wait "$TPID"
sed 's/^/#   dpdk: /' "$TDM_TMP/dpdk.err" | tail -n 1

total=$(( $(ts_sent 1) + $(ts_sent 2) ))
read -r drec ddrop dmiss <<<"$(sed -n \
	's/.* \([0-9]*\) records, \([0-9]*\) dropped (ring full).* \([0-9]*\) missed.*/\1 \2 \3/p' \
	"$TDM_TMP/dpdk.err")"
tapdrop=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$TDM_TMP/tap.err")
ts_json Q "$TDM_TMP/ring.out"
tdm_log "sent $total; tdm-dpdk-rx: ${drec:-?} records, ${ddrop:-?} dropped, ${dmiss:-?} missed by the port;" \
	"ring: ${Q[run.records]:-?} records, ${Q[run.ring_drops]:-?} ring drops; tap: ${tapdrop:-?} dropped by the kernel"
# Exact whatever the host's load: what the receiver pushed is what the
# capture read or counted as dropped.
check_eq "ring: records = the receiver's records" "${Q[run.records]:-}" "${drec:-x}"
check_eq "ring: ring drops = the receiver's drops (ring full)" \
	"${Q[run.ring_drops]:-}" "${ddrop:-x}"
check_eq "ring: every record stamped by the receiver's software clock" \
	"${Q[run.ts_source]:-}:${Q[run.sw_stamps]:-}" "sw:${Q[run.records]:-x}"
# Where neither packet socket on r0 lost a frame, both saw the same ones
# (what the veths' backlogs of a loaded host dropped before r0, neither).
if [ "${dmiss:-x}" = 0 ] && [ "${tapdrop:-x}" = 0 ]; then
	tdm_judge T tdmstat "$TDMSTAT" analyze -q -j -A tx -p "@$PLAN" -o @tap \
		"@$TDM_TMP/tap.pcap"
	tdm_judge_check "ring: records + drops = the test packets the tap saw on r0" T \
		"run_records == $(( ${Q[run.records]:-0} + ${Q[run.ring_drops]:-0} ))"
	tdm_judge QT tdmstat-check compare @tap "@$TDM_TMP/ring*"
	tdm_judge_check "ring = tap: the same windows" QT 'windows_only_in_one == 0 and windows_a == windows_b'
	tdm_judge_check "ring = tap: per window and per sender, the same counts" QT 'count_mismatches == 0'
else
	tdm_skip "the ring = the tap on r0" \
		"a packet socket on r0 lost frames (the PMD missed ${dmiss:-?}, tcpdump ${tapdrop:-?}: a loaded host)"
fi
ts_san_check "$TDM_TMP"/ring.err "$TDM_TMP"/dpdk.err "$TDM_TMP"/send*.err

tdm_exit
