//===- Executor.cpp - runs one program's ops with libtorch ----------------===//
#include "ditc/Runtime/Executor.h"
#include "ditc/Runtime/Initializer.h"

#include <cmath>
#include <stdexcept>

namespace ditc::runtime {

Executor::Executor(const Manifest &manifest, int64_t rank, const Program &program,
                   Communicator *comm, at::ScalarType computeType)
    : manifest(manifest), rank(rank), prog(program), comm(comm),
      computeType(computeType), device(comm ? comm->device() : at::Device(at::kCPU)) {}

std::string Executor::describe(const Op &op) const {
  std::string text = op.name;
  if (op.a.block >= 0)
    text += " in block " + std::to_string(op.a.block);
  return text;
}

// Every attribute, shape and value id below was checked by validateProgram
// before the rendezvous (docs/runtime.md, "Validation"); the executor trusts
// them and never re-checks on the step path.

void Executor::materializeParameters(int64_t seed) {
  if (drawnSeed == seed)
    return;
  drawnSeed = seed;
  parameterByName.clear();
  parameterByOp.clear();
  int64_t tpSize = manifest.axisSize("tp");
  int64_t tpIndex = manifest.ranks[rank].coords.at("tp");
  auto visit = [&](const Function &fn) {
    for (const Op &op : fn.ops) {
      std::vector<at::Tensor> tensors;
      for (const ParamSpec &spec : op.params) {
        auto it = parameterByName.find(spec.name);
        if (it == parameterByName.end()) {
          ParamSpec stream = spec;
          stream.name = parameterStreamName(prog.expert, spec.name);
          at::Tensor t = drawParameter(seed, stream, tpSize, tpIndex)
                             .to(at::TensorOptions(computeType).device(device));
          it = parameterByName.emplace(spec.name, t).first;
        }
        tensors.push_back(it->second);
      }
      if (!tensors.empty())
        parameterByOp[&op] = std::move(tensors);
    }
  };
  visit(prog.step);
  for (const auto &fn : prog.functions)
    visit(fn.second);
}

int64_t Executor::parameterBytes() const {
  int64_t bytes = 0;
  for (const auto &p : parameterByName)
    bytes += p.second.numel() * int64_t(p.second.element_size());
  return bytes;
}

const std::vector<at::Tensor> &Executor::params(const Op &op) {
  static const std::vector<at::Tensor> none;
  auto it = parameterByOp.find(&op);
  return it == parameterByOp.end() ? none : it->second;
}

std::vector<at::Tensor> Executor::runStep(const std::map<int, at::Tensor> &inputs,
                                          bool lastStep) {
  std::vector<at::Tensor> values(prog.step.valueShapes.size());
  for (const auto &in : inputs)
    values[in.first] = in.second;
  return runFunction(prog.step, std::move(values), at::kFloat, lastStep, 0);
}

std::vector<at::Tensor> Executor::runFunction(const Function &fn,
                                              std::vector<at::Tensor> values,
                                              at::ScalarType frameType,
                                              bool lastStep, int depth) {
  std::vector<at::Tensor> in;
  for (const Op &op : fn.ops) {
    in.clear();
    for (int id : op.inputs)
      in.push_back(values[id]);
    std::vector<at::Tensor> out = runOp(fn, op, in, frameType, lastStep, depth);
    for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i)
      values[op.outputs[i]] = std::move(out[i]);
  }
  std::vector<at::Tensor> results;
  for (int id : fn.results)
    results.push_back(values[id]);
  return results;
}

static at::Tensor sinusoid(const at::Tensor &t, int64_t dim) {
  int64_t half = dim / 2;
  at::Tensor freqs = at::exp(-std::log(10000.0) *
                             at::arange(half, at::TensorOptions(at::kDouble)) /
                             double(half));
  at::Tensor args = t.to(at::kDouble).cpu().unsqueeze(1) * freqs.unsqueeze(0);
  return at::cat({at::cos(args), at::sin(args)}, -1);
}

