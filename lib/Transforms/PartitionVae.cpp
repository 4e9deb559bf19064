//===- PartitionVae.cpp - the dit-partition-vae pass ----------------------===//
//
// Patch parallelism of the VAE decode: with the vae placement's
// vae_parallel_size V > 1, the decoder graph in @vae_decode's component
// body becomes V band programs, one per decoding rank of a replica. Band i
// holds latent rows [o_i, o_i + r_i) and every activation's rows scale
// with them; the image's rows never move between bands except through the
// exchanges this pass makes explicit:
//   * a convolution that reads k/2 rows beyond its output row first pads
//     its input by the halo and fills it with shard.update_halo over
//     @vae_bands (none at the image's top and bottom, where the kernel
//     reads zero padding as it does on one rank);
//   * a GroupNorm's statistics and the mid-block attention's keys and
//     values span every band: the op is marked dit.band_collective (an
//     all-reduce of the group sums, an all-gather of K and V).
// dit-verify-collectives then proves that the bands' exchanges pair up.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/Deployment.h"
#include "ditc/Analysis/Legality.h"
#include "ditc/Transforms/Passes.h"
#include "ditc/Transforms/MeshInfo.h"

#include "dit/IR/DitDialect.h"
#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace ditc {
#define GEN_PASS_DEF_PARTITIONVAE
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;

namespace ditc {
namespace {

struct PartitionVaePass : impl::PartitionVaeBase<PartitionVaePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>("vae_decode");
    if (!fn || fn.isExternal())
      return;
    dit::ComponentOp decoder;
    fn.walk([&](dit::ComponentOp op) {
      if (op.getKind() == dit::ComponentKind::VaeDecoder)
        decoder = op;
    });
    Deployment deployment = deploymentFromModule(module);
    const Placement *vae = deployment.find("vae");
    int64_t bands = vae ? vae->vaeParallelSize : 1;
    if (!decoder || bands < 2)
      return;
    if (decoder.getBody().empty()) {
      decoder.emitError() << "vae_parallel_size " << bands << " splits the decode, but the "
                          << decoder.getClassName()
                          << " decoder is opaque: ditc has no graph to split into bands";
      return signalPassFailure();
    }
    Block &body = decoder.getBody().front();
    auto latents = cast<RankedTensorType>(body.getArgument(0).getType());
    if (latents.getRank() < 4) {
      decoder.emitError() << "expects latents with rows at dim -2, got rank "
                          << latents.getRank();
      return signalPassFailure();
    }
    int64_t latentRows = latents.getDimSize(latents.getRank() - 2);
    std::vector<int64_t> rows = vaeRowBands(latentRows, bands, vae->vaeRowSplit);
    if (int64_t(rows.size()) != bands ||
        llvm::any_of(rows, [](int64_t r) { return r < 1; })) {
      decoder.emitError() << "cannot split " << latentRows << " latent rows into " << bands
                          << " bands (see --dit-check-legality's vae-rows)";
      return signalPassFailure();
    }

    OpBuilder b(module.getContext());
    if (!SymbolTable::lookupSymbolIn(module, kVaeBandGridName)) {
      b.setInsertionPointToStart(module.getBody());
      shard::GridOp::create(b, module.getLoc(), kVaeBandGridName,
                            b.getDenseI64ArrayAttr({bands}));
    }
    b.setInsertionPointAfter(fn);
    for (int64_t band = 0; band < bands; ++band)
      if (failed(buildBand(b, fn, body, band, bands, latentRows, rows[band])))
        return signalPassFailure();
  }

