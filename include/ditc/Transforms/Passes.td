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

#endif // DITC_TRANSFORMS_PASSES_TD
