#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of tdmgen --stack dpdk (DPDK's EAL without hugepages, a
# net_af_packet vdev) over a veth pair between two network namespaces
# (198.18.0.0/15 only), ungated: the host's kernel has no tdmwin qdisc to
# follow (the gate is judged in the guest, selftests/tdmgate_dpdk.sh).
#
#   - every datagram arrives, in order, with its stamped header (sender,
#     sequence, a TX time within the run) and the end markers' count; the
#     summary says DPDK, ungated, and what the PMD offers for launch time;
#   - the frames pass the qdisc by: a pfifo root counts none of them;
#   - tdmctl doctor lists the PMD's packet socket (a TX ring bound to dpA)
#     as a sender past the qdisc, held by tdmgen;
#   - without --ungated and without a tdmwin qdisc: exit 2, said; the same
#     with --gate-sock where no tdmd serves a plan store;
#   - bad input: an EAL argument it refuses, a port-less EAL, a datagram
#     larger than an mbuf: exit 2 with a message.
#
# Built into O/tests as test_tdmgen_dpdk (which passes the tdmgen and
# tdmctl binaries),
# run by `make unit`; prints TAP.  Needs root and ip (else "SKIP: ...",
# exit 4), and a tdmgen built with DPDK.  About 3 s.
#
#   tests/tdmgen_dpdk.sh TDMGEN TDMCTL
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmgen=$1 tdmctl=$2
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
	tdm_skip_all "needs root and ip (uid $(id -u))"
fi
[[ $(ldd "$tdmgen" 2>/dev/null) == *librte_eal* ]] ||
	tdm_skip_all "tdmgen built without DPDK (libdpdk-dev)"
# shellcheck source=veth_ns.sh
. "$(dirname "$(readlink -f "$0")")/veth_ns.sh"
tmp=$(mktemp -d) || exit 1
a=tdmdA$$ b=tdmdB$$
trap '[ -n "${bg:-}" ] && kill "$bg" 2>/dev/null && wait "$bg" 2>/dev/null
veth_ns_del "$a" "$b"; rm -rf "$tmp"' EXIT
veth_ns "$a" "$b" dpA dpB
mac=$(ip netns exec "$b" cat /sys/class/net/dpB/address)
ip netns exec "$a" tc qdisc replace dev dpA root handle 1: pfifo
gen() { ip netns exec "$a" "$tdmgen" --stack dpdk -I dpA -p 5001 -s 200 "$@" 198.18.0.2; }
tai() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_TAI))'; }

# The receiver: every datagram's header (tdm_pkt.h: magic, version, flags,
# hdr_len, sender, plan_version, seq, tx_ns, sent; big-endian).
ip netns exec "$b" python3 - "$tmp" <<'PY' &
import socket, struct, sys, os
tmp = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("198.18.0.2", 5001))
open(tmp + "/ready", "w").close()
s.settimeout(20)
with open(tmp + "/rx", "w") as out:
    while True:
        d = s.recv(65536)
        magic, ver, flags, hl, snd, pv, seq, tx, sent = struct.unpack(">IBBHIIQQQ", d[:40])
        if flags & 1:
            out.write("end %d %d\n" % (snd, sent))
            break
        out.write("%d %d %d %d\n" % (snd, seq, tx, len(d)))
PY
rx=$!
for _ in $(seq 100); do [ -f "$tmp/ready" ] && break; sleep 0.1; done
t0=$(tai)
if ! gen --ungated -i 7 -c 500 -r 5000pps -E 1 -w 10ms -j >"$tmp/summary" 2>"$tmp/err"; then
	tdm_fail_why "tdmgen --stack dpdk --ungated ran" "$(cat "$tmp/err")"
fi
t1=$(tai)
wait "$rx"
python3 - "$tmp" "$t0" "$t1" >"$tmp/checks" <<'PY'
import json, sys
tmp, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
summary = json.load(open(tmp + "/summary"))
seqs, end, bad = [], None, []
for line in open(tmp + "/rx"):
    w = [int(x) if x.isdigit() else x for x in line.split()]
    if w[0] == "end":
        end = (w[1], w[2])
        continue
    snd, seq, tx, ln = w
    seqs.append(seq)
    if snd != 7 or ln != 200 or not t0 <= tx <= t1:
        bad.append(line.strip())
