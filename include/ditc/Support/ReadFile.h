//===- ReadFile.h - bounded reads of untrusted input files ------*- C++ -*-===//
//
// Every file ditc or dit-run reads is untrusted. It is opened without
// blocking (a FIFO would otherwise hang the open), checked with fstat to be a
// regular file no larger than a cap chosen per kind of file, and only then
// read. A path that names a FIFO, a device, a socket or a folder is refused
// with a message naming the path.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_READFILE_H
#define DITC_SUPPORT_READFILE_H

#include "ditc/Support/Utf8.h"

#include <cstdint>
#include <string>

namespace ditc {

/// Size caps per kind of input, in bytes. Real inputs stay far below them.
constexpr int64_t kMaxJsonFileBytes = int64_t(64) << 20;    // configs, manifests
constexpr int64_t kMaxProgramFileBytes = int64_t(256) << 20; // plan programs
constexpr int64_t kMaxNpyFileBytes = int64_t(4) << 30;       // .npy inputs

struct ReadFileOptions {
  /// Refuse a path whose last component is a symbolic link (O_NOFOLLOW).
  bool refuseSymlink = false;
  /// What the file is, for messages ("JSON file", "program 's0_c0'").
  std::string what = "file";
};

/// An open, fstat-checked regular file. Closes on destruction.
class RegularFile {
public:
  /// Opens `path`; throws BadInput when it is missing, not a regular file,
  /// a refused symlink, or larger than `maxBytes`.
  RegularFile(const std::string &path, int64_t maxBytes,
              const ReadFileOptions &options = {});
  ~RegularFile();
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;

  int64_t size() const { return bytes; }
  const std::string &path() const { return name; }
  /// Reads exactly `count` bytes at `offset` into `out`; throws BadInput
  /// when the file is shorter (it changed since it was checked).
  void readAt(int64_t offset, int64_t count, char *out) const;
  /// The whole file.
  std::string readAll() const;
  /// The whole file mapped read-only (once; unmapped with the object), for
  /// readers that use large files in place. Accessing the mapping after the
  /// file shrank raises SIGBUS, so callers validate offsets first and
  /// document that the file must not change while mapped.
  const char *map() const;

private:
  std::string name;
  std::string what;
  int fd = -1;
  int64_t bytes = 0;
  mutable void *mapping = nullptr;
};

/// Reads a whole regular file of at most `maxBytes`.
std::string readRegularFile(const std::string &path, int64_t maxBytes,
                            const ReadFileOptions &options = {});

/// Whether `path` names anything that stat can see (a dangling symlink does
/// not count). For choosing between layouts, never for trusting a file:
/// reads still go through RegularFile.
bool pathExists(const std::string &path);

/// Whether `path` names a folder (following symlinks).
bool isDirectoryPath(const std::string &path);

} // namespace ditc

#endif // DITC_SUPPORT_READFILE_H
