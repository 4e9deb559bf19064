//===- PlanValidator.cpp - a program checked against the ops' semantics ---===//
//
// The plan hash proves that the ranks agree on a plan, not that the plan is
// sane. This pass walks a decoded program once, before any rank joins the
// rendezvous, and proves what the executor then assumes: every operand
// exists when it is read, every shape is the one the op computes from its
// attributes and operands, collectives split evenly over their groups, and
// the step's total work is bounded. Nothing malformed reaches ATen or c10d.
//
//===----------------------------------------------------------------------===//
#include "ditc/Runtime/Plan/PlanValidator.h"
#include "ditc/Runtime/Plan/ProgramChecks.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/ReadFile.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace ditc::runtime {

namespace {

using Shape = std::vector<int64_t>;

int64_t elementsOf(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n = std::min(n * d, kMaxValueElements + 1); // d <= 2^31: no overflow
  return n;
}

class ProgramValidator {
public:
  ProgramValidator(const Manifest &manifest, const Program &program,
                   const std::vector<int64_t> &ranks)
      : m(manifest), p(program), ranks(ranks) {}

  void run() {
    checkCallGraph(p);
    checkParametersAgree(p);
    checkStepInterface(m, p);
    std::vector<char> defined(p.step.valueShapes.size(), 0);
    for (const StepInput &in : p.inputs)
      defined[in.value] = 1;
    checkFunction(p.step, defined);
    for (const auto &[name, fn] : p.functions) {
      std::vector<char> args(fn.valueShapes.size(), 0);
      for (int id : fn.args) {
        if (args[id])
          failIn(fn, "lists value " + std::to_string(id) + " twice under 'args'");
        args[id] = 1;
      }
      checkFunction(fn, args);
    }
  }

private:
  [[noreturn]] void failIn(const Function &fn, const std::string &problem) const {
    throw BadInput(p.file + ": function '" + escapeInvalidUtf8(fn.name) + "' " +
                   problem);
  }

  [[noreturn]] void fail(const std::string &problem) const {
    std::string where = p.file + ": function '" + escapeInvalidUtf8(fn->name) +
                        "', op #" + std::to_string(opIndex) + " '" + op->name + "'";
    if (op->a.block >= 0)
      where += " (block " + std::to_string(op->a.block) + ")";
    throw BadInput(where + ": " + problem);
  }

  //===--------------------------------------------------------------------===//
  // One function
  //===--------------------------------------------------------------------===//

  void checkFunction(const Function &f, std::vector<char> defined) {
    fn = &f;
    for (opIndex = 0; opIndex < f.ops.size(); ++opIndex) {
      op = &f.ops[opIndex];
      for (int id : op->inputs)
        if (!defined[id])
          fail("reads value " + std::to_string(id) + " before any op defines it");
      checkOp();
      for (int id : op->outputs) {
        if (defined[id])
          fail("defines value " + std::to_string(id) +
               ", which is already defined; values are defined once");
        defined[id] = 1;
      }
    }
    for (int id : f.results)
      if (!defined[id])
        failIn(f, "returns value " + std::to_string(id) + ", which no op defines");
  }

  const Shape &in(size_t i) const { return fn->valueShapes[op->inputs[i]]; }
  const Shape &out(size_t i) const { return fn->valueShapes[op->outputs[i]]; }

  /// Positions run over the whole `grid`: `shards` blocks of `image` rows,
  /// one per rank of the latent split (or one for the whole grid).
  void checkGridShards(const std::array<int64_t, 3> &grid, int64_t shards,
                       int64_t image) const {
    if (image < 0)
      fail("has fewer rows than text_tokens");
    if (shards != 1 && shards != m.latentBlocks())
      fail("sequence_shards is " + std::to_string(shards) +
           ", but the latents are split into " + std::to_string(m.latentBlocks()) +
           " blocks");
    int64_t gridTokens = elementsOf({grid[0], grid[1], grid[2]});
    if (gridTokens != image * shards)
      fail("grid [" + std::to_string(grid[0]) + ", " + std::to_string(grid[1]) +
           ", " + std::to_string(grid[2]) + "] holds " +
           std::to_string(gridTokens) + " positions, but " +
           std::to_string(shards) + " shard(s) of " + std::to_string(image) +
           " image rows need " + std::to_string(image * shards));
  }

