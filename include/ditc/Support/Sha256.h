//===- Sha256.h - SHA-256 of a byte string ----------------------*- C++ -*-===//
//
// Plans name their program files by content hash, and ranks agree on the
// plan by hash before they compute. The runtime must compute the same hash
// without LLVM, so it lives here, in the MLIR-free support library.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_SUPPORT_SHA256_H
#define DITC_SUPPORT_SHA256_H

#include <string>

namespace ditc {

/// Lower-case hex SHA-256 (FIPS 180-4) of `data`.
std::string sha256Hex(const std::string &data);

} // namespace ditc

#endif // DITC_SUPPORT_SHA256_H
