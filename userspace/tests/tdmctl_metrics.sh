#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmctl metrics on a coordinator and a member over loopback (the member
# on lo: no tdmwin qdisc, which its metrics say), each checked by
# Prometheus' own parser and linter, promtool check metrics; and a tdmd
# that is not running is an error, not empty metrics.  promtool comes
# from $PROMTOOL, the testbed cache (testbed/guest/setup unpacks Debian's
# prometheus package there) or PATH; without it the test is a skip.  The
# qdisc's counters are checked the same way by test_member, on a fake
# qdisc.
# Host test, no root.  Built into O/tests as test_tdmctl_metrics (which
# passes the tdmd and tdmctl binaries); prints TAP lines.
#
#   tests/tdmctl_metrics.sh TDMD TDMCTL
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmd=$1 tdmctl=$2
promtool=${PROMTOOL:-${TDMWIN_CACHE:-$HOME/.cache/tdmwin}/promtool}
[ -x "$promtool" ] || promtool=$(command -v promtool) ||
	tdm_skip_all "promtool not found (\$PROMTOOL, the testbed cache or PATH; make setup fetches it)"
d=$(mktemp -d) || exit 1
cpid='' mpid=''
trap '[ -n "$mpid" ] && kill "$mpid" 2>/dev/null; [ -n "$cpid" ] && kill "$cpid" 2>/dev/null; rm -rf "$d"' EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$d/key")
printf '[global]\nlead_time 2s\nbase_align 0\n[auto]\nsenders a\nwindow 2ms\ndead_time 1ms\n' >"$d/plan.conf"
printf '[global]\nrole coordinator\nkey_file %s\nlisten 127.0.0.1\nport %s\ncontrol_socket %s/c.sock\nplan_file %s/plan.conf\n' \
	"$d/key" "$port" "$d" "$d" >"$d/c.conf"
printf '[global]\nrole member\nname a\nkey_file %s\ncoordinator 127.0.0.1:%s\ninterface lo\nptp_policy off\ncontrol_socket %s/m.sock\n' \
	"$d/key" "$port" "$d" >"$d/m.conf"

up() { "$tdmctl" -s "$d/c.sock" status 2>/dev/null | grep -Eq '^ +a +up '; }
wait_for() { local _; for _ in $(seq 50); do "$@" && return 0; sleep 0.1; done; return 1; }
"$tdmd" -f "$d/c.conf" >"$d/c.log" 2>&1 &
cpid=$!
"$tdmd" -f "$d/m.conf" >"$d/m.log" 2>&1 &
mpid=$!
check_here "the member registers with the coordinator" wait_for up

promcheck() { # NAME FILE: promtool check metrics on FILE
	if "$promtool" check metrics <"$2" >"$d/$1.promtool" 2>&1; then
		tdm_ok "$1: promtool check metrics"
	else
		tdm_fail "$1: promtool check metrics"
		sed 's/^/#   /' "$d/$1.promtool"
	fi
}
for r in c m; do
	"$tdmctl" -s "$d/$r.sock" metrics >"$d/$r.prom"
	check_eq "$r: tdmctl metrics succeeds" "$?" 0
	promcheck "$r" "$d/$r.prom"
done
check_here "coordinator: its member, up" grep -qx 'tdmd_member_up{member="a"} 1' "$d/c.prom"
check_here "coordinator: the count of members up" grep -qx 'tdmd_members{state="up"} 1' "$d/c.prom"
check_here "member: its role" grep -q '^tdmd_info{role="member",name="a",' "$d/m.prom"
check_here "member: connected" grep -qx 'tdmd_coordinator_connected 1' "$d/m.prom"
check_here "member: no tdmwin qdisc on lo" grep -qx 'tdmwin_qdisc_present{interface="lo"} 0' "$d/m.prom"

kill "$mpid"
wait "$mpid" 2>/dev/null
mpid=''
"$tdmctl" -s "$d/m.sock" metrics >"$d/none.prom" 2>"$d/none.err"
check_eq "no tdmd: exit 3 (unreachable)" "$?" 3
check_eq "... and no metrics printed" "$(wc -c <"$d/none.prom")" 0

kill "$cpid"
wait "$cpid" 2>/dev/null
cpid=''
tdm_exit
