# SPDX-License-Identifier: GPL-2.0
"""tdmtb.judge: frames against windows, with a serializer's wire time,
a perfect wire's (serialize) and the NIC's lateness against the sender's
tap (ref); and the CLI that wraps it (testbed/tb pcap)."""
import os
import subprocess
import sys
import tempfile
import unittest

import helpers
from tdmtb import judge

K = 1000
# The UDP payload of a frame of 1226 bytes (Ethernet, IPv4, UDP: 42 more),
# 200 us on a wire of 50 Mbit/s with 24 bytes of overhead.
FRAME = 1226 - 42


class Judge(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def cap(self, name, frames):
        """FRAMES: (t_ns, seq) of the selftests' sender's frames."""
        p = os.path.join(self.dir.name, name)
        helpers.write(p, [(t, helpers.send_frame(s, FRAME)) for t, s in frames])
        return p

    def test_parse_windows(self):
        self.assertEqual(judge.parse_windows("0:10,20:5,"), [(0, 10), (20, 5)])

    def test_inside_outside_and_wrap(self):
        # 10 ms cycle, window [2, 4) ms, no tolerance.
        p = self.cap("a", [(2500 * K, 0), (4500 * K, 1), (12100 * K, 2),
                           (19900 * K, 3)])
        r = judge.judge(p, 10000 * K, "2000000:2000000", tol_early=0,
                        tol_late=0, far=400 * K).res
        # 4.5 ms: 0.5 ms late; 19.9 ms: 2.1 ms before the next window.
        self.assertEqual((r["judged"], r["inside"], r["outside"], r["far"],
                          r["max_out_ns"]), (4, 2, 2, 2, 2100 * K))

    def test_frames_per_window(self):
        # 10 ms cycle, windows [1, 3) and [6, 7) ms: each frame counts for
        # the window that opened last before it (a tap stamps late), across
        # the cycle's end, and up to tol_early before its start.
        p = self.cap("w", [(1500 * K, 0), (2900 * K, 1), (6100 * K, 2),
                           (7400 * K, 3), (10500 * K, 4), (19000 * K, 5),
                           (24000 * K, 6)])
        wins = "1000000:2000000,6000000:1000000"
        r = judge.judge(p, 10000 * K, wins, tol_early=0, tol_late=0).res
        # 1.5, 2.9 and 4 ms after window 0; 6.1, 7.4, 9 ms and 0.5 ms (of
        # the next cycle, before window 0 opens) after window 1.
        self.assertEqual((r["window_0"], r["window_1"]), (3, 4))
        # 0.5 ms lies within 0.6 ms before window 0: counted for it.
        r = judge.judge(p, 10000 * K, wins, tol_early=600 * K,
                        tol_late=0).res
        self.assertEqual((r["window_0"], r["window_1"]), (4, 3))
        self.assertEqual(r["window_0"] + r["window_1"], r["judged"])

    def test_tolerances(self):
        p = self.cap("b", [(1900 * K, 0), (4050 * K, 1)])
        r = judge.judge(p, 10000 * K, "2000000:2000000", tol_early=100 * K,
                        tol_late=100 * K).res
        self.assertEqual(r["outside"], 0)

    def test_reorder_and_switch(self):
        p = self.cap("c", [(1000 * K, 5), (11000 * K, 3), (21000 * K, 6),
                           (31000 * K, 7)])
        j = judge.judge(p, 10000 * K, "0:3000000", switch=20500 * K,
                        windows2="5000000:1000000", tol_early=0,
                        tol_late=100 * K)
        r = j.res
        self.assertEqual((r["reorder"], r["phase1"], r["phase2"],
                          r["outside"]), (1, 2, 2, 2))
        self.assertTrue(any(line.startswith("# plan 2") for line in j.lines()))

    def ref_judge(self, nic, ref):
        """A 10 ms cycle, the window [0, 4) ms, a guard of 1 ms, 100 us
        allowed late, the NIC's tap against the sender's."""
        return judge.judge(self.cap("n", nic), 10000 * K, "0:%d" % (4000 * K),
                           port=5001, tol_early=0, tol_late=100 * K,
                           wire_mbit=50, ref=self.cap("r", ref),
                           nic_late=1000 * K).res

    def test_nic_late(self):
        # The gate lets 15 frames go back to back from 0: on a perfect
        # wire they end at 200 us ... 3 ms, the window less the guard.
        ref = [(k * 200 * K, k) for k in range(15)]
        ends = [(k + 1) * 200 * K for k in range(15)]
        r = self.ref_judge([(e + 900 * K, k) for k, e in enumerate(ends)], ref)
        self.assertEqual((r["outside"], r["outside_gate"], r["nic_late_p50_ns"]),
                         (0, 0, 900 * K), "late by less than the guard")
        r = self.ref_judge([(e + (2000 * K if k >= 10 else 0), k)
                            for k, e in enumerate(ends)], ref)
        self.assertEqual((r["outside"], r["outside_gate"], r["nic_late_max_ns"]),
                         (5, 0, 2000 * K), "a NIC stall of 2 ms: none the gate's")
        r = self.ref_judge([(e + 2000 * K, k) for k, e in enumerate(ends)] +
                           [(4400 * K, 15), (4800 * K, 16), (14300 * K, 17)],
                           ref + [(4200 * K, 15), (4600 * K, 16),
                                  (13600 * K, 17)])
        self.assertEqual((r["outside"], r["outside_gate"]), (8, 3),
                         "frames the gate let go late stay the gate's")
        r = self.ref_judge([(e, k) for k, e in enumerate(ends)] +
                           [(9000 * K, 99)], ref)
        self.assertEqual((r["outside"], r["outside_gate"], r["unmatched"]),
                         (1, 1, 1), "a frame the sender's tap missed")

    def test_serialize(self):
        # Three frames let go at once: a perfect wire ends them 200 us apart.
        p = self.cap("s", [(3500 * K, k) for k in range(3)])
        r = judge.judge(p, 10000 * K, "0:4000000", tol_early=0, tol_late=0,
                        wire_mbit=50, serialize=True).res
        self.assertEqual((r["inside"], r["outside"]), (2, 1))

    def test_span(self):
        p = self.cap("t", [(k * 100, k) for k in range(10)])
        self.assertEqual(judge.span(p, 500, 200),
                         {"in_span": 3, "last_before": 400, "first_after": 500})

    def test_cli_wraps_the_package(self):
        p = self.cap("u", [(k * 370 * K, k) for k in range(60)])
        args = dict(cycle=10000 * K, windows="0:3000000", tol_early=0,
                    tol_late=200 * K, bins=7, wire_mbit=50)
        want = judge.judge(p, **args).lines()
        tb = os.path.join(helpers.TESTBED, "tb")
        out = subprocess.run(
            [sys.executable, tb, "pcap", p, "--cycle", "10000000",
             "--windows", "0:3000000", "--tol-early", "0", "--tol-late",
             "200000", "--bins", "7", "--wire-mbit", "50"],
            capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.splitlines(), want)


if __name__ == "__main__":
    unittest.main()
