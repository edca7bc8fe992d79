#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gate tdmd on a real tdmd, no kernel: a coordinator and two members whose
# devices have no netdev (a and b, as NICs bound to vfio), and a follower
# through libtdmgate (tdmgate-probe, tests/tdmgate_probe.c) on a's plan
# store socket.  The follower gets the first plan and opens at its base;
# every pushed plan reaches it prepared, then committed, and takes over at
# its base; a plan without windows for a holds it, the next releases it;
# killing a's tdmd closes the follower's gate when a's lease ends, and at
# once for b, which has no lease; a socket that is missing, refused or
# speaks garbage is a precise error.  The latencies from tdmctl plan push
# to the follower, over PUSHES pushes, are printed as min/median/max (the
# bound Documentation/libtdmgate.rst states).
# Host test, no root.  Built into O/tests as test_tdmd_store; prints TAP.
#
#   tests/tdmd_store.sh TDMD TDMCTL TDMGATE_PROBE
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmd=$1 tdmctl=$2 probe=$3
# shellcheck source=tdmd_pair.sh
. "$(dirname "$(readlink -f "$0")")/tdmd_pair.sh"
PUSHES=${PUSHES:-20}
LEASE_MS=1000
bpid='' ppid_a='' ppid_b=''
trap '[ -n "$ppid_a" ] && kill "$ppid_a" 2>/dev/null; [ -n "$ppid_b" ] && kill "$ppid_b" 2>/dev/null
      [ -n "$bpid" ] && kill "$bpid" 2>/dev/null; [ -n "$mpid" ] && kill "$mpid" 2>/dev/null
      [ -n "$cpid" ] && kill "$cpid" 2>/dev/null; rm -rf "$d"' EXIT

# Plans: a and b, and b alone (a then has no windows: it holds).
plan() {
	printf '[global]\ncycle_time 10ms\nlead_time 300ms\nbase_align 0\nlink_speed 10000\n'
	printf '[sender %s]\nwindow %s 2ms\n' "$@"
}
plan a 0 b 5ms >"$d/ab.conf"
cp "$d/ab.conf" "$d/plan.conf"
plan b 5ms >"$d/b.conf"
coord_conf "commit_lead 100ms" >"$d/c.conf"
gate_member_conf 0000:03:00.0 "$d/a.gate" "lease ${LEASE_MS}ms" >"$d/m.conf"
gate_member_conf 0000:04:00.0 "$d/b.gate" |
	sed -e 's/^name a$/name b/' -e "s|$d/m.sock|$d/b.sock|" >"$d/b.conf.tdm"

both_up() {
	"$tdmctl" -s "$d/c.sock" status 2>/dev/null | grep -Eq '^ +a +up ' &&
	"$tdmctl" -s "$d/c.sock" status 2>/dev/null | grep -Eq '^ +b +up '
}
"$tdmd" -f "$d/b.conf.tdm" >"$d/b.log" 2>&1 &
bpid=$!
pair_start
check_here "a coordinator and two members without netdevs come up" wait_for both_up

# probe_lines FILE PATTERN: the probe's lines that match (ERE).
last_match() { grep -E -- "$2" "$1" | head -n 1; }
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p;s/^$2=\([^ ]*\).*/\1/p" <<<"$1" | head -n 1; }
wait_line() { wait_for grep -Eq -- "$2" "$1"; }

"$probe" "$d/a.gate" >"$d/pa.out" 2>"$d/pa.err" &
ppid_a=$!
"$probe" "$d/b.gate" >"$d/pb.out" 2>"$d/pb.err" &
ppid_b=$!
check_here "the follower gets plan v1 and the gate opens" \
	wait_line "$d/pa.out" ' v=1 .* state=open'
line=$(last_match "$d/pa.out" ' v=1 .* state=open')
check_num "... from its base time, not before" "$(field "$line" launch)" -ge "$(field "$line" base)"
check_eq "... with a's lease" "$(field "$line" lease)" $((LEASE_MS * 1000000))
check_here "tdmctl status shows a's gate kind, socket and follower" \
	grep -q "^gate: tdmd (no netdev): the plan store, on $d/a.gate, 1 follower$" \
	<("$tdmctl" -s "$d/m.sock" status)
