//===- ExplainCommand.cpp - `ditc explain`: where a plan's ranks sit ------===//
#include "Commands.h"

#include "ditc/Plan/RankLayout.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Utf8.h"

#include "llvm/Support/raw_ostream.h"

#include <filesystem>

namespace ditc {

std::string explainUsage() {
  return formatUsage(R"(usage: ditc explain PLAN_DIR [--format text|json]

Prints where a plan's ranks sit, from its manifest.json: a table of rank,
node, local GPU, coordinates on the axes of size > 1 and program; the groups
of each such axis; and which groups cross nodes. The plan folder's
layout.svg draws the same.
)",
                     {commonFlags()},
                     std::string("exit codes: 0 explained,\n") + kBadInputExit);
}

int runExplain(const Argv &argv) {
  ArgParser args = parseFlags("ditc explain", {commonFlags()}, argv);
  args.expectPositionals(1, "a PLAN_DIR (a folder ditc compile wrote)");
  Format format = readFormat(args);
  std::string dir = args.positional()[0];
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    badFile(escapeInvalidUtf8(dir),
            "is not a plan folder (ditc compile ... -o PLAN_DIR writes one)");
  std::string path = (std::filesystem::path(dir) / "manifest.json").string();
  nlohmann::json manifest = JsonObject::parseFile(path);
  RankLayout layout =
      readRankLayout(JsonObject(escapeInvalidUtf8(path), &manifest));
  if (format == Format::Json)
    printJson(layoutJson(layout));
  else
    llvm::outs() << formatLayoutText(layout);
  return 0;
}

} // namespace ditc
