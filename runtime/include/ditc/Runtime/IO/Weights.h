//===- Weights.h - a plan's parameters from a diffusers snapshot -*- C++ -*-===//
//
// dit-run --weights DIR reads the plan's parameters from a diffusers
// snapshot instead of drawing them from the seed. Everything that can be
// wrong with the snapshot is found before the rendezvous (exit 2): its
// layout, every weights file's header and offsets (ditc/Checkpoint), each
// transformer's config.json against the plan's model.checkpoint_config, and
// every parameter any rank reads: present, with its checkpoint shape. A
// rank then reads only the bytes of its own slices (Initializer.h's split,
// with pread), converted to float and then to the compute dtype.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_WEIGHTS_H
#define DITC_RUNTIME_WEIGHTS_H

#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Runtime/Plan/Program.h"

#include <ATen/ATen.h>

#include <optional>

#include <memory>

namespace ditc::runtime {

/// Opens the snapshot `dir` and checks it against `manifest` and the
/// `programs` (every program any rank runs, or this rank's): each
/// component's config.json must equal model.checkpoint_config (every
/// differing field is named with both values), and every parameter must be
/// stored under its name with its checkpoint shape. Throws BadInput naming
/// the file, the tensor and the field.
std::shared_ptr<const checkpoint::Snapshot>
openWeights(const std::string &dir, const Manifest &manifest,
            const std::vector<const Program *> &programs);

/// This rank's slice of `spec` from `weights`: the slice the plan's split
/// gives tp coordinate `tpIndex` of `tpSize`; zero, and nothing read, for a
/// row-parallel bias off tp coordinate 0. With `inPlaceType` (a CPU run's
/// compute dtype), a tensor stored in that dtype (F32 in a float32 run,
/// BF16 in a bfloat16 one) is used where it lies in the file mapped
/// read-only (the page cache, shared by the ranks of a host), as a view
/// whose pages are mapped in before it returns; otherwise the slice is read
/// with pread as contiguous spans and widened to float32. Either way only
/// the slice's bytes are counted as read. A mapped tensor lives as long as
/// `weights`, whose file must not change during the run.
at::Tensor loadParameter(const checkpoint::TransformerWeights &weights,
                         const ParamSpec &spec, int64_t tpSize, int64_t tpIndex,
                         std::optional<at::ScalarType> inPlaceType);

/// Refuses a tensor `name`, stored at `where`, whose shape is not `shape`;
/// `shapeFrom` says, in the message, what gives that shape ("the VAE's
/// config.json (PATH)"). Throws BadInput naming the file and both shapes.
void checkStoredShape(const checkpoint::TensorLocation &where, const std::string &name,
                      const std::vector<int64_t> &shape, const std::string &shapeFrom);

/// The whole tensor `name` at `where` as float32 (F32, F16 or BF16
/// widened), its shape checked as checkStoredShape does; a NaN or an
/// infinity is refused, naming the file and the tensor. For the VAE's and
/// the text encoders' parameters, which every decoding or encoding rank
/// reads whole.
at::Tensor readWholeTensor(const checkpoint::TensorLocation &where, const std::string &name,
                           const std::vector<int64_t> &shape, const std::string &shapeFrom);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_WEIGHTS_H
