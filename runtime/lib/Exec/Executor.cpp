//===- Executor.cpp - runs one program's ops with libtorch ----------------===//
#include "ditc/Runtime/Exec/Executor.h"
#include "ditc/Runtime/Device/CpuDevice.h"
#include "ditc/Runtime/Exec/Kernels.h"
#include "ditc/Runtime/Exec/PositionTables.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

namespace ditc::runtime {

/// The device of the rank whose communicator is `comm`; the host for a
/// program run without one.
static const Device &rankDevice(const Communicator *comm) {
  static const CpuDevice host;
  return comm ? comm->rankDevice() : host;
}

Executor::Executor(const Manifest &manifest, int64_t rank, const Program &program,
                   Communicator *comm, at::ScalarType computeType)
    : manifest(manifest), rank(rank), prog(program), comm(comm),
      computeType(computeType), device(rankDevice(comm).torchDevice()),
      parameters(manifest, rank, program, computeType, rankDevice(comm)) {
  const char *flag = std::getenv("DITC_PROFILE_OPS");
  profiling = flag && std::string(flag) == "1";
  const char *traceFlag = std::getenv("DITC_TRACE_TRANSFERS");
  tracing = traceFlag && std::string(traceFlag) == "1";
}

void Executor::trace(const char *event, int handle) {
  if (!tracing)
    return;
  // A deferred value may be resolved by the other expert's executor.
  auto name = transferNames.find(handle);
  std::string what = name != transferNames.end()
                         ? name->second
                         : "transfer " + std::to_string(handle) + " (started by the other expert)";
  // One write per line, so the ranks' lines do not interleave mid-line.
  std::string line = "dit-run: rank " + std::to_string(rank) + " step " +
                     std::to_string(stepNumber) + ": " + event + " " + what + "\n";
  std::fputs(line.c_str(), stderr);
}

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
  if (parameters.materialize(seed))
    ropeTables.clear(); // tables built from parameters go with them
}

void Executor::loadParameters(const checkpoint::TransformerWeights &weights) {
  parameters.load(weights);
  ropeTables.clear();
}

int64_t Executor::parameterBytes() const { return parameters.bytes(); }

const std::vector<at::Tensor> &Executor::params(const Op &op) const {
  return parameters.of(op);
}

std::vector<StepValue> Executor::runStep(const std::map<int, StepValue> &inputs,
                                        bool lastStep) {
  ++stepNumber;
  std::vector<at::Tensor> values(prog.step.valueShapes.size());
  std::map<int, int> pending;
  for (const auto &in : inputs) {
    values[in.first] = in.second.tensor;
    if (in.second.pending >= 0)
      pending[in.first] = in.second.pending;
  }
  std::vector<at::Tensor> results =
      runFunction(prog.step, std::move(values), pending, at::kFloat, lastStep, 0);
  // A step's sends complete within it: a dead receiver is reported in the
  // step that sent, and no buffer outlives the step. The receiver posted
  // its recv before it waits on anything this rank sends later, so this
  // adds no wait that a blocking send would not have had.
  finishSends();
  std::vector<StepValue> out;
  for (size_t i = 0; i < results.size(); ++i) {
    auto it = pending.find(prog.step.results[i]);
    out.push_back({results[i], it == pending.end() ? -1 : it->second});
  }
  return out;
}

void Executor::finishSends() {
  for (int handle : pendingSends) {
    trace("wait", handle);
    comm->finishTransfer(handle);
  }
  pendingSends.clear();
}

