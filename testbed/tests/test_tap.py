# SPDX-License-Identifier: GPL-2.0
"""tdmtb.tap: the lines and the exit status."""
import io
import unittest

from tdmtb.tap import Tap, run_unittest


class TapLines(unittest.TestCase):
    def test_lines(self):
        out = io.StringIO()
        t = Tap(out)
        t.ok(True, "one")
        t.ok(False, "two", "why\nbecause")
        t.eq(1, 2, "three")
        t.skip("four", "not here")
        self.assertEqual(t.done(), 1)
        self.assertEqual(out.getvalue().splitlines(), [
            "ok 1 - one", "not ok 2 - two", "#   why", "#   because",
            "not ok 3 - three", "#   got 1, want 2",
            "ok 4 - four # SKIP not here", "1..4",
            "1 passed, 2 failed, 1 skipped"])

    def test_all_passed(self):
        out = io.StringIO()
        t = Tap(out)
        t.ok(True, "a")
        self.assertEqual(t.done(), 0)
        self.assertEqual(out.getvalue().splitlines()[-1], "1 passed, 0 failed")

    def test_unittest(self):
        class Inner(unittest.TestCase):
            def test_a(self):
                pass

            def test_b(self):
                self.fail("boom")

            @unittest.skip("later")
            def test_c(self):
                pass

        out = io.StringIO()
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Inner)
        t = run_unittest(suite, Tap(out))
        self.assertEqual((t.n, t.failed, t.skipped), (3, 1, 1))
        self.assertIn("boom", out.getvalue())


if __name__ == "__main__":
    unittest.main()
