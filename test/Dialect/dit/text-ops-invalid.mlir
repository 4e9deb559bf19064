// Verifier errors of the text encoders' ops.
// RUN: dit-opt %s -split-input-file -verify-diagnostics

func.func @embedding_ids_not_integers(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{expects the ids to be [batch, tokens] integers, got 1x8 of 'f32'}}
  %0 = dit.token_embedding %x {weight = "shared", vocab_size = 32 : i64} : tensor<1x8xf32> -> tensor<1x8x16xf32>
  return
}

// -----

func.func @embedding_result_shape(%x: tensor<1x8xi64>) {
  // expected-error @+1 {{result 1x7x16 is not [1x8 x width]}}
  %0 = dit.token_embedding %x {weight = "shared", vocab_size = 32 : i64} : tensor<1x8xi64> -> tensor<1x7x16xf32>
  return
}

// -----

func.func @embedding_positions_alone(%x: tensor<1x8xi64>) {
  // expected-error @+1 {{positions and max_positions come together}}
  %0 = dit.token_embedding %x {weight = "t", vocab_size = 32 : i64, positions = "p"} : tensor<1x8xi64> -> tensor<1x8x16xf32>
  return
}

// -----

func.func @embedding_too_many_tokens(%x: tensor<1x80xi64>) {
  // expected-error @+1 {{80 tokens exceed the 77 learned positions}}
  %0 = dit.token_embedding %x {weight = "t", vocab_size = 32 : i64, positions = "p", max_positions = 77 : i64} : tensor<1x80xi64> -> tensor<1x80x16xf32>
  return
}

// -----

func.func @embedding_no_weight(%x: tensor<1x8xi64>) {
  // expected-error @+1 {{needs a parameter name in 'weight'}}
  %0 = dit.token_embedding %x {weight = "", vocab_size = 32 : i64} : tensor<1x8xi64> -> tensor<1x8x16xf32>
  return
}

// -----

func.func @bias_not_square() {
  // expected-error @+1 {{result 1x4x8x7 is not [batch or 1, heads, tokens, tokens]}}
  %0 = dit.relative_position_bias {weight = "b", num_buckets = 32 : i64, max_distance = 128 : i64} : tensor<1x4x8x7xf32>
  return
}

// -----

func.func @bias_odd_buckets() {
  // expected-error @+1 {{num_buckets must be even, 2 to 4096, got 31}}
  %0 = dit.relative_position_bias {weight = "b", num_buckets = 31 : i64, max_distance = 128 : i64} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @bias_batch_without_mask() {
  // expected-error @+1 {{without a mask the bias is one row, got batch 2}}
  %0 = dit.relative_position_bias {weight = "b", num_buckets = 32 : i64, max_distance = 128 : i64} : tensor<2x4x8x8xf32>
  return
}

// -----

func.func @bias_mask_mismatch(%m: tensor<2x6xi64>) {
  // expected-error @+1 {{mask 2x6 does not match the bias 2x4x8x8}}
  %0 = dit.relative_position_bias %m : tensor<2x6xi64> {weight = "b", num_buckets = 32 : i64, max_distance = 128 : i64} : tensor<2x4x8x8xf32>
  return
}

// -----

func.func @pool_ids_mismatch(%h: tensor<1x8x16xf32>, %i: tensor<1x7xi64>) {
  // expected-error @+1 {{ids 1x7 do not match the states 1x8x16}}
  %0 = dit.eos_pool %h, %i {eos_token_id = 2 : i64} : tensor<1x8x16xf32>, tensor<1x7xi64> -> tensor<1x16xf32>
  return
}

// -----

func.func @pool_result(%h: tensor<1x8x16xf32>, %i: tensor<1x8xi64>) {
  // expected-error @+1 {{result 1x8 is not [batch, width] of 1x8x16}}
  %0 = dit.eos_pool %h, %i {eos_token_id = 2 : i64} : tensor<1x8x16xf32>, tensor<1x8xi64> -> tensor<1x8xf32>
  return
}

// -----

func.func @pool_negative_eos(%h: tensor<1x8x16xf32>, %i: tensor<1x8xi64>) {
  // expected-error @+1 {{eos_token_id must be a token id (0 or more), got -1}}
  %0 = dit.eos_pool %h, %i {eos_token_id = -1 : i64} : tensor<1x8x16xf32>, tensor<1x8xi64> -> tensor<1x16xf32>
  return
}

// -----

func.func @mask_rows_mismatch(%h: tensor<2x8x16xf32>, %m: tensor<2x4xi64>) {
  // expected-error @+1 {{mask 2x4 does not match the states 2x8x16}}
  %0 = dit.mask_rows %h, %m : tensor<2x8x16xf32>, tensor<2x4xi64>
  return
}

// -----

func.func @mul_types(%a: tensor<2x8x16xf32>, %b: tensor<2x8x8xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "dit.mul"(%a, %b) : (tensor<2x8x16xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  return
}

// -----

// A bias is one row or one per prompt; three rows for two prompts is neither.
func.func @bias_batch_mismatch(%h: tensor<2x8x16xf32>, %b: tensor<3x4x8x8xf32>) {
  // expected-error @+1 {{is batch-parallel, but its operand #3 has batch 3 where the first operand has 2}}
  %a = dit.attention self %h, %h, %h, %b {num_heads = 4 : i64, head_dim = 4 : i64} : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<3x4x8x8xf32> -> tensor<2x8x16xf32>
  return
}
