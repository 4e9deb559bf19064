// dit-insert-collectives on the tiny bundled models: each axis alone, and
// the combinations the partitioner must compose.
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: ditc import tiny-flux --height 128 --width 128 --dtype f32 -o %t.flux.mlir
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=tp=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=TP
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=ulysses=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=ULYSSES
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=ring=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=RING
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=kv_gather=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=KV
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=cfg=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=CFG
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=cfg=2,tp=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=CFGTP
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=cfg=2,ulysses=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=CFGU
// RUN: dit-opt %t.flux.mlir --dit-mesh-layout="degrees=ulysses=2,tp=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=FLUXTPU
// RUN: dit-opt %t.flux.mlir --dit-mesh-layout="degrees=ring=2,ulysses=2" --dit-propagate-sharding --dit-insert-collectives | FileCheck %s --check-prefix=FLUXUR
// The hand-written attention blocks at the end of this file.
// RUN: dit-opt %s -split-input-file --dit-mesh-layout --dit-propagate-sharding --dit-insert-collectives | FileCheck %s

// Tensor parallel: the latents arrive as patch tokens; every row-parallel linear is
// followed by an all-reduce over the tp grid axis (6).
// TP-LABEL: func.func @transformer(%arg0: tensor<1x128x16xf32>
// TP: dit.linear {{.*}}dit.tp = #dit.tp_role<column>{{.*}}weight = "blocks.0.attn1.to_q"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
// TP: dit.rms_norm {{.*}}dit.reduce_stats_over = #dit.axes<[tp]>{{.*}}weight = "blocks.0.attn1.norm_q"} : tensor<1x128x16xf32>
// TP: dit.attention self {{.*}}num_heads = 2 : i64} : tensor<1x128x16xf32>, tensor<1x128x16xf32>, tensor<1x128x16xf32> -> tensor<1x128x16xf32>
// TP-NEXT: dit.linear {{.*}}dit.tp = #dit.tp_role<row>{{.*}}weight = "blocks.0.attn1.to_out.0"} : tensor<1x128x16xf32> -> tensor<1x128x32xf32>
// TP-NEXT: shard.all_reduce {{.*}} on @mesh grid_axes = [6] : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
// TP: weight = "blocks.0.ffn.net.2"
// TP-NEXT: shard.all_reduce
// TP-NOT: dit.unpatchify
// TP: return {{.*}} : tensor<1x128x16xf32>

// Ulysses: Q, K, V stacked into one all-to-all in, one all-to-all out;
// cross attention against the replicated text exchanges nothing.
// ULYSSES-LABEL: func.func @transformer(%arg0: tensor<1x64x16xf32>
// ULYSSES: dit.stack {{.*}} {axis = 2 : i64} : tensor<1x64x32xf32>, tensor<1x64x32xf32>, tensor<1x64x32xf32> -> tensor<1x64x3x32xf32>
// ULYSSES-NEXT: shard.all_to_all {{.*}} on @mesh grid_axes = [5] split_axis = 3 concat_axis = 1 : tensor<1x64x3x32xf32> -> tensor<1x128x3x16xf32>
// ULYSSES-NEXT: dit.unstack
// ULYSSES-NEXT: dit.attention self {{.*}}num_heads = 2 : i64} : tensor<1x128x16xf32>
// ULYSSES-NEXT: shard.all_to_all {{.*}} split_axis = 1 concat_axis = 2 : tensor<1x128x16xf32> -> tensor<1x64x32xf32>
// ULYSSES: dit.attention cross {{.*}}num_heads = 4 : i64} : tensor<1x64x32xf32>, tensor<1x512x32xf32>, tensor<1x512x32xf32> -> tensor<1x64x32xf32>
// ULYSSES-NEXT: dit.linear

// Ring: rows stay put; the attention holds the ring group (grid axis 3).
// RING-LABEL: func.func @transformer(%arg0: tensor<1x64x16xf32>
// RING: dit.rope {{.*}}sequence_shards = 2 : i64
// RING: dit.attention self {{.*}}dit.ring_axis = 3 : i64{{.*}} : tensor<1x64x32xf32>
// RING-NOT: shard.

// K/V-gather: K and V all-gathered over grid axis 4 before each self-attention.
// KV-LABEL: func.func @transformer
// KV: shard.all_gather {{.*}} on @mesh grid_axes = [4] gather_axis = 1 : tensor<1x64x32xf32> -> tensor<1x128x32xf32>
// KV-NEXT: shard.all_gather {{.*}} on @mesh grid_axes = [4] gather_axis = 1 : tensor<1x64x32xf32> -> tensor<1x128x32xf32>
// KV-NEXT: dit.attention self {{.*}} : tensor<1x64x32xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32> -> tensor<1x64x32xf32>

// Guidance branches: each rank runs its branch, one all-gather over cfg (grid axis 1) per step.
// CFG-LABEL: func.func @denoise_step(%arg0: tensor<1x128x16xf32>
// CFG: dit.cfg_select %arg4, %arg5 {cfg = 2 : i64, slot = 0 : i64}
// CFG-NEXT: call @transformer
// CFG-NOT: call @transformer
// CFG: dit.stack {{.*}} {axis = 0 : i64} : tensor<1x128x16xf32> -> tensor<1x1x128x16xf32>
// CFG-NEXT: shard.all_gather {{.*}} on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x1x128x16xf32> -> tensor<2x1x128x16xf32>
// CFG-NEXT: dit.unstack
// CFG-NEXT: dit.cfg_combine
// CFG-NEXT: dit.scheduler_step flow_match_euler {{.*}} : tensor<1x128x16xf32>, tensor<f32>

