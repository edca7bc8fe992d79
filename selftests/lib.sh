# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared helpers for the tdmwin selftests.  Source it from a test:
#
#   . "$(dirname "$0")/lib.sh"
#
# Gives: namespaces with unique names and a cleanup trap, a veth pair
# between two of them (198.18.0.0/15 addresses, static neighbours so that no
# ARP goes through a gate), a tc wrapper using the tree's plugin, one-call
# snapshots of `tc -j -s` output into an associative array, background
# receivers and captures, and ktap-like sub-results:
#
#   ok N - description / not ok N - description / ok N - description # SKIP
#
# ending with the plan "1..N" and a summary.  A test exits 0 (all passed),
# 1 (something failed) or 4 (skipped as a whole, see tdm_skip_all).
#
# A check that holds only on a machine fast enough (a departure within
# milliseconds of its window, a delay below a bound, a rate reached) runs
# as `tdm_timing CHECK ARGS...`: skipped on a loaded host (TDM_LOADED, see
# tdm_quiet_judge), else TDM_TIMING=judge (the default) judges it like any
# other; TDM_TIMING=report (make check-debug: a debug kernel under
# TCG is many times slower) prints its failure as
# "not ok N - ... # TODO timing (TDM_TIMING=report)" and does not count it
# as a failure: the summary gives it as "N timing reported".  A test that
# ran timing checks but had every one of them skipped for load, and failed
# nothing, has not shown what it is for: tdm_exit makes it a skip
# ("SKIP: every timing check skipped: <TDM_LOADED>", exit 4), which run.sh
# counts as a skip even for a core test.

# kselftest exit codes
ksft_pass=0
ksft_fail=1
ksft_skip=4

TDM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TDM_ROOT=$(cd "$TDM_DIR/.." && pwd)
TDM_TC_LIB=${TDM_TC_LIB:-$TDM_ROOT/build/tc}
# Debian's python3; a pyenv shim on the host may not work in the guest.
if [ -x /usr/bin/python3 ]; then TDM_PY=/usr/bin/python3; else TDM_PY=python3; fi
TDM_UTIL=$TDM_DIR/tdmwin_util.py
# The helper as a command (python -S: no site, faster start under TCG).
TDM_PYU=("$TDM_PY" -S "$TDM_UTIL")
# The same through run.sh's python server (tdm_pyc.c; without a server it
# runs TDM_PYU itself), for the commands that end on their own: a python
# start costs seconds under TCG, a fork of the server a few milliseconds.
# Not for a process the test signals, pins to a CPU, or whose command
# reads the namespace's /sys (send --raw-ptp): the server's child is
# neither that process nor in that mount namespace.
export TDM_PY TDM_UTIL
if [ -x "$TDM_ROOT/build/selftests/tdm_pyc" ]; then
	TDM_PYC=("$TDM_ROOT/build/selftests/tdm_pyc")
else
	TDM_PYC=("${TDM_PYU[@]}")
fi

# Addresses: the benchmarking range only.
TDM_IP_A=198.18.0.1
TDM_IP_B=198.18.0.2
TDM_IP6_A=2001:db8:7d3::1
TDM_IP6_B=2001:db8:7d3::2

TDM_N=0
TDM_FAILS=0
TDM_SKIPS=0
TDM_TIMING=${TDM_TIMING:-judge}
TDM_TIMING_NOW=
TDM_TIMING_MISSES=0
# Timing checks judged, and skipped for load with the first reason.
TDM_TIMING_JUDGED=0
TDM_TIMING_SKIPPED=0
TDM_TIMING_WHY=
NS_LIST=()
TDM_BG_PIDS=()
TDM_SYSCTL_SAVED=()
TDM_CLOCK_SAVED=
TDM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tdmwin-st.XXXXXX")

# ---- results --------------------------------------------------------------

tdm_log() { echo "# $*"; }

tdm_ok() {
	TDM_N=$((TDM_N + 1))
	echo "ok $TDM_N - $*"
}

tdm_fail() {
	TDM_N=$((TDM_N + 1))
	if [ -n "$TDM_TIMING_NOW" ] && [ "$TDM_TIMING" = report ]; then
		TDM_TIMING_MISSES=$((TDM_TIMING_MISSES + 1))
		echo "not ok $TDM_N - $* # TODO timing (TDM_TIMING=report)"
		return
	fi
	TDM_FAILS=$((TDM_FAILS + 1))
	echo "not ok $TDM_N - $*"
}

tdm_skip() {
	TDM_N=$((TDM_N + 1))
	TDM_SKIPS=$((TDM_SKIPS + 1))
	echo "ok $TDM_N - $1 # SKIP $2"
}

