#!/usr/bin/env python3
"""Mutation fuzzing of dit-opt: the verifier and every pass on hostile IR.

Seeds are valid modules: the tiny bundled models imported by ditc and taken
through each partition stage, and the positive lit inputs under
test/Dialect/dit and test/Transforms. Each mutant deletes or duplicates an
op, drops an attribute, swaps an attribute value for another one seen in the
seeds, sets a number to NaN, inf, 0 or -1, or reorders a list. dit-opt then
verifies it; a mutant that verifies also goes through each pass and the
partition pipeline (with the pass manager's own verifier off, so a pass's
output is judged by a fresh parse + verify). A finding is:

  - a crash: a signal, an abort, a sanitizer report, or a timeout;
  - exit 1 without an `error:` diagnostic;
  - a pass that succeeds but prints IR that fails to parse or verify.

Each finding is written to OUT/finding-N.mlir with a .txt that holds the
command and its stderr; copy a finding into test/fuzz/corpus/ir/ and --smoke
replays it in every ctest run.

  ir_fuzz.py --smoke                 # ctest: corpus + fixed-seed mutants
  ir_fuzz.py --seconds 600 --seed 7  # the long run (scripts/fuzz.sh ir)
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "test", "fuzz", "corpus", "ir")

# The passes alone, and the pipeline with its options. A seed holds what a
# pass needs or not; a pass refusing a module it cannot take is fine, as long
# as it says so with an error.
PIPELINES = [
    ["--dit-check-legality"],
    ["--dit-mesh-layout"],
    ["--dit-mesh-layout=degrees=tp=2"],
    ["--dit-mesh-layout=degrees=ulysses=2,ring=2"],
    ["--dit-propagate-sharding"],
    ["--dit-insert-collectives"],
    ["--dit-split-stages"],
    ["--dit-lower-roles"],
    ["--dit-batch-branches"],
    ["--dit-verify-collectives"],
    ["--dit-propagate-sharding", "--dit-insert-collectives"],
    ["--dit-partition"],
    ["--dit-partition=degrees=tp=2"],
    ["--dit-partition=degrees=cfg=2,ulysses=2"],
    ["--dit-partition=degrees=pp=2"],
]
# Option values, valid and not, for the passes that take them.
OPTION_VALUES = [
    "--dit-partition=mesh-order=",
    "--dit-partition=mesh-order=tp,",
    "--dit-partition=mesh-order=dp,cfg,pp,ring,kv_gather,ulysses,tp",
    "--dit-partition=mesh-order=tp,tp",
    "--dit-partition=degrees=",
    "--dit-partition=degrees=tp=0",
    "--dit-partition=degrees=tp=2,tp=2",
    "--dit-partition=nosuch=1",
    "--dit-mesh-layout=mesh-order=",
    "--dit-mesh-layout=mesh-order=bogus",
    "--dit-mesh-layout=degrees=tp=-1",
    "--dit-mesh-layout=degrees=tp",
]

# What the partition stages make of the tiny models: each stage's output is a
# seed for the passes after it.
STAGES = [
    ("wan", ["--dit-mesh-layout=degrees=tp=2"]),
    ("wan", ["--dit-mesh-layout=degrees=tp=2", "--dit-propagate-sharding"]),
    ("wan", ["--dit-mesh-layout=degrees=ulysses=2,cfg=2", "--dit-propagate-sharding"]),
    ("wan", ["--dit-mesh-layout=degrees=ring=2", "--dit-propagate-sharding",
             "--dit-insert-collectives"]),
    ("wan", ["--dit-mesh-layout=degrees=pp=2,tp=2", "--dit-propagate-sharding",
             "--dit-insert-collectives"]),
    ("wan", ["--dit-mesh-layout=degrees=pp=2,cfg=2", "--dit-propagate-sharding",
             "--dit-insert-collectives", "--dit-split-stages"]),
    ("flux", ["--dit-mesh-layout=degrees=ulysses=2,tp=2", "--dit-propagate-sharding"]),
    ("flux", ["--dit-mesh-layout=degrees=kv_gather=2", "--dit-propagate-sharding",
              "--dit-insert-collectives"]),
    ("flux", ["--dit-partition=degrees=ring=2,tp=2"]),
]
IMPORTS = {
    "wan": ["import", "tiny-wan", "--height", "128", "--width", "128",
            "--num-frames", "5", "--dtype", "f32"],
    "flux": ["import", "tiny-flux", "--height", "128", "--width", "128",
             "--dtype", "f32"],
}
# Lit inputs whose `// -----` chunks are valid modules.
LIT_SEEDS = [
    "test/Dialect/dit/ops.mlir",
    "test/Dialect/dit/discardable-attrs.mlir",
    "test/Transforms/insert-collectives.mlir",
    "test/Transforms/propagate-sharding.mlir",
    "test/Transforms/split-stages.mlir",
    "test/Transforms/lower-roles.mlir",
    "test/Transforms/mesh-layout.mlir",
    "test/Transforms/batch-branches.mlir",
]

CRASH_MARKS = ("PLEASE submit a bug report", "Stack dump", "AddressSanitizer",
               "UndefinedBehaviorSanitizer", "runtime error:", "Assertion",
               "LLVM ERROR", "terminate called")


class Runner:
    def __init__(self, dit_opt, timeout):
        self.dit_opt = dit_opt
        self.timeout = timeout
        self.runs = 0

    def run(self, args, text):
        """(returncode, stdout, stderr); returncode None on a timeout."""
        self.runs += 1
        try:
            p = subprocess.run([self.dit_opt] + args, input=text,
                               capture_output=True, text=True,
                               timeout=self.timeout, errors="replace")
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return None, "", "timeout after %ss" % self.timeout

    def verifies(self, text):
        return self.run(["-"], text)[0] == 0


def problem(rc, err):
    """Why a dit-opt run is a finding, or None."""
    if rc is None:
        return "timeout"
    if rc < 0 or rc >= 128:
        return "crash (exit %d)" % rc
    if any(mark in err for mark in CRASH_MARKS):
        return "crash report on stderr"
    if rc != 0 and "error:" not in err:
        return "exit %d without an error: diagnostic" % rc
    return None


def split_chunks(text):
    return [c for c in re.split(r"^// -----\s*$", text, flags=re.M) if c.strip()]


def strip_comments(text):
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))


def seeds(runner, ditc, scratch):
    """Valid modules: imported stages and the lit inputs' chunks."""
    out = []
    imported = {}
    for name, args in IMPORTS.items():
        path = os.path.join(scratch, name + ".mlir")
        subprocess.run([ditc] + args + ["-o", path], check=True,
                       capture_output=True)
        with open(path) as f:
            imported[name] = f.read()
        out.append(("import-" + name, imported[name]))
    for name, passes in STAGES:
        rc, text, err = runner.run(passes + ["-"], imported[name])
        if rc == 0:
            out.append(("%s%s" % (name, "".join(passes)), text))
        else:
            sys.stderr.write("ir_fuzz: stage %s %s failed:\n%s\n" % (name, passes, err))
    for rel in LIT_SEEDS:
        with open(os.path.join(ROOT, rel)) as f:
            for i, chunk in enumerate(split_chunks(f.read())):
                chunk = strip_comments(chunk)
                if runner.verifies(chunk):
                    out.append(("%s#%d" % (rel, i), chunk))
    return out


