//===- DitOps.cpp - dit op verifiers and result type inference ------------===//
//
// ODS checks attribute ranges and type equalities (DitOps.td); the verifiers
// here check that the op's shapes agree with its attributes, and the ops
// whose result types follow from their operands infer them. The messages
// name the numbers involved so a wrong importer or pass is easy to find from
// the diagnostic alone.
//
//===----------------------------------------------------------------------===//
#include "dit/IR/DitOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dit;

static RankedTensorType tensorOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Prints a shape as 1x32760x5120 for diagnostics.
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleave(shape, os, "x");
  return out;
}

/// Checks that `value` is a [B, S, D] token tensor.
static LogicalResult verifyTokens(Operation *op, Value value, StringRef what) {
  if (tensorOf(value).getRank() != 3)
    return op->emitOpError() << "expects " << what
                             << " to be [batch, tokens, features], got rank "
                             << tensorOf(value).getRank();
  return success();
}

/// Checks that the real attribute `name` is finite and positive. NaN
/// compares false with everything, so a bare `value <= 0` test lets it
/// through; an infinite eps, theta or scale turns every output into NaN or
/// zero. The message names the value and what is allowed.
static LogicalResult verifyFinitePositive(Operation *op, StringRef name,
                                          double value) {
  if (std::isfinite(value) && value > 0.0)
    return success();
  return op->emitOpError() << name << " must be a finite positive number, got "
                           << value;
}

/// The ranked tensor type of operand `index` during type inference, which
/// may run on operands no verifier has seen; null when there is none.
static RankedTensorType inferOperand(ValueRange operands, size_t index) {
  if (index >= operands.size())
    return {};
  return dyn_cast<RankedTensorType>(operands[index].getType());
}

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

LogicalResult mlir::dit::detail::verifyBatchParallel(Operation *op) {
  std::optional<int64_t> batch;
  auto check = [&](Type type, StringRef what, unsigned index) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || tensor.getRank() < 1)
      return op->emitOpError()
             << "is batch-parallel, so its " << what << " #" << index
             << " must be a ranked tensor with a batch dimension, got " << type;
    if (!batch)
      batch = tensor.getDimSize(0);
    if (tensor.getDimSize(0) != *batch)
      return op->emitOpError()
             << "is batch-parallel, but its " << what << " #" << index
             << " has batch " << tensor.getDimSize(0) << " where the first "
             << "operand has " << *batch;
    return success();
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes())) {
    // An attention's position bias may be one row every prompt shares: T5
    // computes it once when no padding mask makes it per prompt
    // (AttentionOp::verify checks its shape).
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (isa<AttentionOp>(op) && i == 3 && tensor && tensor.getRank() == 4 &&
        tensor.getDimSize(0) == 1)
      continue;
    if (failed(check(type, "operand", i)))
      return failure();
  }
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", i)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

LogicalResult TimestepEmbeddingOp::verify() {
  auto in = tensorOf(getTimestep());
  auto out = tensorOf(getResult());
  if (in.getRank() != 1)
    return emitOpError() << "expects timesteps of shape [batch], got rank "
                         << in.getRank();
  if (out.getRank() != 2 || out.getDimSize(0) != in.getDimSize(0))
    return emitOpError() << "expects result [" << in.getDimSize(0)
                         << ", width], got " << shapeString(out.getShape());
  if (getFreqDim() % 2 != 0)
    return emitOpError() << "freq_dim must be a positive even number, got "
                         << getFreqDim();
  double scale = getScale() ? getScale()->convertToDouble() : 1.0;
  if (!(scale > 0.0 && scale <= 1e6))
    return emitOpError() << "scale must be in (0, 1e6], got " << scale;
  return success();
}

/// SD3's cropped position table: the three attributes come together, the
/// grid is one frame that fits the table, and it covers the op's tokens.
static LogicalResult verifyPositionTable(PatchEmbedOp op) {
  bool table = bool(op.getPosEmbed()), size = bool(op.getPosEmbedMaxSize()),
       grid = bool(op.getGrid());
  int64_t shards = op.getSequenceShards().value_or(1);
  if (!table && !size && !grid) {
    if (shards != 1)
      return op.emitOpError()
             << "sequence_shards only applies with a pos_embed table";
    return success();
  }
  if (!table || !size || !grid)
    return op.emitOpError() << "pos_embed, pos_embed_max_size and grid come "
                               "together; got "
                            << (table ? "" : "no ") << "pos_embed, "
                            << (size ? "" : "no ") << "pos_embed_max_size, "
                            << (grid ? "" : "no ") << "grid";
  ArrayRef<int64_t> g = *op.getGrid();
  int64_t m = *op.getPosEmbedMaxSize();
  if (g[0] != 1)
    return op.emitOpError() << "a pos_embed table covers one frame, but the "
                               "grid has "
                            << g[0];
  if (g[1] > m || g[2] > m)
    return op.emitOpError() << "the " << g[1] << "x" << g[2]
                            << " token grid does not fit pos_embed_max_size "
                            << m << " (diffusers refuses it)";
  int64_t tokens = tensorOf(op.getResult()).getDimSize(1);
  if ((g[1] * g[2]) % shards != 0 || g[1] * g[2] / shards != tokens)
    return op.emitOpError() << "grid " << g[1] << "x" << g[2] << " in "
                            << shards << " shard(s) does not give the "
                            << tokens << " tokens of the result";
  return success();
}

/// A pooling's optional text mask: [B, L] for an input [B, L, E].
static LogicalResult verifyTokenMask(Operation *op, RankedTensorType in, Value maskValue) {
  if (!maskValue)
    return success();
  auto mask = tensorOf(maskValue);
  if (mask.getRank() != 2 || mask.getDimSize(0) != in.getDimSize(0) ||
      mask.getDimSize(1) != in.getDimSize(1))
    return op->emitOpError() << "mask " << shapeString(mask.getShape()) << " is not ["
                             << in.getDimSize(0) << ", " << in.getDimSize(1)
                             << "]: one entry per token";
  return success();
}