// CFG and tensor parallel at once.
// CFGTP-LABEL: func.func @transformer(
// CFGTP: shard.all_reduce {{.*}} grid_axes = [6]
// CFGTP-LABEL: func.func @denoise_step
// CFGTP: shard.all_gather {{.*}} grid_axes = [1] gather_axis = 0

// CFG and Ulysses: a2a on grid axis 5, the branch exchange on grid axis 1.
// CFGU-LABEL: func.func @transformer(
// CFGU: shard.all_to_all {{.*}} grid_axes = [5]
// CFGU-LABEL: func.func @denoise_step(%arg0: tensor<1x64x16xf32>
// CFGU: shard.all_gather {{.*}} grid_axes = [1] gather_axis = 0 : tensor<1x1x64x16xf32> -> tensor<2x1x64x16xf32>

// Tensor parallel and Ulysses on FLUX's joint attention: text keeps its rows and takes its
// heads with all_slice; image rows go through the all-to-all.
// FLUXTPU-LABEL: func.func @transformer
// FLUXTPU: shard.all_slice {{.*}} on @mesh grid_axes = [5] slice_axis = 3 : tensor<1x512x3x16xf32> -> tensor<1x512x3x8xf32>
// FLUXTPU: shard.all_to_all {{.*}} grid_axes = [5] split_axis = 3 concat_axis = 1 : tensor<1x32x3x16xf32> -> tensor<1x64x3x8xf32>
// FLUXTPU: dit.attention joint {{.*}}num_heads = 1 : i64, text_tokens = 512 : i64} : tensor<1x576x8xf32>
// FLUXTPU: shard.all_gather {{.*}} grid_axes = [5] gather_axis = 2 : tensor<1x512x8xf32> -> tensor<1x512x16xf32>
// FLUXTPU: shard.all_to_all {{.*}} split_axis = 1 concat_axis = 2 : tensor<1x64x8xf32> -> tensor<1x32x16xf32>
// FLUXTPU: dit.tp = #dit.tp_role<row>, dit.tp_segments = array<i64: 32, 128>

// Ulysses x ring: the all-to-all gives the ring block its full rows.
// FLUXUR-LABEL: func.func @transformer(
// FLUXUR: shard.all_to_all {{.*}} grid_axes = [5] split_axis = 3 concat_axis = 1 : tensor<1x16x3x32xf32> -> tensor<1x32x3x16xf32>
// FLUXUR: dit.attention joint {{.*}}dit.ring_axis = 3 : i64{{.*}}num_heads = 2 : i64

// Hand-written: one attention block per mesh. Tensor parallel: the
// column-parallel projections produce local widths, and the row-parallel
// output projection's partial sum is all-reduced over tp (grid axis 6)
// before the residual reads it.
// CHECK-LABEL: func.func @transformer(%arg0: tensor<1x8x16xf32>
// CHECK: dit.linear {{.*}}weight = "to_q"} : tensor<1x8x8xf32> -> tensor<1x8x4xf32>
// CHECK: dit.attention self {{.*}}num_heads = 1 : i64} : tensor<1x8x4xf32>
// CHECK-NEXT: %[[OUT:.*]] = dit.linear {{.*}}weight = "to_out"} : tensor<1x8x4xf32> -> tensor<1x8x8xf32>
// CHECK-NEXT: %[[SUM:.*]] = shard.all_reduce %[[OUT]] on @mesh grid_axes = [6] : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
// CHECK-NEXT: dit.residual_add %{{.*}}, %[[SUM]]
module attributes {dit.mesh = #dit.mesh<tp = 2>} {
func.func @transformer(%latents: tensor<1x4x2x4x4xf32> {dit.input = "latents"}) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<transformer>} {
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  %q = dit.linear %x {weight = "to_q", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %k = dit.linear %x {weight = "to_k", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %v = dit.linear %x {weight = "to_v", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %o = dit.attention self %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %out = dit.linear %o {weight = "to_out", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %r = dit.residual_add %x, %out : tensor<1x8x8xf32>
  return %r : tensor<1x8x8xf32>
}
}

// -----

// Ulysses: the rows are split; Q, K and V are stacked into one all-to-all
// over grid axis 5 that trades rows for heads, and one all-to-all after the
// attention trades them back.
// CHECK-LABEL: func.func @transformer(%arg0: tensor<1x4x16xf32>
// CHECK: dit.stack {{.*}} {axis = 2 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x3x8xf32>
// CHECK-NEXT: shard.all_to_all {{.*}} on @mesh grid_axes = [5] split_axis = 3 concat_axis = 1 : tensor<1x4x3x8xf32> -> tensor<1x8x3x4xf32>
// CHECK-NEXT: dit.unstack
// CHECK-NEXT: dit.attention self {{.*}} : tensor<1x8x4xf32>
// CHECK-NEXT: shard.all_to_all {{.*}} on @mesh grid_axes = [5] split_axis = 1 concat_axis = 2 : tensor<1x8x4xf32> -> tensor<1x4x8xf32>
// CHECK-NEXT: dit.linear {{.*}}weight = "to_out"} : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
// CHECK-NOT: shard.
module attributes {dit.mesh = #dit.mesh<ulysses = 2>} {
func.func @transformer(%latents: tensor<1x4x2x4x4xf32> {dit.input = "latents"}) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<transformer>} {
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  %q = dit.linear %x {weight = "to_q", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %k = dit.linear %x {weight = "to_k", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %v = dit.linear %x {weight = "to_v", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %o = dit.attention self %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %out = dit.linear %o {weight = "to_out", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %r = dit.residual_add %x, %out : tensor<1x8x8xf32>
  return %r : tensor<1x8x8xf32>
}
}
