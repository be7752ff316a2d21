//===- Passes.td - tfm dialect passes ----------------------*- tablegen -*-===//

#ifndef TFM_DIALECT_TFM_TRANSFORMS_PASSES
#define TFM_DIALECT_TFM_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TfmCheckWeightMapPass : Pass<"tfm-check-weight-map", "ModuleOp"> {
  let summary = "Check that the weight map of a module is complete and consistent";
  let description = [{
    A runner binds checkpoint tensors to function arguments through their
    `#tfm.param` attributes alone, so the map must be unambiguous:

    - in every function that has parameters, each tensor argument that is
      not an input (ids, positions, labels: integer tensors) carries a
      `tfm.param`;
    - no two parameters, nor a parameter and a `tied` alias, claim the same
      HF name (after expanding `{layer}` over the stacked dimension);
    - a stacked parameter is used only as a `tfm.repeat` weight whose
      `num_layers` equals its leading dimension.

    The module is left unchanged; violations are errors naming the argument.
  }];
}

def TfmSplitLayersPass : Pass<"tfm-split-layers", "func::FuncOp"> {
  let summary = "Run a model's layers in several scans, split at given layers";
  let description = [{
    Splits each forward `tfm.repeat` that runs across one of the model
    layers `at` (layer b: the layers below b and those from b on run in
    different scans) into consecutive scans. Each keeps only the layer
    kinds it runs (renumbered, with its part of the schedule and kind
    names), carries the previous one's results, and has `first_layer` set
    to its first model layer. Each stacked weight (a stacked `#tfm.param`
    argument read by that scan alone) is replaced, where it stood, by one
    argument per scan that reads it: the same HF name template, `layers`
    listing its own HF layers, so the weight map still names every tensor
    once (`tfm-check-weight-map`). Stacked outputs are concatenated back.
    Results are those of the single scan.

    What it is for: per-layer choices become per-value ones. `tfm-train
    --freeze 'model\.layers\.[0-7]\.'` splits at layer 8; the scan of
    frozen layers then gets no backward at all (no trainable value reaches
    it), and LoRA on some layers only adapts the scans of those layers.

    A backward scan, or one whose stacked inputs are not such arguments,
    is an error naming the layer; nothing is changed then.
  }];
  let options = [
    ListOption<"layers", "at", "int64_t", "Model layers to split before">,
  ];
}

//===----------------------------------------------------------------------===//
// Fusion (tfm-fuse runs them in this order; each matches structure, never a
// model_type, and leaves what it does not match as it is)
//===----------------------------------------------------------------------===//

def TfmFuseGluPass : Pass<"tfm-fuse-glu", "func::FuncOp"> {
  let summary = "act(x·Wgᵀ) * (x·Wuᵀ) -> swiglu / geglu of one packed matmul";
  let description = [{
    In a `tfm.repeat` layer body, `tfm.mul(tfm.silu(matmul(x, Wg)),
    matmul(x, Wu))` (or `tfm.gelu_tanh`) where both weights are stacked
    parameters read by that one matmul becomes `tfm.swiglu` (`tfm.geglu`)
    of `matmul(x, [Wu | Wg])`. The two parameters become one argument with
    `mapping = fuse` over their HF sources (up first), so checkpoints load
    and gradients unbind unchanged. Left alone: a weight with older names,
    a different layer set, a bias on one side only, an activation or
    projection used elsewhere, a scale between matmul and activation (muP).
    A LoRA branch added to either projection (`matmul + delta`, from
    `tfm-apply-lora`) still packs: the deltas join the packed projection
    (`packed + concat(du | dg)`, zeros for a half without one).

    Already packed projections (Phi-3's `gate_up_proj`, the grouped expert
    GEMMs of MoE layers): `mul(act(a), b)` with `a`, `b` the two halves of
    one `tfm.split` along the last dimension becomes the GLU of the split's
    input, `gate_first` when the gate is the first half.
  }];
  let dependentDialects = ["::mlir::tfm::TfmDialect"];
}