LogicalResult TokenMeanOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "input")))
    return failure();
  auto in = tensorOf(getInput());
  auto out = tensorOf(getResult());
  if (failed(verifyTokenMask(*this, in, getMask())))
    return failure();
  if (out.getRank() != 2 || out.getDimSize(0) != in.getDimSize(0) ||
      out.getDimSize(1) != in.getDimSize(2))
    return emitOpError() << "expects result [" << in.getDimSize(0) << ", "
                         << in.getDimSize(2) << "], got "
                         << shapeString(out.getShape());
  if (in.getDimSize(1) < 1)
    return emitOpError() << "needs at least one token";
  return success();
}

LogicalResult AttentionPoolOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "input")))
    return failure();
  auto in = tensorOf(getInput());
  auto out = tensorOf(getResult());
  if (out.getRank() != 2 || out.getDimSize(0) != in.getDimSize(0))
    return emitOpError() << "expects result [" << in.getDimSize(0)
                         << ", width], got " << shapeString(out.getShape());
  if (in.getDimSize(2) % getNumHeads() != 0)
    return emitOpError() << "width " << in.getDimSize(2)
                         << " is not divisible by " << getNumHeads() << " heads";
  if (getWeight().empty())
    return emitOpError() << "needs a parameter prefix in 'weight'";
  return verifyTokenMask(*this, in, getMask());
}

LogicalResult PatchEmbedOp::verify() {
  auto in = tensorOf(getLatents());
  auto out = tensorOf(getResult());
  ArrayRef<int64_t> patch = getPatch();
  if (out.getRank() == 3 && failed(verifyPositionTable(*this)))
    return failure();
  if (getKernel() == PatchKernel::Conv2d && patch[0] != 1)
    return emitOpError() << "has a conv2d kernel but a temporal patch of "
                         << patch[0] << "; a 2-d convolution patches one frame";
  if (in.getRank() == 3) {
    // Already patchified latents: a projection of each token, whose
    // features are C values per patch position.
    int64_t volume = patch[0] * patch[1] * patch[2];
    if (in.getDimSize(2) % volume)
      return emitOpError() << "expects patch tokens of C * " << volume
                           << " features for patch " << patch[0] << "x"
                           << patch[1] << "x" << patch[2] << ", got "
                           << in.getDimSize(2);
    if (out.getRank() != 3 || out.getDimSize(0) != in.getDimSize(0) ||
        out.getDimSize(1) != in.getDimSize(1))
      return emitOpError() << "expects result [" << in.getDimSize(0) << ", "
                           << in.getDimSize(1) << ", width] for patch tokens "
                           << shapeString(in.getShape()) << ", got "
                           << shapeString(out.getShape());
    return success();
  }
  if (in.getRank() != 4 && in.getRank() != 5)
    return emitOpError()
           << "expects latents [B, C, H, W], [B, C, F, H, W] or patch tokens "
              "[B, S, F], got rank "
           << in.getRank();
  bool video = in.getRank() == 5;
  int64_t frames = video ? in.getDimSize(2) : 1;
  int64_t height = in.getDimSize(video ? 3 : 2);
  int64_t width = in.getDimSize(video ? 4 : 3);
  if (frames % patch[0] || height % patch[1] || width % patch[2])
    return emitOpError() << "latent grid " << frames << "x" << height << "x"
                         << width << " is not divisible by patch " << patch[0]
                         << "x" << patch[1] << "x" << patch[2];
  int64_t tokens =
      (frames / patch[0]) * (height / patch[1]) * (width / patch[2]);
  if (out.getRank() != 3 || out.getDimSize(0) != in.getDimSize(0) ||
      out.getDimSize(1) != tokens)
    return emitOpError() << "expects result [" << in.getDimSize(0) << ", "
                         << tokens << ", width] for latents "
                         << shapeString(in.getShape()) << ", got "
                         << shapeString(out.getShape());
  return success();
}

LogicalResult RotaryEmbeddingOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "input")))
    return failure();
  auto type = tensorOf(getInput());
  int64_t width = type.getDimSize(2);
  if (width % getNumHeads() != 0)
    return emitOpError() << "width " << width << " is not divisible by "
                         << getNumHeads() << " heads";
  int64_t headDim = width / getNumHeads();
  if (failed(verifyFinitePositive(*this, "theta", getTheta().convertToDouble())))
    return failure();
  for (std::optional<ArrayRef<double>> reals : {getGridOffset(), getGridStep()})
    if (reals && llvm::any_of(*reals, [](double v) { return !std::isfinite(v); }))
      return emitOpError() << "grid_offset and grid_step must be finite";
  if (getWeight() && (getAxesDims()[0] != headDim || headDim % 2))
    return emitOpError() << "learned frequencies (weight) need axes_dims = ["
                         << headDim << ", 0, 0] and an even head_dim";
  int64_t axesSum = 0;
  for (int64_t d : getAxesDims())
    axesSum += d;
  if (!isLtxStyle()) {
    if (axesSum != headDim)
      return emitOpError() << "axes_dims sum to " << axesSum
                           << " but head_dim is " << headDim;
    if (getCoordinateScale() || getHeadShards())
      return emitOpError() << "coordinate_scale and head_shards belong to "
                              "the ltx style; this rope has style axes";
  } else {
    // LTX-Video: one table over the whole width, W / 6 frequencies per
    // axis after W mod 6 unrotated channels.
    int64_t full = width * getHeadShardCount();
    ArrayRef<int64_t> dims = getAxesDims();
    if (full % 2 != 0 || dims[0] != 2 * (full / 6) || dims[1] != dims[0] ||
        dims[2] != dims[0])
      return emitOpError() << "an ltx rope over an even width " << full
                           << " expects axes_dims [" << 2 * (full / 6) << ", "
                           << 2 * (full / 6) << ", " << 2 * (full / 6)
                           << "], got [" << dims[0] << ", " << dims[1] << ", "
                           << dims[2] << "]";
    if (!getCoordinateScale())
      return emitOpError() << "an ltx rope needs coordinate_scale (the "
                              "fractional position of one grid step per axis)";
    ArrayRef<double> scales = *getCoordinateScale();
    for (double scale : scales)
      if (failed(verifyFinitePositive(*this, "coordinate_scale entry", scale)))
        return failure();
    if (getTextTokens() != 0)
      return emitOpError() << "an ltx rope turns image tokens only, but has "
                           << getTextTokens() << " text tokens";
  }
  int64_t gridTokens = 1;
  for (int64_t g : getGrid())
    gridTokens *= g;
  int64_t shards = getSequenceShards();
  if (gridTokens % shards != 0)
    return emitOpError() << "sequence_shards " << shards
                         << " does not divide the grid's " << gridTokens
                         << " tokens";
  if (gridTokens / shards + getTextTokens() != type.getDimSize(1))
    return emitOpError() << "grid holds " << gridTokens / shards
                         << " tokens" << (shards > 1 ? " per shard" : "")
                         << " plus " << getTextTokens()
                         << " text tokens, but the input has "
                         << type.getDimSize(1);
  return success();
}

