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

def TfmRecordEntryBoundsPass
    : Pass<"tfm-record-entry-bounds", "func::FuncOp"> {
  let summary = "Record which entry arguments hold indices, and their bounds";
  let description = [{
    For a public function with a body: every argument that an op uses as an
    index operand (IndexOperandsOpInterface: token ids into the embedding
    rows, labels into the vocabulary) gets its bound recorded in the
    function's `tfm.entry_index_bounds` attribute, a list of
    `array<i64: argument, bound, allowed>` (`allowed`: the one value outside
    `[0, bound)` that the argument may hold, such as `ignore_index`, or
    `bound` when there is none). CompiledFunction checks the arguments
    against it before every call, so an id of -10^8 is an error naming the
    argument, not a read far outside the table. Bounds that are not static
    are not recorded. Runs on tfm ops (the pipelines run it first in
    `tfm-lower-to-linalg`).
  }];
}

def TfmRecordEntryDimsPass
    : Pass<"tfm-record-entry-dims", "func::FuncOp"> {
  let summary = "Record which dynamic argument dimensions must agree";
  let description = [{
    For a public function with a body, on linalg and tensor ops: dimensions
    that a structured op's indexing maps tie to one loop, that `tensor.dim`
    feeds into `tensor.empty`, a slice or an `expand_shape`, and that flow
    through casts, slices, unit reassociations and `scf` loops and branches
    are the same size.
    Each class of these that holds a dynamic dimension of an argument and
    either another one or a static size is recorded in the function's
    `tfm.entry_dims` attribute, a list of `array<i64: size, argument,
    dimension, argument, dimension, ...>` (`size` -1 when the class has no
    static size). CompiledFunction checks the arguments' sizes against it
    before every call: mismatched batch or sequence sizes are an error naming
    both arguments instead of reads out of bounds in the generated code.
    Classes that would need two different static sizes are dropped (the
    rules above never produce them on valid IR).

    A `tensor.extract` at a `linalg.index` inside a structured op reads its
    tensor at every index of that loop: the tensor's dimension must be at
    least the loop's size (labels read at each row of the logits). Where
    either side is an argument's dynamic dimension, the function's
    `tfm.entry_dims_at_least` attribute gets `array<i64: argument,
    dimension, argument, dimension>` (the first at least the second; an
    argument of -1 stands for a static size in place of the dimension).
  }];
}

#endif // TFM_ANALYSIS_PASSES
