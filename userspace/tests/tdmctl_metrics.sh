#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmctl metrics on a coordinator and a member over loopback (the member
# on lo: no tdmwin qdisc, which its metrics say), each checked by
# Prometheus' own parser and linter, promtool check metrics; and a tdmd
# that is not running is an error, not empty metrics.  The same metrics
# from tdmd's HTTP endpoint (metrics_listen, fetched with curl) and its
# node_exporter textfile (metrics_textfile), checked by promtool too and
# against tdmctl's (the same families, samples and labels: one producer);
# the endpoint's 404 and 405; the textfile gone when tdmd stops.  promtool comes
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
command -v curl >/dev/null ||
	tdm_skip_all "curl not found (Debian's curl; make setup installs it)"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cport=$(free_port) mport=$(free_port)
coord_conf "metrics_listen 127.0.0.1:$cport" "metrics_textfile $d/c.textfile.prom" \
	"metrics_interval 1s" >"$d/c.conf"
member_conf "metrics_listen [::1]:$mport" "metrics_textfile $d/m.textfile.prom" \
	"metrics_interval 1s" >"$d/m.conf"
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
# What a sample names: the line up to its value (values move between reads).
names() { sed 's/ [^ ]*$//' "$1"; }
same_names() { [ -s "$1" ] && [ "$(names "$1")" = "$(names "$2")" ]; }
for r in c m; do
	port=$cport host=127.0.0.1
	[ $r = m ] && port=$mport host='[::1]'
	url=http://$host:$port/metrics
	curl -sS -D "$d/$r.hdr" -o "$d/$r.http.prom" "$url"
	check_eq "$r: GET $url" "$?" 0
	check_here "$r: 200, as the text format 0.0.4" grep -qi \
		'^content-type: text/plain; version=0.0.4; charset=utf-8' "$d/$r.hdr"
	promcheck "$r endpoint" "$d/$r.http.prom"
	"$tdmctl" -s "$d/$r.sock" metrics >"$d/$r.prom"
	check_eq "$r endpoint: what tdmctl metrics prints" \
		"$(names "$d/$r.http.prom" | md5sum)" "$(names "$d/$r.prom" | md5sum)"
	# Written every second: once after the member registered, the same.
	check_here "$r textfile: what tdmctl metrics prints" \
		wait_for same_names "$d/$r.textfile.prom" "$d/$r.prom"
	promcheck "$r textfile" "$d/$r.textfile.prom"
	check_eq "$r textfile: readable by node_exporter (0644)" \
		"$(stat -c %a "$d/$r.textfile.prom")" 644
done
check_eq "elsewhere: 404" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$cport/")" 404
check_eq "POST: 405" \
	"$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$cport/metrics")" 405
check_eq "HEAD: 200" "$(curl -s -o /dev/null -w '%{http_code}' -I "http://127.0.0.1:$cport/metrics")" 200
old_mtime=$(stat -c %y "$d/c.textfile.prom")
rewritten() { [ "$(stat -c %y "$d/c.textfile.prom")" != "$old_mtime" ]; }
check_here "the textfile is rewritten every metrics_interval" wait_for rewritten
left=$(find "$d" -name '*.prom.tmp.*' | wc -l)
check_eq "no temporary textfile left behind" "$left" 0

check_here "coordinator: its member, up" grep -qx 'tdmd_member_up{member="a"} 1' "$d/c.prom"
check_here "coordinator: the count of members up" grep -qx 'tdmd_members{state="up"} 1' "$d/c.prom"
check_here "member: its role" grep -q '^tdmd_info{role="member",name="a",' "$d/m.prom"
check_here "member: connected" grep -qx 'tdmd_coordinator_connected 1' "$d/m.prom"
check_here "member: no tdmwin qdisc on lo" grep -qx 'tdmwin_qdisc_present{interface="lo"} 0' "$d/m.prom"

kill "$mpid"
wait "$mpid" 2>/dev/null
mpid=''
check_here "the member's textfile is gone with it" test ! -e "$d/m.textfile.prom"
"$tdmctl" -s "$d/m.sock" metrics >"$d/none.prom" 2>"$d/none.err"
check_eq "no tdmd: exit 3 (unreachable)" "$?" 3
check_eq "... and no metrics printed" "$(wc -c <"$d/none.prom")" 0

kill "$cpid"
wait "$cpid" 2>/dev/null
cpid=''
tdm_exit
