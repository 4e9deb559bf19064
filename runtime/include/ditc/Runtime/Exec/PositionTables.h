//===- PositionTables.h - rotary and sinusoidal position tables -*- C++ -*-===//
//
// The position tables the executor builds once per op and keeps: the rotary
// cos/sin tables of dit.rope (axes-style, LTX-Video's, Qwen-Image's centred
// grid, or Mochi's learned frequencies) and dit.sincos_pos_embed's table.
// Each covers this rank's rows only: `latentBlock` is the rank's block of a
// sequence split over sequence_shards blocks (0 when it is not split).
// Angles are computed in float64 and rounded once to the table's type.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_EXEC_POSITIONTABLES_H
#define DITC_RUNTIME_EXEC_POSITIONTABLES_H

#include "ditc/Runtime/Plan/Program.h"

#include <ATen/ATen.h>

namespace ditc::runtime {

/// A rotary table: out = x * cos + x[..., partner] * sin, with cos and sin
/// [rows, heads or 1, d] and partner [d] each channel's other half of its
/// pair (itself for channels that stay unrotated).
struct RopeTable {
  at::Tensor cos, sin, partner;
};

/// Learned per-head frequencies W [3, heads, d/2] (Mochi): pair f of head h
/// turns by sum_a position[a] * W[a, h, f]; text rows stay.
RopeTable learnedRopeTable(const OpAttrs &a, const at::Tensor &frequencies, int64_t seq,
                           int64_t heads, int64_t d, int64_t latentBlock,
                           at::TensorOptions options);

/// Fixed frequencies over the grid's axes (axes_dims and theta, or one
/// table over all heads for LTX-Video, where this rank holds tp block
/// `tpCoordinate` of the channels).
RopeTable rotaryTable(const OpAttrs &a, int64_t seq, int64_t width, int64_t d,
                      int64_t latentBlock, int64_t tpCoordinate,
                      at::TensorOptions options);

/// dit.sincos_pos_embed's [image rows, width] table for this rank's block.
at::Tensor sincosPositionTable(const OpAttrs &a, int64_t image, int64_t width,
                               int64_t latentBlock, at::TensorOptions options);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_EXEC_POSITIONTABLES_H
