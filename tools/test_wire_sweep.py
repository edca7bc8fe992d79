#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tools/wire_sweep.py on synthetic sweeps with known answers: the
smallest clean dead time, the utilization there, and the ratios; the
headline, strict at the ideal and at the emulated port, with dead times
in frame times, and the targets met or not.  The
ideal port, the switch port's drops and the pcap judge are the
testbed's (testbed/tests).

Prints TAP and "N passed, N failed".  No guest, no root; make check runs it.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "testbed"))
import wire_sweep as ws  # noqa: E402
from tdmtb.tap import Tap  # noqa: E402

US = 1000
T = Tap()
tap, eq = T.ok, T.eq


def pt(method, dead_us, overlap=0, loss=0, cycles=100, goodput=0, self_drops=0):
    """LOSS: frames lost to collisions; SELF_DROPS: the emulator's.  The
    ideal port the same as the emulated one, without the self drops."""
    return {"method": method, "dead_ns": dead_us * US, "overlap": overlap,
            "loss": loss + self_drops, "collisions": loss,
            "self_drops": self_drops, "cycles": cycles, "goodput_bps": goodput,
            "ideal_overlap": overlap, "ideal_loss": loss,
            "ideal_goodput_bps": goodput}


# tdmwin clean from 200 us up; usertdm dirty below 2000 us; taprio never.
sweep = [pt("tdmwin", 0, overlap=40), pt("tdmwin", 100, loss=3),
         pt("tdmwin", 200, goodput=45e6), pt("tdmwin", 500), pt("tdmwin", 1000),
         pt("tdmwin", 2000), pt("usertdm", 0, overlap=900, loss=70),
         pt("usertdm", 200, overlap=300), pt("usertdm", 1000, overlap=12),
         pt("usertdm", 2000, goodput=40e6), pt("taprio", 200, overlap=4),
         pt("taprio", 2000, loss=1)]
eq(ws.smallest_clean(sweep, "tdmwin", 100), 200 * US, "tdmwin: clean from 200 us up")
eq(ws.smallest_clean(sweep, "usertdm", 100), 2000 * US, "usertdm: only the largest is clean")
eq(ws.smallest_clean(sweep, "taprio", 100), None, "taprio: its largest is dirty: none")
eq(ws.smallest_clean(sweep, "nosuch", 100), None, "a method without points: none")

# A clean point below a dirty one does not count.
lucky = [pt("m", 100), pt("m", 200, overlap=1), pt("m", 400), pt("m", 800)]
eq(ws.smallest_clean(lucky, "m", 100), 400 * US,
   "a clean point below a dirty one is not the answer")
# Repeats at one dead time must all be clean.
rep = [pt("m", 100), pt("m", 100, loss=1), pt("m", 200), pt("m", 200)]
eq(ws.smallest_clean(rep, "m", 100), 200 * US, "a dirty repeat spoils its dead time")
# Too few cycles judge nothing: not clean.
short = [pt("m", 100, cycles=10), pt("m", 200)]
eq(ws.smallest_clean(short, "m", 100), 200 * US, "a point of too few cycles is not clean")
eq(ws.smallest_clean([pt("m", 100, cycles=99)], "m", 100), None,
   "only short points: none")
# Self drops (the emulator's bunching) do not spoil a point; collisions do.
bunched = [pt("m", 100, self_drops=600), pt("m", 200, self_drops=50)]
eq(ws.smallest_clean(bunched, "m", 100), 100 * US,
   "self drops alone leave a point clean")
eq(ws.smallest_clean(bunched + [pt("m", 200, loss=1, self_drops=5)], "m", 100), None,
   "one collision spoils a point whatever its self drops")
eq(ws.smallest_clean([{"method": "m", "dead_ns": 0, "overlap": 0, "loss": 0,
                       "cycles": 100}], "m", 100, "emulated"), None,
   "a point without the collision count is not clean")
eq(ws.smallest_clean([{"method": "m", "dead_ns": 0, "overlap": 0, "loss": 0,
                       "collisions": 0, "cycles": 100}], "m", 100), None,
   "a point without the ideal port's counts is not clean there")
# The ideal port judges by default; the emulated one on request.
two = [dict(pt("m", 100), collisions=3, overlap=2), pt("m", 200)]
eq((ws.smallest_clean(two, "m", 100), ws.smallest_clean(two, "m", 100, "emulated")),
   (100 * US, 200 * US), "the figure is judged at the ideal port by default")
two[0]["ideal_loss"] = 1
eq(ws.smallest_clean(two, "m", 100), 200 * US,
   "a collision at the ideal port spoils the point")
# With an allowance (per mille of the windows and of the frames sent).
al = [dict(pt("m", 100, overlap=5), windows=1000, sent=4000),
      dict(pt("m", 200, loss=4), windows=1000, sent=4000),
      dict(pt("m", 400, overlap=6), windows=1000, sent=4000)]
