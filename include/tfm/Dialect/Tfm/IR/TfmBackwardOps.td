//===- TfmBackwardOps.td - ops that adjoints need ----------*- tablegen -*-===//
//
// Backward ops exist where an adjoint needs its own kernel (reductions over
// rows, rotations, softmax recomputation, scatter-add); simpler adjoints are
// written with forward ops. Each op's semantics is the gradient formula of
// its forward op in docs/spec.md.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_BACKWARD_OPS
#define TFM_BACKWARD_OPS

// A backward op: built by adjoint rules, itself not differentiated.
class Tfm_BackwardOp<string mnemonic, list<Trait> traits = []>
    : Tfm_PureOp<mnemonic, !listconcat([Tfm_NotDifferentiable], traits)>;

def Tfm_ZerosLikeOp : Tfm_Op<"zeros_like", [Pure, SameOperandsAndResultType]> {
  let summary = "a tensor of zeros shaped like its operand";
  let description = [{
    The gradient of a value nothing differentiable reads.

    ```mlir
    %z = tfm.zeros_like %x : tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$x);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Tfm_EmbeddingBackwardOp : Tfm_BackwardOp<"embedding_backward",
    [DeclareOpInterfaceMethods<Tfm_IndexOperandsOpInterface>]> {
  let summary = "scatter-add of row gradients into the table gradient";
  let description = [{
    `dtable[v] = Σ_{(b,t): ids[b,t] = v} dy[b, t]`; the result is the table
    shape `[V, H]`.

    ```mlir
    %dt = tfm.embedding_backward %dy, %ids
        : (tensor<?x?x64xf32>, tensor<?x?xi64>) -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_IdTensor:$ids);
  let results = (outs Tfm_FloatTensor:$dtable);
}

def Tfm_RmsNormBackwardOp : Tfm_BackwardOp<"rmsnorm_backward"> {
  let summary = "gradient of tfm.rmsnorm from the saved rstd";
  let description = [{
    With `x̂ = x·rstd`, `g = w` (or `1 + w` with `unit_offset`):
    `dx = rstd·(dy·g − x̂·mean(dy·g·x̂))`, `dw = Σ_rows dy·x̂`.

    With the optional `residual_grad` (shaped like `x`), `dx` is
    `residual_grad + rstd·(…)`: the gradient of a residual stream that both
    feeds the norm and flows on, which is what `tfm.fused_residual_rmsnorm`'s
    adjoint needs. The norm's own term is rounded to the element type before
    the sum, so the result is bit-identical to `tfm.add` of the two, without
    writing and re-reading the norm's term.

    ```mlir
    %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %rstd
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?xf32>)
        -> (tensor<?x?x64xf32>, tensor<64xf32>)
    %dr, %dw2 = tfm.rmsnorm_backward %dy, %x, %w, %rstd, %dres
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?xf32>,
           tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x, Tfm_FloatTensor:$weight,
                   Tfm_StatTensor:$rstd, Optional<Tfm_FloatTensor>:$residual_grad,
                   UnitAttr:$unit_offset);
  let results = (outs Tfm_FloatTensor:$dx, Tfm_FloatTensor:$dweight);
}

def Tfm_LayerNormBackwardOp : Tfm_BackwardOp<"layernorm_backward"> {
  let summary = "gradient of tfm.layernorm from the saved mean and rstd";
  let description = [{
    With `x̂ = (x − mean)·rstd`: `dx = rstd·(dy·w − mean(dy·w) −
    x̂·mean(dy·w·x̂))`, `dw = Σ_rows dy·x̂`, `db = Σ_rows dy`.

    ```mlir
    %dx, %dw, %db = tfm.layernorm_backward %dy, %x, %w, %mean, %rstd
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
        -> (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x, Tfm_FloatTensor:$weight,
                   Tfm_StatTensor:$mean, Tfm_StatTensor:$rstd);
  let results = (outs Tfm_FloatTensor:$dx, Tfm_FloatTensor:$dweight, Tfm_FloatTensor:$dbias);
}

def Tfm_MatmulGradWeightOp : Tfm_BackwardOp<"matmul_grad_weight"> {
  let summary = "weight gradient of tfm.matmul, summed over leading dimensions";
  let description = [{
    `nt`: `dw[n, k] = Σ_rows dy[.., n]·x[.., k]` (`[N, K]`); `nn`: `[K, N]`.

    ```mlir
    %dw = tfm.matmul_grad_weight %dy, %x {transpose = #tfm.transpose<nt>}
        : (tensor<?x?x128xf32>, tensor<?x?x64xf32>) -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x, Tfm_TransposeAttr:$transpose);
  let results = (outs Tfm_FloatTensor:$dweight);
}

def Tfm_SumLeadingOp : Tfm_BackwardOp<"sum_leading"> {
  let summary = "sum over every dimension but the last (bias gradients)";
  let description = [{
    `y[n] = Σ_rows x[.., n]`.

    ```mlir
    %db = tfm.sum_leading %dy : (tensor<?x?x128xf32>) -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$x);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_RopeBackwardOp : Tfm_BackwardOp<"rope_backward"> {
  let summary = "gradient of tfm.rope: the transposed rotation";
  let description = [{
    Same attributes as the forward `tfm.rope`; `dx` is `dy` rotated by the
    negative angle (pass-through dimensions copy `dy`).

    ```mlir
    %dx = tfm.rope_backward %dy, %pos {theta = 1.0e+04 : f64, rotary_dim = 64 : i64}
        : (tensor<?x?x8x64xf32>, tensor<?x?xi64>) -> tensor<?x?x8x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_IdTensor:$positions,
                   F64Attr:$theta, I64Attr:$rotary_dim,
                   OptionalAttr<Tfm_RopeScalingAttr>:$scaling,
                   UnitAttr:$interleaved);
  let results = (outs Tfm_FloatTensor:$dx);
}

def Tfm_ExpandBackwardOp : Tfm_BackwardOp<"expand_backward"> {
  let summary = "gradient of tfm.expand: the sum over the expanded dimension";
  let description = [{
    `dx` has `dy`'s shape with size 1 at `dim`, holding the sum of `dy`
    over `dim` (accumulated in f32 for narrower types).

    ```mlir
    %dx = tfm.expand_backward %dy {dim = 2 : i64}
        : (tensor<?x?x128x64xf32>) -> tensor<?x?x1x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, I64Attr:$dim);
  let results = (outs Tfm_FloatTensor:$dx);
}

def Tfm_AttentionBackwardOp : Tfm_BackwardOp<"attention_backward",
    [AttrSizedOperandSegments]> {
  let summary = "gradient of tfm.attention";
  let description = [{
    Given `dout`, the forward operands (`doc_start` included) and
    attributes, returns `dq`, `dk`,
    `dv` (and `dsinks` when `sinks` is given) per the `tfm.attention`
    gradient in docs/spec.md; probabilities are recomputed.

    ```mlir
    %dq, %dk, %dv = tfm.attention_backward %do, %q, %k, %v {causal, scale = 1.25e-01 : f64}
        : (tensor<?x?x8x64xf32>, tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>)
        -> (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dout, Tfm_FloatTensor:$q, Tfm_FloatTensor:$k,
                   Tfm_FloatTensor:$v, Optional<Tfm_FloatTensor>:$sinks,
                   Optional<Tfm_IdTensor>:$doc_start,
                   F64Attr:$scale, UnitAttr:$causal,
                   OptionalAttr<I64Attr>:$sliding_window,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs Tfm_FloatTensor:$dq, Tfm_FloatTensor:$dk, Tfm_FloatTensor:$dv,
                      Optional<Tfm_FloatTensor>:$dsinks);
  let assemblyFormat =
      Tfm_AttentionFormat<"$dout `,` $q `,` $k `,` $v">.format;
}

def Tfm_CrossEntropyBackwardOp : Tfm_BackwardOp<"cross_entropy_backward",
    [DeclareOpInterfaceMethods<Tfm_IndexOperandsOpInterface>]> {
  let summary = "gradient of tfm.cross_entropy with respect to the logits";
  let description = [{
    `dlogits[b, t] = dloss/count·(softmax(logits[b, t]) − onehot(target))`
    for counted positions (the convention of `tfm.cross_entropy`), 0 elsewhere.

    ```mlir
    %dl = tfm.cross_entropy_backward %dloss, %logits, %labels
        : (tensor<f32>, tensor<?x?x256xf32>, tensor<?x?xi64>) -> tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_StatTensor:$dloss, Tfm_FloatTensor:$logits, Tfm_IdTensor:$labels,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Tfm_FloatTensor:$dlogits);
}

def Tfm_QkvQkNormRopeBackwardOp
    : Tfm_BackwardOp<"qkv_qk_norm_rope_backward"> {
  let summary = "gradient of tfm.qkv_qk_norm_rope, packed";
  let description = [{
    `dy` and the forward's packed `qkv`, `q_weight`, `k_weight`,
    `positions`, `q_rstd`, `k_rstd` (attributes of the forward) → `dqkv`
    packed like `qkv`, `dq_weight`, `dk_weight`: on the query and key heads
    the RoPE gradient then the RMSNorm gradient, value heads copy `dy`.

    ```mlir
    %dqkv, %dwq, %dwk = tfm.qkv_qk_norm_rope_backward %dy, %qkv, %wq, %wk, %pos, %rq, %rk
        {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64,
         theta = 1.0e+06 : f64, rotary_dim = 64 : i64}
        : (tensor<?x?x12x64xf32>, tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>,
           tensor<?x?xi64>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
        -> (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$qkv,
                   Tfm_FloatTensor:$q_weight, Tfm_FloatTensor:$k_weight,
                   Tfm_IdTensor:$positions, Tfm_StatTensor:$q_rstd,
                   Tfm_StatTensor:$k_rstd,
                   I64Attr:$num_q_heads, I64Attr:$num_kv_heads, F64Attr:$eps,
                   UnitAttr:$unit_offset, F64Attr:$theta, I64Attr:$rotary_dim,
                   OptionalAttr<Tfm_RopeScalingAttr>:$scaling);
  let results = (outs Tfm_FloatTensor:$dqkv, Tfm_FloatTensor:$dq_weight,
                      Tfm_FloatTensor:$dk_weight);
  let extraClassDeclaration = [{
    ::mlir::tfm::PackedQkvHeads getPackedHeads() {
      return {static_cast<int64_t>(getNumQHeads()),
              static_cast<int64_t>(getNumKvHeads())};
    }
  }];
}

def Tfm_FlashAttentionBackwardOp : Tfm_BackwardOp<"flash_attention_backward",
    [AttrSizedOperandSegments]> {
  let summary = "gradient of tfm.flash_attention, packed";
  let description = [{
    `dout [B, T, Hq, D]` and the forward's packed `qkv [B, T, Hq + 2Hkv, D]`
    (, `sinks`, `doc_start`), with the forward's attributes → `dqkv` packed like `qkv`
    (, `dsinks`): the gradient of `tfm.attention` on the head slices of
    `qkv`, written into one packed buffer, so no split or concat of q, k, v
    exists between the projection and the kernels.

    ```mlir
    %dqkv = tfm.flash_attention_backward %dout, %qkv
        {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 1.25e-01 : f64}
        : (tensor<?x?x8x64xf32>, tensor<?x?x12x64xf32>) -> tensor<?x?x12x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dout, Tfm_FloatTensor:$qkv,
                   Optional<Tfm_FloatTensor>:$sinks,
                   Optional<Tfm_IdTensor>:$doc_start,
                   I64Attr:$num_q_heads, I64Attr:$num_kv_heads,
                   F64Attr:$scale, UnitAttr:$causal,
                   OptionalAttr<I64Attr>:$sliding_window,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs Tfm_FloatTensor:$dqkv, Optional<Tfm_FloatTensor>:$dsinks);
  let assemblyFormat = Tfm_AttentionFormat<"$dout `,` $qkv">.format;
  let extraClassDeclaration = [{
    ::mlir::tfm::PackedQkvHeads getPackedHeads() {
      return {static_cast<int64_t>(getNumQHeads()),
              static_cast<int64_t>(getNumKvHeads())};
    }
  }];
}

def Tfm_FusedLmHeadLossBackwardOp
    : Tfm_BackwardOp<"fused_lm_head_loss_backward",
        [DeclareOpInterfaceMethods<Tfm_IndexOperandsOpInterface>]> {
  let summary = "gradient of tfm.fused_lm_head_loss, chunk by chunk";
  let description = [{
    For each chunk of positions: the logits are recomputed from `hidden`
    and `weight` (with `logit_scale` and `softcap` as in the forward),
    `p = exp(logits − lse)` from the forward's `lse`, `dlogits =
    dloss/count·(p − onehot(target))` at counted positions (times the
    softcap derivative and the scale), then `dhidden = dlogits · weight` for
    the chunk and `dweight += dlogitsᵀ · hidden`. The `[B·T, V]` logits and
    their gradient never exist.

    ```mlir
    %dh, %dw = tfm.fused_lm_head_loss_backward %dloss, %h, %w, %labels, %lse
        : (tensor<f32>, tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>,
           tensor<?x?xf32>) -> (tensor<?x?x64xf32>, tensor<256x64xf32>)
    ```
  }];
  let arguments = (ins Tfm_StatTensor:$dloss, Tfm_FloatTensor:$hidden,
                   Tfm_FloatTensor:$weight, Tfm_IdTensor:$labels,
                   Tfm_StatTensor:$lse,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                   OptionalAttr<F64Attr>:$softcap,
                   OptionalAttr<F64Attr>:$logit_scale);
  let results = (outs Tfm_FloatTensor:$dhidden, Tfm_FloatTensor:$dweight);
}

class Tfm_ElementwiseBackwardOp<string mnemonic, string forward, string grad>
    : Tfm_Op<mnemonic, [Pure, SameOperandsAndResultType, Tfm_NotDifferentiable]> {
  let summary = "gradient of tfm." # forward;
  let description = [{
    `dx = }] # grad # [{`, element-wise, from the forward input `x`.

    ```mlir
    %dx = tfm.}] # mnemonic # [{ %dy, %x : tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x);
  let results = (outs Tfm_FloatTensor:$dx);
  let assemblyFormat = "$dy `,` $x attr-dict `:` type($dx)";
}

def Tfm_SiluBackwardOp : Tfm_ElementwiseBackwardOp<"silu_backward", "silu",
    "dy·σ(x)(1 + x(1 − σ(x)))">;
def Tfm_GeluTanhBackwardOp : Tfm_ElementwiseBackwardOp<"gelu_tanh_backward", "gelu_tanh",
    "dy·(½(1+t) + ½x(1−t²)c(1 + 3·0.044715x²))">;
def Tfm_Relu2BackwardOp : Tfm_ElementwiseBackwardOp<"relu2_backward", "relu2",
    "dy·2max(x, 0)">;

def Tfm_SoftcapBackwardOp
    : Tfm_Op<"softcap_backward", [Pure, SameOperandsAndResultType, Tfm_NotDifferentiable]> {
  let summary = "gradient of tfm.softcap";
  let description = [{
    `dx = dy·(1 − tanh²(x/cap))`.

    ```mlir
    %dx = tfm.softcap_backward %dy, %x {cap = 30.0 : f64} : tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x, F64Attr:$cap);
  let results = (outs Tfm_FloatTensor:$dx);
  let assemblyFormat = "$dy `,` $x attr-dict `:` type($dx)";
  let hasVerifier = 1;
}

class Tfm_GluBackwardOp<string mnemonic, string forward> : Tfm_BackwardOp<mnemonic> {
  let summary = "gradient of tfm." # forward # " (packed up|gate)";
  let description = [{
    `dy [..., I]`, forward input `x [..., 2I]` → `dx [..., 2I]` =
    `[dy·act(gate) | dy·up·act'(gate)]` (the halves swapped with
    `gate_first`, as in `x`).

    ```mlir
    %dx = tfm.}] # mnemonic # [{ %dy, %x
        : (tensor<?x?x128xf32>, tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x,
                   UnitAttr:$gate_first);
  let results = (outs Tfm_FloatTensor:$dx);
}

def Tfm_SwigluBackwardOp : Tfm_GluBackwardOp<"swiglu_backward", "swiglu">;
def Tfm_GegluBackwardOp : Tfm_GluBackwardOp<"geglu_backward", "geglu">;

#endif // TFM_BACKWARD_OPS
