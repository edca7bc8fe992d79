#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of tdmgen -> tcpdump -> tdmstat analyze over a veth pair between
# two network namespaces (198.18.0.0/15 only).  Built into O/tests as
# test_tdmstat_veth and run by `make unit` with the cmocka tests; prints
# TAP lines.  Needs root, ip and tcpdump: without them it prints a TAP
# skip with the reason ("1..0 # SKIP ...", exit 4), counted as a skip.
# About 2 s.
#
#   tests/tdmstat_veth.sh BINDIR      (BINDIR holds tdmgen and tdmstat)
set -uo pipefail
bin=${1:-$(dirname "$0")/../san/bin}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
# The whole test cannot run here: a TAP skip with the reason, which run-unit
# counts as a skip (never a pass), and kselftest's exit status 4.
skip_all() { echo "1..0 # SKIP $*"; exit 4; }

if [ "$(id -u)" != 0 ] || ! command -v tcpdump >/dev/null || ! command -v ip >/dev/null; then
	skip_all "needs root, ip and tcpdump (uid $(id -u))"
fi
tmp=$(mktemp -d) || exit 1
a=tdmsA$$ b=tdmsB$$
cleanup() {
	[ -n "${td:-}" ] && kill "$td" 2>/dev/null
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! ip netns add "$a" || ! ip netns add "$b" ||
   ! ip link add va netns "$a" type veth peer name vb netns "$b"; then
	skip_all "cannot create network namespaces and veth here"
fi
ip -n "$a" addr add 198.18.7.1/24 dev va && ip -n "$a" link set va up &&
ip -n "$b" addr add 198.18.7.2/24 dev vb && ip -n "$b" link set vb up &&
ip -n "$a" link set lo up && ip -n "$b" link set lo up || { nok "veth setup"; exit 1; }
# No ARP on the first packet: it would stretch transit and tcpdump's start.
mac=$(ip -n "$b" -br link show vb | awk '{print $3}')
ip -n "$a" neigh add 198.18.7.2 lladdr "$mac" dev va nud permanent

printf '[auto]\nsenders 2\nwindow 1ms\ndead_time 100us\n' >"$tmp/plan"
ip netns exec "$b" tcpdump -U --immediate-mode -q -n -i vb -j host --time-stamp-precision=nano \
	-s 128 -w "$tmp/cap.pcap" udp dst port 8081 2>"$tmp/tcpdump.log" &
td=$!
for _ in $(seq 50); do grep -q listening "$tmp/tcpdump.log" && break; sleep 0.1; done
check "tcpdump is listening" grep -q listening "$tmp/tcpdump.log"

ip netns exec "$a" "$bin/tdmgen" -q -i 0 -r 20000pps -c 1000 -s 200 -E 3 -w 20ms 198.18.7.2 &&
ip netns exec "$a" "$bin/tdmgen" -q -i 1 -r 10000pps -c 500 -s 1400 -E 3 -w 20ms 198.18.7.2
check "tdmgen sent both streams" test $? = 0
sleep 0.3
kill -INT "$td"; wait "$td"; td=
got=$(grep -oE '^[0-9]+ packets captured' "$tmp/tcpdump.log" | grep -oE '^[0-9]+')
check "tcpdump captured every packet (${got:-?} of 1506)" test "${got:-0}" = 1506

"$bin/tdmstat" analyze -q -j -p "$tmp/plan" -o "$tmp/out" "$tmp/cap.pcap" >"$tmp/sum.json"
check "tdmstat analyze succeeded" test $? = 0
py() { python3 -c "import json,sys; d=json.load(open('$tmp/sum.json')); print($1)"; }
check "records: 1506" test "$(py "d['run']['records']")" = 1506
check "end markers: 6" test "$(py "d['run']['end_markers']")" = 6
check "sent 1500 by the end markers" test "$(py "d['run']['sent']")" = 1500
check "received 1500, lost 0" test "$(py "d['run']['received'],d['run']['lost']")" = "1500 0"
check "no duplicates, no reordering" test "$(py "d['run']['duplicates']+d['run']['reordered']")" = 0
check "sender 1 sent 500 of 1400 bytes" test "$(py "[s['sent'] for s in d['senders']]")" = "[1000, 500]"
check "timestamp source sw" test "$(py "d['run']['ts_source']")" = sw
rows=$(($(wc -l <"$tmp/out-windows.csv") - 1))
check "window rows written ($rows) = windows in the JSON" test "$rows" = "$(py "d['run']['windows']")"
pk=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "packets") c = i; next } { s += $c } END { print s }' "$tmp/out-windows.csv")
check "the window rows hold every packet ($pk)" test "$pk" = 1500
tmin=$(py "min(s['transit_min_ns'] for s in d['senders'])")
check "transit is positive and below 50 ms ($tmin ns)" test "$tmin" -gt 0 -a "$tmin" -lt 50000000
echo "1..$n"
exit $failed
