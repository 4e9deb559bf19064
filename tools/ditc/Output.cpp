//===- Output.cpp - JSON documents and errors on ditc's stdout ------------===//
#include "Commands.h"

#include "ditc/Support/Utf8.h"

#include "llvm/Support/raw_ostream.h"

namespace ditc {

bool asksForJson(const Argv &args) {
  const std::string &format = kFormatFlag.name;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == format + "=json" ||
        (args[i] == format && i + 1 < args.size() && args[i + 1] == "json"))
      return true;
  return false;
}

void printJson(const nlohmann::json &document) {
  // Every string that comes from input is escaped already; replacing any
  // invalid UTF-8 keeps a future one from turning into a type_error.
  llvm::outs() << document.dump(2, ' ', false,
                                nlohmann::json::error_handler_t::replace)
               << "\n";
}

nlohmann::json errorJson(const std::string &kind, const std::string &message,
                         const InputLocation &location) {
  nlohmann::json error = {{"kind", kind},
                          {"message", escapeInvalidUtf8(message)}};
  for (auto [key, part] :
       {std::pair{"file", &location.file}, std::pair{"field", &location.field},
        std::pair{"value", &location.value}})
    if (!part->empty())
      error[key] = escapeInvalidUtf8(*part);
  return {{"error", error}};
}

} // namespace ditc
