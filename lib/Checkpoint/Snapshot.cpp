//===- Snapshot.cpp - a diffusers snapshot's transformer weights ----------===//
#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"

#include <algorithm>
#include <cerrno>

namespace ditc::checkpoint {

using nlohmann::json;

/// A shard name from the index must be a plain file name: no folder part,
/// nothing hidden, so the index cannot direct a read out of its folder.
static bool plainFileName(const std::string &name) {
  return !name.empty() && name.size() <= 255 && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos && name[0] != '.';
}

TransformerWeights::TransformerWeights(const std::string &folder,
                                       const std::string &component,
                                       const std::string &stem)
    : name(component), dir(folder), singleFile(stem + ".safetensors") {
  std::string shownDir = escapeInvalidUtf8(dir);
  if (!isDirectoryPath(dir))
    badFile(shownDir, "is not a folder (expected the " + component +
                          " folder of a diffusers snapshot)");
  configJson = JsonObject::parseFile(configPath()); // an object, or refused

  std::string indexName = singleFile + ".index.json";
  std::string single = dir + "/" + singleFile;
  std::string indexFile = dir + "/" + indexName;
  bool haveSingle = pathExists(single), haveIndex = pathExists(indexFile);
  if (!haveSingle && !haveIndex)
    badFile(shownDir, "holds neither " + singleFile + " nor " + indexName + " (the " +
                          component +
                          "'s weights; other variants such as .fp16 or .bin "
                          "files are not read)");
  if (!haveIndex) {
    auto file = std::make_unique<SafeTensorsFile>(single);
    for (const StoredTensor &t : file->tensors())
      tensors[t.name] = {file.get(), &t};
    shards[singleFile] = std::move(file);
    return;
  }

  // Sharded: the index maps every tensor to a shard file in this folder.
  index = indexFile;
  std::string shownIndex = escapeInvalidUtf8(index);
  json top = JsonObject::parseFile(index);
  JsonObject root(shownIndex, &top);
  JsonObject map = root.getObject("weight_map");
  for (auto it = map.raw().begin(); it != map.raw().end(); ++it) {
    if (!it.value().is_string())
      map.fail(it.key(), "must name the shard file that holds the tensor");
    std::string shard = it.value().get<std::string>();
    if (!plainFileName(shard))
      map.fail(it.key(), "names shard '" + escapeInvalidUtf8(shard) +
                             "'; a shard must be a plain file name in " + shownDir);
    auto found = shards.find(shard);
    if (found == shards.end())
      found = shards.emplace(shard, std::make_unique<SafeTensorsFile>(dir + "/" + shard))
                  .first;
    const StoredTensor *tensor = found->second->find(it.key());
    if (!tensor)
      map.fail(it.key(), "is mapped to shard " +
                             escapeInvalidUtf8(found->second->path()) +
                             ", which holds no tensor of that name");
    tensors[it.key()] = {found->second.get(), tensor};
  }
  if (shards.empty())
    root.fail("weight_map", "is empty; the index lists no tensor");
}

std::string TransformerWeights::weightsSource() const {
  return index.empty() ? dir + "/" + singleFile : index;
}

TensorLocation TransformerWeights::find(const std::string &tensor) const {
  auto it = tensors.find(tensor);
  if (it != tensors.end())
    return it->second;
  // transformers 5 saves a model without its base module's name (a
  // CLIPTextModel's "text_model.embeddings..." as "embeddings...") and reads
  // either layout back; so does this, when no tensor of the checkpoint
  // starts with that module's name.
  size_t dot = tensor.find('.');
  if (dot == std::string::npos)
    return {};
  std::string module = tensor.substr(0, dot + 1);
  auto first = tensors.lower_bound(module);
  if (first != tensors.end() && first->first.compare(0, module.size(), module) == 0)
    return {};
  it = tensors.find(tensor.substr(dot + 1));
  return it == tensors.end() ? TensorLocation{} : it->second;
}

TensorLocation TransformerWeights::locate(const std::string &tensor) const {
  TensorLocation where = find(tensor);
  if (!where.tensor)
    badFile(escapeInvalidUtf8(weightsSource()),
            "has no tensor '" + escapeInvalidUtf8(tensor) + "' (the " + name +
                " checkpoint lacks a parameter the plan reads)");
  return where;
}

std::vector<std::string> TransformerWeights::names() const {
  std::vector<std::string> out;
  for (const auto &entry : tensors)
    out.push_back(entry.first);
  return out;
}

std::vector<const SafeTensorsFile *> TransformerWeights::files() const {
  std::vector<const SafeTensorsFile *> out;
  for (const auto &entry : shards)
    out.push_back(entry.second.get());
  return out;
}

int64_t TransformerWeights::dataBytes() const {
  int64_t bytes = 0;
  for (const auto &entry : shards)
    bytes += entry.second->dataBytes();
  return bytes;
}

int64_t TransformerWeights::bytesRead() const {
  int64_t bytes = 0;
  for (const auto &entry : shards)
    bytes += entry.second->bytesRead();
  return bytes;
}

int64_t TransformerWeights::headerBytes() const {
  int64_t bytes = 0;
  for (const auto &entry : shards)
    bytes += entry.second->headerBytes();
  return bytes;
}

Snapshot::Snapshot(const std::string &folder) : dir(folder) {
  std::string shown = escapeInvalidUtf8(dir);
  if (!isDirectoryPath(dir))
    badFile(shown, "is not a folder (expected a diffusers snapshot: a pipeline "
                   "folder with model_index.json, or a transformer folder)");
  if (pathExists(dir + "/model_index.json")) {
    kind = Layout::Pipeline;
    index = JsonObject::parseFile(dir + "/model_index.json");
    if (!isDirectoryPath(dir + "/transformer"))
      badFile(shown, "has model_index.json but no transformer/ folder");
    for (const char *part : {"transformer", "transformer_2"})
      if (isDirectoryPath(dir + "/" + part))
        parts[part] = std::make_unique<TransformerWeights>(dir + "/" + part, part);
    return;
  }
  if (!pathExists(dir + "/config.json"))
    badFile(shown, "is not a diffusers snapshot: it holds neither "
                   "model_index.json (a pipeline folder) nor config.json (a "
                   "transformer folder)");
  kind = Layout::Transformer;
  parts["transformer"] = std::make_unique<TransformerWeights>(dir, "transformer");
}

bool Snapshot::has(const std::string &part) const { return parts.count(part) != 0; }

const TransformerWeights &Snapshot::component(const std::string &part) const {
  auto it = parts.find(part);
  if (it == parts.end())
    badFile(escapeInvalidUtf8(dir),
            kind == Layout::Pipeline
                ? "has no " + part + "/ folder, but the plan runs the " + part
                : "is a transformer folder alone, but the plan also runs " + part +
                      "; give the pipeline folder that holds transformer/ and " +
                      part + "/");
  return *it->second;
}

std::vector<std::string> Snapshot::components() const {
  std::vector<std::string> out;
  for (const auto &entry : parts)
    out.push_back(entry.first); // "transformer" sorts before "transformer_2"
  return out;
}

std::vector<std::pair<int64_t, int64_t>>
sliceSpans(const std::vector<int64_t> &shape, int splitDim,
           const std::vector<int64_t> &segments, int64_t parts, int64_t index) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  if (splitDim < 0 || parts <= 1)
    return {{0, total}};
  // Runs kept along the split dimension: piece `index` of every segment.
  std::vector<std::pair<int64_t, int64_t>> runs;
  int64_t start = 0;
  for (int64_t width : segments) {
    int64_t chunk = width / parts;
    runs.push_back({start + index * chunk, chunk});
    start += width;
  }
  int64_t inner = 1, outer = 1, dimSize = shape[size_t(splitDim)];
  for (size_t d = size_t(splitDim) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  for (int d = 0; d < splitDim; ++d)
    outer *= shape[size_t(d)];
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int64_t o = 0; o < outer; ++o)
    for (const auto &[first, count] : runs) {
      int64_t begin = (o * dimSize + first) * inner, length = count * inner;
      if (length == 0)
        continue;
      if (!spans.empty() && spans.back().first + spans.back().second == begin)
        spans.back().second += length; // contiguous with the last: one read
      else
        spans.push_back({begin, length});
    }
  return spans;
}

void readSpans(const TensorLocation &where,
               const std::vector<std::pair<int64_t, int64_t>> &spans, float *out) {
  for (const auto &[first, count] : spans) {
    where.file->readFloats(*where.tensor, first, count, out);
    out += count;
  }
}

} // namespace ditc::checkpoint
