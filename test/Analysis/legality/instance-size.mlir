// instance-size: a replica has as many ranks as its non-dp degrees
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: two cfg 2 replicas
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2, cfg = 2>, backend = "fa", instances = [array<i64: 0, 1>, array<i64: 2, 3>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// fail: a 3-rank replica under tp 2 (every rank runs something, so
// world-size is quiet: the replica's size is what is wrong)
// expected-error @+1 {{[instance-size] transformer instance 0 [0, 1, 2] has 3 ranks, but cfg 1 x pp 1 x ring 1 x kv_gather 1 x ulysses 1 x tp 2 = 2}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 3, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>, backend = "fa", instances = [array<i64: 0, 1, 2>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}
