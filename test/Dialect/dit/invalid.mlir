// Verifier errors, at least one per op and per attribute.
// RUN: dit-opt %s -split-input-file -verify-diagnostics

func.func @timestep_rank(%t: tensor<1x2xf32>) {
  // expected-error @+1 {{expects timesteps of shape [batch], got rank 2}}
  %0 = dit.timestep_embedding %t {freq_dim = 16 : i64, weight = "t"} : tensor<1x2xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @timestep_freq(%t: tensor<1xf32>) {
  // expected-error @+1 {{freq_dim must be a positive even number, got 15}}
  %0 = dit.timestep_embedding %t {freq_dim = 15 : i64, weight = "t"} : tensor<1xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @timestep_scale(%t: tensor<1xf32>) {
  // expected-error @+1 {{scale must be in (0, 1e6], got 0}}
  %0 = dit.timestep_embedding %t {freq_dim = 16 : i64, weight = "t", scale = 0.0 : f64} : tensor<1xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @patch_table_alone(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{pos_embed, pos_embed_max_size and grid come together; got pos_embed, no pos_embed_max_size, grid}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "pos_embed.proj", pos_embed = "pos_embed.pos_embed", grid = array<i64: 1, 4, 4>} : tensor<1x4x8x8xf32> -> tensor<1x16x8xf32>
  return
}

// -----

func.func @patch_table_fits(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{the 4x4 token grid does not fit pos_embed_max_size 3 (diffusers refuses it)}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "pos_embed.proj", pos_embed = "pos_embed.pos_embed", pos_embed_max_size = 3 : i64, grid = array<i64: 1, 4, 4>} : tensor<1x4x8x8xf32> -> tensor<1x16x8xf32>
  return
}

// -----

func.func @patch_table_frames(%x: tensor<1x4x2x8x8xf32>) {
  // expected-error @+1 {{a pos_embed table covers one frame, but the grid has 2}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "pos_embed.proj", pos_embed = "pos_embed.pos_embed", pos_embed_max_size = 8 : i64, grid = array<i64: 2, 4, 4>} : tensor<1x4x2x8x8xf32> -> tensor<1x32x8xf32>
  return
}

// -----

func.func @patch_table_tokens(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{grid 4x4 in 1 shard(s) does not give the 8 tokens of the result}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "pos_embed.proj", pos_embed = "pos_embed.pos_embed", pos_embed_max_size = 8 : i64, grid = array<i64: 1, 4, 4>} : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @patch_shards_without_table(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{sequence_shards only applies with a pos_embed table}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "p", sequence_shards = 2 : i64} : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @patch_divisibility(%x: tensor<1x4x2x5x4xf32>) {
  // expected-error @+1 {{latent grid 2x5x4 is not divisible by patch 1x2x2}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "p"} : tensor<1x4x2x5x4xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @patch_tokens(%x: tensor<1x4x2x4x4xf32>) {
  // expected-error @+1 {{expects result [1, 8, width] for latents 1x4x2x4x4, got 1x9x8}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "p"} : tensor<1x4x2x4x4xf32> -> tensor<1x9x8xf32>
  return
}

// -----

func.func @patch_conv2d_frames(%x: tensor<1x4x2x4x4xf32>) {
  // expected-error @+1 {{has a conv2d kernel but a temporal patch of 2; a 2-d convolution patches one frame}}
  %0 = dit.patch_embed %x {patch = array<i64: 2, 2, 2>, weight = "p", kernel = #dit<patch_kernel conv2d>} : tensor<1x4x2x4x4xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @patch_token_features(%x: tensor<1x4x18xf32>) {
  // expected-error @+1 {{expects patch tokens of C * 4 features for patch 1x2x2, got 18}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "p"} : tensor<1x4x18xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @patch_static(%x: tensor<1x4x?x4x4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "p"} : tensor<1x4x?x4x4xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @rope_axes(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{axes_dims sum to 5 but head_dim is 4}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 2, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @rope_tokens(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{grid holds 8 tokens plus 3 text tokens, but the input has 8}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 3 : i64, text_position = #dit<text_position prefix>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @linear_leading(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{leading dimensions differ: 1x8x8 vs 1x7x16}}
  %0 = dit.linear %x {weight = "w", bias = true} : tensor<1x8x8xf32> -> tensor<1x7x16xf32>
  return
}

// -----

func.func @linear_weight(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{needs a parameter name in 'weight'}}
  %0 = dit.linear %x {weight = "", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x16xf32>
  return
}

// -----

func.func @layer_norm_affine(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{is affine but names no 'weight'}}
  %0 = dit.layer_norm %x {affine = true, eps = 1.0e-6 : f64} : tensor<1x8x8xf32>
  return
}

// -----

func.func @rms_norm_group(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{group_size 3 does not divide the width 8}}
  %0 = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, group_size = 3 : i64} : tensor<1x8x8xf32>
  return
}

