//===- CogVideoX.cpp - CogVideoX (CogVideoXTransformer3DModel) ------------===//
//
// diffusers' cogvideox_transformer_3d.py: text and video tokens share one
// sequence and one set of weights; each stream has its own adaLN chunks,
// q/k take a per-head LayerNorm, and rotary embedding is optional.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readCogVideoX(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.singleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/true);
  spec.textEmbedDim = config.getInt("text_embed_dim", 1, kMax);
  spec.timeEmbedDim = config.getInt("time_embed_dim", 1, kMax);
  spec.eps = config.getOptionalDouble("norm_eps", 1e-5, 1e-12, 1.0);
  spec.useRope = config.getOptionalBool("use_rotary_positional_embeddings", false);
  // CogVideoX rotates a quarter of each head by frame and 3/8 by row/column.
  spec.ropeAxes = {spec.headDim / 4, spec.headDim * 3 / 8, spec.headDim * 3 / 8};
  if (spec.useRope) {
    checkRopeAxes(config, "attention_head_dim", spec);
    checkRopeAxesEven(config, "attention_head_dim", spec, /*derived=*/true);
  }
  // The text and video streams share one sequence and one set of weights.
  spec.textHiddenSize = spec.hiddenSize;
}

/// CogVideoX's q/k norm is a LayerNorm over each head.
Value qkLayerNorm(GraphBuilder &g, Value x, const std::string &weight) {
  if (!g.spec.qkNorm)
    return x;
  return g.layerNorm(x, weight, g.spec.headDim);
}

/// Block `transformer_blocks.<i>`: both streams modulated with their own
/// chunks of one adaLN, joint attention, and one MLP over the joint sequence.
std::pair<Value, Value> cogBlock(GraphBuilder &g, Value img, Value txt,
                                 Value temb, int64_t i) {
  int64_t D = g.D, L = g.L;
  std::string p = "transformer_blocks." + std::to_string(i);
  GraphBuilder::ModuleScope block(g, p);
  Value mod1 = g.adaln(temb, 6, D, p + ".norm1.linear");
  Value hi = g.modulate(g.layerNorm(img, p + ".norm1.norm"), mod1, {0, 1, 2});
  Value ht = g.modulate(g.layerNorm(txt, p + ".norm1.norm"), mod1, {3, 4, 5});
  std::string a = p + ".attn1";
  Value o;
  {
    GraphBuilder::ModuleScope attn(g, a);
    Value joint = g.concat(ht, hi, TextPosition::Prefix);
    Value q = g.rope(qkLayerNorm(g, g.linear(joint, D, a + ".to_q"), a + ".norm_q"),
                     L, TextPosition::Prefix);
    Value k = g.rope(qkLayerNorm(g, g.linear(joint, D, a + ".to_k"), a + ".norm_k"),
                     L, TextPosition::Prefix);
    Value v = g.linear(joint, D, a + ".to_v");
    o = g.attention(AttentionKind::Joint, q, k, v, L, TextPosition::Prefix);
    o = g.linear(o, D, a + ".to_out.0");
  }
  auto [ot, oi] = g.split(o, L, TextPosition::Prefix);
  img = g.residual(img, oi, mod1, 2);
  txt = g.residual(txt, ot, mod1, 5);

  Value mod2 = g.adaln(temb, 6, D, p + ".norm2.linear");
  hi = g.modulate(g.layerNorm(img, p + ".norm2.norm"), mod2, {0, 1, 2});
  ht = g.modulate(g.layerNorm(txt, p + ".norm2.norm"), mod2, {3, 4, 5});
  Value f = g.mlp(g.concat(ht, hi, TextPosition::Prefix), g.spec.ffnSize,
                  ActivationKind::GeluTanh, p + ".ff", p + ".ff.net.0.proj",
                  p + ".ff.net.2");
  auto [ft, fi] = g.split(f, L, TextPosition::Prefix);
  img = g.residual(img, fi, mod2, 2);
  txt = g.residual(txt, ft, mod2, 5);
  return {img, txt};
}

Value buildCogVideoX(GraphBuilder &g, const TransformerInputs &in) {
  Value img = g.patchEmbed(in.latents, "patch_embed.proj");
  Value temb =
      g.timestepEmbedding(in.timestep, g.spec.timeEmbedDim, "time_embedding");
  Value txt = g.linear(in.text, g.D, "patch_embed.text_proj");
  for (int64_t i = 0; i < g.spec.singleBlocks; ++i) {
    g.enterBlock(i);
    std::tie(img, txt) = cogBlock(g, img, txt, temb, i);
  }
  g.leaveBlock();
  img = g.layerNorm(img, "norm_final");
  return g.epilogue(img, temb, "norm_out.linear", {0, 1, std::nullopt});
}

} // namespace

const FamilyDef kCogVideoXFamily = {
    {"cogvideox", "CogVideoXTransformer3DModel", /*video=*/true,
     /*vaeSpatial=*/8, /*vaeTemporal=*/4, /*branches=*/2, 480, 720, 49, 6.0,
     50, /*textTokens=*/226, "T5EncoderModel", "AutoencoderKLCogVideoX"},
    readCogVideoX, buildCogVideoX};

} // namespace ditc
