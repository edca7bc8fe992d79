# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The testbed's emulator of the world: the wire testbed (a sender, its
# NIC's FIFO and a serialized wire: tdm_wire) and the switch testbed
# (senders, their NICs and wires, a switch port with a shallow buffer, a
# receiver: tdm_switch), their figures, time dilation (TDM_TIMESCALE), and
# the taps that tell the switch port's drops apart.  Documentation/
# testbed.rst describes them; testbed/tdmtb holds the models they are
# judged against (the ideal port, the port's drops, the pcap judge).
#
# Sourced by selftests/lib.sh, after its namespaces, tc wrapper and
# python helper (setup_ns, nsx, tdm_tc, py, tdm_rps, tdm_log), which it
# uses; a test sources lib.sh, not this file.  The host's tools read the
# figures from here (tools/bench, tools/demo).

# The wire testbed's figures, one set for every test that uses it
# (tdmwin_wire.sh says why each is what it is): a 50 Mbit/s wire behind a
# 64-frame FIFO; frames of 1400 bytes of UDP payload (1466 bytes on the
# wire, 235 us) offered at 3000/s against windows [2,8) and [12,16) ms of
# a 20 ms cycle, which carry about 2100/s; a frame's time on the wire may
# lie WIRE_SLACK outside its window, at most WIRE_STRAY_PERMILLE per mille
# of them (set below: the suite's allowance for departures, OUTLIER_PERMILLE: a
# straggler is a vCPU stalled between the gate's dequeue and the tap's
# stamp; seen on a quiet host: 0 to 7 of 5,700-7,100 frames, up to
# 130 us, and CI failed once on the 1 per mille this was before), none
# more than WIRE_FAR_NS; the plans' guard is WIRE_GUARD ns.
# These figures are at time scale 1 (TDM_TIMESCALE below); WIRE_SLACK and
# WIRE_FAR_NS stand for the emulator's timing noise and never scale.
# shellcheck disable=SC2034  # used by the tests that source this file
WIRE_MBIT=50
WIRE_RING=64
WIRE_CYCLE=20000000
WIRE_WINS="2000000:6000000,12000000:4000000"
WIRE_SIZE=1400
WIRE_RATE=3000
WIRE_SLACK=100000
# A straggler's limit: a stall of the emulated vCPU between the gate's
# dequeue and the tap's stamp, even on a quiet host: 792 us seen once in
# 5754 frames (CI run, host load 0.00), 1,061 us once in 8,368 (mq on
# 6.12, host load 0.00), 2,264 us once in 7,069 (mq on 6.12, host load
# 0.00, stop 20), so 3 ms: still below the 3.6 ms by which a gate that
# ignores the wire overruns its windows (tdmwin_wire.sh's calibration),
# which the stray allowance catches besides (40 % of its frames outside).
WIRE_FAR_NS=3000000
# shellcheck disable=SC2034
WIRE_GUARD=1000000
# etf's drops in tdmwin_txtime.sh: at most 20 %.  etf drops a frame its
# timer releases more than its delta late, which TCG's stalls of a few
# milliseconds do now and then whatever the stamps are (35 and 84 of 5,800
# frames in two runs on a quiet host).  (This was also the share of
# frames allowed outside their windows after the emulated NIC, until CI
# saw 20.7 % under mq while the sender's tap saw 3 of 7,735 out: the
# frames netem delays are now told apart, tdm_wire_run's N[outside_gate].)
# shellcheck disable=SC2034
WIRE_NIC_PERMILLE=200
# Judging needs at least this many frames on the wire per run (about one
# second of what the windows carry).  Fewer is the emulator not keeping up
# with the offered traffic (a loaded host, a debug kernel): a timing
# matter; none at all is a failure.
# shellcheck disable=SC2034
WIRE_MIN_FRAMES=2000

# ---- time dilation (Documentation/testbed.rst, "Time dilation") ----------
#
# TDM_TIMESCALE=S (an integer >= 1 that divides WIRE_MBIT: 1, 2, 5, 10, 25)
# runs the switch testbed S times slower: every emulated wire (the NICs'
# and the switch port's serializers) at WIRE_MBIT / S, and every time of
# a plan on it (window, dead time, guard, cycle) and of its buffers S
# times longer, so that the frames per window and the switch buffer in
# frames stay what they are at scale 1.  The emulator's own timing noise
# does not scale (netem's and tbf's timers 0.2-0.5 ms late under TCG,
# vCPU stalls of milliseconds), so it shrinks against a frame time by S.
# The tolerances that stand for that noise (TOL_EARLY, TOL_LATE,
# WIRE_SLACK, WIRE_FAR_NS, OUTLIER_PERMILLE, the hostload rule) therefore
# do NOT scale.  The figures below (WIRE_CYCLE, WIRE_GUARD, ...) are at
# scale 1; a switch testbed client scales its times with tdm_ts and rates
# with WIRE_LINE_MBIT.  The wire tests of tdm_wire (tdmwin_wire.sh,
# tdmwin_txtime.sh) always run at scale 1: they judge the gate at the
# sender's tap against tolerances calibrated there, not the switch port.
# The default is the smallest scale at which one sender at line rate loses
# at most 0.1 % at the switch port (testbed_calibrate.sh; the measurement
# is in Documentation/testbed.rst).
TDM_TIMESCALE_DEFAULT=10

