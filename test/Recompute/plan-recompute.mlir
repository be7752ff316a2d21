// tfm-plan-recompute on one layer whose backward reads four values:
//   x    (the layer input, 8 x f32 = 32 B/token; rmsnorm_backward reads it)
//   y    (rmsnorm output, 32 B/token; the matmul's weight gradient)
//   rstd (rmsnorm statistic, 1 x f32 = 4 B/token)
//   z    (matmul output, 32 B/token; silu_backward)
// so save-all is 100 B/token. Rebuilding costs rmsnorm 4 FLOP x 8 = 32 and
// the matmul 2 x 8 x 8 = 128 FLOP per token; x, an input, is always kept.
// By hand: full keeps x and rebuilds rmsnorm and matmul (160 FLOP/token);
// 0.7 (70 B) keeps x and z and rebuilds rmsnorm (32 FLOP, 64 B); selective
// may not rebuild the matmul, so it lands on the same plan; 40B keeps x
// only (rebuilding y, rstd and z); save-all changes nothing.

// RUN: tfm-opt %s --tfm-autodiff --tfm-plan-recompute=budget=full | FileCheck %s --check-prefix=FULL
// RUN: tfm-opt %s --tfm-autodiff --tfm-plan-recompute=budget=0.7 | FileCheck %s --check-prefix=PART
// RUN: tfm-opt %s --tfm-autodiff --tfm-plan-recompute=budget=70% | FileCheck %s --check-prefix=PART
// RUN: tfm-opt %s --tfm-autodiff --tfm-plan-recompute=budget=selective | FileCheck %s --check-prefix=PART
// RUN: tfm-opt %s --tfm-autodiff --tfm-plan-recompute=budget=40B | FileCheck %s --check-prefix=FULL
// RUN: tfm-opt %s --tfm-autodiff --tfm-plan-recompute=budget=save-all | FileCheck %s --check-prefix=SAVE

// FULL-LABEL: func.func @forward_vjp(
// The forward scan saves the layer input only.
// FULL: %[[FWD:.*]]:2 = tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32>, tensor<2x?x?x8xf32> {
// FULL: ^bb0(%[[X:.*]]: tensor<?x?x8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8x8xf32>):
// FULL: tfm.yield %{{.*}}, %[[X]] : tensor<?x?x8xf32>, tensor<?x?x8xf32>
// The backward body rebuilds rmsnorm and matmul from the saved input before
// the first adjoint that reads them.
// FULL: tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}}, %{{.*}}, %[[FWD]]#1 : tensor<2x8xf32>, tensor<2x8x8xf32>, tensor<2x?x?x8xf32>)
// FULL: ^bb0(%[[G:.*]]: tensor<?x?x8xf32>, %[[NL:.*]]: tensor<8xf32>, %[[WL:.*]]: tensor<8x8xf32>, %[[SX:.*]]: tensor<?x?x8xf32>):
// FULL-NEXT: %[[Y:.*]], %[[R:.*]] = tfm.rmsnorm %[[SX]], %[[NL]] {eps = 1.000000e-05 : f64, tfm.recomputed}
// FULL-NEXT: %[[Z:.*]] = tfm.matmul %[[Y]], %[[WL]] {tfm.recomputed, transpose = #tfm.transpose<nt>}
// FULL-NEXT: tfm.silu_backward %[[G]], %[[Z]]
// FULL: tfm.matmul_grad_weight %{{.*}}, %[[Y]]
// FULL: tfm.rmsnorm_backward %{{.*}}, %[[SX]], %[[NL]], %[[R]]
// FULL: return

// PART-LABEL: func.func @forward_vjp(
// PART: %[[FWD:.*]]:3 = tfm.repeat
// PART: %[[Y:.*]], %{{.*}} = tfm.rmsnorm %[[X:[a-z0-9]+]]
// PART: %[[Z:.*]] = tfm.matmul %[[Y]]
// PART: tfm.yield %{{.*}}, %[[X]], %[[Z]] :
// PART: tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}}, %{{.*}}, %[[FWD]]#1, %[[FWD]]#2 :
// PART: ^bb0(%[[G:.*]]: tensor<?x?x8xf32>, %[[NL:.*]]: tensor<8xf32>, %[[WL:.*]]: tensor<8x8xf32>, %[[SX:.*]]: tensor<?x?x8xf32>, %[[SZ:.*]]: tensor<?x?x8xf32>):
// PART-NEXT: tfm.silu_backward %[[G]], %[[SZ]]
// PART-NEXT: tfm.matmul
// rmsnorm is rebuilt right before its first reader, not at the top.
// PART-NEXT: %[[Y2:.*]], %[[R2:.*]] = tfm.rmsnorm %[[SX]], %[[NL]] {{{.*}}tfm.recomputed}
// PART-NEXT: tfm.matmul_grad_weight %{{.*}}, %[[Y2]]
// PART-NOT: tfm.matmul {{.*}}tfm.recomputed

// SAVE-LABEL: func.func @forward_vjp(
// SAVE: tfm.repeat{{.*}} -> tensor<?x?x8xf32>, tensor<2x?x?x8xf32>, tensor<2x?x?x8xf32>, tensor<2x?x?xf32>, tensor<2x?x?x8xf32> {
// SAVE-NOT: tfm.recomputed
// SAVE: {num_layers = 2 : i64, reverse, tfm.recompute_plan = {budget = "save-all"
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