# check DESC CMD...: passes if CMD succeeds; its output is shown on failure.
check() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		tdm_ok "$desc"
	else
		tdm_fail "$desc"
		tdm_log "  command: $*"
		[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/#   /' | head -n 20
	fi
	return "$rc"
}

# check_fails DESC CMD...: passes if CMD fails.
check_fails() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		tdm_ok "$desc"
		return 0
	fi
	tdm_fail "$desc (succeeded unexpectedly)"
	tdm_log "  command: $*"
	return 1
}

# check_refused DESC ERE CMD...: CMD fails and what it prints matches ERE.
check_refused() {
	local desc=$1 re=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		tdm_fail "$desc: accepted"
		return 1
	fi
	out=$(grep -v '^Usage\|^ \|^$' <<<"$out" | head -n 3 | tr '\n' ' ')
	if grep -qiE -- "$re" <<<"$out"; then
		tdm_ok "$desc: refused ($out)"
	else
		tdm_fail "$desc: refused, but the message '$out' does not match /$re/"
	fi
}

# check_eq DESC GOT WANT
check_eq() {
	if [ "$2" = "$3" ]; then
		tdm_ok "$1"
		return 0
	fi
	tdm_fail "$1: got '$2', want '$3'"
	return 1
}

# check_num DESC GOT OP WANT (OP: -eq -ne -gt -ge -lt -le)
check_num() {
	local desc=$1 got=$2 op=$3 want=$4
	if [[ "$got" =~ ^-?[0-9]+$ ]] && test "$got" "$op" "$want"; then
		tdm_ok "$desc"
		return 0
	fi
	tdm_fail "$desc: got '$got', want $op $want"
	return 1
}

# check_match DESC TEXT ERE: TEXT matches ERE (case-insensitive).
check_match() {
	if grep -qiE -- "$3" <<<"$2"; then
		tdm_ok "$1"
		return 0
	fi
	tdm_fail "$1: '$2' does not match /$3/"
	return 1
}

tdm_exit() {
	local timing=
	[ "$TDM_TIMING_MISSES" = 0 ] || timing=", $TDM_TIMING_MISSES timing reported"
	echo "1..$TDM_N"
	echo "# $((TDM_N - TDM_FAILS - TDM_SKIPS - TDM_TIMING_MISSES)) passed," \
		"$TDM_FAILS failed, $TDM_SKIPS skipped$timing"
	[ "$TDM_FAILS" -eq 0 ] || exit $ksft_fail
	# Timing checks run, none judged: the test's point went unjudged, so
	# it is a skip, not a pass.  run.sh matches these words to tell it
	# from a core test's skip on a machine that cannot run it.
	if [ "$TDM_TIMING_SKIPPED" -gt 0 ] && [ "$TDM_TIMING_JUDGED" -eq 0 ]; then
		tdm_skip_all "every timing check skipped: $TDM_TIMING_WHY"
	fi
	exit $ksft_pass
}

# The whole test cannot run here.
tdm_skip_all() {
	echo "SKIP: $*"
	exit $ksft_skip
}

# ---- environment ----------------------------------------------------------

tdm_require() {
	[ "$(id -u)" -eq 0 ] || tdm_skip_all "needs root"
	local c
	for c in ip tc "$TDM_PY" "$@"; do
		command -v "$c" >/dev/null 2>&1 || tdm_skip_all "$c not installed"
	done
	[ -f "$TDM_TC_LIB/q_tdmwin.so" ] ||
		tdm_skip_all "tc plugin $TDM_TC_LIB/q_tdmwin.so not built (make plugin)"
	# The qdisc must be loaded or loadable (run.sh loads it).
	[ -d /sys/module/sch_tdmwin ] || modprobe -q sch_tdmwin 2>/dev/null ||
		tdm_skip_all "module sch_tdmwin not loaded (use run.sh)"
}

# tc with the tree's plugin; TDM_TC_BIN names another tc (tdmwin_config.sh
# runs stock tc 6.15 through it).
tdm_tc() {
	TC_LIB_DIR=$TDM_TC_LIB "${TDM_TC_BIN:-tc}" "$@"
}

# tdm_use_build DIR RELEASE VAR=NAME...: set each VAR to DIR/san/bin/NAME,
# the sanitizer build, when all of them exist there and RELEASE is empty,
# else to DIR/NAME; and the sanitizers' options (leaks reported, exit code
# 99, UBSan stops at the first report).
tdm_use_build() {
	local dir=$1 sub=/san/bin kv
	shift
	[ -z "$1" ] || sub=
	shift
	for kv in "$@"; do [ -x "$dir$sub/${kv#*=}" ] || sub=; done
	for kv in "$@"; do printf -v "${kv%%=*}" '%s' "$dir$sub/${kv#*=}"; done
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
}

