// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-propagate-sharding

// The pass needs the grid that dit-mesh-layout emits.
// expected-error @+1 {{needs the shard.grid @mesh and 'dit.mesh_axes' that --dit-mesh-layout emits}}
module attributes {dit.mesh = #dit.mesh<tp = 2>} {}

// -----

// An op without a dit sharding rule stops the pass, naming the interface a
// new op implements (dialects/dit/IR/DitShardingRules.cpp).
module attributes {dit.mesh = #dit.mesh<tp = 2>, dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x2)
  func.func @transformer(%x: tensor<1x4x8xf32> {dit.input = "latents"}) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
    // expected-error @+1 {{dit-propagate-sharding cannot shard 'arith.addf': op does not implement DitShardableOpInterface}}
    %y = arith.addf %x, %x : tensor<1x4x8xf32>
    return %y : tensor<1x4x8xf32>
  }
}
