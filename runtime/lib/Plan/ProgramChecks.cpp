//===- ProgramChecks.cpp - checks of a program as a whole -----------------===//
#include "ditc/Runtime/Plan/ProgramChecks.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <functional>
#include <map>

namespace ditc::runtime {

using Shape = std::vector<int64_t>;

[[noreturn]] static void failIn(const Program &p, const Function &fn,
                                const std::string &problem) {
  throw BadInput(p.file + ": function '" + escapeInvalidUtf8(fn.name) + "' " + problem);
}


/// Calls form no cycle, nest at most kMaxCallDepth deep, and one step
/// runs at most kMaxOpsPerStep ops once every call is expanded: a program
/// of 30 calls per level, 7 levels deep, is refused here rather than run.
void checkCallGraph(const Program &p) {
  std::map<const Function *, std::pair<int, int64_t>> done; // depth, ops
  std::vector<const Function *> stack;
  std::function<std::pair<int, int64_t>(const Function &)> visit =
      [&](const Function &f) -> std::pair<int, int64_t> {
    if (auto it = done.find(&f); it != done.end())
      return it->second;
    if (std::find(stack.begin(), stack.end(), &f) != stack.end())
      failIn(p, f, "is called recursively (through " +
                    escapeInvalidUtf8(stack.back()->name) +
                    "); plans never recurse");
    stack.push_back(&f);
    int depth = 0;
    int64_t ops = 0;
    for (const Op &o : f.ops) {
      ops += 1;
      if (o.kind != OpKind::Call)
        continue;
      auto callee = p.functions.find(o.callee);
      if (callee == p.functions.end())
        failIn(p, f, "calls '" + escapeInvalidUtf8(o.callee) +
                      "', which is not under 'functions'");
      auto [calleeDepth, calleeOps] = visit(callee->second);
      depth = std::max(depth, calleeDepth + 1);
      ops = std::min(ops + calleeOps, kMaxOpsPerStep + 1);
    }
    stack.pop_back();
    if (depth > kMaxCallDepth)
      failIn(p, f, "nests calls " + std::to_string(depth) +
                    " deep; a plan nests at most " +
                    std::to_string(kMaxCallDepth));
    return done[&f] = {depth, ops};
  };
  int64_t total = visit(p.step).second;
  if (total > kMaxOpsPerStep)
    throw BadInput(p.file + ": one step runs more than " +
                   std::to_string(kMaxOpsPerStep) +
                   " ops once its calls are expanded; a real plan runs at "
                   "most a few thousand");
}

/// The executor draws each parameter once, by name, and hands that tensor
/// to every op naming it: two ops must not disagree on its shape or slice.
void checkParametersAgree(const Program &p) {
  std::map<std::string, const ParamSpec *> byName;
  auto visit = [&](const Function &f) {
    for (const Op &o : f.ops)
      for (const ParamSpec &spec : o.params) {
        auto [it, fresh] = byName.emplace(spec.name, &spec);
        const ParamSpec &first = *it->second;
        if (!fresh && (first.shape != spec.shape || first.splitDim != spec.splitDim ||
                       first.segments != spec.segments ||
                       first.onlyOnTpZero != spec.onlyOnTpZero))
          failIn(p, f, "reads parameter '" + escapeInvalidUtf8(spec.name) +
                        "' as " + formatShape(spec.shape) +
                        " where another op reads it as " + formatShape(first.shape) +
                        " (or with another split); a parameter has one layout");
      }
  };
  visit(p.step);
  for (const auto &entry : p.functions)
    visit(entry.second);
}

/// The values the runner feeds in and gathers out have the shapes it
/// makes: latent tokens [B, S/n, F], timestep and guidance [B], sigmas
/// 0-d, text [B, T, E], pooled text [B, P], the text mask [B, T], one
/// output like the latents.
void checkStepInterface(const Manifest &m, const Program &p) {
  Shape latents = {m.batch, m.latentTokens / m.latentBlocks(), m.latentFeatures};
  std::vector<char> seen(p.step.valueShapes.size(), 0);
  for (const StepInput &in : p.inputs) {
    Shape expected;
    if (in.name == "latents")
      expected = latents;
    else if (in.name == "timestep" || in.name == "guidance")
      expected = {m.batch};
    else if (in.name == "sigma" || in.name == "sigma_next")
      expected = {};
    else if (in.name == "text")
      expected = {m.batch, m.textTokens, m.textEmbedDim};
    else if (in.name == "text_mask")
      expected = {m.batch, m.textTokens};
    else
      expected = {m.batch, m.pooledDim};
    const Shape &declared = p.step.valueShapes[in.value];
    if (declared != expected)
      throw BadInput(p.file + ": input '" + in.name + "' is value " +
                     std::to_string(in.value) + " of shape " + formatShape(declared) +
                     ", but the runner feeds " + formatShape(expected));
    if (seen[in.value])
      throw BadInput(p.file + ": value " + std::to_string(in.value) +
                     " is named by two step inputs");
    seen[in.value] = 1;
  }
  if (p.step.results.size() != 1)
    throw BadInput(p.file + ": lists " + std::to_string(p.step.results.size()) +
                   " outputs; a program has one (the next latents)");
  const Shape &out = p.step.valueShapes[p.step.results[0]];
  if (out != latents)
    throw BadInput(p.file + ": the output has shape " + formatShape(out) +
                   ", but this rank's latent block is " + formatShape(latents));
}

} // namespace ditc::runtime
