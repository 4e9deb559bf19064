//===- DitInterfaces.cpp - the interfaces' shared machinery ---------------===//
//
// The generated interface definitions, the mesh and context types their
// methods exchange, and the accessors of the dit.* pass attributes.
//
//===----------------------------------------------------------------------===//
#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitDialect.h"
#include "dit/IR/DitPassAttrs.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"

using namespace mlir;
using namespace mlir::dit;

#include "dit/IR/DitInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Pass attributes
//===----------------------------------------------------------------------===//

StringRef mlir::dit::getTPRole(Operation *op) {
  if (auto role = op->getAttrOfType<TPRoleAttr>(kTPRoleAttrName))
    return stringifyTPRole(role.getValue());
  return StringRef();
}

void mlir::dit::setTPRole(Operation *op, StringRef role) {
  op->setAttr(kTPRoleAttrName,
              TPRoleAttr::get(op->getContext(), *symbolizeTPRole(role)));
}

SmallVector<int64_t> mlir::dit::getTPSegments(Operation *op) {
  if (auto s = op->getAttrOfType<DenseI64ArrayAttr>(kTPSegmentsAttrName))
    return SmallVector<int64_t>(s.asArrayRef());
  return {};
}

void mlir::dit::setTPSegments(Operation *op, ArrayRef<int64_t> segments) {
  op->setAttr(kTPSegmentsAttrName,
              DenseI64ArrayAttr::get(op->getContext(), segments));
}

bool mlir::dit::hasReduceStats(Operation *op) {
  return op->hasAttr(kReduceStatsAttrName);
}

/// Mesh axes from their names; the names come from the mesh, so each is one
/// of MeshAxis's.
static SmallVector<MeshAxis> meshAxes(ArrayRef<StringRef> names) {
  SmallVector<MeshAxis> axes;
  for (StringRef name : names)
    axes.push_back(*symbolizeMeshAxis(name));
  return axes;
}

void mlir::dit::setReduceStatsOver(Operation *op, ArrayRef<StringRef> axes) {
  op->setAttr(kReduceStatsAttrName,
              AxesAttr::get(op->getContext(), meshAxes(axes)));
}

std::optional<AttentionPlan> mlir::dit::getAttentionPlan(Operation *op) {
  auto plan = op->getAttrOfType<AttentionPlanAttr>(kAttentionPlanAttrName);
  if (!plan)
    return std::nullopt;
  AttentionPlan out;
  for (MeshAxis axis : plan.getHeads())
    out.heads.push_back(stringifyMeshAxis(axis).str());
  out.rows = stringifyAttentionRows(plan.getRows()).str();
  return out;
}

void mlir::dit::setAttentionPlan(Operation *op, const AttentionPlan &plan) {
  SmallVector<StringRef> heads(plan.heads.begin(), plan.heads.end());
  op->setAttr(kAttentionPlanAttrName,
              AttentionPlanAttr::get(op->getContext(), meshAxes(heads),
                                     *symbolizeAttentionRows(plan.rows)));
}

std::optional<PipelineComponent> mlir::dit::getComponent(Operation *fn) {
  if (auto c = fn->getAttrOfType<PipelineComponentAttr>(
          DitDialect::kComponentAttrName))
    return c.getValue();
  return std::nullopt;
}

bool mlir::dit::isTransformerFunction(Operation *fn) {
  std::optional<PipelineComponent> c = getComponent(fn);
  return c && (*c == PipelineComponent::Transformer ||
               *c == PipelineComponent::Transformer2);
}

std::optional<int16_t> mlir::dit::getRingAxis(Operation *op) {
  if (auto ring = op->getAttrOfType<IntegerAttr>(kRingAxisAttrName))
    return int16_t(ring.getInt());
  return std::nullopt;
}

void mlir::dit::setRingAxis(Operation *op, int16_t gridAxis) {
  op->setAttr(kRingAxisAttrName,
              Builder(op->getContext()).getI64IntegerAttr(gridAxis));
}

//===----------------------------------------------------------------------===//
// MeshContext
//===----------------------------------------------------------------------===//

int64_t mlir::dit::numElements(Type type) {
  int64_t n = 1;
  for (int64_t d : cast<ShapedType>(type).getShape())
    n *= d;
  return n;
}

SmallVector<int64_t> mlir::dit::shapeOf(Value value) {
  return SmallVector<int64_t>(
      cast<RankedTensorType>(value.getType()).getShape());
}

int64_t mlir::dit::lastDim(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape().back();
}

RankedTensorType mlir::dit::withShape(Type type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape,
                               cast<RankedTensorType>(type).getElementType());
}

int64_t MeshContext::size(StringRef name) const {
  for (const MeshAxisSize &axis : axes)
    if (axis.name == name)
      return axis.size;
  return 1;
}

int16_t MeshContext::gridAxis(StringRef name) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name)
      return int16_t(i);
  return -1;
}

int64_t MeshContext::groupSize(ArrayRef<int16_t> gridAxes) const {
  int64_t n = 1;
  for (int16_t a : gridAxes)
    n *= axes[a].size;
  return n;
}

SmallVector<StringRef> MeshContext::sequenceAxes() const {
  SmallVector<StringRef> names;
  for (const MeshAxisSize &axis : axes)
    if ((axis.name == "ring" || axis.name == "kv_gather" ||
         axis.name == "ulysses") &&
        axis.size > 1)
      names.push_back(axis.name);
  return names;
}

SmallVector<int16_t> MeshContext::sequenceGridAxes() const {
  SmallVector<int16_t> indices;
  for (StringRef name : sequenceAxes())
    indices.push_back(gridAxis(name));
  return indices;
}

int64_t MeshContext::sequenceShards() const {
  return size("ulysses") * size("ring") * size("kv_gather");
}

