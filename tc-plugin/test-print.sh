#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-print.sh [PLUGIN_DIR]
#
# The plugin's print_qopt and print_xstats, through stock tc and no kernel
# module: tests/tdmwin_nl.py builds the RTM_NEWQDISC message a kernel
# would dump, tests/nlfake.so hands it to `tc [-j] -s qdisc show dev lo`
# (on lo in a new network namespace), and the text and JSON tc prints are
# compared with what they must be.  PLUGIN_DIR as for test-parse.sh.
# Needs root.  Prints ok / not ok per case and "print: N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/tests/lib.sh"

# show NAME SPEC TEXT JSON: tc -s qdisc show prints TEXT (our lines: tc's
# " Sent" and " backlog" lines left out, trailing blanks dropped); tc -j -s
# gives a qdisc with the keys and values of JSON.
show() {
	local name=$1 diff

	reply=$tmp/reply
	if ! diff=$($nl reply "$2" "$reply"); then
		tdm_fail_why "$name: building the reply" "$diff"
		return
	fi
	run_tc -s qdisc show dev lo
	if sanitizer_report || [ $rc != 0 ]; then
		tdm_fail_why "$name: text" "exit $rc" "$(cat "$tmp/err")"
	elif ! diff=$(diff -u <(printf '%s\n' "$3") \
		<(grep -v '^ Sent \|^ backlog ' "$tmp/out" | sed 's/[ \t]*$//')); then
		tdm_fail_why "$name: text" "$diff"
	else
		tdm_ok "$name: text"
	fi

	run_tc -j -s qdisc show dev lo
	if sanitizer_report || [ $rc != 0 ]; then
		tdm_fail_why "$name: JSON" "exit $rc" "$(cat "$tmp/err")"
	elif ! diff=$($nl json-subset "$tmp/out" "$4" 2>&1); then
		tdm_fail_why "$name: JSON" "$diff"
	else
		tdm_ok "$name: JSON"
	fi
}

show "full dump with a pending plan and counters" '{
	"options": {"clockid": 11, "cycle_time": 3300000,
		"base_time": 1700000000000000000, "plan_version": 12,
		"link_speed": 10000, "eff_link_speed": 10000, "guard": 2000,
		"bypass_prios": 160, "bypass_ptp": 1, "limit": 1000, "hold": 1,
		"wire_clock": 1, "txtime": 1, "lease": 500000000,
		"lease_left": 120999999,
		"windows": [[0, 1000000], [2200000, 500000]]},
	"pending": {"plan_version": 13, "base_time": 1700000005000000000,
		"cycle_time": 3300000, "guard": 1500, "unconfirmed": 1,
		"windows": [[1000000, 1000000, 3], [2200000, 500000, 34]]},
	"xstats": {"windows_opened": 123, "window_packets": 4567,
		"window_bytes": 6543210, "bypass_packets": 12,
		"bypass_bytes": 1234, "guard_deferrals": 3, "oversize_drops": 4,
		"hold_drops": 5, "open_latency_min": 1200,
		"open_latency_max": 9000, "open_latency_sum": 408000,
		"open_latency_count": 120, "plan_switches": 1,
		"pending_base_time": 1700000005000000000, "plan_version": 12,
		"pending_version": 13, "pending": 1, "hold": 1,
		"wire_deferrals": 7, "wire_backlog_max": 250000,
		"wire_backlog": 1500, "txtime_drops": 2, "lease_expiries": 2,
		"unconfirmed_holds": 1, "pending_aborts": 3, "lease_held": 0,
		"pending_unconfirmed": 1, "nowindow_drops": 6}}' \
'qdisc tdmwin 1: root clockid TAI cycle-time 3300us base-time 1700000000000000000 plan-version 12 link-speed 10000Mbit guard 2us bypass-prio 5,7 bypass-ptp on wire-clock on txtime on limit 1000 hold lease 500ms left 120ms
	windows 0ns+1ms 2200us+500us
	pending plan-version 13 base-time 1700000005000000000 cycle-time 3300us guard 1500ns unconfirmed windows 1ms+1ms class 3 2200us+500us class 34
 windows 123 sent 4567 pkts 6543210 bytes bypass 12 pkts 1234 bytes
 guard-deferrals 3 oversize-drops 4 hold-drops 5 nowindow-drops 6 plan-switches 1
 wire-deferrals 7 wire-backlog 1500ns max 250000ns txtime-drops 2
 lease-expiries 2 unconfirmed-holds 1 pending-aborts 3
 open-latency min 1200ns mean 3400ns max 9000ns (120 samples) plan-version 12 pending 13 at 1700000005000000000 hold unconfirmed' \
'{"kind": "tdmwin",
  "options": {"clockid": "TAI", "cycle_time": 3300000,
	"base_time": 1700000000000000000, "plan_version": 12,
	"link_speed": 10000, "eff_link_speed": 10000, "guard": 2000,
	"bypass_prios": [5, 7], "bypass_ptp": true, "wire_clock": true,
	"txtime": true, "lease": 500000000, "lease_left": 120999999,
	"limit": 1000, "hold": true,
	"windows": [{"offset": 0, "length": 1000000},
		    {"offset": 2200000, "length": 500000}],
	"pending": {"plan_version": 13, "base_time": 1700000005000000000,
		"cycle_time": 3300000, "guard": 1500, "unconfirmed": true,
		"windows": [{"offset": 1000000, "length": 1000000, "class": 3},
			    {"offset": 2200000, "length": 500000, "class": 34}]}},
  "xstats": {"windows_opened": 123, "window_packets": 4567,
	"window_bytes": 6543210, "bypass_packets": 12, "bypass_bytes": 1234,
	"guard_deferrals": 3, "oversize_drops": 4, "hold_drops": 5,
	"open_latency_min": 1200, "open_latency_max": 9000,
	"open_latency_sum": 408000, "open_latency_count": 120,
	"open_latency_mean": 3400, "plan_switches": 1,
	"pending_base_time": 1700000005000000000, "plan_version": 12,
	"pending_version": 13, "pending": 1, "hold": 1,
	"wire_deferrals": 7, "wire_backlog_max": 250000, "wire_backlog": 1500,
	"txtime_drops": 2, "lease_expiries": 2, "unconfirmed_holds": 1,
	"pending_aborts": 3, "lease_held": 0, "pending_unconfirmed": 1,
	"nowindow_drops": 6}}'