/// Checks that `sequence_shards` equal blocks of a `grid` hold the `tokens`
/// image rows of `op`'s input.
static LogicalResult verifyGridTokens(Operation *op, ArrayRef<int64_t> grid,
                                      int64_t shards, int64_t tokens) {
  int64_t gridTokens = 1;
  for (int64_t g : grid)
    gridTokens *= g;
  if (gridTokens % shards != 0)
    return op->emitOpError() << "sequence_shards " << shards
                             << " does not divide the grid's " << gridTokens
                             << " tokens";
  if (gridTokens / shards != tokens)
    return op->emitOpError()
           << "grid holds " << gridTokens / shards << " tokens"
           << (shards > 1 ? " per shard" : "") << ", but the input has "
           << tokens;
  return success();
}

LogicalResult SincosPosEmbedOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "input")))
    return failure();
  auto type = tensorOf(getInput());
  // D/4 temporal features and 3D/8 per spatial axis, each half sines and
  // half cosines.
  if (type.getDimSize(2) % 16 != 0)
    return emitOpError() << "width " << type.getDimSize(2)
                         << " is not divisible by 16";
  if (failed(verifyFinitePositive(*this, "spatial_scale",
                                  getSpatialScale().convertToDouble())) ||
      failed(verifyFinitePositive(*this, "temporal_scale",
                                  getTemporalScale().convertToDouble())))
    return failure();
  return verifyGridTokens(*this, getGrid(), getSequenceShards(),
                          type.getDimSize(1));
}

//===----------------------------------------------------------------------===//
// Linear and norms
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  auto in = tensorOf(getInput());
  auto out = tensorOf(getResult());
  if (getWeight().empty())
    return emitOpError() << "needs a parameter name in 'weight'";
  if (in.getRank() >= 1 && (in.getShape().back() < 1 || out.getShape().back() < 1))
    return emitOpError() << "needs positive input and output widths, got "
                         << in.getShape().back() << " and "
                         << out.getShape().back();
  if (in.getRank() < 1 || in.getRank() != out.getRank())
    return emitOpError() << "input rank " << in.getRank()
                         << " and result rank " << out.getRank() << " differ";
  if (in.getShape().drop_back() != out.getShape().drop_back())
    return emitOpError() << "leading dimensions differ: "
                         << shapeString(in.getShape()) << " vs "
                         << shapeString(out.getShape());
  return success();
}

template <typename NormOp>
static LogicalResult verifyNorm(NormOp op) {
  auto type = tensorOf(op.getInput());
  if (op.getAffine() && !op.getWeight())
    return op.emitOpError() << "is affine but names no 'weight'";
  if (!op.getAffine() && op.getWeight())
    return op.emitOpError() << "is not affine but names weight '"
                            << *op.getWeight() << "'";
  if (failed(verifyFinitePositive(op, "eps", op.getEps().convertToDouble())))
    return failure();
  if (type.getRank() < 1)
    return op.emitOpError() << "needs a tensor of rank at least 1";
  if (auto group = op.getGroupSize()) {
    int64_t width = type.getShape().back();
    if (width % *group != 0)
      return op.emitOpError() << "group_size " << *group
                              << " does not divide the width " << width;
  }
  return success();
}

LogicalResult LayerNormOp::verify() { return verifyNorm(*this); }
LogicalResult RMSNormOp::verify() { return verifyNorm(*this); }

//===----------------------------------------------------------------------===//
// adaLN
//===----------------------------------------------------------------------===//

LogicalResult AdaLNModulationOp::verify() {
  auto in = tensorOf(getCondition());
  auto out = tensorOf(getResult());
  if (in.getRank() != 2)
    return emitOpError() << "expects a [batch, width] condition, got rank "
                         << in.getRank();
  if (out.getRank() != 3 || out.getDimSize(0) != in.getDimSize(0) ||
      out.getDimSize(1) != getNumChunks())
    return emitOpError() << "expects result [" << in.getDimSize(0) << ", "
                         << getNumChunks() << ", width], got "
                         << shapeString(out.getShape());
  int64_t width = out.getDimSize(2);
  if (!getTable() && getTableRank())
    return emitOpError() << "table_rank describes a learned table; this "
                            "modulation has none";
  if (getTable() && in.getDimSize(1) != width &&
      in.getDimSize(1) != getNumChunks() * width)
    return emitOpError() << "a table modulation needs a condition of width "
                         << width << " or " << getNumChunks() * width
                         << ", got " << in.getDimSize(1);
  return success();
}

