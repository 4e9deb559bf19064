//===- Flux.cpp - FLUX.1 (FluxTransformer2DModel) ------------------------- ===//
//
// diffusers' transformer_flux.py: 2x2-packed latents, dual-stream MMDiT
// blocks with the text before the image, then single-stream blocks over the
// joined sequence; CLIP-pooled text (and, for FLUX.1-dev, the guidance
// scale) joins the timestep embedding.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "GraphBuilder.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

void readFlux(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.doubleBlocks = config.getInt("num_layers", 0, 1024);
  spec.singleBlocks = config.getInt("num_single_layers", 0, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
  int64_t packed = config.getInt("in_channels", 1, kMax);
  if (packed % 4 != 0)
    config.fail("in_channels", "is " + std::to_string(packed) +
                                   ", expected a multiple of 4 (2x2 packed "
                                   "latent channels)");
  spec.latentChannels = packed / 4;
  int64_t packedOut =
      config.getOptionalInt("out_channels", 1, kMax).value_or(packed);
  if (packedOut % 4 != 0)
    config.fail("out_channels", "is " + std::to_string(packedOut) +
                                    ", expected a multiple of 4 (2x2 packed "
                                    "latent channels)");
  spec.outChannels = packedOut / 4;
  if (config.getInt("patch_size", 1, 1) != 1)
    config.fail("patch_size", "must be 1 for FLUX");
  spec.patch = {1, 2, 2}; // FLUX packs 2x2 latent pixels into one token.
  spec.textEmbedDim = config.getInt("joint_attention_dim", 1, kMax);
  spec.pooledDim = config.getInt("pooled_projection_dim", 1, kMax);
  spec.guidanceEmbeds = config.getOptionalBool("guidance_embeds", false);
  readRopeAxes(config, "axes_dims_rope", spec);
}

Value buildFlux(GraphBuilder &g, const TransformerInputs &in) {
  // diffusers: an nn.Linear on latents packed as (C, ph, pw), unpacked the same
  // way.
  Value img = g.patchEmbed(in.latents, "x_embedder", PatchKernel::Linear,
                           FeatureOrder::ChannelsFirst);
  // FluxTransformer2DModel.forward multiplies its guidance input by 1000
  // before embedding it. Its timestep input is the pipeline's t / 1000,
  // multiplied back the same way, so the plan's timestep (t) embeds as is.
  Value temb = g.combinedTimestepTextEmbedding(in, /*guidanceScale=*/1000.0);
  Value txt = g.linear(in.text, g.D, "context_embedder");
  img = g.mmditBlocks(img, txt, temb, TextPosition::Prefix, /*varlen=*/false,
                      DualStreamStyle());
  // AdaLayerNormContinuous: scale first, then shift.
  return g.epilogue(img, temb, "norm_out.linear", {1, 0, std::nullopt});
}

} // namespace

const FamilyDef kFluxFamily = {
    {"flux", "FluxTransformer2DModel", /*video=*/false, /*vaeSpatial=*/8,
     /*vaeTemporal=*/1, /*branches=*/1, 1024, 1024, 1, 3.5, 28,
     /*textTokens=*/512, "T5EncoderModel", "AutoencoderKL",
     // The long text comes from the second encoder (T5); the first is CLIP.
     "text_encoder_2", /*vaeCompressionFromBlocks=*/true,
     // The pipeline refuses a max_sequence_length above 512.
     /*fixedTextTokens=*/0, /*maxSequenceLength=*/512},
    readFlux, buildFlux};

} // namespace ditc
