//===- Mp4.cpp - H.264 MP4 videos from decoded pixels ---------------------===//
#include "ditc/Runtime/IO/Mp4.h"
#include "ditc/Runtime/IO/Png.h"
#include "ditc/Support/BadInput.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

namespace ditc::runtime {

namespace {

// Sizes H.264 levels accept (level 6.2 tops out near 8192 x 4320).
constexpr int64_t kMaxSide = 8192;
constexpr int64_t kMaxFrames = 100000;

std::string averror(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(code, text, sizeof(text));
  return text;
}

void check(int code, const char *what) {
  if (code < 0)
    throw std::runtime_error(std::string("MP4 encoding: ") + what + " failed: " +
                             averror(code));
}

/// The file being built: libavformat writes and seeks in it as in a file.
struct MemoryFile {
  std::string bytes;
  int64_t position = 0;

  static int write(void *opaque, uint8_t *data, int size) {
    auto *file = static_cast<MemoryFile *>(opaque);
    size_t end = size_t(file->position) + size_t(size);
    if (end > file->bytes.size())
      file->bytes.resize(end);
    std::memcpy(&file->bytes[size_t(file->position)], data, size_t(size));
    file->position = int64_t(end);
    return size;
  }
  static int64_t seek(void *opaque, int64_t offset, int whence) {
    auto *file = static_cast<MemoryFile *>(opaque);
    if (whence & AVSEEK_SIZE)
      return int64_t(file->bytes.size());
    int64_t base = 0;
    switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = file->position; break;
    case SEEK_END: base = int64_t(file->bytes.size()); break;
    default: return AVERROR(EINVAL);
    }
    if (base + offset < 0)
      return AVERROR(EINVAL);
    file->position = base + offset;
    return file->position;
  }
};

struct FormatDeleter {
  void operator()(AVFormatContext *format) const {
    if (format && format->pb) {
      av_freep(&format->pb->buffer);
      avio_context_free(&format->pb);
    }
    avformat_free_context(format);
  }
};
struct CodecDeleter {
  void operator()(AVCodecContext *codec) const { avcodec_free_context(&codec); }
};
struct FrameDeleter {
  void operator()(AVFrame *frame) const { av_frame_free(&frame); }
};
struct PacketDeleter {
  void operator()(AVPacket *packet) const { av_packet_free(&packet); }
};
struct ScaleDeleter {
  void operator()(SwsContext *scale) const { sws_freeContext(scale); }
};

/// Sends `frame` (null to flush) and writes every packet the encoder gives.
void encode(AVCodecContext *codec, AVFormatContext *format, AVStream *stream,
            AVFrame *frame, AVPacket *packet) {
  check(avcodec_send_frame(codec, frame), "avcodec_send_frame");
  for (;;) {
    int got = avcodec_receive_packet(codec, packet);
    if (got == AVERROR(EAGAIN) || got == AVERROR_EOF)
      return;
    check(got, "avcodec_receive_packet");
    av_packet_rescale_ts(packet, codec->time_base, stream->time_base);
    packet->stream_index = stream->index;
    check(av_interleaved_write_frame(format, packet), "av_interleaved_write_frame");
  }
}

} // namespace

uint8_t videoPixelToByte(float x) { return uint8_t(pixelToUnit(x) * 255.0f); }

