#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Hold: the gate stays closed until release, whatever the plan says.
# Packets queue up to the limit; beyond it they are dropped and counted in
# hold_drops.  Release lets every queued packet out, in order, none lost.
# The plan (windows, version) is not touched by hold/release.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
declare -A Q R

tc_a() { tdm_tc -n "$A" "$@"; }
send() { nsx "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 "$@" >/dev/null; }
SIZE=100
PKTLEN=$((SIZE + 8 + 20 + 14))	# UDP payload + UDP + IPv4 + Ethernet

# The window is open half the time: without hold, traffic would flow.
check "add tdmwin with hold, limit 100" tc_a qdisc add dev $D root handle 1: tdmwin \
	cycle-time 20ms window 0 10ms limit 100 hold plan-version 3
tdm_snap Q "$A" $D
plan0="${Q[options.plan_version]:-}:${Q[options.windows.0.offset]:-}:${Q[options.windows.0.length]:-}"
check_eq "dump: hold" "$(tdm_bool "${Q[options.hold]:-}"):${Q[x.hold]:-}" 1:1

tdm_recv_start held "$B" --bind "$TDM_IP_B" --ports 5001
send --count 150 --size $SIZE --rate 3000
sleep 1
tdm_recv_stop held R
tdm_snap Q "$A" $D
check_eq "on hold nothing leaves" "${R[udp5001.n]:-x}" 0
check_eq "queue filled to the limit (qlen)" "${Q[qlen]:-}" 100
check_eq "backlog = 100 packets" "${Q[backlog]:-}" $((100 * PKTLEN))
check_eq "hold_drops = 50" "${Q[x.hold_drops]:-}" 50
check_eq "drops = 50" "${Q[drops]:-}" 50
check_eq "window_packets 0" "${Q[x.window_packets]:-}" 0
check_eq "plan untouched by hold" \
	"${Q[options.plan_version]:-}:${Q[options.windows.0.offset]:-}:${Q[options.windows.0.length]:-}" "$plan0"

# Raising the limit while held: the queue keeps what it has and takes more.
check "change limit 200 while held" tc_a qdisc change dev $D root tdmwin limit 200
tdm_recv_start held2 "$B" --bind "$TDM_IP_B" --ports 5001
ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --count 150 \
	--size $SIZE --rate 3000 >/dev/null
sleep 0.5
tdm_recv_stop held2 R
tdm_snap Q "$A" $D
check_eq "still nothing leaves" "${R[udp5001.n]:-x}" 0
check_eq "queue filled to the new limit" "${Q[qlen]:-}" 200
check_eq "hold_drops = 100" "${Q[x.hold_drops]:-}" 100

check "hold again (idempotent)" tc_a qdisc change dev $D root tdmwin hold

tdm_recv_start rel "$B" --bind "$TDM_IP_B" --ports 5001
check "release" tc_a qdisc change dev $D root tdmwin release
# (qlen is a statistic: -s, or the dump has none and this never holds)
drained() { [ "$(tc_a -j -s qdisc show dev "$D" | py flat --kind tdmwin | sed -n 's/^qlen=//p')" = 0 ]; }
tdm_wait_for 60 drained
tdm_recv_wait rel 200
tdm_recv_stop rel R
tdm_snap Q "$A" $D
check_eq "release: all 200 queued packets arrive" "${R[udp5001.n]:-x}" 200
check_eq "release: none lost in between" "${R[udp5001.lost]:-x}" 0
check_eq "release: in order" "${R[udp5001.reorder]:-x}" 0
check_eq "release: the first 100 of batch 1 were kept" "${R[udp5001.first_seq]:-x}" 0
check_eq "release: queue empty" "${Q[qlen]:-}:${Q[backlog]:-}" 0:0
check_eq "release: window_packets 200" "${Q[x.window_packets]:-}" 200
check_eq "release: hold cleared" "$(tdm_bool "${Q[options.hold]:-}"):${Q[x.hold]:-}" 0:0
check_eq "release: plan untouched" \
	"${Q[options.plan_version]:-}:${Q[options.windows.0.offset]:-}:${Q[options.windows.0.length]:-}" "$plan0"
check_eq "release: hold_drops kept" "${Q[x.hold_drops]:-}" 100

# Hold while traffic flows (the limit is large enough for all of it, even
# when one tc call takes seconds: a debug kernel under TCG).  The sender
# runs until the release has been seen to let 500 packets through.  The
# release hands everything held to the receiving veth at once: its backlog
# (net.core.netdev_max_backlog, 1000 packets) must hold that burst too.
tdm_sysctl net.core.netdev_max_backlog 100000
check "limit 20000" tc_a qdisc change dev $D root tdmwin limit 20000
tdm_recv_start flow "$B" --bind "$TDM_IP_B" --ports 5001
ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --duration 600 \
	--size $SIZE --rate 500 >"$TDM_TMP/flow.sender" &
sender=$!
TDM_BG_PIDS+=("$sender")
tdm_recv_wait flow 50	# traffic flows
check "hold under traffic" tc_a qdisc change dev $D root tdmwin hold
tdm_snap Q "$A" $D
n_hold=${Q[x.window_packets]:-0}
sleep 0.5
tdm_snap Q "$A" $D
check_eq "under traffic: nothing sent through the gate after hold" \
	"${Q[x.window_packets]:-0}" "$n_hold"
check_num "under traffic: packets queue" "${Q[qlen]:-0}" -gt 0
check "release under traffic" tc_a qdisc change dev $D root tdmwin release
tdm_recv_wait flow 500
kill -TERM "$sender"
wait "$sender"
tdm_recv_wait flow "$(tdm_sent "$TDM_TMP/flow.sender")"
tdm_recv_stop flow R
check_eq "under traffic: none lost" "${R[udp5001.lost]:-x}" 0
check_num "under traffic: packets arrived" "${R[udp5001.n]:-0}" -ge 500
tdm_snap Q "$A" $D
check_eq "under traffic: queue empty after release" "${Q[qlen]:-}" 0

# The drops counter of a full queue without hold is not a hold drop.
check "limit 10, no hold" tc_a qdisc change dev $D root tdmwin limit 10 \
	cycle-time 1s window 0 1ms base-time 0
h0=${Q[x.hold_drops]:-0}
d0=${Q[drops]:-0}
send --count 30 --size $SIZE --at-phase 1000000000:100000000
tdm_snap Q "$A" $D
check_eq "full queue without hold: dropped" "$(( ${Q[drops]:-0} - d0 ))" 20
check_eq "full queue without hold: not hold_drops" "${Q[x.hold_drops]:-0}" "$h0"

tdm_exit
