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
# receivers and captures, the testbed's emulator (testbed/wire.sh: the
# wire and switch testbeds, time dilation) and quiet-host rule
# (testbed/quiet.sh), and ktap-like sub-results (selftests/tap.sh):
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

NS_LIST=()
TDM_BG_PIDS=()
TDM_SYSCTL_SAVED=()
TDM_CLOCK_SAVED=
TDM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tdmwin-st.XXXXXX")

# ---- results --------------------------------------------------------------

# TAP, checks and the exit: selftests/tap.sh (tdm_ok, tdm_fail, tdm_skip,
# check, check_num, ..., tdm_exit, tdm_skip_all), which the host tests
# share.
# shellcheck source=tap.sh
. "$TDM_DIR/tap.sh"

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

# tdm_stop_bg: stop the test's background processes (TDM_BG_PIDS) and
# wait for them, e.g. before removing what they hold open.
tdm_stop_bg() {
	local pid
	for pid in "${TDM_BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${TDM_BG_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	TDM_BG_PIDS=()
}

tdm_cleanup() {
	local kv
	tdm_stop_bg
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

tdm_rps() { # NS DEV...: in one exec (each costs a lot under TCG)
	local ns=$1
	shift
	# shellcheck disable=SC2016  # expanded by the inner sh
	ip netns exec "$ns" sh -c 'for d; do
		for f in /sys/class/net/"$d"/queues/rx-*/rps_cpus; do
			[ -e "$f" ] && echo 1 >"$f"
		done
	done; :' sh "$@" 2>/dev/null
}

# The wire and switch testbeds: the emulated NICs, wires and switch port,
# their figures and time dilation (testbed/wire.sh).
# shellcheck source=../testbed/wire.sh
. "$TDM_ROOT/testbed/wire.sh"

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

# TOL_EARLY, TOL_LATE, OUTLIER_PERMILLE and tdm_allowed: tolerance.sh, which
# the host tests that judge captures share.
# shellcheck source=tolerance.sh
. "$TDM_DIR/tolerance.sh"
# The wire testbed's stragglers at the sender's tap (WIRE_* above).
# shellcheck disable=SC2034
WIRE_STRAY_PERMILLE=$OUTLIER_PERMILLE

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

# shellcheck source=../testbed/quiet.sh
. "$TDM_ROOT/testbed/quiet.sh"

# tdm_timing: quiet.sh.

# ---- judged on the host (testbed/tdmtb/deferred.py) ---------------------------

# What parses captures or counts statistics runs on the host after the
# guest, on its real CPU, not under TCG: the test copies its captures into
# its judge directory (TDM_JUDGE_DIR, set by run.sh under TDM_JUDGE_ROOT)
# and writes there, in judge.tsv, what to run and what must hold; make
# check runs `testbed/tb judge ROOT` after the guest.  The checks are
# reported there, one TAP result per test.
#
# tdm_judge KEY TOOL ARG...: KEY's fields are TOOL's key=value or JSON
#   output (TOOL: "tb COMMAND", "tdmstat-check COMMAND", or "tdmstat
#   $TDMSTAT COMMAND": the build the guest runs); an argument @FILE is a file
#   here, copied into the judge directory by its base name, and @PREFIX*
#   every file PREFIX* (tdmstat's outputs), passed as the prefix (PREFIX and
#   FILE absolute paths); either may follow LABEL= (tdmstat_check.py sweep).
#   @NAME, not a path: NAME in the judge directory (an output, or a file
#   copied before).  TOOL "tdmplot COMMAND" passes when it draws.
# tdm_judge_check DESC KEY EXPR: EXPR (a Python expression of KEY's
#   fields, integers, allowed(n) for the outliers allowed among n, f("key")
#   for a field by its name) must hold.  Under tdm_timing it is a timing
#   check: skipped here on a loaded host, a TODO under TDM_TIMING=report.
# A test run by itself, not through run.sh: its own directory, emptied
# when it first writes there, under build/judge/KERNEL/00-TEST.
tdm_judge_dir() {
	[ -z "${TDM_JUDGE_DIR:-}" ] || return 0
	TDM_JUDGE_DIR=$TDM_ROOT/build/judge/$(uname -r)/00-$(basename "$0" .sh)
	rm -rf "$TDM_JUDGE_DIR"
	tdm_log "judged on the host: testbed/tb judge ${TDM_JUDGE_DIR%/*}"
}

tdm_judge_rec() {
	local f
	tdm_judge_dir
	for f in "$@"; do
		[[ $f == *[$'\t\n']* ]] && { tdm_fail "judge: a tab or newline in '$f'"; return 1; }
	done
	mkdir -p "$TDM_JUDGE_DIR" || return 1
	[ -e "$TDM_JUDGE_DIR/judge.tsv" ] ||
		printf 'permille\t%d\n' "$OUTLIER_PERMILLE" >"$TDM_JUDGE_DIR/judge.tsv"
	(IFS=$'\t'; echo "$*") >>"$TDM_JUDGE_DIR/judge.tsv"
}

tdm_judge() {
	local key=$1 a label args=()
	shift
	tdm_judge_dir
	for a in "$@"; do
		label=
		if [[ $a == [A-Za-z0-9_]*=@* ]]; then
			label=${a%%=@*}=
			a=${a#"$label"}
		fi
		if [[ $a == @/*\* ]]; then
			a=${a%\*}
			compgen -G "${a#@}*" >/dev/null ||
				{ tdm_fail "judge $key: no file ${a#@}*"; return 1; }
			mkdir -p "$TDM_JUDGE_DIR" && cp "${a#@}"* "$TDM_JUDGE_DIR/" || return 1
			a=@${a##*/}
		elif [[ $a == @/* ]]; then
			[ -f "${a#@}" ] || { tdm_fail "judge $key: no file ${a#@}"; return 1; }
			mkdir -p "$TDM_JUDGE_DIR" && cp "${a#@}" "$TDM_JUDGE_DIR/" || return 1
			a=@${a##*/}
		fi
		args+=("$label$a")
	done
	tdm_judge_rec judge "$key" "${args[@]}"
}

tdm_judge_check() {
	local timing=-
	[ -n "$TDM_TIMING_NOW" ] && timing=$TDM_TIMING
	tdm_judge_rec check "$2" "$timing" "$1" "$3" && tdm_log "judged on the host: $1"
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
