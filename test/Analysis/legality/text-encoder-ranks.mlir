// text-encoder-ranks: each replica's prompts are encoded on its own ranks,
// or on ranks of the encoder's own
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-check-legality

// pass: ranks 2 and 3 of the tp 4 replica encode
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 2>, instances = [array<i64: 2, 3>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}

// -----

// fail: tp 8 exceeds the replica's 4 ranks (and the encoder's 4 heads)
// expected-error @below {{[text-encoder-heads] text_encoder tp_size 8 does not divide the 4 attention heads of T5EncoderModel}}
// expected-error @below {{[text-encoder-ranks] text_encoder tp_size 8 exceeds the 4 ranks of transformer replica 0 [0, 1, 2, 3]}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 8>>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}

// -----

// fail: instance 0 straddles replicas 0 [0, 1] and 1 [2, 3]
// expected-error @below {{[text-encoder-ranks] text_encoder instance 0 [0, 3] names rank 3, which is not in transformer replica 0 [0, 1], which holds its first rank}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2, dp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 2, dp = 2>, instances = [array<i64: 0, 3>, array<i64: 1, 2>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}

// -----

// fail: replica 1 [2, 3] holds no instance; replica 0 holds two
// expected-warning @below {{[text-encoder-ranks] text_encoder instance 1 [1] is a second instance in transformer replica 0 [0, 1]}}
// expected-error @below {{[text-encoder-ranks] transformer replica 1 [2, 3] holds no text_encoder instance, so nothing encodes its prompts}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2, dp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 1, dp = 2>, instances = [array<i64: 0>, array<i64: 1>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}

// -----

// warning: an encoder on every rank of two tp replicas, listed in any order;
// the second instance of each replica holds no encoder
// expected-warning @below {{[text-encoder-ranks] text_encoder instance 2 [2] is a second instance in transformer replica 1 [2, 3]; the replica's first listed instance encodes its prompts and broadcasts them, so this one holds no encoder}}
// expected-warning @below {{[text-encoder-ranks] text_encoder instance 3 [1] is a second instance in transformer replica 0 [0, 1]}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2, dp = 2>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<dp = 4>, instances = [array<i64: 3>, array<i64: 0>, array<i64: 2>, array<i64: 1>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}

// -----

// pass: the encoder on ranks 4 and 5 of its own serves replica 0 [0, 1, 2, 3]
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 6, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 2>, instances = [array<i64: 4, 5>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}


// -----

// fail: a second instance on ranks of its own would serve replica 1, which does not exist
// expected-error @below {{[world-size] num_gpus 6 does not equal dp 1 x cfg 1 x pp 1 x ring 1 x kv_gather 1 x ulysses 1 x tp 4 = 4}}
// expected-error @below {{[text-encoder-ranks] text_encoder instance 1 [4, 5] runs on ranks of its own, so it serves transformer replica 1 (its index), but the transformer has 1 replica}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 6, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 2>, instances = [array<i64: 0, 1>, array<i64: 4, 5>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}


// -----

// fail: rank 0 runs no transformer, rank 1 is replica 0's (so no group
// holds rank 0, which runs nothing)
// expected-error @below {{[world-size] num_gpus 5 does not equal dp 1 x cfg 1 x pp 1 x ring 1 x kv_gather 1 x ulysses 1 x tp 4 = 4}}
// expected-error @below {{[text-encoder-ranks] text_encoder instance 0 [0, 1] names rank 1 of transformer replica 0 [1, 2, 3, 4] and rank 0, which runs no transformer}}
module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 5, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa", instances = [array<i64: 1, 2, 3, 4>]>, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 2>, instances = [array<i64: 0, 1>]>]>
} {
  func.func @transformer(%x: tensor<1x8x3072xbf16>) {
    %o = dit.attention self %x, %x, %x {num_heads = 24 : i64, head_dim = 128 : i64} : tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16>, tensor<1x8x3072xbf16> -> tensor<1x8x3072xbf16>
    return
  }
  func.func @text_encoder(%ids: tensor<1x8xi64>) -> tensor<1x8x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %t = dit.component text_encoder "T5EncoderModel"(%ids) : (tensor<1x8xi64>) -> tensor<1x8x16xf32> {
    ^bb0(%i: tensor<1x8xi64>):
      %e = dit.token_embedding %i {weight = "shared", vocab_size = 64 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
      %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 8 : i64, max_distance = 16 : i64} : tensor<1x4x8x8xf32>
      %n = dit.rms_norm %e {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.0.layer_norm"} : tensor<1x8x16xf32>
      %q = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %k = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.k", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %v = dit.linear %n {weight = "encoder.block.0.layer.0.SelfAttention.v", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %a = dit.attention self %q, %k, %v, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x16xf32>
      %o = dit.linear %a {weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
      %h = dit.add %e, %o : tensor<1x8x16xf32>
      %m = dit.rms_norm %h {affine = true, eps = 1.0e-06 : f64, weight = "encoder.block.0.layer.1.layer_norm"} : tensor<1x8x16xf32>
      %g = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_0", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %ga = dit.activation gelu_tanh %g : tensor<1x8x32xf32> -> tensor<1x8x32xf32>
      %u = dit.linear %m {weight = "encoder.block.0.layer.1.DenseReluDense.wi_1", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x32xf32>
      %p = dit.mul %ga, %u : tensor<1x8x32xf32>
      %w = dit.linear %p {weight = "encoder.block.0.layer.1.DenseReluDense.wo", bias = false} : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
      %r = dit.add %h, %w : tensor<1x8x16xf32>
      %f = dit.rms_norm %r {affine = true, eps = 1.0e-06 : f64, weight = "encoder.final_layer_norm"} : tensor<1x8x16xf32>
      dit.yield %f : tensor<1x8x16xf32>
    }
    return %t : tensor<1x8x16xf32>
  }
}

