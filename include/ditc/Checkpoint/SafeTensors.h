//===- SafeTensors.h - a bounded reader of .safetensors files ---*- C++ -*-===//
//
// The format (huggingface/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON mapping each tensor name to {"dtype", "shape",
// "data_offsets": [begin, end]} (offsets relative to the data that follows
// the header), an optional "__metadata__" object of strings, then the raw
// little-endian data. The file is untrusted: it is checked in this order,
// before any byte of data is read:
//   1. a regular file, at most kMaxSafeTensorsFileBytes;
//   2. the header length, at most kMaxSafeTensorsHeaderBytes and inside the
//      file; the header is JSON (nesting and duplicate keys checked);
//   3. every entry: a known dtype, a shape of at most 8 sizes, offsets that
//      are ordered, inside the data and exactly numel x element size, and
//      that tile the data without overlaps or holes (as the format requires).
// Reads then go straight to the requested byte range with pread, so a rank
// reads only the slices it holds.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_CHECKPOINT_SAFETENSORS_H
#define DITC_CHECKPOINT_SAFETENSORS_H

#include "ditc/Support/ReadFile.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ditc::checkpoint {

/// Element types a checkpoint may store; all are converted to float on read.
enum class StoredType { F32, F16, BF16 };

const char *storedTypeName(StoredType type);
int64_t storedTypeBytes(StoredType type);

struct StoredTensor {
  std::string name;
  StoredType type = StoredType::F32;
  std::vector<int64_t> shape;
  int64_t begin = 0, end = 0; // absolute byte offsets in the file
  int64_t elements() const;
};

constexpr int64_t kMaxSafeTensorsFileBytes = int64_t(1) << 40;  // 1 TiB
constexpr int64_t kMaxSafeTensorsHeaderBytes = int64_t(100) << 20; // 100 MiB

class SafeTensorsFile {
public:
  /// Opens and validates `path`; throws BadInput naming the file, the tensor
  /// and the field.
  explicit SafeTensorsFile(const std::string &path);

  const std::string &path() const { return file->path(); }
  /// Every tensor, in file order.
  const std::vector<StoredTensor> &tensors() const { return entries; }
  /// The tensor called `name`, or nullptr.
  const StoredTensor *find(const std::string &name) const;
  /// Bytes of data in the file (all tensors).
  int64_t dataBytes() const { return data; }

  /// Reads `count` elements of `tensor` starting at flat element `first`,
  /// converted to float. Throws BadInput outside the tensor.
  void readFloats(const StoredTensor &tensor, int64_t first, int64_t count,
                  float *out) const;

  /// The first byte of `tensor` in the file mapped read-only, or nullptr
  /// when its data is not aligned for its element type (then read it with
  /// readFloats). Valid while this object lives and the file is unchanged.
  /// Mapping counts nothing; a caller that uses part of it says how much
  /// with noteRead.
  const char *mapped(const StoredTensor &tensor) const;
  void noteRead(int64_t bytes) const { readSoFar += bytes; }

  /// Bytes read from the file so far, header included.
  int64_t bytesRead() const { return readSoFar; }
  /// Bytes before the data: the 8-byte length and the JSON header, all of
  /// which opening the file reads.
  int64_t headerBytes() const { return file->size() - data; }

private:
  std::unique_ptr<RegularFile> file;
  std::vector<StoredTensor> entries;
  std::map<std::string, size_t> byName;
  int64_t data = 0;
  mutable int64_t readSoFar = 0;
};

/// IEEE half and bfloat16 bit patterns as float.
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);

} // namespace ditc::checkpoint

#endif // DITC_CHECKPOINT_SAFETENSORS_H
