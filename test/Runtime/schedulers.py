#!/usr/bin/env python3
"""dit-run's schedulers against the float64 NumPy references of
test/Executable/schedulers_ref.py (written from diffusers' scheduler
classes and pipelines), on shrunken copies of the bundled models
(families.py's edits), each with its family's published scheduler config:

  1. the schedule dit-run reports (--report: the sigma table, the
     scheduler's timesteps and the timestep each transformer is given)
     equals the reference's;
  2. the final latents of a one-rank run equal the float64 NumPy execution
     of the plan with the reference's schedule and step (simulate_plan.py
     --scheduler-config), within 1e-5;
  3. where a 2-rank configuration is listed, it matches the one-rank run
     (a multistep scheduler keeps each rank's history of its own shard).

Each check prints one line ending in "ok" or "MISMATCH". A negative control
runs the reference with another config and must MISMATCH.

Usage: schedulers.py --ditc D --dit-run R --models DIR --workdir W [--only NAME ...]
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Executable"))

import schedulers_ref  # noqa: E402
from compare import relative_error  # noqa: E402
from parity import run  # noqa: E402
from families import (COGVIDEOX, FLUX, HUNYUAN, IMAGE, LTX, MOCHI, QWEN, SD3,  # noqa: E402
                      VIDEO, WAN, shrink)

# The scheduler configs of the published snapshots (the keys that matter).
WAN_UNIPC = {"_class_name": "UniPCMultistepScheduler", "beta_end": 0.02,
             "beta_schedule": "linear", "beta_start": 0.0001, "disable_corrector": [],
             "final_sigmas_type": "zero", "flow_shift": 3.0, "lower_order_final": True,
             "num_train_timesteps": 1000, "predict_x0": True,
             "prediction_type": "flow_prediction", "solver_order": 2, "solver_p": None,
             "solver_type": "bh2", "thresholding": False, "timestep_spacing": "linspace",
             "use_flow_sigmas": True}
FLUX_EULER = {"_class_name": "FlowMatchEulerDiscreteScheduler", "base_image_seq_len": 256,
              "base_shift": 0.5, "max_image_seq_len": 4096, "max_shift": 1.15,
              "num_train_timesteps": 1000, "shift": 3.0, "use_dynamic_shifting": True}
SD3_EULER = {"_class_name": "FlowMatchEulerDiscreteScheduler", "num_train_timesteps": 1000,
             "shift": 3.0}
QWEN_EULER = {"_class_name": "FlowMatchEulerDiscreteScheduler", "base_image_seq_len": 256,
              "base_shift": math.log(3), "invert_sigmas": False, "max_image_seq_len": 8192,
              "max_shift": math.log(3), "num_train_timesteps": 1000, "shift": 1.0,
              "shift_terminal": 0.02, "stochastic_sampling": False,
              "time_shift_type": "exponential", "use_dynamic_shifting": True}
LTX_EULER = {"_class_name": "FlowMatchEulerDiscreteScheduler", "base_image_seq_len": 1024,
             "base_shift": 0.95, "max_image_seq_len": 4096, "max_shift": 2.05,
             "num_train_timesteps": 1000, "shift": 1.0, "shift_terminal": 0.1,
             "use_dynamic_shifting": True}
HUNYUAN_EULER = {"_class_name": "FlowMatchEulerDiscreteScheduler", "num_train_timesteps": 1000,
                 "shift": 7.0}
MOCHI_EULER = {"_class_name": "FlowMatchEulerDiscreteScheduler", "invert_sigmas": True,
               "num_train_timesteps": 1000, "shift": 1.0}
COG_DDIM = {"_class_name": "CogVideoXDDIMScheduler", "beta_end": 0.012,
            "beta_schedule": "scaled_linear", "beta_start": 0.00085, "clip_sample": False,
            "num_train_timesteps": 1000, "prediction_type": "v_prediction",
            "rescale_betas_zero_snr": True, "set_alpha_to_one": True, "snr_shift_scale": 3.0,
            "steps_offset": 0, "timestep_spacing": "trailing"}

# model, edits, workload, scheduler config, steps, 2-rank configurations.
# Wan2.2 A14B's UniPC timesteps (999, 937, 857, 750 with shift 3) cross its
# 875 boundary, so the expert switch follows the scheduler's integer t.
CASES = [
    ("wan2.1-t2v-1.3b", WAN, VIDEO, WAN_UNIPC, 6,
     ["ulysses2=--ulysses-degree 2", "cfg2=--cfg-parallel-size 2"]),
    ("wan2.2-t2v-a14b", WAN, VIDEO, dict(WAN_UNIPC, flow_shift=5.0), 4, ["tp2=--tp-size 2"]),
    ("flux.1-dev", FLUX, IMAGE, FLUX_EULER, 3, []),
    ("qwen-image", QWEN, IMAGE, QWEN_EULER, 3, []),
    ("sd3-medium", SD3, IMAGE, SD3_EULER, 3, []),
    ("ltx-video", LTX, "--height 64 --width 64 --num-frames 9", LTX_EULER, 3, []),
    ("hunyuanvideo", HUNYUAN, VIDEO, HUNYUAN_EULER, 3, []),
    ("mochi-1-preview", MOCHI, "--height 64 --width 64 --num-frames 7", MOCHI_EULER, 4,
     ["tp2=--tp-size 2"]),
    ("cogvideox-2b", COGVIDEOX, VIDEO, COG_DDIM, 4, ["tp2=--tp-size 2"]),
    ("cogvideox-5b", COGVIDEOX, VIDEO, dict(COG_DDIM, snr_shift_scale=1.0), 3, []),
]


def verdict(error, tolerance):
    return "ok" if error <= tolerance else "MISMATCH"


def check_schedule(name, report, ref):
    """The reported tables against the reference's, exactly (float32
    values): the largest relative difference of each."""
    s = report["schedule"]
    lines = []
    for key, ours, theirs in (("sigmas", s["sigmas"], ref.sigmas),
                              ("timesteps", s["timesteps"], ref.timesteps)):
        if theirs is None:
            continue
        ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
        if ours.shape != theirs.shape:
            lines.append(f"{name} {key}: {ours.shape} vs reference {theirs.shape}: MISMATCH")
            continue
        error = relative_error(ours, theirs)
        lines.append(f"{name} {key} vs reference: max relative error {error:.3e}: "
                     f"{verdict(error, 1e-7)}")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ditc", required=True)
    parser.add_argument("--dit-run", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    simulate = os.path.join(os.path.dirname(HERE), "Executable", "simulate_plan.py")
    lines = []
    for name, edits, workload, config, steps, configs in CASES:
        if args.only and name not in args.only:
            continue
        work = os.path.join(args.workdir, name)
        os.makedirs(work, exist_ok=True)
        model = os.path.join(work, "model")
        shrink(os.path.join(args.models, name), model, edits)
        config_path = os.path.join(work, "scheduler_config.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        flags = shlex.split(workload) + ["--dtype", "f32"]
        run_flags = ["--timeout", "60", "--threads", "1", "--steps", str(steps),
                     "--scheduler-config", config_path]
        one = os.path.join(work, "one-rank")
        run([args.ditc, "compile", model, *flags, "-o", one])
        report_path = one + ".report.json"
        run([args.dit_run, one, "--nproc", "1", "--output", one + ".npy",
             "--report", report_path, *run_flags])
        with open(report_path) as f:
            report = json.load(f)
        with open(os.path.join(one, "manifest.json")) as f:
            manifest = json.load(f)
        work_m, patch = manifest["workload"], manifest["model"]["patch"]
        fr, h, w = work_m["latent_frames"], work_m["latent_height"], work_m["latent_width"]
        ref = schedulers_ref.reference_schedule(
            config, manifest["model"]["family"], steps,
            (fr // patch[0]) * (h // patch[1]) * (w // patch[2]), fr * h * w)
        lines += check_schedule(name, report, ref)
        result = subprocess.run(
            [sys.executable, simulate, one, "--runtime-output", one + ".npy",
             "--steps", str(steps), "--scheduler-config", config_path,
             "--tolerance", "1e-5"], capture_output=True, text=True)
        lines.append(f"{name} {config['_class_name']} one-rank vs float64 reference: "
                     f"{result.stdout.strip()}")
        for entry in configs:
            label, extra = entry.split("=", 1)
            plan = os.path.join(work, label)
            run([args.ditc, "compile", model, *flags, *shlex.split(extra), "-o", plan])
            with open(os.path.join(plan, "manifest.json")) as f:
                ranks = json.load(f)["mesh"]["num_gpus"]
            run([args.dit_run, plan, "--nproc", str(ranks), "--output", plan + ".npy",
                 *run_flags])
            error = relative_error(np.load(plan + ".npy"), np.load(one + ".npy"))
            lines.append(f"{name} {label} vs one-rank: max relative error {error:.3e}: "
                         f"{verdict(error, 1e-5)}")
        if name == "wan2.1-t2v-1.3b":
            # Negative control: the reference with flow_shift 5 must differ.
            other = os.path.join(work, "other_config.json")
            with open(other, "w") as f:
                json.dump(dict(config, flow_shift=5.0), f)
            result = subprocess.run(
                [sys.executable, simulate, one, "--runtime-output", one + ".npy",
                 "--steps", str(steps), "--scheduler-config", other,
                 "--tolerance", "1e-5"], capture_output=True, text=True)
            lines.append(f"{name} control (flow_shift 5 reference): {result.stdout.strip()}")
    failed = [l for l in lines if l.endswith("MISMATCH") and " control " not in l]
    lines.append(f"{len(lines)} checks, {len(failed)} failed")
    print("\n".join(lines))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
