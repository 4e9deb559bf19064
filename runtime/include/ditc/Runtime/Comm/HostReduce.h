//===- HostReduce.h - all-reduce through shared memory on one host -*- C++ -*-===//
//
// gloo reduces through TCP on loopback, which on a CPU host costs more than
// the sum itself: each message crosses the kernel twice and needs gloo's
// own thread, which finds no free core while the ranks compute. Ranks that
// share a host can sum through memory they all map instead. HostReduce is
// that path: every member maps every member's segment, copies its tensor
// in piece by piece, sums its own slice of each piece in member order, and
// copies the whole sum back out, with two barriers per piece on counters in
// the segments. The sum of an element is the same float operations in the
// same order however the tensor is cut, so a tensor reduced whole or in
// row chunks gives the same bytes.
//
// The same segments carry all_to_all exchanges in two phases, so that one
// can travel while the ranks compute (Ulysses' head groups): a member posts
// its chunks into the next of its exchange slots and goes on; it collects
// each peer's chunk for it once that peer has posted. A slot is reused only
// after every peer has collected it, and a member that waits for anything
// first collects whatever its peers have posted, so no two members can wait
// on each other.
//
// Whether a group uses it is decided by all its members together, over the
// group's own gloo collectives: all on one host (hostname, boot id and
// mount namespace), none refusing it (DITC_HOST_REDUCE=0), every segment
// created and mapped. Otherwise every member keeps gloo.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_HOSTREDUCE_H
#define DITC_RUNTIME_HOSTREDUCE_H

#include <ATen/ATen.h>

#include <chrono>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ditc::runtime {

class HostReduce {
public:
  /// All-gathers `mine` (the same length on every member) over the group,
  /// in member order: a collective of the group's own backend.
  using AllGather = std::function<std::vector<int64_t>(const std::vector<int64_t> &)>;

  /// The AllGather of a c10d-style group of `members`: `gather(outputs,
  /// input)` fills `outputs`, one tensor per member shaped like `input`,
  /// with every member's input.
  static AllGather
  gatherThrough(int64_t members,
                std::function<void(std::vector<at::Tensor> &, at::Tensor &)> gather);

  /// A collective of the group: returns the reducer on every member, or
  /// nullptr on every member, with the reason in `why`. `ranks` are the
  /// members' ranks, in member order, for messages; `tag` names the group
  /// in the segments' names.
  static std::unique_ptr<HostReduce> setUp(int64_t index,
                                           const std::vector<int64_t> &ranks,
                                           const std::string &tag,
                                           const AllGather &allGather,
                                           std::string &why);
  ~HostReduce();

  /// float32 and float64 contiguous CPU tensors: everything else goes
  /// through the backend.
  static bool handles(const at::Tensor &x);

  /// Replaces `x` with the sum of every member's `x`. Throws
  /// std::runtime_error when a member has died or the wait outlived
  /// `timeout`, naming its rank and process.
  void sumInPlace(at::Tensor &x, std::chrono::milliseconds timeout);

  /// Whether an exchange of `chunks` ([members, ...] on every member, the
  /// same shape and dtype) fits an exchange slot; larger ones go through
  /// the backend (every member decides alike, from the same shape).
  bool exchangeFits(const at::Tensor &chunks) const;
  /// Starts an all_to_all: copies the peers' rows of `chunks` (any
  /// strides, float32 or float64 once in `received`'s dtype) into this
  /// member's next exchange slot, its own row straight into `received`,
  /// and posts it. `received`, contiguous and shaped like `chunks`,
  /// gets chunk `index` of member m's chunks at row m when the exchange is
  /// collected. Returns the exchange's number. Throws as sumInPlace does,
  /// naming `collective` (an all_gather is the exchange whose chunks are
  /// one tensor repeated, a stride-0 view).
  uint32_t postExchange(const at::Tensor &chunks, at::Tensor received,
                        std::chrono::milliseconds timeout,
                        const char *collective = "all_to_all");
  /// Waits until every member has posted exchange `number` and fills its
  /// `received` (collecting the earlier ones first). Returns when the last
  /// member posted it: the moment its data was there to read.
  std::chrono::steady_clock::time_point collectExchange(uint32_t number,
                                                        std::chrono::milliseconds timeout);

  /// Seconds this member has spent, since the last call, waiting for a
  /// peer to move a counter (arrive at a barrier, post an exchange, free a
  /// slot), not counting the work it did meanwhile: the part of a
  /// collective's exposed time that is a slower peer's lateness. Resets.
  double takePeerWaitSeconds() { return std::exchange(peerWait, 0.0); }

  struct Segment;

private:
  HostReduce(int64_t index, std::vector<int64_t> ranks, std::vector<int64_t> pids);
  std::string describe(size_t member) const;
  void barrier(std::chrono::steady_clock::time_point deadline,
               std::chrono::milliseconds timeout);
  /// Waits until member `member`'s counter `word` reaches `target`, calling
  /// `meanwhile` between looks; names the member when it exits or the wait
  /// passes `deadline` during `collective`.
  void awaitCounter(size_t member, std::atomic<uint32_t> *word, uint32_t target,
                    std::chrono::steady_clock::time_point deadline,
                    std::chrono::milliseconds timeout, const char *collective,
                    const std::function<void()> &meanwhile);
  /// Collects, in order, the exchanges every peer has posted; with `upTo`,
  /// waits for each one up to and including it.
  void collectPosted(std::optional<uint32_t> upTo,
                     std::chrono::steady_clock::time_point deadline,
                     std::chrono::milliseconds timeout);
  /// Sums this member's slice of the piece of `count` elements in `slot`.
  template <typename T> void sumSlice(int64_t count, int slot);

  int64_t index;
  std::vector<int64_t> ranks, pids;
  std::vector<std::unique_ptr<Segment>> segments; // member order; ours at index
  uint32_t generation = 0;                        // barriers passed
  uint64_t pieces = 0;                            // pieces summed: picks the slot
  /// Exchanges this member has posted and has not collected yet, oldest
  /// first; `collected` counts the ones before them.
  struct Incoming {
    uint32_t number;
    const char *collective; // for messages
    at::Tensor received;
    std::chrono::steady_clock::time_point lastPosted;
    bool done = false;
  };
  std::deque<Incoming> incoming;
  uint32_t posted = 0, collected = 0;
  double peerWait = 0;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_HOSTREDUCE_H
