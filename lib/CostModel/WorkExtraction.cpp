//===- WorkExtraction.cpp - partitioned IR to per-rank work ---------------===//
//
// FLOPs and parameters are the plan's own (StepAccounting, which asks each
// op's interfaces): a linear is 2·M·N·K, attention 4·B·H·Lq·Lk·d (ring
// attention sees every hop's keys), every other arithmetic op one FLOP per
// result element, and ops that only move data cost bytes, not FLOPs. This
// file adds what pricing needs on top: the roofline class of each op, the
// bytes it moves, its collectives' buffers, and where each block ends.
//
//===----------------------------------------------------------------------===//
#include "ditc/CostModel/WorkExtraction.h"

#include "ditc/Analysis/Legality.h"
#include "ditc/Analysis/Overlap.h"
#include "ditc/Analysis/StepAccounting.h"
#include "ditc/Support/RowChunks.h"
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"
#include "ditc/Transforms/ShardingAttrs.h"

#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitOps.h"
#include "dit/IR/DitPassAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"

#include <set>

using namespace mlir;

namespace ditc {

namespace {

/// Whether an eager engine launches work for `op`: a slice of a tensor
/// (splitting the streams, unstacking, a rank's all_slice) is a view there,
/// every other op with a result is at least one launch.
bool launchesKernel(Operation *op) {
  return op->getNumResults() > 0 &&
         !isa<dit::SplitStreamsOp, dit::UnstackOp, dit::SplitOp, shard::AllSliceOp>(op);
}

double elementsOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  double n = 1;
  for (int64_t d : tensor.getShape())
    n *= double(d);
  return n;
}

double bytesPerElement(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  unsigned bits = tensor.getElementType().getIntOrFloatBitWidth();
  return double((bits + 7) / 8);
}

double bytesOf(Type type) { return elementsOf(type) * bytesPerElement(type); }

double bytesOf(TypeRange types) {
  double sum = 0;
  for (Type t : types)
    sum += bytesOf(t);
  return sum;
}


std::vector<Axis> axesOf(const MeshInfo &mesh, ArrayRef<int16_t> gridAxes) {
  std::vector<Axis> axes;
  for (int16_t a : gridAxes)
    axes.push_back(mesh.order[a]);
  return axes;
}



/// The most bytes of values alive at once while `block` runs, its arguments
/// included, on top of `alreadyLive` bytes held from before it.
double peakLiveBytes(Block &block, double alreadyLive = 0) {
  llvm::DenseMap<Value, size_t> lastUse;
  std::vector<Operation *> ops;
  for (Operation &op : block) {
    for (Value v : op.getOperands())
      lastUse[v] = ops.size();
    ops.push_back(&op);
  }
  std::vector<double> dying(ops.size() + 1, 0);
  double live = alreadyLive, peak = alreadyLive;
  for (BlockArgument arg : block.getArguments()) {
    live += bytesOf(arg.getType());
    if (auto it = lastUse.find(arg); it != lastUse.end())
      dying[it->second] += bytesOf(arg.getType());
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    for (Value v : ops[i]->getResults()) {
      live += bytesOf(v.getType());
      auto it = lastUse.find(v);
      // A value nobody reads dies at once.
      dying[it == lastUse.end() ? i : it->second] += bytesOf(v.getType());
    }
    peak = std::max(peak, live);
    live -= dying[i];
  }
  return peak;
}

class Extractor {
public:
  Extractor(const MeshInfo &mesh) : mesh(mesh) {}

  LogicalResult run(func::FuncOp fn, TransformerWork &out) {
    out.shape = mesh.degrees;
    for (Operation &op : fn.front()) {
      if (isa<func::ReturnOp>(op)) {
        for (Value v : op.getOperands())
          out.latentBytes += bytesOf(v.getType());
        continue;
      }
      int64_t block = blockOf(&op);
      BlockWork &work = block < 0 ? out.prologue : blockWork(out, block);
      if (failed(account(&op, work)))
        return failure();
    }
    computeCuts(fn, out);
    out.peakActivationBytes = peakLiveBytes(fn.front());
    return success();
  }

private:
  BlockWork &blockWork(TransformerWork &out, int64_t block) {
    if (out.blocks.size() <= size_t(block))
      out.blocks.resize(block + 1);
    return out.blocks[block];
  }

