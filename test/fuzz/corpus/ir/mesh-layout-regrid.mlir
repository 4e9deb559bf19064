





module attributes {dit.mesh_axes = #dit.axes<[tp, ulysses, kv_gather, ring, pp, cfg, dp]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x2)

  func.func @block(%x: tensor<2x8x16xf32>, %t: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
    %h = dit.linear %x {bias = true, weight = "w"} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %s = shard.all_reduce %h on @mesh grid_axes = [6] : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    %r = dit.residual_add %s, %t : tensor<2x8x16xf32>
    return %r : tensor<2x8x16xf32>
  }

  func.func @gathers_batch(%x: tensor<2x8x16xf32>) -> tensor<4x8x16xf32> {
    %g = shard.all_gather %x on @mesh grid_axes = [6] gather_axis = 0 : tensor<2x8x16xf32> -> tensor<4x8x16xf32>
    return %g : tensor<4x8x16xf32>
  }

  func.func @role(%x: tensor<2x8x16xf32>, %t0: tensor<2x8x16xf32>, %t1: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) attributes {dit.role = #dit.role<stage = 0, cfg = 0>} {
    %0 = func.call @block(%x, %t0) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
    %1 = func.call @block(%x, %t1) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
    %2 = func.call @gathers_batch(%x) : (tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
    %3 = func.call @gathers_batch(%x) : (tensor<2x8x16xf32>) -> tensor<4x8x16xf32>
    %c = dit.cfg_combine %0, %1 {guidance_scales = [5.0]} : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
    return %c, %2, %3 : tensor<2x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>
  }
}