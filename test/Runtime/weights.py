#!/usr/bin/env python3
"""dit-run --weights on tiny-wan: what a rank loads, and what it refuses.

  weights.py --ditc D --dit-run R --workdir W CHECK...

Checks (each prints lines ending in ok or MISMATCH/FAILED; exit 1 if any
fails):
  seeded    a snapshot holding exactly the parameters dit-run draws from the
            seed (f32) loads to the seeded run's bytes: one file, three
            shards, and the transformer folder alone. This proves that the
            loader maps every name, slice and layout as the plan means it.
  requests  --requests with --weights: each request's output is the
            single run of the same seed with the same weights.
  bytes     tp2 and pp2 with --report, bf16 (read and widened) and f32 (used
            in place in the mapped file): every rank reads exactly the bytes
            of its own slices (from the plan's params), about half the
            checkpoint's block weights, and its run matches the one-rank
            loaded run (pp bitwise, tp within 1e-5).
  bad       broken snapshots: each exits 2 before any work, names the file
            and the tensor or field, and leaves no output.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import snapshot  # noqa: E402

WORKLOAD = ["--height", "64", "--width", "64", "--num-frames", "5", "--dtype", "f32"]
RUN = ["--steps", "2", "--timeout", "60", "--threads", "1"]


def run(cmd, expect=0):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != expect:
        sys.exit(f"FAILED (exit {result.returncode}, expected {expect}): "
                 f"{' '.join(cmd)}\n{result.stderr}{result.stdout}")
    return result


class Checks:
    def __init__(self, args):
        self.args, self.failed = args, False
        self.plans = {}

    def say(self, line, ok):
        print(f"{line}: {'ok' if ok else 'MISMATCH'}")
        self.failed |= not ok

    def plan(self, name, flags=()):
        if name not in self.plans:
            path = os.path.join(self.args.workdir, name)
            shutil.rmtree(path, ignore_errors=True)
            run([self.args.ditc, "compile", "tiny-wan", *WORKLOAD, *flags, "-o", path])
            self.plans[name] = path
        return self.plans[name]

    def snapshot(self, name, **options):
        path = os.path.join(self.args.workdir, name)
        shutil.rmtree(path, ignore_errors=True)
        snapshot.write_snapshot(self.plan("one-rank"), path, **options)
        return path

    def dit_run(self, plan, out, *extra, nproc=1, expect=0):
        return run([self.args.dit_run, plan, "--nproc", str(nproc), "--output", out,
                    *RUN, *extra], expect)

    def seeded(self):
        plan = self.plan("one-rank")
        seeded = os.path.join(self.args.workdir, "seeded.npy")
        self.dit_run(plan, seeded)
        expected = open(seeded, "rb").read()
        for label, options in [
                ("one file", dict(shards=1)),
                ("three shards", dict(shards=3)),
                ("transformer folder alone", dict(layout="transformer"))]:
            snap = self.snapshot("seeded-snapshot", mode="seeded", seed=0, **options)
            out = os.path.join(self.args.workdir, "loaded.npy")
            self.dit_run(plan, out, "--weights", snap)
            self.say(f"seeded f32 snapshot, {label}: loaded run equals the seeded run",
                     open(out, "rb").read() == expected)
        # Another seed draws other noise but the same loaded parameters: the
        # loaded run of seed 1 is the seeded run of seed 1 only if the
        # parameters come from the snapshot, which holds seed 0's values.
        other = os.path.join(self.args.workdir, "seed1.npy")
        self.dit_run(plan, other, "--seed", "1")
        out = os.path.join(self.args.workdir, "loaded-seed1.npy")
        self.dit_run(plan, out, "--seed", "1", "--weights", snap)
        self.say("seed 1 with seed 0's snapshot differs from the seeded run of seed 1",
                 open(out, "rb").read() != open(other, "rb").read())
        # A bfloat16 run uses BF16 tensors in place, in the mapped file. The
        # snapshot rounds the seeded values to bf16 as the seeded run casts
        # them (to nearest even), so the two runs agree byte for byte.
        seeded_bf16 = os.path.join(self.args.workdir, "seeded-bf16.npy")
        self.dit_run(plan, seeded_bf16, "--dtype", "bfloat16")
        snap = self.snapshot("seeded-snapshot-bf16", mode="seeded", seed=0, dtype="bf16")
        out = os.path.join(self.args.workdir, "loaded-bf16.npy")
        self.dit_run(plan, out, "--dtype", "bfloat16", "--weights", snap)
        self.say("seeded bf16 snapshot in a bfloat16 run (in place): loaded run equals "
                 "the seeded run", open(out, "rb").read() == open(seeded_bf16, "rb").read())

    def requests(self):
        plan = self.plan("dp2", ["--dp-size", "2"])
        snap = self.snapshot("random-snapshot", dtype="bf16", shards=2, seed=3)
        lines, singles = [], []
        for k, seed in enumerate([5, 6, 7]):
            out = os.path.join(self.args.workdir, f"request{k}.npy")
            lines.append(json.dumps({"seed": seed, "output": out}))
            single = os.path.join(self.args.workdir, f"single{k}.npy")
            self.dit_run(self.plan("one-rank"), single, "--seed", str(seed),
                         "--weights", snap)
            singles.append((out, single))
        requests = os.path.join(self.args.workdir, "requests.jsonl")
        with open(requests, "w") as f:
            f.write("\n".join(lines) + "\n")
        run([self.args.dit_run, plan, "--nproc", "2", "--requests", requests, *RUN,
             "--weights", snap])
        for k, (out, single) in enumerate(singles):
            self.say(f"request {k} on dp2 with --weights equals its one-rank run",
                     open(out, "rb").read() == open(single, "rb").read())

    def expected_bytes(self, plan, rank, itemsize):
        """Bytes of the slices `rank` holds, from the plan's params; and the
        part of them in transformer blocks."""
        manifest = json.load(open(os.path.join(plan, "manifest.json")))
        entry = manifest["ranks"][rank]
        tp = next(a["size"] for a in manifest["mesh"]["axes"] if a["name"] == "tp")
        seen, total, blocks = set(), 0, 0
        for key in ("program", "program_2"):
            if not entry.get(key):
                continue
            file = next(p["file"] for p in manifest["programs"] if p["id"] == entry[key])
            program = json.load(open(os.path.join(plan, file)))
            bodies = [program["ops"]] + [f["ops"] for f in program["functions"].values()]
            for ops in bodies:
                for op in ops:
                    for spec in op.get("params", []):
                        name = (program["expert"], spec["name"])
                        if name in seen:
                            continue
                        seen.add(name)
                        if spec.get("only_on_axis_coordinate_0") and entry["coords"]["tp"]:
                            continue
                        count = 1
                        for d in spec["shape"]:
                            count *= d
                        if "split" in spec:
                            count //= tp
                        total += count * itemsize
                        if spec["name"].startswith("blocks."):
                            blocks += count * itemsize
        return total, blocks

    def bytes(self):
        # bf16 is read with pread and widened; f32 in a float32 run is used in
        # place, in the mapped file (a tp column slice is a strided view).
        # Both count exactly the bytes of the rank's slices, and the f32 runs
        # must still match the one-rank run (cfg/pp bitwise, tp within 1e-5).
        # A bfloat16 run of the bf16 snapshot uses it in place too; its tp
        # ranks round partial sums to bf16, so only the bytes read are held
        # to account there.
        for label, dtype, itemsize, run_flags in [
                ("bf16", "bf16", 2, []), ("f32", "f32", 4, []),
                ("bf16 in a bfloat16 run,", "bf16", 2, ["--dtype", "bfloat16"])]:
            snap = self.snapshot(f"bytes-{dtype}", dtype=dtype, shards=2, seed=3)
            _, table = snapshot.parameters(self.plan("one-rank"))
            block_total = sum(itemsize * int(np.prod(shape))
                              for name, (shape, _) in table["transformer"].items()
                              if name.startswith("blocks."))
            one = os.path.join(self.args.workdir, f"one-{dtype}.npy")
            self.dit_run(self.plan("one-rank"), one, "--weights", snap, *run_flags)
            for name, flags in [("tp2", ["--tp-size", "2"]), ("pp2", ["--pp-size", "2"])]:
                plan = self.plan(name, flags)
                report = os.path.join(self.args.workdir, name + ".json")
                out = os.path.join(self.args.workdir, name + ".npy")
                self.dit_run(plan, out, "--weights", snap, "--report", report, *run_flags,
                             nproc=2)
                weights = json.load(open(report))["weights"]
                for rank, read in enumerate(weights["bytes_read"]):
                    total, blocks = self.expected_bytes(plan, rank, itemsize)
                    self.say(f"{label} {name} rank {rank} read {read} of "
                             f"{weights['checkpoint_bytes']} checkpoint bytes "
                             f"({100 * read / weights['checkpoint_bytes']:.0f}%), "
                             f"{100 * blocks / block_total:.0f}% of the block weights; "
                             f"its slices hold {total}", read == total)
                    self.say(f"{label} {name} rank {rank} reads about half the block weights",
                             0.4 <= blocks / block_total <= 0.6)
                if run_flags:
                    continue
                a, b = np.load(out), np.load(one)
                error = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
                same = a.tobytes() == b.tobytes()
                self.say(f"{dtype} {name} loaded run vs one-rank loaded run: max relative "
                         f"error {error:.1e}", same if name == "pp2" else error <= 1e-5)

    def bad(self):
        plan = self.plan("one-rank")
        good = self.snapshot("good-snapshot", shards=1, seed=3)
        sharded = self.snapshot("good-sharded", shards=2, seed=3)
        folder = "transformer"
        single = os.path.join(folder, snapshot.WEIGHTS)
        index = os.path.join(folder, snapshot.INDEX)
        shard1 = os.path.join(folder, "diffusion_pytorch_model-00001-of-00002.safetensors")

        def header_of(path):
            raw = open(path, "rb").read()
            (length,) = struct.unpack("<Q", raw[:8])
            return json.loads(raw[8:8 + length]), raw[8 + length:]

        def write(path, header, data):
            text = json.dumps(header).encode()
            with open(path, "wb") as f:
                f.write(struct.pack("<Q", len(text)) + text + data)

        def edit_header(edit):
            def apply(path):
                header, data = header_of(path)
                edit(header)
                write(path, header, data)
            return apply

        def truncate(path):
            raw = open(path, "rb").read()
            open(path, "wb").write(raw[:-10])

        def long_header(path):
            raw = open(path, "rb").read()
            open(path, "wb").write(struct.pack("<Q", len(raw)) + raw[8:])

        def not_json(path):
            _, data = header_of(path)
            text = b"{not json" + b" " * 7
            open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)

        def overlap(header):
            header["blocks.0.attn1.to_k.weight"]["data_offsets"] = list(
                header["blocks.0.attn1.to_q.weight"]["data_offsets"])

        def out_of_range(header):
            begin, end = header["scale_shift_table"]["data_offsets"]
            header["scale_shift_table"]["data_offsets"] = [begin + 10**6, end + 10**6]

        def dtype(header):
            header["proj_out.bias"]["dtype"] = "F64"

        def missing(path):
            header, data = header_of(path)
            entry = header.pop("proj_out.bias")
            begin, end = entry["data_offsets"]
            for value in header.values():
                if isinstance(value, dict) and "data_offsets" in value and \
                        value["data_offsets"][0] >= end:
                    value["data_offsets"] = [o - (end - begin) for o in value["data_offsets"]]
            write(path, header, data[:begin] + data[end:])

        def misshaped(header):
            entry = header["proj_out.weight"]
            entry["shape"] = list(reversed(entry["shape"]))

        def lacks(path):
            index_json = json.load(open(path))
            first = sorted(index_json["weight_map"])[0]
            other = [f for f in set(index_json["weight_map"].values())
                     if f != index_json["weight_map"][first]][0]
            index_json["weight_map"][first] = other
            json.dump(index_json, open(path, "w"))

        def config(path):
            data = json.load(open(path))
            data["num_layers"] += 1
            data["ffn_dim"] = 128
            json.dump(data, open(path, "w"))

        cases = [
            ("truncated file", good, single, truncate,
             ["diffusion_pytorch_model.safetensors", "tensor '", "past the"]),
            ("header length past the end", good, single, long_header,
             ["diffusion_pytorch_model.safetensors", "runs past the end"]),
            ("header not JSON", good, single, not_json,
             ["diffusion_pytorch_model.safetensors", "header"]),
            ("overlapping offsets", good, single, edit_header(overlap),
             ["diffusion_pytorch_model.safetensors", "blocks.0.attn1", "overlap"]),
            ("offsets out of range", good, single, edit_header(out_of_range),
             ["diffusion_pytorch_model.safetensors", "scale_shift_table", "data_offsets"]),
            ("unknown dtype", good, single, edit_header(dtype),
             ["diffusion_pytorch_model.safetensors", "proj_out.bias", "F64"]),
            ("missing tensor", good, single, missing,
             ["diffusion_pytorch_model.safetensors", "no tensor 'proj_out.bias'"]),
            ("mis-shaped tensor", good, single, edit_header(misshaped),
             ["diffusion_pytorch_model.safetensors", "proj_out.weight", "has shape"]),
            ("index entry whose shard lacks the tensor", sharded, index, lacks,
             [snapshot.INDEX, "holds no tensor of that name"]),
            ("missing shard", sharded, shard1, os.unlink,
             ["diffusion_pytorch_model-00001-of-00002.safetensors", "no such file"]),
            ("config of another model", good, os.path.join(folder, "config.json"), config,
             ["config.json", "2 fields differ", "ffn_dim is 128 in the snapshot but 64 in "
              "the plan", "num_layers is 3 in the snapshot but 2 in the plan"]),
        ]
        for label, source, relative, corrupt, needles in cases:
            broken = os.path.join(self.args.workdir, "broken")
            shutil.rmtree(broken, ignore_errors=True)
            shutil.copytree(source, broken)
            corrupt(os.path.join(broken, relative))
            out = os.path.join(self.args.workdir, "broken.npy")
            if os.path.exists(out):
                os.unlink(out)
            result = self.dit_run(plan, out, "--weights", broken, expect=2)
            message = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
            missing_words = [n for n in needles if n not in message]
            ok = not missing_words and not os.path.exists(out)
            print(f"bad checkpoint, {label}: exit 2: {message}")
            self.say(f"bad checkpoint, {label}: names {', '.join(needles)}; no output", ok)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ditc", required=True)
    parser.add_argument("--dit-run", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("checks", nargs="+", choices=["seeded", "requests", "bytes", "bad"])
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    checks = Checks(args)
    for name in args.checks:
        getattr(checks, name)()
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
