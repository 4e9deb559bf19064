//===- Mochi.cpp - Mochi 1 (MochiTransformer3DModel) ----------------------- ===//
//
// diffusers' transformer_mochi.py: asymmetric dual-stream blocks (a
// narrower text stream) with MochiRMSNormZero modulation (scale and tanh
// gate), RMS-normalized branch outputs and bias-free SwiGLU MLPs, the text
// after the video; learned per-head rotary frequencies; a timestep
// embedding plus an attention pooling of the text as the conditioning.
// The transformer takes the text mask (encoder_attention_mask): the pooling
// and every attention count only the valid text tokens.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readMochi(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.doubleBlocks = config.getInt("num_layers", 1, 1024);
  spec.textMask = true;
  // SwiGLU MLP of 2/3 of 4x the width (diffusers MochiTransformerBlock).
  spec.ffnSize = (4 * spec.hiddenSize * 2) / 3;
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/false);
  spec.textEmbedDim = config.getInt("text_embed_dim", 1, kMax);
  spec.textHiddenSize = config.getInt("pooled_projection_dim", 1, kMax);
  spec.freqDim = readFreqDim(config, "time_embed_dim", 256);
  // MochiAttentionPool runs 8 heads over the text width.
  if (spec.textEmbedDim % 8)
    config.fail("text_embed_dim", "is " + std::to_string(spec.textEmbedDim) +
                                      "; the caption pooling's 8 heads need "
                                      "a multiple of 8");
  if (spec.headDim % 2)
    config.fail("attention_head_dim",
                "is " + std::to_string(spec.headDim) +
                    "; the rotary pairs need an even head dim");
  // The learned frequencies rotate every channel pair of a head.
  spec.ropeAxes = {spec.headDim, 0, 0};
  if (auto norm = config.getOptionalString("qk_norm"); norm && *norm != "rms_norm")
    config.fail("qk_norm", "is '" + *norm + "'; Mochi's attention normalizes "
                           "q and k with rms_norm");
  if (auto act = config.getOptionalString("activation_fn"); act && *act != "swiglu")
    config.fail("activation_fn", "is '" + *act + "'; the MLPs here are SwiGLU");
}

/// MochiRoPE: frames at 0, 1, ...; rows and columns at the centres of a
/// grid scaled to a 192 x 192 area and centred on zero.
void placeMochiRotaryGrid(GraphBuilder &g) {
  double rows = double(g.w.grid[1]), cols = double(g.w.grid[2]);
  double scale = std::sqrt(192.0 * 192.0 / (rows * cols));
  g.ropeGridOffset = std::array<double, 3>{0.0, -rows * scale / 2 + scale / 2,
                                           -cols * scale / 2 + scale / 2};
  g.ropeGridStep = std::array<double, 3>{1.0, scale, scale};
  g.ropeWeight = "pos_frequencies";
}

