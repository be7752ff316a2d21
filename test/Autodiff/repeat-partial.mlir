// The backward of a scan whose weights cover only some layer kinds (an MoE
// model's experts among dense layers): each saved slot covers the kinds that
// save into it, and each weight gradient the kinds of its weight.
// RUN: tfm-opt %s --tfm-autodiff="seed-all-results" | FileCheck %s

// CHECK-LABEL: func.func @forward_vjp(
// Forward scan: slot 0 (the layer input) is saved by both kinds, slot 1
// (the rmsnorm rstd) by kind 1 only: it is stacked over layers 1 and 3.
// CHECK: %[[FWD:.*]]:3 = tfm.repeat(%{{.*}} : tensor<?x?x4xf32>) layers(%[[N:.*]], %[[M:.*]] : tensor<4x4xf32>, tensor<2x4xf32>) {num_layers = 4 : i64, schedule = array<i64: 0, 1, 0, 1>, stacked_kinds = [array<i64: 0, 1>, array<i64: 1>], weight_kinds = [array<i64: 0, 1>, array<i64: 1>]} -> tensor<?x?x4xf32>, tensor<4x?x?x4xf32>, tensor<2x?x?xf32> {
// CHECK: ^bb0(%[[X0:.*]]: tensor<?x?x4xf32>, %{{.*}}: tensor<4xf32>):
// CHECK: tfm.yield %{{.*}}, %[[X0]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>
// CHECK: ^bb0(%[[X1:.*]]: tensor<?x?x4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>):
// CHECK: %{{.*}}, %[[RSTD:.*]] = tfm.rmsnorm %[[X1]]
// CHECK: tfm.yield %{{.*}}, %[[X1]], %[[RSTD]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>
// Reverse scan: the weights and slots keep their kinds; kind 0 reads slot 0
// only and yields no gradient for %m.
// CHECK: tfm.repeat(%{{.*}} : tensor<?x?x4xf32>) layers(%[[N]], %[[M]], %[[FWD]]#1, %[[FWD]]#2 : tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x?x?x4xf32>, tensor<2x?x?xf32>) {num_layers = 4 : i64, reverse, schedule = array<i64: 0, 1, 0, 1>, stacked_kinds = [array<i64: 0, 1>, array<i64: 1>], weight_kinds = [array<i64: 0, 1>, array<i64: 1>, array<i64: 0, 1>, array<i64: 1>]} -> tensor<?x?x4xf32>, tensor<4x4xf32>, tensor<2x4xf32> {
// CHECK: ^bb0(%{{.*}}: tensor<?x?x4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<?x?x4xf32>):
// CHECK: tfm.yield %{{.*}}, %{{.*}} : tensor<?x?x4xf32>, tensor<4xf32>
// CHECK: ^bb0(%{{.*}}: tensor<?x?x4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<?x?x4xf32>, %{{.*}}: tensor<?x?xf32>):
// CHECK: tfm.yield %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>
func.func @forward(%h: tensor<?x?x4xf32>, %n: tensor<4x4xf32>, %m: tensor<2x4xf32>) -> tensor<?x?x4xf32> {
  %r = tfm.repeat (%h : tensor<?x?x4xf32>) layers(%n, %m : tensor<4x4xf32>, tensor<2x4xf32>) {num_layers = 4 : i64, schedule = array<i64: 0, 1, 0, 1>, weight_kinds = [array<i64: 0, 1>, array<i64: 1>]} -> tensor<?x?x4xf32> {
  ^bb0(%x: tensor<?x?x4xf32>, %nl: tensor<4xf32>):
    %y = tfm.mul %x, %x : tensor<?x?x4xf32>
    tfm.yield %y : tensor<?x?x4xf32>
  }, {
  ^bb0(%x: tensor<?x?x4xf32>, %nl: tensor<4xf32>, %ml: tensor<4xf32>):
    %y, %s = tfm.rmsnorm %x, %ml {eps = 1.0e-05 : f64} : (tensor<?x?x4xf32>, tensor<4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?xf32>)
    tfm.yield %y : tensor<?x?x4xf32>
  }
  return %r : tensor<?x?x4xf32>
}
