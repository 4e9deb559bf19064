//===- Importer.cpp - build the dit graph of a diffusion pipeline ---------===//
//
// Each family's transformer is written out block by block from a few shared
// sub-layers (attention, MLP, adaLN modulation) so that the structure of
// every family is visible in one place. Parameter names follow the diffusers
// checkpoints, so a plan's parameter slices can be matched to real weights.
//
//===----------------------------------------------------------------------===//
#include "ditc/Importer/Importer.h"
#include "ditc/Support/BadInput.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <set>

using namespace mlir;
using namespace mlir::dit;

namespace ditc {

Attribute buildModelAttr(MLIRContext &context, const ModelSpec &spec) {
  Builder b(&context);
  // Checked: a spec the attribute's verifier refuses gives a null attribute
  // and an error diagnostic, not an invalid attribute.
  auto emit = [&] { return emitError(b.getUnknownLoc()); };
  return ModelAttr::getChecked(
      llvm::function_ref<InFlightDiagnostic()>(emit), &context,
      StringRef(spec.info().name), StringRef(spec.className),
      spec.doubleBlocks, spec.singleBlocks, spec.numHeads, spec.headDim,
      spec.hiddenSize, spec.ffnSize, spec.textHiddenSize, spec.textEmbedDim,
      spec.latentChannels, spec.outChannels,
      b.getDenseI64ArrayAttr({spec.patch[0], spec.patch[1], spec.patch[2]}),
      spec.vaeSpatial, spec.vaeTemporal, spec.seqAlign, spec.experts);
}

Attribute buildWorkloadAttr(MLIRContext &context, const Workload &w) {
  Builder b(&context);
  auto emit = [&] { return emitError(b.getUnknownLoc()); };
  return WorkloadAttr::getChecked(
      llvm::function_ref<InFlightDiagnostic()>(emit), &context, w.batch,
      w.height, w.width, w.frames, w.latentFrames, w.latentHeight,
      w.latentWidth, w.imageTokens, w.textTokens, w.branches,
      b.getF64FloatAttr(w.guidanceScale), w.steps);
}

namespace {

/// Where adaLN chunks sit for one modulated sub-layer.
struct Chunks {
  std::optional<int64_t> shift;
  int64_t scale;
  std::optional<int64_t> gate;
};

/// Builds one transformer function. Every op created while `block` is set
/// carries the dit.block index, so pipeline parallelism can cut between any
/// two blocks.
class GraphBuilder {
public:
  GraphBuilder(OpBuilder &b, const ModelSpec &spec, const Workload &w,
               Type elementType)
      : b(b), loc(b.getUnknownLoc()), spec(spec), w(w), elt(elementType),
        D(spec.hiddenSize), L(w.textTokens), S(w.imageTokens), B(w.batch) {}

  void buildTransformer(func::FuncOp fn);

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elt);
  }
  RankedTensorType latentType(int64_t channels) {
    if (spec.info().video)
      return tensor({B, channels, w.latentFrames, w.latentHeight, w.latentWidth});
    return tensor({B, channels, w.latentHeight, w.latentWidth});
  }

private:
  template <typename OpTy, typename... Args>
  OpTy make(Args &&...args) {
    auto op = OpTy::create(b, loc, std::forward<Args>(args)...);
    if (block)
      op->setAttr(DitDialect::kBlockAttrName, b.getI64IntegerAttr(*block));
    return op;
  }

  static int64_t width(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape().back();
  }
  static int64_t tokens(Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(1);
  }

  //===--------------------------------------------------------------------===//
  // Sub-layers
  //===--------------------------------------------------------------------===//

