// Round trip of the VAE decoder's ops, in a decoder body, through the
// custom and the generic format.
// RUN: dit-opt %s | dit-opt | FileCheck %s
// RUN: dit-opt %s --mlir-print-op-generic | dit-opt | FileCheck %s

// CHECK-LABEL: func.func @image_decoder
func.func @image_decoder(%l: tensor<1x4x4x4xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: dit.component vae_decoder "AutoencoderKL"(%{{.*}}) : (tensor<1x4x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %p = dit.component vae_decoder "AutoencoderKL"(%l) : (tensor<1x4x4x4xf32>) -> tensor<1x3x8x8xf32> {
  ^bb0(%z: tensor<1x4x4x4xf32>):
    // CHECK: dit.denormalize_latents %{{.*}} {scale = array<f64: 2.000000e+00>, shift = array<f64: 1.000000e-01>} : tensor<1x4x4x4xf32>
    %d = dit.denormalize_latents %z {scale = array<f64: 2.0>, shift = array<f64: 0.1>} : tensor<1x4x4x4xf32>
    // CHECK: dit.conv %{{.*}} {kernel = array<i64: 3, 3>, weight = "decoder.conv_in"} : tensor<1x4x4x4xf32> -> tensor<1x8x4x4xf32>
    %x = dit.conv %d {weight = "decoder.conv_in", kernel = array<i64: 3, 3>} : tensor<1x4x4x4xf32> -> tensor<1x8x4x4xf32>
    // CHECK: dit.group_norm %{{.*}} {eps = 9.9999999999999995E-7 : f64, num_groups = 2 : i64, weight = "decoder.mid_block.attentions.0.group_norm"} : tensor<1x8x4x4xf32>
    %n = dit.group_norm %x {num_groups = 2 : i64, eps = 1.0e-06 : f64, weight = "decoder.mid_block.attentions.0.group_norm"} : tensor<1x8x4x4xf32>
    // CHECK: dit.image_attention %{{.*}} {weight = "decoder.mid_block.attentions.0"} : tensor<1x8x4x4xf32>
    %a = dit.image_attention %n {weight = "decoder.mid_block.attentions.0"} : tensor<1x8x4x4xf32>
    // CHECK: dit.add %{{.*}}, %{{.*}} : tensor<1x8x4x4xf32>
    %r = dit.add %x, %a : tensor<1x8x4x4xf32>
    %s = dit.activation silu %r : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
    // CHECK: dit.upsample %{{.*}} : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
    %u = dit.upsample %s : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
    %o = dit.conv %u {weight = "decoder.conv_out", kernel = array<i64: 3, 3>} : tensor<1x8x8x8xf32> -> tensor<1x3x8x8xf32>
    // CHECK: dit.yield %{{.*}} : tensor<1x3x8x8xf32>
    dit.yield %o : tensor<1x3x8x8xf32>
  }
  return %p : tensor<1x3x8x8xf32>
}

// CHECK-LABEL: func.func @video_decoder
func.func @video_decoder(%l: tensor<1x4x2x4x4xf32>) -> tensor<1x3x3x16x16xf32> {
  %p = dit.component vae_decoder "AutoencoderKLWan"(%l) : (tensor<1x4x2x4x4xf32>) -> tensor<1x3x3x16x16xf32> {
  ^bb0(%z: tensor<1x4x2x4x4xf32>):
    // CHECK: dit.conv %{{.*}} {causal, kernel = array<i64: 3, 3, 3>, weight = "decoder.conv_in"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x2x4x4xf32>
    %x = dit.conv %z {weight = "decoder.conv_in", kernel = array<i64: 3, 3, 3>, causal} : tensor<1x4x2x4x4xf32> -> tensor<1x8x2x4x4xf32>
    // CHECK: dit.channel_rms_norm %{{.*}} {image_gamma, weight = "decoder.mid_block.attentions.0.norm"} : tensor<1x8x2x4x4xf32>
    %n = dit.channel_rms_norm %x {weight = "decoder.mid_block.attentions.0.norm", image_gamma} : tensor<1x8x2x4x4xf32>
    // CHECK: dit.image_attention %{{.*}} {qkv_layout = #dit<qkv_layout stacked>, weight = "decoder.mid_block.attentions.0"} : tensor<1x8x2x4x4xf32>
    %a = dit.image_attention %n {weight = "decoder.mid_block.attentions.0", qkv_layout = #dit<qkv_layout stacked>} : tensor<1x8x2x4x4xf32>
    // CHECK: dit.temporal_upsample %{{.*}} {weight = "decoder.up_blocks.0.upsamplers.0.time_conv"} : tensor<1x8x2x4x4xf32> -> tensor<1x8x3x4x4xf32>
    %t = dit.temporal_upsample %a {weight = "decoder.up_blocks.0.upsamplers.0.time_conv"} : tensor<1x8x2x4x4xf32> -> tensor<1x8x3x4x4xf32>
    // CHECK: dit.conv %{{.*}} {kernel = array<i64: 3, 3>, weight = "decoder.up_blocks.0.upsamplers.0.resample.1"} : tensor<1x8x3x8x8xf32> -> tensor<1x4x3x8x8xf32>
    %u = dit.upsample %t : tensor<1x8x3x4x4xf32> -> tensor<1x8x3x8x8xf32>
    %c = dit.conv %u {weight = "decoder.up_blocks.0.upsamplers.0.resample.1", kernel = array<i64: 3, 3>} : tensor<1x8x3x8x8xf32> -> tensor<1x4x3x8x8xf32>
    // CHECK: dit.dup_up %{{.*}} {temporal} : tensor<1x8x2x4x4xf32> -> tensor<1x4x3x8x8xf32>
    %d = dit.dup_up %a {temporal} : tensor<1x8x2x4x4xf32> -> tensor<1x4x3x8x8xf32>
    %r = dit.add %c, %d : tensor<1x4x3x8x8xf32>
    %o = dit.conv %r {weight = "decoder.conv_out", kernel = array<i64: 3, 3, 3>, causal} : tensor<1x4x3x8x8xf32> -> tensor<1x12x3x8x8xf32>
    // CHECK: dit.pixel_unpatchify %{{.*}} {patch = 2 : i64} : tensor<1x12x3x8x8xf32> -> tensor<1x3x3x16x16xf32>
    %q = dit.pixel_unpatchify %o {patch = 2 : i64} : tensor<1x12x3x8x8xf32> -> tensor<1x3x3x16x16xf32>
    // CHECK: dit.clamp %{{.*}} {max = 1.000000e+00 : f64, min = -1.000000e+00 : f64} : tensor<1x3x3x16x16xf32>
    %k = dit.clamp %q {min = -1.0 : f64, max = 1.0 : f64} : tensor<1x3x3x16x16xf32>
    dit.yield %k : tensor<1x3x3x16x16xf32>
  }
  return %p : tensor<1x3x3x16x16xf32>
}
