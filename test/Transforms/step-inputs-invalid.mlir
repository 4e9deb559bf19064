// Passes find the step inputs by their dit.input names; a transformer or
// step without them is an error naming the missing input.
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-mesh-layout --dit-propagate-sharding
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-mesh-layout --dit-insert-collectives

module attributes {dit.mesh = #dit.mesh<tp = 2>} {
// expected-error @+1 {{has no argument marked 'dit.input = "latents"'; the importer names every step input}}
func.func @transformer(%latents: tensor<1x4x4x4xf32>, %text: tensor<1x3x8xf32> {dit.input = "text"}) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "x_embedder"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  return %x : tensor<1x4x8xf32>
}
}
