//===- Npy.h - NumPy .npy files, float32, C order ---------------*- C++ -*-===//
#ifndef DITC_RUNTIME_NPY_H
#define DITC_RUNTIME_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

/// Serializes a float32 C-order array as .npy (format 1.0).
std::string encodeNpy(const std::vector<int64_t> &shape, const float *data);

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// The fields of a .npy header.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Largest .npy header accepted, as NumPy's own default limit.
constexpr int64_t kMaxNpyHeaderBytes = 10000;

/// Parses the header dict (without the magic and length prefix); throws
/// BadInput naming `path` on anything but the three keys NumPy writes.
NpyHeader parseNpyHeader(const std::string &text, const std::string &path);

/// "(2, 3)", "(4,)" or "()", as NumPy prints shapes.
std::string describeShape(const std::vector<int64_t> &shape);

/// Reads a little-endian float32 (or float64, converted) C-order .npy file.
/// The file must be a regular file of at most kMaxNpyFileBytes. Throws
/// BadInput naming the file and what is wrong with it.
NpyArray readNpy(const std::string &path);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_NPY_H
