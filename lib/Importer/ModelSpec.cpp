//===- ModelSpec.cpp - read diffusers configs into a ModelSpec ------------===//
//
// One reader per family turns the family's diffusers config keys into the
// normalized ModelSpec. Family facts that a transformer config does not carry
// (VAE compression, pipeline defaults) come from knownFamilies(); an HF
// snapshot's vae/config.json overrides the compression.
//
//===----------------------------------------------------------------------===//
#include "ditc/Importer/ModelSpec.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Spelling.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DITC_SOURCE_MODELS_DIR
#define DITC_SOURCE_MODELS_DIR "models"
#endif

namespace ditc {

using nlohmann::json;

const std::vector<FamilyInfo> &knownFamilies() {
  // Pipeline defaults and VAE compression as published with each family's
  // diffusers pipeline (see docs/families.md for the sources).
  static const std::vector<FamilyInfo> families = {
      {Family::Wan, "wan", "WanTransformer3DModel", true, 8, 4, 2, 480, 832,
       81, 5.0, 50, 512, "UMT5EncoderModel", "AutoencoderKLWan"},
      {Family::Flux, "flux", "FluxTransformer2DModel", false, 8, 1, 1, 1024,
       1024, 1, 3.5, 28, 512, "T5EncoderModel", "AutoencoderKL"},
      {Family::QwenImage, "qwen_image", "QwenImageTransformer2DModel", false,
       8, 1, 2, 1024, 1024, 1, 4.0, 50, 512,
       "Qwen2_5_VLForConditionalGeneration", "AutoencoderKLQwenImage"},
      {Family::HunyuanVideo, "hunyuan_video",
       "HunyuanVideoTransformer3DModel", true, 8, 4, 1, 720, 1280, 129, 6.0,
       50, 256, "LlamaModel", "AutoencoderKLHunyuanVideo"},
      {Family::CogVideoX, "cogvideox", "CogVideoXTransformer3DModel", true, 8,
       4, 2, 480, 720, 49, 6.0, 50, 226, "T5EncoderModel",
       "AutoencoderKLCogVideoX"},
      {Family::LTXVideo, "ltx_video", "LTXVideoTransformer3DModel", true, 32,
       8, 2, 512, 704, 161, 3.0, 50, 128, "T5EncoderModel",
       "AutoencoderKLLTXVideo"},
      {Family::Mochi, "mochi", "MochiTransformer3DModel", true, 8, 6, 2, 480,
       848, 19, 4.5, 64, 256, "T5EncoderModel", "AutoencoderKLMochi"},
      // SD3's joint text is 77 CLIP tokens followed by 256 T5 tokens.
      {Family::SD3, "sd3", "SD3Transformer2DModel", false, 8, 1, 2, 1024, 1024,
       1, 7.0, 28, 333, "T5EncoderModel", "AutoencoderKL"},
  };
  return families;
}

const FamilyInfo &familyInfo(Family family) {
  for (const FamilyInfo &info : knownFamilies())
    if (info.family == family)
      return info;
  // Every enumerator has a row above; reaching here is a programming error.
  std::abort();
}

//===----------------------------------------------------------------------===//
// Files and folders
//===----------------------------------------------------------------------===//

static bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

static bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

/// <prefix>/share/ditc/models for an executable in <prefix>/bin, as
/// `cmake --install` lays them out; empty when there is no such folder.
static std::string installedModelsDir() {
  char exe[4096];
  ssize_t length = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (length <= 0)
    return "";
  std::string path(exe, static_cast<size_t>(length));
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return "";
  std::string dir = path.substr(0, slash) + "/../share/ditc/models";
  return isDirectory(dir) ? dir : "";
}

std::string bundledModelsDir() {
  if (const char *dir = std::getenv("DITC_MODELS_DIR"); dir && *dir)
    return dir;
  if (std::string installed = installedModelsDir(); !installed.empty())
    return installed;
  return DITC_SOURCE_MODELS_DIR;
}

std::vector<BundledModel> listBundledModels() {
  std::vector<BundledModel> models;
  std::string root = bundledModelsDir();
  DIR *dir = ::opendir(root.c_str());
  if (!dir)
    return models;
  while (dirent *entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    std::string path = root + "/" + name;
    if (name[0] != '.' && exists(path + "/transformer/config.json"))
      models.push_back({name, path});
  }
  ::closedir(dir);
  std::sort(models.begin(), models.end(),
            [](const BundledModel &a, const BundledModel &b) {
              return a.name < b.name;
            });
  return models;
}

std::vector<std::string> bundledRepoIds(const BundledModel &model) {
  std::string path = model.path + "/hub.json";
  if (!exists(path))
    return {};
  json root = JsonObject::parseFile(path);
  JsonObject hub(path, &root);
  const json &ids = root.contains("repo_ids") ? root.at("repo_ids") : json();
  if (!ids.is_array() || ids.empty() ||
      !std::all_of(ids.begin(), ids.end(), [](const json &id) {
        return id.is_string() && !id.get_ref<const std::string &>().empty();
      }))
    hub.failAt("repo_ids", ids.is_null() ? nullptr : &ids,
               "is " + describeJson(ids) +
                   ", expected a non-empty list of repository ids "
                   "(\"owner/name\")");
  return ids.get<std::vector<std::string>>();
}

std::optional<BundledModel> findBundledModel(const std::string &name) {
  std::vector<BundledModel> models = listBundledModels();
  for (const BundledModel &model : models)
    if (equalsIgnoringCase(model.name, name))
      return model;
  for (const BundledModel &model : models)
    for (const std::string &id : bundledRepoIds(model))
      if (equalsIgnoringCase(id, name))
        return model;
  return std::nullopt;
}

namespace {
/// "MODEL: no such file or folder, ..." with the bundled names and
/// repository ids nearest to what was typed.
[[noreturn]] void refuseUnknownModel(const std::string &model) {
  std::vector<std::string> names, known;
  for (const BundledModel &bundled : listBundledModels()) {
    names.push_back(bundled.name);
    known.push_back(bundled.name);
    for (const std::string &id : bundledRepoIds(bundled))
      known.push_back(id);
  }
  // Model names get abbreviated more than flags get mistyped
  // (wan2.1-14b), so half the typed length may differ.
  std::vector<std::string> nearest =
      nearestNames(model, known, 3, std::max<size_t>(2, model.size() / 2));
  std::string closest;
  for (const std::string &name : nearest)
    closest += (closest.empty() ? "" : ", ") + name;
  std::string all;
  for (const std::string &name : names)
    all += (all.empty() ? "" : ", ") + name;
  badFile(model, "no such file or folder, and not a bundled model" +
                     (closest.empty() ? std::string()
                                      : "; closest bundled: " + closest) +
                     "; MODEL is a bundled name (" + all +
                     ") or its Hugging Face repository id, a config.json, "
                     "or a snapshot folder");
}
} // namespace

//===----------------------------------------------------------------------===//
// Transformer configs, one reader per family
//===----------------------------------------------------------------------===//

namespace {
constexpr int64_t kMax = kAbsurdSize;

/// Reads fields common to every family and fills the spec's head geometry.
void readHeads(const JsonObject &config, ModelSpec &spec) {
  spec.numHeads = config.getInt("num_attention_heads", 1, 4096);
  spec.headDim = config.getInt("attention_head_dim", 1, 4096);
  spec.hiddenSize = spec.numHeads * spec.headDim;
  spec.textHiddenSize = spec.hiddenSize;
  spec.timeEmbedDim = spec.hiddenSize;
}

/// Splits head_dim over (frames, rows, columns) the way Wan does: the two
/// spatial axes take 2 * (d / 6) each, time takes the rest.
std::vector<int64_t> wanRopeAxes(int64_t headDim) {
  int64_t spatial = 2 * (headDim / 6);
  return {headDim - 2 * spatial, spatial, spatial};
}

std::string listText(const std::vector<int64_t> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

/// Rotary embedding turns channel pairs, so every axis has an even number
/// of channels (diffusers' get_1d_rotary_pos_embed asserts it). `field` is
/// the key that decided the axes; `derived` says they come from the head
/// dim rather than from a list in the config.
void checkRopeAxesEven(const JsonObject &config, const std::string &field,
                       const ModelSpec &spec, bool derived) {
  if (std::all_of(spec.ropeAxes.begin(), spec.ropeAxes.end(),
                  [](int64_t d) { return d % 2 == 0; }))
    return;
  if (derived)
    config.fail(field, "is " + std::to_string(spec.headDim) +
                           ", which splits into rotary axes " +
                           listText(spec.ropeAxes) +
                           "; expected a head dim whose rotary axes are all "
                           "even (rotary embedding turns channel pairs)");
  config.fail(field, "is " + listText(spec.ropeAxes) +
                         ", expected even sizes (rotary embedding turns "
                         "channel pairs)");
}

void checkRopeAxes(const JsonObject &config, const std::string &field,
                   const ModelSpec &spec) {
  int64_t sum = 0;
  for (int64_t d : spec.ropeAxes)
    sum += d;
  if (spec.ropeAxes.size() != 3 || sum != spec.headDim)
    config.fail(field, "sums to " + std::to_string(sum) + " over " +
                           std::to_string(spec.ropeAxes.size()) +
                           " axes, expected 3 axes summing to "
                           "attention_head_dim " +
                           std::to_string(spec.headDim));
}

/// The sinusoidal timestep features: (cos, sin) pairs, so an even count.
int64_t readFreqDim(const JsonObject &config, const std::string &field,
                    std::optional<int64_t> fallback) {
  int64_t value = fallback
                      ? config.getOptionalInt(field, 2, kMax).value_or(*fallback)
                      : config.getInt(field, 2, kMax);
  if (value % 2 != 0)
    config.fail(field, "is " + std::to_string(value) +
                           ", expected an even integer in [2, " +
                           std::to_string(kMax) +
                           "] (sinusoidal timestep features come in cos/sin "
                           "pairs)");
  return value;
}

/// in_channels, and out_channels defaulting to it as diffusers does.
void readChannels(const JsonObject &config, ModelSpec &spec) {
  spec.latentChannels = config.getInt("in_channels", 1, kMax);
  spec.outChannels = config.getOptionalInt("out_channels", 1, kMax)
                         .value_or(spec.latentChannels);
}

/// Rotary dims per (frame, row, column) axis; diffusers defaults them to
/// (16, 56, 56) for the 128-wide heads of FLUX, Qwen-Image and HunyuanVideo.
void readRopeAxes(const JsonObject &config, const std::string &field,
                  ModelSpec &spec) {
  spec.ropeAxes = config.has(field) ? config.getIntList(field, 1, 4096)
                                    : std::vector<int64_t>{16, 56, 56};
  checkRopeAxes(config, field, spec);
  checkRopeAxesEven(config, field, spec, /*derived=*/false);
}

/// Square spatial patch with an optional temporal one.
std::array<int64_t, 3> readPatch(const JsonObject &config, bool temporal) {
  int64_t p = config.getInt("patch_size", 1, 64);
  int64_t pt = temporal ? config.getOptionalInt("patch_size_t", 1, 64).value_or(1)
                        : 1;
  return {pt, p, p};
}

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
}

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

void readQwenImage(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.doubleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
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
}

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

void readCogVideoX(const JsonObject &config, ModelSpec &spec) {
  readHeads(config, spec);
  spec.singleBlocks = config.getInt("num_layers", 1, 1024);
  spec.ffnSize = 4 * spec.hiddenSize;
  readChannels(config, spec);
  spec.patch = readPatch(config, /*temporal=*/true);
  spec.textEmbedDim = config.getInt("text_embed_dim", 1, kMax);
  spec.timeEmbedDim = config.getInt("time_embed_dim", 1, kMax);
  spec.eps = config.getOptionalDouble("norm_eps", 1e-5, 1e-12, 1.0);
  spec.useRope = config.getOptionalBool("use_rotary_positional_embeddings", false);
  // CogVideoX rotates a quarter of each head by frame and 3/8 by row/column.
  spec.ropeAxes = {spec.headDim / 4, spec.headDim * 3 / 8, spec.headDim * 3 / 8};
  if (spec.useRope) {
    checkRopeAxes(config, "attention_head_dim", spec);
    checkRopeAxesEven(config, "attention_head_dim", spec, /*derived=*/true);
  }
  // The text and video streams share one sequence and one set of weights.
  spec.textHiddenSize = spec.hiddenSize;
}

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
  spec.qkNorm = config.has("qk_norm");
  if (config.has("dual_attention_layers"))
    spec.dualAttentionLayers =
        config.getIntList("dual_attention_layers", 0, spec.doubleBlocks - 1);
}

struct FamilyReader {
  Family family;
  void (*read)(const JsonObject &, ModelSpec &);
};

const FamilyReader kReaders[] = {
    {Family::Wan, readWan},
    {Family::Flux, readFlux},
    {Family::QwenImage, readQwenImage},
    {Family::HunyuanVideo, readHunyuanVideo},
    {Family::CogVideoX, readCogVideoX},
    {Family::LTXVideo, readLTXVideo},
    {Family::Mochi, readMochi},
    {Family::SD3, readSD3},
};

std::string knownClassNames() {
  std::string names;
  for (const FamilyInfo &info : knownFamilies())
    names += std::string(names.empty() ? "" : ", ") + info.className;
  return names;
}

ModelSpec readTransformerConfig(const std::string &path) {
  json root = JsonObject::parseFile(path);
  JsonObject config(path, &root);
  std::string className = config.getString("_class_name");
  ModelSpec spec;
  spec.configPath = path;
  spec.className = className;
  const FamilyReader *reader = nullptr;
  for (const FamilyReader &candidate : kReaders)
    if (className == familyInfo(candidate.family).className)
      reader = &candidate;
  if (!reader)
    config.fail("_class_name", "is '" + className +
                                   "', not a known DiT family; known: " +
                                   knownClassNames());
  spec.family = reader->family;
  reader->read(config, spec);
  const FamilyInfo &info = familyInfo(spec.family);
  spec.vaeSpatial = info.vaeSpatial;
  spec.vaeTemporal = info.vaeTemporal;
  spec.vaeSource = "family default";
  spec.textEncoderClass = info.textEncoder;
  spec.vaeClass = info.vaeClass;
  if (spec.numBlocks() < 1)
    throw BadInput(path + ": the model has no transformer blocks");
  return spec;
}

//===----------------------------------------------------------------------===//
// Snapshot folders
//===----------------------------------------------------------------------===//

/// Derives the VAE compression from a diffusers VAE config, trying the keys
/// each VAE class publishes; leaves the family default when none is there.
void readVaeCompression(const std::string &path, ModelSpec &spec) {
  json root = JsonObject::parseFile(path);
  JsonObject vae(path, &root);
  if (auto cls = vae.getOptionalString("_class_name")) {
    if (cls->empty())
      vae.fail("_class_name", "is empty, expected the VAE's class name (e.g. " +
                                  spec.vaeClass + ")");
    spec.vaeClass = *cls;
  }
  std::optional<int64_t> spatial, temporal;
  if (auto s = vae.getOptionalInt("spatial_compression_ratio", 1, 1024))
    spatial = s;
  else if (auto s = vae.getOptionalInt("scale_factor_spatial", 1, 1024))
    spatial = s;
  if (auto t = vae.getOptionalInt("temporal_compression_ratio", 1, 1024))
    temporal = t;
  else if (auto t = vae.getOptionalInt("scale_factor_temporal", 1, 1024))
    temporal = t;
  if (!spatial && vae.has("temperal_downsample")) {
    // AutoencoderKLWan / QwenImage: every stage halves space, the flagged
    // ones also halve time.
    const json &flags = vae.raw().at("temperal_downsample");
    if (!flags.is_array() || flags.empty() || flags.size() > 10 ||
        !std::all_of(flags.begin(), flags.end(),
                     [](const json &f) { return f.is_boolean(); }))
      vae.fail("temperal_downsample", "is " + describeJson(flags) +
                                          ", expected a list of 1 to 10 "
                                          "booleans");
    spatial = int64_t(1) << flags.size();
    if (!temporal)
      temporal = int64_t(1) << std::count(flags.begin(), flags.end(), true);
  }
  if (!spatial && spec.family != Family::LTXVideo &&
      vae.has("block_out_channels")) {
    // AutoencoderKL-style: one 2x downsample between consecutive blocks.
    std::vector<int64_t> blocks = vae.getIntList("block_out_channels", 1, kMax);
    if (blocks.empty() || blocks.size() > 10)
      vae.fail("block_out_channels", "has " + std::to_string(blocks.size()) +
                                         " entries, expected 1 to 10");
    spatial = int64_t(1) << (blocks.size() - 1);
  }
  if (spatial) {
    spec.vaeSpatial = *spatial;
    spec.vaeSource = path;
  }
  if (temporal && spec.info().video) {
    spec.vaeTemporal = *temporal;
    spec.vaeSource = path;
  }
}

/// Reads the [library, class] pair of a model_index.json component, or
/// nullopt when the component is absent or [null, null].
std::optional<std::string> componentClass(const JsonObject &index,
                                          const std::string &key) {
  if (!index.has(key))
    return std::nullopt;
  const json &entry = index.raw().at(key);
  if (!entry.is_array() || entry.size() != 2)
    index.fail(key, "is " + describeJson(entry) +
                        ", expected [library, class] or [null, null]");
  if (entry[1].is_null())
    return std::nullopt;
  if (!entry[1].is_string() || entry[1].get<std::string>().empty())
    index.fail(key, "has class " + describeJson(entry[1]) +
                        ", expected a non-empty class name");
  return entry[1].get<std::string>();
}

ModelSpec readSnapshot(const std::string &dir) {
  std::string indexPath = dir + "/model_index.json";
  json indexRoot = JsonObject::parseFile(indexPath);
  JsonObject index(indexPath, &indexRoot);
  if (!componentClass(index, "transformer"))
    index.fail("transformer", "is missing; ditc imports pipelines whose "
                              "denoiser is a transformer");
  ModelSpec spec = readTransformerConfig(dir + "/transformer/config.json");
  if (auto second = componentClass(index, "transformer_2")) {
    ModelSpec expert = readTransformerConfig(dir + "/transformer_2/config.json");
    if (expert.className != spec.className ||
        expert.numBlocks() != spec.numBlocks() ||
        expert.numHeads != spec.numHeads || expert.headDim != spec.headDim ||
        expert.ffnSize != spec.ffnSize)
      throw BadInput(dir + "/transformer_2/config.json: the second expert's "
                           "architecture differs from transformer/config.json; "
                           "ditc needs both experts to share one shape");
    spec.experts = 2;
    spec.boundaryRatio = index.getOptionalDouble("boundary_ratio", 0.875, 0.0, 1.0);
  }
  const char *encoderKey = spec.family == Family::Flux ? "text_encoder_2"
                           : spec.family == Family::SD3 ? "text_encoder_3"
                                                        : "text_encoder";
  if (auto encoder = componentClass(index, encoderKey))
    spec.textEncoderClass = *encoder;
  if (exists(dir + "/vae/config.json"))
    readVaeCompression(dir + "/vae/config.json", spec);
  return spec;
}

} // namespace

