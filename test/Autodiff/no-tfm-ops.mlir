// A function without a single tfm op still gets its backward: the pass
// declares the tfm dialect it creates ops of (zeros_like here), which no op
// of the input loaded (it used to crash creating an op of an unloaded
// dialect).
// RUN: tfm-opt %s --tfm-autodiff | FileCheck %s

// CHECK-LABEL: func.func @forward_vjp(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32> {tfm.grad_of = 0 : i64})
// CHECK-NEXT: %[[G:.*]] = tfm.zeros_like %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[X]], %[[G]]
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

