#!/usr/bin/env python3
"""dit-run --weights load throughput per rank, against `cat` of the same
files, from the page cache, in one run.

1. Makes a bench-wan-sized model with --layers blocks (width 512; 16 blocks
   are about 400 MB in f32), compiles its one-rank and tp2 plans, and
   writes a snapshot of random values (test/lib/snapshot.py) in /tmp.
2. Reads every file of the snapshot once with `cat FILE > /dev/null`, to
   put it in the page cache, then times `cat` over all of them --repeats
   times: the cache's copy-out rate on this machine, in GB/s.
3. Runs `dit-run PLAN --weights SNAPSHOT --steps 1 --report` for the
   one-rank and tp2 plans --repeats times each and takes, per rank, the
   bytes it read (report weights.bytes_read) over the time it spent
   loading (weights.load_ms, which covers the reads, the conversion to
   float and the placement in the compute dtype). The two tp2 ranks load
   at the same time, as they would in a real launch.

Prints per configuration and rank the GB/s and its ratio to cat's (the
best of the repeats for both), in wall time and per CPU second (the
loading thread's CPU time, report weights.load_cpu_ms, against cat's user +
system time): on a shared host the wall-time rates mostly measure waiting
for a core. The goal is at least 0.5. Exits 1 when a run fails.

Usage: bench/load_speed.py [--build build] [--layers 16] [--cases bf16:float32,bf16:bfloat16,f32:float32]
                           [--shards 4] [--repeats 3] [--workdir /tmp/ditc-load-speed]
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
import snapshot  # noqa: E402
from roofline import run  # noqa: E402  (exits on a failed command)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--cases", default="bf16:float32,bf16:bfloat16,f32:float32",
                        help="STORED:RUN pairs, comma-separated: the snapshot's dtype "
                        "(f32, f16, bf16) and dit-run's --dtype (float32, bfloat16)")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", default="/tmp/ditc-load-speed")
    args = parser.parse_args()
    ditc = os.path.join(args.build, "bin", "ditc")
    dit_run = os.path.join(args.build, "bin", "dit-run")
    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # The model: bench-wan with more blocks.
    model = os.path.join(work, "model")
    shutil.copytree(os.path.join(ROOT, "models", "bench-wan"), model)
    config_path = os.path.join(model, "transformer", "config.json")
    config = json.load(open(config_path))
    config["num_layers"] = args.layers
    json.dump(config, open(config_path, "w"), indent=2)
    workload = ["--height", "128", "--width", "128", "--num-frames", "5", "--dtype", "f32"]
    plans = {}
    for name, flags in [("one-rank", []), ("tp2", ["--tp-size", "2"])]:
        plans[name] = os.path.join(work, name)
        run([ditc, "compile", model, *workload, *flags, "-o", plans[name]])
    worst = {}
    for case in args.cases.split(","):
        dtype, run_dtype = case.split(":")
        in_place = (dtype, run_dtype) in (("f32", "float32"), ("bf16", "bfloat16"))
        path = "in place" if in_place else "read"
        snap = os.path.join(work, f"snapshot-{dtype}")
        if not os.path.isdir(snap):
            snapshot.write_snapshot(plans["one-rank"], snap, dtype, args.shards, "random", 1)
        folder = os.path.join(snap, "transformer")
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                       if f.endswith(".safetensors"))
        total = sum(os.path.getsize(f) for f in files)
        how = ("used in place in the mapped file: no copy; loading maps in every page of "
               "the rank's slices" if in_place else "read with pread and widened to float32")
        print(f"snapshot {snap}: {len(files)} files, {total / 1e6:.1f} MB ({dtype}, "
              f"--dtype {run_dtype}: {how}), {args.layers} blocks")

        # cat from the page cache.
        subprocess.run(["cat", *files], stdout=subprocess.DEVNULL, check=True)
        cat_rates, cat_cpu_rates = [], []
        for _ in range(args.repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run("cat " + " ".join(files) + " > /dev/null", shell=True, check=True)
            cat_rates.append(total / (time.perf_counter() - start) / 1e9)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            cat_cpu_rates.append(total / max(cpu, 1e-4) / 1e9)
        cat, cat_cpu = max(cat_rates), max(cat_cpu_rates)
        print(f"  cat FILE > /dev/null: {cat:.2f} GB/s (best of {args.repeats}: "
              f"{', '.join(f'{r:.2f}' for r in cat_rates)}); per CPU second "
              f"{cat_cpu:.2f} GB/s")

        for name, plan in plans.items():
            nproc = 2 if name == "tp2" else 1
            best, best_cpu = {}, {}
            for k in range(args.repeats):
                report = os.path.join(work, f"{name}.{k}.json")
                run([dit_run, plan, "--nproc", str(nproc), "--output",
                     os.path.join(work, f"{name}.npy"), "--steps", "1", "--weights", snap,
                     "--dtype", run_dtype, "--report", report])
                weights = json.load(open(report))["weights"]
                for rank, (read, ms, cpu_ms) in enumerate(zip(
                        weights["bytes_read"], weights["load_ms"], weights["load_cpu_ms"])):
                    rate = read / (max(ms, 1e-3) / 1e3) / 1e9
                    best[rank] = max(best.get(rank, 0.0), rate)
                    cpu_rate = read / (max(cpu_ms, 1e-3) / 1e3) / 1e9
                    best_cpu[rank] = max(best_cpu.get(rank, 0.0), cpu_rate)
                total_bytes, per_rank = weights["checkpoint_bytes"], weights["bytes_read"]
            for rank, rate in sorted(best.items()):
                ratio = rate / cat
                worst[path] = min(worst.get(path, ratio), ratio)
                print(f"  {name} rank {rank}: read {per_rank[rank] / 1e6:.1f} of "
                      f"{total_bytes / 1e6:.1f} MB "
                      f"({100 * per_rank[rank] / total_bytes:.0f}%) at {rate:.2f} GB/s, "
                      f"{ratio:.2f}x cat; per CPU second {best_cpu[rank]:.2f} GB/s, "
                      f"{best_cpu[rank] / cat_cpu:.2f}x cat's")
    for path, ratio in sorted(worst.items()):
        print(f"ratio to cat, {path} path (worst rank): {ratio:.2f} "
              f"({'meets' if ratio >= 0.5 else 'misses'} the 0.5 goal)")


if __name__ == "__main__":
    main()
