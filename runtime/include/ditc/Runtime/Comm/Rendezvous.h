//===- Rendezvous.h - the ranks meet and agree on the plan ------*- C++ -*-===//
//
// Where the ranks meet: a TCPStore that rank 0 (or torchrun's agent) hosts,
// and the lockstep agreement every rank runs on it before any compute:
// every rank votes its plan hash and program hashes, reads every vote, and
// refuses to start unless all agree. Also the run's failure type and the
// pieces of its messages that the communication layer shares.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_COMM_RENDEZVOUS_H
#define DITC_RUNTIME_COMM_RENDEZVOUS_H

#include "ditc/Runtime/Plan/Manifest.h"

#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace c10d {
class Store;
}

namespace ditc::runtime {

/// A failure of the run itself (a peer died, a timeout, a disagreement):
/// exit code 1, as opposed to BadInput's 2.
class RunFailure : public std::runtime_error {
public:
  explicit RunFailure(const std::string &message) : std::runtime_error(message) {}
};

enum class Backend { Gloo, Nccl };

struct RendezvousOptions {
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  std::chrono::milliseconds timeout{300000};
  Backend backend = Backend::Gloo;
};

/// What a rank votes in the agreement: the plan and its own program(s).
struct Vote {
  std::string planHash;
  std::string programs; // "id:sha256[,id:sha256]" or "-" for an idle rank
};

/// The first line of an exception's message (torch appends a backtrace).
std::string firstLine(const std::exception &error);

/// "[0, 2, 4]": ranks as messages show them.
std::string rankList(const std::vector<int64_t> &ranks);

/// A TCPStore at addr:port under `prefix`, hosted here when `host`; the
/// one place the runtime opens a store (dit-run and dit-calibrate).
c10::intrusive_ptr<c10d::Store> openStore(const std::string &addr, int port, bool host,
                                          int64_t world, std::chrono::milliseconds timeout,
                                          const std::string &prefix);

/// Joins the rendezvous at options.masterAddr:masterPort as `rank` of
/// `world`: rank 0 hosts the store (or torchrun's agent does), the others
/// connect, retrying until the timeout, so start order does not matter.
/// Keys carry torchrun's restart count, so a restarted attempt never reads
/// the last one's votes. Throws RunFailure naming the address.
c10::intrusive_ptr<c10d::Store> joinRendezvous(int64_t rank, int64_t world,
                                               const RendezvousOptions &options);

/// The agreement of one instance, `rank`'s dp replica: publishes `vote`,
/// waits for the replica's ranks' votes (never another replica's), and
/// checks that all hold this plan and the programs the manifest gives
/// them. Replicas that exchange nothing may thus run different plans of
/// one world shape. Throws RunFailure naming the missing ranks or the
/// disagreement; nothing has been computed then.
void agreeOnPlan(const c10::intrusive_ptr<c10d::Store> &store, const Manifest &manifest,
                 int64_t rank, const Vote &vote, const RendezvousOptions &options);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_COMM_RENDEZVOUS_H
