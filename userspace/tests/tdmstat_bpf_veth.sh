#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the BPF receive recorder: tdmgen -> veth -> `tdmstat capture
# --recorder bpf` between two network namespaces (198.18.0.0/15 only), on
# the host's own kernel (BPF needs no module).  Checked: every packet
# recorded (counts against the end markers), software stamps, nothing left
# on the device afterwards, a second owner refused with the owner's pid,
# and without privileges a message that names what is needed.  Built into
# O/tests as test_tdmstat_bpf_veth, run by `make unit`; prints TAP.  Needs
# root, ip and a kernel that loads the program: otherwise a TAP skip with
# the reason ("1..0 # SKIP ...", exit 4).  About 3 s.
#
#   tests/tdmstat_bpf_veth.sh BINDIR      (BINDIR holds tdmgen and tdmstat)
set -uo pipefail
bin=${1:-$(dirname "$0")/../san/bin}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
skip_all() { echo "1..0 # SKIP $*"; exit 4; }

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
	skip_all "needs root and ip (uid $(id -u))"
fi
tmp=$(mktemp -d) || exit 1
a=tdmbA$$ b=tdmbB$$
cleanup() {
	[ -n "${cap:-}" ] && kill "$cap" 2>/dev/null && wait "$cap" 2>/dev/null
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
mac=$(ip -n "$b" -br link show vb | awk '{print $3}')
ip -n "$a" neigh add 198.18.7.2 lladdr "$mac" dev va nud permanent
printf '[auto]\nsenders 2\nwindow 1ms\ndead_time 100us\n' >"$tmp/plan"
chmod 0755 "$tmp"

ip netns exec "$b" "$bin/tdmstat" capture --recorder bpf -i vb -p "$tmp/plan" -e 2 -d 20s \
	-j -o "$tmp/out" >"$tmp/sum.json" 2>"$tmp/cap.err" &
cap=$!
for _ in $(seq 100); do
	grep -q recording "$tmp/cap.err" && break
	kill -0 "$cap" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q recording "$tmp/cap.err"; then
	# A kernel or container without BPF for us: not this test's failure.
	grep -qE "cannot (load|create|attach)" "$tmp/cap.err" &&
		skip_all "the BPF recorder does not load here: $(head -n 1 "$tmp/cap.err")"
	nok "capture --recorder bpf starts: $(cat "$tmp/cap.err")"
	echo "1..$n"
	exit 1
fi
ok "capture --recorder bpf records ($(grep -o 'BPF recorder ([a-z]*' "$tmp/cap.err"))"

out=$(ip netns exec "$b" "$bin/tdmstat" capture --recorder bpf -i vb -p "$tmp/plan" -d 1s -q \
	-o "$tmp/two" 2>&1)
check "a second owner is refused, the owner named" \
	grep -q "BPF recorder is attached to vb by pid $cap" <<<"$out"
if command -v setpriv >/dev/null; then
	mkdir -m 1777 "$tmp/np"
	out=$(ip netns exec "$b" setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all "$bin/tdmstat" capture --recorder bpf \
		-i vb -p "$tmp/plan" -d 1s -q -o "$tmp/np/x" 2>&1)
	check "without privileges: refused, saying what is needed" \
		grep -q "needs CAP_BPF and CAP_NET_ADMIN" <<<"$out"
fi

ip netns exec "$a" "$bin/tdmgen" -q -i 0 -r 20000pps -c 1000 -s 200 -E 3 -w 20ms 198.18.7.2 &&
ip netns exec "$a" "$bin/tdmgen" -q -i 1 -r 10000pps -c 500 -s 1400 -E 3 -w 20ms 198.18.7.2
check "tdmgen sent both streams" test $? = 0
wait "$cap"
check "capture exit status 0" test $? = 0
cap=
py() { python3 -c "import json,sys; d=json.load(open('$tmp/sum.json')); print($1)"; }
check "sent 1500 by the end markers" test "$(py "d['run']['sent']")" = 1500
check "received 1500, lost 0, no ring drops" \
	test "$(py "d['run']['received'],d['run']['lost'],d['run']['ring_drops']")" = "1500 0 0"
check "sender 1 sent 500" test "$(py "[s['sent'] for s in d['senders']]")" = "[1000, 500]"
check "timestamp source sw (SO_TIMESTAMPING held)" test "$(py "d['run']['ts_source']")" = sw
check "no sanitizer report" test -z "$(grep -E 'Sanitizer|runtime error' "$tmp/cap.err")"
left=$(bpftool prog show 2>/dev/null | grep -c 'name tdmrx_bpf')
check "no tdmrx_bpf program left" test "$left" = 0
echo "1..$n"
exit $failed
