//===- SplitStages.cpp - the dit-split-stages pass ------------------------===//
//
// Assigns every op of a transformer to a pipeline stage and rebuilds each
// stage as its own function, with shard.send / shard.recv on the pp grid
// axis for every value that crosses a stage boundary.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/Legality.h"
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Passes.h"
#include "VerifiedPass.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace ditc {
#define GEN_PASS_DEF_SPLITSTAGES
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

struct SplitStagesPass
    : VerifiedPass<impl::SplitStagesBase<SplitStagesPass>> {
  DitDialect &dialect() {
    return DitDialect::get(&getContext());
  }

  void runOnModule() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> mesh = readMeshInfo(module);
    if (failed(mesh))
      return signalPassFailure();
    int64_t stages = mesh->size(Axis::PP);
    if (stages < 2)
      return;
    ModelAttr model = dialect().getModelAttrHelper().getAttr(module);
    if (!model) {
      module.emitError() << "dit-split-stages needs the module's dit.model";
      return signalPassFailure();
    }
    Deployment deployment = deploymentFromModule(module);
    std::vector<int64_t> partition = deployment.find("transformer")->ppPartition;
    if (partition.empty())
      partition = defaultPipelinePartition(model.getNumBlocks(), stages);
    int64_t covered = 0;
    for (int64_t n : partition)
      covered += n;
    if (int64_t(partition.size()) != stages || covered != model.getNumBlocks()) {
      module.emitError() << "pipeline partition does not cover the "
                         << model.getNumBlocks() << " blocks in " << stages
                         << " stages; run --dit-check-legality";
      return signalPassFailure();
    }
    // Block index -> stage.
    std::vector<int64_t> stageOfBlock;
    for (int64_t s = 0; s < stages; ++s)
      stageOfBlock.insert(stageOfBlock.end(), partition[s], s);

    SmallVector<func::FuncOp> transformers;
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto component = dialect().getComponentAttrHelper().getAttr(fn);
      if (!fn.isExternal() && component &&
          (component.getValue() == PipelineComponent::Transformer ||
           component.getValue() == PipelineComponent::Transformer2))
        transformers.push_back(fn);
    }
    for (func::FuncOp fn : transformers)
      if (failed(split(fn, stageOfBlock, stages, mesh->gridAxis(Axis::PP))))
        return signalPassFailure();
  }

  LogicalResult split(func::FuncOp fn, const std::vector<int64_t> &stageOfBlock,
                      int64_t stages, int16_t ppAxis) {
    // 1. A stage for every op.
    llvm::DenseMap<Operation *, int64_t> stageOf;
    SmallVector<Operation *> ops;
    for (Operation &op : fn.front().without_terminator()) {
      int64_t stage = 0;
      if (IntegerAttr block = dialect().getBlockAttrHelper().getAttr(&op)) {
        if (block.getInt() >= int64_t(stageOfBlock.size()))
          return op.emitError() << "block " << block.getInt()
                                << " is beyond the model's "
                                << stageOfBlock.size() << " blocks";
        stage = stageOfBlock[block.getInt()];
      } else {
        for (Value operand : op.getOperands())
          if (Operation *def = operand.getDefiningOp())
            stage = std::max(stage, stageOf.lookup(def));
      }
      // Stages run in order: an op cannot read a value a later stage
      // computes (a dit.block out of step with the data flow).
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && stageOf.lookup(def) > stage)
          return op.emitError()
                 << "runs on pipeline stage " << stage
                 << " but reads a value computed on stage " << stageOf.lookup(def)
                 << ": its 'dit.block' is out of step with the data flow";
      stageOf[&op] = stage;
      ops.push_back(&op);
    }
    Operation *terminator = fn.front().getTerminator();
    for (Value v : terminator->getOperands())
      if (Operation *def = v.getDefiningOp(); def && stageOf[def] != stages - 1)
        return def->emitError() << "the transformer's result is computed on "
                                   "stage "
                                << stageOf[def] << ", not the last stage";

    // 2. Values crossing each boundary k -> k+1, in definition order.
    std::vector<SmallVector<Value>> crossing(stages - 1);
    for (Operation *op : ops)
      for (Value result : op->getResults()) {
        int64_t last = stageOf[op];
        for (Operation *user : result.getUsers())
          if (user != terminator)
            last = std::max(last, stageOf[fn.front().findAncestorOpInBlock(*user)]);
        if (last > stageOf[op] && !isa<RankedTensorType>(result.getType()))
          return op->emitError() << "a " << result.getType()
                                 << " cannot cross pipeline stages; only "
                                    "ranked tensors are sent";
        for (int64_t k = stageOf[op]; k < last; ++k)
          crossing[k].push_back(result);
      }

    // 3. Build the stage functions.
    OpBuilder b(fn.getContext());
    SmallVector<Attribute> names;
    for (int64_t s = 0; s < stages; ++s) {
      b.setInsertionPoint(fn);
      std::string name = (fn.getName() + "_stage" + Twine(s)).str();
      SmallVector<Type> results;
      if (s == stages - 1)
        results.assign(fn.getResultTypes().begin(), fn.getResultTypes().end());
      auto stage = func::FuncOp::create(b, 
          fn.getLoc(), name,
          b.getFunctionType(fn.getArgumentTypes(), results));
      dialect().getComponentAttrHelper().setAttr(
          stage, dialect().getComponentAttrHelper().getAttr(fn));
      dialect().getStageAttrHelper().setAttr(stage, b.getI64IntegerAttr(s));
      names.push_back(FlatSymbolRefAttr::get(stage.getNameAttr()));
      Block *entry = stage.addEntryBlock();
      b.setInsertionPointToStart(entry);
      IRMapping map;
      map.map(fn.getArguments(), entry->getArguments());
      if (s > 0)
        for (Value v : crossing[s - 1]) {
          Value empty = tensor::EmptyOp::create(b, 
              fn.getLoc(), cast<RankedTensorType>(v.getType()).getShape(),
              cast<RankedTensorType>(v.getType()).getElementType());
          auto recv = shard::RecvOp::create(b, 
              fn.getLoc(), v.getType(), kGridName, ArrayRef<int16_t>{ppAxis},
              empty, b.getDenseI64ArrayAttr({s - 1}), ValueRange{});
          map.map(v, recv.getResult());
        }
      for (Operation *op : ops)
        if (stageOf[op] == s)
          b.clone(*op, map);
      if (s < stages - 1)
        for (Value v : crossing[s])
          shard::SendOp::create(b, fn.getLoc(), v.getType(), kGridName,
                                  ArrayRef<int16_t>{ppAxis}, map.lookup(v),
                                  ArrayRef<int64_t>{s + 1}, ValueRange{});
      SmallVector<Value> returned;
      if (s == stages - 1)
        for (Value v : terminator->getOperands())
          returned.push_back(map.lookupOrDefault(v));
      func::ReturnOp::create(b, fn.getLoc(), returned);
    }
    // The original becomes a declaration naming its stages.
    fn.getBody().getBlocks().clear();
    fn.setPrivate();
    dialect().getStagesAttrHelper().setAttr(fn, b.getArrayAttr(names));
    return success();
  }
};

} // namespace
} // namespace ditc
