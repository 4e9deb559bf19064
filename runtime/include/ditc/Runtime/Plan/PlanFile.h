//===- PlanFile.h - reading a plan folder's files ---------------*- C++ -*-===//
//
// What the manifest and program readers share: a file read inside the plan
// folder (bounded, regular, not linking out), the format version check, and
// JSON list access with key paths for messages.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_PLANFILE_H
#define DITC_RUNTIME_PLAN_PLANFILE_H

#include "ditc/Support/JsonFile.h"

#include <optional>
#include <string>

namespace ditc::runtime {

/// Element `index` of the list `field` of `list`, as an object whose
/// messages name its key path.
JsonObject element(const JsonObject &list, const std::string &field, size_t index);

/// The list `field` of `object`; fails when it is missing or not a list.
const nlohmann::json &requireList(const JsonObject &object, const std::string &field);

/// Whether a patch-token feature order `order` (the value of `field`) is
/// "channels_first" (C, pt, ph, pw) rather than "channels_last" (pt, ph,
/// pw, C), the meaning of plans that do not say.
bool channelsFirst(const JsonObject &object, const std::string &field,
                   const std::optional<std::string> &order);

/// Reads `relative` inside the plan folder `dir`. The file must be a regular
/// file (not a symlink, O_NOFOLLOW), and every folder on the way must
/// resolve inside the plan folder: a plan whose programs/ links elsewhere is
/// refused rather than followed. With `missingHint`, a missing file says it.
std::string readPlanFile(const std::string &dir, const std::string &relative,
                         int64_t maxBytes, const std::string &what,
                         const std::string &missingHint = "");

/// Plans of another format version are refused by name: version 1 plans
/// lack per_step.flops, and a newer one may mean what this reader does not
/// know.
void checkFormatVersion(const JsonObject &top);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_PLANFILE_H
