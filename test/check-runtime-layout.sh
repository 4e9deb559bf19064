#!/usr/bin/env bash
# The runtime's layout rules (docs/architecture.md, "The runtime's layers"):
#   - runtime/lib has no top-level .cpp; each runtime/lib/<Concern>/X.cpp has
#     its header at runtime/include/ditc/Runtime/<Concern>/X.h and includes
#     it first;
#   - no runtime .cpp is over 750 lines;
#   - dependencies go one way: Plan, Sched and IO include nothing from Exec,
#     Vae, Comm or Driver; Vae and Comm nothing from Exec or Driver, nor from
#     each other; Text nothing from Exec, Vae, Comm or Driver; Exec nothing
#     from Driver.
# Prints every violation and exits 1 when there is any.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
lib=$root/runtime/lib
inc=$root/runtime/include/ditc/Runtime
status=0
fail() { echo "runtime layout: $*"; status=1; }

for source in "$lib"/*.cpp; do
  [[ -e "$source" ]] && fail "${source#"$root"/} sits at the top of runtime/lib; put it in its concern's folder"
done
count=0
while IFS= read -r -d '' source; do
  count=$((count + 1))
  relative=${source#"$lib"/}
  header=$inc/${relative%.cpp}.h
  [[ -f "$header" ]] || fail "runtime/lib/$relative has no header at ${header#"$root"/}"
  first=$(grep -m1 '^#include "' "$source" || true)
  [[ "$first" == "#include \"ditc/Runtime/${relative%.cpp}.h\"" ]] ||
    fail "runtime/lib/$relative includes $first first; its own header comes first"
  lines=$(wc -l < "$source")
  (( lines <= 750 )) || fail "runtime/lib/$relative is $lines lines; at most 750"
done < <(find "$lib" -mindepth 2 -name '*.cpp' -print0)

forbidden() { # concern, then the concerns it may not include
  local concern=$1; shift
  local pattern
  pattern=$(printf '|%s' "$@"); pattern="ditc/Runtime/(${pattern:1})/"
  local hits
  hits=$(grep -rnE "#include \"$pattern" "$lib/$concern" "$inc/$concern" 2>/dev/null || true)
  [[ -z "$hits" ]] || fail "$concern includes a higher layer:"$'\n'"${hits//$root\//}"
}
forbidden Plan Exec Vae Comm Driver
forbidden Sched Exec Vae Comm Driver
forbidden IO Exec Vae Comm Driver
forbidden Vae Exec Comm Driver
forbidden Comm Exec Vae Driver
forbidden Exec Driver
forbidden Text Exec Vae Comm Driver

# The device layer (docs/runtime.md, "Devices"): CUDA and NCCL are seen by
# Device/CudaDevice.cpp and Comm/Backends/NcclGroup.cpp only, and a tensor's
# device type is asked in Device/ and in the kernels only.
gpu=$(grep -rlE "DITC_HAVE_NCCL|c10/cuda|cuda_runtime" "$lib" "$inc" | sed "s|$root/||" | sort || true)
expected_gpu=$'runtime/lib/Comm/Backends/NcclGroup.cpp\nruntime/lib/Device/CudaDevice.cpp'
[[ "$gpu" == "$expected_gpu" ]] ||
  fail "CUDA or NCCL is seen outside Device/CudaDevice.cpp and Comm/Backends/NcclGroup.cpp:"$'\n'"$gpu"
placement=$(grep -rnE "is_cpu\(\)|is_cuda\(\)" "$lib" "$inc" |
            grep -vE "^$lib/Device/|^$inc/Device/|^$lib/Exec/Kernels[^/]*\.cpp:|^$inc/Exec/Kernels[^/]*\.h:" || true)
[[ -z "$placement" ]] ||
  fail "a tensor's device is asked outside Device/ and the kernels (ask the rank's Device):"$'\n'"${placement//$root\//}"
forbidden Device Plan Sched IO Exec Vae Comm Driver Text

# The TCPStore is opened in one place only.
stores=$(grep -rln "c10d::TCPStore\b\|TCPStoreOptions" "$lib" | sed "s|$root/||" || true)
[[ "$stores" == "runtime/lib/Comm/Rendezvous.cpp" ]] ||
  fail "a TCPStore is opened outside Comm/Rendezvous.cpp: $stores"

(( status == 0 )) && echo "runtime layout: $count sources in their concerns, headers mirrored, layers one way"
exit $status