show "counters of a kernel before the wire clock" '{
	"options": {"clockid": 11, "bypass_ptp": 1},
	"xstats": {"windows_opened": 9, "plan_version": 3, "hold": 1},
	"xstats_len": 128}' \
'qdisc tdmwin 1: root clockid TAI bypass-ptp on
 windows 9 sent 0 pkts 0 bytes bypass 0 pkts 0 bytes
 guard-deferrals 0 oversize-drops 0 hold-drops 0 plan-switches 0
 open-latency (0 samples) plan-version 3 hold' \
'{"options": {"clockid": "TAI", "bypass_ptp": true},
  "xstats": {"windows_opened": 9, "window_packets": 0, "window_bytes": 0,
	"bypass_packets": 0, "bypass_bytes": 0, "guard_deferrals": 0,
	"oversize_drops": 0, "hold_drops": 0, "open_latency_min": 0,
	"open_latency_max": 0, "open_latency_sum": 0, "open_latency_count": 0,
	"open_latency_mean": 0, "plan_switches": 0, "pending_base_time": 0,
	"plan_version": 3, "pending_version": 0, "pending": 0, "hold": 1}}'

show "speed from ethtool, no bypass priority, no plan, older kernel's counters" '{
	"options": {"clockid": 5, "link_speed": 0, "eff_link_speed": 1000,
		"bypass_prios": 0, "bypass_ptp": 0, "limit": 10, "hold": 0},
	"xstats": {"windows_opened": 1, "window_packets": 2,
		"window_bytes": 3, "bypass_packets": 4, "bypass_bytes": 5,
		"guard_deferrals": 6, "oversize_drops": 7, "hold_drops": 8,
		"open_latency_min": 99},
	"xstats_len": 64}' \
'qdisc tdmwin 1: root clockid 5 link-speed auto (1000Mbit) bypass-prio none bypass-ptp off limit 10
 windows 1 sent 2 pkts 3 bytes bypass 4 pkts 5 bytes
 guard-deferrals 6 oversize-drops 7 hold-drops 8' \
'{"options": {"clockid": "5", "link_speed": 0, "eff_link_speed": 1000,
	"bypass_prios": [], "bypass_ptp": false, "limit": 10, "hold": false},
  "xstats": {"windows_opened": 1, "window_packets": 2, "window_bytes": 3,
	"bypass_packets": 4, "bypass_bytes": 5, "guard_deferrals": 6,
	"oversize_drops": 7, "hold_drops": 8}}'