def check(name, ok, detail=""):
    print(("ok " if ok else "fail ") + name + ("" if ok else ": " + detail))
check("every datagram arrived, in order", seqs == list(range(500)),
      "%d received, first out of place %s" % (len(seqs), next(
          (i for i, s in enumerate(seqs) if s != i), None)))
check("sender, size and TX stamp of each", not bad, "; ".join(bad[:3]))
check("the end marker counts them", end == (7, 500), str(end))
check("the summary: DPDK, ungated, launch time said",
      summary.get("stack") == "dpdk" and summary.get("gate") == "none"
      and summary.get("gating") == "none"
      and summary.get("launch_time") == "not offered by the PMD"
      and summary.get("sent") == 500, json.dumps(summary))
PY
while read -r res name; do
	if [ "$res" = ok ]; then
		tdm_ok "$name"
	else
		tdm_fail "$name"
	fi
done <"$tmp/checks"
pkts=$(ip netns exec "$a" tc -s qdisc show dev dpA | sed -n 's/.* \([0-9]*\) pkt .*/\1/p')
check_eq "the frames passed the qdisc by" "$pkts" 0

# The PMD's socket as tdmctl doctor sees it (bypass.rst, "Kernel and
# bypass traffic on one device"): a TX ring bound to dpA, held by tdmgen,
# listed while the sender runs (its EAL takes a moment to open it).
# (ip netns exec, not gen: $! is then tdmgen itself)
ip netns exec "$a" "$tdmgen" --stack dpdk -I dpA -p 5001 -s 200 --ungated \
	--dst-mac "$mac" -c 100000 -r 1000pps 198.18.0.2 >/dev/null 2>"$tmp/bg.err" &
bg=$!
seen=
for _ in $(seq 100); do
	ip netns exec "$a" "$tdmctl" doctor -i dpA -j --role sender \
		--ptp-socket "$tmp/ptp4l" >"$tmp/doctor.json" 2>/dev/null
	seen=$(python3 - "$tmp/doctor.json" "$bg" \
		"$(ip netns exec "$a" cat /sys/class/net/dpA/ifindex)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = [x for x in d["findings"] if x["id"] == "tdm.bypass"][0]
print(" ".join("%s/%s/%s/%s" % (s["device"], s["ifindex"] == int(sys.argv[3]),
                                s["pid"] == int(sys.argv[2]), s["comm"])
               for s in b["packet_senders"]))
PY
)
	[ -n "$seen" ] && break
	sleep 0.1
done
kill "$bg" 2>/dev/null; wait "$bg" 2>/dev/null; bg=
check_eq "doctor: the PMD's TX ring on dpA, held by tdmgen" "$seen" "dpA/True/True/tdmgen"

# Refused, with a message.  Starting the port flushed dpA's neighbours
# (the MAC address replayed, bypass.rst): --dst-mac from here on.
refused() {	# NAME PATTERN ARGS...
	local name=$1 pat=$2 out rc
	shift 2
	out=$(gen --dst-mac "$mac" "$@" 2>&1 >/dev/null)
	rc=$?
	check_eq "$name: exit 2" "$rc" 2
	check_match "$name: said" "$out" "$pat"
}
refused "gated without a tdmwin qdisc" 'dpA: no tdmwin qdisc to follow' -c 1
refused "gated by a plan store nobody serves" \
	"--gate-sock $tmp/none.gate: libtdmgate: No such file or directory \\(no such socket, or tdmd holds no plan yet\\)" \
	-c 1 --gate-sock "$tmp/none.gate"
refused "an EAL argument the EAL refuses" "DPDK's EAL: Invalid argument \\(arguments: --bogus\\)" \
	--ungated -c 1 --eal --bogus
refused "an EAL without a port" 'DPDK: no port' --ungated -c 1 \
	--eal '-l 0 --no-huge --no-shconf -m 64 --no-pci --no-telemetry'
refused "a datagram beyond an mbuf" 'one mbuf a datagram: --size at most 2006' \
	--ungated -c 1 -s 3000
tdm_exit
