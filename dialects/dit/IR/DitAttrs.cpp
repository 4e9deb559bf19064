//===- DitAttrs.cpp - model, workload and mesh attribute verifiers -------===//
#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dit;

#include "dit/IR/DitEnums.cpp.inc"

namespace {
/// The first axis that appears twice in `axes`, if any.
std::optional<MeshAxis> repeatedAxis(ArrayRef<MeshAxis> axes) {
  unsigned seen = 0;
  for (MeshAxis axis : axes) {
    unsigned bit = 1u << static_cast<unsigned>(axis);
    if (seen & bit)
      return axis;
    seen |= bit;
  }
  return std::nullopt;
}

bool isPermutationOfAllAxes(ArrayRef<MeshAxis> axes) {
  return axes.size() == getMaxEnumValForMeshAxis() + 1 && !repeatedAxis(axes);
}

/// `[dp, cfg]` for messages.
std::string axisListText(ArrayRef<MeshAxis> axes) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(axes, os,
                        [&](MeshAxis axis) { os << stringifyMeshAxis(axis); });
  os.flush();
  return text + "]";
}
} // namespace


//===----------------------------------------------------------------------===//
// Custom parameter syntax
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<MeshAxis>> mlir::dit::parseMeshAxisList(AsmParser &parser) {
  SmallVector<MeshAxis> axes;
  auto parseOne = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (failed(parser.parseKeyword(&keyword)))
      return failure();
    std::optional<MeshAxis> axis = symbolizeMeshAxis(keyword);
    if (!axis)
      return parser.emitError(loc)
             << "expected a mesh axis (dp, cfg, pp, ring, kv_gather, "
                "ulysses, tp), got '"
             << keyword << "'";
    axes.push_back(*axis);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne))
    return failure();
  return axes;
}

void mlir::dit::printMeshAxisList(AsmPrinter &printer, ArrayRef<MeshAxis> axes) {
  printer << '[';
  llvm::interleaveComma(axes, printer,
                        [&](MeshAxis axis) { printer << stringifyMeshAxis(axis); });
  printer << ']';
}

FailureOr<SmallVector<DenseI64ArrayAttr>>
mlir::dit::parseRankLists(AsmParser &parser) {
  SmallVector<DenseI64ArrayAttr> lists;
  auto parseList = [&]() -> ParseResult {
    SmallVector<int64_t> ranks;
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
          return parser.parseInteger(ranks.emplace_back());
        }))
      return failure();
    lists.push_back(DenseI64ArrayAttr::get(parser.getContext(), ranks));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseList))
    return failure();
  return lists;
}

void mlir::dit::printRankLists(AsmPrinter &printer,
                               ArrayRef<DenseI64ArrayAttr> lists) {
  printer << '[';
  llvm::interleaveComma(lists, printer, [&](DenseI64ArrayAttr list) {
    printer << '[';
    llvm::interleaveComma(list.asArrayRef(), printer);
    printer << ']';
  });
  printer << ']';
}

/// Sharding dims, `[[], [ring, ulysses], [tp]]`: one axis list per dimension.
FailureOr<SmallVector<AxesAttr>> mlir::dit::parseDimAxes(AsmParser &parser) {
  SmallVector<AxesAttr> dims;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        FailureOr<SmallVector<MeshAxis>> axes = parseMeshAxisList(parser);
        if (failed(axes))
          return failure();
        dims.push_back(AxesAttr::get(parser.getContext(), *axes));
        return success();
      }))
    return failure();
  return dims;
}

void mlir::dit::printDimAxes(AsmPrinter &printer, ArrayRef<AxesAttr> dims) {
  printer << '[';
  llvm::interleaveComma(dims, printer, [&](AxesAttr axes) {
    printMeshAxisList(printer, axes.getAxes());
  });
  printer << ']';
}

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
  if (!llvm::is_contained(DitDialect::modelFamilies(), family)) {
    InFlightDiagnostic diag = emitError() << "model family '" << family
                                          << "' is not one of ";
    llvm::interleaveComma(DitDialect::modelFamilies(), diag);
    return diag;
  }
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
  // The scale multiplies every step's guidance: NaN or inf poisons the
  // latents; a negative scale is a real (if rare) setting.
  if (!guidanceScale || !std::isfinite(guidanceScale.getValueAsDouble()))
    return emitError() << "workload guidance_scale must be a finite number, "
                          "got "
                       << guidanceScale;
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
    DenseI64ArrayAttr ppPartition, ArrayAttr instances,
    IntegerAttr vaeParallelSize, DenseI64ArrayAttr rowSplit, BoolAttr offload) {
  if (component.empty())
    return emitError() << "placement needs a component name";
  if (offload && component != "text_encoder" && component != "transformer")
    return emitError() << "offload frees the text encoders' weights once the prompts "
                          "are encoded, or keeps a two-expert transformer's running "
                          "expert only; '"
                       << component << "' has none to free";
  if ((vaeParallelSize || rowSplit) && component != "vae")
    return emitError() << "vae_parallel_size and row_split place the vae; '"
                       << component << "' is split by its mesh";
  if (vaeParallelSize && vaeParallelSize.getInt() < 1)
    return emitError() << "vae_parallel_size must be at least 1, got "
                       << vaeParallelSize.getInt();
  if (rowSplit && llvm::any_of(rowSplit.asArrayRef(), [](int64_t r) { return r < 0; }))
    return emitError() << "row_split of the vae holds a negative row count";
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
    ArrayAttr signals, ArrayRef<MeshAxis> meshOrder) {
  if (!meshOrder.empty() && !isPermutationOfAllAxes(meshOrder))
    return emitError() << "mesh_order must name each of the seven mesh axes "
                          "(dp, cfg, pp, ring, kv_gather, ulysses, tp) once, got "
                       << axisListText(meshOrder);
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

LogicalResult AxesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<MeshAxis> axes) {
  if (std::optional<MeshAxis> twice = repeatedAxis(axes))
    return emitError() << "axis '" << stringifyMeshAxis(*twice)
                       << "' appears twice in " << axisListText(axes);
  return success();
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<AxesAttr> dims,
                                   int64_t replicatedText,
                                   ArrayRef<MeshAxis> partial) {
  // An axis splits at most one dimension, and a value cannot be both split
  // and pending a reduction over the same axis.
  SmallVector<MeshAxis> all;
  for (AxesAttr dim : dims)
    llvm::append_range(all, dim.getAxes());
  llvm::append_range(all, partial);
  if (std::optional<MeshAxis> twice = repeatedAxis(all))
    return emitError() << "sharding uses axis '" << stringifyMeshAxis(*twice)
                       << "' twice (across dims and partial)";
  if (replicatedText < 0)
    return emitError() << "replicated_text must not be negative, got "
                       << replicatedText;
  return success();
}

