//===- Calibrate.cpp - time the runtime's kernels and gloo collectives ----===//
#include "ditc/Runtime/Driver/Calibrate.h"

#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Comm/Backends/GlooGroup.h"
#include "ditc/Runtime/Comm/HostReduce.h"
#include "ditc/Runtime/Exec/Kernels.h"
#include "ditc/Runtime/Driver/Runner.h"

#include <torch/csrc/distributed/c10d/Store.hpp>


#include <algorithm>
#include <cstdlib>
#include <functional>

namespace ditc::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// Work units per second of `fn` (which does `units` of work per call): one
/// warm-up call, then rounds of calls that each last at least
/// `secondsPerRound`; the median round, so one burst of load from another
/// process moves the figure less than a mean would.
double rate(const std::function<void()> &fn, double units, double secondsPerRound) {
  fn();
  std::vector<double> rates;
  for (int round = 0; round < 3; ++round) {
    int64_t calls = 0;
    Clock::time_point start = Clock::now();
    double elapsed = 0;
    do {
      fn();
      ++calls;
      elapsed = secondsSince(start);
    } while (elapsed < secondsPerRound);
    rates.push_back(double(calls) * units / elapsed);
  }
  return median(rates);
}

// A DiT block at width 1024 and 1024 tokens: the q/k/v/o projections, the
// feed-forward up (4x) and down projections, and 16 heads of 64.
constexpr int64_t kTokens = 1024, kWidth = 1024, kHidden = 4096, kHeads = 16;

/// The element-wise ops of one such block as the executor runs them, in
/// row blocks (Kernels.h) with the same ATen calls: two layer norms (the
/// statistics in float32, then the normalization) each with its
/// modulation, the q and k RMS norms and rotary embeddings, the tanh GELU
/// of the feed-forward, and the two gated residual adds and the cross
/// attention's plain one. Returns the output elements it wrote, the unit
/// the cost model counts element-wise work in (one per output element).
struct BlockElementwise {
  at::Tensor x, q, k, h, scale, shift, gate, weight, cos, sin, partner;

  explicit BlockElementwise(const at::TensorOptions &options) {
    x = at::randn({1, kTokens, kWidth}, options);
    q = at::randn({1, kTokens, kWidth}, options);
    k = at::randn({1, kTokens, kWidth}, options);
    h = at::randn({1, kTokens, kHidden}, options);
    scale = at::randn({1, 1, kWidth}, options);
    shift = at::randn({1, 1, kWidth}, options);
    gate = at::randn({1, 1, kWidth}, options);
    weight = at::randn({kWidth}, options);
    int64_t d = kWidth / kHeads;
    cos = at::randn({kTokens, 1, d}, options);
    sin = at::randn({kTokens, 1, d}, options);
    partner = at::arange(d, at::kLong).reshape({d / 2, 2}).flip(1).reshape({d});
  }

  double run() {
    auto shape = x.sizes();
    int64_t d = kWidth / kHeads;
    for (int i = 0; i < 2; ++i) {
      at::Tensor normed = rowBlocks(shape, x.options(), [&](const RowBlock &b, at::Tensor &out) {
        at::Tensor xg = b.of(x).to(at::kFloat);
        at::Tensor mean = xg.sum(-1, true) / double(kWidth);
        at::Tensor s2 = (xg * xg).sum(-1, true);
        out.copy_((xg - mean) / at::sqrt(s2 / double(kWidth) - mean * mean + 1e-6));
      });
      rowBlocks(shape, x.options(), [&](const RowBlock &b, at::Tensor &out) {
        at::addcmul_out(out, b.batchOf(shift), b.of(normed), b.batchOf(scale));
      });
    }
    for (const at::Tensor *t : {&q, &k}) {
      at::Tensor normed = rowBlocks(shape, x.options(), [&](const RowBlock &b, at::Tensor &out) {
        at::Tensor xg = b.of(*t).to(at::kFloat);
        out.copy_(xg / at::sqrt((xg * xg).sum(-1, true) / double(kWidth) + 1e-6) * weight);
      });
      rowBlocks(shape, x.options(), [&](const RowBlock &b, at::Tensor &out) {
        at::Tensor xh = b.of(normed).reshape({b.rows, kHeads, d});
        at::Tensor o = out.view({b.rows, kHeads, d});
        at::mul_out(o, xh, cos.narrow(0, b.row, b.rows));
        o.addcmul_(xh.index_select(-1, partner), sin.narrow(0, b.row, b.rows));
      });
    }
    rowBlocks(h.sizes(), h.options(), [&](const RowBlock &b, at::Tensor &out) {
      at::gelu_out(out, b.of(h), "tanh");
    });
    for (int i = 0; i < 2; ++i)
      rowBlocks(shape, x.options(), [&](const RowBlock &b, at::Tensor &out) {
        at::addcmul_out(out, b.of(x), b.batchOf(gate), b.of(q));
      });
    rowBlocks(shape, x.options(), [&](const RowBlock &b, at::Tensor &out) {
      at::add_out(out, b.of(x), b.of(k));
    });
    // 4 + 4 (norms and modulations, q/k norms and ropes) + 3 residual
    // adds at the width, and the GELU at the hidden width.
    return double(kTokens) * double(11 * kWidth + kHidden);
  }
};

} // namespace

