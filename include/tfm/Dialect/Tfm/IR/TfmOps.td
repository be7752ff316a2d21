//===- TfmOps.td - tfm operations --------------------------*- tablegen -*-===//
//
// Every op: summary, semantics, example and gradient rule; the normative text
// is docs/spec.md (one section per op, same name).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_OPS
#define TFM_OPS

include "tfm/Dialect/Tfm/IR/TfmDialect.td"
include "tfm/Dialect/Tfm/IR/TfmAttrs.td"
include "tfm/Dialect/Tfm/IR/TfmIndexOperands.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tfm_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Tfm_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Tfm_IdTensor : RankedTensorOf<[I32, I64]>;
// Statistics (rstd, lse, loss) are f32, or f64 when the inputs are f64.
def Tfm_StatTensor : RankedTensorOf<[F32, F64]>;
// Values a layer scan stacks: weights, saved activations, and the integer
// routing plans MoE layers save for their backward.
def Tfm_StackableTensor : RankedTensorOf<[F16, BF16, F32, F64, I32, I64]>;

// The common printed form: operands, attributes, then the functional type.
defvar Tfm_FunctionalFormat =
    "operands attr-dict `:` functional-type(operands, results)";

// The printed form of ops that take packed documents: the leading operands,
// then `doc_start(%d)` when given (tfm.document_starts).
class Tfm_DocStartFormat<string leading> {
  string format = leading # " (`doc_start` `(` $doc_start^ `)`)?" #
      " attr-dict `:` functional-type(operands, results)";
}
// The attention ops: `sinks(%s)` too.
class Tfm_AttentionFormat<string leading>
    : Tfm_DocStartFormat<leading # " (`sinks` `(` $sinks^ `)`)?">;

