// What tfm-add-optimizer-step refuses, each with one error naming the
// option, function or parameter.

// RUN: not tfm-opt %s --tfm-add-optimizer-step=optimizer=lion 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not tfm-opt %s --tfm-add-optimizer-step=decay=some 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not tfm-opt %s --tfm-add-optimizer-step=beta2=1.0 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not tfm-opt %s --tfm-add-optimizer-step=weight-decay=-1 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not tfm-opt %s "--tfm-add-optimizer-step=optimizer=sgd nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not tfm-opt %s --tfm-add-optimizer-step=func=model 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not tfm-opt %s --tfm-add-optimizer-step --tfm-add-optimizer-step 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not tfm-opt %s --tfm-add-optimizer-step=decay=hf 2>&1 | FileCheck %s --check-prefix=MIXED

// OPT: error: tfm-add-optimizer-step: optimizer 'lion': expected adamw or sgd
// DECAY: error: tfm-add-optimizer-step: decay 'some': expected all or hf
// BETA: error: tfm-add-optimizer-step: beta1 and beta2 must be in [0, 1)
// NEG: error: tfm-add-optimizer-step: eps, weight-decay, max-grad-norm, momentum and dampening must be >= 0
// NESTEROV: error: tfm-add-optimizer-step: nesterov needs momentum > 0 and zero dampening
// FUNC: error: tfm-add-optimizer-step: no function @model
// TWICE: error: tfm-add-optimizer-step: @forward_optimizer_step already exists
// A packed weight and bias would decay in part: HF decays the weight only.
// MIXED: error: tfm-add-optimizer-step: parameter 'up.packed' fuses tensors HF's Trainer decays differently ('model.up.weight', 'model.up.bias')

func.func @forward(
    %w: tensor<9x8xf32> {tfm.param = #tfm.param<name = "up.packed", mapping = fuse, sources = ["model.up.weight", "model.up.bias"], dim = 1>}) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
