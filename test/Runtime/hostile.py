#!/usr/bin/env python3
"""Test helper: writes hostile inputs for dit-run's bad-input tests.

  hostile.py deep FILE N             N unclosed '[' (nesting past any limit)
  hostile.py callbomb PLAN ID W D    adds functions f1..fD to program ID, each
                                     calling the next W times, a call of f1 at
                                     the top, and re-signs the plan
  hostile.py npy-header FILE KEY N   a .npy whose header's KEY ('descr' or
                                     'shape') holds N characters
  hostile.py extra-send PLAN ID      program ID sends its first sent value
                                     twice (a valid program whose peer waits
                                     for one), and re-signs the plan
"""
import hashlib
import json
import struct
import sys


def resign(plan, manifest):
    manifest.pop("plan_hash", None)
    hashes = "".join(p["sha256"] for p in manifest["programs"])
    compact = json.dumps(manifest, separators=(",", ":"), sort_keys=True)
    manifest["plan_hash"] = hashlib.sha256((compact + hashes).encode()).hexdigest()
    json.dump(manifest, open(f"{plan}/manifest.json", "w"), indent=1)


def callbomb(plan, program_id, width, depth):
    manifest = json.load(open(f"{plan}/manifest.json"))
    entry = next(p for p in manifest["programs"] if p["id"] == program_id)
    path = f"{plan}/{entry['file']}"
    program = json.load(open(path))
    for level in range(1, depth + 1):
        ops = [] if level == depth else [{"op": "call", "callee": f"f{level + 1}"}] * width
        program["functions"][f"f{level}"] = {"values": [], "args": [], "results": [],
                                             "ops": ops}
    program["ops"].insert(0, {"op": "call", "callee": "f1"})
    text = json.dumps(program, separators=(",", ":"), sort_keys=True) + "\n"
    open(path, "w").write(text)
    entry["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    resign(plan, manifest)


def extra_send(plan, program_id):
    manifest = json.load(open(f"{plan}/manifest.json"))
    entry = next(p for p in manifest["programs"] if p["id"] == program_id)
    path = f"{plan}/{entry['file']}"
    program = json.load(open(path))
    for function in [program] + list(program["functions"].values()):
        for index, op in enumerate(function["ops"]):
            if op["op"] == "shard.send":
                clone = dict(op, out=[len(function["values"])])
                function["values"].append(function["values"][op["out"][0]])
                function["ops"].insert(index + 1, clone)
                break
        else:
            continue
        break
    text = json.dumps(program, separators=(",", ":"), sort_keys=True) + "\n"
    open(path, "w").write(text)
    entry["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    resign(plan, manifest)


def npy_header(path, key, length):
    fields = {"descr": "'<f4'", "fortran_order": "False", "shape": "(2,)"}
    fields[key] = "'" + "x" * length + "'" if key == "descr" else "(" + "1," * (length // 2) + ")"
    header = "{" + ", ".join(f"'{k}': {v}" for k, v in fields.items()) + ", }\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header.encode())
        f.write(b"\0" * 8)


def main():
    command = sys.argv[1]
    if command == "deep":
        open(sys.argv[2], "w").write("[" * int(sys.argv[3]))
    elif command == "callbomb":
        callbomb(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif command == "extra-send":
        extra_send(sys.argv[2], sys.argv[3])
    elif command == "npy-header":
        npy_header(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(f"hostile.py: unknown command {command}")


if __name__ == "__main__":
    main()