# ---- mutations ------------------------------------------------------------

OP_LINE = re.compile(r"^\s*(%[\w#:]+(, %[\w#:]+)* = )?\"?[a-z_]+\.[a-z_0-9.]+")
ATTR = re.compile(r"([a-z_][\w.]*) = ((#[\w.]+<[^<>]*(<[^<>]*>[^<>]*)*>)|"
                  r"(array<[^>]*>)|(\[[^\[\]]*(\[[^\[\]]*\][^\[\]]*)*\])|"
                  r"(\"[^\"]*\")|([-\w.+]+( : [a-z0-9]+)?))")
FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d+(e[-+]?\d+)?")
INT = re.compile(r"(?<![\w.%#x])\d+(?=\s*(: i64|,|\]|>|\)))")
LIST = re.compile(r"\[([^\[\]]+)\]")
BAD_FLOATS = ["0x7FF8000000000000", "0x7FF0000000000000", "0xFFF0000000000000",
              "0.0", "-1.0", "1.0e+300"]
BAD_INTS = ["0", "1", "2", "3", "7", "-1", "1048577", "9223372036854775807"]


def attr_pool(texts):
    """Every `name = value` seen in the seeds, by name."""
    pool = {}
    for text in texts:
        for m in ATTR.finditer(text):
            pool.setdefault(m.group(1), set()).add(m.group(2))
    return {k: sorted(v) for k, v in pool.items()}


