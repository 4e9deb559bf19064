//===- CogVideoX.cpp - CogVideoX (CogVideoXTransformer3DModel) ------------===//
//
// diffusers' cogvideox_transformer_3d.py: text and video tokens share one
// sequence and one set of weights; each stream has its own adaLN chunks,
// q/k take a per-head LayerNorm, and positions are either a fixed 3-D
// sin/cos table added after the patch embedding (CogVideoX-2b) or rotary
// (5b and 1.5).
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

#include "ditc/Support/BadInput.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

/// A config key that must hold its diffusers default, because the graph
/// implements only that: `what` says what another value would need.
void requireDefault(const JsonObject &config, const std::string &field,
                    const nlohmann::json &expected, const std::string &what) {
  if (config.has(field) && config.raw()[field] != expected)
    config.fail(field, "is not " + expected.dump() + "; " + what);
}

void readCogVideoX(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.singleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/true);
  spec.patchLinear = config.has("patch_size_t");
  spec.textEmbedDim = config.getInt("text_embed_dim", 1, kMax);
  spec.timeEmbedDim = config.getOptionalInt("time_embed_dim", 1, kMax).value_or(512);
  // time_proj is Timesteps(inner_dim, ...): as many sinusoidal features as
  // the model is wide.
  spec.freqDim = spec.hiddenSize;
  if (spec.freqDim % 2)
    config.fail("attention_head_dim",
                "gives an odd width " + std::to_string(spec.hiddenSize) +
                    "; the sinusoidal timestep features need an even one");
  spec.eps = config.getOptionalDouble("norm_eps", 1e-5, 1e-12, 1.0);
  spec.attentionBias = config.getOptionalBool("attention_bias", true);
  spec.useRope = config.getOptionalBool("use_rotary_positional_embeddings", false);
  // diffusers raises a ValueError for learned positional embeddings
  // without rotary ones: no checkpoint has them.
  if (!spec.useRope &&
      config.getOptionalBool("use_learned_positional_embeddings", false))
    config.fail("use_learned_positional_embeddings",
                "is true while use_rotary_positional_embeddings is false, "
                "expected false (diffusers' CogVideoXTransformer3DModel "
                "refuses learned positional embeddings without rotary ones)");
  requireDefault(config, "flip_sin_to_cos", true,
                 "the timestep embedding puts cosines first");
  requireDefault(config, "freq_shift", 0,
                 "the timestep embedding has no frequency shift");
  requireDefault(config, "activation_fn", "gelu-approximate",
                 "the feed-forward is tanh-approximated GELU");
  requireDefault(config, "timestep_activation_fn", "silu",
                 "the timestep MLP uses SiLU");
  requireDefault(config, "norm_elementwise_affine", true,
                 "every LayerNorm here is affine");
  if (config.has("ofs_embed_dim"))
    config.fail("ofs_embed_dim",
                "is set: the ofs embedding of CogVideoX 1.5 image-to-video "
                "is not imported; only text-to-video CogVideoX is");
  if (config.getOptionalBool("use_learned_positional_embeddings", false))
    config.fail("use_learned_positional_embeddings",
                "is true: the learned position table of CogVideoX-5b "
                "image-to-video is not imported; only text-to-video "
                "CogVideoX is");
  // CogVideoX 1.0 projects patches with a Conv2d (bias = patch_bias); 1.5's
  // Linear always has a bias.
  spec.ropeSliceGrid = config.has("patch_size_t");
  if (!spec.ropeSliceGrid && !config.getOptionalBool("patch_bias", true))
    config.fail("patch_bias", "is false; the patch embedding here always "
                              "adds its bias");
  int64_t p = spec.patch[1];
  spec.sampleHeight = config.getOptionalInt("sample_height", p, kMax).value_or(60);
  spec.sampleWidth = config.getOptionalInt("sample_width", p, kMax).value_or(90);
  spec.spatialInterpolation =
      config.getOptionalDouble("spatial_interpolation_scale", 1.875, 1e-6, 1e6);
  spec.temporalInterpolation =
      config.getOptionalDouble("temporal_interpolation_scale", 1.0, 1e-6, 1e6);
  spec.maxTextTokens =
      config.getOptionalInt("max_text_seq_length", 1, kMax).value_or(226);
  // Without rotary embeddings, CogVideoXPatchEmbed adds a position table
  // of max_text_seq_length text rows to the joint sequence, so the text
  // must have exactly that length.
  if (!spec.useRope)
    spec.requiredTextTokens = spec.maxTextTokens;
  // get_3d_rotary_pos_embed: a quarter of each head by frame and 3/8 by
  // row and by column (embed_dim // 8 * 3).
  spec.ropeAxes = {spec.headDim / 4, spec.headDim / 8 * 3, spec.headDim / 8 * 3};
  if (spec.useRope) {
    checkRopeAxes(config, "attention_head_dim", spec);
    checkRopeAxesEven(config, "attention_head_dim", spec, /*derived=*/true);
  } else if (spec.hiddenSize % 16) {
    // get_3d_sincos_pos_embed: D/4 for frames, 3D/8 per spatial axis,
    // each half sines and half cosines.
    config.fail("attention_head_dim",
                "gives a width " + std::to_string(spec.hiddenSize) +
                    " that does not divide by 16, which the fixed sin/cos "
                    "position table needs");
  }
  // The text and video streams share one sequence and one set of weights.
  spec.textHiddenSize = spec.hiddenSize;
}

