//===- JsonFile.h - typed, range-checked reads from a JSON file -*- C++ -*-===//
//
// Every accessor names the file and the field in its error, so a bad config
// produces "x/config.json: field 'num_layers' is "forty", expected an
// integer in [1, 16777216]" rather than a crash deep in the importer.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_JSONFILE_H
#define DITC_SUPPORT_JSONFILE_H

#include "ditc/Support/BadInput.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ditc {

/// Deepest nesting of lists and objects any ditc input may have; real
/// configs, deployments and plans stay under 10.
constexpr int kMaxJsonDepth = 64;

/// One JSON object with the file it came from, for error messages. A nested
/// object is a JsonObject too; its fields are named by their whole key path
/// ("components.transformer.tp_size").
class JsonObject {
public:
  JsonObject(std::string file, const nlohmann::json *object,
             std::string keyPrefix = "")
      : where(std::move(file)), prefix(std::move(keyPrefix)), object(object) {}

  /// Reads and parses `path`; throws BadInput when the file is missing,
  /// unreadable, not JSON (with line and column), or not a JSON object.
  static nlohmann::json parseFile(const std::string &path);
  /// Parses `text` (read from `path`, named in messages) with the same
  /// checks: duplicate keys and nesting deeper than kMaxJsonDepth are
  /// refused. The top level may be any value.
  static nlohmann::json parseText(const std::string &text,
                                  const std::string &path);

  const std::string &file() const { return where; }
  /// The full key path of `field` inside the file.
  std::string keyPath(const std::string &field) const { return prefix + field; }
  const nlohmann::json &raw() const { return *object; }

  /// True when the field is present and not null.
  bool has(const std::string &field) const;

  int64_t getInt(const std::string &field, int64_t min, int64_t max) const;
  std::optional<int64_t> getOptionalInt(const std::string &field, int64_t min,
                                        int64_t max) const;
  double getOptionalDouble(const std::string &field, double fallback,
                           double min, double max) const;
  std::string getString(const std::string &field) const;
  std::optional<std::string> getOptionalString(const std::string &field) const;
  bool getOptionalBool(const std::string &field, bool fallback) const;
  std::vector<int64_t> getIntList(const std::string &field, int64_t min,
                                  int64_t max) const;
  /// A non-empty list of non-empty integer lists (rank lists).
  std::vector<std::vector<int64_t>> getIntLists(const std::string &field,
                                                int64_t min, int64_t max) const;
  /// A nested object; throws when absent or not an object.
  JsonObject getObject(const std::string &field) const;
  /// The objects of the list `field`, each named "field[i]" in messages.
  /// Fails with `notAList` when the field is absent or not a list (or an
  /// empty one, unless `allowEmpty`), and names any element that is not
  /// an object.
  std::vector<JsonObject> getObjectList(const std::string &field,
                                        const std::string &notAList,
                                        bool allowEmpty) const;

  /// Throws BadInput naming this object's location and `field`, with the
  /// field's value when `field` is a key of this object.
  [[noreturn]] void fail(const std::string &field,
                         const std::string &problem) const;
  /// The same for `field` (a key or a path below one, "instances[0][1]")
  /// holding `value` (null when absent).
  [[noreturn]] void failAt(const std::string &field,
                           const nlohmann::json *value,
                           const std::string &problem) const;

private:
  const nlohmann::json &require(const std::string &field,
                                const std::string &expected) const;
  std::string where;
  std::string prefix;
  const nlohmann::json *object;
};

/// A diffusers config.json without the keys diffusers adds about itself
/// (those starting with '_': _class_name, _diffusers_version,
/// _name_or_path...), which differ between copies of one model; with
/// `keepClassName`, _class_name stays (a VAE's picks its decoder). What a
/// plan records of a snapshot's configs and what dit-run compares with it.
nlohmann::json withoutDiffusersMetadata(const nlohmann::json &config,
                                        bool keepClassName);

/// Short, single-line rendering of a JSON value for error messages.
std::string describeJson(const nlohmann::json &value);
/// The value itself, shortened: a string without quotes, anything else as
/// compact JSON. For InputLocation::value.
std::string shortValueText(const nlohmann::json &value);

} // namespace ditc

#endif // DITC_SUPPORT_JSONFILE_H
