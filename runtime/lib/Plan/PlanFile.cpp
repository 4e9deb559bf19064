//===- PlanFile.cpp - reading a plan folder's files -----------------------===//
#include "ditc/Runtime/Plan/PlanFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/PlanFormat.h"
#include "ditc/Support/ReadFile.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sys/stat.h>

namespace ditc::runtime {

using nlohmann::json;

JsonObject element(const JsonObject &list, const std::string &field,
                          size_t index) {
  return JsonObject(list.file(), &list.raw()[field][index],
                    list.keyPath(field) + "[" + std::to_string(index) + "].");
}

/// Whether a patch-token feature order `order` (the value of `field`) is
/// "channels_first" (C, pt, ph, pw) rather than "channels_last" (pt, ph,
/// pw, C), the meaning of plans that do not say.
bool channelsFirst(const JsonObject &object, const std::string &field,
                          const std::optional<std::string> &order) {
  if (order && *order != "channels_last" && *order != "channels_first")
    object.fail(field, "is '" + escapeInvalidUtf8(*order) +
                           "'; expected channels_last or channels_first");
  return order == "channels_first";
}

const json &requireList(const JsonObject &object, const std::string &field) {
  if (!object.has(field) || !object.raw()[field].is_array())
    object.fail(field, "is missing or not a list");
  return object.raw()[field];
}

/// Reads `relative` inside the plan folder `dir`. The file must be a regular
/// file (not a symlink, O_NOFOLLOW), and every folder on the way must
/// resolve inside the plan folder: a plan whose programs/ links elsewhere is
/// refused rather than followed.
std::string readPlanFile(const std::string &dir,
                                const std::string &relative, int64_t maxBytes,
                                const std::string &what,
                                const std::string &missingHint) {
  std::string path = dir + "/" + relative;
  struct stat info;
  if (!missingHint.empty() && ::lstat(path.c_str(), &info) != 0 && errno == ENOENT)
    throw BadInput(escapeInvalidUtf8(path) + ": no such file (" + what + "; " +
                   missingHint + ")");
  char root[PATH_MAX], folder[PATH_MAX];
  std::string parent = path.substr(0, path.find_last_of('/'));
  if (!::realpath(dir.c_str(), root))
    throw BadInput(escapeInvalidUtf8(dir) + ": not a plan folder");
  if (!::realpath(parent.c_str(), folder))
    throw BadInput(escapeInvalidUtf8(path) + ": no such file (" + what + ")");
  std::string rootText = root, folderText = folder;
  if (folderText != rootText && folderText.rfind(rootText + "/", 0) != 0)
    throw BadInput(escapeInvalidUtf8(path) + ": its folder resolves to " +
                   escapeInvalidUtf8(folderText) + ", outside the plan folder " +
                   escapeInvalidUtf8(rootText) +
                   "; plans may not link out of their folder");
  ReadFileOptions options;
  options.refuseSymlink = true;
  options.what = what;
  return readRegularFile(path, maxBytes, options);
}
/// Plans of another format version are refused by name: version 1 plans
/// lack per_step.flops, and a newer one may mean what this reader does not
/// know.
void checkFormatVersion(const JsonObject &top) {
  int64_t version = top.getInt("format_version", 0, 1 << 20);
  if (version != kPlanFormatVersion)
    top.fail("format_version",
             "is " + std::to_string(version) + "; this dit-run reads format_version " +
                 std::to_string(kPlanFormatVersion) +
                 " only: recompile with this ditc (`ditc compile`)");
}
} // namespace ditc::runtime
