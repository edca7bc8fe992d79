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
# shellcheck source=tdmd_pair.sh
. "$(dirname "$(readlink -f "$0")")/tdmd_pair.sh"
coord_conf >"$d/c.conf"
member_conf >"$d/m.conf"
check_here "the member registers with the coordinator" pair_start

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
