//===- Rendezvous.cpp - the ranks meet and agree on the plan --------------===//
#include "ditc/Runtime/Comm/Rendezvous.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>

namespace ditc::runtime {

/// The first line of a c10 error: torch appends a C++ backtrace.
std::string firstLine(const std::exception &error) {
  std::string text = error.what();
  return text.substr(0, text.find('\n'));
}

std::string rankList(const std::vector<int64_t> &ranks) {
  std::string text = "[";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text + "]";
}

static std::string toString(const std::vector<uint8_t> &bytes) {
  return std::string(bytes.begin(), bytes.end());
}

static std::string seconds(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", ms.count() / 1000.0);
  return text;
}

/// Whether `rank` hosts the store: rank 0, unless torchrun's agent already
/// hosts one at MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE).
static bool hostsStore(int64_t rank) {
  const char *agentStore = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  return rank == 0 && !(agentStore && std::string(agentStore) == "True");
}

c10::intrusive_ptr<c10d::Store> openStore(const std::string &addr, int port, bool host,
                                          int64_t world, std::chrono::milliseconds timeout,
                                          const std::string &prefix) {
  c10d::TCPStoreOptions storeOptions;
  storeOptions.port = uint16_t(port);
  storeOptions.isServer = host;
  storeOptions.numWorkers = size_t(world);
  storeOptions.waitWorkers = false;
  storeOptions.timeout = timeout;
  return c10::make_intrusive<c10d::PrefixStore>(
      prefix, c10::make_intrusive<c10d::TCPStore>(addr, storeOptions));
}

c10::intrusive_ptr<c10d::Store> joinRendezvous(int64_t rank, int64_t world,
                                               const RendezvousOptions &options) {
  std::string where = options.masterAddr + ":" + std::to_string(options.masterPort);
  auto prefix = "rank " + std::to_string(rank) + ": ";
  // 1. The store. Rank 0 hosts it; the others connect, retrying until the
  //    timeout, so start order does not matter. Under torchrun the agent
  //    already hosts a store at MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE),
  //    so every rank connects to it, and keys carry the restart count so a
  //    restarted attempt never reads the last one's votes.
  const char *agentStore = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  bool host = hostsStore(rank);
  const char *restart = std::getenv("TORCHELASTIC_RESTART_COUNT");
  std::string attempt = restart && *restart ? restart : "0";
  c10::intrusive_ptr<c10d::Store> tcp;
  try {
    tcp = openStore(options.masterAddr, options.masterPort, host, world, options.timeout,
                    "ditc/" + attempt);
  } catch (const std::exception &error) {
    throw RunFailure(prefix + (host ? "cannot host the rendezvous at " + where
                                    : "could not reach the rendezvous at " + where +
                                          " within " + seconds(options.timeout) +
                                          (agentStore ? " (the torchrun agent hosts it)"
                                                      : " (rank 0 hosts it)")) +
                     ": " + firstLine(error));
  }
  return tcp;
}

void agreeOnPlan(const c10::intrusive_ptr<c10d::Store> &tcp, const Manifest &manifest,
                 int64_t rank, const Vote &vote, const RendezvousOptions &options) {
  int64_t world = manifest.worldSize();
  std::string where = options.masterAddr + ":" + std::to_string(options.masterPort);
  auto prefix = "rank " + std::to_string(rank) + ": ";
  bool host = hostsStore(rank);
  // The agreement, per instance (seed 000: every agreement is one
  // collective on one group per instance): a rank votes with the ranks of
  // its dp replica only, and never reads another replica's votes. Every
  // rank of the replica publishes its vote, then reads all of theirs. A
  // missing vote is a rank that never arrived.
  int64_t replica = manifest.ranks[size_t(rank)].coords.at("dp");
  std::vector<int64_t> members;
  for (int64_t r = 0; r < world; ++r)
    if (manifest.ranks[size_t(r)].coords.at("dp") == replica)
      members.push_back(r);
  std::string instance =
      int64_t(members.size()) == world
          ? std::string()
          : "dp replica " + std::to_string(replica) + " " + rankList(members);
  std::string ballot = vote.planHash + " " + vote.programs;
  auto voteKey = [](int64_t r) { return "vote/" + std::to_string(r); };
  std::vector<std::string> keys;
  for (int64_t r : members)
    keys.push_back(voteKey(r));
  try {
    tcp->set(voteKey(rank), std::vector<uint8_t>(ballot.begin(), ballot.end()));
    // The store's host gives up last, so the others can still ask it which
    // ranks are missing when their own wait ends.
    tcp->wait(keys, host ? options.timeout + std::chrono::seconds(2)
                         : options.timeout);
  } catch (const std::exception &error) {
    std::vector<int64_t> missing, present;
    try {
      for (int64_t r : members)
        (tcp->check({voteKey(r)}) ? present : missing).push_back(r);
      if (host) {
        // Keep the store up until every rank that came has read the
        // verdict (each acknowledges), however late its own wait ends.
        std::vector<std::string> acks;
        for (int64_t r : present)
          if (r != rank)
            acks.push_back("gave-up/" + std::to_string(r));
        if (!acks.empty())
          tcp->wait(acks, options.timeout);
      } else {
        tcp->set("gave-up/" + std::to_string(rank), std::vector<uint8_t>{1});
      }
    } catch (const std::exception &) {
    }
    if (!missing.empty())
      throw RunFailure(prefix + "rendezvous at " + where + " timed out after " +
                       seconds(options.timeout) + ": " +
                       (missing.size() > 1 ? "ranks " + rankList(missing)
                                           : "rank " + std::to_string(missing[0])) +
                       " of " + (instance.empty() ? std::to_string(world) : instance) +
                       " never arrived");
    throw RunFailure(prefix + "rendezvous at " + where + " failed: " + firstLine(error));
  }
  std::vector<std::string> ballots;
  for (int64_t r : members) {
    try {
      ballots.push_back(toString(tcp->get(voteKey(r))));
    } catch (const std::exception &error) {
      throw RunFailure(prefix + "reading rank " + std::to_string(r) +
                       "'s vote failed: " + firstLine(error));
    }
  }
  // Every rank has read its replica's votes before rank 0, the store's
  // host, may leave, so every rank reaches its verdict (this is the store's
  // lifetime, not a vote: no rank reads another's ballot here).
  std::vector<std::string> readKeys;
  for (int64_t r = 0; r < world; ++r)
    readKeys.push_back("read/" + std::to_string(r));
  try {
    tcp->set(readKeys[rank], std::vector<uint8_t>{1});
    if (rank == 0)
      tcp->wait(readKeys, options.timeout);
  } catch (const std::exception &error) {
    throw RunFailure(prefix + "rendezvous at " + where +
                     " failed after the votes: " + firstLine(error));
  }
  for (size_t i = 0; i < members.size(); ++i) {
    int64_t r = members[i];
    const std::string &theirs = ballots[i];
    std::string theirPlan = theirs.substr(0, theirs.find(' '));
    if (theirPlan != vote.planHash)
      throw RunFailure(prefix + "plan disagreement" +
                       (instance.empty() ? std::string() : " in " + instance) + ": rank " +
                       std::to_string(r) + " holds plan " + theirPlan.substr(0, 16) +
                       "... but rank " + std::to_string(rank) + " holds plan " +
                       vote.planHash.substr(0, 16) + "...; every rank" +
                       (instance.empty() ? "" : " of a replica") +
                       " must run the same plan; nothing was computed");
    // Same plan: each rank's program hashes must be the manifest's.
    std::string expected;
    const RankEntry &entry = manifest.ranks[r];
    for (const auto &id : {entry.program, entry.program2})
      if (id)
        expected += (expected.empty() ? "" : ",") + *id + ":" +
                    manifest.programEntry(*id).sha256;
    if (expected.empty())
      expected = "-";
    std::string theirPrograms = theirs.substr(theirs.find(' ') + 1);
    if (theirPrograms != expected)
      throw RunFailure(prefix + "plan disagreement: rank " + std::to_string(r) +
                       " runs programs " + theirPrograms + " but the plan gives it " +
                       expected + "; nothing was computed");
  }
}

} // namespace ditc::runtime
