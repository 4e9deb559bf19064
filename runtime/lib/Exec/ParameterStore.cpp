//===- ParameterStore.cpp - one program's parameters on one rank ----------===//
#include "ditc/Runtime/Exec/ParameterStore.h"
#include "ditc/Runtime/IO/Initializer.h"
#include "ditc/Runtime/IO/Weights.h"

namespace ditc::runtime {

ParameterStore::ParameterStore(const Manifest &manifest, int64_t rank,
                               const Program &program, at::ScalarType computeType,
                               const Device &rankDevice)
    : manifest(manifest), rank(rank), prog(program), computeType(computeType),
      rankDevice(rankDevice) {}

bool ParameterStore::materialize(int64_t seed) {
  if (released || loaded || drawnSeed == seed)
    return false;
  drawnSeed = seed;
  int64_t tpSize = manifest.axisSize("tp");
  int64_t tpIndex = manifest.ranks[rank].coords.at("tp");
  place([&](const ParamSpec &spec) {
    ParamSpec stream = spec;
    stream.name = parameterStreamName(prog.expert, spec.name);
    return drawParameter(seed, stream, tpSize, tpIndex);
  });
  return true;
}

void ParameterStore::load(const checkpoint::TransformerWeights &weights) {
  int64_t tpSize = manifest.axisSize("tp");
  int64_t tpIndex = manifest.ranks[rank].coords.at("tp");
  // On the CPU, tensors stored in the compute dtype are used in place, in
  // the mapped file.
  std::optional<at::ScalarType> inPlaceType;
  if (rankDevice.isHost())
    inPlaceType = computeType;
  place([&](const ParamSpec &spec) {
    return loadParameter(weights, spec, tpSize, tpIndex, inPlaceType);
  });
  loaded = true;
  released = false;
  source = &weights;
}

void ParameterStore::release(const checkpoint::TransformerWeights *weights) {
  parameterByName.clear();
  parameterByOp.clear();
  drawnSeed.reset();
  released = true;
  if (weights)
    source = weights;
}

void ParameterStore::restore(int64_t seed) {
  if (!released)
    return;
  released = false;
  if (source)
    load(*source);
  else
    materialize(seed);
}

void ParameterStore::place(
    const std::function<at::Tensor(const ParamSpec &)> &make) {
  parameterByName.clear();
  parameterByOp.clear();
  auto visit = [&](const Function &fn) {
    for (const Op &op : fn.ops) {
      std::vector<at::Tensor> tensors;
      for (const ParamSpec &spec : op.params) {
        auto it = parameterByName.find(spec.name);
        if (it == parameterByName.end()) {
          at::Tensor t =
              make(spec).to(at::TensorOptions(computeType).device(rankDevice.torchDevice()));
          it = parameterByName.emplace(spec.name, t).first;
        }
        tensors.push_back(it->second);
      }
      if (!tensors.empty())
        parameterByOp[&op] = std::move(tensors);
    }
  };
  visit(prog.step);
  for (const auto &fn : prog.functions)
    visit(fn.second);
}

int64_t ParameterStore::bytes() const {
  int64_t bytes = 0;
  for (const auto &p : parameterByName)
    bytes += p.second.numel() * int64_t(p.second.element_size());
  return bytes;
}

const std::vector<at::Tensor> &ParameterStore::of(const Op &op) const {
  static const std::vector<at::Tensor> none;
  auto it = parameterByOp.find(&op);
  return it == parameterByOp.end() ? none : it->second;
}

} // namespace ditc::runtime
