// Verifier errors of the VAE decoder's ops and of component bodies.
// RUN: dit-opt %s -split-input-file -verify-diagnostics

func.func @conv_rank(%x: tensor<1x4x4xf32>) {
  // expected-error @+1 {{expects the input to be an image [batch, channels, rows, columns] or a video [batch, channels, frames, rows, columns], got rank 3}}
  %0 = dit.conv %x {weight = "c", kernel = array<i64: 3, 3>} : tensor<1x4x4xf32> -> tensor<1x4x4xf32>
  return
}

// -----

func.func @conv_kernel_rank(%x: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{a 3-D kernel needs a video input, got rank 4}}
  %0 = dit.conv %x {weight = "c", kernel = array<i64: 3, 3, 3>, causal} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @conv_even(%x: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{kernel sizes must be odd and at most 15 so that padding keeps the size, got 2x2}}
  %0 = dit.conv %x {weight = "c", kernel = array<i64: 2, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @conv_causal_2d(%x: tensor<1x4x2x4x4xf32>) {
  // expected-error @+1 {{causal needs a 3-D kernel (frames, rows, columns)}}
  %0 = dit.conv %x {weight = "c", kernel = array<i64: 3, 3>, causal} : tensor<1x4x2x4x4xf32> -> tensor<1x4x2x4x4xf32>
  return
}

// -----

func.func @conv_time_not_causal(%x: tensor<1x4x2x4x4xf32>) {
  // expected-error @+1 {{a 3-D kernel over 3 frames must be causal}}
  %0 = dit.conv %x {weight = "c", kernel = array<i64: 3, 3, 3>} : tensor<1x4x2x4x4xf32> -> tensor<1x4x2x4x4xf32>
  return
}

// -----

func.func @conv_size(%x: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{result must be 1x8x4x4 (the input's size with the output channels), got 1x8x4x2}}
  %0 = dit.conv %x {weight = "c", kernel = array<i64: 3, 3>} : tensor<1x4x4x4xf32> -> tensor<1x8x4x2xf32>
  return
}

// -----

func.func @conv_zero_kernel(%x: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{attribute 'kernel' failed to satisfy constraint}}
  %0 = dit.conv %x {weight = "c", kernel = array<i64: 0, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @group_norm_groups(%x: tensor<1x6x4x4xf32>) {
  // expected-error @+1 {{num_groups 4 must divide the 6 channels}}
  %0 = dit.group_norm %x {num_groups = 4 : i64, eps = 1.0e-06 : f64, weight = "n"} : tensor<1x6x4x4xf32>
  return
}

// -----

func.func @group_norm_eps(%x: tensor<1x6x4x4xf32>) {
  // expected-error @+1 {{eps must be a finite positive number, got 0}}
  %0 = dit.group_norm %x {num_groups = 3 : i64, eps = 0.0 : f64, weight = "n"} : tensor<1x6x4x4xf32>
  return
}

// -----

func.func @rms_rank(%x: tensor<1x6xf32>) {
  // expected-error @+1 {{expects the input to be an image}}
  %0 = dit.channel_rms_norm %x {weight = "n"} : tensor<1x6xf32>
  return
}

// -----

func.func @upsample_size(%x: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{result must be 1x4x8x8 (twice the rows and columns), got 1x4x8x4}}
  %0 = dit.upsample %x : tensor<1x4x4x4xf32> -> tensor<1x4x8x4xf32>
  return
}

// -----

func.func @temporal_image(%x: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{expects the input to be a video [batch, channels, frames, rows, columns], got rank 4}}
  %0 = dit.temporal_upsample %x {weight = "t"} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @temporal_frames(%x: tensor<1x4x3x4x4xf32>) {
  // expected-error @+1 {{result must be 1x4x5x4x4 (1 + 2 (F - 1) frames: every frame but the first doubles), got 1x4x6x4x4}}
  %0 = dit.temporal_upsample %x {weight = "t"} : tensor<1x4x3x4x4xf32> -> tensor<1x4x6x4x4xf32>
  return
}

// -----

func.func @dup_up_channels(%x: tensor<1x6x2x4x4xf32>) {
  // expected-error @+1 {{5 output channels x 4 copies per channel must be a multiple of the 6 input channels}}
  %0 = dit.dup_up %x : tensor<1x6x2x4x4xf32> -> tensor<1x5x2x8x8xf32>
  return
}

// -----

func.func @denormalize_entries(%x: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{scale must have 1 or 4 entries (one per channel), got 2}}
  %0 = dit.denormalize_latents %x {scale = array<f64: 1.0, 2.0>, shift = array<f64: 0.0>} : tensor<1x4x4x4xf32>
  return
}

// -----

func.func @unpatchify_channels(%x: tensor<1x6x2x4x4xf32>) {
  // expected-error @+1 {{patch 2 squared must divide the 6 channels}}
  %0 = dit.pixel_unpatchify %x {patch = 2 : i64} : tensor<1x6x2x4x4xf32> -> tensor<1x1x2x8x8xf32>
  return
}

// -----

func.func @clamp_range(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{needs finite min <= max, got [1.000000e+00, -1.000000e+00]}}
  %0 = dit.clamp %x {min = 1.0 : f64, max = -1.0 : f64} : tensor<1x3x4x4xf32>
  return
}

// -----

func.func @body_arguments(%l: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{body's arguments must have the inputs' types}}
  %p = dit.component vae_decoder "AutoencoderKL"(%l) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x2xf32> {
  ^bb0(%z: tensor<1x4x4x2xf32>):
    dit.yield %z : tensor<1x4x4x2xf32>
  }
  return
}

// -----

func.func @body_yield(%l: tensor<1x4x4x4xf32>) {
  %p = dit.component vae_decoder "AutoencoderKL"(%l) : (tensor<1x4x4x4xf32>) -> tensor<1x3x4x4xf32> {
  ^bb0(%z: tensor<1x4x4x4xf32>):
    // expected-error @+1 {{must yield the component's output types}}
    dit.yield %z : tensor<1x4x4x4xf32>
  }
  return
}

// -----

func.func @body_isolated(%l: tensor<1x4x4x4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %p = dit.component vae_decoder "AutoencoderKL"(%l) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  ^bb0(%z: tensor<1x4x4x4xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    dit.yield %l : tensor<1x4x4x4xf32>
  }
  return
}

// -----

func.func @yield_outside(%l: tensor<1x4x4x4xf32>) {
  // expected-error @+1 {{expects parent op 'dit.component'}}
  dit.yield %l : tensor<1x4x4x4xf32>
}