  /// The op's `dit.block`, else the latest block among its operands'
  /// producers (collectives and stream ops that dit-insert-collectives adds
  /// carry no index), else -1 (the prologue).
  int64_t blockOf(Operation *op) {
    auto it = blocks.find(op);
    if (it != blocks.end())
      return it->second;
    int64_t block = -1;
    if (auto attr = op->getAttrOfType<IntegerAttr>(dit::DitDialect::kBlockAttrName)) {
      block = attr.getInt();
    } else {
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          block = std::max(block, blockOf(def));
    }
    blocks[op] = block;
    return block;
  }

  /// Which roofline an op's FLOPs sit on: the GEMMs, attention, or the
  /// memory-bound rest.
  static OpClass classOf(Operation *op) {
    if (isa<dit::LinearOp, dit::PatchEmbedOp, dit::TimestepEmbeddingOp>(op))
      return OpClass::Gemm;
    if (auto adaln = dyn_cast<dit::AdaLNModulationOp>(op))
      return adaln.getTable() ? OpClass::Elementwise : OpClass::Gemm;
    if (isa<dit::AttentionOp>(op))
      return OpClass::Attention;
    return OpClass::Elementwise;
  }

  LogicalResult account(Operation *op, BlockWork &work) {
    // FLOPs and parameters come from the step accounting the plan uses
    // (each op's DitCostOpInterface and DitParameterOpInterface); bytes are
    // the op's operands, results and the weights it reads.
    double weights = 0;
    for (const ParamSlice &slice : parameterSlices(op, mesh))
      weights += double(slice.localBytes);
    work.paramBytes += weights;
    if (launchesKernel(op))
      work.compute.launches += 1;
    if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      CollectiveWork sum{CollectiveKind::AllReduce, axesOf(mesh, reduce.getGridAxes()),
                         bytesOf(reduce.getInput().getType())};
      auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
      if (int64_t chunks = overlapRowChunks(reduce);
          chunks > 1 && type && type.hasStaticShape()) {
        RowCut cut = rowCutOf(type.getShape().vec());
        sum.rowChunks = chunks;
        sum.rowItems = cut.items;
        sum.rowsPerItem = cut.rowsPerItem;
      }
      work.collectives.push_back(sum);
    } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
      work.collectives.push_back({CollectiveKind::AllGather,
                                  axesOf(mesh, gather.getGridAxes()),
                                  bytesOf(gather.getInput().getType())});
    } else if (auto exchange = dyn_cast<shard::AllToAllOp>(op)) {
      work.collectives.push_back({CollectiveKind::AllToAll,
                                  axesOf(mesh, exchange.getGridAxes()),
                                  bytesOf(exchange.getInput().getType())});
    } else if (op->getNumResults() > 0) {
      OpClass opClass = classOf(op);
      double flops = double(opFlops(op, mesh));
      double bytes = bytesOf(op->getOperandTypes()) +
                     bytesOf(op->getResultTypes()) + weights;
      if (auto attention = dyn_cast<dit::AttentionOp>(op))
        accountAttention(attention, flops, bytes, work);
      else
        work.compute.add(opClass, flops, bytes, weights);
      if (isa<dit::RMSNormOp, dit::LayerNormOp>(op) &&
          op->hasAttr(kReduceStatsAttrName)) {
        // Per-row sums (and sums of squares) in float32, over tp.
        auto x = cast<RankedTensorType>(op->getResult(0).getType());
        double rows = elementsOf(x) / double(x.getShape().back());
        double stats = isa<dit::LayerNormOp>(op) ? 2 : 1;
        work.collectives.push_back(
            {CollectiveKind::AllReduce, {Axis::TP}, rows * stats * 4});
      }
    }
    return success();
  }

  /// Attention's FLOPs by the keys each kernel call sees. Ring attention
  /// calls the kernel once for the replicated text rows and once per hop's
  /// image block, merges every block after the first into the running
  /// float32 output (opFlops counts the merges' FLOPs; the profile prices
  /// their bytes), and moves the K and V image rows to the next member
  /// (the plan's accounting of the op's own traffic: 2 shifts a hop),
  /// hidden behind that hop's attention as far as the hardware overlaps
  /// them.
  void accountAttention(dit::AttentionOp attention, double flops, double bytes,
                        BlockWork &work) {
    std::optional<RingAttentionShape> ring = ringAttentionShape(attention, mesh);
    std::optional<Traffic> shifts = opTraffic(attention, mesh);
    if (!ring || !shifts || shifts->kind != "shift" || shifts->count < 2) {
      auto q = cast<RankedTensorType>(attention.getInputs()[0].getType());
      double keys = attention.getInputs().size() > 1
                        ? double(cast<RankedTensorType>(
                                     attention.getInputs()[1].getType())
                                     .getDimSize(1))
                        : double(q.getDimSize(1));
      work.compute.add(OpClass::Attention, flops, bytes);
      work.compute.attentionFlopsByKeys[keys] += flops;
      return;
    }
    double merge = double(kRingMergeFlopsPerElement) *
                   double(ring->outputElements) * double(ring->merges);
    double scores = flops - merge;
    double seen = double(ring->textKeys + ring->blockKeys * ring->members);
    double perBlock = seen > 0 ? scores * double(ring->blockKeys) / seen : 0;
    work.compute.add(OpClass::Attention, scores, bytes);
    work.compute.attentionFlopsByKeys[double(ring->blockKeys)] +=
        perBlock * double(ring->members);
    if (ring->textKeys > 0)
      work.compute.attentionFlopsByKeys[double(ring->textKeys)] +=
          scores - perBlock * double(ring->members);
    work.compute.add(OpClass::Elementwise, merge, 0);
    work.compute.ringMergeElements +=
        double(ring->outputElements) * double(ring->merges);
    int64_t hops = shifts->count / 2;
    // Each hop is launched op by op: the send/recv pair, the block's
    // attention and the online-softmax merge's element-wise ops (about
    // seven in ring-flash-attention's update of the output and its LSE).
    constexpr double kLaunchesPerRingHop = 10;
    work.compute.launches += double(hops) * kLaunchesPerRingHop;
    CollectiveWork shift{CollectiveKind::RingShift, {Axis::Ring},
                         double(shifts->bytes) / double(hops), hops, perBlock};
    shift.overlapKeys = double(ring->blockKeys);
    work.collectives.push_back(shift);
  }

  /// For each block b, the bytes of values defined at or before b (or
  /// arguments) that an op after b reads: a stage boundary after b sends
  /// them.
  void computeCuts(func::FuncOp fn, TransformerWork &out) {
    size_t n = out.blocks.size();
    // value -> (block it is made in, last block that reads it)
    std::vector<std::pair<Value, std::pair<int64_t, int64_t>>> spans;
    llvm::DenseMap<Value, size_t> index;
    auto note = [&](Value v, int64_t made) {
      index[v] = spans.size();
      spans.push_back({v, {made, made}});
    };
    for (BlockArgument arg : fn.getArguments())
      note(arg, -1);
    for (Operation &op : fn.front()) {
      int64_t block = isa<func::ReturnOp>(op) ? int64_t(n) : blockOf(&op);
      for (Value v : op.getOperands())
        if (auto it = index.find(v); it != index.end())
          spans[it->second].second.second =
              std::max(spans[it->second].second.second, block);
      for (Value v : op.getResults())
        note(v, block);
    }
    for (auto &[value, span] : spans)
      for (int64_t b = std::max<int64_t>(span.first, 0);
           b < span.second && b < int64_t(n); ++b)
        out.blocks[b].cutBytes += bytesOf(value.getType());
  }

  const MeshInfo &mesh;
  llvm::DenseMap<Operation *, int64_t> blocks;
};

