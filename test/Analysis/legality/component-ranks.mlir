// component-ranks: a rank that runs no transformer serves one replica
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: replica 0's encoder and VAE on rank 2, replica 1's on rank 3
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<dp = 2>, instances = [array<i64: 2>, array<i64: 3>]>, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 2>, array<i64: 3>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// fail: rank 2 encodes for replica 0 and decodes for replica 1
// expected-error @+1 {{[component-ranks] rank 2, which runs no transformer, serves transformer replicas 0 [0] and 1 [1] (through its text_encoder and vae instances)}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<dp = 2>, instances = [array<i64: 2>, array<i64: 3>]>, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 3>, array<i64: 2>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}
