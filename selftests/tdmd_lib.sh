# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the tdmd selftests, on top of lib.sh: a switch (a bridge in
# its own namespace) with a coordinator namespace and N member namespaces,
# key and configuration files, tdmd instances in the background with their
# logs, tdmctl against their control sockets, and JSON snapshots.
#
#   . "$(dirname "$0")/tdmd_lib.sh"
#   tdmd_require
#   tdmd_topology 3            # C, M1..M3; 198.18.1.1, 198.18.1.11..13
#   tdmd_key "$TDMD_KEY"
#   tdmd_coord_conf c.conf plan.conf; tdmd_start coord "$C" c.conf
#
# The daemons are the sanitizer build (build/us/san/bin) when it exists: every
# test ends with a check that no tdmd logged an ASan/UBSan/LSan report.

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TDMD_BUILD=${TDMD_BUILD:-$TDM_ROOT/build/us}
tdm_use_build "$TDMD_BUILD" "${TDMD_RELEASE:-}" TDMD=tdmd TDMCTL=tdmctl
TDMD_KEY=$TDM_TMP/key
TDMD_PORT=7453
TDMD_IP_C=198.18.1.1
TDMD_IP6_C=2001:db8:7d4::1
TDMD_NAMES=()
declare -A TDMD_PID TDMD_SOCK

tdmd_require() {
	tdm_require "$@"
	if [ ! -x "$TDMD" ] || [ ! -x "$TDMCTL" ]; then
		tdm_skip_all "tdmd/tdmctl not built in $TDMD_BUILD (make tools)"
	fi
}

tdmd_ip() { echo "198.18.1.$((10 + $1))"; }
tdmd_ip6() { echo "2001:db8:7d4::$((10 + $1))"; }

# _tdmd_addr NS IFNAME IP IP6: IFNAME's addresses, and up.
_tdmd_addr() {
	local ns=$1 dev=$2
	ip -n "$ns" addr add "$3/24" dev "$dev"
	nsx "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=0"
	ip -n "$ns" addr add "$4/64" dev "$dev" nodad
	ip -n "$ns" link set "$dev" up
}

# _tdmd_port NS IFNAME IP IP6 SWPORT: one veth from NS to the switch.
_tdmd_port() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$SW" || return 1
	ip -n "$SW" link set "$5" master br0 up
	_tdmd_addr "$1" "$2" "$3" "$4"
}

# tdmd_topology N [wire]: namespaces SW (bridge br0), C (coordinator, dev c0) and
# M1..MN (dev m0); IPv4 and IPv6; static neighbours between the
# coordinator and each member, so that no ARP or ND has to pass a held
# gate.  Sets C, SW and M[i].
#
# With "wire", the switch testbed's wire (testbed/wire.sh, tdm_switch_port and
# tdm_switch_nic): each member's m0 reaches the switch through an emulated
# NIC of its own (namespace NIC), and the switch's port toward the
# coordinator, swc, drains at WIRE_MBIT with a buffer of SW_BUF frames
# (TDM_SWITCH_BUF, else tdm_switch_buf): the coordinator is the receiver
# behind the bottleneck.  S[i] is M[i] then, for the tdm_switch_* helpers.
tdmd_topology() {
	local n=$1 wire=${2:-} i ns
	declare -gA M MAC S
	setup_ns SW C || return 1
	ip -n "$SW" link add br0 type bridge || return 1
	ip -n "$SW" link set br0 up
	if [ "$wire" = wire ]; then
		S=()
		SW_BUF=${TDM_SWITCH_BUF:-$(tdm_switch_buf)}
		setup_ns NIC || return 1
		ip link add c0 netns "$C" type veth peer name swc netns "$SW" || return 1
		tdm_switch_port "$C" c0 swc swm || return 1
		_tdmd_addr "$C" c0 $TDMD_IP_C $TDMD_IP6_C
	else
		_tdmd_port "$C" c0 $TDMD_IP_C $TDMD_IP6_C swc || return 1
	fi
	MAC[0]=$(nsx "$C" cat /sys/class/net/c0/address)
	for i in $(seq "$n"); do
		ns="tdm-m$i-$$-$RANDOM"
		ip netns add "$ns" || return 1
		NS_LIST+=("$ns")
		ip -n "$ns" link set lo up
		M[$i]=$ns
		if [ "$wire" = wire ]; then
			S[$i]=$ns
			tdm_switch_nic "$i" "$ns" m0 || return 1
			_tdmd_addr "$ns" m0 "$(tdmd_ip "$i")" "$(tdmd_ip6 "$i")"
		else
			_tdmd_port "$ns" m0 "$(tdmd_ip "$i")" "$(tdmd_ip6 "$i")" "swm$i" ||
				return 1
		fi
		MAC[$i]=$(nsx "$ns" cat /sys/class/net/m0/address)
	done
	for i in $(seq "$n"); do
		ip -n "${M[$i]}" neigh replace $TDMD_IP_C lladdr "${MAC[0]}" dev m0 nud permanent
		ip -n "${M[$i]}" neigh replace $TDMD_IP6_C lladdr "${MAC[0]}" dev m0 nud permanent
		ip -n "$C" neigh replace "$(tdmd_ip "$i")" lladdr "${MAC[$i]}" dev c0 nud permanent
		ip -n "$C" neigh replace "$(tdmd_ip6 "$i")" lladdr "${MAC[$i]}" dev c0 nud permanent
	done
}

