//===- DitOps.td - dit dialect operations -----------------*- tablegen -*-===//
//
// Tensor-level ops of a diffusion transformer. Every op works on statically
// shaped ranked tensors. ODS checks what traits can say (attribute ranges,
// equal types, and the result types of the ops that infer them); each
// verifier checks the rest: that the shapes agree with the op's attributes
// (heads x head_dim = width, patch grids, stream lengths).
//
//===----------------------------------------------------------------------===//

#ifndef DIT_OPS_TD
#define DIT_OPS_TD

include "dit/IR/DitBase.td"
include "dit/IR/DitAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "dit/IR/DitInterfaces.td"
include "mlir/Dialect/Shard/Interfaces/ShardingInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"

def Dit_Tensor : StaticShapeTensorOf<[AnyType]>;

// Attribute ranges ODS checks before an op's verifier runs.
def Dit_PositiveI64Attr : ConfinedAttr<I64Attr, [IntPositive]>;
def Dit_NonNegativeI64Attr : ConfinedAttr<I64Attr, [IntNonNegative]>;
// A head count or head width: positive, and small enough that their product
// cannot overflow.
def Dit_HeadSizeAttr : ConfinedAttr<I64Attr, [IntPositive, IntMaxValue<1048576>]>;
// Three positive sizes, (frames, rows, columns) or (t, h, w).
def Dit_Positive3DAttr : ConfinedAttr<DenseI64ArrayAttr,
    [DenseArrayCount<3>, DenseArrayStrictlyPositive<DenseI64ArrayAttr>]>;
// Three reals, one per grid axis (frames, rows, columns).
def Dit_Grid3DF64Attr : ConfinedAttr<DenseF64ArrayAttr, [DenseArrayCount<3>]>;

// The interface lists each op implements (DitInterfaces.td): its sharding
// rule in DitShardingRules.cpp, its parameters in DitParameters.cpp, its
// cost in DitCost.cpp.
defvar Dit_Shardable = DeclareOpInterfaceMethods<DitShardableOpInterface>;
defvar Dit_ShardablePartition =
    DeclareOpInterfaceMethods<DitShardableOpInterface, ["partition"]>;
defvar Dit_Parameters = DeclareOpInterfaceMethods<DitParameterOpInterface>;
defvar Dit_Cost = DeclareOpInterfaceMethods<DitCostOpInterface>;
defvar Dit_CostTraffic =
    DeclareOpInterfaceMethods<DitCostOpInterface, ["getTraffic"]>;
