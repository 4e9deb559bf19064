//===- Communicator.cpp - one rank's collectives, timed ------------------===//
#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Comm/HostReduce.h"
#include "ditc/Runtime/Comm/ProcessGroups.h"
#include "ditc/Runtime/Comm/Rendezvous.h"

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <set>

namespace ditc::runtime {

using Clock = std::chrono::steady_clock;

std::unique_ptr<Device> openRankDevice(int64_t rank, Backend backend) {
  try {
    return openDevice(backend == Backend::Nccl ? DeviceKind::Cuda : DeviceKind::Cpu, rank);
  } catch (const std::exception &error) {
    throw RunFailure("rank " + std::to_string(rank) + ": --backend " +
                     (backend == Backend::Nccl ? "nccl" : "gloo") + ": " + firstLine(error));
  }
}

std::string axisKey(const std::vector<std::string> &axes) {
  std::string key;
  for (const std::string &a : axes)
    key += (key.empty() ? "" : "+") + a;
  return key;
}

/// An asynchronous operation in flight: its pieces, a thread that waits for
/// them all and stamps when they completed (the end of the raw time), and
/// what turns the received buffer into the result.
struct Transfer {
  Group *group = nullptr;
  std::string what;
  std::vector<Wait> waits;
  at::Tensor received;
  std::function<at::Tensor(const at::Tensor &)> complete;
  /// A transfer through shared memory has no thread to wait for it: this
  /// collects it in the caller's thread and returns when its data was there.
  std::function<Clock::time_point()> collect;
  Clock::time_point started;
  Clock::time_point startReturned; // the caller left the start call
  std::future<Clock::time_point> done;
  /// Started and finished in one call (allGather, allToAll): the caller
  /// waited for all of it, so all of it is exposed.
  bool blocking = false;
};

Communicator::Communicator(const Manifest &manifest, int64_t rank,
                           const Vote &vote,
                           const std::vector<std::vector<std::string>> &axisTuples,
                           const RendezvousOptions &options,
                           std::unique_ptr<Device> device)
    : manifest(manifest), myRank(rank), options(options), deviceOfRank(std::move(device)) {
  // 1. The store (Rendezvous.h), kept for collectOnRankZero.
  c10::intrusive_ptr<c10d::Store> tcp = joinRendezvous(rank, manifest.worldSize(), options);
  store = std::shared_ptr<void>(new c10::intrusive_ptr<c10d::Store>(tcp), [](void *p) {
    delete static_cast<c10::intrusive_ptr<c10d::Store> *>(p);
  });
  // 2. The agreement on the plan, before any compute.
  agreeOnPlan(tcp, manifest, rank, vote, options);
  // 3. Process groups, in the canonical order of axisTuples (the same on
  //    every rank), then the output group. A rank builds only the groups it
  //    belongs to; gloo connects each group's members through the store.
  auto build = [&](const std::string &key, const std::vector<int64_t> &members) {
    return buildGroup(tcp, key, members, rank, options);
  };
  if (manifest.ranks[rank].program) {
    for (const auto &axes : axisTuples) {
      std::vector<int64_t> members = manifest.groupOf(rank, axes);
      std::string key = axisKey(axes);
      if (members.size() > 1 && !groups.count(key))
        groups[key] = build(key, members);
    }
  }
  // Each dp replica gathers its own outputs on its leader; the replicas'
  // groups are disjoint, so each rank builds at most its own.
  int64_t replica = manifest.ranks[rank].coords.at("dp");
  outputLeader = manifest.replicaLeader(replica);
  std::vector<int64_t> outputMembers = manifest.outputHolders(replica);
  outputMembers.push_back(outputLeader);
  std::sort(outputMembers.begin(), outputMembers.end());
  outputMembers.erase(std::unique(outputMembers.begin(), outputMembers.end()),
                      outputMembers.end());
  if (outputMembers.size() > 1 &&
      std::count(outputMembers.begin(), outputMembers.end(), rank))
    outputGroup = build("output.dp" + std::to_string(replica), outputMembers);
  // The replica's VAE ranks: a group over the bands when there are several,
  // and one over the bands and the leader for the transfers (the same
  // group when the leader decodes a band).
  std::vector<int64_t> decoders = manifest.vaeDecoders(replica);
  bool decodes = std::count(decoders.begin(), decoders.end(), rank) > 0;
  bool leaderDecodes = std::count(decoders.begin(), decoders.end(), outputLeader) > 0;
  if (decoders.size() > 1 && decodes)
    vaeBands = build("vae.dp" + std::to_string(replica), decoders);
  if (!leaderDecodes && (decodes || rank == outputLeader)) {
    std::vector<int64_t> members = decoders;
    members.push_back(outputLeader);
    vaeTransfers = build("vae-transfer.dp" + std::to_string(replica), members);
  }
  // The replica's text encoding: its encoding ranks' TP group, then the
  // group of every rank of the replica that receives their embeddings.
  std::vector<int64_t> encoders = manifest.textEncoders(replica);
  if (!encoders.empty()) {
    if (encoders.size() > 1 && std::count(encoders.begin(), encoders.end(), rank))
      textTp = build("text-tp.dp" + std::to_string(replica), encoders);
    // Encoders on ranks of their own broadcast into the replica from
    // outside it: the group holds them too.
    std::vector<int64_t> members;
    for (const RankEntry &entry : manifest.ranks)
      if ((entry.program && entry.coords.at("dp") == replica) ||
          std::count(encoders.begin(), encoders.end(), entry.rank))
        members.push_back(entry.rank);
    if (members.size() > 1 && std::count(members.begin(), members.end(), rank))
      textReplica = build("text.dp" + std::to_string(replica), members);
  }
}

Communicator::~Communicator() = default;

std::pair<int64_t, int64_t>
Communicator::position(const std::vector<std::string> &axes) const {
  auto it = groups.find(axisKey(axes));
  // Every non-trivial group the programs use was built; any other is this
  // rank alone.
  if (it == groups.end())
    return {1, 0};
  return {int64_t(it->second->members.size()), it->second->index};
}

Group &Communicator::groupFor(const std::vector<std::string> &axes) {
  auto it = groups.find(axisKey(axes));
  if (it == groups.end())
    throw RunFailure("rank " + std::to_string(myRank) + ": no process group over " +
                     axisKey(axes) + " was built; the plan uses it only here");
  return *it->second;
}

void Communicator::fail(const std::string &what, const Group &group,
                        const std::exception &error) {
  throw RunFailure("rank " + std::to_string(myRank) + ": " + what + " over " +
                   group.key + " (ranks " + rankList(group.members) +
                   ") failed: " + firstLine(error));
}

void CommLedger::add(const std::string &key, Clock::time_point from,
                     Clock::time_point to, double exposedSeconds) {
  exposed[key] += exposedSeconds;
  if (to > from)
    inFlight[key].emplace_back(from, to);
}

void CommLedger::addPeerWait(const std::string &key, double seconds) {
  peerWait[key] += seconds;
}

std::map<std::string, CommTime> CommLedger::take() {
  std::map<std::string, CommTime> out;
  for (const auto &[key, seconds] : exposed)
    out[key].exposedSeconds = seconds;
  for (const auto &[key, seconds] : peerWait)
    out[key].peerWaitSeconds = seconds;
  // Raw: the union of the intervals, so transfers queued or running
  // together (Ulysses head groups) count their common time once.
  for (auto &[key, intervals] : inFlight) {
    std::sort(intervals.begin(), intervals.end());
    Clock::time_point end = intervals.front().first;
    double raw = 0;
    for (const auto &[from, to] : intervals) {
      Clock::time_point begin = std::max(from, end);
      if (to > begin) {
        raw += std::chrono::duration<double>(to - begin).count();
        end = to;
      }
    }
    out[key].rawSeconds = raw;
  }
  exposed.clear();
  peerWait.clear();
  inFlight.clear();
  return out;
}

/// Times one blocking collective into the ledger: all of it is both raw
/// and exposed.
struct CommTimer {
  CommTimer(CommLedger &ledger, const std::string &key)
      : ledger(ledger), key(key), start(Clock::now()) {}
  ~CommTimer() {
    Clock::time_point end = Clock::now();
    ledger.add(key, start, end, std::chrono::duration<double>(end - start).count());
  }
  CommLedger &ledger;
  std::string key;
  Clock::time_point start;
};

// gloo in torch 1.13 has no bfloat16 kernels; such tensors travel as float32.
static at::ScalarType wireType(at::ScalarType dtype, Backend backend) {
  return backend == Backend::Gloo && dtype == at::kBFloat16 ? at::kFloat : dtype;
}

static at::Tensor wire(const at::Tensor &x, Backend backend) {
  return x.to(wireType(x.scalar_type(), backend)).contiguous();
}

at::Tensor Communicator::allReduce(const at::Tensor &x,
                                   const std::vector<std::string> &axes,
                                   const std::string &what) {
  Group &group = groupFor(axes);
  CommTimer timer(ledger, group.key);
  at::Tensor buffer = wire(x, options.backend);
  if (buffer.data_ptr() == x.data_ptr())
    buffer = buffer.clone();
  try {
    group.allReduced = true;
    if (HostReduce *local = hostReducer(group, buffer))
      local->sumInPlace(buffer, options.timeout);
    else
      group.allreduce(buffer)();
  } catch (const std::exception &error) {
    fail(what, group, error);
  }
  return buffer.to(x.scalar_type());
}

HostReduce *Communicator::hostReducer(Group &group, const at::Tensor &buffer) {
  // Ranks on one host sum through shared memory when their tensors are in
  // host memory; GPU tensors go through the backend (NCCL).
  if (!deviceOfRank->isHost() || !HostReduce::handles(buffer))
    return nullptr;
  if (!group.hostReduceDecided) {
    // Every member reaches this at the same all-reduce (the same plan, the
    // same dtype), so the set-up's collectives line up.
    group.hostReduceDecided = true;
    group.hostReduce = HostReduce::setUp(
        group.index, group.members,
        group.key + "-" + std::to_string(group.members.front()),
        HostReduce::gatherThrough(int64_t(group.members.size()),
                                  [&group](std::vector<at::Tensor> &out, at::Tensor &in) {
                                    group.allgather(out, in);
                                  }),
        group.hostReduceRefusal);
  }
  return group.hostReduce.get();
}

at::Tensor Communicator::allGather(const at::Tensor &x,
                                   const std::vector<std::string> &axes,
                                   int64_t dim, const std::string &what) {
  Group &group = groupFor(axes);
  // Between ranks of one host: the exchange in which every member sends
  // each peer the same chunk, its x (a stride-0 view), through shared
  // memory; gloo's loopback all_gather needs its own thread, which finds
  // no free core while the ranks compute. (A gather too large for a slot
  // goes through gloo's all_to_all of the same chunks.)
  at::Tensor wireProbe =
      at::empty({0}, x.options().dtype(wireType(x.scalar_type(), options.backend)));
  group.exchanged = true;
  HostReduce *local = nullptr;
  try {
    // The group's first exchange sets the shared memory up through gloo,
    // with the same peers: a member dying then fails it here.
    local = hostReducer(group, wireProbe);
  } catch (const std::exception &error) {
    fail(what, group, error);
  }
  if (local) {
    std::vector<int64_t> repeated = x.sizes().vec();
    repeated.insert(repeated.begin(), int64_t(group.members.size()));
    return finishBlocking(startExchange(group, x.unsqueeze(0).expand(repeated), dim,
                                        x.scalar_type(), "all_gather", what));
  }
  CommTimer timer(ledger, group.key);
  at::Tensor in = wire(x, options.backend);
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < group.members.size(); ++i)
    out.push_back(at::empty_like(in));
  try {
    group.allgather(out, in);
  } catch (const std::exception &error) {
    fail(what, group, error);
  }
  return at::cat(out, dim).to(x.scalar_type());
}

