// dit-partition-text-encoder: with text_encoder tp_size 2, each encoder's
// q, k, v and wi_0, wi_1 keep half their outputs, the attention and the
// relative position bias half the heads, and o and wo are row-parallel,
// each followed by an all-reduce of its partial sums. Norms, embeddings and
// residuals stay whole.
// RUN: dit-opt %s --dit-partition-text-encoder | FileCheck %s
// RUN: dit-opt %s --dit-partition-text-encoder | grep -c "shard.all_reduce %" | FileCheck %s --check-prefix=COUNT

module attributes {
  dit.model = #dit.model<family = "flux", class_name = "FluxTransformer2DModel", double_blocks = 1, single_blocks = 1, num_heads = 24, head_dim = 128, hidden_size = 3072, ffn_size = 12288, text_hidden_size = 3072, text_embed_dim = 4096, in_channels = 16, out_channels = 16, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 1, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 1024, width = 1024, frames = 1, latent_frames = 1, latent_height = 128, latent_width = 128, image_tokens = 4096, text_tokens = 512, branches = 1, guidance_scale = 3.5 : f64, steps = 28>,
  dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 4>, backend = "fa">, #dit.placement<component = "text_encoder", mesh = #dit.mesh<tp = 2>>]>
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

// CHECK: shard.grid @text_encoder_tp(shape = 2)
// CHECK-LABEL: func.func @text_encoder
// CHECK: dit.token_embedding %{{.*}} : tensor<1x8xi64> -> tensor<1x8x16xf32>
// CHECK: dit.relative_position_bias {{.*}} : tensor<1x2x8x8xf32>
// CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<column>{{.*}}SelfAttention.q{{.*}} -> tensor<1x8x8xf32>
// CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<column>{{.*}}SelfAttention.k{{.*}} -> tensor<1x8x8xf32>
// CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<column>{{.*}}SelfAttention.v{{.*}} -> tensor<1x8x8xf32>
// CHECK: dit.attention self {{.*}}num_heads = 2 : i64{{.*}} -> tensor<1x8x8xf32>
// CHECK: %[[O:[0-9]+]] = dit.linear {{.*}}dit.tp = #dit.tp_role<row>{{.*}}SelfAttention.o{{.*}} : tensor<1x8x8xf32> -> tensor<1x8x16xf32>
// CHECK-NEXT: %[[S:[a-z_0-9]+]] = shard.all_reduce %[[O]] on @text_encoder_tp grid_axes = [0]
// CHECK-NEXT: dit.add %{{.*}}, %[[S]]
// CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<column>{{.*}}wi_0{{.*}} -> tensor<1x8x16xf32>
// CHECK: dit.activation gelu_tanh %{{.*}} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
// CHECK: dit.mul %{{.*}} : tensor<1x8x16xf32>
// CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<row>{{.*}}wo{{.*}} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
// CHECK-NEXT: shard.all_reduce
// CHECK: dit.rms_norm {{.*}}encoder.final_layer_norm{{.*}} : tensor<1x8x16xf32>

// One all-reduce per row-parallel linear, no more.
// COUNT: {{^}}2{{$}}
