// dit-batch-branches: a role's guidance branches become one call of the
// transformer on their batch. The hand-written role below, then the
// imported tiny-wan on one rank (two branches), on cfg 2 (one branch per
// rank: nothing to batch), on tp 2 (the collectives run once on twice the
// rows) and on pp 2 (the branches stay the pipeline's micro-batches).
// RUN: dit-opt %s --dit-batch-branches="explain=true" -verify-diagnostics | FileCheck %s
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=tp=1" --dit-propagate-sharding --dit-insert-collectives --dit-lower-roles --dit-batch-branches | FileCheck %s --check-prefix=ONE
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=cfg=2" --dit-propagate-sharding --dit-insert-collectives --dit-lower-roles --dit-batch-branches | FileCheck %s --check-prefix=CFG
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=tp=2" --dit-propagate-sharding --dit-insert-collectives --dit-lower-roles --dit-batch-branches | FileCheck %s --check-prefix=TP
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=pp=2" --dit-propagate-sharding --dit-insert-collectives --dit-split-stages --dit-lower-roles --dit-batch-branches="explain=true" 2>&1 | FileCheck %s --check-prefix=PP
// The full pipeline batches by default, and batch-branches=false keeps the calls.
// RUN: dit-opt %t.wan.mlir --dit-partition="degrees=tp=1" | FileCheck %s --check-prefix=ONE
// RUN: dit-opt %t.wan.mlir --dit-partition="degrees=tp=1 batch-branches=false" | FileCheck %s --check-prefix=CALLS

// ONE-LABEL: func.func @transformer(%arg0: tensor<2x128x16xf32> {dit.input = "latents"}, %arg1: tensor<2xf32> {dit.input = "timestep"}, %arg2: tensor<2x512x16xf32> {dit.input = "text"}) -> tensor<2x128x16xf32>
// ONE-NOT: func.func @transformer_batch2
// ONE-LABEL: func.func @denoise_step_s0_c0(
// ONE: %[[L:.*]] = tensor.concat dim(0) %arg0, %arg0 : (tensor<1x128x16xf32>, tensor<1x128x16xf32>) -> tensor<2x128x16xf32>
// ONE: %[[T:.*]] = tensor.concat dim(0) %arg1, %arg1 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
// ONE: %[[X:.*]] = tensor.concat dim(0) %arg4, %arg5 : (tensor<1x512x16xf32>, tensor<1x512x16xf32>) -> tensor<2x512x16xf32>
// ONE: %[[P:.*]] = call @transformer(%[[L]], %[[T]], %[[X]])
// ONE: %[[S:.*]]:2 = dit.split %[[P]] {axis = 0 : i64, parts = 2 : i64} : tensor<2x128x16xf32> -> tensor<1x128x16xf32>, tensor<1x128x16xf32>
// ONE: dit.cfg_combine %[[S]]#0, %[[S]]#1
// ONE-NOT: call @

// CALLS-LABEL: func.func @denoise_step_s0_c0(
// CALLS-COUNT-2: call @transformer({{.*}}) : (tensor<1x128x16xf32>, tensor<1xf32>, tensor<1x512x16xf32>) -> tensor<1x128x16xf32>
// CALLS-NOT: dit.split

// CFG-LABEL: func.func @transformer(%arg0: tensor<1x128x16xf32>
// CFG-LABEL: func.func @denoise_step_s0_c0(
// CFG-NOT: tensor.concat
// CFG: call @transformer
// CFG-NOT: dit.split

// TP: func.func @transformer(%arg0: tensor<2x128x16xf32>
// TP: shard.all_reduce {{.*}} : tensor<2x512x32xf32> -> tensor<2x512x32xf32>
// TP-LABEL: func.func @denoise_step_s0_c0(
// TP-COUNT-1: call @transformer(

// PP: remark: branches stay separate calls: with pp 2 they are the pipeline's micro-batches
// PP-LABEL: func.func @denoise_step_s1_c0(
// PP-COUNT-2: call @transformer_stage1(
// PP-NOT: dit.split

module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x2)

  // Batch-parallel ops and a tp all_reduce: batched.
  // CHECK-LABEL: func.func @block(%arg0: tensor<4x8x16xf32>, %arg1: tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  // CHECK: dit.linear {{.*}} : tensor<4x8x16xf32> -> tensor<4x8x16xf32>
  // CHECK: shard.all_reduce {{.*}} : tensor<4x8x16xf32> -> tensor<4x8x16xf32>
  // CHECK-NOT: func.func @block_batch2
  func.func @block(%x: tensor<2x8x16xf32>, %t: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
    %h = dit.linear %x {bias = true, weight = "w"} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %s = shard.all_reduce %h on @mesh grid_axes = [6] : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %r = dit.residual_add %s, %t : tensor<2x8x16xf32>
    return %r : tensor<2x8x16xf32>
  }

  // An all_gather along the batch dimension: the calls stay.
  // CHECK-LABEL: func.func @gathers_batch(
  func.func @gathers_batch(%x: tensor<2x8x16xf32>) -> tensor<4x8x16xf32> {
    %g = shard.all_gather %x on @mesh grid_axes = [6] gather_axis = 0 : tensor<2x8x16xf32> -> tensor<4x8x16xf32>
    return %g : tensor<4x8x16xf32>
  }

  // CHECK-LABEL: func.func @role(
  // CHECK: %[[A:.*]] = tensor.concat dim(0) %arg0, %arg0 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
  // CHECK: %[[B:.*]] = tensor.concat dim(0) %arg1, %arg2 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
  // CHECK: %[[P:.*]] = call @block(%[[A]], %[[B]]) : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  // CHECK: %[[S:.*]]:2 = dit.split %[[P]] {axis = 0 : i64, parts = 2 : i64}
  // CHECK: %[[G0:.*]] = call @gathers_batch(%arg0)
  // CHECK: %[[G1:.*]] = call @gathers_batch(%arg0)
  // CHECK: dit.cfg_combine %[[S]]#0, %[[S]]#1
  // expected-remark @+1 {{runs its 2 calls of @block as one call of @block_batch2}}
  func.func @role(%x: tensor<2x8x16xf32>, %t0: tensor<2x8x16xf32>, %t1: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) attributes {dit.role = #dit.role<stage = 0, cfg = 0>} {
    %0 = func.call @block(%x, %t0) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
    %1 = func.call @block(%x, %t1) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
    // expected-remark @+1 {{the 2 calls of @gathers_batch stay separate: 'shard.all_gather' works along the batch dimension}}
    %2 = func.call @gathers_batch(%x) : (tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
    %3 = func.call @gathers_batch(%x) : (tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
    %c = dit.cfg_combine %0, %1 {guidance_scales = [5.0]} : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    return %c, %2, %3 : tensor<2x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>
  }
}