check_here "... and in JSON" grep -q '"gate": *{ *"kind": *"tdmd"' \
	<("$tdmctl" -s "$d/m.sock" -j status | tr -d '\n')
check_here "... and b's" grep -q "^gate: tdmd (no netdev): the plan store, on $d/b.gate, 1 follower$" \
	<("$tdmctl" -s "$d/b.sock" status)

# Pushes: from tdmctl plan push to the follower seeing the plan prepared
# (pending, unconfirmed; when it lasts long enough for the probe to see),
# then committed (pending, confirmed); and the pending plan taking over
# at its base.
prep_ms=() conf_ms=() late_us=() commit_us=()
bad=0
for i in $(seq "$PUSHES"); do
	v=$((i + 1))
	t0=$(now_ns)
	"$tdmctl" -s "$d/c.sock" plan push "$d/ab.conf" >"$d/push.out" 2>&1 ||
		{ bad=1; tdm_log "push $i: $(cat "$d/push.out")"; break; }
	if ! wait_line "$d/pa.out" " v=$v .*state=open"; then
		bad=1
		tdm_log "push $i: plan v$v never took over: $(tail -n 3 "$d/pa.out")"
		break
	fi
	# Prepared lasts as long as the acks take: the probe, which looks
	# every millisecond, may see it committed at once.
	p=$(last_match "$d/pa.out" " pv=$v .*unconf=1")
	c=$(last_match "$d/pa.out" " pv=$v .*unconf=0")
	s=$(last_match "$d/pa.out" " v=$v ")
	if [ -z "$c" ]; then
		bad=1
		tdm_log "push $i: v$v not seen committed before its base"
		break
	fi
	[ -z "$p" ] || prep_ms+=("$(( ($(field "$p" real) - t0) / 1000 ))")
	# The coordinator's log stamps its decision on CLOCK_MONOTONIC.
	tc=$(sed -n "s/^\[ *\([0-9]*\)\.\([0-9]*\)\] .*plan v$v: prepared by all .*committing$/\1\2/p" "$d/c.log" | head -n 1)
	[ -z "$tc" ] || commit_us+=("$(( $(field "$c" mono) / 1000 - 10#$tc ))")
	conf_ms+=("$(( ($(field "$c" real) - t0) / 1000 ))")
	late_us+=("$(( ($(field "$s" gate) - $(field "$s" base)) / 1000 ))")
	if [ "$(field "$s" gate)" -lt "$(field "$s" base)" ]; then
		bad=1
		tdm_log "push $i: v$v took over before its base: $s"
	fi
done
check_eq "$PUSHES pushes reach the follower committed, and switch at their base" "$bad" 0
check_num "... most of them seen prepared first" "${#prep_ms[@]}" -ge $((PUSHES / 2))

