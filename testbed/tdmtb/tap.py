# SPDX-License-Identifier: GPL-2.0
"""The one Python TAP writer of the project's host tests (the shell's is
selftests/lib.sh's).

    from tdmtb.tap import Tap
    t = Tap()
    t.ok(cond, "description", detail)    # ok N - description / not ok N - ...
    t.eq(got, want, "description")
    t.skip("description", "why")         # ok N - description # SKIP why
    sys.exit(t.done())                   # 1..N, N passed, N failed[, N skipped]

run_unittest(suite) runs unittest tests as TAP lines, one per test."""
import sys


class Tap:
    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.n = self.failed = self.skipped = 0

    def _print(self, line):
        self.out.write(line + "\n")
        self.out.flush()

    def diag(self, text):
        """TEXT as '#   ' lines (the last 25)."""
        for line in str(text).splitlines()[-25:]:
            self._print("#   " + line)

    def ok(self, cond, desc, detail=""):
        """One result; DETAIL is shown when it failed.  Returns COND."""
        self.n += 1
        if not cond:
            self.failed += 1
        self._print("%s %d - %s" % ("ok" if cond else "not ok", self.n, desc))
        if not cond and detail:
            self.diag(detail)
        return cond

    def eq(self, got, want, desc):
        return self.ok(got == want, desc, "got %r, want %r" % (got, want))

    def skip(self, desc, why):
        self.n += 1
        self.skipped += 1
        self._print("ok %d - %s # SKIP %s" % (self.n, desc, why))

    def done(self):
        """The plan and the summary; the exit status (1 if anything
        failed)."""
        self._print("1..%d" % self.n)
        skipped = ", %d skipped" % self.skipped if self.skipped else ""
        self._print("%d passed, %d failed%s" % (
            self.n - self.failed - self.skipped, self.failed, skipped))
        return 1 if self.failed else 0


def run_unittest(suite, tap=None):
    """Run a unittest SUITE, one TAP line per test; returns the Tap (call
    its done())."""
    import unittest
    tap = tap or Tap()

    class Result(unittest.TestResult):
        def addSuccess(self, test):
            tap.ok(True, test.id())

        def addFailure(self, test, err):
            tap.ok(False, test.id(), self._exc_info_to_string(err, test))

        def addError(self, test, err):
            tap.ok(False, test.id() + " (error)",
                   self._exc_info_to_string(err, test))

        def addSubTest(self, test, subtest, err):
            # A failed subtest fails its test (which then never reports a
            # success): one line for it, not a test that vanishes.
            if err is not None:
                tap.ok(False, subtest.id(), self._exc_info_to_string(err, test))

        def addSkip(self, test, reason):
            tap.skip(test.id(), reason)

        def addExpectedFailure(self, test, err):
            tap.ok(True, test.id() + " (expected failure)")

        def addUnexpectedSuccess(self, test):
            tap.ok(False, test.id() + " (unexpected success)")

    suite.run(Result())
    return tap
