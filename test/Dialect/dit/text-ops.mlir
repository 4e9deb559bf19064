// Round trip of the text encoders' ops, in an encoder body, through the
// custom and the generic format.
// RUN: dit-opt %s | dit-opt | FileCheck %s
// RUN: dit-opt %s --mlir-print-op-generic | dit-opt | FileCheck %s

// CHECK-LABEL: func.func @t5_layer
func.func @t5_layer(%ids: tensor<2x8xi64>, %mask: tensor<2x8xi64>) -> tensor<2x8x16xf32> {
  // CHECK: dit.component text_encoder "UMT5EncoderModel"
  %out = dit.component text_encoder "UMT5EncoderModel"(%ids, %mask) : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8x16xf32> {
  ^bb0(%i: tensor<2x8xi64>, %m: tensor<2x8xi64>):
    // CHECK: dit.token_embedding %{{.*}} {vocab_size = 32 : i64, weight = "shared"} : tensor<2x8xi64> -> tensor<2x8x16xf32>
    %h = dit.token_embedding %i {weight = "shared", vocab_size = 32 : i64} : tensor<2x8xi64> -> tensor<2x8x16xf32>
    // CHECK: dit.relative_position_bias %{{.*}} : tensor<2x8xi64> {max_distance = 128 : i64, num_buckets = 32 : i64, weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias"} : tensor<2x4x8x8xf32>
    %b = dit.relative_position_bias %m : tensor<2x8xi64> {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 32 : i64, max_distance = 128 : i64} : tensor<2x4x8x8xf32>
    // CHECK: dit.mul %{{.*}}, %{{.*}} : tensor<2x8x16xf32>
    %g = dit.mul %h, %h : tensor<2x8x16xf32>
    // CHECK: dit.mask_rows %{{.*}}, %{{.*}} : tensor<2x8x16xf32>, tensor<2x8xi64>
    %z = dit.mask_rows %g, %m : tensor<2x8x16xf32>, tensor<2x8xi64>
    dit.yield %z : tensor<2x8x16xf32>
  }
  return %out : tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @clip_pool
func.func @clip_pool(%ids: tensor<1x77xi64>) -> tensor<1x8xf32> {
  %out = dit.component text_encoder "CLIPTextModel"(%ids) : (tensor<1x77xi64>) -> tensor<1x8xf32> {
  ^bb0(%i: tensor<1x77xi64>):
    // CHECK: dit.token_embedding %{{.*}} {max_positions = 77 : i64, positions = "text_model.embeddings.position_embedding", vocab_size = 49408 : i64, weight = "text_model.embeddings.token_embedding"}
    %h = dit.token_embedding %i {weight = "text_model.embeddings.token_embedding", vocab_size = 49408 : i64, positions = "text_model.embeddings.position_embedding", max_positions = 77 : i64} : tensor<1x77xi64> -> tensor<1x77x8xf32>
    // CHECK: dit.eos_pool %{{.*}}, %{{.*}} {eos_token_id = 49407 : i64} : tensor<1x77x8xf32>, tensor<1x77xi64> -> tensor<1x8xf32>
    %p = dit.eos_pool %h, %i {eos_token_id = 49407 : i64} : tensor<1x77x8xf32>, tensor<1x77xi64> -> tensor<1x8xf32>
    dit.yield %p : tensor<1x8xf32>
  }
  return %out : tensor<1x8xf32>
}

// T5 without a padding mask computes one bias row that every prompt shares:
// a batch of 2 prompts attends with a bias of batch 1.
// CHECK-LABEL: func.func @t5_shared_bias
func.func @t5_shared_bias(%h: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // CHECK: dit.relative_position_bias {{.*}} : tensor<1x4x8x8xf32>
  %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias", num_buckets = 32 : i64, max_distance = 128 : i64} : tensor<1x4x8x8xf32>
  // CHECK: dit.attention self {{.*}} tensor<1x4x8x8xf32> -> tensor<2x8x16xf32>
  %a = dit.attention self %h, %h, %h, %b {num_heads = 4 : i64, head_dim = 4 : i64, scale = 1.0 : f64} : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<1x4x8x8xf32> -> tensor<2x8x16xf32>
  return %a : tensor<2x8x16xf32>
}
