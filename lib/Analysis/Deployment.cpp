//===- Deployment.cpp - degrees, backends, default rank lists -------------===//
#include "ditc/Analysis/Deployment.h"

namespace ditc {

const char *axisName(Axis axis) {
  switch (axis) {
  case Axis::DP: return "dp";
  case Axis::CFG: return "cfg";
  case Axis::PP: return "pp";
  case Axis::Ring: return "ring";
  case Axis::KVGather: return "kv_gather";
  case Axis::Ulysses: return "ulysses";
  case Axis::TP: return "tp";
  }
  return "?";
}

std::optional<Axis> axisFromName(const std::string &name) {
  for (Axis axis : kAllAxes)
    if (name == axisName(axis))
      return axis;
  return std::nullopt;
}

int64_t Degrees::worldSize() const {
  int64_t product = 1;
  for (int64_t size : sizes)
    product *= size;
  return product;
}

int64_t Degrees::instanceSize() const { return worldSize() / (*this)[Axis::DP]; }

int64_t Degrees::sequenceShards() const {
  return (*this)[Axis::Ulysses] * (*this)[Axis::Ring] * (*this)[Axis::KVGather];
}

std::string Degrees::describe(bool withDp) const {
  std::string out;
  for (Axis axis : kAllAxes) {
    if (axis == Axis::DP && !withDp)
      continue;
    out += std::string(out.empty() ? "" : " x ") + axisName(axis) + " " +
           std::to_string((*this)[axis]);
  }
  return out;
}

const Placement *Deployment::find(const std::string &component) const {
  for (const Placement &placement : placements)
    if (placement.component == component)
      return &placement;
  return nullptr;
}

Placement *Deployment::find(const std::string &component) {
  for (Placement &placement : placements)
    if (placement.component == component)
      return &placement;
  return nullptr;
}

const std::vector<AttentionBackend> &knownAttentionBackends() {
  // fa and sage_attn return the softmax LSE that the per-hop ring merge
  // needs; sdpa and xformers do not.
  static const std::vector<AttentionBackend> backends = {
      {"fa", true}, {"sage_attn", true}, {"sdpa", false}, {"xformers", false}};
  return backends;
}

const AttentionBackend *findAttentionBackend(const std::string &name) {
  for (const AttentionBackend &backend : knownAttentionBackends())
    if (name == backend.name)
      return &backend;
  return nullptr;
}

const std::vector<std::string> &knownComponents() {
  static const std::vector<std::string> components = {"transformer",
                                                      "text_encoder", "vae"};
  return components;
}

std::vector<std::vector<int64_t>> defaultInstances(const Degrees &degrees) {
  std::vector<std::vector<int64_t>> instances;
  int64_t size = degrees.instanceSize();
  for (int64_t replica = 0; replica < degrees[Axis::DP]; ++replica) {
    std::vector<int64_t> ranks;
    for (int64_t i = 0; i < size; ++i)
      ranks.push_back(replica * size + i);
    instances.push_back(std::move(ranks));
  }
  return instances;
}

std::vector<int64_t> defaultPipelinePartition(int64_t blocks, int64_t stages) {
  if (stages < 1 || blocks < stages)
    return {};
  std::vector<int64_t> partition(stages, blocks / stages);
  // The remainder goes to the stages before the last, walking towards the
  // first, so neither end (which also embeds or unpatchifies) gets more.
  int64_t remainder = blocks % stages;
  for (int64_t i = 2; i < remainder + 2; ++i)
    partition[stages - i] += 1;
  return partition;
}

} // namespace ditc
