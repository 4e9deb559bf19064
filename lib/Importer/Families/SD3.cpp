//===- SD3.cpp - Stable Diffusion 3 / 3.5 (SD3Transformer2DModel) ------ ===//
//
// diffusers' transformer_sd3.py: dual-stream MMDiT blocks with the text
// after the image, a learned position embedding instead of rotary, the last
// block's text only feeding attention, and SD3.5-medium's MMDiT-X blocks
// with a second, image-only attention.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readSD3(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.doubleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/false);
  spec.textEmbedDim = config.getInt("joint_attention_dim", 1, kMax);
  spec.pooledDim = config.getInt("pooled_projection_dim", 1, kMax);
  if (auto caption = config.getOptionalInt("caption_projection_dim", 1, kMax);
      caption && *caption != spec.hiddenSize)
    config.fail("caption_projection_dim",
                "is " + std::to_string(*caption) +
                    ", expected num_attention_heads x attention_head_dim = " +
                    std::to_string(spec.hiddenSize));
  spec.useRope = false; // SD3 adds a learned 2-D position embedding instead.
  // PatchEmbed's persistent table covers a pos_embed_max_size square grid
  // (diffusers' default 96). An explicit null makes it a non-persistent
  // sincos table regenerated per image size, which no checkpoint holds.
  if (config.raw().contains("pos_embed_max_size") && !config.has("pos_embed_max_size"))
    config.fail("pos_embed_max_size",
                "is null; expected a positive integer (the SD3 and SD3.5 "
                "checkpoints' cropped position table)");
  spec.posEmbedMaxSize =
      config.getOptionalInt("pos_embed_max_size", 1, 4096).value_or(96);
  // Attention(qk_norm="rms_norm"): RMSNorm per head, eps 1e-6, with a
  // weight, on q and k of both streams (and of attn2).
  spec.qkNorm = readQkNorm(config, "rms_norm", "SD3.5", std::nullopt).has_value();
  if (config.has("dual_attention_layers"))
    spec.dualAttentionLayers =
        config.getIntList("dual_attention_layers", 0, spec.doubleBlocks - 1);
}

Value buildSD3(GraphBuilder &g, const TransformerInputs &in) {
  // PatchEmbed: the Conv2d projection (proj_out is read as (ph, pw, C)), then the centre crop of the
  // persistent position table.
  Value img = g.patchEmbed(in.latents, "pos_embed.proj", PatchKernel::Conv2d,
                           FeatureOrder::ChannelsLast, "pos_embed.pos_embed");
  Value temb = g.combinedTimestepTextEmbedding(in);
  Value txt = g.linear(in.text, g.D, "context_embedder");
  DualStreamStyle style;
  style.lastBlockContextPreOnly = true;
  img = g.mmditBlocks(img, txt, temb, TextPosition::Suffix, /*varlen=*/false,
                      style);
  // AdaLayerNormContinuous: scale first, then shift.
  return g.epilogue(img, temb, "norm_out.linear", {1, 0, std::nullopt});
}

} // namespace

const FamilyDef kSD3Family = {
    // The joint text is 77 CLIP tokens followed by 256 T5 tokens.
    {"sd3", "SD3Transformer2DModel", /*video=*/false, /*vaeSpatial=*/8,
     /*vaeTemporal=*/1, /*branches=*/2, 1024, 1024, 1, 7.0, 28,
     /*textTokens=*/333, "T5EncoderModel", "AutoencoderKL",
     // The third encoder is T5; the first two are CLIP. The pipeline refuses
     // a max_sequence_length above 512.
     "text_encoder_3", /*vaeCompressionFromBlocks=*/true,
     /*fixedTextTokens=*/77, /*maxSequenceLength=*/512},
    readSD3, buildSD3};

} // namespace ditc
