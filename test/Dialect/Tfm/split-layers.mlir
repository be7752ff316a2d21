// tfm-split-layers: one scan of 4 layers (kinds 0, 1, 0, 1; weight %m
// only in kind 1; a stacked output of kind 1) split before layers 1 and 3
// runs as three scans: layer 0 (kind 0 alone), layers 1-2 (both kinds),
// layer 3 (kind 1 alone). Each stacked weight becomes one argument per
// scan that reads it, where it stood, with its own HF layers; the stacked
// output is concatenated back; the weight map stays exact.
// RUN: tfm-opt %s --split-input-file --tfm-split-layers="at=1,3" --verify-diagnostics | FileCheck %s
// On an imported hybrid model (Qwen3-Next: DeltaNet and attention layers,
// experts in every layer), split at layers 10 and 20: three scans, and the
// weight map names every tensor once at its own HF layer.
// RUN: tfm-import-hf %tfm_src/test/Import/Inputs/qwen3-next-80b-a3b-thinking.json | tfm-opt --tfm-split-layers="at=10,20" --tfm-check-weight-map | FileCheck %s --check-prefix=MODEL
// MODEL: tfm.repeat{{.*}} {kind_names = ["linear_attention", "full_attention"], num_layers = 10 : i64
// MODEL: tfm.repeat{{.*}} {first_layer = 10 : i64, kind_names = ["linear_attention", "full_attention"], num_layers = 10 : i64
// MODEL: tfm.repeat{{.*}} {first_layer = 20 : i64, kind_names = ["linear_attention", "full_attention"], num_layers = 28 : i64
// MODEL-NOT: tfm.repeat
// Splitting nowhere inside the scan leaves it as it is.
// RUN: tfm-opt %s --split-input-file --tfm-split-layers="at=0,4,9" | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[H:.*]]: tensor<?x?x4xf32>,
// CHECK-SAME: %[[N0:.*]]: tensor<1x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true, layers = [0]>},
// CHECK-SAME: %[[N1:.*]]: tensor<2x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true, layers = [1, 2]>},
// CHECK-SAME: %[[N2:.*]]: tensor<1x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true, layers = [3]>},
// CHECK-SAME: %[[M1:.*]]: tensor<1x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.m", stacked = true, layers = [1]>},
// CHECK-SAME: %[[M2:.*]]: tensor<1x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.m", stacked = true, layers = [3]>})
// CHECK: %[[A:.*]] = tfm.repeat(%[[H]] : tensor<?x?x4xf32>) layers(%[[N0]] : tensor<1x4xf32>) {num_layers = 1 : i64} -> tensor<?x?x4xf32> {
// CHECK: tfm.mul
// CHECK: %[[B:.*]]:2 = tfm.repeat(%[[A]] : tensor<?x?x4xf32>) layers(%[[N1]], %[[M1]] : tensor<2x4xf32>, tensor<1x4xf32>) {first_layer = 1 : i64, num_layers = 2 : i64, schedule = array<i64: 1, 0>, stacked_kinds = [array<i64: 1>], weight_kinds = [array<i64: 0, 1>, array<i64: 1>]} -> tensor<?x?x4xf32>, tensor<1x?x?xf32> {
// CHECK: tfm.mul
// CHECK: tfm.rmsnorm
// CHECK: %[[C:.*]]:2 = tfm.repeat(%[[B]]#0 : tensor<?x?x4xf32>) layers(%[[N2]], %[[M2]] : tensor<1x4xf32>, tensor<1x4xf32>) {first_layer = 3 : i64, num_layers = 1 : i64} -> tensor<?x?x4xf32>, tensor<1x?x?xf32> {
// CHECK-NOT: tfm.mul
// CHECK: tfm.rmsnorm
// CHECK: %[[S:.*]] = tfm.concat %[[B]]#1, %[[C]]#1 {dim = 0 : i64} : (tensor<1x?x?xf32>, tensor<1x?x?xf32>) -> tensor<2x?x?xf32>
// CHECK: return %[[C]]#0, %[[S]]
// NONE-LABEL: func.func @forward(
// NONE: tfm.repeat
// NONE-NOT: first_layer
// NONE-NOT: tfm.concat
func.func @forward(%h: tensor<?x?x4xf32>,
    %n: tensor<4x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true>},
    %m: tensor<2x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.m", stacked = true, layers = [1, 3]>})
    -> (tensor<?x?x4xf32>, tensor<2x?x?xf32>) {
  %r:2 = tfm.repeat (%h : tensor<?x?x4xf32>) layers(%n, %m : tensor<4x4xf32>, tensor<2x4xf32>) {num_layers = 4 : i64, schedule = array<i64: 0, 1, 0, 1>, weight_kinds = [array<i64: 0, 1>, array<i64: 1>], stacked_kinds = [array<i64: 1>]} -> tensor<?x?x4xf32>, tensor<2x?x?xf32> {
  ^bb0(%x: tensor<?x?x4xf32>, %nl: tensor<4xf32>):
    %y = tfm.mul %x, %x : tensor<?x?x4xf32>
    tfm.yield %y : tensor<?x?x4xf32>
  }, {
  ^bb0(%x: tensor<?x?x4xf32>, %nl: tensor<4xf32>, %ml: tensor<4xf32>):
    %y, %s = tfm.rmsnorm %x, %ml {eps = 1.0e-05 : f64} : (tensor<?x?x4xf32>, tensor<4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?xf32>)
    tfm.yield %y, %s : tensor<?x?x4xf32>, tensor<?x?xf32>
  }
  return %r#0, %r#1 : tensor<?x?x4xf32>, tensor<2x?x?xf32>
}

// -----

// A weight that is not a parameter argument cannot be split.
func.func @computed(%h: tensor<?x?x4xf32>, %n: tensor<4x4xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true>}) -> tensor<?x?x4xf32> {
  %n2 = tfm.mul %n, %n : tensor<4x4xf32>
  // expected-error @-2 {{tfm-split-layers: cannot split the layers of 'computed' at layer 1: stacked input #0 is not a stacked parameter of the function read by this scan alone}}
  %r = tfm.repeat (%h : tensor<?x?x4xf32>) layers(%n2 : tensor<4x4xf32>) {num_layers = 4 : i64} -> tensor<?x?x4xf32> {
  ^bb0(%x: tensor<?x?x4xf32>, %nl: tensor<4xf32>):
    %y = tfm.mul %x, %x : tensor<?x?x4xf32>
    tfm.yield %y : tensor<?x?x4xf32>
  }
  return %r : tensor<?x?x4xf32>
}
