#!/usr/bin/env python3
"""Test helper: runs a `ditc calibrate` command line, and runs it again (at
most four times in all) while it fails only because the host was too busy
to time, as its own message advises ("calibrate again on a quieter host"):
exit 1 with "the measurement failed: the timings of". Each retry doubles
the command's --round-seconds, so a host that stays busy is timed over
longer rounds, whose medians a burst of load moves less. Every other
outcome, and the last attempt's, passes through unchanged: its stdout, its
stderr and its exit code. lit runs this test beside others on a shared
host, and ctest runs lit beside the other tests.

Usage: remeasure.py CMD [ARG...]
"""
import subprocess
import sys

BUSY = "the measurement failed: the timings of"
ATTEMPTS = 4


def with_longer_rounds(argv, factor):
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--round-seconds":
            out[i + 1] = repr(float(out[i + 1]) * factor)
    return out


for attempt in range(ATTEMPTS):
    run = subprocess.run(with_longer_rounds(sys.argv[1:], 2 ** attempt),
                         capture_output=True, text=True)
    if not (run.returncode == 1 and BUSY in run.stderr) or attempt == ATTEMPTS - 1:
        break
    sys.stderr.write(f"remeasure.py: attempt {attempt + 1} too busy to time: "
                     f"{run.stderr.strip()}\n")
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
sys.exit(run.returncode)