std::vector<at::Tensor> Executor::runFunction(const Function &fn,
                                              std::vector<at::Tensor> values,
                                              std::map<int, int> &pending,
                                              at::ScalarType frameType,
                                              bool lastStep, int depth) {
  const std::vector<std::vector<int>> &release = releasesOf(fn);
  // A value still in flight is waited for by the first op that reads it.
  auto resolve = [&](int id) {
    auto it = pending.find(id);
    if (it == pending.end())
      return;
    trace("wait", it->second);
    values[id] = comm->finishTransfer(it->second);
    pending.erase(it);
  };
  std::vector<at::Tensor> in;
  for (size_t index = 0; index < fn.ops.size(); ++index) {
    const Op &op = fn.ops[index];
    for (int id : op.inputs)
      resolve(id);
    // An overlapped region runs as one, timed under one profile entry; the
    // values its ops read for the last time go after it. It issues
    // collectives, so the sends this rank has in flight finish first, as
    // runOp does for a single collective.
    auto region = [&](const std::string &name, size_t ops, auto run) {
      finishSends();
      auto start = profiling ? std::chrono::steady_clock::now()
                             : std::chrono::steady_clock::time_point();
      run();
      if (profiling) {
        OpTime &t = profile[name];
        t.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                .count();
        ++t.count;
      }
      for (size_t i = index; i < index + ops; ++i)
        for (int id : release[i])
          values[id].reset();
      index += ops - 1;
    };
    if (const Op *attention = overlappedAttentionAt(fn, index)) {
      region(attention->name + " with its all_to_alls by head group", 4, [&] {
        values[fn.ops[index + 3].outputs[0]] =
            headGroupAttention(fn, op, *attention, values[op.inputs[0]]);
      });
      continue;
    }
    if (const Op *reduce = overlappedLinearAt(fn, index)) {
      region(op.name + " with its all_reduce by row chunk", 2, [&] {
        values[reduce->outputs[0]] = chunkedRowLinear(op, *reduce, values[op.inputs[0]]);
      });
      continue;
    }
    for (int id : op.inputs)
      in.push_back(values[id]);
    spare = reusableInput(op, release[index], in);
    // CPU ops are synchronous, so wall time per op is its cost; a call's
    // time is its callee's ops'.
    bool timed = profiling && op.kind != OpKind::Call;
    auto start = timed ? std::chrono::steady_clock::now()
                       : std::chrono::steady_clock::time_point();
    startedRecv = -1;
    std::vector<at::Tensor> out = runOp(fn, op, in, frameType, lastStep, depth);
    in.clear();
    spare.reset();
    if (timed) {
      OpTime &t = profile[op.name];
      t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                       .count();
      ++t.count;
    }
    for (size_t i = 0; i < op.outputs.size() && i < out.size(); ++i)
      values[op.outputs[i]] = std::move(out[i]);
    if (startedRecv >= 0)
      pending[op.outputs[0]] = startedRecv;
    // Values no later op reads go now, so a step holds only what is live
    // (storage a view shares lives while any view of it does). A receive
    // still in flight stays in `pending` and is finished below.
    for (int id : release[index])
      values[id].reset();
  }
  // Only the step hands out values still in flight (the deferred latents);
  // a function's caller gets them resolved. A receive nothing read is
  // finished too, so no transfer outlives its frame unnoticed.
  std::vector<int> unread;
  for (const auto &p : pending)
    if (depth > 0 || std::count(fn.results.begin(), fn.results.end(), p.first) == 0)
      unread.push_back(p.first);
  for (int id : unread)
    resolve(id);
  std::vector<at::Tensor> results;
  for (int id : fn.results)
    results.push_back(values[id]);
  return results;
}

const std::vector<std::vector<int>> &Executor::releasesOf(const Function &fn) {
  auto it = releases.find(&fn);
  if (it != releases.end())
    return it->second;
  // Each value's last reader; a value nothing reads goes after the op that
  // made it, and the function's results stay.
  std::vector<int> last(fn.valueShapes.size(), -1);
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    for (int id : fn.ops[i].inputs)
      last[size_t(id)] = int(i);
    for (int id : fn.ops[i].outputs)
      last[size_t(id)] = std::max(last[size_t(id)], int(i));
  }
  for (int id : fn.results)
    last[size_t(id)] = -1;
  std::vector<std::vector<int>> byOp(fn.ops.size());
  for (size_t id = 0; id < last.size(); ++id)
    if (last[id] >= 0)
      byOp[size_t(last[id])].push_back(int(id));
  return releases.emplace(&fn, std::move(byOp)).first->second;
}

