"""TAP-like reporting shared by the parity suites: one "ok - ..." or
"not ok - ..." line per check, "# ..." notes, and the counts for the
closing "N passed, N failed" line."""

import sys


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def check(self, ok, desc, detail=""):
        if ok:
            self.passed += 1
            print("ok - %s%s" % (desc, " (%s)" % detail if detail else ""))
        else:
            self.failed += 1
            self.failures.append(desc)
            print("not ok - %s: %s" % (desc, detail))
        sys.stdout.flush()

    def note(self, msg):
        for line in str(msg).splitlines():
            print("# " + line)
        sys.stdout.flush()


def fmt(x):
    """A number in 3 significant digits for a check's detail, or n/a."""
    return "%.3g" % x if x is not None else "n/a"