eq(ws.smallest_clean(al, "m", 100), None, "strict: any overlap spoils a point")
eq(ws.smallest_clean(al[:2], "m", 100, permille=5), 100 * US,
   "5 per mille: 5 of 1000 windows and 4 of 4000 frames are allowed")
eq(ws.smallest_clean(al, "m", 100, permille=5), None,
   "5 per mille: 6 of 1000 windows are not")
# Order of the input does not matter.
eq(ws.smallest_clean(list(reversed(sweep)), "tdmwin", 100), 200 * US,
   "the input's order does not matter")

# The utilization: N (W - G) / (N (W + D)).
eq(ws.slot_utilization(10000 * US, 1000 * US, 0), 0.9, "utilization, no dead time")
eq(round(ws.slot_utilization(10000 * US, 0, 2500 * US), 3), 0.8,
   "utilization, 10 ms windows, 2.5 ms dead time")

f = ws.figure(sweep, ["tdmwin", "usertdm", "taprio"], 10000 * US, 1000 * US, 50e6, 100)
eq(f["tdmwin"], {"dead_ns": 200 * US, "utilization": round(9000 / 10200, 4),
                 "goodput_ratio": 0.9}, "the figure for tdmwin")
eq(f["taprio"], {"dead_ns": None, "utilization": None, "goodput_ratio": None},
   "the figure for a method never clean")
eq(ws.ratio(f["tdmwin"]["dead_ns"], f["usertdm"]["dead_ns"]), 0.1,
   "tdmwin's dead time over usertdm's")
eq(ws.ratio(f["tdmwin"]["dead_ns"], f["taprio"]["dead_ns"]), None,
   "a ratio against a method never clean is none")
eq(ws.ratio(0, 2000), 0.0, "a dead time of 0 gives the ratio 0")

# Frame times: a 1466-byte frame on the testbed's wire; at scale S the
# wire runs at 50/S Mbit/s, so a frame takes S x 234.56 us.
eq(ws.frame_time_ns({"frame_ns": 2345600, "payload": 1, "mbit": 1}), 2345600,
   "the frame time: the run's own frame_ns first")
eq((ws.frame_time_ns({"payload": 1400, "mbit": 50}),
    ws.frame_time_ns({"payload": 1400, "mbit": 5})), (234560, 2345600),
   "the frame time from payload and rate: 235 us at scale 1, 2.35 ms at 10")
eq(ws.frame_time_ns({}), None, "no frame time without payload and rate")
with open(os.path.join(HERE, "..", "testbed", "wire.sh")) as f:
    eq(ws.FRAME_EXTRA, int(re.search(r"^WIRE_FRAME_EXTRA=(\d+)$", f.read(), re.M).group(1)),
       "the frame's bytes beyond its payload: testbed/wire.sh's WIRE_FRAME_EXTRA")
eq((ws.in_frames(4691200, 2345600), ws.in_frames(0, 2345600),
    ws.in_frames(None, 2345600), ws.in_frames(1000, None)), (2.0, 0.0, None, None),
   "dead times in frame times")
fr = ws.figure(sweep, ["tdmwin", "taprio"], 10000 * US, 1000 * US, 50e6, 100,
               frame_ns=234560)
eq((fr["tdmwin"]["dead_frames"], fr["taprio"]["dead_frames"]), (0.85, None),
   "the figure in frame times: 200 us is 0.85 of a 234.56 us frame")

# The headline: strict at both ports, and the targets at each.  tdmwin
# is clean at the ideal port from 0, at the emulated port only from 500
# us (collisions below: the emulator's timing, not the gate); self drops
# alone spoil neither; usertdm is clean nowhere, taprio from 4000 us.
F = 234560
run = {"mbit": 50, "payload": 1400, "window_ns": 10000 * US, "guard_ns": 250 * US,
       "min_cycles": 100, "points": [dict(p, senders=3) for p in (
           pt("tdmwin", 0, goodput=47e6), pt("tdmwin", 250, goodput=46e6),
           pt("tdmwin", 500, self_drops=9, goodput=45e6), pt("tdmwin", 4000),
           pt("usertdm", 4000, overlap=3), pt("taprio", 4000, goodput=34e6),
           pt("taprio", 2000, overlap=1))] + [dict(pt("tdmwin", 0), senders=8)]}
run["points"][0].update(collisions=2, overlap=1)
run["points"][1].update(collisions=1)
h = ws.headline(run, 3, ["tdmwin", "usertdm", "taprio"], 5)
eq(h["frame_ns"], F, "the headline's frame time")
eq(h["ideal"]["tdmwin"], {"dead_ns": 0, "dead_frames": 0.0, "utilization": 0.975,
                          "goodput_ratio": 0.94}, "headline: tdmwin at the ideal port")
eq(h["emulated"]["tdmwin"], {"dead_ns": 500 * US, "dead_frames": 2.13,
                             "utilization": round(9750 / 10500, 4),
                             "goodput_ratio": 0.9},
   "headline: tdmwin at the emulated port, strict, in frame times")
