// A constant loss: its cotangent reaches no argument, so every gradient is
// zero (a constant needs no adjoint rule).
// RUN: tfm-opt %s --tfm-autodiff=func=constant_loss | FileCheck %s --check-prefix=CONST
// CONST-LABEL: func.func @constant_loss_vjp(
// CONST-SAME: %[[W:.*]]: tensor<4xf32> {tfm.param = #tfm.param<name = "w">}, %{{.*}}: tensor<f32>) -> (tensor<f32>, tensor<4xf32> {tfm.grad_of = 0 : i64})
// CONST-NEXT: %[[C:.*]] = arith.constant
// CONST-NEXT: %[[G:.*]] = tfm.zeros_like %[[W]] : tensor<4xf32>
// CONST-NEXT: return %[[C]], %[[G]]
func.func @constant_loss(%w: tensor<4xf32> {tfm.param = #tfm.param<name = "w">}) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}
