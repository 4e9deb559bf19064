"""The op names a plan may hold, read from the runtime's op table."""
import os
import re

_TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "runtime", "include", "ditc", "Runtime", "Plan", "PlanOps.def")


def _read_table(path):
    with open(path, encoding="utf-8") as f:
        names = re.findall(r'^PLAN_OP\(\w+,\s*"([a-z_.]+)"', f.read(), re.M)
    if not names:
        raise SystemExit(f"ditc_plan: {path} lists no PLAN_OP")
    return frozenset(names)


OP_NAMES = _read_table(_TABLE)


def check_op(name, who):
    """Refuses an op that is not in the op table, naming the executor."""
    if name not in OP_NAMES:
        raise SystemExit(f"{who}: op {name!r} is not a plan op; PlanOps.def lists "
                         f"{', '.join(sorted(OP_NAMES))}")
