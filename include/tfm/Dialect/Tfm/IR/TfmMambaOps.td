//===- TfmMambaOps.td - Mamba2 (state-space) ops -----------*- tablegen -*-===//
//
// A Mamba2 mixer is the in-projection, three of these ops and the
// out-projection:
//
//   %zxbcdt     = tfm.matmul %h, %in_proj          [B, T, I + C + H]
//   %z, %xbc, %dt = tfm.split %zxbcdt              I, C = I + 2·G·N, H
//   %xbc2       = tfm.mamba_conv1d %xbc, %w, %b    causal depthwise + SiLU
//   %x, %b, %c  = tfm.split %xbc2                  I, G·N, G·N (reshaped)
//   %y, %st     = tfm.mamba_ssd_scan %x, %dt, %a_log, %b, %c, %d, %dt_bias
//   %n, %rstd   = tfm.gated_rmsnorm %y, %z, %norm_w
//   %out        = tfm.matmul %n, %out_proj
//
// The scan is chunked (SSD): within a chunk of `chunk_size` positions it is
// a masked chunk x chunk product, across chunks a carried state, so no
// T x T tensor exists. Its second result, the state at the start of every
// chunk, is what the backward saves: O(T / chunk · H · P · N). The
// normative text is docs/spec.md.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_MAMBA_OPS
#define TFM_MAMBA_OPS