  void expectCounts(size_t minIn, size_t maxIn, size_t outs) const {
    if (op->inputs.size() < minIn || op->inputs.size() > maxIn)
      fail("has " + std::to_string(op->inputs.size()) + " operands; expected " +
           (minIn == maxIn ? std::to_string(minIn)
                           : std::to_string(minIn) + " to " + std::to_string(maxIn)));
    if (op->outputs.size() != outs)
      fail("has " + std::to_string(op->outputs.size()) + " results; expected " +
           std::to_string(outs));
  }
  void expectRank(const Shape &shape, size_t rank, const char *what) const {
    if (shape.size() != rank)
      fail(std::string(what) + " has shape " + formatShape(shape) + "; expected " +
           std::to_string(rank) + " dimensions");
  }
  void expectResult(const Shape &expected, size_t i = 0) const {
    if (out(i) != expected)
      fail("result " + std::to_string(i) + " is declared " + formatShape(out(i)) +
           ", but the op computes " + formatShape(expected));
  }
  /// A pooling's optional second operand: the text mask [B, L] of its [B, L, E].
  void expectTokenMask() const {
    if (op->inputs.size() == 2 && in(1) != Shape{in(0)[0], in(0)[1]})
      fail("mask is " + formatShape(in(1)) + "; expected " +
           formatShape({in(0)[0], in(0)[1]}) + ", one entry per token");
  }
  void expectAxis(int64_t axis, size_t rank, const char *attr) const {
    if (axis < 0 || size_t(axis) >= rank)
      fail("attribute '" + std::string(attr) + "' is " + std::to_string(axis) +
           ", outside the operand's " + std::to_string(rank) + " dimensions");
  }
  void expectParams(size_t min, size_t max) const {
    if (op->params.size() < min || op->params.size() > max)
      fail("lists " + std::to_string(op->params.size()) + " parameters; expected " +
           (min == max ? std::to_string(min)
                       : std::to_string(min) + " to " + std::to_string(max)));
  }
  /// The slice of parameter `i` this rank holds.
  Shape param(size_t i) const {
    const ParamSpec &spec = op->params[i];
    Shape local = spec.shape;
    if (spec.splitDim >= 0)
      local[spec.splitDim] /= m.axisSize("tp");
    return local;
  }
  void expectParam(size_t i, const Shape &expected) const {
    if (param(i) != expected)
      fail("parameter '" + escapeInvalidUtf8(op->params[i].name) + "' is " +
           formatShape(param(i)) + " on this rank, but the operands need " +
           formatShape(expected));
  }

  /// The group size of the op's axes, the same for every rank that runs the
  /// program; and, for send and recv, the peer must be another member.
  int64_t groupSize() {
    auto it = groups.find(op->axes);
    if (it == groups.end())
      it = groups.emplace(op->axes, m.groupPlaces(op->axes)).first;
    const Manifest::GroupPlaces &g = it->second;
    int64_t size = -1;
    for (int64_t r : ranks) {
      if (size >= 0 && g.size[r] != size)
        fail("runs over groups of different sizes on different ranks (" +
             std::to_string(size) + " and " + std::to_string(g.size[r]) + ")");
      size = g.size[r];
      if ((op->kind == OpKind::Send || op->kind == OpKind::Recv) &&
          (op->a.peer >= g.size[r] || op->a.peer == g.index[r]))
        fail(std::string("attribute '") +
             (op->kind == OpKind::Send ? "destination" : "source") + "' is [" +
             std::to_string(op->a.peer) + "], but rank " + std::to_string(r) +
             " is member " + std::to_string(g.index[r]) + " of a group of " +
             std::to_string(g.size[r]) + "; the peer must be another member");
    }
    return std::max<int64_t>(size, 1);
  }