at::Tensor Executor::reusableInput(const Op &op, const std::vector<int> &dying,
                                   const std::vector<at::Tensor> &in) const {
  if (in.empty() || std::count(op.inputs.begin(), op.inputs.end(), op.inputs[0]) != 1 ||
      std::find(dying.begin(), dying.end(), op.inputs[0]) == dying.end())
    return at::Tensor();
  const at::Tensor &x = in[0];
  // Held only by the value table and `in`, and no view, parameter or
  // caller shares its storage: then nothing reads it after this op.
  if (!x.defined() || x.use_count() != 2 || !x.is_contiguous() ||
      x.storage_offset() != 0 || x.storage().use_count() != 1 ||
      x.storage().nbytes() != x.nbytes())
    return at::Tensor();
  return x;
}

/// diffusers' get_timestep_embedding(flip_sin_to_cos=True,
/// downscale_freq_shift=0) of scale x t, with diffusers' float32 ATen ops:
/// its arguments reach 1000 x scale, where float32 rounds them, and a
/// float64 sinusoid was 1.2e-5 from diffusers after three FLUX steps. The
/// scale multiplies first, as FLUX multiplies its guidance by 1000.
static at::Tensor sinusoid(const at::Tensor &t, int64_t dim, double scale) {
  int64_t half = dim / 2;
  at::Tensor exponent = at::arange(half, at::TensorOptions(at::kFloat)) *
                        (-std::log(10000.0)) / double(half);
  at::Tensor freqs = at::exp(exponent);
  at::Tensor input = t.to(at::kFloat).cpu();
  if (scale != 1.0)
    input = input * scale;
  at::Tensor args = input.unsqueeze(1) * freqs.unsqueeze(0);
  return at::cat({at::cos(args), at::sin(args)}, -1);
}

