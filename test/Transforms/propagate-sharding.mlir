// dit-propagate-sharding on each axis alone and on joint/cross/gated cases.
// RUN: dit-opt %s -split-input-file --dit-mesh-layout --dit-propagate-sharding | FileCheck %s
// RUN: dit-opt %s -split-input-file --dit-mesh-layout --dit-propagate-sharding=explain=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// tp 2: q/k/v and MLP up are column-parallel, out and MLP down row-parallel
// (partial sums); a norm across heads reduces its statistics over tp;
// patch and time embeddings stay as they are.
module attributes {dit.mesh = #dit.mesh<tp = 2>} {
// CHECK-LABEL: func.func @transformer
func.func @transformer(%latents: tensor<1x4x2x4x4xf32> {dit.input = "latents"}, %t: tensor<1xf32> {dit.input = "timestep"}, %text: tensor<1x3x8xf32> {dit.input = "text"}) -> tensor<1x8x8xf32> attributes {dit.component = #dit.component<transformer>} {
  // CHECK: dit.patch_embed {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [{{\]\]}}>]
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.timestep_embedding {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [{{\]\]}}>]
  %temb = dit.timestep_embedding %t {freq_dim = 16 : i64, weight = "time_embedder"} : tensor<1xf32> -> tensor<1x8xf32>
  // CHECK: dit.linear {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [tp{{\]\]}}>], dit.tp = #dit.tp_role<column>, weight = "to_q"
  %q = dit.linear %x {weight = "to_q", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.rms_norm {{.*}}dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [tp{{\]\]}}>]
  %qn = dit.rms_norm %q {affine = true, eps = 1.0e-6 : f64, weight = "norm_q"} : tensor<1x8x8xf32>
  %k = dit.linear %x {weight = "to_k", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %v = dit.linear %x {weight = "to_v", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.attention self {{.*}}dit.attention_plan = #dit.attention_plan<heads = [tp], rows = none>
  %o = dit.attention self %qn, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.linear {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [{{\]\]}}, partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "to_out"
  %out = dit.linear %o {weight = "to_out", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %r = dit.residual_add %x, %out : tensor<1x8x8xf32>
  // A gated MLP's up projection splits its two halves separately.
  // CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<column>, dit.tp_segments = array<i64: 16, 16>, weight = "ff.up"
  %up = dit.linear %r {weight = "ff.up", bias = false} : tensor<1x8x8xf32> -> tensor<1x8x32xf32>
  %g = dit.activation swiglu %up : tensor<1x8x32xf32> -> tensor<1x8x16xf32>
  // CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<row>, weight = "ff.down"
  %down = dit.linear %g {weight = "ff.down", bias = false} : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
  // Cross attention against the replicated text: rows stay local.
  %cq = dit.linear %down {weight = "attn2.to_q", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  // CHECK: dit.linear {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [tp{{\]\]}}>], dit.tp = #dit.tp_role<column>, weight = "attn2.to_k"
  %ck = dit.linear %text {weight = "attn2.to_k", bias = true} : tensor<1x3x8xf32> -> tensor<1x3x8xf32>
  %cv = dit.linear %text {weight = "attn2.to_v", bias = true} : tensor<1x3x8xf32> -> tensor<1x3x8xf32>
  // CHECK: dit.attention cross {{.*}}dit.attention_plan = #dit.attention_plan<heads = [tp], rows = local>
  %co = dit.attention cross %cq, %ck, %cv {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x8x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32> -> tensor<1x8x8xf32>
  return %co : tensor<1x8x8xf32>
}
}
// EXPLAIN-LABEL: remark: 'to_q' is column-parallel over tp: its output feeds attention heads
// EXPLAIN: remark: norm spans a width split over tp: its statistics are all-reduced over tp
// EXPLAIN: remark: self attention: heads over tp, rows none
// EXPLAIN: remark: 'to_out' is row-parallel over tp: its input is split over tp, so its output is a partial sum
// EXPLAIN: remark: 'ff.up' is column-parallel over tp: its output feeds a gated MLP activation (its two halves split separately)

// -----

// ulysses 2 x ring 2: image tokens split over both; joint attention keeps
// the text whole; heads split over ulysses, rows rotate over ring.
module attributes {dit.mesh = #dit.mesh<ring = 2, ulysses = 2>} {
// CHECK-LABEL: func.func @transformer
func.func @transformer(%latents: tensor<1x4x4x4xf32> {dit.input = "latents"}, %t: tensor<1xf32> {dit.input = "timestep"}, %text: tensor<1x3x8xf32> {dit.input = "text"}) -> tensor<1x4x4x4xf32> attributes {dit.component = #dit.component<transformer>} {
  // CHECK: dit.patch_embed {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [ring, ulysses], [{{\]\]}}>]
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "x_embedder"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  // CHECK: dit.linear {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [{{\]\]}}>], weight = "context_embedder"
  %txt = dit.linear %text {weight = "context_embedder", bias = true} : tensor<1x3x8xf32> -> tensor<1x3x8xf32>
  // CHECK: dit.concat_streams {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [ring, ulysses], [{{\]\]}}, replicated_text = 3>]
  %j = dit.concat_streams %txt, %x {text_position = #dit<text_position prefix>} : tensor<1x3x8xf32>, tensor<1x4x8xf32> -> tensor<1x7x8xf32>
  // CHECK: dit.attention joint {{.*}}dit.attention_plan = #dit.attention_plan<heads = [ulysses], rows = ring>
  %o = dit.attention joint %j, %j, %j {num_heads = 2 : i64, head_dim = 4 : i64, text_tokens = 3 : i64} : tensor<1x7x8xf32>, tensor<1x7x8xf32>, tensor<1x7x8xf32> -> tensor<1x7x8xf32>
  // CHECK: dit.split_streams {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [{{\]\]}}>, #dit.sharding<dims = {{\[\[}}], [ring, ulysses], [{{\]\]}}>]
  %t2, %i2 = dit.split_streams %o {text_position = #dit<text_position prefix>} : tensor<1x7x8xf32> -> tensor<1x3x8xf32>, tensor<1x4x8xf32>
  %p = dit.linear %i2 {weight = "proj_out", bias = true} : tensor<1x4x8xf32> -> tensor<1x4x16xf32>
  // CHECK: dit.unpatchify {{.*}}dit.latent_layout = #dit.latent_layout<patch_tokens>, dit.sharding = [#dit.sharding<dims = {{\[\[}}], [ring, ulysses], [{{\]\]}}>]
  %l = dit.unpatchify %p {patch = array<i64: 1, 2, 2>, grid = array<i64: 1, 2, 2>} : tensor<1x4x16xf32> -> tensor<1x4x4x4xf32>
  return %l : tensor<1x4x4x4xf32>
}
}

// -----

// kv_gather 2; an attention with shard_over_sp = false gathers its rows
// over every sequence axis instead.
module attributes {dit.mesh = #dit.mesh<kv_gather = 2>} {
// CHECK-LABEL: func.func @transformer
func.func @transformer(%latents: tensor<1x4x4x4xf32> {dit.input = "latents"}) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "x_embedder"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  // CHECK: dit.attention self {{.*}}dit.attention_plan = #dit.attention_plan<heads = [], rows = kv_gather>
  %o = dit.attention self %x, %x, %x {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  // CHECK: dit.attention self {{.*}}dit.attention_plan = #dit.attention_plan<heads = [], rows = gather>
  %o2 = dit.attention self %o, %o, %o {num_heads = 2 : i64, head_dim = 4 : i64, shard_over_sp = false} : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o2 : tensor<1x4x8xf32>
}
}

// -----

// FLUX single block under tp 2: attention and MLP outputs concatenate into
// one row-parallel projection made of two TP-split segments.
module attributes {dit.mesh = #dit.mesh<tp = 2>} {
// CHECK-LABEL: func.func @transformer
func.func @transformer(%latents: tensor<1x4x4x4xf32> {dit.input = "latents"}) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "x_embedder"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  %m = dit.linear %x {weight = "proj_mlp", bias = true} : tensor<1x4x8xf32> -> tensor<1x4x32xf32>
  %a = dit.activation gelu_tanh %m : tensor<1x4x32xf32> -> tensor<1x4x32xf32>
  %q = dit.linear %x {weight = "to_q", bias = true} : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  %o = dit.attention self %q, %q, %q {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  // CHECK: tensor.concat {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [tp{{\]\]}}>]
  %c = tensor.concat dim(2) %o, %a : (tensor<1x4x8xf32>, tensor<1x4x32xf32>) -> tensor<1x4x40xf32>
  // CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<row>, dit.tp_segments = array<i64: 8, 32>, weight = "proj_out"
  %p = dit.linear %c {weight = "proj_out", bias = true} : tensor<1x4x40xf32> -> tensor<1x4x8xf32>
  return %p : tensor<1x4x8xf32>
}
}

// -----

// The text is found by its dit.input name, wherever it sits: here it is
// the first argument, and its K/V projections are column-parallel over tp
// like any projection of tokens feeding attention heads.
module attributes {dit.mesh = #dit.mesh<tp = 2>} {
// CHECK-LABEL: func.func @transformer
func.func @transformer(%text: tensor<1x3x8xf32> {dit.input = "text"}, %latents: tensor<1x4x4x4xf32> {dit.input = "latents"}) -> tensor<1x4x8xf32> attributes {dit.component = #dit.component<transformer>} {
  %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "x_embedder"} : tensor<1x4x4x4xf32> -> tensor<1x4x8xf32>
  %q = dit.linear %x {weight = "attn2.to_q", bias = true} : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  // CHECK: dit.linear {{.*}}dit.sharding = [#dit.sharding<dims = {{\[\[}}], [], [tp{{\]\]}}>], dit.tp = #dit.tp_role<column>, weight = "attn2.to_k"
  %k = dit.linear %text {weight = "attn2.to_k", bias = true} : tensor<1x3x8xf32> -> tensor<1x3x8xf32>
  // CHECK: dit.linear {{.*}}dit.tp = #dit.tp_role<column>, weight = "attn2.to_v"
  %v = dit.linear %text {weight = "attn2.to_v", bias = true} : tensor<1x3x8xf32> -> tensor<1x3x8xf32>
  // CHECK: dit.attention cross {{.*}}dit.attention_plan = #dit.attention_plan<heads = [tp], rows = local>
  %o = dit.attention cross %q, %k, %v {num_heads = 2 : i64, head_dim = 4 : i64} : tensor<1x4x8xf32>, tensor<1x3x8xf32>, tensor<1x3x8xf32> -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}
}
