#!/usr/bin/env python3
"""Wall time of `ditc compile`, whole process, for two plans the partitioner
issue names: Wan2.1-T2V-14B on 8 GPUs (target < 100 ms here) and a 60-block
model (Qwen-Image) on 1024 ranks, dp x cfg x pp x ulysses x tp (target < 2 s).

Usage: bench/compile_latency.py [--ditc build/bin/ditc] [--runs 10]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CASES = [
    ("wan2.1-t2v-14b, 8 GPUs (tp 2 x ulysses 4)", 100.0,
     ["wan2.1-t2v-14b", "--height", "480", "--width", "832", "--num-frames", "81",
      "--tp-size", "2", "--ulysses-degree", "4"]),
    ("qwen-image, 1024 ranks (dp16 cfg2 pp4 u2 tp4)", 2000.0,
     ["qwen-image", "--dp-size", "16", "--cfg-parallel-size", "2", "--pp-size", "4",
      "--ulysses-degree", "2", "--tp-size", "4"]),
]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--ditc", default=os.path.join(root, "build", "bin", "ditc"))
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="ditc-bench-")
    try:
        print(f"{'plan':<48} {'median ms':>10} {'min ms':>8} {'target ms':>10}")
        for name, target, flags in CASES:
            times = []
            for run in range(args.runs):
                out = os.path.join(scratch, f"plan{run}")
                command = [args.ditc, "compile", "--attention-backend", "fa",
                           "-o", out] + flags
                start = time.perf_counter()
                result = subprocess.run(command, stdout=subprocess.DEVNULL)
                times.append((time.perf_counter() - start) * 1000.0)
                if result.returncode != 0:
                    sys.exit(f"{' '.join(command)} exited {result.returncode}")
                shutil.rmtree(out)
            median = statistics.median(times)
            verdict = "ok" if median < target else "OVER"
            print(f"{name:<48} {median:10.1f} {min(times):8.1f} {target:10.0f}  {verdict}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
