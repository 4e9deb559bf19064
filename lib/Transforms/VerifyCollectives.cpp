//===- VerifyCollectives.cpp - the dit-verify-collectives pass ------------===//
//
// Every group's member ranks must issue the same collectives on that group,
// and pipeline sends must meet matching receives. A role program that
// breaks this would hang (a collective some members never join) or scramble
// data (mismatched shapes); here it is a compile error naming the op.
//
//===----------------------------------------------------------------------===//
#include "ditc/Transforms/BandPrograms.h"
#include "ditc/Transforms/Passes.h"
#include "ditc/Transforms/Roles.h"

#include "dit/IR/DitOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
    // The VAE's band programs (dit-partition-vae) stand alone: a module
    // may hold them without role programs (dit-opt on a decoder).
    bool hasBands = false;
    if (failed(verifyBandPrograms(module, hasBands)))
      return signalPassFailure();
    auto &dialect = dit::DitDialect::get(&getContext());
    if (hasBands && !dialect.getRolesAttrHelper().getAttr(module))
      return;
    FailureOr<MeshInfo> mesh = readMeshInfo(module);
    // The verifier checked each attribute's kind and ranges (role indices
    // within dit.roles, groups that partition the same ranks per axis).
    ArrayAttr roles = dialect.getRolesAttrHelper().getAttr(module);
    DenseI64ArrayAttr table = dialect.getRankRolesAttrHelper().getAttr(module);
    dit::GroupsAttr groups = dialect.getGroupsAttrHelper().getAttr(module);
    if (failed(mesh) || !roles || !table || !groups) {
      module.emitError() << "dit-verify-collectives needs the role programs, "
                            "rank table and groups of --dit-lower-roles and "
                            "--dit-mesh-layout";
      return signalPassFailure();
    }
    int64_t perStep = mesh->size(Axis::PP) * mesh->size(Axis::CFG);
    // With one role per step every group's members run the same program:
    // their collectives match by construction.
    if (perStep == 1)
      return;
    // Role indices name one step function's roles.
    for (int64_t role : table.asArrayRef())
      if (role >= perStep) {
        module.emitError() << "'dit.rank_roles' holds role " << role
                           << ", but a step has only " << perStep
                           << " roles (pp " << mesh->size(Axis::PP) << " x cfg "
                           << mesh->size(Axis::CFG) << ")";
        return signalPassFailure();
      }
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
        for (DenseI64ArrayAttr list : groups.of(toMeshAxis(axis))) {
          ArrayRef<int64_t> ranks = list.asArrayRef();
          ok &= checkGroup(axis, gridAxis, ranks, table.asArrayRef(), base,
                           programs, calls);
        }
      }
      ok &= checkPipeline(*mesh, base, programs, calls);
      if (ok)
        ok &= checkProgress(*mesh, base, perStep, table.asArrayRef(), groups,
                            programs, calls);
    }
    if (!ok)
      signalPassFailure();
  }

  /// The band programs of the VAE decode: every band issues the same
  /// exchanges in the same order, each halo it expects from a neighbour is
  /// rows that neighbour holds, and each convolution's halo is what its
  /// kernel reads beyond the band (so every output row reads the rows it
  /// reads on one rank).
  static LogicalResult verifyBandPrograms(ModuleOp module, bool &found) {
    FailureOr<std::map<int64_t, func::FuncOp>> programs = bandPrograms(module);
    if (failed(programs))
      return failure();
    std::map<int64_t, func::FuncOp> &bands = *programs;
    found = !bands.empty();
    if (!found)
      return success();
    auto grid = module.lookupSymbol<shard::GridOp>(kVaeBandGridName);
    int64_t count = int64_t(bands.size());
    if (!grid || grid.getShape().size() != 1 || grid.getShape()[0] != count ||
        bands.rbegin()->first != count - 1) {
      module.emitError() << "the module holds " << count
                         << " VAE band programs, which need bands 0 to " << count - 1
                         << " and a one-axis grid @" << kVaeBandGridName << " of " << count;
      return failure();
    }
    std::vector<std::vector<BandExchange>> calls;
    for (auto &[band, fn] : bands)
      calls.push_back(collectBandExchanges(fn));
    auto name = [&](int64_t band) { return "@" + bands[band].getName().str(); };
    for (int64_t band = 1; band < count; ++band)
      for (size_t i = 0; i < std::max(calls[0].size(), calls[band].size()); ++i) {
        std::string want = i < calls[0].size() ? calls[0][i].signature : "nothing";
        std::string got = i < calls[band].size() ? calls[band][i].signature : "nothing";
        if (want == got)
          continue;
        Operation *where = i < calls[band].size() ? calls[band][i].op
                                                  : bands[band].getOperation();
        where->emitError() << "collective mismatch in the VAE band group: " << name(band)
                           << " issues " << got << " as its exchange #" << i << " where "
                           << name(0) << " issues " << want
                           << "; the decoding ranks would hang or exchange mismatched data";
        return failure();
      }
    for (size_t i = 0; i < calls[0].size(); ++i) {
      if (calls[0][i].kind != "update_halo")
        continue;
      for (int64_t band = 0; band < count; ++band) {
        const BandExchange &e = calls[band][i];
        if (band == 0 && e.top != 0) {
          e.op->emitError() << "expects " << e.top << " halo rows from above, but "
                            << name(0) << " holds the image's first rows";
          return failure();
        }
        if (band == count - 1 && e.bottom != 0) {
          e.op->emitError() << "expects " << e.bottom << " halo rows from below, but "
                            << name(band) << " holds the image's last rows";
          return failure();
        }
        if (band + 1 < count) {
          const BandExchange &below = calls[band + 1][i];
          if (below.rows < e.bottom || e.rows < below.top) {
            bool short1 = below.rows < e.bottom;
            const BandExchange &needy = short1 ? e : below;
            needy.op->emitError()
                << name(short1 ? band : band + 1) << " expects "
                << (short1 ? e.bottom : below.top) << " halo rows from "
                << name(short1 ? band + 1 : band) << ", which holds only "
                << (short1 ? below.rows : e.rows) << " rows there";
            return failure();
          }
        }
        // The convolution that reads the halo: its kernel's reach, on every
        // side a neighbour has.
        for (Operation *user : e.op->getUsers()) {
          auto conv = dyn_cast<dit::ConvOp>(user);
          if (!conv)
            continue;
          int64_t reach = conv.getHaloRows();
          int64_t wantTop = band > 0 ? reach : 0, wantBottom = band + 1 < count ? reach : 0;
          if (e.top != wantTop || e.bottom != wantBottom) {
            conv.emitError() << "in " << name(band) << " reads " << reach
                             << " rows beyond each edge, so it needs halo [" << wantTop
                             << ", " << wantBottom << "], but the exchange gives [" << e.top
                             << ", " << e.bottom
                             << "]: its edge rows would differ from one rank's";
            return failure();
          }
        }
      }
    }
    // A convolution that reads beyond its band without any exchange pads
    // the band's edge with zeros where the image has rows.
    for (auto &[band, fn] : bands) {
      WalkResult result = fn.walk([&, band = band](dit::ConvOp conv) {
        if (count < 2 || conv.getHaloRows() == 0 ||
            conv.getInput().getDefiningOp<shard::UpdateHaloOp>())
          return WalkResult::advance();
        conv.emitError() << "in " << name(band) << " reads " << conv.getHaloRows()
                         << " rows beyond its band's edges but receives no halo "
                            "(shard.update_halo): its edge rows would differ from one "
                            "rank's";
        return WalkResult::interrupt();
      });
      if (result.wasInterrupted())
        return failure();
    }
    return success();
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
            << rankList(std::vector<int64_t>(ranks.begin(), ranks.end())) << ": @" << programs[role].getName()
            << " issues " << got << " as its collective #" << i << " on "
            << axisName(axis) << " where @" << programs[first].getName()
            << " issues " << want
            << "; the group's ranks would hang or exchange mismatched data";
        return false;
      }
    }
    return true;
  }

  /// Every stage's sends to another stage must meet that stage's receives
  /// from it one for one, for every cfg coordinate (forward hidden states,
  /// and the latents the last stage returns to the first).
  bool checkPipeline(const MeshInfo &mesh, size_t base,
                     std::vector<func::FuncOp> &programs,
                     const std::vector<std::vector<CollectiveCall>> &calls) {
    int64_t stages = mesh.size(Axis::PP), cfg = mesh.size(Axis::CFG);
    if (stages < 2)
      return true;
    int16_t ppAxis = mesh.gridAxis(Axis::PP);
    for (int64_t c = 0; c < cfg; ++c)
      for (int64_t s = 0; s < stages; ++s)
        for (int64_t to = 0; to < stages; ++to) {
          if (to == s)
            continue;
          size_t sender = base + s * cfg + c, receiver = base + to * cfg + c;
          std::vector<const CollectiveCall *> sends, recvs;
          for (const CollectiveCall *call : onAxis(calls[sender], ppAxis, "send"))
            if (call->peer == to)
              sends.push_back(call);
          for (const CollectiveCall *call :
               onAxis(calls[receiver], ppAxis, "recv"))
            if (call->peer == s)
              recvs.push_back(call);
          for (size_t i = 0; i < std::max(sends.size(), recvs.size()); ++i) {
            std::string sent =
                i < sends.size() ? sends[i]->signature.substr(5) : "nothing";
            std::string received =
                i < recvs.size() ? recvs[i]->signature.substr(5) : "nothing";
            if (sent == received)
              continue;
            Operation *where = i < recvs.size() ? recvs[i]->op : sends[i]->op;
            where->emitError()
                << "pipeline mismatch between stage " << s << " and stage "
                << to << ": @" << programs[sender].getName() << " sends "
                << sent << " as its transfer #" << i << " but @"
                << programs[receiver].getName() << " receives " << received;
            return false;
          }
        }
    return true;
  }

  /// Runs the role programs' collectives against each other, as the ranks
  /// would: a group collective fires when every member role has reached it,
  /// a send when its receiver has reached the matching receive. If some
  /// program can never proceed, the plan would hang; the error names the
  /// collective each stuck program waits in. Collectives whose group
  /// members all run the same program (tp, ulysses, ring, kv_gather, dp)
  /// fire by symmetry.
  bool checkProgress(const MeshInfo &mesh, size_t base, size_t perStep,
                     ArrayRef<int64_t> table, dit::GroupsAttr groups,
                     std::vector<func::FuncOp> &programs,
                     const std::vector<std::vector<CollectiveCall>> &calls) {
    // A representative rank per role, and its partner roles on each axis.
    std::vector<int64_t> representative(perStep, -1);
    for (size_t rank = 0; rank < table.size(); ++rank)
      if (table[rank] >= 0 && representative[table[rank]] < 0)
        representative[table[rank]] = int64_t(rank);
    std::map<std::pair<size_t, int16_t>, std::vector<size_t>> partnerCache;
    auto partners = [&](size_t role, int16_t gridAxis) -> const std::vector<size_t> & {
      auto key = std::make_pair(role, gridAxis);
      if (auto it = partnerCache.find(key); it != partnerCache.end())
        return it->second;
      std::vector<size_t> &out = partnerCache[key];
      Axis axis = mesh.order[gridAxis];
      int64_t rank = representative[role];
      if (rank < 0)
        return out;
      for (DenseI64ArrayAttr list : groups.of(toMeshAxis(axis))) {
        ArrayRef<int64_t> ranks = list.asArrayRef();
        if (!llvm::is_contained(ranks, rank))
          continue;
        for (int64_t member : ranks)
          if (member < int64_t(table.size()) && table[member] >= 0 &&
              !llvm::is_contained(out, size_t(table[member])))
            out.push_back(size_t(table[member]));
      }
      return out;
    };
    int16_t ppAxis = mesh.gridAxis(Axis::PP);
    int64_t cfg = mesh.size(Axis::CFG);
    std::vector<size_t> position(perStep, 0);
    auto current = [&](size_t role) -> const CollectiveCall * {
      const auto &list = calls[base + role];
      return position[role] < list.size() ? &list[position[role]] : nullptr;
    };
    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (size_t role = 0; role < perStep; ++role) {
        const CollectiveCall *call = current(role);
        if (!call)
          continue;
        if (call->kind == "send" || call->kind == "recv") {
          // The peer role: same cfg coordinate, the named stage.
          size_t peer = size_t(call->peer) * cfg + role % cfg;
          const CollectiveCall *other = peer < perStep ? current(peer) : nullptr;
          int64_t stage = int64_t(role) / cfg;
          bool matches = other && other->peer == stage &&
                         ((call->kind == "send" && other->kind == "recv") ||
                          (call->kind == "recv" && other->kind == "send")) &&
                         llvm::is_contained(other->gridAxes, ppAxis);
          if (matches) {
            ++position[role];
            ++position[peer];
            progressed = true;
          }
          continue;
        }
        std::vector<size_t> members;
        for (int16_t axis : call->gridAxes)
          for (size_t m : partners(role, axis))
            if (!llvm::is_contained(members, m))
              members.push_back(m);
        bool ready = llvm::all_of(members, [&](size_t m) {
          const CollectiveCall *other = current(m);
          return m == role || (other && other->signature == call->signature);
        });
        if (ready) {
          for (size_t m : members)
            if (m != role)
              ++position[m];
          ++position[role];
          progressed = true;
        }
      }
    }
    bool ok = true;
    for (size_t role = 0; role < perStep; ++role)
      if (const CollectiveCall *stuck = current(role)) {
        stuck->op->emitError()
            << "@" << programs[base + role].getName() << " would wait forever in "
            << stuck->signature
            << ": the ranks it needs are blocked in other collectives, so the "
               "plan would hang";
        ok = false;
      }
    return ok;
  }
};

} // namespace
} // namespace ditc
