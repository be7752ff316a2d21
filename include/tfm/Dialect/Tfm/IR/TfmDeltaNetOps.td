//===- TfmDeltaNetOps.td - gated DeltaNet (linear attention) ops -*- tablegen -*-===//
//
// A gated DeltaNet mixer (Qwen3-Next, Qwen3.5 `linear_attention` layers) is
// the in-projections, tfm.mamba_conv1d (no bias) over [q | k | v], this op,
// tfm.gated_rmsnorm (one weight shared by the heads, norm before the gate)
// and the out-projection:
//
//   %qkv      = tfm.mamba_conv1d %mixed, %w          causal depthwise + SiLU
//   %q, %k, %v = tfm.split %qkv                      Hk·Dk, Hk·Dk, H·Dv
//   %y, %st   = tfm.gated_delta_rule %q, %k, %v, %a, %b, %a_log, %dt_bias
//   %n, %rstd = tfm.gated_rmsnorm %y, %z, %norm_w {groups = H}
//
// The rule is evaluated in chunks (HF's torch_chunk_gated_delta_rule):
// inside a chunk a unit lower-triangular chunk x chunk system (the UT
// transform) condenses the delta-rule updates into matrix products; across
// chunks the [Dk, Dv] state per head is carried. No T x T tensor exists;
// the second result, the state before each chunk, is what the backward
// saves. The normative text is docs/spec.md.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DELTANET_OPS
#define TFM_DELTANET_OPS

def Tfm_GatedDeltaRuleOp : Tfm_PureOp<"gated_delta_rule"> {
  let summary = "the gated delta rule (gated DeltaNet), chunked";
  let description = [{
    `q`, `k` `[B, T, Hk, Dk]`, `v` `[B, T, H, Dv]` (`Hk` dividing `H`; value
    head `h` reads key head `h / (H / Hk)`, HF's `repeat_interleave`), raw
    gates `a`, `b` `[B, T, H]`, `a_log`, `dt_bias` `[H]`. In f32 (f64 for
    f64 inputs), as HF:

        g = −exp(a_log) · softplus(a + dt_bias)          β = σ(b) (in b's type)
        q̂ = q · rsqrt(Σq² + 1e-6) · Dk^-1/2             k̂ = k · rsqrt(Σk² + 1e-6)
        S[t] = e^{g[t]} (I − β[t] k̂[t] k̂[t]ᵀ) S[t−1] + β[t] k̂[t] ⊗ v[t]
        y[t] = S[t]ᵀ q̂[t]                                   S[−1] = 0

    per head, `S` `[Dk, Dv]`; with `doc_start` (`[B, T]`,
    `tfm.document_starts`) `S[t − 1] = 0` where a document starts
    (`doc_start[b, t] = t`), so packed documents each start from zero. Evaluated by chunks of `chunk_size` (HF: 64) positions:
    within a chunk the UT transform `(I + strictly_lower(β k̂ k̂ᵀ ⊙ decay))⁻¹`
    turns the updates into products. `y` has `v`'s type (HF rounds the
    rule's output to the model's type); `states` `[B, NC, H, Dk, Dv]` is f32
    and holds `S` just before each of the `NC = ceil(T / chunk_size)` chunks
    (checked when T is static).

    ```mlir
    %y, %s = tfm.gated_delta_rule %q, %k, %v, %a, %b, %a_log, %dt_bias {chunk_size = 64 : i64}
        : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>,
           tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>)
        -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
    ```

    Gradient: the chunked rule run backwards over chunks from the saved
    states (`tfm.gated_delta_rule_backward`, formulas in docs/spec.md); the
    `states` result takes no gradient.
  }];
  let arguments = (ins Tfm_FloatTensor:$q, Tfm_FloatTensor:$k,
                   Tfm_FloatTensor:$v, Tfm_FloatTensor:$a,
                   Tfm_FloatTensor:$b, Tfm_FloatTensor:$a_log,
                   Tfm_FloatTensor:$dt_bias, Optional<Tfm_IdTensor>:$doc_start,
                   I64Attr:$chunk_size);
  let results = (outs Tfm_FloatTensor:$y, Tfm_StatTensor:$states);
  let assemblyFormat = Tfm_DocStartFormat<
      "$q `,` $k `,` $v `,` $a `,` $b `,` $a_log `,` $dt_bias">.format;
}

def Tfm_SigmoidOp : Tfm_UnaryOp<"sigmoid", "1 / (1 + exp(-x))",
    "sigmoid(x) * (1 - sigmoid(x))">;

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

def Tfm_GatedDeltaRuleBackwardOp
    : Tfm_BackwardOp<"gated_delta_rule_backward"> {
  let summary = "gradient of tfm.gated_delta_rule, chunked, from its states";
  let description = [{
    Runs over the chunks from the last to the first, carrying the gradient
    of the state and reading each chunk's start state from `states`; within
    a chunk it recomputes the UT transform and the chunk x chunk products.
    Each gradient has the type of its operand.

    ```mlir
    %dq, %dk, %dv, %da, %db, %dal, %ddtb = tfm.gated_delta_rule_backward
        %dy, %q, %k, %v, %a, %b, %a_log, %dt_bias, %s {chunk_size = 64 : i64}
        : (tensor<?x?x4x8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>,
           tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>,
           tensor<4xf32>, tensor<?x?x4x16x8xf32>)
        -> (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>,
            tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$q,
                   Tfm_FloatTensor:$k, Tfm_FloatTensor:$v, Tfm_FloatTensor:$a,
                   Tfm_FloatTensor:$b, Tfm_FloatTensor:$a_log,
                   Tfm_FloatTensor:$dt_bias, Tfm_StatTensor:$states,
                   Optional<Tfm_IdTensor>:$doc_start, I64Attr:$chunk_size);
  let assemblyFormat = Tfm_DocStartFormat<
      "$dy `,` $q `,` $k `,` $v `,` $a `,` $b `,` $a_log `,` $dt_bias `,` $states">.format;
  let results = (outs Tfm_FloatTensor:$dq, Tfm_FloatTensor:$dk,
                      Tfm_FloatTensor:$dv, Tfm_FloatTensor:$da,
                      Tfm_FloatTensor:$db, Tfm_FloatTensor:$da_log,
                      Tfm_FloatTensor:$ddt_bias);
}

def Tfm_SigmoidBackwardOp : Tfm_ElementwiseBackwardOp<"sigmoid_backward",
    "sigmoid", "dy·σ(x)(1 − σ(x))">;

#endif // TFM_DELTANET_OPS
