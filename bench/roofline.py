#!/usr/bin/env python3
"""dit-run against this machine's peak: the sgemm roofline of every bench-wan
configuration, in one run.

1. The machine's sgemm peak: the better of libtorch's mm (MKL) and the
   OpenBLAS sgemm dit-run's CPU tiles call, on two 2048 x 2048 float32
   matrices, best of 5, with 1 thread and with every core.
2. The FLOPs of one denoising step: each rank's program's per_step.flops
   from the plan (ditc's own count, docs/plan-format.md: GEMMs 2·M·N·K,
   attention 4·B·H·Lq·Lk·d with every key a ring visits, norms and
   elementwise ops 1 per element), summed over ranks.
3. dit-run's step time (rank 0's --report, the median of the timed steps
   of --repeats runs that alternate the thread settings; each run's first
   step is a warm-up and left out) for one rank and each 2-rank
   configuration (cfg2, tp2, ulysses2, ring2, kv_gather2, pp2), and one
   rank and tp2 with the CFG branches as two calls (--no-batch-branches;
   the others run a rank's branches as one batched call), with the
   default threads and with each explicit --threads value from 1 to the
   core count.

Prints per run the step time, whole-step GFLOP/s (the FLOPs of every rank
over the step time), the fraction of the all-core peak, the memory ratio
(the largest over ranks of peak RSS minus parameters, from --report, over
the plan's activation_bytes for that rank) and what the steps add to the
resident set once the parameters are in place (peak RSS minus --report's
rss_ready_mib, over activation_bytes), and per communication axis the
exposed and raw collective time per step (--report's comm_axes: the part
the step waited for, and the whole; "-" where the report has no
comm_axes) with, for shared-memory collectives, the exposed time's wait
for the slower member (peer_wait_ms), and per configuration how the default compares with the best
explicit --threads.
Every output is checked against the one-rank default run: identical bytes
for one-rank, unbatched, cfg2 and pp2 at any thread count (docs/runtime.md, "Threads"),
and at most 1e-5 max relative error for the others. A mismatch exits 1.

Usage: bench/roofline.py [--build build] [--steps 3] [--repeats 2]
                         [--configs one-rank,cfg2,...] [--json FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = "bench-wan"
WORKLOAD = ["--height", "256", "--width", "256", "--num-frames", "9", "--dtype", "f32"]
CONFIGS = {
    "one-rank": [],
    # The CFG branches as two calls instead of one batched call
    # (dit-batch-branches), beside the batched runs.
    "unbatched": ["--no-batch-branches"],
    "cfg2": ["--cfg-parallel-size", "2"],
    "tp2": ["--tp-size", "2"],
    "tp2-unbat": ["--tp-size", "2", "--no-batch-branches"],
    "ulysses2": ["--ulysses-degree", "2"],
    "ring2": ["--ring-degree", "2"],
    "kv_gather2": ["--kv-gather-degree", "2"],
    "pp2": ["--pp-size", "2"],
}
# The same computation placed elsewhere: the bytes must not change.
BITWISE = {"one-rank", "unbatched", "cfg2", "pp2"}
TOLERANCE = 1e-5


def activation_bytes(plan):
    """Each rank's per-step activation bytes, as the plan states them."""
    with open(os.path.join(plan, "manifest.json")) as f:
        manifest = json.load(f)
    per_program = {p["id"]: p["per_step"]["activation_bytes"]
                   for p in manifest["programs"]}
    return [per_program.get(r.get("program"), 0) for r in manifest["ranks"]]


def plan_flops(plan):
    """FLOPs of one step summed over every rank, and per rank, as the plan
    counts them (per_step.flops of each rank's program)."""
    with open(os.path.join(plan, "manifest.json")) as f:
        manifest = json.load(f)
    per_program = {p["id"]: p["per_step"]["flops"] for p in manifest["programs"]}
    per_rank = [per_program.get(r.get("program"), 0) for r in manifest["ranks"]]
    return sum(per_rank), per_rank


