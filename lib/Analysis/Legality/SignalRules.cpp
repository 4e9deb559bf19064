//===- SignalRules.cpp - tensors sent between components ------------------===//
#include "Rules.h"

namespace ditc::rules {

/// shard-dim: a signal with shard_dim is split over the whole receiving (or
/// sending) instance, but only TP ranks split the weights it feeds. Under
/// TP2 x CFG2 or TP2 x SP2 each rank would get a quarter of the tensor where
/// its weights expect half, so any ulysses, ring, kv_gather or cfg above 1
/// at either end is refused.
void checkShardDim(const LegalityContext &ctx, DiagnosticSink &sink) {
  for (const Signal &signal : ctx.deployment.signals) {
    if (!signal.shardDim)
      continue;
    for (const std::string *end : {&signal.from, &signal.to}) {
      const Placement *placement = ctx.deployment.find(*end);
      if (!placement)
        continue;
      for (Axis axis : {Axis::Ulysses, Axis::Ring, Axis::KVGather, Axis::CFG}) {
        int64_t degree = placement->degrees[axis];
        if (degree < 2)
          continue;
        sink.report("shard-dim", Severity::Error,
                    "signal " + signal.from + " -> " + signal.to +
                        " splits dim " + std::to_string(*signal.shardDim) +
                        " over " + *end + "'s instance, whose " +
                        axisName(axis) + " " + std::to_string(degree) +
                        " ranks do not split the weights it feeds; only TP "
                        "ranks do",
                    *end);
        break;
      }
    }
  }
}

} // namespace ditc::rules
