#!/usr/bin/env python3
"""Parses a plan's layout.svg as XML and checks it against the manifest:
every drawn rank's box is labelled with its rank and coordinates. Prints the
labels, the links that cross nodes per axis, and the legend, for FileCheck."""
import json
import sys
import xml.etree.ElementTree as ET

root = sys.argv[1]
manifest = json.load(open(f"{root}/manifest.json"))
svg = ET.parse(f"{root}/layout.svg").getroot()  # raises unless valid XML
ns = "{http://www.w3.org/2000/svg}"
assert svg.tag == ns + "svg", svg.tag

axes = [a["name"] for a in manifest["mesh"]["axes"] if a["size"] > 1]
ranks = manifest["ranks"]
drawn = min(len(ranks), 1024)
boxes = {}
for group in svg.iter(ns + "g"):
    if group.get("class") != "gpu":
        continue
    texts = {t.get("class"): t.text or "" for t in group.iter(ns + "text")}
    boxes[texts["rank"]] = texts.get("coords", "")
for rank in ranks[:drawn]:
    label = f"r{rank['rank']}"
    assert label in boxes, f"no box labelled {label}"
    coords = " ".join(f"{a}{rank['coords'][a]}" for a in axes)
    assert boxes[label] == coords, (label, boxes[label], coords)
assert len(boxes) == drawn, (len(boxes), drawn)
print(f"svg ok: {drawn} of {len(ranks)} ranks labelled")
for rank in ranks[:min(drawn, 8)]:
    print(f"box r{rank['rank']}: {boxes['r' + str(rank['rank'])]}")
for group in svg.iter(ns + "g"):
    cls = (group.get("class") or "").split()
    if cls[:1] == ["links"]:
        crossing = sum(1 for p in group.iter(ns + "path")
                       if p.get("class") == "crossing")
        links = sum(1 for p in group.iter(ns + "path")
                    if p.get("class") == "link")
        print(f"links {cls[1]}: {links}, crossing nodes: {crossing}")
    if cls == ["legend"]:
        for text in group.iter(ns + "text"):
            print("legend: " + text.text)