# tdmd_key FILE: a fresh random 256-bit key, mode 0600.
tdmd_key() {
	(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$1" && echo >>"$1")
}

# _tdmd_conf FILE DEFAULTS... -- OVERRIDES...: write a [global] section of
# KEY=VALUE pairs, where a KEY in OVERRIDES replaces the default.
_tdmd_conf() {
	local f=$1 kv k
	local -A val
	local order=()
	shift
	for kv in "$@"; do
		[ "$kv" = -- ] && continue
		k=${kv%%=*}
		[ -n "${val[$k]+x}" ] || order+=("$k")
		val[$k]=${kv#*=}
	done
	{
		echo "[global]"
		for k in "${order[@]}"; do echo "$k ${val[$k]}"; done
	} >"$f"
}

# tdmd_coord_conf FILE PLAN [KEY=VALUE...]
tdmd_coord_conf() {
	local f=$1 plan=$2
	shift 2
	_tdmd_conf "$f" role=coordinator "key_file=$TDMD_KEY" listen=:: \
		port=$TDMD_PORT ${plan:+"plan_file=$plan"} member_timeout=5s \
		ack_timeout=10s "state_file=${f%.conf}.state" -- "$@"
}

# tdmd_member_conf FILE NAME [KEY=VALUE...]: member on m0, PTP off unless
# given, link speed 1000 (veth reports none).
tdmd_member_conf() {
	local f=$1 name=$2
	shift 2
	_tdmd_conf "$f" role=member "name=$name" "key_file=$TDMD_KEY" \
		interface=m0 link_speed=1000 heartbeat_interval=500ms \
		reconnect_min=100ms reconnect_max=1s ptp_policy=off \
		"coordinator=$TDMD_IP_C:$TDMD_PORT" -- "$@"
}

# tdmd_start NAME NS CONF: start tdmd (debug log in $TDM_TMP/NAME.log) with
# its control socket at $TDM_TMP/NAME.sock, and wait until it answers.
tdmd_start() {
	local name=$1 ns=$2 conf=$3 sock=$TDM_TMP/$1.sock
	grep -q '^control_socket' "$conf" || echo "control_socket $sock" >>"$conf"
	ip netns exec "$ns" "$TDMD" -f "$conf" -l debug >>"$TDM_TMP/$name.log" 2>&1 &
	TDMD_PID[$name]=$!
	TDMD_SOCK[$name]=$sock
	TDM_BG_PIDS+=($!)
	TDMD_NAMES+=("$name")
	tdm_wait_for 20 tdmctl_quiet "$name" status || {
		tdm_log "tdmd $name did not start:"
		sed 's/^/#   /' "$TDM_TMP/$name.log" | tail -n 20
		return 1
	}
}

# tdmd_stop NAME [SIGNAL]: stop it and wait; returns its exit status.
tdmd_stop() {
	local pid=${TDMD_PID[$1]:-} rc
	[ -n "$pid" ] || return 0
	kill "-${2:-TERM}" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rc=$?
	TDMD_PID[$1]=
	return $rc
}

tdmctl_at() { # NAME ARGS...
	local name=$1
	shift
	"$TDMCTL" -s "${TDMD_SOCK[$name]}" "$@"
}

tdmctl_quiet() { tdmctl_at "$@" >/dev/null 2>&1; }

# tdmd_jsnap ARRAY NAME ARGS...: tdmctl -j ARGS at NAME, flattened.
tdmd_jsnap() {
	local -n _j=$1
	local name=$2 line
	shift 2
	_j=()
	while IFS= read -r line; do
		_j["${line%%=*}"]=${line#*=}
	done < <(tdmctl_at "$name" -j "$@" 2>/dev/null | py json 2>/dev/null)
}

# The number of members the coordinator NAME sees connected.
tdmd_connected() {
	local -A s
	local i n=0
	tdmd_jsnap s "$1" status
	for ((i = 0; i < ${s[members.len]:-0}; i++)); do
		[ "${s[members.$i.connected]}" = true ] && n=$((n + 1))
	done
	echo $n
}

# tdmd_all_connected NAME N: the coordinator NAME sees N members connected
# (a command for tdm_wait_for, which re-runs it).
tdmd_all_connected() { [ "$(tdmd_connected "$1")" = "$2" ]; }

# tdmd_qsnap ARRAY I: the tdmwin qdisc of member I (tc -j -s, flattened).
tdmd_qsnap() {
	tdm_snap "$1" "${M[$2]}" m0
}

# Ends a test: every tdmd still running is stopped; any sanitizer report
# or crash in a log fails.
tdmd_finish() {
	local name bad=0 logs=()
	for name in "${TDMD_NAMES[@]}"; do
		tdmd_stop "$name"
		logs+=("$TDM_TMP/$name.log")
	done
	tdm_san_reports "${logs[@]}" || bad=1
	check_eq "no sanitizer report from any tdmd" "$bad" 0
}

# tdmd_show_logs: on failure, the tail of every log.
tdmd_show_logs() {
	local name
	for name in $(printf '%s\n' "${TDMD_NAMES[@]}" | sort -u); do
		tdm_log "---- $name"
		tail -n "${1:-15}" "$TDM_TMP/$name.log" | sed 's/^/#   /'
	done
}

# tdmd_fatal DESC: a failure that ends the test (a daemon that does not
# start is a bug, not a reason to skip).
tdmd_fatal() {
	tdm_fail "$1"
	tdmd_show_logs 20
	tdm_exit
}

# ---- ptp4l instances (software timestamping) for the PTP tests and the demo

declare -A PTP_PID

# ptp_start NAME NS DEV ARGS...: ptp4l with its management socket at
# $TDM_TMP/ptp-NAME, log in $TDM_TMP/ptp-NAME.log.  The PI constants of a
# hardware clock let a slave lock after two Sync messages instead of the
# 16 s that software timestamping's defaults wait; no clock steps.
ptp_start() {
	local name=$1 ns=$2 dev=$3
	shift 3
	ip netns exec "$ns" ptp4l -i "$dev" -S -m -q \
		--uds_address="$TDM_TMP/ptp-$name" --first_step_threshold=0 \
		--pi_proportional_const=0.7 --pi_integral_const=0.3 \
		--logSyncInterval=-1 --sanity_freq_limit=0 "$@" >>"$TDM_TMP/ptp-$name.log" 2>&1 &
	PTP_PID[$name]=$!
	TDM_BG_PIDS+=($!)
}
ptp_stop() {
	kill "${PTP_PID[$1]}" 2>/dev/null
	wait "${PTP_PID[$1]}" 2>/dev/null
}
# pmc_state NAME: the port state that ptp4l NAME reports.
pmc_state() {
	pmc -u -b 0 -s "$TDM_TMP/ptp-$1" -i "$TDM_TMP/pmc-$1" 'GET PORT_DATA_SET' 2>/dev/null |
		awk '/portState/ { print $2 }'
}