//===----------------------------------------------------------------------===//
// ShardingContext
//===----------------------------------------------------------------------===//

ShardingContext::ShardingContext(MLIRContext *context, const MeshContext &mesh,
                                 bool explain)
    : context(context), mesh(mesh), explaining(explain) {
  for (StringRef axis : mesh.sequenceAxes())
    sequenceAxes.push_back(*symbolizeMeshAxis(axis));
}

ValueSharding ShardingContext::ofTokenSource(Operation *op) const {
  auto sharded = dyn_cast<shard::ShardingInterface>(op);
  if (!sharded || op->getNumResults() == 0)
    return of(op->getOperand(0));
  SmallVector<AffineMap> maps = sharded.getIndexingMaps();
  AffineMap result = maps[op->getNumOperands()];
  if (result.getNumResults() < 2)
    return of(op->getOperand(0));
  AffineExpr tokens = result.getResult(1);
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (maps[i].getNumResults() > 1 && maps[i].getResult(1) == tokens)
      return of(op->getOperand(i));
  return of(op->getOperand(0));
}

ShardingAttr ShardingContext::shardingOf(const ValueSharding &v, Type type,
                                         bool partial) const {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<AxesAttr> dims(tensor.getRank(), AxesAttr::get(context, {}));
  bool tokens = v.tokens != TokenKind::None && tensor.getRank() == 3;
  if (tokens && v.tokens != TokenKind::Text)
    dims[1] = AxesAttr::get(context, sequenceAxes);
  if (v.tpSplit && tp() > 1)
    dims.back() = AxesAttr::get(context, {MeshAxis::TP});
  SmallVector<MeshAxis> partialAxes;
  if (partial && tp() > 1)
    partialAxes.push_back(MeshAxis::TP);
  return ShardingAttr::get(context, dims,
                           v.tokens == TokenKind::Joint ? v.textTokens : 0,
                           partialAxes);
}

void ShardingContext::annotate(Operation *op, ArrayRef<ValueSharding> results,
                               bool partial) {
  SmallVector<Attribute> attrs;
  for (auto [value, sharding] : llvm::zip(op->getResults(), results)) {
    known[value] = sharding;
    attrs.push_back(shardingOf(sharding, value.getType(), partial));
  }
  op->setAttr(kShardingAttrName, ArrayAttr::get(context, attrs));
}

void ShardingContext::explain(Operation *op, const Twine &why) const {
  if (explaining)
    op->emitRemark() << why;
}

//===----------------------------------------------------------------------===//
// PartitionContext
//===----------------------------------------------------------------------===//

PartitionContext::PartitionContext(MLIRContext *context,
                                   const MeshContext &mesh)
    : mesh(mesh), builder(context) {}

int64_t PartitionContext::product(ShardingAttr sharding, unsigned dim) const {
  int64_t n = 1;
  for (MeshAxis axis : sharding.axesOf(dim))
    n *= mesh.size(stringifyMeshAxis(axis));
  return n;
}

FailureOr<RankedTensorType>
PartitionContext::localType(Operation *op, Type type,
                            ShardingAttr sharding) const {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  for (unsigned d = 0; d < shape.size(); ++d) {
    int64_t n = product(sharding, d);
    int64_t kept = d == 1 ? sharding.getReplicatedText() : 0;
    if ((shape[d] - kept) % n != 0)
      return op->emitError() << "dimension " << d << " of " << type
                             << " does not split evenly over " << n
                             << " ranks";
    shape[d] = kept + (shape[d] - kept) / n;
  }
  return withShape(type, shape);
}

LogicalResult PartitionContext::setLocalTypes(Operation *op) const {
  auto shardings = op->getAttrOfType<ArrayAttr>(kShardingAttrName);
  if (!shardings)
    return success();
  for (auto [result, attr] : llvm::zip(op->getResults(), shardings)) {
    FailureOr<RankedTensorType> local =
        localType(op, result.getType(), cast<ShardingAttr>(attr));
    if (failed(local))
      return failure();
    result.setType(*local);
  }
  return success();
}

Value PartitionContext::allReduce(Location loc, Value input,
                                  ArrayRef<int16_t> axes) {
  ++numCollectives;
  return shard::AllReduceOp::create(builder, loc, input.getType(),
                                    mesh.gridName, axes, input,
                                    shard::ReductionKind::Sum);
}

Value PartitionContext::allToAll(Location loc, Value input, int16_t axis,
                                 int64_t split, int64_t concat) {
  int64_t n = mesh.groupSize({axis});
  SmallVector<int64_t> shape = shapeOf(input);
  shape[split] /= n;
  shape[concat] *= n;
  ++numCollectives;
  return shard::AllToAllOp::create(builder, loc,
                                   withShape(input.getType(), shape),
                                   mesh.gridName, ArrayRef<int16_t>{axis},
                                   input, APInt(64, split), APInt(64, concat));
}

Value PartitionContext::allGather(Location loc, Value input,
                                  ArrayRef<int16_t> axes, int64_t dim) {
  SmallVector<int64_t> shape = shapeOf(input);
  shape[dim] *= mesh.groupSize(axes);
  ++numCollectives;
  return shard::AllGatherOp::create(builder, loc,
                                    withShape(input.getType(), shape),
                                    mesh.gridName, axes, input, APInt(64, dim));
}

Value PartitionContext::allSlice(Location loc, Value input, int16_t axis,
                                 int64_t dim) {
  SmallVector<int64_t> shape = shapeOf(input);
  shape[dim] /= mesh.groupSize({axis});
  return shard::AllSliceOp::create(builder, loc,
                                   withShape(input.getType(), shape),
                                   mesh.gridName, ArrayRef<int16_t>{axis},
                                   input, APInt(64, dim));
}
