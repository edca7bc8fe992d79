#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of `tdmctl doctor` on a veth pair in a network namespace
# (198.18.0.0/15 only) with known settings: txqueuelen 10 on one end and
# 1000 on the other, no tdmwin qdisc, no ptp4l (a missing socket, then one
# that never answers), then packet sockets of every kind (tdm.bypass lists
# exactly those with a TX ring on the device or on none).  Built into O/tests as test_tdmctl_doctor and run by
# `make unit` with the cmocka tests; prints TAP lines.  Needs root, ip and
# python3: without them it prints a TAP skip with the reason ("SKIP: ...",
# exit 4), counted as a skip.  About 3 s.
#
#   tests/tdmctl_doctor.sh BINDIR      (BINDIR holds tdmctl)
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
bin=${1:-$(dirname "$0")/../san/bin}

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v python3 >/dev/null; then
	tdm_skip_all "needs root, ip and python3 (uid $(id -u))"
fi
tmp=$(mktemp -d) || exit 1
ns=tdmdoc$$
cleanup() {
	[ -n "${fake:-}" ] && kill "$fake" 2>/dev/null && wait "$fake" 2>/dev/null
	[ -n "${pk:-}" ] && kill "$pk" 2>/dev/null && wait "$pk" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! ip netns add "$ns" || ! ip -n "$ns" link add dva type veth peer name dvb; then
	tdm_skip_all "cannot create a network namespace and veth here"
fi
ip -n "$ns" link set dva txqueuelen 10 &&
ip -n "$ns" link set dvb txqueuelen 1000 &&
ip -n "$ns" addr add 198.18.9.1/24 dev dva && ip -n "$ns" link set dva up &&
ip -n "$ns" addr add 198.18.9.2/24 dev dvb && ip -n "$ns" link set dvb up ||
	{ tdm_fail "veth setup"; exit 1; }
# The kernel's link watch reports a veth up some time after "link set up"
# (a second's delay, more on a loaded host): doctor's nic.link reads the
# operstate, so wait for it rather than race it.
for _ in $(seq 100); do
	[ "$(ip netns exec "$ns" cat /sys/class/net/dva/operstate)" = up ] &&
		[ "$(ip netns exec "$ns" cat /sys/class/net/dvb/operstate)" = up ] && break
	sleep 0.1
done

doctor() { ip netns exec "$ns" "$bin/tdmctl" doctor "$@"; }
# f FILE ID FIELD: one field of one finding ("" if absent or null)
f() {
	python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for x in d["findings"]:
    if x["id"] == sys.argv[2]:
        v = x.get(sys.argv[3])
        print("" if v is None else v)
EOF
}

before=$(ip -n "$ns" -d link show; tc -n "$ns" qdisc show)

doctor -i dva -j --role sender --ptp-socket "$tmp/ptp4l" >"$tmp/a.json" 2>"$tmp/a.err"
rc=$?
check "exit status 1: a check failed (no ptp4l)" test "$rc" = 1
check "stderr is empty" test ! -s "$tmp/a.err"
check "JSON parses, one finding per check, ids unique" python3 -c "
import json; d = json.load(open('$tmp/a.json'))
ids = [x['id'] for x in d['findings']]
assert len(ids) == 23 and len(set(ids)) == 23, ids
assert d['interface'] == 'dva' and d['role'] == 'sender' and not d['role_guessed']
assert d['worst'] == 'fail'
for x in d['findings']:
    assert x['severity'] in ('ok', 'info', 'warn', 'fail', 'skip'), x
    assert x['seen'], x
    if x['severity'] in ('warn', 'fail') : assert x['recommended'], x
"
check "ptp.phc_offset skipped: veth has no PHC" \
	test "$(f "$tmp/a.json" ptp.phc_offset severity)" = skip
check "net.txqueuelen warns at 10" test "$(f "$tmp/a.json" net.txqueuelen severity)" = warn
check "net.txqueuelen says 10" grep -q '^txqueuelen 10$' <<<"$(f "$tmp/a.json" net.txqueuelen seen)"
check "net.txqueuelen fix: ip link set dev dva txqueuelen 1000" \
	test "$(f "$tmp/a.json" net.txqueuelen fix)" = "ip link set dev dva txqueuelen 1000"
check "nic.rx_ring skipped on veth" test "$(f "$tmp/a.json" nic.rx_ring severity)" = skip
check "nic.rx_ring says why" grep -q "dva has no ring parameters" <<<"$(f "$tmp/a.json" nic.rx_ring seen)"
check "nic.tx_ring skipped on veth" test "$(f "$tmp/a.json" nic.tx_ring severity)" = skip
check "net.bql skipped: virtual device" grep -q "virtual device" <<<"$(f "$tmp/a.json" net.bql seen)"
check "nic.irq_affinity skipped on veth" test "$(f "$tmp/a.json" nic.irq_affinity severity)" = skip
check "nic.link ok: up" grep -q "^link up" <<<"$(f "$tmp/a.json" nic.link seen)"
check "nic.flow_control skipped on veth" test "$(f "$tmp/a.json" nic.flow_control severity)" = skip
check "nic.flow_control says why (no PAUSE, no DCB)" test "$(f "$tmp/a.json" nic.flow_control seen)" = \
	"PAUSE unknown (the driver does not report it); PFC unknown (no DCB support in the driver)"
check "tdm.qdisc warns on a sender without tdmwin" test "$(f "$tmp/a.json" tdm.qdisc severity)" = warn
check "tdm.qdisc says there is none" grep -q "no tdmwin qdisc at the root of dva" <<<"$(f "$tmp/a.json" tdm.qdisc seen)"
check "tdm.qdisc fix is the tc command" grep -q "^tc qdisc replace dev dva root handle 1: tdmwin " <<<"$(f "$tmp/a.json" tdm.qdisc fix)"
check "ptp.port fails: ptp4l not running" test "$(f "$tmp/a.json" ptp.port severity)" = fail
check "ptp.port says why" grep -q "ptp4l is not running (no ptp4l socket at $tmp/ptp4l)" <<<"$(f "$tmp/a.json" ptp.port seen)"
check "ptp.port fix starts ptp4l on dva" grep -q "^ptp4l -i dva .*-s" <<<"$(f "$tmp/a.json" ptp.port fix)"
check "ptp.offset skipped without ptp4l" test "$(f "$tmp/a.json" ptp.offset severity)" = skip
check "tdm.tdmrx skipped for a sender" test "$(f "$tmp/a.json" tdm.tdmrx severity)" = skip
check "tdm.bypass: no packet socket with a TX ring yet" \
	grep -q "; no packet socket with a TX ring$" <<<"$(f "$tmp/a.json" tdm.bypass seen)"
check "tdm.bypass JSON: packet_senders empty" test "$(f "$tmp/a.json" tdm.bypass packet_senders_total)" = 0

doctor -i dvb -j --role receiver --ptp-socket "$tmp/ptp4l" >"$tmp/b.json"
check "net.txqueuelen ok at 1000" test "$(f "$tmp/b.json" net.txqueuelen severity)" = ok
check "tdm.qdisc only informs on a receiver" test "$(f "$tmp/b.json" tdm.qdisc severity)" = info
rxsev=$(f "$tmp/b.json" tdm.tdmrx severity)
if ! grep -q '^tdmrx ' /proc/modules 2>/dev/null; then
	check "tdm.tdmrx warns: not loaded" test "$rxsev" = warn
	check "tdm.tdmrx fix: modprobe tdmrx" test "$(f "$tmp/b.json" tdm.tdmrx fix)" = "modprobe tdmrx"
else
	check "tdm.tdmrx checked for a receiver ($rxsev)" test -n "$rxsev" -a "$rxsev" != skip
fi
# As root, the BPF recorder can work (whatever tdmrx.ko can).
check "tdm.recorders ok as root" test "$(f "$tmp/b.json" tdm.recorders severity)" = ok
check "tdm.recorders: the BPF recorder can load" \
	grep -q "BPF recorder: can load (CAP_BPF, CAP_NET_ADMIN); lockdown " <<<"$(f "$tmp/b.json" tdm.recorders seen)"
# What the node offers the XDP recorder: the kfunc as the kernel has it.
if grep -qw bpf_xdp_metadata_rx_timestamp /proc/kallsyms; then
	kf="the kernel has the XDP RX timestamp kfunc"
else
	kf="no XDP RX timestamp kfunc in this kernel (6.3 on)"
fi
check "tdm.recorders: the XDP recorder, xdp-hw as the kernel is" \
	grep -qF "; XDP recorder: " <<<"$(f "$tmp/b.json" tdm.recorders seen | grep -F "; xdp-hw: $kf")"
check "tdm.recorders: no XDP program on dvb, nothing said of one" \
	test -z "$(f "$tmp/b.json" tdm.recorders seen | grep -F "the interface has XDP programs")"
check "tdm.bpf_recorder: nothing attached to dvb" \
	test "$(f "$tmp/b.json" tdm.bpf_recorder seen)" = "the BPF recorder is not attached to dvb"
check "tdm.recorders skipped for a sender" test "$(f "$tmp/a.json" tdm.recorders severity)" = skip

# A socket where ptp4l would be that never answers.
python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind('$tmp/ptp4l')
time.sleep(30)" &
fake=$!
for _ in $(seq 50); do [ -S "$tmp/ptp4l" ] && break; sleep 0.1; done
doctor -i dvb -j --role receiver --ptp-socket "$tmp/ptp4l" >"$tmp/c.json"
check "exit status 1 with a silent ptp4l" test $? = 1
check "ptp.port fails: ptp4l does not answer" grep -q "ptp4l does not answer at $tmp/ptp4l" <<<"$(f "$tmp/c.json" ptp.port seen)"
kill "$fake"; wait "$fake" 2>/dev/null; fake=

# Packet sockets in the namespace, one of each kind: a TX ring with
# PACKET_QDISC_BYPASS bound to dva (as DPDK's net_af_packet opens it), an RX
# ring bound to dva (tcpdump), a plain socket bound to dva, a TX ring bound
# to dvb, a TX ring bound to no device.  Each one's inode on stdout.
ip netns exec "$ns" python3 -c "
import os, socket, struct, time
SOL_PACKET, RX_RING, TX_RING, QDISC_BYPASS = 263, 5, 13, 20
ring = struct.pack('IIII', 4096, 4, 2048, 8)
def sock(dev, opt):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    if opt == TX_RING:
        s.setsockopt(SOL_PACKET, QDISC_BYPASS, 1)
    if opt:
        s.setsockopt(SOL_PACKET, opt, ring)
    if dev:
        s.bind((dev, 0))
    return s
socks = [sock('dva', TX_RING), sock('dva', RX_RING), sock('dva', 0),
         sock('dvb', TX_RING), sock(None, TX_RING)]
print(*(os.fstat(s.fileno()).st_ino for s in socks), flush=True)
time.sleep(30)" >"$tmp/pk" &
pk=$!
for _ in $(seq 50); do [ -s "$tmp/pk" ] && break; sleep 0.1; done
read -r ino_tx ino_rx ino_plain ino_dvb ino_any <"$tmp/pk"
ifi_dva=$(ip netns exec "$ns" cat /sys/class/net/dva/ifindex)
doctor -i dva -j --role sender --ptp-socket "$tmp/ptp4l" >"$tmp/p.json"
check "tdm.bypass names the TX ring on dva, first of 2" \
	grep -q "; 2 packet sockets with a TX ring (pid $pk python3, inode $ino_tx, and 1 more)$" \
	<<<"$(f "$tmp/p.json" tdm.bypass seen)"
check "tdm.bypass JSON: exactly the TX rings on dva and on no device" python3 -c "
import json; d = json.load(open('$tmp/p.json'))
b = [x for x in d['findings'] if x['id'] == 'tdm.bypass'][0]
got = sorted((s['inode'], s['ifindex'], s['device'] or '', s['pid'], s['comm'],
              s['tx_ring_frames'], s['protocol']) for s in b['packet_senders'])
want = sorted([($ino_tx, $ifi_dva, 'dva', $pk, 'python3', 8, 3),
               ($ino_any, 0, '', $pk, 'python3', 8, 3)])
assert b['packet_senders_total'] == 2 and got == want, (got, want)
assert not {$ino_rx, $ino_plain, $ino_dvb} & {s['inode'] for s in b['packet_senders']}
"
doctor -i dvb -j --role sender --ptp-socket "$tmp/ptp4l" >"$tmp/q.json"
check "tdm.bypass on dvb: its own TX ring and the unbound one" python3 -c "
import json; d = json.load(open('$tmp/q.json'))
b = [x for x in d['findings'] if x['id'] == 'tdm.bypass'][0]
assert sorted(s['inode'] for s in b['packet_senders']) == sorted([$ino_dvb, $ino_any]), b
"
kill "$pk"; wait "$pk" 2>/dev/null; pk=

doctor -i dva --ptp-socket "$tmp/ptp4l" >"$tmp/text" 2>&1
check "text output: table and fixes" grep -q "^net.txqueuelen  *WARN  *txqueuelen 10" "$tmp/text"
check "text output lists the fix command" grep -q "^  ip link set dev dva txqueuelen 1000$" "$tmp/text"

doctor -i nosuchif0 >/dev/null 2>"$tmp/err"
check "exit status 2 for an unknown interface" test $? = 2
check "error names the interface" grep -q "no interface 'nosuchif0'" "$tmp/err"
doctor -i dva --role both >/dev/null 2>"$tmp/err"
check "exit status 2 for a bad --role" test $? = 2
check "error names the role" grep -q "'both' is neither 'sender' nor 'receiver'" "$tmp/err"

after=$(ip -n "$ns" -d link show; tc -n "$ns" qdisc show)
check "doctor changed nothing (links and qdiscs as before)" test "$before" = "$after"
tdm_exit
