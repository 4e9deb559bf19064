//===- RequestInputs.h - a request's tensors, read against the plan -*- C++ -*-===//
//
// The tensors a request may bring instead of drawing them from its seed:
// text embeddings, pooled text embeddings and the initial latents, each an
// .npy file whose shape must be the plan's; and whether its guidance scale
// has anything to act on. Each throws BadInput naming the file and shapes.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_IO_REQUESTINPUTS_H
#define DITC_RUNTIME_IO_REQUESTINPUTS_H

#include "ditc/Runtime/IO/Requests.h"
#include "ditc/Runtime/Plan/Program.h"

#include <ATen/ATen.h>

#include <vector>

namespace ditc::runtime {

/// Reads a request's --text-embeds, [branches, B, T, E], as one tensor per
/// branch.
std::vector<at::Tensor> readTextEmbeds(const Request &request, const Manifest &m);

/// Reads a request's --pooled-embeds, [branches, B, pooled_dim], as one
/// tensor per branch.
std::vector<at::Tensor> readPooledEmbeds(const Request &request, const Manifest &m);

/// Reads a request's --text-mask, [branches, B, T] of 0 (padding) and 1
/// (valid), as one tensor per branch. Refuses a plan whose programs take
/// no text mask, any other value, and a row with no valid token (whose
/// mean would be 0/0).
std::vector<at::Tensor> readTextMask(const Request &request, const Manifest &m,
                                     const std::vector<Program> &programs);

/// A guidance scale needs something to act on: the CFG combine of a plan
/// with two or more branches, or the guidance input of a distilled model.
void checkGuidanceScale(const Request &request, const Manifest &m,
                        const std::vector<Program> &programs);

/// Reads a request's --latents, the initial noise in the layout --output
/// writes, [B, C, F, H, W].
at::Tensor readLatents(const Request &request, const Manifest &m);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_IO_REQUESTINPUTS_H
