#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmstat at the receivers of a corner turn, on the host (no root): for
# each receiver of a two-receiver plan, synth makes its traffic and
# analyze --receiver judges it against that receiver's own windows; the
# receiver rows must carry the plan's share of each link (different at
# the two) and the payload utilization computed again here from the run
# (bytes, first and last arrival, link speed); tdmstat combine must give
# one row per receiver and the sums.  Bad input is refused with a message.
# Built into O/tests as test_tdmstat_corner, run by `make unit`.
#
#   tests/tdmstat_corner.sh TDMSTAT
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmstat=$1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# x0 gets a for 1 ms and b for 1.4 ms of 3 ms; x1 a 900 us, b 1 ms.
cat >plan.conf <<'PLAN'
[global]
cycle_time  3ms
link_speed  1000
base_time   1s
[receiver x0]
address     198.18.1.1
[receiver x1]
address     198.18.1.2
[sender a]
window 0      1ms    x0
window 1100us 900us  x1
[sender b]
window 0      1ms    x1
window 1100us 1400us x0
PLAN

# What each receiver sees, written out by hand: synth's traffic comes
# from these, not from tdmstat's own projection of plan.conf.
cat >x0-view.conf <<'PLAN'
[global]
cycle_time  3ms
link_speed  1000
base_time   1s
[sender a]
window 0      1ms
[sender b]
window 1100us 1400us
PLAN
cat >x1-view.conf <<'PLAN'
[global]
cycle_time  3ms
link_speed  1000
base_time   1s
[sender a]
window 1100us 900us
[sender b]
window 0      1ms
PLAN
for x in x0 x1; do
	"$tdmstat" synth -n 20000 -p "$x-view.conf" -o "$x.pcap" >/dev/null 2>&1
	check "$x: analyze --receiver $x" "$tdmstat" analyze -q -p plan.conf \
		--receiver "$x" -o "$x" "$x.pcap"
done
check_eq "x0's row: its planned share, 2.4 ms of 3 ms" \
	"$(cut -d, -f1,3-7 x0-receiver.csv | tail -n 1)" "x0,2,2400000,3000000,800000,1000"
check_eq "x1's row: its planned share, 1.9 ms of 3 ms" \
	"$(cut -d, -f1,3-7 x1-receiver.csv | tail -n 1)" "x1,2,1900000,3000000,633333,1000"
for x in x0 x1; do
	check_eq "$x: payload utilization = bytes x 8 / (link x (last - first arrival))" \
		"$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["receiver"]
print(r["payload_ppm"] == r["bytes"] * 8 * 10**15 // (r["link_speed"] * 10**6 * (r["end_rx_ns"] - r["start_rx_ns"])), r["payload_ppm"] > 0)' "$x.json")" "True True"
	check_eq "$x: no packet outside its windows, no overlap" \
		"$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["receiver"]
print(r["rx_outside"], r["overlap_windows"])' "$x.json")" "0 0"
done
"$tdmstat" combine -o all -j x0-receiver.csv x1-receiver.csv >combined.json
check_eq "combine: one row per receiver, received summed" \
	"$(python3 -c 'import json, sys
d = json.load(open("combined.json"))
print([r["receiver"] for r in d["receivers"]], d["all"]["received"] == sum(r["received"] for r in d["receivers"]), d["all"]["received"] > 0)')" \
	"['x0', 'x1'] True True"
check_eq "combine -o: all-receivers.csv, both rows under one header" \
	"$(cut -d, -f1 all-receivers.csv | tr '\n' ' ')" "receiver x0 x1 "
check "combine reads its own output again" "$tdmstat" combine -q all-receivers.csv
out=$("$tdmstat" combine x0-receiver.csv x1-receiver.csv)
check_match "combine: the table names the least and most utilized link" \
	"$out" "2 receivers; payload utilization of their links from [0-9.]+% \(x[01]\) to [0-9.]+% \(x[01]\)"

check_refused "a plan with receivers needs --receiver" \
	"the plan has 2 receivers: say which this is with --receiver NAME" \
	"$tdmstat" analyze -p plan.conf x0.pcap
check_refused "--receiver names one of the plan" \
	"--receiver x9: no such receiver in the plan" \
	"$tdmstat" analyze -p plan.conf --receiver x9 x0.pcap
check_refused "combine: a receiver given twice" "receiver 'x0' again" \
	"$tdmstat" combine x0-receiver.csv x0-receiver.csv
check_refused "combine: not a receiver table" \
	"x0-senders.csv:2: not a receiver table: column 1 is not 'receiver'" \
	"$tdmstat" combine x0-senders.csv
check_refused "combine: nothing to combine" "give the receivers' PREFIX-receiver.csv files" \
	"$tdmstat" combine
tdm_exit