/// Python's round(): halves go to the even neighbour.
int64_t roundHalfEven(double x) { return int64_t(std::nearbyint(x)); }

/// CogVideoX 1.0's rotary grid (the pipeline's
/// _prepare_rotary_positional_embeddings): the latent grid resized into
/// the training sample's, centred, and sampled by linspace(start,
/// stop * (n - 1) / n, n) per spatial axis; frames at 0, 1, 2, ...
void placeCogVideoXRotaryGrid(GraphBuilder &g) {
  const ModelSpec &spec = g.spec;
  int64_t gh = g.w.grid[1], gw = g.w.grid[2];
  int64_t th = spec.sampleHeight / spec.patch[1];
  int64_t tw = spec.sampleWidth / spec.patch[2];
  if (spec.ropeSliceGrid) {
    // 1.5: integer positions sliced from the sample's grid.
    if (gh > th || gw > tw)
      throw BadInput(spec.configPath + ": the token grid " +
                     std::to_string(gh) + " x " + std::to_string(gw) +
                     " exceeds sample_height / patch_size x sample_width / "
                     "patch_size = " +
                     std::to_string(th) + " x " + std::to_string(tw) +
                     ", the rotary table CogVideoX 1.5 slices; use a smaller "
                     "--height/--width");
    return;
  }
  int64_t resizeH, resizeW;
  if (double(gh) / double(gw) > double(th) / double(tw)) {
    resizeH = th;
    resizeW = roundHalfEven(double(th) / double(gh) * double(gw));
  } else {
    resizeW = tw;
    resizeH = roundHalfEven(double(tw) / double(gw) * double(gh));
  }
  int64_t top = roundHalfEven(double(th - resizeH) / 2.0);
  int64_t left = roundHalfEven(double(tw - resizeW) / 2.0);
  auto step = [](double start, double stop, int64_t n) {
    return n > 1 ? (stop * double(n - 1) / double(n) - start) / double(n - 1)
                 : 0.0;
  };
  g.ropeGridOffset = std::array<double, 3>{0.0, double(top), double(left)};
  g.ropeGridStep = std::array<double, 3>{
      1.0, step(double(top), double(top + resizeH), gh),
      step(double(left), double(left + resizeW), gw)};
}

