#!/usr/bin/env python3
"""--emit round-trips through --from: for each engine and each configuration
that engine can run, `ditc check MODEL FLAGS --emit ENGINE` prints a launch
line (or config), and `ditc check MODEL --from ENGINE -- LINE` must read
back the same degrees, world size and workload. Prints one line per case
and exits 1 on the first difference.

Usage: roundtrip.py DITC
"""
import json
import subprocess
import sys

ditc = sys.argv[1]

# (engine, model, ditc flags): each is a configuration the engine can run.
CASES = [
    ("sglang", "wan2.1-t2v-14b", ["--ulysses-degree", "2", "--cfg-parallel-size", "2"]),
    ("sglang", "wan2.1-t2v-14b", ["--num-gpus", "8", "--tp-size", "2", "--ulysses-degree", "2", "--ring-degree", "2"]),
    ("sglang", "qwen-image", ["--kv-gather-degree", "2"]),
    ("sglang", "flux.1-dev", ["--ulysses-degree", "4", "--dp-size", "2"]),
    ("sglang", "wan2.1-t2v-1.3b", []),
    ("vllm-omni", "wan2.2-ti2v-5b", ["--pp-size", "2", "--cfg-parallel-size", "2"]),
    ("vllm-omni", "qwen-image", ["--ulysses-degree", "2", "--ring-degree", "2", "--dp-size", "2"]),
    ("vllm-omni", "qwen-image", ["--kv-gather-degree", "2", "--tp-size", "2"]),
    ("xdit", "flux.1-dev", ["--ulysses-degree", "4"]),
    ("xdit", "flux.1-dev", ["--ulysses-degree", "2", "--ring-degree", "2", "--pp-size", "2"]),
    ("xdit", "sd3.5-large", ["--cfg-parallel-size", "2", "--ulysses-degree", "2"]),
    ("xdit", "hunyuanvideo", ["--ulysses-degree", "4", "--dp-size", "2", "--height", "256", "--width", "256", "--num-frames", "9"]),
    ("diffusers", "flux.1-dev", ["--ulysses-degree", "2", "--kv-gather-degree", "2"]),
    ("diffusers", "flux.1-dev", ["--tp-size", "2"]),
    ("diffusers", "wan2.1-t2v-14b", ["--ulysses-degree", "4"]),
    ("diffusers", "qwen-image", []),
    # Two nodes (each line runs once per node), a batch, a text length.
    ("sglang", "wan2.1-t2v-14b", ["--num-gpus", "16", "--ulysses-degree", "8", "--cfg-parallel-size", "2", "--gpus-per-node", "8", "--batch-size", "2"]),
    ("xdit", "flux.1-dev", ["--num-gpus", "16", "--ulysses-degree", "8", "--dp-size", "2", "--gpus-per-node", "8", "--batch-size", "2", "--text-tokens", "256"]),
]


def check(args):
    # ditc's own flags go before the engine's line (after --).
    cut = args.index("--") if "--" in args else len(args)
    out = subprocess.run([ditc, "check", *args[:cut], "--format", "json", *args[cut:]],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"ditc check {' '.join(args)}: exit {out.returncode}: {out.stderr}")
    return out.returncode, json.loads(out.stdout)


def summary(report):
    c = report["config"]
    keys = ["num_gpus", "tp_size", "ulysses_degree", "ring_degree", "kv_gather_degree",
            "cfg_parallel_size", "pp_size", "dp_size", "gpus_per_node"]
    out = {k: c.get(k) for k in keys}
    # A launch line that names no nodes runs on one: all its ranks on it.
    if out["gpus_per_node"] is None:
        out["gpus_per_node"] = out["num_gpus"]
    out.update(report["workload"])
    return out


failed = False
for engine, model, flags in CASES:
    code, emitted = check([model, *flags, "--emit", engine])
    if code != 0 or "emit" not in emitted:
        print(f"{engine} {model} {' '.join(flags)}: not emitted: "
              f"{[d['message'] for d in emitted['diagnostics'] if d['severity'] == 'error']}")
        failed = True
        continue
    argv = emitted["emit"]["argv"]
    code, read = check([model, "--from", engine, "--", *argv])
    same = summary(read) == summary(emitted) and code == 0
    print(f"{engine} {model} {' '.join(flags) or '(one GPU)'}: "
          f"{'round trip ok' if same else 'DIFFERS'}: {emitted['emit']['line']}")
    if not same:
        print(f"  emitted {summary(emitted)}\n  read    {summary(read)} (exit {code})")
        failed = True
sys.exit(1 if failed else 0)
