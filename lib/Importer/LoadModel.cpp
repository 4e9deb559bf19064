//===- LoadModel.cpp - read a model folder or config into a ModelSpec -----===//
//
// Finds the config MODEL names (a bundled model, a config.json, a snapshot
// folder), hands the transformer config to the reader of the family its
// _class_name names (Families/*.cpp), and adds what the snapshot says about
// the pipeline: the second expert, the text encoder, the VAE's compression.
//
//===----------------------------------------------------------------------===//
#include "ditc/Importer/LoadModel.h"
#include "Family.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Spelling.h"
#include "ditc/Text/EncoderConfig.h"

#include <algorithm>

namespace ditc {

using nlohmann::json;

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

std::string knownClassNames() {
  std::string names;
  for (const FamilyDef *family : familyRegistry())
    names += std::string(names.empty() ? "" : ", ") + family->info.className;
  return names;
}

ModelSpec readTransformerConfig(const std::string &path) {
  json root = JsonObject::parseFile(path);
  JsonObject config(path, &root);
  std::string className = config.getString("_class_name");
  ModelSpec spec;
  spec.configPath = path;
  spec.className = className;
  const FamilyDef *family = findFamily(className);
  if (!family)
    config.fail("_class_name", "is '" + className +
                                   "', not a known DiT family; known: " +
                                   knownClassNames());
  spec.family = family->info;
  family->readConfig(config, spec);
  spec.checkpointConfig["transformer"] = withoutDiffusersMetadata(root, false).dump();
  const FamilyInfo &info = spec.info();
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

/// Records a diffusers VAE config (spec.vaeConfig) and derives the VAE
/// compression from it, trying the keys each VAE class publishes; leaves
/// the family default when none is there.
void readVaeConfig(const std::string &path, ModelSpec &spec) {
  json root = JsonObject::parseFile(path);
  JsonObject vae(path, &root);
  if (auto cls = vae.getOptionalString("_class_name")) {
    if (cls->empty())
      vae.fail("_class_name", "is empty, expected the VAE's class name (e.g. " +
                                  spec.vaeClass + ")");
    spec.vaeClass = *cls;
  }
  // A config without _class_name takes the family's VAE class.
  json kept = withoutDiffusersMetadata(root, false);
  kept["_class_name"] = spec.vaeClass;
  spec.vaeConfig = kept.dump();
  spec.vaeConfigPath = path;
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
  if (!spatial && spec.info().vaeCompressionFromBlocks &&
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
    spec.checkpointConfig["transformer_2"] =
        expert.checkpointConfig.at("transformer");
    spec.boundaryRatio = index.getOptionalDouble("boundary_ratio", 0.875, 0.0, 1.0);
  }
  if (auto encoder = componentClass(index, spec.info().textEncoderKey))
    spec.textEncoderClass = *encoder;
  if (pathExists(dir + "/vae/config.json"))
    readVaeConfig(dir + "/vae/config.json", spec);
  // The text encoders ditc models, where the snapshot holds their config:
  // the importer validates each (a bad one exits 2 naming its file).
  for (const char *component : {"text_encoder", "text_encoder_2", "text_encoder_3"}) {
    std::optional<std::string> cls = componentClass(index, component);
    std::string path = dir + "/" + component + "/config.json";
    if (!cls || !text::isModeledTextEncoderClass(*cls) || !pathExists(path))
      continue;
    json root = JsonObject::parseFile(path);
    spec.textEncoders.push_back(
        {component, *cls, withoutDiffusersMetadata(root, false).dump(), path});
  }
  return spec;
}

} // namespace

ModelSpec loadModel(const std::string &model) {
  if (model.empty())
    throw BadInput("command line: MODEL is empty; expected a bundled model "
                   "name, a config.json or a snapshot folder");
  std::string path = model;
  std::string name = model;
  if (!pathExists(path)) {
    bool bareName = model.find('/') == std::string::npos;
    std::string bundled = bundledModelsDir() + "/" + model;
    if (bareName && isDirectoryPath(bundled)) {
      path = bundled;
    } else if (std::optional<BundledModel> match = findBundledModel(model)) {
      path = match->path;
      name = match->name;
    } else {
      refuseUnknownModel(model);
    }
  }
  ModelSpec spec;
  if (isDirectoryPath(path)) {
    if (pathExists(path + "/model_index.json"))
      spec = readSnapshot(path);
    else if (pathExists(path + "/config.json"))
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

} // namespace ditc
