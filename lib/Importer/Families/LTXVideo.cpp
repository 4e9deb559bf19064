//===- LTXVideo.cpp - LTX-Video (LTXVideoTransformer3DModel) --------------===//
//
// diffusers' transformer_ltx.py: Wan's block shape with RMS norms, q/k
// normalized across heads, and a T5 caption projection.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readLTXVideo(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.singleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/true);
  spec.textEmbedDim = config.getInt("caption_channels", 1, kMax);
  int64_t crossDim = config.getInt("cross_attention_dim", 1, kMax);
  if (crossDim != spec.hiddenSize)
    config.fail("cross_attention_dim",
                "is " + std::to_string(crossDim) +
                    ", expected num_attention_heads x attention_head_dim = " +
                    std::to_string(spec.hiddenSize));
  spec.eps = config.getOptionalDouble("norm_eps", 1e-6, 1e-12, 1.0);
  spec.qkNormAcrossHeads = true;
  spec.ropeAxes = wanRopeAxes(spec.headDim);
  checkRopeAxesEven(config, "attention_head_dim", spec, /*derived=*/true);
}

Value buildLTXVideo(GraphBuilder &g, const TransformerInputs &in) {
  int64_t D = g.D;
  Value img = g.patchEmbed(in.latents, "proj_in");
  Value temb =
      g.timestepEmbedding(in.timestep, D, "time_embed.emb.timestep_embedder");
  Value txt = g.twoLayerProjection(in.text, D, "caption_projection",
                                   ActivationKind::GeluTanh);
  // AdaLayerNormSingle: one projection of the time embedding serves every
  // block's table.
  Value timeProjection;
  {
    GraphBuilder::ModuleScope scope(g, "time_embed");
    timeProjection = g.linear(g.activation(ActivationKind::Silu, temb), 6 * D,
                              "time_embed.linear");
  }
  for (int64_t i = 0; i < g.spec.singleBlocks; ++i) {
    g.enterBlock(i);
    img = g.wanStyleBlock(img, timeProjection, txt,
                          "transformer_blocks." + std::to_string(i),
                          {/*layerNorm=*/false, "ff"});
  }
  g.leaveBlock();
  return g.epilogue(img, temb, "scale_shift_table", {0, 1, std::nullopt},
                    /*table=*/true);
}

} // namespace

const FamilyDef kLTXVideoFamily = {
    {"ltx_video", "LTXVideoTransformer3DModel", /*video=*/true,
     /*vaeSpatial=*/32, /*vaeTemporal=*/8, /*branches=*/2, 512, 704, 161, 3.0,
     50, /*textTokens=*/128, "T5EncoderModel", "AutoencoderKLLTXVideo",
     "text_encoder",
     // LTX's VAE also patchifies, so block_out_channels understates its
     // compression.
     /*vaeCompressionFromBlocks=*/false},
    readLTXVideo, buildLTXVideo};

} // namespace ditc
