//===- AtomicFile.h - write a file whole or not at all ----------*- C++ -*-===//
#ifndef DITC_SUPPORT_ATOMICFILE_H
#define DITC_SUPPORT_ATOMICFILE_H

#include <string>

namespace ditc {

/// Writes `contents` to `path` through a temporary file in the same folder
/// and a rename, so a failed run never leaves a partial output. Throws
/// BadInput when the folder cannot be written.
void writeFileAtomically(const std::string &path, const std::string &contents);

} // namespace ditc

#endif // DITC_SUPPORT_ATOMICFILE_H
