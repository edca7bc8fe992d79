#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lease: with `lease TIME`, the gated class holds once no renewal
# (`tc qdisc change ... renew`, or setting the lease) came for TIME on
# CLOCK_BOOTTIME.  Packets queue as on hold, nothing gated leaves, PTP and
# bypass traffic still do; a renewal releases and kicks the queue, and
# every held packet arrives, none lost.  Each expiry is counted once.
# Without a lease nothing holds however long nobody renews.  Bad values are
# refused with the kernel's reason.  Under mq the lease is the device's:
# set through one instance, seen, held and renewed through every one.
#
# Departures are judged at a tap on the sender's device: none after the
# last renewal (its tc call returned) + lease + one cycle (the window the
# gate may still have been in) + TDM_TAP_TOL; and the lease does not end
# early: frames still left up to a cycle before renewal + lease.

# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
tdm_require tcpdump

# The tap stamps a frame when the qdisc hands it to the device, on the
# same host clock as the test's own reads: 100 us covers the stamp's
# distance from the dequeue (see the developers' brief).
TDM_TAP_TOL=100000
CYCLE_NS=20000000

setup_ns A B || tdm_skip_all "cannot create network namespaces"
tdm_veth "$A" "$B" || tdm_skip_all "cannot create a veth pair"
D=tdmA
declare -A Q R

tc_a() { tdm_tc -n "$A" "$@"; }
chg() { tc_a qdisc change dev "$D" root tdmwin "$@"; }
SIZE=100

# The lease must be long against one renewal, a tc call: a few hundred ms
# under TCG, seconds on a debug kernel.  Ten calls' worth, at least 2 s,
# in whole seconds (the text dump's unit).
per_call_ms=$(tdm_tc_call_ms "$A")
LEASE_MS=$(( per_call_ms * 10 < 2000 ? 2000 : (per_call_ms * 10 + 999) / 1000 * 1000 ))
tdm_log "one tc call: ${per_call_ms} ms; lease ${LEASE_MS} ms"

# ---- bad input --------------------------------------------------------------
check "add tdmwin: cycle 20ms, window [0,15) ms" tc_a qdisc add dev "$D" root \
	handle 1: tdmwin cycle-time 20ms window 0 15ms limit 5000 clockid CLOCK_REALTIME
check_refused "renew without a lease" "Nothing to renew" chg renew
check_refused "lease below 100 ms" "Lease must be 0 \(none\) or from 100 ms to 1 h" \
	chg lease 99ms
check_refused "lease above 1 h" "Lease must be 0 \(none\) or from 100 ms to 1 h" \
	chg lease 3601s
check_refused "lease without a time" "needs TIME or off" chg lease
check_refused "lease with a bad time" "invalid TIME" chg lease 1x
tdm_snap Q "$A" $D
check_eq "refused values left no lease" "${Q[options.lease]:-none}" none

# ---- without a lease nothing holds ------------------------------------------
tdm_recv_start free "$B" --bind "$TDM_IP_B" --ports 5001
nsx "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --count 300 \
	--size $SIZE --rate 300 >/dev/null
tdm_recv_wait free 300
tdm_recv_stop free R
check_eq "no lease: 1 s of traffic all arrives" "${R[udp5001.n]:-x}:${R[udp5001.lost]:-x}" 300:0
tdm_snap Q "$A" $D
check_eq "no lease: never held" "${Q[x.lease_held]:-x}:${Q[x.lease_expiries]:-x}" 0:0

# ---- a lease, renewed, then not ----------------------------------------------
# A renewer in the background, as tdmd's member does it.  The lease is
# long against one tc call under TCG (up to a second on a debug kernel).
renewer() { while :; do chg renew >/dev/null 2>&1; sleep 0.25; done; }
check "set lease ${LEASE_MS}ms" chg lease ${LEASE_MS}ms
renewer &
renewer_pid=$!
TDM_BG_PIDS+=("$renewer_pid")
tdm_snap Q "$A" $D
check_eq "dump: lease" "${Q[options.lease]:-}" $((LEASE_MS * 1000000))
check_num "dump: time left > 0" "${Q[options.lease_left]:-0}" -gt 0
check_num "dump: time left <= lease" "${Q[options.lease_left]:-0}" -le $((LEASE_MS * 1000000))
check_match "text dump shows the lease" "$(tc_a qdisc show dev $D)" "lease $((LEASE_MS / 1000))s left [0-9]+ms"

tdm_sysctl net.core.netdev_max_backlog 100000
tdm_cap_start tap "$A" "$D" "udp dst port 5001" || tdm_skip_all "tcpdump failed"
tdm_recv_start rx "$B" --bind "$TDM_IP_B" --ports 5001
ip netns exec "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --duration 600 \
	--size $SIZE --rate 500 >"$TDM_TMP/rx.sender" &
sender=$!
TDM_BG_PIDS+=("$sender")
check "renewed: traffic flows" tdm_recv_wait rx 300
tdm_snap Q "$A" $D
check_eq "renewed: not held, no expiry" "${Q[x.lease_held]:-x}:${Q[x.lease_expiries]:-x}" 0:0
kill "$renewer_pid"
wait "$renewer_pid" 2>/dev/null

