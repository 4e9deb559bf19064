//===- LowerRoles.cpp - the dit-lower-roles pass --------------------------===//
//
// Specializes each denoising step function for every (PP stage, CFG
// coordinate) role, and records which role every rank runs.
//
//===----------------------------------------------------------------------===//
#include "ditc/Analysis/Legality.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/Transforms/Passes.h"
#include "VerifiedPass.h"
#include "ditc/Transforms/Roles.h"
#include "ditc/Transforms/StepInputs.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace ditc {
#define GEN_PASS_DEF_LOWERROLES
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;
using namespace mlir::dit;

namespace ditc {
namespace {

/// One run's lowering, for the mesh dit-mesh-layout laid out.
struct RoleLowering {
  DitDialect &dialect;
  const MeshInfo &mesh;

  LogicalResult run(ModuleOp module) {
    int64_t stages = mesh.size(Axis::PP), cfg = mesh.size(Axis::CFG);
    SmallVector<func::FuncOp> steps;
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto component = dialect.getComponentAttrHelper().getAttr(fn);
      if (!fn.isExternal() && component &&
          component.getValue() == PipelineComponent::DenoiseStep)
        steps.push_back(fn);
    }
    if (steps.empty())
      return module.emitError() << "dit-lower-roles found no @denoise_step";
    for (func::FuncOp step : steps) {
      if (failed(requireStepInput(step, "latents")))
        return failure();
      // The last stage sends the updated latents, its first result, back.
      if (step.front().getTerminator()->getNumOperands() == 0)
        return step.emitError() << "dit-lower-roles expects @"
                                << step.getName() << " to return the latents";
    }
    OpBuilder b(module.getContext());
    SmallVector<Attribute> roles;
    for (func::FuncOp step : steps) {
      for (int64_t s = 0; s < stages; ++s)
        for (int64_t c = 0; c < cfg; ++c) {
          FailureOr<func::FuncOp> role = lower(b, step, s, c, stages, cfg);
          if (failed(role))
            return failure();
          roles.push_back(FlatSymbolRefAttr::get(role->getNameAttr()));
        }
      step.erase();
    }

    // Rank table: role index s * cfg + c of the first step function.
    Deployment deployment = deploymentFromModule(module);
    // The replicas as dit-mesh-layout laid them out, in the grid's order.
    Placement transformer = layOut(*deployment.find("transformer"), mesh.order);
    std::vector<Degrees> coords =
        rankCoordinates(transformer, mesh.order, deployment.numGpus);
    SmallVector<int64_t> table;
    for (const Degrees &c : coords)
      table.push_back(c[Axis::PP] < 0 ? -1 : c[Axis::PP] * cfg + c[Axis::CFG]);
    dialect.getRolesAttrHelper().setAttr(module, b.getArrayAttr(roles));
    dialect.getRankRolesAttrHelper().setAttr(module,
                                             b.getDenseI64ArrayAttr(table));
    return success();
  }

  /// The stage function a transformer call runs on stage `s`.
  FailureOr<FlatSymbolRefAttr> stageCallee(func::CallOp call, int64_t s) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    ArrayAttr stagesAttr =
        callee ? dialect.getStagesAttrHelper().getAttr(callee) : ArrayAttr();
    if (!stagesAttr)
      return call.getCalleeAttr();
    // The verifier checked that dit.stages holds symbol references.
    if (s >= int64_t(stagesAttr.size()))
      return call.emitError()
             << "@" << callee.getName() << " is split into "
             << stagesAttr.size() << " stages, but the mesh has "
             << mesh.size(Axis::PP) << " pipeline stages";
    return cast<FlatSymbolRefAttr>(stagesAttr[s]);
  }

