//===- Program.h - a plan's program as the runtime runs it ------*- C++ -*-===//
//
// One program of a plan, decoded (ProgramReader.h) and validated
// (PlanValidator.h): ops with typed attributes, so the step loop never
// reads JSON or compares strings; and what the executor and the collective
// tracer share about how a program runs.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_PROGRAM_H
#define DITC_RUNTIME_PLAN_PROGRAM_H

#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Support/RowChunks.h"

#include <array>

namespace ditc::runtime {

/// One parameter an op reads: its global shape and which slice this rank
/// holds (docs/plan-format.md, "Parameters").
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  /// The split dimension over tp, or -1 when every rank holds all of it.
  int splitDim = -1;
  std::vector<int64_t> segments;
  /// A row-parallel bias: only tp coordinate 0 adds it.
  bool onlyOnTpZero = false;
  /// The shape a diffusers checkpoint stores it in, when that differs from
  /// `shape` (a Conv3d patch embedding [D, C, pt, ph, pw] for [D, C*pt*ph*pw]);
  /// empty when the checkpoint stores `shape` itself.
  std::vector<int64_t> checkpointShape;
  const std::vector<int64_t> &storedShape() const {
    return checkpointShape.empty() ? shape : checkpointShape;
  }
};

/// Op kinds, decoded once at load so the step loop never compares strings:
/// one per PLAN_OP of PlanOps.def, in its order.
enum class OpKind {
#define PLAN_OP(kind, name, attributeKeys) kind,
#include "ditc/Runtime/Plan/PlanOps.def"
};

/// How many kinds PlanOps.def lists.
constexpr int kPlanOpCount = 0
#define PLAN_OP(kind, name, attributeKeys) +1
#include "ditc/Runtime/Plan/PlanOps.def"
    ;

/// One PLAN_OP of PlanOps.def.
struct PlanOpInfo {
  OpKind kind;
  const char *name;
  /// The attributes dit-run reads, besides dit.block and dit.between_steps.
  std::vector<std::string> attributeKeys;
};

/// One COMPILE_ONLY_OP of PlanOps.def: a dialect op no plan holds.
struct CompileOnlyOp {
  const char *name;
  const char *why;
};

/// Every op a plan may hold, in OpKind order.
const std::vector<PlanOpInfo> &planOps();
/// The dialect ops that never reach a plan.
const std::vector<CompileOnlyOp> &compileOnlyOps();
/// The kind a plan's op name stands for, or nullopt for a name no plan holds.
std::optional<OpKind> planOpKind(const std::string &name);
/// The plan name of `kind` ("dit.rope").
const char *planOpName(OpKind kind);

enum class ActivationKind { Gelu, GeluTanh, Silu, SwiGlu, GeGlu };

/// An op's attributes, decoded and range-checked at load (docs/plan-format.md
/// lists them per op). The executor reads only these fields, never the
/// plan's JSON: validated once, then trusted.
struct OpAttrs {
  int64_t block = -1; // dit.block, for messages
  // rope, attention
  int64_t numHeads = 0;
  int64_t textTokens = 0;
  bool textPrefix = true; // also concat_streams, split_streams
  // attention: the last input is the text mask [B, L] (1 valid, 0 padding)
  bool keyMask = false;
  // rope (grid and sequenceShards also patch_embed's position table and
  // sincos_pos_embed)
  std::array<int64_t, 3> grid{}, axesDims{};
  double theta = 0;
  int64_t sequenceShards = 1;
  // rope style ltx (LTX-Video): one table over all heads, fractional
  // positions coordinate * coordinateScale; the input is tp block
  // `coords.tp` of headShards.
  bool ropeLtx = false;
  std::array<double, 3> coordinateScale{};
  int64_t headShards = 1;
  bool centered = false; // Qwen-Image's positions
  // rope: position = gridOffset + gridStep * index, per axis
  std::array<double, 3> gridOffset{0, 0, 0}, gridStep{1, 1, 1};
  // patch_embed: the side of its position table's grid (0: no table)
  int64_t posEmbedMaxSize = 0;
  // sincos_pos_embed
  double spatialScale = 1, temporalScale = 1;
  // timestep_embedding
  int64_t freqDim = 0;
  double timestepScale = 1.0;
  /// patch_embed on channels_last tokens: pt * ph * pw, the (P, C) features
  /// of each token are transposed to (C, P) before the projection; 0 for
  /// channels_first tokens, which the weight reads as they are.
  int64_t patchVolume = 0;
  // adaln_modulation
  int64_t numChunks = 0;
  bool table = false;
  // modulate (shift -1: none), residual_add with a gate
  int64_t scaleChunk = -1, shiftChunk = -1, gateChunk = -1;
  bool tanhGate = false; // residual_add: the branch is scaled by tanh(gate)
  // norms (groupSize 0: the whole width)
  bool affine = false;
  double eps = 0;
  int64_t groupSize = 0;
  ActivationKind activation = ActivationKind::Gelu;
  /// tensor.concat's dim, stack/unstack/split's axis, all_gather's
  /// gather_axis, all_slice's slice_axis.
  int64_t axis = 0;
  int64_t parts = 1; // split
  int64_t splitAxis = 0, concatAxis = 0; // all_to_all
  int64_t peer = -1; // send destination / recv source: an index in the group
  std::vector<double> guidanceScales;
  /// attention: the head groups its Ulysses exchanges are pipelined in
  /// (overlap_head_groups; 1: one exchange of every head).
  int64_t overlapHeadGroups = 1;
  /// all_reduce: the row chunks it may run in, each overlapping the next
  /// chunk's product (overlap_row_chunks; 1: one all_reduce).
  int64_t overlapRowChunks = 1;
};

