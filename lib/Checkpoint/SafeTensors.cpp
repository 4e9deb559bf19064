//===- SafeTensors.cpp - a bounded reader of .safetensors files -----------===//
#include "ditc/Checkpoint/SafeTensors.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"

#include <algorithm>
#include <cstring>

#include <cstdio>

namespace ditc::checkpoint {

using nlohmann::json;

const char *storedTypeName(StoredType type) {
  switch (type) {
  case StoredType::F32: return "F32";
  case StoredType::F16: return "F16";
  case StoredType::BF16: return "BF16";
  }
  return "?";
}

int64_t storedTypeBytes(StoredType type) {
  return type == StoredType::F32 ? 4 : 2;
}

int64_t StoredTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d; // bounded when the header was read
  return n;
}

SafeTensorsFile::SafeTensorsFile(const std::string &path) {
  ReadFileOptions options;
  options.what = "safetensors file";
  file = std::make_unique<RegularFile>(path, kMaxSafeTensorsFileBytes, options);
  std::string shown = escapeInvalidUtf8(path);
  if (file->size() < 8)
    throw BadInput(shown + ": is " + std::to_string(file->size()) +
                   " bytes, shorter than the 8-byte header length of a "
                   "safetensors file");
  unsigned char prefix[8];
  file->readAt(0, 8, reinterpret_cast<char *>(prefix));
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i)
    headerLength = (headerLength << 8) | prefix[i];
  if (headerLength > uint64_t(kMaxSafeTensorsHeaderBytes))
    throw BadInput(shown + ": the header length is " + std::to_string(headerLength) +
                   " bytes; safetensors headers are at most " +
                   std::to_string(kMaxSafeTensorsHeaderBytes));
  if (int64_t(headerLength) > file->size() - 8)
    throw BadInput(shown + ": the header length " + std::to_string(headerLength) +
                   " runs past the end of the " + std::to_string(file->size()) +
                   "-byte file (truncated?)");
  std::string text(size_t(headerLength), '\0');
  file->readAt(8, int64_t(headerLength), text.data());
  readSoFar = 8 + int64_t(headerLength);
  // The format's header is a JSON object that starts at its first byte and
  // may be padded at the end with spaces (0x20) only: a byte-order mark,
  // leading whitespace or NUL padding is another writer's file, which other
  // readers refuse too.
  if (text.empty() || text.front() != '{')
    throw BadInput(shown + ": the header starts with byte 0x" +
                   (text.empty() ? std::string("(none)") : [&] {
                     char hex[3];
                     std::snprintf(hex, sizeof hex, "%02x", (unsigned char)text.front());
                     return std::string(hex);
                   }()) +
                   "; a safetensors header is a JSON object starting with '{'");
  if (text.find('\0') != std::string::npos)
    throw BadInput(shown + ": the header is not a JSON object padded with spaces (it "
                           "holds a NUL byte); safetensors pads its header with spaces only");
  json header = JsonObject::parseText(text, shown + " header");
  if (text[text.find_last_not_of(' ')] != '}')
    throw BadInput(shown + ": the header is not a JSON object padded with spaces (it "
                           "does not end with '}'); safetensors pads its header with "
                           "spaces only");
  if (!header.is_object())
    throw BadInput(shown + ": the header is " + describeJson(header) +
                   ", expected a JSON object of tensors");
  int64_t dataStart = 8 + int64_t(headerLength);
  data = file->size() - dataStart;

  for (auto it = header.begin(); it != header.end(); ++it) {
    std::string name = escapeInvalidUtf8(it.key());
    if (it.key() == "__metadata__") {
      if (!it.value().is_object())
        throw BadInput(shown + ": '__metadata__' is " + describeJson(it.value()) +
                       ", expected an object of strings");
      for (const json &value : it.value())
        if (!value.is_string())
          throw BadInput(shown + ": '__metadata__' holds " + describeJson(value) +
                         ", expected strings only");
      continue;
    }
    if (!it.value().is_object())
      throw BadInput(shown + ": tensor '" + name + "' is " +
                     describeJson(it.value()) +
                     ", expected {\"dtype\", \"shape\", \"data_offsets\"}");
    JsonObject fields(shown + ": tensor '" + name + "'", &it.value());
    for (auto field = it.value().begin(); field != it.value().end(); ++field)
      if (field.key() != "dtype" && field.key() != "shape" &&
          field.key() != "data_offsets")
        fields.fail(field.key(), "is not a safetensors field; expected dtype, "
                                 "shape and data_offsets");
    StoredTensor tensor;
    tensor.name = it.key();
    std::string dtype = fields.getString("dtype");
    if (dtype == "F32")
      tensor.type = StoredType::F32;
    else if (dtype == "F16")
      tensor.type = StoredType::F16;
    else if (dtype == "BF16")
      tensor.type = StoredType::BF16;
    else
      fields.fail("dtype", "is '" + escapeInvalidUtf8(dtype) +
                               "'; a checkpoint may store F32, F16 or BF16");
    tensor.shape = fields.getIntList("shape", 0, int64_t(1) << 40);
    if (tensor.shape.size() > 8)
      fields.fail("shape", "has " + std::to_string(tensor.shape.size()) +
                               " dimensions; at most 8");
    int64_t bytes = storedTypeBytes(tensor.type);
    for (int64_t d : tensor.shape) {
      if (d > 0 && bytes > (int64_t(1) << 41) / d)
        fields.fail("shape", "holds more bytes than any checkpoint file");
      bytes *= d;
    }
    std::vector<int64_t> offsets = fields.getIntList("data_offsets", 0, INT64_MAX);
    if (offsets.size() != 2 || offsets[0] > offsets[1])
      fields.fail("data_offsets", "must be [begin, end] with begin <= end");
    if (offsets[1] > data)
      fields.fail("data_offsets", "ends at " + std::to_string(offsets[1]) +
                                      ", past the " + std::to_string(data) +
                                      " data bytes of the file");
    if (offsets[1] - offsets[0] != bytes)
      fields.fail("data_offsets",
                  "span " + std::to_string(offsets[1] - offsets[0]) +
                      " bytes, but a " + dtype + " tensor of that shape needs " +
                      std::to_string(bytes));
    tensor.begin = dataStart + offsets[0];
    tensor.end = dataStart + offsets[1];
    entries.push_back(std::move(tensor));
  }

  // The tensors must tile the data: ordered, no overlap, no hole.
  std::vector<const StoredTensor *> byOffset;
  for (const StoredTensor &t : entries)
    byOffset.push_back(&t);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const StoredTensor *a, const StoredTensor *b) {
              return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
            });
  // Overlaps first, naming both tensors: an overlap also leaves a hole
  // elsewhere, and the overlap is what went wrong.
  const StoredTensor *previous = nullptr;
  for (const StoredTensor *t : byOffset) {
    if (previous && t->begin < previous->end)
      throw BadInput(shown + ": tensor '" + escapeInvalidUtf8(t->name) +
                     "' starts at data byte " + std::to_string(t->begin - dataStart) +
                     ", inside tensor '" + escapeInvalidUtf8(previous->name) +
                     "' (data bytes " + std::to_string(previous->begin - dataStart) +
                     " to " + std::to_string(previous->end - dataStart) +
                     "): offsets overlap");
    if (!previous || t->end > previous->end)
      previous = t;
  }
  int64_t expected = dataStart;
  std::string before = "the start of the data";
  for (const StoredTensor *t : byOffset) {
    if (t->begin > expected)
      throw BadInput(shown + ": data bytes " + std::to_string(expected - dataStart) +
                     " to " + std::to_string(t->begin - dataStart) + ", between " +
                     before + " and tensor '" + escapeInvalidUtf8(t->name) +
                     "', belong to no tensor; the format allows no holes");
    expected = t->end;
    before = "tensor '" + escapeInvalidUtf8(t->name) + "'";
  }
  if (expected != file->size())
    throw BadInput(shown + ": the tensors end at data byte " +
                   std::to_string(expected - dataStart) + " but the file holds " +
                   std::to_string(data) + "; the format allows no trailing bytes");
  std::sort(entries.begin(), entries.end(),
            [](const StoredTensor &a, const StoredTensor &b) { return a.begin < b.begin; });
  for (size_t i = 0; i < entries.size(); ++i)
    byName[entries[i].name] = i;
}

