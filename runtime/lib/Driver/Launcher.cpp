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

/// Forks `nproc` ranks, runs `validate` here, then lets each rank run
/// `rankBody` (with the torchrun variables set) and supervises them.
static int startRanks(int nproc, std::chrono::milliseconds timeout,
                      const std::function<void()> &validate,
                      const std::function<int(int rank)> &rankBody) {
  int port = freeLoopbackPort();
  std::vector<pid_t> children(nproc, -1);
  // Each rank blocks on this pipe until the launcher has validated the
  // input: one byte per rank means go, end of file means stop.
  int go[2];
  if (::pipe(go) != 0) {
    std::fprintf(stderr, "dit-run: cannot start the ranks: %s\n", std::strerror(errno));
    return 1;
  }
  std::signal(SIGINT, rememberSignal);
  std::signal(SIGTERM, rememberSignal);
  std::fflush(stdout);
  std::fflush(stderr);
  auto stopChildren = [&] {
    ::close(go[1]);
    for (pid_t child : children)
      if (child > 0)
        ::waitpid(child, nullptr, 0);
  };
  for (int rank = 0; rank < nproc; ++rank) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "dit-run: cannot start rank %d: %s\n", rank,
                   std::strerror(errno));
      stopChildren();
      return 1;
    }
    if (pid == 0) {
      // A rank never outlives its launcher.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      ::close(go[1]);
      char byte = 0;
      ssize_t got;
      do
        got = ::read(go[0], &byte, 1);
      while (got < 0 && errno == EINTR);
      ::close(go[0]);
      if (got != 1)
        ::_exit(0); // the launcher refused the input and says why
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      int code = rankBody(rank);
      std::fflush(stdout);
      std::fflush(stderr);
      ::_exit(code);
    }
    children[rank] = pid;
  }
  ::close(go[0]);
  try {
    validate();
  } catch (...) {
    stopChildren();
    throw;
  }
  // Every rank gets its byte; a write to a pipe this small never blocks.
  std::string bytes(size_t(nproc), 'g');
  for (size_t written = 0; written < bytes.size();) {
    ssize_t n = ::write(go[1], bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    written += size_t(n);
  }
  ::close(go[1]);

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

int launchLocalRanks(int nproc, std::chrono::milliseconds timeout,
                     const std::function<void()> &validate,
                     const std::function<int()> &runRank) {
  return startRanks(nproc, timeout, validate, [&](int) { return runRank(); });
}

int launchLocalRankPrograms(int nproc, const std::vector<std::string> &rankArgs,
                            std::chrono::milliseconds timeout) {
  return startRanks(nproc, timeout, [] {}, [&](int rank) {
    std::vector<char *> argv;
    static std::string self = "dit-run";
    argv.push_back(const_cast<char *>(self.c_str()));
    for (const std::string &arg : rankArgs)
      argv.push_back(const_cast<char *>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    std::fprintf(stderr, "dit-run: cannot run rank %d: %s\n", rank, std::strerror(errno));
    return 1;
  });
}

} // namespace ditc::runtime
