// vae-rows: vae_parallel_size divides the latent rows, or row_split states the bands
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: 128 latent rows in 4 bands of 32
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

// pass: 90 latent rows, 4 bands stated by row_split
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 720, width = 1024, frames = 1, latent_frames = 1, latent_height = 90, latent_width = 128, image_tokens = 2880, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 4, row_split = [24, 22, 22, 22]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16>
    return %0 : tensor<1x3x720x1024xbf16>
  }
}

// -----

// fail: 90 latent rows (720 px) in 4 bands, no row_split
// expected-error @+1 {{[vae-rows] latent height of 90 rows (720 px over the VAE's compression 8) is not divisible by vae_parallel_size 4; state the bands with row_split [23, 23, 22, 22] or pick a size that divides it (2, 3, 5, 6)}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 720, width = 1024, frames = 1, latent_frames = 1, latent_height = 90, latent_width = 128, image_tokens = 2880, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 4>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16>
    return %0 : tensor<1x3x720x1024xbf16>
  }
}

// -----

// fail: a row_split that misses rows
// expected-error @+1 {{[vae-rows] row_split [40, 40] covers 80 latent rows, but the latents have a latent height of 90 rows (720 px over the VAE's compression 8)}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 720, width = 1024, frames = 1, latent_frames = 1, latent_height = 90, latent_width = 128, image_tokens = 2880, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 2, row_split = [40, 40]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16>
    return %0 : tensor<1x3x720x1024xbf16>
  }
}

// -----

// fail: a row_split with another band count
// expected-error @+1 {{[vae-rows] row_split [45, 45] states 2 bands but vae_parallel_size is 4}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 720, width = 1024, frames = 1, latent_frames = 1, latent_height = 90, latent_width = 128, image_tokens = 2880, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 4, row_split = [45, 45]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @vae_decode(%z: tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKL"(%z) : (tensor<1x16x90x128xbf16>) -> tensor<1x3x720x1024xbf16>
    return %0 : tensor<1x3x720x1024xbf16>
  }
}
