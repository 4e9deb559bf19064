#!/usr/bin/env python3
"""Wall time of `ditc search` over every legal configuration of a 60-block
model (Qwen-Image) on 64 GPUs (8 nodes of 8) and on 1024 GPUs (128 nodes of
8), whole process, against the targets of 1 s and 10 s. Prints how many
candidates each search judged, so the time per candidate is visible too.

Usage: bench/search_speed.py [--ditc build/bin/ditc] [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = [("qwen-image", 64, 1.0), ("qwen-image", 1024, 10.0)]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--ditc", default=os.path.join(root, "build", "bin", "ditc"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(f"{'model':<12} {'GPUs':>5} {'candidates':>10} {'legal':>6} "
          f"{'median s':>9} {'target s':>9} {'ratio':>6}")
    failed = False
    for model, gpus, target in CASES:
        command = [args.ditc, "search", model, "--num-gpus", str(gpus),
                   "--gpus-per-node", "8", "--top", "1", "--format", "json"]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            result = subprocess.run(command, capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            if result.returncode != 0:
                sys.exit(f"{' '.join(command)} exited {result.returncode}")
        found = json.loads(result.stdout)
        median = statistics.median(times)
        failed |= median > target
        print(f"{model:<12} {gpus:>5} {found['candidates']:>10} {found['legal']:>6} "
              f"{median:>9.3f} {target:>9.1f} {median / target:>6.2f}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
