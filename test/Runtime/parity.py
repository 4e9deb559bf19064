#!/usr/bin/env python3
"""Parity of dit-run across parallel configurations, with real multi-process
gloo runs on loopback.

For one model it compiles the one-rank plan and each configuration given,
runs every plan with `dit-run --nproc N`, and compares the final latents
with the one-rank run's:
  - configurations marked bitwise (cfg, pp: the same computation placed
    elsewhere) must give identical bytes;
  - the others must agree within --tolerance (max |a - b| / max |b|).
It also checks the one-rank run against the float64 NumPy execution of the
same plan (simulate_plan.py), so the runtime's op semantics are checked
against an independent implementation, and (--repeat) that a second run of
a plan gives identical bytes. With --weights, every run loads one
snapshot of random values (test/lib/snapshot.py), and the float64 execution
reads the same values.

Each configuration prints one line with the largest error it saw.

Usage: parity.py --ditc D --dit-run R --model M --workdir W
                 [--workload "--height 64 ..."] [--steps K]
                 CONFIG... where CONFIG is "name=flags" or "name=flags:bitwise"
"""
import argparse
import os
import shlex
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Executable"))
import simulate_plan  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import snapshot as snapshot_writer  # noqa: E402
from compare import relative_error, replica0_output, world_size  # noqa: E402


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(cmd)}\n{result.stderr}")
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ditc", required=True)
    parser.add_argument("--dit-run", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--workload", default="")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--config-seed", type=int,
                        help="run the configurations with another seed (to show "
                             "that the comparison catches a difference)")
    parser.add_argument("--repeat", action="append", default=[],
                        help="configuration names to run twice")
    parser.add_argument("--weights", choices=["f32", "f16", "bf16"],
                        help="run every plan with dit-run --weights on a snapshot "
                             "of random values in this dtype (test/lib/snapshot.py), "
                             "written from the one-rank plan")
    parser.add_argument("--shards", type=int, default=1,
                        help="with --weights: shard files per transformer")
    parser.add_argument("configs", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    workload = shlex.split(args.workload)

    snapshot = os.path.join(args.workdir, "snapshot")
    loaded = None

    def compile_and_run(name, flags, seed=args.seed):
        nonlocal loaded
        plan = os.path.join(args.workdir, name)
        out = os.path.join(args.workdir, name + ".npy")
        subprocess.run(["rm", "-rf", plan], check=True)
        run([args.ditc, "compile", args.model, *workload, *flags, "-o", plan])
        weights = []
        if args.weights:
            if loaded is None:  # the one-rank plan lists every parameter
                subprocess.run(["rm", "-rf", snapshot], check=True)
                loaded = snapshot_writer.write_snapshot(
                    plan, snapshot, args.weights, args.shards, "random", 7)
            weights = ["--weights", snapshot]
        run([args.dit_run, plan, "--nproc", str(world_size(plan)), "--output", out,
             "--steps", str(args.steps), "--seed", str(seed), "--timeout", "60",
             *weights])
        return plan, replica0_output(plan, out)

    plan1, out1 = compile_and_run("one-rank", [])
    reference = np.load(out1)
    simulated = simulate_plan.simulate(
        plan1, args.steps, args.seed,
        weights=snapshot_writer.stream_weights(loaded) if loaded else None)
    manifest1 = simulate_plan.json.load(open(os.path.join(plan1, "manifest.json")))
    error = relative_error(simulate_plan.patchify(
        reference, manifest1["model"]["patch"], simulate_plan.channels_first(manifest1)),
        simulated)
    verdict = "ok" if error <= args.tolerance else "MISMATCH"
    print(f"{args.model} one-rank vs float64 reference: max relative error "
          f"{error:.3e}: {verdict}")
    failed = verdict != "ok"

    for config in args.configs:
        name, _, rest = config.partition("=")
        flags, _, mode = rest.partition(":")
        bitwise = mode == "bitwise"
        seed = args.seed if args.config_seed is None else args.config_seed
        plan, out = compile_and_run(name, shlex.split(flags), seed)
        latents = np.load(out)
        if latents.shape != reference.shape:
            print(f"{args.model} {name}: shape {latents.shape} differs from "
                  f"{reference.shape}: MISMATCH")
            failed = True
            continue
        error = relative_error(latents, reference.astype(np.float64))
        same = latents.tobytes() == reference.tobytes()
        ok = same if bitwise else error <= args.tolerance
        kind = "bitwise" if bitwise else f"tolerance {args.tolerance:g}"
        print(f"{args.model} {name} ({world_size(plan)} ranks, {kind}): max relative "
              f"error {error:.3e}{', identical bytes' if same else ''}: "
              f"{'ok' if ok else 'MISMATCH'}")
        failed |= not ok
        if name in args.repeat:
            again = out + ".again.npy"
            run([args.dit_run, plan, "--nproc", str(world_size(plan)), "--output",
                 again, "--steps", str(args.steps), "--seed", str(seed),
                 *(["--weights", snapshot] if args.weights else [])])
            repeat_ok = np.load(replica0_output(plan, again)).tobytes() == latents.tobytes()
            print(f"{args.model} {name} run twice: "
                  f"{'identical bytes' if repeat_ok else 'DIFFERENT bytes'}")
            failed |= not repeat_ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
