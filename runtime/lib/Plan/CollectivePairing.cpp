//===- CollectivePairing.cpp - every rank's collectives meet their peers' -===//
//
// Each program's communications are traced once per step, with calls and
// overlapped regions expanded exactly as the executor issues them; then
// every group's members must issue the same sequence, and every send must
// meet its receive, per expert phase.
//
//===----------------------------------------------------------------------===//
#include "ditc/Runtime/Plan/CollectivePairing.h"
#include "ditc/Runtime/Plan/ProgramReader.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <map>
#include <set>

namespace ditc::runtime {

namespace {

using Shape = std::vector<int64_t>;

/// One communication a program issues, as its peers must mirror it.
struct Event {
  std::string what; // op name, plus the attributes the peers must share
  Shape shape;
  int64_t peer = -1; // send/recv: the other member's in-group index
  bool send = false;
  bool operator==(const Event &o) const {
    return what == o.what && shape == o.shape;
  }
};

/// The communications of one step of `program`, per axis tuple, in issue
/// order, with every call expanded (validateProgram bounded the expansion).
class Tracer {
public:
  explicit Tracer(const Program &program) : p(program) {}
  std::map<std::vector<std::string>, std::vector<Event>> trace() {
    walk(p.step);
    return std::move(events);
  }

private:
  void walk(const Function &fn) {
    for (size_t index = 0; index < fn.ops.size(); ++index) {
      const Op &op = fn.ops[index];
      if (const Op *attention = overlappedAttentionAt(fn, index)) {
        traceHeadGroups(fn, op, *attention);
        index += 3;
        continue;
      }
      if (const Op *reduce = overlappedLinearAt(fn, index)) {
        // One all_reduce per row chunk, as the executor issues them.
        Shape shape = fn.valueShapes[reduce->inputs[0]];
        RowCut cut = rowCutOf(shape);
        for (auto [first, count] :
             tileRowChunks(cut.items, cut.rowsPerItem, reduce->a.overlapRowChunks))
          events[reduce->axes].push_back(
              {reduce->name + " row chunk at " + std::to_string(first), {count, shape.back()}});
        ++index;
        continue;
      }
      if (op.kind == OpKind::Call) {
        walk(p.functions.at(op.callee));
        continue;
      }
      if (op.axes.empty() || op.kind == OpKind::AllSlice)
        continue; // local, or a slice that moves no data
      const Shape &x = fn.valueShapes[op.inputs[0]];
      Event e{op.name, x};
      switch (op.kind) {
      case OpKind::AllGather:
        e.what += " gather_axis " + std::to_string(op.a.axis);
        break;
      case OpKind::AllToAll:
        e.what += " split_axis " + std::to_string(op.a.splitAxis) +
                  " concat_axis " + std::to_string(op.a.concatAxis);
        break;
      case OpKind::LayerNorm:
      case OpKind::RmsNorm:
        e.what += " statistics, group_size " + std::to_string(op.a.groupSize);
        break;
      case OpKind::Attention: {
        // Ring hops carry the K/V image rows: k's shape less the text rows.
        Shape k = op.inputs.size() == 3 ? fn.valueShapes[op.inputs[1]] : x;
        e.what = "ring attention";
        e.shape = {k[0], k[1] - op.a.textTokens, k[2]};
        break;
      }
      case OpKind::Send:
      case OpKind::Recv:
        e.peer = op.a.peer;
        e.send = op.kind == OpKind::Send;
        e.what = "point-to-point";
        break;
      default:
        break;
      }
      events[op.axes].push_back(std::move(e));
    }
  }
  /// An overlapped Ulysses region issues its exchanges per head group, in
  /// headGroupSchedule's order, each a 1/G slice of the whole exchange.
  void traceHeadGroups(const Function &fn, const Op &in, const Op &attention) {
    int64_t groups = attention.a.overlapHeadGroups;
    const Op &out = fn.ops[&attention - fn.ops.data() + 1];
    for (HeadGroupExchange x : headGroupSchedule(groups)) {
      const Op &exchange = x.output ? out : in;
      Shape shape = fn.valueShapes[exchange.inputs[0]];
      shape.back() /= groups;
      events[exchange.axes].push_back(
          {exchange.name + " split_axis " + std::to_string(exchange.a.splitAxis) +
               " concat_axis " + std::to_string(exchange.a.concatAxis) +
               " head group " + std::to_string(x.group) + " of " +
               std::to_string(groups),
           shape});
    }
  }

