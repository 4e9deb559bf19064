//===- Spelling.cpp - nearest known names for a misspelled one ------------===//
#include "ditc/Support/Spelling.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <tuple>

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

/// The lower-case words of a name: its runs of characters between '-',
/// '_' and '.'.
static std::vector<std::string> wordsOf(std::string_view name) {
  std::vector<std::string> words(1);
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!words.back().empty())
        words.emplace_back();
      continue;
    }
    words.back() += lower(c);
  }
  if (words.back().empty())
    words.pop_back();
  return words;
}

/// Whether every word of `given` is a word of `name`, and `name` has more.
static bool holdsEveryWord(std::string_view given, std::string_view name) {
  std::vector<std::string> typed = wordsOf(given), words = wordsOf(name);
  if (typed.empty() || words.size() <= typed.size())
    return false;
  return std::all_of(typed.begin(), typed.end(), [&](const std::string &w) {
    return std::find(words.begin(), words.end(), w) != words.end();
  });
}

std::vector<std::string> nearestNames(std::string_view given,
                                      const std::vector<std::string> &known,
                                      size_t limit,
                                      std::optional<size_t> maxDistance) {
  size_t allowed = maxDistance.value_or(std::max<size_t>(2, given.size() / 3));
  // (rank, distance, index in known): rank 0 for a name holding every typed
  // word, 1 for one within the allowed edits.
  std::vector<std::tuple<int, size_t, size_t>> candidates;
  for (size_t i = 0; i < known.size(); ++i) {
    size_t distance = editDistance(given, known[i]);
    if (holdsEveryWord(given, known[i]))
      candidates.push_back({0, distance, i});
    else if (distance <= allowed)
      candidates.push_back({1, distance, i});
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto &x, const auto &y) {
    return std::make_pair(std::get<0>(x), std::get<1>(x)) <
           std::make_pair(std::get<0>(y), std::get<1>(y));
  });
  std::vector<std::pair<size_t, size_t>> near; // (distance, index in known)
  for (const auto &[rank, distance, index] : candidates)
    near.push_back({distance, index});
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
