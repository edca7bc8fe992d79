#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The coordinator's state_file on a real tdmd (no member: each push is
# aborted at ack_timeout, but its version is issued all the same): every
# push records its version before it leaves, a restarted coordinator
# numbers on from the file, versions never wrap (after 4294967295 a push
# is refused and the file stays), a file that does not parse stops tdmd
# and tdmd -n with its name and line, a directory it cannot write in fails
# tdmd -n, and no temporary file is left behind.  The logic behind it
# (hostile versions, adoption) is test_coord's.
# Host test, no root.  Built into O/tests as test_tdmd_state (which passes
# the tdmd and tdmctl binaries); prints TAP lines.
#
#   tests/tdmd_state.sh TDMD TDMCTL
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmd=$1 tdmctl=$2
# shellcheck source=tdmd_pair.sh
. "$(dirname "$(readlink -f "$0")")/tdmd_pair.sh"
coord_conf "ack_timeout 20ms" >"$d/c.conf"
state=$d/c.state

served() { "$tdmctl" -s "$d/c.sock" status >/dev/null 2>&1; }
coord_start() {
	"$tdmd" -f "$d/c.conf" >>"$d/c.log" 2>&1 &
	cpid=$!
	wait_for served
}
coord_stop() {
	kill "$cpid"
	wait "$cpid" 2>/dev/null
	cpid=''
}
# push: tdmctl plan push; its output in $d/push.out
push() { "$tdmctl" -s "$d/c.sock" plan push "$d/plan.conf" >"$d/push.out" 2>&1; }
issued() { sed -n 's/^issued //p' "$state"; }

check_here "a coordinator without a state file starts" coord_start
push
check_here "the first push is v1" grep -q '^plan v1: aborted' "$d/push.out"
check_eq "v1 is recorded" "$(issued)" 1
push
check_eq "then v2" "$(issued)" 2
coord_stop
check_here "it restarts" coord_start
push
check_here "after a restart, v3" grep -q '^plan v3: aborted' "$d/push.out"
check_eq "v3 is recorded" "$(issued)" 3
coord_stop

echo "issued 4294967294" >"$state"
check_here "it starts with v4294967294 issued" coord_start
push
check_here "the last version, v4294967295" grep -q '^plan v4294967295: aborted' "$d/push.out"
check_refused "the push after it" "plan versions are used up: v4294967295 was the last \($state\); versions never wrap" \
	"$tdmctl" -s "$d/c.sock" plan push "$d/plan.conf"
check_eq "nothing wrapped" "$(issued)" 4294967295
coord_stop

echo "issued 12x" >"$state"
check_refused "tdmd -n: a state file that does not parse" "$state:1: issued: " \
	"$tdmd" -n -f "$d/c.conf"
check_refused "tdmd: the same" "$state:1: issued: " "$tdmd" -f "$d/c.conf"
sed "s|^state_file .*|state_file $d/none/deeper/c.state|" "$d/c.conf" >"$d/n.conf"
check_refused "tdmd -n: a state directory it can neither write in nor create" \
	"state_file $d/none/deeper/c.state: cannot write in $d/none/deeper" \
	"$tdmd" -n -f "$d/n.conf"
check_refused "tdmd: the same" "state_file $d/none/deeper/c.state: cannot write in $d/none/deeper" \
	"$tdmd" -f "$d/n.conf"
rm -f "$state"
sed "s|^state_file .*|state_file $d/new/c.state|" "$d/c.conf" >"$d/c2.conf"
check_eq "tdmd -n: a state directory it will create" "$("$tdmd" -n -f "$d/c2.conf" 2>&1)" \
	"$d/c2.conf: configuration OK (coordinator)"
check_here "... and creates nothing" test ! -e "$d/new"
"$tdmd" -f "$d/c2.conf" >>"$d/c.log" 2>&1 &
cpid=$!
check_here "tdmd starts with it" wait_for served
check_here "... having created it" test -d "$d/new"
coord_stop
left=$(find "$d" -name 'c.state.tmp.*' | wc -l)
check_eq "no temporary file left behind" "$left" 0
tdm_exit