# tdm_san_reports FILE...: show every sanitizer report in these outputs
# (a missing file has none); false if there was one.
tdm_san_reports() {
	local f bad=0
	for f in "$@"; do
		grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: ' \
			"$f" 2>/dev/null || continue
		bad=1
		tdm_log "sanitizer report in ${f##*/}:"
		grep -E -A12 'ERROR: |runtime error:' "$f" | head -n 30 | sed 's/^/#   /'
	done
	return $bad
}

py() {
	"${TDM_PYC[@]}" "$@"
}

# nsx NS CMD...: run in a namespace
nsx() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}

# setup_ns VAR...: create namespaces with unique names, store them in VARs.
setup_ns() {
	local var ns
	for var in "$@"; do
		ns="tdm-${var,,}-$$-$RANDOM"
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
		# No IPv6 unless a test asks: no RS/MLD/DAD frames in the gate.
		nsx "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		nsx "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
		NS_LIST+=("$ns")
		printf -v "$var" '%s' "$ns"
	done
}

cleanup_all_ns() {
	local ns
	for ns in "${NS_LIST[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	NS_LIST=()
}

tdm_cleanup() {
	local pid kv
	for pid in "${TDM_BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${TDM_BG_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	TDM_BG_PIDS=()
	[ -n "$TDM_CLOCK_SAVED" ] && py clock restore "$TDM_CLOCK_SAVED"
	for kv in "${TDM_SYSCTL_SAVED[@]}"; do
		sysctl -qw "$kv"
	done
	TDM_SYSCTL_SAVED=()
	cleanup_all_ns
	rm -rf "$TDM_TMP"
}
trap tdm_cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# tdm_sysctl NAME VALUE: set a sysctl of the guest (the initial namespace);
# tdm_cleanup restores it.
tdm_sysctl() {
	TDM_SYSCTL_SAVED+=("$1=$(sysctl -n "$1")")
	sysctl -qw "$1=$2"
}

# tdm_veth NS_A NS_B [NUMTXQ]: veth pair tdmA (in NS_A, 198.18.0.1/24) and
# tdmB (in NS_B, 198.18.0.2/24), up, with static neighbours.  Sets
# TDM_MAC_A, TDM_MAC_B.
tdm_veth() {
	local a=$1 b=$2 nq=${3:-1}
	ip link add tdmA netns "$a" numtxqueues "$nq" numrxqueues "$nq" type veth \
		peer name tdmB netns "$b" numtxqueues "$nq" numrxqueues "$nq" ||
		return 1
	tdm_hosts "$a" tdmA "$b" tdmB
}

# tdm_hosts NS_A DEV_A NS_B DEV_B: 198.18.0.1/24 on DEV_A, 198.18.0.2/24 on
# DEV_B, both up, static neighbours both ways (no ARP through a gate).
# Sets TDM_MAC_A, TDM_MAC_B.
tdm_hosts() {
	local a=$1 da=$2 b=$3 db=$4
	ip -n "$a" addr add "$TDM_IP_A/24" dev "$da"
	ip -n "$b" addr add "$TDM_IP_B/24" dev "$db"
	ip -n "$a" link set "$da" up
	ip -n "$b" link set "$db" up
	TDM_MAC_A=$(ip netns exec "$a" cat "/sys/class/net/$da/address")
	TDM_MAC_B=$(ip netns exec "$b" cat "/sys/class/net/$db/address")
	ip -n "$a" neigh replace "$TDM_IP_B" lladdr "$TDM_MAC_B" dev "$da" nud permanent
	ip -n "$b" neigh replace "$TDM_IP_A" lladdr "$TDM_MAC_A" dev "$db" nud permanent
	# veth hands each packet to the backlog of the CPU that sent it; a gate
	# dequeues on whichever CPU its timer or the sender runs, so without
	# RPS the receiver would see reordering that the qdisc did not cause.
	# Steer all receive processing to CPU 0 instead.
	tdm_rps "$a" "$da"
	tdm_rps "$b" "$db"
}

