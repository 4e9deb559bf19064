// dit-split-stages: blocks to stages, send/recv for values that cross.
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: ditc import tiny-flux --height 128 --width 128 --dtype f32 -o %t.flux.mlir
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=pp=2" --dit-propagate-sharding --dit-insert-collectives --dit-split-stages | FileCheck %s --check-prefix=PP
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=pp=2,ulysses=2,tp=2" --dit-propagate-sharding --dit-insert-collectives --dit-split-stages | FileCheck %s --check-prefix=PPTPU
// RUN: dit-opt %t.flux.mlir --dit-mesh-layout="degrees=pp=4" --dit-propagate-sharding --dit-insert-collectives --dit-split-stages | FileCheck %s --check-prefix=PP4
// A hand-edited dit.block that moves an op of block 0 to block 1, ahead of
// the block-0 ops that read it, is a diagnostic, not a broken stage.
// RUN: sed '0,/dit.block = 0 : i64/s//dit.block = 1 : i64/' %t.wan.mlir | not dit-opt --dit-mesh-layout="degrees=pp=2" --dit-propagate-sharding --dit-insert-collectives --dit-split-stages -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: runs on pipeline stage 0 but reads a value computed on stage 1: its 'dit.block' is out of step with the data flow
// The hand-written transformer at the end of this file, split alone.
// RUN: dit-opt %s --dit-split-stages | FileCheck %s

// Two blocks on two stages: block 0 (with the embeddings) on stage 0, block
// 1 and the final projection on stage 1. The projected text, the shared
// time projection, the hidden state and the final adaLN chunks cross, in
// the order they are defined.
// PP-LABEL: func.func @transformer_stage0
// PP-SAME: attributes {dit.component = #dit.component<transformer>, dit.stage = 0 : i64}
// PP: dit.patch_embed
// PP: weight = "blocks.0.attn1.to_q"
// PP-NOT: weight = "blocks.1.
// PP: shard.send {{.*}} on @mesh grid_axes = [2] destination = [1] : (tensor<1x512x32xf32>)
// PP-NEXT: shard.send {{.*}} destination = [1] : (tensor<1x192xf32>)
// PP-NEXT: shard.send {{.*}} destination = [1] : (tensor<1x128x32xf32>)
// PP-NEXT: shard.send {{.*}} destination = [1] : (tensor<1x2x32xf32>)
// PP-NEXT: return
// PP-LABEL: func.func @transformer_stage1
// PP: tensor.empty() : tensor<1x512x32xf32>
// PP-NEXT: shard.recv {{.*}} on @mesh grid_axes = [2] source = [0] : (tensor<1x512x32xf32>) -> tensor<1x512x32xf32>
// PP-NOT: dit.patch_embed
// PP: weight = "blocks.1.attn1.to_q"
// PP: weight = "proj_out"
// PP: return {{.*}} : tensor<1x128x16xf32>
// PP: func.func private @transformer({{.*}} dit.stages = [@transformer_stage0, @transformer_stage1]

// pp x tp x ulysses: the stages carry their local shapes and collectives.
// PPTPU-LABEL: func.func @transformer_stage0
// PPTPU: shard.all_to_all {{.*}} grid_axes = [5]
// PPTPU: shard.all_reduce {{.*}} grid_axes = [6]
// PPTPU: shard.send {{.*}} grid_axes = [2] destination = [1] : (tensor<1x64x32xf32>)
// PPTPU-LABEL: func.func @transformer_stage1
// PPTPU: shard.recv {{.*}} source = [0] : (tensor<1x64x32xf32>) -> tensor<1x64x32xf32>
// PPTPU: shard.all_to_all {{.*}} grid_axes = [5]

// FLUX's 2 + 2 blocks on 4 stages: a value made on stage 0 and used on
// stage 3 is forwarded through stages 1 and 2.
// PP4-LABEL: func.func @transformer_stage1
// PP4: shard.recv {{.*}} source = [0] : (tensor<1x32xf32>)
// PP4: shard.send {{.*}} destination = [2] : (tensor<1x32xf32>)
// PP4-LABEL: func.func @transformer_stage3
// PP4: shard.recv {{.*}} source = [2] : (tensor<1x32xf32>)
// PP4: weight = "single_transformer_blocks.1.proj_out"

// Hand-written: block 0 on stage 0, block 1 on stage 1. The one value that
// crosses is sent over pp (grid axis 2) and received into a fresh tensor;
// the function argument block 1 reads is passed to every stage, and the
// original function stays as a declaration listing its stages.
// CHECK-LABEL: func.func @transformer_stage0(%arg0: tensor<1x4x8xf32>)
// CHECK-SAME: dit.stage = 0 : i64
// CHECK-NEXT: %[[A:.*]] = dit.rms_norm %arg0 {{.*}}dit.block = 0 : i64
// CHECK-NEXT: shard.send %[[A]] on @mesh grid_axes = [2] destination = [1] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @transformer_stage1(%arg0: tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-SAME: dit.stage = 1 : i64
// CHECK-NEXT: %[[EMPTY:.*]] = tensor.empty() : tensor<1x4x8xf32>
// CHECK-NEXT: %[[RECV:.*]] = shard.recv %[[EMPTY]] on @mesh grid_axes = [2] source = [0] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[B:.*]] = dit.rms_norm %[[RECV]] {{.*}}dit.block = 1 : i64
// CHECK-NEXT: %[[C:.*]] = dit.residual_add %arg0, %[[B]]
// CHECK-NEXT: return %[[C]]
// CHECK-LABEL: func.func private @transformer(tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-SAME: dit.stages = [@transformer_stage0, @transformer_stage1]
module attributes {dit.mesh = #dit.mesh<pp = 2>, dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>, dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 2, num_heads = 4, head_dim = 8, hidden_size = 32, ffn_size = 64, text_hidden_size = 32, text_embed_dim = 16, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x1)
  func.func @transformer(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
    %a = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, dit.block = 0 : i64} : tensor<1x4x8xf32>
    %b = dit.rms_norm %a {affine = false, eps = 1.0e-6 : f64, dit.block = 1 : i64} : tensor<1x4x8xf32>
    %c = dit.residual_add %x, %b {dit.block = 1 : i64} : tensor<1x4x8xf32>
    return %c : tensor<1x4x8xf32>
  }
}
