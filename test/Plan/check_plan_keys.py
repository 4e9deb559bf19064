#!/usr/bin/env python3
"""Fails when the plan readers and docs/plan-schema.json drift apart.

Usage: check_plan_keys.py SCHEMA RUNTIME_CPP[,RUNTIME_CPP...] SIMULATE_PLAN_PY

The schema marks every key a reader reads by name with
"x-read-by": ["dit-run", "simulate_plan"]. This script finds the keys each
reader actually reads and compares, both ways:
  - dit-run (runtime/lib/Plan/Manifest.cpp, PlanFile.cpp, ProgramReader.cpp and the op
    table PlanOps.def, given as one comma-separated argument and read as one
    text): the string literals passed to the
    JsonObject readers (getInt, getString, has, ...), requireList, element,
    ids, axisList, triple and raw()["..."]; per op, the attributes
    decodeAttrs reads in each `case OpKind::...`, which must also be the
    keys PlanOps.def lists for the op; and the op names of PlanOps.def;
  - simulate_plan (test/Executable/simulate_plan.py, parsed with ast):
    d["key"], d.get("key") and "key" in d; and the op names it compares
    `name` or op["op"] with.
Axis names (coords["tp"], sizes by axis) index by axis, not by key, and are
left out on both sides. Every mismatch is printed; the exit status is 1 when
there is any.
"""
import ast
import json
import re
import sys

READERS = ("dit-run", "simulate_plan")
OP_NAME = re.compile(r"^(?:(?:dit|shard|tensor)\.[a-z_]+|call)$")

# JsonObject readers, and the local helpers that take the object and a key
# (requireList(top, "programs"), axisList(attrs, "axes"), ...). Arguments
# before the key may hold two levels of parentheses.
CPP_KEY_CALL = re.compile(
    r"\b(?:getInt|getIntList|getIntLists|getObjectList|getString|getObject|getBool|getDouble|"
    r"getOptional\w*|has|ids|requireList|element|read|\w+(?=\((?:attrs|object), \"))"
    r"\(((?:[^()\"]|\((?:[^()]|\([^()]*\))*\))*?)\"([^\"]+)\"")
CPP_RAW_KEY = re.compile(r"\braw(?:\(\))?\[\"([^\"]+)\"\]")
# PLAN_OP(Kind, "name", "attribute keys" ["more keys" ...]) in PlanOps.def.
DEF_PLAN_OP = re.compile(r"^PLAN_OP\((\w+),\s*\"([a-z_.]+)\",((?:\s*\"[^\"]*\")+)\)", re.M)
# Keys every op may carry, which the decoder reads before its switch.
COMMON_ATTRS = {"dit.block", "dit.between_steps"}


def schema_facts(schema):
    """Keys per reader, attribute keys per reader and op, op and axis names."""
    keys = {r: set() for r in READERS}
    attrs = {r: {} for r in READERS}
    problems = []

    def walk(node, op):
        if isinstance(node, list):
            for item in node:
                walk(item, op)
            return
        if not isinstance(node, dict):
            return
        for name, sub in node.get("properties", {}).items():
            readers = sub.get("x-read-by", []) if isinstance(sub, dict) else []
            for reader in readers:
                if reader not in READERS:
                    problems.append(f"schema: key '{name}' names reader '{reader}'; "
                                    f"the checked readers are {', '.join(READERS)}")
                    continue
                keys[reader].add(name)
                if op:
                    attrs[reader].setdefault(op, set()).add(name)
        for key, sub in node.items():
            if key == "attrs" and isinstance(sub, dict) and "properties" not in sub:
                for op_name, op_schema in sub.items():  # $defs/attrs/<op>
                    walk(op_schema, op_name)
            elif isinstance(sub, (dict, list)):
                walk(sub, op)

    walk(schema, None)
    defs = schema["$defs"]
    return keys, attrs, set(defs["opName"]["enum"]), set(defs["axisName"]["enum"]), problems


def cpp_keys(text):
    return {m.group(2) for m in CPP_KEY_CALL.finditer(text)} | \
           {m.group(1) for m in CPP_RAW_KEY.finditer(text)}


