//===- Png.h - 8-bit RGB PNG images from decoded pixels ---------*- C++ -*-===//
//
// dit-run --output OUT.png writes each batch item of the VAE's pixels as a
// PNG, converted as diffusers' VaeImageProcessor.postprocess does for
// output_type="pil": x / 2 + 0.5, clamped to [0, 1], times 255, rounded
// half to even (NumPy's round), as 8-bit RGB. The file is built in memory
// (zlib for IDAT, CRC-32 per chunk) and then staged like every output, so a
// failed run leaves no partial image.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_IO_PNG_H
#define DITC_RUNTIME_IO_PNG_H

#include <cstdint>
#include <string>
#include <vector>

namespace ditc::runtime {

/// diffusers' (x / 2 + 0.5).clamp(0, 1) for a pixel value `x` in the VAE's
/// [-1, 1] range; NaN (a diverged decode) becomes 0 rather than undefined.
float pixelToUnit(float x);

/// The 8-bit value diffusers' image processor gives the pixel value `x`
/// (in the VAE's [-1, 1] range).
uint8_t pixelToByte(float x);

/// A PNG file (color type 2, 8-bit RGB, no interlace) of `height` rows of
/// `width` pixels, from `rgb` holding height * width * 3 bytes row by row.
std::string encodePngRgb8(int64_t height, int64_t width,
                          const std::vector<uint8_t> &rgb);

/// The PNG of one image [3, height, width] of float pixels, channel-major
/// (one batch item of the decode), converted with pixelToByte.
std::string encodePixelsAsPng(const float *chw, int64_t height, int64_t width);

/// The file batch item `index` of `--output OUT.png` (or OUT.mp4) goes to:
/// OUT.png for the first, OUT-1.png, OUT-2.png, ... for the others.
std::string batchItemPath(const std::string &output, int64_t index);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_IO_PNG_H
