//===- MemoryFit.cpp - whether a configuration fits its GPUs --------------===//
#include "ditc/CostModel/MemoryFit.h"
#include "ditc/CostModel/CostModel.h"
#include "ditc/CostModel/Search.h"
#include "ditc/CostModel/WorkExtraction.h"


#include <algorithm>
#include <cstdio>

namespace ditc {

double MemoryPlan::peak() const { return std::max({stepBytes, encodeBytes, decodeBytes}); }

const char *MemoryPlan::peakPhase() const {
  if (encodeBytes > stepBytes && encodeBytes >= decodeBytes)
    return "the prompt encode";
  if (decodeBytes > stepBytes)
    return "the VAE decode";
  return "a denoising step";
}

std::optional<MemoryPlan> planMemory(mlir::ModuleOp imported, const LegalityContext &context,
                                     const HardwareProfile &hw, int64_t branchCalls,
                                     const std::string &vaeConfig,
                                     const VaeDecodeShape &vaeShape) {
  const Placement &transformer = context.transformer();
  const Degrees &d = transformer.degrees;
  mlir::FailureOr<TransformerWork> work = partitionAndExtract(imported, d);
  if (mlir::failed(work))
    return std::nullopt;
  Configuration config = requestedConfiguration(context, branchCalls);
  config.ppPartition = transformer.ppPartition;
  config.expertOffload = transformer.offload;
  StepEstimate step = estimateStep(*work, config, hw);

  MemoryPlan plan;
  plan.twoExperts = work->otherExpertParamBytes > 0;
  plan.expertOffload = transformer.offload;
  plan.float32 = work->elementBytes > 2;
  plan.transformerParamBytes = step.paramBytes;
  plan.activationBytes = step.activationBytes;
  plan.bufferBytes = step.bufferBytes;
  // The encoders as dit-run holds them: split over the placement's tp,
  // resident through the steps unless offloaded.
  const Placement *encoder = context.deployment.find("text_encoder");
  int64_t encoderTp = encoder ? encoder->degrees[Axis::TP] : 1;
  mlir::FailureOr<std::optional<TextEncodeWork>> encoders =
      partitionAndExtractTextEncoders(imported, encoderTp);
  if (mlir::succeeded(encoders) && *encoders) {
    const TextEncodeWork &e = **encoders;
    plan.residentEncoderBytes = encoder && encoder->offload ? 0 : e.paramBytes;
    plan.encodeBytes = encodePeakBytes(e, step.paramBytes);
  }
  plan.stepBytes = step.peakMemoryBytes() + plan.residentEncoderBytes;
  const Placement *vae = context.deployment.find("vae");
  int64_t bands = vae ? vae->vaeParallelSize : 1;
  if (!vaeConfig.empty())
    if (std::optional<VaeDecodeWork> decode = vaeDecodeWork(vaeConfig, vaeShape, bands))
      plan.decodeBytes = decodePeakBytes(*decode, step.paramBytes + plan.residentEncoderBytes);
  return plan;
}

static std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(1ull << 30));
  return text;
}

std::optional<RuleDiagnostic> checkMemoryFit(const MemoryPlan &plan, const HardwareProfile &hw) {
  double peak = plan.peak();
  if (peak <= hw.memoryBytes)
    return std::nullopt;
  std::string parts = "transformer parameters " + gib(plan.transformerParamBytes) +
                      (plan.twoExperts
                           ? (plan.expertOffload ? " (one expert resident)" : " (both experts resident)")
                           : "");
  std::string phase = plan.peakPhase();
  if (phase == "a denoising step") {
    parts += " + activations " + gib(plan.activationBytes) + " + collective buffers " +
             gib(plan.bufferBytes);
    if (plan.residentEncoderBytes > 0)
      parts += " + resident text encoders " + gib(plan.residentEncoderBytes);
  } else if (phase == "the prompt encode") {
    parts += " + text encoders and their activations " +
             gib(plan.encodeBytes - plan.transformerParamBytes);
  } else {
    parts += (plan.residentEncoderBytes > 0
                  ? " + resident text encoders " + gib(plan.residentEncoderBytes)
                  : std::string()) +
             " + the VAE and its band's activations " +
             gib(plan.decodeBytes - plan.transformerParamBytes - plan.residentEncoderBytes);
  }
  std::string ways;
  if (plan.twoExperts && !plan.expertOffload)
    ways += "--expert-offload, ";
  if (plan.residentEncoderBytes > 0)
    ways += "--text-encoder-offload, ";
  ways += plan.float32 ? "more GPUs (--tp-size or --pp-size split the parameters), or --dtype bf16"
                       : "more GPUs (--tp-size or --pp-size split the parameters)";
  return RuleDiagnostic{"memory-fit", Severity::Error,
                        "a rank needs " + gib(peak) + " in " + phase + " (" + parts +
                            "), but " + hw.name + " has " + gib(hw.memoryBytes) +
                            ": short by " + gib(peak - hw.memoryBytes) + "; try " + ways,
                        "transformer", nullptr};
}

} // namespace ditc
