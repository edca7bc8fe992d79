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

# plan tc: sender f2's qdisc of a 3 x 2 barrel shifter, as tc batch lines:
# slot k sends to receiver (1 + k) mod 3 (idle in slot 1: receiver 2 is
# none), each window for its receiver's class 1:(3 + r), a filter per
# receiver it sends to.
printf '[global]\nclock realtime\nguard 5us\nbase_time 7000000\nlink_speed 50\nbypass_prio 6 7\n%s\n[barrel]\nsenders f1 f2 f3\nslot 1ms\ndead_time 100us\n' "$rx" >"$tmp/barrel.conf"
out=$("$tdmctl" plan tc "$tmp/barrel.conf" f2 tx0)
check_eq "plan tc: exit 0" "$?" 0
check_eq "plan tc: f2's tdmwin, windows to x1 then x0, each for its class" \
	"$(sed -n 1p <<<"$out")" \
	"qdisc replace dev tx0 root handle 1: tdmwin cycle-time 3000000ns base-time 7000000 clockid realtime guard 5000ns link-speed 50 bypass-ptp on bypass-prio 6,7 window 0ns 900000ns class 4 window 2000000ns 900000ns class 3"
check_eq "plan tc: a flower filter per receiver, in window order" \
	"$(sed -n '2,$p' <<<"$out")" \
	"filter add dev tx0 parent 1: protocol ip prio 1 flower dst_ip 198.18.1.2 classid 1:4
filter add dev tx0 parent 1: protocol ip prio 1 flower dst_ip 198.18.1.1 classid 1:3"
# tc reads a classid's minor in hex: receiver 7 is class 10 in the
# qdisc's windows (decimal there) and 1:a in its filter.
{
	printf '[global]\nbase_time 1\n'
	for r in 0 1 2 3 4 5 6 7; do printf '[receiver x%s]\naddress 198.18.1.%s\n' $r $((r + 1)); done
	printf '[barrel]\nsenders 1\nslot 1ms\ndead_time 0\n'
} >"$tmp/eight.conf"
out=$("$tdmctl" plan tc "$tmp/eight.conf" 0 tx0)
check_match "plan tc: the eighth receiver's window is for class 10" "$(sed -n 1p <<<"$out")" \
	" window 7000000ns 1000000ns class 10$"
check_eq "plan tc: its filter names 1:a (tc's minor is hex)" "$(sed -n '$p' <<<"$out")" \
	"filter add dev tx0 parent 1: protocol ip prio 1 flower dst_ip 198.18.1.8 classid 1:a"
printf '[global]\ncycle_time 1ms\nbase_time 5\n[sender a]\nwindow 0 10us\n' >"$tmp/classic.conf"
check_eq "plan tc: a plan without receivers: windows of 1:1, no filter" \
	"$("$tdmctl" plan tc "$tmp/classic.conf" a eth0)" \
	"qdisc replace dev eth0 root handle 1: tdmwin cycle-time 1000000ns base-time 5 clockid tai guard 0ns bypass-ptp on window 0ns 10000ns"
check_refused "plan tc: an unknown sender" "barrel.conf: no sender 'f9' in the plan" \
	"$tdmctl" plan tc "$tmp/barrel.conf" f9 tx0
check_refused "plan tc: a plan without base_time" "the plan has no base_time" \
	"$tdmctl" plan tc "$examples/plan-barrel.conf" f0 tx0
check_refused "plan tc: a device name tc cannot take" "'a b' is not a device name" \
	"$tdmctl" plan tc "$tmp/barrel.conf" f1 "a b"
tdm_exit
