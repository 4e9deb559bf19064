// seq-divisibility: ulysses x ring x kv_gather divides the image tokens
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: 32760 tokens over ulysses 4 x ring 2
module attributes {
  dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 40, num_heads = 40, head_dim = 128, hidden_size = 5120, ffn_size = 13824, text_hidden_size = 5120, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 480, width = 832, frames = 81, latent_frames = 21, latent_height = 60, latent_width = 104, image_tokens = 32760, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ring = 2, ulysses = 4>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x5120xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 40 : i64, head_dim = 128 : i64} : tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16> -> tensor<1x8x5120xbf16>
    return
  }
}

// -----

// fail: 32760 tokens over ulysses 8 x ring 2
// expected-error @+1 {{[seq-divisibility] sequence of 32760 image tokens is not divisible by ulysses 8 x ring 2 x kv_gather 1 = 16; nearest resolutions that divide: height 448 x width 832 (30576 tokens), height 512 x width 832 (34944 tokens), height 512 x width 816 (34272 tokens)}}
module attributes {
  dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 40, num_heads = 40, head_dim = 128, hidden_size = 5120, ffn_size = 13824, text_hidden_size = 5120, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 480, width = 832, frames = 81, latent_frames = 21, latent_height = 60, latent_width = 104, image_tokens = 32760, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 16, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ring = 2, ulysses = 8>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x5120xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 40 : i64, head_dim = 128 : i64} : tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16> -> tensor<1x8x5120xbf16>
    return
  }
}

// -----

// pass: packing alignment 3 x ulysses 4 x ring 2 = 24 divides 32760
module attributes {
  dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 40, num_heads = 40, head_dim = 128, hidden_size = 5120, ffn_size = 13824, text_hidden_size = 5120, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 3, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 480, width = 832, frames = 81, latent_frames = 21, latent_height = 60, latent_width = 104, image_tokens = 32760, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ring = 2, ulysses = 4>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x5120xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 40 : i64, head_dim = 128 : i64} : tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16> -> tensor<1x8x5120xbf16>
    return
  }
}


// -----

// fail: packing alignment 16 x ulysses 4 x ring 2 = 128 does not
// expected-error @+1 {{[seq-divisibility] sequence of 32760 image tokens is not divisible by ulysses 4 x ring 2 x kv_gather 1 = 8 x packing alignment 16; nearest resolutions that divide:}}
module attributes {
  dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 40, num_heads = 40, head_dim = 128, hidden_size = 5120, ffn_size = 13824, text_hidden_size = 5120, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 16, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 480, width = 832, frames = 81, latent_frames = 21, latent_height = 60, latent_width = 104, image_tokens = 32760, text_tokens = 512, branches = 2, guidance_scale = 5.0 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<ring = 2, ulysses = 4>, backend = "fa">]>
} {
  func.func @transformer(%x: tensor<1x8x5120xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 40 : i64, head_dim = 128 : i64} : tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16>, tensor<1x8x5120xbf16> -> tensor<1x8x5120xbf16>
    return
  }
}