static std::unique_ptr<Transfer> newTransfer(Group &group, std::string what);

/// An all_to_all exchanges equal chunks of dim 0: `x` viewed with the chunk
/// index first, [n, ...chunk] (splitting a dimension in two is always a
/// view, whatever strides x has: a head group's slice is not contiguous).
static at::Tensor chunksFirst(const at::Tensor &x, int64_t n, int64_t splitDim) {
  std::vector<int64_t> shape = x.sizes().vec();
  shape[size_t(splitDim)] /= n;
  shape.insert(shape.begin() + splitDim, n);
  return x.view(shape).movedim(splitDim, 0);
}

/// What lays the received chunks [n, ...chunk] along concatDim in member
/// order, in x's dtype.
static std::function<at::Tensor(const at::Tensor &)>
concatenateChunks(int64_t concatDim, at::ScalarType dtype) {
  return [concatDim, dtype](const at::Tensor &out) {
    return at::cat(out.unbind(0), concatDim).to(dtype);
  };
}

int Communicator::startExchange(Group &group, const at::Tensor &chunks, int64_t concatDim,
                                at::ScalarType dtype, const char *collective,
                                const std::string &what) {
  std::unique_ptr<Transfer> transfer = newTransfer(group, what);
  transfer->received = at::empty(
      chunks.sizes(), chunks.options().dtype(wireType(dtype, options.backend)));
  transfer->complete = concatenateChunks(concatDim, dtype);
  try {
    group.exchanged = true;
    HostReduce *local = hostReducer(group, transfer->received);
    if (local && local->exchangeFits(transfer->received)) {
      // Copied straight from the chunks' strides into this rank's slot;
      // collected in finish, in this thread.
      uint32_t number =
          local->postExchange(chunks, transfer->received, options.timeout, collective);
      transfer->collect = [local, number, timeout = options.timeout] {
        return local->collectExchange(number, timeout);
      };
    } else {
      // One copy into the wire's dtype, laid out as alltoall_base sends it.
      at::Tensor in = at::empty_like(transfer->received);
      in.copy_(chunks);
      transfer->waits.push_back(group.alltoall(transfer->received, in));
    }
  } catch (const std::exception &error) {
    fail(what, group, error);
  }
  return start(std::move(transfer));
}