std::vector<at::Tensor> Executor::runOp(const Function &fn, const Op &op,
                                        const std::vector<at::Tensor> &in,
                                        at::ScalarType frameType, bool lastStep,
                                        int depth) {
  if (op.betweenSteps && lastStep)
    return {in[0]};
  const auto &p = params(op);
  const OpAttrs &a = op.a;
  const at::Tensor &x = in.empty() ? at::Tensor() : in[0];
  switch (op.kind) {
  case OpKind::Call: {
    const Function &callee = prog.functions.at(op.callee);
    std::vector<at::Tensor> args(callee.valueShapes.size());
    for (size_t i = 0; i < callee.args.size(); ++i)
      args[callee.args[i]] = in[i].to(computeType);
    std::vector<at::Tensor> results =
        runFunction(callee, std::move(args), computeType, lastStep, depth + 1);
    for (at::Tensor &r : results)
      r = r.to(frameType);
    return results;
  }
  case OpKind::TimestepEmbedding: {
    at::Tensor s = sinusoid(x, a.freqDim)
                       .to(at::TensorOptions(frameType).device(device));
    at::Tensor h = at::silu(at::linear(s, p[0], p[1]));
    return {at::linear(h, p[2], p[3])};
  }
  case OpKind::PatchEmbed:
  case OpKind::Linear:
    return {p.size() > 1 ? at::linear(x, p[0], p[1]) : at::linear(x, p[0])};
  case OpKind::AdalnModulation: {
    if (a.table) {
      const at::Tensor &table = p[0];
      return {x.reshape({x.size(0), -1, table.size(-1)}) + table};
    }
    at::Tensor y = at::linear(at::silu(x), p[0], p[1]);
    return {y.reshape({x.size(0), a.numChunks, -1})};
  }
  case OpKind::Modulate: {
    const at::Tensor &m = in[1];
    at::Tensor out = x * (1 + m.select(1, a.scaleChunk).unsqueeze(1));
    if (a.shiftChunk >= 0)
      out = out + m.select(1, a.shiftChunk).unsqueeze(1);
    return {out};
  }
  case OpKind::ResidualAdd:
    if (in.size() == 3)
      return {x + in[2].select(1, a.gateChunk).unsqueeze(1) * in[1]};
    return {x + in[1]};
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return {norm(op, x)};
  case OpKind::Rope:
    return {rope(op, x)};
  case OpKind::Attention: {
    at::Tensor q, k, v;
    if (in.size() == 1) {
      auto parts = x.chunk(3, -1);
      q = parts[0], k = parts[1], v = parts[2];
    } else {
      q = in[0], k = in[1], v = in[2];
    }
    if (!op.axes.empty())
      return {ringAttention(op, q, k, v)};
    return {attention(op, q, k, v)};
  }
  case OpKind::Activation:
    switch (a.activation) {
    case ActivationKind::SwiGlu:
    case ActivationKind::GeGlu: {
      auto halves = x.chunk(2, -1);
      return {(a.activation == ActivationKind::SwiGlu ? at::silu(halves[0])
                                                      : at::gelu(halves[0])) *
              halves[1]};
    }
    case ActivationKind::Gelu:
      return {at::gelu(x)};
    case ActivationKind::GeluTanh:
      return {at::gelu(x, "tanh")};
    case ActivationKind::Silu:
      return {at::silu(x)};
    }
    break;
  case OpKind::ConcatStreams:
    if (a.textPrefix)
      return {at::cat({in[0], in[1]}, 1)};
    return {at::cat({in[1], in[0]}, 1)};
  case OpKind::SplitStreams: {
    int64_t text = fn.valueShapes[op.outputs[0]][1], total = x.size(1);
    if (a.textPrefix)
      return {x.narrow(1, 0, text), x.narrow(1, text, total - text)};
    return {x.narrow(1, total - text, text), x.narrow(1, 0, total - text)};
  }
  case OpKind::TensorConcat:
    return {at::cat(in, a.axis)};
  case OpKind::TensorEmpty:
    return {at::zeros(fn.valueShapes[op.outputs[0]],
                      at::TensorOptions(frameType).device(device))};
  case OpKind::Stack:
    return {at::stack(in, a.axis)};
  case OpKind::Unstack:
    return x.unbind(a.axis);
  case OpKind::CfgCombine: {
    // guided = u + sum_i s_i (c_i - u), with the unconditional branch last.
    const at::Tensor &u = in.back();
    at::Tensor out = u;
    for (size_t i = 0; i < a.guidanceScales.size(); ++i)
      out = out + a.guidanceScales[i] * (in[i] - u);
    return {out};
  }
  case OpKind::SchedulerStep:
    // Flow-matching Euler: x + (sigma_next - sigma) * v.
    return {x + (in[3] - in[2]) * in[1]};
  case OpKind::AllReduce:
    return {comm->allReduce(x, op.axes, describe(op))};
  case OpKind::AllGather:
    return {comm->allGather(x, op.axes, a.axis, describe(op))};
  case OpKind::AllToAll:
    return {comm->allToAll(x, op.axes, a.splitAxis, a.concatAxis, describe(op))};
  case OpKind::AllSlice: {
    auto [size, index] = comm->position(op.axes);
    return {x.narrow(a.axis, index * (x.size(a.axis) / size), x.size(a.axis) / size)};
  }
  case OpKind::Send:
    comm->send(x, op.axes, a.peer, describe(op));
    return {x};
  case OpKind::Recv:
    return {comm->recv(fn.valueShapes[op.outputs[0]], frameType, op.axes, a.peer,
                       describe(op))};
  }
  throw std::logic_error("op '" + op.name + "' has no semantics in this dit-run");
}