# stats NAME VALUES...: min/median/max of the values (us), as ms.
stats() {
	local name=$1
	shift
	[ $# -gt 0 ] || return 0
	printf '%s\n' "$@" | sort -n | awk -v n="$name" '
		{ v[NR] = $1 }
		END { printf "# %s: min %.3f ms, median %.3f ms, max %.3f ms (%d)\n",
		      n, v[1] / 1000, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000, NR }'
}
stats "tdmctl plan push -> follower sees it prepared" "${prep_ms[@]}"
stats "tdmctl plan push -> follower sees it committed" "${conf_ms[@]}"
stats "coordinator commits -> follower sees it committed" "${commit_us[@]}"
stats "pending plan's base -> follower runs it" "${late_us[@]}"
max_commit=$(printf '%s\n' "${commit_us[@]}" 0 | sort -n | tail -n 1)
# The bounds below are what a slow CI machine under ASan passes (the
# figures printed above are the measurement; under make unit on a loaded
# 2-core host the worst was 63 ms): a follower that is not told
# waits forever, which they still catch.
check_num "the coordinator's commit reaches the follower within 1 s (max, us)" "$max_commit" -lt 1000000
check_num "... measured for every push" "${#commit_us[@]}" -eq "$PUSHES"
max_late=$(printf '%s\n' "${late_us[@]}" 0 | sort -n | tail -n 1)
# The probe asks every millisecond; 1 s allows a loaded host.
check_num "the follower switches within 1 s of the base (max, us)" "$max_late" -lt 1000000

# Hold: a plan without windows for a holds a's gate at once (prepared
# with hold); the next plan with a's windows releases it at its base.
v=$((PUSHES + 2))
t0=$(now_ns)
"$tdmctl" -s "$d/c.sock" plan push "$d/b.conf" >"$d/push.out" 2>&1
check_here "a plan without a's windows holds the follower's gate" \
	wait_line "$d/pa.out" "hold=1 .*state=hold"
h=$(last_match "$d/pa.out" "hold=1 .*state=hold")
[ -n "$h" ] && tdm_log "tdmctl plan push -> follower holds: $(( ($(field "$h" real) - t0) / 1000000 )) ms"
"$tdmctl" -s "$d/c.sock" plan push "$d/ab.conf" >"$d/push.out" 2>&1
check_here "the next plan with a's windows releases it" \
	wait_line "$d/pa.out" " v=$((v + 1)) .*hold=0 .*state=open"

# Lease: a's tdmd killed, its socket closes; the follower keeps the plan
# until the lease ends (renewed every quarter of it), then holds.
stop_now "$mpid"
mpid=''
check_here "a's tdmd killed: the follower's gate closes when the lease ends" \
	wait_line "$d/pa.out" "state=lease_out"
l=$(last_match "$d/pa.out" "state=lease_out")
if [ -n "$l" ]; then
	out_ms=$(( ($(field "$l" real) - t0) / 1000000 ))
	tdm_log "tdmd killed -> follower's gate closed (lease ${LEASE_MS} ms): $out_ms ms"
	# Renewed every quarter of the lease: it ends 3/4 to 1 lease after
	# the kill; half a lease allows a renewal starved on a loaded host.
	check_num "... on its lease, not at once (ms)" "$out_ms" -ge $((LEASE_MS / 2))
	check_num "... and within the lease (ms)" "$out_ms" -le $((LEASE_MS + 500))
fi
stop_now "$bpid"
bpid=''
check_here "b's tdmd (no lease) killed: its follower's gate closes at once" \
	wait_line "$d/pb.out" "state=gone"
g=$(last_match "$d/pb.out" "state=gone")
[ -n "$g" ] && check_num "... within 1 s (ms)" \
	"$(( ($(field "$g" real) - t0) / 1000000 ))" -lt 1000

# Bad inputs, each a precise error.
check_refused "a socket path that does not exist" "$d/none.gate: No such file or directory" \
	"$probe" --for 1 "$d/none.gate"
check_refused "a stale socket nobody serves" "$d/a.gate: Connection refused" \
	"$probe" --for 1 "$d/a.gate"
python3 - "$d/bad.gate" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept()
c.send(b"\x10\x00\x00\x00\x24\x00\x00\x00garbage!")   # no RTM_NEWQDISC
c.recv(1)
EOF
pypid=$!
wait_for test -S "$d/bad.gate"
check_refused "a socket that sends no qdisc message" "$d/bad.gate: Protocol error" \
	"$probe" --for 1 "$d/bad.gate"
kill "$pypid" 2>/dev/null
gate_member_conf 0000:03:00.0 "$d/no/deeper/a.gate" >"$d/ro.conf"
check_refused "a gate_socket two directories deep that do not exist" \
	"gate socket $d/no/deeper/a.gate: cannot make $d/no/deeper: No such file or directory" \
	"$tdmd" -f "$d/ro.conf"
gate_member_conf 0000:03:00.0 "$d/m.sock" >"$d/file.conf"
: >"$d/plain"
sed -i "s|^gate_socket .*|gate_socket $d/plain|" "$d/file.conf"
check_refused "a gate_socket that is a file, not a socket" \
	"gate socket $d/plain exists and is not a socket; remove it or set gate_socket" \
	"$tdmd" -f "$d/file.conf"
check_here "the follower reported no protocol error on the way" test ! -s "$d/pa.err"
tdm_exit