LogicalResult ModulateOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "input")))
    return failure();
  auto in = tensorOf(getInput());
  auto params = tensorOf(getParams());
  if (params.getRank() != 3 || params.getDimSize(0) != in.getDimSize(0) ||
      params.getDimSize(2) != in.getDimSize(2))
    return emitOpError() << "expects params [" << in.getDimSize(0)
                         << ", chunks, " << in.getDimSize(2) << "], got "
                         << shapeString(params.getShape());
  int64_t chunks = params.getDimSize(1);
  SmallVector<int64_t, 2> indices{static_cast<int64_t>(getScale())};
  if (auto shift = getShift())
    indices.push_back(*shift);
  for (int64_t index : indices)
    if (index >= chunks)
      return emitOpError() << "chunk index " << index << " is outside the "
                           << chunks << " chunks of params";
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  // ODS bounds both by 2^20, so the width cannot overflow.
  int64_t heads = getNumHeads(), headDim = getHeadDim();
  int64_t width = heads * headDim;
  bool stacked = getQkvLayout() == QKVLayout::Stacked;
  size_t expected = stacked ? 1 : 3;
  // The text mask, when given, is the last input.
  size_t masks = getKeyMask() ? 1 : 0;
  size_t body = getInputs().size() >= masks ? getInputs().size() - masks : 0;
  // A separate q, k, v may carry a fourth input: a text encoder's bias.
  bool hasBias = !stacked && body == 4;
  if (body != expected && !hasBias)
    return emitOpError() << "with qkv_layout "
                         << stringifyQKVLayout(getQkvLayout()) << " expects "
                         << expected << (stacked ? "" : " or 4 (with a position bias)")
                         << (masks ? " operands and a key mask" : " operands")
                         << ", got " << getInputs().size();
  if (masks && stacked)
    return emitOpError() << "a key mask needs separate q, k and v";
  for (Value input : getInputs().take_front(expected))
    if (failed(verifyTokens(*this, input, "q, k and v")))
      return failure();
  if (auto scale = getScale();
      scale && failed(verifyFinitePositive(*this, "scale", scale->convertToDouble())))
    return failure();
  if (getCausal() && getKind() != AttentionKind::Self)
    return emitOpError() << "only self attention can be causal, got "
                         << stringifyAttentionKind(getKind());
  if (hasBias) {
    auto bias = tensorOf(getInputs()[3]);
    auto q = tensorOf(getInputs()[0]), k = tensorOf(getInputs()[1]);
    if (getKind() != AttentionKind::Self)
      return emitOpError() << "a position bias needs self attention, got "
                           << stringifyAttentionKind(getKind());
    if (bias.getRank() != 4 ||
        (bias.getDimSize(0) != 1 && bias.getDimSize(0) != q.getDimSize(0)) ||
        bias.getDimSize(1) != heads || bias.getDimSize(2) != q.getDimSize(1) ||
        bias.getDimSize(3) != k.getDimSize(1))
      return emitOpError() << "position bias " << shapeString(bias.getShape())
                           << " is not [1 or " << q.getDimSize(0) << ", " << heads
                           << " heads, " << q.getDimSize(1) << " queries, "
                           << k.getDimSize(1) << " keys]";
  }
  auto q = tensorOf(getInputs()[0]);
  int64_t batch = q.getDimSize(0), queries = q.getDimSize(1);
  if (stacked) {
    if (q.getDimSize(2) != 3 * width)
      return emitOpError() << "stacked qkv width " << q.getDimSize(2)
                           << " is not 3 x heads " << heads << " x head_dim "
                           << headDim << " = " << 3 * width;
    if (getKind() == AttentionKind::Cross)
      return emitOpError() << "a stacked qkv cannot be cross attention";
  } else {
    auto k = tensorOf(getInputs()[1]);
    auto v = tensorOf(getInputs()[2]);
    if (q.getDimSize(2) != width)
      return emitOpError() << "q width " << q.getDimSize(2)
                           << " is not heads " << heads << " x head_dim "
                           << headDim << " = " << width;
    if (k.getShape() != v.getShape())
      return emitOpError() << "k and v shapes differ: "
                           << shapeString(k.getShape()) << " vs "
                           << shapeString(v.getShape());
    if (k.getDimSize(0) != batch || k.getDimSize(2) != width)
      return emitOpError() << "k/v shape " << shapeString(k.getShape())
                           << " does not match q " << shapeString(q.getShape());
    if (getKind() != AttentionKind::Cross && !getGatheredKv() &&
        k.getDimSize(1) != queries)
      return emitOpError() << stringifyAttentionKind(getKind())
                           << " attention needs as many keys as queries, got "
                           << k.getDimSize(1) << " keys for " << queries
                           << " queries";
    if (getGatheredKv() && k.getDimSize(1) < queries)
      return emitOpError() << "gathered keys cover " << k.getDimSize(1)
                           << " rows, fewer than the " << queries
                           << " queries";
  }
  if (masks) {
    // Joint: the mask covers the text part of the keys; self or cross over
    // the text alone: all of them.
    auto mask = tensorOf(getInputs().back());
    int64_t keys = getKind() == AttentionKind::Joint
                       ? getTextTokens()
                       : tensorOf(getInputs()[1]).getDimSize(1);
    if (mask.getRank() != 2 || mask.getDimSize(0) != batch || mask.getDimSize(1) != keys)
      return emitOpError() << "key mask " << shapeString(mask.getShape()) << " is not ["
                           << batch << ", " << keys << "]: one entry per "
                           << (getKind() == AttentionKind::Joint ? "text key" : "key");
  }
  if (getKind() == AttentionKind::Joint) {
    if (getTextTokens() < 1 || getTextTokens() >= queries)
      return emitOpError() << "joint attention needs 0 < text_tokens < "
                           << queries << " tokens, got " << getTextTokens();
  } else if (getTextTokens() != 0) {
    return emitOpError() << "text_tokens is only meaningful for joint "
                            "attention, got "
                         << getTextTokens();
  }
  if (auto backend = getBackend(); backend && backend->empty())
    return emitOpError() << "backend must not be empty when given";
  return success();
}

