"""What ditc's two Python plan executors share: the NumPy reference
(test/Executable/simulate_plan.py) and the eager PyTorch peer
(bench/eager_peer.py).

- `ops`: the op names a plan may hold, read from the runtime's op table
  (runtime/include/ditc/Runtime/Plan/PlanOps.def), never listed here.
- `counter`: the counter-based generator every rank draws parameters,
  noise and text from (runtime/lib/IO/Initializer.cpp computes the same
  numbers).

Imported normally: bench/ is on the path of the scripts it holds, and lit
puts it on PYTHONPATH for the tests (PYTHONPATH=bench for other callers).
"""
from .counter import counter_normal, mix64, normals_at, stream_key  # noqa: F401
from .ops import OP_NAMES, check_op  # noqa: F401