  void checkOp() {
    const OpAttrs &a = op->a;
    if (op->betweenSteps) {
      // After the last step the op passes its first operand through.
      if (op->inputs.empty() || op->outputs.size() != 1 || in(0) != out(0))
        fail("is marked dit.between_steps, so its one result must have its "
             "first operand's shape");
    }
    switch (op->kind) {
    case OpKind::Call: {
      const Function &callee = p.functions.at(op->callee);
      if (callee.args.size() != op->inputs.size() ||
          callee.results.size() != op->outputs.size())
        fail("passes " + std::to_string(op->inputs.size()) + " values and takes " +
             std::to_string(op->outputs.size()) + ", but '" +
             escapeInvalidUtf8(op->callee) + "' has " +
             std::to_string(callee.args.size()) + " arguments and " +
             std::to_string(callee.results.size()) + " results");
      for (size_t i = 0; i < callee.args.size(); ++i)
        if (in(i) != callee.valueShapes[callee.args[i]])
          fail("passes " + formatShape(in(i)) + " as argument " + std::to_string(i) +
               ", which '" + escapeInvalidUtf8(op->callee) + "' declares " +
               formatShape(callee.valueShapes[callee.args[i]]));
      for (size_t i = 0; i < callee.results.size(); ++i)
        expectResult(callee.valueShapes[callee.results[i]], i);
      break;
    }
    case OpKind::TimestepEmbedding: {
      expectCounts(1, 1, 1);
      expectRank(in(0), 1, "the timestep");
      expectParams(4, 4);
      int64_t hidden = param(0).empty() ? 0 : param(0)[0];
      expectParam(0, {hidden, a.freqDim});
      expectParam(1, {hidden});
      int64_t width = param(2).empty() ? 0 : param(2)[0];
      expectParam(2, {width, hidden});
      expectParam(3, {width});
      expectResult({in(0)[0], width});
      break;
    }
    case OpKind::PatchEmbed:
    case OpKind::Linear: {
      expectCounts(1, 1, 1);
      if (in(0).empty())
        fail("operand is 0-d; a linear map needs a feature dimension");
      // SD3's patch embedding also adds rows of its position table.
      bool table = a.posEmbedMaxSize > 0;
      if (table)
        expectParams(3, 3);
      else
        expectParams(1, 2);
      if (param(0).size() != 2)
        fail("weight '" + escapeInvalidUtf8(op->params[0].name) + "' is " +
             formatShape(param(0)) + "; expected [out, in]");
      int64_t outFeatures = param(0)[0];
      expectParam(0, {outFeatures, in(0).back()});
      if (op->a.patchVolume > 0 && in(0).back() % op->a.patchVolume)
        fail("patch tokens have " + std::to_string(in(0).back()) +
             " features, not C values for each of the " +
             std::to_string(op->a.patchVolume) + " patch positions");
      if (op->params.size() >= 2)
        expectParam(1, {outFeatures});
      if (table) {
        expectRank(in(0), 3, "the patch tokens");
        int64_t side = a.posEmbedMaxSize;
        expectParam(2, {1, side * side, outFeatures});
        if (a.grid[0] != 1 || a.grid[1] > side || a.grid[2] > side)
          fail("grid [" + std::to_string(a.grid[0]) + ", " +
               std::to_string(a.grid[1]) + ", " + std::to_string(a.grid[2]) +
               "] is not one frame within the " + std::to_string(side) + "x" +
               std::to_string(side) + " position table");
        if (a.sequenceShards != 1 && a.sequenceShards != m.latentBlocks())
          fail("sequence_shards is " + std::to_string(a.sequenceShards) +
               ", but the latents are split into " +
               std::to_string(m.latentBlocks()) + " blocks");
        if (a.grid[1] * a.grid[2] != in(0)[1] * a.sequenceShards)
          fail("grid [1, " + std::to_string(a.grid[1]) + ", " +
               std::to_string(a.grid[2]) + "] does not hold " +
               std::to_string(a.sequenceShards) + " shard(s) of " +
               std::to_string(in(0)[1]) + " tokens");
      }
      Shape result = in(0);
      result.back() = outFeatures;
      expectResult(result);
      break;
    }
    case OpKind::AdalnModulation: {
      expectCounts(1, 1, 1);
      expectRank(in(0), 2, "the conditioning");
      int64_t batch = in(0)[0];
      if (a.table) {
        expectParams(1, 1);
        // The conditioning is one chunk broadcast over the table (Wan's
        // final norm) or one row per chunk: [B, D] or [B, N * D].
        // [1, N, D] (Wan) or [N, D] (LTX-Video), as the checkpoint stores it.
        Shape table = param(0);
        if (table.size() == 2)
          table.insert(table.begin(), 1);
        if (table.size() != 3 || (table[0] != 1 && table[0] != batch) ||
            table[1] != a.numChunks ||
            (in(0)[1] != table[2] && in(0)[1] != table[1] * table[2]))
          fail("table '" + escapeInvalidUtf8(op->params[0].name) + "' is " +
               formatShape(table) + ", which does not fit the conditioning " +
               formatShape(in(0)) + " in " + std::to_string(a.numChunks) +
               " chunks: expected [1, " + std::to_string(a.numChunks) +
               ", D] or [" + std::to_string(a.numChunks) + ", D] with the conditioning [B, D] or [B, " +
               std::to_string(a.numChunks) + " * D]");
        expectResult({batch, a.numChunks, table[2]});
      } else {
        expectParams(2, 2);
        int64_t features = param(0).empty() ? 0 : param(0)[0];
        expectParam(0, {features, in(0)[1]});
        expectParam(1, {features});
        if (features % a.numChunks)
          fail(std::to_string(features) + " features do not split into " +
               std::to_string(a.numChunks) + " chunks");
        expectResult({batch, a.numChunks, features / a.numChunks});
      }
      break;
    }
    case OpKind::Modulate: {
      expectCounts(2, 2, 1);
      expectRank(in(0), 3, "the operand");
      checkChunks(in(1), a.scaleChunk, "scale");
      if (a.shiftChunk >= 0)
        checkChunks(in(1), a.shiftChunk, "shift");
      expectResult(in(0));
      break;
    }
    case OpKind::ResidualAdd:
      expectCounts(2, 3, 1);
      if (in(1) != in(0))
        fail("adds " + formatShape(in(1)) + " to " + formatShape(in(0)) + "; shapes must match");
      if (op->inputs.size() == 3) {
        expectRank(in(0), 3, "the residual");
        if (a.gateChunk < 0)
          fail("has a gate operand but no 'gate_chunk' attribute");
        checkChunks(in(2), a.gateChunk, "gate_chunk");
      }
      expectResult(in(0));
      break;
    case OpKind::LayerNorm:
    case OpKind::RmsNorm: {
      expectCounts(1, 1, 1);
      if (in(0).empty())
        fail("operand is 0-d; a norm needs a feature dimension");
      int64_t width = in(0).back();
      int64_t group = a.groupSize ? a.groupSize : width;
      if (group <= 0 || width % group)
        fail("group_size " + std::to_string(group) + " does not divide the width " +
             std::to_string(width));
      if (a.affine) {
        expectParams(1, op->kind == OpKind::LayerNorm ? 2 : 1);
        Shape weight = param(0);
        if (weight != Shape{width} && weight != Shape{group})
          fail("weight '" + escapeInvalidUtf8(op->params[0].name) + "' is " +
               formatShape(weight) + "; expected [" + std::to_string(width) + "] or [" +
               std::to_string(group) + "]");
        if (op->params.size() == 2)
          expectParam(1, weight);
      }
      if (!op->axes.empty())
        groupSize();
      expectResult(in(0));
      break;
    }
    case OpKind::Rope: {
      expectCounts(1, 1, 1);
      expectRank(in(0), 3, "the operand");
      int64_t seq = in(0)[1], width = in(0)[2];
      if (width % a.numHeads)
        fail(std::to_string(a.numHeads) + " heads do not divide the width " +
             std::to_string(width));
      int64_t headDim = width / a.numHeads;
      if (a.ropeLtx) {
        // One table over the whole width: W / 6 pairs per axis.
        int64_t full = width * a.headShards, pairs = 2 * (full / 6);
        if (full % 2 || a.axesDims[0] != pairs || a.axesDims[1] != pairs ||
            a.axesDims[2] != pairs)
          fail("an ltx rope over the width " + std::to_string(full) +
               " needs an even width and axes_dims [" + std::to_string(pairs) +
               ", " + std::to_string(pairs) + ", " + std::to_string(pairs) + "]");
        if (a.headShards != 1 && a.headShards != m.axisSize("tp"))
          fail("head_shards is " + std::to_string(a.headShards) +
               ", but an ltx rope's heads are split by tp, of size " +
               std::to_string(m.axisSize("tp")));
        if (a.textTokens != 0)
          fail("an ltx rope turns image rows only, but text_tokens is " +
               std::to_string(a.textTokens));
      } else if (a.axesDims[0] + a.axesDims[1] + a.axesDims[2] > headDim)
        fail("axes_dims [" + std::to_string(a.axesDims[0]) + ", " +
             std::to_string(a.axesDims[1]) + ", " + std::to_string(a.axesDims[2]) +
             "] rotate more than the head dim " + std::to_string(headDim));
      if (a.textTokens > seq)
        fail("text_tokens " + std::to_string(a.textTokens) + " exceeds the " +
             std::to_string(seq) + " rows");
      checkGridShards(a.grid, a.sequenceShards, seq - a.textTokens);
      // Learned frequencies: one row per axis and head, one per pair.
      expectParams(0, 1);
      if (!op->params.empty()) {
        if (headDim % 2)
          fail("learned frequencies need an even head dim, got " +
               std::to_string(headDim));
        expectParam(0, {3, a.numHeads, headDim / 2});
      }
      expectResult(in(0));
      break;
    }
    case OpKind::AttentionPool: {
      expectCounts(1, 2, 1);
      expectRank(in(0), 3, "the operand");
      expectRank(out(0), 2, "the result");
      expectTokenMask();
      int64_t e = in(0)[2], d = out(0)[1];
      if (e % a.numHeads)
        fail(std::to_string(a.numHeads) + " heads do not divide the width " +
             std::to_string(e));
      expectParams(6, 6);
      expectParam(0, {2 * e, e});
      expectParam(1, {2 * e});
      expectParam(2, {e, e});
      expectParam(3, {e});
      expectParam(4, {d, e});
      expectParam(5, {d});
      expectResult({in(0)[0], d});
      break;
    }
    case OpKind::TokenMean: {
      expectCounts(1, 2, 1);
      expectRank(in(0), 3, "the operand");
      if (in(0)[1] < 1)
        fail("averages a sequence of no tokens");
      expectTokenMask();
      expectResult({in(0)[0], in(0)[2]});
      break;
    }
    case OpKind::SincosPosEmbed: {
      expectCounts(1, 1, 1);
      expectRank(in(0), 3, "the operand");
      int64_t image = in(0)[1], width = in(0)[2];
      if (width % 16)
        fail("the width " + std::to_string(width) +
             " does not divide by 16 (a quarter for frames, 3/8 per spatial "
             "axis, each half sines and half cosines)");
      checkGridShards(a.grid, a.sequenceShards, image);
      expectResult(in(0));
      break;
    }
    case OpKind::Attention: {
      // The text mask, when the op has one, is a fourth input after q, k, v.
      size_t masks = a.keyMask ? 1 : 0;
      expectCounts(1 + 3 * masks, 3 + masks, 1);
      Shape q, k;
      if (op->inputs.size() == 1) {
        expectRank(in(0), 3, "the stacked q/k/v");
        if (in(0)[2] % 3)
          fail("stacked q/k/v width " + std::to_string(in(0)[2]) +
               " does not split in three");
        q = k = {in(0)[0], in(0)[1], in(0)[2] / 3};
      } else if (op->inputs.size() == 3 + masks) {
        expectRank(in(0), 3, "q");
        expectRank(in(1), 3, "k");
        q = in(0);
        k = in(1);
        if (in(2) != k)
          fail("v is " + formatShape(in(2)) + " but k is " + formatShape(k));
        if (k[0] != q[0] || k[2] != q[2])
          fail("k is " + formatShape(k) + " but q is " + formatShape(q) +
               "; batch and width must match");
      } else {
        fail("has 2 operands; attention takes q, k, v or one stacked operand");
      }
      if (q[2] % a.numHeads)
        fail(std::to_string(a.numHeads) + " heads do not divide the width " +
             std::to_string(q[2]));
      if (a.textTokens > k[1])
        fail("text_tokens " + std::to_string(a.textTokens) + " exceeds the " +
             std::to_string(k[1]) + " key rows");
      if (Shape mask{q[0], a.textTokens > 0 ? a.textTokens : k[1]}; masks && in(3) != mask)
        fail("key mask is " + formatShape(in(3)) + "; expected " + formatShape(mask) +
             ", one entry per text key");
      if (a.overlapHeadGroups > 1)
        checkOverlappedRegion();
      if (!op->axes.empty())
        groupSize();
      expectResult(q);
      break;
    }
    case OpKind::Activation: {
      expectCounts(1, 1, 1);
      Shape result = in(0);
      if (a.activation == ActivationKind::SwiGlu ||
          a.activation == ActivationKind::GeGlu) {
        if (result.empty() || result.back() % 2)
          fail("a gated activation needs an even last dimension, not " +
               formatShape(in(0)));
        result.back() /= 2;
      }
      expectResult(result);
      break;
    }
    case OpKind::ConcatStreams: {
      expectCounts(2, 2, 1);
      expectRank(in(0), 3, "the first stream");
      expectRank(in(1), 3, "the second stream");
      if (in(0)[0] != in(1)[0] || in(0)[2] != in(1)[2])
        fail("streams " + formatShape(in(0)) + " and " + formatShape(in(1)) +
             " differ in batch or width");
      expectResult({in(0)[0], in(0)[1] + in(1)[1], in(0)[2]});
      break;
    }
    case OpKind::SplitStreams: {
      expectCounts(1, 1, 2);
      expectRank(in(0), 3, "the operand");
      expectRank(out(0), 3, "the text result");
      int64_t text = out(0)[1];
      if (text > in(0)[1])
        fail("splits " + std::to_string(text) + " text rows off " +
             std::to_string(in(0)[1]));
      expectResult({in(0)[0], text, in(0)[2]}, 0);
      expectResult({in(0)[0], in(0)[1] - text, in(0)[2]}, 1);
      break;
    }
    case OpKind::TensorConcat: {
      expectCounts(1, 64, 1);
      size_t rank = in(0).size();
      expectAxis(a.axis, rank, "dim");
      Shape result = in(0);
      for (size_t i = 1; i < op->inputs.size(); ++i) {
        Shape other = in(i);
        if (other.size() != rank)
          fail("concatenates " + formatShape(other) + " with " + formatShape(in(0)));
        result[a.axis] += other[a.axis];
        other[a.axis] = in(0)[a.axis];
        if (other != in(0))
          fail("concatenates " + formatShape(in(i)) + " with " + formatShape(in(0)) +
               " along dim " + std::to_string(a.axis) +
               "; the other dimensions must match");
      }
      expectResult(result);
      break;
    }
    case OpKind::TensorEmpty:
      expectCounts(0, 0, 1);
      break;
    case OpKind::Stack: {
      expectCounts(1, 64, 1);
      for (size_t i = 1; i < op->inputs.size(); ++i)
        if (in(i) != in(0))
          fail("stacks " + formatShape(in(i)) + " with " + formatShape(in(0)));
      expectAxis(a.axis, in(0).size() + 1, "axis");
      Shape result = in(0);
      result.insert(result.begin() + a.axis, int64_t(op->inputs.size()));
      expectResult(result);
      break;
    }
    case OpKind::Unstack: {
      if (op->inputs.size() != 1)
        fail("has " + std::to_string(op->inputs.size()) + " operands; expected 1");
      expectAxis(a.axis, in(0).size(), "axis");
      if (int64_t(op->outputs.size()) != in(0)[a.axis])
        fail("has " + std::to_string(op->outputs.size()) + " results, but dim " +
             std::to_string(a.axis) + " of " + formatShape(in(0)) + " unstacks into " +
             std::to_string(in(0)[a.axis]));
      Shape result = in(0);
      result.erase(result.begin() + a.axis);
      for (size_t i = 0; i < op->outputs.size(); ++i)
        expectResult(result, i);
      break;
    }
    case OpKind::Split: {
      expectCounts(1, 1, a.parts);
      expectAxis(a.axis, in(0).size(), "axis");
      if (in(0)[a.axis] % a.parts != 0)
        fail("splits dim " + std::to_string(a.axis) + " of " + formatShape(in(0)) +
             " into " + std::to_string(a.parts) + " parts; expected a size that " +
             std::to_string(a.parts) + " divides");
      Shape result = in(0);
      result[a.axis] /= a.parts;
      for (size_t i = 0; i < op->outputs.size(); ++i)
        expectResult(result, i);
      break;
    }
    case OpKind::CfgCombine:
      expectCounts(a.guidanceScales.size() + 1, a.guidanceScales.size() + 1, 1);
      for (size_t i = 1; i < op->inputs.size(); ++i)
        if (in(i) != in(0))
          fail("combines " + formatShape(in(i)) + " with " + formatShape(in(0)));
      expectResult(in(0));
      break;
    case OpKind::SchedulerStep:
      expectCounts(4, 4, 1);
      if (in(1) != in(0))
        fail("steps latents " + formatShape(in(0)) + " with velocity " + formatShape(in(1)));
      if (!in(2).empty() || !in(3).empty())
        fail("sigmas are " + formatShape(in(2)) + " and " + formatShape(in(3)) +
             "; expected 0-d values");
      expectResult(in(0));
      break;
    case OpKind::AllReduce:
      expectCounts(1, 1, 1);
      groupSize();
      expectResult(in(0));
      if (a.overlapRowChunks > 1) {
        // The executor computes the linear before it chunk by chunk and
        // reduces each chunk as the next one is computed.
        const Op *linear = opIndex > 0 ? &fn->ops[opIndex - 1] : nullptr;
        if (!linear || linear->kind != OpKind::Linear ||
            linear->outputs[0] != op->inputs[0] || readsOf(op->inputs[0]) != 1)
          fail("attribute 'overlap_row_chunks' is " +
               std::to_string(a.overlapRowChunks) +
               ", but the operand is not the result of the dit.linear just before "
               "it, read by this all_reduce only");
      }
      break;
    case OpKind::AllGather: {
      expectCounts(1, 1, 1);
      expectAxis(a.axis, in(0).size(), "gather_axis");
      Shape result = in(0);
      result[a.axis] *= groupSize();
      expectResult(result);
      break;
    }
    case OpKind::AllToAll: {
      expectCounts(1, 1, 1);
      expectAxis(a.splitAxis, in(0).size(), "split_axis");
      expectAxis(a.concatAxis, in(0).size(), "concat_axis");
      int64_t n = groupSize();
      if (in(0)[a.splitAxis] % n)
        fail("split_axis " + std::to_string(a.splitAxis) + " of " + formatShape(in(0)) +
             " does not split over the group of " + std::to_string(n));
      Shape result = in(0);
      result[a.splitAxis] /= n;
      result[a.concatAxis] *= n;
      expectResult(result);
      break;
    }
    case OpKind::AllSlice: {
      expectCounts(1, 1, 1);
      expectAxis(a.axis, in(0).size(), "slice_axis");
      int64_t n = groupSize();
      if (in(0)[a.axis] % n)
        fail("slice_axis " + std::to_string(a.axis) + " of " + formatShape(in(0)) +
             " does not split over the group of " + std::to_string(n));
      Shape result = in(0);
      result[a.axis] /= n;
      expectResult(result);
      break;
    }
    case OpKind::Send:
    case OpKind::Recv:
      expectCounts(1, 1, 1);
      groupSize();
      expectResult(in(0));
      break;
    }
  }

