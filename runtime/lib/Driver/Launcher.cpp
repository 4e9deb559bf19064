//===- Launcher.cpp - start N local ranks of dit-run ----------------------===//
#include "ditc/Runtime/Driver/Launcher.h"

#include <algorithm>
#include <arpa/inet.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ditc::runtime {

using Clock = std::chrono::steady_clock;

/// A port the kernel says is free on loopback right now. Rank 0 binds it a
/// moment later; a collision makes the run fail with exit 1, never hang.
static int freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return 29500;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  int port = 29500;
  if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

static volatile sig_atomic_t forwardedSignal = 0;
static void rememberSignal(int signal) { forwardedSignal = signal; }

int launchLocalRanks(int nproc, const std::vector<std::string> &rankArgs,
                     std::chrono::milliseconds timeout) {
  int port = freeLoopbackPort();
  std::vector<pid_t> children(nproc, -1);
  std::signal(SIGINT, rememberSignal);
  std::signal(SIGTERM, rememberSignal);
  for (int rank = 0; rank < nproc; ++rank) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "dit-run: cannot start rank %d: %s\n", rank,
                   std::strerror(errno));
      for (pid_t child : children)
        if (child > 0)
          ::kill(child, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      // A rank never outlives its launcher.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      std::vector<char *> argv;
      static std::string self = "dit-run";
      argv.push_back(const_cast<char *>(self.c_str()));
      for (const std::string &arg : rankArgs)
        argv.push_back(const_cast<char *>(arg.c_str()));
      argv.push_back(nullptr);
      ::execv("/proc/self/exe", argv.data());
      std::fprintf(stderr, "dit-run: cannot run rank %d: %s\n", rank,
                   std::strerror(errno));
      ::_exit(1);
    }
    children[rank] = pid;
  }

  int result = 0, running = nproc;
  bool deadlineSet = false;
  Clock::time_point deadline;
  while (running > 0) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      int rank = int(std::find(children.begin(), children.end(), pid) - children.begin());
      if (rank >= nproc)
        continue;
      children[rank] = -1;
      --running;
      int code = 0;
      if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "dit-run: rank %d was killed by signal %d (%s)\n", rank,
                     WTERMSIG(status), strsignal(WTERMSIG(status)));
        code = 1;
      } else if (WIFEXITED(status)) {
        code = WEXITSTATUS(status);
      }
      if (code == 2)
        result = 2;
      else if (code != 0 && result == 0)
        result = 1;
      if (code != 0 && !deadlineSet) {
        // The others notice a dead peer within the timeout; past that, and
        // a grace period, they are stopped.
        deadlineSet = true;
        deadline = Clock::now() + timeout + std::chrono::seconds(10);
      }
      continue;
    }
    if (forwardedSignal) {
      for (pid_t child : children)
        if (child > 0)
          ::kill(child, forwardedSignal);
      forwardedSignal = 0;
      if (result == 0)
        result = 1;
    }
    if (deadlineSet && Clock::now() > deadline) {
      for (int rank = 0; rank < nproc; ++rank)
        if (children[rank] > 0) {
          std::fprintf(stderr, "dit-run: rank %d did not stop after a peer failed; "
                               "killing it\n", rank);
          ::kill(children[rank], SIGKILL);
        }
      deadlineSet = false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return result;
}

} // namespace ditc::runtime
