//===- ScratchDir.h - a unit test's own folder under /tmp ---------*- C++ -*-===//
//
// Each test executable writes its files into one folder of its own, made on
// first use and removed with everything in it when the tests end (links in
// it are removed, never followed), so runs leave nothing behind in /tmp.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TEST_UNIT_SCRATCHDIR_H
#define DITC_TEST_UNIT_SCRATCHDIR_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace ditc::test {

/// "/tmp/<prefix>.XXXXXX", this process's, made once.
inline const std::string &scratchRoot(const char *prefix) {
  static struct Root {
    std::string path;
    explicit Root(const char *prefix) : path(std::string("/tmp/") + prefix + ".XXXXXX") {
      EXPECT_NE(::mkdtemp(path.data()), nullptr) << path;
    }
    ~Root() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } root(prefix);
  return root.path;
}

} // namespace ditc::test

#endif // DITC_TEST_UNIT_SCRATCHDIR_H