const char *SafeTensorsFile::mapped(const StoredTensor &tensor) const {
  if (tensor.begin % storedTypeBytes(tensor.type))
    return nullptr;
  return file->map() + tensor.begin;
}

const StoredTensor *SafeTensorsFile::find(const std::string &name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &entries[it->second];
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  uint32_t out;
  if (exponent == 0) {
    if (mantissa == 0) {
      out = sign;
    } else { // subnormal: renormalize
      int shift = 0;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ff;
      out = sign | uint32_t(127 - 15 - shift + 1) << 23 | mantissa << 13;
    }
  } else if (exponent == 0x1f) {
    out = sign | 0x7f800000u | mantissa << 13; // inf or nan
  } else {
    out = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t out = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

void SafeTensorsFile::readFloats(const StoredTensor &tensor, int64_t first,
                                 int64_t count, float *out) const {
  int64_t elements = tensor.elements();
  if (first < 0 || count < 0 || first > elements || count > elements - first)
    throw BadInput(escapeInvalidUtf8(path()) + ": tensor '" +
                   escapeInvalidUtf8(tensor.name) + "' has " +
                   std::to_string(elements) + " elements; elements " +
                   std::to_string(first) + " to " + std::to_string(first + count) +
                   " were asked for");
  int64_t size = storedTypeBytes(tensor.type);
  int64_t offset = tensor.begin + first * size;
  readSoFar += count * size;
  if (tensor.type == StoredType::F32) {
    file->readAt(offset, count * 4, reinterpret_cast<char *>(out));
    return;
  }
  // The 2-byte values go into the upper half of `out` and widen in place,
  // a chunk at a time through a small buffer (so the loops vectorize):
  // chunk k's floats end at byte 16384 (k + 1), before chunk k + 1's values,
  // which start at byte 2 count + 8192 (k + 1) > 16384 (k + 1) whenever
  // that chunk exists. No buffer the size of the tensor is allocated.
  char *raw = reinterpret_cast<char *>(out) + count * 2;
  file->readAt(offset, count * 2, raw);
  constexpr int64_t kChunk = 4096;
  uint16_t chunk[kChunk];
  for (int64_t start = 0; start < count; start += kChunk) {
    int64_t n = std::min(kChunk, count - start);
    std::memcpy(chunk, raw + 2 * start, size_t(2 * n));
    float *o = out + start;
    if (tensor.type == StoredType::F16) {
      for (int64_t i = 0; i < n; ++i)
        o[i] = halfToFloat(chunk[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        uint32_t bits = uint32_t(chunk[i]) << 16;
        std::memcpy(o + i, &bits, 4);
      }
    }
  }
}

} // namespace ditc::checkpoint