std::vector<at::Tensor> Executor::runOp(const Function &fn, const Op &op,
                                        const std::vector<at::Tensor> &in,
                                        at::ScalarType frameType, bool lastStep,
                                        int depth) {
  if (op.betweenSteps && lastStep)
    return {in[0]};
  // Every send is finished before a later collective (seed 004's
  // _sync_pp_send), so at a collective this rank has no send in flight.
  if (!op.axes.empty() && op.kind != OpKind::Send && op.kind != OpKind::Recv &&
      op.kind != OpKind::AllSlice)
    finishSends();
  const auto &p = params(op);
  const OpAttrs &a = op.a;
  const at::Tensor &x = in.empty() ? at::Tensor() : in[0];
  switch (op.kind) {
  case OpKind::Call: {
    const Function &callee = prog.functions.at(op.callee);
    std::vector<at::Tensor> args(callee.valueShapes.size());
    // The timestep and the guidance ([B], the only 1-d arguments) stay
    // float32 in bfloat16 runs: their sinusoid is taken in float32, as
    // diffusers' embeddings take it, and cast after.
    for (size_t i = 0; i < callee.args.size(); ++i)
      args[callee.args[i]] = in[i].dim() == 1 ? in[i] : in[i].to(computeType);
    // The callee's frame has its own value ids: a recv it starts is
    // resolved inside it.
    std::map<int, int> calleePending;
    std::vector<at::Tensor> results = runFunction(callee, std::move(args), calleePending,
                                                  computeType, lastStep, depth + 1);
    for (at::Tensor &r : results)
      r = r.to(frameType);
    return results;
  }
  case OpKind::TimestepEmbedding: {
    at::Tensor s = sinusoid(x, a.freqDim, a.timestepScale)
                       .to(at::TensorOptions(frameType).device(device));
    at::Tensor h = at::silu(tiledLinear(s, p[0], p[1]));
    return {tiledLinear(h, p[2], p[3])};
  }
  case OpKind::PatchEmbed: {
    at::Tensor tokens = x;
    if (a.patchVolume > 0) {
      // channels_last tokens (P, C) to the weight's (C, P) column order.
      std::vector<int64_t> sizes = x.sizes().vec();
      tokens = x.reshape({-1, a.patchVolume, sizes.back() / a.patchVolume})
                   .transpose(1, 2)
                   .reshape(sizes)
                   .contiguous();
    }
    if (a.posEmbedMaxSize)
      return {patchEmbedWithTable(op, tokens)};
    return {tiledLinear(tokens, p[0], p.size() > 1 ? p[1] : at::Tensor())};
  }
  case OpKind::Linear:
    return {tiledLinear(x, p[0], p.size() > 1 ? p[1] : at::Tensor())};
  case OpKind::AdalnModulation: {
    if (a.table) {
      const at::Tensor &table = p[0];
      return {x.reshape({x.size(0), -1, table.size(-1)}) + table};
    }
    at::Tensor y = tiledLinear(at::silu(x), p[0], p[1]);
    return {y.reshape({x.size(0), a.numChunks, -1})};
  }
  case OpKind::Modulate: {
    // x * (1 + scale) + shift in one pass per block.
    const at::Tensor &m = in[1];
    at::Tensor scale = m.select(1, a.scaleChunk).unsqueeze(1) + 1;
    at::Tensor shift = a.shiftChunk >= 0 ? m.select(1, a.shiftChunk).unsqueeze(1)
                                         : at::Tensor();
    return {rowBlocks(x.sizes(), x.options(), [&](const RowBlock &block, at::Tensor &out) {
      if (shift.defined())
        at::addcmul_out(out, block.batchOf(shift), block.of(x), block.batchOf(scale));
      else
        at::mul_out(out, block.of(x), block.batchOf(scale));
    }, spare)};
  }
  case OpKind::ResidualAdd: {
    at::Tensor gate;
    if (in.size() == 3) {
      gate = in[2].select(1, a.gateChunk).unsqueeze(1);
      if (a.tanhGate)
        gate = at::tanh(gate);
    }
    return {rowBlocks(x.sizes(), x.options(), [&](const RowBlock &block, at::Tensor &out) {
      if (gate.defined())
        at::addcmul_out(out, block.of(x), block.batchOf(gate), block.of(in[1]));
      else
        at::add_out(out, block.of(x), block.of(in[1]));
    }, spare)};
  }
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return {norm(op, x)};
  case OpKind::Rope:
    return {rope(op, x)};
  case OpKind::SincosPosEmbed:
    return {sincosPosEmbed(op, x)};
  case OpKind::AttentionPool:
    return {attentionPool(x, in.size() > 1 ? in[1] : at::Tensor(), a.numHeads, p)};
  case OpKind::TokenMean:
    return {tokenMean(x, in.size() > 1 ? in[1] : at::Tensor())};
  case OpKind::Attention: {
    // One stacked q/k/v, or q, k, v and (with key_mask) the text mask.
    std::vector<at::Tensor> qkv = in.size() == 1 ? x.chunk(3, -1) : in;
    const at::Tensor &q = qkv[0], &k = qkv[1], &v = qkv[2];
    at::Tensor textBias = a.keyMask ? keyMaskBias(in.back(), q.scalar_type()) : at::Tensor();
    if (!op.axes.empty())
      return {ringAttention(op, q, k, v, textBias)};
    return {attention(op, q, k, v, textBias)};
  }
  case OpKind::Activation: {
    // Row blocks keep the bits independent of the thread count (Kernels.h).
    ActivationKind kind = a.activation;
    bool gated = kind == ActivationKind::SwiGlu || kind == ActivationKind::GeGlu;
    std::vector<int64_t> shape = x.sizes().vec();
    int64_t width = gated ? shape.back() / 2 : shape.back();
    shape.back() = width;
    return {rowBlocks(shape, x.options(), [&](const RowBlock &block, at::Tensor &out) {
      at::Tensor rows = block.of(x);
      switch (kind) {
      // diffusers' SwiGLU / GEGLU: hidden * act(gate), gate the second half.
      case ActivationKind::SwiGlu:
        at::silu_out(out, rows.narrow(-1, width, width));
        out.mul_(rows.narrow(-1, 0, width));
        return;
      case ActivationKind::GeGlu:
        at::gelu_out(out, rows.narrow(-1, width, width));
        out.mul_(rows.narrow(-1, 0, width));
        return;
      case ActivationKind::Gelu:
        at::gelu_out(out, rows);
        return;
      case ActivationKind::GeluTanh:
        at::gelu_out(out, rows, "tanh");
        return;
      case ActivationKind::Silu:
        at::silu_out(out, rows);
        return;
      }
    }, gated ? at::Tensor() : spare)};
  }
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
  case OpKind::Split:
    return x.chunk(a.parts, a.axis);
  case OpKind::CfgCombine: {
    // guided = u + sum_i s_i (c_i - u), with the unconditional branch last.
    const at::Tensor &u = in.back();
    at::Tensor out = u;
    for (size_t i = 0; i < a.guidanceScales.size(); ++i)
      out = out + guidanceScale.value_or(a.guidanceScales[i]) * (in[i] - u);
    // Qwen-Image's pipeline rescales the guided prediction of each token to
    // the norm of the conditional one (its true CFG). A token's features
    // are never split across ranks, so the norms are local.
    if (manifest.family == "qwen_image" && in.size() == 2)
      out = out * (at::norm(in[0], 2, {-1}, /*keepdim=*/true) /
                   at::norm(out, 2, {-1}, /*keepdim=*/true));
    return {out};
  }
  case OpKind::SchedulerStep:
    if (stepRule && !stepRule->euler())
      return {applyStepRule(x, in[1])};
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
    pendingSends.push_back(comm->startSend(x, op.axes, a.peer, describe(op)));
    if (tracing) {
      transferNames[pendingSends.back()] = describe(op) + " to " + axisKey(op.axes) +
                                           " index " + std::to_string(a.peer);
      trace("start", pendingSends.back());
    }
    return {x};
  case OpKind::Recv:
    // The result stays pending (runFunction) until an op reads it.
    startedRecv = comm->startRecv(fn.valueShapes[op.outputs[0]], frameType, op.axes,
                                  a.peer, describe(op));
    if (tracing) {
      transferNames[startedRecv] = describe(op) + " from " + axisKey(op.axes) +
                                   " index " + std::to_string(a.peer);
      trace("start", startedRecv);
    }
    return {at::Tensor()};
  }
  throw std::logic_error("op '" + op.name + "' has no semantics in this dit-run");
}

