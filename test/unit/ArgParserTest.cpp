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

std::string argParseError(const std::vector<std::string> &argv) {
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
  std::string error = argParseError({"--heigth", "480"});
  EXPECT_NE(error.find("unknown flag '--heigth'"), std::string::npos) << error;
  EXPECT_NE(error.find("--height"), std::string::npos) << error;
}

TEST(ArgParser, RejectsBadNumbers) {
  EXPECT_NE(argParseError({"--height", "abc"}).find("is not a number"),
            std::string::npos);
  EXPECT_NE(argParseError({"--height", "0"}).find("out of range"),
            std::string::npos);
  EXPECT_NE(argParseError({"--height", "-5"}).find("out of range"),
            std::string::npos);
  EXPECT_NE(
      argParseError({"--height", "99999999999999999999999"}).find("overflows"),
      std::string::npos);
  EXPECT_NE(argParseError({"--height"}).find("needs a value"),
            std::string::npos);
  EXPECT_NE(argParseError({"--height", "4", "--height", "8"}).find("twice"),
            std::string::npos);
}

TEST(ArgParser, SuggestsTheNearestFlag) {
  std::string error = argParseError({"--hieght", "480"});
  EXPECT_NE(error.find("did you mean --height?"), std::string::npos) << error;
  EXPECT_EQ(argParseError({"--colour", "red"}).find("did you mean"),
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

// A Flag declaration drives the parser (kind, alias, range, values) and
// the --help line, so the two cannot disagree.
TEST(Flag, OneDeclarationParsesReadsAndDescribes) {
  const Flag pp = Flag::option("--pp-size", "P", "pipeline stages")
                      .range(1, 8)
                      .alias("--pipeline-parallel-size")
                      .json("pp_size");
  const Flag format = Flag::option("--format", "", "output format")
                          .choices({{"text", ""}, {"json", ""}});
  const Flag summary = Flag::switchFlag("--summary", "print a summary");
  ArgParser args("ditc test");
  args.add({&pp, &format, &summary});
  args.parse({"--pipeline-parallel-size", "4", "--format=json", "--summary"});
  EXPECT_EQ(args.getInt(pp), 4);
  EXPECT_EQ(args.getChoice(format), "json");
  EXPECT_TRUE(args.has(summary));
  EXPECT_EQ(pp.jsonKey, "pp_size");

  ArgParser outOfRange("ditc test");
  outOfRange.add(pp);
  outOfRange.parse({"--pp-size", "9"});
  EXPECT_THROW(outOfRange.getInt(pp), BadInput);

  ArgParser badChoice("ditc test");
  badChoice.add(format);
  badChoice.parse({"--format", "xml"});
  try {
    badChoice.getChoice(format);
    ADD_FAILURE() << "xml is not a format";
  } catch (const BadInput &error) {
    EXPECT_STREQ(error.what(), "command line: --format value 'xml' is not "
                               "allowed; expected text or json");
  }

  EXPECT_EQ(formatFlagHelp({&pp, &format, &summary}),
            "  --pp-size P               pipeline stages (also "
            "--pipeline-parallel-size)\n"
            "  --format text|json        output format\n"
            "  --summary                 print a summary\n");
}

TEST(Flag, HelpJoinsUnhelpedFlagsAndWrapsLongOnes) {
  const Flag height = Flag::option("--height", "H", "pixels");
  const Flag width = Flag::option("--width", "W", "");
  const Flag partition =
      Flag::option("--pp-layer-partition", "a,b,...", "blocks\nper stage");
  const Flag objective = Flag::option("--objective", "", "").choices(
      {{"latency", "fastest step"}, {"throughput", "most requests"}});
  const Flag hidden = Flag::switchFlag("--secret", "not shown").hidden();
  EXPECT_EQ(formatFlagHelp({&height, &width, &partition, &objective, &hidden}),
            "  --height H, --width W     pixels\n"
            "  --pp-layer-partition a,b,...\n"
            "                            blocks\n"
            "                            per stage\n"
            "  --objective latency       fastest step\n"
            "  --objective throughput    most requests\n");
}

} // namespace
