//===- HunyuanVideo.cpp - HunyuanVideo (HunyuanVideoTransformer3DModel) - ===//
//
// diffusers' transformer_hunyuan_video.py: FLUX's dual- and single-stream
// blocks on video with the text after the image and varlen-packed, and a
// token refiner that self-attends over the text before the main blocks.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

#include <sstream>

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readHunyuanVideo(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.doubleBlocks = config.getInt("num_layers", 0, 1024);
  spec.singleBlocks = config.getInt("num_single_layers", 0, 1024);
  spec.refinerLayers = config.getOptionalInt("num_refiner_layers", 0, 64).value_or(2);
  double ratio = config.getOptionalDouble("mlp_ratio", 4.0, 0.25, 64.0);
  spec.ffnSize = int64_t(ratio * double(spec.hiddenSize));
  if (spec.ffnSize < 1) {
    std::ostringstream given;
    given << ratio;
    config.fail("mlp_ratio", "is " + given.str() +
                                 ", which gives an FFN width of 0 for the "
                                 "hidden width " +
                                 std::to_string(spec.hiddenSize) +
                                 "; expected a ratio giving at least 1");
  }
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/true);
  spec.textEmbedDim = config.getInt("text_embed_dim", 1, kMax);
  spec.pooledDim = config.getInt("pooled_projection_dim", 1, kMax);
  spec.guidanceEmbeds = config.getOptionalBool("guidance_embeds", true);
  readRopeAxes(config, "rope_axes_dim", spec);
  spec.ropeTheta = config.getOptionalDouble("rope_theta", 256.0, 1.0, 1e9);
}

/// The token refiner: a few self-attention blocks over the text alone
/// (varlen-packed), before the main blocks.
Value tokenRefiner(GraphBuilder &g, Value txt, Value temb) {
  int64_t D = g.D;
  for (int64_t j = 0; j < g.spec.refinerLayers; ++j) {
    std::string p =
        "context_embedder.token_refiner.refiner_blocks." + std::to_string(j);
    GraphBuilder::ModuleScope block(g, p);
    Value mod = g.adaln(temb, 2, D, p + ".adaLN_modulation.1");
    Value h = g.layerNorm(txt, p + ".norm1");
    Value o;
    {
      GraphBuilder::ModuleScope attn(g, p + ".attn");
      Value q = g.linear(h, D, p + ".attn.to_q");
      Value k = g.linear(h, D, p + ".attn.to_k");
      Value v = g.linear(h, D, p + ".attn.to_v");
      o = g.attention(AttentionKind::Self, q, k, v, 0, TextPosition::Prefix,
                      /*varlen=*/true);
    }
    txt = g.residual(txt, g.linear(o, D, p + ".attn.to_out.0"), mod, 0);
    h = g.layerNorm(txt, p + ".norm2");
    txt = g.residual(txt,
                     g.mlp(h, g.spec.ffnSize, ActivationKind::Silu,
                           p + ".mlp", p + ".mlp.fc1", p + ".mlp.fc2"),
                     mod, 1);
  }
  return txt;
}

Value buildHunyuanVideo(GraphBuilder &g, const TransformerInputs &in) {
  Value img = g.patchEmbed(in.latents, "x_embedder.proj");
  Value temb = g.combinedTimestepTextEmbedding(in);
  Value txt = g.linear(in.text, g.D, "context_embedder.proj_in");
  txt = tokenRefiner(g, txt, temb);
  img = g.mmditBlocks(img, txt, temb, TextPosition::Suffix, /*varlen=*/true,
                      DualStreamStyle());
  // AdaLayerNormContinuous: scale first, then shift.
  return g.epilogue(img, temb, "norm_out.linear", {1, 0, std::nullopt});
}

} // namespace

const FamilyDef kHunyuanVideoFamily = {
    {"hunyuan_video", "HunyuanVideoTransformer3DModel", /*video=*/true,
     /*vaeSpatial=*/8, /*vaeTemporal=*/4, /*branches=*/1, 720, 1280, 129, 6.0,
     50, /*textTokens=*/256, "LlamaModel", "AutoencoderKLHunyuanVideo"},
    readHunyuanVideo, buildHunyuanVideo};

} // namespace ditc
