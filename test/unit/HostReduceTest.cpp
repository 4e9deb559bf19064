//===- HostReduceTest.cpp - the shared-memory all-reduce between processes ===//
//
// Each test forks its members; they agree through a c10d FileStore, as the
// runtime's members agree through gloo, and report through memory the
// parent mapped before the fork.
//
//===----------------------------------------------------------------------===//
#include "ditc/Runtime/HostReduce.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ditc::runtime;

namespace {

/// What a member leaves for the parent: its result and a message.
struct Shared {
  explicit Shared(size_t resultBytes, int members) : bytes(resultBytes), members(members) {
    size = members * (resultBytes + kMessage);
    base = static_cast<char *>(
        mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  }
  ~Shared() { munmap(base, size); }
  char *result(int m) { return base + m * (bytes + kMessage); }
  char *message(int m) { return result(m) + bytes; }
  void say(int m, const std::string &text) {
    std::strncpy(message(m), text.c_str(), kMessage - 1);
  }
  static constexpr size_t kMessage = 512;
  size_t bytes, size;
  int members;
  char *base;
};

/// Runs `member(index, allGather)` in `members` forked processes and
/// returns their exit codes.
std::vector<int> runMembers(
    int members,
    const std::function<int(int, const HostReduce::AllGather &)> &member) {
  char folder[] = "/tmp/ditc-host-reduce-XXXXXX";
  EXPECT_NE(mkdtemp(folder), nullptr);
  std::string storePath = std::string(folder) + "/store";
  std::vector<pid_t> children;
  for (int m = 0; m < members; ++m) {
    pid_t pid = fork();
    if (pid == 0) {
      int code = 99;
      try {
        auto store = c10::make_intrusive<c10d::FileStore>(storePath, members);
        store->setTimeout(std::chrono::seconds(20));
        int round = 0;
        HostReduce::AllGather allGather = [&](const std::vector<int64_t> &mine) {
          std::string prefix = "round" + std::to_string(round++) + "/";
          std::vector<uint8_t> bytes(mine.size() * sizeof(int64_t));
          std::memcpy(bytes.data(), mine.data(), bytes.size());
          store->set(prefix + std::to_string(m), bytes);
          std::vector<int64_t> all;
          for (int other = 0; other < members; ++other) {
            std::vector<uint8_t> theirs = store->get(prefix + std::to_string(other));
            size_t at = all.size();
            all.resize(at + theirs.size() / sizeof(int64_t));
            std::memcpy(all.data() + at, theirs.data(), theirs.size());
          }
          return all;
        };
        code = member(m, allGather);
      } catch (const std::exception &error) {
        std::fprintf(stderr, "member %d: %s\n", m, error.what());
      }
      std::fflush(nullptr);
      _exit(code);
    }
    children.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  std::system(("rm -rf " + std::string(folder)).c_str());
  return codes;
}

template <typename T> std::vector<T> valuesOf(int member, int64_t count) {
  std::mt19937_64 random(1234 + member);
  std::uniform_real_distribution<double> draw(-1.0, 1.0);
  std::vector<T> values(static_cast<size_t>(count));
  for (T &v : values)
    v = T(draw(random) * (1 + member)); // members of different scales round
  return values;
}

/// Three members reduce a tensor of several pieces (the slots hold 4 MiB)
/// whose size divides neither by the members nor by a cache line, whole and
/// then again in two uneven chunks; every member must hold the sum taken in
/// member order, bit for bit.
template <typename T> void checkSum(at::ScalarType dtype, int64_t count) {
  const int members = 3;
  Shared shared(size_t(count) * sizeof(T) * 2, members);
  std::vector<int> codes = runMembers(members, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {4, 5, 6}, "test", allGather, why);
    if (!reducer) {
      shared.say(m, why);
      return 1;
    }
    // The names are gone once every member has mapped every segment.
    std::string mine = "/dev/shm/ditc-reduce-" + std::to_string(getpid()) + "-test";
    if (access(mine.c_str(), F_OK) == 0) {
      shared.say(m, mine + " is still there");
      return 4;
    }
    std::vector<T> whole = valuesOf<T>(m, count), chunked = whole;
    at::Tensor x = at::from_blob(whole.data(), {count}, dtype);
    reducer->sumInPlace(x, std::chrono::seconds(20));
    int64_t cut = count / 3 + 5;
    at::Tensor head = at::from_blob(chunked.data(), {cut}, dtype);
    at::Tensor tail = at::from_blob(chunked.data() + cut, {count - cut}, dtype);
    reducer->sumInPlace(head, std::chrono::seconds(20));
    reducer->sumInPlace(tail, std::chrono::seconds(20));
    std::memcpy(shared.result(m), whole.data(), size_t(count) * sizeof(T));
    std::memcpy(shared.result(m) + size_t(count) * sizeof(T), chunked.data(),
                size_t(count) * sizeof(T));
    return 0;
  });
  for (int m = 0; m < members; ++m)
    ASSERT_EQ(codes[m], 0) << "member " << m << ": " << shared.message(m);
  std::vector<T> expected = valuesOf<T>(0, count);
  for (int m = 1; m < members; ++m) {
    std::vector<T> theirs = valuesOf<T>(m, count);
    for (int64_t i = 0; i < count; ++i)
      expected[size_t(i)] += theirs[size_t(i)];
  }
  for (int m = 0; m < members; ++m)
    for (int copy = 0; copy < 2; ++copy)
      ASSERT_EQ(std::memcmp(shared.result(m) + copy * size_t(count) * sizeof(T),
                            expected.data(), size_t(count) * sizeof(T)),
                0)
          << "member " << m << (copy ? " (in two chunks)" : " (whole)");
}

TEST(HostReduce, SumsFloatsInMemberOrderAcrossPieces) {
  checkSum<float>(at::kFloat, 2'500'003); // 10 MB: three pieces
}

TEST(HostReduce, SumsDoublesInMemberOrderAcrossPieces) {
  checkSum<double>(at::kDouble, 600'001); // 4.8 MB: two pieces
}

TEST(HostReduce, HandlesOnlyContiguousFloatsOnTheHost) {
  EXPECT_TRUE(HostReduce::handles(at::zeros({4}, at::kFloat)));
  EXPECT_TRUE(HostReduce::handles(at::zeros({4}, at::kDouble)));
  EXPECT_FALSE(HostReduce::handles(at::zeros({4}, at::kHalf)));
  EXPECT_FALSE(HostReduce::handles(at::zeros({4}, at::kLong)));
  EXPECT_FALSE(HostReduce::handles(at::zeros({4, 4}, at::kFloat).t()));
}

// One member refusing (DITC_HOST_REDUCE=0) makes every member refuse, so
// none waits at a barrier the others never reach.
TEST(HostReduce, OneRefusalIsEveryonesAnswer) {
  const int members = 3;
  Shared shared(0, members);
  std::vector<int> codes = runMembers(members, [&](int m, const auto &allGather) {
    if (m == 2)
      setenv("DITC_HOST_REDUCE", "0", 1);
    std::string why;
    auto reducer = HostReduce::setUp(m, {4, 5, 6}, "refuse", allGather, why);
    shared.say(m, why);
    return reducer ? 1 : 0;
  });
  for (int m = 0; m < members; ++m) {
    EXPECT_EQ(codes[m], 0) << "member " << m << " set the reducer up";
    EXPECT_STREQ(shared.message(m), "DITC_HOST_REDUCE=0 on rank 6");
  }
}

// A member that exits between all-reduces: the other one names its rank
// within a fraction of its timeout instead of waiting it out.
TEST(HostReduce, NamesAMemberThatExited) {
  Shared shared(0, 2);
  std::vector<int> codes = runMembers(2, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {3, 7}, "exit", allGather, why);
    if (!reducer)
      return 1;
    if (m == 1)
      _exit(0);
    std::vector<float> values(1000, 1.0f);
    at::Tensor x = at::from_blob(values.data(), {1000}, at::kFloat);
    auto start = std::chrono::steady_clock::now();
    try {
      reducer->sumInPlace(x, std::chrono::seconds(60));
    } catch (const std::exception &error) {
      double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                    start)
                          .count();
      shared.say(m, error.what());
      return waited < 10 ? 0 : 2;
    }
    return 3;
  });
  EXPECT_EQ(codes[0], 0) << shared.message(0);
  EXPECT_NE(std::string(shared.message(0)).find("rank 7 (pid"), std::string::npos)
      << shared.message(0);
  EXPECT_NE(std::string(shared.message(0)).find("exited during the shared-memory all_reduce"),
            std::string::npos)
      << shared.message(0);
}

// A member that is alive but late past the timeout: the timeout, named.
TEST(HostReduce, TimesOutNamingTheLateMember) {
  Shared shared(0, 2);
  std::vector<int> codes = runMembers(2, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {3, 7}, "late", allGather, why);
    if (!reducer)
      return 1;
    std::vector<float> values(1000, 1.0f);
    at::Tensor x = at::from_blob(values.data(), {1000}, at::kFloat);
    if (m == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      return 0; // never arrives
    }
    try {
      reducer->sumInPlace(x, std::chrono::milliseconds(300));
    } catch (const std::exception &error) {
      shared.say(m, error.what());
      return 0;
    }
    return 3;
  });
  EXPECT_EQ(codes[0], 0) << shared.message(0);
  std::string message = shared.message(0);
  EXPECT_EQ(message.rfind("timed out after 0.3 s waiting for rank 7 (pid ", 0), 0u)
      << message;
  const std::string tail = ") at the shared-memory all_reduce";
  EXPECT_TRUE(message.size() > tail.size() &&
              message.compare(message.size() - tail.size(), tail.size(), tail) == 0)
      << message;
}

} // namespace
