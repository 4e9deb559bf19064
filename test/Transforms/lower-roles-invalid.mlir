// dit-lower-roles on denoising steps it cannot specialize: a diagnostic
// naming the op, not a crash.
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-lower-roles

module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x1)
  // expected-error @+1 {{has no argument marked 'dit.input = "latents"'; the importer names every step input}}
  func.func @denoise_step() attributes {dit.component = #dit.component<denoise_step>} {
    return
  }
}

// -----

module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x1)
  // expected-error @+1 {{dit-lower-roles expects @denoise_step to return the latents}}
  func.func @denoise_step(%x: tensor<1x4x8xf32> {dit.input = "latents"}) attributes {dit.component = #dit.component<denoise_step>} {
    return
  }
}

// -----

// The branch selection was built for cfg 2; the mesh has cfg 4.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x4x1x1x1x1x1)
  func.func @denoise_step(%x: tensor<1x4x8xf32> {dit.input = "latents"}, %a: tensor<1x4x8xf32>, %b: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<denoise_step>} {
    // expected-error @+1 {{selects for cfg 2, but the mesh has cfg 4}}
    %s = dit.cfg_select %a, %b {slot = 0 : i64, cfg = 2 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
    return %s : tensor<1x4x8xf32>
  }
}

// -----

// The transformer was split into one stage; the mesh has two.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x1)
  func.func @transformer_stage0(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>, dit.stage = 0 : i64} {
    return %x : tensor<1x4x8xf32>
  }
  func.func private @transformer(tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>, dit.stages = [@transformer_stage0]}
  func.func @denoise_step(%x: tensor<1x4x8xf32> {dit.input = "latents"}) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<denoise_step>} {
    // expected-error @+1 {{@transformer is split into 1 stages, but the mesh has 2 pipeline stages}}
    %p = func.call @transformer(%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    return %p : tensor<1x4x8xf32>
  }
}
