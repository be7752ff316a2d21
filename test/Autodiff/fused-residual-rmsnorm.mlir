// The adjoint of tfm.fused_residual_rmsnorm: the gradient of residual_out
// (when something downstream reads it) is added by rmsnorm_backward as it
// writes dx, so no tfm.add kernel reads the norm's term back; without that
// gradient the norm's term is the whole gradient.
// RUN: tfm-opt %s --split-input-file --tfm-autodiff="func=forward seed-all-results" | FileCheck %s

// Cotangents of y and residual_out come last.
// CHECK-LABEL: func.func @forward_vjp(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8xf32>, %[[DY:[a-z0-9]+]]: tensor<?x?x8xf32>, %[[DR:[a-z0-9]+]]: tensor<?x?x8xf32>)
// CHECK: %[[Y:.*]], %[[R:.*]], %[[RSTD:.*]] = tfm.fused_residual_rmsnorm
// CHECK: %[[DX:.*]], %[[DW:.*]] = tfm.rmsnorm_backward %[[DY]], %[[R]], %[[W]], %[[RSTD]], %[[DR]] {unit_offset}
// CHECK-NOT: tfm.add
// CHECK: return %[[Y]], %[[R]], %[[DX]], %[[DX]], %[[DW]] :
func.func @forward(%x: tensor<?x?x8xf32>, %res: tensor<?x?x8xf32>, %w: tensor<8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %y, %r, %s = tfm.fused_residual_rmsnorm %x, %res, %w {eps = 1.0e-06 : f64, unit_offset} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xf32>)
  return %y, %r : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// residual_out unread: the backward op has no residual_grad operand.
// CHECK-LABEL: func.func @forward_vjp(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8xf32>, %[[DY:[a-z0-9]+]]: tensor<?x?x8xf32>)
// CHECK: %{{.*}}, %[[R:.*]], %[[RSTD:.*]] = tfm.fused_residual_rmsnorm
// CHECK: %[[DX:.*]], %[[DW:.*]] = tfm.rmsnorm_backward %[[DY]], %[[R]], %[[W]], %[[RSTD]] :
// CHECK-NOT: tfm.add
// CHECK: return %{{.*}}, %[[DX]], %[[DX]], %[[DW]] :
func.func @forward(%x: tensor<?x?x8xf32>, %res: tensor<?x?x8xf32>, %w: tensor<8xf32>)
    -> tensor<?x?x8xf32> {
  %y, %r, %s = tfm.fused_residual_rmsnorm %x, %res, %w {eps = 1.0e-06 : f64} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?xf32>)
  return %y : tensor<?x?x8xf32>
}
