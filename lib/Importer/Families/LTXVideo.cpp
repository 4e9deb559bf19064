//===- LTXVideo.cpp - LTX-Video (LTXVideoTransformer3DModel) --------------===//
//
// diffusers' transformer_ltx.py: Wan's block shape with RMS norms, q/k
// normalized across heads (eps 1e-5, whatever norm_eps says), a T5 caption
// projection, [N, D] modulation tables, and a rotary embedding over the
// whole width at fractional positions.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {

std::array<double, 3> ltxRopeCoordinateScale(const ModelSpec &spec) {
  // LTXVideoRotaryPosEmbed's base sizes, and LTXPipeline's default
  // frame_rate (rope_interpolation_scale = (vae_t / frame_rate, vae_s,
  // vae_s)).
  constexpr double kBaseFrames = 20, kBaseHeight = 2048, kBaseWidth = 2048;
  constexpr double kFrameRate = 25;
  return {double(spec.vaeTemporal) / kFrameRate * double(spec.patch[0]) / kBaseFrames,
          double(spec.vaeSpatial) * double(spec.patch[1]) / kBaseHeight,
          double(spec.vaeSpatial) * double(spec.patch[2]) / kBaseWidth};
}

namespace {

void readLTXVideo(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.singleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize; // FeedForward's default mult
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/true);
  // proj_in is Linear(in_channels, D) over the pipeline's packed latents,
  // which have in_channels * pt * p * p features: only a unit patch fits.
  if (spec.patch != std::array<int64_t, 3>{1, 1, 1})
    config.fail(config.has("patch_size_t") && spec.patch[0] != 1 ? "patch_size_t"
                                                                 : "patch_size",
                "is not 1; diffusers' LTX-Video proj_in takes in_channels "
                "features per token, so only patch_size 1 and patch_size_t 1 "
                "run");
  spec.textEmbedDim = config.getInt("caption_channels", 1, kMax);
  int64_t crossDim = config.getInt("cross_attention_dim", 1, kMax);
  if (crossDim != spec.hiddenSize)
    config.fail("cross_attention_dim",
                "is " + std::to_string(crossDim) +
                    ", expected num_attention_heads x attention_head_dim = " +
                    std::to_string(spec.hiddenSize));
  spec.eps = config.getOptionalDouble("norm_eps", 1e-6, 1e-12, 1.0);
  // LTXAttention fixes its q/k RMSNorm eps; norm_out is nn.LayerNorm(eps=1e-6).
  spec.qkNormEps = 1e-5;
  spec.outNormEps = 1e-6;
  spec.blockNormAffine = config.getOptionalBool("norm_elementwise_affine", false);
  spec.attentionBias = config.getOptionalBool("attention_bias", true);
  spec.attentionOutBias = config.getOptionalBool("attention_out_bias", true);
  // LTXVideoAttention raises NotImplementedError for any other q/k norm.
  readChoice(config, "qk_norm", {"rms_norm_across_heads"}, "rms_norm_across_heads",
             "diffusers' LTXVideoAttention implements only that one");
  if (auto act = config.getOptionalString("activation_fn");
      act && *act != "gelu-approximate")
    config.fail("activation_fn", "is not gelu-approximate; ditc builds "
                                 "LTX-Video's MLP with the tanh GELU only");
  spec.qkNormAcrossHeads = true;
  spec.freqDim = 256; // AdaLayerNormSingle's Timesteps(256)
  spec.modulationTableRank = 2;
  // One table over all heads: W / 6 frequencies per axis after W mod 6
  // unrotated channels (LTXVideoRotaryPosEmbed(dim=inner_dim)).
  spec.ropeLtx = true;
  spec.ropeAxes = std::vector<int64_t>(3, 2 * (spec.hiddenSize / 6));
}

Value buildLTXVideo(GraphBuilder &g, const TransformerInputs &in) {
  int64_t D = g.D;
  // diffusers: an nn.Linear on latents packed as (C, pt, ph, pw), unpacked the
  // same way.
  Value img = g.patchEmbed(in.latents, "proj_in", PatchKernel::Linear,
                           FeatureOrder::ChannelsFirst);
  Value temb =
      g.timestepEmbedding(in.timestep, D, "time_embed.emb.timestep_embedder");
  Value txt = g.twoLayerProjection(in.text, D, "caption_projection",
                                   ActivationKind::GeluTanh);
  // AdaLayerNormSingle: one projection of the time embedding serves every
  // block's table; the final table takes the embedding itself.
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
  // shift = table[0] + temb, scale = table[1] + temb.
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
