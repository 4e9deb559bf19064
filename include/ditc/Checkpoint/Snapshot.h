//===- Snapshot.h - a diffusers snapshot's transformer weights --*- C++ -*-===//
//
// A diffusers snapshot is either a pipeline folder (model_index.json, a
// transformer/ folder, and transformer_2/ for Wan2.2 A14B's second expert)
// or one transformer folder alone (config.json and its weights). A
// transformer folder holds its weights as one
// diffusion_pytorch_model.safetensors, or as shards listed by
// diffusion_pytorch_model.safetensors.index.json ({"weight_map": {tensor:
// shard file}}).
//
// Everything is untrusted and checked when the snapshot is opened, before
// any tensor data is read: config.json and the index are bounded,
// depth-limited JSON; every shard the index names must be a plain file name
// in the same folder (the index cannot point a read anywhere else); every
// weights file is a regular file whose header and offsets are validated
// (SafeTensors.h); and every index entry's shard must hold its tensor. The
// files themselves may be symbolic links, because huggingface_hub's cache
// links every file of a snapshot into its blobs/ folder; the link's target
// must still be a regular file within the size caps.
//
// No torch and no MLIR: dit-run loads through it, and ditc reads the same
// snapshots.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_CHECKPOINT_SNAPSHOT_H
#define DITC_CHECKPOINT_SNAPSHOT_H

#include "ditc/Checkpoint/SafeTensors.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ditc::checkpoint {

constexpr const char *kWeightsFile = "diffusion_pytorch_model.safetensors";
constexpr const char *kWeightsIndexFile =
    "diffusion_pytorch_model.safetensors.index.json";
/// The file stems of a diffusers folder and of a transformers one (the
/// text encoders: model.safetensors, model.safetensors.index.json).
constexpr const char *kDiffusersWeightsStem = "diffusion_pytorch_model";
constexpr const char *kTransformersWeightsStem = "model";

/// A stored tensor and the file that holds it.
struct TensorLocation {
  const SafeTensorsFile *file = nullptr;
  const StoredTensor *tensor = nullptr;
};

/// The weights of one transformer folder: its config.json and its
/// safetensors file or shards, all validated on construction.
class TransformerWeights {
public:
  /// Opens the transformer folder `dir`; `component` ("transformer",
  /// "transformer_2") names it in messages. `stem` names the weights files:
  /// STEM.safetensors or STEM.safetensors.index.json (diffusers' by
  /// default; kTransformersWeightsStem for a text encoder). Throws BadInput
  /// naming the file, the tensor and the field.
  TransformerWeights(const std::string &dir, const std::string &component,
                     const std::string &stem = kDiffusersWeightsStem);

  const std::string &component() const { return name; }
  const std::string &folder() const { return dir; }
  /// config.json, parsed.
  const nlohmann::json &config() const { return configJson; }
  std::string configPath() const { return dir + "/config.json"; }
  /// The index file when the weights are sharded, else empty.
  const std::string &indexPath() const { return index; }
  /// The file that says where tensors are: the index, or the single file.
  std::string weightsSource() const;

  /// The tensor `name`, or a null location.
  TensorLocation find(const std::string &name) const;
  /// The tensor `name`; throws BadInput naming the weights source and the
  /// tensor when the checkpoint lacks it.
  TensorLocation locate(const std::string &name) const;
  /// Every tensor name, sorted.
  std::vector<std::string> names() const;
  /// The weights files, in name order.
  std::vector<const SafeTensorsFile *> files() const;

  /// Bytes of tensor data in every weights file (headers excluded).
  int64_t dataBytes() const;
  /// Bytes read from the weights files so far, headers included.
  int64_t bytesRead() const;
  /// Bytes of the weights files' headers (read when the folder is opened).
  int64_t headerBytes() const;

private:
  std::string name, dir, index, singleFile;
  nlohmann::json configJson;
  std::map<std::string, std::unique_ptr<SafeTensorsFile>> shards; // by file name
  std::map<std::string, TensorLocation> tensors;
};

/// A pipeline folder or a transformer folder alone.
class Snapshot {
public:
  enum class Layout { Pipeline, Transformer };

  /// Detects the layout of `dir` and opens every transformer folder in it.
  /// Throws BadInput when `dir` is neither layout, naming what is missing.
  explicit Snapshot(const std::string &dir);

  Layout layout() const { return kind; }
  const std::string &folder() const { return dir; }
  /// True when the snapshot holds `component` ("transformer",
  /// "transformer_2"). A transformer folder alone holds "transformer" only.
  bool has(const std::string &component) const;
  /// The weights of `component`; throws BadInput naming the snapshot when
  /// it lacks that component.
  const TransformerWeights &component(const std::string &component) const;
  /// Components present, "transformer" first.
  std::vector<std::string> components() const;
  /// model_index.json, parsed; null for a transformer folder alone.
  const nlohmann::json &modelIndex() const { return index; }

private:
  std::string dir;
  Layout kind = Layout::Transformer;
  nlohmann::json index;
  std::map<std::string, std::unique_ptr<TransformerWeights>> parts;
};

/// The slice of a row-major tensor of `shape` that a rank holds when
/// dimension `splitDim` (-1: none) is made of `segments` (their sum is the
/// dimension), each split evenly into `parts` pieces, and the rank holds
/// piece `index` of every segment, concatenated in segment order
/// (docs/plan-format.md, "Parameters"). Returned as maximal contiguous
/// (first element, count) spans of the flat tensor, in the order of the
/// slice's own row-major layout.
std::vector<std::pair<int64_t, int64_t>>
sliceSpans(const std::vector<int64_t> &shape, int splitDim,
           const std::vector<int64_t> &segments, int64_t parts, int64_t index);

/// Reads `spans` of `tensor` (a location from locate) into `out`, one after
/// another, converted to float.
void readSpans(const TensorLocation &where,
               const std::vector<std::pair<int64_t, int64_t>> &spans, float *out);

} // namespace ditc::checkpoint

#endif // DITC_CHECKPOINT_SNAPSHOT_H