def mutate(text, rng, pool):
    lines = text.split("\n")
    kind = rng.choice(["delete", "duplicate", "drop-attr", "swap-attr",
                       "float", "int", "reorder", "string"])
    if kind in ("delete", "duplicate"):
        ops = [i for i, l in enumerate(lines) if OP_LINE.match(l)]
        if not ops:
            return None
        i = rng.choice(ops)
        if kind == "delete":
            del lines[i]
        else:
            # New result names, so the copy parses and only its meaning is
            # doubled; half the time the later uses move to the copy.
            results = re.match(r"^(\s*)(%[^=]+) = ", lines[i])
            copy = lines[i]
            if results:
                renamed = re.sub(r"%(\w+)", r"%\1_fz", results.group(2))
                copy = results.group(1) + renamed + lines[i][results.end(2):]
            lines.insert(i + 1, copy)
            if results and rng.random() < 0.5:
                for name in re.findall(r"%(\w+)", results.group(2)):
                    for j in range(i + 2, len(lines)):
                        lines[j] = re.sub(r"%" + name + r"\b", "%" + name + "_fz", lines[j])
        return "\n".join(lines), kind
    matches = []
    for i, l in enumerate(lines):
        regex = {"drop-attr": ATTR, "swap-attr": ATTR, "float": FLOAT,
                 "int": INT, "reorder": LIST, "string": re.compile(r"\"[^\"]+\"")}[kind]
        for m in regex.finditer(l):
            matches.append((i, m))
    if not matches:
        return None
    i, m = rng.choice(matches)
    l = lines[i]
    if kind == "drop-attr":
        start, end = m.start(), m.end()
        # Take the separating comma with it.
        if l[end:end + 2] == ", ":
            end += 2
        elif l[start - 2:start] == ", ":
            start -= 2
        new = l[:start] + l[end:]
    elif kind == "swap-attr":
        choices = pool.get(m.group(1), [])
        if not choices:
            return None
        new = l[:m.start(2)] + rng.choice(choices) + l[m.end(2):]
    elif kind == "float":
        new = l[:m.start()] + rng.choice(BAD_FLOATS) + l[m.end():]
    elif kind == "int":
        new = l[:m.start()] + rng.choice(BAD_INTS) + l[m.end():]
    elif kind == "reorder":
        items = [s.strip() for s in m.group(1).split(",")]
        if len(items) < 2:
            return None
        if rng.random() < 0.5:
            items.reverse()
        else:
            rng.shuffle(items)
        new = l[:m.start(1)] + ", ".join(items) + l[m.end(1):]
    else:
        new = l[:m.start()] + rng.choice(['"bogus"', '""', '"flux"', '"wan"']) + l[m.end():]
    if new == l:
        return None
    lines[i] = new
    return "\n".join(lines), kind


# ---- checking -------------------------------------------------------------

