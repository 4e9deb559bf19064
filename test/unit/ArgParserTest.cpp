//===- ArgParserTest.cpp - strict flag parsing ----------------------------===//
#include "ditc/Support/ArgParser.h"

#include <gtest/gtest.h>

using namespace ditc;

namespace {

ArgParser makeParser() {
  ArgParser args("ditc test");
  args.addOption("--height");
  args.addOption("-o");
  args.addSwitch("--summary");
  return args;
}

std::string errorOf(const std::vector<std::string> &argv) {
  ArgParser args = makeParser();
  try {
    args.parse(argv);
    args.getInt("--height", 1, 65536);
  } catch (const BadInput &error) {
    return error.what();
  }
  return "";
}

TEST(ArgParser, ReadsValuesSwitchesAndPositionals) {
  ArgParser args = makeParser();
  args.parse({"model", "--height", "480", "--summary", "-o", "out.mlir"});
  EXPECT_EQ(args.getInt("--height", 1, 65536), 480);
  EXPECT_TRUE(args.has("--summary"));
  EXPECT_EQ(args.get("-o"), "out.mlir");
  ASSERT_EQ(args.positional().size(), 1u);
  EXPECT_EQ(args.positional()[0], "model");
}

TEST(ArgParser, AcceptsEqualsForm) {
  ArgParser args = makeParser();
  args.parse({"--height=720"});
  EXPECT_EQ(args.getInt("--height", 1, 65536), 720);
}

TEST(ArgParser, RejectsUnknownFlagAndNamesTheKnownOnes) {
  std::string error = errorOf({"--heigth", "480"});
  EXPECT_NE(error.find("unknown flag '--heigth'"), std::string::npos) << error;
  EXPECT_NE(error.find("--height"), std::string::npos) << error;
}

TEST(ArgParser, RejectsBadNumbers) {
  EXPECT_NE(errorOf({"--height", "abc"}).find("is not a number"), std::string::npos);
  EXPECT_NE(errorOf({"--height", "0"}).find("out of range"), std::string::npos);
  EXPECT_NE(errorOf({"--height", "-5"}).find("out of range"), std::string::npos);
  EXPECT_NE(errorOf({"--height", "99999999999999999999999"}).find("overflows"),
            std::string::npos);
  EXPECT_NE(errorOf({"--height"}).find("needs a value"), std::string::npos);
  EXPECT_NE(errorOf({"--height", "4", "--height", "8"}).find("twice"),
            std::string::npos);
}

TEST(ArgParser, SuggestsTheNearestFlag) {
  std::string error = errorOf({"--hieght", "480"});
  EXPECT_NE(error.find("did you mean --height?"), std::string::npos) << error;
  EXPECT_EQ(errorOf({"--colour", "red"}).find("did you mean"),
            std::string::npos);
}

TEST(ArgParser, ReadsAnAliasAsItsFlagAndNamesTheSpellingGiven) {
  ArgParser args = makeParser();
  args.addAlias("--image-height", "--height");
  args.parse({"--image-height", "720"});
  EXPECT_EQ(args.getInt("--height", 1, 65536), 720);

  ArgParser outOfRange = makeParser();
  outOfRange.addAlias("--image-height", "--height");
  outOfRange.parse({"--image-height=0"});
  try {
    outOfRange.getInt("--height", 1, 65536);
    ADD_FAILURE() << "0 is out of range";
  } catch (const BadInput &error) {
    EXPECT_NE(std::string(error.what()).find("--image-height value 0"),
              std::string::npos)
        << error.what();
  }

  ArgParser twice = makeParser();
  twice.addAlias("--image-height", "--height");
  EXPECT_THROW(twice.parse({"--height", "1", "--image-height", "2"}), BadInput);
}

} // namespace