at::Tensor Communicator::allToAll(const at::Tensor &x,
                                  const std::vector<std::string> &axes,
                                  int64_t splitDim, int64_t concatDim,
                                  const std::string &what) {
  Group &group = groupFor(axes);
  return finishBlocking(startExchange(group, chunksFirst(x, int64_t(group.members.size()), splitDim),
                                      concatDim, x.scalar_type(), "all_to_all", what));
}

void Communicator::send(const at::Tensor &x, const std::vector<std::string> &axes,
                        int64_t destinationIndex, const std::string &what) {
  Group &group = groupFor(axes);
  CommTimer timer(ledger, group.key);
  at::Tensor buffer = wire(x, options.backend);
  try {
    group.send(buffer, destinationIndex, 0)();
  } catch (const std::exception &error) {
    fail(what + " to rank " + std::to_string(group.members[destinationIndex]), group,
         error);
  }
}

at::Tensor Communicator::recv(const std::vector<int64_t> &shape,
                              at::ScalarType dtype,
                              const std::vector<std::string> &axes,
                              int64_t sourceIndex, const std::string &what) {
  Group &group = groupFor(axes);
  CommTimer timer(ledger, group.key);
  at::Tensor buffer = at::empty(
      shape, at::TensorOptions(wireType(dtype, options.backend)).device(device()));
  try {
    group.recv(buffer, sourceIndex, 0)();
  } catch (const std::exception &error) {
    fail(what + " from rank " + std::to_string(group.members[sourceIndex]), group,
         error);
  }
  return buffer.to(dtype);
}