class Tfm_PureOp<string mnemonic, list<Trait> traits = []>
    : Tfm_Op<mnemonic, !listconcat([Pure], traits)> {
  let assemblyFormat = Tfm_FunctionalFormat;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Embedding and normalisation
//===----------------------------------------------------------------------===//

def Tfm_EmbeddingOp : Tfm_PureOp<"embedding",
    [DeclareOpInterfaceMethods<Tfm_IndexOperandsOpInterface>]> {
  let summary = "row gather from an embedding table";
  let description = [{
    `result[b, t, :] = table[ids[b, t], :]`. Ids outside `[0, V)` are an
    error at run time.

    ```mlir
    %h = tfm.embedding %ids, %table
        : (tensor<?x?xi64>, tensor<32000x4096xf32>) -> tensor<?x?x4096xf32>
    ```

    Gradient: `d table[v] = sum over (b, t) with ids[b, t] = v of d result[b, t]`
    (scatter-add); ids have no gradient.
  }];
  let arguments = (ins Tfm_IdTensor:$ids, Tfm_FloatTensor:$table);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_RmsNormOp : Tfm_PureOp<"rmsnorm"> {
  let summary = "RMS normalisation over the last dimension";
  let description = [{
    `rstd = 1 / sqrt(mean(x^2) + eps)` computed in f32 (f64 for f64 input),
    `y = (x * rstd) * w`, or `* (1 + w)` with `unit_offset` (Gemma). `rstd`
    has the shape of `x` without its last dimension.

    ```mlir
    %y, %rstd = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64}
        : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>)
    ```

    Gradient, with `xh = x * rstd`, `g = w` (or `1 + w`), `N` the last size:
    `dx = rstd * (dy*g - xh * mean(dy*g*xh))`, `dw = sum over rows of dy*xh`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$weight,
                   F64Attr:$eps, UnitAttr:$unit_offset);
  let results = (outs Tfm_FloatTensor:$y, Tfm_StatTensor:$rstd);
}

def Tfm_LayerNormOp : Tfm_PureOp<"layernorm"> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    `mean = mean(x)`, `rstd = 1 / sqrt(mean((x - mean)^2) + eps)`,
    `y = (x - mean) * rstd * w + b` (`b` optional). Statistics in f32.

    ```mlir
    %y, %mean, %rstd = tfm.layernorm %x, %w, %b {eps = 1.0e-05 : f64}
        : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
    ```

    Gradient, with `xh = (x - mean) * rstd`:
    `dx = rstd * (dy*w - mean(dy*w) - xh * mean(dy*w*xh))`,
    `dw = sum(dy*xh)`, `db = sum(dy)` over rows.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$weight,
                   Optional<Tfm_FloatTensor>:$bias, F64Attr:$eps);
  let results = (outs Tfm_FloatTensor:$y, Tfm_StatTensor:$mean,
                      Tfm_StatTensor:$rstd);
}

def Tfm_FusedResidualRmsNormOp : Tfm_PureOp<"fused_residual_rmsnorm"> {
  let summary = "residual add followed by RMSNorm";
  let description = [{
    `residual_out = x + residual`, then `y, rstd = rmsnorm(residual_out, w)`
    with the attributes of `tfm.rmsnorm`. Fused from `tfm.add` + `tfm.rmsnorm`.

    ```mlir
    %y, %r, %rstd = tfm.fused_residual_rmsnorm %x, %res, %w {eps = 1.0e-06 : f64}
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>)
        -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?xf32>)
    ```

    Gradient: the RMSNorm gradient through `y`, plus `d residual_out`;
    the sum flows to both `x` and `residual`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$residual,
                   Tfm_FloatTensor:$weight, F64Attr:$eps, UnitAttr:$unit_offset);
  let results = (outs Tfm_FloatTensor:$y, Tfm_FloatTensor:$residual_out,
                      Tfm_StatTensor:$rstd);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Tfm_MatmulOp : Tfm_PureOp<"matmul"> {
  let summary = "x times a weight matrix, optional bias";
  let description = [{
    `nt`: `y[..., n] = sum_k x[..., k] * w[n, k] + bias[n]` (HF `nn.Linear`
    layout `[out, in]`); `nn`: `w` is `[K, N]`.

    ```mlir
    %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>}
        : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    ```

    Gradient (nt): `dx = dy · w`, `dw = dyᵀ · x` summed over leading dims,
    `dbias = sum(dy)` over leading dims.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$w,
                   Optional<Tfm_FloatTensor>:$bias,
                   Tfm_TransposeAttr:$transpose);
  let results = (outs Tfm_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Positions and attention
//===----------------------------------------------------------------------===//

def Tfm_RopeOp : Tfm_PureOp<"rope"> {
  let summary = "rotary position embedding (rotate-half pairing)";
  let description = [{
    `x` is `[B, T, H, D]`, `positions` `[B, T]`. With
    `inv_freq[i] = theta^(-2i / rotary_dim)` transformed by `scaling`, and
    `a = positions[b, t] * inv_freq[i]` for `i < rotary_dim / 2`, dimension
    pairs `(i, i + rotary_dim/2)` of the first `rotary_dim` dimensions rotate:
    `y1 = x1*cos(a) - x2*sin(a)`, `y2 = x2*cos(a) + x1*sin(a)`, where cos and
    sin are multiplied by the scaling's `attention_factor`; dimensions from
    `rotary_dim` on pass through (partial rotary). With `interleaved`, the
    pairs are `(2i, 2i + 1)` instead (DeepSeek's complex-number RoPE; HF's
    DeepSeek-V3 writes the same values de-interleaved, which leaves every
    q·k product, hence attention, unchanged).

    ```mlir
    %y = tfm.rope %x, %pos {theta = 5.0e+05 : f64, rotary_dim = 64 : i64}
        : (tensor<?x?x8x64xf32>, tensor<?x?xi64>) -> tensor<?x?x8x64xf32>
    ```

    Gradient: the transposed rotation, `dx1 = dy1*cos + dy2*sin`,
    `dx2 = dy2*cos - dy1*sin`; pass-through dimensions copy `dy`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_IdTensor:$positions,
                   F64Attr:$theta, I64Attr:$rotary_dim,
                   OptionalAttr<Tfm_RopeScalingAttr>:$scaling,
                   UnitAttr:$interleaved);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_QkNormOp : Tfm_PureOp<"qk_norm"> {
  let summary = "RMSNorm of queries and keys";
  let description = [{
    `q` `[B, T, Hq, D]` and `k` `[B, T, Hkv, D]` are RMS-normalised:
    `per_head` over `D` with weights `[D]` (Qwen3, Gemma3), `whole` over all
    `H*D` values of a token with weights `[H*D]` (OLMo2). `unit_offset` uses
    `(1 + w)`. The f32 `rstd` results are `[B, T, H]` (per_head) or `[B, T]`.

    ```mlir
    %q2, %k2, %rq, %rk = tfm.qk_norm %q, %k, %wq, %wk
        {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<per_head>}
        : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
    ```

    Gradient: the `tfm.rmsnorm` gradient applied to each of q and k over the
    normalised group.
  }];
  let arguments = (ins Tfm_FloatTensor:$q, Tfm_FloatTensor:$k,
                   Tfm_FloatTensor:$q_weight, Tfm_FloatTensor:$k_weight,
                   F64Attr:$eps, Tfm_QkNormModeAttr:$mode, UnitAttr:$unit_offset);
  let results = (outs Tfm_FloatTensor:$q_out, Tfm_FloatTensor:$k_out,
                      Tfm_StatTensor:$q_rstd, Tfm_StatTensor:$k_rstd);
}

def Tfm_QkvQkNormRopeOp : Tfm_PureOp<"qkv_qk_norm_rope"> {
  let summary = "per-head q/k RMSNorm and RoPE on packed QKV";
  let description = [{
    `qkv` is `[B, T, Hq + 2*Hkv, D]`: query heads, then key heads, then value
    heads. The query and key heads get per-head RMSNorm (as `tfm.qk_norm`
    `per_head`) and then RoPE (as `tfm.rope`); value heads pass through.
    Fused from `tfm.qk_norm` + two `tfm.rope`.

    ```mlir
    %o, %rq, %rk = tfm.qkv_qk_norm_rope %qkv, %wq, %wk, %pos
        {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64,
         theta = 1.0e+06 : f64, rotary_dim = 64 : i64}
        : (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi64>)
        -> (tensor<?x?x12x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
    ```

    Gradient: RoPE gradient, then the RMSNorm gradient, on the q and k heads;
    value heads copy `dy`.
  }];
  let arguments = (ins Tfm_FloatTensor:$qkv, Tfm_FloatTensor:$q_weight,
                   Tfm_FloatTensor:$k_weight, Tfm_IdTensor:$positions,
                   I64Attr:$num_q_heads, I64Attr:$num_kv_heads, F64Attr:$eps,
                   UnitAttr:$unit_offset, F64Attr:$theta, I64Attr:$rotary_dim,
                   OptionalAttr<Tfm_RopeScalingAttr>:$scaling);
  let results = (outs Tfm_FloatTensor:$result, Tfm_StatTensor:$q_rstd,
                      Tfm_StatTensor:$k_rstd);

  let extraClassDeclaration = [{
    /// Where q, k and v sit in the packed operand (the one place the
    /// [B, T, Hq + 2*Hkv, D] convention is written).
    ::mlir::tfm::PackedQkvHeads getPackedHeads() {
      return {static_cast<int64_t>(getNumQHeads()),
              static_cast<int64_t>(getNumKvHeads())};
    }
  }];
}

def Tfm_QkvRopeOp : Tfm_PureOp<"qkv_rope"> {
  let summary = "RoPE on the query and key heads of packed QKV";
  let description = [{
    `qkv` is `[B, T, Hq + 2*Hkv, D]` (query, key, value heads). The query
    and key heads are rotated as `tfm.rope` with the same attributes; value
    heads pass through. Fused from two `tfm.rope` on heads of one packed
    projection (`tfm-fuse-attention`); `tfm.qkv_qk_norm_rope` is the form
    with q/k norms.

    ```mlir
    %o = tfm.qkv_rope %qkv, %pos
        {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, theta = 5.0e+05 : f64,
         rotary_dim = 64 : i64}
        : (tensor<?x?x12x64xf32>, tensor<?x?xi64>) -> tensor<?x?x12x64xf32>
    ```

    With `inverse`, the rotation is by the negative angle: that is the
    gradient, so the op is its own adjoint with `inverse` toggled.

    Gradient: the RoPE gradient on the q and k heads (`tfm.qkv_rope
    {inverse}` of `dy`); value heads copy `dy`.
  }];
  let arguments = (ins Tfm_FloatTensor:$qkv, Tfm_IdTensor:$positions,
                   I64Attr:$num_q_heads, I64Attr:$num_kv_heads,
                   F64Attr:$theta, I64Attr:$rotary_dim,
                   OptionalAttr<Tfm_RopeScalingAttr>:$scaling,
                   UnitAttr:$inverse);
  let results = (outs Tfm_FloatTensor:$result);
  let extraClassDeclaration = [{
    ::mlir::tfm::PackedQkvHeads getPackedHeads() {
      return {static_cast<int64_t>(getNumQHeads()),
              static_cast<int64_t>(getNumKvHeads())};
    }
  }];
}

def Tfm_AttentionOp : Tfm_PureOp<"attention", [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention (GQA, causal, window, softcap, sinks, documents)";
  let description = [{
    `q` `[B, T, Hq, D]`, `k` `[B, S, Hkv, D]`, `v` `[B, S, Hkv, Dv]`; query
    head `h` reads key/value head `h / (Hq / Hkv)`.
    `s = scale * q·k`; with `softcap`, `s = softcap * tanh(s / softcap)`;
    `causal` masks `j > i`; `sliding_window = W` also masks `i - j >= W`
    (HF convention: a token sees itself and the W-1 before it). With `sinks`
    (`[Hq]`), a per-head logit joins the softmax denominator only. With
    `doc_start` (`[B, T]` integers, causal only, `S = T`, as
    `tfm.document_starts` makes it: `doc_start[b, i] <= i`, not decreasing
    along a row), query `i` of row `b` also masks the keys
    `j < doc_start[b, i]`: packed documents attend only within themselves,
    and no `T x T` mask exists.
    `out = softmax(s) · v`.

    ```mlir
    %o = tfm.attention %q, %k, %v {causal, scale = 1.25e-01 : f64}
        : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>)
        -> tensor<?x?x8x64xf32>
    %p = tfm.attention %q, %k, %v sinks(%s) doc_start(%starts) {causal, scale = 1.25e-01 : f64}
        : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>,
           tensor<8xf32>, tensor<?x?xi64>) -> tensor<?x?x8x64xf32>
    ```

    Gradient, with `p = softmax(s)`: `dv = pᵀ·dout`, `dp = dout·vᵀ`,
    `ds = p * (dp - rowsum(dout * out))`, times `1 - tanh²` under softcap,
    `dq = scale * ds·k`, `dk = scale * dsᵀ·q` summed over the query heads of a
    group; `dsinks = -sum over rows of p_sink * rowsum(dout * out)`. Masked
    entries (documents included) have `p = 0`; `doc_start` has no gradient.
  }];
  let arguments = (ins Tfm_FloatTensor:$q, Tfm_FloatTensor:$k,
                   Tfm_FloatTensor:$v, Optional<Tfm_FloatTensor>:$sinks,
                   Optional<Tfm_IdTensor>:$doc_start,
                   F64Attr:$scale, UnitAttr:$causal,
                   OptionalAttr<I64Attr>:$sliding_window,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = Tfm_AttentionFormat<"$q `,` $k `,` $v">.format;
}

def Tfm_FlashAttentionOp : Tfm_PureOp<"flash_attention",
    [AttrSizedOperandSegments]> {
  let summary = "attention on packed QKV, saving the log-sum-exp";
  let description = [{
    `qkv` `[B, T, Hq + 2*Hkv, D]` (query, key, value heads); semantics of
    `tfm.attention` with the same attributes, `sinks` and `doc_start`. Also returns `lse` `[B, Hq, T]`
    (f32), the log-sum-exp of each score row, so the backward recomputes
    probabilities tile by tile. Lowerings never materialise `T x T`.

    ```mlir
    %o, %lse = tfm.flash_attention %qkv
        {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 1.25e-01 : f64}
        : (tensor<?x?x12x64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
    ```

    Gradient (`tfm.flash_attention_backward`): as `tfm.attention`, with
    `p = exp(s - lse)`; the result is one packed `dqkv`.
  }];
  let arguments = (ins Tfm_FloatTensor:$qkv, Optional<Tfm_FloatTensor>:$sinks,
                   Optional<Tfm_IdTensor>:$doc_start,
                   I64Attr:$num_q_heads, I64Attr:$num_kv_heads,
                   F64Attr:$scale, UnitAttr:$causal,
                   OptionalAttr<I64Attr>:$sliding_window,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs Tfm_FloatTensor:$result, Tfm_StatTensor:$lse);
  let assemblyFormat = Tfm_AttentionFormat<"$qkv">.format;
  let extraClassDeclaration = [{
    /// Where q, k and v sit in the packed operand (the one place the
    /// [B, T, Hq + 2*Hkv, D] convention is written).
    ::mlir::tfm::PackedQkvHeads getPackedHeads() {
      return {static_cast<int64_t>(getNumQHeads()),
              static_cast<int64_t>(getNumKvHeads())};
    }
  }];
}

def Tfm_DocumentStartsOp : Tfm_PureOp<"document_starts",
    [Tfm_NotDifferentiable, SameOperandsAndResultType]> {
  let summary = "where each token's document begins, from restarting positions";
  let description = [{
    `positions` `[B, T]` → `starts` `[B, T]`: `starts[b, t]` is the largest
    `j <= t` with `positions[b, j] == 0`, or 0 when there is none. A packed
    row (HF's flattened-batch convention, as `DataCollatorWithFlattening`
    makes it: position ids restart at 0 at each document) is thereby split
    into its documents; an ordinary row (positions `0..T-1`) is one
    document. The `doc_start` operand of the attention ops and the
    document resets of the scans read it; it is computed once per step.

    ```mlir
    %starts = tfm.document_starts %positions : (tensor<?x?xi64>) -> tensor<?x?xi64>
    ```

    No gradient (integer result).
  }];
  let arguments = (ins Tfm_IdTensor:$positions);
  let results = (outs Tfm_IdTensor:$starts);
}

//===----------------------------------------------------------------------===//
// Activations and element-wise ops
//===----------------------------------------------------------------------===//

class Tfm_GluOp<string mnemonic, string act, string grad> : Tfm_PureOp<mnemonic> {
  let summary = "gated linear unit over packed up|gate with " # act;
  let description = [{
    `x` is `[..., 2I]`: `up = x[..., :I]`, `gate = x[..., I:]`, or with
    `gate_first` the other way round (`[gate | up]`, the layout of HF's
    packed `gate_up_proj`: Phi-3, transformers-5 MoE experts);
    `y = up * }] # act # [{(gate)`.

    ```mlir
    %y = tfm.}] # mnemonic # [{ %x : (tensor<?x?x256xf32>) -> tensor<?x?x128xf32>
    ```

    Gradient: `dup = dy * act(gate)`, `dgate = dy * up * }] # grad # [{`,
    packed back in the layout of `x`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, UnitAttr:$gate_first);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_SwigluOp : Tfm_GluOp<"swiglu", "silu", "silu'(gate)">;
def Tfm_GegluOp : Tfm_GluOp<"geglu", "gelu_tanh", "gelu_tanh'(gate)">;

class Tfm_UnaryOp<string mnemonic, string math, string grad>
    : Tfm_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "element-wise " # math;
  let description = [{
    `y = }] # math # [{`, element-wise.

    ```mlir
    %y = tfm.}] # mnemonic # [{ %x : tensor<?x?x64xf32>
    ```

    Gradient: `dx = dy * (}] # grad # [{)`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Tfm_SiluOp : Tfm_UnaryOp<"silu", "x * sigmoid(x)",
    "sigmoid(x) * (1 + x * (1 - sigmoid(x)))">;
def Tfm_GeluTanhOp : Tfm_UnaryOp<"gelu_tanh",
    "0.5 x (1 + tanh(c (x + 0.044715 x^3))), c = sqrt(2/pi)",
    "0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2), t = tanh(...)">;
def Tfm_Relu2Op : Tfm_UnaryOp<"relu2", "max(x, 0)^2", "2 max(x, 0)">;

class Tfm_BinaryOp<string mnemonic, string math, string grad>
    : Tfm_Op<mnemonic, [Pure, SameOperandsAndResultType, Commutative]> {
  let summary = "element-wise " # math;
  let description = [{
    `result = }] # math # [{`, element-wise on equal shapes.

    ```mlir
    %r = tfm.}] # mnemonic # [{ %a, %b : tensor<?x?x64xf32>
    ```

    Gradient: }] # grad # [{.
  }];
  let arguments = (ins Tfm_FloatTensor:$lhs, Tfm_FloatTensor:$rhs);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Tfm_AddOp : Tfm_BinaryOp<"add", "lhs + rhs", "`dlhs = drhs = dresult`">;
def Tfm_MulOp : Tfm_BinaryOp<"mul", "lhs * rhs",
    "`dlhs = dresult * rhs`, `drhs = dresult * lhs`">;

def Tfm_ScaleOp : Tfm_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "multiply by a constant";
  let description = [{
    `y = x * factor` in the compute type, rounded to the element type. The
    factor is applied as given, as PyTorch multiplies a bf16 tensor by a
    Python scalar; with `round_factor` it is first rounded to the element
    type, as when HF holds it as a tensor of the model's type (Gemma's
    normaliser, Falcon-H1's `mup_vector`).

    ```mlir
    %y = tfm.scale %x {factor = 8.0 : f64} : tensor<?x?x64xf32>
    %z = tfm.scale %x {factor = 59.866518188383061 : f64, round_factor} : tensor<?x?x64xbf16>
    ```

    Gradient: `dx = dy * factor` (rounded the same way).
  }];
  let arguments = (ins Tfm_FloatTensor:$x, F64Attr:$factor,
                   UnitAttr:$round_factor);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasFolder = 1;
}

def Tfm_SoftcapOp : Tfm_Op<"softcap", [Pure, SameOperandsAndResultType]> {
  let summary = "tanh soft capping";
  let description = [{
    `y = cap * tanh(x / cap)` (Gemma 2 logit soft-capping), `cap > 0`.

    ```mlir
    %y = tfm.softcap %x {cap = 30.0 : f64} : tensor<?x?x256xf32>
    ```

    Gradient: `dx = dy * (1 - tanh(x / cap)^2)`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, F64Attr:$cap);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

def Tfm_ReshapeOp : Tfm_Op<"reshape", [Pure]> {
  let summary = "regroup the static trailing dimensions";
  let description = [{
    Same elements in row-major order. The leading dynamic dimensions (batch,
    sequence) are kept as they are; the static dimensions after them are
    regrouped, with equal products.

    ```mlir
    %y = tfm.reshape %x : tensor<?x?x512xf32> -> tensor<?x?x8x64xf32>
    ```

    Gradient: `dx = reshape(dy)` back to the operand type.
  }];
  let arguments = (ins Tfm_FloatTensor:$x);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tfm_SplitOp : Tfm_Op<"split", [Pure]> {
  let summary = "split along one static dimension";
  let description = [{
    The results are consecutive slices of `x` along `dim`, of their own sizes,
    which add up to the size of `x` there.

    ```mlir
    %a, %b = tfm.split %x {dim = 2 : i64}
        : (tensor<?x?x96xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>)
    ```

    Gradient: `dx = concat(dresults, dim)` (zeros for unused results).
  }];
  let arguments = (ins Tfm_FloatTensor:$x, I64Attr:$dim);
  let results = (outs Variadic<Tfm_FloatTensor>:$results);
  let assemblyFormat = Tfm_FunctionalFormat;
  let hasVerifier = 1;
}

def Tfm_ExpandOp : Tfm_Op<"expand", [Pure]> {
  let summary = "repeat a size-1 static dimension";
  let description = [{
    `x` has size 1 at the static dimension `dim`; the result repeats it to
    the result's size there (MLA's rotary key, one head shared by all query
    heads).

    ```mlir
    %k = tfm.expand %kr {dim = 2 : i64}
        : (tensor<?x?x1x64xf32>) -> tensor<?x?x128x64xf32>
    ```

    Gradient: `dx = sum of dy over dim` (`tfm.expand_backward`).
  }];
  let arguments = (ins Tfm_FloatTensor:$x, I64Attr:$dim);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = Tfm_FunctionalFormat;
  let hasVerifier = 1;
}

def Tfm_ConcatOp : Tfm_Op<"concat", [Pure]> {
  let summary = "concatenate along one static dimension";
  let description = [{
    ```mlir
    %y = tfm.concat %a, %b {dim = 2 : i64}
        : (tensor<?x?x64xf32>, tensor<?x?x32xf32>) -> tensor<?x?x96xf32>
    ```

    Gradient: `dinputs = split(dy, dim)` with the input sizes.
  }];
  let arguments = (ins Variadic<Tfm_FloatTensor>:$inputs, I64Attr:$dim);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = Tfm_FunctionalFormat;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Tfm_CrossEntropyOp : Tfm_PureOp<"cross_entropy",
    [DeclareOpInterfaceMethods<Tfm_IndexOperandsOpInterface>]> {
  let summary = "causal-LM cross-entropy (HF convention)";
  let description = [{
    `logits` `[B, T, V]`, `labels` `[B, T]` unshifted. Position `t < T-1`
    predicts `labels[b, t+1]`; targets equal to `ignore_index` (default
    -100) do not count. `loss = sum(lse - logit[target]) / count`, one mean
    over all counted tokens of the batch, in f32 (NaN when nothing counts, as
    in PyTorch).

    ```mlir
    %loss = tfm.cross_entropy %logits, %labels {ignore_index = -100 : i64}
        : (tensor<?x?x256xf32>, tensor<?x?xi64>) -> tensor<f32>
    ```

    Gradient: `dlogits[b, t] = dloss / count * (softmax(logits[b, t]) -
    onehot(target))` for counted positions, zero elsewhere.
  }];
  let arguments = (ins Tfm_FloatTensor:$logits, Tfm_IdTensor:$labels,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Tfm_StatTensor:$loss);
}

def Tfm_FusedLmHeadLossOp : Tfm_PureOp<"fused_lm_head_loss",
    [DeclareOpInterfaceMethods<Tfm_IndexOperandsOpInterface>]> {
  let summary = "LM head and cross-entropy without materialising logits";
  let description = [{
    `loss = cross_entropy(softcap?(scale? · (hidden · weightᵀ)), labels)`
    with the convention of `tfm.cross_entropy`, computed in chunks of tokens
    so the `[B*T, V]` logits never exist. `logit_scale` multiplies the
    logits in their type as `tfm.scale` does (Granite's `1 / logits_scaling`,
    Falcon-H1's muP `lm_head_multiplier`). Also returns `lse` `[B, T]` (f32)
    for the backward. Fused from `tfm.matmul` (+ `tfm.scale`) (+
    `tfm.softcap`) + `tfm.cross_entropy` (`tfm-fuse-lm-head-loss`).

    ```mlir
    %loss, %lse = tfm.fused_lm_head_loss %h, %w, %labels {ignore_index = -100 : i64}
        : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>)
        -> (tensor<f32>, tensor<?x?xf32>)
    ```

    Gradient (`tfm.fused_lm_head_loss_backward`, chunked the same way): with
    `p` recomputed per chunk from `lse`, `dlogits` as for `tfm.cross_entropy`
    (times the softcap derivative and the scale), `dhidden = dlogits ·
    weight`, `dweight = dlogitsᵀ · hidden`.
  }];
  let arguments = (ins Tfm_FloatTensor:$hidden, Tfm_FloatTensor:$weight,
                   Tfm_IdTensor:$labels,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index,
                   OptionalAttr<F64Attr>:$softcap,
                   OptionalAttr<F64Attr>:$logit_scale);
  let results = (outs Tfm_StatTensor:$loss, Tfm_StatTensor:$lse);
}

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

def Tfm_RepeatOp : Tfm_Op<"repeat", [AttrSizedOperandSegments,
                                     RecursiveMemoryEffects]> {
  let summary = "run layer bodies over weights stacked on a layer dimension";
  let description = [{
    A scan over `num_layers` layers. Each region is one layer kind, written
    once; layer `i` runs region `schedule[i]` (region 0 for every layer when
    there is no schedule). A region's block arguments are the carried values
    (typed as `inits`) followed by layer `i`'s slice of each stacked input
    (`layers(...)`: weights, or saved activations in a backward scan; the
    type without its leading dimension). It yields the next carried values,
    then any **stacked outputs**: per-layer values that the op returns
    stacked on a leading `num_layers` dimension (saved activations, weight
    gradients). Values defined above (positions) may be used inside.
    `reverse` runs the layers from `num_layers - 1` down to 0 (backward
    scans). `kind_names` optionally names the kinds (`sliding_attention`).

    A stacked input or output may cover only some kinds (the experts of
    the MoE layers of a model whose first layers are dense): `weight_kinds`
    and `stacked_kinds`, when present, give for each stacked input / output
    the sorted list of kinds it covers. Its leading dimension is then the
    number of layers of those kinds, layer `i` reads (or writes) the slice
    at its rank among them, and only the regions of those kinds take it as
    a block argument (or yield it). Absent, every stacked value covers all
    layers.

    ```mlir
    %h = tfm.repeat (%h0 : tensor<?x?x64xf32>)
        layers(%w : tensor<4x64xf32>) {num_layers = 4 : i64} -> tensor<?x?x64xf32> {
    ^bb0(%x: tensor<?x?x64xf32>, %wl: tensor<64xf32>):
      %y, %r = tfm.rmsnorm %x, %wl {eps = 1.0e-05 : f64}
          : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>)
      tfm.yield %y : tensor<?x?x64xf32>
    }
    ```

    `first_layer`, when present, is the model layer the scan's layer 0 is
    (a model's layers split over several scans, `tfm-split-layers`): the
    weight map's HF layers are counted from it. Absent, 0.

    Gradient: a reverse scan of the per-kind adjoint bodies reading the
    forward's saved values as stacked inputs; weight gradients are its
    stacked outputs (see tfm-autodiff).
  }];
  let arguments = (ins Variadic<Tfm_FloatTensor>:$inits,
                   Variadic<Tfm_StackableTensor>:$weights,
                   I64Attr:$num_layers,
                   OptionalAttr<DenseI64ArrayAttr>:$schedule,
                   OptionalAttr<StrArrayAttr>:$kind_names,
                   UnitAttr:$reverse,
                   OptionalAttr<TypedArrayAttrBase<DenseI64ArrayAttr,
                       "kinds per stacked input">>:$weight_kinds,
                   OptionalAttr<TypedArrayAttrBase<DenseI64ArrayAttr,
                       "kinds per stacked output">>:$stacked_kinds,
                   OptionalAttr<I64Attr>:$first_layer);
  let results = (outs Variadic<Tfm_StackableTensor>:$results);
  let regions = (region VariadicRegion<SizedRegion<1>>:$kinds);
  let assemblyFormat = [{
    `(` $inits `:` type($inits) `)` `layers` `(` ($weights^ `:` type($weights))? `)`
    attr-dict `->` type($results) $kinds
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The region layer `layer` runs.
    unsigned getKindOfLayer(int64_t layer);
    /// How many layers run each region, without a loop over the layers
    /// when there is no schedule (cost models stay closed-form for any
    /// layer count).
    SmallVector<int64_t> getLayerCountsByKind();
    /// Whether stacked input `weight` / stacked output `stacked` (indices
    /// into getWeights() / getStackedResults()) is read / written by the
    /// layers of `kind`.
    bool weightCoversKind(unsigned weight, unsigned kind);
    /// The kinds stacked input `weight` / stacked output `stacked` covers;
    /// null when it covers every kind (then layer i uses slice i).
    DenseI64ArrayAttr getWeightKindSet(unsigned weight);
    DenseI64ArrayAttr getStackedKindSet(unsigned stacked);
    bool stackedCoversKind(unsigned stacked, unsigned kind);
    /// The stacked inputs / outputs the layers of `kind` read / write, in
    /// order (a region's block arguments after the carried values, and
    /// what it yields after them).
    SmallVector<unsigned> getWeightsOfKind(unsigned kind);
    SmallVector<unsigned> getStackedOfKind(unsigned kind);
    /// What the layers of `kind` yield into stacked output `stacked`; null
    /// when that kind does not write it.
    Value getYieldedOfKind(unsigned stacked, unsigned kind);
    /// The stacked input a layer's block argument is a slice of; null for
    /// a carried value or an argument of another op's block.
    Value getStackedInputOf(BlockArgument arg);
    /// The layers, in order, that read stacked input `weight` / write
    /// stacked output `stacked`: slice `s` of it is layer `result[s]`'s.
    SmallVector<int64_t> getLayersOfWeight(unsigned weight);
    SmallVector<int64_t> getLayersOfStacked(unsigned stacked);
    /// The layers whose kind is in `kinds` (null: all), in order. Only for
    /// code that emits per-layer IR; counting uses getNumLayersOfKinds.
    SmallVector<int64_t> getLayersOfKinds(DenseI64ArrayAttr kinds);
    /// How many layers have a kind in `kinds` (null: all), in closed form.
    int64_t getNumLayersOfKinds(DenseI64ArrayAttr kinds);
    /// The first and the last layer with a kind in `kinds` (null: all);
    /// (-1, -1) when none has. A walk of the schedule at most.
    std::pair<int64_t, int64_t> getLayerRangeOfKinds(DenseI64ArrayAttr kinds);
    /// The carried results, then the stacked outputs.
    ResultRange getCarriedResults() {
      return getResults().take_front(getInits().size());
    }
    ResultRange getStackedResults() {
      return getResults().drop_front(getInits().size());
    }
  }];
}

def Tfm_YieldOp : Tfm_Op<"yield", [Pure, Terminator, ReturnLike,
                                   HasParent<"RepeatOp">, Tfm_NotDifferentiable]> {
  let summary = "the carried values (then the stacked outputs) of one layer";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

include "tfm/Dialect/Tfm/IR/TfmBackwardOps.td"
include "tfm/Dialect/Tfm/IR/TfmMoeOps.td"
include "tfm/Dialect/Tfm/IR/TfmMambaOps.td"
include "tfm/Dialect/Tfm/IR/TfmDeltaNetOps.td"
include "tfm/Dialect/Tfm/IR/TfmOptimizerOps.td"

#endif // TFM_OPS