ModelSpec loadModel(const std::string &model) {
  if (model.empty())
    throw BadInput("command line: MODEL is empty; expected a bundled model "
                   "name, a config.json or a snapshot folder");
  std::string path = model;
  std::string name = model;
  if (!exists(path)) {
    bool bareName = model.find('/') == std::string::npos;
    std::string bundled = bundledModelsDir() + "/" + model;
    if (bareName && isDirectory(bundled)) {
      path = bundled;
    } else if (std::optional<BundledModel> match = findBundledModel(model)) {
      path = match->path;
      name = match->name;
    } else {
      refuseUnknownModel(model);
    }
  }
  ModelSpec spec;
  if (isDirectory(path)) {
    if (exists(path + "/model_index.json"))
      spec = readSnapshot(path);
    else if (exists(path + "/config.json"))
      spec = readTransformerConfig(path + "/config.json");
    else
      badFile(path, "folder holds neither model_index.json (a snapshot) nor "
                    "config.json (a transformer)");
  } else {
    spec = readTransformerConfig(path);
  }
  spec.name = name;
  return spec;
}

//===----------------------------------------------------------------------===//
// Workload
//===----------------------------------------------------------------------===//

/// The two multiples of `step` nearest to `value`, for error messages.
static std::string nearestMultiples(int64_t value, int64_t step) {
  int64_t below = (value / step) * step;
  int64_t above = below + step;
  if (below < step)
    return std::to_string(above);
  return std::to_string(below) + " or " + std::to_string(above);
}

