#!/usr/bin/env python3
"""Step time of dit-run against an eager PyTorch + torch.distributed (gloo)
peer (bench/eager_peer.py) that executes the same plan with the same
semantics, at one and at two ranks.

The model is models/bench-wan (a Wan-shaped DiT: 4 blocks, width 512, 8 heads,
FFN 2048, 768 image tokens + 512 text tokens, two CFG branches), sized so a
step takes about 0.5-2 s on this 2-core machine. Both sides use the same
libtorch build and BLAS and the same plan. dit-run runs with its default
threads (what a user gets); the peer runs its own best threading: every
setting from 1 to cores / ranks threads per rank (given to ATen and to
OpenBLAS), each with libgomp's default spinning and with
OMP_WAIT_POLICY=PASSIVE, and the fastest setting counts. Each side's first
step (dit-run) or warm-up run (the peer) is left out, and the two outputs
must agree, so both did the same work. This machine's step times swing by
10-20% from run to run, so the runs alternate --repeats times and the
median step of each side (of each peer setting) is compared.

Prints, per configuration: the median step ms of each, the peer's best
setting, the ratio dit-run / eager (issue 13's goal: <= 0.7), each side's
communication share of the step, and, against this machine's all-core
sgemm peak measured in the same run, the fraction of it each side reaches
(the plan's FLOPs per step, summed over ranks, over the step time) and the
fraction dit-run would need for a ratio of 0.7: above 100% the goal is out
of reach for that configuration on this machine, however little the step
spends outside GEMMs.

Usage: bench/runtime_vs_eager.py [--build build] [--steps 5] [--repeats 2]
                                 [--configs one-rank,cfg2,...]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The bench-wan workload and its configurations, as bench/roofline.py runs them.
from roofline import CONFIGS, WORKLOAD, plan_flops, sgemm_peak  # noqa: E402


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr[-2000:]}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    args = parser.parse_args()
    ditc = os.path.join(args.build, "bin", "ditc")
    dit_run = os.path.join(args.build, "bin", "dit-run")
    peer = os.path.join(ROOT, "bench", "eager_peer.py")
    work = tempfile.mkdtemp(prefix="ditc-bench-")
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()
    print(f"bench-wan {' '.join(WORKLOAD)}, {args.steps} steps, float32, "
          f"{cores} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"ratio = dit-run / eager (goal <= 0.7)")
    print(f"median step of {args.repeats} alternating runs each; dit-run at its "
          f"default threads, the peer at its best setting (threads per rank, "
          f"OMP_WAIT_POLICY)")
    peak = sgemm_peak(cores)
    print(f"sgemm peak with {cores} threads (libtorch mm, 2048^3): {peak:.1f} GFLOP/s")
    print(f"{'config':10} {'ranks':>5} {'dit-run ms':>11} {'eager ms':>9} "
          f"{'eager setting':>14} {'ratio':>6} {'dit-run comm':>13} {'eager comm':>11} "
          f"{'max rel diff':>13} {'dit-run/peak':>13} {'eager/peak':>11} "
          f"{'0.7 needs':>10}")
    try:
        for name in args.configs.split(","):
            plan = os.path.join(work, name)
            run([ditc, "compile", "bench-wan", *WORKLOAD, *CONFIGS[name], "-o", plan])
            with open(os.path.join(plan, "manifest.json")) as f:
                ranks = json.load(f)["mesh"]["num_gpus"]
            settings = [(t, policy) for t in range(1, max(1, cores // ranks) + 1)
                        for policy in ("spin", "PASSIVE")]
            ours, report = os.path.join(work, name + ".npy"), os.path.join(work, name + ".json")
            theirs = os.path.join(work, name + ".eager.npy")
            ours_steps, ours_comm = [], []
            eager_steps = {s: [] for s in settings}
            eager_share = {s: [] for s in settings}
            for _ in range(args.repeats):
                # One more step than timed: dit-run's first step is its warm-up.
                run([dit_run, plan, "--nproc", str(ranks), "--output", ours,
                     "--steps", str(args.steps + 1), "--report", report])
                with open(report) as f:
                    timings = json.load(f)
                ours_steps += timings["step_ms"][1:]
                ours_comm += [sum(c.values()) for c in timings["comm_ms"][1:]]
                for threads, policy in settings:
                    env = dict(os.environ)
                    env.pop("OMP_WAIT_POLICY", None)
                    if policy == "PASSIVE":
                        env["OMP_WAIT_POLICY"] = "PASSIVE"
                    line = run([sys.executable, peer, plan,
                                "--steps", str(args.steps + 1), "--warmup", "1",
                                "--nproc", str(ranks), "--output", theirs,
                                "--threads", str(threads)], env)
                    eager = json.loads(line.strip().splitlines()[-1])
                    eager_steps[(threads, policy)] += eager["step_ms"]
                    eager_share[(threads, policy)].append(eager["comm_share"])
            ours_ms = statistics.median(ours_steps)
            ours_share = sum(ours_comm) / max(sum(ours_steps), 1e-9)
            best = min(settings, key=lambda s: statistics.median(eager_steps[s]))
            eager_ms = statistics.median(eager_steps[best])
            eager_comm = statistics.mean(eager_share[best])
            setting = f"{best[0]} {best[1].lower()}"

            a, b = np.load(ours), np.load(theirs)
            diff = float(np.max(np.abs(a.astype(np.float64) - b)) / np.max(np.abs(b)))
            flops, _ = plan_flops(plan)
            ours_peak = flops / ours_ms / 1e6 / peak
            eager_peak = flops / eager_ms / 1e6 / peak
            print(f"{name:10} {ranks:>5} {ours_ms:>11.1f} {eager_ms:>9.1f} "
                  f"{setting:>14} {ours_ms / eager_ms:>6.2f} {100 * ours_share:>12.1f}% "
                  f"{100 * eager_comm:>10.1f}% {diff:>13.2e} {100 * ours_peak:>12.1f}% "
                  f"{100 * eager_peak:>10.1f}% {100 * eager_peak / 0.7:>9.1f}%")
            sys.stdout.flush()
            if diff > 1e-4:
                sys.exit(f"{name}: dit-run and the eager peer disagree ({diff:.2e})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    end = os.getloadavg()
    print(f"load average at the end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")


if __name__ == "__main__":
    main()