# tdm_timescale S: set the scale (and WIRE_LINE_MBIT, WIRE_LINE_KBIT, the
# switch testbed's line rate).  Called once below with TDM_TIMESCALE from
# the environment; a test that must run at another scale calls it again,
# before tdm_switch, and says why.
tdm_timescale() {
	if ! [[ $1 =~ ^[1-9][0-9]*$ ]] || (( WIRE_MBIT % $1 )); then
		echo "TDM_TIMESCALE must be an integer >= 1 that divides WIRE_MBIT ($WIRE_MBIT), not '$1'" >&2
		return 1
	fi
	TDM_TIMESCALE=$1
	WIRE_LINE_MBIT=$(( WIRE_MBIT / TDM_TIMESCALE ))
	WIRE_LINE_KBIT=$(( WIRE_MBIT * 1000 / TDM_TIMESCALE ))
}

# tdm_ts NS: a time of scale 1 (ns, or any unit) at the current scale.
tdm_ts() { echo $(( $1 * TDM_TIMESCALE )); }

tdm_timescale "${TDM_TIMESCALE:-$TDM_TIMESCALE_DEFAULT}" || exit 1

# tdm_wire_serializer NS DEV FRAMES [add|replace] [KBIT]: DEV's root qdisc
# sends frames one after the other at KBIT kbit/s (default WIRE_LINE_KBIT,
# the switch testbed's dilated line rate), counting 24 bytes of preamble,
# FCS and gap per frame (as tdmwin counts them), behind a FIFO of FRAMES
# frames; a frame beyond it is dropped and counted (tc -s: drops).
# netem's rate never bursts (tbf would release a burst after idle time:
# ../shared/reference/testbed.md).  Every emulated NIC and switch port of
# the testbeds is one of these.
tdm_wire_serializer() {
	# rate RATE PACKETOVERHEAD (positional in tc's netem syntax)
	tc -n "$1" qdisc "${4:-replace}" dev "$2" root netem \
		rate "${5:-$WIRE_LINE_KBIT}kbit" 24 limit "$3"
}

# tdm_wire NS_A NS_M NS_B: a sender, a NIC queue in front of a wire, and a
# receiver.
#
#   NS_A tdmA 198.18.0.1 ==veth== tdmB [br0 in NS_M] tdmW ==veth== tdmR 198.18.0.2 NS_B
#
# tdmW's root qdisc is the NIC: netem serializes frames at WIRE_MBIT
# Mbit/s, counting 24 bytes of preamble, FCS and gap per frame (as tdmwin
# counts them), behind a FIFO of WIRE_RING frames (the TX ring; frames
# beyond it are dropped).  veth gives no backpressure, so everything the sender's qdisc
# releases waits in that FIFO, as in a NIC ring.  A tap on tdmW
# (tdm_cap_start NAME "$NS_M" tdmW) stamps each frame when netem lets it
# go, i.e. when its last bit has left the wire.  Receive processing on
# every hop runs on CPU 0: pin the sender there too (taskset -c 0), so
# that the qdisc's and netem's clocks are one CPU's clock.
tdm_wire() {
	local a=$1 m=$2 b=$3
	# One TX queue, as a NIC queue with launch time (veth has one per
	# possible CPU otherwise).
	ip link add tdmA netns "$a" numtxqueues 1 numrxqueues 1 type veth \
		peer name tdmB netns "$m" || return 1
	ip link add tdmW netns "$m" type veth peer name tdmR netns "$b" || return 1
	ip -n "$m" link add br0 type bridge || return 1
	ip -n "$m" link set tdmB master br0
	ip -n "$m" link set tdmW master br0
	# Scale 1 always (above, "time dilation").
	tdm_wire_serializer "$m" tdmW "$WIRE_RING" add $((WIRE_MBIT * 1000)) || return 1
	ip -n "$m" link set br0 up
	ip -n "$m" link set tdmB up
	ip -n "$m" link set tdmW up
	tdm_rps "$m" tdmB
	tdm_rps "$m" tdmW
	tdm_hosts "$a" tdmA "$b" tdmR
}

# tdm_wire_setup: namespaces A, M, B and the wire between them, or the
# whole test is skipped with the reason.
tdm_wire_setup() {
	setup_ns A M B || tdm_skip_all "cannot create network namespaces"
	tdm_wire "$A" "$M" "$B" ||
		tdm_skip_all "cannot build the wire (bridge, netem rate)"
}