  const Program &p;
  std::map<std::vector<std::string>, std::vector<Event>> events;
};

std::string describeEvent(const Event &e) {
  return "'" + e.what + "' of " + formatShape(e.shape);
}

} // namespace

void validateCollectivePairing(const Manifest &m,
                               const std::map<std::string, Program> &programs) {
  std::map<std::string, std::map<std::vector<std::string>, std::vector<Event>>> traces;
  for (const auto &[id, program] : programs)
    traces[id] = Tracer(program).trace();
  std::set<std::vector<std::string>> tuples;
  for (const auto &entry : traces)
    for (const auto &perTuple : entry.second)
      tuples.insert(perTuple.first);
  static const std::vector<Event> none;
  // Each rank runs `program` until the expert switch, then `program_2`.
  for (int phase = 0; phase < 2; ++phase) {
    auto programOf = [&](int64_t rank) -> const std::string & {
      const RankEntry &entry = m.ranks[rank];
      return phase == 1 && entry.program2 ? *entry.program2 : *entry.program;
    };
    auto eventsOf = [&](int64_t rank, const std::vector<std::string> &tuple)
        -> const std::vector<Event> & {
      const auto &byTuple = traces.at(programOf(rank));
      auto it = byTuple.find(tuple);
      return it == byTuple.end() ? none : it->second;
    };
    for (const std::vector<std::string> &tuple : tuples) {
      std::string axes;
      for (const std::string &a : tuple)
        axes += (axes.empty() ? "" : "+") + a;
      // Groups whose members run the same programs in the same order pair up
      // alike; each such signature is checked once.
      std::set<std::vector<std::string>> checked;
      for (const std::vector<int64_t> &group : m.groupsOver(tuple)) {
        std::vector<std::string> signature;
        for (int64_t rank : group)
          signature.push_back(programOf(rank));
        if (!checked.insert(signature).second)
          continue;
        auto where = [&](int64_t rank) {
          return "rank " + std::to_string(rank) + " (program '" +
                 escapeInvalidUtf8(programOf(rank)) + "')";
        };
        auto fail = [&](const std::string &problem) {
          throw BadInput(m.path + ": the programs do not pair up over " + axes +
                         " in the group of ranks " + [&] {
                           std::string list;
                           for (int64_t r : group)
                             list += (list.empty() ? "" : ", ") + std::to_string(r);
                           return "[" + list + "]";
                         }() + ": " + problem +
                         "; the ranks would wait on each other until --timeout");
        };
        // Group collectives: every member issues the same sequence.
        auto collectives = [&](int64_t rank) {
          std::vector<Event> out;
          for (const Event &e : eventsOf(rank, tuple))
            if (e.peer < 0)
              out.push_back(e);
          return out;
        };
        std::vector<Event> reference = collectives(group[0]);
        for (size_t i = 1; i < group.size(); ++i) {
          std::vector<Event> mine = collectives(group[i]);
          for (size_t k = 0; k < std::max(mine.size(), reference.size()); ++k) {
            if (k < mine.size() && k < reference.size() && mine[k] == reference[k])
              continue;
            fail("collective #" + std::to_string(k) + " is " +
                 (k < reference.size() ? describeEvent(reference[k]) : "nothing") +
                 " on " + where(group[0]) + " but " +
                 (k < mine.size() ? describeEvent(mine[k]) : "nothing") + " on " +
                 where(group[i]));
          }
        }
        // Point to point: sends from i to j meet recvs on j from i, in order.
        std::map<std::pair<size_t, size_t>, std::vector<Shape>> sentTo, receivedFrom;
        for (size_t i = 0; i < group.size(); ++i)
          for (const Event &e : eventsOf(group[i], tuple))
            if (e.peer >= 0)
              (e.send ? sentTo[{i, size_t(e.peer)}]
                      : receivedFrom[{size_t(e.peer), i}])
                  .push_back(e.shape);
        std::set<std::pair<size_t, size_t>> pairs;
        for (const auto &entry : sentTo)
          pairs.insert(entry.first);
        for (const auto &entry : receivedFrom)
          pairs.insert(entry.first);
        for (auto [i, j] : pairs) {
          const std::vector<Shape> &sent = sentTo[{i, j}];
          const std::vector<Shape> &received = receivedFrom[{i, j}];
          if (sent != received)
            fail(where(group[i]) + " sends " + std::to_string(sent.size()) +
                 " tensor(s) " +
                 (sent.empty() ? "" : "(first " + formatShape(sent[0]) + ") ") + "to " +
                 where(group[j]) + ", which receives " +
                 std::to_string(received.size()) +
                 (received.empty() ? "" : " (first " + formatShape(received[0]) + ")") +
                 " from it");
        }
      }
    }
  }
}

std::map<std::string, Program> loadEveryProgram(const Manifest &manifest) {
  std::map<std::string, Program> programs;
  for (const RankEntry &entry : manifest.ranks)
    for (const auto &id : {entry.program, entry.program2})
      if (id && !programs.count(*id))
        programs.emplace(*id, loadProgram(manifest, *id));
  validateCollectivePairing(manifest, programs);
  return programs;
}

} // namespace ditc::runtime
