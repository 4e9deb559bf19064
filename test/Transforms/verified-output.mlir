// Every dit pass either refuses its input with a diagnostic or leaves IR
// that verifies, also with the pass manager's verifier off (as ditc compile
// runs the pipeline).
//
// dit-insert-collectives after a cross attention's plan was replaced by
// another valid one (heads over ulysses on a tp-only mesh) stacked Q, K and
// V of different local widths; the unedited module partitions cleanly.
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=tp=2" --dit-propagate-sharding -o %t.tp.mlir
// RUN: sed '0,/heads = \[tp\], rows = local/s//heads = [ulysses], rows = none/' %t.tp.mlir > %t.plan.mlir
// RUN: dit-opt %t.plan.mlir -o /dev/null
// RUN: not dit-opt %t.plan.mlir --verify-each=0 --dit-insert-collectives -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: error: 'dit.stack' op requires all operands to have the same type
// PLAN: error: dit-insert-collectives built IR that fails the verifier (above) from input that verified
// RUN: dit-opt %t.tp.mlir --verify-each=0 --dit-insert-collectives -o /dev/null
//
// Found by test/fuzz/ir_fuzz.py: dit-mesh-layout run again on a module whose
// collectives were built for the old grid replaced the grid and printed an
// all_gather the new grid contradicts.
// RUN: split-file %s %t
// RUN: dit-opt %t/gather.mlir -verify-diagnostics --verify-each=0 --dit-mesh-layout
// The same module without the contradicted collective lays out cleanly.
// RUN: dit-opt %t/reduce.mlir --verify-each=0 --dit-mesh-layout 2>&1 | FileCheck %s

//--- gather.mlir
// expected-error @+1 {{dit-mesh-layout built IR that fails the verifier (above) from input that verified}}
module attributes {dit.mesh_axes = #dit.axes<[tp, ulysses, kv_gather, ring, pp, cfg, dp]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x2)

  func.func @gathers_batch(%x: tensor<2x8x16xf32>) -> tensor<4x8x16xf32> {
    // expected-error @+1 {{Dimension size mismatch for result axis 0. Expected 2, but got 4.}}
    %g = shard.all_gather %x on @mesh grid_axes = [6] gather_axis = 0 : tensor<2x8x16xf32> -> tensor<4x8x16xf32>
    return %g : tensor<4x8x16xf32>
  }
}

//--- reduce.mlir
// CHECK-NOT: error
// CHECK-LABEL: module attributes
// CHECK: shard.grid @mesh(shape = 1x1x1x1x1x1x1)
// CHECK: func.func @block
module attributes {dit.mesh_axes = #dit.axes<[tp, ulysses, kv_gather, ring, pp, cfg, dp]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x2)

  func.func @block(%x: tensor<2x8x16xf32>, %t: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
    %h = dit.linear %x {bias = true, weight = "w"} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %s = shard.all_reduce %h on @mesh grid_axes = [6] : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %r = dit.residual_add %s, %t : tensor<2x8x16xf32>
    return %r : tensor<2x8x16xf32>
  }
}
