#!/usr/bin/env python3
"""Writes each module nested in a printed `module { module ... module ... }`
to PREFIX.N.mlir, de-indented, so that it can be diffed against the output of
the same passes run on that module alone.

Usage: split-modules.py NESTED.mlir PREFIX
"""
import sys


def main():
    nested, prefix = sys.argv[1], sys.argv[2]
    lines = open(nested).read().rstrip("\n").split("\n")
    if lines[0] != "module {" or lines[-1] != "}":
        sys.exit(f"{nested}: expected a wrapper `module {{ ... }}` around the "
                 f"nested modules, got first line {lines[0]!r}")
    modules, current = [], None
    for number, line in enumerate(lines[1:-1], start=2):
        if current is None:
            if not line.startswith("  module"):
                sys.exit(f"{nested}:{number}: expected a nested module, got "
                         f"{line!r}")
            current = []
        if line and not line.startswith("  "):
            sys.exit(f"{nested}:{number}: expected two spaces of indentation")
        current.append(line[2:])
        if line == "  }":
            modules.append(current)
            current = None
    if current is not None or not modules:
        sys.exit(f"{nested}: unterminated or missing nested module")
    for index, module in enumerate(modules):
        with open(f"{prefix}.{index}.mlir", "w") as out:
            out.write("\n".join(module) + "\n\n")


if __name__ == "__main__":
    main()
