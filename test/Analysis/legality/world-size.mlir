// world-size: num_gpus = dp x cfg x pp x ring x kv_gather x ulysses x tp
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: cfg 2 x tp 2 on 4 GPUs
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<cfg = 2, tp = 2>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// fail: the degrees multiply to 4, not 8
// expected-error @+1 {{[world-size] num_gpus 8 does not equal dp 1 x cfg 1 x pp 1 x ring 1 x kv_gather 1 x ulysses 2 x tp 2 = 4}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ulysses = 2, tp = 2>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// fail: a listed rank beyond the world
// expected-error @+1 {{[world-size] text_encoder instance 1 [5] names rank 5, outside the 2 GPUs (ranks 0..1)}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<dp = 2>, instances = [array<i64: 0>, array<i64: 5>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// fail: the node shape does not cover the world
// expected-error @+1 {{[world-size] nnodes 2 x gpus_per_node 4 = 8 does not equal num_gpus 4}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, nnodes = 2, gpus_per_node = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// fail: a deployment that places no transformer keeps its world size
// expected-error @+1 {{[world-size] num_gpus 4 does not equal dp 1 x cfg 1 x pp 1 x ring 1 x kv_gather 1 x ulysses 1 x tp 1 = 1}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "vae", mesh = #dit.mesh<tp = 4>>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// pass: a text encoder on a rank of its own (rank 2) beside tp 2
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 3, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<>, instances = [array<i64: 2>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}

// -----

// fail: ranks 3 and 4 run nothing (the encoder holds rank 2 only)
// expected-error @+1 {{[world-size] num_gpus 5 does not equal dp 1 x cfg 1 x pp 1 x ring 1 x kv_gather 1 x ulysses 1 x tp 2 = 2, and no text_encoder or vae instance runs on ranks [3, 4]}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 5, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<>, instances = [array<i64: 2>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
}
