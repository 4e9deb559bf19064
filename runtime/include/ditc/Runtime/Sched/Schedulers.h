//===- Schedulers.h - denoising schedules as diffusers computes them -*- C++ -*-===//
//
// The host side of the denoising loop: which sigmas and timesteps a run
// steps through, what value each family's pipeline passes to its
// transformer, and how the elementwise `dit.scheduler_step` updates the
// latents. The schedules reproduce diffusers' own scheduler classes from a
// snapshot's `scheduler/scheduler_config.json`:
//
//   - FlowMatchEulerDiscreteScheduler: shift, dynamic shifting (mu from the
//     image sequence length, as each pipeline computes it), shift_terminal,
//     invert_sigmas (Mochi);
//   - UniPCMultistepScheduler in flow-prediction mode (Wan): a multistep
//     predictor-corrector that keeps earlier model outputs;
//   - CogVideoXDDIMScheduler (v-prediction, zero terminal SNR,
//     snr_shift_scale, trailing spacing).
//
// Every step is elementwise, so its coefficients are computed here, on the
// host, in float64, once per step, and each rank applies them to its own
// shard (a StepRule); a multistep scheduler's history is a set of state
// slots each rank keeps for its shard. This file needs neither torch nor
// MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_SCHEDULERS_H
#define DITC_RUNTIME_SCHEDULERS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

/// Sources a StepTerm reads: the step's latents, the guided model output,
/// or a state slot (>= 0) that persists across steps.
constexpr int kStepLatents = -1;
constexpr int kStepVelocity = -2;
/// The target of the instruction that produces the step's result.
constexpr int kStepResult = -3;

struct StepTerm {
  int source;
  double coeff;
};

/// target = sum of coeff * source, in float32, terms in order. A single term
/// with coefficient 1 is a copy (the slot names the same tensor).
struct StepInstruction {
  int target;
  std::vector<StepTerm> terms;
};

/// How one step updates the latents. Empty: the op's own flow-matching
/// Euler update, latents + (sigma_next - sigma) * velocity, with the
/// step's float32 sigmas.
struct StepRule {
  std::vector<StepInstruction> instructions;
  bool euler() const { return instructions.empty(); }
};

struct ScheduleStep {
  double sigma = 0, sigmaNext = 0; // the op's sigma inputs (float32 values)
  // The scheduler's t: the `timestep` step input, and what the expert
  // boundary compares. Where a pipeline hands its transformer t / 1000 and
  // the transformer multiplies by 1000 again (FLUX, Qwen-Image), the graph
  // embeds t itself (docs/runtime.md, "Schedules").
  double timestep = 0;
  StepRule rule;
};

struct Schedule {
  std::string scheduler; // diffusers class, or "linear" / "--sigmas"
  std::string source;    // where it came from, for the summary and messages
  std::vector<ScheduleStep> steps;
  std::vector<double> sigmas; // the scheduler's sigma table (K + 1), or empty
  int slots = 0;              // state slots each rank keeps (multistep history)
  std::optional<double> mu;   // dynamic shifting's mu, when used
};

/// What a schedule is built from.
struct ScheduleRequest {
  std::string family;      // the manifest's model.family ("flux", "wan", ...)
  int64_t steps = 1;       // K
  int64_t imageSeqLen = 0; // the pipeline's image_seq_len (tokens per sample)
  int64_t videoSeqLen = 0; // LTX: latent frames x height x width
  std::string configPath;  // scheduler_config.json, or empty
  std::optional<std::vector<double>> sigmas; // --sigmas, verbatim (K + 1 values)
  std::string sigmasOrigin = "--sigmas";
};

/// The schedule of a run. Without a config and without --sigmas: sigmas
/// fall linearly from 1 to 0 (numpy.linspace), flow-matching Euler, t =
/// 1000 sigma. Throws BadInput naming the file, field and value for a
/// config diffusers refuses or this dit-run cannot reproduce.
Schedule buildSchedule(const ScheduleRequest &request);

/// The `guidance` step input for guidance scale G: what `family`'s
/// pipeline passes as its transformer's `guidance`. HunyuanVideo's pipeline
/// passes 1000 G (float32); FLUX's passes G, and its transformer's 1000x is
/// in the graph.
double guidanceInput(const std::string &family, double guidanceScale);

/// Parses --sigmas "s0,s1,...,sK": K + 1 finite numbers in [0, 1], K in
/// [1, 100000]. Throws BadInput naming `flag`.
std::vector<double> parseSigmas(const std::string &text, const std::string &flag);

/// scheduler/scheduler_config.json of a diffusers pipeline folder, or empty
/// when `dir` has none (a transformer folder alone).
std::string schedulerConfigIn(const std::string &dir);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_SCHEDULERS_H
