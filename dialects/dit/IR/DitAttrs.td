//===- DitAttrs.td - model, workload and mesh attributes --*- tablegen -*-===//

#ifndef DIT_ATTRS_TD
#define DIT_ATTRS_TD

include "dit/IR/DitBase.td"

class Dit_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dit_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// A list of mesh axes, printed `[ring, ulysses]` (possibly empty).
class Dit_MeshAxisListParameter<string desc>
    : ArrayRefParameter<"::mlir::dit::MeshAxis", desc> {
  let parser = "::mlir::dit::parseMeshAxisList($_parser)";
  let printer = "::mlir::dit::printMeshAxisList($_printer, $_self)";
}
class Dit_OptionalMeshAxisListParameter<string desc>
    : OptionalArrayRefParameter<"::mlir::dit::MeshAxis", desc> {
  let parser = "::mlir::dit::parseMeshAxisList($_parser)";
  let printer = "::mlir::dit::printMeshAxisList($_printer, $_self)";
}
// A sharding's axes per dimension, printed `[[], [ring, ulysses], [tp]]`.
class Dit_DimAxesParameter<string desc>
    : ArrayRefParameter<"::mlir::dit::AxesAttr", desc> {
  let parser = "::mlir::dit::parseDimAxes($_parser)";
  let printer = "::mlir::dit::printDimAxes($_printer, $_self)";
}
// The rank lists of one axis's groups, printed `[[0, 1], [2, 3]]`.
class Dit_RankListsParameter<string desc>
    : ArrayRefParameter<"::mlir::DenseI64ArrayAttr", desc> {
  let parser = "::mlir::dit::parseRankLists($_parser)";
  let printer = "::mlir::dit::printRankLists($_printer, $_self)";
}