ComputeRates measureComputeRates(int64_t threads, double secondsPerRound) {
  configureThreads(threads);
  at::manual_seed(0);
  auto options = at::TensorOptions().dtype(at::kFloat);
  at::Tensor x = at::randn({1, kTokens, kWidth}, options);
  at::Tensor h = at::randn({1, kTokens, kHidden}, options);
  at::Tensor wSquare = at::randn({kWidth, kWidth}, options);
  at::Tensor wUp = at::randn({kHidden, kWidth}, options);
  at::Tensor wDown = at::randn({kWidth, kHidden}, options);
  at::Tensor bias = at::randn({kWidth}, options);
  ComputeRates out;
  out.threads = threads;
  double gemmFlops = 2.0 * kTokens * kWidth * (kWidth + kHidden + kHidden);
  out.gemmFlopsPerSecond = rate(
      [&] {
        tiledLinear(x, wSquare, bias);
        tiledLinear(x, wUp, at::Tensor());
        tiledLinear(h, wDown, bias);
      },
      gemmFlops, secondsPerRound);
  at::Tensor q = at::randn({1, kTokens, kWidth}, options);
  at::Tensor k = at::randn({1, kTokens, kWidth}, options);
  at::Tensor v = at::randn({1, kTokens, kWidth}, options);
  // Scores and values: 4·B·H·Lq·Lk·d, as the cost model counts attention.
  double attentionFlops = 4.0 * kTokens * kTokens * kWidth;
  out.attentionFlopsPerSecond = rate(
      [&] { headAttention(q, k, v, kHeads, 0.125); }, attentionFlops,
      secondsPerRound);
  // A residual add over a [tokens, hidden] activation: two operands read,
  // one result written, as the cost model counts an elementwise op's bytes.
  at::Tensor a = at::randn({4, kTokens, kHidden}, options);
  at::Tensor b = at::randn({4, kTokens, kHidden}, options);
  at::Tensor c = at::empty_like(a);
  out.elementwiseBytesPerSecond = rate([&] { at::add_out(c, a, b); },
                                       3.0 * double(a.numel()) * 4,
                                       secondsPerRound);
  BlockElementwise block(options);
  double elements = block.run();
  out.elementwiseElementsPerSecond =
      rate([&] { block.run(); }, elements, secondsPerRound);
  return out;
}

std::vector<int64_t> calibrationMessageSizes() {
  return {4 << 10, 64 << 10, 512 << 10, 4 << 20};
}

std::string calibrationMethod() {
  return "one rank's GEMMs are runtime tiledLinear on a DiT block at width "
         "1024 and 1024 tokens (q/k/v/o 1024x1024, FFN 1024->4096->1024), "
         "attention is headAttention over 1024 tokens and 16 heads of 64, "
         "elementwise bandwidth is a float32 add over 16M elements, "
         "elementwise elements/s the element-wise ops of that block as the "
         "executor runs them (layer norms, modulations, q/k RMS norms and "
         "rotary embeddings, tanh GELU, residual adds); each the median of "
         "3 rounds after a warm-up. Collectives are dit-run's between local "
         "ranks started like dit-run --nproc: all_reduce and all_to_all in "
         "shared memory (HostReduce), the others gloo (one thread, loopback), each "
         "the median of its repetitions at 4 KiB, 64 KiB, 512 KiB and 4 MiB "
         "per rank; send_recv is half a ping-pong round trip. Skew: every "
         "rank computes the same tiledLinear chunk (128 and 1024 rows by "
         "1024x1024) 48 and 6 times, free-running and with a one-float "
         "shared-memory all_reduce after each chunk, in 5 rounds of one of "
         "each; the median free time, plus the median round's excess in "
         "lockstep";
}