/// [B, Sq, heads * head_dim] for queries [B, Sq, ...], in q's element type.
LogicalResult AttentionOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType q = inferOperand(adaptor.getInputs(), 0);
  if (!q || q.getRank() != 3)
    return emitOptionalError(location, "attention needs q as a first input "
                                       "[batch, tokens, features]");
  int64_t width = int64_t(adaptor.getNumHeads()) * int64_t(adaptor.getHeadDim());
  inferredReturnTypes.push_back(RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), width}, q.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// MLP, residual, streams
//===----------------------------------------------------------------------===//

static bool isGated(ActivationKind kind) {
  return kind == ActivationKind::SwiGLU || kind == ActivationKind::GeGLU;
}

LogicalResult ActivationOp::verify() {
  auto in = tensorOf(getInput());
  if (in.getRank() < 1)
    return emitOpError() << "needs an input of rank at least 1";
  if (isGated(getKind()) && in.getShape().back() % 2 != 0)
    return emitOpError() << "gated activation needs an even width, got "
                         << in.getShape().back();
  return success();
}

/// The input's type; a gated kind halves the last dimension.
LogicalResult ActivationOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType in = inferOperand(operands, 0);
  if (!in || in.getRank() < 1)
    return emitOptionalError(location,
                             "activation needs an input of rank at least 1");
  SmallVector<int64_t> shape(in.getShape());
  if (isGated(adaptor.getKind()))
    shape.back() /= 2;
  inferredReturnTypes.push_back(in.clone(shape));
  return success();
}

LogicalResult ResidualAddOp::verify() {
  auto residual = tensorOf(getResidual());
  if (bool(getGate()) != bool(getGateChunk()))
    return emitOpError() << "a gate needs a gate_chunk and vice versa";
  if (getTanhGate() && !getGate())
    return emitOpError() << "tanh_gate needs a gate";
  if (Value gate = getGate()) {
    auto params = tensorOf(gate);
    if (params.getRank() != 3 || residual.getRank() != 3 ||
        params.getDimSize(0) != residual.getDimSize(0) ||
        params.getDimSize(2) != residual.getDimSize(2))
      return emitOpError() << "gate " << shapeString(params.getShape())
                           << " does not match residual "
                           << shapeString(residual.getShape());
    int64_t chunk = *getGateChunk();
    if (chunk >= params.getDimSize(1))
      return emitOpError() << "gate_chunk " << chunk << " is outside the "
                           << params.getDimSize(1) << " chunks of the gate";
  }
  return success();
}

LogicalResult ConcatStreamsOp::verify() {
  for (Value v : {getText(), getImage()})
    if (failed(verifyTokens(*this, v, "text and image")))
      return failure();
  auto text = tensorOf(getText()), image = tensorOf(getImage());
  if (text.getDimSize(0) != image.getDimSize(0) ||
      text.getDimSize(2) != image.getDimSize(2))
    return emitOpError() << "text " << shapeString(text.getShape())
                         << " and image " << shapeString(image.getShape())
                         << " differ in batch or width";
  return success();
}

/// [B, St + Si, D] for text [B, St, D] and image [B, Si, D].
LogicalResult ConcatStreamsOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType text = inferOperand(operands, 0);
  RankedTensorType image = inferOperand(operands, 1);
  if (!text || !image || text.getRank() != 3 || image.getRank() != 3)
    return emitOptionalError(location, "concat_streams needs text and image "
                                       "[batch, tokens, features]");
  inferredReturnTypes.push_back(text.clone(
      {text.getDimSize(0), text.getDimSize(1) + image.getDimSize(1),
       text.getDimSize(2)}));
  return success();
}

LogicalResult SplitStreamsOp::verify() {
  for (Value v : {getInput(), getText(), getImage()})
    if (failed(verifyTokens(*this, v, "input, text and image")))
      return failure();
  auto in = tensorOf(getInput()), text = tensorOf(getText()),
       image = tensorOf(getImage());
  if (text.getDimSize(1) + image.getDimSize(1) != in.getDimSize(1))
    return emitOpError() << "text " << text.getDimSize(1) << " + image "
                         << image.getDimSize(1) << " tokens do not add up to "
                         << in.getDimSize(1);
  for (auto part : {text, image})
    if (part.getDimSize(0) != in.getDimSize(0) ||
        part.getDimSize(2) != in.getDimSize(2))
      return emitOpError() << "part " << shapeString(part.getShape())
                           << " differs from input "
                           << shapeString(in.getShape())
                           << " in batch or width";
  return success();
}

LogicalResult UnpatchifyOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "input")))
    return failure();
  ArrayRef<int64_t> patch = getPatch(), grid = getGrid();
  auto in = tensorOf(getInput()), out = tensorOf(getResult());
  int64_t tokens = grid[0] * grid[1] * grid[2];
  if (in.getDimSize(1) != tokens)
    return emitOpError() << "grid " << grid[0] << "x" << grid[1] << "x"
                         << grid[2] << " holds " << tokens
                         << " tokens, input has " << in.getDimSize(1);
  int64_t patchVolume = patch[0] * patch[1] * patch[2];
  if (in.getDimSize(2) % patchVolume != 0)
    return emitOpError() << "width " << in.getDimSize(2)
                         << " is not a multiple of the patch volume "
                         << patchVolume;
  int64_t channels = in.getDimSize(2) / patchVolume;
  SmallVector<int64_t> expected{in.getDimSize(0), channels};
  if (out.getRank() == 5)
    expected.push_back(grid[0] * patch[0]);
  else if (grid[0] * patch[0] != 1)
    return emitOpError() << "an image result needs a single frame, grid has "
                         << grid[0] * patch[0];
  expected.push_back(grid[1] * patch[1]);
  expected.push_back(grid[2] * patch[2]);
  if (ArrayRef<int64_t>(expected) != out.getShape())
    return emitOpError() << "expects result " << shapeString(expected)
                         << ", got " << shapeString(out.getShape());
  return success();
}

