//===- SpellingTest.cpp - edit distance and nearest names -----------------===//
#include "ditc/Support/Spelling.h"

#include <gtest/gtest.h>

using namespace ditc;

namespace {

TEST(Spelling, EditDistanceCountsSingleByteEdits) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("abc", ""), 3u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("--pp-szie", "--pp-size"), 2u);
  EXPECT_EQ(editDistance("FLUX.1-dev", "flux.1-dev"), 0u);
}

TEST(Spelling, NearestNamesKeepsNearMissesNearestFirst) {
  std::vector<std::string> known = {"tp_size", "pp_size", "cfg_size"};
  EXPECT_EQ(nearestNames("tp_szie", known),
            std::vector<std::string>{"tp_size"});
  EXPECT_EQ(nearestNames("p_size", known, 2),
            (std::vector<std::string>{"tp_size", "pp_size"}));
  EXPECT_TRUE(nearestNames("tensor_parallel", known).empty());
  EXPECT_EQ(nearestAndKnown("cfg_szie", known, "allowed"),
            "; did you mean 'cfg_size'? allowed: tp_size, pp_size, cfg_size");
  EXPECT_EQ(nearestAndKnown("unrelated", known, "known", ""),
            "; known: tp_size, pp_size, cfg_size");
}

TEST(Spelling, ANameHoldingEveryTypedWordComesFirst) {
  // --cfg-size is two edits from --dp-size but leaves a word out of
  // --cfg-parallel-size: the user means the latter.
  std::vector<std::string> flags = {"--dp-size", "--tp-size", "--cfg-parallel-size",
                                    "--text-encoder-tp-size"};
  EXPECT_EQ(nearestNames("--cfg-size", flags).front(), "--cfg-parallel-size");
  EXPECT_EQ(nearestNames("--CFG_size", flags).front(), "--cfg-parallel-size");
  // Of the names holding every word, the nearest first; a near miss still
  // counts after them.
  EXPECT_EQ(nearestNames("--tp", flags, 3),
            (std::vector<std::string>{"--tp-size", "--text-encoder-tp-size"}));
  EXPECT_EQ(nearestNames("--tp-sizes", flags, 2),
            (std::vector<std::string>{"--tp-size", "--dp-size"}));
  // The same words are not a longer name's: a plain typo stays a typo.
  EXPECT_EQ(nearestNames("--tp-szie", flags).front(), "--tp-size");
}

TEST(Spelling, EqualsIgnoringCaseComparesAsciiLetters) {
  EXPECT_TRUE(equalsIgnoringCase("Qwen/Qwen-Image", "qwen/qwen-image"));
  EXPECT_FALSE(equalsIgnoringCase("qwen-image", "qwen-image2"));
}

} // namespace
