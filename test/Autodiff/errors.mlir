// RUN: tfm-opt %s --split-input-file --tfm-autodiff --verify-diagnostics

// expected-error @+1 {{tfm-autodiff: no function @forward}}
module {
  func.func @other() { return }
}

// -----

// Second-order gradients are not supported: backward ops have no rule.
func.func @forward(%dy: tensor<?x2x4xf32>, %x: tensor<?x2x4xf32>, %ids: tensor<?x2xi64>) -> tensor<f32> {
  // expected-error @+1 {{'tfm.silu_backward' has no adjoint rule (DifferentiableOpInterface), but gradients flow through it}}
  %g = tfm.silu_backward %dy, %x : tensor<?x2x4xf32>
  %loss = tfm.cross_entropy %g, %ids : (tensor<?x2x4xf32>, tensor<?x2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A statistic that feeds the loss has no gradient rule.
func.func @forward(%x: tensor<1x2x4xf32>, %w: tensor<4xf32>, %labels: tensor<1x2xi64>) -> tensor<f32> {
  // expected-error @+1 {{the gradient of rstd is not supported}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<1x2x4xf32>, tensor<4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2xf32>)
  %r3 = tfm.reshape %r : tensor<1x2xf32> -> tensor<1x2x1xf32>
  %l = tfm.concat %y, %r3 {dim = 2 : i64} : (tensor<1x2x4xf32>, tensor<1x2x1xf32>) -> tensor<1x2x5xf32>
  %loss = tfm.cross_entropy %l, %labels : (tensor<1x2x5xf32>, tensor<1x2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A captured value yielded from a layer body would need its gradient summed
// over layers outside the scan.
func.func @forward(%c: tensor<?x?x4xf32>, %h: tensor<?x?x4xf32>, %n: tensor<2x4xf32>, %y: tensor<?x?xi64>) -> tensor<f32> {
  %r = tfm.repeat (%h : tensor<?x?x4xf32>) layers(%n : tensor<2x4xf32>) {num_layers = 2 : i64} -> tensor<?x?x4xf32> {
  ^bb0(%x: tensor<?x?x4xf32>, %nl: tensor<4xf32>):
    // expected-error @+1 {{gradients of values captured by a tfm.repeat body are not supported; pass them as carried values}}
    tfm.yield %c : tensor<?x?x4xf32>
  }
  %loss = tfm.cross_entropy %r, %y : (tensor<?x?x4xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