std::string encodePixelsAsMp4(const float *cfhw, int64_t frames, int64_t height,
                              int64_t width, int fps) {
  if (height < 2 || width < 2 || height > kMaxSide || width > kMaxSide ||
      height % 2 != 0 || width % 2 != 0)
    throw BadInput("a video of " + std::to_string(width) + "x" + std::to_string(height) +
                   " pixels cannot be written as H.264 4:2:0; width and height must "
                   "be even and within [2, " + std::to_string(kMaxSide) + "]");
  if (frames < 1 || frames > kMaxFrames)
    throw BadInput("a video of " + std::to_string(frames) + " frames; expected 1 to " +
                   std::to_string(kMaxFrames));
  if (fps < 1 || fps > 240)
    throw BadInput("a frame rate of " + std::to_string(fps) + "; expected 1 to 240");

  // libx264 reports its settings and statistics at info level on stderr;
  // dit-run prints its own line.
  av_log_set_level(AV_LOG_ERROR);
  const AVCodec *h264 = avcodec_find_encoder_by_name("libx264");
  if (!h264)
    h264 = avcodec_find_encoder(AV_CODEC_ID_H264);
  if (!h264)
    throw std::runtime_error("MP4 encoding: this libavcodec has no H.264 encoder "
                             "(Debian's libavcodec59 links libx264)");

  AVFormatContext *rawFormat = nullptr;
  check(avformat_alloc_output_context2(&rawFormat, nullptr, "mp4", nullptr),
        "avformat_alloc_output_context2");
  std::unique_ptr<AVFormatContext, FormatDeleter> format(rawFormat);
  MemoryFile file;
  constexpr int kBufferBytes = 1 << 16;
  auto *buffer = static_cast<unsigned char *>(av_malloc(kBufferBytes));
  if (!buffer)
    throw std::bad_alloc();
  format->pb = avio_alloc_context(buffer, kBufferBytes, 1, &file, nullptr,
                                  &MemoryFile::write, &MemoryFile::seek);
  if (!format->pb) {
    av_free(buffer);
    throw std::bad_alloc();
  }
  format->flags |= AVFMT_FLAG_CUSTOM_IO;

  AVStream *stream = avformat_new_stream(format.get(), nullptr);
  if (!stream)
    throw std::bad_alloc();
  std::unique_ptr<AVCodecContext, CodecDeleter> codec(avcodec_alloc_context3(h264));
  if (!codec)
    throw std::bad_alloc();
  codec->width = int(width);
  codec->height = int(height);
  codec->pix_fmt = AV_PIX_FMT_YUV420P;
  codec->time_base = AVRational{1, fps};
  codec->framerate = AVRational{fps, 1};
  codec->gop_size = fps;
  if (format->oformat->flags & AVFMT_GLOBALHEADER)
    codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  // Visually lossless for people looking at the result; libx264's default
  // preset. Other H.264 encoders ignore the options.
  av_opt_set(codec->priv_data, "crf", "18", 0);
  check(avcodec_open2(codec.get(), h264, nullptr), "avcodec_open2");
  check(avcodec_parameters_from_context(stream->codecpar, codec.get()),
        "avcodec_parameters_from_context");
  stream->time_base = codec->time_base;
  stream->avg_frame_rate = codec->framerate;
  check(avformat_write_header(format.get(), nullptr), "avformat_write_header");

  std::unique_ptr<SwsContext, ScaleDeleter> scale(
      sws_getContext(int(width), int(height), AV_PIX_FMT_RGB24, int(width), int(height),
                     AV_PIX_FMT_YUV420P, SWS_BICUBIC, nullptr, nullptr, nullptr));
  std::unique_ptr<AVFrame, FrameDeleter> frame(av_frame_alloc());
  std::unique_ptr<AVPacket, PacketDeleter> packet(av_packet_alloc());
  if (!scale || !frame || !packet)
    throw std::bad_alloc();
  frame->format = AV_PIX_FMT_YUV420P;
  frame->width = int(width);
  frame->height = int(height);
  check(av_frame_get_buffer(frame.get(), 0), "av_frame_get_buffer");

  int64_t plane = height * width;
  std::vector<uint8_t> rgb(size_t(plane * 3));
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t i = 0; i < plane; ++i)
      for (int64_t c = 0; c < 3; ++c)
        rgb[size_t(i * 3 + c)] = videoPixelToByte(cfhw[(c * frames + f) * plane + i]);
    check(av_frame_make_writable(frame.get()), "av_frame_make_writable");
    const uint8_t *source[1] = {rgb.data()};
    int stride[1] = {int(width * 3)};
    sws_scale(scale.get(), source, stride, 0, int(height), frame->data, frame->linesize);
    frame->pts = f;
    encode(codec.get(), format.get(), stream, frame.get(), packet.get());
  }
  encode(codec.get(), format.get(), stream, nullptr, packet.get());
  check(av_write_trailer(format.get()), "av_write_trailer");
  avio_flush(format->pb);
  return std::move(file.bytes);
}

} // namespace ditc::runtime
