#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmctl plan check on plans with receivers (no tdmd needed): it prints
# each receiver's link utilization and the least and most one sender gets
# there, in text and JSON, and refuses a plan that breaks a rule (two
# senders at a receiver, a sender at two receivers, a pair without its
# share) with the line at fault and exit 1.  Built into O/tests as
# test_tdmctl_plan, run by `make unit`; prints TAP lines.
#
#   tests/tdmctl_plan.sh TDMCTL EXAMPLES_DIR
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmctl=$1 examples=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

out=$("$tdmctl" plan check "$examples/plan-barrel.conf" 2>&1)
check_eq "plan check: 4 x 3 barrel exits 0" "$?" 0
# Each receiver: 4 senders x 900 us of a 4 ms cycle.
for x in x0 x1 x2; do
	row=$(awk -v x="$x" '$1 == x' <<<"$out")
	check_match "plan check: $x open 3600000 ns, 90.000 %, 900 us per pair" \
		"$row" "^$x +198\.18\.1\.[123] +3600000 +90\.000% +900000 +900000$"
done
json=$("$tdmctl" -j plan check "$examples/plan-corner.conf")
check_eq "plan check -j: receivers, open time and pair shares" \
	"$(python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
print(d["cycle_ns"], *[(r["name"], r["open_ns"], r["pair_min_ns"], r["pair_max_ns"]) for r in d["receivers"]])' <<<"$json")" \
	"2200000 ('x0', 2000000, 500000, 1500000) ('x1', 2000000, 500000, 1500000)"

rx='[receiver x0]
address 198.18.1.1
[receiver x1]
address 198.18.1.2'
printf 'cycle_time 1ms\n%s\n[sender a]\nwindow 0 10us x0\n[sender b]\nwindow 5us 10us x0\nwindow 20us 10us x1\n' "$rx" >"$tmp/two-senders.conf"
check_refused "plan check: two senders at one receiver" \
	"two-senders.conf:9: window 5us\+10us of 'b' to 'x0' overlaps window 0\+10us of 'a'" \
	"$tdmctl" plan check "$tmp/two-senders.conf"
printf 'cycle_time 1ms\n%s\n[sender a]\nwindow 0 10us x0\nwindow 9us 10us x1\n' "$rx" >"$tmp/two-receivers.conf"
check_refused "plan check: one sender at two receivers" \
	"a sender sends to one receiver at a time" \
	"$tdmctl" plan check "$tmp/two-receivers.conf"
printf 'cycle_time 1ms\n%s\n[sender a]\nwindow 0 10us x0\nwindow 20us 10us x1\n[sender b]\nwindow 40us 10us x1\n' "$rx" >"$tmp/no-share.conf"
check_refused "plan check: a pair without its share" \
	"no-share.conf: sender 'b' has no window to 'x0'" \
	"$tdmctl" plan check "$tmp/no-share.conf"
"$tdmctl" plan check "$tmp/no-share.conf" >/dev/null 2>&1
check_eq "plan check: exit 1 for a bad plan" "$?" 1
tdm_exit