/// Runs the step's instructions on this rank's shard, in float32: each is a
/// sum of coefficient x tensor, the coefficient rounded to float32 as it
/// multiplies (as a float64 scalar times a float32 tensor is in torch).
at::Tensor Executor::applyStepRule(const at::Tensor &latents,
                                   const at::Tensor &velocity) {
  std::vector<at::Tensor> &slots = *stepSlots;
  at::Tensor result;
  for (const StepInstruction &instruction : stepRule->instructions) {
    at::Tensor sum;
    const StepTerm &first = instruction.terms.front();
    if (instruction.terms.size() == 1 && first.coeff == 1.0 &&
        first.source >= 0 && instruction.target >= 0) {
      // A copy between slots moves history along; before the first steps
      // the slot copied is still empty, and so is its copy.
      slots.at(size_t(instruction.target)) = slots.at(size_t(first.source));
      continue;
    }
    for (const StepTerm &term : instruction.terms) {
      const at::Tensor &source = term.source == kStepLatents    ? latents
                                 : term.source == kStepVelocity ? velocity
                                                                : slots.at(size_t(term.source));
      if (!source.defined())
        throw std::logic_error("scheduler step reads state slot " +
                               std::to_string(term.source) + " before any step wrote it");
      at::Tensor value = term.coeff == 1.0 ? source : source * term.coeff;
      sum = sum.defined() ? sum + value : value;
    }
    if (instruction.target == kStepResult)
      result = sum;
    else
      slots.at(size_t(instruction.target)) = sum;
  }
  return result;
}

