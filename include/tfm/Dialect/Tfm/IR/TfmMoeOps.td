//===- TfmMoeOps.td - mixture-of-experts ops ---------------*- tablegen -*-===//
//
// A sparse MoE block is five ops, dropless (no capacity, no token dropped):
//
//   %logits          = tfm.matmul %x, %router                 [.., E]
//   %w, %idx         = tfm.moe_router %logits                 [.., k] each
//   %off, %pos, %src = tfm.moe_route_plan %idx                the expert order
//   %xp              = tfm.moe_dispatch %x, %pos, %src        [R, H], R = N*k
//   %hp              = tfm.moe_grouped_matmul %xp, %w1, %off  per expert rows
//   ...activation, a second grouped matmul...
//   %y               = tfm.moe_combine %yp, %pos, %src, %w    [.., H]
//
// N is the number of tokens (the product of the leading dimensions), R the
// number of (token, slot) pairs. Rows of the permuted [R, ·] tensors are
// grouped by expert: expert e owns rows [offsets[e], offsets[e+1]), in token
// order, so every kernel does work proportional to top-k, and the per-expert
// row counts are run-time values, not shapes. The normative text is
// docs/spec.md.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_MOE_OPS
#define TFM_MOE_OPS

def Tfm_MoeRouterOp : Tfm_PureOp<"moe_router"> {
  let summary = "top-k expert selection and routing weights from router logits";
  let description = [{
    `logits` `[.., E]`; results `weights` `[.., k]` (f32; f64 for f64
    logits) and `indices` `[.., k]` (i64), slot 0 the best expert. Scores are
    computed in f32 whatever the logits type:

    - `softmax_topk`: `p = softmax(logits)`; the k largest `p`;
      `weights = p[indices]`, divided by their sum with `normalize`
      (HF `norm_topk_prob`).
    - `topk_softmax`: the k largest logits; `weights = softmax` over those k
      (gpt-oss).
    - `sigmoid_topk`: `p = sigmoid(logits)`; the k largest; `weights =
      p[indices]`, divided by their sum with `normalize`.

    DeepSeek-style selection (softmax_topk and sigmoid_topk only):

    - `bias` (`[E]`, the weights' type; DeepSeek-V3's
      `e_score_correction_bias`) is added to the scores to *choose* experts:
      the selection score is `p + bias`, the weights still come from `p`.
    - `num_groups = G` splits the experts into G groups of `E / G`
      consecutive experts; each group is scored by `group_score` over its
      selection scores (`top2_sum`: the two largest summed; `max`: the
      largest), the `topk_groups` best groups are kept, and the selection
      scores of the other groups' experts become 0.0 (as HF masks them, not
      -inf), before the top-k.
    - `normalize` divides by `Σ p[indices] + normalize_eps` (HF adds 1e-20),
      and the weights are then multiplied by `scale` (HF
      `routed_scaling_factor`).

    Selection is deterministic: a larger score first, and among equal
    scores the lower expert (or group) index.

    ```mlir
    %w, %idx = tfm.moe_router %logits
        {top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>, normalize}
        : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
    %w3, %idx3 = tfm.moe_router %logits, %bias
        {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, normalize,
         normalize_eps = 1.0e-20 : f64, scale = 2.5 : f64, num_groups = 4 : i64,
         topk_groups = 2 : i64, group_score = #tfm.moe_group_score<top2_sum>}
        : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
    ```

    Gradient: through the weights only (the selection, bias and groups
    included, is piecewise constant; `bias` gets none). With `s` the scores,
    `g` the weight gradient and `c = scale`, `normalize` first maps
    `g_j -> c (g_j - Σ_i g_i s[idx_i] / D) / D` with
    `D = Σ_i s[idx_i] + normalize_eps` (else `g_j -> c g_j`); then
    `ds[idx_j] = g_j` (zero for unselected experts), and
    `dlogits = p * (ds - Σ ds * p)` (softmax), `ds * p * (1 - p)` (sigmoid),
    or, for `topk_softmax`, `dlogits[idx_j] = w_j (g_j - Σ_i g_i w_i)` and
    zero elsewhere.
  }];
  let arguments = (ins Tfm_FloatTensor:$logits, Optional<Tfm_StatTensor>:$bias,
                   I64Attr:$top_k, Tfm_MoeRoutingAttr:$routing,
                   UnitAttr:$normalize,
                   DefaultValuedAttr<F64Attr, "0.0">:$normalize_eps,
                   DefaultValuedAttr<F64Attr, "1.0">:$scale,
                   DefaultValuedAttr<I64Attr, "1">:$num_groups,
                   OptionalAttr<I64Attr>:$topk_groups,
                   OptionalAttr<Tfm_MoeGroupScoreAttr>:$group_score);
  let results = (outs Tfm_StatTensor:$weights, Tfm_IdTensor:$indices);
}

