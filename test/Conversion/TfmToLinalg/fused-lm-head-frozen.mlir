// tfm.fused_lm_head_loss_backward with a dweight nobody reads (a frozen
// head) lowers to a chunk loop that carries only dhidden: the logits GEMM
// and the dhidden GEMM, no dweight GEMM and no [V, H] accumulator. With
// dweight read, the loop also carries and accumulates it.
// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-convert-to-linalg))" | FileCheck %s
// The cost model agrees (B = 1, T = 4, V = 256, H = 64): 2 GEMMs of
// 2·4·256·64 plus 5 FLOP per logit = 267,264, writing only dhidden
// (4·64·4 = 1,024 B); with dweight 3 GEMMs = 398,336, writing 1,024 +
// 256·64·4 = 66,560 B.
// RUN: tfm-opt %s --tfm-cost-report="func=frozen_head batch=1 seq=4" -o /dev/null | FileCheck %s --check-prefix=COST-FROZEN
// COST-FROZEN: tfm.fused_lm_head_loss_backward 1 2.672640e+05 6.661200e+04 1.024000e+03
// RUN: tfm-opt %s --tfm-cost-report="func=trained_head batch=1 seq=4" -o /dev/null | FileCheck %s --check-prefix=COST-TRAINED
// COST-TRAINED: tfm.fused_lm_head_loss_backward 1 3.983360e+05 6.661200e+04 6.656000e+04

// CHECK-LABEL: func.func @frozen_head(
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<?x?x64xf32>) {
// CHECK: linalg.matmul {{.*}} -> tensor<?x256xf32>
// CHECK: linalg.matmul {{.*}} -> tensor<?x64xf32>
// CHECK-NOT: linalg.matmul
// CHECK: scf.yield %{{.*}} : tensor<?x?x64xf32>
// CHECK: return

// CHECK-LABEL: func.func @trained_head(
// CHECK: scf.for {{.*}} -> (tensor<?x?x64xf32>, tensor<256x64xf32>) {
// CHECK: linalg.matmul {{.*}} -> tensor<?x256xf32>
// CHECK: linalg.matmul {{.*}} -> tensor<?x64xf32>
// CHECK: linalg.matmul {{.*}} -> tensor<256x64xf32>
// CHECK: scf.yield %{{.*}}, %{{.*}} : tensor<?x?x64xf32>, tensor<256x64xf32>
func.func @frozen_head(%dloss: tensor<f32>, %h: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %labels: tensor<?x?xi64>, %lse: tensor<?x?xf32>) -> tensor<?x?x64xf32> {
  %dh, %dw = tfm.fused_lm_head_loss_backward %dloss, %h, %w, %labels, %lse
      : (tensor<f32>, tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>, tensor<?x?xf32>) -> (tensor<?x?x64xf32>, tensor<256x64xf32>)
  return %dh : tensor<?x?x64xf32>
}
func.func @trained_head(%dloss: tensor<f32>, %h: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %labels: tensor<?x?xi64>, %lse: tensor<?x?xf32>) -> (tensor<?x?x64xf32>, tensor<256x64xf32>) {
  %dh, %dw = tfm.fused_lm_head_loss_backward %dloss, %h, %w, %labels, %lse
      : (tensor<f32>, tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>, tensor<?x?xf32>) -> (tensor<?x?x64xf32>, tensor<256x64xf32>)
  return %dh, %dw : tensor<?x?x64xf32>, tensor<256x64xf32>
}
