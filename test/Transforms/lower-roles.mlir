// dit-lower-roles: one program per (stage, cfg) role, and a rank table.
// The hand-written step at the end of this file, on cfg 2 x tp 2.
// RUN: dit-opt %s --dit-mesh-layout --dit-lower-roles | FileCheck %s
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=pp=2,cfg=2" --dit-propagate-sharding --dit-insert-collectives --dit-split-stages --dit-lower-roles | FileCheck %s --check-prefix=PPCFG
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=cfg=2,tp=2" --dit-propagate-sharding --dit-insert-collectives --dit-lower-roles | FileCheck %s --check-prefix=CFGTP
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=tp=2" --dit-propagate-sharding --dit-insert-collectives --dit-lower-roles | FileCheck %s --check-prefix=ONE
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=dp=2" --dit-propagate-sharding --dit-insert-collectives --dit-lower-roles | FileCheck %s --check-prefix=DP

// pp 2 x cfg 2: cfg is outermost, so ranks 0, 1 carry branch 0 through
// stages 0 and 1 (roles 0 and 2), ranks 2, 3 carry branch 1.
// PPCFG-LABEL: module attributes
// PPCFG-SAME: dit.rank_roles = array<i64: 0, 2, 1, 3>
// PPCFG-SAME: dit.roles = [@denoise_step_s0_c0, @denoise_step_s0_c1, @denoise_step_s1_c0, @denoise_step_s1_c1]
// Stage 0 runs its share of the transformer for its own branch, then
// waits for the latents the last stage sends back.
// PPCFG-LABEL: func.func @denoise_step_s0_c1
// PPCFG-SAME: dit.role = #dit.role<stage = 0, cfg = 1>
// PPCFG-NEXT: call @transformer_stage0(%arg0, %arg1, %arg5)
// PPCFG-NEXT: tensor.empty
// PPCFG-NEXT: shard.recv {{.*}} grid_axes = [2] source = [1] {dit.between_steps}
// PPCFG-NEXT: return
// The last stage of each pipeline exchanges predictions over cfg, combines,
// steps, and sends the latents back.
// PPCFG-LABEL: func.func @denoise_step_s1_c0
// PPCFG: call @transformer_stage1(%arg0, %arg1, %arg4)
// PPCFG: shard.all_gather {{.*}} grid_axes = [1] gather_axis = 0
// PPCFG: dit.cfg_combine
// PPCFG: dit.scheduler_step
// PPCFG: shard.send {{.*}} grid_axes = [2] destination = [0] {dit.between_steps}

// cfg 2 x tp 2: the tp ranks share a role; the rank table has 2 roles.
// CFGTP-LABEL: module attributes
// CFGTP-SAME: dit.rank_roles = array<i64: 0, 0, 1, 1>
// CFGTP-SAME: dit.roles = [@denoise_step_s0_c0, @denoise_step_s0_c1]

// One role when only tp splits: both branches run on every rank, in the
// same order as the one-rank run.
// ONE-LABEL: module attributes
// ONE-SAME: dit.rank_roles = array<i64: 0, 0>
// ONE-SAME: dit.roles = [@denoise_step_s0_c0]
// ONE-LABEL: func.func @denoise_step_s0_c0
// ONE: call @transformer(%arg0, %arg1, %arg4)
// ONE-NEXT: call @transformer(%arg0, %arg1, %arg5)
// ONE-NEXT: dit.cfg_combine

// dp 2: two replicas of one program, no collective at all.
// DP-LABEL: module attributes
// DP-SAME: dit.rank_roles = array<i64: 0, 0>
// DP-SAME: dit.roles = [@denoise_step_s0_c0]
// DP-NOT: shard.all
// DP-NOT: shard.send

// The rank table follows a mesh order given to the pass: with cfg
// outermost, ranks 0-3 run branch 0 and 4-7 branch 1, like the cfg groups.
// RUN: dit-opt %t.wan.mlir --dit-mesh-layout="degrees=dp=2,cfg=2,tp=2 mesh-order=cfg,tp,dp,pp,ring,kv_gather,ulysses" --dit-propagate-sharding --dit-insert-collectives --dit-lower-roles --dit-verify-collectives | FileCheck %s --check-prefix=ORDER
// ORDER-LABEL: module attributes
// ORDER-SAME: cfg = {{\[\[}}0, 4], [1, 5], [2, 6], [3, 7]]
// ORDER-SAME: dit.rank_roles = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>

// Hand-written: a step whose branch selection picks the guidance branch.
// Each cfg rank gets its own copy of the step with the selection resolved
// to its branch's operand; the two tp ranks of a branch share the role, so
// with cfg outermost the rank table is 0, 0, 1, 1.
// CHECK-LABEL: module attributes
// CHECK-SAME: dit.rank_roles = array<i64: 0, 0, 1, 1>
// CHECK-SAME: dit.roles = [@denoise_step_s0_c0, @denoise_step_s0_c1]
// CHECK-LABEL: func.func @denoise_step_s0_c0(
// CHECK-SAME: dit.role = #dit.role<stage = 0, cfg = 0>
// CHECK-NEXT: dit.residual_add %arg0, %arg1
// CHECK-NOT: dit.cfg_select
// CHECK-LABEL: func.func @denoise_step_s0_c1(
// CHECK-SAME: dit.role = #dit.role<stage = 0, cfg = 1>
// CHECK-NEXT: dit.residual_add %arg0, %arg2
// CHECK-NOT: func.func @denoise_step(
module attributes {dit.mesh = #dit.mesh<cfg = 2, tp = 2>} {
  func.func @denoise_step(%x: tensor<1x4x8xf32> {dit.input = "latents"}, %a: tensor<1x4x8xf32>, %b: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<denoise_step>} {
    %s = dit.cfg_select %a, %b {slot = 0 : i64, cfg = 2 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
    %r = dit.residual_add %x, %s : tensor<1x4x8xf32>
    return %r : tensor<1x4x8xf32>
  }
}
