#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tdmgen --pace windows, the original tool's method: over loopback (no
# root), a sender of a three-sender plan sends only inside its own window
# by its own clock.  Judged on the TX stamps it puts in every packet
# (CLOCK_TAI, read just before each send): none before a window opens,
# at most one after it closes (the one packet of overshoot the method
# allows), every packet of a window counted, windows counted as tdmgen
# reports them.  Then the same with --gate lib (libtdmgate decides, at the
# plan's link speed): no packet starts later than the last instant its
# frame fits the window, but for at most one a window (a late wake-up).
# Bad input is refused with exit status 2 and a message.
# Built into O/tests as test_tdmgen_pace (which passes the tdmgen binary);
# prints TAP lines.
#
#   tests/tdmgen_pace.sh TDMGEN
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
tdmgen=$1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT


cat >"$tmp/plan" <<'PLAN'
[global]
cycle_time  9ms
base_time   9ms          # cycles in phase with the TAI epoch
link_speed  100          # Mbit/s: --gate lib books 21.28 us a frame

[sender a]
window 0 2ms

[sender b]
window 3ms 2ms

[sender c]
window 6ms 2ms
PLAN

# bad ARGS MESSAGE: exit 2 and MESSAGE on stderr
bad() {
	local msg=$1 rc
	shift
	"$tdmgen" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc = 2 ] && grep -qF -- "$msg" "$tmp/err"; then
		tdm_ok "refused: $*"
	else
		tdm_fail_why "refused: $*" "exit $rc, want 2 with: $msg" "$(cat "$tmp/err")"
	fi
}
bad "--pace windows and --plan FILE go together" --pace windows 127.0.0.1
bad "--pace windows and --plan FILE go together" --plan "$tmp/plan" 127.0.0.1
bad "use rate or windows" --pace sometimes 127.0.0.1
bad "no sender 'd'" --pace windows --plan "$tmp/plan" --name d -d 10ms 127.0.0.1
bad "--name names a sender of --plan" --name b 127.0.0.1
bad "$tmp/nothere" --pace windows --plan "$tmp/nothere" -d 10ms 127.0.0.1
bad "--gate lib goes with --pace windows" --gate lib 127.0.0.1
bad "use window or lib" --pace windows --plan "$tmp/plan" --gate door 127.0.0.1
grep -v link_speed "$tmp/plan" >"$tmp/plan-nospeed"
bad "--gate lib needs the plan's link_speed" --pace windows --plan "$tmp/plan-nospeed" \
	--name b --gate lib -d 10ms 127.0.0.1

# report FILE: the checker's lines as TAP: "ok NAME", "fail NAME: DETAIL"
# or "# comment".
report() {
	local line
	while IFS= read -r line; do
		case $line in
		"#"*) echo "$line" ;;
		"ok "*) tdm_ok "${line#ok }" ;;
		*) tdm_fail_why "${line#fail }" ;;
		esac
	done <"$1"
	[ -s "$1" ] || tdm_fail_why "the checks ran" "no output from the checker"
}

# pace GATE: sender b for 1 s through --gate GATE, judged on its stamps.
pace() {
local gate=$1 rx port line
rm -f "$tmp/port" "$tmp/rx" "$tmp/summary" "$tmp/checks"
# The receiver: every datagram's header (tdm_pkt.h: magic, version,
# flags, hdr_len, sender, plan_version, seq, tx_ns, sent; big-endian).
python3 - "$tmp" <<'PY' &
import socket, struct, sys
tmp = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("127.0.0.1", 0))
open(tmp + "/port.tmp", "w").write(str(s.getsockname()[1]))
import os
os.rename(tmp + "/port.tmp", tmp + "/port")
s.settimeout(30)
with open(tmp + "/rx", "w") as out:
    while True:
        d = s.recv(65536)
        magic, ver, flags, hl, snd, pv, seq, tx, sent = struct.unpack(">IBBHIIQQQ", d[:40])
        if flags & 1:
            out.write("end %d\n" % sent)
            break
        out.write("%d %d\n" % (seq, tx))
PY
rx=$!
for _ in $(seq 100); do [ -f "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port" 2>/dev/null)