Workload resolveWorkload(const ModelSpec &spec,
                         const WorkloadOptions &options) {
  const FamilyInfo &info = spec.info();
  Workload w;
  w.height = options.height.value_or(info.defaultHeight);
  w.width = options.width.value_or(info.defaultWidth);
  w.frames = options.frames.value_or(info.video ? info.defaultFrames : 1);
  w.batch = options.batch.value_or(1);
  w.steps = options.steps.value_or(info.defaultSteps);
  w.guidanceScale = options.guidanceScale.value_or(info.defaultGuidance);
  w.branches = info.branches;
  w.textTokens = info.textTokens;

  for (auto [flag, value, patch, given] :
       {std::tuple<const char *, int64_t, int64_t, bool>{
            "--height", w.height, spec.patch[1], bool(options.height)},
        {"--width", w.width, spec.patch[2], bool(options.width)}}) {
    int64_t step = spec.vaeSpatial * patch;
    if (value % step != 0)
      throw BadInput(
          std::string(given ? "command line: " : "") + flag + " " +
              std::to_string(value) + (given ? "" : " (the family default)") +
              " is not divisible by " + std::to_string(step) +
              " (VAE compression " + std::to_string(spec.vaeSpatial) +
              " x patch " + std::to_string(patch) + " of " + spec.name +
              "); nearest allowed: " + nearestMultiples(value, step),
          given ? InputLocation{"command line", flag, std::to_string(value)}
                : InputLocation{});
  }
  w.latentHeight = w.height / spec.vaeSpatial;
  w.latentWidth = w.width / spec.vaeSpatial;
  if (!info.video) {
    if (w.frames != 1)
      badFlag("--num-frames", std::to_string(w.frames),
              "--num-frames " + std::to_string(w.frames) +
                  " given for image model " + spec.name + "; allowed: 1");
    w.latentFrames = 1;
  } else {
    if ((w.frames - 1) % spec.vaeTemporal != 0)
      badFlag("--num-frames", std::to_string(w.frames),
              "--num-frames " + std::to_string(w.frames) +
                  " does not fit VAE temporal compression " +
                  std::to_string(spec.vaeTemporal) + " of " + spec.name +
                  "; allowed: 1 + a multiple of " +
                  std::to_string(spec.vaeTemporal) + " (nearest: " +
                  std::to_string(1 + ((w.frames - 1) / spec.vaeTemporal) *
                                         spec.vaeTemporal) +
                  " or " +
                  std::to_string(1 + ((w.frames - 1) / spec.vaeTemporal + 1) *
                                         spec.vaeTemporal) +
                  ")");
    w.latentFrames = (w.frames - 1) / spec.vaeTemporal + 1;
    if (w.latentFrames % spec.patch[0] != 0)
      badFlag("--num-frames", std::to_string(w.frames),
              "--num-frames " + std::to_string(w.frames) + " gives " +
                  std::to_string(w.latentFrames) +
                  " latent frames, not divisible by the temporal patch " +
                  std::to_string(spec.patch[0]) + " of " + spec.name);
  }
  w.grid = {w.latentFrames / spec.patch[0], w.latentHeight / spec.patch[1],
            w.latentWidth / spec.patch[2]};
  // Every tensor the importer builds must have an element count that fits
  // in int64 with room to spare; refuse workloads whose activations overflow.
  std::optional<int64_t> tokens = checkedMul(w.grid[0], w.grid[1]);
  if (tokens)
    tokens = checkedMul(*tokens, w.grid[2]);
  std::optional<int64_t> elements =
      tokens ? checkedMul(*tokens + w.textTokens, w.batch) : std::nullopt;
  if (elements)
    elements = checkedMul(*elements,
                          std::max(spec.ffnSize, 3 * spec.hiddenSize) * 2);
  if (!elements || *elements > (int64_t(1) << 50))
    throw BadInput("command line: workload " + std::to_string(w.batch) + " x " +
                   std::to_string(w.frames) + " frames x " +
                   std::to_string(w.height) + "x" + std::to_string(w.width) +
                   " is too large: its activations overflow the 2^50 "
                   "elements ditc accepts per tensor");
  w.imageTokens = *tokens;
  return w;
}

