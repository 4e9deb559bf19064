//===- HostReduce.cpp - all-reduce through shared memory on one host ------===//
#include "ditc/Runtime/Comm/HostReduce.h"

#include <atomic>
#include <cerrno>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/futex.h>
#include <sstream>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace ditc::runtime {

using Clock = std::chrono::steady_clock;

namespace {
/// Each member's segment: its counters, each on a line of its own, then two
/// reduce slots, so a piece can be copied in while the members still copy
/// the last piece's sum out of the other slot, then the exchange slots, so
/// several all_to_alls can be in flight (a head group's input and the
/// outputs of the groups before it).
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kSlotBytes = size_t(4) << 20;
constexpr uint32_t kExchangeSlots = 4;
constexpr size_t kExchangeSlotBytes = size_t(4) << 20;
constexpr size_t kSegmentBytes =
    kHeaderBytes + 2 * kSlotBytes + kExchangeSlots * kExchangeSlotBytes;
constexpr size_t kPostedOffset = 64, kCollectedOffset = 128, kStampsOffset = 192;

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<int64_t>::is_always_lock_free,
              "the counters live in memory other processes map");
static_assert(kStampsOffset + kExchangeSlots * sizeof(int64_t) <= kHeaderBytes,
              "the header holds every counter");

std::string errnoText() { return std::strerror(errno); }

/// What tells two processes they see the same shared memory: one kernel
/// (boot id), one host name, one mount namespace (the /dev/shm they open).
int64_t hostIdentity() {
  std::string text;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0)
    text += name;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string bootId;
  std::getline(boot, bootId);
  text += "|" + bootId;
  struct stat ns {};
  if (stat("/proc/self/ns/mnt", &ns) == 0)
    text += "|" + std::to_string(ns.st_ino) + ":" + std::to_string(ns.st_dev);
  // FNV-1a: only equality matters, and every member hashes alike.
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 1099511628211ull;
  return int64_t(hash & 0x7fffffffffffffffull);
}

/// A process that exited is gone from /proc or a zombie its parent has not
/// reaped yet (a launcher that waits for its ranks in order).
bool processAlive(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line))
    return false;
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size())
    return true;
  char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

std::string segmentName(int64_t pid, const std::string &tag) {
  std::string safe;
  for (char c : tag)
    safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return "/ditc-reduce-" + std::to_string(pid) + "-" + safe;
}

long futex(std::atomic<uint32_t> *word, int op, uint32_t value,
           const struct timespec *timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op, value,
                 timeout, nullptr, 0);
}
} // namespace

struct HostReduce::Segment {
  std::string name;
  bool linked = false; // this process created it, and its name still exists
  void *base = MAP_FAILED;

  ~Segment() {
    if (base != MAP_FAILED)
      munmap(base, kSegmentBytes);
    if (linked)
      shm_unlink(name.c_str());
  }
  std::atomic<uint32_t> *counter(size_t offset) {
    return reinterpret_cast<std::atomic<uint32_t> *>(static_cast<char *>(base) + offset);
  }
  /// Barriers this member has reached.
  std::atomic<uint32_t> *arrived() { return counter(0); }
  /// Exchanges this member has posted, and collected from every peer.
  std::atomic<uint32_t> *posted() { return counter(kPostedOffset); }
  std::atomic<uint32_t> *collected() { return counter(kCollectedOffset); }
  /// When this member posted the exchange in each exchange slot (steady
  /// clock nanoseconds: CLOCK_MONOTONIC, one clock for the whole host).
  std::atomic<int64_t> *stamp(uint32_t which) {
    return reinterpret_cast<std::atomic<int64_t> *>(static_cast<char *>(base) +
                                                    kStampsOffset) +
           which;
  }
  char *slot(int which) {
    return static_cast<char *>(base) + kHeaderBytes + size_t(which) * kSlotBytes;
  }
  char *exchangeSlot(uint32_t which) {
    return static_cast<char *>(base) + kHeaderBytes + 2 * kSlotBytes +
           size_t(which) * kExchangeSlotBytes;
  }

  /// Maps the whole segment from `fd`, which it closes.
  bool map(int fd, std::string &why) {
    base = mmap(nullptr, kSegmentBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
      why = "mapping shared memory " + name + ": " + errnoText();
    return base != MAP_FAILED;
  }

  /// Creates this member's segment and reserves its pages, so a full
  /// /dev/shm is an error here rather than a SIGBUS mid-step.
  static std::unique_ptr<Segment> create(const std::string &name, std::string &why) {
    auto segment = std::make_unique<Segment>();
    segment->name = name;
    shm_unlink(name.c_str()); // a crashed earlier process of the same pid
    int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
      why = "creating shared memory " + name + ": " + errnoText();
      return nullptr;
    }
    segment->linked = true;
    int error = posix_fallocate(fd, 0, off_t(kSegmentBytes));
    if (error != 0) {
      why = "reserving " + std::to_string(kSegmentBytes >> 20) +
            " MiB of shared memory " + name + ": " + std::strerror(error);
      close(fd);
      return nullptr;
    }
    if (!segment->map(fd, why))
      return nullptr;
    new (segment->arrived()) std::atomic<uint32_t>(0);
    new (segment->posted()) std::atomic<uint32_t>(0);
    new (segment->collected()) std::atomic<uint32_t>(0);
    for (uint32_t which = 0; which < kExchangeSlots; ++which)
      new (segment->stamp(which)) std::atomic<int64_t>(0);
    return segment;
  }

