//===- AtomicFile.cpp - write a file whole or not at all ------------------===//
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/ReadFile.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ditc {

static std::pair<std::string, std::string> splitPath(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

void checkOutputPath(const std::string &path, const std::string &flag) {
  std::string shown = (flag.empty() ? "" : flag + " ") + quoteBounded(path);
  auto [folder, base] = splitPath(path);
  if (path.empty() || base.empty() || base == "." || base == "..")
    throw BadInput(shown + ": names a folder; expected a file path");
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      throw BadInput(shown + ": is a folder; expected a file path");
    if (S_ISLNK(info.st_mode))
      throw BadInput(shown + ": is a symbolic link; refusing to replace it "
                             "(name the file itself)");
    if (!S_ISREG(info.st_mode))
      throw BadInput(shown + ": exists and is not a regular file (a device, "
                             "FIFO or socket); refusing to replace it");
  } else if (errno != ENOENT) {
    throw BadInput(shown + ": cannot be checked: " + std::strerror(errno));
  }
  if (::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
      ::access(folder.c_str(), W_OK | X_OK) != 0)
    throw BadInput(shown + ": folder '" + quoteBounded(folder) +
                   "' does not exist or is not writable");
}

std::string canonicalOutputPath(const std::string &path) {
  auto [folder, base] = splitPath(path);
  char resolved[PATH_MAX];
  if (!::realpath(folder.c_str(), resolved))
    throw BadInput(quoteBounded(path) + ": folder '" +
                   quoteBounded(folder) + "' does not exist");
  std::string out = resolved;
  return (out == "/" ? "" : out) + "/" + base;
}

std::string stageFile(const std::string &path, const std::string &contents) {
  checkOutputPath(path);
  auto [folder, base] = splitPath(path);
  std::string shown = quoteBounded(path);
  // The temporary name is unpredictable and created exclusively, so a file
  // or symlink planted under an expected name is never written through.
  std::string pattern = folder + "/." + base + ".tmp.XXXXXX";
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0)
    throw BadInput(shown + ": cannot be written: " + std::strerror(errno));
  // mkstemp creates 0600; give the output the usual 0666 & ~umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const char *data = contents.data();
  size_t left = contents.size();
  int error = 0;
  while (left > 0) {
    ssize_t wrote = ::write(fd, data, left);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0) {
      error = wrote < 0 ? errno : EIO;
      break;
    }
    data += wrote;
    left -= size_t(wrote);
  }
  if (::close(fd) != 0 && !error)
    error = errno;
  if (error) {
    ::unlink(temp.data());
    throw BadInput(shown + ": cannot be written: " + std::strerror(error));
  }
  return std::string(temp.data());
}

void commitStagedFile(const std::string &temp, const std::string &path) {
  // Checked again right before the rename: the target must still be
  // absent or a regular file.
  int error = 0;
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    error = EEXIST;
  else if (::rename(temp.c_str(), path.c_str()) != 0)
    error = errno;
  if (error) {
    ::unlink(temp.c_str());
    if (error == EEXIST)
      checkOutputPath(path); // throws the precise message
    throw BadInput(quoteBounded(path) + ": cannot be written: " +
                   std::strerror(error));
  }
}

void writeFileAtomically(const std::string &path, const std::string &contents) {
  commitStagedFile(stageFile(path, contents), path);
}

} // namespace ditc