  /// `type` with its rows (dim -2) scaled from the image's to the band's.
  static FailureOr<Type> bandType(Type type, int64_t latentRows, int64_t bandRows,
                                  Operation *where) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || tensor.getRank() < 4)
      return type;
    SmallVector<int64_t> shape(tensor.getShape());
    int64_t &rows = shape[shape.size() - 2];
    int64_t perLatentRow = dit::rowsPerLatentRow(type, latentRows);
    if (perLatentRow == 0) {
      where->emitError() << "has " << rows << " rows, not a multiple of the " << latentRows
                         << " latent rows: its band of rows is not defined";
      return failure();
    }
    rows = perLatentRow * bandRows;
    return Type(tensor.clone(shape));
  }

  LogicalResult buildBand(OpBuilder &b, func::FuncOp decode, Block &body, int64_t band,
                          int64_t bands, int64_t latentRows, int64_t bandRows) {
    MLIRContext *context = b.getContext();
    Location loc = decode.getLoc();
    auto yield = cast<dit::YieldOp>(body.getTerminator());
    FailureOr<Type> in = bandType(body.getArgument(0).getType(), latentRows, bandRows, decode);
    FailureOr<Type> out = bandType(yield.getValues()[0].getType(), latentRows, bandRows, yield);
    if (failed(in) || failed(out))
      return failure();
    auto fn = func::FuncOp::create(b, loc, (decode.getName() + "_band" + Twine(band)).str(),
                                   b.getFunctionType({*in}, {*out}));
    auto &dialect = dit::DitDialect::get(context);
    dialect.getComponentAttrHelper().setAttr(
        fn, dit::PipelineComponentAttr::get(context, dit::PipelineComponent::Vae));
    dialect.getVaeBandAttrHelper().setAttr(fn, b.getI64IntegerAttr(band));

    OpBuilder inner(context);
    inner.setInsertionPointToStart(fn.addEntryBlock());
    IRMapping mapping;
    mapping.map(body.getArgument(0), fn.getArgument(0));
    for (Operation &op : body.without_terminator()) {
      if (auto conv = dyn_cast<dit::ConvOp>(op)) {
        if (int64_t halo = conv.getHaloRows(); halo > 0) {
          int64_t top = band > 0 ? halo : 0, bottom = band + 1 < bands ? halo : 0;
          Value x = mapping.lookup(conv.getInput());
          mapping.map(conv.getInput(), fetchHalo(inner, conv.getLoc(), x, top, bottom));
          Operation *clone = inner.clone(op, mapping);
          clone->setAttr("halo", inner.getDenseI64ArrayAttr({top, bottom}));
          if (failed(setBandTypes(clone, latentRows, bandRows)))
            return failure();
          // Later users of the input see the band's own rows again.
          mapping.map(conv.getInput(), x);
          continue;
        }
      }
      Operation *clone = inner.clone(op, mapping);
      if (failed(setBandTypes(clone, latentRows, bandRows)))
        return failure();
      if (isa<dit::GroupNormOp, dit::ImageAttentionOp>(clone))
        dialect.getBandCollectiveAttrHelper().setAttr(clone, inner.getUnitAttr());
    }
    func::ReturnOp::create(inner, loc, mapping.lookup(yield.getValues()[0]));
    return success();
  }

  static LogicalResult setBandTypes(Operation *op, int64_t latentRows, int64_t bandRows) {
    for (OpResult result : op->getResults()) {
      FailureOr<Type> type = bandType(result.getType(), latentRows, bandRows, op);
      if (failed(type))
        return failure();
      result.setType(*type);
    }
    return success();
  }

  /// The band `x` with `top` rows of the band above and `bottom` of the
  /// band below: room made by a zero pad, filled by shard.update_halo.
  static Value fetchHalo(OpBuilder &b, Location loc, Value x, int64_t top, int64_t bottom) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> low(rank, 0), high(rank, 0), shape(type.getShape());
    low[rank - 2] = top;
    high[rank - 2] = bottom;
    shape[rank - 2] += top + bottom;
    auto padded = type.clone(shape);
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(type.getElementType()));
    SmallVector<OpFoldResult> lowFolds, highFolds;
    for (int64_t i = 0; i < rank; ++i) {
      lowFolds.push_back(b.getIndexAttr(low[i]));
      highFolds.push_back(b.getIndexAttr(high[i]));
    }
    Value room = tensor::PadOp::create(b, loc, padded, x, lowFolds, highFolds, zero);
    // The rows (dim -2) are split over the band grid's only axis.
    SmallVector<shard::GridAxesAttr> split(rank, b.getDenseI16ArrayAttr({}));
    split[rank - 2] = b.getDenseI16ArrayAttr({0});
    return shard::UpdateHaloOp::create(b, loc, padded, room, kVaeBandGridName,
                                       shard::GridAxesArrayAttr::get(b.getContext(), split),
                                       ValueRange{}, ArrayRef<int64_t>{top, bottom});
  }
};

} // namespace
} // namespace ditc
