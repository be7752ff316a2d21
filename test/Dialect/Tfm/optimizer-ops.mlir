// The optimizer ops round-trip through their assembly (and generic) form.
// RUN: tfm-opt %s | tfm-opt | FileCheck %s
// RUN: tfm-opt %s --mlir-print-op-generic | tfm-opt | FileCheck %s

// CHECK-LABEL: func.func @adamw
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = tfm.adamw_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64} : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
func.func @adamw(%p: tensor<4x8xf32>, %g: tensor<4x8xbf16>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>,
                 %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %p1, %m1, %v1 = tfm.adamw_update %p, %g, %m, %v, %lr, %t, %s
      {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xf32>
  return %p1, %m1, %v1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sgd
// CHECK: tfm.sgd_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov, weight_decay = 1.000000e-02 : f64} : tensor<8xbf16>, tensor<8xbf16>, tensor<8xf32>
func.func @sgd(%p: tensor<8xbf16>, %g: tensor<8xbf16>, %b: tensor<8xf32>,
               %lr: tensor<f64>, %t: tensor<i64>, %s: tensor<f32>) -> (tensor<8xbf16>, tensor<8xf32>) {
  %p1, %b1 = tfm.sgd_update %p, %g, %b, %lr, %t, %s
      {momentum = 0.9 : f64, dampening = 0.0 : f64, weight_decay = 0.01 : f64, nesterov}
      : tensor<8xbf16>, tensor<8xbf16>, tensor<8xf32>
  return %p1, %b1 : tensor<8xbf16>, tensor<8xf32>
}

// CHECK-LABEL: func.func @norm
// CHECK: %{{.*}}, %{{.*}} = tfm.global_grad_norm %arg0, %arg1 {max_norm = 1.000000e+00 : f64} : tensor<4x8xf32>, tensor<8xbf16>
func.func @norm(%a: tensor<4x8xf32>, %b: tensor<8xbf16>) -> (tensor<f32>, tensor<f32>) {
  %n, %s = tfm.global_grad_norm %a, %b {max_norm = 1.0 : f64} : tensor<4x8xf32>, tensor<8xbf16>
  return %n, %s : tensor<f32>, tensor<f32>
}
