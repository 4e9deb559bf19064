//===- Passes.td - ditc pass declarations ------------------*- tablegen -*-===//
#ifndef DITC_TRANSFORMS_PASSES_TD
#define DITC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckLegality : Pass<"dit-check-legality", "::mlir::ModuleOp"> {
  let summary = "Check a parallel configuration against every sharding rule";
  let description = [{
    Judges the module's deployment (`dit.deployment`, or `dit.mesh` for a
    single transformer placement) against every legality rule, using the
    model facts in `dit.model` / `dit.workload` and the attention ops of the
    transformer functions. Every violated rule is reported, not only the
    first: errors as errors, cross-node placement as warnings, resolved
    defaults (backend, pipeline split) as remarks. Each message starts with
    the rule's stable id in brackets. The pass fails when any rule reports
    an error; it never changes the IR.

    Input:

    ```mlir
    module attributes {dit.mesh = #dit.mesh<ulysses = 4>,
                       dit.model = #dit.model<... num_heads = 38 ...>, ...} {
      func.func @transformer(...) {
        %o = dit.attention joint %q, %k, %v {num_heads = 38 : i64, ...}
      }
    }
    ```

    Output (diagnostics):

    ```
    error: [ulysses-heads] ulysses degree 4 does not divide the 38 TP-local
           heads (38 heads / tp 1)
    ```

    `ditc check` runs the same analysis and prints the diagnostics as
    `error[rule-id]: message`.
  }];
  let dependentDialects = ["::mlir::dit::DitDialect"];
  let statistics = [
    Statistic<"numErrors", "errors", "Rule errors reported">,
    Statistic<"numWarnings", "warnings", "Rule warnings reported">,
    Statistic<"numNotes", "notes", "Rule notes reported">
  ];
}

