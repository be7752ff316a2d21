// A tfm.repeat of 2^62 layers is valid IR (a few hundred bytes): nothing
// may walk its layers one by one. The cost report and the recompute plan
// are closed-form, the pipelines emit one loop, and what is per layer by
// nature (one HF name per slice, a timeline point per op of every layer)
// is refused with its limit rather than run out of time or memory.
// RUN: timeout 20 tfm-opt %s --tfm-autodiff --tfm-cost-report="func=forward_vjp seq=4" -o /dev/null | FileCheck %s --check-prefix=COST
// COST: tfm.rmsnorm 4611686018427387904
// COST: kernels: 41505174165846491136
// RUN: timeout 20 tfm-opt %s --tfm-autodiff --tfm-plan-recompute=budget=0.5 | FileCheck %s --check-prefix=PLAN
// PLAN: layers = 4611686018427387904 : i64, name = "layer"
// RUN: timeout 20 tfm-opt %s --tfm-train-cpu | FileCheck %s --check-prefix=LOOP
// RUN: timeout 20 tfm-opt %s --tfm-train-gpu-sim | FileCheck %s --check-prefix=LOOP
// LOOP: llvm.mlir.constant(4611686018427387904 : index)
// LOOP: llvm.func @forward_vjp(
// RUN: not timeout 20 tfm-opt %s --tfm-check-weight-map -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAMES
// NAMES: error: stacked parameter 'l.{layer}.n' (argument #3) has 4611686018427387904 layers; a weight map names at most 100000
// RUN: not timeout 20 tfm-opt %s --tfm-autodiff --tfm-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMELINE
// TIMELINE: error: tfm-memory-report: the tfm.repeat runs 4611686018427387904 layers; the per-layer timeline takes at most 100000

func.func @forward(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", tied = ["lm_head.weight"]>},
    %n: tensor<4611686018427387904x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true>},
    %w: tensor<4611686018427387904x8x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true>},
    %f: tensor<8xf32> {tfm.param = #tfm.param<name = "model.norm.weight", frozen = true>})
    -> (tensor<?x?x16xf32>, tensor<f32>) {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%n, %w : tensor<4611686018427387904x8xf32>, tensor<4611686018427387904x8x8xf32>) {num_layers = 4611686018427387904 : i64} -> tensor<?x?x8xf32> {
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