  /// overlap_head_groups G on an attention: the executor runs the four ops
  /// all_to_all, unstack, attention, all_to_all as one, per head group
  /// (overlappedAttentionAt), which is exact only for this shape.
  void checkOverlappedRegion() const {
    const Op &attention = *op;
    int64_t groups = attention.a.overlapHeadGroups;
    auto refuse = [&](const std::string &why) {
      fail("attribute 'overlap_head_groups' is " + std::to_string(groups) + ", but " +
           why + "; it needs the consecutive ops shard.all_to_all (split_axis 3, "
           "concat_axis 1), dit.unstack (axis 2), this attention of q, k, v, and "
           "shard.all_to_all (split_axis 1, concat_axis 2) over the same axes, "
           "with nothing else reading their values");
    };
    if (!attention.axes.empty())
      refuse("this is a ring attention");
    if (attention.a.numHeads % groups)
      refuse("it does not divide the " + std::to_string(attention.a.numHeads) +
             " heads");
    if (opIndex < 2 || opIndex + 1 >= fn->ops.size())
      refuse("the attention is not between two other ops on each side");
    const Op &in = fn->ops[opIndex - 2], &unstack = fn->ops[opIndex - 1],
             &out = fn->ops[opIndex + 1];
    if (in.kind != OpKind::AllToAll || in.a.splitAxis != 3 || in.a.concatAxis != 1 ||
        fn->valueShapes[in.inputs[0]].size() != 4)
      refuse("op #" + std::to_string(opIndex - 2) + " '" + in.name +
             "' is not a 4-d all_to_all from split_axis 3 to concat_axis 1");
    if (unstack.kind != OpKind::Unstack || unstack.a.axis != 2 ||
        unstack.inputs[0] != in.outputs[0] || unstack.outputs != attention.inputs)
      refuse("op #" + std::to_string(opIndex - 1) + " '" + unstack.name +
             "' is not the unstack along axis 2 of its result into q, k, v");
    if (out.kind != OpKind::AllToAll || out.a.splitAxis != 1 || out.a.concatAxis != 2 ||
        out.inputs[0] != attention.outputs[0] || out.axes != in.axes)
      refuse("op #" + std::to_string(opIndex + 1) + " '" + out.name +
             "' is not the all_to_all of the attention's result from split_axis 1 "
             "to concat_axis 2 over " + [&] {
               std::string axes;
               for (const std::string &a : in.axes)
                 axes += (axes.empty() ? "" : "+") + a;
               return axes;
             }());
    // The region's inner values exist only inside it.
    std::vector<int> inner = attention.inputs;
    inner.push_back(in.outputs[0]);
    inner.push_back(attention.outputs[0]);
    for (int id : inner)
      if (int reads = readsOf(id); reads != 1)
        refuse("value " + std::to_string(id) + " is read " + std::to_string(reads) +
               " times");
  }

