//===- Spelling.cpp - nearest known names for a misspelled one ------------===//
#include "ditc/Support/Spelling.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace ditc {

static char lower(char c) {
  return char(std::tolower(static_cast<unsigned char>(c)));
}

size_t editDistance(std::string_view a, std::string_view b) {
  // One row of the dynamic-programming table at a time.
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t(0));
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t substitute = diagonal + (lower(a[i - 1]) != lower(b[j - 1]));
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](char x, char y) { return lower(x) == lower(y); });
}

std::vector<std::string> nearestNames(std::string_view given,
                                      const std::vector<std::string> &known,
                                      size_t limit,
                                      std::optional<size_t> maxDistance) {
  size_t allowed = maxDistance.value_or(std::max<size_t>(2, given.size() / 3));
  std::vector<std::pair<size_t, size_t>> near; // (distance, index in known)
  for (size_t i = 0; i < known.size(); ++i)
    if (size_t distance = editDistance(given, known[i]); distance <= allowed)
      near.push_back({distance, i});
  std::stable_sort(near.begin(), near.end(), [](const auto &x, const auto &y) {
    return x.first < y.first;
  });
  std::vector<std::string> names;
  for (size_t i = 0; i < near.size() && names.size() < limit; ++i)
    if (std::find(names.begin(), names.end(), known[near[i].second]) ==
        names.end())
      names.push_back(known[near[i].second]);
  return names;
}

std::string nearestAndKnown(std::string_view given,
                            const std::vector<std::string> &known,
                            const std::string &label,
                            const std::string &quote) {
  std::string list;
  for (const std::string &name : known)
    list += (list.empty() ? "" : ", ") + name;
  std::vector<std::string> nearest = nearestNames(given, known);
  if (nearest.empty())
    return "; " + label + ": " + list;
  return "; did you mean " + quote + nearest.front() + quote + "? " + label +
         ": " + list;
}

} // namespace ditc
