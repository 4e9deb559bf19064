//===- HostReduceTest.cpp - the shared-memory all-reduce between processes ===//
//
// Each test forks its members; they agree through a c10d FileStore, as the
// runtime's members agree through gloo, and report through memory the
// parent mapped before the fork.
//
//===----------------------------------------------------------------------===//
#include "ditc/Runtime/Comm/HostReduce.h"

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

/// Both members set up and run `together`; then member 1 (rank 7) exits and
/// member 0 (rank 3) runs `alone` with a 60 s timeout: it must name rank 7 as
/// exited during `collective` within a fraction of that timeout instead of
/// waiting it out.
void expectExitNamed(const std::string &tag, const std::string &collective,
                     const std::function<void(HostReduce &)> &together,
                     const std::function<void(HostReduce &)> &alone) {
  Shared shared(0, 2);
  std::vector<int> codes = runMembers(2, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {3, 7}, tag, allGather, why);
    if (!reducer)
      return 1;
    together(*reducer);
    if (m == 1)
      _exit(0);
    auto start = std::chrono::steady_clock::now();
    try {
      alone(*reducer);
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
  std::string message = shared.message(0);
  EXPECT_NE(message.find("rank 7 (pid"), std::string::npos) << message;
  EXPECT_NE(message.find("exited during the shared-memory " + collective), std::string::npos)
      << message;
}

// A member that exits between all-reduces.
TEST(HostReduce, NamesAMemberThatExited) {
  expectExitNamed("exit", "all_reduce", [](HostReduce &) {}, [](HostReduce &reducer) {
    std::vector<float> values(1000, 1.0f);
    at::Tensor x = at::from_blob(values.data(), {1000}, at::kFloat);
    reducer.sumInPlace(x, std::chrono::seconds(60));
  });
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

// A member that arrives 600 ms late: the punctual one's wait for it, at an
// all-reduce and at the collection of an exchange the late one posted late,
// is peer wait; the late one finds its peer there and waits about nothing,
// and neither waits to collect an exchange both posted in time (bounds
// loose enough for a loaded or sanitized run).
TEST(HostReduce, CountsTheWaitForALateMemberAsPeerWait) {
  Shared shared(0, 2);
  std::vector<int> codes = runMembers(2, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {3, 7}, "peerwait", allGather, why);
    if (!reducer)
      return 1;
    auto lateBy = [&] {
      if (m == 1)
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
    };
    std::vector<float> values(1000, 1.0f);
    at::Tensor x = at::from_blob(values.data(), {1000}, at::kFloat);
    lateBy();
    reducer->sumInPlace(x, std::chrono::seconds(20));
    double reduceWait = reducer->takePeerWaitSeconds();
    at::Tensor chunks = at::ones({2, 100}, at::kFloat);
    at::Tensor received = at::empty({2, 100}, at::kFloat);
    uint32_t number = reducer->postExchange(chunks, received, std::chrono::seconds(20));
    lateBy(); // member 1 sleeps after posting: member 0 does not wait for it
    reducer->takePeerWaitSeconds();
    reducer->collectExchange(number, std::chrono::seconds(20));
    double collectWait = reducer->takePeerWaitSeconds();
    lateBy(); // member 1 posts the next exchange late
    number = reducer->postExchange(chunks, received, std::chrono::seconds(20));
    reducer->takePeerWaitSeconds();
    reducer->collectExchange(number, std::chrono::seconds(20));
    double lateCollectWait = reducer->takePeerWaitSeconds();
    shared.say(m, std::to_string(reduceWait) + ", " + std::to_string(collectWait) +
                      ", " + std::to_string(lateCollectWait));
    bool punctual = m == 0;
    if (punctual ? reduceWait < 0.5 : reduceWait > 0.4)
      return 2;
    if (collectWait > 0.4)
      return 3;
    if (punctual ? lateCollectWait < 0.5 : lateCollectWait > 0.4)
      return 4;
    return 0;
  });
  for (int m = 0; m < 2; ++m)
    EXPECT_EQ(codes[m], 0) << "member " << m
                           << " waited (all-reduce, collect, late collect) "
                           << shared.message(m) << " s";
}