# tdm_wire_run NAME BASE TOL_EARLY GUARD [FLOWS]: 3 s of UDP to port 5001
# from $A, pinned to CPU 0, through the wire of tdm_wire, seen by two taps:
# on the sender's device (tdmA), where the gate acts, and after the NIC
# (netem, in $M).  Windows of a plan based at BASE (ns on CLOCK_REALTIME).
# Both captures are judged on the host after the guest (selftests/lib.sh's
# tdm_judge), under the keys NAME_tx (P below) and NAME (N):
#   P: the sender's tap, each frame put on a perfect wire at WIRE_MBIT in
#      the order and at the instants the qdisc let it go (--serialize), and
#      judged against its window less GUARD at the end (what the gate
#      promises: the frame ends GUARD before the window does), TOL_EARLY
#      before and WIRE_SLACK after.
#   N: the tap after the emulated NIC, each frame's time on the wire before
#      its stamp, against the whole window with the same tolerances.  It
#      carries netem's own timer latency and TCG's stalls, which no guard
#      covers every time: each frame is matched to its end on P's perfect
#      wire, netem's lateness is the difference (N[nic_late_*_ns]), and
#      N[outside_gate] counts the frames outside even with netem's
#      lateness beyond GUARD (the plan's budget for it) taken back.  The
#      tests judge N by that (outside_gate), strictly; outside is reported.
# Sets TDM_LOADED if the host was busy meanwhile.
tdm_wire_run() {
	local name=$1 base=$2 early=$3 guard=$4 flows=${5:-1} mark w wins=
	for w in ${WIRE_WINS//,/ }; do
		wins+="${wins:+,}${w%%:*}:$(( ${w#*:} - guard ))"
	done
	mark=$(tdm_hostload_mark)
	tdm_cap_start "$name" "$M" tdmW "udp dst port 5001" || return 1
	tdm_cap_start "${name}_tx" "$A" tdmA "udp dst port 5001" || return 1
	nsx "$A" taskset -c 0 "${TDM_PYU[@]}" send --dst "$TDM_IP_B" --port 5001 \
		--duration 3 --rate "$WIRE_RATE" --size "$WIRE_SIZE" --flows "$flows" \
		--sport 40000 | sed 's/^/# sender: /'
	sleep 0.5	# the FIFO drains
	tdm_cap_stop "${name}_tx"
	tdm_cap_stop "$name"
	tdm_judge "${name}_tx" tb pcap "@$TDM_TMP/${name}_tx.pcap" --port 5001 \
		--cycle "$WIRE_CYCLE" --base "$base" --windows "$wins" --tol-early "$early" \
		--tol-late "$WIRE_SLACK" --wire-mbit "$WIRE_MBIT" --serialize \
		--far "$WIRE_FAR_NS" --bins 10
	tdm_judge "$name" tb pcap "@$TDM_TMP/$name.pcap" --port 5001 --cycle "$WIRE_CYCLE" \
		--base "$base" --windows "$WIRE_WINS" --tol-early "$early" \
		--tol-late "$WIRE_SLACK" --wire-mbit "$WIRE_MBIT" --far "$WIRE_FAR_NS" \
		--ref "@$TDM_TMP/${name}_tx.pcap" --nic-late "$guard" --bins 10
	tdm_quiet_judge "$mark"
}

# ---- the switch testbed: senders, their NICs, a switch port, a receiver ----
#
# N senders stream to one receiver through a switch whose port toward the
# receiver is the bottleneck (Documentation/testbed.rst draws it):
#
#   S[i] tx0 ==veth== nin<i> [bridge nbr<i>, ns NIC] nout<i> ==veth== swp<i>
#        (the sender's qdisc)            (the NIC: WIRE_RING frames,
#                                         the sender's wire)
#   [bridge br0, ns SW] swr ==veth== rx0 RX
#        (the switch port: SW_BUF frames, the receiver's wire)
#
# Every NIC and the switch port are tdm_wire_serializer at WIRE_LINE_MBIT
# (WIRE_MBIT at scale 1, TDM_TIMESCALE above); veth
# gives no backpressure, so what a sender's qdisc releases waits in its
# NIC's FIFO, and what the senders' wires carry together beyond the line
# rate waits in the switch port's buffer or is dropped there, counted in
# its qdisc's drops.  A tap on rx0 stamps frames after the switch port.
#
# The scaling (written down in Documentation/testbed.rst): the testbed
# keeps times in proportion, not frame counts.  Its clock runs WIRE_SCALE
# times slower than the deployment it stands for (Documentation/
# deploying.rst: 10 GbE, windows of 1 ms), so a 10 ms window here is a
# 1 ms window there, and TCG's timer noise (hundreds of us) is a few
# percent of a window.  The wire is 50 Mbit/s, not the 1 Gbit/s that a
# scaled 10 GbE would be (the guest cannot forward that through this
# chain), so a frame is 235 us, 2 % of a 10 ms window instead of 0.1 %.
# The switch port's buffer is a shallow switch's per-port share, 144 KiB
# of a 9 MiB buffer shared by 64 ports of 10 GbE (118 us of that wire),
# scaled by the same WIRE_SCALE: 1.18 ms of this wire, 5 frames of 1466
# bytes at 50 Mbit/s (tdm_switch_buf; TDM_SWITCH_BUF overrides).
# shellcheck disable=SC2034
WIRE_SCALE=10
WIRE_REF_MBIT=10000
WIRE_REF_SHARE_BYTES=147456
# The bytes of a frame on the wire beyond its UDP payload: UDP, IPv4 and
# Ethernet headers (42) and preamble, FCS and gap (24, tdm_wire_serializer).
WIRE_FRAME_EXTRA=66
TDM_SW_IP_RX=198.18.2.1
tdm_switch_ip() { echo "198.18.2.$((10 + $1))"; }

# tdm_switch_buf [PAYLOAD]: the switch port's default buffer in frames of
# PAYLOAD bytes of UDP (WIRE_SIZE), at least one.  The same at every
# TDM_TIMESCALE: the dilated wire is S times slower and the buffer's
# drain time S times longer.
tdm_switch_buf() {
	local frame=$(( ${1:-$WIRE_SIZE} + WIRE_FRAME_EXTRA )) f
	f=$(( WIRE_REF_SHARE_BYTES * WIRE_SCALE * WIRE_MBIT / WIRE_REF_MBIT / frame ))
	echo $(( f > 0 ? f : 1 ))
}

# tdm_switch N [BUF]: the testbed above with N senders and a switch port
# buffer of BUF frames (default tdm_switch_buf).  Sets S[1..N] (the
# senders' namespaces), NIC, SW, RX and SW_BUF; tx0 has TDM_SWITCH_TXQ TX
# queues (default 1; taprio wants more); the senders' addresses are
# tdm_switch_ip I, the receiver's TDM_SW_IP_RX, with static neighbours and
# static forwarding entries (no ARP, and no frame flooded to the other
# senders' ports).  Receive processing on every hop runs on CPU 0.
tdm_switch() {
	local n=$1 i v mac_rx mac
	SW_BUF=${2:-${TDM_SWITCH_BUF:-$(tdm_switch_buf)}}
	declare -gA S
	S=()
	setup_ns SW NIC RX || return 1
	ip -n "$SW" link add br0 type bridge || return 1
	ip link add swr netns "$SW" type veth peer name rx0 netns "$RX" || return 1
	tdm_switch_port "$RX" rx0 swr swp || return 1
	ip -n "$RX" addr add "$TDM_SW_IP_RX/24" dev rx0
	ip -n "$SW" link set br0 up
	ip -n "$RX" link set rx0 up
	mac_rx=$(nsx "$RX" cat /sys/class/net/rx0/address)
	TDM_SW_MAC_RX=$mac_rx
	bridge -n "$SW" fdb add "$mac_rx" dev swr master static
	for i in $(seq "$n"); do
		setup_ns "SND$i" || return 1
		v=SND$i
		S[$i]=${!v}
		tdm_switch_nic "$i" "${S[$i]}" tx0 numtxqueues "${TDM_SWITCH_TXQ:-1}" ||
			return 1
		ip -n "${S[$i]}" addr add "$(tdm_switch_ip "$i")/24" dev tx0
		ip -n "${S[$i]}" link set tx0 up
		mac=$(nsx "${S[$i]}" cat /sys/class/net/tx0/address)
		tdm_switch_neigh "$i"
		ip -n "$RX" neigh replace "$(tdm_switch_ip "$i")" lladdr "$mac" \
			dev rx0 nud permanent
		bridge -n "$NIC" fdb add "$mac_rx" dev "nout$i" master static
		bridge -n "$SW" fdb add "$mac" dev "swp$i" master static
	done
}

# tdm_switch_neigh I: sender I's static neighbour entry for the receiver
# (tdm_switch sets it; a DPDK net_af_packet port's start flushes tx0's
# neighbours, permanent ones too: Documentation/bypass.rst).
tdm_switch_neigh() {
	ip -n "${S[$1]}" neigh replace "$TDM_SW_IP_RX" lladdr "$TDM_SW_MAC_RX" \
		dev tx0 nud permanent
}

# tdm_switch_port RXNS RXDEV PORT IN: the switch's port PORT (in $SW, made
# by the caller, the peer of RXDEV in RXNS, the receiver) joins the bridge
# br0 and drains toward the receiver at WIRE_LINE_MBIT with a buffer of SW_BUF
# frames.  Records where the switch testbed's helpers below find the
# port, the receiver's device and the port's inputs: the switch's ports of
# the senders' wires are named IN<i> (tdm_switch_nic).
tdm_switch_port() {
	TDM_SW_RXNS=$1 TDM_SW_RXDEV=$2 TDM_SW_PORT=$3 TDM_SW_IN=$4
	ip -n "$SW" link set "$TDM_SW_PORT" master br0 || return 1
	tdm_wire_serializer "$SW" "$TDM_SW_PORT" "$SW_BUF" add || return 1
	ip -n "$SW" link set "$TDM_SW_PORT" up
	tdm_rps "$SW" "$TDM_SW_PORT"
	tdm_rps "$TDM_SW_RXNS" "$TDM_SW_RXDEV"
}

# tdm_switch_nic I NS DEV [LINK ARGS...]: sender I's device DEV in NS
# (made here, a veth with LINK ARGS) reaches the switch's bridge br0 in $SW
# through its own emulated NIC in $NIC:
#
#   NS DEV ==veth== nin<I> [bridge nbr<I>] nout<I> ==veth== <TDM_SW_IN><I> [br0]
#
# nout<I> is a tdm_wire_serializer of WIRE_RING frames: the NIC's ring
# and the sender's wire.  Call tdm_switch_port first.
tdm_switch_nic() {
	local i=$1 ns=$2 dev=$3 port=$TDM_SW_IN$1 v
	shift 3
	ip link add "$dev" netns "$ns" "$@" type veth peer name "nin$i" \
		netns "$NIC" || return 1
	ip link add "nout$i" netns "$NIC" type veth peer name "$port" \
		netns "$SW" || return 1
	ip -n "$NIC" link add "nbr$i" type bridge || return 1
	ip -n "$NIC" link set "nin$i" master "nbr$i"
	ip -n "$NIC" link set "nout$i" master "nbr$i"
	tdm_wire_serializer "$NIC" "nout$i" "$WIRE_RING" add || return 1
	ip -n "$SW" link set "$port" master br0
	for v in "nbr$i" "nin$i" "nout$i"; do ip -n "$NIC" link set "$v" up; done
	ip -n "$SW" link set "$port" up
	tdm_rps "$NIC" "nin$i"
	tdm_rps "$NIC" "nout$i"
	tdm_rps "$SW" "$port"
}

# tdm_free_plan FILE I CYCLE_NS WINDOW_NS: the plan of free-running sender
# I (from 1): one burst of WINDOW_NS per cycle of its own clock (tdmgen
# --pace windows --plan FILE --name s), the cycle 1/64 longer than sender
# I-1's, as unsynchronized clocks drift, exaggerated so that the bursts
# meet within a run of seconds.
tdm_free_plan() {
	cat >"$1" <<EOF
[global]
clock       realtime
cycle_time  $(($3 + ($2 - 1) * $3 / 64))ns
[sender s]
window 0 ${4}ns
EOF
}

# tdm_switch_sink PORT [NS]: a UDP socket on the receiver (NS, default
# $RX) that never reads (the kernel drops what overflows it, after the
# receiver's device counted it, and no ICMP goes back to the senders),
# until the test ends.
tdm_switch_sink() {
	local ns=${2:-$RX} ready i
	ready=$TDM_TMP/sink-$1-$ns.ready
	# ip netns exec itself in the background, not nsx: $! must be the
	# process that holds our stdout, so that tdm_cleanup's kill ends it.
	ip netns exec "$ns" "$TDM_PY" -S -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
open(sys.argv[2], "w").close()
time.sleep(1e9)' "$1" "$ready" &
	TDM_BG_PIDS+=($!)
	for i in $(seq 100); do
		[ -f "$ready" ] && return 0
		sleep 0.1
	done
	return 1
}

# tdm_switch_check SENDERS WINDOW_NS DEAD_NS GUARD_NS [PAYLOAD]: can a plan
# of SENDERS windows of WINDOW_NS, each followed by DEAD_NS, work on this
# testbed?  If not, says why on stderr and fails (tdmwin_util.py
# wire-check holds the rules, for the host's tools too).
tdm_switch_check() {
	py wire-check --senders "$1" --window "$2" --dead "$3" --guard "$4" \
		--size "${5:-$WIRE_SIZE}" --mbit "$WIRE_LINE_MBIT" --buffer "$SW_BUF"
}

# tdm_switch_reset: fresh counters, empty FIFOs (the serializers deleted
# and added again: a replace by the same kind keeps the counters).
tdm_switch_reset() {
	local i
	tc -n "$SW" qdisc del dev "$TDM_SW_PORT" root
	tdm_wire_serializer "$SW" "$TDM_SW_PORT" "$SW_BUF" add || return 1
	for i in "${!S[@]}"; do
		tc -n "$NIC" qdisc del dev "nout$i" root
		tdm_wire_serializer "$NIC" "nout$i" "$WIRE_RING" add || return 1
	done
	TDM_SW_RX0=$(nsx "$TDM_SW_RXNS" cat "/sys/class/net/$TDM_SW_RXDEV/statistics/rx_packets")
}

# tdm_netem_empty NS DEV: true when DEV's serializer holds no frame.
tdm_netem_empty() {
	[ "$(tc -n "$1" -s -j qdisc show dev "$2" | py flat --kind netem |
		sed -n 's/^qlen=//p')" = 0 ]
}

# tdm_switch_idle: true when every NIC's FIFO and the switch port's buffer
# are empty.
tdm_switch_idle() {
	local i
	tdm_netem_empty "$SW" "$TDM_SW_PORT" || return 1
	for i in "${!S[@]}"; do
		tdm_netem_empty "$NIC" "nout$i" || return 1
	done
}

# tdm_switch_count ARRAY: once the traffic is over and the FIFOs drained
# (tdm_switch_idle), the frames counted since tdm_switch_reset: nic.I.sent,
# nic.I.drops (sender I's NIC), nic.sent and nic.drops (all of them),
# sw.sent and sw.drops (the switch port), rx (frames the receiver's device
# got).
tdm_switch_count() {
	local -n _sc=$1
	local -A q
	local i
	_sc=([nic.sent]=0 [nic.drops]=0)
	for i in "${!S[@]}"; do
		tdm_kv q "$(tc -n "$NIC" -s -j qdisc show dev "nout$i" | py flat --kind netem)"
		_sc[nic.$i.sent]=${q[packets]:-0}
		_sc[nic.$i.drops]=${q[drops]:-0}
		_sc[nic.sent]=$(( ${_sc[nic.sent]} + ${q[packets]:-0} ))
		_sc[nic.drops]=$(( ${_sc[nic.drops]} + ${q[drops]:-0} ))
	done
	tdm_kv q "$(tc -n "$SW" -s -j qdisc show dev "$TDM_SW_PORT" | py flat --kind netem)"
	_sc["sw.sent"]=${q[packets]:-0}
	_sc["sw.drops"]=${q[drops]:-0}
	_sc["rx"]=$(( $(nsx "$TDM_SW_RXNS" cat "/sys/class/net/$TDM_SW_RXDEV/statistics/rx_packets") - ${TDM_SW_RX0:-0} ))
}

# tdm_switch_taps_start NAME [PORT]: taps on the switch port's inputs
# (every sender's wire as it reaches the switch: swp<i>, inbound) and on
# its output (the receiver's rx0), the first 96 bytes of each frame (the
# tdmgen header) of UDP to PORT (8081) only: tdm_cap_stop waits for a
# capture file to stop growing, which PTP's messages beside the data would
# put off to its time limit.  On tdmd_topology's wire the ports are swm<i>
# and c0.  tdm_switch_taps_stop NAME stops them once the FIFOs drained.
tdm_switch_taps_start() {
	local i f="udp dst port ${2:-8081}"
	for i in "${!S[@]}"; do
		tdm_cap_start "${1}_in$i" "$SW" "$TDM_SW_IN$i" "$f" -Q in -s 96 ||
			{ tdm_switch_taps_stop "$1" >/dev/null; return 1; }
	done
	tdm_cap_start "${1}_out" "$TDM_SW_RXNS" "$TDM_SW_RXDEV" "$f" -s 96 ||
		{ tdm_switch_taps_stop "$1" >/dev/null; return 1; }
}
tdm_switch_taps_stop() {
	local i
	for i in "${!S[@]}"; do tdm_cap_stop "${1}_in$i" >/dev/null; done
	tdm_cap_stop "${1}_out"
}

# tdm_switch_peer_taps_start NAME [PORT]: taps on the far end of every
# sender's device (nin<i> in $NIC, inbound), 96 bytes of each frame of UDP
# to PORT (8081): each frame as it leaves tx0, before its NIC's FIFO,
# whichever way it left.  A tap on tx0 itself sees only what passed
# dev_queue_xmit_nit(): frames of AF_XDP (copy mode) and of a packet socket
# with PACKET_QDISC_BYPASS (DPDK's net_af_packet) leave through
# __dev_direct_xmit() without it (Documentation/bypass.rst).  veth stamps
# them at the peer's netif_rx(), in the sender's transmit call.
# tdm_switch_peer_taps_stop NAME.
tdm_switch_peer_taps_start() {
	local i
	for i in "${!S[@]}"; do
		tdm_cap_start "${1}_peer$i" "$NIC" "nin$i" "udp dst port ${2:-8081}" \
			-Q in -s 96 || { tdm_switch_peer_taps_stop "$1" >/dev/null; return 1; }
	done
}
tdm_switch_peer_taps_stop() {
	local i
	for i in "${!S[@]}"; do tdm_cap_stop "${1}_peer$i"; done
}

# tdm_switch_port_judge KEY NAME [PORT]: the switch port's drops told
# apart from the taps of tdm_switch_taps_start NAME, on the host after the
# guest (selftests/lib.sh's tdm_judge; testbed/tb port-drops), its fields
# under KEY for tdm_judge_check: arrived, departed, dropped; collision
# (another sender's frame was in the buffer: senders overlapping at the
# port) and self (one sender's frames alone overfilled it, which a wire at
# the port's own rate cannot do: the emulator bunched them,
# Documentation/testbed.rst).
tdm_switch_port_judge() {
	local i ins=()
	for i in "${!S[@]}"; do ins+=("@$TDM_TMP/${2}_in$i.pcap"); done
	tdm_judge "$1" tb port-drops --in "${ins[@]}" --out "@$TDM_TMP/${2}_out.pcap" \
		--port "${3:-8081}"
}


# ---- the corner turn: N senders to M receivers through one switch --------
#
# tdm_corner N M [BUF]: N senders, each behind its NIC and wire as in the
# switch testbed (tdm_switch_nic), into one switch whose M ports toward M
# receivers drain at WIRE_LINE_MBIT with BUF frames each (default
# tdm_switch_buf):
#
#   S[i] tx0 == NIC i == swp<i> [bridge br0, ns SW] swr<j> ==veth== rx0 RCV[j]
#
# Receiver j (from 1) is tdm_corner_ip J, sender i tdm_switch_ip I, all in
# one /24, with static neighbours and static forwarding entries: a frame
# goes to its receiver's port only.  Sets S[1..N], RCV[1..M], NIC, SW and
# SW_BUF.  The counters and taps below (tdm_corner_reset, _idle, _count,
# _taps_start/_stop) are the switch testbed's, for every port.
tdm_corner_ip() { echo "198.18.2.$((100 + $1))"; }

tdm_corner() {
	local n=$1 m=$2 i j v mac sw_fdb="" nic_fdb=""
	local -A rxmac neigh
	SW_BUF=${3:-${TDM_SWITCH_BUF:-$(tdm_switch_buf)}}
	declare -gA S RCV
	S=() RCV=()
	# Under TCG every command costs: one per namespace where it can.
	setup_ns SW NIC || return 1
	ip -n "$SW" link add br0 type bridge || return 1
	ip -n "$SW" link set br0 up
	for j in $(seq "$m"); do
		setup_ns "RCV$j" || return 1
		v=RCV$j
		RCV[$j]=${!v}
		ip link add "swr$j" netns "$SW" type veth peer name rx0 \
			netns "${RCV[$j]}" || return 1
		ip -n "$SW" -b - <<-EOF || return 1
			link set swr$j master br0
			link set swr$j up
		EOF
		tdm_wire_serializer "$SW" "swr$j" "$SW_BUF" add || return 1
		ip -n "${RCV[$j]}" -b - <<-EOF || return 1
			addr add $(tdm_corner_ip "$j")/24 dev rx0
			link set rx0 up
		EOF
		tdm_rps "${RCV[$j]}" rx0
		rxmac[$j]=$(ip -n "${RCV[$j]}" -br link show dev rx0 | awk '{ print $3 }')
		sw_fdb+="fdb add ${rxmac[$j]} dev swr$j master static"$'\n'
	done
	TDM_SW_IN=swp
	for i in $(seq "$n"); do
		setup_ns "SND$i" || return 1
		v=SND$i
		S[$i]=${!v}
		tdm_switch_nic "$i" "${S[$i]}" tx0 numtxqueues 1 || return 1
		mac=$(ip -n "${S[$i]}" -br link show dev tx0 | awk '{ print $3 }')
		sw_fdb+="fdb add $mac dev swp$i master static"$'\n'
		v="addr add $(tdm_switch_ip "$i")/24 dev tx0"$'\n'"link set tx0 up"$'\n'
		for j in $(seq "$m"); do
			v+="neigh replace $(tdm_corner_ip "$j") lladdr ${rxmac[$j]} dev tx0 nud permanent"$'\n'
			neigh[$j]+="neigh replace $(tdm_switch_ip "$i") lladdr $mac dev rx0 nud permanent"$'\n'
			nic_fdb+="fdb add ${rxmac[$j]} dev nout$i master static"$'\n'
		done
		ip -n "${S[$i]}" -b - <<<"$v" || return 1
	done
	for j in $(seq "$m"); do
		ip -n "${RCV[$j]}" -b - <<<"${neigh[$j]}" || return 1
	done
	bridge -n "$SW" -b - <<<"$sw_fdb" || return 1
	bridge -n "$NIC" -b - <<<"$nic_fdb" || return 1
	tdm_rps "$SW" $(seq -f 'swr%g' "$m")
}

# tdm_corner_reset: fresh counters and empty FIFOs at every NIC and port.
tdm_corner_reset() {
	local i j
	for j in "${!RCV[@]}"; do
		tc -n "$SW" qdisc del dev "swr$j" root
		tdm_wire_serializer "$SW" "swr$j" "$SW_BUF" add || return 1
		TDM_CORNER_RX0[$j]=$(nsx "${RCV[$j]}" cat /sys/class/net/rx0/statistics/rx_packets)
	done
	for i in "${!S[@]}"; do
		tc -n "$NIC" qdisc del dev "nout$i" root
		tdm_wire_serializer "$NIC" "nout$i" "$WIRE_RING" add || return 1
	done
}
declare -gA TDM_CORNER_RX0

# tdm_corner_idle: true when every NIC's FIFO and every port's is empty.
tdm_corner_idle() {
	local i j
	for j in "${!RCV[@]}"; do
		tdm_netem_empty "$SW" "swr$j" || return 1
	done
	for i in "${!S[@]}"; do
		tdm_netem_empty "$NIC" "nout$i" || return 1
	done
}

# tdm_corner_count ARRAY: as tdm_switch_count, once drained: nic.sent,
# nic.drops, sw.J.sent, sw.J.drops (port J), sw.sent, sw.drops (all
# ports), rx.J and rx (frames the receivers' devices got).
tdm_corner_count() {
	local -n _cc=$1
	local -A q
	local i j r
	_cc=([nic.sent]=0 [nic.drops]=0 [sw.sent]=0 [sw.drops]=0 [rx]=0)
	for i in "${!S[@]}"; do
		tdm_kv q "$(tc -n "$NIC" -s -j qdisc show dev "nout$i" | py flat --kind netem)"
		_cc[nic.sent]=$(( ${_cc[nic.sent]} + ${q[packets]:-0} ))
		_cc[nic.drops]=$(( ${_cc[nic.drops]} + ${q[drops]:-0} ))
	done
	for j in "${!RCV[@]}"; do
		tdm_kv q "$(tc -n "$SW" -s -j qdisc show dev "swr$j" | py flat --kind netem)"
		_cc[sw.$j.sent]=${q[packets]:-0}
		_cc[sw.$j.drops]=${q[drops]:-0}
		_cc[sw.sent]=$(( ${_cc[sw.sent]} + ${q[packets]:-0} ))
		_cc[sw.drops]=$(( ${_cc[sw.drops]} + ${q[drops]:-0} ))
		r=$(( $(nsx "${RCV[$j]}" cat /sys/class/net/rx0/statistics/rx_packets) - ${TDM_CORNER_RX0[$j]:-0} ))
		_cc[rx.$j]=$r
		_cc[rx]=$(( _cc[rx] + r ))
	done
}

# tdm_corner_taps_start NAME [PORT]: a tap on every sender's device (tx0,
# where the gate acts and tdmgen's pacing shows), the first 96 bytes of
# each frame of UDP to PORT (8081): the ideal ports are computed from
# them on the host (tdm_corner_judge).  tdm_corner_taps_stop NAME.
tdm_corner_taps_start() {
	local i
	for i in "${!S[@]}"; do
		tdm_cap_start "${1}_tx$i" "${S[$i]}" tx0 "udp dst port ${2:-8081}" \
			-Q out -s 96 || { tdm_corner_taps_stop "$1" >/dev/null; return 1; }
	done
}
tdm_corner_taps_stop() {
	local i
	for i in "${!S[@]}"; do tdm_cap_stop "${1}_tx$i"; done
}

# tdm_corner_run NAME SECS TDMGEN_ARGS...: one corner-turn run, as the
# corner tests judge it: fresh FIFOs and counters, taps on every sender,
# sender I running tdmgen --corner --plan $TDM_TMP/NAME-I.conf --name fI
# for SECS seconds with TDMGEN_ARGS (--pace, -r, ...; bounded by a
# timeout: a held gate would block its socket), then once every FIFO
# drained the counts checked (every frame sent through a NIC or dropped
# there, through a port or dropped there, at its receiver; each receiver
# got frames) and the ideal ports judged on the host under the key NAME
# (tdm_corner_judge), which must see every frame of the taps.  Sets SENT
# (frames tdmgen sent) and TDM_CORNER_C (tdm_corner_count).  1 when a
# run did not complete.
tdm_corner_run() {
	local name=$1 secs=$2 i pids=() sent
	local -n c=TDM_CORNER_C
	shift 2
	tdm_corner_reset || return 1
	tdm_corner_taps_start "$name" || return 1
	for i in "${!S[@]}"; do
		ip netns exec "${S[$i]}" timeout $((secs + 30)) "$TDMGEN" --corner \
			--plan "$TDM_TMP/$name-$i.conf" --name "f$i" -s "$WIRE_SIZE" \
			-d "${secs}s" -E 0 -j "$@" >"$TDM_TMP/$name-$i.json" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	tdm_wait_for 30 tdm_corner_idle || tdm_log "$name: the FIFOs did not drain in 30 s"
	sleep 0.2
	tdm_corner_taps_stop "$name" >/dev/null
	SENT=0
	for i in "${!S[@]}"; do
		sent=$(sed -n 's/.*"sent":\([0-9]*\),"bytes".*/\1/p' "$TDM_TMP/$name-$i.json")
		[ -n "$sent" ] || { tdm_log "$name: sender $i: $(cat "$TDM_TMP/$name-$i.json")"; return 1; }
		SENT=$((SENT + sent))
	done
	tdm_corner_count TDM_CORNER_C
	tdm_log "$name: sent $SENT; NICs: ${c[nic.sent]} out, ${c[nic.drops]} dropped;" \
		"emulated ports: ${c[sw.sent]} out, ${c[sw.drops]} dropped" \
		"($(for i in "${!RCV[@]}"; do printf '%s ' "${c[sw.$i.drops]}"; done)); receivers: ${c[rx]}"
	check_eq "$name: every frame sent is through a NIC or dropped there" \
		"$(( ${c[nic.sent]} + ${c[nic.drops]} ))" "$SENT"
	check_eq "$name: every frame through the NICs is through a port or dropped there" \
		"$(( ${c[sw.sent]} + ${c[sw.drops]} ))" "${c[nic.sent]}"
	check_eq "$name: the receivers got every frame the ports sent" "${c[rx]}" "${c[sw.sent]}"
	for i in "${!RCV[@]}"; do
		check_num "$name: receiver $i got frames" "${c[rx.$i]}" -gt 0
	done
	tdm_corner_judge "$name" "$name" "$WIRE_SIZE"
	tdm_log "$name: done at $SECONDS s"
	tdm_judge_check "$name: the ideal ports saw every frame of the senders' taps" \
		"$name" "ports == ${#RCV[@]} and arrived + nic_drops == $SENT"
}
declare -gA TDM_CORNER_C

# tdm_corner_judge KEY NAME SIZE [PORT]: the ideal wires and ports of the
# corner testbed on the senders' taps of tdm_corner_taps_start NAME, on
# the host after the guest (testbed/tb ideal-port --by-dest: every
# frame to its receiver's port, each port of SW_BUF frames, each NIC of
# WIRE_RING, wires at WIRE_LINE_MBIT), its fields under KEY: arrived,
# departed, dropped, collision, self, nic_drops over all ports, ports,
# and port<J>.* for each port in the order of the receivers' addresses.
tdm_corner_judge() {
	local i ins=()
	for i in "${!S[@]}"; do ins+=("@$TDM_TMP/${2}_tx$i.pcap"); done
	tdm_judge "$1" tb ideal-port --by-dest --in "${ins[@]}" --size "$3" \
		--mbit "$WIRE_LINE_MBIT" --buffer "$SW_BUF" --ring "$WIRE_RING" \
		--port "${4:-8081}"
}
