// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-fuse-residual-rmsnorm))" | FileCheck %s

// Across the layer boundary: the scan carries (hidden, residual); each body
// starts with the fused op, the yield hands both on, the final norm takes
// the last pair, and the first layer's residual is zero.
// CHECK-LABEL: func.func @pre_norm
// CHECK: %[[Z:.*]] = tfm.zeros_like %arg0
// CHECK: %[[S:.*]]:2 = tfm.repeat(%arg0, %[[Z]] : tensor<?x?x8xf32>, tensor<?x?x8xf32>) layers(%arg1, %arg2, %arg3
// CHECK: ^bb0(%[[X:.*]]: tensor<?x?x8xf32>, %[[RES:.*]]: tensor<?x?x8xf32>, %[[W1:.*]]: tensor<8xf32>, %[[W2:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<8x8xf32>):
// CHECK-NEXT: %[[Y:.*]], %[[R1:.*]], %{{.*}} = tfm.fused_residual_rmsnorm %[[X]], %[[RES]], %[[W1]]
// CHECK-NEXT: %[[A:.*]] = tfm.matmul %[[Y]], %[[M]]
// CHECK-NEXT: %[[Y2:.*]], %[[R2:.*]], %{{.*}} = tfm.fused_residual_rmsnorm %[[A]], %[[R1]], %[[W2]]
// CHECK-NEXT: %[[B:.*]] = tfm.matmul %[[Y2]], %[[M]]
// CHECK-NEXT: tfm.yield %[[B]], %[[R2]]
// CHECK: %[[F:.*]], %{{.*}}, %{{.*}} = tfm.fused_residual_rmsnorm %[[S]]#0, %[[S]]#1, %arg4
// CHECK-NOT: tfm.add
// CHECK: return %[[F]]
func.func @pre_norm(%h0: tensor<?x?x8xf32>, %w1: tensor<2x8xf32>, %w2: tensor<2x8xf32>, %m: tensor<2x8x8xf32>, %wf: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%w1, %w2, %m : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %a1: tensor<8xf32>, %a2: tensor<8xf32>, %am: tensor<8x8xf32>):
    %y, %r = tfm.rmsnorm %x, %a1 {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %a = tfm.matmul %y, %am {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %h2 = tfm.add %x, %a : tensor<?x?x8xf32>
    %y2, %r2 = tfm.rmsnorm %h2, %a2 {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %b = tfm.matmul %y2, %am {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %h3 = tfm.add %h2, %b : tensor<?x?x8xf32>
    tfm.yield %h3 : tensor<?x?x8xf32>
  }
  %f, %rf = tfm.rmsnorm %h, %wf {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
  return %f : tensor<?x?x8xf32>
}

// -----

// Inside a layer only: the body does not start with a norm of its input
// (OLMo-2's post-norm block), so the scan keeps one carried value; the add
// whose sum is also read later is fused and the later reader takes
// residual_out.
// CHECK-LABEL: func.func @post_norm
// CHECK: tfm.repeat(%arg0 : tensor<?x?x8xf32>)
// CHECK: %[[Y:.*]], %[[R:.*]], %{{.*}} = tfm.fused_residual_rmsnorm %{{.*}}, %{{.*}}, %{{.*}}
// CHECK: tfm.add %[[R]], %[[Y]]
func.func @post_norm(%h0: tensor<?x?x8xf32>, %w1: tensor<2x8xf32>, %m: tensor<2x8x8xf32>) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%w1, %m : tensor<2x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %a1: tensor<8xf32>, %am: tensor<8x8xf32>):
    %a = tfm.matmul %x, %am {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %h2 = tfm.add %x, %a : tensor<?x?x8xf32>
    %y, %r = tfm.rmsnorm %h2, %a1 {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %h3 = tfm.add %h2, %y : tensor<?x?x8xf32>
    tfm.yield %h3 : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}

// -----

// Left alone: no norm reads the add (the final output is returned raw).
// CHECK-LABEL: func.func @no_norm
// CHECK-NOT: fused_residual_rmsnorm
func.func @no_norm(%a: tensor<?x?x8xf32>, %b: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %s = tfm.add %a, %b : tensor<?x?x8xf32>
  return %s : tensor<?x?x8xf32>
}