tdm_rps() { # NS DEV
	local f
	for f in $(ip netns exec "$1" sh -c "ls /sys/class/net/$2/queues/rx-*/rps_cpus" 2>/dev/null); do
		ip netns exec "$1" sh -c "echo 1 > $f" 2>/dev/null
	done
}

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
#      tests judge N by that, strictly; N[outside] is reported.
# Fills P and N (tdm_kv) and, if the host was busy meanwhile, TDM_LOADED.
tdm_wire_run() {
	local name=$1 base=$2 early=$3 guard=$4 flows=${5:-1} out mark w wins=
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
	out=$(py pcap "$TDM_TMP/$name.pcap" --port 5001 --cycle "$WIRE_CYCLE" \
		--base "$base" --windows "$WIRE_WINS" --tol-early "$early" \
		--tol-late "$WIRE_SLACK" --wire-mbit "$WIRE_MBIT" --far "$WIRE_FAR_NS" \
		--ref "$TDM_TMP/${name}_tx.pcap" --nic-late "$guard" --bins 10)
	tdm_kv N "$out"
	out=$(py pcap "$TDM_TMP/${name}_tx.pcap" --port 5001 --cycle "$WIRE_CYCLE" \
		--base "$base" --windows "$wins" --tol-early "$early" \
		--tol-late "$WIRE_SLACK" --wire-mbit "$WIRE_MBIT" --serialize \
		--far "$WIRE_FAR_NS" --bins 10)
	tdm_kv P "$out"
	tdm_quiet_judge "$mark"
	tdm_log "$name: the gate, on a perfect wire from the sender's tap:" \
		"${P[judged]:-0} frames, ${P[outside]:-?} outside their windows, farthest" \
		"${P[max_out_ns]:-?} ns out; after the emulated NIC: ${N[judged]:-0}" \
		"frames, ${N[outside]:-?} outside, farthest ${N[max_out_ns]:-?} ns out," \
		"${N[outside_gate]:-?} of them not netem's lateness beyond the guard" \
		"(netem late by ${N[nic_late_p50_ns]:-?} ns median," \
		"${N[nic_late_p99_ns]:-?} at the 99th percentile, ${N[nic_late_max_ns]:-?} at most)"
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
		ip -n "${S[$i]}" neigh replace "$TDM_SW_IP_RX" lladdr "$mac_rx" \
			dev tx0 nud permanent
		ip -n "$RX" neigh replace "$(tdm_switch_ip "$i")" lladdr "$mac" \
			dev rx0 nud permanent
		bridge -n "$NIC" fdb add "$mac_rx" dev "nout$i" master static
		bridge -n "$SW" fdb add "$mac" dev "swp$i" master static
	done
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

# tdm_switch_sink PORT: a UDP socket on the receiver that never reads (the
# kernel drops what overflows it, after the receiver's device counted it,
# and no ICMP goes back to the senders), until the test ends.
tdm_switch_sink() {
	local ready=$TDM_TMP/sink-$1.ready i
	# ip netns exec itself in the background, not nsx: $! must be the
	# process that holds our stdout, so that tdm_cleanup's kill ends it.
	ip netns exec "$RX" "$TDM_PY" -S -c 'import socket, sys, time
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

# tdm_switch_idle: true when every NIC's FIFO and the switch port's buffer
# are empty.
tdm_switch_idle() {
	local i
	[ "$(tc -n "$SW" -s -j qdisc show dev "$TDM_SW_PORT" | py flat --kind netem |
		sed -n 's/^qlen=//p')" = 0 ] || return 1
	for i in "${!S[@]}"; do
		[ "$(tc -n "$NIC" -s -j qdisc show dev "nout$i" | py flat --kind netem |
			sed -n 's/^qlen=//p')" = 0 ] || return 1
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

# tdm_switch_port_drops ARRAY NAME [PORT]: the switch port's drops told
# apart from the taps of tdm_switch_taps_start NAME (tdmwin_util.py
# port-drops): arrived, departed, dropped; collision (another sender's
# frame was in the buffer: senders overlapping at the port) and self (one
# sender's frames alone overfilled it, which a wire at the port's own rate
# cannot do: the emulator bunched them, Documentation/testbed.rst).
tdm_switch_port_drops() {
	local i ins=()
	for i in "${!S[@]}"; do ins+=("$TDM_TMP/${2}_in$i.pcap"); done
	tdm_kv "$1" "$(py port-drops --in "${ins[@]}" --out "$TDM_TMP/${2}_out.pcap" \
		--port "${3:-8081}")"
}

# tdm_switch_taps_complete DROPS COUNTS: did the taps behind DROPS
# (tdm_switch_port_drops) see every frame that reached the switch port and
# every one it dropped, by the port's own counters (COUNTS, from
# tdm_switch_count)?  Only then can they tell its drops apart.  If not,
# says what they missed and fails.
tdm_switch_taps_complete() {
	local -n _d=$1 _c=$2
	[ "${_d[arrived]:-}" = "${_c[nic.sent]}" ] &&
		[ "${_d[dropped]:-}" = "${_c[sw.drops]}" ] && return 0
	echo "the taps saw ${_d[arrived]:-no} of the ${_c[nic.sent]} frames that" \
		"reached the switch port and ${_d[dropped]:-no} of the ${_c[sw.drops]} it dropped"
	return 1
}

# tdm_veth_ipv6: IPv6 on the pair made by tdm_veth (no DAD, static neighbours).
tdm_veth_ipv6() {
	local a=$1 b=$2
	nsx "$a" sysctl -qw net.ipv6.conf.tdmA.disable_ipv6=0
	nsx "$b" sysctl -qw net.ipv6.conf.tdmB.disable_ipv6=0
	ip -n "$a" addr add "$TDM_IP6_A/64" dev tdmA nodad
	ip -n "$b" addr add "$TDM_IP6_B/64" dev tdmB nodad
	ip -n "$a" neigh replace "$TDM_IP6_B" lladdr "$TDM_MAC_B" dev tdmA nud permanent
	ip -n "$b" neigh replace "$TDM_IP6_A" lladdr "$TDM_MAC_A" dev tdmB nud permanent
}

# ---- timing tolerances ------------------------------------------------------

# Where a captured packet may lie relative to its window, for every test
# that judges departures from a capture (see tdmwin_gate.sh for why):
# [off - TOL_EARLY, off + len + TOL_LATE) in ns, and at most
# OUTLIER_PERMILLE per mille of the judged packets outside.  They stand
# for the emulator's timing noise (TCG's timers, vCPU skew and stalls),
# which time dilation does not scale: they do not follow TDM_TIMESCALE.
# shellcheck disable=SC2034  # used by the tests that source this file
TOL_EARLY=${TDM_TOL_EARLY_NS:-1000000}
# shellcheck disable=SC2034
TOL_LATE=${TDM_TOL_LATE_NS:-1500000}
OUTLIER_PERMILLE=${TDM_OUTLIER_PERMILLE:-5}
# The wire testbed's stragglers at the sender's tap (WIRE_* above).
# shellcheck disable=SC2034
WIRE_STRAY_PERMILLE=$OUTLIER_PERMILLE

# tdm_allowed N: outliers allowed among N judged packets.
tdm_allowed() { echo $(( $1 * OUTLIER_PERMILLE / 1000 )); }

# Arrivals at a receiver behind the senders' gates (tdmstat_capture.sh),
# against the sender's windows, not its departures:
#   - late: a packet the gate let go inside its window arrives after
#     end + TOL_LATE when the receive path (a bridge and two veth hops,
#     softirq work on CPU 0, tdm_rps) took longer than TOL_LATE.  That is
#     the emulator's delay, not the gate's, so late arrivals are reported,
#     not judged: on a quiet host they were 0 in most runs, but 14 of
#     1,800 in one (host load 0.04 CPUs), above the departures' 5 per
#     mille that this once allowed them.
#   - transit (RX stamp - tdmgen's TX stamp, one guest's clock): never
#     negative but for the vCPUs' disagreement on the time, a few hundred
#     microseconds with clocksource=tsc (../shared/reference/testbed.md),
#     the skew TOL_EARLY allows for: TRANSIT_MIN_NS = -TOL_EARLY.
# shellcheck disable=SC2034
TRANSIT_MIN_NS=$((-TOL_EARLY))

# ---- the quiet-host rule ----------------------------------------------------

# Timing under TCG can be judged only on a quiet host: when the host's CPUs
# are wanted by other work, it preempts the vCPU threads for milliseconds
# and a frame can leave up to ~3 ms after the qdisc let it go (taprio fails
# a strict departure check then too; ../shared/reference/testbed.md).
# vm-run samples the host every 0.5 s (testbed/guest/hostload) into
# $TDM_HOSTLOAD: how many CPUs ran something other than this guest.  The
# host is quiet when that stays below TDM_QUIET_CPUS (0.30: the host has 2
# CPUs and the guest 2 vCPUs, so a third of a CPU of other work is already
# a vCPU preempted about one interval in six; measured idle: 0.00-0.05).
# Outside vm-run (no TDM_HOSTLOAD) the host cannot be measured and is
# taken as quiet, which the log says.
TDM_QUIET_CPUS=${TDM_QUIET_CPUS:-0.30}
TDM_LOADED=

tdm_hostload_mark() { # prints the number of samples so far
	if [ -n "${TDM_HOSTLOAD:-}" ] && [ -r "$TDM_HOSTLOAD" ]; then
		wc -l <"$TDM_HOSTLOAD"
	else
		echo 0
	fi
}

# tdm_hostload_since MARK: "mean max" of the samples after MARK.
tdm_hostload_since() {
	if [ -z "${TDM_HOSTLOAD:-}" ] || [ ! -r "$TDM_HOSTLOAD" ]; then
		echo "0.00 0.00"
		return
	fi
	awk -v m="$1" 'NR > m { s += $2; n++; if ($2 > x) x = $2 }
		END { printf "%.2f %.2f\n", n ? s / n : 0, x }' "$TDM_HOSTLOAD"
}

# tdm_quiet_wait SECONDS: wait, bounded, until the last 4 samples (2 s) of
# the host are quiet; 1 if they never were (TDM_LOADED says how busy).
tdm_quiet_wait() {
	local secs=$1 end=$((SECONDS + $1)) mean
	if [ -z "${TDM_HOSTLOAD:-}" ]; then
		tdm_log "host load unknown (not run by vm-run): timing judged as on a quiet host"
		return 0
	fi
	# Bounded by time, not by polls: on a loaded host one poll (tail, awk
	# and a sleep in a starved guest) takes seconds, and 2 * SECONDS polls
	# took minutes.
	while [ "$SECONDS" -lt "$end" ]; do
		mean=$(tail -n 4 "$TDM_HOSTLOAD" 2>/dev/null |
			awk '{ s += $2; n++ } END { if (n == 4) printf "%.2f", s / n }')
		if [ -n "$mean" ] && awk -v m="$mean" -v q="$TDM_QUIET_CPUS" 'BEGIN { exit !(m < q) }'; then
			TDM_LOADED=
			return 0
		fi
		sleep 0.5
	done
	TDM_LOADED="the host stayed busy for $secs s (other work on ${mean:-?} CPUs, quiet below $TDM_QUIET_CPUS)"
	return 1
}

# tdm_quiet_judge MARK: was the host quiet since MARK (a mean below
# TDM_QUIET_CPUS)?  Sets TDM_LOADED to the measured load if not.
tdm_quiet_judge() {
	local load
	load=$(tdm_hostload_since "$1")
	tdm_log "host load during the run: other work on ${load% *} CPUs (mean), ${load#* } (max)"
	if awk -v m="${load% *}" -v q="$TDM_QUIET_CPUS" 'BEGIN { exit !(m < q) }'; then
		TDM_LOADED=
		return 0
	fi
	TDM_LOADED="host loaded: other work on ${load% *} CPUs during the run (quiet below $TDM_QUIET_CPUS)"
	return 1
}

# tdm_timing CHECK ARGS...: a check of timing (check, check_num, ...),
# judged only on a quiet host: with TDM_LOADED set it is a skip that says
# why.  With TDM_TIMING=report a failure is reported, not judged (see the
# top of this file).
tdm_timing() {
	local rc
	if [ -n "$TDM_LOADED" ]; then
		tdm_skip "$2" "$TDM_LOADED"
		TDM_TIMING_SKIPPED=$((TDM_TIMING_SKIPPED + 1))
		TDM_TIMING_WHY=${TDM_TIMING_WHY:-$TDM_LOADED}
		return 0
	fi
	TDM_TIMING_JUDGED=$((TDM_TIMING_JUDGED + 1))
	TDM_TIMING_NOW=1
	"$@"
	rc=$?
	TDM_TIMING_NOW=
	return "$rc"
}

# ---- tc state -------------------------------------------------------------

# tdm_snap ARRAY NS DEV [flat options...]: fill the associative array ARRAY
# with the flattened `tc -j -s qdisc show` object of the tdmwin qdisc
# (default selector: kind tdmwin, first one).  Keys look like
# options.cycle_time, options.windows.0.offset, x.window_packets (xstats,
# wherever tc put them), qlen, backlog, drops; count = number matched;
# child.1:1.kind, child.1:1.options.limit for the qdiscs below classes
# (the default fifos are invisible: shown with "invisible").
tdm_snap() {
	local ns=$2 dev=$3
	tdm_snap_json "$1" "$(tdm_tc -n "$ns" -j -s qdisc show dev "$dev" invisible)" \
		"${@:4}"
}

# tdm_snap_json ARRAY JSON [flat options...]: tdm_snap of a dump taken
# earlier (a test that must take the dump at a given moment, and can take
# python's start-up only after it).
tdm_snap_json() {
	local -n _arr=$1
	local line
	_arr=()
	while IFS= read -r line; do
		_arr["${line%%=*}"]=${line#*=}
	done < <(printf '%s\n' "$2" | py flat --kind tdmwin "${@:3}")
}

# The same for `tc -s class show` (text: tc 6.1 has no JSON for classes),
# selecting a class by handle (e.g. 1:1): keys count (all classes), kind,
# leaf, bytes, packets, drops, qlen.
tdm_snap_class() {
	local -n _carr=$1
	local ns=$2 dev=$3 handle=$4 line
	_carr=()
	while IFS= read -r line; do
		_carr["${line%%=*}"]=${line#*=}
	done < <(tdm_tc -n "$ns" -s class show dev "$dev" |
		 py classes --handle "$handle")
}

# tdm_opts_sig NS DEV: the qdiscs of DEV with their options, as tc prints
# them in JSON without statistics (for "unchanged" comparisons).
tdm_opts_sig() {
	tdm_tc -n "$1" -j qdisc show dev "$2"
}

# ---- traffic --------------------------------------------------------------

# tdm_recv_start NAME NS ARGS...: UDP receiver in the background; results go
# to $TDM_TMP/NAME.out when stopped with tdm_recv_stop NAME (which counts
# what already reached its sockets); tdm_recv_wait waits for a count.
tdm_recv_start() {
	local name=$1 ns=$2 i
	shift 2
	rm -f "$TDM_TMP/$name.ready" "$TDM_TMP/$name.out" "$TDM_TMP/$name.count"
	ip netns exec "$ns" "${TDM_PYU[@]}" recv --ready "$TDM_TMP/$name.ready" \
		--out "$TDM_TMP/$name.out" --count-file "$TDM_TMP/$name.count" "$@" &
	eval "TDM_PID_$name=$!"
	TDM_BG_PIDS+=($!)
	for i in $(seq 100); do
		[ -f "$TDM_TMP/$name.ready" ] && return 0
		sleep 0.1
	done
	echo "receiver $name did not start" >&2
	return 1
}

# tdm_sent [FILE]: the count of a `tdmwin_util.py send` summary ("sent=N ..."),
# from FILE or stdin.
tdm_sent() {
	sed -n 's/^sent=\([0-9]*\).*/\1/p' "$@"
}

# tdm_recv_wait NAME N [SECONDS]: wait until receiver NAME has received N
# packets (all its ports together), for at most SECONDS (60): instead of a
# fixed sleep, a slow machine gets the time it needs and a fast one waits no
# longer than the packets take.  False if they did not all come.
tdm_recv_count() {
	cat "$TDM_TMP/$1.count" 2>/dev/null || echo 0
}
tdm_recv_has() {
	[ "$(tdm_recv_count "$1")" -ge "$2" ]
}
tdm_recv_wait() {
	tdm_wait_for "${3:-60}" tdm_recv_has "$1" "$2"
}

# tdm_recv_stop NAME ARRAY: stop the receiver, load its counts into ARRAY
# (keys like udp5001.n, udp5001.lost, udp5001.reorder, ptp_eth.n).
tdm_recv_stop() {
	local name=$1 pidvar="TDM_PID_$1" line
	local -n _rarr=$2
	kill -INT "${!pidvar}" 2>/dev/null
	wait "${!pidvar}" 2>/dev/null
	_rarr=()
	[ -f "$TDM_TMP/$name.out" ] || return 1
	while IFS= read -r line; do
		_rarr["${line%%=*}"]=${line#*=}
	done <"$TDM_TMP/$name.out"
}

# tdm_cap_start NAME NS DEV FILTER [TCPDUMP_ARG...]: tcpdump with ns
# timestamps to $TDM_TMP/NAME.pcap, returns when it listens.
tdm_cap_start() {
	local name=$1 ns=$2 dev=$3 filter=$4 i
	shift 4
	rm -f "$TDM_TMP/$name.pcap"
	ip netns exec "$ns" tcpdump -i "$dev" -n -U -Z root --time-stamp-precision=nano \
		"$@" -w "$TDM_TMP/$name.pcap" "$filter" 2>"$TDM_TMP/$name.tcpdump" &
	eval "TDM_CAP_$name=$!"
	TDM_BG_PIDS+=($!)
	for i in $(seq 100); do
		grep -q "listening on" "$TDM_TMP/$name.tcpdump" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "tcpdump $name did not start:" >&2
	cat "$TDM_TMP/$name.tcpdump" >&2
	return 1
}

# tdm_cap_stop NAME: once the traffic is over, let tcpdump write what it has
# (until the file has not grown for 0.5 s, at most 30 s: a slow machine
# gets the time it needs), then stop it.
tdm_cap_stop() {
	local pidvar="TDM_CAP_$1" f=$TDM_TMP/$1.pcap size last=-1 still=0 i
	for i in $(seq 300); do
		size=$(stat -c %s "$f" 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			still=$((still + 1))
			[ $still -ge 5 ] && break
		else
			still=0 last=$size
		fi
		sleep 0.1
	done
	kill -INT "${!pidvar}" 2>/dev/null
	wait "${!pidvar}" 2>/dev/null
	grep -E 'captured|dropped' "$TDM_TMP/$1.tcpdump" | sed 's/^/#   tcpdump: /'
}

# tdm_tc_call_ms NS: milliseconds one tc call takes in NS (the mean of
# three), for tests whose deadlines must be long against a tc call: a few
# hundred ms under TCG, seconds on a debug kernel.
tdm_tc_call_ms() {
	local t0
	t0=$(tdm_now)
	for _ in 1 2 3; do tdm_tc -n "$1" qdisc show dev lo >/dev/null; done
	echo $(( ($(tdm_now) - t0) / 3000000 ))
}

# tdm_held_account RX SENDER_PID NS DEV [TAP]: for a test whose gate held a
# while: stop the sender (TERM), wait until receiver RX has what it sent
# less the qdisc's drops (hold drops: the queue was full while held; and
# drops at the limit while it drained), stop RX and the capture TAP, and
# check that every packet arrived or is a counted drop, in order.  Leaves
# the receiver's counts in TDM_ACCOUNT.
declare -A TDM_ACCOUNT
tdm_held_account() {
	local rx=$1 pid=$2 ns=$3 dev=$4 tap=${5:-} n_sent n_drop
	local -A _q
	kill -TERM "$pid"
	wait "$pid"
	n_sent=$(tdm_sent "$TDM_TMP/$rx.sender")
	tdm_snap _q "$ns" "$dev"
	n_drop=${_q[drops]:-0}
	tdm_recv_wait "$rx" $((n_sent - n_drop))
	tdm_recv_stop "$rx" TDM_ACCOUNT
	[ -n "$tap" ] && tdm_cap_stop "$tap"
	tdm_log "sent $n_sent, dropped by the qdisc $n_drop (hold drops ${_q[x.hold_drops]:-0})"
	check_eq "every packet arrives or is a counted qdisc drop" \
		"$(( ${TDM_ACCOUNT[udp5001.n]:-0} + n_drop ))" "$n_sent"
	check_eq "the missing ones are exactly the qdisc's drops, in order" \
		"${TDM_ACCOUNT[udp5001.lost]:-x}:${TDM_ACCOUNT[udp5001.reorder]:-x}" "$n_drop:0"
}

# tdm_kv ARRAY TEXT: load key=value lines (from TEXT) into ARRAY.
tdm_kv() {
	local -n _kv=$1
	local line
	_kv=()
	while IFS= read -r line; do
		case $line in
		\#*) echo "$line" ;;
		*=*) _kv["${line%%=*}"]=${line#*=} ;;
		esac
	done <<<"$2"
}

# Nanoseconds on a clock (CLOCK_REALTIME by default).  CLOCK_REALTIME
# comes from bash's EPOCHREALTIME (microseconds): python's start-up takes
# seconds under TCG, longer than some of the intervals measured with it.
tdm_now() {
	case ${1:-CLOCK_REALTIME} in
	CLOCK_REALTIME) echo "${EPOCHREALTIME/./}000" ;;
	*) py clock now "$1" ;;
	esac
}

# tdm_wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds, for
# at most SECONDS of time (not a number of polls: one poll of tc and python
# can take seconds on a slow machine).
tdm_wait_for() {
	local end=$((SECONDS + $1))
	shift
	while [ "$SECONDS" -lt "$end" ]; do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# Save the clocks now; tdm_cleanup restores them.
tdm_clock_save() {
	TDM_CLOCK_SAVED=$TDM_TMP/clock.saved
	py clock save "$TDM_CLOCK_SAVED"
}

# ---- value normalisation (tc's JSON may spell these differently) ----------

# tdm_bool VALUE: 1 or 0
tdm_bool() {
	case ${1,,} in
	true | 1 | on | yes) echo 1 ;;
	false | 0 | off | no | "" | null) echo 0 ;;
	*) echo "?$1" ;;
	esac
}

# tdm_clk VALUE: TAI, REALTIME, MONOTONIC or BOOTTIME
tdm_clk() {
	local c=${1^^}
	case $c in
	0) c=REALTIME ;;
	1) c=MONOTONIC ;;
	7) c=BOOTTIME ;;
	11) c=TAI ;;
	esac
	echo "${c#CLOCK_}"
}

