//===- Passes.td - tfm training-step passes ----------------*- tablegen -*-===//

#ifndef TFM_TRAINING_PASSES
#define TFM_TRAINING_PASSES

include "mlir/Pass/PassBase.td"

def TfmAddOptimizerStepPass : Pass<"tfm-add-optimizer-step", "ModuleOp"> {
  let summary = "Add the optimizer update of a model's trainable parameters";
  let description = [{
    For the model function `@F` (option `func`, default `forward`) adds

      @F_optimizer_step(params..., grads..., state..., lr, step)
          -> (new_params..., new_state..., grad_norm)

    over the trainable arguments of `@F`: those with a `#tfm.param` that is
    neither `frozen` nor a `buffer` (frozen parameters get no update and no
    state). `params` are f32 master weights of each argument's shape (a
    bf16 model keeps them beside its bf16 copy), `grads` the f32 gradients
    of the step (accumulated over micro-batches by the caller), `state` the
    optimizer's f32 state tensors, grouped by kind (AdamW: every `exp_avg`,
    then every `exp_avg_sq`; SGD: every `momentum_buffer`), `lr` a 0-d f64
    and `step` a 0-d i64 (1 for the first update), so one compiled function
    serves every step of a schedule. The body is one
    `tfm.global_grad_norm` (clipping at `max-grad-norm`, 0 for none), then
    one `tfm.adamw_update` or `tfm.sgd_update` per parameter scaled by its
    coefficient; the last result is the norm before clipping, as
    `clip_grad_norm_` returns it.

    The function carries `tfm.trained_arguments` (the `@F` argument index of
    each parameter) and `tfm.optimizer_state` (the state kinds in order);
    each parameter argument keeps its `#tfm.param`. The parameter and state
    arguments are marked `bufferization.writable = true`: the update writes
    the new values into their buffers (torch's optimizers update in place
    too), so a step allocates no second copy of either, and the new values
    come back as those same buffers (tfm-read-only-arguments,
    tfm-return-arguments-in-place). With `model-copies`,
    each parameter whose `@F` type is not f32 (a bf16 model) also gets its
    new value rounded to that type, as one more result after the norm (a
    `linalg.generic` of `arith.truncf`, round to nearest even), so the
    model's copy is made where the update ran; `tfm.model_copies` lists the
    positions (among the parameters) that have one.

    Weight decay (`weight-decay`) goes to every parameter with `decay=all`
    (torch's one-group optimizers); `decay=hf` exempts the parameters HF's
    Trainer exempts (`Trainer.get_decay_parameter_names`): biases and the
    weights of normalisation layers, decided on the HF names of each
    parameter's sources. A fused parameter whose sources disagree is an
    error. Errors also name a missing `@F`, an existing `@F_optimizer_step`,
    an unknown `optimizer` or `decay`, and out-of-range hyper-parameters.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"forward\"",
           "The model function whose parameters are trained">,
    Option<"optimizer", "optimizer", "std::string", "\"adamw\"",
           "adamw or sgd">,
    Option<"beta1", "beta1", "double", "0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", "0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", "1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", "0.01",
           "Weight decay (AdamW decoupled, SGD coupled)">,
    Option<"decay", "decay", "std::string", "\"all\"",
           "Which parameters decay: all, or hf (not biases and norms)">,
    Option<"momentum", "momentum", "double", "0", "SGD momentum">,
    Option<"dampening", "dampening", "double", "0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", "false", "SGD Nesterov momentum">,
    Option<"maxGradNorm", "max-grad-norm", "double", "0",
           "Clip the global gradient norm to this (0: no clipping)">,
    Option<"modelCopies", "model-copies", "bool", "false",
           "Also return each non-f32 parameter rounded to its model type">,
  ];
  let dependentDialects = ["::mlir::tfm::TfmDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

#endif // TFM_TRAINING_PASSES
