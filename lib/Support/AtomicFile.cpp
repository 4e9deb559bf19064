//===- AtomicFile.cpp - write a file whole or not at all ------------------===//
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ditc {

void writeFileAtomically(const std::string &path, const std::string &contents) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  FILE *file = std::fopen(temp.c_str(), "wb");
  if (!file)
    throw BadInput(path + ": cannot be written: " + std::strerror(errno));
  bool ok = std::fwrite(contents.data(), 1, contents.size(), file) ==
            contents.size();
  ok = (std::fflush(file) == 0) && ok;
  ok = (std::fclose(file) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(temp.c_str());
    throw BadInput(path + ": cannot be written: " + std::strerror(error));
  }
}

} // namespace ditc
