// dit-mesh-layout: one shard.grid axis per parallel axis, named, with every
// axis's groups computed once.
// RUN: dit-opt %s -split-input-file --dit-mesh-layout | FileCheck %s
// RUN: dit-opt %s -split-input-file --dit-mesh-layout="mesh-order=tp,ulysses,ring,kv_gather,pp,cfg,dp" | FileCheck %s --check-prefix=ORDER
// `degrees` sets dit.mesh on a module without one, then lays it out exactly
// as the first case below.
// RUN: echo 'module {}' | dit-opt --dit-mesh-layout="degrees=cfg=2,tp=2" | FileCheck %s --check-prefix=DEGREES
// RUN: echo 'module {}' | dit-opt --dit-mesh-layout="degrees=tp=2,cfg=2 mesh-order=tp,ulysses,ring,kv_gather,pp,cfg,dp" | FileCheck %s --check-prefix=DEGREES-ORDER
// DEGREES-LABEL: module attributes
// DEGREES-SAME: cfg = {{\[\[}}0, 2], [1, 3]]
// DEGREES-SAME: tp = {{\[\[}}0, 1], [2, 3]]
// DEGREES-SAME: dit.mesh = #dit.mesh<cfg = 2, tp = 2>
// DEGREES: shard.grid @mesh(shape = 1x2x1x1x1x1x2)
// DEGREES-ORDER-LABEL: module attributes
// DEGREES-ORDER-SAME: cfg = {{\[\[}}0, 1], [2, 3]]
// DEGREES-ORDER-SAME: dit.mesh = #dit.mesh<cfg = 2, tp = 2>
// DEGREES-ORDER: shard.grid @mesh(shape = 2x1x1x1x1x2x1)

// cfg 2 x tp 2: TP contiguous, CFG outermost.
// CHECK-LABEL: module attributes
// CHECK-SAME: cfg = {{\[\[}}0, 2], [1, 3]]
// CHECK-SAME: tp = {{\[\[}}0, 1], [2, 3]]
// CHECK-SAME: dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>
// CHECK: shard.grid @mesh(shape = 1x2x1x1x1x1x2)
// ORDER-LABEL: module attributes
// ORDER-SAME: cfg = {{\[\[}}0, 1], [2, 3]]
// ORDER-SAME: tp = {{\[\[}}0, 2], [1, 3]]
// ORDER-SAME: dit.mesh_axes = #dit.axes<[tp, ulysses, ring, kv_gather, pp, cfg, dp]>
// ORDER: shard.grid @mesh(shape = 2x1x1x1x1x2x1)
module attributes {dit.mesh = #dit.mesh<cfg = 2, tp = 2>} {}

// -----

// ring 2 x ulysses 2 x tp 2: Ulysses inside the TP stride, ring strided.
// CHECK-LABEL: module attributes
// CHECK-SAME: ring = {{\[\[}}0, 4], [1, 5], [2, 6], [3, 7]]
// CHECK-SAME: ulysses = {{\[\[}}0, 2], [1, 3], [4, 6], [5, 7]]
// CHECK-SAME: tp = {{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]
// CHECK: shard.grid @mesh(shape = 1x1x1x2x1x2x2)
module attributes {dit.mesh = #dit.mesh<ring = 2, ulysses = 2, tp = 2>} {}

// -----

// pp 2 x cfg 2 x kv_gather 2: every axis has groups, size-1 axes singletons.
// CHECK-LABEL: module attributes
// CHECK-SAME: dp = {{\[\[}}0], [1], [2], [3], [4], [5], [6], [7]]
// CHECK-SAME: cfg = {{\[\[}}0, 4], [1, 5], [2, 6], [3, 7]]
// CHECK-SAME: pp = {{\[\[}}0, 2], [1, 3], [4, 6], [5, 7]]
// CHECK-SAME: kv_gather = {{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]
// CHECK: shard.grid @mesh(shape = 1x2x2x1x2x1x1)
module attributes {dit.mesh = #dit.mesh<pp = 2, cfg = 2, kv_gather = 2>} {}

// -----

// Explicit replica rank lists keep their ranks; the layout applies inside.
// An axis' groups are listed by their first rank (the dialect requires it).
// CHECK-LABEL: module attributes
// CHECK-SAME: dp = {{\[\[}}0, 4], [1, 5], [2, 6], [3, 7]]
// CHECK-SAME: ulysses = {{\[\[}}0, 2], [1, 3], [4, 6], [5, 7]]
// CHECK-SAME: tp = {{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]
// CHECK: shard.grid @mesh(shape = 2x1x1x1x1x2x2)
module attributes {dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2, ulysses = 2, tp = 2>, instances = [array<i64: 4, 5, 6, 7>, array<i64: 0, 1, 2, 3>]>]>} {}

// -----

// A second layout replaces the first grid.
// CHECK-LABEL: module attributes
// CHECK: shard.grid @mesh(shape = 1x1x1x1x1x1x2)
// CHECK-NOT: shard.grid
module attributes {dit.mesh = #dit.mesh<tp = 2>, dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x4)
}