show "newer kernel's longer counters, no open-latency samples" '{
	"options": {"clockid": 0, "cycle_time": 10000000000,
		"base_time": 0, "guard": 0, "plan_version": 0,
		"windows": [[0, 250], [1000000001, 999999999]]},
	"xstats": {"windows_opened": 0, "plan_version": 4,
		"open_latency_min": 18446744073709551615},
	"xstats_len": 216}' \
'qdisc tdmwin 1: root clockid REALTIME cycle-time 10s base-time 0 plan-version 0 guard 0ns
	windows 0ns+250ns 1000000001ns+999999999ns
 windows 0 sent 0 pkts 0 bytes bypass 0 pkts 0 bytes
 guard-deferrals 0 oversize-drops 0 hold-drops 0 nowindow-drops 0 plan-switches 0
 wire-deferrals 0 wire-backlog 0ns max 0ns txtime-drops 0
 lease-expiries 0 unconfirmed-holds 0 pending-aborts 0
 open-latency (0 samples) plan-version 4' \
'{"options": {"clockid": "REALTIME", "cycle_time": 10000000000,
	"base_time": 0, "guard": 0, "plan_version": 0,
	"windows": [{"offset": 0, "length": 250},
		    {"offset": 1000000001, "length": 999999999}]},
  "xstats": {"windows_opened": 0, "window_packets": 0, "window_bytes": 0,
	"bypass_packets": 0, "bypass_bytes": 0, "guard_deferrals": 0,
	"oversize_drops": 0, "hold_drops": 0, "nowindow_drops": 0,
	"open_latency_min": 18446744073709551615, "open_latency_max": 0,
	"open_latency_sum": 0, "open_latency_count": 0,
	"open_latency_mean": 0, "plan_switches": 0, "pending_base_time": 0,
	"plan_version": 4, "pending_version": 0, "pending": 0, "hold": 0,
	"wire_deferrals": 0, "wire_backlog_max": 0, "wire_backlog": 0,
	"txtime_drops": 0, "lease_expiries": 0, "unconfirmed_holds": 0,
	"pending_aborts": 0, "lease_held": 0, "pending_unconfirmed": 0}}'

show "a lease that ran out, a qdisc created unconfirmed" '{
	"options": {"clockid": 11, "lease": 100000000,
		"lease_left": -1500000999, "unconfirmed": 1},
	"xstats": {"lease_expiries": 1, "lease_held": 1,
		"pending_unconfirmed": 1}}' \
'qdisc tdmwin 1: root clockid TAI lease 100ms ran-out 1500ms ago unconfirmed
 windows 0 sent 0 pkts 0 bytes bypass 0 pkts 0 bytes
 guard-deferrals 0 oversize-drops 0 hold-drops 0 nowindow-drops 0 plan-switches 0
 wire-deferrals 0 wire-backlog 0ns max 0ns txtime-drops 0
 lease-expiries 1 unconfirmed-holds 0 pending-aborts 0
 open-latency (0 samples) plan-version 0 lease-held unconfirmed' \
'{"options": {"clockid": "TAI", "lease": 100000000, "lease_left": -1500000999,
	"unconfirmed": true},
  "xstats": {"windows_opened": 0, "window_packets": 0, "window_bytes": 0,
	"bypass_packets": 0, "bypass_bytes": 0, "guard_deferrals": 0,
	"oversize_drops": 0, "hold_drops": 0, "nowindow_drops": 0, "open_latency_min": 0,
	"open_latency_max": 0, "open_latency_sum": 0, "open_latency_count": 0,
	"open_latency_mean": 0, "plan_switches": 0, "pending_base_time": 0,
	"plan_version": 0, "pending_version": 0, "pending": 0, "hold": 0,
	"wire_deferrals": 0, "wire_backlog_max": 0, "wire_backlog": 0,
	"txtime_drops": 0, "lease_expiries": 1, "unconfirmed_holds": 0,
	"pending_aborts": 0, "lease_held": 1, "pending_unconfirmed": 1}}'

