// A @forward with nothing to train (and no tfm op: the pass must load the
// dialects it creates ops of itself) is refused, not built and crashed on.
// RUN: not tfm-opt %s --tfm-add-optimizer-step 2>&1 | FileCheck %s
// CHECK: error: tfm-add-optimizer-step: nothing to train: @forward has no #tfm.param argument
func.func @forward(%ids: tensor<?x?xi64>) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
