#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Multi-queue: a veth with 4 TX queues, (1) mq root with one tdmwin per
# queue, (2) tdmwin as root of the 4-queue device.  Traffic from 16 flows
# (spread over the queues by the flow hash) flows, inside the windows, and
# is counted by the instances.  Tolerances as in tdmwin_gate.sh.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" 4 || tdm_skip_all "cannot create a 4-queue veth pair"
D=tdmA
declare -A Q R

tc_a() { tdm_tc -n "$A" "$@"; }
nq=$(nsx "$A" sh -c "ls -d /sys/class/net/$D/queues/tx-* | wc -l")
check_eq "the veth has 4 TX queues" "$nq" 4

# traffic NAME: 16 flows, 1.5 s, captured and received; fills R, and the
# capture is judged on the host under the key NAME (tdm_judge).
traffic() {
	local name=$1
	tdm_cap_start "$name" "$B" tdmB "udp dst port 5001" || return 1
	tdm_recv_start "rx$name" "$B" --bind "$TDM_IP_B" --ports 5001
	nsx "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --flows 16 \
		--sport 40000 --duration 1.5 --rate 800 --size 200 >"$TDM_TMP/$name.sent"
	sleep 0.5
	tdm_cap_stop "$name"
	tdm_recv_stop "rx$name" R
	SENT=$(tdm_sent "$TDM_TMP/$name.sent")
	tdm_judge "$name" tb pcap "@$TDM_TMP/$name.pcap" --port 5001 --cycle 20000000 \
		--windows 0:5000000 --tol-early "$TOL_EARLY" --tol-late "$TOL_LATE"
}

# ---- 1. mq root, one tdmwin per queue ---------------------------------------------

check "mq root" tc_a qdisc add dev $D root handle 100: mq
for i in 1 2 3 4; do
	check "tdmwin on mq queue $i" tc_a qdisc add dev $D parent 100:$i handle ${i}0: \
		tdmwin cycle-time 20ms base-time 0 window 0 5ms clockid CLOCK_REALTIME
done
check_eq "four tdmwin instances" "$(tc_a -j qdisc show dev $D | py flat --kind tdmwin |
	sed -n 's/^count=//p')" 4
check_num "classes: 4 of mq + 2 under each instance" "$(tc_a class show dev $D |
	py classes | sed -n 's/^count=//p')" -ge 12
traffic mq
check_eq "mq: every packet arrived" "${R[udp5001.n]:-x}" "$SENT"
tdm_judge_check "mq: packets captured" mq 'judged > 0'
tdm_timing tdm_judge_check "mq: packets inside the windows, but the allowance" mq \
	'outside <= allowed(judged)'
total=0 used=0 dist=
for i in 1 2 3 4; do
	tdm_snap Q "$A" $D --handle ${i}0:
	n=${Q[x.window_packets]:-0}
	dist+=" q$i=$n"
	total=$((total + n))
	[ "$n" -gt 0 ] && used=$((used + 1))
	check_eq "mq: instance ${i}0: queue empty" "${Q[qlen]:-}" 0
done
tdm_log "mq: window_packets per queue:$dist"
check_eq "mq: the instances sent every packet" "$total" "${R[udp5001.n]:-x}"
check_num "mq: more than one queue used" "$used" -ge 2

# One instance on hold stops only its own queue.
check "hold on queue 1 only" tc_a qdisc change dev $D parent 100:1 handle 10: tdmwin hold
tdm_snap Q "$A" $D --handle 20:
check_eq "queue 2 not on hold" "$(tdm_bool "${Q[options.hold]:-}")" 0
tc_a qdisc change dev $D parent 100:1 handle 10: tdmwin release

check "delete mq with the tdmwin children" tc_a qdisc del dev $D root handle 100:
check_eq "no tdmwin left" "$(tc_a -j qdisc show dev $D | py flat --kind tdmwin |
	sed -n 's/^count=//p')" 0

# ---- 2. tdmwin root on the 4-queue device -----------------------------------------------

check "tdmwin root on the 4-queue device" tc_a qdisc add dev $D root handle 1: tdmwin \
	cycle-time 20ms base-time 0 window 0 5ms clockid CLOCK_REALTIME
traffic root
check_eq "root: every packet arrived" "${R[udp5001.n]:-x}" "$SENT"
tdm_judge_check "root: packets captured" root 'judged > 0'
tdm_timing tdm_judge_check "root: packets inside the windows, but the allowance" root \
	'outside <= allowed(judged)'
tdm_snap Q "$A" $D
check_eq "root: one instance sent every packet" "${Q[x.window_packets]:-}" "${R[udp5001.n]:-x}"
check_eq "root: queue empty" "${Q[qlen]:-}" 0
check "delete" tc_a qdisc del dev $D root

tdm_exit