  FailureOr<func::FuncOp> lower(OpBuilder &b, func::FuncOp step, int64_t s,
                                int64_t c, int64_t stages, int64_t cfg) {
    b.setInsertionPoint(step);
    auto role = cast<func::FuncOp>(b.clone(*step));
    role.setName((step.getName() + "_s" + Twine(s) + "_c" + Twine(c)).str());
    dialect.getRoleAttrHelper().setAttr(role,
                                        RoleAttr::get(b.getContext(), s, c));
    // This role's branch inputs.
    SmallVector<CFGSelectOp> selects;
    role.walk([&](CFGSelectOp op) { selects.push_back(op); });
    for (CFGSelectOp select : selects) {
      // The op's verifier checked its slot against its own cfg.
      if (select.getCfg() != cfg)
        return select.emitError()
               << "selects for cfg " << select.getCfg()
               << ", but the mesh has cfg " << cfg;
      int64_t perRank = select.getInputs().size() / cfg;
      select.replaceAllUsesWith(select.getInputs()[c * perRank + select.getSlot()]);
      select.erase();
    }
    SmallVector<func::CallOp> calls;
    role.walk([&](func::CallOp call) { calls.push_back(call); });
    bool last = s == stages - 1;
    Location loc = role.getLoc();
    FailureOr<BlockArgument> latentsArg = requireStepInput(role, "latents");
    if (failed(latentsArg))
      return failure();
    Value latents = *latentsArg;
    if (!last) {
      // Only the stage's share of each branch call; the prediction, the
      // combine and the update happen on the last stage. The new body is
      // built after the old terminator, then the old body is erased (the
      // calls' operands are all function arguments).
      Block &body = role.front();
      Operation *oldTerminator = body.getTerminator();
      b.setInsertionPointToEnd(&body);
      for (func::CallOp call : calls) {
        FailureOr<FlatSymbolRefAttr> callee = stageCallee(call, s);
        if (failed(callee))
          return failure();
        func::CallOp::create(b, loc, *callee, TypeRange{}, call.getOperands());
      }
      Value next = latents;
      if (s == 0) {
        Value empty = tensor::EmptyOp::create(b, 
            loc, cast<RankedTensorType>(latents.getType()).getShape(),
            cast<RankedTensorType>(latents.getType()).getElementType());
        auto recv = shard::RecvOp::create(b, 
            loc, latents.getType(), kGridName,
            ArrayRef<int16_t>{mesh.gridAxis(Axis::PP)}, empty,
            b.getDenseI64ArrayAttr({stages - 1}), ValueRange{});
        dialect.getBetweenStepsAttrHelper().setAttr(recv, b.getUnitAttr());
        next = recv.getResult();
      }
      func::ReturnOp::create(b, loc, next);
      SmallVector<Operation *> old;
      for (Operation &op : body) {
        old.push_back(&op);
        if (&op == oldTerminator)
          break;
      }
      for (Operation *op : llvm::reverse(old))
        op->erase();
      return role;
    }
    for (func::CallOp call : calls) {
      FailureOr<FlatSymbolRefAttr> callee = stageCallee(call, s);
      if (failed(callee))
        return failure();
      call.setCalleeAttr(*callee);
    }
    if (stages > 1) {
      Operation *terminator = role.front().getTerminator();
      b.setInsertionPoint(terminator);
      auto send = shard::SendOp::create(b, 
          loc, terminator->getOperand(0).getType(), kGridName,
          ArrayRef<int16_t>{mesh.gridAxis(Axis::PP)}, terminator->getOperand(0),
          ArrayRef<int64_t>{0}, ValueRange{});
      dialect.getBetweenStepsAttrHelper().setAttr(send, b.getUnitAttr());
    }
    return role;
  }
};

struct LowerRolesPass
    : VerifiedPass<impl::LowerRolesBase<LowerRolesPass>> {
  void runOnModule() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> mesh = readMeshInfo(module);
    if (failed(mesh))
      return signalPassFailure();
    RoleLowering lowering{DitDialect::get(&getContext()), *mesh};
    if (failed(lowering.run(module)))
      signalPassFailure();
  }
};

} // namespace
} // namespace ditc