// -----

func.func @rms_norm_eps(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{eps must be a finite positive number, got 0.000000e+00}}
  %0 = dit.rms_norm %x {affine = false, eps = 0.0 : f64} : tensor<1x8x8xf32>
  return
}

// -----

// NaN compares false with everything, so `eps <= 0` alone let it through.
func.func @layer_norm_eps_nan(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{eps must be a finite positive number, got nan}}
  %0 = dit.layer_norm %x {affine = false, eps = 0x7FF8000000000000 : f64} : tensor<1x8x8xf32>
  return
}

// -----

func.func @rms_norm_eps_inf(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{eps must be a finite positive number, got INF}}
  %0 = dit.rms_norm %x {affine = false, eps = 0x7FF0000000000000 : f64} : tensor<1x8x8xf32>
  return
}

// -----

func.func @adaln_chunks(%t: tensor<1x8xf32>) {
  // expected-error @+1 {{expects result [1, 6, width], got 1x4x8}}
  %0 = dit.adaln_modulation %t {num_chunks = 6 : i64, weight = "m"} : tensor<1x8xf32> -> tensor<1x4x8xf32>
  return
}

// -----

func.func @modulate_index(%x: tensor<1x8x8xf32>, %m: tensor<1x2x8xf32>) {
  // expected-error @+1 {{chunk index 3 is outside the 2 chunks of params}}
  %0 = dit.modulate %x, %m {shift = 3 : i64, scale = 1 : i64} : tensor<1x8x8xf32>, tensor<1x2x8xf32>
  return
}

// -----

