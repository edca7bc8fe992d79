# SPDX-License-Identifier: GPL-2.0
"""testbed/tb, the testbed's commands on the host (tdmtb.cli); the guest's
selftests/tdmwin_util.py runs only its plan check (wire-check), with the
same output, and parses no capture."""
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

    def test_ideal_port(self):
        with tempfile.TemporaryDirectory() as d:
            taps = []
            for s in range(2):
                taps.append(os.path.join(d, "t%d" % s))
                helpers.write(taps[-1], [(k * 1000, helpers.tdm_frame(s, k))
                                         for k in range(8)])
            args = ["ideal-port", "--in"] + taps + [
                "--size", "1200", "--mbit", "100", "--buffer", "3",
                "--ring", "64"]
            a = run(TB, *args)
        self.assertEqual(a.returncode, 0)
        self.assertIn("collision.1=", a.stdout)

    def test_guest_parses_no_capture(self):
        # Captures are judged on the host (tdmtb.deferred), not under TCG:
        # the guest's helper has no command that reads one.
        for cmd in ("pcap", "span", "ideal-port", "port-drops"):
            r = run("-S", UTIL, cmd, "--help")
            self.assertEqual(r.returncode, 2, cmd)
            self.assertIn("invalid choice", r.stderr)


if __name__ == "__main__":
    unittest.main()
