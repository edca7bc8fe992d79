# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154  # tdmd, tdmctl: set by the test that sources it
#
# A coordinator and a member of tdmd on loopback, for the host tests that
# need a running pair (tdmd_reload.sh, tdmctl_metrics.sh).  Source it
# after selftests/tap.sh, with tdmd and tdmctl set to the binaries:
#
#   d         a fresh directory (key, plan.conf, sockets, logs), removed
#             on exit with the daemons
#   port      a free TCP port on 127.0.0.1
#   coord_conf [LINE...] / member_conf [LINE...]
#             the coordinator's and the member's tdm.conf on stdout, then
#             LINEs ("key value"); the member "a" on lo (no tdmwin qdisc),
#             ptp_policy off
#   pair_start [TDMD_ARGS...]
#             start both from $d/c.conf and $d/m.conf (the coordinator with
#             TDMD_ARGS), as cpid and mpid; true once the member is up
#   gate_member_conf DEVICE SOCKET [LINE...]
#             member_conf for a device without a netdev (DEVICE, not looked
#             up): gate tdmd, its plan store on SOCKET
#   up, wait_for CMD...
#             the member is up at the coordinator; CMD true within 5 s
#   now_ns, stop_now PID
#             CLOCK_REALTIME in ns; kill -9 PID and reap it, t0 when
d=$(mktemp -d) || exit 1
cpid='' mpid=''
trap '[ -n "$mpid" ] && kill "$mpid" 2>/dev/null; [ -n "$cpid" ] && kill "$cpid" 2>/dev/null; rm -rf "$d"' EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$d/key")
printf '[global]\nlead_time 2s\nbase_align 0\n[auto]\nsenders a\nwindow 2ms\ndead_time 1ms\n' >"$d/plan.conf"

coord_conf() {
	printf '[global]\nrole coordinator\nkey_file %s\nlisten 127.0.0.1\nport %s\ncontrol_socket %s/c.sock\nplan_file %s/plan.conf\nstate_file %s/c.state\n' \
		"$d/key" "$port" "$d" "$d" "$d"
	[ $# = 0 ] || printf '%s\n' "$@"
}

member_conf() {
	printf '[global]\nrole member\nname a\nkey_file %s\ncoordinator 127.0.0.1:%s\ninterface lo\nptp_policy off\ncontrol_socket %s/m.sock\n' \
		"$d/key" "$port" "$d"
	[ $# = 0 ] || printf '%s\n' "$@"
}

gate_member_conf() {
	local dev=$1 sock=$2
	shift 2
	member_conf "gate tdmd" "gate_socket $sock" "$@" |
		sed "s/^interface lo\$/interface $dev/"
}

up() { "$tdmctl" -s "$d/c.sock" status 2>/dev/null | grep -Eq '^ +a +up '; }
wait_for() { local _; for _ in $(seq 50); do "$@" && return 0; sleep 0.1; done; return 1; }

pair_start() {
	"$tdmd" -f "$d/c.conf" "$@" >"$d/c.log" 2>&1 &
	cpid=$!
	"$tdmd" -f "$d/m.conf" >"$d/m.log" 2>&1 &
	mpid=$!
	wait_for up
}

now_ns() { date +%s%N; }
# shellcheck disable=SC2034  # t0: for the test that sources this file
stop_now() { kill -9 "$1"; t0=$(now_ns); wait "$1" 2>/dev/null; }
