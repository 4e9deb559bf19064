//===- SchedulerFuzzer.cpp - fuzz the scheduler_config.json reader --------===//
//
// A scheduler config is untrusted input: every schedule built from one must
// be finite, have the steps asked for, and read and write only the state
// slots it declares, since each rank applies its rules without checks.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "ditc/Runtime/Sched/Schedulers.h"
#include "ditc/Support/BadInput.h"

#include <cmath>

using namespace ditc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = ditc::fuzz::scratchDir() + "/scheduler_config.json";
  ditc::fuzz::writeBytes(path, data, size);
  static const char *const families[] = {"wan",   "flux",          "qwen_image",
                                         "sd3",   "ltx_video",     "hunyuan_video",
                                         "mochi", "cogvideox",     ""};
  // The request varies with the input's length, so every corpus file runs
  // a different family and step count.
  ScheduleRequest request;
  request.family = families[size % (sizeof families / sizeof *families)];
  request.steps = 1 + int64_t(size % 40);
  request.imageSeqLen = 4096;
  request.videoSeqLen = 6144;
  request.configPath = path;
  try {
    Schedule s = buildSchedule(request);
    if (s.steps.empty() || s.slots < 0)
      __builtin_trap();
    for (const ScheduleStep &step : s.steps) {
      if (!std::isfinite(step.sigma) || !std::isfinite(step.sigmaNext) ||
          !std::isfinite(step.timestep))
        __builtin_trap();
      bool result = step.rule.euler();
      for (const StepInstruction &instruction : step.rule.instructions) {
        if (instruction.target == kStepResult)
          result = true;
        else if (instruction.target < 0 || instruction.target >= s.slots)
          __builtin_trap(); // a rule writing a slot no rank holds
        for (const StepTerm &term : instruction.terms)
          if ((term.source >= s.slots) ||
              (term.source < 0 && term.source != kStepLatents &&
               term.source != kStepVelocity) ||
              !std::isfinite(term.coeff))
            __builtin_trap();
      }
      if (!result)
        __builtin_trap(); // a rule that never produces the step's latents
    }
  } catch (const ditc::BadInput &error) {
    ditc::fuzz::noteRefusal(error.what());
  }
  return 0;
}
