# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the tdmstat selftests (source after lib.sh and tdmrx_lib.sh):
# a switch (a bridge in its own namespace) with a receiver namespace R and
# N sender namespaces S1..SN, each sender's tdmwin gate from a plan file,
# tdmgen senders, `tdmstat capture` through tdmrx.ko in the background, and
# tdmstat_check.py for the outputs, run on the host after the guest
# (lib.sh's tdm_judge ... tdmstat-check).
#
#   ts_require; ts_topology 3          # R: r0 198.18.2.1; Si: s0 198.18.2.(10+i)
#   ts_gate i PLAN                     # tdmwin on Si from [sender] number i-1
#   ts_capture_start cap -p PLAN -e 3 ... ; ts_send 1 -r 1000pps -d 2s ... ;
#   ts_send_wait; ts_capture_wait cap
#
# tdmstat and tdmgen are the sanitizer builds (build/us/san/bin) when they
# exist (TDMSTAT_RELEASE=1: the release builds); a sanitizer report in
# their output fails the test (ts_san_check).

TS_BUILD=${TS_BUILD:-$TDM_ROOT/build/us}
tdm_use_build "$TS_BUILD" "${TDMSTAT_RELEASE:-}" TDMSTAT=tdmstat TDMGEN=tdmgen
TS_IP_R=198.18.2.1
# shellcheck disable=SC2034
TS_PORT=8081
TS_N=0
declare -A TS_PID
declare -a S

ts_require() {
	tdm_require tcpdump "$@"
	{ [ -x "$TDMSTAT" ] && [ -x "$TDMGEN" ]; } ||
		tdm_skip_all "tdmstat/tdmgen not built in $TS_BUILD (make tools)"
	tdmrx_load || tdm_skip_all "tdmrx.ko not loadable ($TDMRX_KO missing? make modules-testbed)"
	[ -c /dev/tdmrx ] || tdm_skip_all "no /dev/tdmrx"
}

ts_ip() { echo "198.18.2.$((10 + $1))"; }

# _ts_port NS DEV IP SWPORT: a veth from NS into the switch, receive
# processing of both ends on CPU 0 (one tdmrx ring, no reordering by RPS).
_ts_port() {
	local ns=$1 dev=$2 ip=$3 sw=$4
	ip link add "$dev" netns "$ns" type veth peer name "$sw" netns "$SW" || return 1
	ip -n "$SW" link set "$sw" master br0 up
	ip -n "$ns" addr add "$ip/24" dev "$dev"
	ip -n "$ns" link set "$dev" up
	tdm_rps "$ns" "$dev"
	tdm_rps "$SW" "$sw"
}

# ts_topology N: namespaces SW (bridge br0), R (receiver, dev r0) and
# S[1..N] (senders, dev s0), static neighbours both ways.
ts_topology() {
	local n=$1 i mac_r mac v
	TS_N=$n
	setup_ns SW R || return 1
	ip -n "$SW" link add br0 type bridge || return 1
	ip -n "$SW" link set br0 up
	_ts_port "$R" r0 $TS_IP_R swr || return 1
	mac_r=$(nsx "$R" cat /sys/class/net/r0/address)
	for i in $(seq "$n"); do
		setup_ns "S$i" || return 1
		v=S$i
		S[i]=${!v}
		_ts_port "${S[i]}" s0 "$(ts_ip "$i")" "sws$i" || return 1
		mac=$(nsx "${S[i]}" cat /sys/class/net/s0/address)
		ip -n "${S[i]}" neigh replace $TS_IP_R lladdr "$mac_r" dev s0 nud permanent
		ip -n "$R" neigh replace "$(ts_ip "$i")" lladdr "$mac" dev r0 nud permanent
	done
}