def comm_columns(reports):
    """'axis exposed/raw (wait w)' ms per step for each axis of --report's
    comm_axes, averaged over `reports`, w being the exposed time's wait for
    the slower member (shared-memory collectives only; omitted where 0);
    '-' when they have none."""
    fields = ("raw_ms", "exposed_ms", "peer_wait_ms")
    sums = {}
    for report in reports:
        for axis, t in (report.get("comm_axes") or {}).items():
            total = sums.setdefault(axis, dict.fromkeys(fields, 0.0))
            for field in fields:
                total[field] += t.get(field, 0.0)  # older runtimes: no peer wait
    if not sums:
        return "-", {}
    n = len(reports)
    means = {axis: {field: v / n for field, v in t.items()}
             for axis, t in sums.items()}
    text = " ".join(f"{axis} {t['exposed_ms']:.0f}/{t['raw_ms']:.0f}"
                    + (f" (wait {t['peer_wait_ms']:.0f})" if t["peer_wait_ms"] > 0.5 else "")
                    for axis, t in sorted(means.items()))
    return text, means


def sgemm_peak(threads, n=2048, repeats=5):
    """This machine's sgemm, in GFLOP/s, for two n x n float32 matrices with
    `threads` threads: the better of libtorch's mm (MKL, in torch's wheel)
    and the OpenBLAS that dit-run's CPU GEMM tiles call (Debian's
    libopenblas.so.0, runtime/include/ditc/Runtime/Exec/HostBlas.h), so the
    fraction is of the fastest sgemm here, whichever library it is."""
    import ctypes
    import torch
    from eager_peer import set_blas_threads
    torch.set_num_threads(threads)
    set_blas_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    c = torch.empty(n, n)

    def best_of(product):
        product()
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            product()
            best = min(best, time.perf_counter() - start)
        return 2 * n ** 3 / best / 1e9

    rates = [best_of(lambda: torch.mm(a, b))]
    try:
        blas = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_LOCAL)
    except OSError:
        return rates[0]
    blas.openblas_set_num_threads(threads)
    pointer = ctypes.POINTER(ctypes.c_float)
    sgemm = blas.cblas_sgemm
    sgemm.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, pointer, ctypes.c_int, pointer,
                                           ctypes.c_int, ctypes.c_float, pointer, ctypes.c_int]
    args = [101, 111, 111, n, n, n, 1.0,
            ctypes.cast(a.data_ptr(), pointer), n, ctypes.cast(b.data_ptr(), pointer), n,
            0.0, ctypes.cast(c.data_ptr(), pointer), n]
    rates.append(best_of(lambda: sgemm(*args)))
    return max(rates)


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr[-2000:]}")
    return result.stdout


