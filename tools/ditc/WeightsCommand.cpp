//===- WeightsCommand.cpp - `ditc weights`: a checkpoint ------------------===//
//-===//
#include "Commands.h"
#include "WeightsReport.h"

#include "llvm/Support/raw_ostream.h"

namespace ditc {

std::string weightsUsage() {
  return formatUsage(
      R"(usage: ditc weights SNAPSHOT [--format text|json]

Compares a diffusers checkpoint with the model its config describes.
SNAPSHOT is a pipeline folder (model_index.json, transformer/, and
transformer_2/ for Wan2.2 A14B) or a transformer folder alone (config.json
and diffusion_pytorch_model.safetensors, or the shards its .index.json
lists). The expected tensors are the parameters of the imported
transformer, as every plan names them, and in a pipeline folder's vae/
those of the decoder graph @vae_decode (AutoencoderKL, AutoencoderKLWan,
AutoencoderKLQwenImage; the encoder's tensors are counted, not expected).
Lists the missing, unexpected, mis-shaped and mis-typed tensors (a dtype
other than the one holding most of the transformers' bytes, or of the
VAE's), and totals the bytes per dtype.
)",
      {commonFlags()},
      R"(exit codes: 0 every tensor present and right, 1 any tensor missing,
            unexpected, mis-shaped or mis-typed,
            2 an unreadable or invalid file or folder (a config the
              importer refuses, a malformed safetensors file or index)
)");
}

int runWeights(const Argv &argv) {
  ArgParser args = parseFlags("ditc weights", {commonFlags()}, argv);
  args.expectPositionals(1, "a SNAPSHOT (a pipeline or transformer folder)");
  Format format = readFormat(args);
  WeightsReport report = checkWeights(args.positional()[0]);
  if (format == Format::Json)
    printJson(weightsReportJson(report));
  else
    llvm::outs() << weightsReportText(report);
  return report.ok() ? 0 : 1;
}

} // namespace ditc
