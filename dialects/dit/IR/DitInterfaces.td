//===- DitInterfaces.td - per-op sharding, parameters and cost -*- tablegen -*-===//
//
// What the partitioner and the plan need to know about each op, declared
// once and implemented by the op itself: how it shards (propagation and the
// local rewrite), which checkpoint parameters it reads, and what it costs.
// The passes and the plan dispatch through these interfaces instead of
// testing op names, so a new op touches its .td entry and one .cpp. The
// shape follows Shardy's ShardingRuleOpInterface and upstream Shard's
// ShardingInterface; ops whose iteration space is affine implement that
// upstream interface too (see DitOps.td).
//
// The C++ types the methods exchange are in DitInterfaceTypes.h.
//
//===----------------------------------------------------------------------===//

#ifndef DIT_INTERFACES_TD
#define DIT_INTERFACES_TD

include "mlir/IR/OpBase.td"

def DitShardableOpInterface : OpInterface<"DitShardableOpInterface"> {
  let description = [{
    The dit sharding rule of an op. `propagateSharding` is
    `dit-propagate-sharding`'s step: from the operands' shardings (in the
    context) and the mesh it decides the results' shardings, records them as
    `dit.sharding`, and sets the pass attributes the op needs later
    (`dit.tp`, `dit.reduce_stats_over`, `dit.attention_plan`). `partition`
    is `dit-insert-collectives`'s step: it rewrites the annotated op to the
    SPMD program of one rank; the default gives each result its local type.
  }];
  let cppNamespace = "::mlir::dit";
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Decides the shardings of the op's results from those of its operands
        (`context.of(value)`), records them with `context.annotate`, and sets
        the attributes later passes read. Fails with an error on the op when
        the operands' shardings cannot meet.
      }],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"propagateSharding",
      /*args=*/(ins "::mlir::dit::ShardingContext &":$context)
    >,
    InterfaceMethod<
      /*desc=*/[{
        Rewrites the op, annotated by `propagateSharding`, to one rank's
        program: local result types and any collectives the op's sharding
        needs around it, built with `context`'s builders.
      }],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"partition",
      /*args=*/(ins "::mlir::dit::PartitionContext &":$context),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return context.setLocalTypes($_op.getOperation());
      }]
    >,
    InterfaceMethod<
      /*desc=*/[{
        The communication a partitioned op performs itself rather than
        through a `shard` op (ring attention's K/V rotation, a norm's
        statistics all-reduce), for the collective traces of
        `dit-verify-collectives`; none by default.
      }],
      /*retTy=*/"std::optional<::mlir::dit::ImplicitCollective>",
      /*methodName=*/"getImplicitCollective",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return std::nullopt;"
    >,
  ];
}

def DitParameterOpInterface : OpInterface<"DitParameterOpInterface"> {
  let description = [{
    The checkpoint parameters an op reads, with their global shapes and, for
    a TP-split op, the dimension tensor parallelism splits and its segments.
    The plan lists them per op so that each rank loads only its slice.
  }];
  let cppNamespace = "::mlir::dit";
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Appends the parameters the op reads. `tp` is the tensor-parallel
        degree the op was partitioned for: the op's types are local, the
        specs' shapes global.
      }],
      /*retTy=*/"void",
      /*methodName=*/"getParameters",
      /*args=*/(ins "int64_t":$tp,
                    "::llvm::SmallVectorImpl<::mlir::dit::ParameterSpec> &":$parameters)
    >,
  ];
}

def DitCostOpInterface : OpInterface<"DitCostOpInterface"> {
  let description = [{
    What one execution of an op costs, for the plan's per-step accounting
    and the cost model: floating-point operations from its (local) types,
    and the bytes it sends itself when partitioned.
  }];
  let cppNamespace = "::mlir::dit";
  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Floating-point operations of one execution on the op's types: a GEMM
        counts 2·M·N·K, attention 4·B·H·Lq·Lk·d (QKᵀ and PV), norms and
        elementwise ops one per output element.
      }],
      /*retTy=*/"int64_t",
      /*methodName=*/"getFlops",
      /*args=*/(ins)
    >,
    InterfaceMethod<
      /*desc=*/[{
        Appends the traffic the partitioned op sends itself per execution
        (ring attention's K/V shifts, a norm's statistics all-reduce); none
        by default. Traffic through `shard` ops is counted from those ops.
      }],
      /*retTy=*/"void",
      /*methodName=*/"getTraffic",
      /*args=*/(ins "const ::mlir::dit::MeshContext &":$mesh,
                    "::llvm::SmallVectorImpl<::mlir::dit::Traffic> &":$traffic),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return;"
    >,
  ];
}

#endif // DIT_INTERFACES_TD