/// MochiTransformerBlock `transformer_blocks.<i>`. The last block's text
/// only feeds attention (its norm1_context is MochiLayerNormContinuous).
std::pair<Value, Value> mochiBlock(GraphBuilder &g, Value img, Value txt,
                                   Value temb, int64_t i) {
  int64_t D = g.D, Dt = GraphBuilder::width(txt), L = g.L;
  std::string p = "transformer_blocks." + std::to_string(i);
  GraphBuilder::ModuleScope block(g, p);
  bool last = i + 1 == g.spec.doubleBlocks;
  // MochiRMSNormZero: scale_msa, gate_msa, scale_mlp, gate_mlp.
  Value modI = g.adaln(temb, 4, D, p + ".norm1.linear");
  Value modT = last ? g.adaln(temb, 1, Dt, p + ".norm1_context.linear_1")
                    : g.adaln(temb, 4, Dt, p + ".norm1_context.linear");
  Value hi = g.modulate(g.rmsNorm(img), modI, {std::nullopt, 0, std::nullopt});
  Value ht = g.modulate(g.rmsNorm(txt), modT, {std::nullopt, 0, std::nullopt});

  std::string a = p + ".attn1";
  Value ot, oi;
  {
    GraphBuilder::ModuleScope attn(g, a);
    // MochiAttention: bias-free projections, per-head RMS norms (eps 1e-5).
    auto projected = [&](Value x, const char *proj, const char *norm) {
      Value y = g.linear(x, D, a + proj, /*bias=*/false);
      return norm ? g.rmsNorm(y, a + norm, g.spec.headDim, /*eps=*/1e-5) : y;
    };
    Value qi = projected(hi, ".to_q", ".norm_q");
    Value ki = projected(hi, ".to_k", ".norm_k");
    Value vi = projected(hi, ".to_v", nullptr);
    Value qt = projected(ht, ".add_q_proj", ".norm_added_q");
    Value kt = projected(ht, ".add_k_proj", ".norm_added_k");
    Value vt = projected(ht, ".add_v_proj", nullptr);
    Value q = g.rope(g.concat(qt, qi, TextPosition::Suffix), L, TextPosition::Suffix);
    Value k = g.rope(g.concat(kt, ki, TextPosition::Suffix), L, TextPosition::Suffix);
    Value v = g.concat(vt, vi, TextPosition::Suffix);
    Value o = g.attention(AttentionKind::Joint, q, k, v, L, TextPosition::Suffix);
    std::tie(ot, oi) = g.split(o, L, TextPosition::Suffix);
  }
  // Each branch output is RMS-normalized and scaled by tanh of its gate.
  img = g.residual(img, g.rmsNorm(g.linear(oi, D, a + ".to_out.0")), modI, 1,
                   /*tanhGate=*/true);
  Value h = g.modulate(g.rmsNorm(img), modI, {std::nullopt, 2, std::nullopt});
  Value f = g.mlp(h, g.spec.ffnSize, ActivationKind::SwiGLU, p + ".ff",
                  p + ".ff.net.0.proj", p + ".ff.net.2", /*bias=*/false);
  img = g.residual(img, g.rmsNorm(f), modI, 3, /*tanhGate=*/true);
  if (last)
    return {img, txt};

  txt = g.residual(txt, g.rmsNorm(g.linear(ot, Dt, a + ".to_add_out")), modT, 1,
                   /*tanhGate=*/true);
  Value hc = g.modulate(g.rmsNorm(txt), modT, {std::nullopt, 2, std::nullopt});
  Value fc = g.mlp(hc, textStreamFfnSize("mochi", Dt, g.spec.ffnSize),
                   ActivationKind::SwiGLU, p + ".ff_context",
                   p + ".ff_context.net.0.proj", p + ".ff_context.net.2",
                   /*bias=*/false);
  txt = g.residual(txt, g.rmsNorm(fc), modT, 3, /*tanhGate=*/true);
  return {img, txt};
}

Value buildMochi(GraphBuilder &g, const TransformerInputs &in) {
  // diffusers: PatchEmbed's nn.Conv2d per frame; proj_out is read as (ph, pw,
  // C).
  Value img = g.patchEmbed(in.latents, "patch_embed.proj", PatchKernel::Conv2d,
                           FeatureOrder::ChannelsLast);
  // MochiCombinedTimestepCaptionEmbedding: the timestep embedding plus the
  // attention pooling of the text; the text stream is caption_proj's.
  Value temb = g.residual(
      g.timestepEmbedding(in.timestep, g.D, "time_embed.timestep_embedder"),
      g.attentionPool(in.text, 8, g.D, "time_embed.pooler", in.textMask));
  Value txt = g.linear(in.text, g.spec.textHiddenSize, "time_embed.caption_proj");
  placeMochiRotaryGrid(g);
  for (int64_t i = 0; i < g.spec.doubleBlocks; ++i) {
    g.enterBlock(i);
    std::tie(img, txt) = mochiBlock(g, img, txt, temb, i);
  }
  g.leaveBlock();
  // AdaLayerNormContinuous: scale first, then shift.
  return g.epilogue(img, temb, "norm_out.linear", {1, 0, std::nullopt});
}

} // namespace

const FamilyDef kMochiFamily = {
    {"mochi", "MochiTransformer3DModel", /*video=*/true, /*vaeSpatial=*/8,
     /*vaeTemporal=*/6, /*branches=*/2, 480, 848, 19, 4.5, 64,
     /*textTokens=*/256, "T5EncoderModel", "AutoencoderKLMochi"},
    readMochi, buildMochi};

} // namespace ditc
