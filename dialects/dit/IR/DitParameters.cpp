//===- DitParameters.cpp - the checkpoint parameters each op reads --------===//
//
// DitParameterOpInterface: parameter names (the op's `weight` plus the
// checkpoint's suffixes), global shapes, and for a TP-split op the
// dimension tensor parallelism splits and its segments. The plan lists
// these per op; dit-run loads each rank's slice from them.
//
//===----------------------------------------------------------------------===//
#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"

using namespace mlir;
using namespace mlir::dit;

static void add(SmallVectorImpl<ParameterSpec> &out, std::string name,
                SmallVector<int64_t> shape, int64_t splitDim = -1,
                SmallVector<int64_t> segments = {}, bool rank0Only = false) {
  out.push_back(ParameterSpec{std::move(name), std::move(shape), splitDim,
                              std::move(segments), rank0Only});
}

/// `tp` scales the local widths back to global: a column-parallel linear
/// holds out/tp rows of the weight, a row-parallel one in/tp columns.
void LinearOp::getParameters(int64_t tp,
                             SmallVectorImpl<ParameterSpec> &parameters) {
  std::string name = getWeight().str();
  int64_t in = lastDim(getInput()), out = lastDim(getResult());
  SmallVector<int64_t> segments = getTPSegments(*this);
  StringRef role = getTPRole(*this);
  if (role == "column") {
    add(parameters, name + ".weight", {out * tp, in}, 0, segments);
    if (getBias())
      add(parameters, name + ".bias", {out * tp}, 0, segments);
  } else if (role == "row") {
    add(parameters, name + ".weight", {out, in * tp}, 1, segments);
    // The bias is added once, after the all-reduce of the partial sums.
    if (getBias())
      add(parameters, name + ".bias", {out}, -1, {}, /*rank0Only=*/true);
  } else {
    add(parameters, name + ".weight", {out, in});
    if (getBias())
      add(parameters, name + ".bias", {out});
  }
}

/// An affine norm over a TP-split width holds its slice of the scale (and
/// shift); a grouped norm's parameters are one group wide.
static void normParameters(Operation *op, StringRef weight, bool hasBias,
                           int64_t tp, SmallVectorImpl<ParameterSpec> &out) {
  int64_t width = lastDim(op->getResult(0));
  auto group = op->getAttrOfType<IntegerAttr>("group_size");
  bool split = hasReduceStats(op);
  SmallVector<int64_t> shape = {
      group ? group.getInt() : (split ? width * tp : width)};
  int64_t splitDim = split && !group ? 0 : -1;
  add(out, weight.str() + ".weight", shape, splitDim);
  if (hasBias)
    add(out, weight.str() + ".bias", shape, splitDim);
}

void LayerNormOp::getParameters(int64_t tp,
                                SmallVectorImpl<ParameterSpec> &parameters) {
  if (auto weight = getWeight())
    normParameters(*this, *weight, /*hasBias=*/true, tp, parameters);
}

void RMSNormOp::getParameters(int64_t tp,
                              SmallVectorImpl<ParameterSpec> &parameters) {
  if (auto weight = getWeight())
    normParameters(*this, *weight, /*hasBias=*/false, tp, parameters);
}

void AdaLNModulationOp::getParameters(
    int64_t, SmallVectorImpl<ParameterSpec> &parameters) {
  auto r = cast<RankedTensorType>(getType());
  int64_t e = lastDim(getCondition());
  std::string name = getWeight().str();
  if (getTable()) {
    // As the checkpoint stores it: Wan [1, N, D], LTX-Video [N, D].
    if (getTableRank() == 2u)
      add(parameters, name, {r.getDimSize(1), r.getDimSize(2)});
    else
      add(parameters, name, {1, r.getDimSize(1), r.getDimSize(2)});
  } else {
    add(parameters, name + ".weight", {r.getDimSize(1) * r.getDimSize(2), e});
    add(parameters, name + ".bias", {r.getDimSize(1) * r.getDimSize(2)});
  }
}

void TimestepEmbeddingOp::getParameters(
    int64_t, SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t d = lastDim(getResult()), f = getFreqDim();
  std::string name = getWeight().str();
  add(parameters, name + ".linear_1.weight", {d, f});
  add(parameters, name + ".linear_1.bias", {d});
  add(parameters, name + ".linear_2.weight", {d, d});
  add(parameters, name + ".linear_2.bias", {d});
}

/// Learned per-head frequencies [3, heads, head_dim / 2]; under tp a rank
/// holds its heads' rows (the heads of its column-parallel q and k).
void RotaryEmbeddingOp::getParameters(
    int64_t tp, SmallVectorImpl<ParameterSpec> &parameters) {
  auto weight = getWeight();
  if (!weight)
    return;
  int64_t heads = getNumHeads();
  int64_t half = lastDim(getResult()) / heads / 2;
  bool split = false;
  if (auto shardings = (*this)->getAttrOfType<ArrayAttr>(kShardingAttrName))
    split = llvm::is_contained(
        cast<ShardingAttr>(shardings[0]).axesOf(2), MeshAxis::TP);
  if (split)
    add(parameters, weight->str(), {3, heads * tp, half}, 1);
  else
    add(parameters, weight->str(), {3, heads, half});
}

