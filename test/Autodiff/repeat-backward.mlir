// The backward of one decoder-like layer: a forward scan that also saves
// what the adjoints read, and a reverse scan over the same layer body.
// RUN: tfm-opt %s --tfm-autodiff | FileCheck %s

// The original function is unchanged.
// CHECK-LABEL: func.func @forward(
// CHECK: tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {

// CHECK-LABEL: func.func @forward_vjp(
// CHECK-SAME: %[[IDS:[a-z0-9]+]]: tensor<?x?xi64>, %[[LABELS:[a-z0-9]+]]: tensor<?x?xi64>, %[[E:[a-z0-9]+]]: tensor<16x8xf32> {tfm.param
// CHECK-SAME: %[[N:[a-z0-9]+]]: tensor<2x8xf32> {tfm.param
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<2x8x8xf32> {tfm.param
// CHECK-SAME: %[[F:[a-z0-9]+]]: tensor<8xf32> {tfm.param = #tfm.param<name = "model.norm.weight", frozen = true>}
// CHECK-SAME: %[[DLOSS:[a-z0-9]+]]: tensor<f32>)
// CHECK-SAME: -> (tensor<?x?x16xf32>, tensor<f32>, tensor<16x8xf32> {tfm.grad_of = 2 : i64}, tensor<2x8xf32> {tfm.grad_of = 3 : i64}, tensor<2x8x8xf32> {tfm.grad_of = 4 : i64})

// Forward scan: carried result, then four saved slots stacked per layer, in
// the order the body defines them (not the order the rules read them).
// CHECK: %[[FWD:.*]]:5 = tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%[[N]], %[[W]] : tensor<2x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32>, tensor<2x?x?x8xf32>, tensor<2x?x?x8xf32>, tensor<2x?x?xf32>, tensor<2x?x?x8xf32> {
// CHECK: ^bb0(%[[X:.*]]: tensor<?x?x8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8x8xf32>):
// CHECK: %[[Y:.*]], %[[RSTD:.*]] = tfm.rmsnorm %[[X]]
// CHECK: %[[Z:.*]] = tfm.matmul %[[Y]]
// CHECK: tfm.yield %{{.*}}, %[[X]], %[[Y]], %[[RSTD]], %[[Z]] :

// The loss adjoint, then the LM head (tied to the embedding).
// CHECK: %[[DL:.*]] = tfm.cross_entropy_backward %[[DLOSS]]
// CHECK: %[[DH:.*]] = tfm.matmul %[[DL]], %[[E]] {transpose = #tfm.transpose<nn>}
// CHECK: %[[DE1:.*]] = tfm.matmul_grad_weight %[[DL]], %[[FWD]]#0 {transpose = #tfm.transpose<nt>}

// Reverse scan: carried gradient, weights then saved slots as stacked inputs,
// weight gradients as stacked outputs.
// CHECK: %[[BWD:.*]]:3 = tfm.repeat(%[[DH]] : tensor<?x?x8xf32>) layers(%[[N]], %[[W]], %[[FWD]]#1, %[[FWD]]#2, %[[FWD]]#3, %[[FWD]]#4 : {{.*}}) {num_layers = 2 : i64, reverse} -> tensor<?x?x8xf32>, tensor<2x8xf32>, tensor<2x8x8xf32> {
// CHECK: ^bb0(%[[G:.*]]: tensor<?x?x8xf32>, %[[NL:.*]]: tensor<8xf32>, %[[WL:.*]]: tensor<8x8xf32>, %[[SX:.*]]: tensor<?x?x8xf32>, %[[SY:.*]]: tensor<?x?x8xf32>, %[[SR:.*]]: tensor<?x?xf32>, %[[SZ:.*]]: tensor<?x?x8xf32>):
// CHECK: %[[DZ:.*]] = tfm.silu_backward %[[G]], %[[SZ]]
// CHECK: %[[DY:.*]] = tfm.matmul %[[DZ]], %[[WL]] {transpose = #tfm.transpose<nn>}
// CHECK: %[[DW:.*]] = tfm.matmul_grad_weight %[[DZ]], %[[SY]]
// CHECK: %[[DX:.*]], %[[DN:.*]] = tfm.rmsnorm_backward %[[DY]], %[[SX]], %[[NL]], %[[SR]]
// Residual fan-out: the carried gradient and the norm's gradient add up.
// CHECK: %[[DXT:.*]] = tfm.add %[[G]], %[[DX]]
// CHECK: tfm.yield %[[DXT]], %[[DN]], %[[DW]]

// Tied embedding: the head's and the table's gradients are summed.
// CHECK: %[[DE2:.*]] = tfm.embedding_backward %[[BWD]]#0, %[[IDS]]
// CHECK: %[[DE:.*]] = tfm.add %[[DE1]], %[[DE2]]
// The frozen final norm gets no gradient result.
// CHECK: return %{{.*}}, %{{.*}}, %[[DE]], %[[BWD]]#1, %[[BWD]]#2 :
func.func @forward(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", tied = ["lm_head.weight"]>},
    %n: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true>},
    %w: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true>},
    %f: tensor<8xf32> {tfm.param = #tfm.param<name = "model.norm.weight", frozen = true>})
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
  %fn = tfm.mul %r, %r : tensor<?x?x8xf32>
  %logits = tfm.matmul %r, %e {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %logits, %loss : tensor<?x?x16xf32>, tensor<f32>
}
