//===- Passes.td - ditc pass declarations ------------------*- tablegen -*-===//
#ifndef DITC_TRANSFORMS_PASSES_TD
#define DITC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckLegality : Pass<"dit-check-legality", "::mlir::ModuleOp"> {
  let summary = "Check a parallel configuration against every sharding rule";
  let description = [{
    Judges the module's deployment (`dit.deployment`, or `dit.mesh` for a
    single transformer placement) against every legality rule, using the
    model facts in `dit.model` / `dit.workload` and the attention ops of the
    transformer functions. Every violated rule is reported, not only the
    first: errors as errors, cross-node placement as warnings, resolved
    defaults (backend, pipeline split) as remarks. Each message starts with
    the rule's stable id in brackets. The pass fails when any rule reports
    an error; it never changes the IR.

    Input:

    ```mlir
    module attributes {dit.mesh = #dit.mesh<ulysses = 4>,
                       dit.model = #dit.model<... num_heads = 38 ...>, ...} {
      func.func @transformer(...) {
        %o = dit.attention joint %q, %k, %v {num_heads = 38 : i64, ...}
      }
    }
    ```

    Output (diagnostics):

    ```
    error: [ulysses-heads] ulysses degree 4 does not divide the 38 TP-local
           heads (38 heads / tp 1)
    ```

    `ditc check` runs the same analysis and prints the diagnostics as
    `error[rule-id]: message`.
  }];
  let dependentDialects = ["::mlir::dit::DitDialect"];
  let statistics = [
    Statistic<"numErrors", "errors", "Rule errors reported">,
    Statistic<"numWarnings", "warnings", "Rule warnings reported">,
    Statistic<"numNotes", "notes", "Rule notes reported">
  ];
}

def MeshLayout : Pass<"dit-mesh-layout", "::mlir::ModuleOp"> {
  let summary = "Lay the deployment's ranks out on a shard.grid with named axes";
  let description = [{
    Emits `shard.grid @mesh` with one grid axis per parallel axis, in layout
    order (outermost first), records which name each grid axis has in
    `dit.mesh_axes`, and computes every axis's group rank lists once, in
    `dit.groups`. Ranks are row-major over the order. The default order
    dp, cfg, pp, ring, kv_gather, ulysses, tp keeps TP groups contiguous,
    Ulysses groups inside the TP stride and ring groups strided, with CFG,
    PP and DP outermost. `mesh-order` (or the deployment's `mesh_order`)
    overrides it. Replicas given as explicit rank lists keep their ranks;
    the layout applies inside each replica.

    Input: `module attributes {dit.mesh = #dit.mesh<cfg = 2, tp = 2>}`

    Output:

    ```mlir
    module attributes {
      dit.groups = {cfg = [array<i64: 0, 2>, array<i64: 1, 3>], ...,
                    tp = [array<i64: 0, 1>, array<i64: 2, 3>], ...},
      dit.mesh_axes = ["dp", "cfg", "pp", "ring", "kv_gather", "ulysses", "tp"]} {
      shard.grid @mesh(shape = 1x2x1x1x1x1x2)
    }
    ```
  }];
  let options = [
    ListOption<"meshOrder", "mesh-order", "std::string",
               "Mesh axes outermost first (a permutation of dp, cfg, pp, ring, "
               "kv_gather, ulysses, tp)">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

#endif // DITC_TRANSFORMS_PASSES_TD
