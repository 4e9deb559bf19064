# Finds the libtorch of the project's Python environment: the torch wheel
# that scripts/setup.sh installs into .venv/ (torch 2.11.0, the CUDA 13
# build), located through torch.utils.cmake_prefix_path as PyTorch's C++
# documentation advises. A GPU host's own torch is found the same way by
# pointing DITC_PYTHON at its interpreter.
#
# The torch package folder is put before the system prefixes too: its
# TorchConfig.cmake looks for libtorch.so and libc10.so with PATHS, which
# CMake searches after /usr/lib, so another libtorch installed there
# (Debian's libtorch-dev) would otherwise be linked.
#
# Sets DITC_TORCH_VERSION, DITC_TORCH_CUDA (the CUDA version the wheel was
# built for, or empty) and DITC_TORCH_LIB_DIR.
include_guard(GLOBAL)

if(NOT DEFINED DITC_PYTHON)
  if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../.venv/bin/python3")
    get_filename_component(ditc_default_python
      "${CMAKE_CURRENT_LIST_DIR}/../.venv/bin/python3" ABSOLUTE)
  else()
    set(ditc_default_python "python3")
  endif()
  set(DITC_PYTHON "${ditc_default_python}" CACHE FILEPATH
      "The Python whose torch the runtime links (scripts/setup.sh makes .venv/)")
endif()

execute_process(
  COMMAND "${DITC_PYTHON}" -c
    "import os, torch; print(torch.utils.cmake_prefix_path); print(os.path.dirname(torch.__file__)); print(torch.__version__); print(torch.version.cuda or '')"
  OUTPUT_VARIABLE ditc_torch_facts
  ERROR_VARIABLE ditc_torch_error
  RESULT_VARIABLE ditc_torch_result
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT ditc_torch_result EQUAL 0)
  message(FATAL_ERROR "DITC_PYTHON=${DITC_PYTHON} cannot import torch "
                      "(run scripts/setup.sh, or point DITC_PYTHON at a Python with torch): "
                      "${ditc_torch_error}")
endif()
string(REPLACE "\n" ";" ditc_torch_facts "${ditc_torch_facts}")
list(LENGTH ditc_torch_facts ditc_torch_fact_count)
if(ditc_torch_fact_count LESS 3)
  message(FATAL_ERROR "DITC_PYTHON=${DITC_PYTHON}: unexpected answer from torch: ${ditc_torch_facts}")
endif()
list(GET ditc_torch_facts 0 ditc_torch_cmake_prefix)
list(GET ditc_torch_facts 1 ditc_torch_package)
list(GET ditc_torch_facts 2 DITC_TORCH_VERSION)
set(DITC_TORCH_CUDA "")
if(ditc_torch_fact_count GREATER 3)
  list(GET ditc_torch_facts 3 DITC_TORCH_CUDA)
endif()
set(DITC_TORCH_LIB_DIR "${ditc_torch_package}/lib")
list(PREPEND CMAKE_PREFIX_PATH "${ditc_torch_package}" "${ditc_torch_cmake_prefix}")
# A wheel's TorchConfig asks for CUDA architectures only to compile CUDA
# sources, which the runtime has none of; naming one keeps its GPU probe quiet.
if(NOT DEFINED TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "9.0")
endif()
find_package(Torch REQUIRED CONFIG)
message(STATUS "ditc runtime: torch ${DITC_TORCH_VERSION} (CUDA ${DITC_TORCH_CUDA}) from ${ditc_torch_package}")
