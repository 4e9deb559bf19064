# lit configuration for ditc's regression tests.
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "ditc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
# test/fuzz/corpus holds fuzzers' inputs (ir/*.mlir among them), not tests.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "corpus"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ditc_obj_root, "test")

# Bundled models resolve from the source tree, never from the environment.
config.environment["DITC_MODELS_DIR"] = os.path.join(config.ditc_src_root, "models")
# The Python plan package the NumPy reference and the eager peer share
# (bench/ditc_plan), imported normally by the test scripts.
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in (os.path.join(config.ditc_src_root, "bench"),
                os.path.join(config.test_source_root, "lib"),
                os.environ.get("PYTHONPATH")) if p)

# dit-run restarts itself once to set OMP_WAIT_POLICY=PASSIVE when it is
# unset (Threads.h); setting it here spares every test's launcher that
# restart. threads.test runs the restart itself, with the variable unset.
config.environment["OMP_WAIT_POLICY"] = "PASSIVE"

llvm_config.with_system_environment(
    ["HOME", "TMPDIR", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    ["ditc", "dit-opt"], [config.ditc_tools_dir])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# %expect-exit CODE CMD...: runs CMD and fails unless it exits with CODE,
# so bad-input tests pin exit code 2 rather than just "non-zero".
config.substitutions.append(
    ("%expect-exit", os.path.join(config.test_source_root, "expect-exit.sh")))
# Every test script runs on the project's Python environment (scripts/setup.sh
# makes .venv/ from scripts/requirements.txt: numpy, torch, diffusers,
# transformers), never on whatever python3 is first on PATH.
config.substitutions.append(("%ditc-python", config.ditc_python))
config.substitutions.append(("%models", os.path.join(config.ditc_src_root, "models")))
# The install test (test/install) builds a consumer against an installed ditc.
config.substitutions.append(("%ditc_obj_root", config.ditc_obj_root))
config.substitutions.append(("%cxx", config.ditc_cxx_compiler))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# A host with an NVIDIA driver (nvidia-smi) runs the GPU path instead of
# refusing it (Runtime/no-gpu.test).
if shutil.which("nvidia-smi"):
    config.available_features.add("cuda-device")
# rsvg-convert (librsvg2-bin) renders a plan's layout.svg to PNG.
if shutil.which("rsvg-convert"):
    config.available_features.add("rsvg-convert")
# An ASan build reserves terabytes of shadow address space, so a test that
# limits the address space (ulimit -v) cannot run in it.
if getattr(config, "ditc_sanitize", "") in ("ON", "1", "TRUE", "True"):
    config.available_features.add("sanitizers")
    config.environment["DITC_TEST_TIME_SCALE"] = "4"
else:
    config.environment["DITC_TEST_TIME_SCALE"] = "1"
    # scripts/test.sh runs the release pass with DITC_SANITIZER_PASS_FOLLOWS=1
    # when the sanitizer pass will run the same tests. The runtime's
    # hostile-input tests (`UNSUPPORTED: sanitizer-pass-follows`) then run
    # once, instrumented: what they check is that bad input is refused with
    # its message and leaves nothing behind, which is the same code in both
    # builds, and the sanitizers add the memory checks. faults.test, whose
    # ranks die mid-run, is one of them. Run without the
    # variable (plain ctest, or DITC_SKIP_SANITIZERS=1), they run here.
    if os.environ.get("DITC_SANITIZER_PASS_FOLLOWS") == "1":
        config.available_features.add("sanitizer-pass-follows")
# %time-limit SECONDS CMD...: `timeout` scaled for the sanitizer build.
config.substitutions.append(
    ("%time-limit", os.path.join(config.test_source_root, "time-limit.sh")))
if config.ditc_runtime in ("ON", "1", "TRUE", "True"):
    config.available_features.add("runtime")
    llvm_config.add_tool_substitutions(["dit-run", "dit-calibrate"],
                                       [config.ditc_tools_dir])
    config.substitutions.append(
        ("%dit_run_binary", os.path.join(config.ditc_tools_dir, "dit-run")))