  Value linear(Value x, int64_t out, const std::string &weight,
               bool bias = true) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = out;
    return make<LinearOp>(tensor(shape), x, b.getStringAttr(weight),
                          b.getBoolAttr(bias));
  }

  /// A norm is affine exactly when it names a weight.
  template <typename NormOp>
  Value norm(Value x, const std::string &weight,
             std::optional<int64_t> group) {
    return make<NormOp>(
        x.getType(), x, b.getBoolAttr(!weight.empty()),
        b.getF64FloatAttr(spec.eps),
        weight.empty() ? StringAttr() : b.getStringAttr(weight),
        group ? b.getI64IntegerAttr(*group) : IntegerAttr());
  }
  Value layerNorm(Value x, const std::string &weight = "",
                  std::optional<int64_t> group = std::nullopt) {
    return norm<LayerNormOp>(x, weight, group);
  }
  Value rmsNorm(Value x, const std::string &weight = "",
                std::optional<int64_t> group = std::nullopt) {
    return norm<RMSNormOp>(x, weight, group);
  }

  /// q/k normalization: per head (FLUX-style), across heads (Wan, LTX), or
  /// a per-head layer norm (CogVideoX).
  Value qkNorm(Value x, const std::string &weight) {
    if (!spec.qkNorm)
      return x;
    if (spec.family == Family::CogVideoX)
      return layerNorm(x, weight, spec.headDim);
    if (spec.qkNormAcrossHeads)
      return rmsNorm(x, weight);
    return rmsNorm(x, weight, spec.headDim);
  }

  Value adaln(Value condition, int64_t chunks, int64_t outWidth,
              const std::string &weight, bool table = false) {
    return make<AdaLNModulationOp>(tensor({B, chunks, outWidth}), condition,
                                   b.getI64IntegerAttr(chunks),
                                   b.getStringAttr(weight),
                                   table ? b.getUnitAttr() : UnitAttr());
  }

  Value modulate(Value x, Value params, const Chunks &c) {
    return make<ModulateOp>(
        x.getType(), x, params,
        c.shift ? b.getI64IntegerAttr(*c.shift) : IntegerAttr(),
        b.getI64IntegerAttr(c.scale));
  }

  Value residual(Value x, Value branch, Value params = {},
                 std::optional<int64_t> gate = std::nullopt) {
    if (params && gate)
      return make<ResidualAddOp>(x, branch, params, *gate);
    return make<ResidualAddOp>(x, branch);
  }

  Value rope(Value x, int64_t textTokens = 0,
             TextPosition position = TextPosition::Prefix) {
    if (!spec.useRope)
      return x;
    return make<RotaryEmbeddingOp>(
        x.getType(), x, b.getI64IntegerAttr(spec.numHeads),
        b.getDenseI64ArrayAttr(spec.ropeAxes),
        b.getDenseI64ArrayAttr({w.grid[0], w.grid[1], w.grid[2]}),
        b.getF64FloatAttr(spec.ropeTheta), b.getI64IntegerAttr(textTokens),
        TextPositionAttr::get(b.getContext(), position));
  }

  Value attention(AttentionKind kind, Value q, Value k, Value v,
                  int64_t textTokens = 0,
                  TextPosition position = TextPosition::Prefix,
                  bool varlen = false) {
    auto op = make<AttentionOp>(
        q.getType(), AttentionKindAttr::get(b.getContext(), kind),
        ValueRange{q, k, v}, b.getI64IntegerAttr(spec.numHeads),
        b.getI64IntegerAttr(spec.headDim),
        QKVLayoutAttr::get(b.getContext(), QKVLayout::Separate),
        b.getI64IntegerAttr(textTokens),
        TextPositionAttr::get(b.getContext(), position),
        b.getBoolAttr(varlen),
        KVCacheAttr::get(b.getContext(), KVCache::None), StringAttr(),
        b.getBoolAttr(true), UnitAttr());
    return op;
  }

  Value activation(ActivationKind kind, Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    if (kind == ActivationKind::SwiGLU || kind == ActivationKind::GeGLU)
      shape.back() /= 2;
    return make<ActivationOp>(tensor(shape),
                              ActivationKindAttr::get(b.getContext(), kind), x);
  }

  /// Feed-forward: up projection, activation, down projection back to the
  /// input width. Gated activations take a doubled up projection.
  Value mlp(Value x, int64_t inner, ActivationKind kind, const std::string &up,
            const std::string &down, bool bias = true) {
    bool gated = kind == ActivationKind::SwiGLU || kind == ActivationKind::GeGLU;
    Value h = linear(x, gated ? 2 * inner : inner, up, bias);
    h = activation(kind, h);
    return linear(h, width(x), down, bias);
  }

  Value concat(Value text, Value image, TextPosition position) {
    int64_t total = tokens(text) + tokens(image);
    return make<ConcatStreamsOp>(tensor({B, total, width(image)}), text, image,
                                 TextPositionAttr::get(b.getContext(), position));
  }

  std::pair<Value, Value> split(Value joint, int64_t textTokens,
                                TextPosition position) {
    int64_t dim = width(joint);
    auto op = make<SplitStreamsOp>(
        tensor({B, textTokens, dim}), tensor({B, tokens(joint) - textTokens, dim}),
        joint, TextPositionAttr::get(b.getContext(), position));
    return {op.getText(), op.getImage()};
  }

  Value timestepEmbedding(Value t, int64_t out, const std::string &weight) {
    return make<TimestepEmbeddingOp>(tensor({B, out}), t,
                                     b.getI64IntegerAttr(spec.freqDim),
                                     b.getStringAttr(weight));
  }

  /// `<prefix>.linear_1`, an activation, `<prefix>.linear_2`: the pooled-
  /// text projection of FLUX, HunyuanVideo and SD3 (SiLU) and the text
  /// projection of Wan and LTX-Video (tanh GELU).
  Value twoLayerProjection(Value x, int64_t out, const std::string &prefix,
                           ActivationKind kind) {
    Value h = linear(x, out, prefix + ".linear_1");
    h = activation(kind, h);
    return linear(h, out, prefix + ".linear_2");
  }

  //===--------------------------------------------------------------------===//
  // Blocks
  //===--------------------------------------------------------------------===//

  /// Self-attention over one stream with separate q/k/v (Wan, LTX).
  Value selfAttention(Value x, const std::string &p) {
    Value q = qkNorm(linear(x, D, p + ".to_q"), p + ".norm_q");
    Value k = qkNorm(linear(x, D, p + ".to_k"), p + ".norm_k");
    Value v = linear(x, D, p + ".to_v");
    Value o = attention(AttentionKind::Self, rope(q), rope(k), v);
    return linear(o, D, p + ".to_out.0");
  }

  /// Cross-attention of image tokens against the replicated text.
  Value crossAttention(Value x, Value text, const std::string &p) {
    Value q = qkNorm(linear(x, D, p + ".to_q"), p + ".norm_q");
    Value k = qkNorm(linear(text, D, p + ".to_k"), p + ".norm_k");
    Value v = linear(text, D, p + ".to_v");
    Value o = attention(AttentionKind::Cross, q, k, v);
    return linear(o, D, p + ".to_out.0");
  }

  /// Wan and LTX block: modulated self-attention, cross-attention to the
  /// text, modulated MLP, all on the image stream.
  /// `timeProjection` is the [B, 6 * D] projection all blocks share; each
  /// block adds its own learned table to it.
  Value wanStyleBlock(Value x, Value timeProjection, Value text, int64_t i) {
    bool wan = spec.family == Family::Wan;
    std::string p = (wan ? "blocks." : "transformer_blocks.") + std::to_string(i);
    Value mod = adaln(timeProjection, 6, D, p + ".scale_shift_table",
                      /*table=*/true);
    auto norm = [&](Value v) { return wan ? layerNorm(v) : rmsNorm(v); };
    Value h = modulate(norm(x), mod, {0, 1, 2});
    x = residual(x, selfAttention(h, p + ".attn1"), mod, 2);
    Value hc = wan ? layerNorm(x, p + ".norm2") : x;
    x = residual(x, crossAttention(hc, text, p + ".attn2"));
    h = modulate(norm(x), mod, {3, 4, 5});
    std::string ff = p + (wan ? ".ffn" : ".ff");
    Value f = mlp(h, spec.ffnSize, ActivationKind::GeluTanh,
                  ff + ".net.0.proj", ff + ".net.2");
    return residual(x, f, mod, 5);
  }

  struct DualNames {
    std::string imgMod, txtMod, imgMlp, txtMlp;
  };

  DualNames dualNames(const std::string &p) {
    if (spec.family == Family::QwenImage)
      return {p + ".img_mod.1", p + ".txt_mod.1", p + ".img_mlp", p + ".txt_mlp"};
    return {p + ".norm1.linear", p + ".norm1_context.linear", p + ".ff",
            p + ".ff_context"};
  }

  /// Dual-stream MMDiT block (FLUX, Qwen-Image, HunyuanVideo, SD3, Mochi):
  /// each stream is modulated and projected with its own weights, the two
  /// attend jointly, and each gets its own MLP.
  std::pair<Value, Value> dualStreamBlock(Value img, Value txt, Value temb,
                                          int64_t i, TextPosition position,
                                          bool varlen) {
    std::string p = "transformer_blocks." + std::to_string(i);
    DualNames n = dualNames(p);
    int64_t Dt = width(txt);
    bool mochi = spec.family == Family::Mochi;
    bool last = i + 1 == spec.doubleBlocks;
    // SD3's and Mochi's last block only feeds text into attention.
    bool contextPreOnly = last && (spec.family == Family::SD3 || mochi);
    bool dualAttention =
        std::find(spec.dualAttentionLayers.begin(),
                  spec.dualAttentionLayers.end(),
                  i) != spec.dualAttentionLayers.end();

    // Mochi modulates with RMSNormZero (scale and gate only).
    Chunks imgAttn = mochi ? Chunks{std::nullopt, 0, 1} : Chunks{0, 1, 2};
    Chunks imgMlp = mochi ? Chunks{std::nullopt, 2, 3} : Chunks{3, 4, 5};
    Chunks txtAttn = imgAttn, txtMlp = imgMlp;
    int64_t imgChunks = mochi ? 4 : (dualAttention ? 9 : 6);
    int64_t txtChunks = mochi ? 4 : 6;
    if (contextPreOnly) {
      txtChunks = mochi ? 1 : 2;
      txtAttn = mochi ? Chunks{std::nullopt, 0, std::nullopt}
                      : Chunks{1, 0, std::nullopt};
    }
    auto norm = [&](Value v) { return mochi ? rmsNorm(v) : layerNorm(v); };

    Value imgMod = adaln(temb, imgChunks, D, n.imgMod);
    Value txtMod = adaln(temb, txtChunks, Dt, n.txtMod);
    Value imgIn = modulate(norm(img), imgMod, imgAttn);
    Value txtIn = modulate(norm(txt), txtMod, txtAttn);

    std::string a = p + ".attn";
    Value qi = qkNorm(linear(imgIn, D, a + ".to_q"), a + ".norm_q");
    Value ki = qkNorm(linear(imgIn, D, a + ".to_k"), a + ".norm_k");
    Value vi = linear(imgIn, D, a + ".to_v");
    Value qt = qkNorm(linear(txtIn, D, a + ".add_q_proj"), a + ".norm_added_q");
    Value kt = qkNorm(linear(txtIn, D, a + ".add_k_proj"), a + ".norm_added_k");
    Value vt = linear(txtIn, D, a + ".add_v_proj");
    Value q = rope(concat(qt, qi, position), L, position);
    Value k = rope(concat(kt, ki, position), L, position);
    Value v = concat(vt, vi, position);
    Value o = attention(AttentionKind::Joint, q, k, v, L, position, varlen);
    auto [ot, oi] = split(o, L, position);

    Value imgAttnOut = linear(oi, D, a + ".to_out.0");
    if (mochi)
      imgAttnOut = rmsNorm(imgAttnOut);
    img = residual(img, imgAttnOut, imgMod, *imgAttn.gate);
    if (dualAttention) {
      // SD3.5 MMDiT-X: a second, image-only self-attention.
      Value h2 = modulate(layerNorm(img), imgMod, {6, 7, 8});
      img = residual(img, selfAttention(h2, p + ".attn2"), imgMod, 8);
    }
    Value h = modulate(norm(img), imgMod, imgMlp);
    ActivationKind act = mochi ? ActivationKind::SwiGLU : ActivationKind::GeluTanh;
    Value f = mlp(h, spec.ffnSize, act, n.imgMlp + ".net.0.proj",
                  n.imgMlp + ".net.2", !mochi);
    if (mochi)
      f = rmsNorm(f);
    img = residual(img, f, imgMod, *imgMlp.gate);

    if (!contextPreOnly) {
      Value txtAttnOut = linear(ot, Dt, a + ".to_add_out");
      if (mochi)
        txtAttnOut = rmsNorm(txtAttnOut);
      txt = residual(txt, txtAttnOut, txtMod, *txtAttn.gate);
      Value ht = modulate(norm(txt), txtMod, txtMlp);
      int64_t txtInner = textStreamFfnSize(spec.info().name, Dt, spec.ffnSize);
      Value ft = mlp(ht, txtInner, act, n.txtMlp + ".net.0.proj",
                     n.txtMlp + ".net.2", !mochi);
      if (mochi)
        ft = rmsNorm(ft);
      txt = residual(txt, ft, txtMod, *txtMlp.gate);
    }
    return {img, txt};
  }

  /// Single-stream block (FLUX, HunyuanVideo): one joint sequence, attention
  /// and MLP run in parallel from one modulated input and share proj_out.
  Value singleStreamBlock(Value x, Value temb, int64_t i,
                          TextPosition position, bool varlen) {
    std::string p = "single_transformer_blocks." + std::to_string(i);
    Value mod = adaln(temb, 3, D, p + ".norm.linear");
    Value h = modulate(layerNorm(x), mod, {0, 1, 2});
    Value m = activation(ActivationKind::GeluTanh,
                         linear(h, spec.ffnSize, p + ".proj_mlp"));
    std::string a = p + ".attn";
    Value q = rope(qkNorm(linear(h, D, a + ".to_q"), a + ".norm_q"), L, position);
    Value k = rope(qkNorm(linear(h, D, a + ".to_k"), a + ".norm_k"), L, position);
    Value v = linear(h, D, a + ".to_v");
    Value o = attention(AttentionKind::Joint, q, k, v, L, position, varlen);
    auto joined = make<tensor::ConcatOp>(
        /*dim=*/2, ValueRange{o, m});
    Value out = linear(joined, D, p + ".proj_out");
    return residual(x, out, mod, 2);
  }

  /// CogVideoX block: text and video share one set of weights; each stream
  /// has its own adaLN chunks and they attend jointly.
  std::pair<Value, Value> cogBlock(Value img, Value txt, Value temb, int64_t i) {
    std::string p = "transformer_blocks." + std::to_string(i);
    Value mod1 = adaln(temb, 6, D, p + ".norm1.linear");
    Value hi = modulate(layerNorm(img, p + ".norm1.norm"), mod1, {0, 1, 2});
    Value ht = modulate(layerNorm(txt, p + ".norm1.norm"), mod1, {3, 4, 5});
    std::string a = p + ".attn1";
    Value joint = concat(ht, hi, TextPosition::Prefix);
    Value q = rope(qkNorm(linear(joint, D, a + ".to_q"), a + ".norm_q"), L,
                   TextPosition::Prefix);
    Value k = rope(qkNorm(linear(joint, D, a + ".to_k"), a + ".norm_k"), L,
                   TextPosition::Prefix);
    Value v = linear(joint, D, a + ".to_v");
    Value o = attention(AttentionKind::Joint, q, k, v, L, TextPosition::Prefix);
    o = linear(o, D, a + ".to_out.0");
    auto [ot, oi] = split(o, L, TextPosition::Prefix);
    img = residual(img, oi, mod1, 2);
    txt = residual(txt, ot, mod1, 5);

    Value mod2 = adaln(temb, 6, D, p + ".norm2.linear");
    hi = modulate(layerNorm(img, p + ".norm2.norm"), mod2, {0, 1, 2});
    ht = modulate(layerNorm(txt, p + ".norm2.norm"), mod2, {3, 4, 5});
    Value f = mlp(concat(ht, hi, TextPosition::Prefix), spec.ffnSize,
                  ActivationKind::GeluTanh, p + ".ff.net.0.proj", p + ".ff.net.2");
    auto [ft, fi] = split(f, L, TextPosition::Prefix);
    img = residual(img, fi, mod2, 2);
    txt = residual(txt, ft, mod2, 5);
    return {img, txt};
  }

  /// HunyuanVideo's token refiner: a few self-attention blocks over the text
  /// alone (varlen-packed), before the main blocks.
  Value tokenRefiner(Value txt, Value temb) {
    for (int64_t j = 0; j < spec.refinerLayers; ++j) {
      std::string p = "context_embedder.token_refiner.refiner_blocks." +
                      std::to_string(j);
      Value mod = adaln(temb, 2, D, p + ".adaLN_modulation.1");
      Value h = layerNorm(txt, p + ".norm1");
      Value q = linear(h, D, p + ".attn.to_q");
      Value k = linear(h, D, p + ".attn.to_k");
      Value v = linear(h, D, p + ".attn.to_v");
      Value o = attention(AttentionKind::Self, q, k, v, 0,
                          TextPosition::Prefix, /*varlen=*/true);
      txt = residual(txt, linear(o, D, p + ".attn.to_out.0"), mod, 0);
      h = layerNorm(txt, p + ".norm2");
      txt = residual(txt,
                     mlp(h, spec.ffnSize, ActivationKind::Silu,
                         p + ".mlp.fc1", p + ".mlp.fc2"),
                     mod, 1);
    }
    return txt;
  }

  /// Final norm, projection to patches, and unpatchify.
  Value epilogue(Value x, Value temb, const std::string &modName,
                 Chunks chunks, bool table = false) {
    Value mod = adaln(temb, 2, D, modName, table);
    Value h = modulate(layerNorm(x), mod, chunks);
    int64_t patchVolume = spec.patch[0] * spec.patch[1] * spec.patch[2];
    h = linear(h, patchVolume * spec.outChannels, "proj_out");
    return make<UnpatchifyOp>(
        latentType(spec.outChannels), h,
        b.getDenseI64ArrayAttr({spec.patch[0], spec.patch[1], spec.patch[2]}),
        b.getDenseI64ArrayAttr({w.grid[0], w.grid[1], w.grid[2]}));
  }

  OpBuilder &b;
  Location loc;
  const ModelSpec &spec;
  const Workload &w;
  Type elt;
  int64_t D, L, S, B;
  std::optional<int64_t> block;
};

