# SPDX-License-Identifier: GPL-2.0
"""testbed/tb, the testbed's commands on the host (tdmtb.cli), and
selftests/tdmwin_util.py, which runs the same in the guest: one
definition, the same output."""
import os
import subprocess
import sys
import tempfile
import unittest

import helpers

TB = os.path.join(helpers.TESTBED, "tb")
UTIL = os.path.join(helpers.ROOT, "selftests", "tdmwin_util.py")
MS = 1000000


def run(*args):
    return subprocess.run([sys.executable] + list(args), capture_output=True,
                          text=True)


class Cli(unittest.TestCase):
    def test_wire_check(self):
        args = ["wire-check", "--senders", "3", "--window", str(10 * MS),
                "--dead", str(2 * MS), "--guard", str(MS), "--size", "1200",
                "--mbit", "50"]
        r = run(TB, *args)
        self.assertEqual((r.returncode, r.stdout),
                         (0, "cycle_ns=36000000 frame_ns=202560 "
                          "frames_per_window=44\n"))
        self.assertEqual(run("-S", UTIL, *args).stdout, r.stdout)
        args[4] = str(MS)
        r = run(TB, *args)
        self.assertEqual(r.returncode, 2)
        self.assertIn("too short", r.stderr)

    def test_not_a_pcap(self):
        with tempfile.NamedTemporaryFile() as f:
            f.write(bytes(40))
            f.flush()
            r = run(TB, "span", f.name, "--to", "5")
            self.assertEqual((r.returncode, r.stderr),
                             (2, "tb: %s: not a pcap file\n" % f.name))
            r = run("-S", UTIL, "span", f.name, "--to", "5")
            self.assertEqual((r.returncode, r.stderr),
                             (2, "tdmwin_util: %s: not a pcap file\n" % f.name))

    def test_ideal_port_both_ways(self):
        with tempfile.TemporaryDirectory() as d:
            taps = []
            for s in range(2):
                taps.append(os.path.join(d, "t%d" % s))
                helpers.write(taps[-1], [(k * 1000, helpers.tdm_frame(s, k))
                                         for k in range(8)])
            args = ["ideal-port", "--in"] + taps + [
                "--size", "1200", "--mbit", "100", "--buffer", "3",
                "--ring", "64"]
            a, b = run(TB, *args), run("-S", UTIL, *args)
        self.assertEqual((a.returncode, b.returncode), (0, 0))
        self.assertEqual(a.stdout, b.stdout)
        self.assertIn("collision.1=", a.stdout)


if __name__ == "__main__":
    unittest.main()