def Tfm_MoeRoutePlanOp : Tfm_PureOp<"moe_route_plan", [Tfm_NotDifferentiable]> {
  let summary = "the expert-grouped order of (token, slot) pairs";
  let description = [{
    `indices` `[.., k]` (experts in `[0, num_experts)`), flattened to
    `f = n * k + j` for token `n` and slot `j`, `R = N * k` pairs. Expert
    `e` owns rows `[offsets[e], offsets[e+1])` of the permuted order, and
    its pairs sit there in increasing `f`:

    - `offsets` `[E + 1]`: `offsets[0] = 0`, `offsets[e+1] - offsets[e]` the
      number of pairs routed to `e`;
    - `positions` `[.., k]`: the row of pair `(n, j)`;
    - `sources` `[R]`: the pair `f` of each row (the inverse permutation).

    ```mlir
    %off, %pos, %src = tfm.moe_route_plan %idx {num_experts = 8 : i64}
        : (tensor<?x?x2xi64>) -> (tensor<9xi64>, tensor<?x?x2xi64>, tensor<?xi64>)
    ```

    No gradient (integer results).
  }];
  let arguments = (ins Tfm_IdTensor:$indices, I64Attr:$num_experts);
  let results = (outs Tfm_IdTensor:$offsets, Tfm_IdTensor:$positions,
                      Tfm_IdTensor:$sources);
}

