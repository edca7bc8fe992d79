#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-parse.sh [PLUGIN_DIR]
#
# The plugin's command-line parsing, through stock tc and no kernel module:
# tc runs on lo in a new network namespace with q_tdmwin.so from
# PLUGIN_DIR (default ../build/tc/asan, the ASan/UBSan build of `make
# test`).
#   - misuse: tc fails, and stderr has our message
#   - good input: parsing passes and the request goes to the kernel, which
#     here does not know the qdisc ("Error: Specified qdisc kind is
#     unknown.").  tests/nlfake.so captures the request and
#     tests/tdmwin_nl.py checks that it carries exactly the attributes
#     given, with the right values, sizes and NLA_F_NESTED flags.
# Needs root.  Prints ok / not ok per case and "parse: N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/tests/lib.sh"

shorten() {
	if [ ${#1} -gt 72 ]; then echo "${1:0:72}..."; else echo "$1"; fi
}

# bad ARGS MESSAGE: `tc qdisc add ... tdmwin ARGS` fails saying MESSAGE.
bad() {
	local name

	name="rejects: tdmwin $(shorten "$1")"

	capture=$tmp/capture
	rm -f "$capture"
	# shellcheck disable=SC2086
	run_tc qdisc add dev lo root handle 1: tdmwin $1
	if sanitizer_report; then
		tdm_fail_why "$name" "$(cat "$tmp/err")"
	elif [ $rc = 0 ] || ! grep -qF -- "$2" "$tmp/err"; then
		tdm_fail_why "$name" "exit $rc, expected stderr with: $2" \
			"got: $(cat "$tmp/err")"
	elif [ -s "$capture" ]; then
		tdm_fail_why "$name" "a request was sent to the kernel"
	else
		tdm_ok "$name"
	fi
}

# good ARGS EXPECTED [VERB]: parsing passes and the request to the kernel
# has exactly the attributes of EXPECTED (see tests/tdmwin_nl.py).
good() {
	local name verb=${3:-add} diff

	name="parses: tdmwin $(shorten "$1")"

	capture=$tmp/capture
	rm -f "$capture"
	# shellcheck disable=SC2086
	run_tc qdisc "$verb" dev lo root handle 1: tdmwin $1
	if sanitizer_report; then
		tdm_fail_why "$name" "$(cat "$tmp/err")"
	elif grep -q '^tdmwin:\|Usage:' "$tmp/err"; then
		tdm_fail_why "$name" "the plugin refused it: $(cat "$tmp/err")"
	elif [ $rc != 0 ] && ! grep -q '^Error: ' "$tmp/err"; then
		tdm_fail_why "$name" "exit $rc without an error from the kernel:" \
			"$(cat "$tmp/err")"
	elif [ ! -s "$capture" ]; then
		tdm_fail_why "$name" "no request was sent"
	elif ! diff=$($nl request "$capture" "$2"); then
		tdm_fail_why "$name" "$diff"
	else
		tdm_ok "$name"
	fi
}

# ---- help and misuse ---------------------------------------------------

run_tc qdisc add dev lo root handle 1: tdmwin help
missing=
for word in cycle-time base-time window OFFSET LENGTH guard link-speed \
	    clockid bypass-prio bypass-ptp hold release plan-version limit wire-clock txtime \
	    unconfirmed confirm abort lease renew VERSION off \
	    TIME BASE now now+TIME MBIT auto CLOCKID CLOCK_TAI \
	    CLOCK_REALTIME CLOCK_MONOTONIC CLOCK_BOOTTIME none PACKETS; do
	grep -qwF -- "$word" "$tmp/err" || missing="$missing $word"
done
if [ $rc = 0 ] || ! grep -q '^Usage: ... tdmwin' "$tmp/err" || [ -n "$missing" ]; then
	tdm_fail_why "help prints the usage" "exit $rc, missing:$missing"
else
	tdm_ok "help prints the usage, naming every option"
fi

bad "cycle-time" '"cycle-time" needs TIME'
bad "cycle-time 3x" 'invalid TIME "3x" for "cycle-time": unknown unit'
bad "cycle-time 3 us" 'unknown option "us"'
bad "cycle-time 1.5" 'invalid TIME "1.5" for "cycle-time": finer than a nanosecond'
bad "cycle-time 1.0000005ms" 'finer than a nanosecond'
bad "cycle-time -1" 'invalid TIME "-1" for "cycle-time": not a number'
bad "cycle-time +1" 'not a number'
bad "cycle-time .5ms" 'not a number'
bad "cycle-time 1.ms" 'not a number'
bad "cycle-time 0x10" 'unknown unit'
bad "cycle-time 18446744073709551616" 'too large'
bad "cycle-time 18446744073709551615s" 'too large'
bad "cycle-time 1ms cycle-time 2ms" 'duplicate "cycle-time"'
bad "base-time" '"base-time" needs BASE'
bad "base-time now-1s" 'invalid BASE "now-1s" for "base-time": not a number'
bad "base-time now+" 'invalid BASE "now+" for "base-time": not a number'
bad "base-time later" 'invalid BASE "later"'
bad "base-time 9223372036854775808" 'invalid BASE "9223372036854775808" for "base-time": too large'
bad "base-time now base-time now" 'duplicate "base-time"'
bad "window" '"window" needs OFFSET and LENGTH'
bad "window 0" '"window" needs a LENGTH after the OFFSET'
bad "window 0 guard 2us" 'invalid LENGTH "guard" for "window": not a number'
bad "window 1ms 2xs" 'invalid LENGTH "2xs" for "window"'
bad "window x 1ms" 'invalid OFFSET "x" for "window"'
bad "$(for i in $(seq 0 64); do printf 'window %dus 1us ' "$i"; done)" \
	'too many windows: at most 64 per cycle'
bad "window 0 1ms class" '"class" needs MINOR'
bad "window 0 1ms class x" 'invalid MINOR "x" for "class": not a decimal number'
bad "window 0 1ms class 0" 'invalid MINOR "0" for "class": classes start at 1'
bad "window 0 1ms class 4294967296" 'invalid MINOR "4294967296" for "class"'
bad "class 3 window 0 1ms" 'unknown option "class"'
bad "guard" '"guard" needs TIME'
bad "guard 5s" 'invalid TIME "5s" for "guard": too large'
bad "guard 1us guard 1us" 'duplicate "guard"'
bad "link-speed" '"link-speed" needs MBIT'
bad "link-speed fast" 'invalid MBIT "fast" for "link-speed"'
bad "link-speed 10Tbit" 'invalid MBIT "10Tbit"'
bad "link-speed 5000000Gbit" 'invalid MBIT "5000000Gbit" for "link-speed": too large'
bad "link-speed -1" 'invalid MBIT "-1"'
bad "link-speed 1 link-speed 2" 'duplicate "link-speed"'
bad "clockid" '"clockid" needs CLOCKID'
bad "clockid CLOCK_FOO" 'invalid CLOCKID "CLOCK_FOO" for "clockid"'
bad "clockid -1" 'invalid CLOCKID "-1"'
bad "clockid TAI clockid TAI" 'duplicate "clockid"'
bad "bypass-prio" '"bypass-prio" needs P[,P...] or none'
bad "bypass-prio 16" 'invalid priority list "16" for "bypass-prio": priorities are 0..15'
bad "bypass-prio 1,,2" 'invalid priority list "1,,2"'
bad "bypass-prio ,1" 'invalid priority list ",1"'
bad "bypass-prio 1," 'invalid priority list "1,"'
bad "bypass-prio 1;2" 'invalid priority list "1;2"'
bad "bypass-prio none bypass-prio 3" '"bypass-prio none" and priorities exclude each other'
bad "bypass-ptp" '"bypass-ptp" needs on or off'
bad "bypass-ptp maybe" 'invalid value "maybe" for "bypass-ptp": use on or off'
bad "bypass-ptp on bypass-ptp off" 'duplicate "bypass-ptp"'
bad "wire-clock" '"wire-clock" needs on or off'
bad "wire-clock 1" 'invalid value "1" for "wire-clock": use on or off'
bad "wire-clock on wire-clock on" 'duplicate "wire-clock"'
bad "txtime" '"txtime" needs on or off'
bad "txtime yes" 'invalid value "yes" for "txtime": use on or off'
bad "txtime off txtime on" 'duplicate "txtime"'
bad "hold release" '"hold" and "release" exclude each other'
bad "release hold" '"hold" and "release" exclude each other'
bad "hold hold" 'duplicate "hold"'
bad "lease" '"lease" needs TIME or off'
bad "lease soon" 'invalid TIME "soon" for "lease"'
bad "lease 1s lease 2s" 'duplicate "lease"'
bad "renew renew" 'duplicate "renew"'
bad "confirm" '"confirm" needs VERSION'
bad "confirm x" 'invalid VERSION "x" for "confirm"'
bad "abort -1" 'invalid VERSION "-1" for "abort"'
bad "confirm 1 abort 1" '"confirm" and "abort" exclude each other'
bad "confirm 1 confirm 1" 'duplicate "confirm"'
bad "unconfirmed window 0 1ms" '"unconfirmed" needs the plan'"'"'s base-time'
bad "unconfirmed unconfirmed base-time now+1s" 'duplicate "unconfirmed"'
bad "plan-version" '"plan-version" needs N'
bad "plan-version x" 'invalid N "x" for "plan-version": not a decimal number'
bad "plan-version -1" 'invalid N "-1" for "plan-version": not a decimal number'
bad "plan-version 4294967296" 'invalid N "4294967296" for "plan-version": too large'
bad "plan-version 1 plan-version 2" 'duplicate "plan-version"'
bad "limit" '"limit" needs PACKETS'
bad "limit 1k" 'invalid PACKETS "1k" for "limit"'
bad "limit +1" 'invalid PACKETS "+1" for "limit": not a decimal number'
bad "limit 1 limit 1" 'duplicate "limit"'
bad "frobnicate" 'unknown option "frobnicate"'
bad "cycle-time 1ms Window 0 1ms" 'unknown option "Window"'

# ---- good input -------------------------------------------------------

good "cycle-time 3300us base-time 1700000000000000000 window 0 1ms window 2.2ms 500us guard 2us link-speed 10000 clockid CLOCK_TAI bypass-prio 7 bypass-ptp on hold plan-version 12 limit 1000" \
	'{"cycle_time": 3300000, "base_time": 1700000000000000000,
	  "windows": [[0, 1000000], [2200000, 500000]], "guard": 2000,
	  "link_speed": 10000, "clockid": 11, "bypass_prios": 128,
	  "bypass_ptp": 1, "hold": 1, "plan_version": 12, "limit": 1000}'
good "" '{}'
good "hold" '{"hold": 1}' change
good "lease 500ms" '{"lease": 500000000}' change
good "lease off" '{"lease": 0}' change
good "renew" '{"renew": true}' change
good "lease 1s renew" '{"lease": 1000000000, "renew": true}' change
good "confirm 7" '{"confirm": 7}' change
good "abort 4294967295" '{"abort": 4294967295}' change
good "base-time now+2s window 0 1ms unconfirmed" \
	'{"base_time": "now+2000000000@TAI", "windows": [[0, 1000000]], "unconfirmed": 1}' change
good "release" '{"hold": 0}' change
good "window 1ms 1ms plan-version 13" \
	'{"windows": [[1000000, 1000000]], "plan_version": 13}' change
good "base-time now+2s" '{"base_time": "now+2000000000@TAI"}'
good "base-time now+1.5s clockid CLOCK_MONOTONIC" \
	'{"base_time": "now+1500000000@MONOTONIC", "clockid": 1}'
good "clockid boottime base-time now" \
	'{"base_time": "now+0@BOOTTIME", "clockid": 7}'
good "base-time now+0 clockid REALTIME" \
	'{"base_time": "now+0@REALTIME", "clockid": 0}'
good "base-time 0 clockid 11" '{"base_time": 0, "clockid": 11}'
good "base-time 1700000000s" '{"base_time": 1700000000000000000}'
good "cycle-time 1.5ms window 250 1us guard 0" \
	'{"cycle_time": 1500000, "windows": [[250, 1000]], "guard": 0}'
good "window 0 1ms class 3 window 1ms 1ms window 2ms 1ms class 1" \
	'{"windows": [[0, 1000000, 3], [1000000, 1000000], [2000000, 1000000, 1]]}'
good "cycle-time 10s" '{"cycle_time": 10000000000}'
good "cycle-time 1.000000001s" '{"cycle_time": 1000000001}'
good "cycle-time 0.000001s" '{"cycle_time": 1000}'
good "cycle-time 2.50000us" '{"cycle_time": 2500}'
good "cycle-time 18446744073709551615" '{"cycle_time": 18446744073709551615}'
good "guard 4294967295ns" '{"guard": 4294967295}'
good "bypass-prio 0,15 bypass-prio 3" '{"bypass_prios": 32777}'
good "bypass-prio 5,5" '{"bypass_prios": 32}'
good "bypass-prio none" '{"bypass_prios": 0}'
good "bypass-ptp off" '{"bypass_ptp": 0}'
good "wire-clock off" '{"wire_clock": 0}'
good "wire-clock on txtime on" '{"wire_clock": 1, "txtime": 1}'
good "txtime off" '{"txtime": 0}'
good "link-speed auto" '{"link_speed": 0}'
good "link-speed 25Gbit" '{"link_speed": 25000}'
good "link-speed 100mbit" '{"link_speed": 100}'
good "limit 4294967295 plan-version 0" \
	'{"limit": 4294967295, "plan_version": 0}'
good "$(for i in $(seq 0 63); do printf 'window %dus 500ns ' "$i"; done)" \
	"{\"windows\": [$(for i in $(seq 0 63); do
		printf '[%d, 500]' $((i * 1000)); [ "$i" = 63 ] || printf ', '; done)]}"

tdm_done parse
