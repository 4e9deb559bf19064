//===- VerifyCollectives.cpp - the dit-verify-collectives pass ------------===//
//
// Every group's member ranks must issue the same collectives on that group,
// and pipeline sends must meet matching receives. A role program that
// breaks this would hang (a collective some members never join) or scramble
// data (mismatched shapes); here it is a compile error naming the op.
//
//===----------------------------------------------------------------------===//
#include "ditc/Transforms/Passes.h"
#include "ditc/Transforms/Roles.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <map>

namespace ditc {
#define GEN_PASS_DEF_VERIFYCOLLECTIVES
#include "ditc/Transforms/Passes.h.inc"
} // namespace ditc

using namespace mlir;

namespace ditc {
namespace {

struct VerifyCollectivesPass
    : impl::VerifyCollectivesBase<VerifyCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<MeshInfo> mesh = readMeshInfo(module);
    auto roles = module->getAttrOfType<ArrayAttr>(kRolesAttrName);
    auto table = module->getAttrOfType<DenseI64ArrayAttr>(kRankRolesAttrName);
    auto groups = module->getAttrOfType<DictionaryAttr>(kGroupsAttrName);
    if (failed(mesh) || !roles || !table || !groups) {
      module.emitError() << "dit-verify-collectives needs the role programs, "
                            "rank table and groups of --dit-lower-roles and "
                            "--dit-mesh-layout";
      return signalPassFailure();
    }
    int64_t perStep = mesh->size(Axis::PP) * mesh->size(Axis::CFG);
    std::vector<func::FuncOp> programs;
    std::vector<std::vector<CollectiveCall>> calls;
    for (Attribute ref : roles) {
      auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          module, cast<FlatSymbolRefAttr>(ref));
      if (!fn) {
        module.emitError() << "role " << ref << " is not a function";
        return signalPassFailure();
      }
      programs.push_back(fn);
      calls.push_back(collectCollectives(fn));
    }
    bool ok = true;
    // Each denoising-step function has perStep roles in a row.
    for (size_t base = 0; base + perStep <= programs.size(); base += perStep) {
      for (Axis axis : kAllAxes) {
        int16_t gridAxis = mesh->gridAxis(axis);
        auto lists = groups.getAs<ArrayAttr>(axisName(axis));
        if (!lists)
          continue;
        for (Attribute list : lists) {
          ArrayRef<int64_t> ranks = cast<DenseI64ArrayAttr>(list).asArrayRef();
          ok &= checkGroup(axis, gridAxis, ranks, table.asArrayRef(), base,
                           programs, calls);
        }
      }
      ok &= checkPipeline(*mesh, base, programs, calls);
    }
    if (!ok)
      signalPassFailure();
  }

  static std::vector<const CollectiveCall *>
  onAxis(const std::vector<CollectiveCall> &calls, int16_t gridAxis,
         const char *only = nullptr) {
    std::vector<const CollectiveCall *> out;
    for (const CollectiveCall &c : calls)
      if (llvm::is_contained(c.gridAxes, gridAxis) &&
          (!only || c.kind == only))
        out.push_back(&c);
    return out;
  }

  static std::string rankList(ArrayRef<int64_t> ranks) {
    std::string out = "[";
    for (size_t i = 0; i < ranks.size(); ++i)
      out += (i ? ", " : "") + std::to_string(ranks[i]);
    return out + "]";
  }

  bool checkGroup(Axis axis, int16_t gridAxis, ArrayRef<int64_t> ranks,
                  ArrayRef<int64_t> table, size_t base,
                  std::vector<func::FuncOp> &programs,
                  const std::vector<std::vector<CollectiveCall>> &calls) {
    if (axis == Axis::PP)
      return true; // point-to-point, checked pairwise
    int64_t first = -1;
    for (int64_t rank : ranks) {
      if (rank >= int64_t(table.size()) || table[rank] < 0)
        continue;
      int64_t role = base + table[rank];
      if (first < 0) {
        first = role;
        continue;
      }
      if (role == first)
        continue;
      auto expected = onAxis(calls[first], gridAxis);
      auto actual = onAxis(calls[role], gridAxis);
      for (size_t i = 0; i < std::max(expected.size(), actual.size()); ++i) {
        std::string want = i < expected.size() ? expected[i]->signature : "nothing";
        std::string got = i < actual.size() ? actual[i]->signature : "nothing";
        if (want == got)
          continue;
        Operation *where = i < actual.size() ? actual[i]->op
                                             : programs[role].getOperation();
        where->emitError()
            << "collective mismatch in " << axisName(axis) << " group "
            << rankList(ranks) << ": @" << programs[role].getName()
            << " issues " << got << " as its collective #" << i << " on "
            << axisName(axis) << " where @" << programs[first].getName()
            << " issues " << want
            << "; the group's ranks would hang or exchange mismatched data";
        return false;
      }
    }
    return true;
  }

  /// Stage s's sends to s + 1 must meet stage s + 1's receives from s, one
  /// for one, for every cfg coordinate; likewise the latents the last stage
  /// sends back to the first.
  bool checkPipeline(const MeshInfo &mesh, size_t base,
                     std::vector<func::FuncOp> &programs,
                     const std::vector<std::vector<CollectiveCall>> &calls) {
    int64_t stages = mesh.size(Axis::PP), cfg = mesh.size(Axis::CFG);
    if (stages < 2)
      return true;
    int16_t ppAxis = mesh.gridAxis(Axis::PP);
    for (int64_t c = 0; c < cfg; ++c)
      for (int64_t s = 0; s < stages; ++s) {
        int64_t to = (s + 1) % stages;
        size_t sender = base + s * cfg + c, receiver = base + to * cfg + c;
        std::vector<const CollectiveCall *> sends, recvs;
        for (const CollectiveCall *call : onAxis(calls[sender], ppAxis, "send"))
          if (call->peer == to)
            sends.push_back(call);
        for (const CollectiveCall *call : onAxis(calls[receiver], ppAxis, "recv"))
          if (call->peer == s)
            recvs.push_back(call);
        for (size_t i = 0; i < std::max(sends.size(), recvs.size()); ++i) {
          std::string sent = i < sends.size()
                                 ? sends[i]->signature.substr(5)
                                 : "nothing";
          std::string received = i < recvs.size()
                                     ? recvs[i]->signature.substr(5)
                                     : "nothing";
          if (sent == received)
            continue;
          Operation *where = i < recvs.size() ? recvs[i]->op : sends[i]->op;
          where->emitError()
              << "pipeline mismatch between stage " << s << " and stage " << to
              << ": @" << programs[sender].getName() << " sends " << sent
              << " as its transfer #" << i << " but @"
              << programs[receiver].getName() << " receives " << received;
          return false;
        }
      }
    return true;
  }
};

} // namespace
} // namespace ditc