/// Adds one encoder graph's ops to `work`; `earlierOutputs` are the bytes
/// of the encoders' results that ran before it (alive until the call ends).
void accountTextEncoder(dit::ComponentOp component, double earlierOutputs,
                        TextEncodeWork &work) {
  // The graphs carry their local types after dit-partition-text-encoder,
  // so a mesh of one rank reads each op's own share.
  MeshInfo local;
  std::set<std::string> seen;
  Block &body = component.getBody().front();
  for (Operation &each : body) {
    Operation *op = &each;
    if (launchesKernel(op))
      work.compute.launches += 1;
    if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      ++work.allReduces;
      work.allReduceBytes += bytesOf(reduce.getInput().getType());
    } else if (op->getNumResults() > 0) {
      // A parameter two ops read (T5's tied embedding, its bias table)
      // is held once.
      double weights = 0;
      for (const ParamSlice &slice : parameterSlices(op, local))
        if (seen.insert(slice.name).second)
          weights += double(slice.localBytes);
      work.paramBytes += weights;
      double flops = double(opFlops(op, local));
      double bytes = bytesOf(op->getOperandTypes()) + bytesOf(op->getResultTypes()) + weights;
      if (auto attention = dyn_cast<dit::AttentionOp>(op)) {
        double keys = double(cast<RankedTensorType>(attention.getInputs()[1].getType())
                                 .getDimSize(1));
        work.compute.add(OpClass::Attention, flops, bytes);
        work.compute.attentionFlopsByKeys[keys] += flops;
      } else {
        work.compute.add(isa<dit::LinearOp>(op) ? OpClass::Gemm : OpClass::Elementwise, flops,
                         bytes, weights);
      }
    }
  }
  work.peakActivationBytes =
      std::max(work.peakActivationBytes, peakLiveBytes(body, earlierOutputs));
}

} // namespace

