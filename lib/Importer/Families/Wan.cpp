//===- Wan.cpp - Wan 2.1 / 2.2 text-to-video (WanTransformer3DModel) ------===//
//
// diffusers' transformer_wan.py: one stream of image tokens; each block
// modulates with its own learned table added to one shared time projection,
// self-attends, cross-attends to the UMT5 text, and runs a tanh-GELU MLP.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readWan(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.singleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = config.getInt("ffn_dim", 1, kMax);
  readChannels(config, spec);
  spec.textEmbedDim = config.getInt("text_dim", 1, kMax);
  spec.freqDim = readFreqDim(config, "freq_dim", std::nullopt);
  std::vector<int64_t> patch = config.getIntList("patch_size", 1, 64);
  if (patch.size() != 3)
    config.fail("patch_size", "has " + std::to_string(patch.size()) +
                                  " entries, expected 3 ([t, h, w])");
  spec.patch = {patch[0], patch[1], patch[2]};
  spec.eps = config.getOptionalDouble("eps", 1e-6, 1e-12, 1.0);
  spec.qkNormAcrossHeads = true;
  spec.ropeAxes = wanRopeAxes(spec.headDim);
  checkRopeAxesEven(config, "attention_head_dim", spec, /*derived=*/true);
  spec.ropeTheta = 10000.0;
  if (config.has("image_dim"))
    config.fail("image_dim",
                "is set (an image-to-video model); ditc imports text-to-video "
                "Wan models, expected null");
  if (config.has("added_kv_proj_dim"))
    config.fail("added_kv_proj_dim",
                "is set (the image keys of an image-to-video model); ditc "
                "imports text-to-video Wan models, expected null");
  // WanTransformerBlock's norm2 is an affine FP32LayerNorm only with
  // cross_attn_norm, the identity otherwise. (qk_norm, by contrast, is
  // ignored by diffusers: WanAttention always has norm_q and norm_k.)
  spec.crossAttnNorm = config.getOptionalBool("cross_attn_norm", true);
}

Value buildWan(GraphBuilder &g, const TransformerInputs &in) {
  int64_t D = g.D;
  // diffusers: nn.Conv3d; proj_out is read as (pt, ph, pw, C).
  Value img = g.patchEmbed(in.latents, "patch_embedding", PatchKernel::Conv3d,
                           FeatureOrder::ChannelsLast);
  Value temb =
      g.timestepEmbedding(in.timestep, D, "condition_embedder.time_embedder");
  Value txt = g.twoLayerProjection(in.text, D, "condition_embedder.text_embedder",
                                   ActivationKind::GeluTanh);
  // WanTimeTextImageEmbedding: sinusoid (cos, sin), time_embedder, and one
  // projection time_proj(silu(temb)) that every block's table is added to.
  Value timeProjection;
  {
    GraphBuilder::ModuleScope scope(g, "condition_embedder");
    timeProjection = g.linear(g.activation(ActivationKind::Silu, temb), 6 * D,
                              "condition_embedder.time_proj");
  }
  for (int64_t i = 0; i < g.spec.singleBlocks; ++i) {
    g.enterBlock(i);
    img = g.wanStyleBlock(img, timeProjection, txt, "blocks." + std::to_string(i),
                          {/*layerNorm=*/true, "ffn"});
  }
  g.leaveBlock();
  // shift = table[0] + temb, scale = table[1] + temb.
  return g.epilogue(img, temb, "scale_shift_table", {0, 1, std::nullopt},
                    /*table=*/true);
}

} // namespace

const FamilyDef kWanFamily = {
    {"wan", "WanTransformer3DModel", /*video=*/true, /*vaeSpatial=*/8,
     /*vaeTemporal=*/4, /*branches=*/2, 480, 832, 81, 5.0, 50,
     /*textTokens=*/512, "UMT5EncoderModel", "AutoencoderKLWan"},
    readWan, buildWan};

} // namespace ditc
