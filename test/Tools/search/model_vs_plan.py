#!/usr/bin/env python3
"""Checks that the cost model prices the traffic and parameters the plan has.

For each configuration, `ditc compile` writes a plan and `ditc search
--format json --top all` ranks every configuration; the search's row for the
same degrees must send, per axis and per step, the bytes the manifest counts
for its busiest program, and hold the same parameter bytes. A drift between
the model's reading of the partitioned IR and the plan's fails here.

usage: model_vs_plan.py DITC WORKDIR MODEL "WORKLOAD FLAGS" "DEGREE FLAGS"...
"""
import json
import subprocess
import sys

ditc, workdir, model, workload = sys.argv[1:5]
configs = sys.argv[5:]
failures = 0
searches = {}
for index, flags in enumerate(configs):
    plan = f"{workdir}/plan{index}"
    subprocess.run([ditc, "compile", model, *workload.split(), *flags.split(),
                    "--dtype", "f32", "-o", plan],
                   check=True, stdout=subprocess.DEVNULL)
    manifest = json.load(open(f"{plan}/manifest.json"))
    degrees = {axis["name"]: axis["size"] for axis in manifest["mesh"]["axes"]}
    world = 1
    for v in degrees.values():
        world *= v
    if world not in searches:
        out = subprocess.run(
            [ditc, "search", model, *workload.split(), "--dtype", "f32",
             "--num-gpus", str(world), "--gpus-per-node", str(world),
             "--hardware", "cpu-local", "--top", "all", "--format", "json"],
            check=True, capture_output=True, text=True).stdout
        searches[world] = json.loads(out)["configurations"]
    rows = [c for c in searches[world] if c["degrees"] == degrees]
    if len(rows) != 1:
        print(f"FAIL {flags}: {len(rows)} search rows with degrees {degrees}")
        failures += 1
        continue
    row = rows[0]
    programs = manifest["programs"]
    # The model prices the busiest stage; without pp every program is alike.
    plan_sent = {}
    for program in programs:
        for axis, sent in program["per_step"]["bytes_sent"].items():
            plan_sent[axis] = max(plan_sent.get(axis, 0), sent)
    model_sent = {a: b for a, b in row["bytes_sent_per_step"].items() if b}
    plan_params = max(p["per_step"]["param_bytes"] for p in programs)
    # FLOPs: the model prices the transformer calls; the plan's step also
    # runs the guidance combine and the scheduler update (one FLOP per
    # latent element each), which the model leaves out.
    plan_flops = max(p["per_step"]["flops"] for p in programs)
    extra = plan_flops - row["flops_per_rank"]
    checks = [("bytes_sent", model_sent, plan_sent),
              ("param_bytes", row["param_bytes"], plan_params),
              ("flops within the step's own ops", 0 <= extra <= 1e-3 * plan_flops, True)]
    if degrees["pp"] > 1:
        # Stages differ; the model reports the busiest one, the plan each.
        checks = [("bytes_sent[pp]", model_sent.get("pp", 0) > 0, True),
                  ("param_bytes <= max stage", row["param_bytes"] <= plan_params, True)]
    for name, got, want in checks:
        status = "ok  " if got == want else "FAIL"
        failures += got != want
        print(f"{status} {flags:40} {name}: model {got}, plan {want}")
sys.exit(1 if failures else 0)
