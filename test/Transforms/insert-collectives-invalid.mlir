// dit-insert-collectives on functions whose signature is not a transformer's:
// a diagnostic naming the function, not a crash.
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-insert-collectives

module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x2x1x1x1x1x1)
  // expected-error @+1 {{has no argument marked 'dit.input = "latents"'; the importer names every step input}}
  func.func @transformer() attributes {dit.component = #dit.component<transformer>} {
    return
  }
}

// -----

module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x2x1x1x1x1x1)
  // expected-error @+1 {{the latents, argument #0, must be a ranked tensor [batch, channels, ...], got 'i32'}}
  func.func @transformer(%a: i32 {dit.input = "latents"}) -> i32 attributes {dit.component = #dit.component<transformer>} {
    return %a : i32
  }
}

// -----

// Each branch call of the step returns its one prediction of the latents.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x1)
  func.func @transformer(%latents: tensor<1x4x2x4x4xf32> {dit.input = "latents"}) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<transformer>} {
    %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
    return %x : tensor<1x8x8xf32>
  }
  func.func @denoise_step(%latents: tensor<1x4x2x4x4xf32> {dit.input = "latents"}) -> tensor<1x4x2x4x4xf32> attributes {dit.component = #dit.component<denoise_step>} {
    // expected-error @+1 {{a branch call of @denoise_step must return the one predicted tensor, got 2 results}}
    %a, %b = func.call @pair(%latents) : (tensor<1x4x2x4x4xf32>) -> (tensor<1x4x2x4x4xf32>, tensor<1x4x2x4x4xf32>)
    return %a : tensor<1x4x2x4x4xf32>
  }
  func.func private @pair(tensor<1x4x2x4x4xf32>) -> (tensor<1x4x2x4x4xf32>, tensor<1x4x2x4x4xf32>)
}