LogicalResult StackOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  int64_t rank = tensorOf(getInputs()[0]).getRank();
  if (int64_t(getAxis()) > rank)
    return emitOpError() << "axis " << getAxis() << " is outside 0.." << rank;
  return success();
}

/// The inputs' shape with their count inserted at `axis`.
LogicalResult StackOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType first = inferOperand(operands, 0);
  int64_t axis = adaptor.getAxis();
  if (!first || axis > first.getRank())
    return emitOptionalError(location, "stack needs a ranked input and an "
                                       "axis at most its rank");
  SmallVector<int64_t> shape(first.getShape());
  shape.insert(shape.begin() + axis, int64_t(operands.size()));
  inferredReturnTypes.push_back(first.clone(shape));
  return success();
}

LogicalResult UnstackOp::verify() {
  auto in = tensorOf(getInput());
  int64_t axis = getAxis();
  if (axis >= in.getRank())
    return emitOpError() << "axis " << axis << " is outside 0.."
                         << in.getRank() - 1;
  // Checked before the inferred types are, so that a huge dimension is
  // refused here rather than inferred slice by slice.
  if (int64_t(getResults().size()) != in.getDimSize(axis))
    return emitOpError() << "dimension " << axis << " has "
                         << in.getDimSize(axis) << " slices, but the op has "
                         << getResults().size() << " results";
  return success();
}

/// One slice per index of `axis`: the input's shape without that dimension.
LogicalResult UnstackOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType in = inferOperand(operands, 0);
  int64_t axis = adaptor.getAxis();
  if (!in || axis >= in.getRank())
    return emitOptionalError(location, "unstack needs a ranked input and an "
                                       "axis below its rank");
  SmallVector<int64_t> shape(in.getShape());
  shape.erase(shape.begin() + axis);
  inferredReturnTypes.assign(in.getDimSize(axis), in.clone(shape));
  return success();
}

LogicalResult SplitOp::verify() {
  auto in = tensorOf(getInput());
  int64_t axis = getAxis(), parts = getParts();
  if (int64_t(getResults().size()) != parts)
    return emitOpError() << "splits into " << parts << " parts, but the op has "
                         << getResults().size() << " results";
  if (axis >= in.getRank())
    return emitOpError() << "axis " << axis << " is outside 0.."
                         << in.getRank() - 1;
  if (in.getDimSize(axis) % parts != 0)
    return emitOpError() << "dimension " << axis << " of size "
                         << in.getDimSize(axis) << " does not split into "
                         << parts << " equal parts";
  return success();
}

/// `parts` equal pieces of the input along `axis`.
LogicalResult SplitOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType in = inferOperand(operands, 0);
  int64_t axis = adaptor.getAxis(), parts = adaptor.getParts();
  if (!in || axis >= in.getRank() || parts < 1 ||
      in.getDimSize(axis) % parts != 0)
    return emitOptionalError(location, "split needs a ranked input whose "
                                       "dimension `axis` divides into `parts`");
  SmallVector<int64_t> shape(in.getShape());
  shape[axis] /= parts;
  inferredReturnTypes.assign(parts, in.clone(shape));
  return success();
}

LogicalResult CFGSelectOp::verify() {
  int64_t n = getInputs().size(), cfg = getCfg();
  if (n < 1 || n % cfg != 0)
    return emitOpError() << "cfg " << cfg << " does not divide the " << n
                         << " branch inputs";
  if (int64_t(getSlot()) >= n / cfg)
    return emitOpError() << "slot " << getSlot() << " is outside the "
                         << n / cfg << " branches each cfg rank runs";
  return success();
}

//===----------------------------------------------------------------------===//
// Denoising loop
//===----------------------------------------------------------------------===//