# The last renewal: its instant lies between the two reads.
mark=$(tdm_hostload_mark)
t_before=$(tdm_now)
check "last renewal" chg renew
t_after=$(tdm_now)
held() { tdm_snap Q "$A" "$D"; [ "${Q[x.lease_held]:-0}" = 1 ]; }
tdm_wait_for $((LEASE_MS / 1000 + 30)) held
check_eq "the lease runs out (held within lease + 30 s)" "${Q[x.lease_held]:-x}" 1
n_held=${Q[x.window_packets]:-0}
sleep 0.5
tdm_snap Q "$A" $D
check_eq "held: nothing gated leaves" "${Q[x.window_packets]:-0}" "$n_held"
check_num "held: packets queue" "${Q[qlen]:-0}" -gt 0
check_eq "held: one expiry" "${Q[x.lease_expiries]:-x}" 1
check_num "held: time left <= 0" "${Q[options.lease_left]:-1}" -le 0
check_match "text: ran out" "$(tc_a qdisc show dev $D)" "ran-out .* ago"
check_match "text xstats: lease-held" "$(tc_a -s qdisc show dev $D)" "lease-held"
check_eq "held: not the hold flag" "$(tdm_bool "${Q[options.hold]:-}")" 0
sleep 0.3
tdm_snap Q "$A" $D
check_eq "held: seen again, still one expiry" "${Q[x.lease_expiries]:-x}" 1

t_renew=$(tdm_now)
check "renew releases" chg renew
tdm_snap Q "$A" $D
check_eq "renewed: not held, expiry kept" "${Q[x.lease_held]:-x}:${Q[x.lease_expiries]:-x}" 0:1
got=$(tdm_recv_count rx)
check "released: traffic flows again" tdm_recv_wait rx $((got + 100))
check "lease off" chg lease off
tdm_held_account rx "$sender" "$A" "$D" tap

# Departures at the tap around the expiry.
tdm_quiet_judge "$mark"
tdm_judge span tb span "@$TDM_TMP/tap.pcap" --port 5001 --to "$t_renew"
lease_ns=$((LEASE_MS * 1000000))
tdm_log "the last renewal returned at $t_after ns (lease $lease_ns ns); departures judged on the host"
tdm_timing tdm_judge_check "no departure after renewal + lease + one cycle" span \
	"last_before <= $((t_after + lease_ns + CYCLE_NS + TDM_TAP_TOL))"
tdm_timing tdm_judge_check "the lease did not end early" span \
	"last_before >= $((t_before + lease_ns - CYCLE_NS))"
tdm_judge_check "departures resumed after the renewal" span 'first_after > 0'

# Lease off: nothing holds any more.
tdm_snap Q "$A" $D
check_eq "lease off: gone from the dump" "${Q[options.lease]:-none}" none
sleep 0.5
tdm_recv_start off "$B" --bind "$TDM_IP_B" --ports 5001
nsx "$A" "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 --count 100 \
	--size $SIZE --rate 200 >/dev/null
tdm_recv_wait off 100
tdm_recv_stop off R
check_eq "lease off: traffic flows" "${R[udp5001.n]:-x}" 100

# An expiry that nobody saw (no traffic, no dump) is counted by the renewal.
tdm_snap Q "$A" $D
e0=${Q[x.lease_expiries]:-0}
check "lease ${LEASE_MS}ms, no traffic" chg lease ${LEASE_MS}ms
sleep $((LEASE_MS / 1000 + 1))
check "renew after an unseen expiry" chg renew
tdm_snap Q "$A" $D
check_eq "the unseen expiry was counted, once" "$(( ${Q[x.lease_expiries]:-0} - e0 ))" 1
check "delete" tc_a qdisc del dev "$D" root

# ---- one lease per device under mq -------------------------------------------
M=tdmM
if ip -n "$A" link add $M numtxqueues 2 type veth peer name ${M}p numtxqueues 2 2>/dev/null &&
   ip -n "$A" link set $M up; then
	mqa() { tc_a qdisc "$1" dev "$M" parent "1:$2" handle "$2"0: tdmwin cycle-time 20ms \
		window 0 15ms link-speed 1000 "${@:3}"; }
	check "mq with two tdmwin" tc_a qdisc add dev $M root handle 1: mq
	check "tdmwin on queue 1 with a lease" mqa add 1 lease ${LEASE_MS}ms
	check "tdmwin on queue 2 without" mqa add 2
	declare -A Q1 Q2
	tdm_snap Q2 "$A" $M --parent 1:2
	check_eq "queue 2 shows the device's lease" "${Q2[options.lease]:-}" $((LEASE_MS * 1000000))
	sleep $((LEASE_MS / 1000 + 1))
	tdm_snap Q1 "$A" $M --parent 1:1
	tdm_snap Q2 "$A" $M --parent 1:2
	check_eq "both held" "${Q1[x.lease_held]:-x}:${Q2[x.lease_held]:-x}" 1:1
	check "renew through queue 2" tc_a qdisc change dev "$M" parent 1:2 handle 20: tdmwin renew
	tdm_snap Q1 "$A" $M --parent 1:1
	tdm_snap Q2 "$A" $M --parent 1:2
	check_eq "both released" "${Q1[x.lease_held]:-x}:${Q2[x.lease_held]:-x}" 0:0
	check_num "queue 1's lease renewed" "${Q1[options.lease_left]:-0}" -gt 0
	check_eq "one device, one count" "${Q1[x.lease_expiries]:-x}:${Q2[x.lease_expiries]:-x}" 1:1
else
	tdm_skip "one lease per device under mq" "cannot create a two-queue veth"
fi

tdm_exit
