//===- Passes.td - tfm recompute planning passes -----------*- tablegen -*-===//

#ifndef TFM_RECOMPUTE_PASSES
#define TFM_RECOMPUTE_PASSES

include "mlir/Pass/PassBase.td"

def TfmPlanRecomputePass : Pass<"tfm-plan-recompute", "ModuleOp"> {
  let summary = "Choose, exactly, which saved activations the backward rebuilds";
  let description = [{
    Runs after `tfm-autodiff`. For every forward `tfm.repeat` whose saved
    slots a backward `tfm.repeat` reads, and for each layer kind, solves an
    integer program (COIN-OR CBC, proven optimal) over the forward body: each
    value is saved, offloaded or rebuilt from values that are, each op's
    rebuild costs its FLOPs (CostOpInterface), and the saved bytes per token
    fit `budget`:

    - a fraction in (0, 1] of the kind's save-all bytes (`0.5`, `50%`);
    - a size per token and layer with a unit (`4096B`, `68KiB`, `1.5MiB`);
    - `save-all` (what tfm-autodiff saved; the module is unchanged),
      `selective` (rebuild element-wise ops, norms, RoPE and views only, as
      few bytes as that allows), `full` (keep each layer's carried inputs
      only and replay the layer).

    It picks the fewest recompute FLOPs that fit, then the least traffic of
    the rebuilt ops (gathers and views cost no FLOPs but are not free), then
    the fewest bytes (`selective`: bytes, FLOPs, traffic).
    The forward scan then yields the chosen slots only, and each backward
    body rebuilds what it no longer reads, cloning the forward ops right
    before the first use (clones carry `tfm.recomputed`). With
    `offload-bandwidth` > 0 a value may instead be offloaded to host memory
    when the bytes moved fit behind the layer's forward compute at
    `device-tflops`; such slots are listed in `offloaded` (the runtimes keep
    them on the device for now). The backward scan gets a
    `tfm.recompute_plan` attribute describing the plan per kind, which
    `tfm-memory-report` reads. Errors: a budget below the least any plan
    saves names that minimum; a malformed budget names the option.
  }];
  let options = [
    Option<"budget", "budget", "std::string", "\"save-all\"",
           "A fraction of the save-all bytes, a size per token and layer "
           "(B, KiB, MiB), or save-all, selective, full">,
    Option<"batch", "batch", "int64_t", "1",
           "Batch size the per-token costs are evaluated at">,
    Option<"seq", "seq", "int64_t", "4096",
           "Sequence length the per-token costs are evaluated at">,
    Option<"offloadBandwidth", "offload-bandwidth", "double", "0",
           "Host link bandwidth in GB/s for offloading (0: never offload)">,
    Option<"deviceTflops", "device-tflops", "double", "989",
           "Device throughput in TFLOP/s that hides offload traffic">,
    Option<"frontier", "frontier", "bool", "true",
           "Also plan 100/75/50/35/25/15% of save-all for the memory "
           "report's frontier (six more solves per kind)">,
  ];
}

def TfmMemoryReportPass : Pass<"tfm-memory-report", "ModuleOp"> {
  let summary = "Print the activation memory of the training step";
  let description = [{
    For every function with a backward scan: per layer kind, the save-all
    bytes per token, the bytes saved under the current plan (the
    `tfm.recompute_plan` tfm-plan-recompute left, or save-all), the FLOPs
    per token spent rebuilding and the step's FLOPs per token, and which
    values are saved, rebuilt and offloaded; the values outside the layers
    the backward reads; and the peak activation bytes for `batch` x `seq`,
    simulated op by op over the forward and backward (values whose size
    depends on batch or sequence, live from definition to last use; saved
    slices freed after their layer's backward); and how many parameters
    train (gradients and AdamW state exist for those alone) and how many
    are frozen, with the AdamW state each of `ranks` data-parallel ranks
    holds (all of it, or with `zero=1` its dim-0 shards, the largest
    rank's). `json=PATH` writes an object
    with `batch`, `seq` and `functions`, one per function: `name`, `budget`,
    `layer_kinds` (each with `name`, `layers`, `save_all_bytes_per_token`,
    `saved_bytes_per_token`, `offloaded_bytes_per_token`,
    `recompute_flops_per_token`, `recompute_traffic_bytes_per_token`,
    `step_flops_per_token`, the value lists
    `saved`, `recomputed`, `offloaded` and `frontier`), `outside_layers` and
    `peak_activation_bytes`, `trained_parameters`, `frozen_parameters` and
    `optimizer_state_bytes_per_rank`;
    `svg=PATH` draws the activation memory over the
    step and each kind's frontier (saved bytes vs recompute FLOPs) with the
    chosen plan marked. The module is unchanged.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", "1", "Batch size">,
    Option<"seq", "seq", "int64_t", "4096", "Sequence length">,
    Option<"ranks", "ranks", "int64_t", "1",
           "Data-parallel ranks (the optimizer state's split with zero=1)">,
    Option<"zero", "zero", "int64_t", "0",
           "1: ZeRO-1, each rank holds dim-0 shards of the optimizer state">,
    Option<"jsonPath", "json", "std::string", "\"\"",
           "Also write the report as JSON to this file">,
    Option<"svgPath", "svg", "std::string", "\"\"",
           "Also draw the report as SVG to this file">,
  ];
}

#endif // TFM_RECOMPUTE_PASSES
