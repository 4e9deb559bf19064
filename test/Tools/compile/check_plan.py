#!/usr/bin/env python3
"""Prints a plan folder's layout and checks its hashes, for FileCheck."""
import hashlib
import json
import sys

root = sys.argv[1]
manifest = json.load(open(f"{root}/manifest.json"))
assert manifest["format_version"] == 2
axes = manifest["mesh"]["axes"]
print("axes " + " ".join(f"{a['name']}={a['size']}" for a in axes))
groups = manifest["groups"]
print("groups " + " ".join(f"{k}={groups[k]}" for k in ("cfg", "tp")))
topology = manifest["topology"]
print(f"topology nnodes={topology['nnodes']} "
      f"gpus_per_node={topology['gpus_per_node']}")
assert topology["nnodes"] * topology["gpus_per_node"] == manifest["mesh"]["num_gpus"]
for warning in manifest["warnings"]:
    assert set(warning) == {"rule", "message", "component"}, warning
    print(f"warning[{warning['rule']}] {warning['component']}: "
          f"{warning['message']}")
for rank in manifest["ranks"]:
    c = rank["coords"]
    print(f"rank {rank['rank']} cfg={c['cfg']} tp={c['tp']} -> {rank['program']}")
hashes = ""
for program in manifest["programs"]:
    content = open(f"{root}/{program['file']}", "rb").read()
    digest = hashlib.sha256(content).hexdigest()
    status = "ok" if digest == program["sha256"] else f"MISMATCH {digest}"
    body = json.loads(content)
    assert body["id"] == program["id"]
    print(f"program {program['id']} branches {program['branches']} "
          f"layers {program['layers']} sha256 {status}")
    hashes += program["sha256"]
# The plan hash covers the manifest (without plan_hash) and every program.
expected = manifest.pop("plan_hash")
rest = json.dumps(manifest, separators=(",", ":"), sort_keys=True)
actual = hashlib.sha256((rest + hashes).encode()).hexdigest()
print("plan_hash " + ("ok" if actual == expected else f"MISMATCH {actual}"))