at::Tensor Executor::norm(const Op &op, const at::Tensor &x) {
  int64_t width = x.size(-1);
  int64_t group = op.a.groupSize ? op.a.groupSize : width;
  bool reduce = !op.axes.empty();
  int64_t count = group;
  if (reduce)
    for (const std::string &axis : op.axes)
      count *= manifest.axisSize(axis);
  bool rms = op.kind == OpKind::RmsNorm;
  const auto &p = params(op);
  // Rows [..., width] of x as [..., width / group, group], in float32 even
  // when the compute dtype is bfloat16.
  auto grouped = [&](const at::Tensor &rows) {
    std::vector<int64_t> shape = rows.sizes().vec();
    shape.back() = width / group;
    shape.push_back(group);
    return rows.reshape(shape).to(at::kFloat);
  };
  // The normalized rows from their sums of squares (s2) and sums (s1).
  auto normalize = [&](const at::Tensor &xg, const at::Tensor &s1, const at::Tensor &s2) {
    double eps = op.a.eps;
    at::Tensor y;
    if (rms) {
      y = xg / at::sqrt(s2 / double(count) + eps);
    } else {
      at::Tensor mean = s1 / double(count);
      y = (xg - mean) / at::sqrt(s2 / double(count) - mean * mean + eps);
    }
    std::vector<int64_t> shape = xg.sizes().vec();
    shape.pop_back();
    shape.back() = width;
    y = y.to(x.scalar_type());
    if (op.a.affine) {
      bool perGroup = p[0].numel() != width;
      y = perGroup ? y * p[0] : y.reshape(shape) * p[0];
      if (op.kind == OpKind::LayerNorm && p.size() > 1)
        y = y + p[1];
    }
    return y.reshape(shape);
  };
  if (!reduce)
    // Each block of rows is read once from memory: statistics and the
    // normalization run while it sits in cache.
    return rowBlocks(x.sizes(), x.options(), [&](const RowBlock &block, at::Tensor &out) {
      at::Tensor xg = grouped(block.of(x));
      at::Tensor s1 = rms ? at::Tensor() : xg.sum(-1, true);
      out.copy_(normalize(xg, s1, (xg * xg).sum(-1, true)));
    });
  at::Tensor xg = grouped(x);
  at::Tensor s2 = (xg * xg).sum(-1, true);
  at::Tensor s1 = rms ? at::Tensor() : xg.sum(-1, true);
  // Both sums travel in one all-reduce.
  if (rms) {
    s2 = comm->allReduce(s2, op.axes, describe(op) + " statistics");
  } else {
    at::Tensor both = comm->allReduce(at::cat({s1, s2}, -1), op.axes,
                                      describe(op) + " statistics");
    s1 = both.narrow(-1, 0, 1);
    s2 = both.narrow(-1, 1, 1);
  }
  return normalize(xg, s1, s2);
}

at::Tensor Executor::patchEmbedWithTable(const Op &op, const at::Tensor &x) {
  const auto &p = params(op);
  const OpAttrs &a = op.a;
  int64_t tokens = x.size(1), side = a.posEmbedMaxSize;
  int64_t h = a.grid[1], w = a.grid[2];
  // PatchEmbed.cropped_pos_embed: the centred h x w window of the table.
  int64_t top = (side - h) / 2, left = (side - w) / 2;
  int64_t first = a.sequenceShards > 1 ? manifest.latentBlock(rank) * tokens : 0;
  std::vector<int64_t> rows(tokens);
  for (int64_t s = 0; s < tokens; ++s) {
    int64_t token = first + s;
    rows[s] = (top + token / w) * side + left + token % w;
  }
  at::Tensor index = at::from_blob(rows.data(), {tokens}, at::TensorOptions(at::kLong))
                         .clone()
                         .to(device);
  at::Tensor table = p[2].select(0, 0).index_select(0, index);
  return tiledLinear(x, p[0], p[1]) + table.unsqueeze(0);
}

