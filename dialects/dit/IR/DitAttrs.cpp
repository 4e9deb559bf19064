//===- DitAttrs.cpp - model, workload and mesh attribute verifiers -------===//
#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dit;

#include "dit/IR/DitEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dit/IR/DitAttrs.cpp.inc"

void DitDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dit/IR/DitAttrs.cpp.inc"
      >();
}

LogicalResult
ModelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                  StringRef family, StringRef className, int64_t doubleBlocks,
                  int64_t singleBlocks, int64_t numHeads, int64_t headDim,
                  int64_t hiddenSize, int64_t ffnSize, int64_t textHiddenSize,
                  int64_t textEmbedDim, int64_t inChannels, int64_t outChannels,
                  DenseI64ArrayAttr patch, int64_t vaeSpatial,
                  int64_t vaeTemporal, int64_t seqAlign, int64_t experts) {
  if (family.empty())
    return emitError() << "model family must not be empty";
  if (doubleBlocks < 0 || singleBlocks < 0 || doubleBlocks + singleBlocks < 1)
    return emitError() << "model needs at least one block, got "
                       << doubleBlocks << " double + " << singleBlocks
                       << " single";
  for (auto [what, value] :
       {std::pair<const char *, int64_t>{"num_heads", numHeads},
        {"head_dim", headDim},
        {"hidden_size", hiddenSize},
        {"ffn_size", ffnSize},
        {"text_hidden_size", textHiddenSize},
        {"text_embed_dim", textEmbedDim},
        {"in_channels", inChannels},
        {"out_channels", outChannels},
        {"vae_spatial", vaeSpatial},
        {"vae_temporal", vaeTemporal},
        {"seq_align", seqAlign},
        {"experts", experts}})
    if (value < 1)
      return emitError() << "model " << what << " must be positive, got "
                         << value;
  if (numHeads * headDim != hiddenSize)
    return emitError() << "num_heads " << numHeads << " x head_dim " << headDim
                       << " = " << numHeads * headDim
                       << " does not equal hidden_size " << hiddenSize;
  if (patch.size() != 3 ||
      llvm::any_of(patch.asArrayRef(), [](int64_t p) { return p < 1; }))
    return emitError() << "patch must be three positive sizes [t, h, w]";
  return success();
}

LogicalResult WorkloadAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t batch,
    int64_t height, int64_t width, int64_t frames, int64_t latentFrames,
    int64_t latentHeight, int64_t latentWidth, int64_t imageTokens,
    int64_t textTokens, int64_t branches, FloatAttr guidanceScale,
    int64_t steps) {
  for (auto [what, value] :
       {std::pair<const char *, int64_t>{"batch", batch},
        {"height", height},
        {"width", width},
        {"frames", frames},
        {"latent_frames", latentFrames},
        {"latent_height", latentHeight},
        {"latent_width", latentWidth},
        {"image_tokens", imageTokens},
        {"branches", branches},
        {"steps", steps}})
    if (value < 1)
      return emitError() << "workload " << what << " must be positive, got "
                         << value;
  if (textTokens < 0)
    return emitError() << "workload text_tokens must not be negative, got "
                       << textTokens;
  return success();
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t dp, int64_t cfg, int64_t pp,
                               int64_t ring, int64_t kvGather, int64_t ulysses,
                               int64_t tp) {
  for (auto [what, value] : {std::pair<const char *, int64_t>{"dp", dp},
                             {"cfg", cfg},
                             {"pp", pp},
                             {"ring", ring},
                             {"kv_gather", kvGather},
                             {"ulysses", ulysses},
                             {"tp", tp}})
    if (value < 1)
      return emitError() << "mesh axis '" << what
                         << "' must have a positive size, got " << value;
  // Beyond 2^20 ranks no real deployment exists, and group tables would
  // not fit in memory; the product is checked without overflow.
  constexpr int64_t kMaxRanks = int64_t(1) << 20;
  int64_t ranks = 1;
  for (int64_t value : {dp, cfg, pp, ring, kvGather, ulysses, tp}) {
    if (value > kMaxRanks / ranks)
      return emitError() << "mesh has more than " << kMaxRanks
                         << " ranks (dp " << dp << " x cfg " << cfg << " x pp "
                         << pp << " x ring " << ring << " x kv_gather "
                         << kvGather << " x ulysses " << ulysses << " x tp "
                         << tp << ")";
    ranks *= value;
  }
  return success();
}

