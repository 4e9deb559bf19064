//===- Weights.cpp - a plan's parameters from a diffusers snapshot --------===//
#include "ditc/Runtime/IO/Weights.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"

#include <set>

namespace ditc::runtime {

using checkpoint::Snapshot;
using checkpoint::TensorLocation;
using checkpoint::TransformerWeights;
using nlohmann::json;

/// Refuses a config.json that is not the one the plan was compiled from,
/// naming every field that differs (both ways) with both values. Keys that
/// start with "_" say which diffusers wrote the file, not what the model is.
static void checkConfig(const TransformerWeights &weights, const json &planned,
                        const std::string &model) {
  std::set<std::string> keys;
  for (const json *object : {&planned, &weights.config()})
    for (auto it = object->begin(); it != object->end(); ++it)
      if (it.key().empty() || it.key()[0] != '_')
        keys.insert(it.key());
  std::string differences;
  int count = 0;
  for (const std::string &key : keys) {
    auto inPlan = planned.find(key);
    auto inSnapshot = weights.config().find(key);
    bool same = inPlan != planned.end() && inSnapshot != weights.config().end() &&
                *inPlan == *inSnapshot;
    if (same)
      continue;
    auto show = [](const json &object, json::const_iterator it) {
      return it == object.end() ? std::string("absent") : shortValueText(*it);
    };
    differences += (count++ ? "; " : "") + escapeInvalidUtf8(key) + " is " +
                   show(weights.config(), inSnapshot) + " in the snapshot but " +
                   show(planned, inPlan) + " in the plan";
  }
  if (count)
    badFile(escapeInvalidUtf8(weights.configPath()),
            "does not describe the plan's model " + escapeInvalidUtf8(model) + " (" +
                std::to_string(count) + " field" + (count == 1 ? "" : "s") +
                " differ: " + differences +
                "); compile the plan from this snapshot, or give the snapshot "
                "of the plan's model");
}

std::shared_ptr<const Snapshot>
openWeights(const std::string &dir, const Manifest &m,
            const std::vector<const Program *> &programs) {
  auto snapshot = std::make_shared<const Snapshot>(dir);
  std::set<std::string> experts;
  for (const Program *program : programs)
    experts.insert(program->expert);
  for (const std::string &expert : experts) {
    const TransformerWeights &weights = snapshot->component(expert);
    auto planned = m.checkpointConfig.find(expert);
    if (planned == m.checkpointConfig.end())
      badFile(escapeInvalidUtf8(m.path),
              "records no model.checkpoint_config for " + expert +
                  ", so the snapshot cannot be checked against the plan's model; "
                  "compile the plan again with this ditc");
    checkConfig(weights, planned->second, m.modelName);
  }

  // Every parameter any of the programs reads, once per expert and name.
  std::set<std::pair<std::string, std::string>> seen;
  auto visit = [&](const Program &program, const Function &fn) {
    const TransformerWeights &weights = snapshot->component(program.expert);
    for (const Op &op : fn.ops)
      for (const ParamSpec &spec : op.params) {
        if (!seen.insert({program.expert, spec.name}).second)
          continue;
        TensorLocation where = weights.locate(spec.name);
        if (where.tensor->shape != spec.storedShape())
          badFile(escapeInvalidUtf8(where.file->path()),
                  "tensor '" + escapeInvalidUtf8(spec.name) + "' has shape " +
                      formatShape(where.tensor->shape) + " (" +
                      checkpoint::storedTypeName(where.tensor->type) +
                      ") but the plan's " + escapeInvalidUtf8(m.modelName) +
                      " reads it as " + formatShape(spec.storedShape()));
      }
  };
  for (const Program *program : programs) {
    visit(*program, program->step);
    for (const auto &fn : program->functions)
      visit(*program, fn.second);
  }
  return snapshot;
}

at::Tensor loadParameter(const TransformerWeights &weights, const ParamSpec &spec,
                         int64_t tpSize, int64_t tpIndex,
                         std::optional<at::ScalarType> inPlaceType) {
  std::vector<int64_t> shape = spec.shape;
  if (spec.onlyOnTpZero && tpIndex != 0)
    return at::zeros(shape, at::kFloat);
  TensorLocation where = weights.locate(spec.name);
  checkpoint::StoredType stored = where.tensor->type;
  bool storedInComputeType =
      inPlaceType && ((stored == checkpoint::StoredType::F32 && *inPlaceType == at::kFloat) ||
                      (stored == checkpoint::StoredType::BF16 &&
                       *inPlaceType == at::kBFloat16));
  const char *base = storedInComputeType ? where.file->mapped(*where.tensor) : nullptr;
  if (base) {
    // The stored tensor used in place, in the plan's shape (a row-major
    // reshape of the stored one): the slice of one segment is a strided
    // view, that of several segments a copy of the slice alone.
    int64_t elementBytes = checkpoint::storedTypeBytes(stored);
    at::Tensor full =
        at::from_blob(const_cast<char *>(base), spec.shape, *inPlaceType);
    at::Tensor slice = full;
    if (spec.splitDim >= 0 && tpSize > 1) {
      std::vector<at::Tensor> pieces;
      int64_t start = 0;
      for (int64_t width : spec.segments) {
        int64_t chunk = width / tpSize;
        pieces.push_back(full.narrow(spec.splitDim, start + tpIndex * chunk, chunk));
        start += width;
      }
      slice = pieces.size() == 1 ? pieces[0] : at::cat(pieces, spec.splitDim);
    }
    // Map the slice's pages in now, so that loading ends with every byte
    // this rank reads resident and mapped, and the first step takes no page
    // faults: one read per page of each span (the page cache's pages, no
    // copy; only the pages the slice touches).
    constexpr int64_t kPage = 4096;
    volatile char sink = 0;
    for (const auto &[first, count] :
         checkpoint::sliceSpans(spec.shape, spec.splitDim, spec.segments, tpSize,
                                tpIndex)) {
      if (count <= 0)
        continue;
      const char *begin = base + first * elementBytes,
                 *end = begin + count * elementBytes;
      for (const char *page = begin; page < end; page += kPage)
        sink = sink + *page;
      sink = sink + end[-1];
    }
    where.file->noteRead(slice.numel() * elementBytes);
    return slice;
  }
  if (spec.splitDim >= 0)
    shape[size_t(spec.splitDim)] /= tpSize;
  at::Tensor out = at::empty(shape, at::kFloat);
  // The plan's shape is a row-major reshape of the stored one, so flat
  // indices agree and the spans apply to the stored tensor as they are.
  checkpoint::readSpans(where,
                        checkpoint::sliceSpans(spec.shape, spec.splitDim,
                                               spec.segments, tpSize, tpIndex),
                        out.data_ptr<float>());
  return out;
}

void checkStoredShape(const TensorLocation &where, const std::string &name,
                      const std::vector<int64_t> &shape, const std::string &shapeFrom) {
  if (where.tensor->shape != shape)
    badFile(escapeInvalidUtf8(where.file->path()),
            "tensor '" + name + "' has shape " + formatShape(where.tensor->shape) + " (" +
                checkpoint::storedTypeName(where.tensor->type) + "); " + shapeFrom +
                " gives it shape " + formatShape(shape));
}

at::Tensor readWholeTensor(const TensorLocation &where, const std::string &name,
                           const std::vector<int64_t> &shape, const std::string &shapeFrom) {
  checkStoredShape(where, name, shape, shapeFrom);
  at::Tensor tensor = at::empty(shape, at::kFloat);
  checkpoint::readSpans(where, {{0, tensor.numel()}}, tensor.data_ptr<float>());
  if (!at::isfinite(tensor).all().item<bool>())
    badFile(escapeInvalidUtf8(where.file->path()),
            "tensor '" + name + "' holds a NaN or infinite value");
  return tensor;
}

} // namespace ditc::runtime
