# SPDX-License-Identifier: GPL-2.0
"""tdmtb.deferred: the checks selftests leave for the host (lib.sh's
tdm_judge, tdm_judge_check), run after the guest by `tb judge`."""
import io
import os
import subprocess
import sys
import tempfile
import unittest

import helpers
from tdmtb import deferred

K = 1000
CAP = "cap.pcap"


class Deferred(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.root = self.dir.name

    def mkdir(self, name, lines, frames=None):
        """A test's judge directory NAME with judge.tsv LINES (lists of
        fields) and a capture CAP of FRAMES ((t_ns, seq))."""
        d = os.path.join(self.root, name)
        os.makedirs(d)
        if frames is not None:
            helpers.write(os.path.join(d, CAP),
                          [(t, helpers.send_frame(s)) for t, s in frames])
        with open(os.path.join(d, "judge.tsv"), "w") as f:
            for fields in lines:
                f.write("\t".join(fields) + "\n")
        return d

    def judge(self):
        out = io.StringIO()
        rc = deferred.judge_root(self.root, out)
        return rc, out.getvalue()

    # 10 ms cycle, window [0, 5) ms, no tolerance: 3 inside, 1 outside.
    FRAMES = [(1000 * K, 0), (2000 * K, 1), (3000 * K, 2), (7000 * K, 3)]
    PCAP = ["judge", "P", "tb", "pcap", "@" + CAP, "--port", "5001",
            "--cycle", "10000000", "--windows", "0:5000000",
            "--tol-early", "0", "--tol-late", "0"]

    def test_pass_and_fail(self):
        self.mkdir("01-a", [["permille", "5"], self.PCAP,
                               ["check", "P", "-", "captured", "judged == 4"],
                               ["check", "P", "judge", "inside",
                                "outside <= allowed(judged)"]], self.FRAMES)
        rc, out = self.judge()
        self.assertEqual(rc, 1, out)
        self.assertIn("#   ok 1 - P: tb pcap: ", out)
        self.assertIn("#   ok 2 - captured", out)
        self.assertIn("#   not ok 3 - inside", out)
        # The values behind a failed check are shown.
        self.assertIn("outside=1", out)
        self.assertIn("not ok 1 a # 1 of 3 checks judged on the host", out)
        self.assertTrue(out.endswith("0 passed, 1 failed\n"), out)

    def test_allowance(self):
        # 1 outside of 4 with 250 per mille allowed (4 * 250 // 1000 = 1).
        self.mkdir("01-a", [["permille", "250"], self.PCAP,
                               ["check", "P", "judge", "inside",
                                "outside <= allowed(judged)"]], self.FRAMES)
        rc, out = self.judge()
        self.assertEqual(rc, 0, out)
        self.assertIn("ok 1 a # 2 checks judged on the host", out)

    def test_report_is_todo(self):
        self.mkdir("01-a", [["permille", "0"], self.PCAP,
                               ["check", "P", "report", "inside",
                                "outside == 0"]], self.FRAMES)
        rc, out = self.judge()
        self.assertEqual(rc, 0, out)
        self.assertIn("# TODO timing", out)
        self.assertIn("1 timing misses reported only", out)

    def test_tests_in_order_and_counted(self):
        self.mkdir("02-b", [self.PCAP, ["check", "P", "-", "b", "judged == 4"]],
                      self.FRAMES)
        self.mkdir("01-a", [self.PCAP, ["check", "P", "-", "a", "judged == 5"]],
                      self.FRAMES)
        os.makedirs(os.path.join(self.root, "03-nothing"))
        rc, out = self.judge()
        self.assertEqual(rc, 1)
        self.assertLess(out.index("not ok 1 a"), out.index("ok 2 b"))
        self.assertIn("1..2\n1 passed, 1 failed\n", out)

    def test_errors_fail(self):
        cases = [
            ([self.PCAP, ["check", "P", "-", "d", "nosuch > 0"]], "no field"),
            ([["check", "Q", "-", "d", "1 == 1"]], "no judgement 'Q'"),
            ([self.PCAP, ["check", "P", "-", "d", "outside <= allowed(judged)"]],
             "without a permille"),
            ([self.PCAP, ["check", "P", "-", "d", "__import__('os')"]],
             "only allowed(n)"),
            ([self.PCAP, ["check", "P", "-", "d", "judged.real"]],
             "is a field, not a judgement"),
            ([self.PCAP, ["check", "P", "-", "d", "[judged]"]],
             "not allowed in a check"),
            ([["judge", "P", "tb", "pcap", "@missing.pcap", "--cycle", "1",
               "--windows", "0:1"], ["check", "P", "-", "d", "1 == 1"]],
             "tb pcap"),
            ([["judge", "P", "rm", "-rf", "/"]], "bad record"),
            # A judgement that fails is a failure without a check on it.
            ([["judge", "P", "tb", "span", "@missing.pcap", "--to", "1"]],
             "not ok 1 - P: tb span"),
            ([["judge", "P", "tdmstat", "/bin/true", "analyze"]],
             "not a build under build/us"),
        ]
        for lines, why in cases:
            with self.subTest(why=why):
                for d in os.listdir(self.root):
                    subprocess.run(["rm", "-rf", os.path.join(self.root, d)])
                self.mkdir("01-a", lines, self.FRAMES)
                rc, out = self.judge()
                self.assertEqual(rc, 1, out)
                self.assertIn(why, out)

    def test_sanitizer_report_fails(self):
        # A tool that exits 0 with a sanitizer's report on stderr.
        fake = [sys.executable, "-c", "import sys; print('a=1'); "
                "sys.stderr.write('x.c:1:2: runtime error: overflow\\n')"]
        saved = deferred.TOOLS["tb"]
        deferred.TOOLS["tb"] = fake
        self.addCleanup(deferred.TOOLS.__setitem__, "tb", saved)
        self.mkdir("01-a", [["judge", "P", "tb", "x"],
                            ["check", "P", "-", "d", "a == 1"]])
        rc, out = self.judge()
        self.assertEqual(rc, 1, out)
        self.assertIn("sanitizer report: x.c:1:2: runtime error: overflow", out)

    def test_no_root(self):
        out = io.StringIO()
        self.assertEqual(deferred.judge_root(os.path.join(self.root, "x"), out), 1)
        self.assertIn("no such directory", out.getvalue())

    def test_evaluate(self):
        ev = deferred.evaluate
        f = {"judged": 1000, "outside": 5, "udp5001.n": 7, "s": "0:0"}
        self.assertTrue(ev("outside <= allowed(judged)", f, 5))
        self.assertFalse(ev("outside <= allowed(judged)", f, 4))
        self.assertTrue(ev('f("udp5001.n") == udp5001_n == 7', f, 0))
        self.assertTrue(ev('s == "0:0" and not outside < 5', f, 0))
        self.assertTrue(ev('(judged, outside) == (1000, 5)', f, 0))
        others = {"tx": {"judged": 999, "a.b": 1}}
        self.assertTrue(ev("tx.judged < judged and tx.a_b == 1", f, 0, others))
        with self.assertRaises(KeyError):
            ev("tx.nosuch == 1", f, 0, others)
        with self.assertRaises(KeyError):
            ev("rx.judged == 1", f, 0, others)
        for bad in ("tx._names", "(1).real", "f.__globals__"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                ev(bad, f, 0, others)
        self.assertEqual(ev("outside * 100 // (judged + 1)", f, 0), 0)
        for bad in ("True", "1.5 > 1", "[1]", "lambda: 1", "judged if 1 else 2"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                ev(bad, f, 0)

    def test_parse_kv(self):
        self.assertEqual(deferred.parse_kv("# x\na=1\nb=0:0\nc=1.5\n"),
                         {"a": 1, "b": "0:0", "c": 1.5})
        self.assertEqual(deferred.parse_kv('{"run": {"lost": 0}, "s": [7]}'),
                         {"run.lost": 0, "s.len": 1, "s.0": 7})

    def test_cli(self):
        self.mkdir("07-tdmwin_x", [self.PCAP, ["check", "P", "-", "d",
                                                  "judged == 4"]], self.FRAMES)
        # A relative ROOT, as make check passes it.
        r = subprocess.run([sys.executable, os.path.join(helpers.TESTBED, "tb"),
                            "judge", os.path.basename(self.root)],
                           capture_output=True, text=True,
                           cwd=os.path.dirname(self.root))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ok 1 tdmwin_x # 2 checks judged on the host", r.stdout)


if __name__ == "__main__":
    unittest.main()