at::Tensor Executor::rope(const Op &op, const at::Tensor &x) {
  int64_t seq = x.size(1), width = x.size(2);
  const OpAttrs &a = op.a;
  // An ltx table spans the heads, so it is one row of the whole width.
  int64_t heads = a.ropeLtx ? 1 : a.numHeads;
  int64_t d = width / heads;
  auto it = ropeTables.find(&op);
  if (it == ropeTables.end()) {
    const auto &p = params(op);
    auto options = at::TensorOptions(x.scalar_type()).device(device);
    int64_t block = a.sequenceShards > 1 ? manifest.latentBlock(rank) : 0;
    int64_t tp = a.ropeLtx && a.headShards > 1 ? manifest.ranks[rank].coords.at("tp") : 0;
    it = ropeTables
             .emplace(&op, p.empty() ? rotaryTable(a, seq, width, d, block, tp, options)
                                     : learnedRopeTable(a, p[0], seq, heads, d, block,
                                                        options))
             .first;
  }
  const RopeTable &table = it->second;
  return rowBlocks(x.sizes(), x.options(), [&](const RowBlock &block, at::Tensor &out) {
    at::Tensor xh = block.of(x).reshape({block.rows, heads, d});
    at::Tensor o = out.view({block.rows, heads, d});
    at::mul_out(o, xh, table.cos.narrow(0, block.row, block.rows));
    o.addcmul_(xh.index_select(-1, table.partner), table.sin.narrow(0, block.row, block.rows));
  });
}

at::Tensor Executor::sincosPosEmbed(const Op &op, const at::Tensor &x) {
  auto it = posTables.find(&op);
  if (it == posTables.end()) {
    int64_t block = op.a.sequenceShards > 1 ? manifest.latentBlock(rank) : 0;
    it = posTables
             .emplace(&op, sincosPositionTable(
                               op.a, x.size(1), x.size(2), block,
                               at::TensorOptions(x.scalar_type()).device(device)))
             .first;
  }
  return x + it->second;
}

at::Tensor Executor::attention(const Op &op, const at::Tensor &q,
                               const at::Tensor &k, const at::Tensor &v,
                               const at::Tensor &textBias) {
  int64_t h = op.a.numHeads;
  // A joint attention's image keys, all of them here, are valid.
  at::Tensor keyBias = textBias.defined() && op.a.textTokens > 0
                           ? jointKeyBias(textBias, k.size(1), op.a.textPrefix)
                           : textBias;
  return headAttention(q, k, v, h, 1.0 / std::sqrt(double(q.size(2) / h)), keyBias);
}

