//===- HunyuanVideo.cpp - HunyuanVideo (HunyuanVideoTransformer3DModel) - ===//
//
// diffusers' transformer_hunyuan_video.py: FLUX's dual- and single-stream
// blocks on video with the text after the image and varlen-packed, and a
// token refiner that self-attends over the text before the main blocks.
// The transformer takes the text mask (the pipeline's prompt_attention_mask):
// the refiner's mean and every attention count only the valid text tokens.
// The image-to-video variants (image_condition_type) are refused.
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
  spec.textMask = true;
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
  readQkNorm(config, "rms_norm", "HunyuanVideo", "rms_norm");
  // diffusers raises on any other value; both of its values are
  // image-to-video conditioning, which a text-to-video import has no input
  // for.
  readChoice(config, "image_condition_type", {}, std::nullopt,
             "diffusers accepts 'latent_concat' and 'token_replace', both "
             "image-to-video models; ditc imports text-to-video "
             "HunyuanVideo");
  spec.ropeTheta = config.getOptionalDouble("rope_theta", 256.0, 1.0, 1e9);
}

/// HunyuanVideoTokenRefiner `context_embedder`: its own timestep-and-text
/// conditioning (CombinedTimestepTextProjEmbeddings of the timestep and of
/// the mean of the raw text's valid tokens), `proj_in`, then refiner blocks
/// of self-attention (over the valid text keys) and a SiLU MLP over the
/// text alone, each gated by its `norm_out` (HunyuanVideoAdaNorm: the
/// attention gate, then the MLP's). diffusers also masks the padded query
/// rows (each then attends key 0 alone); their outputs reach the image only
/// as keys, which every later attention masks, so only the key mask is
/// kept.
Value tokenRefiner(GraphBuilder &g, Value text, Value textMask, Value timestep) {
  int64_t D = g.D;
  const std::string r = "context_embedder";
  GraphBuilder::ModuleScope scope(g, r);
  Value temb = g.residual(
      g.timestepEmbedding(timestep, D, r + ".time_text_embed.timestep_embedder"),
      g.twoLayerProjection(g.tokenMean(text, textMask), D, r + ".time_text_embed.text_embedder",
                           ActivationKind::Silu));
  Value txt = g.linear(text, D, r + ".proj_in");
  for (int64_t j = 0; j < g.spec.refinerLayers; ++j) {
    std::string p = r + ".token_refiner.refiner_blocks." + std::to_string(j);
    GraphBuilder::ModuleScope block(g, p);
    Value gates = g.adaln(temb, 2, D, p + ".norm_out.linear");
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
    txt = g.residual(txt, g.linear(o, D, p + ".attn.to_out.0"), gates, 0);
    // FeedForward(mult=4.0, "linear-silu"): the refiner's width is fixed,
    // whatever the config's mlp_ratio.
    Value f = g.mlp(g.layerNorm(txt, p + ".norm2"), 4 * D, ActivationKind::Silu,
                    p + ".ff", p + ".ff.net.0.proj", p + ".ff.net.2");
    txt = g.residual(txt, f, gates, 1);
  }
  return txt;
}

Value buildHunyuanVideo(GraphBuilder &g, const TransformerInputs &in) {
  // diffusers: nn.Conv3d; proj_out is read as (C, pt, ph, pw).
  Value img = g.patchEmbed(in.latents, "x_embedder.proj", PatchKernel::Conv3d,
                           FeatureOrder::ChannelsFirst);
  Value temb = g.combinedTimestepTextEmbedding(in);
  Value txt = tokenRefiner(g, in.text, in.textMask, in.timestep);
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
