//===- QwenImage.cpp - Qwen-Image (QwenImageTransformer2DModel) ------------ ===//
//
// diffusers' transformer_qwenimage.py: dual-stream MMDiT blocks only, the
// Qwen2.5-VL text RMS-normalized and projected by txt_in, and per-stream
// modules named img_mod / txt_mod / img_mlp / txt_mlp. The transformer takes
// the text mask (encoder_hidden_states_mask): the joint attention's mask is
// [text mask ; ones] over [text ; image] keys.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readQwenImage(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.doubleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
  spec.textMask = true;
  int64_t p = config.getInt("patch_size", 1, 64);
  int64_t packed = config.getInt("in_channels", 1, kMax);
  if (packed % (p * p) != 0)
    config.fail("in_channels", "is " + std::to_string(packed) +
                                   ", expected a multiple of patch_size^2 = " +
                                   std::to_string(p * p));
  spec.latentChannels = packed / (p * p);
  spec.outChannels = config.getOptionalInt("out_channels", 1, kMax)
                         .value_or(spec.latentChannels);
  spec.patch = {1, p, p};
  spec.textEmbedDim = config.getInt("joint_attention_dim", 1, kMax);
  readRopeAxes(config, "axes_dims_rope", spec);
  // QwenEmbedRope(scale_rope=True): centred image positions, text after.
  spec.ropeCentered = true;
  // The variants whose transformer computes something else (the edit
  // models' zero_cond_t and layer-3D rope, the extra timestep table) are
  // not imported; nor is guidance_embeds, whose embedding
  // QwenTimestepProjEmbeddings cannot take.
  for (const char *key : {"zero_cond_t", "use_additional_t_cond",
                          "use_layer3d_rope", "guidance_embeds"})
    if (config.getOptionalBool(key, false))
      config.fail(key, "is true; only the text-to-image "
                       "QwenImageTransformer2DModel (false) is imported");
}

Value buildQwenImage(GraphBuilder &g, const TransformerInputs &in) {
  // diffusers: an nn.Linear on latents packed as (C, ph, pw), unpacked the same
  // way.
  Value img = g.patchEmbed(in.latents, "img_in", PatchKernel::Linear,
                           FeatureOrder::ChannelsFirst);
  // QwenTimestepProjEmbeddings: Timesteps(scale=1000) of the pipeline's
  // t / 1000, so the plan's timestep (t) embeds as is.
  Value temb = g.timestepEmbedding(in.timestep, g.D,
                                   "time_text_embed.timestep_embedder");
  Value txt = g.linear(g.rmsNorm(in.text, "txt_norm"), g.D, "txt_in");
  DualStreamStyle style;
  style.imgMod = "img_mod.1";
  style.txtMod = "txt_mod.1";
  style.imgMlp = "img_mlp";
  style.txtMlp = "txt_mlp";
  img = g.mmditBlocks(img, txt, temb, TextPosition::Prefix, /*varlen=*/false,
                      style);
  // AdaLayerNormContinuous: scale first, then shift.
  return g.epilogue(img, temb, "norm_out.linear", {1, 0, std::nullopt});
}

} // namespace

const FamilyDef kQwenImageFamily = {
    {"qwen_image", "QwenImageTransformer2DModel", /*video=*/false,
     /*vaeSpatial=*/8, /*vaeTemporal=*/1, /*branches=*/2, 1024, 1024, 1, 4.0,
     50, /*textTokens=*/512, "Qwen2_5_VLForConditionalGeneration",
     "AutoencoderKLQwenImage", "text_encoder", /*vaeCompressionFromBlocks=*/true,
     // The pipeline refuses a max_sequence_length above 1024.
     /*fixedTextTokens=*/0, /*maxSequenceLength=*/1024},
    readQwenImage, buildQwenImage};

} // namespace ditc