def TfmPackProjectionsPass : Pass<"tfm-pack-projections", "func::FuncOp"> {
  let summary = "Matmuls of one input with stacked weights -> one packed matmul + split";
  let description = [{
    In a `tfm.repeat` layer body, two or more `nt` matmuls of the same input
    whose weights (and biases, all or none) are stacked parameters read only
    there become one matmul with the concatenated weight and a `tfm.split`
    of its result (q, k and v projections; DeltaNet's four). The weight map
    is rewritten as by `tfm-fuse-glu` (sources in the order of the matmuls).
    Every layer kind that reads the weights is rewritten, or none is.
    Frozen weights pack only with frozen ones and trained with trained
    (LoRA: the frozen base's q, k, v in one GEMM, their adapters' `A` in
    another), so a packed weight is wholly one or the other.
  }];
  let dependentDialects = ["::mlir::tfm::TfmDialect"];
}

def TfmFuseAttentionPass : Pass<"tfm-fuse-attention", "func::FuncOp"> {
  let summary = "split heads + (qk_norm) + rope + attention -> qkv_(qk_norm_)rope + flash_attention";
  let description = [{
    `tfm.attention(q, k, v)` whose q, k, v are the three results of a
    `tfm.split` of one packed projection (each reshaped to heads of one
    head size), optionally through a per-head `tfm.qk_norm` and one
    `tfm.rope` each on q and k with equal attributes, becomes
    `tfm.qkv_qk_norm_rope` (or `tfm.qkv_rope`) on the packed heads and
    `tfm.flash_attention` (sinks, window, softcap and scale kept, `lse`
    saved for the backward). Left alone: interleaved RoPE, RoPE on one side
    only, different RoPE attributes, whole-projection q/k norms, value head
    sizes that differ, a q, k or v used elsewhere. A q, k or v with a LoRA
    branch added to its slice (`tfm.add` of the split result and a delta,
    from `tfm-apply-lora`) still fuses: the deltas join the packed
    projection first (`packed + concat(dq | dk | dv)`, zeros where one has
    none).
  }];
  let dependentDialects = ["::mlir::tfm::TfmDialect"];
}

def TfmFuseResidualRmsNormPass
    : Pass<"tfm-fuse-residual-rmsnorm", "func::FuncOp"> {
  let summary = "residual add + RMSNorm -> fused_residual_rmsnorm, across layers too";
  let description = [{
    `tfm.rmsnorm(tfm.add(a, b))` becomes `tfm.fused_residual_rmsnorm(b, a)`
    (the sum is its `residual_out`). Across the layer boundary: when every
    layer body of a `tfm.repeat` starts by normalising its carried hidden
    state and ends by yielding a residual add, the scan carries
    (hidden, residual) instead, so the add that ends layer i and the norm
    that starts layer i + 1 are one op; the first layer adds a zero
    residual and the norm after the scan takes the last pair. Values are
    bit-identical: the same sums are formed.
  }];
  let dependentDialects = ["::mlir::tfm::TfmDialect"];
}

def TfmFuseLmHeadLossPass : Pass<"tfm-fuse-lm-head-loss", "func::FuncOp"> {
  let summary = "lm head matmul (+ scale) (+ softcap) + cross_entropy -> fused_lm_head_loss";
  let description = [{
    `tfm.cross_entropy(softcap?(scale?(matmul(h, W))))` whose logits are
    used by nothing else (a forward imported with `--no-logits`) becomes
    `tfm.fused_lm_head_loss`, which never materialises `[B·T, V]` (tied
    heads too: `W` is whatever the matmul reads). Left alone while the
    logits are returned or read elsewhere.
  }];
  let dependentDialects = ["::mlir::tfm::TfmDialect"];
}

#endif // TFM_DIALECT_TFM_TRANSFORMS_PASSES