at::Tensor Executor::headGroupAttention(const Function &fn, const Op &in,
                                        const Op &attention,
                                        const at::Tensor &stacked) {
  const Op &out = fn.ops[&attention - fn.ops.data() + 1];
  int64_t groups = attention.a.overlapHeadGroups;
  int64_t members = comm->position(in.axes).first;
  // The stacked q/k/v [B, S/U, 3, W]: the input all_to_all sends member j
  // the heads of chunk j of W. Chunk j is G groups of the heads member j
  // will hold, so group g's exchange carries slice g of every chunk, and
  // brings this rank slice g of its own heads over the whole sequence.
  std::vector<int64_t> s = stacked.sizes().vec();
  int64_t slice = s[3] / members / groups;
  at::Tensor byGroup = stacked.view({s[0], s[1], s[2], members, groups, slice});
  auto groupInput = [&](int64_t g) {
    return byGroup.select(4, g).reshape({s[0], s[1], s[2], members * slice});
  };
  int64_t headsPerGroup = attention.a.numHeads / groups;
  double scale = 1.0 / std::sqrt(double(slice / headsPerGroup)); // 1/sqrt(head_dim)
  // The result [B, S/U, W]: the output all_to_all of group g returns slice g
  // of every member's chunk.
  at::Tensor result = at::empty({s[0], s[1], s[3]}, stacked.options());
  at::Tensor resultByGroup = result.view({s[0], s[1], members, groups, slice});
  auto label = [&](const Op &exchange, int64_t g) {
    return describe(exchange) + (&exchange == &in ? " into " : " out of ") +
           describe(attention) + " (head group " + std::to_string(g) + " of " +
           std::to_string(groups) + ")";
  };
  std::vector<int> inputs(size_t(groups), -1), outputs(size_t(groups), -1);
  for (HeadGroupExchange x : headGroupSchedule(groups)) {
    int64_t g = x.group;
    if (!x.output) {
      inputs[g] = comm->startAllToAll(groupInput(g), in.axes, in.a.splitAxis,
                                      in.a.concatAxis, label(in, g));
      continue;
    }
    // Group g's output is due: its input has arrived (the next group's
    // already travels), so its attention runs now.
    std::vector<at::Tensor> qkv = comm->finishTransfer(inputs[g]).unbind(2);
    at::Tensor o = headAttention(qkv[0], qkv[1], qkv[2], headsPerGroup, scale);
    outputs[g] = comm->startAllToAll(o, out.axes, out.a.splitAxis, out.a.concatAxis,
                                     label(out, g));
  }
  for (int64_t g = 0; g < groups; ++g)
    resultByGroup.select(3, g).copy_(
        comm->finishTransfer(outputs[g]).view({s[0], s[1], members, slice}));
  return result;
}

at::Tensor Executor::chunkedRowLinear(const Op &linear, const Op &reduce,
                                      const at::Tensor &x) {
  const auto &p = params(linear);
  at::Tensor bias = p.size() > 1 ? p[1] : at::Tensor();
  at::Tensor rows = x.reshape({-1, x.size(-1)});
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = p[0].size(0);
  at::Tensor result = at::empty({rows.size(0), shape.back()}, x.options());
  // Chunks are whole GEMM tiles, so each has the bits of the same rows of
  // the whole product; the sums are elementwise, so chunking them changes
  // no bit on two ranks (and only the order of a ring's additions on more).
  std::vector<std::tuple<int64_t, int, int64_t>> inFlight;
  RowCut cut = rowCutOf(x.sizes().vec());
  for (auto [first, count] :
       tileRowChunks(cut.items, cut.rowsPerItem, reduce.a.overlapRowChunks)) {
    at::Tensor partial = tiledLinearRows(rows.narrow(0, first, count), p[0], bias);
    inFlight.emplace_back(first, comm->startAllReduce(partial, reduce.axes,
                                                     describe(reduce) + " (rows " +
                                                         std::to_string(first) + "+" +
                                                         std::to_string(count) + ")"),
                          count);
  }
  for (auto [first, handle, count] : inFlight)
    result.narrow(0, first, count).copy_(comm->finishTransfer(handle));
  return result.view(shape);
}

at::Tensor Executor::ringAttention(const Op &op, const at::Tensor &q,
                                   const at::Tensor &k, const at::Tensor &v,
                                   const at::Tensor &textBias) {
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
  // Each block updates the online-softmax state exactly (Kernels.h).
  OnlineAttention state(q, h, 1.0 / std::sqrt(double(q.size(2) / h)));
  // The text, whole on every rank, is absorbed once, under its mask.
  if (text > 0)
    state.absorb(textPart(k), textPart(v), textBias);
  // K and V image blocks travel together; the next hop's transfer runs
  // while this hop's block is absorbed.
  at::Tensor block = at::cat({imagePart(k), imagePart(v)}, -1).contiguous();
  int64_t width = k.size(2);
  for (int64_t hop = 0; hop < members; ++hop) {
    int handle = -1;
    if (hop + 1 < members)
      handle = comm->startShift(block, op.axes, describe(op));
    state.absorb(block.narrow(-1, 0, width), block.narrow(-1, width, width));
    if (handle >= 0)
      block = comm->finishShift(handle);
  }
  return state.result();
}

} // namespace ditc::runtime
