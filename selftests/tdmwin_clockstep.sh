#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Clock steps must neither stall the queue nor make it spin.
#
# 1. Under steady traffic (clockid CLOCK_REALTIME, 20 ms cycle) the clock
#    is stepped +1 h, -1 h, -1 h, +1 h: packets keep flowing after every
#    step, inside the windows (steps of whole hours keep the phase), none is
#    lost, and the queue is empty at the end.
# 2. Stall probes: packets wait for a window 0.7 s away (1 s cycle), then
#    the clock is stepped by a whole number of cycles and nothing else is
#    sent.  The waiting packets must still leave at the next window, and the
#    NET_TX softirq count must stay modest (no spinning watchdog).  Done for
#    CLOCK_REALTIME (+-1 h, as `date -s` does) and for CLOCK_TAI (TAI offset
#    +-37 s via adjtimex).
#
# The clocks are saved first and restored on exit.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump

HOUR=3600000000000

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
tdm_clock_save || tdm_skip_all "cannot read the clocks"
TAI0=$(py clock tai)
D=tdmA
declare -A R

tc_a() { tdm_tc -n "$A" "$@"; }
wp() { tc_a -j -s qdisc show dev $D | py flat --kind tdmwin | sed -n "s/^x.window_packets=//p"; }
qlen() { tc_a -j -s qdisc show dev $D | py flat --kind tdmwin | sed -n "s/^qlen=//p"; }
net_tx() { awk '/NET_TX:/ { for (i = 2; i <= NF; i++) s += $i } END { print s + 0 }' /proc/softirqs; }

# ---- 1. steps under traffic --------------------------------------------------------

check "add: CLOCK_REALTIME, cycle 20ms, window [0,5) ms" tc_a qdisc add dev $D root \
	handle 1: tdmwin cycle-time 20ms base-time 0 window 0 5ms clockid CLOCK_REALTIME
tdm_cap_start cap "$B" tdmB "udp dst port 5001" || tdm_skip_all "tcpdump failed"
tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001
# Sends until stopped after the last step (the steps take longer than
# planned on a slow guest).
ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --duration 60 \
	--rate 500 --size 200 >"$TDM_TMP/sender.out" &
sender=$!
TDM_BG_PIDS+=("$sender")
sleep 1
prev=$(wp)
for step in +$HOUR -$HOUR -$HOUR +$HOUR; do
	py clock step "$step"
	tdm_log "stepped CLOCK_REALTIME by $((step / 1000000000)) s: now $(date -u '+%F %T')"
	sleep 0.8
	cur=$(wp)
	check_num "traffic flows after a ${step:0:1}1 h step (window_packets $prev -> $cur)" \
		"${cur:-0}" -gt "${prev:-0}"
	prev=$cur
done
kill -TERM "$sender"
wait "$sender"
sleep 0.5
tdm_cap_stop cap
tdm_recv_stop rx R
sent=$(tdm_sent "$TDM_TMP/sender.out")
check_eq "every packet arrived" "${R[udp5001.n]:-x}" "$sent"
check_eq "none lost" "${R[udp5001.lost]:-x}" 0
tdm_timing check_num "longest gap between packets < 500 ms (got ${R[udp5001.max_gap_ms]:-?} ms)" \
	"${R[udp5001.max_gap_ms]:-99999}" -lt 500
check_eq "queue empty afterwards" "$(qlen)" 0
tdm_judge cap tb pcap "@$TDM_TMP/cap.pcap" --port 5001 --cycle 20000000 \
	--windows 0:5000000 --tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
tdm_judge_check "packets captured" cap 'judged > 0'
tdm_timing tdm_judge_check "packets inside the windows across the steps, but the allowance and 4" \
	cap 'outside <= allowed(judged) + 4'
py clock restore "$TDM_CLOCK_SAVED"

# ---- 2. stall probes ----------------------------------------------------------------

# probe DESC STEP_ARGS...: 5 packets at phase 0.3 s of a 1 s cycle whose
# window is [0, 100) ms, then the step; they must arrive at the next window.
probe() {
	local desc=$1 t0 t1 q
	shift
	tdm_recv_start probe "$B" --bind "$TDM_IP_B" --ports 5002
	ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5002 --count 5 \
		--at-phase 1000000000:300000000 "$@" >/dev/null
	t0=$(net_tx)
	sleep 1.5
	t1=$(net_tx)
	q=$(qlen)
	tdm_recv_stop probe R
	check_eq "$desc: waiting packets left at the next window" "${R[udp5002.n]:-x}" 5
	check_eq "$desc: queue empty" "$q" 0
	check_num "$desc: NET_TX softirqs in 1.5 s ($((t1 - t0))) < 5000 (no spinning)" \
		$((t1 - t0)) -lt 5000
	if [ "$q" != 0 ]; then
		tdm_log "$desc: $q packets stuck; kicking the queue with one more packet"
		nsx "$A" "${TDM_PYC[@]}" send --dst "$TDM_IP_B" --port 5002 --count 1 >/dev/null
		sleep 1.2
		tdm_log "qlen after the kick: $(qlen)"
	fi
}

check "change: cycle 1s, window [0,100) ms" tc_a qdisc change dev $D root tdmwin \
	clockid CLOCK_REALTIME cycle-time 1s base-time 0 window 0 100ms
probe "CLOCK_REALTIME -1 h" --then-step -$HOUR
probe "CLOCK_REALTIME +1 h" --then-step $HOUR
py clock restore "$TDM_CLOCK_SAVED"

tc_a qdisc del dev $D root
check "add: CLOCK_TAI, cycle 1s, window [0,100) ms" tc_a qdisc add dev $D root \
	handle 1: tdmwin cycle-time 1s base-time 0 window 0 100ms clockid CLOCK_TAI
probe "CLOCK_TAI +37 s (adjtimex TAI offset)" --then-tai $((TAI0 + 37))
probe "CLOCK_TAI -37 s (adjtimex TAI offset)" --then-tai "$TAI0"
check_eq "TAI offset restored" "$(py clock tai)" "$TAI0"

tdm_exit
