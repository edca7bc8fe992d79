# SPDX-License-Identifier: GPL-2.0
"""tdmtb.wirecheck: the testbed's limits."""
import unittest

from tdmtb import wirecheck as wc

MS = 1000000


class WireCheck(unittest.TestCase):
    def test_frame_time(self):
        self.assertEqual(wc.frame_ns(1200, 50), (1200 + 66) * 8000 // 50)

    def test_a_plan_that_works(self):
        self.assertIsNone(wc.wire_check(3, 10 * MS, 2 * MS, MS, 1200, 50, 5))
        self.assertEqual(wc.plan_line(3, 10 * MS, 2 * MS, MS, 1200, 50),
                         "cycle_ns=36000000 frame_ns=202560 "
                         "frames_per_window=44")

    def test_refusals(self):
        for args, words in (
                ((0, 10 * MS, 0, 0, 1200, 50, 1), "senders must be"),
                ((33, 10 * MS, 0, 0, 1200, 50, 1), "senders must be"),
                ((3, 10 * MS, 0, 0, 1200, 500, 1), "emulator sustains"),
                ((3, 10 * MS, 0, 0, 1200, 50, 0), "at least one frame"),
                ((3, 10 * MS, -1, 0, 1200, 50, 1), "cannot be negative"),
                ((3, MS, 0, 0, 1200, 50, 1), "too short"),
                ((3, 2 * MS, 0, 1900000, 1200, 50, 1), "cannot carry one")):
            self.assertIn(words, wc.wire_check(*args) or "", args)


if __name__ == "__main__":
    unittest.main()
