// Activity analysis: only what a trainable parameter reaches gets adjoint
// work. Frozen weights get no weight-gradient GEMM (and their inputs are
// not saved for one), a frozen head no gradient, a frozen stacked weight no
// stacked gradient output of the backward scan.
// RUN: tfm-opt %s --split-input-file --tfm-autodiff | FileCheck %s

// The stacked norm and the final norm train; the embedding, the stacked
// projection and the head are frozen.
// CHECK-LABEL: func.func @forward_vjp(
// CHECK-SAME: -> (tensor<?x?x16xf32>, tensor<f32>, tensor<2x8xf32> {tfm.grad_of = 3 : i64}, tensor<8xf32> {tfm.grad_of = 5 : i64})
// The forward scan saves the layer input, rstd and the projection's output
// (its input y only fed the frozen weight's gradient).
// CHECK: %[[FWD:.*]]:4 = tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32>, tensor<2x?x?x8xf32>, tensor<2x?x?xf32>, tensor<2x?x?x8xf32> {
// CHECK-NOT: matmul_grad_weight
// The head's input gradient only.
// CHECK: tfm.matmul %{{.*}}, %arg6 {transpose = #tfm.transpose<nn>}
// CHECK-NOT: matmul_grad_weight
// The backward scan yields the carried gradient and the norm's, not the
// frozen projection's.
// CHECK: %[[BWD:.*]]:2 = tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers({{.*}}) {num_layers = 2 : i64, reverse{{.*}}} -> tensor<?x?x8xf32>, tensor<2x8xf32> {
// CHECK: ^bb0(%[[G:.*]]: tensor<?x?x8xf32>, %{{.*}}: tensor<8xf32>, %[[WL:.*]]: tensor<8x8xf32>, %[[SX:.*]]: tensor<?x?x8xf32>, %[[SR:.*]]: tensor<?x?xf32>, %[[SZ:.*]]: tensor<?x?x8xf32>):
// CHECK: %[[DZ:.*]] = tfm.silu_backward %[[G]], %[[SZ]]
// CHECK-NEXT: %[[DY:.*]] = tfm.matmul %[[DZ]], %[[WL]] {transpose = #tfm.transpose<nn>}
// CHECK-NEXT: %[[DX:.*]], %[[DN:.*]] = tfm.rmsnorm_backward %[[DY]], %[[SX]]
// CHECK-NEXT: %[[DXT:.*]] = tfm.add %[[G]], %[[DX]]
// CHECK-NEXT: tfm.yield %[[DXT]], %[[DN]] :
// The frozen embedding gets no backward.
// CHECK-NOT: tfm.embedding_backward
// CHECK: return %{{.*}}, %{{.*}}, %[[BWD]]#1, %{{.*}} :
func.func @forward(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", frozen = true>},
    %n: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true>},
    %w: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true, frozen = true>},
    %f: tensor<8xf32> {tfm.param = #tfm.param<name = "model.norm.weight">},
    %head: tensor<16x8xf32> {tfm.param = #tfm.param<name = "lm_head.weight", frozen = true>})
    -> (tensor<?x?x16xf32>, tensor<f32>) {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%n, %w : tensor<2x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %nl: tensor<8xf32>, %wl: tensor<8x8xf32>):
    %y, %s = tfm.rmsnorm %x, %nl {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %z = tfm.matmul %y, %wl {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %a = tfm.silu %z : tensor<?x?x8xf32>
    %o = tfm.add %x, %a : tensor<?x?x8xf32>
    tfm.yield %o : tensor<?x?x8xf32>
  }
  %fy, %fs = tfm.rmsnorm %r, %f {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
  %logits = tfm.matmul %fy, %head {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %logits, %loss : tensor<?x?x16xf32>, tensor<f32>
}

// -----

// Only the final norm trains: nothing in the layers is active, so there is
// no backward scan, and the forward scan saves nothing.
// CHECK-LABEL: func.func @forward_vjp(
// CHECK-SAME: -> (tensor<?x?x16xf32>, tensor<f32>, tensor<8xf32> {tfm.grad_of = 4 : i64})
// CHECK: tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}} : tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
// CHECK-NOT: tfm.repeat
// CHECK-NOT: matmul_grad_weight
// CHECK: return
func.func @forward(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", frozen = true>},
    %w: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true, frozen = true>},
    %f: tensor<8xf32> {tfm.param = #tfm.param<name = "model.norm.weight">},
    %head: tensor<16x8xf32> {tfm.param = #tfm.param<name = "lm_head.weight", frozen = true>})
    -> (tensor<?x?x16xf32>, tensor<f32>) {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%w : tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8x8xf32>):
    %z = tfm.matmul %x, %wl {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %o = tfm.add %x, %z : tensor<?x?x8xf32>
    tfm.yield %o : tensor<?x?x8xf32>
  }
  %fy, %fs = tfm.rmsnorm %r, %f {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
  %logits = tfm.matmul %fy, %head {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %logits, %loss : tensor<?x?x16xf32>, tensor<f32>
}

// -----

// The first layers frozen in a scan of their own (tfm-split-layers, as
// tfm-train --freeze by layer makes it) with a frozen embedding: nothing
// reaches that scan, so only the second scan runs backward.
// CHECK-LABEL: func.func @forward_vjp(
// CHECK-SAME: -> (tensor<?x?x16xf32>, tensor<f32>, tensor<1x8x8xf32> {tfm.grad_of = 4 : i64})
// CHECK: tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}} : tensor<1x8x8xf32>) {num_layers = 1 : i64} -> tensor<?x?x8xf32> {
// CHECK: tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}} : tensor<1x8x8xf32>) {first_layer = 1 : i64, num_layers = 1 : i64} -> tensor<?x?x8xf32>, tensor<1x?x?x8xf32> {
// CHECK: %[[BWD:.*]]:2 = tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers({{.*}}) {first_layer = 1 : i64, num_layers = 1 : i64, reverse} -> tensor<?x?x8xf32>, tensor<1x8x8xf32> {
// CHECK-NOT: tfm.repeat
// CHECK: return %{{.*}}, %{{.*}}, %[[BWD]]#1 :
func.func @forward(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", frozen = true>},
    %w0: tensor<1x8x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true, frozen = true, layers = [0]>},
    %w1: tensor<1x8x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true, layers = [1]>},
    %head: tensor<16x8xf32> {tfm.param = #tfm.param<name = "lm_head.weight", frozen = true>})
    -> (tensor<?x?x16xf32>, tensor<f32>) {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r0 = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%w0 : tensor<1x8x8xf32>) {num_layers = 1 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8x8xf32>):
    %z = tfm.matmul %x, %wl {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %o = tfm.add %x, %z : tensor<?x?x8xf32>
    tfm.yield %o : tensor<?x?x8xf32>
  }
  %r1 = tfm.repeat (%r0 : tensor<?x?x8xf32>) layers(%w1 : tensor<1x8x8xf32>) {first_layer = 1 : i64, num_layers = 1 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8x8xf32>):
    %z = tfm.matmul %x, %wl {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %o = tfm.add %x, %z : tensor<?x?x8xf32>
    tfm.yield %o : tensor<?x?x8xf32>
  }
  %logits = tfm.matmul %r1, %head {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %logits, %loss : tensor<?x?x16xf32>, tensor<f32>
}
