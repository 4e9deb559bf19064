// expert-offload: expert offload needs a model with two experts
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: a two-expert model keeps only its running expert
module attributes {
  dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 2, num_heads = 2, head_dim = 16, hidden_size = 32, ffn_size = 64, text_hidden_size = 32, text_embed_dim = 16, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 2>,
  dit.workload = #dit.workload<batch = 1, height = 64, width = 64, frames = 5, latent_frames = 2, latent_height = 8, latent_width = 8, image_tokens = 32, text_tokens = 8, branches = 2, guidance_scale = 5.0 : f64, steps = 4>,
  dit.deployment = #dit.deployment<num_gpus = 1, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<>, offload = true>]>
} {
  func.func @transformer(%x: tensor<1x8x32xf32>) {
    %o = dit.attention self %x, %x, %x {num_heads = 2 : i64, head_dim = 16 : i64} : tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
    return
  }
}

// -----

// fail: one expert has nothing to swap
// expected-error @+1 {{[expert-offload] expert offload keeps one of two experts resident, but WanTransformer3DModel (wan) has 1 expert; drop --expert-offload ("offload" on the transformer)}}
module attributes {
  dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 2, num_heads = 2, head_dim = 16, hidden_size = 32, ffn_size = 64, text_hidden_size = 32, text_embed_dim = 16, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 64, width = 64, frames = 5, latent_frames = 2, latent_height = 8, latent_width = 8, image_tokens = 32, text_tokens = 8, branches = 2, guidance_scale = 5.0 : f64, steps = 4>,
  dit.deployment = #dit.deployment<num_gpus = 1, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<>, offload = true>]>
} {
  func.func @transformer(%x: tensor<1x8x32xf32>) {
    %o = dit.attention self %x, %x, %x {num_heads = 2 : i64, head_dim = 16 : i64} : tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1x8x32xf32> -> tensor<1x8x32xf32>
    return
  }
}