eq((h["ideal"]["taprio"]["dead_ns"], h["emulated"]["taprio"]["dead_frames"],
    h["ideal"]["usertdm"]["dead_ns"]), (4000 * US, 17.05, None),
   "headline: taprio from 4000 us (17.05 frames), usertdm nowhere")
eq([(t, ok) for t, _, ok in h["targets"]["ideal"]],
   [("tdmwin's dead time <= 1/5 of usertdm's", True),
    ("tdmwin's dead time <= taprio's", True),
    ("utilization at tdmwin's dead time >= 95 %", True)],
   "targets at the ideal port: all met")
eq([ok for _, _, ok in h["targets"]["emulated"]], [True, True, False],
   "targets at the emulated port: 500 us gives 92.9 %, below 95 %")
eq(ws.headline(run, 8, ["tdmwin"], 5)["targets"]["ideal"],
   [("utilization at tdmwin's dead time >= 90 %", "97.5 %", True)],
   "8 senders: the 90 % target, over their own points only")
# "Clean nowhere up to the largest" is larger than the largest: tdmwin
# at 1000 us is within 1/5 of it only if 5 x 1000 <= 4000, which is not.
eq((ws.at_most(800 * US, None, 0.2, 4000 * US), ws.at_most(1000 * US, None, 0.2, 4000 * US),
    ws.at_most(None, None, 1, 4000 * US), ws.at_most(None, 0, 1, 4000 * US),
    ws.at_most(0, 0, 0.2, 4000 * US)), (True, None, None, False, True),
   "targets against a method clean nowhere: met, undecided or not met")
eq([ws.verdict(x) for x in (True, False, None)], ["met", "not met", "undecided"],
   "the verdicts in words")
eq(ws.targets({"tdmwin": {"dead_ns": 0, "utilization": 0.975},
                "usertdm": {"dead_ns": 0}}, 5, 4000 * US)[0],
   ("tdmwin's dead time <= 1/5 of usertdm's", "0 us vs 0 us, a tie", True),
   "both clean down to 0: met, and said to be a tie")

import subprocess  # noqa: E402


def clean_cli(point, *args):
    """wire_sweep.py clean on POINT (JSON text): its exit status."""
    return subprocess.run([sys.executable, ws.__file__, "clean"] + list(args),
                          input=point, capture_output=True, text=True).returncode


# The downward sweep (WIRE_DESCEND) stops a method where this says "not
# clean": 3 of 1,000 windows overlapping is within 5 per mille, not
# strictly; too few cycles judge nothing; what is not a point is refused.
import json  # noqa: E402
p3 = json.dumps(dict(pt("tdmwin", 500, overlap=3), cycles=1000, windows=1000,
                     sent=40000))
eq((clean_cli(p3, "--min-cycles", "1000", "--permille", "5"),
    clean_cli(p3, "--min-cycles", "1000"),
    clean_cli(p3, "--min-cycles", "1001", "--permille", "5"),
    clean_cli("null", "--min-cycles", "1"),
    clean_cli("{", "--min-cycles", "1")),
   (0, 1, 1, 2, 2), "wire_sweep.py clean: exit 0 clean, 1 not, 2 bad input")

# ---- tools/wire_judge.py: the host judges what the guest captured ----------
# A point directory as tools/bench-wire-guest leaves it: 2 senders of
# 1200-byte frames on a 100 Mbit/s wire (frame time 101,280 ns), 4 frames
# each, one every ms; sender 1's 10 ns after sender 0's.  At the ideal
# port (1 frame of buffer) each of sender 1's finds sender 0's there: 4
# collisions.  At the emulated port (the taps at its inputs and output)
# sender 1's frames came 150 us later than they left (the emulator's
# timing: the ideal port, fed from the inputs' taps, would have lost
# none) and its last two were dropped while sender 0's were in the
# buffer: 2 collisions.  tdmstat analyze is a stand-in that says 2 overlapping
# windows for the port's tap and 0 for the ideal port's output.
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "testbed", "tests"))
import helpers  # noqa: E402
import wire_judge as wj  # noqa: E402

MS = 1000000
tmp = tempfile.mkdtemp(prefix="wire-judge-test.")
stub = os.path.join(tmp, "tdmstat")
with open(stub, "w") as f:
    f.write('#!/bin/sh\n'
            'case "$*" in *ideal.pcap*) o=0 ;; *) o=2 ;; esac\n'
            'echo "{\\"run\\": {\\"overlap_windows\\": $o, \\"windows\\": 8, '
            '\\"rx_outside\\": 1}}"\n')
os.chmod(stub, 0o755)
wj.TDMSTAT = stub
os.environ["WIRE_TDMSTAT"] = stub


