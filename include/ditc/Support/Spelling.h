//===- Spelling.h - nearest known names for a misspelled one ----*- C++ -*-===//
//
// Unknown flags, deployment keys and model names are answered with the known
// names closest to what was typed ("did you mean --pp-size?"). lib/Support
// has no LLVM (dit-run links it), so the edit distance lives here rather
// than coming from llvm::StringRef::edit_distance.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_SPELLING_H
#define DITC_SUPPORT_SPELLING_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ditc {

/// Levenshtein distance (insertions, deletions and substitutions of one
/// byte each), comparing ASCII letters case-insensitively.
size_t editDistance(std::string_view a, std::string_view b);

/// True when `a` and `b` are equal but for the case of ASCII letters.
bool equalsIgnoringCase(std::string_view a, std::string_view b);

/// The known names a typo of `given` could be, nearest first (ties keep the
/// order of `known`), at most `limit` of them, each within `maxDistance`
/// edits. By default that is a third of the typed length (at least 2), so
/// a slip of a key or two is caught and an unrelated word suggests nothing.
/// A known name that holds every word of `given` (words split at '-', '_'
/// and '.', any case) comes first whatever its distance: the typed name
/// left words out (--cfg-size for --cfg-parallel-size), which a near name
/// sharing only some of them (--dp-size) would not explain.
std::vector<std::string>
nearestNames(std::string_view given, const std::vector<std::string> &known,
             size_t limit = 1,
             std::optional<size_t> maxDistance = std::nullopt);

/// The tail of an "unknown name" message: "; did you mean 'x'? allowed: a,
/// b, c" with the nearest known name, or "; allowed: a, b, c" when none is
/// near. `label` names the list ("allowed", "known flags"); `quote` wraps
/// the suggestion (empty for flags, which read well bare).
std::string nearestAndKnown(std::string_view given,
                            const std::vector<std::string> &known,
                            const std::string &label,
                            const std::string &quote = "'");

} // namespace ditc

#endif // DITC_SUPPORT_SPELLING_H
