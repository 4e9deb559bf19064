// dit-partition-vae: the decoder body becomes one program per band, every
// activation's rows scaled to the band's, a halo fetched before each
// convolution that reads beyond its row, and the ops that need every band
// marked. Bands of 3 and 1 latent rows (row_split) make uneven programs.
// RUN: dit-opt %s --dit-partition-vae | FileCheck %s
// RUN: dit-opt %s --dit-partition-vae --dit-verify-collectives | FileCheck %s --check-prefix=VERIFIED

module attributes {
  dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>>, #dit.placement<component = "vae", mesh = #dit.mesh<>, vae_parallel_size = 2, row_split = [3, 1]>]>
} {
  func.func @vae_decode(%l: tensor<1x4x4x4xf32>) -> tensor<1x3x8x8xf32> attributes {dit.component = #dit.component<vae>} {
    %p = dit.component vae_decoder "AutoencoderKL"(%l) : (tensor<1x4x4x4xf32>) -> tensor<1x3x8x8xf32> {
    ^bb0(%z: tensor<1x4x4x4xf32>):
      %x = dit.conv %z {weight = "decoder.conv_in", kernel = array<i64: 3, 3>} : tensor<1x4x4x4xf32> -> tensor<1x8x4x4xf32>
      %n = dit.group_norm %x {num_groups = 2 : i64, eps = 1.0e-06 : f64, weight = "decoder.mid_block.attentions.0.group_norm"} : tensor<1x8x4x4xf32>
      %a = dit.image_attention %n {weight = "decoder.mid_block.attentions.0"} : tensor<1x8x4x4xf32>
      %r = dit.add %x, %a : tensor<1x8x4x4xf32>
      %u = dit.upsample %r : tensor<1x8x4x4xf32> -> tensor<1x8x8x8xf32>
      %s = dit.conv %u {weight = "decoder.up_blocks.0.upsamplers.0.conv", kernel = array<i64: 1, 1>} : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32>
      %o = dit.conv %s {weight = "decoder.conv_out", kernel = array<i64: 3, 3>} : tensor<1x8x8x8xf32> -> tensor<1x3x8x8xf32>
      dit.yield %o : tensor<1x3x8x8xf32>
    }
    return %p : tensor<1x3x8x8xf32>
  }
}

// CHECK: shard.grid @vae_bands(shape = 2)
// CHECK-LABEL: func.func @vae_decode_band0(%{{.*}}: tensor<1x4x3x4xf32>) -> tensor<1x3x6x8xf32>
// CHECK-SAME: dit.vae_band = 0 : i64
// The first band has no band above: only the bottom halo.
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK: %[[H0:.*]] = shard.update_halo %{{.*}} on @vae_bands split_axes = {{\[\[\], \[\], \[0\], \[\]\]}} halo_sizes = [0, 1] : tensor<1x4x4x4xf32>
// CHECK: dit.conv %[[H0]] {halo = array<i64: 0, 1>, kernel = array<i64: 3, 3>, weight = "decoder.conv_in"} : tensor<1x4x4x4xf32> -> tensor<1x8x3x4xf32>
// CHECK: dit.group_norm %{{.*}} {dit.band_collective, {{.*}}} : tensor<1x8x3x4xf32>
// CHECK: dit.image_attention %{{.*}} {dit.band_collective, weight = "decoder.mid_block.attentions.0"} : tensor<1x8x3x4xf32>
// CHECK: dit.upsample %{{.*}} : tensor<1x8x3x4xf32> -> tensor<1x8x6x8xf32>
// A 1x1 convolution reads no rows beyond its own: no exchange.
// CHECK-NEXT: dit.conv %{{.*}} {kernel = array<i64: 1, 1>, weight = "decoder.up_blocks.0.upsamplers.0.conv"}
// CHECK: shard.update_halo %{{.*}} halo_sizes = [0, 1] : tensor<1x8x7x8xf32>
// CHECK: return %{{.*}} : tensor<1x3x6x8xf32>
// CHECK-LABEL: func.func @vae_decode_band1(%{{.*}}: tensor<1x4x1x4xf32>) -> tensor<1x3x2x8xf32>
// CHECK: shard.update_halo %{{.*}} halo_sizes = [1, 0] : tensor<1x4x2x4xf32>
// CHECK: dit.conv %{{.*}} {halo = array<i64: 1, 0>, {{.*}}} : tensor<1x4x2x4xf32> -> tensor<1x8x1x4xf32>
// VERIFIED: func.func @vae_decode_band1