# ts_plan_windows PLAN K: "cycle window OFF LEN [window OFF LEN...]" of the
# K-th [sender] section (0-based) of an explicit plan file, in tc syntax.
ts_plan_windows() {
	awk -v want="$2" '
		{ sub(/#.*/, "") }
		/^[ \t]*cycle_time[ \t]/ { cyc = $2 }
		/^[ \t]*\[sender / { k++ }
		/^[ \t]*window[ \t]/ && k - 1 == want { w = w " window " $2 " " $3 }
		END { if (cyc == "" || w == "") exit 1; print cyc w }' "$1"
}

# ts_gate I PLAN: tdmwin on S[I]'s s0 with the windows of sender I-1 of
# PLAN, base time 0 on CLOCK_TAI (tdmstat -b 0 uses the same epoch).
ts_gate() {
	local i=$1 spec
	spec=$(ts_plan_windows "$2" $((i - 1))) || return 1
	read -r -a spec <<<"$spec"
	# shellcheck disable=SC2068  # the words of the spec
	tdm_tc -n "${S[i]}" qdisc replace dev s0 root handle 1: tdmwin \
		cycle-time "${spec[0]}" base-time 0 clockid CLOCK_TAI ${spec[@]:1}
}

# ts_gate_2x5ms PLAN: write to PLAN the two-sender plan (14 ms cycle, a
# 5 ms window each, 2 ms dead time after each) and gate S1 and S2 by it;
# false, with a failed check, if a gate cannot be set.
ts_gate_2x5ms() {
	local i
	cat >"$1" <<'PLANEOF'
# 14 ms cycle, two 5 ms windows, 2 ms dead time after each
[global]
cycle_time 14ms

[sender s1]
window 0 5ms

[sender s2]
window 7ms 5ms
PLANEOF
	for i in 1 2; do
		check "tdmwin gate on sender $i" ts_gate $i "$1" || return 1
	done
}

ts_ungate() {
	tdm_tc -n "${S[$1]}" qdisc del dev s0 root 2>/dev/null
	return 0
}

# ts_capture_start [--in NS DEV] NAME ARGS...: tdmstat capture -i r0 -j
# ARGS in R (--in: -i DEV in NS; DEV "-": no -i, for ring:NAME) in the
# background (JSON summary in $TDM_TMP/NAME.json, table and messages in
# $TDM_TMP/NAME.err); returns once it is recording (so not with -q).
ts_capture_start() {
	local ns=$R dev=(-i r0) name
	if [ "$1" = --in ]; then
		ns=$2
		dev=(-i "$3")
		[ "$3" = - ] && dev=()
		shift 3
	fi
	name=$1
	shift
	rm -f "$TDM_TMP/$name.out" "$TDM_TMP/$name.err"
	# not through nsx: $! must be tdmstat itself (signals, wait)
	ip netns exec "$ns" "$TDMSTAT" capture "${dev[@]}" "$@" >"$TDM_TMP/$name.out" 2>"$TDM_TMP/$name.err" &
	TS_PID[$name]=$!
	TDM_BG_PIDS+=($!)
	tdm_wait_for 20 grep -qE "recording|reading" "$TDM_TMP/$name.err" && return 0
	tdm_log "tdmstat $name did not start recording:"
	sed 's/^/#   /' "$TDM_TMP/$name.err"
	kill "${TS_PID[$name]}" 2>/dev/null
	return 1
}

# ts_capture_wait NAME [SECONDS]: wait for it (SIGINT after SECONDS,
# default 60); returns its exit status.
ts_capture_wait() {
	local name=$1 secs=${2:-60} pid=${TS_PID[$1]} i
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		tdm_log "tdmstat $name still running after $secs s: SIGINT"
		kill -INT "$pid"
	fi
	wait "$pid"
}

# ts_send I ARGS...: tdmgen -j -i I-1 ARGS in S[I] in the background, to R
# (summary in $TDM_TMP/send$I.json).
ts_send() {
	local i=$1
	shift
	ip netns exec "${S[i]}" "$TDMGEN" -j -i $((i - 1)) "$@" $TS_IP_R \
		>"$TDM_TMP/send$i.json" 2>"$TDM_TMP/send$i.err" &
	TS_PID[send$i]=$!
	TDM_BG_PIDS+=($!)
}

# ts_send_wait: wait for every sender; fails if one failed.
ts_send_wait() {
	local i rc=0
	for i in $(seq "$TS_N"); do
		[ -n "${TS_PID[send$i]:-}" ] || continue
		wait "${TS_PID[send$i]}" || { rc=1; tdm_log "tdmgen $i failed:"; sed 's/^/#   /' "$TDM_TMP/send$i.err"; }
		TS_PID[send$i]=
	done
	return $rc
}

# ts_send_each ARGS...: ts_send from every sender with ARGS, wait for
# them all, and check that they finished.
ts_send_each() {
	local i
	for i in $(seq "$TS_N"); do
		ts_send "$i" "$@"
	done
	ts_send_wait
	check_eq "every tdmgen sender finished" $? 0
}

# ts_sent I: data packets tdmgen I says it sent.
ts_sent() {
	sed -n 's/.*"sent":\([0-9]*\).*/\1/p' "$TDM_TMP/send$1.json"
}

# ts_json ARRAY FILE: a JSON file flattened into ARRAY (senders.0.sent ...).
ts_json() {
	local -n _tj=$1
	local line
	_tj=()
	while IFS= read -r line; do
		_tj["${line%%=*}"]=${line#*=}
	done < <(py json <"$2" 2>/dev/null)
}

# ts_kv ARRAY CMD...: key=value output of CMD into ARRAY, "# " lines shown.
ts_kv() {
	local name=$1
	shift
	tdm_kv "$name" "$("$@")"
}

# ts_san_check [-p PREFIX] FILE...: no sanitizer report in these outputs
# (the sub-result's name begins with PREFIX).
ts_san_check() {
	local bad=0 pre=
	[ "$1" = -p ] && { pre=$2; shift 2; }
	tdm_san_reports "$@" || bad=1
	check_eq "${pre}no sanitizer reports from tdmstat and tdmgen" $bad 0
}

# ts_rx_packets: packets r0 received.
ts_rx_packets() {
	nsx "$R" cat /sys/class/net/r0/statistics/rx_packets
}

# ts_keep: with TS_KEEP=DIR (a folder the guest may write, such as build/),
# copy the test's files there for a look afterwards.
ts_keep() {
	[ -n "${TS_KEEP:-}" ] || return 0
	mkdir -p "$TS_KEEP" && cp -a "$TDM_TMP"/. "$TS_KEEP"/
}