  /// Reads of value `id` by the current function's ops, plus one if it returns it.
  int readsOf(int id) const {
    int reads = int(std::count(fn->results.begin(), fn->results.end(), id));
    for (const Op &other : fn->ops)
      reads += int(std::count(other.inputs.begin(), other.inputs.end(), id));
    return reads;
  }

  /// A modulation table [B or 1, N, D] read at `chunk` against the operand.
  void checkChunks(const Shape &table, int64_t chunk, const char *attr) const {
    const Shape &x = in(0);
    if (table.size() != 3 || (table[0] != 1 && table[0] != x[0]) || table[2] != x.back())
      fail("modulation " + formatShape(table) + " does not fit the operand " + formatShape(x));
    if (chunk >= table[1])
      fail("attribute '" + std::string(attr) + "' is " + std::to_string(chunk) +
           ", but the modulation has " + std::to_string(table[1]) + " chunks");
  }

  const Manifest &m;
  const Program &p;
  const std::vector<int64_t> &ranks;
  std::map<std::vector<std::string>, Manifest::GroupPlaces> groups;
  const Function *fn = nullptr;
  const Op *op = nullptr;
  size_t opIndex = 0;
};

} // namespace

void validateProgram(const Manifest &manifest, const Program &program,
                     const std::vector<int64_t> &ranks) {
  ProgramValidator(manifest, program, ranks).run();
}

} // namespace ditc::runtime
