// dit-verify-collectives: whole pipelines verify; a planted mismatch is a
// compile error naming the op.
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=pp=2,cfg=2,ulysses=2" --dit-propagate-sharding --dit-insert-collectives --dit-split-stages --dit-lower-roles --dit-verify-collectives -o /dev/null
// RUN: dit-opt %s -split-input-file -verify-diagnostics --dit-verify-collectives

// The two cfg ranks gather predictions of different shapes.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0, 1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0], [1]]>,
                   dit.rank_roles = array<i64: 0, 1>,
                   dit.roles = [@step_c0, @step_c1]} {
  shard.grid @mesh(shape = 1x2x1x1x1x1x1)
  func.func @step_c0(%x: tensor<1x8xf32>) -> tensor<2x8xf32> {
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    return %g : tensor<2x8xf32>
  }
  func.func @step_c1(%x: tensor<1x4xf32>) -> tensor<2x4xf32> {
    // expected-error @+1 {{collective mismatch in cfg group [0, 1]: @step_c1 issues all_gather (tensor<1x4xf32>) -> (tensor<2x4xf32>) gather_axis=0 : index grid_axes=array<i16: 1> as its collective #0 on cfg where @step_c0 issues all_gather (tensor<1x8xf32>) -> (tensor<2x8xf32>) gather_axis=0 : index grid_axes=array<i16: 1>; the group's ranks would hang or exchange mismatched data}}
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x4xf32> -> tensor<2x4xf32>
    return %g : tensor<2x4xf32>
  }
}

// -----

// One cfg rank issues a collective the other never joins.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0, 1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0], [1]]>,
                   dit.rank_roles = array<i64: 0, 1>,
                   dit.roles = [@step_c0, @step_c1]} {
  shard.grid @mesh(shape = 1x2x1x1x1x1x1)
  func.func @step_c0(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    return %x : tensor<1x8xf32>
  }
  func.func @step_c1(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    // expected-error @+1 {{collective mismatch in cfg group [0, 1]: @step_c1 issues all_reduce (tensor<1x8xf32>) -> (tensor<1x8xf32>) grid_axes=array<i16: 1> reduction=#shard<partial sum> as its collective #0 on cfg where @step_c0 issues nothing}}
    %r = shard.all_reduce %x on @mesh grid_axes = [1] : tensor<1x8xf32> -> tensor<1x8xf32>
    return %r : tensor<1x8xf32>
  }
}

// -----

// Stage 0 sends a tensor of another shape than stage 1 receives.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0], [1]], pp = [[0, 1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0], [1]]>,
                   dit.rank_roles = array<i64: 0, 1>,
                   dit.roles = [@stage0, @stage1]} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x1)
  func.func @stage0(%x: tensor<1x8xf32>) {
    %s = shard.send %x on @mesh grid_axes = [2] destination = [1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func @stage1(%x: tensor<1x6xf32>) {
    // expected-error @+1 {{pipeline mismatch between stage 0 and stage 1: @stage0 sends tensor<1x8xf32> as its transfer #0 but @stage1 receives tensor<1x6xf32>}}
    %r = shard.recv %x on @mesh grid_axes = [2] source = [0] : (tensor<1x6xf32>) -> tensor<1x6xf32>
    return
  }
}

// -----

// Any shard collective counts: a reduce_scatter one cfg rank never joins.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0, 1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0], [1]]>,
                   dit.rank_roles = array<i64: 0, 1>,
                   dit.roles = [@step_c0, @step_c1]} {
  shard.grid @mesh(shape = 1x2x1x1x1x1x1)
  func.func @step_c0(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    return %x : tensor<2x8xf32>
  }
  func.func @step_c1(%x: tensor<2x8xf32>) -> tensor<1x8xf32> {
    // expected-error @+1 {{@step_c1 issues reduce_scatter (tensor<2x8xf32>) -> (tensor<1x8xf32>)}}
    %r = shard.reduce_scatter %x on @mesh grid_axes = [1] scatter_axis = 0 : tensor<2x8xf32> -> tensor<1x8xf32>
    return %r : tensor<1x8xf32>
  }
}

// -----

