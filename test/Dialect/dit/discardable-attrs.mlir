// Every dit.* hand-off attribute parses, prints and parses again to the
// same text (the printed form is the input form).
// RUN: dit-opt %s | dit-opt | FileCheck %s
// RUN: dit-opt %s -mlir-print-op-generic | dit-opt | FileCheck %s

// CHECK-LABEL: module attributes
// CHECK-SAME: dit.deployment = #dit.deployment<num_gpus = 4, placements = [{{.*}}], mesh_order = [tp, ulysses, ring, kv_gather, pp, cfg, dp]>
// CHECK-SAME: dit.groups = #dit.groups<dp = {{\[\[}}0], [1], [2], [3]], cfg = {{\[\[}}0, 2], [1, 3]], pp = {{\[\[}}0], [1], [2], [3]], ring = {{\[\[}}0], [1], [2], [3]], kv_gather = {{\[\[}}0], [1], [2], [3]], ulysses = {{\[\[}}0], [1], [2], [3]], tp = {{\[\[}}0, 1], [2, 3]]>
// CHECK-SAME: dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>
// CHECK-SAME: dit.rank_roles = array<i64: 0, 0, 1, -1>
// CHECK-SAME: dit.roles = [@step_s0_c0, @step_s0_c1]
module attributes {
    dit.deployment = #dit.deployment<num_gpus = 4, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<cfg = 2, tp = 2>>], mesh_order = [tp, ulysses, ring, kv_gather, pp, cfg, dp]>,
    dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>,
    dit.groups = #dit.groups<dp = [[0], [1], [2], [3]], cfg = [[0, 2], [1, 3]], pp = [[0], [1], [2], [3]], ring = [[0], [1], [2], [3]], kv_gather = [[0], [1], [2], [3]], ulysses = [[0], [1], [2], [3]], tp = [[0, 1], [2, 3]]>,
    dit.roles = [@step_s0_c0, @step_s0_c1],
    dit.rank_roles = array<i64: 0, 0, 1, -1>} {
  shard.grid @mesh(shape = 1x2x1x1x1x1x2)

  // CHECK-LABEL: func.func @transformer_stage0
  // CHECK-SAME: dit.component = #dit.component<transformer>, dit.stage = 0 : i64
  func.func @transformer_stage0(%x: tensor<1x8x8xf32>, %t: tensor<1x3x8xf32>) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<transformer>, dit.stage = 0 : i64} {
    // CHECK: dit.linear {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [ring, ulysses], [tp]]>], dit.tp = #dit.tp_role<column>, dit.tp_segments = array<i64: 4, 4>
    %q = dit.linear %x {weight = "q", bias = false, dit.tp = #dit.tp_role<column>, dit.tp_segments = array<i64: 4, 4>, dit.sharding = [#dit.sharding<dims = [[], [ring, ulysses], [tp]]>]} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
    // CHECK: dit.rms_norm {{.*}}dit.block = 3 : i64, dit.reduce_stats_over = #dit.axes<[tp]>
    %n = dit.rms_norm %q {affine = false, eps = 1.0e-6 : f64, dit.block = 3 : i64, dit.reduce_stats_over = #dit.axes<[tp]>} : tensor<1x8x8xf32>
    // CHECK: dit.attention self {{.*}}dit.attention_plan = #dit.attention_plan<heads = [tp, ulysses], rows = ring>, dit.ring_axis = 3 : i64
    %a = dit.attention self %n, %n, %n {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [tp, ulysses], rows = ring>, dit.ring_axis = 3 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
    // CHECK: dit.attention cross {{.*}}dit.attention_plan = #dit.attention_plan<heads = [], rows = local>
    %c = dit.attention cross %a, %t, %t {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [], rows = local>} : tensor<1x8x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32> -> tensor<1x8x8xf32>
    // CHECK: dit.linear {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], []], replicated_text = 3, partial = [tp]>], dit.tp = #dit.tp_role<row>
    %o = dit.linear %c {weight = "o", bias = false, dit.tp = #dit.tp_role<row>, dit.sharding = [#dit.sharding<dims = [[], [], []], replicated_text = 3, partial = [tp]>]} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
    return %o : tensor<1x8x8xf32>
  }

  // CHECK-LABEL: func.func private @transformer
  // CHECK-SAME: dit.component = #dit.component<transformer_2>, dit.stages = [@transformer_stage0]
  func.func private @transformer(tensor<1x8x8xf32>, tensor<1x3x8xf32>) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<transformer_2>, dit.stages = [@transformer_stage0]}

  // CHECK-LABEL: func.func @unpatchify
  // CHECK: dit.unpatchify {{.*}}dit.latent_layout = #dit.latent_layout<patch_tokens>
  func.func @unpatchify(%x: tensor<1x8x16xf32>) -> tensor<1x4x2x4x4xf32> {
    %u = dit.unpatchify %x {patch = array<i64: 1, 2, 2>, grid = array<i64: 2, 2, 2>, dit.latent_layout = #dit.latent_layout<patch_tokens>, dit.sharding = [#dit.sharding<dims = [[], [ulysses], []]>]} : tensor<1x8x16xf32> -> tensor<1x4x2x4x4xf32>
    return %u : tensor<1x4x2x4x4xf32>
  }

  // CHECK-LABEL: func.func @step_s0_c0
  // CHECK-SAME: dit.component = #dit.component<denoise_step>, dit.role = #dit.role<stage = 0, cfg = 0>
  // CHECK: shard.send {{.*}} {dit.between_steps}
  func.func @step_s0_c0(%x: tensor<1x8x8xf32>) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<denoise_step>, dit.role = #dit.role<stage = 0, cfg = 0>} {
    %s = shard.send %x on @mesh grid_axes = [2] destination = [0] {dit.between_steps} : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
    return %s : tensor<1x8x8xf32>
  }

  // CHECK-LABEL: func.func @step_s0_c1
  // CHECK-SAME: dit.role = #dit.role<stage = 0, cfg = 1>
  func.func @step_s0_c1(%x: tensor<1x8x8xf32>) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<vae>, dit.role = #dit.role<stage = 0, cfg = 1>} {
    return %x : tensor<1x8x8xf32>
  }

  // CHECK-LABEL: func.func @text_encoder
  // CHECK-SAME: dit.component = #dit.component<text_encoder>
  func.func @text_encoder() attributes {dit.component = #dit.component<text_encoder>} {
    return
  }
}