void GraphBuilder::buildTransformer(func::FuncOp fn) {
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  auto args = entry->getArguments();
  Value latents = args[0], t = args[1], text = args[2];
  unsigned next = 3;
  Value pooled = spec.pooledDim ? args[next++] : Value();
  Value guidance = spec.guidanceEmbeds ? args[next++] : Value();

  Value img = make<PatchEmbedOp>(
      tensor({B, S, D}), latents,
      b.getDenseI64ArrayAttr({spec.patch[0], spec.patch[1], spec.patch[2]}),
      b.getStringAttr(spec.family == Family::Wan          ? "patch_embedding"
                      : spec.family == Family::Flux       ? "x_embedder"
                      : spec.family == Family::QwenImage  ? "img_in"
                      : spec.family == Family::HunyuanVideo ? "x_embedder.proj"
                      : spec.family == Family::LTXVideo   ? "proj_in"
                      : spec.family == Family::SD3        ? "pos_embed.proj"
                                                          : "patch_embed.proj"));

  // Conditioning vector and projected text, family by family.
  Value temb, txt;
  std::string tembName = "time_text_embed.timestep_embedder";
  switch (spec.family) {
  case Family::Wan:
    temb = timestepEmbedding(t, D, "condition_embedder.time_embedder");
    txt = twoLayerProjection(text, D, "condition_embedder.text_embedder",
                             ActivationKind::GeluTanh);
    break;
  case Family::LTXVideo:
    temb = timestepEmbedding(t, D, "time_embed.emb.timestep_embedder");
    txt = twoLayerProjection(text, D, "caption_projection",
                             ActivationKind::GeluTanh);
    break;
  case Family::CogVideoX:
    temb = timestepEmbedding(t, spec.timeEmbedDim, "time_embedding");
    txt = linear(text, D, "patch_embed.text_proj");
    break;
  case Family::QwenImage:
    temb = timestepEmbedding(t, D, tembName);
    txt = linear(rmsNorm(text, "txt_norm"), D, "txt_in");
    break;
  case Family::Mochi:
    temb = timestepEmbedding(t, D, "time_embed.timestep_embedder");
    txt = linear(text, spec.textHiddenSize, "caption_proj");
    break;
  case Family::Flux:
  case Family::HunyuanVideo:
  case Family::SD3:
    temb = timestepEmbedding(t, D, tembName);
    if (guidance)
      temb = residual(temb, timestepEmbedding(guidance, D,
                                              "time_text_embed.guidance_embedder"));
    temb = residual(temb, twoLayerProjection(pooled, D,
                                             "time_text_embed.text_embedder",
                                             ActivationKind::Silu));
    txt = linear(text, D,
                 spec.family == Family::HunyuanVideo ? "context_embedder.proj_in"
                                                     : "context_embedder");
    if (spec.family == Family::HunyuanVideo)
      txt = tokenRefiner(txt, temb);
    break;
  }

  // Text before image tokens, except where diffusers concatenates the other
  // way (HunyuanVideo, SD3, Mochi put the image first).
  TextPosition position =
      (spec.family == Family::HunyuanVideo || spec.family == Family::SD3 ||
       spec.family == Family::Mochi)
          ? TextPosition::Suffix
          : TextPosition::Prefix;
  bool varlen = spec.family == Family::HunyuanVideo;

  int64_t index = 0;
  switch (spec.family) {
  case Family::Wan:
  case Family::LTXVideo: {
    // One projection of the time embedding serves every block's table.
    Value timeProjection = linear(
        activation(ActivationKind::Silu, temb), 6 * D,
        spec.family == Family::Wan ? "condition_embedder.time_proj"
                                   : "time_embed.linear");
    for (int64_t i = 0; i < spec.singleBlocks; ++i, ++index) {
      block = index;
      img = wanStyleBlock(img, timeProjection, txt, i);
    }
    break;
  }
  case Family::CogVideoX:
    for (int64_t i = 0; i < spec.singleBlocks; ++i, ++index) {
      block = index;
      std::tie(img, txt) = cogBlock(img, txt, temb, i);
    }
    block.reset();
    img = layerNorm(img, "norm_final");
    break;
  default: {
    for (int64_t i = 0; i < spec.doubleBlocks; ++i, ++index) {
      block = index;
      std::tie(img, txt) = dualStreamBlock(img, txt, temb, i, position, varlen);
    }
    if (spec.singleBlocks > 0) {
      block.reset();
      Value joint = concat(txt, img, position);
      for (int64_t i = 0; i < spec.singleBlocks; ++i, ++index) {
        block = index;
        joint = singleStreamBlock(joint, temb, i, position, varlen);
      }
      block.reset();
      img = split(joint, L, position).second;
    }
    break;
  }
  }
  block.reset();

  Value out;
  switch (spec.family) {
  case Family::Wan:
  case Family::LTXVideo:
    out = epilogue(img, temb, "scale_shift_table", {0, 1, std::nullopt},
                   /*table=*/true);
    break;
  case Family::CogVideoX:
    out = epilogue(img, temb, "norm_out.linear", {0, 1, std::nullopt});
    break;
  default:
    // AdaLayerNormContinuous: scale first, then shift.
    out = epilogue(img, temb, "norm_out.linear", {1, 0, std::nullopt});
    break;
  }
  func::ReturnOp::create(b, loc, out);
}

