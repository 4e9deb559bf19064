//===- Program.cpp - what the executor and the tracer share of a program --===//
#include "ditc/Runtime/Plan/Program.h"

#include <map>
#include <sstream>

namespace ditc::runtime {

static std::vector<std::string> words(const char *text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;)
    out.push_back(word);
  return out;
}

const std::vector<PlanOpInfo> &planOps() {
  static const std::vector<PlanOpInfo> ops = {
#define PLAN_OP(kind, name, attributeKeys) {OpKind::kind, name, words(attributeKeys)},
#include "ditc/Runtime/Plan/PlanOps.def"
  };
  return ops;
}

const std::vector<CompileOnlyOp> &compileOnlyOps() {
  static const std::vector<CompileOnlyOp> ops = {
#define COMPILE_ONLY_OP(name, why) {name, why},
#include "ditc/Runtime/Plan/PlanOps.def"
  };
  return ops;
}

std::optional<OpKind> planOpKind(const std::string &name) {
  static const std::map<std::string, OpKind> byName = [] {
    std::map<std::string, OpKind> out;
    for (const PlanOpInfo &op : planOps())
      out.emplace(op.name, op.kind);
    return out;
  }();
  auto it = byName.find(name);
  if (it == byName.end())
    return std::nullopt;
  return it->second;
}

const char *planOpName(OpKind kind) { return planOps()[size_t(kind)].name; }

std::vector<int64_t> ranksRunning(const Manifest &manifest, const std::string &id) {
  std::vector<int64_t> out;
  for (const RankEntry &entry : manifest.ranks)
    if (entry.program == id || entry.program2 == id)
      out.push_back(entry.rank);
  return out;
}

const Op *overlappedAttentionAt(const Function &fn, size_t index) {
  if (index + 2 >= fn.ops.size() || fn.ops[index].kind != OpKind::AllToAll)
    return nullptr;
  const Op &attention = fn.ops[index + 2];
  if (attention.kind != OpKind::Attention || attention.a.overlapHeadGroups < 2)
    return nullptr;
  return &attention;
}

const Op *overlappedLinearAt(const Function &fn, size_t index) {
  if (index + 1 >= fn.ops.size() || fn.ops[index].kind != OpKind::Linear)
    return nullptr;
  const Op &reduce = fn.ops[index + 1];
  if (reduce.kind != OpKind::AllReduce || reduce.a.overlapRowChunks < 2)
    return nullptr;
  return &reduce;
}

std::vector<HeadGroupExchange> headGroupSchedule(int64_t groups) {
  std::vector<HeadGroupExchange> order{{false, 0}};
  for (int64_t g = 0; g < groups; ++g) {
    if (g + 1 < groups)
      order.push_back({false, g + 1});
    order.push_back({true, g});
  }
  return order;
}

} // namespace ditc::runtime