// all_to_all in two phases. Three members each post eight exchanges before
// collecting any (twice the exchange slots: a member waiting for a slot must
// collect what its peers posted, or all three wait forever), from a strided
// view, then collect them out of order. Chunk j of member m's exchange e
// holds 1000 * e + 100 * m + 10 * j + position; every member must receive
// chunk m of each member's exchange, in member order, in float64 too.
TEST(HostReduce, ExchangesChunksWithMoreInFlightThanSlots) {
  const int members = 3, exchanges = 8;
  const int64_t perChunk = 1001; // no multiple of a cache line
  Shared shared(0, members);
  std::vector<int> codes = runMembers(members, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {4, 5, 6}, "exchange", allGather, why);
    if (!reducer) {
      shared.say(m, why);
      return 1;
    }
    std::vector<at::Tensor> received;
    std::vector<uint32_t> numbers;
    for (int e = 0; e < exchanges; ++e) {
      at::ScalarType dtype = e % 2 ? at::kDouble : at::kFloat;
      // [perChunk, members] transposed: a view whose chunks are not
      // contiguous, as a head group's slice is not.
      at::Tensor source = at::empty({perChunk, members}, at::kDouble);
      for (int64_t j = 0; j < members; ++j)
        for (int64_t i = 0; i < perChunk; ++i)
          source[i][j] = 1000.0 * e + 100.0 * m + 10.0 * j + double(i);
      at::Tensor chunks = source.t().to(dtype);
      chunks = chunks.t().contiguous().t(); // strided again, in dtype
      received.push_back(at::empty({members, perChunk}, dtype));
      if (!reducer->exchangeFits(received.back())) {
        shared.say(m, "a small exchange does not fit");
        return 2;
      }
      numbers.push_back(reducer->postExchange(chunks, received.back(),
                                              std::chrono::seconds(20)));
    }
    for (int e : {5, 0, 3, 1, 7, 2, 6, 4})
      reducer->collectExchange(numbers[size_t(e)], std::chrono::seconds(20));
    for (int e = 0; e < exchanges; ++e) {
      at::Tensor got = received[size_t(e)].to(at::kDouble);
      for (int64_t from = 0; from < members; ++from)
        for (int64_t i = 0; i < perChunk; i += 250) {
          double want = 1000.0 * e + 100.0 * from + 10.0 * m + double(i);
          double seen = got[from][i].item<double>();
          if (seen != want) {
            shared.say(m, "exchange " + std::to_string(e) + " from member " +
                              std::to_string(from) + " element " + std::to_string(i) +
                              ": " + std::to_string(seen) + ", not " +
                              std::to_string(want));
            return 3;
          }
        }
    }
    return 0;
  });
  for (int m = 0; m < members; ++m)
    EXPECT_EQ(codes[m], 0) << "member " << m << ": " << shared.message(m);
}

// An all_gather is the exchange whose chunks are one tensor repeated (a
// stride-0 view, as Communicator::allGather posts it): every member gets
// every member's tensor in member order.
TEST(HostReduce, GathersARepeatedTensor) {
  const int members = 3;
  const int64_t length = 777;
  Shared shared(0, members);
  std::vector<int> codes = runMembers(members, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {0, 1, 2}, "gather", allGather, why);
    if (!reducer) {
      shared.say(m, why);
      return 1;
    }
    at::Tensor mine = at::arange(length, at::kFloat) + 1000.0 * m;
    at::Tensor repeated = mine.unsqueeze(0).expand({members, length});
    at::Tensor gathered = at::empty({members, length}, at::kFloat);
    reducer->collectExchange(
        reducer->postExchange(repeated, gathered, std::chrono::seconds(20), "all_gather"),
        std::chrono::seconds(20));
    for (int64_t from = 0; from < members; ++from)
      if (!at::equal(gathered[from], at::arange(length, at::kFloat) + 1000.0 * from)) {
        shared.say(m, "row " + std::to_string(from) + " is not member " +
                          std::to_string(from) + "'s tensor");
        return 2;
      }
    return 0;
  });
  for (int m = 0; m < members; ++m)
    EXPECT_EQ(codes[m], 0) << "member " << m << ": " << shared.message(m);
}

TEST(HostReduce, ExchangesOnlyWhatFitsASlot) {
  Shared shared(0, 2);
  std::vector<int> codes = runMembers(2, [&](int m, const auto &allGather) {
    std::string why;
    auto reducer = HostReduce::setUp(m, {0, 1}, "fits", allGather, why);
    if (!reducer)
      return 1;
    bool right = reducer->exchangeFits(at::empty({2, 1 << 19}, at::kFloat)) && // 4 MiB
                 !reducer->exchangeFits(at::empty({2, (1 << 19) + 1}, at::kFloat)) &&
                 !reducer->exchangeFits(at::empty({3, 16}, at::kFloat)) && // 3 chunks
                 !reducer->exchangeFits(at::empty({2, 16}, at::kHalf)) &&
                 reducer->exchangeFits(at::empty({2, 16}, at::kDouble));
    return right ? 0 : 2;
  });
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 0);
}

// A member that exits after an exchange both collected: the other one,
// waiting to collect the next, names it.
TEST(HostReduce, NamesAMemberThatExitedDuringAnExchange) {
  at::Tensor chunks = at::ones({2, 100}, at::kFloat);
  at::Tensor received = at::empty({2, 100}, at::kFloat);
  auto exchange = [&](HostReduce &reducer, std::chrono::seconds timeout) {
    reducer.collectExchange(reducer.postExchange(chunks, received, timeout), timeout);
  };
  expectExitNamed(
      "exchange-exit", "all_to_all",
      [&](HostReduce &reducer) { exchange(reducer, std::chrono::seconds(20)); },
      [&](HostReduce &reducer) { exchange(reducer, std::chrono::seconds(60)); });
}

} // namespace
