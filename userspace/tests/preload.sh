#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of libtdmgate-preload.so around what needs no tdmwin qdisc
# (the host cannot load one; selftests/tdmgate_preload.sh judges the gating
# itself in the guest): it exports the five calls and nothing else; without
# TDMGATE_DEV it says so once and gates nothing; with a device that does
# not exist UDP sends fail with ENODEV, as with a TDMGATE_SOCK where no
# tdmd serves its plan store; with a device without a tdmwin
# qdisc the gate holds: a UDP sender (tdmgen, sendmmsg()) sends nothing
# while ping (ICMP) and a write() to a file pass.  Counted at the veth peer.
# Built into O/tests as test_preload; prints TAP lines.  Needs root and
# ip (else a skip).
#
#   tests/preload.sh SHIM TDMGEN
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
shim=$1
tdmgen=$2

{ [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v ping >/dev/null; } ||
	tdm_skip_all "needs root, ip and ping (uid $(id -u))"
# shellcheck source=veth_ns.sh
. "$(dirname "$(readlink -f "$0")")/veth_ns.sh"
tmp=$(mktemp -d) || exit 1
ns=tdmpre$$
held=
cleanup() {
	[ -n "$held" ] && kill -9 "$held" 2>/dev/null && wait "$held" 2>/dev/null
	veth_ns_del "$ns" "${ns}b"
	rm -rf "$tmp"
}
trap cleanup EXIT
veth_ns "$ns" "${ns}b" dva dvb
# What reaches the peer (the frames that left dva).
rx() { ip netns exec "${ns}b" cat /sys/class/net/dvb/statistics/rx_packets; }
pre() { ip netns exec "$ns" env LD_PRELOAD="$shim" "$@"; }
send() { "$tdmgen" -c 20 -s 100 -E 0 -q 198.18.0.2; }

check_eq "exports the five calls, nothing else" \
	"$(nm -D --defined-only "$shim" | awk '{ print $3 }' | sort | tr '\n' ' ')" \
	"send sendmmsg sendmsg sendto write "

# No TDMGATE_DEV: nothing gated, said once.
r0=$(rx)
pre "$tdmgen" -c 20 -s 100 -E 0 -q 198.18.0.2 2>"$tmp/none.err"
check_eq "no TDMGATE_DEV: the sender ran" $? 0
check_num "no TDMGATE_DEV: its 20 datagrams left" $(( $(rx) - r0 )) -ge 20
check_eq "no TDMGATE_DEV: said once" "$(cat "$tmp/none.err")" \
	"libtdmgate-preload: TDMGATE_DEV and TDMGATE_SOCK not set: nothing is gated"

# A device that does not exist: UDP sends fail, said.
r0=$(rx)
TDMGATE_DEV=nosuch0 pre bash -c "$(declare -f send); tdmgen=$tdmgen; send" 2>"$tmp/nodev.err"
check_eq "no such device: the sender fails" $? 1
check_match "no such device: said" "$(cat "$tmp/nodev.err")" \
	"TDMGATE_DEV nosuch0: No such device"
check_match "no such device: the send fails with ENODEV" "$(cat "$tmp/nodev.err")" \
	"send: No such device"
check_eq "no such device: nothing left" $(( $(rx) - r0 )) 0

# TDMGATE_SOCK (tdmd's plan store) where no tdmd serves: UDP sends fail, said.
r0=$(rx)
TDMGATE_SOCK=$tmp/none.gate pre bash -c "$(declare -f send); tdmgen=$tdmgen; send" 2>"$tmp/nosock.err"
check_eq "no plan store at TDMGATE_SOCK: the sender fails" $? 1
check_match "no plan store at TDMGATE_SOCK: said" "$(cat "$tmp/nosock.err")" \
	"$tmp/none.gate: libtdmgate: No such file or directory: UDP sends fail"
check_eq "no plan store at TDMGATE_SOCK: nothing left" $(( $(rx) - r0 )) 0

# A device without a tdmwin qdisc: the gate holds UDP, not ICMP nor files.
r0=$(rx)
# nsenter execs the sender (ip netns exec would fork it): $! is the sender.
TDMGATE_DEV=dva LD_PRELOAD="$shim" nsenter --net="/run/netns/$ns" \
	"$tdmgen" -c 20 -s 100 -E 0 -q 198.18.0.2 >/dev/null 2>&1 &
held=$!
check "no tdmwin qdisc: ping (ICMP) passes the shim" \
	env TDMGATE_DEV=dva ip netns exec "$ns" env LD_PRELOAD="$shim" \
	ping -c 1 -W 5 198.18.0.2
TDMGATE_DEV=dva pre bash -c "echo written >'$tmp/file'"
check_eq "no tdmwin qdisc: write() to a file passes" "$(cat "$tmp/file")" written
sleep 1
check "no tdmwin qdisc: the UDP sender waits" kill -0 "$held"
# The ping crossed; no UDP datagram did.
check_eq "no tdmwin qdisc: the ping and no UDP datagram left" $(( $(rx) - r0 )) 1
tdm_exit