if ! "$tdmgen" --pace windows --plan "$tmp/plan" --name b -i 1 -d 1s -s 200 \
	-r 20000pps -E 1 -w 10ms -p "$port" -j --gate "$gate" 127.0.0.1 \
	>"$tmp/summary" 2>"$tmp/err"; then
	tdm_fail_why "tdmgen --pace windows --gate $gate ran" "$(cat "$tmp/err")"
fi
wait "$rx"

# One line per check: "ok NAME" or "fail NAME: DETAIL".
python3 - "$tmp" "$gate" >"$tmp/checks" <<'PY'
import json, sys
tmp, gate = sys.argv[1], sys.argv[2]
CYCLE, OFF, LEN = 9000000, 3000000, 2000000
# window: a packet may start while the window is open; lib: while its
# frame (200 + 42 bytes, 24 more on the wire, at 100 Mbit/s) fits.
WIRE = 0 if gate == "window" else (200 + 42 + 24) * 80
summary = json.load(open(tmp + "/summary"))
n, end, windows, outside = 0, None, {}, {}
for line in open(tmp + "/rx"):
    w = line.split()
    if w[0] == "end":
        end = int(w[1])
        continue
    n += 1
    tx = int(w[1])
    # the window that opened last at or before tx
    k = (tx - OFF) // CYCLE
    windows[k] = windows.get(k, 0) + 1
    if tx + WIRE > k * CYCLE + OFF + LEN - (gate == "window"):
        outside[k] = outside.get(k, 0) + 1
over = max(outside.values(), default=0)
print("# --gate %s: received %d, tdmgen sent %s in %s windows; received in %d "
      "windows; %d packets too late for their window, at most %d in one"
      % (gate, n, summary["sent"], summary.get("windows"), len(windows),
         sum(outside.values()), over))
def check(name, good, detail):
    print(("ok --gate %s: %s" % (gate, name)) if good else
          ("fail --gate %s: %s: %s" % (gate, name, detail)))
check("packets were sent", n > 0, "none received")
check("every packet received, as counted by tdmgen and its end marker",
      n == summary["sent"] == end, "%d received, %s sent, %s in the marker"
      % (n, summary["sent"], end))
check("at most one packet too late a window (window: the original's "
      "overshoot; lib: a late wake-up)", over <= 1,
      "%d too late in one window" % over)
if WIRE:
    check("no window took more frames than fit at the link speed (%d)" % (LEN // WIRE),
          max(windows.values(), default=0) <= LEN // WIRE,
          "%d in one window" % max(windows.values(), default=0))
check("windows counted as tdmgen reports", len(windows) == summary.get("windows"),
      "%d seen, %s reported" % (len(windows), summary.get("windows")))
check("the summary says pace windows, gate " + gate,
      summary.get("pace") == "windows" and summary.get("gate") == gate,
      "%s, %s" % (summary.get("pace"), summary.get("gate")))
PY
report "$tmp/checks"
}

pace window
pace lib

# The corner turn: sender f1 of a 2 x 3 barrel shifter (3 slots of 3 ms,
# 1 ms of dead time: in slot k, f1 sends to receiver (1 + k) mod 3) to
# three receivers on loopback, 127.0.0.1..3 at one port.
cat >"$tmp/barrel" <<'PLAN'
[global]
base_time   9ms          # cycles in phase with the TAI epoch
link_speed  100
[receiver x0]
address     127.0.0.1
[receiver x1]
address     127.0.0.2
[receiver x2]
address     127.0.0.3
[barrel]
senders     f0 f1
slot        3ms
dead_time   1ms
PLAN
bad "--corner sends to the plan's receivers: no HOST" --corner --plan "$tmp/barrel" 127.0.0.1
bad "--corner needs --plan FILE" --corner
bad "--corner needs a plan with [receiver] sections" --corner --plan "$tmp/plan" --name b
bad "a plan with receivers: send the corner turn with --corner" --pace windows \
	--plan "$tmp/barrel" --name f1 127.0.0.1