  static std::unique_ptr<Segment> open(const std::string &name, std::string &why) {
    auto segment = std::make_unique<Segment>();
    segment->name = name;
    int fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) {
      why = "opening a peer's shared memory " + name + ": " + errnoText();
      return nullptr;
    }
    // Only a segment a rank of this user made: a regular file of our size.
    struct stat info {};
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != geteuid() ||
        size_t(info.st_size) != kSegmentBytes) {
      why = "a peer's shared memory " + name + " is not a " +
            std::to_string(kSegmentBytes) + "-byte file of this user";
      close(fd);
      return nullptr;
    }
    if (!segment->map(fd, why))
      return nullptr;
    return segment;
  }
};

HostReduce::HostReduce(int64_t index, std::vector<int64_t> ranks,
                       std::vector<int64_t> pids)
    : index(index), ranks(std::move(ranks)), pids(std::move(pids)) {}

std::string HostReduce::describe(size_t member) const {
  return "rank " + std::to_string(ranks[member]) + " (pid " +
         std::to_string(pids[member]) + ")";
}

HostReduce::~HostReduce() = default;

HostReduce::AllGather HostReduce::gatherThrough(
    int64_t members,
    std::function<void(std::vector<at::Tensor> &, at::Tensor &)> gather) {
  return [members, gather](const std::vector<int64_t> &mine) {
    at::Tensor in = at::tensor(mine, at::kLong);
    std::vector<at::Tensor> out;
    for (int64_t m = 0; m < members; ++m)
      out.push_back(at::empty_like(in));
    gather(out, in);
    std::vector<int64_t> all;
    for (const at::Tensor &t : out)
      all.insert(all.end(), t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
    return all;
  };
}

std::unique_ptr<HostReduce> HostReduce::setUp(int64_t index,
                                              const std::vector<int64_t> &ranks,
                                              const std::string &tag,
                                              const AllGather &allGather,
                                              std::string &why) {
  // Every decision below is taken from all-gathered values, so the members
  // reach it together and none waits at a barrier the others skipped.
  const char *setting = std::getenv("DITC_HOST_REDUCE");
  bool wanted = !(setting && std::string(setting) == "0");
  int64_t size = int64_t(ranks.size());
  std::vector<int64_t> facts =
      allGather({hostIdentity(), int64_t(getpid()), wanted ? 1 : 0});
  std::vector<int64_t> pids;
  for (int64_t m = 0; m < size; ++m) {
    if (facts[3 * m + 2] == 0) {
      why = "DITC_HOST_REDUCE=0 on rank " + std::to_string(ranks[m]);
      return nullptr;
    }
    if (facts[3 * m] != facts[0]) {
      why = "the members are on different hosts";
      return nullptr;
    }
    pids.push_back(facts[3 * m + 1]);
  }
  auto all = [&](bool mine) {
    for (int64_t ok : allGather({mine ? 1 : 0}))
      if (!ok)
        return false;
    return true;
  };

  std::unique_ptr<HostReduce> reducer(new HostReduce(index, ranks, pids));
  reducer->segments.resize(size_t(size));
  std::string mine;
  reducer->segments[index] = Segment::create(segmentName(pids[index], tag), mine);
  if (!all(reducer->segments[index] != nullptr)) {
    why = mine.empty() ? "a peer could not create its shared memory" : mine;
    return nullptr;
  }
  bool mapped = true;
  for (int64_t m = 0; m < size && mapped; ++m)
    if (m != index) {
      reducer->segments[m] = Segment::open(segmentName(pids[m], tag), mine);
      mapped = reducer->segments[m] != nullptr;
    }
  bool everyone = all(mapped);
  // Every member has mapped every segment (or given up): the names can go,
  // so nothing is left in /dev/shm however the run ends.
  shm_unlink(reducer->segments[index]->name.c_str());
  reducer->segments[index]->linked = false;
  if (!everyone) {
    why = mine.empty() ? "a peer could not map the shared memory" : mine;
    return nullptr;
  }
  return reducer;
}

// Tensors here are in host memory: only a rank whose Device is the host
// sets a HostReduce up (Communicator::hostReducer, Calibrate).
bool HostReduce::handles(const at::Tensor &x) {
  return x.is_contiguous() &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble);
}