at::Tensor Executor::norm(const Op &op, const at::Tensor &x) {
  int64_t width = x.size(-1);
  int64_t group = op.a.groupSize ? op.a.groupSize : width;
  bool reduce = !op.axes.empty();
  int64_t count = group;
  if (reduce)
    for (const std::string &axis : op.axes)
      count *= manifest.axisSize(axis);
  std::vector<int64_t> grouped = x.sizes().vec();
  grouped.back() = width / group;
  grouped.push_back(group);
  // Statistics in float32 even when the compute dtype is bfloat16.
  at::Tensor xg = x.reshape(grouped).to(at::kFloat);
  bool rms = op.kind == OpKind::RmsNorm;
  at::Tensor s2 = (xg * xg).sum(-1, true);
  at::Tensor s1 = rms ? at::Tensor() : xg.sum(-1, true);
  if (reduce) {
    // Both sums travel in one all-reduce.
    if (rms) {
      s2 = comm->allReduce(s2, op.axes, describe(op) + " statistics");
    } else {
      at::Tensor both = comm->allReduce(at::cat({s1, s2}, -1), op.axes,
                                        describe(op) + " statistics");
      s1 = both.narrow(-1, 0, 1);
      s2 = both.narrow(-1, 1, 1);
    }
  }
  double eps = op.a.eps;
  at::Tensor y;
  if (rms) {
    y = xg / at::sqrt(s2 / double(count) + eps);
  } else {
    at::Tensor mean = s1 / double(count);
    y = (xg - mean) / at::sqrt(s2 / double(count) - mean * mean + eps);
  }
  y = y.to(x.scalar_type());
  if (op.a.affine) {
    const auto &p = params(op);
    bool perGroup = p[0].numel() != width;
    y = perGroup ? y * p[0] : y.reshape(x.sizes()) * p[0];
    if (op.kind == OpKind::LayerNorm && p.size() > 1)
      y = y + p[1];
  }
  return y.reshape(x.sizes());
}

at::Tensor Executor::rope(const Op &op, const at::Tensor &x) {
  int64_t batch = x.size(0), seq = x.size(1), width = x.size(2);
  const OpAttrs &a = op.a;
  int64_t heads = a.numHeads;
  int64_t d = width / heads;
  auto it = ropeTables.find(&op);
  if (it == ropeTables.end()) {
    // cos/sin per (token, channel) and each channel's partner in its pair;
    // text rows sit at position 0, image rows at their grid coordinates
    // (offset by this rank's latent block when the sequence is split).
    int64_t text = a.textTokens;
    bool prefix = a.textPrefix;
    int64_t image = seq - text;
    const auto &grid = a.grid;
    const auto &axesDims = a.axesDims;
    double theta = a.theta;
    int64_t shards = a.sequenceShards;
    int64_t first = shards > 1 ? manifest.latentBlock(rank) * image : 0;
    // The rotated channel pairs (offset + 2k, offset + 2k + 1) of each axis,
    // with their frequencies; channels past the axes stay unrotated.
    struct Pair {
      int64_t even;
      int axis;
      double freq;
    };
    std::vector<Pair> pairs;
    std::vector<int64_t> partner(d);
    for (int64_t c = 0; c < d; ++c)
      partner[c] = c;
    for (int axis = 0, offset = 0; axis < 3; offset += int(axesDims[axis]), ++axis) {
      int64_t dim = int64_t(axesDims[axis]);
      for (int64_t k = 0; k < dim / 2 && offset + 2 * k + 1 < d; ++k) {
        int64_t even = offset + 2 * k;
        pairs.push_back({even, axis, std::pow(theta, -double(k) * 2.0 / double(dim))});
        partner[even] = even + 1;
        partner[even + 1] = even;
      }
    }
    std::vector<double> cosTable(seq * d, 1.0), sinTable(seq * d, 0.0);
    int64_t gh = int64_t(grid[1]), gw = int64_t(grid[2]);
    for (int64_t s = 0; s < image; ++s) {
      int64_t token = first + s;
      int64_t coord[3] = {token / (gh * gw), (token / gw) % gh, token % gw};
      int64_t row = prefix ? text + s : s;
      for (const Pair &pair : pairs) {
        double angle = double(coord[pair.axis]) * pair.freq;
        double *cosRow = &cosTable[row * d], *sinRow = &sinTable[row * d];
        cosRow[pair.even] = cosRow[pair.even + 1] = std::cos(angle);
        sinRow[pair.even] = -std::sin(angle);
        sinRow[pair.even + 1] = std::sin(angle);
      }
    }
    auto options = at::TensorOptions(at::kDouble);
    RopeTable table;
    table.cos = at::from_blob(cosTable.data(), {seq, 1, d}, options)
                    .to(at::TensorOptions(x.scalar_type()).device(device));
    table.sin = at::from_blob(sinTable.data(), {seq, 1, d}, options)
                    .to(at::TensorOptions(x.scalar_type()).device(device));
    table.partner = at::from_blob(partner.data(), {d}, at::TensorOptions(at::kLong))
                        .clone()
                        .to(device);
    it = ropeTables.emplace(&op, table).first;
  }
  at::Tensor xh = x.reshape({batch, seq, heads, d});
  at::Tensor rotated = xh.index_select(-1, it->second.partner);
  return (xh * it->second.cos + rotated * it->second.sin).reshape(x.sizes());
}

