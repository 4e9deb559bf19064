// Round trip of every dit op through the custom and the generic format.
// RUN: dit-opt %s | dit-opt | FileCheck %s
// RUN: dit-opt %s --mlir-print-op-generic | dit-opt | FileCheck %s

module attributes {
  dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel",
    double_blocks = 0, single_blocks = 1, num_heads = 2, head_dim = 4,
    hidden_size = 8, ffn_size = 16, text_hidden_size = 8, text_embed_dim = 6,
    in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8,
    vae_temporal = 4, seq_align = 1, experts = 1>,
  dit.workload = #dit.workload<batch = 1, height = 32, width = 32, frames = 5,
    latent_frames = 2, latent_height = 4, latent_width = 4, image_tokens = 8,
    text_tokens = 3, branches = 2, guidance_scale = 5.0 : f64, steps = 4>,
  dit.mesh = #dit.mesh<dp = 1, cfg = 2, pp = 1, ring = 1, kv_gather = 1, ulysses = 2, tp = 2>
} {

// Module attributes print in name order; axes of size 1 are elided.
// CHECK: module attributes {dit.mesh = #dit.mesh<cfg = 2, ulysses = 2, tp = 2>
// CHECK-SAME: dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 1, num_heads = 2, head_dim = 4, hidden_size = 8
// CHECK-SAME: patch = [1, 2, 2]
// CHECK-SAME: dit.workload = #dit.workload<batch = 1, height = 32, width = 32, frames = 5, latent_frames = 2, latent_height = 4, latent_width = 4, image_tokens = 8, text_tokens = 3, branches = 2

// CHECK-LABEL: func.func @embeddings
func.func @embeddings(%latents: tensor<1x4x2x4x4xf32>, %image: tensor<1x4x4x4xf32>, %t: tensor<1xf32>) -> (tensor<1x8x8xf32>, tensor<1x4x8xf32>, tensor<1x8xf32>) {
  // CHECK: dit.patch_embed %{{.*}} {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.patch_embed %{{.*}} {patch = array<i64: 1, 2, 2>, weight = "x_embedder"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  %y = dit.patch_embed %image {patch = array<i64: 1, 2, 2>, weight = "x_embedder"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  // The diffusers module and the token feature order print when they are
  // not the defaults (linear, channels_last).
  // CHECK: dit.patch_embed %{{.*}} {features = #dit<feature_order channels_first>, kernel = #dit<patch_kernel conv3d>, patch = array<i64: 1, 2, 2>, weight = "x_embedder.proj"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  %z = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "x_embedder.proj", kernel = #dit<patch_kernel conv3d>, features = #dit<feature_order channels_first>} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.timestep_embedding %{{.*}} {freq_dim = 16 : i64, weight = "time_embedder"} : tensor<1xf32> -> tensor<1x8xf32>
  %temb = dit.timestep_embedding %t {freq_dim = 16 : i64, weight = "time_embedder"} : tensor<1xf32> -> tensor<1x8xf32>
  // CHECK: dit.timestep_embedding %{{.*}} {freq_dim = 16 : i64, scale = 1.000000e+03 : f64, weight = "guidance_embedder"}
  %g = dit.timestep_embedding %t {freq_dim = 16 : i64, weight = "guidance_embedder", scale = 1000.0 : f64} : tensor<1xf32> -> tensor<1x8xf32>
  // SD3: the centre crop of a 3 x 3 position table over a 2 x 2 grid.
  // CHECK: dit.patch_embed %{{.*}} {grid = array<i64: 1, 2, 2>, patch = array<i64: 1, 2, 2>, pos_embed = "pos_embed.pos_embed", pos_embed_max_size = 3 : i64, weight = "pos_embed.proj"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  %w = dit.patch_embed %image {patch = array<i64: 1, 2, 2>, weight = "pos_embed.proj", pos_embed = "pos_embed.pos_embed", pos_embed_max_size = 3 : i64, grid = array<i64: 1, 2, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  return %x, %y, %temb : tensor<1x8x8xf32>, tensor<1x4x8xf32>, tensor<1x8xf32>
}

// CHECK-LABEL: func.func @block
func.func @block(%x: tensor<1x8x8xf32>, %temb: tensor<1x8xf32>, %text: tensor<1x3x8xf32>) -> tensor<1x8x8xf32> {
  // CHECK: dit.adaln_modulation %{{.*}} {dit.block = 0 : i64, num_chunks = 6 : i64, weight = "blocks.0.scale_shift_table"} : tensor<1x8xf32> -> tensor<1x6x8xf32>
  %mod = dit.adaln_modulation %temb {num_chunks = 6 : i64, weight = "blocks.0.scale_shift_table", dit.block = 0 : i64} : tensor<1x8xf32> -> tensor<1x6x8xf32>
  // CHECK: dit.adaln_modulation %{{.*}} {num_chunks = 2 : i64, table, weight = "scale_shift_table"} : tensor<1x8xf32> -> tensor<1x2x8xf32>
  %tab = dit.adaln_modulation %temb {num_chunks = 2 : i64, weight = "scale_shift_table", table} : tensor<1x8xf32> -> tensor<1x2x8xf32>
  // CHECK: dit.layer_norm %{{.*}} {affine = false, eps = {{[^,}]+}}} : tensor<1x8x8xf32>
  %n = dit.layer_norm %x {affine = false, eps = 1.0e-6 : f64} : tensor<1x8x8xf32>
  // CHECK: dit.layer_norm %{{.*}} {affine = true, eps = {{[^,}]+}}, group_size = 4 : i64, weight = "norm2"} : tensor<1x8x8xf32>
  %n2 = dit.layer_norm %x {affine = true, eps = 1.0e-6 : f64, weight = "norm2", group_size = 4 : i64} : tensor<1x8x8xf32>
  // CHECK: dit.modulate %{{.*}}, %{{.*}} {scale = 1 : i64, shift = 0 : i64} : tensor<1x8x8xf32>, tensor<1x6x8xf32>
  %m = dit.modulate %n, %mod {shift = 0 : i64, scale = 1 : i64} : tensor<1x8x8xf32>, tensor<1x6x8xf32>
  // CHECK: dit.modulate %{{.*}}, %{{.*}} {scale = 4 : i64} : tensor<1x8x8xf32>, tensor<1x6x8xf32>
  %ms = dit.modulate %n2, %mod {scale = 4 : i64} : tensor<1x8x8xf32>, tensor<1x6x8xf32>
  // CHECK: dit.linear %{{.*}} {bias = true, weight = "blocks.0.attn1.to_q"} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %q = dit.linear %m {weight = "blocks.0.attn1.to_q", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %k = dit.linear %m {weight = "blocks.0.attn1.to_k", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %v = dit.linear %m {weight = "blocks.0.attn1.to_v", bias = false} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.rms_norm %{{.*}} {affine = true, eps = {{[^,}]+}}, group_size = 4 : i64, weight = "norm_q"} : tensor<1x8x8xf32>
  %qn = dit.rms_norm %q {affine = true, eps = 1.0e-6 : f64, weight = "norm_q", group_size = 4 : i64} : tensor<1x8x8xf32>
  // CHECK: dit.rms_norm %{{.*}} {affine = false, eps = {{[^,}]+}}} : tensor<1x8x8xf32>
  %kn = dit.rms_norm %k {affine = false, eps = 1.0e-6 : f64} : tensor<1x8x8xf32>
  // CHECK: dit.rope %{{.*}} {axes_dims = array<i64: 2, 0, 2>, grid = array<i64: 2, 2, 2>, num_heads = 2 : i64, text_position = #dit<text_position prefix>, text_tokens = 0 : i64, theta = 1.000000e+04 : f64} : tensor<1x8x8xf32>
  %qr = dit.rope %qn {num_heads = 2 : i64, axes_dims = array<i64: 2, 0, 2>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>} : tensor<1x8x8xf32>
  // Qwen-Image's centred positions.
  // CHECK: dit.rope %{{.*}} {axes_dims = array<i64: 2, 0, 2>, centered, grid = array<i64: 2, 2, 2>
  %qc = dit.rope %qn {num_heads = 2 : i64, axes_dims = array<i64: 2, 0, 2>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, centered} : tensor<1x8x8xf32>
  // CHECK: dit.attention self %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64, num_heads = 2 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %o = dit.attention self %qr, %kn, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.attention self %{{.*}}, %{{.*}}, %{{.*}} {backend = "fa", head_dim = 4 : i64, kv_cache = #dit<kv_cache paged>, num_heads = 2 : i64, shard_over_sp = false, varlen = true}
  %o2 = dit.attention self %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64, backend = "fa", kv_cache = #dit<kv_cache paged>, shard_over_sp = false, varlen = true} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.residual_add %{{.*}}, %{{.*}} gate %{{.*}}[2] : tensor<1x8x8xf32>, tensor<1x6x8xf32>
  %r = dit.residual_add %x, %o gate %mod[2] : tensor<1x8x8xf32>, tensor<1x6x8xf32>
  // CHECK: dit.residual_add %{{.*}}, %{{.*}} : tensor<1x8x8xf32>
  %r2 = dit.residual_add %r, %o2 : tensor<1x8x8xf32>
  %cq = dit.linear %r2 {weight = "blocks.0.attn2.to_q", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.attention cross %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64, num_heads = 2 : i64} : tensor<1x8x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32> -> tensor<1x8x8xf32>
  %co = dit.attention cross %cq, %text, %text {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32> -> tensor<1x8x8xf32>
  %up = dit.linear %co {weight = "ffn.net.0.proj", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x16xf32>
  // CHECK: dit.activation gelu_tanh %{{.*}} : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
  %a = dit.activation gelu_tanh %up : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
  // CHECK: dit.activation swiglu %{{.*}} : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
  %g = dit.activation swiglu %a : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
  return %g : tensor<1x8x8xf32>
}

// CHECK-LABEL: func.func @joint
func.func @joint(%txt: tensor<1x3x8xf32>, %img: tensor<1x8x8xf32>, %qkv: tensor<1x11x24xf32>) -> (tensor<1x3x8xf32>, tensor<1x8x8xf32>, tensor<1x11x8xf32>) {
  // CHECK: dit.concat_streams %{{.*}}, %{{.*}} {text_position = #dit<text_position prefix>} : tensor<1x3x8xf32>, tensor<1x8x8xf32> -> tensor<1x11x8xf32>
  %j = dit.concat_streams %txt, %img {text_position = #dit<text_position prefix>} : tensor<1x3x8xf32>, tensor<1x8x8xf32> -> tensor<1x11x8xf32>
  // CHECK: dit.rope %{{.*}} {axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, num_heads = 2 : i64, text_position = #dit<text_position suffix>, text_tokens = 3 : i64
  %jr = dit.rope %j {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 256.0 : f64, text_tokens = 3 : i64, text_position = #dit<text_position suffix>} : tensor<1x11x8xf32>
  // CHECK: dit.attention joint %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64, num_heads = 2 : i64, text_tokens = 3 : i64} : tensor<1x11x8xf32>, tensor<1x11x8xf32>, tensor<1x11x8xf32> -> tensor<1x11x8xf32>
  %o = dit.attention joint %jr, %jr, %j {num_heads = 2 : i64, head_dim = 4 : i64, text_tokens = 3 : i64} : tensor<1x11x8xf32>, tensor<1x11x8xf32>, tensor<1x11x8xf32> -> tensor<1x11x8xf32>
  // CHECK: dit.attention joint %{{.*}} {head_dim = 4 : i64, num_heads = 2 : i64, qkv_layout = #dit<qkv_layout stacked>, text_position = #dit<text_position suffix>, text_tokens = 3 : i64} : tensor<1x11x24xf32> -> tensor<1x11x8xf32>
  %s = dit.attention joint %qkv {num_heads = 2 : i64, head_dim = 4 : i64, qkv_layout = #dit<qkv_layout stacked>, text_tokens = 3 : i64, text_position = #dit<text_position suffix>} : tensor<1x11x24xf32> -> tensor<1x11x8xf32>
  // CHECK: dit.split_streams %{{.*}} {text_position = #dit<text_position prefix>} : tensor<1x11x8xf32> -> tensor<1x3x8xf32>, tensor<1x8x8xf32>
  %t, %i = dit.split_streams %o {text_position = #dit<text_position prefix>} : tensor<1x11x8xf32> -> tensor<1x3x8xf32>, tensor<1x8x8xf32>
  return %t, %i, %s : tensor<1x3x8xf32>, tensor<1x8x8xf32>, tensor<1x11x8xf32>
}

// A text mask [B, L]: the token mean of the valid rows, and joint and
// text-only attention that attend only valid text keys.
// CHECK-LABEL: func.func @text_mask
func.func @text_mask(%txt: tensor<1x3x8xf32>, %j: tensor<1x11x8xf32>, %mask: tensor<1x3xf32>) -> (tensor<1x8xf32>, tensor<1x11x8xf32>, tensor<1x3x8xf32>) {
  // CHECK: dit.token_mean %{{.*}} mask %{{.*}} : tensor<1x3x8xf32>, tensor<1x3xf32> -> tensor<1x8xf32>
  %m = dit.token_mean %txt mask %mask : tensor<1x3x8xf32>, tensor<1x3xf32> -> tensor<1x8xf32>
  // CHECK: dit.attention_pool %{{.*}} mask %{{.*}} {num_heads = 2 : i64, weight = "pooler"} : tensor<1x3x8xf32>, tensor<1x3xf32> -> tensor<1x8xf32>
  %p = dit.attention_pool %txt mask %mask {num_heads = 2 : i64, weight = "pooler"} : tensor<1x3x8xf32>, tensor<1x3xf32> -> tensor<1x8xf32>
  // CHECK: dit.attention joint %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64, key_mask, num_heads = 2 : i64, text_position = #dit<text_position suffix>, text_tokens = 3 : i64, varlen = true}
  %o = dit.attention joint %j, %j, %j, %mask {num_heads = 2 : i64, head_dim = 4 : i64, text_tokens = 3 : i64, text_position = #dit<text_position suffix>, varlen = true, key_mask} : tensor<1x11x8xf32>, tensor<1x11x8xf32>, tensor<1x11x8xf32>, tensor<1x3xf32> -> tensor<1x11x8xf32>
  // CHECK: dit.attention self %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {head_dim = 4 : i64, key_mask, num_heads = 2 : i64, varlen = true}
  %r = dit.attention self %txt, %txt, %txt, %mask {num_heads = 2 : i64, head_dim = 4 : i64, varlen = true, key_mask} : tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32>, tensor<1x3xf32> -> tensor<1x3x8xf32>
  return %m, %o, %r : tensor<1x8xf32>, tensor<1x11x8xf32>, tensor<1x3x8xf32>
}

// CHECK-LABEL: func.func @denoise
func.func @denoise(%x: tensor<1x8x16xf32>, %latents: tensor<1x4x2x4x4xf32>, %u: tensor<1x4x2x4x4xf32>, %s: tensor<f32>, %sn: tensor<f32>) -> (tensor<1x4x2x4x4xf32>, tensor<1x3x2x32x32xf32>, tensor<1x4x4x4xf32>) {
  // CHECK: dit.unpatchify %{{.*}} {grid = array<i64: 2, 2, 2>, patch = array<i64: 1, 2, 2>} : tensor<1x8x16xf32> -> tensor<1x4x2x4x4xf32>
  %c = dit.unpatchify %x {patch = array<i64: 1, 2, 2>, grid = array<i64: 2, 2, 2>} : tensor<1x8x16xf32> -> tensor<1x4x2x4x4xf32>
  %img = tensor.extract_slice %x[0, 0, 0] [1, 4, 16] [1, 1, 1] : tensor<1x8x16xf32> to tensor<1x4x16xf32>
  // CHECK: dit.unpatchify %{{.*}} {grid = array<i64: 1, 2, 2>, patch = array<i64: 1, 2, 2>} : tensor<1x4x16xf32> -> tensor<1x4x4x4xf32>
  %i = dit.unpatchify %img {patch = array<i64: 1, 2, 2>, grid = array<i64: 1, 2, 2>} : tensor<1x4x16xf32> -> tensor<1x4x4x4xf32>
  // CHECK: dit.cfg_combine %{{.*}}, %{{.*}} {guidance_scales = [5.000000e+00]} : tensor<1x4x2x4x4xf32>, tensor<1x4x2x4x4xf32> -> tensor<1x4x2x4x4xf32>
  %g = dit.cfg_combine %c, %u {guidance_scales = [5.0]} : tensor<1x4x2x4x4xf32>, tensor<1x4x2x4x4xf32> -> tensor<1x4x2x4x4xf32>
  // CHECK: dit.scheduler_step flow_match_euler %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x4x2x4x4xf32>, tensor<f32>
  %n = dit.scheduler_step flow_match_euler %latents, %g, %s, %sn : tensor<1x4x2x4x4xf32>, tensor<f32>
  // CHECK: dit.component vae_decoder "AutoencoderKLWan"(%{{.*}}) : (tensor<1x4x2x4x4xf32>) -> tensor<1x3x2x32x32xf32>
  %v = dit.component vae_decoder "AutoencoderKLWan"(%n) : (tensor<1x4x2x4x4xf32>) -> tensor<1x3x2x32x32xf32>
  return %n, %v, %i : tensor<1x4x2x4x4xf32>, tensor<1x3x2x32x32xf32>, tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @components
func.func @components() -> (tensor<1x3x6xf32>, tensor<1x4xf32>) {
  // CHECK: dit.component text_encoder "UMT5EncoderModel" : () -> tensor<1x3x6xf32>
  %t = dit.component text_encoder "UMT5EncoderModel" : () -> tensor<1x3x6xf32>
  // CHECK: dit.component image_encoder "CLIPVisionModel" : () -> tensor<1x4xf32>
  %p = dit.component image_encoder "CLIPVisionModel" : () -> tensor<1x4xf32>
  return %t, %p : tensor<1x3x6xf32>, tensor<1x4xf32>
}

// CHECK-LABEL: func.func @partitioned
func.func @partitioned(%tokens: tensor<1x4x16xf32>, %q: tensor<1x4x8xf32>, %c: tensor<1x3x8xf32>, %u: tensor<1x3x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x3x8xf32>) {
  // CHECK: dit.patch_embed %{{.*}} {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  %x = dit.patch_embed %tokens {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x16xf32> -> tensor<1x4x8xf32>
  // CHECK: dit.rope %{{.*}} {axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, num_heads = 2 : i64, sequence_shards = 2 : i64
  %r = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, sequence_shards = 2 : i64} : tensor<1x4x8xf32>
  // CHECK: dit.stack %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x3x8xf32>
  %s = dit.stack %r, %q, %q {axis = 2 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x3x8xf32>
  // CHECK: dit.unstack %{{.*}} {axis = 2 : i64} : tensor<1x4x3x8xf32> -> tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
  %a, %b, %d = dit.unstack %s {axis = 2 : i64} : tensor<1x4x3x8xf32> -> tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>
  // CHECK: dit.split %{{.*}} {axis = 1 : i64, parts = 2 : i64} : tensor<1x4x3x8xf32> -> tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>
  %h0, %h1 = dit.split %s {axis = 1 : i64, parts = 2 : i64} : tensor<1x4x3x8xf32> -> tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>
  // CHECK: dit.cfg_select %{{.*}}, %{{.*}} {cfg = 2 : i64, slot = 0 : i64} : tensor<1x3x8xf32>, tensor<1x3x8xf32> -> tensor<1x3x8xf32>
  %t = dit.cfg_select %c, %u {slot = 0 : i64, cfg = 2 : i64} : tensor<1x3x8xf32>, tensor<1x3x8xf32> -> tensor<1x3x8xf32>
  return %a, %t : tensor<1x4x8xf32>, tensor<1x3x8xf32>
}

// LTX-Video: a rope over all heads at fractional positions (this rank holds
// one of 2 tp blocks of a 64-wide table), and an [N, D] modulation table.
// CHECK-LABEL: func.func @ltx
func.func @ltx(%q: tensor<1x12x32xf32>, %temb: tensor<1x192xf32>) -> (tensor<1x12x32xf32>, tensor<1x6x32xf32>) {
  // CHECK: dit.rope %{{.*}} {axes_dims = array<i64: 20, 20, 20>, coordinate_scale = array<f64: 1.600000e-02, 1.562500e-02, 1.562500e-02>, grid = array<i64: 2, 2, 3>, head_shards = 2 : i64, num_heads = 2 : i64, style = #dit<rope_style ltx>
  %r = dit.rope %q {num_heads = 2 : i64, axes_dims = array<i64: 20, 20, 20>, grid = array<i64: 2, 2, 3>, theta = 1.0e4 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>, style = #dit<rope_style ltx>, coordinate_scale = array<f64: 0.016, 0.015625, 0.015625>, head_shards = 2 : i64} : tensor<1x12x32xf32>
  // CHECK: dit.adaln_modulation %{{.*}} {num_chunks = 6 : i64, table, table_rank = 2 : i64, weight = "transformer_blocks.0.scale_shift_table"}
  %m = dit.adaln_modulation %temb {num_chunks = 6 : i64, weight = "transformer_blocks.0.scale_shift_table", table, table_rank = 2 : i64} : tensor<1x192xf32> -> tensor<1x6x32xf32>
  return %r, %m : tensor<1x12x32xf32>, tensor<1x6x32xf32>
}
}

// CHECK-LABEL: func.func @positions
func.func @positions(%x: tensor<1x8x16xf32>, %q: tensor<1x11x8xf32>) -> (tensor<1x8x16xf32>, tensor<1x11x8xf32>) {
  // CHECK: dit.sincos_pos_embed %{{.*}} {grid = array<i64: 2, 2, 2>, spatial_scale = 1.875000e+00 : f64, temporal_scale = 1.000000e+00 : f64} : tensor<1x8x16xf32>
  %p = dit.sincos_pos_embed %x {grid = array<i64: 2, 2, 2>, spatial_scale = 1.875 : f64, temporal_scale = 1.0 : f64} : tensor<1x8x16xf32>
  // CHECK: dit.rope %{{.*}} {axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, grid_offset = array<f64: 0.000000e+00, 0.000000e+00, 8.000000e+00>, grid_step = array<f64: 1.000000e+00, 7.500000e+00, 6.812500e+00>
  %r = dit.rope %q {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 3 : i64, text_position = #dit<text_position prefix>, grid_offset = array<f64: 0.0, 0.0, 8.0>, grid_step = array<f64: 1.0, 7.5, 6.8125>} : tensor<1x11x8xf32>
  return %p, %r : tensor<1x8x16xf32>, tensor<1x11x8xf32>
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%t: tensor<1x5x16xf32>) -> tensor<1x16xf32> {
  // CHECK: dit.token_mean %{{.*}} : tensor<1x5x16xf32> -> tensor<1x16xf32>
  %m = dit.token_mean %t : tensor<1x5x16xf32> -> tensor<1x16xf32>
  return %m : tensor<1x16xf32>
}

// CHECK-LABEL: func.func @mochi
func.func @mochi(%t: tensor<1x5x16xf32>, %q: tensor<1x11x8xf32>, %x: tensor<1x8x8xf32>, %y: tensor<1x8x8xf32>, %m: tensor<1x4x8xf32>) -> (tensor<1x32xf32>, tensor<1x11x8xf32>, tensor<1x8x8xf32>) {
  // CHECK: dit.attention_pool %{{.*}} {num_heads = 8 : i64, weight = "time_embed.pooler"} : tensor<1x5x16xf32> -> tensor<1x32xf32>
  %p = dit.attention_pool %t {num_heads = 8 : i64, weight = "time_embed.pooler"} : tensor<1x5x16xf32> -> tensor<1x32xf32>
  // CHECK: dit.rope %{{.*}} {axes_dims = array<i64: 4, 0, 0>, {{.*}}weight = "pos_frequencies"} : tensor<1x11x8xf32>
  %r = dit.rope %q {num_heads = 2 : i64, axes_dims = array<i64: 4, 0, 0>, grid = array<i64: 2, 2, 2>, theta = 1.0e4 : f64, text_tokens = 3 : i64, text_position = #dit<text_position suffix>, weight = "pos_frequencies"} : tensor<1x11x8xf32>
  // CHECK: dit.residual_add %{{.*}}, %{{.*}} gate %{{.*}}[1] {tanh_gate} : tensor<1x8x8xf32>, tensor<1x4x8xf32>
  %g = dit.residual_add %x, %y gate %m[1] {tanh_gate} : tensor<1x8x8xf32>, tensor<1x4x8xf32>
  return %p, %r, %g : tensor<1x32xf32>, tensor<1x11x8xf32>, tensor<1x8x8xf32>
}
