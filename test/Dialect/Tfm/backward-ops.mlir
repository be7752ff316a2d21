// Backward ops round-trip through the pretty and the generic form.
// RUN: tfm-opt %s --split-input-file | tfm-opt --split-input-file | FileCheck %s
// RUN: tfm-opt %s --split-input-file --mlir-print-op-generic | tfm-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @norms
func.func @norms(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %r: tensor<?x?xf32>) -> tensor<?x?x8xf32> {
  // CHECK: tfm.zeros_like %{{.*}} : tensor<?x?x8xf32>
  %z = tfm.zeros_like %x : tensor<?x?x8xf32>
  // CHECK: tfm.rmsnorm_backward {{.*}} {unit_offset}
  %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %r {unit_offset}
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>)
  // CHECK: tfm.rmsnorm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : ({{.*}}, tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>)
  %dxr, %dwr = tfm.rmsnorm_backward %dy, %x, %w, %r, %x
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>)
  // CHECK: tfm.layernorm_backward
  %dx2, %dw2, %db2 = tfm.layernorm_backward %dy, %x, %w, %r, %r
      : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
      -> (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %s = tfm.add %dx, %dx2 : tensor<?x?x8xf32>
  %t = tfm.add %s, %z : tensor<?x?x8xf32>
  %u = tfm.add %t, %dxr : tensor<?x?x8xf32>
  return %u : tensor<?x?x8xf32>
}

// -----

// CHECK-LABEL: func @linear
func.func @linear(%dy: tensor<?x?x16xf32>, %x: tensor<?x?x8xf32>, %ids: tensor<?x?xi64>, %e: tensor<?x?x8xf32>) -> (tensor<16x8xf32>, tensor<16xf32>, tensor<32x8xf32>) {
  // CHECK: tfm.matmul_grad_weight {{.*}} {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<?x?x8xf32>) -> tensor<16x8xf32>
  %dw = tfm.matmul_grad_weight %dy, %x {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<?x?x8xf32>) -> tensor<16x8xf32>
  // CHECK: tfm.sum_leading {{.*}} -> tensor<16xf32>
  %db = tfm.sum_leading %dy : (tensor<?x?x16xf32>) -> tensor<16xf32>
  // CHECK: tfm.embedding_backward {{.*}} -> tensor<32x8xf32>
  %dt = tfm.embedding_backward %e, %ids : (tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<32x8xf32>
  return %dw, %db, %dt : tensor<16x8xf32>, tensor<16xf32>, tensor<32x8xf32>
}

// -----

// CHECK-LABEL: func @attention
func.func @attention(%do: tensor<?x?x4x8xf32>, %q: tensor<?x?x4x8xf32>, %k: tensor<?x?x2x8xf32>, %v: tensor<?x?x2x8xf32>, %s: tensor<4xf32>, %p: tensor<?x?xi64>) -> tensor<4xf32> {
  // CHECK: tfm.attention_backward {{.*}} {causal, scale = 3.500000e-01 : f64, sliding_window = 4 : i64, softcap = 3.000000e+01 : f64}
  %dq, %dk, %dv = tfm.attention_backward %do, %q, %k, %v {causal, scale = 0.35 : f64, sliding_window = 4 : i64, softcap = 30.0 : f64}
      : (tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>)
      -> (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>)
  // CHECK: tfm.attention_backward {{.*}} -> (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>, tensor<4xf32>)
  %dq2, %dk2, %dv2, %ds = tfm.attention_backward %do, %q, %k, %v sinks(%s) {causal, scale = 0.35 : f64}
      : (tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>, tensor<4xf32>)
      -> (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>, tensor<4xf32>)
  // CHECK: tfm.attention_backward {{.*}} sinks(%{{.*}}) doc_start(%{{.*}}) {causal
  %dq3, %dk3, %dv3, %ds3 = tfm.attention_backward %do, %q, %k, %v sinks(%s) doc_start(%p) {causal, scale = 0.35 : f64}
      : (tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>, tensor<4xf32>, tensor<?x?xi64>)
      -> (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>, tensor<4xf32>)
  // CHECK: tfm.rope_backward {{.*}} {rotary_dim = 8 : i64, theta = 1.000000e+04 : f64}
  %dr = tfm.rope_backward %dq, %p {theta = 1.0e4 : f64, rotary_dim = 8 : i64} : (tensor<?x?x4x8xf32>, tensor<?x?xi64>) -> tensor<?x?x4x8xf32>
  return %ds : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @activations
func.func @activations(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %xx: tensor<?x?x16xf32>, %l: tensor<?x?x8xf32>, %y: tensor<?x?xi64>, %d: tensor<f32>) -> tensor<?x?x16xf32> {
  // CHECK: tfm.silu_backward %{{.*}}, %{{.*}} : tensor<?x?x8xf32>
  %a = tfm.silu_backward %dy, %x : tensor<?x?x8xf32>
  // CHECK: tfm.gelu_tanh_backward
  %b = tfm.gelu_tanh_backward %a, %x : tensor<?x?x8xf32>
  // CHECK: tfm.relu2_backward
  %c = tfm.relu2_backward %b, %x : tensor<?x?x8xf32>
  // CHECK: tfm.softcap_backward %{{.*}}, %{{.*}} {cap = 3.000000e+01 : f64}
  %e = tfm.softcap_backward %c, %x {cap = 30.0 : f64} : tensor<?x?x8xf32>
  // CHECK: tfm.swiglu_backward {{.*}} : (tensor<?x?x8xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %f = tfm.swiglu_backward %e, %xx : (tensor<?x?x8xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  // CHECK: tfm.geglu_backward
  %g = tfm.geglu_backward %e, %xx : (tensor<?x?x8xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  // CHECK: tfm.cross_entropy_backward
  %h = tfm.cross_entropy_backward %d, %l, %y : (tensor<f32>, tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return %g : tensor<?x?x16xf32>
}

// -----

// A reverse scan with stacked outputs.
// CHECK-LABEL: func @reverse_scan
// CHECK: tfm.repeat(%{{.*}} : tensor<?x8xf32>) layers(%{{.*}} : tensor<3x8xf32>) {num_layers = 3 : i64, reverse} -> tensor<?x8xf32>, tensor<3x8xf32>, tensor<3x?x8xf32>
func.func @reverse_scan(%h: tensor<?x8xf32>, %w: tensor<3x8xf32>) -> tensor<3x?x8xf32> {
  %r:3 = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<3x8xf32>) {num_layers = 3 : i64, reverse} -> tensor<?x8xf32>, tensor<3x8xf32>, tensor<3x?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x, %wl, %x : tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>
  }
  return %r#2 : tensor<3x?x8xf32>
}
