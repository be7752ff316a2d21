//===- TfmOptimizerOps.td - the optimizer step ops ---------*- tablegen -*-===//
//
// The update a training step ends with, one fused op per parameter, in
// torch's semantics (torch.optim.AdamW / SGD, single-tensor path, and
// torch.nn.utils.clip_grad_norm_):
//
//   %norm, %scale = tfm.global_grad_norm %g0, %g1, ... {max_norm}
//   %p', %m', %v' = tfm.adamw_update %p, %g, %m, %v, %lr, %step, %scale
//   %p', %b'      = tfm.sgd_update %p, %g, %b, %lr, %step, %scale
//
// The learning rate and the step number are run-time scalars (a schedule
// changes them every step, the compiled step stays the same); `grad_scale`
// multiplies each gradient first (the clipping coefficient). State is f32.
// The normative text is docs/spec.md, "Optimizer ops".
//
//===----------------------------------------------------------------------===//

#ifndef TFM_OPTIMIZER_OPS
#define TFM_OPTIMIZER_OPS

// 0-d tensors, buildable so that the assembly needs no type for them.
def Tfm_ScalarF64 : 0DTensorOf<[F64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF64Type())">;
def Tfm_ScalarF32 : 0DTensorOf<[F32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;
def Tfm_ScalarI64 : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

def Tfm_GlobalGradNormOp
    : Tfm_PureOp<"global_grad_norm", [Tfm_NotDifferentiable]> {
  let summary = "the global 2-norm of gradients and the clipping coefficient";
  let description = [{
    `norm = sqrt(sum_i sum(g_i^2))` over every element of every operand
    (accumulated in f64, returned in f32), and
    `scale = min(1, max_norm / (norm + 1e-6))`, the coefficient
    `torch.nn.utils.clip_grad_norm_` multiplies every gradient by (it
    returns `norm`). Without clipping (`max_norm` 0) `scale` is 1. A NaN or
    infinite norm gives a NaN or zero scale, as torch's does.

    ```mlir
    %norm, %scale = tfm.global_grad_norm %g0, %g1 {max_norm = 1.0 : f64}
        : tensor<16x8xf32>, tensor<8xf32>
    ```

    No gradient (it ends the step).
  }];
  let arguments = (ins Variadic<Tfm_FloatTensor>:$grads, F64Attr:$max_norm);
  let results = (outs Tfm_ScalarF32:$norm, Tfm_ScalarF32:$scale);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
  let hasVerifier = 1;
}

def Tfm_AdamwUpdateOp : Tfm_PureOp<"adamw_update", [Tfm_NotDifferentiable,
    AllTypesMatch<["param", "new_param"]>,
    AllTypesMatch<["exp_avg", "exp_avg_sq", "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "one AdamW step of one parameter (torch.optim.AdamW)";
  let description = [{
    With `g = grad * grad_scale` and `t = step` (1 for the first update),
    in f32 with the scalar factors formed in f64 as torch forms them in
    Python:

    ```
    p  = param * (1 - lr * weight_decay)          (decoupled decay)
    m' = m + (1 - beta1) * (g - m)                (exp_avg.lerp_)
    v' = v * beta2 + (1 - beta2) * g * g          (exp_avg_sq.addcmul_)
    p' = p - lr / (1 - beta1^t) * m' / (sqrt(v') / sqrt(1 - beta2^t) + eps)
    ```

    `param` is the f32 master weight (bf16 models keep one), `exp_avg` and
    `exp_avg_sq` f32 state of the same shape (zeros before the first step);
    `lr` is f64, `step` i64, `grad_scale` f32, all 0-d. Results: the new
    parameter, `exp_avg`, `exp_avg_sq`.

    ```mlir
    %p1, %m1, %v1 = tfm.adamw_update %p, %g, %m, %v, %lr, %step, %scale
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64,
         weight_decay = 0.01 : f64}
        : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
    ```

    No gradient (it ends the step).
  }];
  let arguments = (ins Tfm_FloatTensor:$param, Tfm_FloatTensor:$grad,
                   Tfm_StatTensor:$exp_avg, Tfm_StatTensor:$exp_avg_sq,
                   Tfm_ScalarF64:$lr, Tfm_ScalarI64:$step,
                   Tfm_ScalarF32:$grad_scale, F64Attr:$beta1, F64Attr:$beta2,
                   F64Attr:$eps, F64Attr:$weight_decay);
  let results = (outs Tfm_FloatTensor:$new_param, Tfm_StatTensor:$new_exp_avg,
                      Tfm_StatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step `,`
    $grad_scale attr-dict `:` type($param) `,` type($grad) `,` type($exp_avg)
  }];
  let hasVerifier = 1;
}

def Tfm_SgdUpdateOp : Tfm_PureOp<"sgd_update", [Tfm_NotDifferentiable,
    AllTypesMatch<["param", "new_param"]>,
    AllTypesMatch<["momentum_buffer", "new_momentum_buffer"]>]> {
  let summary = "one SGD step of one parameter (torch.optim.SGD)";
  let description = [{
    With `g = grad * grad_scale + weight_decay * param` (coupled decay, as
    torch's SGD) and `t = step`:

    ```
    b' = g                                  if t == 1 (the buffer starts)
    b' = momentum * b + (1 - dampening) * g otherwise
    d  = g + momentum * b'                  with nesterov, else b'
    p' = param - lr * d
    ```

    Without momentum (`momentum` 0) the buffer is unused: `b' = b` and
    `d = g`. Results: the new parameter and momentum buffer (f32).

    ```mlir
    %p1, %b1 = tfm.sgd_update %p, %g, %b, %lr, %step, %scale
        {momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 0.0 : f64}
        : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
    ```

    No gradient (it ends the step).
  }];
  let arguments = (ins Tfm_FloatTensor:$param, Tfm_FloatTensor:$grad,
                   Tfm_StatTensor:$momentum_buffer, Tfm_ScalarF64:$lr,
                   Tfm_ScalarI64:$step, Tfm_ScalarF32:$grad_scale,
                   F64Attr:$momentum, F64Attr:$dampening,
                   F64Attr:$weight_decay, UnitAttr:$nesterov);
  let results = (outs Tfm_FloatTensor:$new_param,
                      Tfm_StatTensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `,` $lr `,` $step `,` $grad_scale
    attr-dict `:` type($param) `,` type($grad) `,` type($momentum_buffer)
  }];
  let hasVerifier = 1;
}

#endif // TFM_OPTIMIZER_OPS
