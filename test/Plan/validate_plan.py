#!/usr/bin/env python3
"""Checks plan folders against docs/plan-schema.json, with the standard
library only.

Usage: validate_plan.py SCHEMA PLAN_DIR...

manifest.json is checked against $defs/manifest and every file the manifest
lists under programs against $defs/program. Prints one line per plan ("ok"
or the first errors, each with the file, the JSON path, the value and what
the schema allows) and exits 1 when any plan fails.

It implements the part of JSON Schema (2020-12) the plan schema uses: type,
enum, const, properties, required, additionalProperties, propertyNames,
items, minItems, maxItems, minimum, maximum, pattern, allOf, not,
if/then/else and local $ref. A schema that uses any other keyword is
refused, so the schema cannot say more than this checker checks.
"""
import json
import os
import re
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description", "x-read-by", "$defs"}
KEYWORDS = {"type", "enum", "const", "properties", "required",
            "additionalProperties", "propertyNames", "items", "minItems",
            "maxItems", "minimum", "maximum", "pattern", "allOf", "not", "if",
            "then", "else", "$ref"}

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class SchemaError(Exception):
    pass


def shorten(value):
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def same(a, b):
    """JSON equality: true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


class Validator:
    def __init__(self, schema):
        self.root = schema
        self.check_keywords(schema, "#")

    def check_keywords(self, schema, where):
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise SchemaError(f"{where}: a schema must be an object or a boolean")
        unknown = set(schema) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise SchemaError(f"{where}: keyword(s) {sorted(unknown)} are not "
                              f"checked by validate_plan.py")
        for key in ("additionalProperties", "propertyNames", "items", "not",
                    "if", "then", "else"):
            if key in schema:
                self.check_keywords(schema[key], f"{where}/{key}")
        for key in ("properties", "$defs"):
            for name, sub in schema.get(key, {}).items():
                if key == "$defs" and name == "attrs":
                    for op, attrs in sub.items():
                        self.check_keywords(attrs, f"{where}/$defs/attrs/{op}")
                    continue
                self.check_keywords(sub, f"{where}/{key}/{name}")
        for i, sub in enumerate(schema.get("allOf", [])):
            self.check_keywords(sub, f"{where}/allOf/{i}")

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise SchemaError(f"$ref {ref}: only local references are supported")
        node = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise SchemaError(f"$ref {ref}: no such schema")
            node = node[part]
        return node

    def errors(self, value, schema, path):
        """Every way `value` (at JSON path `path`) breaks `schema`."""
        if schema is True:
            return []
        if schema is False:
            return [f"{path}: {shorten(value)} is not allowed here"]
        out = []
        if "$ref" in schema:
            out += self.errors(value, self.resolve(schema["$ref"]), path)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(TYPES[t](value) for t in types):
                return out + [f"{path}: {shorten(value)} is not of type {' or '.join(types)}"]
        if "const" in schema and not same(value, schema["const"]):
            out.append(f"{path}: {shorten(value)} is not {json.dumps(schema['const'])}")
        if "enum" in schema and not any(same(value, e) for e in schema["enum"]):
            out.append(f"{path}: {shorten(value)} is not one of "
                       f"{', '.join(json.dumps(e) for e in schema['enum'])}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                out.append(f"{path}: {value} is below the minimum {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                out.append(f"{path}: {value} is above the maximum {schema['maximum']}")
        if isinstance(value, str) and "pattern" in schema and \
                not re.search(schema["pattern"], value):
            out.append(f"{path}: {shorten(value)} does not match {schema['pattern']}")
        if isinstance(value, list):
            if "minItems" in schema and len(value) < schema["minItems"]:
                out.append(f"{path}: has {len(value)} items, fewer than {schema['minItems']}")
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                out.append(f"{path}: has {len(value)} items, more than {schema['maxItems']}")
            if "items" in schema:
                for i, item in enumerate(value):
                    out += self.errors(item, schema["items"], f"{path}[{i}]")
        if isinstance(value, dict):
            properties = schema.get("properties", {})
            for key in schema.get("required", []):
                if key not in value:
                    out.append(f"{path}: the required key {json.dumps(key)} is missing")
            for key, item in value.items():
                if "propertyNames" in schema:
                    out += self.errors(key, schema["propertyNames"],
                                       f"{path} (key {json.dumps(key)})")
                if key in properties:
                    out += self.errors(item, properties[key], f"{path}.{key}")
                elif "additionalProperties" in schema:
                    extra = schema["additionalProperties"]
                    if extra is False:
                        allowed = ", ".join(sorted(properties)) or "none"
                        out.append(f"{path}: unknown key {json.dumps(key)}; allowed: {allowed}")
                    else:
                        out += self.errors(item, extra, f"{path}.{key}")
        for sub in schema.get("allOf", []):
            out += self.errors(value, sub, path)
        if "not" in schema and not self.errors(value, schema["not"], path):
            out.append(f"{path}: {shorten(value)} matches a schema it must not "
                       f"({json.dumps(schema['not'])})")
        if "if" in schema:
            branch = "then" if not self.errors(value, schema["if"], path) else "else"
            if branch in schema:
                out += self.errors(value, schema[branch], path)
        return out


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def validate_plan(validator, root):
    """The errors of one plan folder, each prefixed with its file."""
    out = []
    manifest_path = os.path.join(root, "manifest.json")
    manifest = load(manifest_path)
    out += [f"{manifest_path}: {e}" for e in
            validator.errors(manifest, {"$ref": "#/$defs/manifest"}, "$")]
    for entry in manifest.get("programs", []) if isinstance(manifest, dict) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            continue
        path = os.path.join(root, entry["file"])
        out += [f"{path}: {e}" for e in
                validator.errors(load(path), {"$ref": "#/$defs/program"}, "$")]
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: validate_plan.py SCHEMA PLAN_DIR...")
    try:
        validator = Validator(load(sys.argv[1]))
    except SchemaError as error:
        sys.exit(f"validate_plan.py: {sys.argv[1]}: {error}")
    failed = False
    for root in sys.argv[2:]:
        errors = validate_plan(validator, root)
        if errors:
            failed = True
            print(f"{root}: {len(errors)} error(s)")
            for error in errors[:20]:
                print(f"  {error}")
        else:
            print(f"{root}: ok")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
