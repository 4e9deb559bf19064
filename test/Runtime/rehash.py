#!/usr/bin/env python3
"""Test helper: edits one program of a plan (a text replacement) and
re-signs the plan the way `ditc compile` does (program SHA-256 in the
manifest, then plan_hash), to build well-signed but malformed plans.
PROGRAM_ID `manifest` edits the manifest's compact JSON text instead.

Usage: rehash.py PLAN PROGRAM_ID OLD NEW
"""
import hashlib
import json
import sys

plan, program_id, old, new = sys.argv[1:5]
manifest_path = f"{plan}/manifest.json"
manifest = json.load(open(manifest_path))
if program_id == "manifest":
    text = json.dumps(manifest, separators=(",", ":"), sort_keys=True)
    if old not in text:
        sys.exit(f"rehash.py: '{old}' not in {manifest_path}")
    manifest = json.loads(text.replace(old, new))
    manifest.pop("plan_hash")
    hashes = "".join(p["sha256"] for p in manifest["programs"])
    compact = json.dumps(manifest, separators=(",", ":"), sort_keys=True)
    manifest["plan_hash"] = hashlib.sha256((compact + hashes).encode()).hexdigest()
    json.dump(manifest, open(manifest_path, "w"), indent=1)
    sys.exit(0)
entry = next(p for p in manifest["programs"] if p["id"] == program_id)
path = f"{plan}/{entry['file']}"
text = open(path).read()
if old not in text:
    sys.exit(f"rehash.py: '{old}' not in {path}")
text = text.replace(old, new)
open(path, "w").write(text)
entry["sha256"] = hashlib.sha256(text.encode()).hexdigest()
manifest.pop("plan_hash")
hashes = "".join(p["sha256"] for p in manifest["programs"])
compact = json.dumps(manifest, separators=(",", ":"), sort_keys=True)
manifest["plan_hash"] = hashlib.sha256((compact + hashes).encode()).hexdigest()
json.dump(manifest, open(manifest_path, "w"), indent=1)