def point_dir(d, dropped=(2, 3), nic_sent=8, gap=10, method="tdmwin"):
    """A point directory in D: sender 1's frames GAP ns after sender 0's,
    its frames DROPPED lost at the emulated port, NIC_SENT the NICs'
    count of frames that reached the port."""
    os.makedirs(d)
    frame = lambda s, k: helpers.tdm_frame(s, k, size=1200)
    helpers.write(os.path.join(d, "tx1.pcap"), [(k * MS, frame(0, k)) for k in range(4)])
    helpers.write(os.path.join(d, "tx2.pcap"), [(k * MS + gap, frame(1, k)) for k in range(4)])
    helpers.write(os.path.join(d, "in1.pcap"), [(k * MS, frame(0, k)) for k in range(4)])
    helpers.write(os.path.join(d, "in2.pcap"),
                  [(k * MS + gap + 150000, frame(1, k)) for k in range(4)])
    out = [(k * MS + 200000, frame(0, k)) for k in range(4)]
    out += [(k * MS + gap + 350000, frame(1, k)) for k in range(4) if k not in dropped]
    helpers.write(os.path.join(d, "out.pcap"), sorted(out, key=lambda r: r[0]))
    with open(os.path.join(d, "gen-1.json"), "w") as f:
        f.write('tdmgen: a warning on stderr\n{"sent":5,"errors":0}\n')
    with open(os.path.join(d, "gen-2.json"), "w") as f:
        f.write('{"sent": 4}\n')
    for i, (sm, n) in enumerate(((3000, 2), (1000, 2)), 1):
        with open(os.path.join(d, "qdisc-%d.json" % i), "w") as f:
            f.write('[{"kind":"tdmwin","open_latency_sum":%d,'
                    '"open_latency_count":%d}]\n' % (sm, n))
    open(os.path.join(d, "plan.conf"), "w").close()
    meta = dict(method=method, senders=2, dead_ns=0, window_ns=4 * MS, guard_ns=0,
                cycle_ns=1000 * MS, secs=2, fpc=5, offered_pps=5, load_pct=110,
                payload=1200, frame_bytes=1266, line_mbit=100, buffer=1, ring=64,
                port=8081, permille=5, host_load_cpus="0.05",
                host_load_max_cpus="0.20", host_loaded="")
    meta.update({"count.nic.sent": nic_sent, "count.nic.drops": 0,
                 "count.sw.sent": 8 - len(dropped), "count.sw.drops": len(dropped),
                 "count.rx": 8 - len(dropped)})
    with open(os.path.join(d, "meta"), "w") as f:
        f.write("".join("%s=%s\n" % kv for kv in meta.items()))
    return d


d1 = point_dir(os.path.join(tmp, "one"))
p = wj.judge_point(d1)
eq(list(p), ["method", "senders", "dead_ns", "window_ns", "guard_ns", "cycle_ns",
             "cycles", "offered_pps", "sent", "before_nic", "nic_drops", "loss",
             "collisions", "self_drops", "received", "overlap", "windows",
             "rx_outside", "ideal_loss", "ideal_nic_drops", "ideal_overlap",
             "ideal_goodput_bps", "capacity", "tapped", "ideal_tap",
             "sender_tap_frames", "sender_sched", "open_latency_mean_ns",
             "goodput_bps", "host_load_cpus", "host_load_max_cpus", "host_loaded"],
   "wire_judge: the point's keys, in the guest's old order, and the ideal port's tap")
eq((p["ideal_tap"], p["sender_tap_frames"], p["sender_sched"]), ("sender", None, None),
   "wire_judge: a meta without ideal_tap: the senders' taps feed the ideal port")
eq((p["sent"], p["before_nic"], p["loss"], p["collisions"], p["self_drops"],
    p["received"]), (9, 1, 2, 2, 0, 6),
   "wire_judge: tdmgen's frames, the NICs' and the port's counts, the drops told apart")
eq((p["overlap"], p["windows"], p["rx_outside"], p["ideal_overlap"]), (2, 8, 1, 0),
   "wire_judge: tdmstat analyze of the port's tap, and of the ideal port's output")