struct Op {
  OpKind kind;
  std::string name; // as written in the plan, for messages
  std::vector<int> inputs, outputs;
  OpAttrs a;
  std::vector<ParamSpec> params;
  std::string callee;
  /// Axis names a collective runs over (or tp for norm statistics, or the
  /// ring axis for ring attention); empty for local ops.
  std::vector<std::string> axes;
  bool betweenSteps = false;
};

struct Function {
  std::string name;
  std::vector<std::vector<int64_t>> valueShapes;
  std::vector<int> args, results;
  std::vector<Op> ops;
};

struct StepInput {
  std::string name; // latents, timestep, sigma, sigma_next, text, pooled_text, guidance
  int value = 0;
  int branch = 0;
};

struct Program {
  std::string id, file, sha256;
  /// The transformer component it runs: "transformer", or "transformer_2"
  /// for Wan2.2 A14B's second expert.
  std::string expert = "transformer";
  std::vector<StepInput> inputs;
  Function step; // the program's top level; results are its outputs
  std::map<std::string, Function> functions;
};

/// The ranks whose entry names program `id` (as program or program_2).
std::vector<int64_t> ranksRunning(const Manifest &manifest, const std::string &id);

constexpr int kMaxCallDepth = 8;
/// The attention whose overlapped Ulysses exchanges begin at op `index` of
/// `fn` (the input all_to_all of an attention with overlap_head_groups > 1;
/// validateProgram proved the four ops all_to_all, unstack, attention,
/// all_to_all follow each other), or nullptr. The executor runs the four
/// as one; the collective tracer expands them in the same order.
const Op *overlappedAttentionAt(const Function &fn, size_t index);

/// The all_reduce that completes the row-parallel linear at op `index` of
/// `fn` in overlapped row chunks (overlap_row_chunks > 1; validateProgram
/// proved it reads only that linear's result), or nullptr.
const Op *overlappedLinearAt(const Function &fn, size_t index);

/// The row tile and the row chunks of an overlapped all_reduce are shared
/// with the cost model (ditc/Support/RowChunks.h).
using ditc::kGemmTileRows;
using ditc::tileRowChunks;

/// One exchange of an overlapped region: head group `group`'s input
/// all_to_all, or its output one.
struct HeadGroupExchange {
  bool output;
  int64_t group;
};
/// The order a region of `groups` head groups issues its exchanges in:
/// input 0, then per group g the input of g + 1 (before g's attention, so
/// it travels meanwhile) and g's output (after it). Every member of a
/// group runs the same program, so every member issues this same order.
std::vector<HeadGroupExchange> headGroupSchedule(int64_t groups);

constexpr int64_t kMaxOpsPerStep = int64_t(1) << 22;

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_PROGRAM_H