//===----------------------------------------------------------------------===//
// Asynchronous operations
//===----------------------------------------------------------------------===//

/// A transfer over `group` starting now.
static std::unique_ptr<Transfer> newTransfer(Group &group, std::string what) {
  auto transfer = std::make_unique<Transfer>();
  transfer->started = Clock::now();
  transfer->group = &group;
  transfer->what = std::move(what);
  return transfer;
}

int Communicator::start(std::unique_ptr<Transfer> transfer) {
  // A thread per transfer waits for its pieces and stamps their completion,
  // so the raw time ends when the data arrived, not when the caller came
  // back for it. Its failure surfaces in finish. Not one shared waiting
  // thread: it would wait in start order, so a send's finish could block
  // behind a receive whose data the peer sends only after this rank goes
  // on (a pipeline stage's next micro-batch), a deadlock.
  if (transfer->collect) {
    // Collected by finish itself (a shared-memory all_to_all).
  } else if (transfer->waits.empty()) {
    // Complete already (a shared-memory all-reduce): nothing to wait for.
    std::promise<Clock::time_point> completed;
    completed.set_value(Clock::now());
    transfer->done = completed.get_future();
  } else {
    transfer->done = std::async(std::launch::async, [waits = transfer->waits]() {
      for (const Wait &wait : waits)
        wait();
      return Clock::now();
    });
  }
  transfer->startReturned = Clock::now();
  int handle = nextHandle++;
  pending[handle] = std::move(transfer);
  return handle;
}

