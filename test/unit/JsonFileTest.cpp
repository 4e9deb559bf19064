//===- JsonFileTest.cpp - typed JSON reads name file, field and value -----===//
#include "ditc/Support/JsonFile.h"

#include <gtest/gtest.h>

using namespace ditc;
using nlohmann::json;

namespace {

std::string jsonReadError(const std::function<void(const JsonObject &)> &read,
                          const json &value) {
  JsonObject object("cfg.json", &value);
  try {
    read(object);
  } catch (const BadInput &error) {
    return error.what();
  }
  return "";
}

TEST(JsonObject, ReadsInRangeIntegers) {
  json value = {{"heads", 40}};
  JsonObject object("cfg.json", &value);
  EXPECT_EQ(object.getInt("heads", 1, 4096), 40);
  EXPECT_EQ(object.getOptionalInt("missing", 1, 4), std::nullopt);
}

TEST(JsonObject, NamesFileFieldValueAndRange) {
  auto read = [](const JsonObject &o) { o.getInt("heads", 1, 4096); };
  EXPECT_EQ(jsonReadError(read, {{"heads", 0}}),
            "cfg.json: field 'heads' is 0, expected an integer in [1, 4096]");
  EXPECT_EQ(jsonReadError(read, {{"heads", "forty"}}),
            "cfg.json: field 'heads' is a string \"forty\", expected an "
            "integer in [1, 4096]");
  EXPECT_EQ(
      jsonReadError(read, json::object()),
      "cfg.json: missing field 'heads' (expected an integer in [1, 4096])");
  EXPECT_NE(jsonReadError(read, {{"heads", 1e30}}).find("overflows"),
            std::string::npos);
  EXPECT_NE(jsonReadError(read, {{"heads", 4.0}}).find("a float"),
            std::string::npos);
}

TEST(JsonObject, NestedObjectsReportTheirKeyPath) {
  json value = {{"components", {{"transformer", {{"tp_size", -1}}}}}};
  auto read = [](const JsonObject &o) {
    o.getObject("components").getObject("transformer").getInt("tp_size", 1, 64);
  };
  EXPECT_EQ(jsonReadError(read, value),
            "cfg.json: field 'components.transformer.tp_size' is -1, expected "
            "an integer in [1, 64]");
}

TEST(JsonObject, ObjectListsNameEachElement) {
  json value = {{"runs", {{{"threads", 1}}, {{"threads", 0}}}}};
  JsonObject object("cfg.json", &value);
  std::vector<JsonObject> runs = object.getObjectList("runs", "is not a list", false);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].getInt("threads", 1, 8), 1);
  auto second = [](const JsonObject &o) {
    o.getObjectList("runs", "is not a list", false)[1].getInt("threads", 1, 8);
  };
  EXPECT_EQ(
      jsonReadError(second, value),
      "cfg.json: field 'runs[1].threads' is 0, expected an integer in [1, 8]");
  auto list = [](const JsonObject &o) { o.getObjectList("runs", "is not a list", false); };
  EXPECT_EQ(jsonReadError(list, {{"runs", {1}}}),
            "cfg.json: field 'runs[0]' is not an object");
  EXPECT_NE(jsonReadError(list, json::object()).find("'runs'"),
            std::string::npos);
  EXPECT_NE(jsonReadError(list, {{"runs", 3}}).find("is not a list"),
            std::string::npos);
  EXPECT_NE(
      jsonReadError(list, {{"runs", json::array()}}).find("is not a list"),
      std::string::npos);
  // Absent is refused even where an empty list is allowed.
  EXPECT_NE(jsonReadError(
                [](const JsonObject &o) {
                  o.getObjectList("none", "is absent", true);
                },
                value)
                .find("is absent"),
            std::string::npos);
  json empty = {{"runs", json::array()}};
  EXPECT_TRUE(JsonObject("cfg.json", &empty).getObjectList("runs", "", true).empty());
}

TEST(JsonObject, ParseFileReportsLineAndColumn) {
  std::string path = ::testing::TempDir() + "/broken.json";
  FILE *file = std::fopen(path.c_str(), "w");
  std::fputs("{\n  \"a\": 1,\n  \"b\": ]\n}\n", file);
  std::fclose(file);
  try {
    JsonObject::parseFile(path);
    FAIL() << "expected a parse error";
  } catch (const BadInput &error) {
    std::string message = error.what();
    EXPECT_NE(message.find(path + ": malformed JSON at line 3, column 8"),
              std::string::npos)
        << message;
  }
}

} // namespace

#include "ditc/Support/Sha256.h"

namespace {
// FIPS 180-4 test vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(ditc::sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ditc::sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ditc::sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(ditc::sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
} // namespace
