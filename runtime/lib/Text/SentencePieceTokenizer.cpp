//===- SentencePieceTokenizer.cpp - T5's and UMT5's tokenizer -------------===//
#include "ditc/Runtime/Text/SentencePieceTokenizer.h"

#include "ditc/Support/BadInput.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ditc::runtime {

namespace {

/// UMT5-XXL's spiece.model is 4.5 MB.
constexpr int64_t kMaxModelBytes = int64_t(64) << 20;
constexpr size_t kMaxTextBytes = size_t(16) << 20;
constexpr uint32_t kMaxPieces = 1u << 22;
constexpr uint32_t kMaxIds = 1u << 24;
constexpr int kHelperTimeoutMs = 60000;

/// The dit-sentencepiece helper: $DITC_SENTENCEPIECE, else beside this
/// executable (dit-run's bin/), else the build tree's bin/.
std::string helperPath() {
  if (const char *given = std::getenv("DITC_SENTENCEPIECE"); given && *given)
    return given;
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, size_t(n));
    dir = dir.substr(0, dir.find_last_of('/'));
    std::string beside = dir + "/dit-sentencepiece";
    if (::access(beside.c_str(), X_OK) == 0)
      return beside;
  }
  return DITC_BUILD_TOOLS_DIR "/dit-sentencepiece";
}

} // namespace

/// libsentencepiece in the dit-sentencepiece process (its protocol is in
/// tools/dit-sentencepiece): the model's pieces are copied here once, and
/// each text is encoded there.
class SentencePieceProcess {
public:
  SentencePieceProcess(const std::string &modelBytes, const std::string &shownModelPath)
      : shownModel(shownModelPath) {
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
      throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
    std::string path = helperPath();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sockets[1], 0);
    posix_spawn_file_actions_adddup2(&actions, sockets[1], 1);
    char *argv[] = {const_cast<char *>(path.c_str()), nullptr};
    int spawned = ::posix_spawn(&child, path.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(sockets[1]);
    socket = sockets[0];
    if (spawned != 0) {
      ::close(socket);
      socket = -1;
      throw std::runtime_error("cannot start " + path + " (T5's tokenizer runs there): " +
                               std::strerror(spawned) +
                               "; set DITC_SENTENCEPIECE to its path");
    }
    std::string request;
    uint64_t size = modelBytes.size();
    request.append(reinterpret_cast<const char *>(&size), sizeof size);
    request += modelBytes;
    uint8_t status = 0;
    try {
      send(request);
      receive(&status, 1);
    } catch (const std::runtime_error &error) {
      // SentencePiece died on this file: the file is the bad input.
      badFile(shownModel, std::string("could not be loaded by SentencePiece (") +
                              error.what() + ")");
    }
    if (status != 0)
      badFile(shownModel, "is not a SentencePiece model (" + escapeInvalidUtf8(readText()) + ")");
    uint32_t count = read32();
    if (count == 0 || count > kMaxPieces)
      badFile(shownModel, "holds " + std::to_string(count) + " pieces");
    for (uint32_t id = 0; id < count; ++id) {
      pieces.push_back(readText());
      ids.emplace(pieces.back(), int64_t(id));
    }
    unk = int32_t(read32());
  }

