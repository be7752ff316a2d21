// Every gated DeltaNet verifier message, one case each.
// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @q_rank(%q: tensor<?x?x32xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{q must have shape [?, ?, ?, ?]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @q_dynamic_heads(%q: tensor<?x?x?x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{q dimension 2 must be static}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @k_shape(%q: tensor<?x?x2x16xf32>, %k: tensor<?x?x2x8xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{k must have shape [?, ?, 2, 16]}}
  %y, %s = tfm.gated_delta_rule %q, %k, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @v_rank(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x32xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{v must have shape [?, ?, ?, ?]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x32xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @v_dynamic_dim(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x?xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{v dimension 3 must be static}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x?xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x?xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @heads_divide(%q: tensor<?x?x3x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{the key heads (3) must divide the value heads (4)}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x3x16xf32>, tensor<?x?x3x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @a_shape(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %a: tensor<?x?x2xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{a must have shape [?, ?, 4]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %a, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @b_shape(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %b: tensor<?x?x4x1xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{b must have shape [?, ?, 4]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %b, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4x1xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @a_log_shape(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>, %h2: tensor<2xf32>) {
  // expected-error @+1 {{a_log must have shape [4]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h2, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<2xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @dt_bias_shape(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>, %h2: tensor<2xf32>) {
  // expected-error @+1 {{dt_bias must have shape [4]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h2 {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<2xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @chunk_size(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{chunk_size must be positive, got 0}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 0 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @y_type(%q: tensor<?x?x2x16xbf16>, %v: tensor<?x?x4x8xbf16>, %g: tensor<?x?x4xbf16>, %h: tensor<4xf32>) {
  // expected-error @+1 {{y must have type 'tensor<?x?x4x8xbf16>'}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xbf16>, tensor<?x?x2x16xbf16>, tensor<?x?x4x8xbf16>, tensor<?x?x4xbf16>, tensor<?x?x4xbf16>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return
}

// -----

func.func @states_shape(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{states must have shape [?, ?, 4, 16, 8]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x8x16xf32>)
  return
}

// -----

func.func @bw_dy(%dy: tensor<?x?x4x8xbf16>, %q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>, %s: tensor<?x?x4x16x8xf32>) {
  // expected-error @+1 {{dy must have type 'tensor<?x?x4x8xf32>'}}
  %d:7 = tfm.gated_delta_rule_backward %dy, %q, %q, %v, %g, %g, %h, %h, %s {chunk_size = 64 : i64} : (tensor<?x?x4x8xbf16>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x?x4x16x8xf32>) -> (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @bw_states(%dy: tensor<?x?x4x8xf32>, %q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>, %s: tensor<?x?x4x8x16xf32>) {
  // expected-error @+1 {{states must have shape [?, ?, 4, 16, 8]}}
  %d:7 = tfm.gated_delta_rule_backward %dy, %q, %q, %v, %g, %g, %h, %h, %s {chunk_size = 64 : i64} : (tensor<?x?x4x8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x?x4x8x16xf32>) -> (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @bw_grad_type(%dy: tensor<?x?x4x8xf32>, %q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>, %s: tensor<?x?x4x16x8xf32>) {
  // expected-error @+1 {{da_log must have type 'tensor<4xf32>'}}
  %d:7 = tfm.gated_delta_rule_backward %dy, %q, %q, %v, %g, %g, %h, %h, %s {chunk_size = 64 : i64} : (tensor<?x?x4x8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x?x4x16x8xf32>) -> (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xbf16>, tensor<4xf32>)
  return
}

// -----

// With a static sequence the chunk count is known: ceil(65 / 64) = 2 states.
func.func @static_chunks(%q: tensor<1x65x2x16xf32>, %v: tensor<1x65x4x8xf32>, %g: tensor<1x65x4xf32>, %h: tensor<4xf32>) {
  // expected-error @+1 {{states must have shape [1, 2, 4, 16, 8]}}
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64} : (tensor<1x65x2x16xf32>, tensor<1x65x2x16xf32>, tensor<1x65x4x8xf32>, tensor<1x65x4xf32>, tensor<1x65x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x65x4x8xf32>, tensor<1x65x4x16x8xf32>)
  return
}
