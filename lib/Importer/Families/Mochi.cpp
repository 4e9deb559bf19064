//===- Mochi.cpp - Mochi 1 (MochiTransformer3DModel) ----------------------- ===//
//
// diffusers' transformer_mochi.py: asymmetric dual-stream blocks (a
// narrower text stream) with RMSNormZero modulation, RMS-normalized branch
// outputs and SwiGLU MLPs, the text after the image.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readMochi(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.doubleBlocks = config.getInt("num_layers", 1, 1024);
  // SwiGLU MLP of 2/3 of 4x the width (diffusers MochiTransformerBlock).
  spec.ffnSize = (4 * spec.hiddenSize * 2) / 3;
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/false);
  spec.textEmbedDim = config.getInt("text_embed_dim", 1, kMax);
  spec.textHiddenSize = config.getInt("pooled_projection_dim", 1, kMax);
  spec.freqDim = readFreqDim(config, "time_embed_dim", 256);
  spec.ropeAxes = wanRopeAxes(spec.headDim);
  checkRopeAxesEven(config, "attention_head_dim", spec, /*derived=*/true);
}

Value buildMochi(GraphBuilder &g, const TransformerInputs &in) {
  Value img = g.patchEmbed(in.latents, "patch_embed.proj");
  Value temb = g.timestepEmbedding(in.timestep, g.D,
                                   "time_embed.timestep_embedder");
  Value txt = g.linear(in.text, g.spec.textHiddenSize, "caption_proj");
  DualStreamStyle style;
  style.lastBlockContextPreOnly = true;
  style.rmsNormZero = true;
  img = g.mmditBlocks(img, txt, temb, TextPosition::Suffix, /*varlen=*/false,
                      style);
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