def runtime_facts(text):
    """Keys, attribute keys per op, and op names of dit-run's plan reader."""
    table = {kind: (name, set(" ".join(re.findall(r'"([^"]*)"', keys)).split()))
             for kind, name, keys in DEF_PLAN_OP.findall(text)}
    kinds = {kind: name for kind, (name, _) in table.items()}
    start = text.index("void decodeAttrs(")
    end = text.index("\n  }\n", text.index("switch (op.kind)", start))
    body = text[start:end]
    switch = body.index("switch (op.kind)")
    common = cpp_keys(body[:switch])
    # Helpers that read attributes themselves (textPrefix): their keys count
    # wherever they are called.
    helpers = {}
    for m in re.finditer(r"static \w+ (\w+)\(const JsonObject &attrs[^)]*\) \{", text):
        helper_end = text.index("\n  }\n", m.end())
        helpers[m.group(1)] = cpp_keys(text[m.end():helper_end])
    per_op = {}
    pending = []  # cases falling through to the next body
    parts = re.split(r"case OpKind::(\w+):", body[switch:])
    for kind, segment in zip(parts[1::2], parts[2::2]):
        pending.append(kind)
        if not segment.strip():
            continue
        found = cpp_keys(segment)
        for helper, helper_keys in helpers.items():
            if re.search(rf"\b{helper}\(attrs", segment):
                found |= helper_keys
        for k in pending:
            per_op[k] = found
        pending = []
    attrs = {}
    for kind, name in kinds.items():
        attrs[name] = common | per_op.get(kind, set())
    table_attrs = {name: keys | COMMON_ATTRS for name, keys in table.values()}
    return cpp_keys(text), attrs, set(kinds.values()), table_attrs


def simulate_facts(source):
    """Keys read and op names compared in simulate_plan.py."""
    keys, ops = set(), set()

    def is_op_subject(node):
        return (isinstance(node, ast.Name) and node.id == "name") or \
               (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and node.slice.value == "op")

    def constants(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [c for e in node.elts for c in constants(e)]
        return []

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            keys.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            keys.add(node.args[0].value)
        elif isinstance(node, ast.Compare):
            operands = [node.left] + node.comparators
            if any(is_op_subject(o) for o in operands):
                ops |= {c for o in operands for c in constants(o) if OP_NAME.match(c)}
            elif isinstance(node.ops[0], (ast.In, ast.NotIn)) and \
                    isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
                keys.add(node.left.value)
    return keys, ops


def compare_ops(found, declared, source):
    return [f"{source} handles op '{op}', which the schema's $defs/opName does "
            f"not list" for op in sorted(found - declared)] + \
           [f"the schema lists op '{op}', but {source} does not handle it"
            for op in sorted(declared - found)]


def compare(found, declared, reader, source, what):
    out = []
    for key in sorted(found - declared):
        out.append(f"{source} reads {what} '{key}', which the schema does not "
                   f"mark x-read-by {reader}")
    for key in sorted(declared - found):
        out.append(f"the schema marks {what} '{key}' x-read-by {reader}, but "
                   f"{source} does not read it")
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: check_plan_keys.py SCHEMA RUNTIME_CPP[,RUNTIME_CPP...] "
                 "SIMULATE_PLAN_PY")
    schema_path, cpp_path, py_path = sys.argv[1:]
    with open(schema_path, encoding="utf-8") as f:
        keys, attrs, op_names, axes, problems = schema_facts(json.load(f))
    texts = []
    for path in cpp_path.split(","):
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    run_keys, run_attrs, run_ops, table_attrs = runtime_facts("\n".join(texts))
    with open(py_path, encoding="utf-8") as f:
        sim_keys, sim_ops = simulate_facts(f.read())

    problems += compare(run_keys - axes, keys["dit-run"], "dit-run", cpp_path, "key")
    problems += compare_ops(run_ops, op_names, cpp_path)
    for op in sorted(op_names - {"call"}):
        problems += compare(run_attrs.get(op, set()), attrs["dit-run"].get(op, set()),
                            "dit-run", f"{cpp_path} (decodeAttrs, {op})", "attribute")
    # The op table says which attributes each op's decoder reads.
    for op in sorted(run_ops):
        for key in sorted(run_attrs.get(op, set()) - table_attrs.get(op, set())):
            problems.append(f"decodeAttrs reads attribute '{key}' of {op}, which "
                            f"PlanOps.def does not list")
        for key in sorted(table_attrs.get(op, set()) - run_attrs.get(op, set())):
            problems.append(f"PlanOps.def lists attribute '{key}' of {op}, which "
                            f"decodeAttrs does not read")
    problems += compare(sim_keys - axes, keys["simulate_plan"], "simulate_plan",
                        py_path, "key")
    problems += compare_ops(sim_ops, op_names, py_path)

    for problem in problems:
        print(problem)
    print(f"{len(run_keys - axes)} keys and {len(run_ops)} ops in dit-run's reader, "
          f"{len(sim_keys - axes)} keys and {len(sim_ops)} ops in simulate_plan: "
          f"{'drift' if problems else 'as the schema declares'}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