LogicalResult CFGCombineOp::verify() {
  auto branches = getBranches();
  if (branches.size() < 2)
    return emitOpError() << "needs at least 2 branches, got "
                         << branches.size();
  if (getGuidanceScales().size() != branches.size() - 1)
    return emitOpError() << branches.size() << " branches need "
                         << branches.size() - 1 << " guidance scales, got "
                         << getGuidanceScales().size();
  for (Attribute scale : getGuidanceScales()) {
    double value = cast<FloatAttr>(scale).getValueAsDouble();
    if (!std::isfinite(value))
      return emitOpError() << "guidance scales must be finite, got " << value;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Components
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// VAE decoder
//===----------------------------------------------------------------------===//

/// Checks that `value` is an image [B, C, H, W] or a video [B, C, F, H, W].
static LogicalResult verifyPixels(Operation *op, Value value, StringRef what,
                                  bool videoOnly = false) {
  int64_t rank = tensorOf(value).getRank();
  if (rank == 5 || (rank == 4 && !videoOnly))
    return success();
  return op->emitOpError() << "expects " << what
                           << (videoOnly ? " to be a video [batch, channels, frames, rows, columns]"
                                         : " to be an image [batch, channels, rows, columns] or a "
                                           "video [batch, channels, frames, rows, columns]")
                           << ", got rank " << rank;
}

/// Checks that `result` has `input`'s shape except where `expected` says.
static LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> expected,
                                       Value result, StringRef why) {
  ArrayRef<int64_t> got = tensorOf(result).getShape();
  if (got == expected)
    return success();
  return op->emitOpError() << "result must be " << shapeString(expected) << " ("
                           << why << "), got " << shapeString(got);
}

/// Frames after a first-frame-once doubling: 1 + 2 (F - 1).
static int64_t doubledFrames(int64_t frames) { return 1 + 2 * (frames - 1); }

LogicalResult ConvOp::verify() {
  if (failed(verifyPixels(*this, getInput(), "the input")))
    return failure();
  ArrayRef<int64_t> kernel = getKernel();
  auto in = tensorOf(getInput());
  if (kernel.size() != 2 && kernel.size() != 3)
    return emitOpError() << "kernel must have 2 sizes (rows, columns) or 3 (frames, rows, "
                            "columns), got "
                         << kernel.size();
  if (kernel.size() == 3 && in.getRank() != 5)
    return emitOpError() << "a 3-D kernel needs a video input, got rank " << in.getRank();
  if (getCausal() && kernel.size() != 3)
    return emitOpError() << "causal needs a 3-D kernel (frames, rows, columns)";
  for (int64_t k : kernel)
    if (k % 2 == 0 || k > 15)
      return emitOpError() << "kernel sizes must be odd and at most 15 so that "
                              "padding keeps the size, got "
                           << shapeString(kernel);
  if (kernel.size() == 3 && !getCausal() && kernel[0] != 1)
    return emitOpError() << "a 3-D kernel over " << kernel[0]
                         << " frames must be causal (the decoders pad time only "
                            "before the first frame)";
  SmallVector<int64_t> expected(in.getShape());
  auto out = tensorOf(getResult());
  if (out.getRank() == in.getRank())
    expected[1] = out.getDimSize(1);
  if (std::optional<ArrayRef<int64_t>> halo = getHalo()) {
    int64_t reach = getHaloRows();
    if ((*halo)[0] > reach || (*halo)[1] > reach)
      return emitOpError() << "halo [" << (*halo)[0] << ", " << (*halo)[1]
                           << "] exceeds the " << reach << " rows the kernel reads on each side";
    int64_t &rows = expected[expected.size() - 2];
    if (rows - (*halo)[0] - (*halo)[1] < 1)
      return emitOpError() << "input of " << rows << " rows holds no rows besides its halo";
    rows -= (*halo)[0] + (*halo)[1];
    return verifyResultShape(*this, expected, getResult(),
                             "the input's size less its halo rows, with the output channels");
  }
  return verifyResultShape(*this, expected, getResult(),
                           "the input's size with the output channels");
}

int64_t mlir::dit::rowsPerLatentRow(Type type, int64_t latentRows) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < 4 || latentRows < 1)
    return 0;
  int64_t rows = tensor.getDimSize(tensor.getRank() - 2);
  return rows % latentRows == 0 ? rows / latentRows : 0;
}

int64_t ConvOp::getHaloRows() {
  ArrayRef<int64_t> kernel = getKernel();
  return kernel.size() < 2 ? 0 : kernel[kernel.size() - 2] / 2;
}

LogicalResult GroupNormOp::verify() {
  if (failed(verifyPixels(*this, getInput(), "the input")) ||
      failed(verifyFinitePositive(*this, "eps", getEps().convertToDouble())))
    return failure();
  int64_t channels = tensorOf(getInput()).getDimSize(1);
  if (channels % getNumGroups() != 0)
    return emitOpError() << "num_groups " << getNumGroups() << " must divide the "
                         << channels << " channels";
  return success();
}

LogicalResult ChannelRMSNormOp::verify() {
  return verifyPixels(*this, getInput(), "the input");
}

LogicalResult UpsampleOp::verify() {
  if (failed(verifyPixels(*this, getInput(), "the input")))
    return failure();
  SmallVector<int64_t> expected(tensorOf(getInput()).getShape());
  expected[expected.size() - 2] *= 2;
  expected.back() *= 2;
  return verifyResultShape(*this, expected, getResult(), "twice the rows and columns");
}

LogicalResult TemporalUpsampleOp::verify() {
  if (failed(verifyPixels(*this, getInput(), "the input", /*videoOnly=*/true)))
    return failure();
  SmallVector<int64_t> expected(tensorOf(getInput()).getShape());
  expected[2] = doubledFrames(expected[2]);
  return verifyResultShape(*this, expected, getResult(),
                           "1 + 2 (F - 1) frames: every frame but the first doubles");
}

LogicalResult DupUpOp::verify() {
  if (failed(verifyPixels(*this, getInput(), "the input", /*videoOnly=*/true)))
    return failure();
  auto in = tensorOf(getInput());
  auto out = tensorOf(getResult());
  if (out.getRank() != 5)
    return emitOpError() << "result must be a video, got rank " << out.getRank();
  int64_t factor = (getTemporal() ? 2 : 1) * 4;
  int64_t cin = in.getDimSize(1), cout = out.getDimSize(1);
  if ((cout * factor) % cin != 0)
    return emitOpError() << cout << " output channels x " << factor
                         << " copies per channel must be a multiple of the " << cin
                         << " input channels";
  SmallVector<int64_t> expected(in.getShape());
  expected[1] = cout;
  if (getTemporal())
    expected[2] = doubledFrames(expected[2]);
  expected[3] *= 2;
  expected[4] *= 2;
  return verifyResultShape(*this, expected, getResult(),
                           "twice the rows and columns, and with temporal 1 + 2 (F - 1) frames");
}

LogicalResult ImageAttentionOp::verify() {
  return verifyPixels(*this, getInput(), "the input");
}

LogicalResult DenormalizeLatentsOp::verify() {
  if (failed(verifyPixels(*this, getInput(), "the latents")))
    return failure();
  int64_t channels = tensorOf(getInput()).getDimSize(1);
  for (auto [name, values] : {std::pair<StringRef, ArrayRef<double>>{"scale", getScale()},
                              {"shift", getShift()}}) {
    if (values.size() != 1 && int64_t(values.size()) != channels)
      return emitOpError() << name << " must have 1 or " << channels
                           << " entries (one per channel), got " << values.size();
    for (double v : values)
      if (!std::isfinite(v))
        return emitOpError() << name << " must be finite, got " << v;
  }
  return success();
}

LogicalResult PixelUnpatchifyOp::verify() {
  if (failed(verifyPixels(*this, getInput(), "the input", /*videoOnly=*/true)))
    return failure();
  int64_t p = getPatch();
  SmallVector<int64_t> expected(tensorOf(getInput()).getShape());
  if (p > 64 || expected[1] % (p * p) != 0)
    return emitOpError() << "patch " << p << " squared must divide the " << expected[1]
                         << " channels";
  expected[1] /= p * p;
  expected[3] *= p;
  expected[4] *= p;
  return verifyResultShape(*this, expected, getResult(),
                           "channels over patch^2, rows and columns times patch");
}