def Tfm_MoeDispatchOp : Tfm_PureOp<"moe_dispatch"> {
  let summary = "gather token rows into the expert-grouped order";
  let description = [{
    `x` `[.., H]` (N tokens), `positions` and `sources` from
    `tfm.moe_route_plan`: `result[r] = x[sources[r] / k]`, `[R, H]`. Each
    token appears once per slot, so no row is dropped.

    ```mlir
    %xp = tfm.moe_dispatch %x, %pos, %src
        : (tensor<?x?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x64xf32>
    ```

    Gradient: `dx[n] = Σ_j dresult[positions[n, j]]`, i.e. `tfm.moe_combine`
    of `dresult` without weights (a gather, not a scatter).
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_IdTensor:$positions,
                   Tfm_IdTensor:$sources);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_MoeCombineOp : Tfm_PureOp<"moe_combine"> {
  let summary = "sum each token's expert rows, weighted by the routing weights";
  let description = [{
    `rows` `[R, H]` in the expert-grouped order, the plan's `positions`
    `[.., k]` and `sources` `[R]` (as `tfm.moe_dispatch` takes them; the
    gradient reads `sources`), optional `weights` `[.., k]`: `result[n] =
    Σ_j weights[n, j] * rows[positions[n, j]]` (weight 1 without
    `weights`), accumulated in f32 and rounded once to the element type.
    `result` is `[.., H]`.

    ```mlir
    %y = tfm.moe_combine %yp, %pos, %src, %w
        : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x2xf32>)
        -> tensor<?x?x64xf32>
    ```

    Gradient: `drows[positions[n, j]] = weights[n, j] * dresult[n]`,
    `dweights[n, j] = Σ_h dresult[n, h] * rows[positions[n, j], h]`
    (`tfm.moe_combine_backward`); without weights, `drows` is
    `tfm.moe_dispatch` of `dresult`.
  }];
  let arguments = (ins Tfm_FloatTensor:$rows, Tfm_IdTensor:$positions,
                   Tfm_IdTensor:$sources, Optional<Tfm_StatTensor>:$weights);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_MoeGroupedMatmulOp : Tfm_PureOp<"moe_grouped_matmul"> {
  let summary = "one GEMM per expert over its rows of the grouped order";
  let description = [{
    `x` `[R, K]` in the expert-grouped order, `w` `[E, N, K]` (`nt`, HF
    `F.linear` layout per expert) or `[E, K, N]` (`nn`), `offsets` `[E + 1]`
    from `tfm.moe_route_plan`: rows `[offsets[e], offsets[e+1])` of the
    result are those rows of `x` times `w[e]` (transposed for `nt`). The
    row counts are run-time values; an expert with no rows costs nothing.
    Accumulates in f32 for bf16/f16 inputs. An optional `bias` `[E, N]`
    adds `bias[e]` to expert e's rows (gpt-oss), in the element type as HF
    adds it.

    ```mlir
    %h = tfm.moe_grouped_matmul %xp, %w, %off {transpose = #tfm.transpose<nt>}
        : (tensor<?x64xf32>, tensor<8x256x64xf32>, tensor<9xi64>) -> tensor<?x256xf32>
    ```

    Gradient: `dx = grouped_matmul(dy, w)` with the other transpose,
    `dw[e] = dy[rows of e]ᵀ · x[rows of e]` (`nt`; zero for an expert with
    no rows), `tfm.moe_grouped_matmul_grad_weight`; `dbias[e] = Σ` of dy
    over the rows of e (`tfm.moe_grouped_bias_grad`).
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$w,
                   Tfm_IdTensor:$offsets, Optional<Tfm_FloatTensor>:$bias,
                   Tfm_TransposeAttr:$transpose);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_ClampedSwigluOp : Tfm_PureOp<"clamped_swiglu"> {
  let summary = "gpt-oss's clamped SwiGLU over interleaved gate/up columns";
  let description = [{
    `x` is `[.., 2I]` with gate and up interleaved column-wise (gpt-oss's
    `gate_up_proj`): `gate = x[.., 0::2]`, `up = x[.., 1::2]`. With
    `g = min(gate, limit)` and `u = clamp(up, -limit, limit)`:
    `y = (u + 1) * g * sigmoid(alpha * g)`, `[.., I]`.

    ```mlir
    %y = tfm.clamped_swiglu %x {limit = 7.0 : f64, alpha = 1.702 : f64}
        : (tensor<?x256xf32>) -> tensor<?x128xf32>
    ```

    Gradient (clamps pass the gradient where their input is inside the
    closed range, as torch.clamp): `dgate = dy * (u + 1) * (s + alpha * g *
    s * (1 - s))` where `gate <= limit`, else 0, with `s = sigmoid(alpha *
    g)`; `dup = dy * g * s` where `|up| <= limit`, else 0; interleaved back.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, F64Attr:$limit, F64Attr:$alpha);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_MoeLoadStatsOp : Tfm_PureOp<"moe_load_stats"> {
  let summary = "one layer's router statistics for the load-balancing loss";
  let description = [{
    `logits` `[.., E]` and the router's `indices` `[.., k]`: `stats` `[2, E]`
    (f32; f64 for f64 logits), row 0 `Σ_n softmax(logits[n])_e` (the
    probability mass per expert, over all experts as HF's
    `load_balancing_loss_func` computes it, whatever the routing), row 1 the
    number of (token, slot) pairs routed to `e`.

    ```mlir
    %s = tfm.moe_load_stats %logits, %idx
        : (tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<2x8xf32>
    ```

    Gradient: through row 0 only (the counts are piecewise constant):
    `dlogits[n] = p_n * (g - Σ_e g_e p_ne)` with `g = dstats[0]`.
  }];
  let arguments = (ins Tfm_FloatTensor:$logits, Tfm_IdTensor:$indices);
  let results = (outs Tfm_StatTensor:$stats);
}

def Tfm_MoeAuxLossOp : Tfm_PureOp<"moe_aux_loss"> {
  let summary = "HF's load-balancing loss from every MoE layer's statistics";
  let description = [{
    `stats` `[L, 2, E]` (the `tfm.moe_load_stats` of each MoE layer,
    stacked): with `C_e = Σ_l stats[l, 1, e]`, `P_e = Σ_l stats[l, 0, e]`
    and `R = Σ_e C_e / top_k` (the routed rows of all layers),
    `loss = E * Σ_e (C_e / R) * (P_e / R)`: HF's `load_balancing_loss_func`,
    which pools the layers before the product and counts all k slots (a
    balanced router scores k, not 1).

    ```mlir
    %aux = tfm.moe_aux_loss %stats {top_k = 2 : i64}
        : (tensor<4x2x8xf32>) -> tensor<f32>
    ```

    Gradient: `dstats[l, 0, e] = dloss * E * C_e / R²`, zero for the counts.
  }];
  let arguments = (ins Tfm_StatTensor:$stats, I64Attr:$top_k);
  let results = (outs Tfm_StatTensor:$loss);
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

def Tfm_MoeRouterBackwardOp : Tfm_BackwardOp<"moe_router_backward"> {
  let summary = "gradient of tfm.moe_router with respect to the logits";
  let description = [{
    The `tfm.moe_router` gradient of docs/spec.md, from the forward logits
    and the selected `indices` (scores are recomputed in f32).

    ```mlir
    %dl = tfm.moe_router_backward %dw, %logits, %idx
        {routing = #tfm.moe_routing<softmax_topk>, normalize}
        : (tensor<?x?x2xf32>, tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<?x?x8xf32>
    ```
  }];
  let arguments = (ins Tfm_StatTensor:$dweights, Tfm_FloatTensor:$logits,
                   Tfm_IdTensor:$indices, Tfm_MoeRoutingAttr:$routing,
                   UnitAttr:$normalize,
                   DefaultValuedAttr<F64Attr, "0.0">:$normalize_eps,
                   DefaultValuedAttr<F64Attr, "1.0">:$scale);
  let results = (outs Tfm_FloatTensor:$dlogits);
}

def Tfm_MoeCombineBackwardOp : Tfm_BackwardOp<"moe_combine_backward"> {
  let summary = "gradients of tfm.moe_combine (rows and weights)";
  let description = [{
    `drows[r] = weights[f] * dy[f / k]` with `f = sources[r]`, and
    `dweights[n, j] = Σ_h dy[n, h] * rows[positions[n, j], h]` (f32). Both
    are gathers, parallel over rows and pairs.

    ```mlir
    %drows, %dw = tfm.moe_combine_backward %dy, %yp, %pos, %src, %w
        : (tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x2xf32>)
        -> (tensor<?x64xf32>, tensor<?x?x2xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$rows,
                   Tfm_IdTensor:$positions, Tfm_IdTensor:$sources,
                   Tfm_StatTensor:$weights);
  let results = (outs Tfm_FloatTensor:$drows, Tfm_StatTensor:$dweights);
}

def Tfm_MoeGroupedMatmulGradWeightOp
    : Tfm_BackwardOp<"moe_grouped_matmul_grad_weight"> {
  let summary = "per-expert weight gradient of tfm.moe_grouped_matmul";
  let description = [{
    `nt`: `dw[e] = dy[rows of e]ᵀ · x[rows of e]` (`[E, N, K]`); `nn`:
    `x[rows of e]ᵀ · dy[rows of e]` (`[E, K, N]`). An expert with no rows
    gets exact zeros.

    ```mlir
    %dw = tfm.moe_grouped_matmul_grad_weight %dy, %xp, %off {transpose = #tfm.transpose<nt>}
        : (tensor<?x256xf32>, tensor<?x64xf32>, tensor<9xi64>) -> tensor<8x256x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x,
                   Tfm_IdTensor:$offsets, Tfm_TransposeAttr:$transpose);
  let results = (outs Tfm_FloatTensor:$dweight);
}

def Tfm_MoeLoadStatsBackwardOp : Tfm_BackwardOp<"moe_load_stats_backward"> {
  let summary = "gradient of tfm.moe_load_stats with respect to the logits";
  let description = [{
    `dlogits[n] = p_n * (g - Σ_e g_e p_ne)`, `p_n = softmax(logits[n])`,
    `g = dstats[0]` (row 1, the counts, has no gradient).

    ```mlir
    %dl = tfm.moe_load_stats_backward %ds, %logits
        : (tensor<2x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    ```
  }];
  let arguments = (ins Tfm_StatTensor:$dstats, Tfm_FloatTensor:$logits);
  let results = (outs Tfm_FloatTensor:$dlogits);
}

def Tfm_MoeAuxLossBackwardOp : Tfm_BackwardOp<"moe_aux_loss_backward"> {
  let summary = "gradient of tfm.moe_aux_loss";
  let description = [{
    `dstats[l, 0, e] = dloss * E * C_e / R²`, `dstats[l, 1, e] = 0`, with
    `C`, `R` as in `tfm.moe_aux_loss`.

    ```mlir
    %ds = tfm.moe_aux_loss_backward %dloss, %stats {top_k = 2 : i64}
        : (tensor<f32>, tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
    ```
  }];
  let arguments = (ins Tfm_StatTensor:$dloss, Tfm_StatTensor:$stats,
                   I64Attr:$top_k);
  let results = (outs Tfm_StatTensor:$dstats);
}

def Tfm_MoeGroupedBiasGradOp : Tfm_BackwardOp<"moe_grouped_bias_grad"> {
  let summary = "per-expert bias gradient of tfm.moe_grouped_matmul";
  let description = [{
    `dbias[e] = Σ` of `dy` over the rows `[offsets[e], offsets[e+1])`; zeros
    for an expert without rows.

    ```mlir
    %db = tfm.moe_grouped_bias_grad %dy, %off
        : (tensor<?x256xf32>, tensor<9xi64>) -> tensor<8x256xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_IdTensor:$offsets);
  let results = (outs Tfm_FloatTensor:$dbias);
}

def Tfm_ClampedSwigluBackwardOp : Tfm_BackwardOp<"clamped_swiglu_backward"> {
  let summary = "gradient of tfm.clamped_swiglu";
  let description = [{
    The `tfm.clamped_swiglu` gradient, interleaved like its input.

    ```mlir
    %dx = tfm.clamped_swiglu_backward %dy, %x {limit = 7.0 : f64, alpha = 1.702 : f64}
        : (tensor<?x128xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x,
                   F64Attr:$limit, F64Attr:$alpha);
  let results = (outs Tfm_FloatTensor:$dx);
}

#endif // TFM_MOE_OPS
