//===- DitOps.h - dit operations --------------------------------*- C++ -*-===//
#ifndef DIT_IR_DITOPS_H
#define DIT_IR_DITOPS_H

#include "dit/IR/DitAttrs.h"
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitTraits.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dit {
// ShardingInterface's generated declarations name the reduction kind
// unqualified.
using ::mlir::shard::ReductionKind;
} // namespace mlir::dit

#define GET_OP_CLASSES
#include "dit/IR/DitOps.h.inc"

namespace mlir::dit {
/// How many rows (dim -2) of the VAE activation `type` one of the decoder's
/// `latentRows` latent rows has become (its upsampling so far): the rows a
/// band of latent rows holds there, per latent row. 0 when `type` is not an
/// image or video tensor or its rows are not a multiple of `latentRows`.
int64_t rowsPerLatentRow(Type type, int64_t latentRows);

/// The channels (dim 1) of a VAE decoder activation, which the decoder's
/// ops lay out as [batch, channels, (frames,) rows, cols].
int64_t vaeChannelsOf(Value value);

/// The tensor-parallel role of a linear in a text encoder's graph, read
/// from the graph (Megatron's split, as for the transformer's blocks):
/// "column" for one whose result feeds an attention or the feed-forward's
/// activation or gate product (q, k, v; wi, wi_0, wi_1, fc1), which each
/// rank computes for its heads or its slice of the inner width; "row" for
/// one that reads an attention's or the feed-forward's result (o, wo,
/// out_proj, fc2), whose partial sums the ranks all-reduce; "" for the rest
/// (CLIP's pooled projection), which stay whole.
llvm::StringRef textEncoderTPRole(LinearOp linear);
} // namespace mlir::dit

#endif // DIT_IR_DITOPS_H