void AttentionPoolOp::getParameters(
    int64_t, SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t e = lastDim(getInput()), d = lastDim(getResult());
  std::string name = getWeight().str();
  add(parameters, name + ".to_kv.weight", {2 * e, e});
  add(parameters, name + ".to_kv.bias", {2 * e});
  add(parameters, name + ".to_q.weight", {e, e});
  add(parameters, name + ".to_q.bias", {e});
  add(parameters, name + ".to_out.weight", {d, e});
  add(parameters, name + ".to_out.bias", {d});
}

void PatchEmbedOp::getParameters(int64_t,
                                 SmallVectorImpl<ParameterSpec> &parameters) {
  ArrayRef<int64_t> patch = getPatch();
  int64_t volume = patch[0] * patch[1] * patch[2];
  auto latents = cast<RankedTensorType>(getLatents().getType());
  // Patch tokens [B, S, C * volume], or latents [B, C, (F,) H, W].
  int64_t channels = latents.getRank() == 3 ? latents.getDimSize(2) / volume
                                            : latents.getDimSize(1);
  int64_t d = lastDim(getResult()), f = channels * volume;
  std::string name = getWeight().str();
  add(parameters, name + ".weight", {d, f});
  // A convolution's kernel is stored unflattened; the op's weight is its
  // row-major reshape, columns in (C, pt, ph, pw) order.
  if (getKernel() == PatchKernel::Conv3d)
    parameters.back().checkpointShape = {d, channels, patch[0], patch[1], patch[2]};
  else if (getKernel() == PatchKernel::Conv2d)
    parameters.back().checkpointShape = {d, channels, patch[1], patch[2]};
  add(parameters, name + ".bias", {d});
  // SD3's position table: a persistent buffer, so a checkpoint tensor.
  if (auto table = getPosEmbed()) {
    int64_t m = getPosEmbedMaxSize().value_or(0);
    add(parameters, table->str(), {1, m * m, d});
  }
}

//===----------------------------------------------------------------------===//
// VAE decoder: every parameter whole (the decode is not split by tp), in the
// shapes diffusers stores.
//===----------------------------------------------------------------------===//

int64_t mlir::dit::vaeChannelsOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getDimSize(1);
}

/// `<name>.weight` [out, in, kernel...] and `<name>.bias` [out].
static void convParameters(SmallVectorImpl<ParameterSpec> &out, StringRef name,
                           int64_t outChannels, int64_t inChannels,
                           ArrayRef<int64_t> kernel) {
  SmallVector<int64_t> shape{outChannels, inChannels};
  shape.append(kernel.begin(), kernel.end());
  add(out, name.str() + ".weight", shape);
  add(out, name.str() + ".bias", {outChannels});
}

void ConvOp::getParameters(int64_t, SmallVectorImpl<ParameterSpec> &parameters) {
  convParameters(parameters, getWeight(), vaeChannelsOf(getResult()),
                 vaeChannelsOf(getInput()), getKernel());
}

void GroupNormOp::getParameters(int64_t, SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t c = vaeChannelsOf(getInput());
  add(parameters, getWeight().str() + ".weight", {c});
  add(parameters, getWeight().str() + ".bias", {c});
}

/// Wan's RMS_norm has a gamma and no bias; built for images its gamma is
/// [C, 1, 1], for videos [C, 1, 1, 1].
void ChannelRMSNormOp::getParameters(int64_t,
                                     SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t c = vaeChannelsOf(getInput());
  add(parameters, getWeight().str() + ".gamma",
      getImageGamma() ? SmallVector<int64_t>{c, 1, 1} : SmallVector<int64_t>{c, 1, 1, 1});
}

void TemporalUpsampleOp::getParameters(int64_t,
                                       SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t c = vaeChannelsOf(getInput());
  convParameters(parameters, getWeight(), 2 * c, c, {3, 1, 1});
}

void ImageAttentionOp::getParameters(int64_t,
                                     SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t c = vaeChannelsOf(getInput());
  std::string name = getWeight().str();
  if (getQkvLayout() == QKVLayout::Stacked) {
    convParameters(parameters, name + ".to_qkv", 3 * c, c, {1, 1});
    convParameters(parameters, name + ".proj", c, c, {1, 1});
    return;
  }
  for (const char *projection : {".to_q", ".to_k", ".to_v", ".to_out.0"}) {
    add(parameters, name + projection + ".weight", {c, c});
    add(parameters, name + projection + ".bias", {c});
  }
}

//===----------------------------------------------------------------------===//
// Text encoders
//===----------------------------------------------------------------------===//

/// The embedding stays whole under tensor parallelism.
void TokenEmbeddingOp::getParameters(int64_t,
                                     SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t width = lastDim(getResult());
  add(parameters, getWeight().str() + ".weight", {int64_t(getVocabSize()), width});
  if (auto positions = getPositions())
    add(parameters, positions->str() + ".weight", {int64_t(*getMaxPositions()), width});
}

/// [num_buckets, heads]: under tensor parallelism the result holds the
/// rank's heads, and the rank reads their columns.
void RelativePositionBiasOp::getParameters(int64_t tp,
                                           SmallVectorImpl<ParameterSpec> &parameters) {
  int64_t heads = cast<RankedTensorType>(getType()).getDimSize(1);
  add(parameters, getWeight().str() + ".weight", {int64_t(getNumBuckets()), heads * tp},
      tp > 1 ? 1 : -1);
}
