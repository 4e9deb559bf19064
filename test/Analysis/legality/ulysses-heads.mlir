// ulysses-heads: ulysses divides the TP-local heads; shard_over_sp = false is exempt
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: 56 heads, tp 2 x ulysses 4 (28 local heads)
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 56, head_dim = 128, hidden_size = 7168, ffn_size = 28672, text_hidden_size = 7168, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ulysses = 4, tp = 2>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x7168xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 56 : i64, head_dim = 128 : i64} : tensor<1x8x7168xbf16>, tensor<1x8x7168xbf16>, tensor<1x8x7168xbf16> -> tensor<1x8x7168xbf16>
    return
  }
}

// -----

// fail: 56 heads, tp 4 x ulysses 4 (14 local heads)
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 56, head_dim = 128, hidden_size = 7168, ffn_size = 28672, text_hidden_size = 7168, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 16, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ulysses = 4, tp = 4>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x7168xbf16>) {
    // expected-error @+1 {{[ulysses-heads] ulysses degree 4 does not divide the 14 TP-local heads (56 heads / tp 4)}}
    %o = dit.attention self %x, %x, %x {num_heads = 56 : i64, head_dim = 128 : i64} : tensor<1x8x7168xbf16>, tensor<1x8x7168xbf16>, tensor<1x8x7168xbf16> -> tensor<1x8x7168xbf16>
    return
  }
}

// -----

// pass: an attention that does not shard over SP splits heads over TP only
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 56, head_dim = 128, hidden_size = 7168, ffn_size = 28672, text_hidden_size = 7168, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 16, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ulysses = 4, tp = 4>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x7168xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 56 : i64, head_dim = 128 : i64, shard_over_sp = false} : tensor<1x8x7168xbf16>, tensor<1x8x7168xbf16>, tensor<1x8x7168xbf16> -> tensor<1x8x7168xbf16>
    return
  }
}
