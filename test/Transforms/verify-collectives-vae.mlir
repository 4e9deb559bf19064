// dit-verify-collectives on VAE band programs: the bands' exchanges must
// pair up, and every convolution must see the rows it sees on one rank.
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-verify-collectives

// A band that skips the group-norm all-reduce its neighbour issues.
module {
  shard.grid @vae_bands(shape = 2)
  func.func @band0(%x: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 0 : i64} {
    %n = dit.group_norm %x {dit.band_collective, num_groups = 2 : i64, eps = 1.0e-06 : f64, weight = "n"} : tensor<1x8x2x4xf32>
    return %n : tensor<1x8x2x4xf32>
  }
  // expected-error @+1 {{collective mismatch in the VAE band group: @band1 issues nothing as its exchange #0 where @band0 issues all_reduce_stats of 1x2 group sums; the decoding ranks would hang or exchange mismatched data}}
  func.func @band1(%x: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 1 : i64} {
    %n = dit.group_norm %x {num_groups = 2 : i64, eps = 1.0e-06 : f64, weight = "n"} : tensor<1x8x2x4xf32>
    return %n : tensor<1x8x2x4xf32>
  }
}

// -----

// A convolution that reads beyond its band without a halo: zero rows
// where the image has rows.
module {
  shard.grid @vae_bands(shape = 2)
  func.func @band0(%x: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 0 : i64} {
    // expected-error @+1 {{in @band0 reads 1 rows beyond its band's edges but receives no halo (shard.update_halo): its edge rows would differ from one rank's}}
    %y = dit.conv %x {weight = "c", kernel = array<i64: 3, 3>} : tensor<1x8x2x4xf32> -> tensor<1x8x2x4xf32>
    return %y : tensor<1x8x2x4xf32>
  }
  func.func @band1(%x: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 1 : i64} {
    %y = dit.conv %x {weight = "c", kernel = array<i64: 3, 3>} : tensor<1x8x2x4xf32> -> tensor<1x8x2x4xf32>
    return %y : tensor<1x8x2x4xf32>
  }
}

// -----

// The first band asks for rows above the image.
module {
  shard.grid @vae_bands(shape = 2)
  func.func @band0(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 0 : i64} {
    // expected-error @+1 {{expects 1 halo rows from above, but @band0 holds the image's first rows}}
    %h = shard.update_halo %x on @vae_bands split_axes = [[], [], [0], []] halo_sizes = [1, 1] : tensor<1x8x4x4xf32>
    %y = dit.conv %h {weight = "c", kernel = array<i64: 3, 3>, halo = array<i64: 1, 1>} : tensor<1x8x4x4xf32> -> tensor<1x8x2x4xf32>
    return %y : tensor<1x8x2x4xf32>
  }
  func.func @band1(%x: tensor<1x8x3x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 1 : i64} {
    %h = shard.update_halo %x on @vae_bands split_axes = [[], [], [0], []] halo_sizes = [1, 0] : tensor<1x8x3x4xf32>
    %y = dit.conv %h {weight = "c", kernel = array<i64: 3, 3>, halo = array<i64: 1, 0>} : tensor<1x8x3x4xf32> -> tensor<1x8x2x4xf32>
    return %y : tensor<1x8x2x4xf32>
  }
}

// -----

// A halo wider than the neighbour's band.
module {
  shard.grid @vae_bands(shape = 2)
  func.func @band0(%x: tensor<1x8x6x4xf32>) -> tensor<1x8x4x4xf32> attributes {dit.vae_band = 0 : i64} {
    // expected-error @+1 {{@band0 expects 2 halo rows from @band1, which holds only 1 rows there}}
    %h = shard.update_halo %x on @vae_bands split_axes = [[], [], [0], []] halo_sizes = [0, 2] : tensor<1x8x6x4xf32>
    %y = dit.conv %h {weight = "c", kernel = array<i64: 5, 5>, halo = array<i64: 0, 2>} : tensor<1x8x6x4xf32> -> tensor<1x8x4x4xf32>
    return %y : tensor<1x8x4x4xf32>
  }
  func.func @band1(%x: tensor<1x8x3x4xf32>) -> tensor<1x8x1x4xf32> attributes {dit.vae_band = 1 : i64} {
    %h = shard.update_halo %x on @vae_bands split_axes = [[], [], [0], []] halo_sizes = [2, 0] : tensor<1x8x3x4xf32>
    %y = dit.conv %h {weight = "c", kernel = array<i64: 5, 5>, halo = array<i64: 2, 0>} : tensor<1x8x3x4xf32> -> tensor<1x8x1x4xf32>
    return %y : tensor<1x8x1x4xf32>
  }
}

// -----

// A halo narrower than the kernel reads: the edge row misses a neighbour row.
module {
  shard.grid @vae_bands(shape = 2)
  func.func @band0(%x: tensor<1x8x3x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 0 : i64} {
    %h = shard.update_halo %x on @vae_bands split_axes = [[], [], [0], []] halo_sizes = [0, 1] : tensor<1x8x3x4xf32>
    // expected-error @+1 {{in @band0 reads 2 rows beyond each edge, so it needs halo [0, 2], but the exchange gives [0, 1]: its edge rows would differ from one rank's}}
    %y = dit.conv %h {weight = "c", kernel = array<i64: 5, 5>, halo = array<i64: 0, 1>} : tensor<1x8x3x4xf32> -> tensor<1x8x2x4xf32>
    return %y : tensor<1x8x2x4xf32>
  }
  func.func @band1(%x: tensor<1x8x3x4xf32>) -> tensor<1x8x2x4xf32> attributes {dit.vae_band = 1 : i64} {
    %h = shard.update_halo %x on @vae_bands split_axes = [[], [], [0], []] halo_sizes = [1, 0] : tensor<1x8x3x4xf32>
    %y = dit.conv %h {weight = "c", kernel = array<i64: 5, 5>, halo = array<i64: 1, 0>} : tensor<1x8x3x4xf32> -> tensor<1x8x2x4xf32>
    return %y : tensor<1x8x2x4xf32>
  }
}
