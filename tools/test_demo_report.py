#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tools/demo_report.py on crafted input: every packet counted once, as
inside its window, outside it, or of no window, and the three add up to
the packets received; a run whose counts do not add up fails --check;
the switch port's drops told apart, a collision failing --check and the
emulator's bunching not.

Prints TAP and "N passed, N failed".  No guest, no root; make check runs it.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "demo_report.py")
MS = 1000000
sys.path.insert(0, os.path.join(HERE, "..", "testbed"))
from tdmtb.tap import Tap  # noqa: E402

T = Tap()
tap = T.ok


def write_csv(path, head, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(rows)


WIN_HEAD = ["window", "sender", "name", "plan_version", "win_start_ns",
            "win_end_ns", "packets", "missing", "bytes", "first_rx_offset_ns",
            "last_rx_offset_ns", "dead_rx_ns", "transit_avg_ns",
            "overlap_front", "overlap_back"]
PKT_HEAD = ["sender", "window", "plan_version", "rx_ns", "duplicate"]

# Two senders, windows [0, 2) ms (sender 0) and [4, 6) ms (sender 1) of a
# 10 ms cycle, two cycles: windows 0..3.  Window 3 (sender 1, cycle 1) has
# no row, as a window whose row was never written.
WINDOWS = [(0, 0, 0), (1, 1, 4), (2, 0, 10), (3, 1, 14)]
ROWS = [w for w in WINDOWS if w[0] != 3]
# (sender, window, rx in ms, duplicate)
PACKETS = [
    (0, 0, 0.5, 0), (0, 0, 1.5, 0), (0, 0, 1.5, 1),  # inside; a duplicate
    (0, 2, 14.0, 0),                                # 2 ms late: outside
    (1, 1, 4.2, 0), (1, 1, 5.0, 0),                 # inside
    (1, 3, 14.5, 0), (1, 3, 15.5, 0),               # no window row
]


# The senders' taps: sender 0 all judged, sender 1 one of no window.
TAPS = ((1, [(0, 0, 0.4, 0), (0, 2, 10.5, 0)]),
        (2, [(1, 1, 4.1, 0), (1, 3, 14.1, 0)]))
# Every departure inside its window.
TAPS_OK = ((1, [(0, 0, 0.4, 0), (0, 2, 10.5, 0)]),
           (2, [(1, 1, 4.1, 0), (1, 1, 5.1, 0)]))
# Every departure has a window; sender 1's second left 3 ms late.
TAPS_LATE = ((1, [(0, 0, 0.4, 0), (0, 2, 10.5, 0)]),
             (2, [(1, 1, 4.1, 0), (1, 1, 9.0, 0)]))


def craft(folder, received, taps=TAPS, run="gated", port=None, ideal=None):
    """A run as tools/demo-guest leaves it; received: per sender; port:
    per sender (collisions, self drops, lost elsewhere); ideal: the ideal
    port's frames lost per sender and windows overlapping (of sender 0)."""
    port = port or {0: (0, 0, 0), 1: (0, 0, 0)}
    ideal = ideal or ({0: 0, 1: 0}, 0)
    write_csv(os.path.join(folder, run + "-windows.csv"), WIN_HEAD,
              [[w, s, "tx%d" % (s + 1), 1, t * MS, (t + 2) * MS, 1, 0, 1400,
                0, 0, 0, 0, 0, 0] for w, s, t in ROWS])
    write_csv(os.path.join(folder, run + "-packets.csv"), PKT_HEAD,
              [[s, w, 1, int(t * MS), d] for s, w, t, d in PACKETS])
    summary = {"run": {"ring_drops": 0, "ts_source": "sw",
                       "overlap_windows": 0},
               "senders": [{"sender": s, "name": "tx%d" % (s + 1),
                            "sent": received[s] + sum(port[s]),
                            "received": received[s],
                            "lost": sum(port[s]), "windows": 2,
                            "start_rx_ns": 0, "end_rx_ns": 16 * MS}
                           for s in (0, 1)]}
    with open(os.path.join(folder, run + ".json"), "w") as f:
        json.dump(summary, f)
    sw = {"mbit": 50, "buffer": 5, "ring": 64, "frame_bytes": 1466,
          "duration_s": 1, "window_ns": 2 * MS, "dead_ns": 3 * MS,
          "guard_ns": 0, "cycle_ns": 10 * MS,
          "port_sent": sum(received.values()) + 2,
          "port_drops": sum(c + x for c, x, _ in port.values()) + 1,
          "rx_frames": sum(received.values()) + 2,
          "senders": [{"nic_sent": received[s], "nic_drops": port[s][2]}
                      for s in (0, 1)]}
    with open(os.path.join(folder, run + "-switch.json"), "w") as f:
        json.dump(sw, f)
    # The port's drops, told apart on the host (tools/demo: tb port-drops).
    with open(os.path.join(folder, run + "-port-drops.txt"), "w") as f:
        f.write("arrived=0\ndeparted=0\ndropped=%d\ncollision=%d\nself=%d\n"
                % (sum(c + x for c, x, _ in port.values()),
                   sum(c for c, _, _ in port.values()),
                   sum(x for _, x, _ in port.values())))
        for s in (0, 1):
            f.write("collision.%d=%d\nself.%d=%d\n"
                    % (s, port[s][0], s, port[s][1]))
    lost, ovl = ideal
    with open(os.path.join(folder, run + "-ideal.txt"), "w") as f:
        f.write("dropped=%d\nnic_drops=0\n" % sum(lost.values()))
        for s_, k in lost.items():
            f.write("collision.%d=%d\nself.%d=0\n" % (s_, k, s_))
    with open(os.path.join(folder, run + "-ideal.json"), "w") as f:
        json.dump({"run": {"overlap_windows": ovl, "windows": len(ROWS)}}, f)
    write_csv(os.path.join(folder, run + "-ideal-windows.csv"), WIN_HEAD,
              [[w, s_, "tx", 1, t * MS, (t + 2) * MS, 1, 0, 1, 0, 0, 0, 0,
                1 if s_ == 0 and k < ovl else 0, 0]
               for k, (w, s_, t) in enumerate(ROWS)])
    for i, pk in taps:
        pre = os.path.join(folder, "%s-tap-tx%d" % (run, i))
        write_csv(pre + "-windows.csv", WIN_HEAD,
                  [[w, s, "tx", 1, t * MS, (t + 2) * MS, 1, 0, 1, 0, 0, 0, 0,
                    0, 0] for w, s, t in ROWS])
        write_csv(pre + "-packets.csv", PKT_HEAD,
                  [[s, w, 1, int(t * MS), d] for s, w, t, d in pk])


def report(folder, *extra):
    p = subprocess.run([sys.executable, REPORT, folder, "--senders", "2",
                        "--early-us", "1000", "--late-us", "1500",
                        "--outlier-permille", "5"] + list(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    return p.returncode, p.stdout


def main():
    with tempfile.TemporaryDirectory() as d:
        craft(d, {0: 3, 1: 4})
        rc, out = report(d)
        tap(rc == 0, "the report runs", out)
        tap("arrivals: 4 inside + 1 outside + 2 of no window = 7 of 7 "
            "received" in out,
            "arrivals: inside, outside and no window, adding up to received",
            out)
        tap("DO NOT ADD UP" not in out, "no mismatch reported", out)
        tap("departures: 3 inside + 0 outside + 1 of no window" in out,
            "departures of no window counted", out)
        rc, out = report(d, "--check")
        tap(rc == 1 and "1 departures of the gated run have no window" in out,
            "--check fails on departures of no window", out)

        # Sender 1 received one packet more than the file holds.
        craft(d, {0: 3, 1: 5})
        rc, out = report(d)
        tap("= 7 of 8 received; DO NOT ADD UP for tx2" in out,
            "a mismatch with the packets received is reported", out)
        rc, out = report(d, "--check")
        tap(rc == 1 and "do not add up" in out,
            "--check fails when the counts do not add up", out)

        # A departure outside its window: judged on a quiet host only.
        craft(d, {0: 3, 1: 4}, TAPS_LATE)
        rc, out = report(d, "--check")
        tap(rc == 1 and "1 of 4 packets of the gated run left outside" in out,
            "--check fails on a departure outside its window", out)
        rc, out = report(d, "--check", "--host-loaded", "host loaded: 1.2")
        tap(rc == 0 and "not judged, reported" in out and
            "1 of 4 packets of the gated run left outside" in out and
            "host loaded: 1.2" in out,
            "a loaded host: the departures are reported, not judged", out)

    # The switch port: the emulator's bunching is reported, a collision
    # and a frame lost elsewhere fail (timing checks: a quiet host only).
    with tempfile.TemporaryDirectory() as d:
        craft(d, {0: 3, 1: 4}, TAPS_OK, port={0: (0, 2, 0), 1: (0, 1, 0)})
        rc, out = report(d, "--check")
        tap(rc == 0 and "demo check passed" in out,
            "the emulator's bunching at the switch port does not fail --check",
            out)
        tap("4 dropped: 0 collisions + 3 the emulator's bunching (tdmgen's, "
            "by the taps) + 1 others" in out,
            "the switch port's drops are told apart", out)
        tap("0/2/0" in out and "0/1/0" in out,
            "each sender's loss: collisions, bunching, elsewhere", out)
        # 7 frames of 1466 bytes from 234.56 us before the first arrival
        # (0) to the last (16 ms): 82,096 bits in 16.23456 ms.
        tap("goodput 5.1 Mbit/s: utilization 10.1 % of the line" in out,
            "the utilization: frames received on the wire, over the span of "
            "their arrivals, against the line rate", out)
        craft(d, {0: 3, 1: 4}, TAPS_OK, port={0: (1, 0, 0), 1: (0, 0, 0)})
        rc, out = report(d, "--check")
        tap(rc == 1 and "lost 1 of 8 frames to collisions" in out,
            "--check fails on a collision at the switch port", out)
        rc, out = report(d, "--check", "--host-loaded", "host loaded: 0.9")
        tap(rc == 0 and "not judged, reported" in out,
            "a loaded host: the collisions are reported, not judged", out)
        craft(d, {0: 3, 1: 4}, TAPS_OK, port={0: (0, 0, 0), 1: (0, 0, 2)})
        rc, out = report(d, "--check")
        tap(rc == 1 and "lost 2 frames elsewhere than at the switch port" in out,
            "--check fails on a frame lost elsewhere than at the switch port",
            out)

        # The ideal port: the senders' taps on perfect wires.
        craft(d, {0: 3, 1: 4}, TAPS_OK, ideal=({0: 0, 1: 1}, 0))
        rc, out = report(d, "--check")
        tap(rc == 1 and "lost 1 frames at the ideal port (0 allowed)" in out
            and "0/0" in out and "1/0" in out,
            "--check fails on a frame lost at the ideal port, per sender shown",
            out)
        craft(d, {0: 3, 1: 4}, TAPS_OK, ideal=({0: 0, 1: 0}, 1))
        rc, out = report(d, "--check")
        tap(rc == 1 and "1 of 3 windows of the gated run overlapped" in out,
            "--check fails on a window overlapping at the ideal port", out)
        os.remove(os.path.join(d, "gated-ideal.txt"))
        rc, out = report(d, "--check")
        tap(rc == 1 and "no ideal port for the gated run" in out,
            "--check fails without the ideal port", out)

    # The user-space TDM run beside the gated one: shown, not judged.
    with tempfile.TemporaryDirectory() as d:
        craft(d, {0: 3, 1: 4}, TAPS_OK)
        craft(d, {0: 3, 1: 4}, TAPS_LATE, run="usertdm")
        rc, out = report(d, "--check")
        tap("user-space TDM, the original method" in out and
            "usertdm: 7 packets, 0 lost" in out and
            "1 of 4 left" in out.split("usertdm:")[-1],
            "the user-space TDM run is shown with its departures", out)
        tap(rc == 0 and "demo check passed" in out,
            "only the gated run is judged: a user-space TDM departure "
            "outside its window does not fail --check", out)

    # The headline: per method, collisions at the switch port, windows
    # overlapping and goodput as a share of the line, the emulator's own
    # drops apart; a tie with tdmwin said as such.
    with tempfile.TemporaryDirectory() as d:
        craft(d, {0: 3, 1: 4}, TAPS_OK, port={0: (0, 1, 0), 1: (0, 0, 0)})
        craft(d, {0: 3, 1: 4}, TAPS_OK, run="usertdm")
        rc, out = report(d)
        head = out.split("== headline")[-1]
        tap("user-space TDM TIES with tdmwin at this point: 0 frames lost "
            "to collisions and 0 windows overlapping, against tdmwin's 0 "
            "and 0." in head,
            "headline: a method as clean as tdmwin is said to tie", out)
        tap(any(line.split()[:3] == ["tdmwin", "(kernel", "gate)"] and
                "0 of 8" in line and "0 of 4" in line and
                "10.1 % of the line" in line and line.split()[-5] == "1"
                for line in head.splitlines()),
            "headline: tdmwin's collisions, overlaps, goodput share and the "
            "emulator's drops apart", out)
        craft(d, {0: 3, 1: 4}, TAPS_OK, run="usertdm",
              port={0: (2, 1, 0), 1: (1, 0, 0)})
        with open(os.path.join(d, "usertdm.json")) as f:
            j = json.load(f)
        j["run"]["overlap_windows"] = 3
        with open(os.path.join(d, "usertdm.json"), "w") as f:
            json.dump(j, f)
        rc, out = report(d)
        head = out.split("== headline")[-1]
        tap("tdmwin wins over user-space TDM: 3 frames lost to collisions "
            "and 3 windows overlapping, against tdmwin's 0 and 0." in head
            and "TIES" not in head,
            "headline: a method with collisions and overlaps loses to tdmwin",
            out)
        tap(any(line.startswith("  user-space TDM") and "3 of 11" in line
                and "3 of 4" in line for line in head.splitlines()),
            "headline: the other method's collisions of its frames sent and "
            "windows overlapping", out)
    return T.done()


if __name__ == "__main__":
    sys.exit(main())
