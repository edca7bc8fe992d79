#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of tdmstat's records of tdmgen's packets over a veth pair
# between two network namespaces (198.18.0.0/15 only), once per way of
# recording them on the host's own kernel:
#
#   bpf      tdmstat capture --recorder bpf (BPF needs no module); also a
#            second owner refused with the owner's pid, without
#            privileges a message that names what is needed, nothing left
#            on the device afterwards;
#   tcpdump  tcpdump's pcap, then tdmstat analyze; also tcpdump saw every
#            packet;
#   xsk      an AF_XDP receiver (tdm-xsk-rx, libxdp) that takes every
#            packet before the stack and pushes its records into a
#            user-space producer ring, read by tdmstat capture --recorder
#            ring:NAME; also the receiver's own counts, and the window
#            rows by TX time equal those of tcpdump on the sender's end
#            of the same traffic (a tap AF_XDP does not take from).
#
# Both are then checked alike: every packet recorded (counts against the
# end markers), no loss, ring drops, duplicates or reordering, software
# stamps, the window rows, transit, no sanitizer report.  RECORDER=bpf,
# tcpdump or xsk runs one (default: all; each one's results are named
# with it).  Built into O/tests as test_tdmstat_veth, run by `make unit`;
# prints TAP.  Needs root and ip (else "SKIP: ...", exit 4), and
# tcpdump or a kernel that loads the BPF program for each way: a way that
# cannot run is a TAP skip with the reason, and if none could, the exit
# status is 4; run-unit counts them as skips.
# About 9 s.
#
#   tests/tdmstat_veth.sh BINDIR      (BINDIR holds tdmgen and tdmstat)
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
bin=${1:-$(dirname "$0")/../san/bin}
ways=${RECORDER:-bpf tcpdump xsk}
cap='' td='' xr=''

for w in $ways; do
	case $w in
	bpf | tcpdump | xsk) ;;
	*) tdm_fail "RECORDER=$ways: bpf, tcpdump, xsk or some of them"; tdm_exit ;;
	esac
done
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
	tdm_skip_all "needs root and ip (uid $(id -u))"