namespace {

int64_t envInt(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    throw RunFailure(std::string("dit-calibrate rank: ") + name + " is not set");
  return std::atoll(text);
}

} // namespace

std::vector<int64_t> calibrationSkewRows() { return {128, 1024}; }

LocalRankTimings measureLocalRanks(const std::vector<int64_t> &sizes,
                                   std::chrono::milliseconds timeout) {
  int64_t rank = envInt("RANK"), world = envInt("WORLD_SIZE");
  const char *addr = std::getenv("MASTER_ADDR");
  int port = int(envInt("MASTER_PORT"));
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < world; ++r)
    ranks.push_back(r);
  std::unique_ptr<Group> pg;
  try {
    auto store = openStore(addr ? addr : "127.0.0.1", port, rank == 0, world, timeout,
                           "ditc-calibrate");
    // The group dit-run builds between the ranks of one host.
    pg = buildGlooGroup(store, "calibrate", ranks, rank, "127.0.0.1", timeout);
  } catch (const std::exception &error) {
    throw RunFailure("rank " + std::to_string(rank) +
                     ": building the gloo group failed: " + firstLine(error));
  }
  configureThreads(0);
  // all_reduce, all_gather and all_to_all as dit-run runs them between
  // ranks of one host: in shared memory, where the ranks agree to
  // (HostReduce.h).
  std::string refusal;
  std::unique_ptr<HostReduce> hostReduce;
  try {
    hostReduce = HostReduce::setUp(
        rank, ranks, "calibrate",
        HostReduce::gatherThrough(
            world,
            [&](std::vector<at::Tensor> &out, at::Tensor &in) { pg->allgather(out, in); }),
        refusal);
  } catch (const std::exception &error) {
    throw RunFailure("rank " + std::to_string(rank) +
                     ": setting up the shared-memory all_reduce failed: " +
                     firstLine(error));
  }
  // As dit-run sums between ranks of one host: in shared memory where the
  // ranks agreed to, else through gloo.
  auto allReduce = [&](at::Tensor &x) {
    if (hostReduce) {
      hostReduce->sumInPlace(x, timeout);
      return;
    }
    pg->allreduce(x)();
  };
  LocalRankTimings timings;
  std::vector<CollectiveSample> &samples = timings.collectives;
  auto time = [&](const std::string &kind, int64_t bytes,
                  const std::function<void()> &op) {
    // Every rank runs the same number of repetitions: fewer for large
    // messages, so each size costs about the same time.
    int reps = bytes >= (1 << 20) ? 15 : 41;
    std::vector<double> seconds;
    op(); // warm-up: connections and buffers
    for (int i = 0; i < reps; ++i) {
      Clock::time_point start = Clock::now();
      op();
      seconds.push_back(secondsSince(start));
    }
    if (rank == 0)
      samples.push_back({kind, world, bytes, median(seconds)});
  };
  try {
    for (int64_t bytes : sizes) {
      int64_t n = bytes / 4;
      at::Tensor x = at::ones({n}, at::kFloat);
      time("all_reduce", bytes, [&] { allReduce(x); });
      // all_gather: through shared memory, the exchange of x repeated to
      // every member (dit-run's Communicator::allGather); through gloo's
      // all_to_all of the same chunks when that does not fit a slot.
      at::Tensor gathered = at::empty({world, n}, at::kFloat);
      at::Tensor repeated = x.unsqueeze(0).expand({world, n});
      bool gatherShared = hostReduce && hostReduce->exchangeFits(gathered);
      at::Tensor repeatedCopy =
          hostReduce && !gatherShared ? repeated.contiguous() : at::Tensor();
      time("all_gather", bytes, [&] {
        if (gatherShared) {
          hostReduce->collectExchange(
              hostReduce->postExchange(repeated, gathered, timeout, "all_gather"),
              timeout);
          return;
        }
        if (hostReduce) {
          pg->alltoall(gathered, repeatedCopy)();
          return;
        }
        std::vector<at::Tensor> out;
        for (int64_t r = 0; r < world; ++r)
          out.push_back(at::empty({n}, at::kFloat));
        pg->allgather(out, x);
      });
      // all_to_all: the rank's whole buffer splits into `world` pieces.
      int64_t pieces = std::max<int64_t>(1, n / world) * world;
      at::Tensor a2aIn = at::ones({pieces}, at::kFloat);
      at::Tensor a2aOut = at::empty({pieces}, at::kFloat);
      at::Tensor a2aChunks = a2aIn.view({world, pieces / world});
      at::Tensor a2aReceived = a2aOut.view({world, pieces / world});
      bool a2aShared = hostReduce && hostReduce->exchangeFits(a2aReceived);
      time("all_to_all", bytes, [&] {
        if (a2aShared) {
          hostReduce->collectExchange(
              hostReduce->postExchange(a2aChunks, a2aReceived, timeout), timeout);
          return;
        }
        pg->alltoall(a2aOut, a2aIn)();
      });
      // Ring shift: each rank sends to the next and receives from the
      // previous at once, as ring attention's K/V hops do.
      at::Tensor incoming = at::empty({n}, at::kFloat);
      time("ring_shift", bytes, [&] {
        Wait sent = pg->send(x, (rank + 1) % world, 7);
        Wait got = pg->recv(incoming, (rank + world - 1) % world, 7);
        sent();
        got();
      });
      // Point to point: ranks 0 and 1 play ping-pong, the rest wait at the
      // barrier; one way is half the round trip.
      std::vector<double> trips;
      for (int i = 0; i < 32; ++i) {
        Clock::time_point start = Clock::now();
        if (rank == 0) {
          pg->send(x, 1, 9)();
          pg->recv(incoming, 1, 9)();
        } else if (rank == 1) {
          pg->recv(incoming, 0, 9)();
          pg->send(x, 0, 9)();
        }
        if (i > 1) // two warm-up trips
          trips.push_back(secondsSince(start) / 2);
      }
      pg->barrier();
      if (rank == 0)
        samples.push_back({"send_recv", world, bytes, median(trips)});
    }
    pg->barrier();
    // Skew: the barrier every blocking collective of a step amounts to.
    at::Tensor token = at::zeros({1}, at::kFloat);
    auto barrier = [&] { allReduce(token); };
    std::vector<double> idle;
    for (int i = 0; i < 41; ++i) {
      Clock::time_point start = Clock::now();
      barrier();
      if (i > 0)
        idle.push_back(secondsSince(start));
    }
    at::Tensor weight = at::randn({kWidth, kWidth}, at::kFloat);
    for (int64_t rows : calibrationSkewRows()) {
      at::Tensor x = at::randn({1, rows, kWidth}, at::kFloat);
      // About the same time for each length: many short chunks, fewer long.
      int64_t iterations = std::max<int64_t>(4, 6144 / rows);
      auto phase = [&](bool lockstep) {
        barrier();
        Clock::time_point start = Clock::now();
        for (int64_t i = 0; i < iterations; ++i) {
          tiledLinear(x, weight, at::Tensor());
          if (lockstep)
            barrier();
        }
        if (!lockstep)
          barrier(); // the slowest rank's last chunk
        return secondsSince(start) / double(iterations);
      };
      phase(false); // warm-up
      // Rounds pair a free run with a lockstep run just after it, and the
      // median round's difference is kept: a burst of load from outside
      // slows both runs of its round alike, or one round of five.
      std::vector<double> free, excess;
      for (int round = 0; round < 5; ++round) {
        double alone = phase(false);
        free.push_back(alone);
        excess.push_back(phase(true) - alone);
      }
      double freeSeconds = median(free);
      if (rank == 0)
        timings.skew.push_back({world, rows, iterations, freeSeconds,
                                freeSeconds + median(excess), median(idle)});
    }
    pg->barrier();
  } catch (const RunFailure &) {
    throw;
  } catch (const std::exception &error) {
    throw RunFailure("rank " + std::to_string(rank) + ": a gloo collective of " +
                     std::to_string(world) + " ranks failed: " + firstLine(error));
  }
  return timings;
}

} // namespace ditc::runtime
