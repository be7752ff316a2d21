//===- Passes.td - tfm analysis passes ---------------------*- tablegen -*-===//

#ifndef TFM_ANALYSIS_PASSES
#define TFM_ANALYSIS_PASSES

include "mlir/Pass/PassBase.td"

def TfmCostReportPass : Pass<"tfm-cost-report", "ModuleOp"> {
  let summary = "Print FLOPs and bytes of a function for a batch and sequence length";
  let description = [{
    Sums each op's CostOpInterface over function `func` (layer bodies of a
    `tfm.repeat` once per layer that runs them) for `batch` x `seq` tokens,
    and prints a table per op name to stdout: executions, FLOP, bytes read and
    written, then totals and the cost per token. The module is unchanged.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"forward\"", "The function to report">,
    Option<"batch", "batch", "int64_t", "1", "Batch size">,
    Option<"seq", "seq", "int64_t", "2048", "Sequence length">,
  ];
}

#endif // TFM_ANALYSIS_PASSES