at::Tensor Communicator::finish(std::unique_ptr<Transfer> transfer) {
  Clock::time_point waitStart = Clock::now();
  Clock::time_point completed;
  try {
    completed = transfer->collect ? transfer->collect() : transfer->done.get();
  } catch (const std::exception &error) {
    fail(transfer->what, *transfer->group, error);
  }
  at::Tensor result;
  if (transfer->received.defined())
    result = transfer->complete ? transfer->complete(transfer->received)
                                : transfer->received;
  Clock::time_point end = Clock::now();
  const std::string &key = transfer->group->key;
  if (transfer->blocking) {
    ledger.add(key, transfer->started, end,
               std::chrono::duration<double>(end - transfer->started).count());
    return result;
  }
  // In flight from the start until the data arrived, and while the caller
  // assembles the result after its wait.
  // The caller's time inside start is in flight too: a small transfer can
  // complete before the thread that stamps it is even launched, and the raw
  // time must still cover every exposed moment.
  completed = std::max(completed, transfer->startReturned);
  ledger.add(key, transfer->started, completed,
             std::chrono::duration<double>(transfer->startReturned -
                                           transfer->started)
                     .count() +
                 std::chrono::duration<double>(end - waitStart).count());
  ledger.add(key, std::max(waitStart, completed), end, 0);
  return result;
}

int Communicator::startShift(const at::Tensor &x,
                             const std::vector<std::string> &axes,
                             const std::string &what) {
  Group &group = groupFor(axes);
  std::unique_ptr<Transfer> transfer = newTransfer(group, what + " (ring shift)");
  int64_t n = int64_t(group.members.size());
  at::Tensor sent = wire(x, options.backend);
  transfer->received = at::empty_like(sent);
  if (sent.scalar_type() != x.scalar_type())
    transfer->complete = [dtype = x.scalar_type()](const at::Tensor &t) {
      return t.to(dtype);
    };
  try {
    // Tag 1 keeps the shift apart from pipeline sends on the same pair.
    transfer->waits.push_back(
        group.recv(transfer->received, (group.index + n - 1) % n, 1));
    transfer->waits.push_back(group.send(sent, (group.index + 1) % n, 1));
  } catch (const std::exception &error) {
    fail(transfer->what, group, error);
  }
  return start(std::move(transfer));
}

at::Tensor Communicator::finishShift(int handle) { return finishTransfer(handle); }

int Communicator::startSend(const at::Tensor &x, const std::vector<std::string> &axes,
                            int64_t destinationIndex, const std::string &what) {
  Group &group = groupFor(axes);
  std::unique_ptr<Transfer> transfer = newTransfer(
      group, what + " to rank " + std::to_string(group.members[destinationIndex]));
  at::Tensor buffer = wire(x, options.backend);
  try {
    transfer->waits.push_back(group.send(buffer, destinationIndex, 0));
  } catch (const std::exception &error) {
    fail(transfer->what, group, error);
  }
  return start(std::move(transfer));
}