LogicalResult ClampOp::verify() {
  double lo = getMin().convertToDouble(), hi = getMax().convertToDouble();
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    return emitOpError() << "needs finite min <= max, got [" << lo << ", " << hi << "]";
  return success();
}

//===----------------------------------------------------------------------===//
// Pipeline components
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Text encoders
//===----------------------------------------------------------------------===//

/// Checks that `value` is [batch, tokens] of integers (ids or a mask).
static LogicalResult verifyTokenIds(Operation *op, Value value, StringRef what) {
  auto type = tensorOf(value);
  if (type.getRank() != 2 || !type.getElementType().isInteger())
    return op->emitOpError() << "expects " << what
                             << " to be [batch, tokens] integers, got "
                             << shapeString(type.getShape()) << " of "
                             << type.getElementType();
  return success();
}

LogicalResult TokenEmbeddingOp::verify() {
  if (failed(verifyTokenIds(*this, getIds(), "the ids")))
    return failure();
  auto ids = tensorOf(getIds()), out = tensorOf(getResult());
  if (out.getRank() != 3 || out.getShape().take_front(2) != ids.getShape())
    return emitOpError() << "result " << shapeString(out.getShape())
                         << " is not [" << shapeString(ids.getShape())
                         << " x width]";
  if (getWeight().empty())
    return emitOpError() << "needs a parameter name in 'weight'";
  if (bool(getPositions()) != bool(getMaxPositions()))
    return emitOpError() << "positions and max_positions come together";
  if (auto max = getMaxPositions(); max && *max < ids.getDimSize(1))
    return emitOpError() << ids.getDimSize(1) << " tokens exceed the "
                         << *max << " learned positions";
  return success();
}

LogicalResult RelativePositionBiasOp::verify() {
  auto out = tensorOf(getResult());
  if (out.getRank() != 4 || out.getDimSize(2) != out.getDimSize(3))
    return emitOpError() << "result " << shapeString(out.getShape())
                         << " is not [batch or 1, heads, tokens, tokens]";
  if (getWeight().empty())
    return emitOpError() << "needs a parameter name in 'weight'";
  if (getNumBuckets() < 2 || getNumBuckets() % 2 != 0 || getNumBuckets() > 4096)
    return emitOpError() << "num_buckets must be even, 2 to 4096, got "
                         << getNumBuckets();
  if (Value mask = getMask()) {
    if (failed(verifyTokenIds(*this, mask, "the mask")))
      return failure();
    auto m = tensorOf(mask);
    if (m.getDimSize(0) != out.getDimSize(0) || m.getDimSize(1) != out.getDimSize(2))
      return emitOpError() << "mask " << shapeString(m.getShape())
                           << " does not match the bias " << shapeString(out.getShape());
  } else if (out.getDimSize(0) != 1) {
    return emitOpError() << "without a mask the bias is one row, got batch "
                         << out.getDimSize(0);
  }
  return success();
}

LogicalResult EosPoolOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "the states")) ||
      failed(verifyTokenIds(*this, getIds(), "the ids")))
    return failure();
  auto in = tensorOf(getInput()), ids = tensorOf(getIds()), out = tensorOf(getResult());
  if (in.getShape().take_front(2) != ids.getShape())
    return emitOpError() << "ids " << shapeString(ids.getShape())
                         << " do not match the states " << shapeString(in.getShape());
  if (out.getRank() != 2 || out.getDimSize(0) != in.getDimSize(0) ||
      out.getDimSize(1) != in.getDimSize(2))
    return emitOpError() << "result " << shapeString(out.getShape())
                         << " is not [batch, width] of " << shapeString(in.getShape());
  // I64Attr reads back unsigned: a negative id written in the IR is a
  // huge unsigned one here.
  if (int64_t(getEosTokenId()) < 0)
    return emitOpError() << "eos_token_id must be a token id (0 or more), got "
                         << int64_t(getEosTokenId());
  return success();
}

LogicalResult MaskRowsOp::verify() {
  if (failed(verifyTokens(*this, getInput(), "the states")) ||
      failed(verifyTokenIds(*this, getMask(), "the mask")))
    return failure();
  if (tensorOf(getInput()).getShape().take_front(2) != tensorOf(getMask()).getShape())
    return emitOpError() << "mask " << shapeString(tensorOf(getMask()).getShape())
                         << " does not match the states "
                         << shapeString(tensorOf(getInput()).getShape());
  return success();
}

StringRef mlir::dit::textEncoderTPRole(LinearOp linear) {
  auto splitsWidth = [](Operation *op) {
    return op && isa<AttentionOp, ActivationOp, MulOp>(op);
  };
  for (OpOperand &use : linear.getResult().getUses())
    if (splitsWidth(use.getOwner()) &&
        !(isa<AttentionOp>(use.getOwner()) && use.getOperandNumber() > 2))
      return "column";
  if (splitsWidth(linear.getInput().getDefiningOp()))
    return "row";
  return "";
}

LogicalResult ComponentOp::verify() {
  if (getClassName().empty())
    return emitOpError() << "needs a class name";
  if (getOutputs().empty())
    return emitOpError() << "must produce at least one output";
  if (getBody().empty())
    return success();
  if (!getBody().hasOneBlock())
    return emitOpError() << "body must be one block, got "
                         << getBody().getBlocks().size();
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError() << "body's arguments must have the inputs' types";
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end with dit.yield";
  if (yield.getValues().getTypes() != getOutputs().getTypes())
    return yield.emitOpError() << "must yield the component's output types";
  return success();
}

#define GET_OP_CLASSES
#include "dit/IR/DitOps.cpp.inc"
