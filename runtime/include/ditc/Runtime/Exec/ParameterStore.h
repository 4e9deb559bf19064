//===- ParameterStore.h - one program's parameters on one rank --*- C++ -*-===//
//
// The tensors a program's ops read, this rank's slice of each, made once
// per name in the compute dtype on the rank's device: drawn from a seed
// (IO/Initializer.h) or read from a checkpoint (IO/Weights.h). Ops that name
// one parameter share its tensor.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_EXEC_PARAMETERSTORE_H
#define DITC_RUNTIME_EXEC_PARAMETERSTORE_H

#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/Device/Device.h"
#include "ditc/Runtime/Plan/Program.h"

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

namespace ditc::runtime {

class ParameterStore {
public:
  ParameterStore(const Manifest &manifest, int64_t rank, const Program &program,
                 at::ScalarType computeType, const Device &rankDevice);

  /// Draws every parameter from `seed`, unless they came from a checkpoint
  /// or were drawn from this seed already. Returns whether they changed.
  bool materialize(int64_t seed);
  /// Reads every parameter from `weights` (the program's expert of a
  /// snapshot openWeights checked); materialize then keeps them whatever
  /// the seed.
  void load(const checkpoint::TransformerWeights &weights);
  /// Frees every parameter (expert offload). Until restore(), materialize
  /// draws nothing; `weights`, when given, is where restore() reads them
  /// back from (the parameters then count as loaded, whatever the seed).
  void release(const checkpoint::TransformerWeights *weights = nullptr);
  /// Makes the released parameters again: read from their checkpoint, or
  /// drawn from `seed`. Nothing when they are resident.
  void restore(int64_t seed);
  bool resident() const { return !released; }
  /// Bytes this rank holds.
  int64_t bytes() const;
  /// The tensors `op` reads, in its params order (none for most ops).
  const std::vector<at::Tensor> &of(const Op &op) const;

private:
  /// Makes every parameter the program reads with `make` (float32, this
  /// rank's slice), once per name, in the compute dtype on the device.
  void place(const std::function<at::Tensor(const ParamSpec &)> &make);

  const Manifest &manifest;
  int64_t rank;
  const Program &prog;
  at::ScalarType computeType;
  const Device &rankDevice;
  std::optional<int64_t> drawnSeed;
  bool loaded = false; // parameters came from a checkpoint
  bool released = false;
  const checkpoint::TransformerWeights *source = nullptr;
  std::map<std::string, at::Tensor> parameterByName;
  std::unordered_map<const Op *, std::vector<at::Tensor>> parameterByOp;
};

} // namespace ditc::runtime

#endif // DITC_RUNTIME_EXEC_PARAMETERSTORE_H
