// tp-heads: tp divides the heads, the hidden and FFN widths, and the joint text stream
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: tp 2 over 38 heads
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 38, head_dim = 64, hidden_size = 2432, ffn_size = 9728, text_hidden_size = 2432, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x2432xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 38 : i64, head_dim = 64 : i64} : tensor<1x8x2432xbf16>, tensor<1x8x2432xbf16>, tensor<1x8x2432xbf16> -> tensor<1x8x2432xbf16>
    return
  }
}

// -----

// fail: tp 4 over 38 heads
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 38, head_dim = 64, hidden_size = 2432, ffn_size = 9728, text_hidden_size = 2432, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x2432xbf16>) {
    // expected-error @+1 {{[tp-heads] tp 4 does not divide the 38 attention heads}}
    %o = dit.attention self %x, %x, %x {num_heads = 38 : i64, head_dim = 64 : i64} : tensor<1x8x2432xbf16>, tensor<1x8x2432xbf16>, tensor<1x8x2432xbf16> -> tensor<1x8x2432xbf16>
    return
  }
}

// -----

// fail: tp 8 over a 1540-wide text stream
// expected-error @+1 {{[tp-heads] tp 8 does not divide the joint text stream width 1540}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 1540, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 8>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}
