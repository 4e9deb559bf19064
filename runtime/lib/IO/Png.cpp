//===- Png.cpp - 8-bit RGB PNG images from decoded pixels -----------------===//
#include "ditc/Runtime/IO/Png.h"
#include "ditc/Support/BadInput.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>

namespace ditc::runtime {

namespace {

// PNG's own limit on a dimension (2^31 - 1); the decode never comes close,
// but the check keeps the header honest.
constexpr int64_t kMaxPngDimension = (int64_t(1) << 31) - 1;

void appendBigEndian32(std::string &out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(char((value >> shift) & 0xff));
}

void appendChunk(std::string &out, const char type[4], const std::string &data) {
  appendBigEndian32(out, uint32_t(data.size()));
  std::string body(type, 4);
  body += data;
  out += body;
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef *>(body.data()), uInt(body.size()));
  appendBigEndian32(out, uint32_t(crc));
}

} // namespace

float pixelToUnit(float x) {
  float unit = x / 2.0f + 0.5f;
  if (!(unit > 0.0f))
    return 0.0f;
  return unit > 1.0f ? 1.0f : unit;
}

uint8_t pixelToByte(float x) {
  // diffusers: (x * 255).round() in NumPy, which rounds half to even;
  // nearbyint does the same in the default rounding mode.
  return uint8_t(std::nearbyint(pixelToUnit(x) * 255.0f));
}

std::string encodePngRgb8(int64_t height, int64_t width,
                          const std::vector<uint8_t> &rgb) {
  if (height < 1 || width < 1 || height > kMaxPngDimension ||
      width > kMaxPngDimension || int64_t(rgb.size()) != height * width * 3)
    throw std::invalid_argument("encodePngRgb8: " + std::to_string(height) + "x" +
                                std::to_string(width) + " image with " +
                                std::to_string(rgb.size()) + " bytes");
  // Every row is preceded by its filter type, 0 (None).
  std::string raw;
  raw.reserve(size_t(height * (width * 3 + 1)));
  for (int64_t row = 0; row < height; ++row) {
    raw.push_back('\0');
    raw.append(reinterpret_cast<const char *>(rgb.data() + row * width * 3),
               size_t(width * 3));
  }
  uLongf bound = compressBound(uLong(raw.size()));
  std::string compressed(bound, '\0');
  if (compress2(reinterpret_cast<Bytef *>(compressed.data()), &bound,
                reinterpret_cast<const Bytef *>(raw.data()), uLong(raw.size()),
                6) != Z_OK)
    throw std::runtime_error("zlib could not compress a " + std::to_string(height) +
                             "x" + std::to_string(width) + " image");
  compressed.resize(bound);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string header;
  appendBigEndian32(header, uint32_t(width));
  appendBigEndian32(header, uint32_t(height));
  header += std::string("\x08\x02\x00\x00\x00", 5); // 8-bit, RGB, deflate, no filter/interlace variants
  appendChunk(png, "IHDR", header);
  appendChunk(png, "IDAT", compressed);
  appendChunk(png, "IEND", "");
  return png;
}

std::string encodePixelsAsPng(const float *chw, int64_t height, int64_t width) {
  std::vector<uint8_t> rgb(size_t(height * width * 3));
  int64_t plane = height * width;
  for (int64_t i = 0; i < plane; ++i)
    for (int64_t c = 0; c < 3; ++c)
      rgb[size_t(i * 3 + c)] = pixelToByte(chw[c * plane + i]);
  return encodePngRgb8(height, width, rgb);
}

std::string batchItemPath(const std::string &output, int64_t index) {
  if (index == 0)
    return output;
  // OUT.png -> OUT-<index>.png, OUT.mp4 -> OUT-<index>.mp4: the caller
  // checked the extension (four characters with its dot).
  size_t stem = output.size() >= 4 ? output.size() - 4 : 0;
  return output.substr(0, stem) + "-" + std::to_string(index) + output.substr(stem);
}

} // namespace ditc::runtime
