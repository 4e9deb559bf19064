//===- dit-sentencepiece.cpp - SentencePiece for dit-run, out of process --===//
//
// dit-run tokenizes T5's and UMT5's prompts with Debian's libsentencepiece,
// but in this helper process: that library carries its own protobuf 3.14,
// which aborts (or crashes) in a process that has loaded libtorch's protobuf
// 3.21. dit-run starts it with a socket on stdin and stdout and speaks
// (little-endian):
//
//   dit-run -> helper   u64 n, n bytes: the serialized model (spiece.model)
//   helper -> dit-run   u8 0, u32 pieces, per piece u32 n + n bytes, i32 unk id;
//                       or u8 1, u32 n + n bytes of the error
//   then, per text:
//   dit-run -> helper   u32 n, n bytes of UTF-8
//   helper -> dit-run   u32 count, count x i32 ids; or 0xFFFFFFFF, u32 n + error
//
// It exits when dit-run closes the socket. Sizes are bounded as dit-run
// bounds them (a 64 MiB model, 16 MiB texts).
//
//===----------------------------------------------------------------------===//
#include <sentencepiece_processor.h>

// GCC says __SANITIZE_ADDRESS__, clang __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define DITC_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DITC_UNDER_ASAN 1
#endif
#endif

#include <sys/resource.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr uint64_t kMaxModelBytes = uint64_t(64) << 20;
constexpr uint32_t kMaxTextBytes = uint32_t(16) << 20;

bool readAll(void *data, size_t size) {
  char *out = static_cast<char *>(data);
  while (size > 0) {
    ssize_t n = ::read(0, out, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    out += n;
    size -= size_t(n);
  }
  return true;
}

bool writeAll(const std::string &bytes) {
  const char *data = bytes.data();
  size_t size = bytes.size();
  while (size > 0) {
    ssize_t n = ::write(1, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

void put32(std::string &out, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    out += char((value >> (8 * i)) & 0xFF);
}

void putText(std::string &out, const std::string &text) {
  put32(out, uint32_t(text.size()));
  out += text;
}

/// A hostile model must not take the host: at most 5 minutes of CPU and,
/// outside AddressSanitizer (whose shadow memory needs terabytes of address
/// space), 8 GiB of memory; beyond either the helper dies and dit-run
/// refuses the model.
void limitResources() {
  rlimit cpu{300, 300};
  ::setrlimit(RLIMIT_CPU, &cpu);
#ifndef DITC_UNDER_ASAN
  rlimit memory{rlim_t(8) << 30, rlim_t(8) << 30};
  ::setrlimit(RLIMIT_AS, &memory);
#endif
}

} // namespace

int main() {
  limitResources();
  uint64_t modelBytes = 0;
  if (!readAll(&modelBytes, sizeof modelBytes) || modelBytes > kMaxModelBytes)
    return 2;
  std::string model(modelBytes, '\0');
  if (!readAll(model.data(), model.size()))
    return 2;
  sentencepiece::SentencePieceProcessor processor;
  auto status = processor.LoadFromSerializedProto(model);
  std::string reply;
  if (!status.ok()) {
    reply += char(1);
    putText(reply, status.ToString());
    writeAll(reply);
    return 0;
  }
  reply += char(0);
  int pieces = processor.GetPieceSize();
  put32(reply, uint32_t(pieces));
  for (int id = 0; id < pieces; ++id)
    putText(reply, processor.IdToPiece(id));
  put32(reply, uint32_t(processor.unk_id()));
  if (!writeAll(reply))
    return 2;
  for (;;) {
    uint32_t size = 0;
    if (!readAll(&size, sizeof size))
      return 0; // dit-run is done
    if (size > kMaxTextBytes)
      return 2;
    std::string text(size, '\0');
    if (!readAll(text.data(), text.size()))
      return 2;
    std::vector<int> ids;
    auto encoded = processor.Encode(text, &ids);
    reply.clear();
    if (!encoded.ok()) {
      put32(reply, 0xFFFFFFFFu);
      putText(reply, encoded.ToString());
    } else {
      put32(reply, uint32_t(ids.size()));
      for (int id : ids)
        put32(reply, uint32_t(id));
    }
    if (!writeAll(reply))
      return 2;
  }
}
