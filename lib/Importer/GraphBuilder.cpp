//===- GraphBuilder.cpp - sub-layers and blocks shared by the families ----===//
//
// Parameter names follow the diffusers checkpoints, so a plan's parameter
// slices can be matched to real weights; an op that names a weight takes
// that name as its location, the others the module they sit in.
//
//===----------------------------------------------------------------------===//
#include "GraphBuilder.h"
#include "Family.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dit;

namespace ditc {

GraphBuilder::GraphBuilder(OpBuilder &b, const ModelSpec &spec,
                           const Workload &w, Type elementType)
    : b(b), spec(spec), w(w), D(spec.hiddenSize), L(w.textTokens),
      S(w.imageTokens), B(w.batch), loc(b.getUnknownLoc()), elt(elementType) {}

GraphBuilder::ModuleScope::ModuleScope(GraphBuilder &g, const std::string &path)
    : g(g), saved(g.loc) {
  g.loc = NameLoc::get(g.b.getStringAttr(path));
}

RankedTensorType GraphBuilder::latentType(int64_t channels) {
  if (spec.info().video)
    return tensor({B, channels, w.latentFrames, w.latentHeight, w.latentWidth});
  return tensor({B, channels, w.latentHeight, w.latentWidth});
}

void GraphBuilder::buildTransformer(func::FuncOp fn) {
  const FamilyDef *family = findFamily(spec.className);
  // loadModel only makes specs of registered families.
  assert(family && "spec of an unregistered family");
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  // Ops outside any submodule belong to the transformer itself.
  ModuleScope root(*this, fn.getName().str());
  auto args = entry->getArguments();
  TransformerInputs in;
  in.latents = args[0];
  in.timestep = args[1];
  in.text = args[2];
  unsigned next = 3;
  if (spec.pooledDim)
    in.pooled = args[next++];
  if (spec.textMask)
    in.textMask = textMask = args[next++];
  if (spec.guidanceEmbeds)
    in.guidance = args[next++];
  Value out = family->buildTransformer(*this, in);
  leaveBlock();
  func::ReturnOp::create(b, b.getUnknownLoc(), out);
}

//===----------------------------------------------------------------------===//
// Sub-layers
//===----------------------------------------------------------------------===//

Value GraphBuilder::patchEmbed(Value latents, const std::string &weight,
                               PatchKernel kernel, FeatureOrder features,
                               const std::string &posTable) {
  ModuleScope scope(*this, weight);
  tokenFeatures = features;
  bool table = !posTable.empty();
  return make<PatchEmbedOp>(
      tensor({B, S, D}), latents,
      b.getDenseI64ArrayAttr({spec.patch[0], spec.patch[1], spec.patch[2]}),
      b.getStringAttr(weight), table ? b.getStringAttr(posTable) : StringAttr(),
      table ? b.getI64IntegerAttr(spec.posEmbedMaxSize) : IntegerAttr(),
      table ? b.getDenseI64ArrayAttr({w.grid[0], w.grid[1], w.grid[2]})
            : DenseI64ArrayAttr(),
      IntegerAttr(), PatchKernelAttr::get(b.getContext(), kernel),
      FeatureOrderAttr::get(b.getContext(), features));
}

Value GraphBuilder::timestepEmbedding(Value t, int64_t out,
                                      const std::string &weight, double scale) {
  ModuleScope scope(*this, weight);
  // Scale 1 stays unwritten, so plans without one keep their bytes.
  return make<TimestepEmbeddingOp>(
      tensor({B, out}), t, b.getI64IntegerAttr(spec.freqDim),
      b.getStringAttr(weight),
      scale == 1.0 ? FloatAttr() : b.getF64FloatAttr(scale));
}

Value GraphBuilder::linear(Value x, int64_t out, const std::string &weight,
                           bool bias) {
  ModuleScope scope(*this, weight);
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = out;
  return make<LinearOp>(tensor(shape), x, b.getStringAttr(weight),
                        b.getBoolAttr(bias));
}

template <typename NormOp>
Value GraphBuilder::norm(Value x, const std::string &weight,
                         std::optional<int64_t> group,
                         std::optional<double> eps) {
  std::optional<ModuleScope> scope;
  if (!weight.empty())
    scope.emplace(*this, weight);
  return make<NormOp>(
      x.getType(), x, b.getBoolAttr(!weight.empty()),
      b.getF64FloatAttr(eps.value_or(spec.eps)),
      weight.empty() ? StringAttr() : b.getStringAttr(weight),
      group ? b.getI64IntegerAttr(*group) : IntegerAttr());
}

Value GraphBuilder::layerNorm(Value x, const std::string &weight,
                              std::optional<int64_t> group,
                              std::optional<double> eps) {
  return norm<LayerNormOp>(x, weight, group, eps);
}

Value GraphBuilder::rmsNorm(Value x, const std::string &weight,
                            std::optional<int64_t> group,
                            std::optional<double> eps) {
  return norm<RMSNormOp>(x, weight, group, eps);
}

Value GraphBuilder::qkNorm(Value x, const std::string &weight) {
  if (!spec.qkNorm)
    return x;
  if (spec.qkNormAcrossHeads)
    return rmsNorm(x, weight, std::nullopt, spec.qkNormEps);
  return rmsNorm(x, weight, spec.headDim, spec.qkNormEps);
}

Value GraphBuilder::adaln(Value condition, int64_t chunks, int64_t outWidth,
                          const std::string &weight, bool table) {
  ModuleScope scope(*this, weight);
  auto op = make<AdaLNModulationOp>(tensor({B, chunks, outWidth}), condition,
                                    b.getI64IntegerAttr(chunks),
                                    b.getStringAttr(weight),
                                    table ? b.getUnitAttr() : UnitAttr(),
                                    /*table_rank=*/IntegerAttr());
  // Set only where it differs from the default, so Wan's plans keep their
  // bytes.
  if (table && spec.modulationTableRank != 3)
    op.setTableRank(spec.modulationTableRank);
  return op;
}

Value GraphBuilder::modulate(Value x, Value params, const Chunks &c) {
  return make<ModulateOp>(
      x.getType(), x, params,
      c.shift ? b.getI64IntegerAttr(*c.shift) : IntegerAttr(),
      b.getI64IntegerAttr(c.scale));
}

Value GraphBuilder::residual(Value x, Value branch, Value params,
                             std::optional<int64_t> gate, bool tanhGate) {
  if (params && gate) {
    auto op = make<ResidualAddOp>(x, branch, params, *gate);
    op.setTanhGate(tanhGate);
    return op;
  }
  return make<ResidualAddOp>(x, branch);
}

Value GraphBuilder::tokenMean(Value x, Value mask) {
  auto type = cast<RankedTensorType>(x.getType());
  return make<TokenMeanOp>(tensor({type.getDimSize(0), type.getDimSize(2)}), x, mask);
}

Value GraphBuilder::attentionPool(Value x, int64_t heads, int64_t out,
                                  const std::string &weight, Value mask) {
  ModuleScope scope(*this, weight);
  auto type = cast<RankedTensorType>(x.getType());
  return make<AttentionPoolOp>(tensor({type.getDimSize(0), out}), x, mask,
                               b.getI64IntegerAttr(heads), b.getStringAttr(weight));
}

Value GraphBuilder::sincosPosEmbed(Value x, double spatialScale,
                                   double temporalScale) {
  return make<SincosPosEmbedOp>(
      x.getType(), x, b.getDenseI64ArrayAttr({w.grid[0], w.grid[1], w.grid[2]}),
      b.getF64FloatAttr(spatialScale), b.getF64FloatAttr(temporalScale));
}

Value GraphBuilder::rope(Value x, int64_t textTokens, TextPosition position) {
  if (!spec.useRope)
    return x;
  auto reals = [&](const std::optional<std::array<double, 3>> &v) {
    return v ? b.getDenseF64ArrayAttr(*v) : DenseF64ArrayAttr();
  };
  auto op = make<RotaryEmbeddingOp>(
      x.getType(), x, b.getI64IntegerAttr(spec.numHeads),
      b.getDenseI64ArrayAttr(spec.ropeAxes),
      b.getDenseI64ArrayAttr({w.grid[0], w.grid[1], w.grid[2]}),
      b.getF64FloatAttr(spec.ropeTheta), b.getI64IntegerAttr(textTokens),
      TextPositionAttr::get(b.getContext(), position),
      /*sequence_shards=*/IntegerAttr(), /*style=*/RopeStyleAttr(),
      /*coordinate_scale=*/DenseF64ArrayAttr(), /*head_shards=*/IntegerAttr(),
      /*centered=*/spec.ropeCentered ? b.getUnitAttr() : UnitAttr(),
      reals(ropeGridOffset), reals(ropeGridStep),
      ropeWeight.empty() ? StringAttr() : b.getStringAttr(ropeWeight));
  if (spec.ropeLtx) {
    op.setStyle(RopeStyle::Ltx);
    std::array<double, 3> scale = ltxRopeCoordinateScale(spec);
    op.setCoordinateScale(ArrayRef<double>(scale));
  }
  return op;
}

Value GraphBuilder::attention(AttentionKind kind, Value q, Value k, Value v,
                              int64_t textTokens, TextPosition position,
                              bool varlen) {
  // The text keys are a joint attention's text part, or every key of an
  // attention over the text alone (HunyuanVideo's varlen refiner).
  bool masked = textMask && (kind == AttentionKind::Joint || varlen);
  SmallVector<Value> inputs{q, k, v};
  if (masked)
    inputs.push_back(textMask);
  return make<AttentionOp>(
      q.getType(), AttentionKindAttr::get(b.getContext(), kind),
      inputs, b.getI64IntegerAttr(spec.numHeads),
      b.getI64IntegerAttr(spec.headDim),
      QKVLayoutAttr::get(b.getContext(), QKVLayout::Separate),
      b.getI64IntegerAttr(textTokens),
      TextPositionAttr::get(b.getContext(), position), b.getBoolAttr(varlen),
      KVCacheAttr::get(b.getContext(), KVCache::None), StringAttr(),
      b.getBoolAttr(true), UnitAttr(), /*scale=*/FloatAttr(), /*causal=*/UnitAttr(),
      /*key_mask=*/masked ? b.getUnitAttr() : UnitAttr());
}

Value GraphBuilder::activation(ActivationKind kind, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (kind == ActivationKind::SwiGLU || kind == ActivationKind::GeGLU)
    shape.back() /= 2;
  return make<ActivationOp>(tensor(shape),
                            ActivationKindAttr::get(b.getContext(), kind), x);
}

Value GraphBuilder::mlp(Value x, int64_t inner, ActivationKind kind,
                        const std::string &prefix, const std::string &up,
                        const std::string &down, bool bias) {
  ModuleScope scope(*this, prefix);
  bool gated = kind == ActivationKind::SwiGLU || kind == ActivationKind::GeGLU;
  Value h = linear(x, gated ? 2 * inner : inner, up, bias);
  h = activation(kind, h);
  return linear(h, width(x), down, bias);
}

Value GraphBuilder::concat(Value text, Value image, TextPosition position) {
  int64_t total = tokens(text) + tokens(image);
  return make<ConcatStreamsOp>(tensor({B, total, width(image)}), text, image,
                               TextPositionAttr::get(b.getContext(), position));
}

std::pair<Value, Value> GraphBuilder::split(Value joint, int64_t textTokens,
                                            TextPosition position) {
  int64_t dim = width(joint);
  auto op = make<SplitStreamsOp>(
      tensor({B, textTokens, dim}), tensor({B, tokens(joint) - textTokens, dim}),
      joint, TextPositionAttr::get(b.getContext(), position));
  return {op.getText(), op.getImage()};
}

Value GraphBuilder::concatFeatures(Value a, Value c) {
  return make<tensor::ConcatOp>(/*dim=*/2, ValueRange{a, c});
}

Value GraphBuilder::twoLayerProjection(Value x, int64_t out,
                                       const std::string &prefix,
                                       ActivationKind kind) {
  ModuleScope scope(*this, prefix);
  Value h = linear(x, out, prefix + ".linear_1");
  h = activation(kind, h);
  return linear(h, out, prefix + ".linear_2");
}

//===----------------------------------------------------------------------===//
// Embeddings and blocks
//===----------------------------------------------------------------------===//

Value GraphBuilder::combinedTimestepTextEmbedding(const TransformerInputs &in,
                                                  double guidanceScale) {
  ModuleScope scope(*this, "time_text_embed");
  Value temb =
      timestepEmbedding(in.timestep, D, "time_text_embed.timestep_embedder");
  if (in.guidance)
    temb = residual(temb, timestepEmbedding(in.guidance, D,
                                            "time_text_embed.guidance_embedder",
                                            guidanceScale));
  return residual(temb, twoLayerProjection(in.pooled, D,
                                           "time_text_embed.text_embedder",
                                           ActivationKind::Silu));
}

Value GraphBuilder::selfAttention(Value x, const std::string &p) {
  ModuleScope scope(*this, p);
  bool bias = spec.attentionBias;
  Value q = qkNorm(linear(x, D, p + ".to_q", bias), p + ".norm_q");
  Value k = qkNorm(linear(x, D, p + ".to_k", bias), p + ".norm_k");
  Value v = linear(x, D, p + ".to_v", bias);
  Value o = attention(AttentionKind::Self, rope(q), rope(k), v);
  return linear(o, D, p + ".to_out.0", spec.attentionOutBias);
}

Value GraphBuilder::crossAttention(Value x, Value text, const std::string &p) {
  ModuleScope scope(*this, p);
  bool bias = spec.attentionBias;
  Value q = qkNorm(linear(x, D, p + ".to_q", bias), p + ".norm_q");
  Value k = qkNorm(linear(text, D, p + ".to_k", bias), p + ".norm_k");
  Value v = linear(text, D, p + ".to_v", bias);
  Value o = attention(AttentionKind::Cross, q, k, v);
  return linear(o, D, p + ".to_out.0", spec.attentionOutBias);
}

Value GraphBuilder::wanStyleBlock(Value x, Value timeProjection, Value text,
                                  const std::string &p, const WanStyle &style) {
  ModuleScope scope(*this, p);
  Value mod = adaln(timeProjection, 6, D, p + ".scale_shift_table",
                    /*table=*/true);
  // Chunks: shift, scale, gate of the attention, then of the MLP.
  auto norm = [&](Value v, const char *name) {
    if (style.layerNorm)
      return layerNorm(v);
    return rmsNorm(v, spec.blockNormAffine ? p + "." + name : "");
  };
  Value h = modulate(norm(x, "norm1"), mod, {0, 1, 2});
  x = residual(x, selfAttention(h, p + ".attn1"), mod, 2);
  Value hc = style.layerNorm && spec.crossAttnNorm ? layerNorm(x, p + ".norm2") : x;
  x = residual(x, crossAttention(hc, text, p + ".attn2"));
  h = modulate(norm(x, "norm2"), mod, {3, 4, 5});
  std::string ff = p + "." + style.ffn;
  Value f = mlp(h, spec.ffnSize, ActivationKind::GeluTanh, ff,
                ff + ".net.0.proj", ff + ".net.2");
  return residual(x, f, mod, 5);
}

std::pair<Value, Value>
GraphBuilder::dualStreamBlock(Value img, Value txt, Value temb, int64_t i,
                              TextPosition position, bool varlen,
                              const DualStreamStyle &style) {
  std::string p = "transformer_blocks." + std::to_string(i);
  ModuleScope scope(*this, p);
  std::string imgModName = p + "." + style.imgMod;
  std::string txtModName = p + "." + style.txtMod;
  std::string imgMlpName = p + "." + style.imgMlp;
  std::string txtMlpName = p + "." + style.txtMlp;
  int64_t Dt = width(txt);
  bool last = i + 1 == spec.doubleBlocks;
  bool contextPreOnly = last && style.lastBlockContextPreOnly;
  bool dualAttention =
      std::find(spec.dualAttentionLayers.begin(),
                spec.dualAttentionLayers.end(),
                i) != spec.dualAttentionLayers.end();

  Chunks imgAttn{0, 1, 2}, imgMlp{3, 4, 5};
  Chunks txtAttn = imgAttn, txtMlp = imgMlp;
  int64_t imgChunks = dualAttention ? 9 : 6;
  int64_t txtChunks = 6;
  if (contextPreOnly) {
    txtChunks = 2;
    txtAttn = Chunks{1, 0, std::nullopt};
  }
  auto norm = [&](Value v) { return layerNorm(v); };

  Value imgMod = adaln(temb, imgChunks, D, imgModName);
  Value txtMod = adaln(temb, txtChunks, Dt, txtModName);
  Value imgNormed = norm(img);
  Value imgIn = modulate(imgNormed, imgMod, imgAttn);
  Value txtIn = modulate(norm(txt), txtMod, txtAttn);

  std::string a = p + ".attn";
  Value ot, oi;
  {
    ModuleScope attn(*this, a);
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
    std::tie(ot, oi) = split(o, L, position);
  }

  img = residual(img, linear(oi, D, a + ".to_out.0"), imgMod, *imgAttn.gate);
  if (dualAttention) {
    // SD3.5 MMDiT-X (SD35AdaLayerNormZeroX): a second, image-only
    // self-attention whose input is the block's input under the same norm,
    // modulated by chunks 6 and 7; its gated output joins after the first.
    Value h2 = modulate(imgNormed, imgMod, {6, 7, 8});
    img = residual(img, selfAttention(h2, p + ".attn2"), imgMod, 8);
  }
  Value h = modulate(norm(img), imgMod, imgMlp);
  ActivationKind act = ActivationKind::GeluTanh;
  Value f = mlp(h, spec.ffnSize, act, imgMlpName, imgMlpName + ".net.0.proj",
                imgMlpName + ".net.2");
  img = residual(img, f, imgMod, *imgMlp.gate);

  if (!contextPreOnly) {
    txt = residual(txt, linear(ot, Dt, a + ".to_add_out"), txtMod, *txtAttn.gate);
    Value ht = modulate(norm(txt), txtMod, txtMlp);
    int64_t txtInner = textStreamFfnSize(spec.info().name, Dt, spec.ffnSize);
    Value ft = mlp(ht, txtInner, act, txtMlpName, txtMlpName + ".net.0.proj",
                   txtMlpName + ".net.2");
    txt = residual(txt, ft, txtMod, *txtMlp.gate);
  }
  return {img, txt};
}

Value GraphBuilder::singleStreamBlock(Value x, Value temb, int64_t i,
                                      TextPosition position, bool varlen) {
  std::string p = "single_transformer_blocks." + std::to_string(i);
  ModuleScope scope(*this, p);
  Value mod = adaln(temb, 3, D, p + ".norm.linear");
  Value h = modulate(layerNorm(x), mod, {0, 1, 2});
  Value m = activation(ActivationKind::GeluTanh,
                       linear(h, spec.ffnSize, p + ".proj_mlp"));
  std::string a = p + ".attn";
  Value o;
  {
    ModuleScope attn(*this, a);
    Value q =
        rope(qkNorm(linear(h, D, a + ".to_q"), a + ".norm_q"), L, position);
    Value k =
        rope(qkNorm(linear(h, D, a + ".to_k"), a + ".norm_k"), L, position);
    Value v = linear(h, D, a + ".to_v");
    o = attention(AttentionKind::Joint, q, k, v, L, position, varlen);
  }
  Value joined = concatFeatures(o, m);
  Value out = linear(joined, D, p + ".proj_out");
  return residual(x, out, mod, 2);
}

Value GraphBuilder::mmditBlocks(Value img, Value txt, Value temb,
                                TextPosition position, bool varlen,
                                const DualStreamStyle &style) {
  int64_t index = 0;
  for (int64_t i = 0; i < spec.doubleBlocks; ++i, ++index) {
    enterBlock(index);
    std::tie(img, txt) =
        dualStreamBlock(img, txt, temb, i, position, varlen, style);
  }
  if (spec.singleBlocks > 0) {
    leaveBlock();
    Value joint = concat(txt, img, position);
    for (int64_t i = 0; i < spec.singleBlocks; ++i, ++index) {
      enterBlock(index);
      joint = singleStreamBlock(joint, temb, i, position, varlen);
    }
    leaveBlock();
    img = split(joint, L, position).second;
  }
  leaveBlock();
  return img;
}

Value GraphBuilder::epilogue(Value x, Value temb, const std::string &modName,
                             Chunks chunks, bool table,
                             const std::string &normWeight) {
  Value mod = adaln(temb, 2, D, modName, table);
  Value h;
  {
    ModuleScope scope(*this, "norm_out");
    h = modulate(layerNorm(x, normWeight, std::nullopt, spec.outNormEps), mod,
                 chunks);
  }
  int64_t patchVolume = spec.patch[0] * spec.patch[1] * spec.patch[2];
  h = linear(h, patchVolume * spec.outChannels, "proj_out");
  return make<UnpatchifyOp>(
      latentType(spec.outChannels), h,
      b.getDenseI64ArrayAttr({spec.patch[0], spec.patch[1], spec.patch[2]}),
      b.getDenseI64ArrayAttr({w.grid[0], w.grid[1], w.grid[2]}),
      FeatureOrderAttr::get(b.getContext(), tokenFeatures));
}

} // namespace ditc
