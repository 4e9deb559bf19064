# Precompiled headers for the two header sets that dominate compile time.
# A source that includes only the upstream MLIR headers the passes use takes
# 8 s of the 9.5 s lib/Transforms/PartitionVae.cpp takes at -O3, and one that
# includes only <ATen/ATen.h> 6.7 s of runtime/lib/Vae/Bands.cpp's 9.2 s; a
# build compiles about 75 of the first kind and 30 of the second, twice in
# .ci/run (release and sanitizers). Each set is precompiled once per build,
# in the first target that asks for it, and every later target reuses it
# (they share the compile flags; GCC ignores a header it cannot use, with
# -Winvalid-pch, and parses the text instead). The headers are only ever
# added: a source still includes what it uses.
option(DITC_PRECOMPILE_HEADERS "Precompile the MLIR and libtorch headers" ON)

set(DITC_MLIR_PCH_HEADERS
  <llvm/Support/raw_ostream.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>
  <mlir/IR/BuiltinTypes.h>
  <mlir/IR/DialectImplementation.h>
  <mlir/IR/IRMapping.h>
  <mlir/IR/MLIRContext.h>
  <mlir/IR/OpImplementation.h>
  <mlir/IR/Verifier.h>
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/Shard/IR/ShardDialect.h>
  <mlir/Dialect/Shard/IR/ShardOps.h>
  <mlir/Dialect/Shard/Interfaces/ShardingInterface.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/Pass/Pass.h>
  <mlir/Pass/PassManager.h>)

set(DITC_TORCH_PCH_HEADERS <ATen/ATen.h> <ATen/Parallel.h>)

# ditc_precompile_headers(TARGET mlir|torch): TARGET's sources get the set
# precompiled (the first caller for the set builds it).
function(ditc_precompile_headers target set)
  if(NOT DITC_PRECOMPILE_HEADERS)
    return()
  endif()
  string(TOUPPER "${set}" upper)
  get_property(donor GLOBAL PROPERTY DITC_${upper}_PCH_TARGET)
  if(donor)
    target_precompile_headers(${target} REUSE_FROM ${donor})
  else()
    target_precompile_headers(${target} PRIVATE ${DITC_${upper}_PCH_HEADERS})
    set_property(GLOBAL PROPERTY DITC_${upper}_PCH_TARGET ${target})
  endif()
endfunction()
