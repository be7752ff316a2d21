// RUN: tfm-opt %s --split-input-file --tfm-check-weight-map --verify-diagnostics | FileCheck %s

// A consistent map passes and the module is unchanged.
// CHECK-LABEL: func @ok
// CHECK: tfm.repeat
func.func @ok(%ids: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", tied = ["lm_head.weight"]>},
    %n: tensor<2x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.norm.weight", stacked = true>})
    -> tensor<?x?x8xf32> {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%n : tensor<2x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>):
    %y, %s = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    tfm.yield %y : tensor<?x?x8xf32>
  }
  return %r : tensor<?x?x8xf32>
}

// -----

// Functions without parameters are not models; the pass leaves them alone.
// CHECK-LABEL: func @no_params
func.func @no_params(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{HF tensor 'model.norm.weight' is claimed by arguments #0 and #1}}
func.func @duplicate(%a: tensor<8xf32> {tfm.param = #tfm.param<name = "model.norm.weight">},
                     %b: tensor<8xf32> {tfm.param = #tfm.param<name = "model.norm.weight">}) {
  return
}

// -----

// A stacked template expands per layer and collides with a plain name.
// expected-error @+1 {{HF tensor 'model.layers.1.w' is claimed by arguments #0 and #1}}
func.func @layer_collision(%a: tensor<2x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.w", stacked = true>},
                           %b: tensor<8xf32> {tfm.param = #tfm.param<name = "model.layers.1.w">}) {
  return
}

// -----

// expected-error @+1 {{HF tensor 'lm_head.weight' is claimed by arguments #0 and #1}}
func.func @tied_collision(%a: tensor<8x4xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", tied = ["lm_head.weight"]>},
                          %b: tensor<8x4xf32> {tfm.param = #tfm.param<name = "lm_head.weight">}) {
  return
}

// -----

// expected-error @+1 {{float argument #1 has no 'tfm.param': every weight needs an HF name}}
func.func @missing(%a: tensor<8xf32> {tfm.param = #tfm.param<name = "w">}, %b: tensor<8xf32>) {
  return
}

// -----

func.func @stacked_outside_repeat(%a: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true>}) -> tensor<2x8xf32> {
  // expected-error @+1 {{stacked parameter 'l.{layer}.w' may only be used as a tfm.repeat weight}}
  %y = tfm.silu %a : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A parameter of some layer kinds lists its HF layers; they are the layers
// the scan runs those kinds at.
// CHECK-LABEL: func @partial_ok
func.func @partial_ok(%ids: tensor<?x?xi64>, %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "e">},
    %n: tensor<3x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.norm", stacked = true>},
    %m: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.moe", stacked = true, layers = [1, 2]>}) -> tensor<?x?x8xf32> {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%n, %m : tensor<3x8xf32>, tensor<2x8xf32>) {num_layers = 3 : i64, schedule = array<i64: 0, 1, 1>, weight_kinds = [array<i64: 0, 1>, array<i64: 1>]} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>):
    tfm.yield %x : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %w1: tensor<8xf32>):
    tfm.yield %x : tensor<?x?x8xf32>
  }
  return %r : tensor<?x?x8xf32>
}

// -----

func.func @partial_wrong_layers(%ids: tensor<?x?xi64>, %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "e">},
    %m: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.moe", stacked = true, layers = [0, 2]>}) -> tensor<?x?x8xf32> {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  // expected-error @+1 {{the layers that read stacked weight #0 differ from the HF layers of 'l.{layer}.moe' (its 'layers', or 0..1)}}
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%m : tensor<2x8xf32>) {num_layers = 3 : i64, schedule = array<i64: 0, 1, 1>, weight_kinds = [array<i64: 1>]} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>):
    tfm.yield %x : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %w1: tensor<8xf32>):
    tfm.yield %x : tensor<?x?x8xf32>
  }
  return %r : tensor<?x?x8xf32>
}

// -----

// Without 'layers', slice i is HF layer i: wrong for a weight of some kinds.
func.func @partial_missing_layers(%ids: tensor<?x?xi64>, %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "e">},
    %m: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.moe", stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  // expected-error @+1 {{the layers that read stacked weight #0 differ from the HF layers of 'l.{layer}.moe'}}
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%m : tensor<2x8xf32>) {num_layers = 3 : i64, schedule = array<i64: 0, 1, 1>, weight_kinds = [array<i64: 1>]} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>):
    tfm.yield %x : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %w1: tensor<8xf32>):
    tfm.yield %x : tensor<?x?x8xf32>
  }
  return %r : tensor<?x?x8xf32>
}
