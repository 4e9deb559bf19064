//===- FuzzInput.h - shared helpers for the fuzz targets --------*- C++ -*-===//
//
// Each target writes its input where the real reader expects a file (the
// readers take paths, and checking the path is part of what is fuzzed),
// runs the reader, and accepts only BadInput: any other exception escapes,
// and libFuzzer (or the replay driver) reports it as a finding.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TEST_FUZZ_FUZZINPUT_H
#define DITC_TEST_FUZZ_FUZZINPUT_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace ditc::fuzz {

/// A private scratch folder for this process, created once and removed
/// with everything in it when the process exits normally (a crash keeps it,
/// beside the crashing input).
inline const std::string &scratchDir() {
  static struct Scratch {
    std::string path;
    Scratch() {
      const char *base = std::getenv("TMPDIR");
      path = std::string(base && *base ? base : "/tmp") + "/ditc-fuzz.XXXXXX";
      if (!::mkdtemp(path.data())) {
        std::perror("ditc fuzz: mkdtemp");
        std::abort();
      }
    }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } scratch;
  return scratch.path;
}

/// Writes `size` bytes to `path` (created or truncated).
inline void writeBytes(const std::string &path, const uint8_t *data,
                       size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    std::perror(path.c_str());
    std::abort();
  }
  if (size && std::fwrite(data, 1, size, file) != size)
    std::abort();
  std::fclose(file);
}

/// With DITC_FUZZ_VERBOSE set, prints each refusal, to check that seed
/// inputs are accepted and that refusals read well.
inline void noteRefusal(const char *message) {
  static bool verbose = std::getenv("DITC_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::fprintf(stderr, "refused: %s\n", message);
}

inline void writeText(const std::string &path, const std::string &text) {
  writeBytes(path, reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

} // namespace ditc::fuzz

#endif // DITC_TEST_FUZZ_FUZZINPUT_H
