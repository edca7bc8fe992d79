#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tools/wire_sweep.py on synthetic sweeps with known answers: the
smallest clean dead time, the utilization there, and the ratios; and the
switch port's drops told apart (selftests/tdmwin_util.py port_drops).

Prints TAP and "N passed, N failed".  No guest, no root; make check runs it.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire_sweep as ws  # noqa: E402

US = 1000
n = failed = 0


def tap(ok, desc, detail=""):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, desc))
    if not ok and detail:
        print("#   " + detail)


def eq(got, want, desc):
    tap(got == want, desc, "got %r, want %r" % (got, want))


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

# The switch port's drops (selftests/tdmwin_util.py port_drops): a drop
# is a collision only if another sender's frame was in the buffer.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "selftests"))
import tdmwin_util as tu  # noqa: E402

FT = 100
arr, dep = [], {}
for k in range(3):		# sender 0 at line rate: never held
    arr.append((k * FT, 0, k))
    dep[(0, k)] = (k + 1) * FT
for k in range(3, 9):		# sender 0 bunched: 6 at once, 5 fit, 1 dropped
    arr.append((1000, 0, k))
    if k < 8:
        dep[(0, k)] = 1000 + (k - 2) * FT
arr.append((1050, 1, 0))	# sender 1 while sender 0 fills it: collision
arr.append((1600, 1, 1))	# after the buffer drained, left: not a drop
dep[(1, 1)] = 1700
arr.append((1650, 2, 0))	# sender 1's frame still in: a collision with 1
res, first, by = tu.port_drops(list(reversed(arr)), dep)
eq(res, {"arrived": 12, "departed": 9, "dropped": 3, "collision": 2, "self": 1},
   "port drops: one self drop, two collisions, whatever the input order")
eq([(t, s, o) for t, s, o in first], [(1050, 1, [0]), (1650, 2, [1])],
   "port drops: each collision names the senders in the buffer")
eq(by, {0: [0, 1], 1: [1, 0], 2: [1, 0]},
   "port drops: each sender's collisions and self drops")
res, _, _ = tu.port_drops([(0, 0, 0), (0, 0, 1)], {(0, 0): 0})
eq((res["collision"], res["self"]), (0, 1),
   "port drops: a frame that left at the instant of an arrival is not in the buffer")

# The ideal wire and port (selftests/tdmwin_util.py ideal_port): the
# senders' departures on perfect wires into a port of BUFFER frames.
FT = 1000
arr, out, nic = tu.ideal_port([(0, 0, k) for k in range(10)], FT, 5, 64)
res, _, by = tu.port_drops(arr, out)
eq((res["dropped"], nic), (0, {}),
   "ideal port: one sender's burst goes through its wire at line rate, no drop")
eq(sorted(out.values())[:3], [2 * FT, 3 * FT, 4 * FT],
   "ideal port: a frame leaves the port a frame time after it arrived whole")
burst = [(0, s, k) for s in (0, 1) for k in range(10)]
res, _, by = tu.port_drops(*tu.ideal_port(burst, FT, 5, 64)[:2])
eq((res["arrived"], res["dropped"], res["self"], by), (20, 6, 0, {1: [6, 0]}),
   "ideal port: two bursts at once: the buffer fills by one a frame time, "
   "6 collisions")
_, _, nic = tu.ideal_port([(0, 0, k) for k in range(70)], FT, 5, 64)
eq(nic, {0: 6}, "ideal port: a NIC ring of 64 frames drops the 65th on")
res, _, _ = tu.port_drops(*tu.ideal_port(
    [(0, 0, k) for k in range(10)] + [(10 * FT + 1, 1, k) for k in range(10)],
    FT, 5, 64)[:2])
eq(res["dropped"], 0, "ideal port: a second sender after the first's last "
   "frame left loses nothing")

# The tap after the emulated NIC (tdmwin_util.py pcap --ref): a frame
# outside its window is the gate's unless the NIC's lateness against a
# perfect wire from the sender's tap, beyond the guard, explains it.
import struct  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

K = 1000
FRAME = 1226		# with 24 bytes of overhead 200 us at 50 Mbit/s


def write_pcap(path, frames):
    """FRAMES: (t_ns, seq); Ethernet, IPv4, UDP to 5001, the sender's
    magic and seq, padded to FRAME bytes."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
        for t, seq in frames:
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, FRAME - 14, 0, 0, 64,
                             17, 0, bytes(4), bytes(4))
            udp = struct.pack("!HHHH", 40000, 5001, FRAME - 34, 0)
            body = struct.pack("!II", 0x7464_6d77, seq)
            fr = bytes(12) + b"\x08\x00" + ip + udp + body
            fr += bytes(FRAME - len(fr))
            f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(fr), len(fr)))
            f.write(fr)


def pcap_ref(nic, ref):
    """tdmwin_util.py pcap of NIC against REF: a 10 ms cycle, the window
    [0, 4) ms, a guard of 1 ms, 100 us allowed late."""
    with tempfile.TemporaryDirectory() as d:
        write_pcap(os.path.join(d, "n.pcap"), nic)
        write_pcap(os.path.join(d, "r.pcap"), ref)
        out = subprocess.run(
            [sys.executable, tu.__file__, "pcap", os.path.join(d, "n.pcap"),
             "--port", "5001", "--cycle", str(10000 * K), "--windows",
             "0:%d" % (4000 * K), "--tol-early", "0", "--tol-late",
             str(100 * K), "--wire-mbit", "50", "--ref",
             os.path.join(d, "r.pcap"), "--nic-late", str(1000 * K)],
            capture_output=True, text=True, check=True).stdout
    return dict(l.split("=") for l in out.splitlines() if "=" in l)


# The gate lets 15 frames go back to back from 0: on a perfect wire they
# end at 200 us ... 3 ms, the window less the guard.
ref = [(k * 200 * K, k) for k in range(15)]
ends = [(k + 1) * 200 * K for k in range(15)]
r = pcap_ref([(e + 900 * K, k) for k, e in enumerate(ends)], ref)
eq((r["outside"], r["outside_gate"], r["nic_late_p50_ns"]),
   ("0", "0", str(900 * K)),
   "after the NIC: late by less than the guard, every frame inside")
r = pcap_ref([(e + (2000 * K if k >= 10 else 0), k)
              for k, e in enumerate(ends)], ref)
eq((r["outside"], r["outside_gate"], r["nic_late_max_ns"]),
   ("5", "0", str(2000 * K)),
   "after the NIC: a stall of the NIC of 2 ms puts 5 out, none the gate's")
r = pcap_ref([(e + 2000 * K, k) for k, e in enumerate(ends)] +
             [(4400 * K, 15), (4800 * K, 16), (14300 * K, 17)],
             ref + [(4200 * K, 15), (4600 * K, 16), (13600 * K, 17)])
eq((r["outside"], r["outside_gate"]), ("8", "3"),
   "after the NIC: frames the gate let go after the window, or into the "
   "guard with the NIC late by less than it, stay the gate's")
r = pcap_ref([(e, k) for k, e in enumerate(ends)] + [(9000 * K, 99)], ref)
eq((r["outside"], r["outside_gate"], r["unmatched"]), ("1", "1", "1"),
   "after the NIC: a frame the sender's tap did not see is judged as it is")


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

print("1..%d" % n)
print("%d passed, %d failed" % (n - failed, failed))
sys.exit(1 if failed else 0)
