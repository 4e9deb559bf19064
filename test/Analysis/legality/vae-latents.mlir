// vae-latents: the VAE decodes on ranks of the replica whose latents it takes
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: each replica's bands on its own ranks
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2, tp = 2>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 0, 1>, array<i64: 2, 3>], vae_parallel_size = 2>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16>
    return %0 : tensor<1x3x1024x1024xbf16>
  }
}

// -----

// fail: replica 0's bands on a rank of replica 1
// expected-error @+1 {{[vae-latents] vae instance 0 [1, 2] names rank 2, which is not a rank of transformer replica 0 [0, 1]: the replica's final latents are gathered on its lowest rank and sent to its own ranks, or to an instance wholly on ranks of its own}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2, tp = 2>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 1, 2>, array<i64: 0, 3>], vae_parallel_size = 2>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16>
    return %0 : tensor<1x3x1024x1024xbf16>
  }
}

// -----

// fail: one VAE instance for two replicas
// expected-error @+1 {{[vae-latents] vae lists 1 instances but the transformer has 2 replicas; each replica's latents are decoded by the vae instance of the same index}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2, tp = 2>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 0, 1>], vae_parallel_size = 2>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16>
    return %0 : tensor<1x3x1024x1024xbf16>
  }
}

// -----

// pass: each replica's bands on two ranks of the VAE's own (4, 5 and 6, 7)
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2, tp = 2>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 4, 5>, array<i64: 6, 7>], vae_parallel_size = 2>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16>
    return %0 : tensor<1x3x1024x1024xbf16>
  }
}

