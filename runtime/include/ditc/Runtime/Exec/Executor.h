//===- Executor.h - runs one program's ops with libtorch --------*- C++ -*-===//
//
// Interprets one program of a plan (one denoising step of one role) with
// ATen ops. The semantics are those of test/Executable/simulate_plan.py and
// docs/plan-format.md; collectives go through the Communicator. Step-level
// values (latents, sigmas, the CFG combine, the scheduler step) are float32;
// the transformer functions run in the compute dtype.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_EXECUTOR_H
#define DITC_RUNTIME_EXECUTOR_H

#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Exec/ParameterStore.h"
#include "ditc/Runtime/Exec/PositionTables.h"
#include "ditc/Runtime/Plan/Program.h"
#include "ditc/Runtime/Sched/Schedulers.h"

#include "ditc/Checkpoint/Snapshot.h"

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

namespace ditc::runtime {

/// A step input or output that may still be in flight (seed 004's
/// AsyncLatents): the latents the last pipeline stage sends back to the
/// first arrive as a pending receive, `pending` its Communicator handle,
/// and resolve only when an op of the next step reads them.
struct StepValue {
  at::Tensor tensor;
  int pending = -1; // -1: `tensor` holds the value
};

class Executor {
public:
  Executor(const Manifest &manifest, int64_t rank, const Program &program,
           Communicator *comm, at::ScalarType computeType);

  /// Draws this rank's slice of every parameter the program reads from
  /// `seed`; again only when a request brings another seed.
  void materializeParameters(int64_t seed);
  /// Reads this rank's slice of every parameter the program reads from
  /// `weights` (the program's expert of a snapshot openWeights checked),
  /// once; materializeParameters then keeps them whatever the seed.
  void loadParameters(const checkpoint::TransformerWeights &weights);
  /// Expert offload: frees the parameters (to be read back from `weights`
  /// when given, else drawn again), and makes them again before the
  /// expert's next step.
  void releaseParameters(const checkpoint::TransformerWeights *weights = nullptr) {
    parameters.release(weights);
    ropeTables.clear(); // tables built from parameters go with them
  }
  void restoreParameters(int64_t seed) {
    if (!parameters.resident()) {
      parameters.restore(seed);
      ropeTables.clear();
    }
  }
  bool parametersResident() const { return parameters.resident(); }
  /// Bytes of parameters this rank holds.
  int64_t parameterBytes() const;

  /// Runs one step. `inputs` maps the program's input value ids to their
  /// values; returns the program's outputs. After the last step, ops marked
  /// dit.between_steps pass their operand through.
  ///
  /// Sends and receives are asynchronous (docs/runtime.md, "Pipeline
  /// overlap"): they start in program order, so every group still issues
  /// its transfers in the order the plan's verifier proved; a received
  /// value is waited for when an op first reads it, and a step output still
  /// in flight is returned pending. Every send is finished before the next
  /// collective and before the step returns.
  std::vector<StepValue> runStep(const std::map<int, StepValue> &inputs,
                                 bool lastStep);

  const Program &program() const { return prog; }

  /// The scheduler update the next steps apply (Schedulers.h), and the
  /// state slots it reads and writes: this rank's shard of a multistep
  /// scheduler's history, shared by both experts. nullptr, or an empty
  /// rule: the op's own flow-matching Euler update.
  void setStepRule(const StepRule *rule, std::vector<at::Tensor> *slots) {
    stepRule = rule;
    stepSlots = slots;
  }
  /// Replaces every cfg_combine's guidance scales (--guidance-scale).
  void setGuidanceScale(std::optional<double> scale) { guidanceScale = scale; }