/// Adds a function to the module and returns it.
func::FuncOp addFunction(OpBuilder &b, ModuleOp module, StringRef name,
                         TypeRange inputs, TypeRange results,
                         StringRef component) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, b.getUnknownLoc(), name,
                                   b.getFunctionType(inputs, results));
  fn->setAttr(DitDialect::kComponentAttrName, b.getStringAttr(component));
  return fn;
}

} // namespace

OwningOpRef<ModuleOp> importModel(MLIRContext &context, const ModelSpec &spec,
                                  const Workload &w,
                                  const ImportOptions &options) {
  context.loadDialect<DitDialect, func::FuncDialect, tensor::TensorDialect>();
  if (spec.outChannels != spec.latentChannels)
    throw BadInput(spec.configPath + ": out_channels " +
                   std::to_string(spec.outChannels) + " differs from the " +
                   std::to_string(spec.latentChannels) +
                   " latent input channels; the scheduler step needs them "
                   "equal");
  // The readers check every field the ops' verifiers depend on. Should a
  // config still import to IR that does not verify, the verifier's message
  // becomes the bad-input error rather than a diagnostic of its own.
  std::string firstError;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error &&
        firstError.empty())
      firstError = diagnostic.str();
    return success();
  });
  auto refuse = [&] {
    throw BadInput(spec.configPath + ": the " + spec.className +
                   " config imports to a graph that does not verify: " +
                   firstError +
                   "; a config field is outside what the dit ops accept");
  };
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  Attribute modelAttr = buildModelAttr(context, spec);
  Attribute workloadAttr = buildWorkloadAttr(context, w);
  if (!modelAttr || !workloadAttr)
    refuse();
  (*module)->setAttr(DitDialect::kModelAttrName, modelAttr);
  (*module)->setAttr(DitDialect::kWorkloadAttrName, workloadAttr);

  Type elt = options.elementType == ElementType::F32
                 ? Type(b.getF32Type())
                 : Type(b.getBF16Type());
  GraphBuilder graph(b, spec, w, elt);
  int64_t B = w.batch;
  RankedTensorType latents = graph.latentType(spec.latentChannels);
  RankedTensorType textType = graph.tensor({B, w.textTokens, spec.textEmbedDim});
  RankedTensorType pooledType = graph.tensor({B, spec.pooledDim});
  auto scalarBatch = RankedTensorType::get({B}, b.getF32Type());
  auto sigmaType = RankedTensorType::get({}, b.getF32Type());

  // @text_encoder: the long text sequence, and the pooled CLIP vector for
  // families that take one.
  SmallVector<Type> textOutputs{textType};
  if (spec.pooledDim)
    textOutputs.push_back(pooledType);
  {
    func::FuncOp fn = addFunction(b, *module, "text_encoder", {}, textOutputs,
                                  "text_encoder");
    b.setInsertionPointToStart(fn.addEntryBlock());
    auto kind = ComponentKindAttr::get(&context, ComponentKind::TextEncoder);
    SmallVector<Value> results;
    results.push_back(ComponentOp::create(b, loc, TypeRange{textType}, kind,
                                            b.getStringAttr(spec.textEncoderClass),
                                            ValueRange{})
                          .getOutputs()[0]);
    if (spec.pooledDim)
      results.push_back(ComponentOp::create(b, loc, TypeRange{pooledType}, kind,
                                              b.getStringAttr("CLIPTextModel"),
                                              ValueRange{})
                            .getOutputs()[0]);
    func::ReturnOp::create(b, loc, results);
  }

  // @transformer (and @transformer_2): the denoiser, block by block.
  SmallVector<Type> transformerInputs{latents, scalarBatch, textType};
  if (spec.pooledDim)
    transformerInputs.push_back(pooledType);
  if (spec.guidanceEmbeds)
    transformerInputs.push_back(scalarBatch);
  std::vector<std::string> experts{"transformer"};
  if (spec.experts == 2)
    experts.push_back("transformer_2");
  for (const std::string &name : experts) {
    func::FuncOp fn = addFunction(b, *module, name, transformerInputs,
                                  {latents}, name);
    graph.buildTransformer(fn);
  }

  // @denoise_step: one guidance branch per transformer call, the CFG
  // combine, and the flow-matching Euler update.
  for (size_t e = 0; e < experts.size(); ++e) {
    SmallVector<Type> inputs{latents, scalarBatch, sigmaType, sigmaType};
    for (int64_t branch = 0; branch < w.branches; ++branch)
      inputs.append(textOutputs.begin(), textOutputs.end());
    if (spec.guidanceEmbeds)
      inputs.push_back(scalarBatch);
    std::string name = e == 0 ? "denoise_step" : "denoise_step_2";
    func::FuncOp fn = addFunction(b, *module, name, inputs, {latents},
                                  "denoise_step");
    b.setInsertionPointToStart(fn.addEntryBlock());
    auto args = fn.getArguments();
    SmallVector<Value> predictions;
    size_t perBranch = textOutputs.size();
    for (int64_t branch = 0; branch < w.branches; ++branch) {
      SmallVector<Value> callArgs{args[0], args[1]};
      for (size_t j = 0; j < perBranch; ++j)
        callArgs.push_back(args[4 + branch * perBranch + j]);
      if (spec.guidanceEmbeds)
        callArgs.push_back(args.back());
      predictions.push_back(
          func::CallOp::create(b, loc, experts[e], TypeRange{latents}, callArgs)
              .getResult(0));
    }
    Value velocity = predictions.front();
    if (predictions.size() > 1)
      velocity = CFGCombineOp::create(b, 
          loc, latents, predictions,
          b.getF64ArrayAttr(SmallVector<double>(predictions.size() - 1,
                                                w.guidanceScale)));
    Value stepped = SchedulerStepOp::create(b, 
        loc, latents,
        SchedulerKindAttr::get(&context, SchedulerKind::FlowMatchEuler),
        args[0], velocity, args[2], args[3]);
    func::ReturnOp::create(b, loc, stepped);
  }

  // @vae_decode: latents to pixels.
  {
    SmallVector<int64_t> pixels{B, 3};
    if (spec.info().video)
      pixels.push_back(w.frames);
    pixels.push_back(w.height);
    pixels.push_back(w.width);
    RankedTensorType video = graph.tensor(pixels);
    func::FuncOp fn =
        addFunction(b, *module, "vae_decode", {latents}, {video}, "vae");
    b.setInsertionPointToStart(fn.addEntryBlock());
    Value decoded =
        ComponentOp::create(b, 
             loc, TypeRange{video},
             ComponentKindAttr::get(&context, ComponentKind::VaeDecoder),
             b.getStringAttr(spec.vaeClass), ValueRange{fn.getArgument(0)})
            .getOutputs()[0];
    func::ReturnOp::create(b, loc, decoded);
  }

  if (failed(verify(*module)))
    refuse();
  return module;
}

} // namespace ditc