FailureOr<std::optional<TextEncodeWork>>
partitionAndExtractTextEncoders(ModuleOp imported, int64_t tp) {
  auto encoders = [](ModuleOp module) {
    SmallVector<dit::ComponentOp> out;
    if (auto fn = module.lookupSymbol<func::FuncOp>("text_encoder"); fn && !fn.isExternal())
      fn.walk([&](dit::ComponentOp op) {
        if (op.getKind() == dit::ComponentKind::TextEncoder)
          out.push_back(op);
      });
    return out;
  };
  SmallVector<dit::ComponentOp> found = encoders(imported);
  if (found.empty() || llvm::any_of(found, [](dit::ComponentOp c) {
        return c.getBody().empty();
      }))
    return std::optional<TextEncodeWork>();
  MLIRContext *context = imported.getContext();
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(imported->clone()));
  if (tp > 1) {
    Deployment deployment;
    deployment.numGpus = tp;
    Placement transformer, encoder;
    transformer.component = "transformer";
    encoder.component = "text_encoder";
    encoder.degrees[Axis::TP] = tp;
    deployment.placements = {transformer, encoder};
    (*module)->setAttr(dit::DitDialect::kDeploymentAttrName,
                       deploymentToAttribute(*context, deployment));
    PassManager pm(context);
    pm.enableVerifier(false);
    pm.addPass(createPartitionTextEncoder());
    if (failed(pm.run(*module)))
      return failure();
  }
  TextEncodeWork work;
  work.tpSize = tp;
  double outputs = 0;
  for (dit::ComponentOp component : encoders(*module)) {
    accountTextEncoder(component, outputs, work);
    outputs += bytesOf(component->getResultTypes());
    for (Type t : component->getResultTypes())
      if (auto tensor = dyn_cast<RankedTensorType>(t); tensor && tensor.getElementType().isF32())
        work.bf16 = false;
  }
  // What the transformer reads: @text_encoder's results after the
  // pipeline's assembly (SD3 concatenates and pads).
  auto fn = (*module).lookupSymbol<func::FuncOp>("text_encoder");
  work.outputBytes = bytesOf(fn.getResultTypes());
  return std::optional<TextEncodeWork>(std::move(work));
}

FailureOr<TransformerWork> extractTransformerWork(ModuleOp module) {
  FailureOr<MeshInfo> mesh = readMeshInfo(module);
  if (failed(mesh))
    return failure();
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() ||
        dit::getComponent(fn) != dit::PipelineComponent::Transformer)
      continue;
    TransformerWork work;
    Extractor extractor(*mesh);
    if (failed(extractor.run(fn, work)))
      return failure();
    for (Value arg : fn.getArguments())
      if (auto t = dyn_cast<RankedTensorType>(arg.getType())) {
        work.elementBytes = bytesPerElement(t);
        break;
      }
    // The second expert runs the same shapes (its steps are the first's
    // work on other weights); only its parameters add to the rank's memory.
    for (auto other : module.getOps<func::FuncOp>()) {
      if (other.isExternal() ||
          dit::getComponent(other) != dit::PipelineComponent::Transformer2)
        continue;
      std::set<std::string> seen;
      other.walk([&](Operation *op) {
        for (const ParamSlice &slice : parameterSlices(op, *mesh))
          if (seen.insert(slice.name).second)
            work.otherExpertParamBytes += double(slice.localBytes);
      });
    }
    return work;
  }
  return module.emitError() << "the module has no @transformer to price";
}

FailureOr<TransformerWork> partitionAndExtract(ModuleOp imported,
                                               const Degrees &shape) {
  MLIRContext *context = imported.getContext();
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(imported->clone()));
  (*module)->removeAttr(dit::DitDialect::kDeploymentAttrName);
  (*module)->setAttr(
      dit::DitDialect::kMeshAttrName,
      dit::MeshAttr::get(context, 1, 1, 1, shape[Axis::Ring],
                         shape[Axis::KVGather], shape[Axis::Ulysses],
                         shape[Axis::TP]));
  PassManager pm(context);
  pm.enableVerifier(false);
  pm.addPass(createMeshLayout());
  pm.addPass(createPropagateSharding());
  pm.addPass(createInsertCollectives());
  if (failed(pm.run(*module)))
    return failure();
  return extractTransformerWork(*module);
}

} // namespace ditc
