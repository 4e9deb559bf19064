// The dit.* hand-off attributes: a malformed one is a diagnostic naming the
// attribute and showing its value, never a crash. One case per rule.
// RUN: dit-opt %s -split-input-file -verify-diagnostics

func.func @tp_misspelled(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.tp' expected column or row (#dit.tp_role<...>), got "colum"}}
  %0 = dit.linear %x {weight = "w", dit.tp = "colum"} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @tp_keyword(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{expected ::mlir::dit::TPRole to be one of: column, row}}
  // expected-error @+1 {{failed to parse Dit_TPRoleAttr parameter 'value'}}
  %0 = dit.linear %x {weight = "w", dit.tp = #dit.tp_role<colum>} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @tp_on_norm(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.tp' may only be set on 'dit.linear', not on 'dit.rms_norm'}}
  %0 = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, dit.tp = #dit.tp_role<row>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @tp_segments_zero(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.tp_segments' expected positive widths, got array<i64: 8, 0>}}
  %0 = dit.linear %x {weight = "w", dit.tp = #dit.tp_role<column>, dit.tp_segments = array<i64: 8, 0>} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @tp_segments_without_tp(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.tp_segments' needs 'dit.tp': only a TP-split linear has segments}}
  %0 = dit.linear %x {weight = "w", dit.tp_segments = array<i64: 4, 4>} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @reduce_stats_strings(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.reduce_stats_over' expected #dit.axes<[...]>, got ["tp"]}}
  %0 = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, dit.reduce_stats_over = ["tp"]} : tensor<1x8x8xf32>
  return
}

// -----

func.func @reduce_stats_empty(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.reduce_stats_over' must name at least one axis}}
  %0 = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, dit.reduce_stats_over = #dit.axes<[]>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @reduce_stats_twice(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{axis 'tp' appears twice in [tp, tp]}}
  %0 = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, dit.reduce_stats_over = #dit.axes<[tp, tp]>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @reduce_stats_unknown_axis(%x: tensor<1x8x8xf32>) {
  // expected-error @+2 {{expected a mesh axis (dp, cfg, pp, ring, kv_gather, ulysses, tp), got 'sp'}}
  // expected-error @+1 {{failed to parse Dit_AxesAttr parameter 'axes'}}
  %0 = dit.rms_norm %x {affine = false, eps = 1.0e-6 : f64, dit.reduce_stats_over = #dit.axes<[sp]>} : tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_plan_dictionary(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.attention_plan' expected #dit.attention_plan<heads = [...], rows = none, local, gather, ring or kv_gather>, got {heads = ["tp"], rows = "none"}}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = {heads = ["tp"], rows = "none"}} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_plan_heads(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{attention heads split over tp or ulysses only, got [ring]}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [ring], rows = none>} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_plan_rows(%q: tensor<1x8x8xf32>) {
  // expected-error @+2 {{expected one of [none, local, gather, ring, kv_gather] for how attention reaches the key/value rows of other ranks, got: rings}}
  // expected-error @+1 {{failed to parse Dit_AttentionPlanAttr parameter 'rows'}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [], rows = rings>} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @attention_plan_on_linear(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.attention_plan' may only be set on 'dit.attention', not on 'dit.linear'}}
  %0 = dit.linear %x {weight = "w", dit.attention_plan = #dit.attention_plan<heads = [], rows = none>} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @ring_axis_range(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.ring_axis' expected a grid axis index in [0, 7), got 9 : i64}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [], rows = ring>, dit.ring_axis = 9 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @ring_axis_without_ring_rows(%q: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.ring_axis' needs 'dit.attention_plan' with rows = ring}}
  %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [], rows = gather>, dit.ring_axis = 3 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  func.func @ring_axis_not_ring(%q: tensor<1x8x8xf32>) {
    // expected-error @+1 {{'dit.ring_axis' is grid axis 2, which 'dit.mesh_axes' names 'pp', not 'ring'}}
    %0 = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64, dit.attention_plan = #dit.attention_plan<heads = [], rows = ring>, dit.ring_axis = 2 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
    return
  }
}

// -----

func.func @latent_layout_string(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{'dit.latent_layout' expected patch_tokens (#dit.latent_layout<...>), got "patch_tokens"}}
  %0 = dit.unpatchify %x {patch = array<i64: 1, 2, 2>, grid = array<i64: 2, 2, 2>, dit.latent_layout = "patch_tokens"} : tensor<1x8x16xf32> -> tensor<1x4x2x4x4xf32>
  return
}

// -----

// expected-error @+1 {{'dit.component' expected text_encoder, transformer, transformer_2, denoise_step or vae (#dit.component<...>), got "transformer"}}
func.func @component_string() attributes {dit.component = "transformer"} {
  return
}

// -----

// expected-error @+1 {{'dit.component' may only be set on functions, not on 'builtin.module'}}
module attributes {dit.component = #dit.component<transformer>} {}

// -----

func.func @sharding_count(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.sharding' has 2 entries for 1 results}}
  %0 = dit.linear %x {weight = "w", dit.sharding = [#dit.sharding<dims = [[], [], []]>, #dit.sharding<dims = [[], [], []]>]} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @sharding_rank(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.sharding' entry #dit.sharding<dims = [[], [tp]]> has 2 dims for a rank-3 value}}
  %0 = dit.linear %x {weight = "w", dit.sharding = [#dit.sharding<dims = [[], [tp]]>]} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @sharding_unranked(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.sharding' entry #dit.sharding<dims = [[]]> describes a 'tensor<*xf32>'; only ranked tensors are sharded}}
  %0 = tensor.cast %x {dit.sharding = [#dit.sharding<dims = [[]]>]} : tensor<1x8x8xf32> to tensor<*xf32>
  return
}

// -----

func.func @sharding_axis_twice(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{sharding uses axis 'tp' twice (across dims and partial)}}
  %0 = dit.linear %x {weight = "w", dit.sharding = [#dit.sharding<dims = [[], [], [tp]], partial = [tp]>]} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

func.func @sharding_not_array(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.sharding' expected an array of #dit.sharding, one per result, got #dit.sharding<dims = [[], [], []]>}}
  %0 = dit.linear %x {weight = "w", dit.sharding = #dit.sharding<dims = [[], [], []]>} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

// expected-error @+1 {{'dit.mesh_axes' expected #dit.axes<[...]> naming the seven mesh axes, got ["dp", "cfg", "pp", "ring", "kv_gather", "ulysses", "tp"]}}
module attributes {dit.mesh_axes = ["dp", "cfg", "pp", "ring", "kv_gather", "ulysses", "tp"]} {}

// -----

// expected-error @+1 {{'dit.mesh_axes' must name each of the seven mesh axes once, got #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses]>}}
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses]>} {}

// -----

// expected-error @+1 {{'dit.mesh_axes' may only be set on the module, not on 'func.func'}}
func.func @mesh_axes_on_func() attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
  return
}

// -----

// The dictionary-of-arrays form a user wrote by hand: a diagnostic, not a
// crash in the passes that read the groups.
// expected-error @+1 {{'dit.groups' expected #dit.groups<dp = [[ranks], ...], ..., tp = [[ranks], ...]>, got {cfg = }}
module attributes {dit.groups = {cfg = [[0, 1]]}} {}

// -----

// expected-error @+1 {{groups of axis 'cfg' must all have the same positive size, got array<i64: 2, 3> beside a group of 1}}
module attributes {dit.groups = #dit.groups<dp = [[0], [1], [2], [3]], cfg = [[0], [1], [2, 3]], pp = [[0], [1], [2], [3]], ring = [[0], [1], [2], [3]], kv_gather = [[0], [1], [2], [3]], ulysses = [[0], [1], [2], [3]], tp = [[0], [1], [2], [3]]>} {}

// -----

// expected-error @+1 {{rank 1 is in more than one 'tp' group}}
module attributes {dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0], [1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0, 1], [1, 0]]>} {}

// -----

// expected-error @+1 {{rank 2 is in a 'tp' group but in no 'dp' group}}
module attributes {dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0], [1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0, 2]]>} {}

// -----

// expected-error @+1 {{'tp' groups cover 1 ranks but 'dp' groups cover 2}}
module attributes {dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0], [1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0]]>} {}

// -----

// expected-error @+1 {{groups of axis 'dp' hold a negative rank -1}}
module attributes {dit.groups = #dit.groups<dp = [[-1]], cfg = [[-1]], pp = [[-1]], ring = [[-1]], kv_gather = [[-1]], ulysses = [[-1]], tp = [[-1]]>} {}

// -----

// Group sizes must be the grid's axis sizes.
// expected-error @+1 {{'dit.groups' groups of axis 'tp' have 2 ranks, but the grid @mesh gives the axis size 1}}
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>, dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0], [1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0, 1]]>} {
  shard.grid @mesh(shape = 1x1x1x1x1x1x1)
}

// -----

// The module's attributes are checked before its ops: a grid that lost its
// shape is the grid's error, not a crash in the groups check.
module attributes {dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>, dit.groups = #dit.groups<dp = [[0]], cfg = [[0]], pp = [[0]], ring = [[0]], kv_gather = [[0]], ulysses = [[0]], tp = [[0]]>} {
  // expected-error @+1 {{'shard.grid' op requires attribute 'shape'}}
  "shard.grid"() <{sym_name = "mesh"}> : () -> ()
}

// -----

// expected-error @+1 {{groups of axis 'dp' must be listed in ascending order of their first rank, got array<i64: 1> before array<i64: 0>}}
module attributes {dit.groups = #dit.groups<dp = [[1], [0]], cfg = [[0], [1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0], [1]]>} {}

// -----

// expected-error @+1 {{groups of axis 'tp' must be listed in ascending order of their first rank, got array<i64: 2, 3> before array<i64: 0, 1>}}
module attributes {dit.groups = #dit.groups<dp = [[0], [1], [2], [3]], cfg = [[0], [1], [2], [3]], pp = [[0], [1], [2], [3]], ring = [[0], [1], [2], [3]], kv_gather = [[0], [1], [2], [3]], ulysses = [[0], [1], [2], [3]], tp = [[2, 3], [0, 1]]>} {}

// -----

// expected-error @+1 {{'dit.groups' groups rank 1, but 'dit.rank_roles' covers only 1 ranks}}
module attributes {dit.rank_roles = array<i64: -1>, dit.groups = #dit.groups<dp = [[0], [1]], cfg = [[0], [1]], pp = [[0], [1]], ring = [[0], [1]], kv_gather = [[0], [1]], ulysses = [[0], [1]], tp = [[0], [1]]>} {}

// -----

// expected-error @+1 {{'dit.roles' expected @function references, got "step"}}
module attributes {dit.roles = ["step"]} {}

// -----

// expected-error @+1 {{'dit.rank_roles' holds role 2, expected -1 or an index into the 2 'dit.roles'}}
module attributes {dit.roles = [@a, @b], dit.rank_roles = array<i64: 0, 2>} {
  func.func @a() { return }
  func.func @b() { return }
}

// -----

// expected-error @+1 {{'dit.rank_roles' holds role -2, expected -1 or an index into the 0 'dit.roles'}}
module attributes {dit.rank_roles = array<i64: -2>} {}

// -----

// expected-error @+1 {{'dit.role' expected #dit.role<stage = ..., cfg = ...>, got {cfg = 1 : i64, stage = 0 : i64}}}
func.func @role_dictionary() attributes {dit.role = {cfg = 1 : i64, stage = 0 : i64}} {
  return
}

// -----

// expected-error @+1 {{role stage and cfg must not be negative, got stage -1, cfg 0}}
func.func @role_negative() attributes {dit.role = #dit.role<stage = -1, cfg = 0>} {
  return
}

// -----

// expected-error @+1 {{'dit.stage' expected a non-negative stage index, got -1 : i64}}
func.func @stage_negative() attributes {dit.stage = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{'dit.stages' expected @function references, got "transformer_stage0"}}
func.func private @stages_strings() attributes {dit.stages = ["transformer_stage0"]}

// -----

func.func @between_steps_on_linear(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.between_steps' may only be set on 'shard.send' or 'shard.recv', not on 'dit.linear'}}
  %0 = dit.linear %x {weight = "w", dit.between_steps} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  return
}

// -----

// expected-error @+1 {{mesh_order must name each of the seven mesh axes (dp, cfg, pp, ring, kv_gather, ulysses, tp) once, got [tp, tp, dp, cfg, pp, ring, kv_gather]}}
module attributes {dit.deployment = #dit.deployment<num_gpus = 2, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<tp = 2>>], mesh_order = [tp, tp, dp, cfg, pp, ring, kv_gather]>} {}

// -----

// expected-error @+1 {{unknown discardable attribute 'dit.tpp'; the dit dialect declares}}
func.func @unknown() attributes {dit.tpp = 1 : i64} {
  return
}