/// [B, S, H*d] -> [B, H, S, d]
static at::Tensor heads(const at::Tensor &x, int64_t count) {
  return x.reshape({x.size(0), x.size(1), count, x.size(2) / count}).transpose(1, 2);
}

at::Tensor Executor::attention(const Op &op, const at::Tensor &q,
                               const at::Tensor &k, const at::Tensor &v) {
  int64_t h = op.a.numHeads;
  // Scaling q (S x d) is cheaper than scaling the scores (S x S).
  double scale = 1.0 / std::sqrt(double(q.size(2) / h));
  at::Tensor qh = heads(q, h) * scale, kh = heads(k, h), vh = heads(v, h);
  at::Tensor kt = kh.transpose(-2, -1);
  // Score blocks of at most ~64M elements bound the memory of long sequences.
  int64_t rows = q.size(1);
  int64_t perRow = q.size(0) * h * k.size(1);
  int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 26) / std::max<int64_t>(1, perRow));
  std::vector<at::Tensor> outs;
  for (int64_t start = 0; start < rows; start += chunk) {
    int64_t len = std::min(chunk, rows - start);
    at::Tensor scores = at::matmul(qh.narrow(2, start, len), kt);
    outs.push_back(at::matmul(at::softmax(scores, -1), vh));
  }
  at::Tensor o = outs.size() == 1 ? outs[0] : at::cat(outs, 2);
  return o.transpose(1, 2).reshape(q.sizes());
}

at::Tensor Executor::ringAttention(const Op &op, const at::Tensor &q,
                                   const at::Tensor &k, const at::Tensor &v) {
  int64_t h = op.a.numHeads;
  int64_t text = op.a.textTokens;
  bool prefix = op.a.textPrefix;
  int64_t members = comm->position(op.axes).first;
  int64_t total = k.size(1), image = total - text;
  auto imagePart = [&](const at::Tensor &t) {
    return t.narrow(1, prefix ? text : 0, image);
  };
  auto textPart = [&](const at::Tensor &t) {
    return t.narrow(1, prefix ? 0 : image, text);
  };
  double scale = 1.0 / std::sqrt(double(q.size(2) / h));
  at::Tensor qh = heads(q, h) * scale;
  // Online softmax state per query row: running max m, running sum l, and
  // the unnormalized output o. Each block updates it exactly.
  at::Tensor m, l, o;
  auto absorb = [&](const at::Tensor &kBlock, const at::Tensor &vBlock) {
    at::Tensor scores = at::matmul(qh, heads(kBlock, h).transpose(-2, -1));
    at::Tensor blockMax = std::get<0>(scores.max(-1, true));
    if (!m.defined()) {
      m = blockMax;
      at::Tensor p = at::exp(scores - m);
      l = p.sum(-1, true);
      o = at::matmul(p, heads(vBlock, h));
      return;
    }
    at::Tensor newMax = at::maximum(m, blockMax);
    at::Tensor oldScale = at::exp(m - newMax);
    at::Tensor p = at::exp(scores - newMax);
    l = l * oldScale + p.sum(-1, true);
    o = o * oldScale + at::matmul(p, heads(vBlock, h));
    m = newMax;
  };
  if (text > 0)
    absorb(textPart(k), textPart(v));
  // K and V image blocks travel together; the next hop's transfer runs
  // while this hop's block is absorbed.
  at::Tensor block = at::cat({imagePart(k), imagePart(v)}, -1).contiguous();
  int64_t width = k.size(2);
  for (int64_t hop = 0; hop < members; ++hop) {
    int handle = -1;
    if (hop + 1 < members)
      handle = comm->startShift(block, op.axes, describe(op));
    absorb(block.narrow(-1, 0, width), block.narrow(-1, width, width));
    if (handle >= 0)
      block = comm->finishShift(handle);
  }
  return (o / l).transpose(1, 2).reshape(q.sizes());
}

} // namespace ditc::runtime
