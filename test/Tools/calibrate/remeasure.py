#!/usr/bin/env python3
"""Test helper: runs a `ditc calibrate` command line, and runs it again (at
most three times in all) while it fails only because the host was too busy
to time, as its own message advises ("calibrate again on a quieter host"):
exit 1 with "the measurement failed: the timings of". Every other outcome,
and the last attempt's, passes through unchanged: its stdout, its stderr
and its exit code. lit runs this test beside others on a shared host.

Usage: remeasure.py CMD [ARG...]
"""
import subprocess
import sys

BUSY = "the measurement failed: the timings of"

for attempt in range(3):
    run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
    if not (run.returncode == 1 and BUSY in run.stderr) or attempt == 2:
        break
    sys.stderr.write(f"remeasure.py: attempt {attempt + 1} too busy to time: "
                     f"{run.stderr.strip()}\n")
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
sys.exit(run.returncode)