fi
tmp=$(mktemp -d) || exit 1
a=tdmsA$$ b=tdmsB$$
cleanup() {
	[ -n "${td:-}" ] && kill "$td" 2>/dev/null
	[ -n "${xr:-}" ] && kill "$xr" 2>/dev/null && wait "$xr" 2>/dev/null
	[ -n "${cap:-}" ] && kill "$cap" 2>/dev/null && wait "$cap" 2>/dev/null
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! ip netns add "$a" || ! ip netns add "$b" ||
   ! ip link add va netns "$a" type veth peer name vb netns "$b"; then
	tdm_skip_all "cannot create network namespaces and veth here"
fi
ip -n "$a" addr add 198.18.7.1/24 dev va && ip -n "$a" link set va up &&
ip -n "$b" addr add 198.18.7.2/24 dev vb && ip -n "$b" link set vb up &&
ip -n "$a" link set lo up && ip -n "$b" link set lo up || { tdm_fail "veth setup"; exit 1; }
# No ARP on the first packet: it would stretch transit and tcpdump's start.
mac=$(ip -n "$b" -br link show vb | awk '{print $3}')
ip -n "$a" neigh add 198.18.7.2 lladdr "$mac" dev va nud permanent
printf '[auto]\nsenders 2\nwindow 1ms\ndead_time 100us\n' >"$tmp/plan"
# The unprivileged capture (bpf) writes below it.
chmod 0755 "$tmp"

# send WAY: the two streams every way records: 1000 + 500 packets and 3 end
# markers each.
send() {
	ip netns exec "$a" "$bin/tdmgen" -q -i 0 -r 20000pps -c 1000 -s 200 -E 3 -w 20ms 198.18.7.2 &&
	ip netns exec "$a" "$bin/tdmgen" -q -i 1 -r 10000pps -c 500 -s 1400 -E 3 -w 20ms 198.18.7.2
	check "$1: tdmgen sent both streams" test $? = 0
}

# started_or_skip PID WORD FILE SKIP_RE WHAT WHY: wait up to 10 s for PID
# to say WORD in FILE.  If it does not (or dies first), it is stopped, and
# the way is a skip (WHY) when FILE matches SKIP_RE (what this host lacks),
# else a failure; false then.
started_or_skip() {
	for _ in $(seq 100); do
		grep -q "$2" "$3" && return 0
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "$2" "$3" && return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	if grep -qE "$4" "$3"; then
		tdm_skip "$5" "$6: $(head -n 1 "$3")"
	else
		tdm_fail "$5 starts: $(cat "$3")"
	fi
	return 1
}

# record_bpf: the capture records while send runs; its JSON summary into
# $tmp/bpf.json, its files as $tmp/bpf*, its messages in $tmp/bpf.err.
# False if the way cannot run here (a skip, said).
record_bpf() {
	ip netns exec "$b" "$bin/tdmstat" capture --recorder bpf -i vb -p "$tmp/plan" -e 2 -d 20s \
		-j -o "$tmp/bpf" >"$tmp/bpf.json" 2>"$tmp/bpf.err" &
	cap=$!
	# A kernel or container without BPF for us: not this test's failure.
	if ! started_or_skip "$cap" recording "$tmp/bpf.err" "cannot (load|create|attach)" \
		"bpf: capture --recorder bpf" "the BPF recorder does not load here"; then
		cap=
		return 1
	fi
	tdm_ok "bpf: capture --recorder bpf records ($(grep -o 'BPF recorder ([a-z]*' "$tmp/bpf.err"))"

	out=$(ip netns exec "$b" "$bin/tdmstat" capture --recorder bpf -i vb -p "$tmp/plan" -d 1s -q \
		-o "$tmp/two" 2>&1)
	check "bpf: a second owner is refused, the owner named" \
		grep -q "BPF recorder is attached to vb by pid $cap" <<<"$out"
	if command -v setpriv >/dev/null; then
		mkdir -m 1777 "$tmp/np"
		out=$(ip netns exec "$b" setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all --bounding-set=-all "$bin/tdmstat" capture --recorder bpf \
			-i vb -p "$tmp/plan" -d 1s -q -o "$tmp/np/x" 2>&1)
		check "bpf: without privileges: refused, saying what is needed" \
			grep -q "needs CAP_BPF and CAP_NET_ADMIN" <<<"$out"
	fi

	send bpf
	wait "$cap"
	check "bpf: capture exit status 0" test $? = 0
	cap=
	left=$(bpftool prog show 2>/dev/null | grep -c 'name tdmrx_bpf')
	check "bpf: no tdmrx_bpf program left" test "$left" = 0
}

# record_tcpdump: tcpdump captures while send runs, tdmstat analyze reads
# its pcap; the same outputs as record_bpf's, as $tmp/tcpdump*.
record_tcpdump() {
	if ! command -v tcpdump >/dev/null; then
		tdm_skip "tcpdump: tcpdump and tdmstat analyze" "tcpdump is not installed"
		return 1
	fi
	ip netns exec "$b" tcpdump -U --immediate-mode -q -n -i vb -j host \
		--time-stamp-precision=nano -s 128 -w "$tmp/cap.pcap" udp dst port 8081 \
		2>"$tmp/tcpdump.log" &
	td=$!
	for _ in $(seq 50); do grep -q listening "$tmp/tcpdump.log" && break; sleep 0.1; done
	check "tcpdump: tcpdump is listening" grep -q listening "$tmp/tcpdump.log"
	send tcpdump
	sleep 0.3
	kill -INT "$td"; wait "$td"; td=
	got=$(grep -oE '^[0-9]+ packets captured' "$tmp/tcpdump.log" | grep -oE '^[0-9]+')
	check "tcpdump: tcpdump captured every packet (${got:-?} of 1506)" test "${got:-0}" = 1506
	"$bin/tdmstat" analyze -q -j -p "$tmp/plan" -o "$tmp/tcpdump" "$tmp/cap.pcap" \
		>"$tmp/tcpdump.json" 2>"$tmp/tcpdump.err"
	check "tcpdump: tdmstat analyze succeeded" test $? = 0
}

# record_xsk: tdm-xsk-rx takes vb's packets with AF_XDP into ring $ring,
# tdmstat capture --recorder ring:$ring reads it while send runs; the same
# outputs as record_bpf's, as $tmp/xsk*, and the receiver's counts.
ring=tdmveth$$
record_xsk() {
	ip netns exec "$b" "$bin/tdm-xsk-rx" -i vb -n "$ring" 2>"$tmp/xskrx.err" &
	xr=$!
	if ! started_or_skip "$xr" receiving "$tmp/xskrx.err" "AF_XDP socket on vb|xsk_umem__create" \
		"xsk: tdm-xsk-rx" "no AF_XDP here"; then
		xr=
		return 1
	fi
	tdm_ok "xsk: tdm-xsk-rx receives on vb into ring $ring"
	"$bin/tdmstat" capture --recorder "ring:$ring" -p "$tmp/plan" -e 2 -d 20s \
		-j -o "$tmp/xsk" -w "$tmp/xsk.rec" >"$tmp/xsk.json" 2>"$tmp/xsk.err" &
	cap=$!
	# The same traffic tapped where AF_XDP does not take it: leaving va.
	if command -v tcpdump >/dev/null; then
		ip netns exec "$a" tcpdump -U --immediate-mode -q -n -i va -Q out \
			--time-stamp-precision=nano -s 128 -w "$tmp/tap.pcap" \
			udp dst port 8081 2>"$tmp/tap.log" &
		td=$!
		for _ in $(seq 50); do grep -q listening "$tmp/tap.log" && break; sleep 0.1; done
	fi
	sleep 0.3
	send xsk
	if [ -n "$td" ]; then
		sleep 0.3
		kill -INT "$td"; wait "$td"; td=
	fi
	wait "$cap"
	check "xsk: capture exit status 0" test $? = 0
	cap=
	kill -TERM "$xr"
	wait "$xr"
	check "xsk: tdm-xsk-rx exit status 0" test $? = 0
	xr=
	check "xsk: tdm-xsk-rx recorded 1506 records, dropped none" \
		grep -qE " 1506 records, 0 dropped" "$tmp/xskrx.err"
	check "xsk: no sanitizer report from tdm-xsk-rx" \
		test -z "$(grep -E 'Sanitizer|runtime error' "$tmp/xskrx.err")"
	check "xsk: the closed ring stays for its reader" \
		test -e "/dev/shm/tdmrx-ring-$ring"
	rm -f "/dev/shm/tdmrx-ring-$ring"
	if [ -e "$tmp/tap.pcap" ]; then
		# By TX time, a window's rows do not depend on whose receive
		# stamps: the ring's and the tap's must agree to the byte.
		"$bin/tdmstat" analyze -q -A tx -p "$tmp/plan" -o "$tmp/xtx" "$tmp/xsk.rec" &&
		"$bin/tdmstat" analyze -q -A tx -p "$tmp/plan" -o "$tmp/ttx" "$tmp/tap.pcap"
		check "xsk: analyze -A tx of the ring's records and of the tap ran" test $? = 0
		cols() { cut -d, -f"$(head -n 1 "$1" | tr , '\n' | grep -nxE \
			'window|sender|cycle|slot|packets|bytes|missing|duplicates|reordered|tx_outside|start_tx_ns|end_tx_ns' |
			cut -d: -f1 | paste -sd,)" "$1"; }
		check "xsk: window rows by TX time equal those of a tap on va" \
			cmp -s <(cols "$tmp/xtx-windows.csv") <(cols "$tmp/ttx-windows.csv")
	fi
	return 0
}

# judge WAY: what every way must have recorded, from its JSON summary and
# window rows.
judge() {
	local w=$1 rows pk tmin
	py() { python3 -c "import json,sys; d=json.load(open('$tmp/$w.json')); print($1)"; }
	check "$w: records: 1506" test "$(py "d['run']['records']")" = 1506
	check "$w: end markers: 6" test "$(py "d['run']['end_markers']")" = 6
	check "$w: sent 1500 by the end markers" test "$(py "d['run']['sent']")" = 1500
	check "$w: received 1500, lost 0, no ring drops" \
		test "$(py "d['run']['received'],d['run']['lost'],d['run']['ring_drops']")" = "1500 0 0"
	check "$w: no duplicates, no reordering" \
		test "$(py "d['run']['duplicates']+d['run']['reordered']")" = 0
	check "$w: sender 1 sent 500 of 1400 bytes" \
		test "$(py "[s['sent'] for s in d['senders']]")" = "[1000, 500]"
	# The capture holds SO_TIMESTAMPING, tcpdump stamps in software.
	check "$w: timestamp source sw" test "$(py "d['run']['ts_source']")" = sw
	rows=$(($(wc -l <"$tmp/$w-windows.csv") - 1))
	check "$w: window rows written ($rows) = windows in the JSON" \
		test "$rows" = "$(py "d['run']['windows']")"
	pk=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "packets") c = i; next }
		{ s += $c } END { print s }' "$tmp/$w-windows.csv")
	check "$w: the window rows hold every packet ($pk)" test "$pk" = 1500
	tmin=$(py "min(s['transit_min_ns'] for s in d['senders'])")
	check "$w: transit is positive and below 50 ms ($tmin ns)" \
		test "$tmin" -gt 0 -a "$tmin" -lt 50000000
	check "$w: no sanitizer report" \
		test -z "$(grep -E 'Sanitizer|runtime error' "$tmp/$w.err")"
}

for w in $ways; do
	"record_$w" && judge "$w"
done
# Every way skipped (their reasons above): the test, too.
[ "$TDM_N" -gt 0 ] && [ "$TDM_N" = "$TDM_SKIPS" ] &&
	tdm_skip_all "every way of recording skipped"
tdm_exit