def Tfm_MambaConv1dOp : Tfm_PureOp<"mamba_conv1d", [AttrSizedOperandSegments]> {
  let summary = "causal depthwise conv1d with bias, then SiLU";
  let description = [{
    `x` `[B, T, C]`, `weight` `[C, K]` (HF's `conv1d.weight` `[C, 1, K]`
    without its middle dimension), optional `bias` `[C]`:
    `y[b, t, c] = silu(bias[c] + Σ_k weight[c, k] · x[b, t − K + 1 + k, c])`
    with `x` zero before position 0, and with `doc_start` (`[B, T]`,
    `tfm.document_starts`) zero before `doc_start[b, t]` too: packed
    documents do not see each other. Arithmetic in f32; for bf16 the
    convolution is rounded before the SiLU, as PyTorch's bf16 `conv1d`.

    ```mlir
    %y = tfm.mamba_conv1d %x, %w, %b
        : (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xf32>) -> tensor<?x?x96xf32>
    ```

    Gradient, with `g = dy · silu'(pre)` (the pre-activation recomputed):
    `dx[t] = Σ_k weight[c, k] · g[t + K − 1 − k]`, `dweight[c, k] =
    Σ_{b,t} g[t] · x[t − K + 1 + k]`, `dbias = Σ_{b,t} g`
    (`tfm.mamba_conv1d_backward`).
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$weight,
                   Optional<Tfm_FloatTensor>:$bias,
                   Optional<Tfm_IdTensor>:$doc_start);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat =
      Tfm_DocStartFormat<"$x `,` $weight (`,` $bias^)?">.format;
}

def Tfm_MambaSsdScanOp : Tfm_PureOp<"mamba_ssd_scan"> {
  let summary = "Mamba2's selective state-space scan, chunked (SSD)";
  let description = [{
    `x` `[B, T, H, P]`, raw `dt` `[B, T, H]`, `a_log`, `d`, `dt_bias` `[H]`,
    `b` and `c` `[B, T, G, N]` (`G` groups dividing `H`; head `h` reads group
    `h / (H / G)`). With `δ = clamp(softplus(dt + dt_bias), dt_min, dt_max)`
    and `A = −exp(a_log)`, per head the recurrence

        s[t] = exp(δ[t]·A) · s[t − 1] + δ[t] · x[t] ⊗ b[t]      [P, N]
        y[t] = s[t] · c[t] + d · x[t]                           s[−1] = 0

    and with `doc_start` (`[B, T]`, `tfm.document_starts`) `s[t − 1] = 0`
    where a document starts (`doc_start[b, t] = t`): packed documents each
    start from a zero state.

    evaluated by chunks of `chunk_size` positions. `y` and `states` are f32
    (f64 for f64 `x`), as HF's torch path keeps them; `states` `[B, NC, H, P,
    N]` holds `s` just before each of the `NC = ceil(T / chunk_size)` chunks
    (checked when T is static).

    ```mlir
    %y, %s = tfm.mamba_ssd_scan %x, %dt, %a_log, %b, %c, %d, %dt_bias
        {chunk_size = 256 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}
        : (tensor<?x?x8x16xf32>, tensor<?x?x8xf32>, tensor<8xf32>,
           tensor<?x?x1x32xf32>, tensor<?x?x1x32xf32>, tensor<8xf32>, tensor<8xf32>)
        -> (tensor<?x?x8x16xf32>, tensor<?x?x8x16x32xf32>)
    ```

    Gradient: the chunked scan run backwards over chunks from the saved
    states (`tfm.mamba_ssd_scan_backward`, formulas in docs/spec.md); the
    `states` result takes no gradient.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$dt,
                   Tfm_FloatTensor:$a_log, Tfm_FloatTensor:$b,
                   Tfm_FloatTensor:$c, Tfm_FloatTensor:$d,
                   Tfm_FloatTensor:$dt_bias, Optional<Tfm_IdTensor>:$doc_start,
                   I64Attr:$chunk_size, F64Attr:$dt_min, F64Attr:$dt_max);
  let results = (outs Tfm_StatTensor:$y, Tfm_StatTensor:$states);
  let assemblyFormat = Tfm_DocStartFormat<
      "$x `,` $dt `,` $a_log `,` $b `,` $c `,` $d `,` $dt_bias">.format;
}

def Tfm_GatedRmsNormOp : Tfm_PureOp<"gated_rmsnorm"> {
  let summary = "RMS norm over groups, gated by silu(z) before or after it";
  let description = [{
    `x`, `z` `[.., I]`, `weight` `[I]` (or `[I / groups]`, one weight shared
    by every group: Qwen3-Next's norm of each value head), `groups` dividing
    `I`. Each group of `I / groups` features is normalised on its own. Without
    `norm_before_gate` (HF Mamba2, NemotronH): `h = x · silu(z)`, `y = weight
    · h · rstd(h)`; with it (Falcon-H1's default): `y = weight · x · rstd(x) ·
    silu(z)`. `rstd` `[.., groups]`. All arithmetic in f32, rounded once to
    the result type.

    ```mlir
    %y, %rstd = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 1.0e-05 : f64}
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>)
        -> (tensor<?x?x64xf32>, tensor<?x?x2xf32>)
    ```

    Gradient (`tfm.gated_rmsnorm_backward`): with `n = h · rstd`, `dn = dy ·
    weight` (times `silu(z)` before the gate), `dh = rstd · (dn − n ·
    mean_group(dn · n))`, `dweight = Σ_rows dy · n` (times `silu(z)`), then
    through the gate: `dx = dh · silu(z)`, `dz = dh · x · silu'(z)` (gate
    first), or `dx = dh`, `dz = dy · weight · n · silu'(z)`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$z,
                   Tfm_FloatTensor:$weight, I64Attr:$groups, F64Attr:$eps,
                   UnitAttr:$norm_before_gate);
  let results = (outs Tfm_FloatTensor:$result, Tfm_StatTensor:$rstd);
}

