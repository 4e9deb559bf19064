//===- ModelsCommand.cpp - `ditc models`: the bundled models --------------===//
#include "Commands.h"

#include "ditc/Importer/Summary.h"
#include "ditc/Support/Utf8.h"

#include "llvm/Support/raw_ostream.h"

namespace ditc {

std::string modelsUsage() {
  return formatUsage(R"(usage: ditc models

Lists the bundled models: name, transformer class, blocks, heads, head_dim,
width, text tokens, VAE spatial/temporal compression and guidance branches.
)",
                     {commonFlags()},
                     std::string("exit codes: 0 listed,\n") + kBadInputExit);
}

int runModels(const Argv &argv) {
  ArgParser args = parseFlags("ditc models", {commonFlags()}, argv);
  args.expectPositionals(0, "no arguments");
  Format format = readFormat(args);
  if (listBundledModels().empty())
    badFile(escapeInvalidUtf8(bundledModelsDir()),
            "holds no bundled models (folders with transformer/config.json); "
            "set DITC_MODELS_DIR to the models/ folder of a ditc checkout");
  if (format == Format::Json)
    printJson(bundledModelsJson());
  else
    printBundledModels(llvm::outs());
  return 0;
}

} // namespace ditc