func.func @modulate_width(%x: tensor<1x8x8xf32>, %m: tensor<1x2x4xf32>) {
  // expected-error @+1 {{expects params [1, chunks, 8], got 1x2x4}}
  %0 = dit.modulate %x, %m {scale = 1 : i64} : tensor<1x8x8xf32>, tensor<1x2x4xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{q width 8 is not heads 3 x head_dim 4 = 12}}
  %0 = dit.attention self %q, %q, %q {num_heads = 3 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_kv(%q: tensor<1x8x8xf32>, %k: tensor<1x8x8xf32>, %v: tensor<1x6x8xf32>) {
  // expected-error @+1 {{k and v shapes differ: 1x8x8 vs 1x6x8}}
  %0 = dit.attention self %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x6x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_self_len(%q: tensor<1x8x8xf32>, %k: tensor<1x6x8xf32>) {
  // expected-error @+1 {{self attention needs as many keys as queries, got 6 keys for 8 queries}}
  %0 = dit.attention self %q, %k, %k {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_stacked_count(%q: tensor<1x8x24xf32>) {
  // expected-error @+1 {{with qkv_layout stacked expects 1 operands, got 3}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, qkv_layout = #dit<qkv_layout stacked>} : tensor<1x8x24xf32>, tensor<1x8x24xf32>, tensor<1x8x24xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_stacked_width(%q: tensor<1x8x16xf32>) {
  // expected-error @+1 {{stacked qkv width 16 is not 3 x heads 2 x head_dim 4 = 24}}
  %0 = dit.attention self %q {num_heads = 2 : i64, head_dim = 4 : i64, qkv_layout = #dit<qkv_layout stacked>} : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_joint_text(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{joint attention needs 0 < text_tokens < 8 tokens, got 0}}
  %0 = dit.attention joint %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_text_not_joint(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{text_tokens is only meaningful for joint attention, got 2}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, text_tokens = 2 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<1x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x8x8xf32>' are incompatible with return type(s) of operation 'tensor<1x8x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x4xf32>
  return
}

// -----

func.func @activation_gated(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x8x4xf32>' are incompatible with return type(s) of operation 'tensor<1x8x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dit.activation swiglu %x : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @activation_shape(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x8x8xf32>' are incompatible with return type(s) of operation 'tensor<1x8x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dit.activation gelu %x : tensor<1x8x8xf32> -> tensor<1x8x4xf32>
  return
}

// -----

func.func @residual_gate(%x: tensor<1x8x8xf32>, %m: tensor<1x2x8xf32>) {
  // expected-error @+1 {{gate_chunk 2 is outside the 2 chunks of the gate}}
  %0 = dit.residual_add %x, %x gate %m[2] : tensor<1x8x8xf32>, tensor<1x2x8xf32>
  return
}

// -----

func.func @residual_types(%x: tensor<1x8x8xf32>, %y: tensor<1x8x4xf32>) {
  // expected-error @+1 {{all of {residual, branch, result} have same type}}
  %0 = "dit.residual_add"(%x, %y) : (tensor<1x8x8xf32>, tensor<1x8x4xf32>) -> tensor<1x8x8xf32>
  return
}

// -----

func.func @concat_width(%t: tensor<1x3x4xf32>, %i: tensor<1x8x8xf32>) {
  // expected-error @+1 {{text 1x3x4 and image 1x8x8 differ in batch or width}}
  %0 = dit.concat_streams %t, %i {text_position = #dit<text_position prefix>} : tensor<1x3x4xf32>, tensor<1x8x8xf32> -> tensor<1x11x8xf32>
  return
}

// -----

func.func @concat_len(%t: tensor<1x3x8xf32>, %i: tensor<1x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x11x8xf32>' are incompatible with return type(s) of operation 'tensor<1x12x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dit.concat_streams %t, %i {text_position = #dit<text_position prefix>} : tensor<1x3x8xf32>, tensor<1x8x8xf32> -> tensor<1x12x8xf32>
  return
}

// -----

func.func @split_len(%j: tensor<1x11x8xf32>) {
  // expected-error @+1 {{text 3 + image 7 tokens do not add up to 11}}
  %0:2 = dit.split_streams %j {text_position = #dit<text_position prefix>} : tensor<1x11x8xf32> -> tensor<1x3x8xf32>, tensor<1x7x8xf32>
  return
}

// -----

func.func @unpatchify_grid(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{grid 2x2x3 holds 12 tokens, input has 8}}
  %0 = dit.unpatchify %x {patch = array<i64: 1, 2, 2>, grid = array<i64: 2, 2, 3>} : tensor<1x8x16xf32> -> tensor<1x4x2x4x6xf32>
  return
}

// -----

func.func @unpatchify_shape(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{expects result 1x4x2x4x4, got 1x4x2x4x8}}
  %0 = dit.unpatchify %x {patch = array<i64: 1, 2, 2>, grid = array<i64: 2, 2, 2>} : tensor<1x8x16xf32> -> tensor<1x4x2x4x8xf32>
  return
}

// -----

func.func @cfg_scales(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{2 branches need 1 guidance scales, got 2}}
  %0 = dit.cfg_combine %a, %b {guidance_scales = [5.0, 1.0]} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @cfg_one_branch(%a: tensor<1x4xf32>) {
  // expected-error @+1 {{needs at least 2 branches, got 1}}
  %0 = dit.cfg_combine %a {guidance_scales = []} : tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @cfg_types(%a: tensor<1x4xf32>, %b: tensor<1x5xf32>) {
  // expected-error @+1 {{'dit.cfg_combine' op requires the same type for all operands and results}}
  %0 = dit.cfg_combine %a, %b {guidance_scales = [5.0]} : tensor<1x4xf32>, tensor<1x5xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @scheduler_sigma(%x: tensor<1x4xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{operand #2 must be 0D tensor of any type values, but got 'tensor<1xf32>'}}
  %0 = dit.scheduler_step flow_match_euler %x, %x, %s, %s : tensor<1x4xf32>, tensor<1xf32>
  return
}

// -----

func.func @component_name() {
  // expected-error @+1 {{needs a class name}}
  %0 = dit.component text_encoder "" : () -> tensor<1x4xf32>
  return
}

// -----

func.func @component_outputs() {
  // expected-error @+1 {{must produce at least one output}}
  dit.component vae_decoder "AutoencoderKL" : () -> ()
  return
}

// -----

func.func @block_attr(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.block' must be a non-negative integer, got -1 : i64}}
  %0 = dit.linear %x {weight = "w", bias = true, dit.block = -1 : i64} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

// expected-error @+1 {{'dit.mesh' may only be set on the module}}
func.func @mesh_on_func() attributes {dit.mesh = #dit.mesh<tp = 2>} {
  return
}

// -----

// expected-error @+1 {{mesh axis 'tp' must have a positive size, got 0}}
module attributes {dit.mesh = #dit.mesh<tp = 0>} {}

// -----

// expected-error @+1 {{num_heads 3 x head_dim 4 = 12 does not equal hidden_size 8}}
module attributes {dit.model = #dit.model<family = "wan", class_name = "W", double_blocks = 0, single_blocks = 1, num_heads = 3, head_dim = 4, hidden_size = 8, ffn_size = 16, text_hidden_size = 8, text_embed_dim = 6, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>} {}

// -----

// expected-error @+1 {{workload image_tokens must be positive, got 0}}
module attributes {dit.workload = #dit.workload<batch = 1, height = 32, width = 32, frames = 1, latent_frames = 1, latent_height = 4, latent_width = 4, image_tokens = 0, text_tokens = 3, branches = 2, guidance_scale = 5.0 : f64, steps = 4>} {}

// -----

// expected-error @+1 {{'dit.model' expected #dit.model<...>, got #dit.mesh<tp = 2>}}
module attributes {dit.model = #dit.mesh<tp = 2>} {}

// -----

func.func @rope_shards(%x: tensor<1x3x8xf32>) {
  // expected-error @+1 {{sequence_shards 3 does not divide the grid's 8 tokens}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, sequence_shards = 3 : i64} : tensor<1x3x8xf32>
  return
}

// -----

func.func @patch_tokens(%x: tensor<1x4x16xf32>) {
  // expected-error @+1 {{expects result [1, 4, width] for patch tokens 1x4x16, got 1x8x8}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 2, 2>, weight = "p"} : tensor<1x4x16xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @stack_shape(%a: tensor<1x4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x1x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dit.stack %a, %a {axis = 1 : i64} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<2x1x4xf32>
  return
}

// -----

func.func @unstack_count(%a: tensor<1x3x4xf32>) {
  // expected-error @+1 {{dimension 1 has 3 slices, but the op has 2 results}}
  %0:2 = dit.unstack %a {axis = 1 : i64} : tensor<1x3x4xf32> -> tensor<1x4xf32>, tensor<1x4xf32>
  return
}

// -----

func.func @split_count(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{splits into 2 parts, but the op has 3 results}}
  %0:3 = dit.split %a {axis = 0 : i64, parts = 2 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @split_divides(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{dimension 1 of size 3 does not split into 2 equal parts}}
  %0:2 = dit.split %a {axis = 1 : i64, parts = 2 : i64} : tensor<4x3xf32> -> tensor<4x1xf32>, tensor<4x1xf32>
  return
}

// -----

func.func @split_axis(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{axis 2 is outside 0..1}}
  %0:2 = dit.split %a {axis = 2 : i64, parts = 2 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

// BatchParallel ops: every operand and result leads with the same batch.
func.func @batch_mismatch(%x: tensor<1x8x8xf32>, %m: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'dit.modulate' op is batch-parallel, but its operand #1 has batch 2 where the first operand has 1}}
  %0 = dit.modulate %x, %m {scale = 1 : i64, shift = 0 : i64} : tensor<1x8x8xf32>, tensor<2x6x8xf32>
  return
}

// -----

func.func @batch_result(%x: tensor<2x8x8xf32>) {
  // expected-error @+1 {{'dit.linear' op is batch-parallel, but its result #0 has batch 1 where the first operand has 2}}
  %0 = dit.linear %x {bias = false, weight = "w"} : tensor<2x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @cfg_select_slot(%a: tensor<1x4xf32>) {
  // expected-error @+1 {{slot 1 is outside the 1 branches each cfg rank runs}}
  %0 = dit.cfg_select %a, %a {slot = 1 : i64, cfg = 2 : i64} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @cfg_select_divides(%a: tensor<1x4xf32>) {
  // expected-error @+1 {{cfg 2 does not divide the 3 branch inputs}}
  %0 = dit.cfg_select %a, %a, %a {slot = 0 : i64, cfg = 2 : i64} : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

// expected-error @+1 {{mesh has more than 1048576 ranks (dp 1 x cfg 1 x pp 1 x ring 1 x kv_gather 1 x ulysses 4096 x tp 4096)}}
module attributes {dit.mesh = #dit.mesh<ulysses = 4096, tp = 4096>} {}

// -----

func.func @adaln_table_width(%t: tensor<1x5xf32>) {
  // expected-error @+1 {{a table modulation needs a condition of width 8 or 48, got 5}}
  %0 = dit.adaln_modulation %t {num_chunks = 6 : i64, weight = "blocks.0.scale_shift_table", table} : tensor<1x5xf32> -> tensor<1x6x8xf32>
  return
}

// -----

func.func @attention_types(%q: tensor<1x8x8xf32>, %v: tensor<1x8x8xf16>) {
  // expected-error @+1 {{'dit.attention' op requires the same element type for all operands and results}}
  %0 = dit.attention self %q, %q, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf16> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_huge_heads(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive whose maximum value is 1048576}}
  %0 = dit.attention self %q, %q, %q {num_heads = 4611686018427387904 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @linear_zero_width(%x: tensor<1x8x0xf32>) {
  // expected-error @+1 {{needs positive input and output widths, got 0 and 8}}
  %0 = dit.linear %x {weight = "w", bias = true} : tensor<1x8x0xf32> -> tensor<1x8x8xf32>
  return
}

// -----

// expected-error @+1 {{deployment places component 'transformer' twice}}
module attributes {dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>>, #dit.placement<component = "transformer", mesh = #dit.mesh<cfg = 2>>]>} {}

// -----

// expected-error @+1 {{signal names component 'image_encoder', which the deployment does not place}}
module attributes {dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>>], signals = [#dit.signal<from = "image_encoder", to = "transformer", shard_dim = 2>]>} {}

// -----

func.func @rope_ltx_axes(%x: tensor<1x12x32xf32>) {
  // expected-error @+1 {{an ltx rope over an even width 32 expects axes_dims [10, 10, 10], got [8, 8, 8]}}
  %0 = dit.rope %x {num_heads = 4 : i64, axes_dims = array<i64: 8, 8, 8>, grid = array<i64: 2, 2, 3>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, style = #dit<rope_style ltx>, coordinate_scale = array<f64: 0.016, 0.015625, 0.015625>} : tensor<1x12x32xf32>
  return
}

// -----

func.func @rope_ltx_scale(%x: tensor<1x12x32xf32>) {
  // expected-error @+1 {{an ltx rope needs coordinate_scale}}
  %0 = dit.rope %x {num_heads = 4 : i64, axes_dims = array<i64: 10, 10, 10>, grid = array<i64: 2, 2, 3>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, style = #dit<rope_style ltx>} : tensor<1x12x32xf32>
  return
}

// -----

func.func @rope_ltx_negative_scale(%x: tensor<1x12x32xf32>) {
  // expected-error @+1 {{coordinate_scale entry must be a finite positive number, got -1.000000e+00}}
  %0 = dit.rope %x {num_heads = 4 : i64, axes_dims = array<i64: 10, 10, 10>, grid = array<i64: 2, 2, 3>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, style = #dit<rope_style ltx>, coordinate_scale = array<f64: -1.0, 0.015625, 0.015625>} : tensor<1x12x32xf32>
  return
}

// -----

func.func @rope_axes_with_scale(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{coordinate_scale and head_shards belong to the ltx style; this rope has style axes}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, head_shards = 2 : i64} : tensor<1x8x8xf32>
  return
}

// -----

func.func @adaln_table_rank_without_table(%t: tensor<1x8xf32>) {
  // expected-error @+1 {{table_rank describes a learned table; this modulation has none}}
  %0 = dit.adaln_modulation %t {num_chunks = 6 : i64, weight = "norm.linear", table_rank = 2 : i64} : tensor<1x8xf32> -> tensor<1x6x8xf32>
  return
}

// -----

func.func @sincos_width(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{width 8 is not divisible by 16}}
  %0 = dit.sincos_pos_embed %x {grid = array<i64: 2, 2, 2>, spatial_scale = 1.0 : f64, temporal_scale = 1.0 : f64} : tensor<1x8x8xf32>
  return
}

// -----

func.func @sincos_tokens(%x: tensor<1x6x16xf32>) {
  // expected-error @+1 {{grid holds 8 tokens, but the input has 6}}
  %0 = dit.sincos_pos_embed %x {grid = array<i64: 2, 2, 2>, spatial_scale = 1.0 : f64, temporal_scale = 1.0 : f64} : tensor<1x6x16xf32>
  return
}

// -----

func.func @sincos_scale(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{spatial_scale must be a finite positive number, got 0.000000e+00}}
  %0 = dit.sincos_pos_embed %x {grid = array<i64: 2, 2, 2>, spatial_scale = 0.0 : f64, temporal_scale = 1.0 : f64} : tensor<1x8x16xf32>
  return
}

// -----

func.func @rope_offset(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{grid_offset and grid_step must be finite}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, grid_step = array<f64: 1.0, 0x7FF0000000000000, 1.0>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @token_mean_shape(%t: tensor<1x5x16xf32>) {
  // expected-error @+1 {{expects result [1, 16], got 1x5}}
  %0 = dit.token_mean %t : tensor<1x5x16xf32> -> tensor<1x5xf32>
  return
}

// -----

func.func @token_mean_mask_shape(%t: tensor<1x5x16xf32>, %m: tensor<1x4xf32>) {
  // expected-error @+1 {{mask 1x4 is not [1, 5]: one entry per token}}
  %0 = dit.token_mean %t mask %m : tensor<1x5x16xf32>, tensor<1x4xf32> -> tensor<1x16xf32>
  return
}

// -----

func.func @attention_pool_mask_shape(%t: tensor<1x5x16xf32>, %m: tensor<1x6xf32>) {
  // expected-error @+1 {{mask 1x6 is not [1, 5]: one entry per token}}
  %0 = dit.attention_pool %t mask %m {num_heads = 2 : i64, weight = "p"} : tensor<1x5x16xf32>, tensor<1x6xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @attention_key_mask_joint(%j: tensor<1x11x8xf32>, %m: tensor<1x11xf32>) {
  // expected-error @+1 {{key mask 1x11 is not [1, 3]: one entry per text key}}
  %0 = dit.attention joint %j, %j, %j, %m {num_heads = 2 : i64, head_dim = 4 : i64, text_tokens = 3 : i64, key_mask} : tensor<1x11x8xf32>, tensor<1x11x8xf32>, tensor<1x11x8xf32>, tensor<1x11xf32> -> tensor<1x11x8xf32>
  return
}

// -----

func.func @attention_key_mask_missing(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{with qkv_layout separate expects 3 or 4 (with a position bias) operands and a key mask, got 3}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, key_mask} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_key_mask_stacked(%q: tensor<1x8x24xf32>, %m: tensor<1x8xf32>) {
  // expected-error @+1 {{a key mask needs separate q, k and v}}
  %0 = dit.attention self %q, %m {num_heads = 2 : i64, head_dim = 4 : i64, qkv_layout = #dit<qkv_layout stacked>, key_mask} : tensor<1x8x24xf32>, tensor<1x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @tanh_gate_alone(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{tanh_gate needs a gate}}
  %0 = dit.residual_add %x, %x {tanh_gate} : tensor<1x8x8xf32>
  return
}

// -----

func.func @rope_learned_axes(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{learned frequencies (weight) need axes_dims = [4, 0, 0] and an even head_dim}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, weight = "pos_frequencies"} : tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_pool_heads(%t: tensor<1x5x12xf32>) {
  // expected-error @+1 {{width 12 is not divisible by 8 heads}}
  %0 = dit.attention_pool %t {num_heads = 8 : i64, weight = "time_embed.pooler"} : tensor<1x5x12xf32> -> tensor<1x32xf32>
  return
}

// -----

func.func @rope_theta_nan(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{theta must be a finite positive number, got nan}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 0x7FF8000000000000 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @rope_theta_negative(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{theta must be a finite positive number, got -1.000000e+04}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = -1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @sincos_scale_inf(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{temporal_scale must be a finite positive number, got INF}}
  %0 = dit.sincos_pos_embed %x {grid = array<i64: 2, 2, 2>, spatial_scale = 1.0 : f64, temporal_scale = 0x7FF0000000000000 : f64} : tensor<1x8x16xf32>
  return
}

// -----

func.func @cfg_scale_nan(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{guidance scales must be finite, got nan}}
  %0 = dit.cfg_combine %a, %b {guidance_scales = [0x7FF8000000000000 : f64]} : tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

// expected-error @+1 {{workload guidance_scale must be a finite number, got 0x7FF8000000000000 : f64}}
module attributes {dit.workload = #dit.workload<batch = 1, height = 32, width = 32, frames = 1, latent_frames = 1, latent_height = 4, latent_width = 4, image_tokens = 4, text_tokens = 3, branches = 2, guidance_scale = 0x7FF8000000000000 : f64, steps = 4>} {}

// -----

// The cost model and the runtime pick per-family rules by this name.
// expected-error @+1 {{model family 'wann' is not one of cogvideox, flux, hunyuan_video, ltx_video, mochi, qwen_image, sd3, wan}}
module attributes {dit.model = #dit.model<family = "wann", class_name = "W", double_blocks = 0, single_blocks = 1, num_heads = 2, head_dim = 4, hidden_size = 8, ffn_size = 16, text_hidden_size = 8, text_embed_dim = 6, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>} {}