ArrayRef<MeshAxis> ShardingAttr::axesOf(unsigned dim) const {
  if (dim < getDims().size())
    return getDims()[dim].getAxes();
  return {};
}

LogicalResult
AttentionPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<MeshAxis> heads, AttentionRows rows) {
  // Only tp and ulysses split heads; the other sequence axes split rows,
  // which `rows` names.
  for (MeshAxis axis : heads)
    if (axis != MeshAxis::TP && axis != MeshAxis::Ulysses)
      return emitError() << "attention heads split over tp or ulysses only, "
                            "got "
                         << axisListText(heads);
  if (std::optional<MeshAxis> twice = repeatedAxis(heads))
    return emitError() << "attention heads list axis '"
                       << stringifyMeshAxis(*twice) << "' twice";
  return success();
}

LogicalResult RoleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t stage, int64_t cfg) {
  if (stage < 0 || cfg < 0)
    return emitError() << "role stage and cfg must not be negative, got stage "
                       << stage << ", cfg " << cfg;
  return success();
}

ArrayRef<DenseI64ArrayAttr> GroupsAttr::of(MeshAxis axis) const {
  switch (axis) {
  case MeshAxis::DP:
    return getDp();
  case MeshAxis::CFG:
    return getCfg();
  case MeshAxis::PP:
    return getPp();
  case MeshAxis::Ring:
    return getRing();
  case MeshAxis::KVGather:
    return getKvGather();
  case MeshAxis::Ulysses:
    return getUlysses();
  case MeshAxis::TP:
    return getTp();
  }
  llvm_unreachable("unknown mesh axis");
}

LogicalResult GroupsAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    ArrayRef<DenseI64ArrayAttr> dp, ArrayRef<DenseI64ArrayAttr> cfg,
    ArrayRef<DenseI64ArrayAttr> pp, ArrayRef<DenseI64ArrayAttr> ring,
    ArrayRef<DenseI64ArrayAttr> kvGather, ArrayRef<DenseI64ArrayAttr> ulysses,
    ArrayRef<DenseI64ArrayAttr> tp) {
  const MeshAxis axes[] = {MeshAxis::DP,       MeshAxis::CFG,
                           MeshAxis::PP,       MeshAxis::Ring,
                           MeshAxis::KVGather, MeshAxis::Ulysses,
                           MeshAxis::TP};
  const ArrayRef<DenseI64ArrayAttr> perAxis[] = {dp,       cfg,     pp, ring,
                                                 kvGather, ulysses, tp};
  // The ranks dp's groups cover; every other axis must cover the same ones,
  // each rank exactly once.
  llvm::SmallDenseSet<int64_t> covered;
  for (auto [axis, lists] : llvm::zip_equal(axes, perAxis)) {
    StringRef name = stringifyMeshAxis(axis);
    if (lists.empty())
      return emitError() << "groups of axis '" << name
                         << "' must list at least one group";
    llvm::SmallDenseSet<int64_t> seen;
    size_t size = lists.front().size();
    DenseI64ArrayAttr previous;
    for (DenseI64ArrayAttr list : lists) {
      // One order for the groups of an axis (by their first rank), so that
      // every rank creates its process groups in the same sequence and one
      // set of groups has one spelling. A group's own order is left alone:
      // it is the order of the axis' coordinates.
      if (previous && !previous.empty() && !list.empty() &&
          previous[0] >= list[0])
        return emitError() << "groups of axis '" << name
                           << "' must be listed in ascending order of their "
                              "first rank, got "
                           << previous << " before " << list;
      previous = list;
      if (list.size() != size || size == 0)
        return emitError() << "groups of axis '" << name
                           << "' must all have the same positive size, got "
                           << list << " beside a group of " << size;
      for (int64_t rank : list.asArrayRef()) {
        if (rank < 0)
          return emitError() << "groups of axis '" << name
                             << "' hold a negative rank " << rank;
        if (!seen.insert(rank).second)
          return emitError() << "rank " << rank << " is in more than one '"
                             << name << "' group";
      }
    }
    if (axis == MeshAxis::DP) {
      covered = std::move(seen);
      continue;
    }
    for (int64_t rank : seen)
      if (!covered.contains(rank))
        return emitError() << "rank " << rank << " is in a '" << name
                           << "' group but in no 'dp' group";
    if (seen.size() != covered.size())
      return emitError() << "'" << name << "' groups cover " << seen.size()
                         << " ranks but 'dp' groups cover " << covered.size();
  }
  return success();
}
