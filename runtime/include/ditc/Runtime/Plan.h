//===- Plan.h - a compiled plan as the runtime reads it ---------*- C++ -*-===//
//
// The runtime's view of a plan folder (docs/plan-format.md): the manifest,
// and the programs this rank runs. Everything is validated while it is
// read, so a corrupt or foreign plan is refused with exit 2 before any rank
// joins the rendezvous. No MLIR here: plans cross into the runtime as files.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_H
#define DITC_RUNTIME_PLAN_H

#include "ditc/Support/RowChunks.h"

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

/// Op kinds, decoded once at load so the step loop never compares strings.
enum class OpKind {
  Call, TimestepEmbedding, PatchEmbed, Linear, LayerNorm, RmsNorm,
  AdalnModulation, Modulate, ResidualAdd, Rope, SincosPosEmbed, TokenMean,
  AttentionPool, Attention, Activation,
  ConcatStreams, SplitStreams, TensorConcat, TensorEmpty, Stack, Unstack, Split,
  CfgCombine, SchedulerStep, AllReduce, AllGather, AllToAll, AllSlice, Send,
  Recv,
};

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

struct Axis {
  std::string name;
  int64_t size;
};

struct RankEntry {
  int64_t rank = 0;
  std::map<std::string, int64_t> coords;
  std::optional<std::string> program, program2;
};

struct ProgramEntry {
  std::string id, file, sha256;
  /// per_step.param_bytes and per_step.activation_bytes, in the plan's
  /// element type; -1 when the entry has no per_step (the memory check
  /// then has no activation figure for the program).
  int64_t paramBytes = -1, activationBytes = -1;
};

struct Manifest {
  std::string dir, path;
  std::string planHash;
  // model
  std::string modelName;
  std::string family; // model.family ("wan", "flux", ...): how its pipeline steps
  int64_t latentChannels = 0, textEmbedDim = 0, pooledDim = 0, experts = 1;
  std::vector<int64_t> patch; // [t, h, w]
  double boundaryRatio = 0.875;
  /// model.checkpoint_config: each transformer component's config.json
  /// without its "_" keys; empty for a plan compiled before it was recorded.
  std::map<std::string, nlohmann::json> checkpointConfig;
  // workload
  int64_t batch = 1, latentFrames = 0, latentHeight = 0, latentWidth = 0;
  int64_t textTokens = 0, branches = 1, steps = 1;
  double guidanceScale = 1.0; // workload.guidance_scale
  // mesh
  std::vector<Axis> axes; // outermost first
  std::vector<RankEntry> ranks;
  std::vector<ProgramEntry> programs;
  std::vector<std::string> latentsSplitOver;
  int64_t latentTokens = 0, latentFeatures = 0;
  /// latents.feature_order: each token's features are (C, pt, ph, pw) when
  /// true, (pt, ph, pw, C) otherwise (the family's unpatchify order).
  bool channelsFirst = false;

  int64_t worldSize() const { return int64_t(ranks.size()); }
  int64_t axisSize(const std::string &axis) const;
  const ProgramEntry &programEntry(const std::string &id) const;
  /// Ranks that differ from `rank` only on `axes`, ordered row-major over
  /// their coordinates on those axes in mesh order: the group a collective
  /// over `axes` runs on, in the order its in-group indices count.
  std::vector<int64_t> groupOf(int64_t rank,
                               const std::vector<std::string> &axes) const;
  /// Every group over `axes` of the ranks that have a program, each ordered
  /// as groupOf orders one rank's group: all of them in one pass.
  std::vector<std::vector<int64_t>>
  groupsOver(const std::vector<std::string> &axes) const;
  /// Index of the latent token block `rank` holds: row-major over its
  /// coordinates on the split_over axes.
  int64_t latentBlock(int64_t rank) const;
  int64_t latentBlocks() const;
  /// The ranks whose final latents make up replica `replica`'s output: last
  /// pipeline stage, that dp coordinate, cfg 0, tp 0, one per latent block,
  /// ordered by block.
  std::vector<int64_t> outputHolders(int64_t replica = 0) const;
  /// The rank that writes replica `replica`'s outputs: its lowest rank.
  int64_t replicaLeader(int64_t replica) const;
};

/// "[1, 16, 32]": a shape as messages and logs show it.
std::string formatShape(const std::vector<int64_t> &shape);

/// Reads PLAN_DIR/manifest.json; checks every field the runtime uses and
/// recomputes plan_hash. Throws BadInput naming the file, field and value.
Manifest loadManifest(const std::string &dir);

/// Reads the program `id` of `manifest`; refuses a file whose SHA-256 does
/// not match the manifest, and any op the runtime cannot execute. Then
/// validateProgram checks it for every rank that runs it.
Program loadProgram(const Manifest &manifest, const std::string &id);

/// The ranks whose entry names program `id` (as program or program_2).
std::vector<int64_t> ranksRunning(const Manifest &manifest, const std::string &id);

/// Checks a decoded program against the ops' semantics, as run by `ranks`:
/// every value is defined before use and once; every op's operand, result
/// and parameter shapes are what the op computes from its attributes;
/// collective axes split evenly over each rank's group; send and recv peers
/// lie in the group and are not the rank itself; calls name functions, nest
/// at most kMaxCallDepth deep and run at most kMaxOpsPerStep ops per step;
/// no value holds more than kMaxValueElements elements; the step's inputs
/// and output have the shapes the runner feeds and gathers. Throws BadInput
/// naming the file, the function, the op and the attribute.
void validateProgram(const Manifest &manifest, const Program &program,
                     const std::vector<int64_t> &ranks);

/// Checks that the programs of every rank pair up: for each group of each
/// axis tuple, every member issues the same collectives in the same order
/// with the same shapes, and every send from member i to member j meets a
/// recv on j from i of the same shape, in order (per expert phase). A plan
/// that fails this would hang until --timeout or mix up buffers. `programs`
/// maps each program id any rank runs to its validated program.
void validateCollectivePairing(const Manifest &manifest,
                               const std::map<std::string, Program> &programs);

/// Loads every program any rank of `manifest` runs, each once, and checks
/// that they pair up (validateCollectivePairing): what a full plan folder
/// proves before any rank meets another.
std::map<std::string, Program> loadEveryProgram(const Manifest &manifest);

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
constexpr int64_t kMaxValueElements = int64_t(1) << 31;

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_H
