//===- AtomicFile.h - write a file whole or not at all ----------*- C++ -*-===//
//
// Outputs are written to a temporary file that mkstemp creates (O_EXCL, so a
// planted file or symlink is never followed) beside the target, then renamed
// over it. A target that exists but is not a regular file (a folder, a
// device such as /dev/null, a FIFO, a symbolic link) is refused, so ditc
// never replaces or writes through something that is not its own output.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_ATOMICFILE_H
#define DITC_SUPPORT_ATOMICFILE_H

#include <string>

namespace ditc {

/// Throws BadInput (naming `flag`, e.g. "--output", when given) unless
/// `path` can be an output: its folder exists and is writable, and the path
/// is absent or a regular file. Call it before any work, so a bad output
/// path costs nothing.
void checkOutputPath(const std::string &path, const std::string &flag = "");

/// Writes `contents` to `path` through a temporary file in the same folder
/// and a rename, so a failed run never leaves a partial output. Throws
/// BadInput when checkOutputPath refuses the path or the write fails.
void writeFileAtomically(const std::string &path, const std::string &contents);

/// The first half of writeFileAtomically: writes `contents` to a new
/// temporary file beside `path` and returns its name. Several outputs are
/// staged first and committed together, so a run that fails midway leaves
/// none of them behind. Throws BadInput.
std::string stageFile(const std::string &path, const std::string &contents);

/// The second half: renames the staged `temp` over `path` (refused, and the
/// temporary removed, when `path` has become something other than a
/// regular file). Throws BadInput.
void commitStagedFile(const std::string &temp, const std::string &path);

/// The absolute, symlink-free form of `path`'s folder followed by its last
/// component: two spellings of one output compare equal. Throws BadInput
/// when the folder does not exist.
std::string canonicalOutputPath(const std::string &path);

} // namespace ditc

#endif // DITC_SUPPORT_ATOMICFILE_H
