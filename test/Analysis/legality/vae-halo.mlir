// vae-halo: every VAE band holds at least the decoder's halo rows
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: bands of one latent row (16 px high image, 2 rows, 2 bands)
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 16, width = 1024, frames = 1, latent_frames = 1, latent_height = 2, latent_width = 128, image_tokens = 64, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 2>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x2x128xbf16>) -> tensor<1x3x16x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x2x128xbf16>) -> tensor<1x3x16x1024xbf16>
    return %0 : tensor<1x3x16x1024xbf16>
  }
}

// -----

// fail: a band of no rows
// expected-error @+1 {{[vae-halo] VAE band 2 of [1, 1, 0] holds 0 latent rows, fewer than the 1-row halo read from each neighbour by AutoencoderKL's 3x3 convolutions; with a latent height of 2 rows (16 px over the VAE's compression 8) use at most 2 bands}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 16, width = 1024, frames = 1, latent_frames = 1, latent_height = 2, latent_width = 128, image_tokens = 64, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 3, row_split = [1, 1, 0]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x2x128xbf16>) -> tensor<1x3x16x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x2x128xbf16>) -> tensor<1x3x16x1024xbf16>
    return %0 : tensor<1x3x16x1024xbf16>
  }
}

// -----

// fail: a class without a patch-parallel decoder
// expected-error @+1 {{[vae-halo] vae_parallel_size 2 splits the decode, but the VAE class 'AutoencoderKLLTXVideo' has no patch-parallel decoder, so its halo is unknown (AutoencoderKL, AutoencoderKLWan and AutoencoderKLQwenImage have one); use vae_parallel_size 1}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 2>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKLLTXVideo"(%z) : (tensor<1x16x128x128xbf16>) -> tensor<1x3x1024x1024xbf16>
    return %0 : tensor<1x3x1024x1024xbf16>
  }
}