# tdm_prios ARRAY [PREFIX]: the bypass priorities of a snapshot as "3,7"
# (from a JSON array, a "3,7" string or a bit mask "0x88").
tdm_prios() {
	local -n _p=$1
	local pre=${2:-options.bypass_prios} v i out=
	if [ -n "${_p[$pre.len]:-}" ]; then
		for ((i = 0; i < _p[$pre.len]; i++)); do
			out+=${out:+,}${_p[$pre.$i]}
		done
		echo "$out"
		return
	fi
	v=${_p[$pre]:-}
	if [[ $v =~ ^0x[0-9a-fA-F]+$ ]]; then
		for ((i = 0; i < 16; i++)); do
			(((v >> i) & 1)) && out+=${out:+,}$i
		done
		echo "$out"
		return
	fi
	v=${v//[\[\] ]/}
	[ "$v" = none ] && v=
	echo "$v"
}

# ---- the module -------------------------------------------------------------

# Load sch_tdmwin the way run.sh did (it exports TDM_KO when it used insmod).
tdm_module_load() {
	[ -d /sys/module/sch_tdmwin ] && return 0
	if [ -n "${TDM_KO:-}" ] && [ -f "$TDM_KO" ]; then
		insmod "$TDM_KO"
	elif modprobe sch_tdmwin 2>/dev/null; then
		return 0
	else
		insmod "$TDM_ROOT/build/kmod/$(uname -r)/sch_tdmwin.ko"
	fi
}
