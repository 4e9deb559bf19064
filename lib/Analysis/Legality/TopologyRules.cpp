//===- TopologyRules.cpp - world size, instances, rank lists, nodes -------===//
//
// Rules about where ranks go rather than what they compute: the world size,
// each replica's rank list, the process groups those lists imply, and which
// groups cross node boundaries.
//
//===----------------------------------------------------------------------===//
#include "Rules.h"

#include "ditc/Analysis/MeshLayout.h"

#include <map>
#include <set>
#include <unordered_map>

namespace ditc::rules {

/// world-size: num_gpus = dp x cfg x pp x tp x ulysses x ring x kv_gather
/// for the denoiser, plus the ranks that text_encoder and vae instances hold
/// of their own (a disaggregated placement); every rank runs something;
/// every listed rank exists; the node shape covers the world.
void checkWorldSize(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Deployment &d = ctx.deployment;
  const Degrees &degrees = ctx.transformer().degrees;
  std::string equation = "num_gpus " + std::to_string(d.numGpus) + " does not equal " +
                         degrees.describe() + " = " + std::to_string(degrees.worldSize());
  if (degrees.worldSize() > d.numGpus) {
    sink.report("world-size", Severity::Error, equation);
  } else if (degrees.worldSize() < d.numGpus) {
    // The rest of the world must run a component: a GPU that runs nothing
    // is a launch that waits on it, or a GPU paid for and idle. Without
    // components on ranks of their own, the equation says it all.
    int64_t count = 0;
    constexpr size_t kListed = 8;
    std::map<int64_t, std::set<int64_t>> components = componentRankReplicas(d);
    std::vector<int64_t> idle = idleRanks(d, components, kListed, count);
    if (count > 0 && components.empty())
      sink.report("world-size", Severity::Error, equation);
    else if (count > 0)
      sink.report("world-size", Severity::Error,
                  equation + ", and no text_encoder or vae instance runs on rank" +
                      (count == 1 ? " " : "s ") + rankList(idle) +
                      (count > int64_t(kListed)
                           ? " and " + std::to_string(count - int64_t(kListed)) + " more"
                           : std::string()) +
                      ": every GPU runs the transformer or a component a deployment "
                      "file places on ranks of its own");
  }
  for (const Placement &placement : d.placements)
    for (size_t i = 0; i < placement.instances.size(); ++i)
      for (int64_t rank : placement.instances[i])
        if (rank >= d.numGpus) {
          sink.report("world-size", Severity::Error,
                      placement.component + " instance " + std::to_string(i) +
                          " " + rankList(placement.instances[i]) +
                          " names rank " + std::to_string(rank) +
                          ", outside the " + std::to_string(d.numGpus) +
                          " GPUs (ranks 0.." + std::to_string(d.numGpus - 1) +
                          ")",
                      placement.component);
          break;
        }
  if (d.nnodes && d.gpusPerNode) {
    if (*d.nnodes * *d.gpusPerNode != d.numGpus)
      sink.report("world-size", Severity::Error,
                  "nnodes " + std::to_string(*d.nnodes) + " x gpus_per_node " +
                      std::to_string(*d.gpusPerNode) + " = " +
                      std::to_string(*d.nnodes * *d.gpusPerNode) +
                      " does not equal num_gpus " + std::to_string(d.numGpus));
  } else if (d.nnodes && d.numGpus % *d.nnodes != 0) {
    sink.report("world-size", Severity::Error,
                "nnodes " + std::to_string(*d.nnodes) +
                    " does not divide num_gpus " + std::to_string(d.numGpus));
  } else if (d.gpusPerNode && d.numGpus % *d.gpusPerNode != 0) {
    sink.report("world-size", Severity::Error,
                "gpus_per_node " + std::to_string(*d.gpusPerNode) +
                    " does not divide num_gpus " + std::to_string(d.numGpus));
  }
}

/// component-ranks: a rank the transformer does not use serves one
/// replica. It votes on that replica's plan and joins that replica's
/// groups only, so it cannot encode or decode for two.
void checkComponentRanks(const LegalityContext &ctx, DiagnosticSink &sink) {
  const Deployment &d = ctx.deployment;
  const Placement &transformer = ctx.transformer();
  for (const auto &[rank, replicas] : componentRankReplicas(d)) {
    if (replicas.size() < 2)
      continue;
    auto replica = [&](int64_t r) {
      return std::to_string(r) + (size_t(r) < transformer.instances.size()
                                      ? " " + rankList(transformer.instances[size_t(r)])
                                      : std::string());
    };
    sink.report("component-ranks", Severity::Error,
                "rank " + std::to_string(rank) +
                    ", which runs no transformer, serves transformer replicas " +
                    replica(*replicas.begin()) + " and " +
                    replica(*std::next(replicas.begin())) +
                    " (through its text_encoder and vae instances); a rank of its own "
                    "votes and exchanges with one replica, so give each replica its own "
                    "ranks");
    return;
  }
}

/// instance-size: a replica's rank count equals the product of its
/// component's non-dp degrees.
void checkInstanceSize(const LegalityContext &ctx, DiagnosticSink &sink) {
  for (const Placement &placement : ctx.deployment.placements) {
    // The vae's lists are decoding ranks, not a mesh: vae-ranks checks them.
    if (placement.component == "vae")
      continue;
    int64_t expected = placement.degrees.instanceSize();
    for (size_t i = 0; i < placement.instances.size(); ++i) {
      int64_t size = int64_t(placement.instances[i].size());
      if (size != expected)
        sink.report("instance-size", Severity::Error,
                    placement.component + " instance " + std::to_string(i) +
                        " " + rankList(placement.instances[i]) + " has " +
                        std::to_string(size) + " rank" +
                        (size == 1 ? "" : "s") + ", but " +
                        placement.degrees.describe(/*withDp=*/false) + " = " +
                        std::to_string(expected),
                    placement.component);
    }
  }
}

/// rank-order: a multi-rank replica lists its ranks in ascending order.
/// torch orders a process group by global rank, so a group listed out of
/// order would gather in a different order than its ranks split work by,
/// and scramble TP shards or swap CFG branches without any error.
void checkRankOrder(const LegalityContext &ctx, DiagnosticSink &sink) {
  for (const Placement &placement : ctx.deployment.placements)
    for (size_t i = 0; i < placement.instances.size(); ++i) {
      const std::vector<int64_t> &ranks = placement.instances[i];
      for (size_t k = 1; k < ranks.size(); ++k)
        if (ranks[k] <= ranks[k - 1]) {
          sink.report("rank-order", Severity::Error,
                      placement.component + " instance " + std::to_string(i) +
                          " " + rankList(ranks) +
                          " is not in ascending rank order (rank " +
                          std::to_string(ranks[k]) + " follows " +
                          std::to_string(ranks[k - 1]) +
                          "); process groups order ranks by global rank, so "
                          "shards or guidance branches would be swapped",
                      placement.component);
          break;
        }
    }
}


/// group-conflict: one rank may not be handed two different groups on one
/// axis of one component, as happens when two replicas share a rank.
void checkGroupConflict(const LegalityContext &ctx, DiagnosticSink &sink) {
  for (const Placement &placement : ctx.deployment.placements) {
    // Hashed, not ordered: the search calls this rule for every candidate,
    // and a million-rank deployment made an ordered map its costliest part.
    size_t listed = 0;
    for (const std::vector<int64_t> &ranks : placement.instances)
      listed += ranks.size();
    std::unordered_map<int64_t, size_t> firstInstance;
    firstInstance.reserve(listed);
    std::set<int64_t> reported;
    for (size_t i = 0; i < placement.instances.size(); ++i) {
      for (int64_t rank : placement.instances[i]) {
        auto [it, fresh] = firstInstance.emplace(rank, i);
        if (fresh || it->second == i || reported.count(rank))
          continue;
        reported.insert(rank);
        size_t j = it->second;
        // Name the first axis on which the two replicas hand this rank
        // different groups; identical lists differ in the replica itself.
        std::string clash = "its dp replica would be both " +
                            std::to_string(j) + " and " + std::to_string(i);
        for (Axis axis : kAllAxes) {
          if (axis == Axis::DP)
            continue;
          auto groupOf = [&](size_t instance) {
            for (auto &group :
                 instanceGroups(placement, placement.instances[instance], axis,
                                ctx.deployment.meshOrder))
              if (std::count(group.begin(), group.end(), rank))
                return group;
            return std::vector<int64_t>{};
          };
          std::vector<int64_t> a = groupOf(j), b = groupOf(i);
          if (a != b) {
            clash = std::string("its ") + axisName(axis) + " group would be both " +
                    rankList(a) + " and " + rankList(b);
            break;
          }
        }
        sink.report("group-conflict", Severity::Error,
                    "rank " + std::to_string(rank) + " of " +
                        placement.component + " is in instance " +
                        std::to_string(j) + " " +
                        rankList(placement.instances[j]) + " and instance " +
                        std::to_string(i) + " " +
                        rankList(placement.instances[i]) + "; " + clash,
                    placement.component);
      }
    }
  }
}

/// cross-node: TP and Ulysses groups should stay on one node (all-reduce
/// per block, all-to-all per attention); DP replicas on different hosts
/// need per-replica host addressing. Both are warnings.
void checkCrossNode(const LegalityContext &ctx, DiagnosticSink &sink) {
  std::optional<int64_t> perNode = ctx.deployment.ranksPerNode();
  if (!perNode || *perNode < 1)
    return;
  auto node = [&](int64_t rank) { return rank / *perNode; };
  for (const Placement &placement : ctx.deployment.placements) {
    for (Axis axis : {Axis::TP, Axis::Ulysses}) {
      if (placement.degrees[axis] < 2)
        continue;
      for (const std::vector<int64_t> &ranks : placement.instances) {
        bool warned = false;
        for (const std::vector<int64_t> &group :
             instanceGroups(placement, ranks, axis, ctx.deployment.meshOrder)) {
          std::set<int64_t> nodes;
          for (int64_t r : group)
            nodes.insert(node(r));
          if (nodes.size() == 1)
            continue;
          std::string nodeList;
          for (int64_t n : nodes)
            nodeList += (nodeList.empty() ? "" : ", ") + std::to_string(n);
          sink.report("cross-node", Severity::Warning,
                      std::string(axisName(axis)) + " group " +
                          rankList(group) + " of " + placement.component +
                          " spans nodes " + nodeList + " (" +
                          std::to_string(*perNode) + " GPUs per node); " +
                          (axis == Axis::TP
                               ? "TP all-reduces every block and is the worst "
                                 "axis to cross nodes"
                               : "Ulysses all-to-alls need full-bisection "
                                 "bandwidth; keep them on one node"),
                      placement.component);
          warned = true;
          break;
        }
        if (warned)
          break;
      }
    }
    if (placement.instances.size() > 1) {
      std::set<int64_t> nodes;
      for (const std::vector<int64_t> &ranks : placement.instances)
        nodes.insert(node(ranks.front()));
      if (nodes.size() > 1)
        sink.report("cross-node", Severity::Warning,
                    "dp replicas of " + placement.component + " span " +
                        std::to_string(nodes.size()) +
                        " nodes; replicas on different hosts need "
                        "per-replica host addressing for their ingress",
                    placement.component);
    }
  }
}

} // namespace ditc::rules
