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

/// Reads a little-endian float32 (or float64, converted) C-order .npy file.
/// Throws BadInput naming the file and what is wrong with it.
NpyArray readNpy(const std::string &path);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_NPY_H
