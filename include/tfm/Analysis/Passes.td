//===- Passes.td - tfm analysis passes ---------------------*- tablegen -*-===//

#ifndef TFM_ANALYSIS_PASSES
#define TFM_ANALYSIS_PASSES

include "mlir/Pass/PassBase.td"

def TfmCostReportPass : Pass<"tfm-cost-report", "ModuleOp"> {
  let summary = "Print FLOPs and bytes of every function for a batch and sequence length";
  let description = [{
    Sums each op's CostOpInterface over every function with a body (or only
    `func`, when given) — the forward and its derived `_vjp` alike — with
    layer bodies of a `tfm.repeat` counted once per layer that runs them, for
    `batch` x `seq` tokens. Prints a table per function to stdout:
    executions, FLOP, bytes read and written per op name, then totals, the
    kernel count (executions of ops that move data; views such as
    `tfm.reshape` are not kernels) and the cost per token. With `json=PATH`
    it also writes the same as JSON: an object with `batch`, `seq` and
    `functions`, a list with one object per function holding `name`, `ops`
    (a list of objects: `name`, `executions`, `flops`, `bytes_read`,
    `bytes_written`) and `total` (`flops`, `bytes_read`, `bytes_written`,
    `kernels`). The module is unchanged.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"\"",
           "The function to report (empty: every function)">,
    Option<"batch", "batch", "int64_t", "1", "Batch size">,
    Option<"seq", "seq", "int64_t", "2048", "Sequence length">,
    Option<"jsonPath", "json", "std::string", "\"\"",
           "Also write the report as JSON to this file">,
  ];
}

#endif // TFM_ANALYSIS_PASSES
