//===- MemoryCheck.cpp - will the plan fit? asked before loading ----------===//
#include "ditc/Runtime/Driver/MemoryCheck.h"
#include "ditc/Runtime/Device/CpuDevice.h"
#include "ditc/Support/BadInput.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <set>


namespace ditc::runtime {

// Every figure here may come from a hostile manifest, so sums and products
// saturate instead of wrapping.
static int64_t addSat(int64_t a, int64_t b) {
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}
static int64_t mulSat(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

int64_t RankMemoryNeed::tensorBytes() const {
  int64_t resident = addSat(paramBytes, vaeParamBytes);
  if (!textOffloaded)
    return addSat(addSat(resident, textParamBytes),
                  std::max({activationBytes, decodeBytes, encodeBytes}));
  // The encoders are freed once the prompts are encoded: they and their
  // encode come before the steps and the decode.
  return std::max(addSat(resident, std::max(activationBytes, decodeBytes)),
                  addSat(addSat(resident, textParamBytes), encodeBytes));
}

int64_t RankMemoryNeed::total() const { return addSat(tensorBytes(), fixedBytes); }

/// Elements of the parameter slices `program` holds, each name once (the
/// executor keeps one tensor per name and program).
static int64_t parameterElements(const Program &program, int64_t tpSize) {
  std::set<std::string> seen;
  int64_t total = 0;
  auto visit = [&](const Function &fn) {
    for (const Op &op : fn.ops)
      for (const ParamSpec &spec : op.params) {
        if (!seen.insert(spec.name).second)
          continue;
        int64_t elements = 1;
        for (size_t d = 0; d < spec.shape.size(); ++d) {
          int64_t size = spec.shape[d];
          if (int(d) == spec.splitDim) {
            size = 0;
            for (int64_t width : spec.segments)
              size = addSat(size, width / tpSize);
          }
          elements = mulSat(elements, size);
        }
        total = addSat(total, elements);
      }
  };
  visit(program.step);
  for (const auto &fn : program.functions)
    visit(fn.second);
  return total;
}

RankMemoryNeed estimateRankMemory(const Manifest &manifest,
                                  const std::vector<const Program *> &programs,
                                  int64_t rank, int64_t computeElementBytes) {
  RankMemoryNeed need;
  need.rank = rank;
  need.fixedBytes = kRankFixedBytes;
  int64_t tpSize = std::max<int64_t>(1, manifest.axisSize("tp"));
  for (const Program *program : programs) {
    // Each expert's executor holds its own parameters: they add up, while
    // only one expert's step runs at a time; with expert offload only the
    // running expert's are resident.
    int64_t elements = parameterElements(*program, tpSize);
    int64_t bytes = mulSat(elements, computeElementBytes);
    need.paramBytes = manifest.expertOffload ? std::max(need.paramBytes, bytes)
                                             : addSat(need.paramBytes, bytes);
    const ProgramEntry &entry = manifest.programEntry(program->id);
    if (entry.activationBytes < 0)
      continue;
    // The plan's element type is what its param_bytes count per element:
    // 4 for an f32 plan, 2 for bf16. Anything else (no parameters, or a
    // manifest whose figures disagree with its programs) counts as 4, the
    // reading that gives the smaller estimate.
    int64_t planElementBytes = 4;
    if (elements > 0 && entry.paramBytes >= 0 && entry.paramBytes % elements == 0 &&
        (entry.paramBytes / elements == 2 || entry.paramBytes / elements == 4))
      planElementBytes = entry.paramBytes / elements;
    int64_t activations =
        mulSat(entry.activationBytes / planElementBytes, computeElementBytes);
    need.activationBytes =
        std::max(need.activationBytes, mulSat(activations, kActivationFactor));
  }
  return need;
}

static std::string mib(int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / 1048576.0);
  return text;
}

/// "(parameters P + activations A + runtime R)": a rank's need, by part.
static std::string breakdown(const RankMemoryNeed &need, bool onDevice) {
  std::string vae;
  if (need.vaeParamBytes > 0 || need.decodeBytes > 0)
    vae = " + VAE parameters " + mib(need.vaeParamBytes) + "; its decode's peak " +
          mib(need.decodeBytes) + " comes after the steps'";
  std::string text;
  if (need.textParamBytes > 0)
    text = " + text encoder parameters " + mib(need.textParamBytes) +
           (need.textOffloaded ? " (freed before the steps)" : "") + "; their encode's peak " +
           mib(need.encodeBytes) + " comes before the steps'";
  return std::string("(parameters ") + mib(need.paramBytes) + " + activations " +
         mib(need.activationBytes) + (onDevice ? " on its GPU" : "") + vae + text +
         " + runtime " + mib(need.fixedBytes) + ")";
}

static const char *kAdvice =
    "; spread the model over more ranks (--tp-size, --pp-size, and the VAE "
    "decode with ditc compile --vae-parallel-size) or hosts, "
    "run in bfloat16 (--dtype bfloat16), or pass --skip-memory-check if "
    "the estimate is wrong for this host (docs/runtime.md, \"Memory check\")";

void checkHostMemory(const Manifest &manifest,
                     const std::vector<RankMemoryNeed> &needs,
                     const std::string &dtypeName, bool onDevice) {
  if (needs.empty())
    return;
  int64_t sum = 0;
  for (const RankMemoryNeed &need : needs)
    sum = addSat(sum, onDevice ? need.fixedBytes : need.total());
  auto largest = std::max_element(
      needs.begin(), needs.end(), [](const RankMemoryNeed &a, const RankMemoryNeed &b) {
        return a.total() < b.total();
      });
  std::string who =
      needs.size() == 1
          ? "rank " + std::to_string(needs[0].rank) + " " + breakdown(needs[0], onDevice)
          : std::to_string(needs.size()) + " ranks on this host, the largest rank " +
                std::to_string(largest->rank) + " with " + mib(largest->total()) +
                " " + breakdown(*largest, onDevice);
  if (std::optional<MemoryLimit> host = hostMemoryAvailable();
      host && sum > host->bytes)
    throw BadInput(manifest.dir + ": plan for " + manifest.modelName + " in " +
                   dtypeName + " needs about " + mib(sum) + " for " + who +
                   ", but this host has " + mib(host->bytes) + " available (" +
                   host->source + "): short by " + mib(sum - host->bytes) + kAdvice);
  if (std::optional<MemoryLimit> space = addressSpaceAvailable()) {
    // The fixed footprint is already mapped in this process (VmSize).
    int64_t perRank = onDevice ? 0 : largest->tensorBytes();
    if (perRank > space->bytes)
      throw BadInput(manifest.dir + ": plan for " + manifest.modelName + " in " +
                     dtypeName + " needs about " + mib(perRank) +
                     " of parameters and activations in rank " +
                     std::to_string(largest->rank) + " " + breakdown(*largest, onDevice) +
                     ", but each rank may map only " + mib(space->bytes) +
                     " more (" + space->source + "): short by " +
                     mib(perRank - space->bytes) + kAdvice);
  }
}

void checkDeviceMemory(const Manifest &manifest, const RankMemoryNeed &need,
                       const Device &device, const std::string &dtypeName) {
  std::optional<MemoryLimit> free = device.freeMemory();
  if (!free)
    return; // nothing to ask: opening the device reports why
  int64_t onDevice = need.tensorBytes();
  if (onDevice > free->bytes)
    throw BadInput(manifest.dir + ": plan for " + manifest.modelName + " in " +
                   dtypeName + " needs about " + mib(onDevice) + " on " +
                   device.describe() + " for rank " + std::to_string(need.rank) +
                   ", but the device has " + mib(free->bytes) + " free (" +
                   free->source + "), short by " + mib(onDevice - free->bytes) + " " +
                   breakdown(need, /*onDevice=*/true) + kAdvice);
}

} // namespace ditc::runtime