// Dim 0 of every operand and result is the batch, and each batch element
// is computed from that element alone with attributes that never depend on
// the batch size (DitTraits.h verifies the shapes): such an op runs
// unchanged on requests concatenated along dim 0, which dit-batch-branches
// relies on to run guidance branches as one batch.
def Dit_BatchParallel : NativeOpTrait<"BatchParallel"> {
  let cppNamespace = "::mlir::dit";
}
// Upstream Shard's interface: loops and indexing maps of affine ops.
defvar Dit_AffineSharding = DeclareOpInterfaceMethods<ShardingInterface,
    ["getLoopIteratorTypes", "getIndexingMaps"]>;

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def Dit_TimestepEmbeddingOp : Dit_Op<"timestep_embedding", [Pure, Dit_BatchParallel,
    Dit_Shardable, Dit_Parameters, Dit_Cost]> {
  let summary = "Sinusoidal timestep features followed by an MLP";
  let description = [{
    Maps a batch of timesteps `[B]` to `[B, D]`: `freq_dim` sinusoidal
    features of `scale * t` (diffusers' `Timesteps` with
    `flip_sin_to_cos`: cosines first, frequencies `10000^(-k / (freq_dim / 2))`),
    then `linear_1`, SiLU, `linear_2` named after `weight`. `scale` (1 when
    absent) is what the transformer multiplies its input by before
    embedding it: FLUX.1-dev embeds its guidance scale times 1000.

    ```mlir
    %temb = dit.timestep_embedding %t {freq_dim = 256 : i64, weight = "condition_embedder.time_embedder"}
        : tensor<1xf32> -> tensor<1x5120xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$timestep, Dit_PositiveI64Attr:$freq_dim,
                   StrAttr:$weight,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$timestep attr-dict `:` type($timestep) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_TokenMeanOp : Dit_Op<"token_mean", [Pure, Dit_BatchParallel,
    SameOperandsAndResultElementType, Dit_Shardable, Dit_Cost]> {
  let summary = "Mean of a replicated sequence over its tokens";
  let description = [{
    `[B, L, E] -> [B, E]`: the average of the `L` token rows, HunyuanVideo's
    pooling of the raw text (`HunyuanVideoTokenRefiner`) before its own
    timestep-and-text embedding. With a `mask` `[B, L]` (the text mask: 1
    valid, 0 padding), the average of the valid rows only, as diffusers'
    `(x * mask).sum(1) / mask.sum(1)`. Only replicated sequences (the text)
    may be averaged: a mean over sequence shards would need a reduction the
    op does not perform.

    ```mlir
    %pooled = dit.token_mean %text mask %text_mask : tensor<1x256x4096xbf16>, tensor<1x256xbf16> -> tensor<1x4096xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Optional<Dit_Tensor>:$mask);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = [{
    $input (`mask` $mask^)? attr-dict `:` type($input) (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dit_AttentionPoolOp : Dit_Op<"attention_pool", [Pure, Dit_BatchParallel,
    SameOperandsAndResultElementType, Dit_Shardable, Dit_Parameters,
    Dit_Cost]> {
  let summary = "Pool a replicated sequence by attention from its mean";
  let description = [{
    `[B, L, E] -> [B, D]`, diffusers' `MochiAttentionPool`: the mean `m` of
    the `L` rows is put before them, `<weight>.to_kv` projects `[m ; x]` to
    keys (first `E` features) and values (last `E`), `<weight>.to_q`
    projects `m` to one query, `num_heads` heads attend (scale
    `1 / sqrt(E / num_heads)`), and `<weight>.to_out` maps the result to
    `D`. With a `mask` `[B, L]` (the text mask: 1 valid, 0 padding), `m` is
    the mean of the valid rows and a padded row is no key. Like
    `dit.token_mean`, only a replicated sequence (the text) may be pooled.

    ```mlir
    %pooled = dit.attention_pool %text mask %text_mask {num_heads = 8 : i64, weight = "time_embed.pooler"}
        : tensor<1x256x4096xbf16>, tensor<1x256xbf16> -> tensor<1x3072xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Optional<Dit_Tensor>:$mask,
                   Dit_HeadSizeAttr:$num_heads, StrAttr:$weight);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = [{
    $input (`mask` $mask^)? attr-dict `:` type($input) (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dit_PatchEmbedOp : Dit_Op<"patch_embed", [Pure, Dit_BatchParallel,
    Dit_ShardablePartition, Dit_Parameters, Dit_Cost]> {
  let summary = "Cut latents into patches and project them to the model width";
  let description = [{
    Takes latents `[B, C, H, W]` (images) or `[B, C, F, H, W]` (video) and
    produces tokens `[B, S, D]` with
    `S = (F / patch[0]) * (H / patch[1]) * (W / patch[2])` (F = 1 for
    images), tokens in (frame, row, column) order. Each token's
    `pt * ph * pw * C` values are projected to the model width by
    `<weight>.weight [D, C * pt * ph * pw]`, whose columns run in
    (C, pt, ph, pw) order: the order a convolution's kernel flattens in, and
    the order FLUX-style 2x2 packing feeds its linear. `kernel` names the
    diffusers module (`linear`, `conv2d` or `conv3d`), and so the shape the
    checkpoint stores the weight in: `[D, C * pt * ph * pw]`,
    `[D, C, ph, pw]` (`pt` must be 1) or `[D, C, pt, ph, pw]`.

    After partitioning the latents stay in patch-token layout: the input is
    then already patchified, `[B, S, pt * ph * pw * C]`, and the op is the
    projection alone. `features` is the order of those patch tokens'
    features, the order the family's unpatchify reads the transformer's
    output in: `channels_last` (pt, ph, pw, C; Wan, SD3, Mochi) or
    `channels_first` (C, pt, ph, pw; FLUX, Qwen-Image, HunyuanVideo,
    CogVideoX, LTX-Video). With `channels_last` each token is transposed to
    (C, pt, ph, pw) before the projection, so the weight is the checkpoint's
    tensor as stored.

    With `pos_embed` (SD3's `PatchEmbed` with `pos_embed_max_size`), each
    token then adds a row of the learned table `pos_embed`, a checkpoint
    tensor `[1, M * M, D]` for `M = pos_embed_max_size`: the table is an
    `M x M` grid, cropped to the image's `grid` (`[1, h, w]` tokens) at its
    centre, so token (r, c) adds row `(top + r) * M + left + c` with
    `top = (M - h) / 2` and `left = (M - w) / 2` (floor). After sequence
    partitioning the op holds one of `sequence_shards` (1 when absent) equal
    contiguous blocks of the grid's tokens, as `dit.rope` does.

    ```mlir
    %x = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "patch_embedding",
                                   kernel = #dit<patch_kernel conv3d>}
        : tensor<1x16x21x60x104xbf16> -> tensor<1x32760x5120xbf16>
    %y = dit.patch_embed %latents {patch = array<i64: 1, 2, 2>, weight = "pos_embed.proj",
                                   pos_embed = "pos_embed.pos_embed", pos_embed_max_size = 192 : i64,
                                   grid = array<i64: 1, 64, 64>}
        : tensor<1x16x128x128xbf16> -> tensor<1x4096x1536xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$latents, Dit_Positive3DAttr:$patch, StrAttr:$weight,
                   OptionalAttr<StrAttr>:$pos_embed,
                   OptionalAttr<Dit_PositiveI64Attr>:$pos_embed_max_size,
                   OptionalAttr<Dit_Positive3DAttr>:$grid,
                   OptionalAttr<Dit_PositiveI64Attr>:$sequence_shards,
                   DefaultValuedAttr<Dit_PatchKernelAttr,
                                     "::mlir::dit::PatchKernel::Linear">:$kernel,
                   DefaultValuedAttr<Dit_FeatureOrderAttr,
                                     "::mlir::dit::FeatureOrder::ChannelsLast">:$features);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$latents attr-dict `:` type($latents) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_RotaryEmbeddingOp : Dit_Op<"rope", [Pure, Dit_BatchParallel, AllTypesMatch<["input", "result"]>,
    Dit_ShardablePartition, Dit_Parameters, Dit_Cost, Dit_AffineSharding]> {
  let summary = "Rotary position embedding over a 3-D token grid";
  let description = [{
    Rotates each head of `[B, S, heads * head_dim]` by its token's position.
    Image tokens take positions from `grid` (frames, rows, columns), split
    over the head dimension by `axes_dims`, which must sum to `head_dim`.
    In a joint sequence `text_tokens` tokens sit before (`prefix`) or after
    (`suffix`) the image tokens; they get position zero. Each axis turns
    adjacent channel pairs (2k, 2k + 1) of its slice of the head by angle
    `position * theta^(-2k / axes_dim)`, diffusers' interleaved (complex or
    `repeat_interleave_real`) rotary embedding.

    `centered` gives Qwen-Image's positions (`QwenEmbedRope` with
    `scale_rope`): image row r of H sits at `r - (H - H / 2)`, column c of W
    at `c - (W - W / 2)` (frames still count from 0), and text token j sits
    at `m + j` on every axis, `m = max(H / 2, W / 2)` (floor divisions).

    After sequence
    partitioning the input holds one of `sequence_shards` equal contiguous
    blocks of the grid's tokens: the block at the rank's sequence position.

    `style` says how the frequencies sit on the channels (absent: `axes`):

    - `axes` (default): within each head, channels `[0, axes_dims[0])` turn
      with the frame index, the next `axes_dims[1]` with the row and the
      last `axes_dims[2]` with the column. Pair k of an axis of `dim`
      channels, `(2k, 2k + 1)`, turns by `position * theta^(-2k / dim)`.
    - `ltx` (LTX-Video): one table spans all heads, `W = heads * head_dim`
      channels. The first `W mod 6` channels stay as they are; after them
      pair j turns on axis `j mod 3` with frequency index `i = j / 3` of
      `n = W / 6`, by `(pi / 2) * theta^(i / (n - 1)) * (2 p - 1)`, where
      `p = position * coordinate_scale[axis]` is the fractional position.
      `axes_dims` is `[2n, 2n, 2n]`. Once tp splits the heads, the input
      holds head block `tp` of `head_shards`, and its channels are that
      block's part of the table.

    A pair `(a, b)` turned by angle θ becomes
    `(a cos θ − b sin θ, a sin θ + b cos θ)`.
    A token's position on axis `a` is `grid_offset[a] + grid_step[a] * i`
    for its grid index `i` (offset 0 and step 1 when absent): CogVideoX 1.0
    places its rotary grid on the crop of its training resolution, so a
    row's position can be a fraction of a row.

    With `weight` (Mochi's `pos_frequencies`), the frequencies are learned
    per head: the parameter `<weight>` is `[3, heads, head_dim / 2]`, and
    the channel pair `(2f, 2f + 1)` of head `h` turns by
    `sum_a position[a] * weight[a, h, f]`; `axes_dims` is then
    `[head_dim, 0, 0]`.

    ```mlir
    %q2 = dit.rope %q {num_heads = 40 : i64, axes_dims = array<i64: 44, 42, 42>,
                       grid = array<i64: 21, 30, 52>, theta = 1.0e+04 : f64,
                       text_tokens = 0 : i64, text_position = #dit<text_position prefix>}
        : tensor<1x32760x5120xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_PositiveI64Attr:$num_heads,
                   ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<3>]>:$axes_dims,
                   Dit_Positive3DAttr:$grid,
                   F64Attr:$theta, Dit_NonNegativeI64Attr:$text_tokens,
                   Dit_TextPositionAttr:$text_position,
                   DefaultValuedAttr<Dit_PositiveI64Attr, "1">:$sequence_shards,
                   // Optional rather than default-valued, so plans of the
                   // `axes` style keep their bytes.
                   OptionalAttr<Dit_RopeStyleAttr>:$style,
                   OptionalAttr<ConfinedAttr<DenseF64ArrayAttr,
                                             [DenseArrayCount<3>]>>:$coordinate_scale,
                   OptionalAttr<Dit_PositiveI64Attr>:$head_shards,
                   UnitAttr:$centered,
                   OptionalAttr<Dit_Grid3DF64Attr>:$grid_offset,
                   OptionalAttr<Dit_Grid3DF64Attr>:$grid_step,
                   OptionalAttr<StrAttr>:$weight);
  let extraClassDeclaration = [{
    /// The LTX-Video table over all heads (style ltx).
    bool isLtxStyle() { return getStyle() == ::mlir::dit::RopeStyle::Ltx; }
    /// The tp blocks the heads are split in (head_shards, 1 when absent).
    int64_t getHeadShardCount() { return getHeadShards().value_or(1); }
  }];
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Dit_SincosPosEmbedOp : Dit_Op<"sincos_pos_embed", [Pure, Dit_BatchParallel,
    AllTypesMatch<["input", "result"]>, Dit_ShardablePartition, Dit_Cost,
    Dit_AffineSharding]> {
  let summary = "Add a fixed 3-D sinusoidal position embedding to image tokens";
  let description = [{
    Adds to each image token of `[B, S, D]` (tokens of the (frames, rows,
    columns) `grid`, in that order) the sinusoidal embedding of its
    position, diffusers' `get_3d_sincos_pos_embed` (CogVideoX-2b): the first
    `D / 4` features embed the frame `f / temporal_scale`; the other
    `3 D / 4` embed the column `w / spatial_scale` (first half) and then the
    row `h / spatial_scale`. A part of width `n` at position `p` is
    `[sin(p w_j)..., cos(p w_j)...]` with `w_j = 10000^(-j / (n / 2))`,
    `j < n / 2`, so `D` must divide by 16. After sequence partitioning the
    input holds one of `sequence_shards` equal contiguous blocks of the
    grid's tokens, as for `dit.rope`.

    ```mlir
    %x2 = dit.sincos_pos_embed %x {grid = array<i64: 13, 30, 45>,
                                   spatial_scale = 1.875 : f64, temporal_scale = 1.0 : f64}
        : tensor<1x17550x1920xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_Positive3DAttr:$grid,
                   F64Attr:$spatial_scale, F64Attr:$temporal_scale,
                   DefaultValuedAttr<Dit_PositiveI64Attr, "1">:$sequence_shards);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear layers and normalization
//===----------------------------------------------------------------------===//

def Dit_LinearOp : Dit_Op<"linear", [Pure, Dit_BatchParallel, SameOperandsAndResultElementType,
    Dit_ShardablePartition, Dit_Parameters, Dit_Cost,
    DeclareOpInterfaceMethods<ShardingInterface, ["getLoopIteratorTypes",
        "getIndexingMaps", "getReductionLoopIteratorKinds"]>]> {
  let summary = "Affine projection of the last dimension";
  let description = [{
    `y = x W^T (+ b)` over the last dimension. `weight` is the parameter's
    name in the checkpoint, without the `.weight` suffix; the bias, if
    `bias` is true, is `<weight>.bias`. Tensor parallelism later marks the op
    column- or row-parallel.

    ```mlir
    %q = dit.linear %x {weight = "blocks.0.attn1.to_q", bias = true}
        : tensor<1x32760x5120xbf16> -> tensor<1x32760x5120xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, StrAttr:$weight, BoolAttr:$bias);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

class Dit_NormOp<string mnemonic, string what>
    : Dit_Op<mnemonic, [Pure, Dit_BatchParallel, AllTypesMatch<["input", "result"]>,
        DeclareOpInterfaceMethods<DitShardableOpInterface,
                                  ["getImplicitCollective"]>,
        Dit_Parameters, Dit_CostTraffic, Dit_AffineSharding]> {
  let summary = what # " over the last dimension, optionally affine";
  let arguments = (ins Dit_Tensor:$input, BoolAttr:$affine, F64Attr:$eps,
                   OptionalAttr<StrAttr>:$weight,
                   OptionalAttr<Dit_PositiveI64Attr>:$group_size);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Dit_LayerNormOp : Dit_NormOp<"layer_norm", "Layer norm"> {
  let description = [{
    Normalizes over groups of `group_size` features of the last dimension
    (the whole dimension when absent). An affine norm names its `weight`.

    ```mlir
    %n = dit.layer_norm %x {affine = false, eps = 1.0e-06 : f64} : tensor<1x4096x3072xbf16>
    ```
  }];
}

def Dit_RMSNormOp : Dit_NormOp<"rms_norm", "RMS norm"> {
  let description = [{
    `group_size = head_dim` normalizes each head on its own (FLUX's q/k
    norm); without it the norm spans all heads (Wan's
    `rms_norm_across_heads`), which matters for tensor parallelism.

    ```mlir
    %qn = dit.rms_norm %q {affine = true, eps = 1.0e-06 : f64, weight = "blocks.0.attn.norm_q",
                           group_size = 128 : i64} : tensor<1x4096x3072xbf16>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// adaLN
//===----------------------------------------------------------------------===//

def Dit_AdaLNModulationOp : Dit_Op<"adaln_modulation", [Pure, Dit_BatchParallel,
    Dit_Shardable, Dit_Parameters, Dit_Cost]> {
  let summary = "Project the conditioning vector to adaLN shift/scale/gate chunks";
  let description = [{
    `[B, E] -> [B, num_chunks, D]`: SiLU and a linear named `weight`
    (FLUX, SD3, Qwen-Image: one `[N * D, E]` projection per block). With
    `table` (Wan, LTX-Video), the condition is a projection shared by all
    blocks, `[B, N * D]` (or `[B, D]`, added to every chunk), and the op
    only adds the block's learned table named `weight`: `[1, N, D]` (Wan),
    or `[N, D]` with `table_rank = 2` (LTX-Video; absent: 3), as the checkpoint
    stores it.

    ```mlir
    %mod = dit.adaln_modulation %temb {num_chunks = 6 : i64, weight = "blocks.0.scale_shift_table"}
        : tensor<1x5120xbf16> -> tensor<1x6x5120xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$condition, Dit_PositiveI64Attr:$num_chunks, StrAttr:$weight,
                   UnitAttr:$table,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>,
                                                       IntMaxValue<3>]>>:$table_rank);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$condition attr-dict `:` type($condition) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_ModulateOp : Dit_Op<"modulate", [Pure, Dit_BatchParallel, AllTypesMatch<["input", "result"]>,
    Dit_Shardable, Dit_Cost, Dit_AffineSharding]> {
  let summary = "adaLN modulation: x * (1 + scale) + shift";
  let description = [{
    `shift` and `scale` index chunks of `params` `[B, N, D]`; they are
    broadcast over the tokens of `input` `[B, S, D]`. Without `shift` the
    op only scales (Mochi's RMSNormZero).

    ```mlir
    %m = dit.modulate %n, %mod {shift = 0 : i64, scale = 1 : i64}
        : tensor<1x32760x5120xbf16>, tensor<1x6x5120xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_Tensor:$params,
                   OptionalAttr<Dit_NonNegativeI64Attr>:$shift,
                   Dit_NonNegativeI64Attr:$scale);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input `,` $params attr-dict `:` type($input) `,` type($params)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Dit_AttentionOp : Dit_Op<"attention", [Pure, Dit_BatchParallel, SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<DitShardableOpInterface,
                              ["partition", "getImplicitCollective"]>,
    Dit_CostTraffic]> {
  let summary = "Multi-head scaled dot-product attention";
  let description = [{
    The inputs are `q, k, v` (`qkv_layout = separate`, each
    `[B, S, heads * head_dim]`) or one stacked `[B, S, 3 * heads * head_dim]`
    tensor (`stacked`, the legacy fused layout). The result is
    `[B, Sq, heads * head_dim]`.

    * `self`: queries and keys are the same tokens.
    * `cross`: keys and values come from another sequence (the replicated
      text); `Skv` may differ from `Sq`.
    * `joint`: one sequence of `text_tokens` text tokens and image tokens,
      the text at `text_position`. Sequence parallelism shards only the
      image part; the text part is replicated.

    A text encoder's self attention may add a `position_bias` as a fourth
    input, `[1 or B, heads, Sq, Skv]` (T5's relative position bias with its
    padding mask), may be `causal` (CLIP), and may set its `scale` (T5
    scales by 1; absent: `1 / sqrt(head_dim)`).

    `varlen` marks several packed segments per row (HunyuanVideo's text
    packing). With `key_mask`, the last input is the text mask `[B, L]` (1
    valid, 0 padding): a padded text token is never attended as a key. A
    joint attention's `L` is its `text_tokens`; a self attention over the
    text alone masks all of its keys. The mask stays whole on every rank
    (the text is never row-split), so ring and K/V-gather need not move it.
    `kv_cache` a paged KV cache, `backend` the attention kernel
    (for example `"fa"`, `"sage_attn"`, `"sdpa"`), and `shard_over_sp`
    whether sequence parallelism may split this attention's heads (when
    false, heads split over TP only). After partitioning, `gathered_kv`
    marks a self or joint attention whose keys and values were all-gathered
    over sequence shards: they then cover more rows than the local queries.

    ```mlir
    %o = dit.attention self %q, %k, %v {num_heads = 40 : i64, head_dim = 128 : i64}
        : tensor<1x32760x5120xbf16>, tensor<1x32760x5120xbf16>, tensor<1x32760x5120xbf16>
        -> tensor<1x32760x5120xbf16>
    ```
  }];
  let arguments = (ins
    Dit_AttentionKindAttr:$kind,
    Variadic<Dit_Tensor>:$inputs,
    Dit_HeadSizeAttr:$num_heads,
    Dit_HeadSizeAttr:$head_dim,
    DefaultValuedAttr<Dit_QKVLayoutAttr, "::mlir::dit::QKVLayout::Separate">:$qkv_layout,
    DefaultValuedAttr<Dit_NonNegativeI64Attr, "0">:$text_tokens,
    DefaultValuedAttr<Dit_TextPositionAttr, "::mlir::dit::TextPosition::Prefix">:$text_position,
    DefaultValuedAttr<BoolAttr, "false">:$varlen,
    DefaultValuedAttr<Dit_KVCacheAttr, "::mlir::dit::KVCache::None">:$kv_cache,
    OptionalAttr<StrAttr>:$backend,
    DefaultValuedAttr<BoolAttr, "true">:$shard_over_sp,
    UnitAttr:$gathered_kv,
    OptionalAttr<F64Attr>:$scale,
    UnitAttr:$causal,
    UnitAttr:$key_mask);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = [{
    `` $kind $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// MLP, residual, streams
//===----------------------------------------------------------------------===//

def Dit_ActivationOp : Dit_Op<"activation", [Pure, Dit_BatchParallel,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    Dit_Shardable, Dit_Cost, Dit_AffineSharding]> {
  let summary = "MLP activation; gated kinds halve the last dimension";
  let description = [{
    `gelu`, `gelu_tanh`, `silu`, `relu` and `quick_gelu` (`x * sigmoid(1.702 x)`,
    CLIP's) keep the shape. `swiglu` and `geglu`
    split the last dimension into halves `h` and `g` and return
    `h * act(g)`, as diffusers' `SwiGLU` and `GEGLU` do.

    ```mlir
    %h = dit.activation gelu_tanh %u : tensor<1x32760x13824xbf16> -> tensor<1x32760x13824xbf16>
    ```
  }];
  let arguments = (ins Dit_ActivationKindAttr:$kind, Dit_Tensor:$input);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "`` $kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_ResidualAddOp : Dit_Op<"residual_add",
    [Pure, Dit_BatchParallel, AllTypesMatch<["residual", "branch", "result"]>,
     Dit_Shardable, Dit_Cost, Dit_AffineSharding]> {
  let summary = "x + gate * y, with an optional adaLN gate chunk";
  let description = [{
    Adds a branch back to the residual stream. With a `gate` operand
    `[B, N, D]`, the branch is first multiplied by chunk `gate_chunk`, or
    by its `tanh` with `tanh_gate` (Mochi).

    ```mlir
    %r = dit.residual_add %x, %o gate %mod[2] : tensor<1x32760x5120xbf16>, tensor<1x6x5120xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$residual, Dit_Tensor:$branch,
                   Optional<Dit_Tensor>:$gate,
                   OptionalAttr<Dit_NonNegativeI64Attr>:$gate_chunk,
                   UnitAttr:$tanh_gate);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = [{
    $residual `,` $branch (`gate` $gate^ `[` $gate_chunk `]`)? attr-dict
    `:` type($residual) (`,` type($gate)^)?
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$residual, "::mlir::Value":$branch), [{
      build($_builder, $_state, residual.getType(), residual, branch,
            ::mlir::Value(), ::mlir::IntegerAttr(), ::mlir::UnitAttr());
    }]>,
    OpBuilder<(ins "::mlir::Value":$residual, "::mlir::Value":$branch,
                   "::mlir::Value":$gate, "int64_t":$chunk), [{
      build($_builder, $_state, residual.getType(), residual, branch, gate,
            $_builder.getI64IntegerAttr(chunk), ::mlir::UnitAttr());
    }]>
  ];
}

def Dit_ConcatStreamsOp : Dit_Op<"concat_streams", [Pure, Dit_BatchParallel,
    SameOperandsAndResultElementType,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    Dit_Shardable, Dit_Cost]> {
  let summary = "Join the text and image streams into one joint sequence";
  let description = [{
    `[B, St, D]` and `[B, Si, D]` give `[B, St + Si, D]`, the text first
    (`prefix`) or last (`suffix`).

    ```mlir
    %j = dit.concat_streams %txt, %img {text_position = #dit<text_position prefix>}
        : tensor<1x512x3072xbf16>, tensor<1x4096x3072xbf16> -> tensor<1x4608x3072xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$text, Dit_Tensor:$image, Dit_TextPositionAttr:$text_position);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$text `,` $image attr-dict `:` type($text) `,` type($image) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_SplitStreamsOp : Dit_Op<"split_streams", [Pure, Dit_BatchParallel,
    SameOperandsAndResultElementType,
    Dit_Shardable, Dit_Cost]> {
  let summary = "Split a joint sequence back into text and image streams";
  let description = [{
    The inverse of `dit.concat_streams`.

    ```mlir
    %t, %i = dit.split_streams %j {text_position = #dit<text_position prefix>}
        : tensor<1x4608x3072xbf16> -> tensor<1x512x3072xbf16>, tensor<1x4096x3072xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_TextPositionAttr:$text_position);
  let results = (outs Dit_Tensor:$text, Dit_Tensor:$image);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($text) `,` type($image)";
  let hasVerifier = 1;
}

def Dit_UnpatchifyOp : Dit_Op<"unpatchify", [Pure, Dit_BatchParallel,
    Dit_ShardablePartition, Dit_Cost]> {
  let summary = "Fold tokens back into latents";
  let description = [{
    `[B, F' * H' * W', pt * ph * pw * C] -> [B, C, F' * pt, H' * ph, W' * pw]`
    (rank 4 without the frame dimension for images), where `grid` is
    `[F', H', W']` and each token's features are in the `features` order:
    (pt, ph, pw, C) for `channels_last`, (C, pt, ph, pw) for
    `channels_first`, as the family's diffusers code reads its `proj_out`.
    It is the inverse of the patchify whose tokens `dit.patch_embed` reads
    (the same `features`).

    ```mlir
    %l = dit.unpatchify %x {patch = array<i64: 1, 2, 2>, grid = array<i64: 21, 30, 52>}
        : tensor<1x32760x64xbf16> -> tensor<1x16x21x60x104xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_Positive3DAttr:$patch,
                   Dit_Positive3DAttr:$grid,
                   DefaultValuedAttr<Dit_FeatureOrderAttr,
                                     "::mlir::dit::FeatureOrder::ChannelsLast">:$features);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_StackOp : Dit_Op<"stack", [Pure, SameTypeOperands,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Stack same-shaped tensors along a new dimension";
  let description = [{
    Packs tensors into one so that a single collective can move them:
    Ulysses sends Q, K and V in one all-to-all, and CFG exchanges the branch
    predictions in one all-gather.

    ```mlir
    %qkv = dit.stack %q, %k, %v {axis = 2 : i64}
        : tensor<1x16x32xbf16>, tensor<1x16x32xbf16>, tensor<1x16x32xbf16> -> tensor<1x16x3x32xbf16>
    ```
  }];
  let arguments = (ins Variadic<Dit_Tensor>:$inputs, Dit_NonNegativeI64Attr:$axis);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_UnstackOp : Dit_Op<"unstack", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Split a tensor along a dimension into its slices";
  let description = [{
    The inverse of `dit.stack`.

    ```mlir
    %q, %k, %v = dit.unstack %qkv {axis = 2 : i64}
        : tensor<1x32x3x16xbf16> -> tensor<1x32x16xbf16>, tensor<1x32x16xbf16>, tensor<1x32x16xbf16>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_NonNegativeI64Attr:$axis);
  let results = (outs Variadic<Dit_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def Dit_SplitOp : Dit_Op<"split", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Split a tensor along a dimension into equal parts";
  let description = [{
    The inverse of `tensor.concat` of `parts` same-shaped operands along
    `axis`: result `i` holds slice `i` of the input's dimension `axis`, cut
    into `parts` equal pieces. `dit-batch-branches` uses it to hand each
    guidance branch its prediction back from the batched call.

    ```mlir
    %cond, %uncond = dit.split %pred {axis = 0 : i64, parts = 2 : i64}
        : tensor<2x32x16xf32> -> tensor<1x32x16xf32>, tensor<1x32x16xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_NonNegativeI64Attr:$axis,
                   Dit_PositiveI64Attr:$parts);
  let results = (outs Variadic<Dit_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def Dit_CFGSelectOp : Dit_Op<"cfg_select", [Pure, SameOperandsAndResultType]> {
  let summary = "This rank's input for one of its guidance-branch slots";
  let description = [{
    Under CFG parallelism a rank at cfg coordinate `c` of `cfg` runs the
    branches `c * n / cfg ... (c + 1) * n / cfg - 1` of the `n` given. The
    op yields the input of branch `c * n / cfg + slot`. The per-role
    lowering replaces it with that input.

    ```mlir
    %text = dit.cfg_select %cond, %uncond {slot = 0 : i64, cfg = 2 : i64}
        : tensor<1x512x4096xbf16>, tensor<1x512x4096xbf16> -> tensor<1x512x4096xbf16>
    ```
  }];
  let arguments = (ins Variadic<Dit_Tensor>:$inputs, Dit_NonNegativeI64Attr:$slot,
                   Dit_PositiveI64Attr:$cfg);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Denoising loop
//===----------------------------------------------------------------------===//

def Dit_CFGCombineOp : Dit_Op<"cfg_combine", [Pure, SameOperandsAndResultType,
    Dit_Cost]> {
  let summary = "Classifier-free guidance combine of the branch predictions";
  let description = [{
    The last operand is the unconditional prediction `u`; the others are
    conditional predictions `c_i`, with one guidance scale each:
    `u + sum_i scale_i * (c_i - u)`. Two branches is ordinary CFG.

    ```mlir
    %g = dit.cfg_combine %cond, %uncond {guidance_scales = [5.0 : f64]}
        : tensor<1x16x21x60x104xf32>, tensor<1x16x21x60x104xf32> -> tensor<1x16x21x60x104xf32>
    ```
  }];
  let arguments = (ins Variadic<Dit_Tensor>:$branches, F64ArrayAttr:$guidance_scales);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$branches attr-dict `:` type($branches) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_SchedulerStepOp : Dit_Op<"scheduler_step", [Pure, Dit_Cost,
    AllTypesMatch<["latents", "velocity", "result"]>,
    AllTypesMatch<["sigma", "sigma_next"]>]> {
  let summary = "One elementwise scheduler update of the latents";
  let description = [{
    Flow-matching Euler: `latents + (sigma_next - sigma) * velocity`.
    Elementwise, so latents can stay sharded across steps. `sigma` and
    `sigma_next` are 0-d tensors.

    ```mlir
    %next = dit.scheduler_step flow_match_euler %x, %v, %s, %sn
        : tensor<1x16x21x60x104xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Dit_SchedulerKindAttr:$kind, Dit_Tensor:$latents,
                   Dit_Tensor:$velocity, 0DTensorOf<[AnyType]>:$sigma,
                   0DTensorOf<[AnyType]>:$sigma_next);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = [{
    `` $kind $latents `,` $velocity `,` $sigma `,` $sigma_next attr-dict
    `:` type($latents) `,` type($sigma)
  }];
}

//===----------------------------------------------------------------------===//
// VAE decoder
//===----------------------------------------------------------------------===//
// The ops of a decoder's body (a `dit.component vae_decoder` region): images
// [B, C, H, W] and videos [B, C, F, H, W], channels at dim 1 and rows at
// dim -2. Patch parallelism splits the rows into bands; each op states how
// many neighbouring rows one output row reads (`getHaloRows`) and whether
// it needs the whole image (`needsWholeImage`: a statistic or attention
// over every row), which is what the VAE rules and the band plan read.

// Interfaces of every VAE op: parameters where it names a weight, and cost.
// Row-local by default: `wholeImage` marks a statistic or attention over
// every row, `readsNeighbourRows` an op that defines getHaloRows itself.
class Dit_VaeOp<string mnemonic, list<Trait> traits = [], bit wholeImage = 0,
                bit readsNeighbourRows = 0>
    : Dit_Op<mnemonic, !listconcat([Pure, Dit_BatchParallel, Dit_Cost], traits)> {
  code vaeClassDeclaration = !strconcat(
    "/// Rows above and below an output row that it reads (0: row-local).\n",
    !if(readsNeighbourRows, "int64_t getHaloRows();\n",
                            "int64_t getHaloRows() { return 0; }\n"),
    "/// Whether a row of the result depends on every row of the input.\n",
    "bool needsWholeImage() { return ", !if(wholeImage, "true", "false"), "; }\n");
  let extraClassDeclaration = vaeClassDeclaration;
}

def Dit_ConvOp : Dit_VaeOp<"conv", [SameOperandsAndResultElementType, Dit_Parameters],
                          /*wholeImage=*/0, /*readsNeighbourRows=*/1> {
  let summary = "Stride-1 convolution that keeps the image size (2-D or causal 3-D)";
  let description = [{
    A `kernel` of two sizes (rows, columns) convolves each image, or each
    frame of a video; three sizes (frames, rows, columns) convolve a video
    in 3-D. Padding keeps the size: `kernel / 2` on each side of the rows
    and columns, and for a `causal` 3-D kernel `kernel - 1` frames before
    the first frame only (Wan's CausalConv3d). `weight` names the module:
    `<weight>.weight` is `[C_out, C_in, kernel...]`, `<weight>.bias`
    `[C_out]`. One output row reads `kernel_rows / 2` rows on either side:
    the halo a band of rows receives from its neighbours.

    In a band program (dit-partition-vae), `halo = array<i64: top, bottom>`
    says that the input's first `top` and last `bottom` rows are the
    neighbouring bands' rows (`shard.update_halo` fetched them): the
    convolution pads only the rows the halo does not cover, and its result
    has the input's rows less both halos.

    ```mlir
    %h = dit.conv %x {weight = "decoder.conv_in", kernel = array<i64: 3, 3>}
        : tensor<1x16x128x128xf32> -> tensor<1x512x128x128xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, StrAttr:$weight,
                   ConfinedAttr<DenseI64ArrayAttr,
                       [DenseArrayStrictlyPositive<DenseI64ArrayAttr>]>:$kernel,
                   UnitAttr:$causal,
                   OptionalAttr<ConfinedAttr<DenseI64ArrayAttr,
                       [DenseArrayCount<2>, DenseArrayNonNegative<DenseI64ArrayAttr>]>>:$halo);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_GroupNormOp : Dit_VaeOp<"group_norm", [AllTypesMatch<["input", "result"]>,
    Dit_Parameters], /*wholeImage=*/1> {
  let summary = "GroupNorm over channel groups and every pixel, affine";
  let description = [{
    Normalizes each of `num_groups` groups of channels over its channels and
    every pixel (and frame), then scales and shifts per channel by
    `<weight>.weight` and `<weight>.bias` (`[C]`). The statistics span the
    whole image: bands of rows all-reduce their partial sums.

    ```mlir
    %n = dit.group_norm %x {num_groups = 32 : i64, eps = 1.0e-06 : f64,
                            weight = "decoder.conv_norm_out"} : tensor<1x128x1024x1024xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_PositiveI64Attr:$num_groups,
                   F64Attr:$eps, StrAttr:$weight);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Dit_ChannelRMSNormOp : Dit_VaeOp<"channel_rms_norm", [AllTypesMatch<["input", "result"]>,
    Dit_Parameters]> {
  let summary = "RMS norm over the channels of each pixel (Wan's RMS_norm)";
  let description = [{
    `x / ||x||_C * sqrt(C) * gamma` at every pixel, with `<weight>.gamma`
    `[C, 1, 1, 1]`, or `[C, 1, 1]` with `image_gamma` (the attention's norm,
    built for images). Row-local: no halo, no statistics across rows.

    ```mlir
    %n = dit.channel_rms_norm %x {weight = "decoder.norm_out"} : tensor<1x96x9x64x64xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, StrAttr:$weight, UnitAttr:$image_gamma);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Dit_UpsampleOp : Dit_VaeOp<"upsample", [SameOperandsAndResultElementType]> {
  let summary = "Nearest-neighbour x2 over rows and columns";
  let description = [{
    Each pixel becomes a 2 x 2 block of itself; frames and channels keep
    their count. Band-local: latent band rows map to twice as many rows.

    ```mlir
    %u = dit.upsample %x : tensor<1x512x64x64xf32> -> tensor<1x512x128x128xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_TemporalUpsampleOp : Dit_VaeOp<"temporal_upsample", [SameOperandsAndResultElementType,
    Dit_Parameters]> {
  let summary = "Wan's time_conv: every frame but the first becomes two";
  let description = [{
    A causal `(3, 1, 1)` convolution `<weight>` to twice the channels, whose
    halves become two frames, on every frame but the first, which is kept
    once (diffusers' upsample3d on its first chunk): F frames give
    1 + 2 (F - 1). `<weight>.weight` is `[2C, C, 3, 1, 1]`.

    ```mlir
    %t = dit.temporal_upsample %x {weight = "decoder.up_blocks.0.upsamplers.0.time_conv"}
        : tensor<1x384x3x16x16xf32> -> tensor<1x384x5x16x16xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, StrAttr:$weight);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_DupUpOp : Dit_VaeOp<"dup_up", [SameOperandsAndResultElementType]> {
  let summary = "Wan 2.2's DupUp3D shortcut: channels spread over space and time";
  let description = [{
    Repeats each channel and spreads the copies over a 2 x 2 block of
    pixels and, with `temporal`, two frames (the first frame once), as the
    residual up blocks' `avg_shortcut` does. No parameters.

    ```mlir
    %s = dit.dup_up %x {temporal} : tensor<1x1024x3x8x8xf32> -> tensor<1x1024x5x16x16xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, UnitAttr:$temporal);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_ImageAttentionOp : Dit_VaeOp<"image_attention", [AllTypesMatch<["input", "result"]>,
    Dit_Parameters], /*wholeImage=*/1> {
  let summary = "The VAE mid block's one-head attention over each image's pixels";
  let description = [{
    Every pixel of a frame attends to every pixel of that frame with one
    head as wide as the channels; the result is the attention's output
    projection (the residual is a separate `dit.add`). `separate`
    projections are linears `<weight>.to_q`, `.to_k`, `.to_v` and
    `.to_out.0` (AutoencoderKL); `stacked` ones are 1 x 1 convolutions
    `<weight>.to_qkv` and `.proj` (Wan). Each band of rows needs the keys
    and values of every row.

    ```mlir
    %a = dit.image_attention %n {weight = "decoder.mid_block.attentions.0"}
        : tensor<1x512x128x128xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, StrAttr:$weight,
      DefaultValuedAttr<Dit_QKVLayoutAttr, "::mlir::dit::QKVLayout::Separate">:$qkv_layout);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Dit_AddOp : Dit_VaeOp<"add", [SameOperandsAndResultType]> {
  let summary = "Elementwise sum (a resnet's or the attention's residual)";
  let description = [{
    ```mlir
    %r = dit.add %x, %h : tensor<1x512x128x128xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$lhs, Dit_Tensor:$rhs);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Dit_DenormalizeLatentsOp : Dit_VaeOp<"denormalize_latents",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "The pipeline's latents * scale + shift before the decode";
  let description = [{
    One `scale` and `shift` for every channel, or one per channel:
    `1 / scaling_factor` and `shift_factor` (FLUX, SD3), `latents_std` and
    `latents_mean` (Wan, Qwen-Image).

    ```mlir
    %z = dit.denormalize_latents %l {scale = array<f64: 2.28>, shift = array<f64: 0.116>}
        : tensor<1x16x128x128xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, DenseF64ArrayAttr:$scale,
                   DenseF64ArrayAttr:$shift);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Dit_PixelUnpatchifyOp : Dit_VaeOp<"pixel_unpatchify", [SameOperandsAndResultElementType]> {
  let summary = "Wan 2.2's patchified output: C p^2 channels to p x p pixels";
  let description = [{
    `[B, C p^2, F, H, W]` to `[B, C, F, H p, W p]`, channel `c p^2 + q p + r`
    going to row offset `r` and column offset `q`.

    ```mlir
    %p = dit.pixel_unpatchify %x {patch = 2 : i64}
        : tensor<1x12x5x64x64xf32> -> tensor<1x3x5x128x128xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_PositiveI64Attr:$patch);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_ClampOp : Dit_VaeOp<"clamp", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Clamps to [min, max] (Wan's decode clamps to [-1, 1])";
  let description = [{
    ```mlir
    %c = dit.clamp %x {min = -1.0 : f64, max = 1.0 : f64} : tensor<1x3x9x64x64xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, F64Attr:$min, F64Attr:$max);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Text encoders
//===----------------------------------------------------------------------===//

// The ops a text encoder's graph adds to the linears, norms, attention and
// activations it shares with the transformer (T5, UMT5 and CLIP, as
// transformers builds them). Not batch-parallel: a bias without a padding
// mask has one row for every prompt.
class Dit_TextOp<string mnemonic, list<Trait> traits = []>
    : Dit_Op<mnemonic, !listconcat([Pure, Dit_Cost], traits)>;

def Dit_TokenEmbeddingOp : Dit_TextOp<"token_embedding", [Dit_Parameters]> {
  let summary = "Token ids to embeddings, plus learned positions (CLIP)";
  let description = [{
    `[B, L]` integer ids to `[B, L, D]` rows of `<weight>.weight`
    `[vocab_size, D]`; with `positions`, row `i` of `<positions>.weight`
    `[max_positions, D]` is added to token `i` (CLIP's position embedding).
    Tensor parallelism leaves it whole: every rank embeds every token.

    ```mlir
    %e = dit.token_embedding %ids {weight = "shared", vocab_size = 32128 : i64}
        : tensor<1x512xi64> -> tensor<1x512x4096xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$ids, StrAttr:$weight, Dit_PositiveI64Attr:$vocab_size,
                   OptionalAttr<StrAttr>:$positions,
                   OptionalAttr<Dit_PositiveI64Attr>:$max_positions);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$ids attr-dict `:` type($ids) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_RelativePositionBiasOp : Dit_TextOp<"relative_position_bias", [Dit_Parameters]> {
  let summary = "T5's relative position bias, with the padding mask added";
  let description = [{
    `[1 or B, heads, L, L]`: for query `i` and key `j`, row
    `bucket(j - i)` of `<weight>.weight` `[num_buckets, heads]`, with the
    bidirectional buckets of T5's encoder (half the buckets for keys after
    the query, the first half of each half exact, the rest logarithmic up to
    `max_distance`). A `mask` `[B, L]` (1 for tokens, 0 for padding) adds
    the float type's lowest value at padded keys and gives one bias per
    prompt. T5 computes it in its first layer and every layer reuses it;
    UMT5 has one per layer. Tensor parallelism splits the heads: each rank
    reads its `heads` columns of the table.

    ```mlir
    %b = dit.relative_position_bias {weight = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias",
        num_buckets = 32 : i64, max_distance = 128 : i64} : tensor<1x64x512x512xf32>
    ```
  }];
  let arguments = (ins Optional<Dit_Tensor>:$mask, StrAttr:$weight,
                   Dit_PositiveI64Attr:$num_buckets, Dit_PositiveI64Attr:$max_distance);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "($mask^ `:` type($mask))? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dit_MulOp : Dit_TextOp<"mul", [SameOperandsAndResultType]> {
  let summary = "Elementwise product (T5's gated feed-forward)";
  let description = [{
    ```mlir
    %g = dit.mul %a, %h : tensor<1x512x10240xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$lhs, Dit_Tensor:$rhs);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Dit_EosPoolOp : Dit_TextOp<"eos_pool"> {
  let summary = "CLIP's pooled output: each prompt's state at its end token";
  let description = [{
    `[B, L, D]` states and `[B, L]` ids to `[B, D]`: the state at the first
    `eos_token_id`, or, for the legacy `eos_token_id` 2, at the largest id
    (CLIP's end token is the last of its vocabulary), as transformers pools.

    ```mlir
    %p = dit.eos_pool %h, %ids {eos_token_id = 49407 : i64}
        : tensor<1x77x768xf32>, tensor<1x77xi64> -> tensor<1x768xf32>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_Tensor:$ids, I64Attr:$eos_token_id);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input `,` $ids attr-dict `:` type($input) `,` type($ids) `->` type($result)";
  let hasVerifier = 1;
}

def Dit_MaskRowsOp : Dit_TextOp<"mask_rows", [AllTypesMatch<["input", "result"]>]> {
  let summary = "Zeroes the states of padded tokens (Wan's prompt embeddings)";
  let description = [{
    `[B, L, D]` states and a `[B, L]` mask: rows whose mask is 0 become 0,
    as WanPipeline cuts each prompt's states at its length and pads with
    zeros.

    ```mlir
    %z = dit.mask_rows %h, %mask : tensor<1x512x4096xf32>, tensor<1x512xi64>
    ```
  }];
  let arguments = (ins Dit_Tensor:$input, Dit_Tensor:$mask);
  let results = (outs Dit_Tensor:$result);
  let assemblyFormat = "$input `,` $mask attr-dict `:` type($input) `,` type($mask)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pipeline components
//===----------------------------------------------------------------------===//

def Dit_ComponentOp : Dit_Op<"component", [IsolatedFromAbove]> {
  let summary = "A pipeline component: opaque, or with its graph as its body";
  let description = [{
    Stands for a network of the pipeline (a text encoder, an image encoder,
    the VAE decoder) by its class and its output shapes, which are enough to
    place it and to size the signals it sends. Where ditc models the class,
    the body holds the network's graph: one block whose arguments are the
    inputs, ended by `dit.yield` of the outputs (the VAE decoders of
    AutoencoderKL, AutoencoderKLWan and AutoencoderKLQwenImage; the text
    encoders T5EncoderModel, UMT5EncoderModel, CLIPTextModel and
    CLIPTextModelWithProjection, from token ids).

    ```mlir
    %text = dit.component text_encoder "UMT5EncoderModel" : () -> tensor<1x512x4096xbf16>
    %px = dit.component vae_decoder "AutoencoderKL"(%l)
        : (tensor<1x16x4x4xf32>) -> tensor<1x3x32x32xf32> {
    ^bb0(%z: tensor<1x16x4x4xf32>):
      ...
      dit.yield %p : tensor<1x3x32x32xf32>
    }
    ```
  }];
  let arguments = (ins Dit_ComponentKindAttr:$kind, StrAttr:$class_name,
                   Variadic<Dit_Tensor>:$inputs);
  let results = (outs Variadic<Dit_Tensor>:$outputs);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    `` $kind $class_name ( `(` $inputs^ `)` )? attr-dict `:` functional-type($inputs, $outputs)
    ($body^)?
  }];
  let hasVerifier = 1;
}

def Dit_YieldOp : Dit_Op<"yield", [Pure, Terminator,
    HasParent<"ComponentOp">]> {
  let summary = "The outputs of a component's body";
  let arguments = (ins Variadic<Dit_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // DIT_OPS_TD