# corner PACE [GATE]: f1 for 1 s, each receiver's stream judged.
corner() {
local pace=$1 gate=${2:-window} rx port what="--corner --pace $1${2:+ --gate $2}"
rm -f "$tmp/port" "$tmp/rx" "$tmp/summary" "$tmp/checks"
python3 - "$tmp" <<'PY' &
import os, select, socket, struct, sys
tmp = sys.argv[1]
socks, port = [], 0
for a in ("127.0.0.1", "127.0.0.2", "127.0.0.3"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((a, port))
    port = s.getsockname()[1]
    socks.append(s)
open(tmp + "/port.tmp", "w").write(str(port))
os.rename(tmp + "/port.tmp", tmp + "/port")
ended = set()
with open(tmp + "/rx", "w") as out:
    while len(ended) < 3:
        ready, _, _ = select.select(socks, [], [], 30)
        if not ready:
            break
        for s in ready:
            d = s.recv(65536)
            r = socks.index(s)
            magic, ver, flags, hl, snd, pv, seq, tx, sent = struct.unpack(">IBBHIIQQQ", d[:40])
            if flags & 1:
                if r not in ended:
                    out.write("end %d %d %d\n" % (r, snd, sent))
                ended.add(r)
                continue
            out.write("%d %d %d %d\n" % (r, snd, seq, tx))
PY
rx=$!
for _ in $(seq 100); do [ -f "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port" 2>/dev/null)
if ! "$tdmgen" --corner --plan "$tmp/barrel" --name f1 --pace "$pace" \
	${2:+--gate "$2"} -d 1s -s 200 -r 6000pps -E 2 -w 10ms -p "$port" -j \
	>"$tmp/summary" 2>"$tmp/err"; then
	tdm_fail_why "tdmgen $what ran" "$(cat "$tmp/err")"
fi
wait "$rx"
python3 - "$tmp" "$pace" "$gate" >"$tmp/checks" <<'PY'
import json, sys
tmp, pace, gate = sys.argv[1:4]
SLOT, DEAD, L = 3000000, 1000000, 3
what = "--corner --pace %s%s" % (pace, " --gate " + gate if pace == "windows" else "")
WIRE = (200 + 42 + 24) * 80 if gate == "lib" else 0
summary = json.load(open(tmp + "/summary"))
seqs, ends, ids, wrong, late, late_in = {0: [], 1: [], 2: []}, {}, set(), 0, 0, {}
for line in open(tmp + "/rx"):
    w = line.split()
    if w[0] == "end":
        ends[int(w[1])] = int(w[3])
        ids.add(int(w[2]))
        continue
    r, snd, seq, tx = map(int, w)
    ids.add(snd)
    seqs[r].append(seq)
    if pace == "windows":
        # the slot it started in, and whose window that is
        k = (tx // SLOT) % L
        if (1 + k) % L != r:
            wrong += 1
        elif tx % SLOT + WIRE >= SLOT - DEAD + (gate == "window"):
            late += 1
            late_in[tx // SLOT] = late_in.get(tx // SLOT, 0) + 1
def check(name, good, detail):
    print(("ok %s: %s" % (what, name)) if good else
          ("fail %s: %s: %s" % (what, name, detail)))
sent = [x["sent"] for x in summary.get("receivers", [])]
print("# %s: received %s, sent %s, end markers %s; %d to the wrong receiver, %d late"
      % (what, [len(seqs[r]) for r in range(3)], sent, ends, wrong, late))
check("every receiver got packets", all(seqs[r] for r in range(3)), "some got none")
check("each receiver: sequence 0..n-1, n as tdmgen counted and its end marker says",
      all(seqs[r] == list(range(len(seqs[r]))) and len(seqs[r]) == sent[r] == ends.get(r)
          for r in range(3)), "per receiver: %s packets, sent %s, markers %s"
      % ([len(seqs[r]) for r in range(3)], sent, ends))
check("the header names sender 1 (f1's index)", ids == {1}, "ids %s" % sorted(ids))
if pace == "windows":
    check("every packet in a window to its receiver", wrong == 0, "%d elsewhere" % wrong)
    # window: one packet of overshoot per window at most; lib: none but
    # a late wake-up now and then.
    check("at most one packet past its window's end a window",
          max(late_in.values(), default=0) <= 1,
          "%d in one window" % max(late_in.values(), default=0))
else:
    n = [len(seqs[r]) for r in range(3)]
    check("to each receiver in turn (counts within one)", max(n) - min(n) <= 1, "%s" % n)
PY
report "$tmp/checks"
}

corner windows window
corner windows lib
corner rate

tdm_exit
