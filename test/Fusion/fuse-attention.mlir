// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-fuse-attention))" | FileCheck %s

// Qwen3: packed q | k | v, per-head q/k norms, RoPE, GQA attention.
// CHECK-LABEL: func.func @qk_norm_rope
// CHECK: %[[H:.*]] = tfm.reshape %arg0 : tensor<?x?x128xf32> -> tensor<?x?x8x16xf32>
// CHECK: %[[R:.*]], %{{.*}}, %{{.*}} = tfm.qkv_qk_norm_rope %[[H]], %arg1, %arg2, %arg3 {eps = {{.*}} : f64, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 16 : i64, theta = 1.000000e+06 : f64}
// CHECK: %[[O:.*]], %{{.*}} = tfm.flash_attention %[[R]] {causal, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 2.500000e-01 : f64, sliding_window = 8 : i64}
// CHECK-NOT: tfm.split
// CHECK-NOT: tfm.attention
// CHECK: return %[[O]]
func.func @qk_norm_rope(%qkv: tensor<?x?x128xf32>, %wq: tensor<16xf32>, %wk: tensor<16xf32>, %pos: tensor<?x?xi64>) -> tensor<?x?x4x16xf32> {
  %q, %k, %v = tfm.split %qkv {dim = 2 : i64} : (tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
  %q4 = tfm.reshape %q : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %qn, %kn, %rq, %rk = tfm.qk_norm %q4, %k4, %wq, %wk {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<per_head>} : (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4xf32>, tensor<?x?x2xf32>)
  %qr = tfm.rope %qn, %pos {rotary_dim = 16 : i64, theta = 1.0e+06 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?xi64>) -> tensor<?x?x4x16xf32>
  %kr = tfm.rope %kn, %pos {rotary_dim = 16 : i64, theta = 1.0e+06 : f64} : (tensor<?x?x2x16xf32>, tensor<?x?xi64>) -> tensor<?x?x2x16xf32>
  %o = tfm.attention %qr, %kr, %v4 {causal, scale = 0.25 : f64, sliding_window = 8 : i64} : (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>) -> tensor<?x?x4x16xf32>
  return %o : tensor<?x?x4x16xf32>
}

// -----

// Llama: RoPE only; gpt-oss sinks, Gemma-2 softcaps and packed documents
// (doc_start) are kept.
// CHECK-LABEL: func.func @rope_sinks
// CHECK: %[[D:.*]] = tfm.document_starts %arg2
// CHECK: %[[R:.*]] = tfm.qkv_rope %{{.*}}, %arg2 {num_kv_heads = 2 : i64, num_q_heads = 4 : i64, rotary_dim = 8 : i64, theta = 1.000000e+04 : f64}
// CHECK: tfm.flash_attention %[[R]] sinks(%arg1) doc_start(%[[D]]) {causal, num_kv_heads = 2 : i64, num_q_heads = 4 : i64, scale = 2.500000e-01 : f64, softcap = 5.000000e+01 : f64}
func.func @rope_sinks(%qkv: tensor<?x?x128xbf16>, %sinks: tensor<4xbf16>, %pos: tensor<?x?xi64>) -> tensor<?x?x4x16xbf16> {
  %d = tfm.document_starts %pos : (tensor<?x?xi64>) -> tensor<?x?xi64>
  %q, %k, %v = tfm.split %qkv {dim = 2 : i64} : (tensor<?x?x128xbf16>) -> (tensor<?x?x64xbf16>, tensor<?x?x32xbf16>, tensor<?x?x32xbf16>)
  %q4 = tfm.reshape %q : tensor<?x?x64xbf16> -> tensor<?x?x4x16xbf16>
  %k4 = tfm.reshape %k : tensor<?x?x32xbf16> -> tensor<?x?x2x16xbf16>
  %v4 = tfm.reshape %v : tensor<?x?x32xbf16> -> tensor<?x?x2x16xbf16>
  %qr = tfm.rope %q4, %pos {rotary_dim = 8 : i64, theta = 1.0e+04 : f64} : (tensor<?x?x4x16xbf16>, tensor<?x?xi64>) -> tensor<?x?x4x16xbf16>
  %kr = tfm.rope %k4, %pos {rotary_dim = 8 : i64, theta = 1.0e+04 : f64} : (tensor<?x?x2x16xbf16>, tensor<?x?xi64>) -> tensor<?x?x2x16xbf16>
  %o = tfm.attention %qr, %kr, %v4 sinks(%sinks) doc_start(%d) {causal, scale = 0.25 : f64, softcap = 50.0 : f64} : (tensor<?x?x4x16xbf16>, tensor<?x?x2x16xbf16>, tensor<?x?x2x16xbf16>, tensor<4xbf16>, tensor<?x?xi64>) -> tensor<?x?x4x16xbf16>
  return %o : tensor<?x?x4x16xbf16>
}

// -----

// Left alone: q and k rotate with different theta; k is read elsewhere;
// q, k, v come from separate projections.
// CHECK-LABEL: func.func @different_rope
// CHECK-NOT: flash_attention
// CHECK-LABEL: func.func @k_used_twice
// CHECK-NOT: flash_attention
// CHECK-LABEL: func.func @separate
// CHECK-NOT: flash_attention
func.func @different_rope(%qkv: tensor<?x?x128xf32>, %pos: tensor<?x?xi64>) -> tensor<?x?x4x16xf32> {
  %q, %k, %v = tfm.split %qkv {dim = 2 : i64} : (tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
  %q4 = tfm.reshape %q : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %qr = tfm.rope %q4, %pos {rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?xi64>) -> tensor<?x?x4x16xf32>
  %kr = tfm.rope %k4, %pos {rotary_dim = 16 : i64, theta = 5.0e+05 : f64} : (tensor<?x?x2x16xf32>, tensor<?x?xi64>) -> tensor<?x?x2x16xf32>
  %o = tfm.attention %qr, %kr, %v4 {causal, scale = 0.25 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>) -> tensor<?x?x4x16xf32>
  return %o : tensor<?x?x4x16xf32>
}
func.func @k_used_twice(%qkv: tensor<?x?x128xf32>) -> (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>) {
  %q, %k, %v = tfm.split %qkv {dim = 2 : i64} : (tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
  %q4 = tfm.reshape %q : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %o = tfm.attention %q4, %k4, %v4 {causal, scale = 0.25 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>) -> tensor<?x?x4x16xf32>
  return %o, %k4 : tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>
}
func.func @separate(%q: tensor<?x?x64xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>) -> tensor<?x?x4x16xf32> {
  %q4 = tfm.reshape %q : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v4 = tfm.reshape %v : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %o = tfm.attention %q4, %k4, %v4 {causal, scale = 0.25 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>) -> tensor<?x?x4x16xf32>
  return %o : tensor<?x?x4x16xf32>
}

// -----

// LoRA on q and v (tfm-apply-lora adds x·Aᵀ·Bᵀ branches after the packed
// projection's split): the branches join the packed projection, zeros for
// k, and attention still fuses.
// CHECK-LABEL: func.func @lora_deltas
// CHECK: %[[Z:.*]] = tfm.zeros_like %{{.*}}#1 : tensor<?x?x32xf32>
// CHECK: %[[D:.*]] = tfm.concat %arg2, %[[Z]], %arg3 {dim = 2 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x128xf32>
// CHECK: %[[P:.*]] = tfm.add %arg0, %[[D]] : tensor<?x?x128xf32>
// CHECK: %[[H:.*]] = tfm.reshape %[[P]] : tensor<?x?x128xf32> -> tensor<?x?x8x16xf32>
// CHECK: %[[R:.*]] = tfm.qkv_rope %[[H]], %arg1
// CHECK: tfm.flash_attention %[[R]]
// CHECK-NOT: tfm.attention
func.func @lora_deltas(%qkv: tensor<?x?x128xf32>, %pos: tensor<?x?xi64>, %dq: tensor<?x?x64xf32>, %dv: tensor<?x?x32xf32>) -> tensor<?x?x4x16xf32> {
  %q, %k, %v = tfm.split %qkv {dim = 2 : i64} : (tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
  %qa = tfm.add %q, %dq : tensor<?x?x64xf32>
  %va = tfm.add %v, %dv : tensor<?x?x32xf32>
  %q4 = tfm.reshape %qa : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %k4 = tfm.reshape %k : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %v4 = tfm.reshape %va : tensor<?x?x32xf32> -> tensor<?x?x2x16xf32>
  %qr = tfm.rope %q4, %pos {rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?xi64>) -> tensor<?x?x4x16xf32>
  %kr = tfm.rope %k4, %pos {rotary_dim = 16 : i64, theta = 1.0e+04 : f64} : (tensor<?x?x2x16xf32>, tensor<?x?xi64>) -> tensor<?x?x2x16xf32>
  %o = tfm.attention %qr, %kr, %v4 {causal, scale = 0.25 : f64} : (tensor<?x?x4x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>) -> tensor<?x?x4x16xf32>
  return %o : tensor<?x?x4x16xf32>
}