// The reduction kind is part of what members must agree on.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0, 1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0], [1]]>,
                   dit.rank_roles = array<i64: 0, 1>,
                   dit.roles = [@step_c0, @step_c1]} {
  shard.grid @mesh(shape = 1x2x1x1x1x1x1)
  func.func @step_c0(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    %r = shard.all_reduce %x on @mesh grid_axes = [1] : tensor<1x8xf32> -> tensor<1x8xf32>
    return %r : tensor<1x8xf32>
  }
  func.func @step_c1(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
    // expected-error @+1 {{reduction=#shard<partial max> as its collective #0 on cfg where @step_c0 issues all_reduce (tensor<1x8xf32>) -> (tensor<1x8xf32>) grid_axes=array<i16: 1> reduction=#shard<partial sum>}}
    %r = shard.all_reduce %x on @mesh grid_axes = [1] reduction = max : tensor<1x8xf32> -> tensor<1x8xf32>
    return %r : tensor<1x8xf32>
  }
}

// -----

// Three stages: stage 0 sends to stage 2, which never receives.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1], [2]], cfg = [[0], [1], [2]], pp = [[0, 1, 2]], ring = [[0], [1], [2]], kv_gather = [[0], [1], [2]], ulysses = [[0], [1], [2]], tp = [[0], [1], [2]]>,
                   dit.rank_roles = array<i64: 0, 1, 2>,
                   dit.roles = [@stage0, @stage1, @stage2]} {
  shard.grid @mesh(shape = 1x1x3x1x1x1x1)
  func.func @stage0(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{pipeline mismatch between stage 0 and stage 2: @stage0 sends tensor<1x8xf32> as its transfer #0 but @stage2 receives nothing}}
    %s = shard.send %x on @mesh grid_axes = [2] destination = [2] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func @stage1(%x: tensor<1x8xf32>) {
    return
  }
  func.func @stage2(%x: tensor<1x8xf32>) {
    return
  }
}

// -----

// Each group's sequence matches, but the order across groups deadlocks:
// the cfg 1 pipeline sends before it gathers, the cfg 0 pipeline after.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1], [2], [3]], cfg = [[0, 2], [1, 3]], pp = [[0, 1], [2, 3]], ring = [[0], [1], [2], [3]], kv_gather = [[0], [1], [2], [3]], ulysses = [[0], [1], [2], [3]], tp = [[0], [1], [2], [3]]>,
                   dit.rank_roles = array<i64: 0, 2, 1, 3>,
                   dit.roles = [@s0_c0, @s0_c1, @s1_c0, @s1_c1]} {
  shard.grid @mesh(shape = 1x2x2x1x1x1x1)
  func.func @s0_c0(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{@s0_c0 would wait forever in all_gather}}
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    %s = shard.send %x on @mesh grid_axes = [2] destination = [1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
  func.func @s0_c1(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{@s0_c1 would wait forever in send tensor<1x8xf32>}}
    %s = shard.send %x on @mesh grid_axes = [2] destination = [1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    return
  }
  func.func @s1_c0(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{@s1_c0 would wait forever in recv tensor<1x8xf32>}}
    %r = shard.recv %x on @mesh grid_axes = [2] source = [0] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    return
  }
  func.func @s1_c1(%x: tensor<1x8xf32>) {
    // expected-error @+1 {{@s1_c1 would wait forever in all_gather}}
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    %r = shard.recv %x on @mesh grid_axes = [2] source = [0] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    return
  }
}

// -----

// The same four roles with a consistent order: each stage-0 role sends and
// then gathers, each stage-1 role receives and then gathers. Every group's
// members match and no rank waits forever, so nothing is reported.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
                   dit.groups = #dit.groups<dp = [[0], [1], [2], [3]], cfg = [[0, 2], [1, 3]], pp = [[0, 1], [2, 3]], ring = [[0], [1], [2], [3]], kv_gather = [[0], [1], [2], [3]], ulysses = [[0], [1], [2], [3]], tp = [[0], [1], [2], [3]]>,
                   dit.rank_roles = array<i64: 0, 2, 1, 3>,
                   dit.roles = [@s0_c0, @s0_c1, @s1_c0, @s1_c1]} {
  shard.grid @mesh(shape = 1x2x2x1x1x1x1)
  func.func @s0_c0(%x: tensor<1x8xf32>) {
    %s = shard.send %x on @mesh grid_axes = [2] destination = [1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    return
  }
  func.func @s0_c1(%x: tensor<1x8xf32>) {
    %s = shard.send %x on @mesh grid_axes = [2] destination = [1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    return
  }
  func.func @s1_c0(%x: tensor<1x8xf32>) {
    %r = shard.recv %x on @mesh grid_axes = [2] source = [0] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    return
  }
  func.func @s1_c1(%x: tensor<1x8xf32>) {
    %r = shard.recv %x on @mesh grid_axes = [2] source = [0] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    return
  }
}