int Communicator::startRecv(const std::vector<int64_t> &shape, at::ScalarType dtype,
                            const std::vector<std::string> &axes,
                            int64_t sourceIndex, const std::string &what) {
  Group &group = groupFor(axes);
  std::unique_ptr<Transfer> transfer = newTransfer(
      group, what + " from rank " + std::to_string(group.members[sourceIndex]));
  transfer->received = at::empty(
      shape, at::TensorOptions(wireType(dtype, options.backend)).device(device()));
  transfer->complete = [dtype](const at::Tensor &t) { return t.to(dtype); };
  try {
    transfer->waits.push_back(group.recv(transfer->received, sourceIndex, 0));
  } catch (const std::exception &error) {
    fail(transfer->what, group, error);
  }
  return start(std::move(transfer));
}

int Communicator::startAllToAll(const at::Tensor &x,
                                const std::vector<std::string> &axes,
                                int64_t splitDim, int64_t concatDim,
                                const std::string &what) {
  Group &group = groupFor(axes);
  return startExchange(group, chunksFirst(x, int64_t(group.members.size()), splitDim),
                       concatDim, x.scalar_type(), "all_to_all", what);
}

int Communicator::startAllReduce(const at::Tensor &x,
                                 const std::vector<std::string> &axes,
                                 const std::string &what) {
  Group &group = groupFor(axes);
  std::unique_ptr<Transfer> transfer = newTransfer(group, what);
  at::Tensor buffer = wire(x, options.backend);
  if (buffer.data_ptr() == x.data_ptr())
    buffer = buffer.clone();
  transfer->received = buffer;
  if (buffer.scalar_type() != x.scalar_type())
    transfer->complete = [dtype = x.scalar_type()](const at::Tensor &t) {
      return t.to(dtype);
    };
  try {
    // Through shared memory the members sum as they arrive: the transfer
    // is complete when the start returns.
    group.allReduced = true;
    if (HostReduce *local = hostReducer(group, buffer))
      local->sumInPlace(buffer, options.timeout);
    else
      transfer->waits.push_back(group.allreduce(buffer));
  } catch (const std::exception &error) {
    fail(what, group, error);
  }
  return start(std::move(transfer));
}

at::Tensor Communicator::finishBlocking(int handle) {
  auto it = pending.find(handle);
  if (it != pending.end())
    it->second->blocking = true;
  return finishTransfer(handle);
}

at::Tensor Communicator::finishTransfer(int handle) {
  auto it = pending.find(handle);
  if (it == pending.end())
    throw std::logic_error("finishTransfer: handle " + std::to_string(handle) +
                           " was never started or is already finished");
  std::unique_ptr<Transfer> transfer = std::move(it->second);
  pending.erase(it);
  return finish(std::move(transfer));
}

std::vector<at::Tensor>
Communicator::gatherOutput(const at::Tensor &myBlock,
                           const std::vector<int64_t> &shape) {
  std::vector<int64_t> holders =
      manifest.outputHolders(manifest.ranks[myRank].coords.at("dp"));
  std::vector<at::Tensor> blocks;
  if (!outputGroup) {
    // The leader holds every block itself (one block), or this rank has
    // nothing to send.
    if (myRank == outputLeader)
      blocks.push_back(myBlock);
    return blocks;
  }
  auto indexOf = [&](int64_t rank) {
    return std::find(outputGroup->members.begin(), outputGroup->members.end(), rank) -
           outputGroup->members.begin();
  };
  try {
    if (myRank == outputLeader) {
      for (int64_t holder : holders) {
        if (holder == outputLeader) {
          blocks.push_back(myBlock);
          continue;
        }
        at::Tensor buffer =
            at::empty(shape, at::TensorOptions(at::kFloat).device(device()));
        outputGroup->recv(buffer, indexOf(holder), 2)();
        blocks.push_back(buffer);
      }
    } else if (std::count(holders.begin(), holders.end(), myRank)) {
      at::Tensor buffer = myBlock.to(at::kFloat).contiguous();
      outputGroup->send(buffer, indexOf(outputLeader), 2)();
    }
  } catch (const std::exception &error) {
    fail("gathering the final latents on rank " + std::to_string(outputLeader),
         *outputGroup, error);
  }
  return blocks;
}