void HostReduce::barrier(Clock::time_point deadline,
                         std::chrono::milliseconds timeout) {
  uint32_t target = ++generation;
  std::atomic<uint32_t> *mine = segments[index]->arrived();
  mine->store(target, std::memory_order_release);
  futex(mine, FUTEX_WAKE, INT_MAX, nullptr);
  for (size_t m = 0; m < segments.size(); ++m)
    if (int64_t(m) != index)
      awaitCounter(m, segments[m]->arrived(), target, deadline, timeout, "all_reduce",
                   [&] { collectPosted(std::nullopt, deadline, timeout); });
}

void HostReduce::awaitCounter(size_t member, std::atomic<uint32_t> *word,
                              uint32_t target, Clock::time_point deadline,
                              std::chrono::milliseconds timeout,
                              const char *collective,
                              const std::function<void()> &meanwhile) {
  // A counter is never far from its target; the difference decides, so the
  // counters may wrap.
  auto reached = [&](uint32_t seen) { return int32_t(seen - target) >= 0; };
  if (reached(word->load(std::memory_order_acquire)))
    return;
  int spins = 0;
  Clock::time_point began = Clock::now(), lastCheck = began;
  Clock::duration working{}; // in `meanwhile`: this member's own work
  for (;;) {
    uint32_t seen = word->load(std::memory_order_acquire);
    if (reached(seen)) {
      peerWait += std::chrono::duration<double>(Clock::now() - began - working).count();
      return;
    }
    if (meanwhile) {
      Clock::time_point from = Clock::now();
      meanwhile();
      working += Clock::now() - from;
    }
    if (++spins < 256)
      continue;
    // Sleep on the counter until the member moves it (it wakes us) or a few
    // milliseconds pass, to check on it.
    struct timespec slice = {0, 5 * 1000 * 1000};
    futex(word, FUTEX_WAIT, seen, &slice);
    Clock::time_point now = Clock::now();
    if (now - lastCheck > std::chrono::milliseconds(20)) {
      lastCheck = now;
      if (!processAlive(pids[member]) && !reached(word->load(std::memory_order_acquire)))
        throw std::runtime_error(describe(member) + " exited during the shared-memory " +
                                 collective);
    }
    if (now > deadline) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%.3g s", timeout.count() / 1000.0);
      throw std::runtime_error("timed out after " + std::string(limit) +
                               " waiting for " + describe(member) +
                               " at the shared-memory " + collective);
    }
  }
}

/// The elements [begin, end) of a piece of `count` that member `member` of
/// `members` sums: slices start on cache lines, the last one is short.
static std::pair<int64_t, int64_t> sliceOf(int64_t count, int64_t members,
                                           int64_t member, size_t width) {
  int64_t align = int64_t(64 / width);
  int64_t per = ((count + members - 1) / members + align - 1) / align * align;
  return {std::min(count, member * per), std::min(count, (member + 1) * per)};
}

template <typename T> void HostReduce::sumSlice(int64_t count, int slot) {
  int64_t members = int64_t(segments.size());
  auto [begin, end] = sliceOf(count, members, index, sizeof(T));
  T *out = reinterpret_cast<T *>(segments[index]->slot(slot));
  // Blocks through a local accumulator: member 0's value plus the others in
  // member order, each pass a plain loop the compiler vectorizes.
  constexpr int64_t block = 1024;
  T acc[block];
  for (int64_t at = begin; at < end; at += block) {
    int64_t n = std::min(block, end - at);
    const T *first = reinterpret_cast<const T *>(segments[0]->slot(slot)) + at;
    for (int64_t i = 0; i < n; ++i)
      acc[i] = first[i];
    for (int64_t m = 1; m < members; ++m) {
      const T *theirs = reinterpret_cast<const T *>(segments[m]->slot(slot)) + at;
      for (int64_t i = 0; i < n; ++i)
        acc[i] += theirs[i];
    }
    std::memcpy(out + at, acc, size_t(n) * sizeof(T));
  }
}

void HostReduce::sumInPlace(at::Tensor &x, std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  size_t width = x.element_size();
  int64_t perPiece = int64_t(kSlotBytes / width);
  int64_t total = x.numel();
  char *data = static_cast<char *>(x.data_ptr());
  int64_t members = int64_t(segments.size());
  for (int64_t offset = 0; offset < total; offset += perPiece) {
    int64_t count = std::min(perPiece, total - offset);
    int slot = int(pieces++ % 2);
    // The slot was last read two pieces ago; every member has finished
    // reading it since, or it would not have passed the last barrier.
    std::memcpy(segments[index]->slot(slot), data + offset * width, size_t(count) * width);
    barrier(deadline, timeout);
    if (x.scalar_type() == at::kFloat)
      sumSlice<float>(count, slot);
    else
      sumSlice<double>(count, slot);
    barrier(deadline, timeout);
    // Each member's slice of the sum lies in its own slot.
    for (int64_t m = 0; m < members; ++m) {
      auto [begin, end] = sliceOf(count, members, m, width);
      if (end > begin)
        std::memcpy(data + (offset + begin) * width,
                    segments[m]->slot(slot) + begin * width, size_t(end - begin) * width);
    }
  }
}

