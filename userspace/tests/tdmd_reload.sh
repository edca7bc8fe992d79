#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reload without a gap: a coordinator and a member on loopback (the
# member on lo, which has no tdmwin qdisc: its plan is refused, its
# session is what is watched).  tdmctl reload and SIGHUP with a good
# change take it live: the member stays registered (one REGISTER in its
# log, no "lost the coordinator"), the coordinator keeps it up.  A file
# that does not parse, or that changes a key that takes a restart, is
# refused with the reason (tdmctl exits 1 and prints it) and the running
# configuration stays.  Prints how long tdmctl reload took, from the
# request to the new configuration in force (the reply comes after the
# swap).
# Host test, no root.  Built into O/tests as test_tdmd_reload (which
# passes the tdmd and tdmctl binaries); prints TAP lines.
#
#   tests/tdmd_reload.sh TDMD TDMCTL
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmd=$1 tdmctl=$2
# shellcheck source=tdmd_pair.sh
. "$(dirname "$(readlink -f "$0")")/tdmd_pair.sh"
coord_conf >"$d/c.conf"
member_conf "heartbeat_interval 1s" >"$d/m.conf"
check_here "the member registers with the coordinator" pair_start -l debug
registrations() { grep -c 'registered with the coordinator' "$d/m.log"; }

# ---- tdmctl reload, good: live ----
member_conf "heartbeat_interval 500ms" "lease 2s" "log_level debug" >"$d/m.conf"
t0=$(date +%s%N)
out=$("$tdmctl" -s "$d/m.sock" reload 2>&1)
rc=$?
t1=$(date +%s%N)
check_eq "tdmctl reload: accepted" "$rc" 0
check_eq "tdmctl reload: says what changed" "$out" \
	"reloaded $d/m.conf: log_level, heartbeat_interval, lease"
echo "# tdmctl reload to the new configuration in force: $(( (t1 - t0) / 1000 )) us"
check_here "the member logged it" grep -q "notice: reloaded $d/m.conf" "$d/m.log"
"$tdmctl" -s "$d/m.sock" status >/dev/null
check_here "and logs at the new level (debug)" wait_for grep -q "debug: control: 'status'" "$d/m.log"

# ---- refused: it does not parse ----
cp "$d/m.conf" "$d/m.good"
echo "bogus 1" >>"$d/m.conf"
line=$(wc -l <"$d/m.conf")
out=$("$tdmctl" -s "$d/m.sock" reload 2>&1)
check_eq "a file that does not parse: refused (exit 1)" "$?" 1
check_eq "... with the line and the reason" "$out" \
	"tdmctl: reload refused, the running configuration stays: $d/m.conf:$line: unknown key 'bogus'"

# ---- refused: a key that takes a restart ----
sed 's/interface lo/interface tdmnone0/' "$d/m.good" >"$d/m.conf"
out=$("$tdmctl" -s "$d/m.sock" reload 2>&1)
check_eq "a new interface: refused (exit 1)" "$?" 1
check_match "... saying it takes a restart and what reloads live" "$out" \
	"'interface' changed: that takes a restart \\(keys that reload live: log_level, heartbeat_interval, .*lease\\)"
member_conf "heartbeat_interval 500ms" "lease 2s" "log_level debug" "ptp_policy require" |
	grep -v 'ptp_policy off' >"$d/m.conf"
out=$("$tdmctl" -s "$d/m.sock" reload 2>&1)
check_match "ptp_policy turned on: refused" "$out" "'ptp_policy' turned on: that takes a restart"

# ---- SIGHUP ----
member_conf "heartbeat_interval 500ms" "log_level debug" >"$d/m.conf"
kill -HUP "$mpid"
check_here "SIGHUP reloads (the lease off)" wait_for \
	grep -q "notice: reloaded $d/m.conf: lease" "$d/m.log"
echo "bogus 1" >>"$d/m.conf"
kill -HUP "$mpid"
check_here "SIGHUP with a bad file: refused and logged" wait_for \
	grep -q "reload refused, the running configuration stays: .*unknown key 'bogus'" "$d/m.log"
check_here "tdmd is still running" kill -0 "$mpid"
answers() { "$tdmctl" -s "$d/m.sock" status >/dev/null; }
check_here "and answers" answers

# ---- the session never lapsed ----
check_eq "the member registered once" "$(registrations)" 1
check_eq "and never lost the coordinator" "$(grep -c 'lost the coordinator' "$d/m.log")" 0
check_here "the coordinator still has it up" up
check_eq "the coordinator saw it register once" \
	"$(grep -c 'member a registered from' "$d/c.log")" 1
check_eq "and never disconnect" "$(grep -c 'member a (.*) disconnected' "$d/c.log")" 0

# ---- the coordinator ----
coord_conf "ack_timeout 2s" "member_timeout 3s" >"$d/c.conf"
out=$("$tdmctl" -s "$d/c.sock" reload 2>&1)
check_eq "coordinator: ack_timeout, member_timeout live" "$out" \
	"reloaded $d/c.conf: ack_timeout, member_timeout"
coord_conf "listen ::1" >"$d/c.conf"
sed -i '0,/listen 127.0.0.1/{/listen 127.0.0.1/d}' "$d/c.conf"
out=$("$tdmctl" -s "$d/c.sock" reload 2>&1)
check_match "coordinator: a new listen address takes a restart" "$out" \
	"'listen' changed: that takes a restart \\(keys that reload live: log_level, ack_timeout, commit_lead, member_timeout, name_takeover\\)"
check_here "the member is still up" up

kill "$mpid" "$cpid"
wait "$mpid" "$cpid" 2>/dev/null
mpid='' cpid=''
[ "$TDM_FAILS" = 0 ] || { echo "# member log:"; sed 's/^/#   /' "$d/m.log" | tail -n 20; }
tdm_exit