class Fuzzer:
    def __init__(self, runner, out):
        self.runner = runner
        self.out = out
        self.findings = []
        self.mutants = 0
        self.verified = 0
        self.pass_runs = 0

    def record(self, text, args, why, err):
        n = len(self.findings)
        self.findings.append(why)
        if self.out:
            os.makedirs(self.out, exist_ok=True)
            base = os.path.join(self.out, "finding-%d" % n)
            with open(base + ".mlir", "w") as f:
                f.write(text)
            with open(base + ".txt", "w") as f:
                f.write("dit-opt %s\n%s\n\n%s" % (" ".join(args), why, err[-4000:]))
        print("ir_fuzz: FINDING %d: dit-opt %s: %s" % (n, " ".join(args), why),
              flush=True)
        for line in err.splitlines()[:3]:
            print("    " + line[:200], flush=True)

    def check(self, text, pipelines):
        """Verifies `text`, then runs `pipelines` on it if it verifies."""
        rc, _, err = self.runner.run(["-"], text)
        why = problem(rc, err)
        if why:
            self.record(text, ["-"], why, err)
            return
        if rc != 0:
            return
        self.verified += 1
        for args in pipelines:
            self.pass_runs += 1
            full = args + ["--verify-each=0", "-"]
            rc, out, err = self.runner.run(full, text)
            why = problem(rc, err)
            if not why and rc == 0:
                rc2, _, err2 = self.runner.run(["-"], out)
                if rc2 != 0:
                    why = "pass output fails to parse or verify"
                    err = err2
            if why:
                self.record(text, full, why, err)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dit-opt", default=shutil.which("dit-opt"))
    ap.add_argument("--ditc", default=shutil.which("ditc"))
    ap.add_argument("--smoke", action="store_true",
                    help="replay corpus/ir and a fixed set of mutants (seconds)")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--out", default=None, help="folder for findings")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--corpus", default=CORPUS,
                    help="findings to replay first (default test/fuzz/corpus/ir)")
    a = ap.parse_args()
    if not a.dit_opt or not a.ditc:
        ap.error("need --dit-opt and --ditc (or both on PATH)")
    runner = Runner(a.dit_opt, a.timeout)
    fuzzer = Fuzzer(runner, a.out)
    start = time.time()

    # The corpus: every finding kept, each through every pipeline.
    replayed = 0
    if os.path.isdir(a.corpus):
        for name in sorted(os.listdir(a.corpus)):
            if name.endswith(".mlir"):
                with open(os.path.join(a.corpus, name)) as f:
                    fuzzer.check(f.read(), PIPELINES)
                replayed += 1

    with tempfile.TemporaryDirectory() as scratch:
        pool_seeds = seeds(runner, a.ditc, scratch)
    pool = attr_pool(t for _, t in pool_seeds)
    # Options: on an imported module, which the partition pipeline takes.
    imported = pool_seeds[0][1]
    for option in OPTION_VALUES:
        rc, _, err = runner.run([option, "--verify-each=0", "-"], imported)
        why = problem(rc, err)
        if why:
            fuzzer.record(imported, [option], why, err)

    seed = a.seed if a.seed is not None else (1 if a.smoke else int(time.time()))
    rng = random.Random(seed)
    # Smoke: a fixed number of mutants, each through a few pipelines.
    budget = None if not a.smoke else 60
    print("ir_fuzz: seed %d, %d seeds, %d corpus files" %
          (seed, len(pool_seeds), replayed), flush=True)
    while True:
        if budget is not None and fuzzer.mutants >= budget:
            break
        if budget is None and time.time() - start >= a.seconds:
            break
        name, text = rng.choice(pool_seeds)
        mutant = None
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            m = mutate(mutant or text, rng, pool)
            if m:
                mutant = m[0]
        if not mutant:
            continue
        fuzzer.mutants += 1
        pipelines = rng.sample(PIPELINES, 3 if a.smoke else 6)
        fuzzer.check(mutant, pipelines)

    print("ir_fuzz: %.0fs, %d mutants, %d verified, %d pass runs, %d dit-opt "
          "runs, %d findings" % (time.time() - start, fuzzer.mutants,
                                 fuzzer.verified, fuzzer.pass_runs,
                                 runner.runs, len(fuzzer.findings)), flush=True)
    return 1 if fuzzer.findings else 0


if __name__ == "__main__":
    sys.exit(main())