/// Block `transformer_blocks.<i>`: both streams normalized by one affine
/// LayerNorm and modulated with their own chunks of one adaLN
/// (CogVideoXLayerNormZero: shift, scale, gate, then the text's), joint
/// attention with per-head q/k LayerNorms (eps 1e-6) and rotary on the
/// video rows, and one MLP over the joint sequence.
std::pair<Value, Value> cogBlock(GraphBuilder &g, Value img, Value txt,
                                 Value temb, int64_t i) {
  int64_t D = g.D, L = g.L;
  std::string p = "transformer_blocks." + std::to_string(i);
  GraphBuilder::ModuleScope block(g, p);
  auto qkNorm = [&](Value x, const std::string &weight) {
    return g.layerNorm(x, weight, g.spec.headDim, /*eps=*/1e-6);
  };
  Value mod1 = g.adaln(temb, 6, D, p + ".norm1.linear");
  Value hi = g.modulate(g.layerNorm(img, p + ".norm1.norm"), mod1, {0, 1, 2});
  Value ht = g.modulate(g.layerNorm(txt, p + ".norm1.norm"), mod1, {3, 4, 5});
  std::string a = p + ".attn1";
  bool bias = g.spec.attentionBias;
  Value o;
  {
    GraphBuilder::ModuleScope attn(g, a);
    Value joint = g.concat(ht, hi, TextPosition::Prefix);
    Value q = g.rope(qkNorm(g.linear(joint, D, a + ".to_q", bias), a + ".norm_q"),
                     L, TextPosition::Prefix);
    Value k = g.rope(qkNorm(g.linear(joint, D, a + ".to_k", bias), a + ".norm_k"),
                     L, TextPosition::Prefix);
    Value v = g.linear(joint, D, a + ".to_v", bias);
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
  const ModelSpec &spec = g.spec;
  // diffusers: nn.Conv2d per frame, or an nn.Linear on (C, pt, ph, pw) when
  // patch_size_t is set (CogVideoX 1.5); proj_out is read as (C, [pt,] ph, pw).
  Value img = g.patchEmbed(in.latents, "patch_embed.proj",
                           spec.patchLinear ? PatchKernel::Linear : PatchKernel::Conv2d,
                           FeatureOrder::ChannelsFirst);
  if (!spec.useRope) {
    // CogVideoXPatchEmbed adds a [max_text_seq_length + patches] table to
    // the joint sequence, zero on the text rows, so the text must fill
    // exactly those rows.
    if (g.L != spec.maxTextTokens)
      throw BadInput(spec.configPath + ": max_text_seq_length is " +
                     std::to_string(spec.maxTextTokens) + " but the text has " +
                     std::to_string(g.L) +
                     " tokens; CogVideoX's fixed position table covers "
                     "exactly max_text_seq_length text rows");
    img = g.sincosPosEmbed(img, spec.spatialInterpolation,
                           spec.temporalInterpolation);
  } else {
    placeCogVideoXRotaryGrid(g);
  }
  Value temb = g.timestepEmbedding(in.timestep, spec.timeEmbedDim, "time_embedding");
  Value txt = g.linear(in.text, g.D, "patch_embed.text_proj");
  for (int64_t i = 0; i < spec.singleBlocks; ++i) {
    g.enterBlock(i);
    std::tie(img, txt) = cogBlock(g, img, txt, temb, i);
  }
  g.leaveBlock();
  img = g.layerNorm(img, "norm_final");
  // AdaLayerNorm(chunk_dim=1): shift first, then scale, on an affine norm.
  return g.epilogue(img, temb, "norm_out.linear", {0, 1, std::nullopt},
                    /*table=*/false, "norm_out.norm");
}

} // namespace

const FamilyDef kCogVideoXFamily = {
    {"cogvideox", "CogVideoXTransformer3DModel", /*video=*/true,
     /*vaeSpatial=*/8, /*vaeTemporal=*/4, /*branches=*/2, 480, 720, 49, 6.0,
     50, /*textTokens=*/226, "T5EncoderModel", "AutoencoderKLCogVideoX"},
    readCogVideoX, buildCogVideoX};

} // namespace ditc
