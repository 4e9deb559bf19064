//===- JsonFile.cpp - typed, range-checked reads from a JSON file ---------===//
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace ditc {

using nlohmann::json;

namespace {
/// Renders at most `budget` characters of a JSON value, iteratively bounded
/// in depth, so quoting a hostile value costs neither stack nor time.
class ShortRenderer {
public:
  explicit ShortRenderer(size_t budget) : budget(budget) {}
  std::string render(const json &value) {
    emit(value, 0);
    return full ? out.substr(0, budget - 3) + "..." : out;
  }

private:
  void put(const std::string &text) {
    if (full)
      return;
    out += text;
    if (out.size() > budget)
      full = true;
  }
  void emit(const json &value, int depth) {
    if (full)
      return;
    if (depth > 4) {
      put("...");
      return;
    }
    switch (value.type()) {
    case json::value_t::object: {
      put("{");
      bool first = true;
      for (auto it = value.begin(); it != value.end() && !full; ++it) {
        put(std::string(first ? "" : ",") + "\"" + escapeInvalidUtf8(it.key()) +
            "\":");
        emit(it.value(), depth + 1);
        first = false;
      }
      put("}");
      break;
    }
    case json::value_t::array: {
      put("[");
      for (size_t i = 0; i < value.size() && !full; ++i) {
        if (i)
          put(",");
        emit(value[i], depth + 1);
      }
      put("]");
      break;
    }
    case json::value_t::string:
      put("\"" + escapeInvalidUtf8(value.get_ref<const std::string &>()) + "\"");
      break;
    default:
      // Scalars dump without recursion or UTF-8 concerns.
      put(value.dump());
      break;
    }
  }
  size_t budget;
  std::string out;
  bool full = false;
};
} // namespace

std::string shortValueText(const json &value) {
  if (!value.is_string())
    return ShortRenderer(60).render(value);
  std::string text = escapeInvalidUtf8(value.get_ref<const std::string &>());
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

json withoutDiffusersMetadata(const json &config, bool keepClassName) {
  json kept = json::object();
  for (auto it = config.begin(); it != config.end(); ++it)
    if (it.key().empty() || it.key()[0] != '_' ||
        (keepClassName && it.key() == "_class_name"))
      kept[it.key()] = it.value();
  return kept;
}

std::string describeJson(const json &value) {
  std::string text = ShortRenderer(60).render(value);
  const char *kind = "";
  switch (value.type()) {
  case json::value_t::string: kind = "a string "; break;
  case json::value_t::boolean: kind = "a boolean "; break;
  case json::value_t::array: kind = "a list "; break;
  case json::value_t::object: kind = "an object "; break;
  case json::value_t::null: kind = ""; break;
  default: break;
  }
  return std::string(kind) + text;
}

static std::string intRange(int64_t min, int64_t max) {
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
         "]";
}

json JsonObject::parseFile(const std::string &path) {
  ReadFileOptions options;
  options.what = "JSON file";
  std::string text = readRegularFile(path, kMaxJsonFileBytes, options);
  json parsed = parseText(text, escapeInvalidUtf8(path));
  if (!parsed.is_object())
    badFile(escapeInvalidUtf8(path), "top level is " + describeJson(parsed) +
                                         ", expected a JSON object");
  return parsed;
}

namespace {
/// Builds the document like json::parse, refusing nesting deeper than
/// kMaxJsonDepth (so no later walk over the value, a dump or a destructor,
/// can run out of stack) and keys given twice in one object (nlohmann keeps
/// the last; a config that says "tp_size" twice is ambiguous). A SAX handler
/// rather than json::parse's callback: nlohmann 3.11's callback parser
/// rescans the enclosing list after every object it closes, which is
/// quadratic in a list of objects (200,000 signals: 5 s instead of 0.1 s).
class CheckedDomParser : public nlohmann::detail::json_sax_dom_parser<json> {
  using Base = nlohmann::detail::json_sax_dom_parser<json>;

public:
  CheckedDomParser(json &result, const std::string &path)
      : Base(result, /*allow_exceptions=*/true), path(path) {}
  bool start_object(std::size_t size) {
    enter();
    keysPerObject.emplace_back();
    return Base::start_object(size);
  }
  bool end_object() {
    keysPerObject.pop_back();
    --depth;
    return Base::end_object();
  }
  bool start_array(std::size_t size) {
    enter();
    return Base::start_array(size);
  }
  bool end_array() {
    --depth;
    return Base::end_array();
  }
  bool key(std::string &key) {
    if (!keysPerObject.back().insert(key).second)
      throw BadInput(path + ": key '" + escapeInvalidUtf8(key) +
                         "' appears twice in one object; give each key once",
                     InputLocation{path, escapeInvalidUtf8(key), ""});
    return Base::key(key);
  }

private:
  void enter() {
    if (++depth > kMaxJsonDepth)
      badFile(path, "JSON nests deeper than " + std::to_string(kMaxJsonDepth) +
                        " levels of lists and objects; no ditc input needs "
                        "that");
  }
  const std::string &path;
  int depth = 0;
  std::vector<std::set<std::string>> keysPerObject;
};
} // namespace

json JsonObject::parseText(const std::string &text, const std::string &path) {
  json parsed;
  CheckedDomParser handler(parsed, path);
  try {
    json::sax_parse(text, &handler);
  } catch (const json::parse_error &error) {
    // Report the position as line:column of the text, not nlohmann's byte
    // offset, so the message points where an editor would.
    size_t offset = error.byte == 0 ? 0 : error.byte - 1;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = error.what();
    if (auto colon = what.rfind(": "); colon != std::string::npos)
      what = what.substr(colon + 2);
    badFile(path, "malformed JSON at line " + std::to_string(line) +
                      ", column " + std::to_string(column) + ": " +
                      escapeInvalidUtf8(what));
  } catch (const json::exception &error) {
    // e.g. a number literal beyond double range (1e400).
    std::string what = error.what();
    if (auto bracket = what.find("] "); bracket != std::string::npos)
      what = what.substr(bracket + 2);
    badFile(path, "malformed JSON: " + escapeInvalidUtf8(what));
  }
  return parsed;
}

void JsonObject::fail(const std::string &field,
                      const std::string &problem) const {
  auto it = object->is_object() ? object->find(field) : object->end();
  failAt(field, it == object->end() ? nullptr : &*it, problem);
}

void JsonObject::failAt(const std::string &field, const json *value,
                        const std::string &problem) const {
  throw BadInput(where + ": field '" + keyPath(field) + "' " + problem,
                 InputLocation{where, keyPath(field),
                               value ? shortValueText(*value) : ""});
}

bool JsonObject::has(const std::string &field) const {
  auto it = object->find(field);
  return it != object->end() && !it->is_null();
}

const json &JsonObject::require(const std::string &field,
                                const std::string &expected) const {
  auto it = object->find(field);
  if (it == object->end() || it->is_null())
    throw BadInput(where + ": missing field '" + keyPath(field) +
                       "' (expected " + expected + ")",
                   InputLocation{where, keyPath(field), ""});
  return *it;
}

static int64_t checkInt(const JsonObject &obj, const std::string &field,
                        const json &value, int64_t min, int64_t max) {
  std::string expected = intRange(min, max);
  if (value.is_number_float()) {
    double d = value.get<double>();
    if (std::isfinite(d) && std::fabs(d) >= 9.2e18)
      obj.failAt(field, &value,
                 "is " + value.dump() +
                     ", which overflows a 64-bit integer; expected " +
                     expected);
    if (std::isfinite(d) && d == std::floor(d))
      obj.failAt(field, &value,
                 "is " + value.dump() + ", a float; expected " + expected);
  }
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > uint64_t(INT64_MAX))
    obj.failAt(field, &value,
               "is " + value.dump() +
                   ", which overflows a 64-bit integer; expected " + expected);
  if (!value.is_number_integer())
    obj.failAt(field, &value,
               "is " + describeJson(value) + ", expected " + expected);
  int64_t result = value.get<int64_t>();
  if (result < min || result > max)
    obj.failAt(field, &value,
               "is " + std::to_string(result) + ", expected " + expected);
  return result;
}

int64_t JsonObject::getInt(const std::string &field, int64_t min,
                           int64_t max) const {
  return checkInt(*this, field, require(field, intRange(min, max)), min, max);
}

std::optional<int64_t> JsonObject::getOptionalInt(const std::string &field,
                                                  int64_t min,
                                                  int64_t max) const {
  if (!has(field))
    return std::nullopt;
  return checkInt(*this, field, object->at(field), min, max);
}

double JsonObject::getOptionalDouble(const std::string &field, double fallback,
                                     double min, double max) const {
  if (!has(field))
    return fallback;
  const json &value = object->at(field);
  std::ostringstream expected;
  expected << "a number in [" << min << ", " << max << "]";
  if (!value.is_number())
    fail(field, "is " + describeJson(value) + ", expected " + expected.str());
  double d = value.get<double>();
  if (!std::isfinite(d) || d < min || d > max)
    fail(field, "is " + value.dump() + ", expected " + expected.str());
  return d;
}

std::string JsonObject::getString(const std::string &field) const {
  const json &value = require(field, "a string");
  if (!value.is_string())
    fail(field, "is " + describeJson(value) + ", expected a string");
  return value.get<std::string>();
}

std::optional<std::string>
JsonObject::getOptionalString(const std::string &field) const {
  if (!has(field))
    return std::nullopt;
  return getString(field);
}

bool JsonObject::getOptionalBool(const std::string &field,
                                 bool fallback) const {
  if (!has(field))
    return fallback;
  const json &value = object->at(field);
  if (!value.is_boolean())
    fail(field, "is " + describeJson(value) + ", expected true or false");
  return value.get<bool>();
}

std::vector<int64_t> JsonObject::getIntList(const std::string &field,
                                            int64_t min, int64_t max) const {
  const json &value = require(field, "a list of " + intRange(min, max));
  if (!value.is_array())
    fail(field, "is " + describeJson(value) +
                    ", expected a list of integers in [" + std::to_string(min) +
                    ", " + std::to_string(max) + "]");
  std::vector<int64_t> out;
  for (size_t i = 0; i < value.size(); ++i)
    out.push_back(checkInt(*this, field + "[" + std::to_string(i) + "]",
                           value[i], min, max));
  return out;
}

std::vector<std::vector<int64_t>>
JsonObject::getIntLists(const std::string &field, int64_t min,
                        int64_t max) const {
  std::string expected = "a non-empty list of non-empty lists of integers "
                         "in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]";
  const json &value = require(field, expected);
  if (!value.is_array() || value.empty())
    fail(field, "is " + describeJson(value) + ", expected " + expected);
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string item = field + "[" + std::to_string(i) + "]";
    if (!value[i].is_array() || value[i].empty())
      failAt(item, &value[i],
             "is " + describeJson(value[i]) +
                 ", expected a non-empty list of integers in [" +
                 std::to_string(min) + ", " + std::to_string(max) + "]");
    std::vector<int64_t> inner;
    for (size_t j = 0; j < value[i].size(); ++j)
      inner.push_back(checkInt(*this, item + "[" + std::to_string(j) + "]",
                               value[i][j], min, max));
    out.push_back(std::move(inner));
  }
  return out;
}

JsonObject JsonObject::getObject(const std::string &field) const {
  const json &value = require(field, "an object");
  if (!value.is_object())
    fail(field, "is " + describeJson(value) + ", expected an object");
  return JsonObject(where, &value, keyPath(field) + ".");
}

std::vector<JsonObject> JsonObject::getObjectList(const std::string &field,
                                                  const std::string &notAList,
                                                  bool allowEmpty) const {
  if (!object->contains(field) || !object->at(field).is_array() ||
      (!allowEmpty && object->at(field).empty()))
    fail(field, notAList);
  const json &list = object->at(field);
  std::vector<JsonObject> out;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = field + "[" + std::to_string(i) + "]";
    if (!list[i].is_object())
      failAt(at, &list[i], "is not an object");
    out.emplace_back(where, &list[i], keyPath(at) + ".");
  }
  return out;
}

} // namespace ditc
