//===- ModelSpec.h - normalized DiT architecture and workload ---*- C++ -*-===//
//
// The importer reads a diffusers config (or an HF-style snapshot) into a
// ModelSpec, the family-independent facts every later stage needs (see
// LoadModel.h), and the workload flags into a Workload. Neither type, nor
// the workload resolution and bundled-model lookup declared here, depends
// on MLIR, so a tool that is handed the numbers can size things without
// it. Reading a config does need the importer library: each family's
// config reader sits beside its MLIR block builder.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_IMPORTER_MODELSPEC_H
#define DITC_IMPORTER_MODELSPEC_H

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc {

/// Published facts about a family: how its VAE compresses, what its diffusers
/// pipeline defaults to, and whether it runs true CFG. Each family's file
/// in lib/Importer/Families defines its row.
struct FamilyInfo {
  // A spec built by hand (tests, tools) has no family: empty names, never
  // null ones.
  const char *name = "";    // short name used in IR and docs ("wan")
  const char *className = ""; // diffusers transformer _class_name
  bool video;               // latents have a frame dimension
  int64_t vaeSpatial;       // published VAE spatial compression
  int64_t vaeTemporal;      // published VAE temporal compression (1: images)
  int64_t branches;         // guidance branches per step (1: distilled)
  int64_t defaultHeight, defaultWidth, defaultFrames;
  double defaultGuidance;
  int64_t defaultSteps;
  int64_t textTokens;       // pipeline max_sequence_length (+ CLIP for SD3)
  const char *textEncoder = ""; // class of the text encoder
  const char *vaeClass = "";    // class of the VAE
  // The model_index.json component holding the long-text encoder.
  const char *textEncoderKey = "text_encoder";
  // Whether a VAE config's block_out_channels gives the spatial compression
  // (one 2x downsample between consecutive blocks, AutoencoderKL-style).
  bool vaeCompressionFromBlocks = true;
  // Text tokens ahead of the max_sequence_length ones (SD3: 77 CLIP tokens),
  // so textTokens = fixedTextTokens + the pipeline's max_sequence_length.
  int64_t fixedTextTokens = 0;
  // The largest max_sequence_length the pipeline accepts (its ValueError);
  // 0 when it sets none.
  int64_t maxSequenceLength = 0;
};

struct ModelSpec {
  std::string name;      // bundled name, or the path the user gave
  std::string configPath;
  FamilyInfo family{};   // the family's facts, from its reader
  std::string className;

  int64_t doubleBlocks = 0; // dual-stream (text + image) blocks
  int64_t singleBlocks = 0; // single-stream blocks (all blocks of Wan/LTX)
  int64_t numHeads = 0, headDim = 0, hiddenSize = 0, ffnSize = 0;
  int64_t textHiddenSize = 0; // text stream width inside joint blocks
  int64_t textEmbedDim = 0;   // text encoder output width
  int64_t pooledDim = 0;      // pooled text projection input (0: none)
  int64_t timeEmbedDim = 0;   // width of the timestep embedding
  int64_t freqDim = 256;      // sinusoidal timestep features
  int64_t latentChannels = 0; // VAE latent channels into the transformer
  int64_t outChannels = 0;    // latent channels out of the transformer
  std::array<int64_t, 3> patch{1, 1, 1}; // effective [t, h, w] patch
  int64_t vaeSpatial = 8, vaeTemporal = 1;
  std::string vaeSource;       // file the compression came from, or "family"
  int64_t seqAlign = 1;        // packing alignment of the sharded sequence
  int64_t experts = 1;         // Wan2.2 A14B has two transformers
  // With two experts: the first runs while timestep >= boundaryRatio * 1000
  // (model_index.json's boundary_ratio), the second after.
  double boundaryRatio = 0.875;
  // The patch embedding is a Linear where the family's is a convolution
  // (CogVideoX 1.5: patch_size_t is set).
  bool patchLinear = false;
  bool guidanceEmbeds = false; // FLUX.1-dev / HunyuanVideo embed guidance
  bool useRope = true;
  // The text length the model's position table is built for, when it takes
  // no other (CogVideoX without rotary embeddings adds a table of
  // max_text_seq_length text rows); 0 when any length goes.
  int64_t requiredTextTokens = 0;
  // Per-axis rotary dims, sum = head_dim (LTX-Video: 2 * (W / 6) each,
  // over the whole width W).
  std::vector<int64_t> ropeAxes;
  double ropeTheta = 10000.0;
  // Qwen-Image (scale_rope): image rows and columns centred on zero, text
  // positions after the image's (dit.rope's `centered`).
  bool ropeCentered = false;
  // SD3: the learned position table's grid side (pos_embed_max_size); 0
  // when the patch embedding adds none.
  int64_t posEmbedMaxSize = 0;
  bool qkNormAcrossHeads = false; // Wan/LTX rms_norm_across_heads
  bool qkNorm = true;
  int64_t refinerLayers = 0;               // HunyuanVideo token refiner
  // The transformer takes the text mask (`text_mask`, [B, L]) and attends
  // (and HunyuanVideo and Mochi pool) only the valid text tokens.
  bool textMask = false;
  std::vector<int64_t> dualAttentionLayers; // SD3.5-medium MMDiT-X blocks
  double eps = 1e-6;
  // Where a family's modules take another eps than `eps`: LTX-Video's q/k
  // RMSNorms (1e-5) and its final LayerNorm (1e-6) are fixed in diffusers.
  std::optional<double> qkNormEps, outNormEps;
  bool crossAttnNorm = true;    // Wan cross_attn_norm: an affine norm2
  bool blockNormAffine = false; // LTX norm_elementwise_affine: norm1/norm2 weights
  bool attentionBias = true;    // q/k/v biases (LTX attention_bias)
  bool attentionOutBias = true; // to_out.0 bias (LTX attention_out_bias)
  bool ropeLtx = false;         // LTX-Video's whole-width, fractional rope
  // Rank of the learned adaLN tables in the checkpoint: [1, N, D] (Wan) or
  // [N, D] (LTX-Video).
  int64_t modulationTableRank = 3;
  std::string textEncoderClass, vaeClass;
  // CogVideoX: the training sample (latent pixels) that places the rotary
  // grid and sizes the fixed sin/cos position table, the table's
  // interpolation scales and text rows, and whether the rotary grid is
  // integer (1.5, patch_size_t set) or the crop of the sample (1.0).
  int64_t sampleHeight = 0, sampleWidth = 0;
  double spatialInterpolation = 1.0, temporalInterpolation = 1.0;
  int64_t maxTextTokens = 0;
  bool ropeSliceGrid = false;
  // Each transformer component's config.json ("transformer", and
  // "transformer_2" for two experts) without its "_" keys, as compact JSON:
  // the manifest records it so dit-run --weights can refuse a snapshot of
  // another model (docs/plan-format.md, model.checkpoint_config).
  std::map<std::string, std::string> checkpointConfig;
  // The snapshot's vae/config.json (its "_" keys dropped but _class_name,
  // which picks the decoder), as compact JSON; empty when the model came
  // without one. The manifest records it as model.vae_config: the VAE the
  // plan decodes with (docs/plan-format.md).
  std::string vaeConfig;
  // The file vaeConfig came from, for messages; empty with vaeConfig.
  std::string vaeConfigPath;
  // The snapshot's text encoders of the classes ditc models (T5, UMT5,
  // CLIP, CLIP with projection), in model_index.json's component order:
  // the folder ("text_encoder_2"), the class, and its config.json without
  // the "_" keys, as compact JSON. Empty for a bare transformer config.
  // The importer builds their graphs (lib/Importer/TextGraph.cpp), the
  // manifest records them as model.text_encoders, and the cost model
  // prices them.
  struct TextEncoderSpec {
    std::string component, className, config, configPath;
  };
  std::vector<TextEncoderSpec> textEncoders;

  int64_t numBlocks() const { return doubleBlocks + singleBlocks; }
  const FamilyInfo &info() const { return family; }
};

/// Workload flags as given; unset ones take the family's defaults.
struct WorkloadOptions {
  std::optional<int64_t> height, width, frames, batch, steps;
  /// --text-tokens: diffusers' max_sequence_length, the text encoder's
  /// padded length (the text stream holds FamilyInfo::fixedTextTokens more).
  std::optional<int64_t> maxSequenceLength;
  std::optional<double> guidanceScale;
};

struct Workload {
  int64_t batch = 1, height = 0, width = 0, frames = 1;
  int64_t latentFrames = 1, latentHeight = 0, latentWidth = 0;
  std::array<int64_t, 3> grid{1, 1, 1}; // token grid after patching
  int64_t imageTokens = 0; // sharded tokens, after VAE, patch and packing
  int64_t textTokens = 0;  // replicated text tokens
  /// Guidance branches the denoiser runs per step, as the pipeline runs
  /// them: the model's (2 for true CFG) when the guidance scale turns
  /// guidance on, else 1 (guidanceBranchesRun). The imported graph, the
  /// rules, the plan and the search all count these.
  int64_t branches = 1;
  double guidanceScale = 1.0;
  int64_t steps = 1;
};

/// Applies workload flags and family defaults; checks that the resolution
/// divides by VAE compression x patch. Throws BadInput.
Workload resolveWorkload(const ModelSpec &spec, const WorkloadOptions &options);

struct BundledModel {
  std::string name;
  std::string path;
};
/// Folder that holds the bundled snapshots: $DITC_MODELS_DIR when set, else
/// ../share/ditc/models next to the running executable when it exists (an
/// installed ditc), else the source tree's models/.
std::string bundledModelsDir();
std::vector<BundledModel> listBundledModels();
/// The Hugging Face repository ids of a bundled model's checkpoint, from
/// hub.json in its folder ({"repo_ids": [...]}); empty without one. Throws
/// BadInput when hub.json is malformed.
std::vector<std::string> bundledRepoIds(const BundledModel &model);
/// The bundled model that `name` means: its folder name or one of its
/// repository ids, either in any case (Hugging Face ids are not
/// case-sensitive, and people write FLUX.1-dev). nullopt when none.
/// Throws BadInput when two bundled models answer `name`: folder names
/// that differ only in case, or two hub.json files claiming the id.
std::optional<BundledModel> findBundledModel(const std::string &name);

/// Why `model` cannot be told apart from another of `models` (a name
/// that differs only in case, or a repository id another hub.json claims
/// too), or nullopt. `ditc models` lists such a model with this error.
std::optional<std::string> bundledModelClash(const std::vector<BundledModel> &models,
                                             const BundledModel &model);

/// Transformer passes per denoising step: a model's guidance branches, or 1
/// when a guidance scale of at most 1 turns CFG off (diffusers'
/// do_classifier_free_guidance, and Qwen-Image's true_cfg_scale, run the
/// second branch only above 1). resolveWorkload counts a workload's
/// branches with it, so the imported graph computes only those.
int64_t guidanceBranchesRun(int64_t branches, double guidanceScale);

/// The model's numbers as JSON, as a plan's manifest records them (see
/// docs/plan-format.md) and `ditc import --summary --format json` prints.
nlohmann::json modelSpecJson(const ModelSpec &spec);
/// The resolved workload as JSON, likewise.
nlohmann::json workloadJson(const Workload &w);

/// The FFN width of the text stream in a dual-stream block, for the family
/// named `family` (FamilyInfo::name). Mochi's asymmetric blocks derive it
/// from the text width as a gated SwiGLU, (4 * Dt * 2) / 3 (diffusers'
/// MochiTransformerBlock); the other families use the image stream's width.
/// The importer builds that MLP and the tp-heads rule checks it, from here.
int64_t textStreamFfnSize(const std::string &family, int64_t textHiddenSize,
                          int64_t ffnSize);

} // namespace ditc

#endif // DITC_IMPORTER_MODELSPEC_H