std::vector<std::vector<int64_t>>
Communicator::collectOnRankZero(const std::string &name,
                                const std::vector<int64_t> &values) {
  auto &tcp = *static_cast<c10::intrusive_ptr<c10d::Store> *>(store.get());
  std::string text;
  for (int64_t v : values)
    text += (text.empty() ? "" : ",") + std::to_string(v);
  std::vector<std::vector<int64_t>> all;
  try {
    tcp->set("stats/" + name + "/" + std::to_string(myRank),
             std::vector<uint8_t>(text.begin(), text.end()));
    if (myRank != 0)
      return all;
    std::vector<std::string> keys;
    for (int64_t r = 0; r < manifest.worldSize(); ++r)
      keys.push_back("stats/" + name + "/" + std::to_string(r));
    tcp->wait(keys, options.timeout);
    for (const std::string &key : keys) {
      std::vector<uint8_t> bytes = tcp->get(key);
      std::string theirs(bytes.begin(), bytes.end());
      std::vector<int64_t> parsed;
      for (size_t at = 0; at < theirs.size();) {
        size_t comma = std::min(theirs.find(',', at), theirs.size());
        parsed.push_back(std::stoll(theirs.substr(at, comma - at)));
        at = comma + 1;
      }
      all.push_back(parsed);
    }
  } catch (const std::exception &error) {
    throw RunFailure("rank " + std::to_string(myRank) + ": collecting every rank's " +
                     name + " through the store failed: " + firstLine(error));
  }
  return all;
}

void Communicator::waitForEveryRank(const std::string &name) {
  auto &tcp = *static_cast<c10::intrusive_ptr<c10d::Store> *>(store.get());
  std::vector<std::string> done, seen;
  for (int64_t r = 0; r < manifest.worldSize(); ++r) {
    done.push_back(name + "/done/" + std::to_string(r));
    seen.push_back(name + "/seen/" + std::to_string(r));
  }
  try {
    tcp->set(done[myRank], std::vector<uint8_t>{1});
    tcp->wait(done, options.timeout);
    // Rank 0 hosts the store: it leaves only after every rank has seen
    // every other's mark, so no rank's wait meets a store that is gone.
    tcp->set(seen[myRank], std::vector<uint8_t>{1});
    if (myRank == 0)
      tcp->wait(seen, options.timeout);
  } catch (const std::exception &error) {
    std::vector<int64_t> missing;
    try {
      for (int64_t r = 0; r < manifest.worldSize(); ++r)
        if (!tcp->check({done[r]}))
          missing.push_back(r);
    } catch (const std::exception &) {
    }
    throw RunFailure("rank " + std::to_string(myRank) + ": waiting for every rank to " +
                     name + " failed" +
                     (missing.empty() ? "" : " (ranks " + rankList(missing) + " did not)") +
                     ": " + firstLine(error));
  }
}

std::map<std::string, CommTime> Communicator::takeCommTimes() {
  // A group's shared-memory segments serve only its own collectives, so
  // everything their member waited for since the last take is the group's.
  for (const auto &[key, group] : groups)
    if (group->hostReduce)
      if (double seconds = group->hostReduce->takePeerWaitSeconds(); seconds > 0)
        ledger.addPeerWait(key, seconds);
  return ledger.take();
}

std::map<std::string, std::string>
Communicator::hostTransports(bool allReduce) const {
  std::map<std::string, std::string> transports;
  for (const auto &[key, group] : groups)
    if (group->hostReduceDecided && (allReduce ? group->allReduced : group->exchanged))
      transports[key] = group->hostReduce ? "shared memory"
                                          : "gloo: " + group->hostReduceRefusal;
  return transports;
}

} // namespace ditc::runtime
