// Verifier messages of the backward ops and of stacked outputs.
// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @f(%dy: tensor<?x?x8xf32>, %ids: tensor<?x?xi64>) {
  // expected-error @+1 {{dtable must be [vocab, hidden]}}
  %t = tfm.embedding_backward %dy, %ids : (tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<8xf32>
  return
}

// -----

func.func @f(%dy: tensor<?x?x4xf32>, %ids: tensor<?x?xi64>) {
  // expected-error @+1 {{dy must have shape [?, ?, 8]}}
  %t = tfm.embedding_backward %dy, %ids : (tensor<?x?x4xf32>, tensor<?x?xi64>) -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%dy: tensor<?x?x4xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %r: tensor<?x?xf32>) {
  // expected-error @+1 {{dy must have type 'tensor<?x?x8xf32>'}}
  %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %r : (tensor<?x?x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @f(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %r: tensor<?x?xf32>) {
  // expected-error @+1 {{dweight must have type 'tensor<8xf32>'}}
  %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %r : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>) -> (tensor<?x?x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @f(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %r: tensor<?xf32>) {
  // expected-error @+1 {{rstd must have shape [?, ?]}}
  %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %r : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @f(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %r: tensor<?x?xf32>) {
  // expected-error @+1 {{dbias must have type 'tensor<8xf32>'}}
  %dx, %dw, %db = tfm.layernorm_backward %dy, %x, %w, %r, %r : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @f(%dy: tensor<?x16xf32>, %x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{must have the same rank (at least 2)}}
  %dw = tfm.matmul_grad_weight %dy, %x {transpose = #tfm.transpose<nt>} : (tensor<?x16xf32>, tensor<?x?x8xf32>) -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%dy: tensor<?x?x16xf32>, %x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{dweight must have shape [8, 16]}}
  %dw = tfm.matmul_grad_weight %dy, %x {transpose = #tfm.transpose<nn>} : (tensor<?x?x16xf32>, tensor<?x?x8xf32>) -> tensor<16x8xf32>
  return
}

// -----

func.func @f(%x: tensor<?x?x16xf32>) {
  // expected-error @+1 {{result must have shape [16]}}
  %s = tfm.sum_leading %x : (tensor<?x?x16xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @f(%dy: tensor<?x?x32xf32>, %p: tensor<?x?xi64>) {
  // expected-error @+1 {{dy must be [batch, seq, heads, head_dim]}}
  %d = tfm.rope_backward %dy, %p {theta = 1.0e4 : f64, rotary_dim = 8 : i64} : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @f(%dy: tensor<?x?x4x8xf32>, %p: tensor<?x?xi64>) {
  // expected-error @+1 {{rotary_dim must be positive and even, got 7}}
  %d = tfm.rope_backward %dy, %p {theta = 1.0e4 : f64, rotary_dim = 7 : i64} : (tensor<?x?x4x8xf32>, tensor<?x?xi64>) -> tensor<?x?x4x8xf32>
  return
}

// -----

func.func @f(%do: tensor<?x?x4x8xf32>, %q: tensor<?x?x4x8xf32>, %k: tensor<?x?x3x8xf32>, %v: tensor<?x?x3x8xf32>) {
  // expected-error @+1 {{query heads (4) must be a multiple of key/value heads (3)}}
  %a, %b, %c = tfm.attention_backward %do, %q, %k, %v {causal, scale = 0.35 : f64} : (tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x3x8xf32>, tensor<?x?x3x8xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x3x8xf32>, tensor<?x?x3x8xf32>)
  return
}

// -----

func.func @f(%do: tensor<?x?x2x8xf32>, %q: tensor<?x?x4x8xf32>, %k: tensor<?x?x2x8xf32>, %v: tensor<?x?x2x8xf32>) {
  // expected-error @+1 {{dout must have shape [?, ?, 4, 8]}}
  %a, %b, %c = tfm.attention_backward %do, %q, %k, %v {causal, scale = 0.35 : f64} : (tensor<?x?x2x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>)
  return
}

// -----

func.func @f(%do: tensor<?x?x4x8xf32>, %q: tensor<?x?x4x8xf32>, %k: tensor<?x?x2x8xf32>, %v: tensor<?x?x2x8xf32>) {
  // expected-error @+1 {{dk must have type 'tensor<?x?x2x8xf32>'}}
  %a, %b, %c = tfm.attention_backward %do, %q, %k, %v {causal, scale = 0.35 : f64} : (tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>)
  return
}

// -----

func.func @f(%d: tensor<f32>, %l: tensor<?x?x8xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{dlogits must have type 'tensor<?x?x8xf32>'}}
  %g = tfm.cross_entropy_backward %d, %l, %y : (tensor<f32>, tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  return
}

// -----

func.func @f(%d: tensor<1xf32>, %l: tensor<?x?x8xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{dloss must have shape []}}
  %g = tfm.cross_entropy_backward %d, %l, %y : (tensor<1xf32>, tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @f(%dy: tensor<?x8xf32>, %x: tensor<?x8xf32>) {
  // expected-error @+1 {{cap must be positive}}
  %g = tfm.softcap_backward %dy, %x {cap = 0.0 : f64} : tensor<?x8xf32>
  return
}

// -----

func.func @f(%dy: tensor<?x8xf32>, %x: tensor<?x16xf32>) {
  // expected-error @+1 {{dx must have type 'tensor<?x16xf32>'}}
  %g = tfm.swiglu_backward %dy, %x : (tensor<?x8xf32>, tensor<?x16xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @f(%h: tensor<?x8xf32>) {
  // expected-error @+1 {{stacked output #0 must have a leading dimension of num_layers = 3, got 'tensor<2x?x8xf32>'}}
  %r:2 = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 3 : i64} -> tensor<?x8xf32>, tensor<2x?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    tfm.yield %x, %x : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return
}

// -----

// expected-error @+1 {{'tfm.grad_of' must be an integer (an argument index)}}
func.func @f(%x: tensor<8xf32>) -> (tensor<8xf32> {tfm.grad_of = "x"}) {
  return %x : tensor<8xf32>
}

// -----

func.func @f(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %r: tensor<?x?xf32>, %dres: tensor<?x?x4xf32>) {
  // expected-error @+1 {{residual_grad must have type 'tensor<?x?x8xf32>'}}
  %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %r, %dres : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>, tensor<?x?x4xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>)
  return
}
