// dit-split-stages on transformers it cannot cut: a diagnostic naming the
// op, not a broken stage function.
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-split-stages

// Only tensors travel between stages (shard.send/recv carry tensors).
module attributes {dit.mesh = #dit.mesh<pp = 2>, dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>, dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 2, num_heads = 4, head_dim = 8, hidden_size = 32, ffn_size = 64, text_hidden_size = 32, text_embed_dim = 16, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x1)
  func.func @transformer(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
    // expected-error @+1 {{a 'index' cannot cross pipeline stages; only ranked tensors are sent}}
    %c = arith.constant {dit.block = 0 : i64} 4 : index
    %e = tensor.empty(%c) {dit.block = 1 : i64} : tensor<1x?x8xf32>
    %r = tensor.cast %e {dit.block = 1 : i64} : tensor<1x?x8xf32> to tensor<1x4x8xf32>
    return %r : tensor<1x4x8xf32>
  }
}

// -----

// An op of block 1 ahead of the block-0 op that reads it.
module attributes {dit.mesh = #dit.mesh<pp = 2>, dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>, dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 2, num_heads = 4, head_dim = 8, hidden_size = 32, ffn_size = 64, text_hidden_size = 32, text_embed_dim = 16, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x1)
  func.func @transformer(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
    %a = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, dit.block = 1 : i64} : tensor<1x4x8xf32>
    // expected-error @+1 {{runs on pipeline stage 0 but reads a value computed on stage 1: its 'dit.block' is out of step with the data flow}}
    %b = dit.rms_norm %a {affine = false, eps = 1.0e-6 : f64, dit.block = 0 : i64} : tensor<1x4x8xf32>
    %c = dit.rms_norm %b {affine = false, eps = 1.0e-6 : f64, dit.block = 1 : i64} : tensor<1x4x8xf32>
    return %c : tensor<1x4x8xf32>
  }
}
