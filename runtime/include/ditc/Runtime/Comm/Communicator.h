//===- Communicator.h - one rank's collectives, timed ----------*- C++ -*-===//
//
// One rank's view of the cluster: it joins the rendezvous and the lockstep
// agreement on the plan before any compute (Rendezvous.h), builds one c10d
// process group per non-trivial axis group the rank's programs use, in the
// same canonical order on every rank (ProcessGroups.h), and runs the
// collectives the plan names, each timed per axis and reported with the
// rank, the group and the op when it fails.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_COMMUNICATOR_H
#define DITC_RUNTIME_COMMUNICATOR_H

#include "ditc/Runtime/Device/Device.h"
#include "ditc/Runtime/Comm/Rendezvous.h"
#include "ditc/Runtime/Plan/Manifest.h"

#include <ATen/ATen.h>

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ditc::runtime {

class Group;
class HostReduce;
struct Transfer;

/// Communication time of one axis key: `rawSeconds` while some collective
/// of it was in flight (from its start until its transfer completed;
/// transfers in flight together count once), `exposedSeconds` the part the
/// caller spent inside the Communicator (a blocking collective's whole time;
/// for an asynchronous one, its start and its finish's wait). exposed <= raw
/// when transfers overlap compute; they are equal when nothing overlaps.
/// `peerWaitSeconds`, within the exposed time, is what a shared-memory
/// collective spent waiting for a slower member (HostReduce::
/// takePeerWaitSeconds); collectives through the backend report 0, as gloo and
/// NCCL do not say what of a wait was the peer's lateness.
struct CommTime {
  double rawSeconds = 0, exposedSeconds = 0, peerWaitSeconds = 0;
};

/// Collects CommTime per axis key from timed intervals.
class CommLedger {
public:
  using Clock = std::chrono::steady_clock;
  /// A transfer of `key` in flight over [from, to], of which the caller
  /// waited `exposedSeconds`.
  void add(const std::string &key, Clock::time_point from, Clock::time_point to,
           double exposedSeconds);
  /// Of `key`'s exposed time, `seconds` waited for a slower member.
  void addPeerWait(const std::string &key, double seconds);
  /// The times since the last call; resets.
  std::map<std::string, CommTime> take();

private:
  std::map<std::string, double> exposed, peerWait;
  std::map<std::string, std::vector<std::pair<Clock::time_point, Clock::time_point>>>
      inFlight;
};

/// The device a rank's tensors live on for `backend`: its GPU under NCCL,
/// the host under gloo. Throws RunFailure naming the rank when that GPU is
/// not there.
std::unique_ptr<Device> openRankDevice(int64_t rank, Backend backend);

class Communicator {
public:
  /// Joins the rendezvous, runs the agreement, and builds the process
  /// groups the rank's programs use. Throws RunFailure.
  Communicator(const Manifest &manifest, int64_t rank, const Vote &vote,
               const std::vector<std::vector<std::string>> &axisTuples,
               const RendezvousOptions &options, std::unique_ptr<Device> device);
  ~Communicator();

  int64_t rank() const { return myRank; }
  /// The size of this rank's group over `axes` and its index in it, from
  /// the groups already built: (1, 0) where the group is this rank alone.
  std::pair<int64_t, int64_t> position(const std::vector<std::string> &axes) const;
  /// The rank's device (Device/): the host under gloo, its GPU under NCCL.
  const Device &rankDevice() const { return *deviceOfRank; }
  at::Device device() const { return deviceOfRank->torchDevice(); }

  at::Tensor allReduce(const at::Tensor &x, const std::vector<std::string> &axes,
                       const std::string &what);
  at::Tensor allGather(const at::Tensor &x, const std::vector<std::string> &axes,
                       int64_t dim, const std::string &what);
  at::Tensor allToAll(const at::Tensor &x, const std::vector<std::string> &axes,
                      int64_t splitDim, int64_t concatDim, const std::string &what);
  void send(const at::Tensor &x, const std::vector<std::string> &axes,
            int64_t destinationIndex, const std::string &what);
  at::Tensor recv(const std::vector<int64_t> &shape, at::ScalarType dtype,
                  const std::vector<std::string> &axes, int64_t sourceIndex,
                  const std::string &what);

  /// Ring shift over `axes`: sends `x` to the next member and receives the
  /// previous member's tensor of the same shape. Returns at once; call
  /// finishShift to wait. Overlaps with compute.
  int startShift(const at::Tensor &x, const std::vector<std::string> &axes,
                 const std::string &what);
  at::Tensor finishShift(int handle);

  /// Asynchronous point-to-point over `axes`: each returns a handle at once;
  /// finishTransfer waits for it (failing as the blocking ops do) and
  /// returns the received tensor, or an undefined tensor for a send.
  int startSend(const at::Tensor &x, const std::vector<std::string> &axes,
                int64_t destinationIndex, const std::string &what);
  int startRecv(const std::vector<int64_t> &shape, at::ScalarType dtype,
                const std::vector<std::string> &axes, int64_t sourceIndex,
                const std::string &what);
  /// Asynchronous all_to_all, as allToAll; finishTransfer returns its result.
  /// Transfers of one group run in the order they were started.
  int startAllToAll(const at::Tensor &x, const std::vector<std::string> &axes,
                    int64_t splitDim, int64_t concatDim, const std::string &what);
  /// Asynchronous all_reduce, as allReduce; finishTransfer returns the sum.
  int startAllReduce(const at::Tensor &x, const std::vector<std::string> &axes,
                     const std::string &what);
  at::Tensor finishTransfer(int handle);
  /// finishTransfer for a transfer its caller started and waits for at
  /// once: its whole time counts as exposed (raw = exposed), as for the
  /// other blocking collectives.
  at::Tensor finishBlocking(int handle);

  /// The leader of this rank's dp replica (its lowest rank) receives every
  /// output holder's block of the replica and returns them in block order;
  /// holders send theirs. Other ranks return nothing.
  std::vector<at::Tensor> gatherOutput(const at::Tensor &myBlock,
                                       const std::vector<int64_t> &shape);

  /// The groups of this rank's replica's VAE decode (the plan's vae
  /// section): over its decoding ranks when there are several and this rank
  /// is one; for the leader's transfers, over them and the leader when the
  /// leader decodes none (else the band group). nullptr where not built.
  Group *vaeBandGroup() const { return vaeBands.get(); }
  Group *vaeTransferGroup() const {
    return vaeTransfers ? vaeTransfers.get() : vaeBands.get();
  }
  /// The groups of this rank's replica's text encoding (the plan's
  /// text_encoder section): over its encoding ranks when there are several
  /// (the encoders' TP all-reduces), and over every rank of the replica
  /// (the embeddings' broadcast from the first encoding rank). nullptr
  /// where not built: no section, or a group of one.
  Group *textEncoderTpGroup() const { return textTp.get(); }
  Group *textReplicaGroup() const { return textReplica.get(); }

  /// The lowest rank of this rank's replica: it gathers the outputs.
  int64_t replicaLeader() const { return outputLeader; }

  /// Every rank publishes `values` under `name` through the rendezvous
  /// store; rank 0 waits (up to --timeout) for every rank's and returns
  /// them in rank order. Other ranks return nothing. Every rank must call
  /// it, or rank 0 waits in vain.
  std::vector<std::vector<int64_t>> collectOnRankZero(const std::string &name,
                                                      const std::vector<int64_t> &values);

  /// Every rank marks `name` done through the rendezvous store and waits
  /// (up to --timeout) until every rank has: a rank commits its outputs
  /// only once no other rank can still fail. Throws RunFailure naming the
  /// ranks that never arrived.
  void waitForEveryRank(const std::string &name);

  /// Raw and exposed communication time per axis key ("tp",
  /// "ulysses+ring") since the last call; resets the counters.
  std::map<std::string, CommTime> takeCommTimes();

  /// How each of this rank's groups that has all-reduced (or, with false,
  /// all_to_all'd) does it: "shared memory" (HostReduce.h), or "gloo: " and
  /// why not, decided at the group's first all-reduce or all_to_all.
  /// An all_to_all too large for an exchange slot goes through gloo all
  /// the same.
  std::map<std::string, std::string> hostTransports(bool allReduce) const;

private:
  Group &groupFor(const std::vector<std::string> &axes);
  /// The group's shared-memory all-reduce for `buffer`, set up at its first
  /// use; nullptr when `buffer` goes through the backend.
  HostReduce *hostReducer(Group &group, const at::Tensor &buffer);
  /// Starts the exchange of `chunks` ([members, ...chunk], any strides)
  /// over `group`, member m getting chunk m, and laying what it receives
  /// along `concatDim` in `dtype`: through shared memory where the group
  /// has it and the exchange fits a slot, through the backend's all_to_all
  /// otherwise. An all_to_all's chunks are slices of its input; an
  /// all_gather's are its input repeated.
  int startExchange(Group &group, const at::Tensor &chunks, int64_t concatDim,
                    at::ScalarType dtype, const char *collective,
                    const std::string &what);
  [[noreturn]] void fail(const std::string &what, const Group &group,
                         const std::exception &error);

  const Manifest &manifest;
  int64_t myRank;
  RendezvousOptions options;
  std::unique_ptr<Device> deviceOfRank;
  std::shared_ptr<void> store; // c10d::Store, kept opaque for the header
  std::map<std::string, std::unique_ptr<Group>> groups;
  std::unique_ptr<Group> outputGroup;
  int64_t outputLeader = 0; // the rank that gathers this replica's outputs
  std::unique_ptr<Group> vaeBands, vaeTransfers;
  std::unique_ptr<Group> textTp, textReplica;
  int start(std::unique_ptr<Transfer> transfer);
  at::Tensor finish(std::unique_ptr<Transfer> transfer);

  CommLedger ledger;
  std::map<int, std::unique_ptr<Transfer>> pending;
  int nextHandle = 0;
};

/// The axis key of a group: names joined by '+', as per_step reports them.
std::string axisKey(const std::vector<std::string> &axes);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_COMMUNICATOR_H
