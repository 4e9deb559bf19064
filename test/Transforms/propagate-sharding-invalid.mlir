// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-propagate-sharding

// The pass needs the grid that dit-mesh-layout emits.
// expected-error @+1 {{needs the shard.grid @mesh and 'dit.mesh_axes' that --dit-mesh-layout emits}}
module attributes {dit.mesh = #dit.mesh<tp = 2>} {}