def Tfm_SiluGateOp : Tfm_PureOp<"silu_gate"> {
  let summary = "x · silu(z), in f32, rounded once to the result type";
  let description = [{
    The Mamba2 output gate without the norm (Falcon-H1's `mamba_rms_norm:
    false`): `y = x · silu(z)`, `x` and `z` of one shape (the scan's f32
    output and the model-typed gate), the result in the model type;
    `silu(z)` is rounded to z's type first, as HF computes it.

    ```mlir
    %y = tfm.silu_gate %x, %z
        : (tensor<?x?x64xf32>, tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
    ```

    Gradient (`tfm.silu_gate_backward`): `dx = dy · silu(z)`, `dz = dy · x ·
    silu'(z)`.
  }];
  let arguments = (ins Tfm_FloatTensor:$x, Tfm_FloatTensor:$z);
  let results = (outs Tfm_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

def Tfm_SiluGateBackwardOp : Tfm_BackwardOp<"silu_gate_backward"> {
  let summary = "gradient of tfm.silu_gate";
  let description = [{
    ```mlir
    %dx, %dz = tfm.silu_gate_backward %dy, %x, %z
        : (tensor<?x?x64xbf16>, tensor<?x?x64xf32>, tensor<?x?x64xbf16>)
        -> (tensor<?x?x64xf32>, tensor<?x?x64xbf16>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x,
                   Tfm_FloatTensor:$z);
  let results = (outs Tfm_FloatTensor:$dx, Tfm_FloatTensor:$dz);
}

def Tfm_MambaConv1dBackwardOp : Tfm_BackwardOp<"mamba_conv1d_backward",
    [AttrSizedOperandSegments]> {
  let summary = "gradient of tfm.mamba_conv1d";
  let description = [{
    The pre-activation is recomputed from `x`. `dbias` is the bias gradient
    (`Σ_{b,t} dy · silu'(pre)`), computed whether or not the forward had one.

    ```mlir
    %dx, %dw, %db = tfm.mamba_conv1d_backward %dy, %x, %w, %b
        : (tensor<?x?x96xf32>, tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xf32>)
        -> (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x,
                   Tfm_FloatTensor:$weight, Optional<Tfm_FloatTensor>:$bias,
                   Optional<Tfm_IdTensor>:$doc_start);
  let results = (outs Tfm_FloatTensor:$dx, Tfm_FloatTensor:$dweight,
                      Tfm_FloatTensor:$dbias);
  let assemblyFormat =
      Tfm_DocStartFormat<"$dy `,` $x `,` $weight (`,` $bias^)?">.format;
}

def Tfm_MambaSsdScanBackwardOp : Tfm_BackwardOp<"mamba_ssd_scan_backward"> {
  let summary = "gradient of tfm.mamba_ssd_scan, chunked, from its states";
  let description = [{
    Runs over the chunks from the last to the first, carrying the gradient
    of the state and reading each chunk's start state from `states`; within
    a chunk it recomputes the chunk x chunk decay and `c·bᵀ` products. Each
    gradient has the type of its operand.

    ```mlir
    %dx, %ddt, %da, %db, %dc, %dd, %ddtb = tfm.mamba_ssd_scan_backward
        %dy, %x, %dt, %a_log, %b, %c, %d, %dt_bias, %s
        {chunk_size = 256 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}
        : (tensor<?x?x8x16xf32>, tensor<?x?x8x16xf32>, tensor<?x?x8xf32>, tensor<8xf32>,
           tensor<?x?x1x32xf32>, tensor<?x?x1x32xf32>, tensor<8xf32>, tensor<8xf32>,
           tensor<?x?x8x16x32xf32>)
        -> (tensor<?x?x8x16xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x1x32xf32>,
            tensor<?x?x1x32xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins Tfm_StatTensor:$dy, Tfm_FloatTensor:$x,
                   Tfm_FloatTensor:$dt, Tfm_FloatTensor:$a_log,
                   Tfm_FloatTensor:$b, Tfm_FloatTensor:$c, Tfm_FloatTensor:$d,
                   Tfm_FloatTensor:$dt_bias, Tfm_StatTensor:$states,
                   Optional<Tfm_IdTensor>:$doc_start,
                   I64Attr:$chunk_size, F64Attr:$dt_min, F64Attr:$dt_max);
  let assemblyFormat = Tfm_DocStartFormat<
      "$dy `,` $x `,` $dt `,` $a_log `,` $b `,` $c `,` $d `,` $dt_bias `,` $states">.format;
  let results = (outs Tfm_FloatTensor:$dx, Tfm_FloatTensor:$ddt,
                      Tfm_FloatTensor:$da_log, Tfm_FloatTensor:$db,
                      Tfm_FloatTensor:$dc, Tfm_FloatTensor:$dd,
                      Tfm_FloatTensor:$ddt_bias);
}

def Tfm_GatedRmsNormBackwardOp : Tfm_BackwardOp<"gated_rmsnorm_backward"> {
  let summary = "gradient of tfm.gated_rmsnorm from the saved rstd";
  let description = [{
    ```mlir
    %dx, %dz, %dw = tfm.gated_rmsnorm_backward %dy, %x, %z, %w, %rstd
        : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>,
           tensor<?x?x2xf32>)
        -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$dy, Tfm_FloatTensor:$x,
                   Tfm_FloatTensor:$z, Tfm_FloatTensor:$weight,
                   Tfm_StatTensor:$rstd, UnitAttr:$norm_before_gate);
  let results = (outs Tfm_FloatTensor:$dx, Tfm_FloatTensor:$dz,
                      Tfm_FloatTensor:$dweight);
}

#endif // TFM_MAMBA_OPS