int64_t guidanceBranchesRun(int64_t branches, double guidanceScale) {
  return guidanceScale <= 1.0 ? 1 : branches;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

json modelSpecJson(const ModelSpec &spec) {
  // The name is the bundled model's, or the path given, which may be any
  // bytes.
  json model = {{"name", escapeInvalidUtf8(spec.name)},
                {"family", spec.info().name},
                {"class_name", spec.className},
                {"double_blocks", spec.doubleBlocks},
                {"single_blocks", spec.singleBlocks},
                {"num_heads", spec.numHeads},
                {"head_dim", spec.headDim},
                {"hidden_size", spec.hiddenSize},
                {"ffn_size", spec.ffnSize},
                {"text_hidden_size", spec.textHiddenSize},
                {"text_embed_dim", spec.textEmbedDim},
                {"pooled_dim", spec.pooledDim},
                {"latent_channels", spec.latentChannels},
                {"patch", spec.patch},
                {"vae_spatial", spec.vaeSpatial},
                {"vae_temporal", spec.vaeTemporal},
                {"experts", spec.experts},
                {"guidance_embeds", spec.guidanceEmbeds}};
  if (spec.experts == 2)
    model["boundary_ratio"] = spec.boundaryRatio;
  return model;
}

json workloadJson(const Workload &w) {
  return {{"batch", w.batch},
          {"height", w.height},
          {"width", w.width},
          {"frames", w.frames},
          {"latent_frames", w.latentFrames},
          {"latent_height", w.latentHeight},
          {"latent_width", w.latentWidth},
          {"grid", w.grid},
          {"image_tokens", w.imageTokens},
          {"text_tokens", w.textTokens},
          {"branches", w.branches},
          {"guidance_scale", w.guidanceScale},
          {"steps", w.steps}};
}

int64_t textStreamFfnSize(const std::string &family, int64_t textHiddenSize,
                          int64_t ffnSize) {
  return family == "mochi" ? (4 * textHiddenSize * 2) / 3 : ffnSize;
}

} // namespace ditc