  /// With DITC_PROFILE_OPS=1 in the environment, the time spent in each
  /// kind of op (by its plan name; a call counts only its callee's ops),
  /// and how many ran, since the executor was made. Empty otherwise.
  struct OpTime {
    double seconds = 0;
    int64_t count = 0;
  };
  const std::map<std::string, OpTime> &opProfile() const { return profile; }

private:
  /// `pending` maps value ids still in flight to their transfer handles;
  /// at depth 0 the results still in flight stay so, deeper they resolve.
  std::vector<at::Tensor> runFunction(const Function &fn,
                                      std::vector<at::Tensor> values,
                                      std::map<int, int> &pending,
                                      at::ScalarType frameType, bool lastStep,
                                      int depth);
  /// Waits for every send this executor started.
  void finishSends();
  std::vector<at::Tensor> runOp(const Function &fn, const Op &op,
                                const std::vector<at::Tensor> &in,
                                at::ScalarType frameType, bool lastStep,
                                int depth);
  /// Per op of `fn`, the values it reads last (computed once per function).
  const std::vector<std::vector<int>> &releasesOf(const Function &fn);
  /// The first input of `op` when no later op reads it and nothing else
  /// shares its storage, so an element-wise op may write its result over
  /// it; undefined otherwise.
  at::Tensor reusableInput(const Op &op, const std::vector<int> &dying,
                           const std::vector<at::Tensor> &in) const;
  const std::vector<at::Tensor> &params(const Op &op) const;
  at::Tensor norm(const Op &op, const at::Tensor &x);
  /// SD3's patch embedding: the projection plus the cropped table rows.
  at::Tensor patchEmbedWithTable(const Op &op, const at::Tensor &x);
  at::Tensor rope(const Op &op, const at::Tensor &x);
  at::Tensor sincosPosEmbed(const Op &op, const at::Tensor &x);
  /// `textBias` [B, L] (keyMaskBias of the op's key mask, or undefined)
  /// covers the text keys: a joint attention's text part, or every key of
  /// an attention over the text alone.
  at::Tensor attention(const Op &op, const at::Tensor &q, const at::Tensor &k,
                       const at::Tensor &v, const at::Tensor &textBias);
  /// The ops all_to_all, unstack, attention, all_to_all that begin at
  /// `in` (overlappedAttentionAt), pipelined by head group: returns the
  /// output all_to_all's result from the input all_to_all's operand.
  at::Tensor headGroupAttention(const Function &fn, const Op &in,
                                const Op &attention, const at::Tensor &stacked);
  /// A row-parallel linear and the all_reduce after it
  /// (overlappedLinearAt), by row chunks: chunk i is reduced while chunk
  /// i + 1 is computed.
  at::Tensor chunkedRowLinear(const Op &linear, const Op &reduce, const at::Tensor &x);
  at::Tensor ringAttention(const Op &op, const at::Tensor &q, const at::Tensor &k,
                           const at::Tensor &v, const at::Tensor &textBias);
  std::string describe(const Op &op) const;
  at::Tensor applyStepRule(const at::Tensor &latents, const at::Tensor &velocity);

  const Manifest &manifest;
  int64_t rank;
  const Program &prog;
  Communicator *comm;
  at::ScalarType computeType;
  at::Device device;
  ParameterStore parameters;
  std::unordered_map<const Op *, RopeTable> ropeTables;
  // sincos_pos_embed: this rank's [image rows, D] table per op.
  std::unordered_map<const Op *, at::Tensor> posTables;
  bool profiling;
  const StepRule *stepRule = nullptr;
  std::vector<at::Tensor> *stepSlots = nullptr;
  std::optional<double> guidanceScale;
  std::map<std::string, OpTime> profile;
  std::unordered_map<const Function *, std::vector<std::vector<int>>> releases;
  at::Tensor spare; // reusableInput of the op running now
  std::vector<int> pendingSends; // in the order they started
  /// DITC_TRACE_TRANSFERS=1: each transfer's start and wait, on stderr.
  bool tracing;
  int64_t stepNumber = 0; // of this executor's runStep calls, from 1
  std::map<int, std::string> transferNames; // while tracing
  void trace(const char *event, int handle);
  /// Set by runOp for a recv: the handle its (pending) result waits on.
  int startedRecv = -1;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_EXECUTOR_H
