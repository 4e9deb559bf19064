#!/usr/bin/env python3
"""Prints the checkpoint fields of a plan folder, for checkpoint-fields.test."""
import json
import os
import sys

plan = sys.argv[1]
name = os.path.basename(plan)
manifest = json.load(open(os.path.join(plan, "manifest.json")))
for component, config in sorted(manifest["model"]["checkpoint_config"].items()):
    hidden = [k for k in config if k.startswith("_")]
    print(f"{name}: checkpoint_config {component}: {len(config)} keys, "
          f"num_layers {config.get('num_layers')}, "
          f"{'no _ keys' if not hidden else 'keys ' + ', '.join(hidden)}")
print(f"{name}: feature_order {manifest['latents']['feature_order']}")
program = json.load(open(os.path.join(plan, manifest["programs"][0]["file"])))
ops = [op for fn in program["functions"].values() for op in fn["ops"]]
for op in ops:
    if op["op"] == "dit.patch_embed":
        weight = op["params"][0]
        stored = weight.get("checkpoint", {}).get("shape")
        print(f"{name}: {weight['name']} {weight['shape']} "
              f"{'stored ' + str(stored) if stored else 'stored as used'}")