# Counters per window slot: in the options, printed under -s after the
# xstats (a slot without frames has no margin).
show "counters per window slot" '{
	"options": {"clockid": 11, "cycle_time": 10000000, "plan_version": 7,
		"windows": [[1000000, 2000000], [6000000, 1000000]],
		"slots": {"version": 7, "slots": [
			{"index": 0, "frames": 120, "bytes": 180000, "opens": 40,
			 "wire_deferrals": 2, "guard_deferrals": 3,
			 "latency_count": 40, "latency_sum": 10000000,
			 "latency_max": 900000, "margin_min": 12000},
			{"index": 1, "frames": 0, "bytes": 0, "opens": 0,
			 "wire_deferrals": 0, "guard_deferrals": 0,
			 "latency_count": 0, "latency_sum": 0,
			 "latency_max": 0}]}},
	"xstats": {"windows_opened": 40, "window_packets": 120,
		"plan_version": 7}}' \
'qdisc tdmwin 1: root clockid TAI cycle-time 10ms plan-version 7
	windows 1ms+2ms 6ms+1ms
 windows 40 sent 120 pkts 0 bytes bypass 0 pkts 0 bytes
 guard-deferrals 0 oversize-drops 0 hold-drops 0 nowindow-drops 0 plan-switches 0
 wire-deferrals 0 wire-backlog 0ns max 0ns txtime-drops 0
 lease-expiries 0 unconfirmed-holds 0 pending-aborts 0
 open-latency (0 samples) plan-version 7
 slots of plan-version 7:
 slot 0: sent 120 pkts 180000 bytes in 40 windows wire-deferrals 2 guard-deferrals 3 open-latency mean 250000ns max 900000ns (40 samples) margin-min 12000ns
 slot 1: sent 0 pkts 0 bytes in 0 windows wire-deferrals 0 guard-deferrals 0 (0 samples)' \
'{"options": {"clockid": "TAI", "cycle_time": 10000000, "plan_version": 7,
	"windows": [{"offset": 1000000, "length": 2000000},
		    {"offset": 6000000, "length": 1000000}]},
  "xstats": {"windows_opened": 40, "window_packets": 120, "window_bytes": 0,
	"bypass_packets": 0, "bypass_bytes": 0, "guard_deferrals": 0,
	"oversize_drops": 0, "hold_drops": 0, "nowindow_drops": 0, "open_latency_min": 0,
	"open_latency_max": 0, "open_latency_sum": 0, "open_latency_count": 0,
	"open_latency_mean": 0, "plan_switches": 0, "pending_base_time": 0,
	"plan_version": 7, "pending_version": 0, "pending": 0, "hold": 0,
	"wire_deferrals": 0, "wire_backlog_max": 0, "wire_backlog": 0,
	"txtime_drops": 0, "lease_expiries": 0, "unconfirmed_holds": 0,
	"pending_aborts": 0, "lease_held": 0, "pending_unconfirmed": 0,
	"slots_plan_version": 7,
	"slots": [{"index": 0, "frames": 120, "bytes": 180000, "opens": 40,
		"wire_deferrals": 2, "guard_deferrals": 3,
		"open_latency_count": 40, "open_latency_sum": 10000000,
		"open_latency_mean": 250000, "open_latency_max": 900000,
		"margin_min": 12000},
		{"index": 1, "frames": 0, "bytes": 0, "opens": 0,
		"wire_deferrals": 0, "guard_deferrals": 0,
		"open_latency_count": 0, "open_latency_sum": 0,
		"open_latency_mean": 0, "open_latency_max": 0}]}}'

# tc ends the (here empty) counters with a newline of its own.
show "short and missing attributes, empty counters" '{
	"options": {"cycle_time": {"raw": "01000000"},
		"limit": {"raw": ""}, "windows": [[1000000]]},
	"xstats": {}, "xstats_len": 0}' \
'qdisc tdmwin 1: root
	windows 1ms+
' \
'{"options": {"windows": [{"offset": 1000000}]}, "xstats": {}}'

tdm_done print
