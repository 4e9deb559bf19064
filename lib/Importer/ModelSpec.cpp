//===- ModelSpec.cpp - bundled models, workloads and their JSON -----------===//
//
// The parts of the model description that need no MLIR: where the bundled
// models are, how workload flags and a family's pipeline defaults resolve
// into token counts, and the JSON a plan's manifest records. Reading a
// config is the importer's (LoadModel.cpp, Families/*.cpp).
//
//===----------------------------------------------------------------------===//
#include "ditc/Importer/ModelSpec.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Spelling.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <unistd.h>

#ifndef DITC_SOURCE_MODELS_DIR
#define DITC_SOURCE_MODELS_DIR "models"
#endif

namespace ditc {

using nlohmann::json;

//===----------------------------------------------------------------------===//
// Files and folders
//===----------------------------------------------------------------------===//

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
  return isDirectoryPath(dir) ? dir : "";
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
    if (name[0] != '.' && pathExists(path + "/transformer/config.json"))
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
  if (!pathExists(path))
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
  // Names and ids compare without case, so two folders may answer one name:
  // that is refused, never settled by the order of the folder listing.
  std::vector<const BundledModel *> byName, byId;
  for (const BundledModel &model : models)
    if (equalsIgnoringCase(model.name, name))
      byName.push_back(&model);
  if (byName.size() > 1)
    badFile(escapeInvalidUtf8(bundledModelsDir()), "holds '" + escapeInvalidUtf8(byName[0]->name) + "' and '" +
                                    escapeInvalidUtf8(byName[1]->name) +
                                    "', which differ only in case, so '" +
                                    escapeInvalidUtf8(name) +
                                    "' could mean either; rename one of them");
  if (!byName.empty())
    return *byName.front();
  for (const BundledModel &model : models)
    for (const std::string &id : bundledRepoIds(model))
      if (equalsIgnoringCase(id, name)) {
        byId.push_back(&model);
        break;
      }
  if (byId.size() > 1)
    badFile(escapeInvalidUtf8(byId[1]->path + "/hub.json"),
            "repo_ids claims '" + escapeInvalidUtf8(name) + "', and so does " +
                escapeInvalidUtf8(byId[0]->path) +
                "/hub.json (repository ids compare without case); an id must lead to "
                "one bundled model: remove it from one of them");
  if (!byId.empty())
    return *byId.front();
  return std::nullopt;
}

std::optional<std::string> bundledModelClash(const std::vector<BundledModel> &models,
                                             const BundledModel &model) {
  std::vector<std::string> ids = bundledRepoIds(model);
  for (const BundledModel &other : models) {
    if (other.path == model.path)
      continue;
    if (equalsIgnoringCase(other.name, model.name))
      return "its name differs only in case from bundled model '" +
             escapeInvalidUtf8(other.name) + "'";
    for (const std::string &id : bundledRepoIds(other))
      for (const std::string &mine : ids)
        if (equalsIgnoringCase(id, mine))
          return escapeInvalidUtf8(other.path) + "/hub.json claims its repository id '" +
                 escapeInvalidUtf8(mine) + "' too (ids compare without case)";
  }
  return std::nullopt;
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
  w.branches = guidanceBranchesRun(info.branches, w.guidanceScale);
  w.textTokens = info.textTokens;
  if (options.maxSequenceLength) {
    int64_t length = *options.maxSequenceLength;
    if (info.maxSequenceLength > 0 && length > info.maxSequenceLength)
      badFlag("--text-tokens", std::to_string(length),
              "--text-tokens " + std::to_string(length) + " is above " +
                  std::to_string(info.maxSequenceLength) +
                  ", the largest max_sequence_length the diffusers pipeline of " +
                  spec.name + " (" + info.name + ") accepts; allowed: 1 to " +
                  std::to_string(info.maxSequenceLength));
    w.textTokens = info.fixedTextTokens + length;
    if (spec.requiredTextTokens > 0 && w.textTokens != spec.requiredTextTokens)
      badFlag("--text-tokens", std::to_string(length),
              "--text-tokens " + std::to_string(length) + " is not " +
                  std::to_string(spec.requiredTextTokens) + ", the text length " +
                  spec.name + "'s position table is built for (max_text_seq_length; "
                  "diffusers' CogVideoXPatchEmbed adds it to the joint sequence, so "
                  "no other length fits); allowed: " +
                  std::to_string(spec.requiredTextTokens));
  }

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