def Dit_ModelAttr : Dit_Attr<"Model", "model"> {
  let summary = "Architecture facts of one diffusion transformer";
  let description = [{
    Everything the sharding rules need to know about the network itself.
    `double_blocks` counts dual-stream (text + image) blocks and
    `single_blocks` the single-stream ones; a model with one kind of block
    puts all of them in `single_blocks`. `text_hidden_size` is the width of
    the text stream inside joint blocks (it differs from `hidden_size` in
    Mochi). `seq_align` is the model's packing alignment for sharded tokens.

    ```mlir
    #dit.model<family = "wan", class_name = "WanTransformer3DModel",
               double_blocks = 0, single_blocks = 40, num_heads = 40,
               head_dim = 128, hidden_size = 5120, ffn_size = 13824,
               text_hidden_size = 5120, text_embed_dim = 4096,
               in_channels = 16, out_channels = 16,
               patch = array<i64: 1, 2, 2>, vae_spatial = 8,
               vae_temporal = 4, seq_align = 1, experts = 1>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"family name">:$family,
    StringRefParameter<"diffusers _class_name">:$class_name,
    "int64_t":$double_blocks,
    "int64_t":$single_blocks,
    "int64_t":$num_heads,
    "int64_t":$head_dim,
    "int64_t":$hidden_size,
    "int64_t":$ffn_size,
    "int64_t":$text_hidden_size,
    "int64_t":$text_embed_dim,
    "int64_t":$in_channels,
    "int64_t":$out_channels,
    "::mlir::DenseI64ArrayAttr":$patch,
    "int64_t":$vae_spatial,
    "int64_t":$vae_temporal,
    "int64_t":$seq_align,
    "int64_t":$experts
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumBlocks() const { return getDoubleBlocks() + getSingleBlocks(); }
  }];
}

def Dit_WorkloadAttr : Dit_Attr<"Workload", "workload"> {
  let summary = "One generation request's shape";
  let description = [{
    Resolution, frame count and guidance of one request, and the token
    counts they imply. `image_tokens` counts image or video tokens after VAE
    compression, patching and packing; these are the tokens sequence
    parallelism splits. `text_tokens` are counted separately and stay
    replicated. `branches` is the number of guidance branches the denoiser
    runs per step: 1 for guidance-distilled models, 2 for true CFG.

    ```mlir
    #dit.workload<batch = 1, height = 480, width = 832, frames = 81,
                  latent_frames = 21, latent_height = 60, latent_width = 104,
                  image_tokens = 32760, text_tokens = 512, branches = 2,
                  guidance_scale = 5.0, steps = 50>
    ```
  }];
  let parameters = (ins
    "int64_t":$batch,
    "int64_t":$height,
    "int64_t":$width,
    "int64_t":$frames,
    "int64_t":$latent_frames,
    "int64_t":$latent_height,
    "int64_t":$latent_width,
    "int64_t":$image_tokens,
    "int64_t":$text_tokens,
    "int64_t":$branches,
    "::mlir::FloatAttr":$guidance_scale,
    "int64_t":$steps
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Dit_MeshAttr : Dit_Attr<"Mesh", "mesh"> {
  let summary = "Named parallel mesh: one size per axis";
  let description = [{
    The seven parallel axes ditc knows, each with a size. The product of the
    sizes is the world size. Axes are named, Shardy-style, so diagnostics and
    group tables speak of `ulysses` rather than of grid dimension 5.
    `ring` and `kv_gather` fill the same slot and are never both above 1 in
    a legal plan; that is a legality rule, not a verifier constraint, so
    that the checker can report it with the rest.

    ```mlir
    #dit.mesh<dp = 1, cfg = 2, pp = 1, ring = 1, kv_gather = 1, ulysses = 2, tp = 2>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "1">:$dp,
    DefaultValuedParameter<"int64_t", "1">:$cfg,
    DefaultValuedParameter<"int64_t", "1">:$pp,
    DefaultValuedParameter<"int64_t", "1">:$ring,
    DefaultValuedParameter<"int64_t", "1">:$kv_gather,
    DefaultValuedParameter<"int64_t", "1">:$ulysses,
    DefaultValuedParameter<"int64_t", "1">:$tp
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}


def Dit_PlacementAttr : Dit_Attr<"Placement", "placement"> {
  let summary = "Parallel degrees and rank lists of one pipeline component";
  let description = [{
    How one component (`transformer`, `text_encoder`, `vae`) is placed.
    `mesh` holds its degrees; its `dp` is the number of replicas. Each entry
    of `instances` is one replica's rank list, laid out row-major over
    cfg, pp, ring | kv_gather, ulysses, tp; without `instances` the replicas
    are the contiguous blocks of the world. `backend` names the attention
    kernel, `kv_cache` the cache kind, and `pp_partition` an explicit number
    of blocks per pipeline stage.

    The `vae` component is split by bands of latent rows only:
    `vae_parallel_size` ranks decode each replica's latents, `row_split`
    states the latent rows of each band when they are not equal, and each
    entry of `instances` (when given) lists one replica's decoding ranks.

    The `text_encoder` component splits over `tp` only: each entry of
    `instances` (when given) lists the ranks that encode one replica's
    prompts, by default its first `tp` ranks; `offload = true` frees the
    encoders' weights once the prompts are encoded. On the `transformer` of a
    two-expert model (Wan 2.2 A14B), `offload = true` keeps only the running
    expert's weights resident (the `expert-offload` rule refuses it on one
    expert).

    ```mlir
    #dit.placement<component = "transformer",
                   mesh = #dit.mesh<cfg = 2, dp = 2>, backend = "fa",
                   instances = [array<i64: 0, 1>, array<i64: 2, 3>]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"component name">:$component,
    "::mlir::dit::MeshAttr":$mesh,
    OptionalParameter<"::mlir::StringAttr">:$backend,
    OptionalParameter<"::mlir::dit::KVCacheAttr">:$kv_cache,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$pp_partition,
    OptionalParameter<"::mlir::ArrayAttr">:$instances,
    OptionalParameter<"::mlir::IntegerAttr">:$vae_parallel_size,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$row_split,
    OptionalParameter<"::mlir::BoolAttr">:$offload
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Dit_SignalAttr : Dit_Attr<"Signal", "signal"> {
  let summary = "A tensor sent from one component to another";
  let description = [{
    `shard_dim`, when present, says the sender splits the tensor along that
    dimension over the receiving instance's ranks.

    ```mlir
    #dit.signal<from = "text_encoder", to = "transformer", shard_dim = 2>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"sending component">:$from,
    StringRefParameter<"receiving component">:$to,
    OptionalParameter<"::mlir::IntegerAttr">:$shard_dim
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Dit_DeploymentAttr : Dit_Attr<"Deployment", "deployment"> {
  let summary = "A whole parallel deployment: world, nodes, components, signals";
  let description = [{
    The configuration the legality rules judge. `nnodes` and
    `gpus_per_node` are optional; without them every rank is on one node.
    `mesh_order` lists the seven axis names outermost first; without it the
    order is dp, cfg, pp, ring, kv_gather, ulysses, tp.

    ```mlir
    #dit.deployment<num_gpus = 4, nnodes = 1, gpus_per_node = 4,
        placements = [#dit.placement<component = "transformer",
                                     mesh = #dit.mesh<cfg = 2, dp = 2>>],
        signals = []>
    ```
  }];
  let parameters = (ins
    "int64_t":$num_gpus,
    OptionalParameter<"::mlir::IntegerAttr">:$nnodes,
    OptionalParameter<"::mlir::IntegerAttr">:$gpus_per_node,
    "::mlir::ArrayAttr":$placements,
    OptionalParameter<"::mlir::ArrayAttr">:$signals,
    Dit_OptionalMeshAxisListParameter<"layout order, outermost first">:$mesh_order
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Dit_AxesAttr : Dit_Attr<"Axes", "axes"> {
  let summary = "A list of mesh axes";
  let description = [{
    Mesh axes, each at most once. `dit.mesh_axes` on the module is the grid's
    axis order (all seven, outermost first); `dit.reduce_stats_over` on a
    norm names the axes its statistics are all-reduced over.

    ```mlir
    #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>
    ```
  }];
  let parameters = (ins Dit_MeshAxisListParameter<"axes">:$axes);
  let assemblyFormat = "`<` $axes `>`";
  let genVerifyDecl = 1;
}

def Dit_ShardingAttr : Dit_Attr<"Sharding", "sharding"> {
  let summary = "How one value is split over named mesh axes";
  let description = [{
    `dims` has one list of mesh axes per tensor dimension: the axes that
    split that dimension, outermost first (Shardy-style named axes). A
    sequence dimension of a joint text + image tensor splits only its image
    tokens; `replicated_text` counts the text tokens every rank keeps whole.
    `partial` lists axes over which the value is a partial sum still to be
    all-reduced (the output of a row-parallel linear). No axis appears twice.

    ```mlir
    #dit.sharding<dims = [[], [ring, ulysses], [tp]], replicated_text = 512>
    ```
  }];
  let parameters = (ins
    Dit_DimAxesParameter<"axes per dimension">:$dims,
    DefaultValuedParameter<"int64_t", "0">:$replicated_text,
    Dit_OptionalMeshAxisListParameter<"pending partial-sum axes">:$partial
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Axes splitting dimension `dim` (empty when replicated).
    ::llvm::ArrayRef<::mlir::dit::MeshAxis> axesOf(unsigned dim) const;
  }];
}

def Dit_AttentionPlanAttr : Dit_Attr<"AttentionPlan", "attention_plan"> {
  let summary = "How one attention op is partitioned (`dit.attention_plan`)";
  let description = [{
    Set by dit-propagate-sharding on every attention op. `heads` lists the
    axes that split the heads (tp, then ulysses); `rows` says how the op
    reaches key/value rows other ranks hold: `none` (no sequence split),
    `local` (cross attention: the text keys are whole everywhere), `gather`
    (all-gather the sequence first), `ring` (rotate K/V blocks) or
    `kv_gather` (all-gather K and V).

    ```mlir
    #dit.attention_plan<heads = [tp, ulysses], rows = ring>
    ```
  }];
  let parameters = (ins
    Dit_MeshAxisListParameter<"axes splitting the heads">:$heads,
    "::mlir::dit::AttentionRows":$rows
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Dit_RoleAttr : Dit_Attr<"Role", "role"> {
  let summary = "The (pipeline stage, cfg coordinate) a role program runs";
  let description = [{
    Set by dit-lower-roles on each role function.

    ```mlir
    #dit.role<stage = 1, cfg = 0>
    ```
  }];
  let parameters = (ins "int64_t":$stage, "int64_t":$cfg);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Dit_GroupsAttr : Dit_Attr<"Groups", "groups"> {
  let summary = "Every mesh axis's communication groups as rank lists";
  let description = [{
    Set by dit-mesh-layout on the module. For each of the seven axes, the
    rank lists of its groups: every participating rank is in exactly one
    group per axis, the groups of one axis have the same size, and every
    axis covers the same ranks.

    ```mlir
    #dit.groups<dp = [[0], [1]], cfg = [[0, 1]], pp = [[0], [1]],
                ring = [[0], [1]], kv_gather = [[0], [1]],
                ulysses = [[0], [1]], tp = [[0], [1]]>
    ```
  }];
  let parameters = (ins
    Dit_RankListsParameter<"dp groups">:$dp,
    Dit_RankListsParameter<"cfg groups">:$cfg,
    Dit_RankListsParameter<"pp groups">:$pp,
    Dit_RankListsParameter<"ring groups">:$ring,
    Dit_RankListsParameter<"kv_gather groups">:$kv_gather,
    Dit_RankListsParameter<"ulysses groups">:$ulysses,
    Dit_RankListsParameter<"tp groups">:$tp
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The groups of `axis`.
    ::llvm::ArrayRef<::mlir::DenseI64ArrayAttr> of(::mlir::dit::MeshAxis axis) const;
  }];
}

#endif // DIT_ATTRS_TD
