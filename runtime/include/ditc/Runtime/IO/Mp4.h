//===- Mp4.h - H.264 MP4 videos from decoded pixels -------------*- C++ -*-===//
//
// dit-run --output OUT.mp4 writes each batch item of a video VAE's pixels as
// an H.264 MP4 (Debian's libavcodec with libx264, yuv420p, in an MP4 built by
// libavformat) at the model's frame rate. Frames are converted to 8-bit as
// diffusers' export_to_video does after its video processor: x / 2 + 0.5,
// clamped to [0, 1], times 255, truncated. The whole file is built in memory
// (a custom AVIO context that can seek, which the MP4 muxer needs to finish
// its index) and then staged like every output, so a failed run leaves no
// partial video.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_IO_MP4_H
#define DITC_RUNTIME_IO_MP4_H

#include <cstdint>
#include <string>

namespace ditc::runtime {

/// The 8-bit value export_to_video gives the pixel value `x` (in the VAE's
/// [-1, 1] range): the unit value times 255, truncated. NaN becomes 0.
uint8_t videoPixelToByte(float x);

/// An MP4 (H.264, yuv420p) of one video [3, frames, height, width] of float
/// pixels, channel-major, at `fps` frames per second. Throws BadInput when
/// the size cannot be encoded (H.264's 4:2:0 needs even sizes) and
/// std::runtime_error when libavcodec has no H.264 encoder or fails.
std::string encodePixelsAsMp4(const float *cfhw, int64_t frames, int64_t height,
                              int64_t width, int fps);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_IO_MP4_H
