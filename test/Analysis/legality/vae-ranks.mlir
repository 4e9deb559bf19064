// vae-ranks: vae_parallel_size fits the ranks given to the VAE
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: 4 bands on the 4 ranks of a tp 4 replica
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 4>]>
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

// pass: 2 listed ranks for 2 bands
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 1, 2>], vae_parallel_size = 2>]>
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

// fail: 8 bands on a 4-rank replica
// expected-error @+1 {{[vae-ranks] vae_parallel_size 8 exceeds the 4 ranks of transformer replica 0 [0, 1, 2, 3]; the VAE decodes on ranks of the replica whose latents it takes, so use at most 4}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 8>]>
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

// fail: 3 listed ranks for 2 bands
// expected-error @+1 {{[vae-ranks] vae instance 0 [0, 1, 2] gives the VAE 3 ranks, but vae_parallel_size 2 decodes on exactly 2}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, instances = [array<i64: 0, 1, 2>], vae_parallel_size = 2>]>
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
