//===- DitInterfaceTypes.h - what the dit op interfaces exchange -*- C++ -*-===//
//
// The C++ types of DitInterfaces.td's methods: the mesh as the rules see
// it, the per-run state of sharding propagation and of partitioning (kept
// in these context objects, not in the passes, so a pass instance holds no
// state between runs), and the records the plan reads (parameters,
// traffic, implicit collectives).
//
//===----------------------------------------------------------------------===//
#ifndef DIT_IR_DITINTERFACETYPES_H
#define DIT_IR_DITINTERFACETYPES_H

#include "dit/IR/DitAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::dit {

/// One axis of the laid-out grid.
struct MeshAxisSize {
  std::string name; // "dp", "cfg", "pp", "ring", "kv_gather", "ulysses", "tp"
  int64_t size = 1;
};

/// The laid-out mesh: the grid's axes in grid order. Built by the passes
/// from the module's shard.grid (ditc::meshContextOf).
struct MeshContext {
  std::string gridName;
  llvm::SmallVector<MeshAxisSize> axes; // grid axis i is axes[i]

  /// The size of the axis named `name`; 1 when the grid has no such axis.
  int64_t size(llvm::StringRef name) const;
  /// The grid index of the axis named `name`; -1 when absent.
  int16_t gridAxis(llvm::StringRef name) const;
  /// Ranks in one group over the grid axes `gridAxes`.
  int64_t groupSize(llvm::ArrayRef<int16_t> gridAxes) const;
  /// The axes that split image tokens (ring, kv_gather, ulysses above 1),
  /// in grid order: a rank's token block is row-major over them.
  llvm::SmallVector<llvm::StringRef> sequenceAxes() const;
  llvm::SmallVector<int16_t> sequenceGridAxes() const;
  /// Ways the image sequence is split: ulysses x ring x kv_gather.
  int64_t sequenceShards() const;
};

/// Which tokens a value's sequence dimension holds.
enum class TokenKind { None, Image, Text, Joint };

/// What sharding propagation knows about one value.
struct ValueSharding {
  TokenKind tokens = TokenKind::None;
  bool tpSplit = false;               // feature (last) dimension split over tp
  llvm::SmallVector<int64_t> segments; // global widths of the TP-split pieces
  int64_t textTokens = 0;             // for joint sequences
};

/// The state of one dit-propagate-sharding run: the mesh, what is known
/// about each value so far, and whether to explain decisions.
class ShardingContext {
public:
  ShardingContext(MLIRContext *context, const MeshContext &mesh, bool explain);

  const MeshContext &getMesh() const { return mesh; }
  MLIRContext *getContext() const { return context; }
  int64_t tp() const { return mesh.size("tp"); }
  /// The mesh axes splitting image tokens, as attribute names.
  llvm::ArrayRef<MeshAxis> getSequenceAxes() const { return sequenceAxes; }

  ValueSharding of(Value value) const { return known.lookup(value); }
  void set(Value value, const ValueSharding &sharding) {
    known[value] = sharding;
  }
  /// The sharding of the operand that carries `op`'s tokens: for an op with
  /// upstream ShardingInterface indexing maps, the first operand whose
  /// sequence dimension is indexed by the loop that indexes the result's;
  /// operand 0 otherwise.
  ValueSharding ofTokenSource(Operation *op) const;

  /// The #dit.sharding of a value of `type` with sharding `v`.
  ShardingAttr shardingOf(const ValueSharding &v, Type type,
                          bool partial) const;
  /// Records `results` for `op`'s results and annotates the op.
  void annotate(Operation *op, llvm::ArrayRef<ValueSharding> results,
                bool partial = false);
  /// A remark on `op` when explanations are on.
  void explain(Operation *op, const llvm::Twine &why) const;
  bool isExplaining() const { return explaining; }

private:
  MLIRContext *context;
  const MeshContext &mesh;
  bool explaining;
  llvm::SmallVector<MeshAxis> sequenceAxes;
  llvm::DenseMap<Value, ValueSharding> known;
};

/// The state of one dit-insert-collectives run: the mesh, the builder new
/// ops are created with, and the collectives created so far.
class PartitionContext {
public:
  PartitionContext(MLIRContext *context, const MeshContext &mesh);

  const MeshContext &getMesh() const { return mesh; }
  OpBuilder &getBuilder() { return builder; }
  /// The collectives created since the last call.
  int64_t takeNumCollectives() { return std::exchange(numCollectives, 0); }

  /// Ranks splitting dimension `dim` of a value with `sharding`.
  int64_t product(ShardingAttr sharding, unsigned dim) const;
  /// The local type of a value with `sharding` and global type `type`.
  FailureOr<RankedTensorType> localType(Operation *op, Type type,
                                        ShardingAttr sharding) const;
  /// Gives each result of `op` its local type per its dit.sharding.
  LogicalResult setLocalTypes(Operation *op) const;

  /// Collectives on the grid, created at the builder's insertion point.
  Value allReduce(Location loc, Value input, llvm::ArrayRef<int16_t> axes);
  Value allToAll(Location loc, Value input, int16_t axis, int64_t split,
                 int64_t concat);
  Value allGather(Location loc, Value input, llvm::ArrayRef<int16_t> axes,
                  int64_t dim);
  /// Not a collective: each rank keeps its slice, with no traffic.
  Value allSlice(Location loc, Value input, int16_t axis, int64_t dim);

private:
  const MeshContext &mesh;
  OpBuilder builder;
  int64_t numCollectives = 0;
};

/// One checkpoint parameter an op reads.
struct ParameterSpec {
  std::string name;                  // its name in the checkpoint
  llvm::SmallVector<int64_t> shape;  // its global shape
  int64_t splitDim = -1;             // the dimension tp splits; -1: whole
  llvm::SmallVector<int64_t> segments; // global widths of the split pieces
  bool rank0Only = false;            // added once per tp group (row bias)
  /// The shape the diffusers checkpoint stores it in, when that differs
  /// from `shape` (of which `shape` is the row-major reshape); else empty.
  llvm::SmallVector<int64_t> checkpointShape;
};

/// Communication an op performs itself (not through a shard op).
struct ImplicitCollective {
  std::string kind;      // "ring_attention", "all_reduce_stats"
  int16_t gridAxis = -1; // -1: the tp axis, resolved by the caller
};

/// Per-execution traffic of an op that communicates itself.
struct Traffic {
  std::string kind; // collective kind it is counted as
  std::string axis; // mesh axis name the bytes are sent over
  int64_t count = 0;
  double bytes = 0;
};

/// Shape helpers the rules share, on statically shaped ranked tensors.
int64_t numElements(Type type);
llvm::SmallVector<int64_t> shapeOf(Value value);
int64_t lastDim(Value value);
/// `type`'s element type with `shape`.
RankedTensorType withShape(Type type, llvm::ArrayRef<int64_t> shape);

} // namespace mlir::dit

#endif // DIT_IR_DITINTERFACETYPES_H
