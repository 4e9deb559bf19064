//===- ReadFile.cpp - bounded reads of untrusted input files --------------===//
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/BadInput.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ditc {

static std::string describeMode(mode_t mode) {
  if (S_ISDIR(mode))
    return "a folder";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "not a regular file";
}

RegularFile::RegularFile(const std::string &path, int64_t maxBytes,
                         const ReadFileOptions &options)
    : name(path), what(options.what) {
  std::string shown = escapeInvalidUtf8(path);
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (options.refuseSymlink)
    flags |= O_NOFOLLOW;
  fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT)
      badFile(shown, "no such file (expected a " + what + ")");
    if (error == ELOOP && options.refuseSymlink)
      badFile(shown, "is a symbolic link; a " + what +
                         " must be a regular file inside its folder");
    badFile(shown, "cannot be read (" + what + "): " + std::strerror(error));
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    std::string kind = describeMode(info.st_mode);
    ::close(fd);
    fd = -1;
    badFile(shown, "is " + kind + ", expected a regular " + what);
  }
  bytes = int64_t(info.st_size);
  if (bytes > maxBytes) {
    ::close(fd);
    fd = -1;
    badFile(shown, "is " + std::to_string(bytes) + " bytes; a " + what +
                       " may be at most " + std::to_string(maxBytes) +
                       " bytes");
  }
  // Reads below block as usual.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

RegularFile::~RegularFile() {
  if (mapping)
    ::munmap(mapping, size_t(bytes));
  if (fd >= 0)
    ::close(fd);
}

const char *RegularFile::map() const {
  if (!mapping && bytes > 0) {
    void *address = ::mmap(nullptr, size_t(bytes), PROT_READ, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED)
      throw BadInput(escapeInvalidUtf8(name) + ": cannot be mapped (" + what +
                     "): " + std::strerror(errno));
    mapping = address;
  }
  return static_cast<const char *>(mapping);
}

void RegularFile::readAt(int64_t offset, int64_t count, char *out) const {
  while (count > 0) {
    ssize_t got = ::pread(fd, out, size_t(count), off_t(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      throw BadInput(escapeInvalidUtf8(name) + ": cannot be read (" + what +
                     "): " + (got < 0 ? std::strerror(errno)
                                      : "the file is shorter than it was"));
    out += got;
    offset += got;
    count -= got;
  }
}

std::string RegularFile::readAll() const {
  std::string text(size_t(bytes), '\0');
  readAt(0, bytes, text.data());
  return text;
}

std::string readRegularFile(const std::string &path, int64_t maxBytes,
                            const ReadFileOptions &options) {
  return RegularFile(path, maxBytes, options).readAll();
}

bool pathExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

bool isDirectoryPath(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

} // namespace ditc
