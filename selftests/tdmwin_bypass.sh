#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bypass: with the gate held closed, packets whose priority (SO_PRIORITY) is
# in the bypass set and PTP packets (UDP to 319/320 over IPv4 and IPv6,
# ethertype 0x88F7) leave at once; everything else waits.  With
# bypass-ptp off PTP waits too; bypass-prio can be changed; release lets the
# waiting packets out.  Counted in bypass_packets/bytes and class 1:2.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
tdm_veth_ipv6 "$A" "$B"
D=tdmA
N=10
declare -A Q Q2 R R6 C

tc_a() { tdm_tc -n "$A" "$@"; }
send() { nsx "$A" "${TDM_PYU[@]}" send --count $N --rate 1000 "$@" >/dev/null; }
PORTS=5001,5002,5003,5004,319,320,321

start_rx() {
	tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports $PORTS --eth tdmB || return 1
	tdm_recv_start rx6 "$B" --bind "$TDM_IP6_B" --ports 319,5002
}
stop_rx() {
	sleep 0.5
	tdm_recv_stop rx R
	tdm_recv_stop rx6 R6
}

check "add tdmwin on hold, bypass-prio 5,6" tc_a qdisc add dev $D root handle 1: \
	tdmwin cycle-time 20ms window 0 5ms bypass-prio 5,6 hold limit 1000
# Let IPv6 housekeeping frames (if any) settle into the gated queue first.
sleep 0.3
tdm_snap Q "$A" $D
q0=${Q[qlen]:-0}

start_rx
send --dst "$TDM_IP_B" --port 5001			# prio 0: gated
send --dst "$TDM_IP_B" --port 5002 --prio 5		# bypass
send --dst "$TDM_IP_B" --port 5003 --prio 6		# bypass
send --dst "$TDM_IP_B" --port 5004 --prio 4		# gated
send --dst "$TDM_IP_B" --port 319			# PTP event: bypass
send --dst "$TDM_IP_B" --port 320			# PTP general: bypass
send --dst "$TDM_IP_B" --port 321			# not PTP: gated
send --raw-ptp tdmA --dst "$TDM_MAC_B" --size 60	# 0x88F7: bypass
send --dst "$TDM_IP6_B" --port 319			# PTP over IPv6: bypass
send --dst "$TDM_IP6_B" --port 5002 --prio 5		# IPv6 priority: bypass
stop_rx

check_eq "prio 0 waits behind the closed gate" "${R[udp5001.n]:-x}" 0
check_eq "prio 5 bypasses" "${R[udp5002.n]:-x}" $N
check_eq "prio 6 bypasses" "${R[udp5003.n]:-x}" $N
check_eq "prio 4 (not in the set) waits" "${R[udp5004.n]:-x}" 0
check_eq "PTP UDP 319 bypasses" "${R[udp319.n]:-x}" $N
check_eq "PTP UDP 320 bypasses" "${R[udp320.n]:-x}" $N
check_eq "UDP 321 waits" "${R[udp321.n]:-x}" 0
check_eq "PTP over Ethernet (0x88F7) bypasses" "${R[ptp_eth.n]:-x}" $N
check_eq "PTP over IPv6 UDP 319 bypasses" "${R6[udp319.n]:-x}" $N
check_eq "IPv6 with prio 5 bypasses" "${R6[udp5002.n]:-x}" $N
tdm_snap Q "$A" $D
# 7 bypass batches: prio 5, prio 6, UDP 319, UDP 320, 0x88F7, IPv6 319, IPv6 prio 5
check_eq "bypass_packets" "${Q[x.bypass_packets]:-}" $((7 * N))
check_num "bypass_bytes" "${Q[x.bypass_bytes]:-0}" -ge $((7 * N * 60))
check_num "gated packets queued" "$(( ${Q[qlen]:-0} - q0 ))" -ge $((3 * N))
check_eq "nothing sent through the gate" "${Q[x.window_packets]:-}" 0
tdm_snap_class C "$A" $D 1:2
check_eq "class 1:2 counted the bypass packets" "${C[packets]:-}" $((7 * N))
# The gate stays closed, so the queue only grows (a stray IPv6 packet may
# join between two snapshots): class 1:1 holds between what the qdisc held
# before and after.
tdm_snap_class C "$A" $D 1:1
tdm_snap Q2 "$A" $D
check "class 1:1 holds the gated ones (qdisc ${Q[qlen]:-?} then ${Q2[qlen]:-?}, class ${C[qlen]:-?})" \
	test "${C[qlen]:-0}" -ge "${Q[qlen]:-1}" -a "${C[qlen]:-0}" -le "${Q2[qlen]:--1}"

# ---- bypass-ptp off, bypass-prio 7 ---------------------------------------------

check "change bypass-ptp off" tc_a qdisc change dev $D root tdmwin bypass-ptp off
start_rx
send --dst "$TDM_IP_B" --port 319
send --raw-ptp tdmA --dst "$TDM_MAC_B" --size 60
send --dst "$TDM_IP6_B" --port 319
send --dst "$TDM_IP_B" --port 5002 --prio 5
stop_rx
check_eq "bypass-ptp off: PTP UDP waits" "${R[udp319.n]:-x}" 0
check_eq "bypass-ptp off: PTP over Ethernet waits" "${R[ptp_eth.n]:-x}" 0
check_eq "bypass-ptp off: PTP over IPv6 waits" "${R6[udp319.n]:-x}" 0
check_eq "bypass-ptp off: prio 5 still bypasses" "${R[udp5002.n]:-x}" $N

check "change bypass-prio 7" tc_a qdisc change dev $D root tdmwin bypass-prio 7
start_rx
send --dst "$TDM_IP_B" --port 5002 --prio 5
send --dst "$TDM_IP_B" --port 5003 --prio 7
stop_rx
check_eq "bypass-prio 7: prio 5 waits now" "${R[udp5002.n]:-x}" 0
check_eq "bypass-prio 7: prio 7 bypasses" "${R[udp5003.n]:-x}" $N
tdm_snap Q "$A" $D
check_eq "bypass_packets after the changes" "${Q[x.bypass_packets]:-}" $((9 * N))

# ---- release: everything that waited leaves -----------------------------------------

start_rx
check "release" tc_a qdisc change dev $D root tdmwin release
stop_rx
check_eq "release: prio 0 batch arrives" "${R[udp5001.n]:-x}" $N
check_eq "release: prio 4 batch arrives" "${R[udp5004.n]:-x}" $N
check_eq "release: UDP 321 batch arrives" "${R[udp321.n]:-x}" $N
check_eq "release: PTP (bypass-ptp off) arrives" "${R[udp319.n]:-x}:${R6[udp319.n]:-x}:${R[ptp_eth.n]:-x}" \
	"$N:$N:$N"
check_eq "release: prio 5 (gated after the change) arrives" "${R[udp5002.n]:-x}" $N
tdm_snap Q "$A" $D
check_eq "release: queue empty" "${Q[qlen]:-}" 0
check_num "release: sent through the gate" "${Q[x.window_packets]:-0}" -ge $((7 * N))

tdm_exit