eq((p["ideal_loss"], p["ideal_nic_drops"], p["tapped"], p["ideal_goodput_bps"]),
   (4, 0, 8, 4 * 1266 * 8 // 2),
   "wire_judge: the ideal port on the senders' taps: 4 collisions, 8 frames left")
eq((p["cycles"], p["capacity"], p["open_latency_mean_ns"], p["goodput_bps"],
    p["host_load_cpus"], p["host_load_max_cpus"], p["host_loaded"]),
   (2, 20, 1000, 6 * 1266 * 8 // 2, 0.05, 0.2, ""),
   "wire_judge: cycles, capacity, open latency over both qdiscs, goodput, host load")
eq((wj.goodput([5, 10 ** 9, 2 * 10 ** 9 + 4, 2 * 10 ** 9 + 5, 3 * 10 ** 9], 2, 1000),
    wj.goodput([], 2, 1000)), (3 * 8000 // 2, 0),
   "wire_judge: the goodput counts the frames out of the port within the run's"
   " seconds of its first, not the backlog a gate sends after")
p2 = wj.judge_point(point_dir(os.path.join(tmp, "missed"), nic_sent=9))
eq((p2["collisions"], p2["self_drops"], p2["loss"]), (None, None, 2),
   "wire_judge: taps that missed a frame tell no drops apart (null, not clean)")
eq(open(os.path.join(tmp, "missed", "port-drops.log")).read(),
   "the taps saw 8 of the 9 frames that reached the switch port and 2 of the 2 it dropped\n",
   "wire_judge: says what the taps missed")
eq(ws.clean(p2, 1, "emulated"), False, "wire_judge: such a point is not clean there")
os.remove(os.path.join(tmp, "missed", "tx2.pcap"))
p3 = wj.judge_point(os.path.join(tmp, "missed"))
eq((p3["ideal_loss"], p3["ideal_goodput_bps"], p3["tapped"], p3["ideal_overlap"]),
   (None, None, None, None), "wire_judge: a missing sender's tap: the ideal port null")

# The senders past the qdisc (afxdp, dpdk): their frames never reach the
# taps on the senders' devices, so the ideal port is fed from the taps on
# the devices' veth peers (ideal_tap=peer, peer<i>.pcap).  Here the peers'
# taps see sender 1's frames PEER_GAP ns after sender 0's, the devices'
# taps LEAKED frames each (a frame there took the qdisc's path).


def bypass_dir(d, peer_gap, leaked=0, tap="peer"):
    point_dir(d, dropped=(), method="afxdp")
    frame = lambda s, k: helpers.tdm_frame(s, k, size=1200)
    for i, gap in ((1, 0), (2, peer_gap)):
        helpers.write(os.path.join(d, "peer%d.pcap" % i),
                      [(k * MS + gap, frame(i - 1, k)) for k in range(4)])
        helpers.write(os.path.join(d, "tx%d.pcap" % i),
                      [(k * MS + gap, frame(i - 1, k)) for k in range(leaked)])
    with open(os.path.join(d, "meta"), "a") as f:
        f.write("ideal_tap=%s\nsender_sched=fifo50\n" % tap)
    return d


bp = wj.judge_point(bypass_dir(os.path.join(tmp, "peer-collide"), 10))
eq((bp["ideal_tap"], bp["sender_tap_frames"], bp["tapped"], bp["ideal_loss"],
    bp["sender_sched"]), ("peer", 0, 8, 4, "fifo50"),
   "wire_judge: ideal_tap=peer: the peers' taps feed the ideal port (4 collisions),"
   " the devices' taps saw nothing")
bc = wj.judge_point(bypass_dir(os.path.join(tmp, "peer-apart"), 500000))
eq((bc["tapped"], bc["ideal_loss"], bc["sender_tap_frames"], ws.clean(bc, 1)),
   (8, 0, 0, True), "wire_judge: the peers apart: none lost at the ideal port, clean")
bl = wj.judge_point(bypass_dir(os.path.join(tmp, "peer-leak"), 500000, leaked=2))
eq((bl["ideal_loss"], bl["sender_tap_frames"], ws.clean(bl, 1), ws.clean(bl, 1, "emulated")),
   (0, 4, False, False),
   "wire_judge: frames at the devices' taps too (through the qdisc): counted, clean nowhere")
os.remove(os.path.join(tmp, "peer-leak", "tx2.pcap"))
bm = wj.judge_point(os.path.join(tmp, "peer-leak"))
eq((bm["sender_tap_frames"], bm["ideal_loss"], ws.clean(bm, 1)), (None, 0, False),
   "wire_judge: a device's tap missing: its count null, not clean")
os.remove(os.path.join(tmp, "peer-apart", "peer1.pcap"))
eq(wj.judge_point(os.path.join(tmp, "peer-apart"))["ideal_loss"], None,
   "wire_judge: a peer's tap missing: the ideal port null")
bu = bypass_dir(os.path.join(tmp, "peer-nosuch"), 500000, tap="nosuch")
wj.judge_dir(bu, 1)
eq(open(os.path.join(bu, "verdict")).read(),
   "error=ValueError: ideal_tap=nosuch: not a tap of the sweep's (peer, sender)\n",
   "wire_judge: an unknown ideal_tap: an error verdict")
eq([ws.tap_ok(x) for x in ({}, {"ideal_tap": "sender", "sender_tap_frames": 3},
                           {"ideal_tap": "peer", "sender_tap_frames": 0},
                           {"ideal_tap": "peer", "sender_tap_frames": 1},
                           {"ideal_tap": "peer"})],
   [True, True, True, False, False],
   "tap_ok: fed from the senders' taps, or from another with none at the senders'")

# The verdict the guest waits for in the downward sweep.
cl = point_dir(os.path.join(tmp, "clean"), dropped=(), gap=500000)
os.environ["WIRE_TDMSTAT"] = stub
with open(stub, "w") as f:
    f.write('#!/bin/sh\necho \'{"run": {"overlap_windows": 0, "windows": 8, '
            '"rx_outside": 0}}\'\n')
wj.judge_dir(cl, 2)
eq(open(os.path.join(cl, "verdict")).read(), "emulated=1\nideal_allowance=1\n",
   "wire_judge: a clean point's verdict")
wj.judge_dir(d1, 2)
eq((open(os.path.join(d1, "verdict")).read(), json.load(open(os.path.join(d1, "point.json")))["loss"]),
   ("emulated=0\nideal_allowance=0\n", 2),
   "wire_judge: a point with collisions: not clean at either port; point.json written")
wj.judge_dir(cl, 3)
eq(open(os.path.join(cl, "verdict")).read(), "emulated=0\nideal_allowance=0\n",
   "wire_judge: fewer cycles than the sweep's least: not clean")
bad = os.path.join(tmp, "bad")
os.makedirs(bad)
wj.judge_dir(bad, 1)
eq((open(os.path.join(bad, "verdict")).read().split("=")[0],
    os.path.exists(os.path.join(bad, "point.json"))), ("error", False),
   "wire_judge: a point without its meta: an error verdict, no point")

# follow: a point is judged once the guest marks it complete, and not
# before; the follower ends once the guest says it is done.
run_dir = os.path.join(tmp, "run")
os.makedirs(run_dir)
with open(os.path.join(run_dir, "head.json"), "w") as f:
    f.write('{"kernel": "6.1.0-test", "mbit": 100, "timescale": 1, "payload": 1200, '
            '"frame_ns": 101280, "window_ns": 4000000, "guard_ns": 0, '
            '"min_cycles": 2, "load_pct": 110}\n')
fol = subprocess.Popen([sys.executable, wj.__file__, "follow", run_dir, "--poll", "0.05"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for(path, secs):
    end = time.time() + secs
    while time.time() < end and not os.path.exists(path):
        time.sleep(0.05)
    return os.path.exists(path)


a = point_dir(os.path.join(run_dir, "002-2s-tdmwin-0us"), dropped=(), gap=500000)
b = point_dir(os.path.join(run_dir, "001-2s-usertdm-4000us"), method="usertdm")
time.sleep(0.5)
eq([os.path.exists(os.path.join(x, "verdict")) for x in (a, b)], [False, False],
   "follow: a point the guest has not marked complete is not judged")
open(os.path.join(b, "complete"), "w").close()
eq(wait_for(os.path.join(b, "verdict"), 20), True, "follow: a complete point gets its verdict")
open(os.path.join(a, "complete"), "w").close()
eq(wait_for(os.path.join(a, "verdict"), 20), True, "follow: and the next one")
open(os.path.join(run_dir, "done"), "w").close()
try:
    rc = fol.wait(20)
except subprocess.TimeoutExpired:
    fol.kill()
    rc = None
eq(rc, 0, "follow: ends once the guest is done and every point judged")
dead = subprocess.Popen([sys.executable, "-c", "pass"])
dead.wait()
fol = subprocess.run([sys.executable, wj.__file__, "follow", os.path.join(tmp, "nosuch"),
                      "--parent", str(dead.pid), "--poll", "0.05"], timeout=20)
eq(fol.returncode, 0, "follow: ends when the process it follows is gone")

# assemble: the sweep's JSON, the head and the points in the guest's order.
out = os.path.join(tmp, "new", "wire.json")
r = subprocess.run([sys.executable, wj.__file__, "assemble", run_dir, "-o", out],
                   capture_output=True, text=True)
j = json.load(open(out))
eq((r.returncode, j["kernel"], j["load_pct"], [q["method"] for q in j["points"]]),
   (0, "6.1.0-test", 110, ["usertdm", "tdmwin"]),
   "assemble: the head, then the points in the guest's order")
eq(ws.headline(j, 2, ["tdmwin", "usertdm"], 5)["ideal"]["tdmwin"]["dead_ns"], 0,
   "assemble: wire_sweep reads what it wrote")
shutil.rmtree(os.path.join(b))
os.makedirs(os.path.join(run_dir, "003-2s-taprio-0us"))
r = subprocess.run([sys.executable, wj.__file__, "assemble", run_dir, "-o", out],
                   capture_output=True, text=True)
eq((r.returncode, len(json.load(open(out))["points"])), (0, 1),
   "assemble: a point the guest did not complete is left out")

# ---- the corner turn: judge_corner on the host, the figure -----------------
# 2 senders to 2 receivers (198.18.2.101, .102) of 1200-byte frames on
# 1 Mbit/s wires (frame time 10,128,000 ns), a run of 1 s: each sender
# sends 50 frames back to back from 0, sender 1 to .101, sender 2 to
# .102 (or, COLLIDE, to .101 too).  Each port then sends 50 frames in
# 506.4 ms: utilization 0.5064 of the line, 0.48 of it payload.  tdmctl is
# a stand-in that plans 45 % of each link.
tstub = os.path.join(tmp, "tdmctl")
with open(tstub, "w") as f:
    f.write('#!/bin/sh\necho \'{"cycle_ns": 1000, "receivers": ['
            '{"address": "198.18.2.101", "open_ns": 450}, '
            '{"address": "198.18.2.102", "open_ns": 450}]}\'\n')
os.chmod(tstub, 0o755)
wj.TDMCTL = tstub
FT1 = 10128000


def corner_dir(d, collide=False, qdrops=0):
    os.makedirs(d)
    dst = ["198.18.2.101", "198.18.2.101" if collide else "198.18.2.102"]
    for s in range(2):
        helpers.write(os.path.join(d, "tx%d.pcap" % (s + 1)),
                      [(k * FT1, helpers.tdm_frame(s, k, size=1200, dst=dst[s]))
                       for k in range(50)])
        with open(os.path.join(d, "gen-%d.json" % (s + 1)), "w") as f:
            f.write('{"sent": 50}\n')
        with open(os.path.join(d, "qdisc-%d.json" % (s + 1)), "w") as f:
            f.write('[{"kind":"tdmwin","root":true,"drops":%d},'
                    '{"kind":"pfifo","parent":"1:3","drops":7}]\n' % qdrops)
    open(os.path.join(d, "plan.conf"), "w").close()
    meta = dict(method="tdmwin_barrel", senders=2, receivers=2, dead_ns=0,
                window_ns=400 * MS, slot_ns=500 * MS, guard_ns=0, cycle_ns=500 * MS,
                secs=1, fpc=39, offered_pps=100, load_pct=100, payload=1200,
                frame_bytes=1266, line_mbit=1, buffer=2, ring=64, port=8081,
                permille=5, host_load_cpus="0.10", host_load_max_cpus="0.30",
                host_loaded="")
    meta.update({"addr.1": "198.18.2.101", "addr.2": "198.18.2.102",
                 "count.sw.1.sent": 50, "count.sw.1.drops": 0,
                 "count.sw.2.sent": 49, "count.sw.2.drops": 1, "count.sw.drops": 1,
                 "count.rx.1": 50, "count.rx.2": 49, "count.rx": 99})
    with open(os.path.join(d, "meta"), "w") as f:
        f.write("".join("%s=%s\n" % kv for kv in meta.items()))
    return d


c = wj.judge_point(corner_dir(os.path.join(tmp, "corner")))
eq((c["corner"], c["method"], c["cycles"], c["sent"], c["tapped"], c["qdisc_drops"],
    c["ideal_loss"], c["ideal_collisions"], c["ideal_nic_drops"], c["stray"],
    c["loss"], c["received"]),
   ("2x2", "tdmwin_barrel", 2, 100, 100, 0, 0, 0, 0, 0, 1, 99),
   "judge_corner: two senders to two receivers apart lose nothing at the ideal ports")
eq([(r["receiver"], r["address"], r["planned"], r["departed"], r["utilization"],
     r["payload_utilization"], r["emulated_drops"], r["received"]) for r in c["ports"]],
   [(1, "198.18.2.101", 0.45, 50, 0.5064, 0.48, 0, 50),
    (2, "198.18.2.102", 0.45, 50, 0.5064, 0.48, 1, 49)],
   "judge_corner: each receiver's link: planned share, frames, utilization (framing, payload)")
eq([(r["steady_cycles"], r["run_utilization"]) for r in c["ports"]], [(0, 0.5064)] * 2,
   "judge_corner: a run of fewer than three cycles: its utilization is the run's")
# The steady state: a frame a ms for 10 s, but every other one missing in
# the first cycle of 1 s (a gate's queues filling) and none after 9.5 s.
ramp = [k * MS for k in range(0, 1000, 2)] + [k * MS for k in range(1000, 9500)]
eq(wj.steady_goodput(ramp, 10, 1000 * MS, 1000), (1000 * 1000 * 8, 8),
   "steady_goodput: whole cycles from one after the first frame, the last left out")
eq(wj.steady_goodput(ramp, 10, 3000 * MS, 1000), (1000 * 1000 * 8, 1),
   "steady_goodput: one whole cycle")
eq((wj.steady_goodput(ramp, 2, 1000 * MS, 1000), wj.steady_goodput([], 10, MS, 1000)),
   ((wj.goodput(ramp, 2, 1000), 0), (0, 0)),
   "steady_goodput: fewer than three cycles, or no frame: the run's goodput")
eq(ws.corner_clean(c, 2), True, "corner_clean: no frame lost: clean")
eq((c["untapped"], ws.corner_clean(dict(c, untapped=1), 2)), (0, False),
   "corner_clean: a frame the taps missed cannot be judged: not clean")
eq(ws.corner_clean(dict(c, sent=0), 2), False,
   "corner_clean: a point where nothing was sent judges nothing: not clean")
eq(ws.corner_clean(c, 3), False, "corner_clean: fewer cycles than the sweep's least: not clean")
cc = wj.judge_point(corner_dir(os.path.join(tmp, "corner-collide"), collide=True))
eq((cc["ideal_collisions"] > 0, cc["ideal_loss"] == cc["ideal_collisions"],
    [r["address"] for r in cc["ports"]], cc["ports"][1]["departed"]),
   (True, True, ["198.18.2.101", "198.18.2.102"], 0),
   "judge_corner: both senders at one receiver collide there; the idle receiver's row stays")
eq(ws.corner_clean(cc, 1), False, "corner_clean: collisions: not clean")
cq = wj.judge_point(corner_dir(os.path.join(tmp, "corner-qdrops"), qdrops=3))
eq((cq["qdisc_drops"], cq["untapped"], ws.corner_clean(cq, 1),
    ws.corner_clean(dict(cq, untapped=0), 1, permille=60)),
   (6, -6, False, True),
   "corner_clean: the roots' qdisc drops are losses (not their children's twice); "
   "the allowance takes 6 in 100")
wj.judge_dir(os.path.join(tmp, "corner-collide"), 1)
eq(open(os.path.join(tmp, "corner-collide", "verdict")).read(),
   "ideal=0\nideal_allowance=0\n", "judge_dir: a corner point's verdict")


def cpt(method, dead_us, util, lost=0, corner="3x3", cycles=100, sent=1000):
    """A corner point: receivers' utilizations UTIL, LOST frames at the
    ideal ports."""
    return {"corner": corner, "method": method, "dead_ns": dead_us * US,
            "cycles": cycles, "sent": sent, "ideal_loss": lost,
            "ideal_collisions": lost, "ideal_nic_drops": 0, "qdisc_drops": 0,
            "ports": [{"utilization": u, "payload_utilization": u * 0.95,
                       "planned": 0.9} for u in util]}


cs = [cpt("tdmwin_barrel", 0, [0.93, 0.95, 0.94], lost=2),
      cpt("tdmwin_barrel", 250, [0.92, 0.93, 0.91]),
      cpt("tdmwin_barrel", 1000, [0.85, 0.86, 0.86]),
      cpt("usertdm_barrel", 0, [0.9, 0.9, 0.9], lost=50),
      cpt("usertdm_barrel", 250, [0.9, 0.9, 0.9], lost=1),
      cpt("usertdm_barrel", 1000, [0.80, 0.86, 0.43]),
      cpt("free", 0, [0.6, 0.6, 0.6], lost=900), cpt("free", 250, [0.6, 0.6, 0.6], lost=800),
      cpt("free", 1000, [0.5, 0.5, 0.5], lost=700),
      cpt("tdmwin_barrel", 0, [0.2, 0.2, 0.2], corner="4x4")]
fig = ws.corner_figure([p for p in cs if p["corner"] == "3x3"],
                       ["tdmwin_barrel", "usertdm_barrel", "free"], 100)
eq([fig[m]["dead_ns"] for m in ("tdmwin_barrel", "usertdm_barrel", "free")],
   [250 * US, 1000 * US, None], "corner_figure: the smallest clean dead time per method")
eq((fig["tdmwin_barrel"]["at"]["utilization"], fig["tdmwin_barrel"]["at"]["min_utilization"]),
   ([0.92, 0.93, 0.91], 0.91), "corner_figure: each receiver's utilization there, the least")
eq(ws.corner_ratios(fig), {"usertdm_barrel": [1.15, 1.081, 2.116], "free": None},
   "corner_ratios: tdmwin's over each method's, per receiver; none where one is clean nowhere")
t = ws.corner_targets(fig, cs)
eq([(x[1], x[2]) for x in t], [("least 91.0 %", True), ("800 of 1000 lost", True)],
   "corner_targets: >= 90 % at tdmwin's dead time, where free loses frames")
fig2 = ws.corner_figure(cs[:3] + cs[6:9], ["tdmwin_barrel", "free"], 100)
fig2["tdmwin_barrel"]["at"]["min_utilization"] = 0.899
eq(ws.corner_targets(fig2, cs)[0][2], False, "corner_targets: 89.9 % is not 90 %")
eq(ws.corner_targets(ws.corner_figure(cs[6:9], ["tdmwin_barrel", "free"], 100), cs)[0][1:],
   ("none clean", False), "corner_targets: tdmwin clean nowhere: not met")
rep = [cpt("m", 100, [0.9]), cpt("m", 100, [0.8]), cpt("m", 100, [1.0], lost=1)]
eq(ws.smallest_clean(rep, "m", 100, ok=lambda p: ws.corner_clean(p, 100)), None,
   "corner: a dirty repeat spoils its dead time")
eq(ws.corner_at(rep[:2], "m", 100 * US)["utilization"], [0.85],
   "corner_at: repeats averaged per receiver")
h = ws.corner_headline({"points": cs, "frame_ns": 250 * US, "min_cycles": 100}, "3x3",
                       ["tdmwin_barrel", "usertdm_barrel", "free"], 5)
eq((h["strict"]["tdmwin_barrel"]["dead_frames"], h["allowance"]["usertdm_barrel"]["dead_ns"]),
   (1.0, 250 * US), "corner_headline: in frame times; the allowance forgives 1 in 1000")
shutil.rmtree(tmp)

sys.exit(T.done())