def load_average():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--steps", type=int, default=3, help="timed steps per run")
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs per configuration and thread setting, alternating")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args()
    configs = args.configs.split(",")
    for name in configs:
        if name not in CONFIGS:
            sys.exit(f"--configs: unknown configuration '{name}'; known: "
                     f"{', '.join(CONFIGS)}")
    if configs[0] != "one-rank":
        configs.insert(0, "one-rank")  # every output is checked against it
    ditc = os.path.join(args.build, "bin", "ditc")
    dit_run = os.path.join(args.build, "bin", "dit-run")
    cores = len(os.sched_getaffinity(0))

    load = load_average()
    peaks = {t: sgemm_peak(t) for t in sorted({1, cores})}
    peak = peaks[cores]
    print(f"{MODEL} {' '.join(WORKLOAD)}, float32, {cores} cores, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("sgemm peak (2048^3, the better of libtorch mm and OpenBLAS): " +
          ", ".join(f"{peaks[t]:.1f} GFLOP/s with {t} thread{'s' if t > 1 else ''}"
                    for t in peaks))
    print(f"fraction = whole-step GFLOP/s summed over ranks / {peak:.1f} "
          f"(the all-core peak); step = median of {args.repeats} alternating runs "
          f"of {args.steps} timed steps")
    print("memory = max over ranks of (peak RSS - parameters) / the plan's "
          "activation_bytes (goal <= 1.5); steps = max over ranks of (peak RSS - "
          "RSS with the parameters in place) / activation_bytes")
    print("comm = per axis, exposed/raw collective ms per step (rank 0); wait = "
          "the exposed ms spent waiting for the slower member (shared memory)")
    print(f"{'config':11} {'ranks':>5} {'GFLOP':>7} {'threads':>8} {'step ms':>9} "
          f"{'GFLOP/s':>8} {'of peak':>8} {'memory':>7} {'steps':>6} "
          f"{'max rel diff':>13}  comm")
    sys.stdout.flush()

    work = tempfile.mkdtemp(prefix="ditc-roofline-")
    results = {"load_average": load, "cores": cores,
               "sgemm_peak_gflops": {str(t): p for t, p in peaks.items()},
               "runs": []}
    reference = None
    failed = False
    try:
        for name in configs:
            plan = os.path.join(work, name)
            run([ditc, "compile", MODEL, *WORKLOAD, *CONFIGS[name], "-o", plan])
            flops, _ = plan_flops(plan)
            activations = activation_bytes(plan)
            with open(os.path.join(plan, "manifest.json")) as f:
                ranks = json.load(f)["mesh"]["num_gpus"]
            settings = ["default"] + [str(t) for t in range(1, cores + 1)]
            steps = {t: [] for t in settings}
            diffs = {t: 0.0 for t in settings}
            oks = {t: True for t in settings}
            timings = {}
            reports = {t: [] for t in settings}
            # The settings alternate, so a drift in the machine's load
            # reaches all of them alike.
            for _ in range(args.repeats):
                for threads in settings:
                    out = os.path.join(work, f"{name}.{threads}.npy")
                    report = os.path.join(work, f"{name}.{threads}.json")
                    cmd = [dit_run, plan, "--nproc", str(ranks), "--output", out,
                           "--steps", str(args.steps + 1), "--report", report]
                    if threads != "default":
                        cmd += ["--threads", threads]
                    run(cmd)
                    with open(report) as f:
                        timings[threads] = json.load(f)
                    reports[threads].append(timings[threads])
                    steps[threads] += timings[threads]["step_ms"][1:]
                    latents = np.load(out)
                    if reference is None:
                        reference = latents
                    diff = float(np.max(np.abs(latents.astype(np.float64) - reference)) /
                                 np.max(np.abs(reference)))
                    diffs[threads] = max(diffs[threads], diff)
                    oks[threads] &= (latents.tobytes() == reference.tobytes()
                                     if name in BITWISE else diff <= TOLERANCE)
            times = {}
            for threads in settings:
                timing = timings[threads]
                step_ms = times[threads] = statistics.median(steps[threads])
                gflops = flops / step_ms / 1e6
                memory = max((rss - params) * 2 ** 20 / act
                              for rss, params, act in zip(timing["peak_rss_mib"],
                                                          timing["param_mib"], activations)
                              if act > 0)
                # Older runtimes have no rss_ready_mib: 'steps' is then NaN.
                ready = timing.get("rss_ready_mib", [float("nan")] * ranks)
                grown = max((rss - r) * 2 ** 20 / act
                            for rss, r, act in zip(timing["peak_rss_mib"], ready,
                                                   activations) if act > 0)
                comm, comm_means = comm_columns(reports[threads])
                label = f"{threads} ({timing['threads']})" if threads == "default" \
                    else threads
                ok = oks[threads]
                print(f"{name:11} {ranks:>5} {flops / 1e9:>7.1f} {label:>8} "
                      f"{step_ms:>9.1f} {gflops:>8.1f} {100 * gflops / peak:>7.1f}% "
                      f"{memory:>7.1f} {grown:>6.1f} {diffs[threads]:>13.2e}  {comm}"
                      f"{'' if ok else '  MISMATCH'}")
                sys.stdout.flush()
                failed |= not ok
                results["runs"].append({
                    "config": name, "ranks": ranks, "flops": flops,
                    "threads": threads, "threads_used": timing["threads"],
                    "step_ms": step_ms, "all_step_ms": steps[threads],
                    "gflops": gflops, "fraction_of_peak": gflops / peak,
                    "max_rel_diff": diffs[threads],
                    "peak_rss_mib": timing["peak_rss_mib"],
                    "param_mib": timing["param_mib"], "activation_bytes": activations,
                    "rss_start_mib": timing.get("rss_start_mib"),
                    "rss_ready_mib": timing.get("rss_ready_mib"),
                    "steps_memory_ratio": grown, "comm_axes": comm_means,
                    "ok": ok})
            best = min(v for k, v in times.items() if k != "default")
            print(f"{'':11} default / best explicit --threads: "
                  f"{times['default'] / best:.2f} (goal <= 1.05)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    end = load_average()
    print(f"load average at the end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if failed:
        sys.exit("some outputs disagree with the one-rank run (MISMATCH above)")


if __name__ == "__main__":
    main()