def MeshLayout : Pass<"dit-mesh-layout", "::mlir::ModuleOp"> {
  let summary = "Lay the deployment's ranks out on a shard.grid with named axes";
  let description = [{
    Emits `shard.grid @mesh` with one grid axis per parallel axis, in layout
    order (outermost first), records which name each grid axis has in
    `dit.mesh_axes`, and computes every axis's group rank lists once, in
    `dit.groups`. Ranks are row-major over the order. The default order
    dp, cfg, pp, ring, kv_gather, ulysses, tp keeps TP groups contiguous,
    Ulysses groups inside the TP stride and ring groups strided, with CFG,
    PP and DP outermost. `mesh-order` (or the deployment's `mesh_order`)
    overrides it. Replicas given as explicit rank lists keep their ranks;
    the layout applies inside each replica.

    `degrees` sets the module's `dit.mesh` before the layout, as a
    comma-separated list of `axis=size` entries, e.g.
    `--dit-mesh-layout="degrees=tp=2,ulysses=2"`; axes left out have size 1.
    It is for modules that carry no placement yet (`ditc import` output,
    hand-written tests): a module that already has `dit.mesh` or
    `dit.deployment` is refused rather than silently overridden. An entry
    naming an unknown axis, an axis twice, or a size that is not a positive
    integer is an error naming the entry.

    Input: `module attributes {dit.mesh = #dit.mesh<cfg = 2, tp = 2>}`

    Output:

    ```mlir
    module attributes {
      dit.groups = #dit.groups<dp = [[0], [1], [2], [3]],
                               cfg = [[0, 2], [1, 3]], ...,
                               tp = [[0, 1], [2, 3]]>,
      dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>} {
      shard.grid @mesh(shape = 1x2x1x1x1x1x2)
    }
    ```
  }];
  let options = [
    ListOption<"meshOrder", "mesh-order", "::mlir::dit::MeshAxis",
               "Mesh axes outermost first (a permutation of dp, cfg, pp, ring, "
               "kv_gather, ulysses, tp)">,
    ListOption<"degrees", "degrees", "std::string",
               "Parallel degrees to set as the module's dit.mesh before the "
               "layout, as axis=size entries (e.g. tp=2,ulysses=2); refused "
               "when the module already has dit.mesh or dit.deployment">
  ];
  let dependentDialects = ["::mlir::dit::DitDialect", "::mlir::shard::ShardDialect"];
}

def PropagateSharding : Pass<"dit-propagate-sharding", "::mlir::ModuleOp"> {
  let summary = "Assign every transformer value a sharding over the named mesh";
  let description = [{
    Walks each `@transformer` function once, in order, and annotates every
    op with `dit.sharding` (one `#dit.sharding` per result):

    * image tokens are split along the sequence over the sequence axes
      (ring, kv_gather, ulysses in mesh order); text tokens stay
      replicated; a joint sequence keeps its text whole
      (`replicated_text`) and splits its image tokens;
    * a linear whose output feeds attention heads or an MLP activation is
      column-parallel over tp (`dit.tp = #dit.tp_role<column>`); a linear whose input
      is split over tp is row-parallel (`dit.tp = #dit.tp_role<row>`) and its result a
      partial sum over tp; `dit.tp_segments` gives the global widths of the
      pieces a TP-split dimension is made of (the two halves a gated
      activation pairs up, the attention and MLP parts FLUX's single blocks
      concatenate);
    * a norm over a TP-split width without `group_size` reduces its
      statistics over tp (`dit.reduce_stats_over`);
    * each attention gets `dit.attention_plan`: the axes its heads split
      over (tp, then ulysses, or tp only when `shard_over_sp = false` or
      for cross attention) and how its query rows see the other rows
      (`ring`, `kv_gather`, `gather` over every sequence axis, `local` for
      cross attention against replicated text, `none`).

    With `explain`, every decision is also reported as a remark naming the
    parameter and the reason.

    ```mlir
    %q = dit.linear %x {weight = "blocks.0.attn1.to_q", dit.tp = #dit.tp_role<column>,
           dit.sharding = [#dit.sharding<dims = [[], [ulysses], [tp]]>]}
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", "false",
           "Report every sharding decision as a remark">
  ];
  let dependentDialects = ["::mlir::dit::DitDialect"];
}

def InsertCollectives : Pass<"dit-insert-collectives", "::mlir::ModuleOp"> {
  let summary = "Partition to local shapes and insert the upstream shard collectives";
  let description = [{
    Turns the annotated global-shape transformer into the SPMD program every
    rank runs: each value takes its local shape (from `dit.sharding`), and
    where shardings meet, the collective that reconciles them is inserted as
    an upstream `shard` op on `@mesh` (collectives are only well typed on
    local shapes, so partitioning and insertion are one step):

    * TP: `shard.all_reduce` after each row-parallel linear;
    * Ulysses: one `shard.all_to_all` before each attention with Q, K and V
      stacked into the one exchange (text tokens of a joint attention take
      their head slice with `shard.all_slice` instead), and one after
      (`shard.all_gather` of the text heads);
    * kv_gather: `shard.all_gather` of the image rows of K and V; an
      attention with `shard_over_sp = false` gathers them over every
      sequence axis;
    * ring: the attention op keeps its rows and holds the ring group
      (`dit.ring_axis`); K/V rotate inside it with an online-softmax merge;
    * CFG: in `@denoise_step` each rank runs its branch slots
      (`dit.cfg_select` picks their inputs), and one `shard.all_gather`
      over cfg per step brings the predictions to `dit.cfg_combine`.

    The denoising state stays in patch-token layout, split like the image
    tokens: `dit.unpatchify` disappears, `dit.patch_embed` projects
    patchified tokens, and the elementwise scheduler step runs on the
    local tokens, so latents never need gathering between steps.

    ```mlir
    %o = dit.linear %h {dit.tp = #dit.tp_role<row>, ...} : tensor<1x16x8xbf16> -> tensor<1x16x8xbf16>
    %r = shard.all_reduce %o on @mesh grid_axes = [6] : tensor<1x16x8xbf16> -> tensor<1x16x8xbf16>
    ```
  }];
  let dependentDialects = ["::mlir::dit::DitDialect", "::mlir::shard::ShardDialect", "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numCollectives", "collectives", "Collectives inserted">
  ];
}

def SplitStages : Pass<"dit-split-stages", "::mlir::ModuleOp"> {
  let summary = "Cut each transformer into pipeline stages joined by send/recv";
  let description = [{
    With pp > 1, every op of a transformer function goes to a stage: an op
    of block `i` (`dit.block`) to the stage whose contiguous block range
    holds `i` (the deployment's `pp_partition`, or the default split that
    puts the remainder on the middle stages); an op outside the blocks to
    the latest stage among its operands (so embeddings run on the first
    stage and the final projection on the last). Each stage becomes a
    function `@<name>_stage<k>`. A value defined before a boundary and used
    after it crosses it: the stage before sends it with `shard.send` over
    the pp grid axis and the stage after receives it with `shard.recv`,
    forwarding through middle stages, in the order the values are defined.
    The original function becomes a declaration that names its stages in
    `dit.stages`.

    ```mlir
    func.func @transformer_stage0(...) {
      ...
      %s = shard.send %h on @mesh grid_axes = [2] destination = [1] : (tensor<1x64x32xf32>) -> tensor<1x64x32xf32>
    }
    func.func @transformer_stage1(...) -> tensor<1x64x16xf32> {
      %e = tensor.empty() : tensor<1x64x32xf32>
      %h = shard.recv %e on @mesh grid_axes = [2] source = [0] : (tensor<1x64x32xf32>) -> tensor<1x64x32xf32>
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::dit::DitDialect", "::mlir::shard::ShardDialect", "::mlir::tensor::TensorDialect"];
}

def LowerRoles : Pass<"dit-lower-roles", "::mlir::ModuleOp"> {
  let summary = "One SPMD program per role (PP stage x CFG coordinate) and a rank table";
  let description = [{
    Specializes `@denoise_step` for every role, a (pipeline stage, cfg
    coordinate) pair, into `@<step>_s<stage>_c<cfg>` (`@denoise_step_s0_c1`): `dit.cfg_select` becomes
    the role's own branch input, transformer calls go to the role's stage
    function, and only the last stage keeps the CFG exchange, the combine
    and the scheduler step. With pp > 1 the last stage sends the updated
    latents back to the first stage, which receives them for the next step
    (both marked `dit.between_steps`, skipped after the final step). Every
    other axis (dp, tp, ulysses, ring, kv_gather) runs the same program on
    its own slices, so the number of programs never grows with the rank
    count. `dit.rank_roles` maps each rank to its role's index in
    `dit.roles`.
  }];
  let dependentDialects = ["::mlir::dit::DitDialect", "::mlir::shard::ShardDialect", "::mlir::tensor::TensorDialect"];
}

def BatchBranches : Pass<"dit-batch-branches", "::mlir::ModuleOp"> {
  let summary = "Run a role's guidance branches as one batched transformer call";
  let description = [{
    After `dit-lower-roles`, a role that calls one transformer function for
    several guidance branches (true CFG on cfg 1, or more branches than
    cfg ranks) calls it once, on the branches concatenated along the batch
    dimension, as diffusers' pipelines do: each call's operands become one
    `tensor.concat` along dim 0, the callee is copied as
    `@<callee>_batch<k>` with every value's batch dimension k times as
    large, and `dit.split` hands each branch its prediction back. Every
    weight is then read once per step instead of once per branch, and each
    collective inside the callee runs once, on k times the bytes.

    The copy is made only when every op of the callee is batch-parallel
    (the `BatchParallel` trait of the dit ops, or an upstream op that does
    not move data along dim 0) and every value leads with the batch;
    otherwise the calls stay as they are (with `explain`, a remark says
    why). With pp > 1 nothing changes: the branch calls are the pipeline's
    micro-batches, and one batched call would leave a stage idle while the
    other works.

    ```mlir
    %0 = call @transformer(%lat, %t, %text0) : (tensor<1x32x16xf32>, ...) -> tensor<1x32x16xf32>
    %1 = call @transformer(%lat, %t, %text1) : (tensor<1x32x16xf32>, ...) -> tensor<1x32x16xf32>
    ```

    becomes

    ```mlir
    %l = tensor.concat dim(0) %lat, %lat : (tensor<1x32x16xf32>, tensor<1x32x16xf32>) -> tensor<2x32x16xf32>
    ...
    %p = call @transformer_batch2(%l, %ts, %texts) : (tensor<2x32x16xf32>, ...) -> tensor<2x32x16xf32>
    %0, %1 = dit.split %p {axis = 0 : i64, parts = 2 : i64} : tensor<2x32x16xf32> -> tensor<1x32x16xf32>, tensor<1x32x16xf32>
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", "false",
           "Report each batching, and why calls stay separate, as remarks">
  ];
  let dependentDialects = ["::mlir::dit::DitDialect", "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numBatched", "batched", "Groups of branch calls batched">
  ];
}

def PartitionVae : Pass<"dit-partition-vae", "::mlir::ModuleOp"> {
  let summary = "Split the VAE decoder's graph into band programs with explicit exchanges";
  let description = [{
    With the vae placement's `vae_parallel_size` V > 1, `@vae_decode`'s
    decoder body becomes V functions `@vae_decode_band<i>` (`dit.vae_band`),
    band i holding the latent rows `row_split` (or an even split) gives it,
    every activation's rows scaled with them, on a grid `@vae_bands` of V.
    Each convolution that reads rows beyond its output row gets them first:
    a `tensor.pad` makes room for the halo and `shard.update_halo` fills it
    from the neighbouring bands, and the convolution's `halo` says how many
    of its input rows are theirs (none at the image's edges, which keep
    their zero padding). GroupNorm and the mid-block attention, whose
    statistics and keys span every band, are marked `dit.band_collective`.

    ```mlir
    %p = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 1, 0] {...} : tensor<1x8x2x4xf32> to tensor<1x8x4x4xf32>
    %h = shard.update_halo %p on @vae_bands split_axes = [[], [], [0], []] halo_sizes = [1, 1] : tensor<1x8x4x4xf32>
    %y = dit.conv %h {halo = array<i64: 1, 1>, kernel = array<i64: 3, 3>, weight = "decoder.conv_in"}
        : tensor<1x8x4x4xf32> -> tensor<1x8x2x4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::dit::DitDialect", "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def PartitionTextEncoder : Pass<"dit-partition-text-encoder", "::mlir::ModuleOp"> {
  let summary = "Split the text encoders' graphs over the text_encoder placement's tp ranks";
  let description = [{
    With the text_encoder placement's `tp_size` T > 1, every text encoder
    graph in `@text_encoder` becomes the program of one of T ranks on a grid
    `@text_encoder_tp` of T, split as Megatron splits a transformer: each
    linear that feeds an attention or the feed-forward's activation (q, k,
    v; wi, wi_0, wi_1, fc1) is column-parallel (`dit.tp = column`, its
    output width / T), the attention and T5's relative position bias keep
    heads / T, and each linear that reads them (o, wo, out_proj, fc2) is
    row-parallel (`dit.tp = row`) and followed by a `shard.all_reduce` of
    its partial sums. Norms, embeddings, residuals, pooling and CLIP's
    projection stay whole. The role of each linear comes from the graph,
    not from its name (`textEncoderTPRole`).

    ```mlir
    %q = dit.linear %n {dit.tp = #dit.tp_role<column>, weight = "encoder.block.0.layer.0.SelfAttention.q", bias = false}
        : tensor<1x8x16xf32> -> tensor<1x8x8xf32>
    %o = dit.linear %a {dit.tp = #dit.tp_role<row>, weight = "encoder.block.0.layer.0.SelfAttention.o", bias = false}
        : tensor<1x8x8xf32> -> tensor<1x8x16xf32>
    %s = shard.all_reduce %o on @text_encoder_tp mesh_axes = [0] : tensor<1x8x16xf32> -> tensor<1x8x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::dit::DitDialect", "::mlir::shard::ShardDialect",
                           "::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numAllReduces", "all-reduces", "All-reduces inserted after row-parallel linears">
  ];
}

def VerifyCollectives : Pass<"dit-verify-collectives", "::mlir::ModuleOp"> {
  let summary = "Check that every group's ranks issue matching collectives";
  let description = [{
    For every group of every axis, the member ranks' role programs must
    issue the same sequence of collectives on that group's axis, with the
    same kinds, shapes, element types and axes, and each stage's sends must
    match the next stage's receives one for one. A mismatch would hang or
    scramble a run; here it is a compile error that names the op and both
    roles.
  }];
  let dependentDialects = ["::mlir::dit::DitDialect"];
}

#endif // DITC_TRANSFORMS_PASSES_TD