  ~SentencePieceProcess() {
    if (socket >= 0)
      ::close(socket); // the helper reads end-of-file and exits
    if (child > 0) {
      int status = 0;
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }

  /// The ids of `text`. A failure there is the model's (the text is
  /// bounded UTF-8): BadInput naming it.
  std::vector<int64_t> encode(const std::string &text) {
    std::string request;
    uint32_t size = uint32_t(text.size());
    request.append(reinterpret_cast<const char *>(&size), sizeof size);
    request += text;
    try {
      send(request);
      uint32_t count = read32();
      if (count == 0xFFFFFFFFu)
        badFile(shownModel, "could not encode a prompt (" + escapeInvalidUtf8(readText()) + ")");
      // The normaliser may expand text (NFKC: U+FDFA is 18 characters), so
      // the bound is generous; beyond it the model is the problem.
      if (count > kMaxIds)
        badFile(shownModel, "expands a prompt of " + std::to_string(text.size()) +
                                " bytes to " + std::to_string(count) + " ids; at most " +
                                std::to_string(kMaxIds));
      std::vector<int64_t> out;
      out.reserve(count);
      for (uint32_t i = 0; i < count; ++i) {
        int32_t id = int32_t(read32());
        if (id < 0 || size_t(id) >= pieces.size())
          badFile(shownModel, "gave id " + std::to_string(id) + ", outside its " +
                                  std::to_string(pieces.size()) + " pieces");
        out.push_back(id);
      }
      return out;
    } catch (const std::runtime_error &error) {
      if (dynamic_cast<const BadInput *>(&error))
        throw;
      badFile(shownModel, std::string("could not encode a prompt: ") + error.what());
    }
  }

  std::vector<std::string> pieces;
  std::map<std::string, int64_t> ids;
  int64_t unk = 0;

private:
  void send(const std::string &bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(socket, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        throw std::runtime_error("dit-sentencepiece stopped reading: " +
                                 std::string(std::strerror(errno)));
      done += size_t(n);
    }
  }
  void receive(void *data, size_t size) {
    char *out = static_cast<char *>(data);
    while (size > 0) {
      // The helper answers in milliseconds; a model that keeps it busy
      // for a minute is refused rather than waited on.
      pollfd ready{socket, POLLIN, 0};
      int polled = ::poll(&ready, 1, kHelperTimeoutMs);
      if (polled < 0 && errno == EINTR)
        continue;
      if (polled == 0)
        throw std::runtime_error("dit-sentencepiece gave no answer in " +
                                 std::to_string(kHelperTimeoutMs / 1000) + " s");
      ssize_t n = ::recv(socket, out, size, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        throw std::runtime_error("dit-sentencepiece exited before it answered");
      out += n;
      size -= size_t(n);
    }
  }
  uint32_t read32() {
    unsigned char bytes[4];
    receive(bytes, 4);
    return uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 | uint32_t(bytes[2]) << 16 |
           uint32_t(bytes[3]) << 24;
  }
  std::string readText() {
    uint32_t size = read32();
    if (size > kMaxTextBytes)
      throw std::runtime_error("dit-sentencepiece sent a text of " + std::to_string(size) +
                               " bytes");
    std::string text(size, '\0');
    receive(text.data(), text.size());
    return text;
  }

  std::string shownModel;
  int socket = -1;
  pid_t child = -1;
};

SentencePieceTokenizer::SentencePieceTokenizer(const std::string &folder) : dir(folder) {
  special = readSpecialTokens(dir, {{"eos", "</s>"}, {"unk", "<unk>"}, {"pad", "<pad>"}});
  std::string modelPath = dir + "/spiece.model";
  std::string shownModel = escapeInvalidUtf8(modelPath);
  model = std::make_unique<SentencePieceProcess>(readRegularFile(modelPath, kMaxModelBytes),
                                                  shownModel);
  int64_t pieces = int64_t(model->pieces.size());
  int64_t extraIds = 0;
  for (const auto &entry : special.added)
    if (entry.first.rfind("<extra_id_", 0) == 0)
      ++extraIds;

  auto resolve = [&](const std::string &text, const std::string &role) -> int64_t {
    auto added = special.added.find(text);
    if (added != special.added.end() && added->second)
      return *added->second;
    auto known = model->ids.find(text);
    if (known != model->ids.end())
      return known->second;
    // T5Tokenizer's sentinels sit after the model's pieces, <extra_id_0>
    // last: id = pieces + extra ids - 1 - N.
    if (text.rfind("<extra_id_", 0) == 0 && text.back() == '>') {
      std::string digits = text.substr(10, text.size() - 11);
      if (!digits.empty() && digits.size() <= 6 &&
          std::all_of(digits.begin(), digits.end(),
                      [](char c) { return std::isdigit((unsigned char)c) != 0; }) &&
          std::stoll(digits) < extraIds)
        return pieces + extraIds - 1 - std::stoll(digits);
    }
    badFile(escapeInvalidUtf8(special.configPath),
            "names " + role + " '" + escapeInvalidUtf8(text) + "', which " + shownModel +
                " does not hold and added_tokens_decoder gives no id");
  };
  eos = resolve(special.role("eos"), "eos_token");
  pad = resolve(special.role("pad"), "pad_token");
  resolve(special.role("unk"), "unk_token");
  std::vector<std::string> specialTexts;
  for (const auto &entry : special.added) {
    specialIds[entry.first] = resolve(entry.first, "the special token");
    specialTexts.push_back(entry.first);
  }
  splitter = std::make_unique<SpecialTokenSplitter>(specialTexts);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int64_t> SentencePieceTokenizer::ids(const std::string &prompt) const {
  std::vector<int64_t> out;
  for (const PromptPiece &piece : splitter->split(prompt)) {
    if (piece.special) {
      out.push_back(specialIds.at(piece.text));
      continue;
    }
    std::vector<int64_t> encoded = model->encode(piece.text);
    out.insert(out.end(), encoded.begin(), encoded.end());
  }
  return out;
}

std::vector<std::string> SentencePieceTokenizer::pieces(const std::string &prompt) const {
  requireUtf8(prompt, "the prompt");
  std::vector<std::string> out;
  for (int64_t id : ids(prompt))
    out.push_back(id >= 0 && id < int64_t(model->pieces.size())
                      ? model->pieces[size_t(id)]
                      : "<added " + std::to_string(id) + ">");
  return out;
}

TokenizedPrompt SentencePieceTokenizer::encode(const std::string &prompt, int64_t maxLength,
                                               const std::string &what) const {
  requireUtf8(prompt, what);
  return frameTokens(ids(prompt), /*bos=*/-1, eos, pad, maxLength); // T5 adds no bos
}

} // namespace ditc::runtime
