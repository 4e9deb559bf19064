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
