//===- Deployment.cpp - degrees, backends, default rank lists -------------===//
#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Strings.h"

#include <algorithm>
#include <sstream>

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

std::string rankList(const std::vector<int64_t> &ranks) { return bracketedList(ranks); }

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

std::optional<int64_t> Deployment::ranksPerNode() const {
  if (gpusPerNode)
    return gpusPerNode;
  if (nnodes && *nnodes > 0 && numGpus % *nnodes == 0)
    return numGpus / *nnodes;
  return std::nullopt;
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

std::vector<std::vector<int64_t>> vaeDecodeGroups(const Deployment &deployment) {
  const Placement *transformer = deployment.find("transformer");
  const Placement *vae = deployment.find("vae");
  if (vae && vae->explicitInstances)
    return vae->instances;
  int64_t size = vae ? vae->vaeParallelSize : 1;
  std::vector<std::vector<int64_t>> groups;
  if (!transformer)
    return groups;
  for (std::vector<int64_t> ranks : transformer->instances) {
    // The lowest rank leads the replica and holds its gathered latents.
    std::sort(ranks.begin(), ranks.end());
    ranks.resize(std::min<size_t>(ranks.size(), size_t(std::max<int64_t>(size, 1))));
    groups.push_back(std::move(ranks));
  }
  return groups;
}

std::vector<std::vector<int64_t>> textEncoderGroups(const Deployment &deployment) {
  const Placement *transformer = deployment.find("transformer");
  const Placement *encoder = deployment.find("text_encoder");
  std::vector<std::vector<int64_t>> groups;
  if (!encoder || !transformer)
    return groups;
  size_t size = size_t(std::max<int64_t>(encoder->degrees[Axis::TP], 1));
  TransformerRanks placed(deployment);
  for (size_t replica = 0; replica < transformer->instances.size(); ++replica) {
    std::vector<int64_t> ranks = transformer->instances[replica];
    if (encoder->explicitInstances) {
      // The first listed instance whose first rank is in this replica
      // (text-encoder-ranks holds each instance inside one replica), else
      // the instance of the replica's index when it has ranks of its own.
      bool found = false;
      for (const std::vector<int64_t> &instance : encoder->instances)
        if (!instance.empty() &&
            std::count(ranks.begin(), ranks.end(), instance.front())) {
          groups.push_back(instance);
          found = true;
          break;
        }
      if (!found && replica < encoder->instances.size() &&
          !encoder->instances[replica].empty() &&
          placed.onRanksOfItsOwn(encoder->instances[replica]))
        groups.push_back(encoder->instances[replica]);
      continue;
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.resize(std::min(ranks.size(), size));
    groups.push_back(std::move(ranks));
  }
  return groups;
}

TransformerRanks::TransformerRanks(const Deployment &deployment) {
  if (const Placement *transformer = deployment.find("transformer"))
    for (size_t r = 0; r < transformer->instances.size(); ++r)
      for (int64_t rank : transformer->instances[r])
        replicas.emplace(rank, r); // the first replica listing it
}

std::optional<size_t> TransformerRanks::replicaOf(int64_t rank) const {
  auto it = replicas.find(rank);
  if (it == replicas.end())
    return std::nullopt;
  return it->second;
}

bool TransformerRanks::onRanksOfItsOwn(const std::vector<int64_t> &ranks) const {
  return std::none_of(ranks.begin(), ranks.end(),
                      [&](int64_t rank) { return replicas.count(rank) > 0; });
}

std::map<int64_t, std::set<int64_t>> componentRankReplicas(const Deployment &deployment) {
  TransformerRanks transformer(deployment);
  std::map<int64_t, std::set<int64_t>> out;
  for (const auto &groups : {textEncoderGroups(deployment), vaeDecodeGroups(deployment)})
    for (size_t replica = 0; replica < groups.size(); ++replica)
      for (int64_t rank : groups[replica])
        if (rank >= 0 && rank < deployment.numGpus && !transformer.replicaOf(rank))
          out[rank].insert(int64_t(replica));
  return out;
}

std::vector<int64_t> idleRanks(const Deployment &deployment,
                               const std::map<int64_t, std::set<int64_t>> &components,
                               size_t limit, int64_t &count) {
  TransformerRanks transformer(deployment);
  std::vector<int64_t> idle;
  count = 0;
  for (int64_t rank = 0; rank < deployment.numGpus; ++rank)
    if (!transformer.replicaOf(rank) && !components.count(rank) && count++ < int64_t(limit))
      idle.push_back(rank);
  return idle;
}

std::vector<int64_t> vaeRowBands(int64_t latentRows, int64_t groupSize,
                                 const std::vector<int64_t> &split) {
  if (!split.empty())
    return split;
  std::vector<int64_t> bands;
  for (int64_t i = 0; i < groupSize; ++i)
    bands.push_back(latentRows / groupSize + (i < latentRows % groupSize ? 1 : 0));
  return bands;
}

std::vector<std::vector<int64_t>>
defaultInstances(const Degrees &degrees, const std::vector<Axis> &order) {
  MeshLayout layout(degrees, order.empty() ? MeshLayout::defaultOrder() : order);
  std::vector<std::vector<int64_t>> instances(degrees[Axis::DP]);
  for (int64_t rank = 0; rank < layout.size(); ++rank)
    instances[layout.coordinate(rank, Axis::DP)].push_back(rank);
  return instances;
}

std::vector<Axis> parseMeshOrder(const std::string &where,
                                 const std::string &text) {
  std::vector<Axis> order;
  std::string item;
  std::stringstream stream(text);
  std::string allowed = "a comma-separated permutation of dp, cfg, pp, ring, "
                        "kv_gather, ulysses, tp";
  while (std::getline(stream, item, ',')) {
    std::optional<Axis> axis = axisFromName(item);
    if (!axis)
      throw BadInput(where + ": mesh order names unknown axis '" + item +
                     "'; expected " + allowed);
    if (std::find(order.begin(), order.end(), *axis) != order.end())
      throw BadInput(where + ": mesh order names axis '" + item +
                     "' twice; expected " + allowed);
    order.push_back(*axis);
  }
  if (order.size() != kAllAxes.size())
    throw BadInput(where + ": mesh order '" + text + "' names " +
                   std::to_string(order.size()) + " axes; expected " + allowed);
  return order;
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