//===----------------------------------------------------------------------===//
// all_to_all in two phases
//===----------------------------------------------------------------------===//

bool HostReduce::exchangeFits(const at::Tensor &chunks) const {
  return (chunks.scalar_type() == at::kFloat || chunks.scalar_type() == at::kDouble) &&
         chunks.dim() >= 1 && chunks.size(0) == int64_t(segments.size()) &&
         size_t(chunks.numel()) * chunks.element_size() <= kExchangeSlotBytes;
}

uint32_t HostReduce::postExchange(const at::Tensor &chunks, at::Tensor received,
                                  std::chrono::milliseconds timeout,
                                  const char *collective) {
  Clock::time_point deadline = Clock::now() + timeout;
  uint32_t number = posted;
  uint32_t which = number % kExchangeSlots;
  // The slot last held exchange number - kExchangeSlots: every peer must
  // have collected that one (for the first exchanges the target lies
  // "behind" zero, which the wrapping comparison reads as reached).
  for (size_t m = 0; m < segments.size(); ++m)
    if (int64_t(m) != index)
      awaitCounter(m, segments[m]->collected(), number - kExchangeSlots + 1, deadline,
                   timeout, collective,
                   [&] { collectPosted(std::nullopt, deadline, timeout); });
  // Only the chunks peers read go through the slot; the rank's own chunk
  // goes straight to its place in the result (one copy, not two).
  at::Tensor slot = at::from_blob(segments[index]->exchangeSlot(which),
                                  received.sizes(), received.options());
  for (int64_t m = 0; m < int64_t(segments.size()); ++m)
    (m == index ? received : slot).select(0, m).copy_(chunks.select(0, m));
  Segment &mine = *segments[index];
  mine.stamp(which)->store(Clock::now().time_since_epoch().count(),
                           std::memory_order_relaxed);
  mine.posted()->store(number + 1, std::memory_order_release);
  futex(mine.posted(), FUTEX_WAKE, INT_MAX, nullptr);
  incoming.push_back({number, collective, std::move(received), Clock::time_point(), false});
  ++posted;
  return number;
}

void HostReduce::collectPosted(std::optional<uint32_t> upTo,
                               Clock::time_point deadline,
                               std::chrono::milliseconds timeout) {
  for (Incoming &entry : incoming) {
    if (entry.done)
      continue;
    // Exchanges are collected in the order they were posted, so `collected`
    // tells a peer which of its slots are free again.
    bool wait = upTo && int32_t(*upTo - entry.number) >= 0;
    uint32_t which = entry.number % kExchangeSlots;
    for (size_t m = 0; m < segments.size(); ++m) {
      if (int64_t(m) == index)
        continue;
      std::atomic<uint32_t> *theirs = segments[m]->posted();
      if (wait)
        awaitCounter(m, theirs, entry.number + 1, deadline, timeout, entry.collective,
                     nullptr);
      else if (int32_t(theirs->load(std::memory_order_acquire) - (entry.number + 1)) < 0)
        return;
    }
    size_t chunkBytes = entry.received.nbytes() / segments.size();
    char *out = static_cast<char *>(entry.received.data_ptr());
    int64_t last = 0;
    for (size_t m = 0; m < segments.size(); ++m) {
      if (int64_t(m) == index)
        continue;
      std::memcpy(out + m * chunkBytes,
                  segments[m]->exchangeSlot(which) + size_t(index) * chunkBytes, chunkBytes);
      last = std::max(last, segments[m]->stamp(which)->load(std::memory_order_relaxed));
    }
    entry.lastPosted = Clock::time_point(Clock::duration(last));
    entry.done = true;
    Segment &mine = *segments[index];
    mine.collected()->store(++collected, std::memory_order_release);
    futex(mine.collected(), FUTEX_WAKE, INT_MAX, nullptr);
  }
}

Clock::time_point HostReduce::collectExchange(uint32_t number,
                                              std::chrono::milliseconds timeout) {
  collectPosted(number, Clock::now() + timeout, timeout);
  for (auto it = incoming.begin(); it != incoming.end(); ++it)
    if (it->number == number) {
      Clock::time_point last = it->lastPosted;
      incoming.erase(it);
      return last;
    }
  throw std::logic_error("collectExchange: exchange " + std::to_string(number) +
                         " was never posted or is already collected");
}

} // namespace ditc::runtime