LogicalResult PlacementAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef component,
    MeshAttr mesh, StringAttr backend, KVCacheAttr kvCache,
    DenseI64ArrayAttr ppPartition, ArrayAttr instances) {
  if (component.empty())
    return emitError() << "placement needs a component name";
  if (!mesh)
    return emitError() << "placement of '" << component << "' needs a mesh";
  if (instances) {
    for (Attribute instance : instances) {
      auto ranks = dyn_cast<DenseI64ArrayAttr>(instance);
      if (!ranks || ranks.empty())
        return emitError() << "instances of '" << component
                           << "' must be non-empty array<i64> rank lists";
      if (llvm::any_of(ranks.asArrayRef(), [](int64_t r) { return r < 0; }))
        return emitError() << "instances of '" << component
                           << "' hold a negative rank";
    }
  }
  return success();
}

LogicalResult DeploymentAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t numGpus,
    IntegerAttr nnodes, IntegerAttr gpusPerNode, ArrayAttr placements,
    ArrayAttr signals, ArrayAttr meshOrder) {
  if (meshOrder && (meshOrder.size() != 7 ||
                    !llvm::all_of(meshOrder, [](Attribute a) {
                      return isa<StringAttr>(a);
                    })))
    return emitError() << "mesh_order must name the seven mesh axes, got "
                       << meshOrder;
  if (numGpus < 1 || numGpus > (int64_t(1) << 20))
    return emitError() << "deployment num_gpus must be in [1, 1048576], got "
                       << numGpus;
  for (IntegerAttr count : {nnodes, gpusPerNode})
    if (count && count.getInt() < 1)
      return emitError() << "deployment node counts must be positive, got "
                         << count.getInt();
  if (llvm::any_of(placements,
                   [](Attribute a) { return !isa<PlacementAttr>(a); }))
    return emitError() << "deployment placements must be #dit.placement";
  if (signals && llvm::any_of(signals, [](Attribute a) {
        return !isa<SignalAttr>(a);
      }))
    return emitError() << "deployment signals must be #dit.signal";
  // One placement per component, and signals only between placed ones.
  llvm::StringSet<> components;
  for (Attribute a : placements)
    if (!components.insert(cast<PlacementAttr>(a).getComponent()).second)
      return emitError() << "deployment places component '"
                         << cast<PlacementAttr>(a).getComponent() << "' twice";
  if (signals)
    for (Attribute a : signals) {
      auto signal = cast<SignalAttr>(a);
      for (StringRef end : {signal.getFrom(), signal.getTo()})
        if (!components.contains(end))
          return emitError() << "signal names component '" << end
                             << "', which the deployment does not place";
      if (auto dim = signal.getShardDim(); dim && (dim.getInt() < 0 ||
                                                   dim.getInt() > 7))
        return emitError() << "signal shard_dim must be in [0, 7], got "
                           << dim.getInt();
    }
  return success();
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayAttr dims, int64_t replicatedText,
                                   ArrayAttr partial) {
  static const char *kAxes[] = {"dp",        "cfg",     "pp", "ring",
                                "kv_gather", "ulysses", "tp"};
  auto known = [](Attribute a) {
    auto name = dyn_cast<StringAttr>(a);
    return name && llvm::is_contained(kAxes, name.getValue());
  };
  for (Attribute dim : dims) {
    auto axes = dyn_cast<ArrayAttr>(dim);
    if (!axes || !llvm::all_of(axes, known))
      return emitError() << "sharding dims must be lists of mesh axis names "
                            "(dp, cfg, pp, ring, kv_gather, ulysses, tp), got "
                         << dim;
  }
  if (partial && !llvm::all_of(partial, known))
    return emitError() << "sharding partial axes must be mesh axis names, got "
                       << partial;
  if (replicatedText < 0)
    return emitError() << "replicated_text must not be negative";
  return success();
}

SmallVector<StringRef> ShardingAttr::axesOf(unsigned dim) const {
  SmallVector<StringRef> names;
  if (dim < getDims().size())
    for (Attribute a : cast<ArrayAttr>(getDims()[dim]))
      names.push_back(cast<StringAttr>(a).getValue());
  return names;
}
