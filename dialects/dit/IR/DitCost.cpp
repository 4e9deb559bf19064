//===- DitCost.cpp - what each op costs -----------------------------------===//
//
// DitCostOpInterface: floating-point operations per execution (from the
// op's types, so local counts on a partitioned op) and the traffic of ops
// that communicate themselves. GEMMs count 2·M·N·K, attention
// 4·B·H·Lq·Lk·d, norms and elementwise ops one per output element; pure
// data movement (stream concat/split, unpatchify) counts none.
//
//===----------------------------------------------------------------------===//
#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"

using namespace mlir;
using namespace mlir::dit;

static int64_t elementBytes(Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

/// M·K elements in, N out: 2·M·N·K.
int64_t LinearOp::getFlops() {
  return 2 * numElements(getInput().getType()) * lastDim(getResult());
}

/// Patches of F values projected to D: 2·(B·S)·D·F, plus one add per
/// output element for a position table.
int64_t PatchEmbedOp::getFlops() {
  int64_t table = getPosEmbed() ? numElements(getResult().getType()) : 0;
  return 2 * numElements(getLatents().getType()) * lastDim(getResult()) + table;
}

/// linear_1 (F -> D) and linear_2 (D -> D) per timestep.
int64_t TimestepEmbeddingOp::getFlops() {
  int64_t batch = cast<RankedTensorType>(getType()).getDimSize(0);
  int64_t d = lastDim(getResult());
  return 2 * batch * d * (getFreqDim() + d);
}

/// A table only adds; otherwise a [N·D, E] projection per batch row.
int64_t AdaLNModulationOp::getFlops() {
  int64_t out = numElements(getType());
  return getTable() ? out : 2 * out * lastDim(getCondition());
}

/// QKᵀ and PV: 2·B·H·Lq·Lk·d each. Lk is the keys' rows after any gather.
int64_t AttentionOp::getFlops() {
  auto q = cast<RankedTensorType>(getInputs()[0].getType());
  int64_t lk = getQkvLayout() == QKVLayout::Stacked
                   ? q.getDimSize(1)
                   : cast<RankedTensorType>(getInputs()[1].getType())
                         .getDimSize(1);
  return 4 * q.getDimSize(0) * getNumHeads() * q.getDimSize(1) * lk *
         getHeadDim();
}

#define DIT_ELEMENTWISE_FLOPS(Op)                                              \
  int64_t Op::getFlops() { return numElements(getResult().getType()); }
DIT_ELEMENTWISE_FLOPS(LayerNormOp)
DIT_ELEMENTWISE_FLOPS(RMSNormOp)
DIT_ELEMENTWISE_FLOPS(RotaryEmbeddingOp)
DIT_ELEMENTWISE_FLOPS(SincosPosEmbedOp)
DIT_ELEMENTWISE_FLOPS(ModulateOp)
DIT_ELEMENTWISE_FLOPS(ResidualAddOp)
DIT_ELEMENTWISE_FLOPS(ActivationOp)
DIT_ELEMENTWISE_FLOPS(CFGCombineOp)
DIT_ELEMENTWISE_FLOPS(SchedulerStepOp)
#undef DIT_ELEMENTWISE_FLOPS

int64_t TokenMeanOp::getFlops() { return numElements(getInput().getType()); }
/// The key/value projection of L + 1 rows dominates: 2 (L + 1) E 2E, plus
/// the query, the scores and the output projection.
int64_t AttentionPoolOp::getFlops() {
  auto in = cast<RankedTensorType>(getInput().getType());
  int64_t b = in.getDimSize(0), l = in.getDimSize(1), e = in.getDimSize(2);
  return b * (4 * (l + 1) * e * e + 2 * e * e + 4 * (l + 1) * e +
              2 * e * lastDim(getResult()));
}
int64_t ConcatStreamsOp::getFlops() { return 0; }
int64_t SplitStreamsOp::getFlops() { return 0; }
int64_t UnpatchifyOp::getFlops() { return 0; }

/// Ring attention: K and V image blocks each make hops-1 shifts; the
/// replicated text rows stay.
void AttentionOp::getTraffic(const MeshContext &mesh,
                             SmallVectorImpl<Traffic> &traffic) {
  std::optional<int16_t> axis = getRingAxis(*this);
  if (!axis)
    return;
  const MeshAxisSize &ring = mesh.axes[*axis];
  int64_t hops = ring.size - 1;
  auto k = cast<RankedTensorType>(getInputs()[1].getType());
  int64_t rows = k.getDimSize(1) - getTextTokens();
  int64_t block = rows * k.getDimSize(0) * k.getDimSize(2) * elementBytes(k);
  traffic.push_back(Traffic{"shift", ring.name, 2 * hops,
                            double(2 * hops * block)});
}

/// A norm over a TP-split width all-reduces per-token f32 statistics (mean
/// and variance, or the mean square) with the ring algorithm.
static void normTraffic(Operation *op, int64_t statistics,
                        const MeshContext &mesh,
                        SmallVectorImpl<Traffic> &traffic) {
  if (!hasReduceStats(op))
    return;
  auto x = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t n = mesh.size("tp");
  double bytes =
      double(numElements(x) / x.getShape().back()) * statistics * 4;
  traffic.push_back(Traffic{"all_reduce", "tp", 1, 2.0 * (n - 1) / n * bytes});
}

void LayerNormOp::getTraffic(const MeshContext &mesh,
                             SmallVectorImpl<Traffic> &traffic) {
  normTraffic(*this, 2, mesh, traffic);
}

void RMSNormOp::getTraffic(const MeshContext &mesh,
                           SmallVectorImpl<Traffic> &traffic) {
  normTraffic(*this, 1, mesh, traffic);
}

//===----------------------------------------------------------------------===//
// VAE decoder
//===----------------------------------------------------------------------===//

/// Each output element is a dot product over C_in x kernel inputs.
int64_t ConvOp::getFlops() {
  int64_t taps = 1;
  for (int64_t k : getKernel())
    taps *= k;
  return 2 * numElements(getResult().getType()) * vaeChannelsOf(getInput()) *
         taps;
}

/// time_conv runs on every frame but the first: 2C outputs of 3C inputs.
int64_t TemporalUpsampleOp::getFlops() {
  auto in = cast<RankedTensorType>(getInput().getType());
  int64_t c = in.getDimSize(1);
  int64_t pixels = in.getDimSize(0) * (in.getDimSize(2) - 1) * in.getDimSize(3) *
                   in.getDimSize(4);
  return 2 * pixels * 2 * c * 3 * c;
}

/// Four C x C projections per pixel, and per frame QKᵀ and PV over its
/// H·W pixels: 4·(H·W)²·C.
int64_t ImageAttentionOp::getFlops() {
  auto in = cast<RankedTensorType>(getInput().getType());
  int64_t c = in.getDimSize(1);
  int64_t pixelsPerFrame = in.getDimSize(in.getRank() - 2) * in.getDimSize(in.getRank() - 1);
  if (c == 0 || pixelsPerFrame == 0)
    return 0;
  int64_t frames = numElements(in) / (c * pixelsPerFrame);
  return 2 * frames * pixelsPerFrame * 4 * c * c +
         4 * frames * pixelsPerFrame * pixelsPerFrame * c;
}

#define DIT_ELEMENTWISE_FLOPS(Op)                                              \
  int64_t Op::getFlops() { return numElements(getResult().getType()); }
DIT_ELEMENTWISE_FLOPS(GroupNormOp)
DIT_ELEMENTWISE_FLOPS(ChannelRMSNormOp)
DIT_ELEMENTWISE_FLOPS(AddOp)
DIT_ELEMENTWISE_FLOPS(DenormalizeLatentsOp)
DIT_ELEMENTWISE_FLOPS(ClampOp)
#undef DIT_ELEMENTWISE_FLOPS
int64_t UpsampleOp::getFlops() { return 0; }
int64_t DupUpOp::getFlops() { return 0; }
int64_t PixelUnpatchifyOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// Text encoders
//===----------------------------------------------------------------------===//

/// A gather of rows; CLIP adds its position row to each.
int64_t TokenEmbeddingOp::getFlops() {
  return getPositions() ? numElements(getResult().getType()) : 0;
}
/// One table lookup and, with a mask, one add per entry.
int64_t RelativePositionBiasOp::getFlops() {
  return getMask() ? numElements(getResult().getType()) : 0;
}
int64_t MulOp::getFlops() { return numElements(getResult().getType()); }
int64_t MaskRowsOp::getFlops() { return numElements(getResult().getType()); }
int64_t EosPoolOp::getFlops() { return 0; }
