#!/usr/bin/env python3
"""The cost model's per-rank peak memory against dit-run's measured peak
(issue 32, point 3).

For each family (Wan, FLUX, SD3, Qwen-Image, CogVideoX), a transformer
config of that family scaled to width 1024 and two or three blocks
(100-250 MiB of float32 parameters, so that parameters and activations
both matter and the process floor does not drown them), at a workload of
about a thousand tokens:

1. predicted: `ditc search CONFIG --num-gpus N --gpus-per-node N --hardware
   cpu-local --dtype f32 --format json --top all`, the `peak_memory_bytes`
   of each configuration: the busiest rank's parameters + the largest live
   set of activations of one call + twice the largest collective buffer
   (docs/search.md, "The terms"). N = 1, and N = 2 for every 2-rank axis
   the family's rules allow (tp, ulysses, ring, kv_gather, cfg, pp, dp).
2. measured: the configuration compiled with the flags search prints and
   run with `dit-run --nproc N --steps 2 --report`, the largest
   `peak_rss_mib` of its ranks (the RSS high-water mark, VmHWM) minus the
   process floor: the same measurement of tiny-wan compiled with the same
   degrees (libtorch, gloo's groups and the shared-memory collectives, the
   threads; its own parameters and activations are a few KiB).

Prints predicted and measured MiB side by side per configuration and the
error (predicted / measured - 1). Goal: every error within 15%.

Usage: bench/memory_vs_measured.py [--build build] [--only FAMILY]
                                   [--json FILE]
Exit 0 when the goal holds, 1 when it misses.
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roofline import ROOT, run  # noqa: E402

GOAL = 0.15

# Each family's published config, scaled: width 1024 (8 heads of 128, or 16
# of 64), a few blocks; the structure flags stay as published.
FAMILIES = {
    "wan": ("wan2.1-t2v-1.3b", {"num_attention_heads": 8, "ffn_dim": 4096, "num_layers": 3},
            ["--height", "256", "--width", "256", "--num-frames", "9", "--text-tokens", "64"]),
    "flux": ("flux.1-dev", {"num_attention_heads": 8, "num_layers": 1, "num_single_layers": 2},
             ["--height", "512", "--width", "512", "--text-tokens", "64"]),
    "sd3": ("sd3-medium", {"num_attention_heads": 8, "attention_head_dim": 128,
                           "caption_projection_dim": 1024, "num_layers": 3},
            ["--height", "512", "--width", "512", "--text-tokens", "64"]),
    "qwen-image": ("qwen-image", {"num_attention_heads": 8, "num_layers": 3},
                   ["--height", "512", "--width", "512", "--text-tokens", "64"]),
    "cogvideox": ("cogvideox-2b", {"num_attention_heads": 16, "num_layers": 3},
                  ["--height", "256", "--width", "256", "--num-frames", "9"]),
}
AXES = ["tp", "ulysses", "ring", "kv_gather", "cfg", "pp", "dp"]
FLAG = {"tp": "--tp-size", "ulysses": "--ulysses-degree", "ring": "--ring-degree",
        "kv_gather": "--kv-gather-degree", "cfg": "--cfg-parallel-size",
        "pp": "--pp-size", "dp": "--dp-size"}


def scaled_config(work, family):
    model, edits, _ = FAMILIES[family]
    with open(os.path.join(ROOT, "models", model, "transformer", "config.json")) as f:
        config = json.load(f)
    config.update(edits)
    path = os.path.join(work, f"{family}.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    return path


def predictions(ditc, config, workload, ranks):
    """{axis name: (peak bytes, flags)} for the configurations with at most
    one axis above 1 on `ranks` ranks."""
    out = json.loads(run([ditc, "search", config, *workload, "--dtype", "f32",
                          "--num-gpus", str(ranks), "--gpus-per-node", str(ranks),
                          "--hardware", "cpu-local", "--format", "json", "--top", "all"]))
    found = {}
    for c in out["configurations"]:
        split = [a for a in AXES if c["degrees"][a] > 1]
        if len(split) > 1:
            continue
        name = split[0] + str(ranks) if split else "one-rank"
        found[name] = (c["peak_memory_bytes"], c["flags"].split())
    return found


def measured_peak(ditc, dit_run, model, workload, flags, ranks, work, name):
    plan = os.path.join(work, name)
    run([ditc, "compile", model, *workload, "--dtype", "f32", *flags, "-o", plan])
    report = plan + ".report.json"
    run([dit_run, plan, "--nproc", str(ranks), "--steps", "2",
         "--output", plan + ".npy", "--report", report])
    with open(report) as f:
        return max(json.load(f)["peak_rss_mib"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--only", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--json", help="also write every figure to this file")
    args = parser.parse_args()
    ditc = os.path.join(args.build, "bin", "ditc")
    dit_run = os.path.join(args.build, "bin", "dit-run")
    work = tempfile.mkdtemp(prefix="ditc-memory-")
    floors = {}  # (ranks, flags) -> MiB

    def floor(flags, ranks):
        key = (ranks, tuple(flags))
        if key not in floors:
            floors[key] = measured_peak(
                ditc, dit_run, "tiny-wan",
                ["--height", "64", "--width", "64", "--num-frames", "5"], flags, ranks,
                work, "floor-" + str(len(floors)))
        return floors[key]

    rows, worst = [], 0.0
    print(f"{'family':11} {'config':10} {'predicted MiB':>13} {'measured MiB':>12} "
          f"{'(peak - floor)':>14} {'error':>7}")
    for family in args.only or list(FAMILIES):
        config = scaled_config(work, family)
        workload = FAMILIES[family][2]
        for ranks in (1, 2):
            for name, (peak, flags) in sorted(predictions(ditc, config, workload, ranks).items()):
                if ranks == 2 and name == "one-rank":
                    continue
                flags = [f for f in flags if not f.startswith("--vae") and
                         not f.startswith("--text-encoder")]
                rss = measured_peak(ditc, dit_run, config, workload, flags, ranks, work,
                                    f"{family}-{name}")
                base = floor(flags, ranks)
                measured = rss - base
                predicted = peak / 1048576.0
                error = predicted / measured - 1
                worst = max(worst, abs(error))
                rows.append({"family": family, "config": name, "predicted_mib": predicted,
                             "peak_rss_mib": rss, "floor_mib": base,
                             "measured_mib": measured, "error": error})
                print(f"{family:11} {name:10} {predicted:13.1f} {measured:12.1f} "
                      f"{f'{rss:.0f} - {base:.0f}':>14} {100 * error:+6.1f}%", flush=True)
    held = worst <= GOAL
    print(f"\n{len(rows)} configurations, {len(set(r['family'] for r in rows))} families; "
          f"worst error {100 * worst:.1f}% (goal {100 * GOAL:.0f}%): "
          f"{'holds' if held else 'missed'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "worst": worst, "goal": GOAL}, f, indent=1)
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
