// Every tfm op round-trips through the pretty and the generic form.
// RUN: tfm-opt %s --split-input-file | tfm-opt --split-input-file | FileCheck %s
// RUN: tfm-opt %s --split-input-file --mlir-print-op-generic | tfm-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @embedding_norms
func.func @embedding_norms(%ids: tensor<?x?xi64>, %table: tensor<256x64xf32>,
    %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x?x64xf32> {
  // CHECK: tfm.embedding %{{.*}}, %{{.*}} : (tensor<?x?xi64>, tensor<256x64xf32>) -> tensor<?x?x64xf32>
  %h = tfm.embedding %ids, %table : (tensor<?x?xi64>, tensor<256x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: tfm.rmsnorm {{.*}} {eps = 1.000000e-05 : f64}
  %y, %rstd = tfm.rmsnorm %h, %w {eps = 1.0e-05 : f64}
      : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>)
  // CHECK: tfm.rmsnorm {{.*}} {eps = 9.9999999999999995E-7 : f64, unit_offset}
  %y1, %rstd1 = tfm.rmsnorm %y, %w {eps = 1.0e-06 : f64, unit_offset}
      : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>)
  // CHECK: tfm.layernorm {{.*}} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  %y2, %m2, %r2 = tfm.layernorm %y1, %w, %b {eps = 1.0e-05 : f64}
      : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  // CHECK: tfm.layernorm {{.*}} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  %y3, %m3, %r3 = tfm.layernorm %y2, %w {eps = 1.0e-05 : f64}
      : (tensor<?x?x64xf32>, tensor<64xf32>)
      -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  // CHECK: tfm.fused_residual_rmsnorm
  %y4, %res, %r4 = tfm.fused_residual_rmsnorm %y3, %h, %w {eps = 1.0e-06 : f64, unit_offset}
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>)
      -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?xf32>)
  return %y4 : tensor<?x?x64xf32>
}

// -----

// CHECK-LABEL: func @matmuls
func.func @matmuls(%x: tensor<?x?x64xbf16>, %wnt: tensor<128x64xbf16>,
    %wnn: tensor<64x128xbf16>, %bias: tensor<128xbf16>) -> tensor<?x?x128xbf16> {
  // CHECK: tfm.matmul {{.*}} {transpose = #tfm.transpose<nt>}
  %a = tfm.matmul %x, %wnt {transpose = #tfm.transpose<nt>}
      : (tensor<?x?x64xbf16>, tensor<128x64xbf16>) -> tensor<?x?x128xbf16>
  // CHECK: tfm.matmul {{.*}} {transpose = #tfm.transpose<nn>} : (tensor<?x?x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>)
  %b = tfm.matmul %x, %wnn, %bias {transpose = #tfm.transpose<nn>}
      : (tensor<?x?x64xbf16>, tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<?x?x128xbf16>
  // CHECK: tfm.add
  %c = tfm.add %a, %b : tensor<?x?x128xbf16>
  return %c : tensor<?x?x128xbf16>
}

// -----

// CHECK-LABEL: func @rope_variants
func.func @rope_variants(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) -> tensor<?x?x4x64xf32> {
  // CHECK: tfm.rope {{.*}} {rotary_dim = 64 : i64, theta = 1.000000e+04 : f64}
  %a = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64}
      : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  // CHECK: #tfm.rope_scaling<kind = linear, factor = 8.000000e+00>
  %b = tfm.rope %a, %pos {theta = 1.0e6 : f64, rotary_dim = 64 : i64,
      scaling = #tfm.rope_scaling<kind = linear, factor = 8.0>}
      : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  // CHECK: #tfm.rope_scaling<kind = llama3, factor = 3.200000e+01, original = 8192>
  %c = tfm.rope %b, %pos {theta = 5.0e5 : f64, rotary_dim = 64 : i64,
      scaling = #tfm.rope_scaling<kind = llama3, factor = 32.0, low_freq_factor = 1.0,
                                  high_freq_factor = 4.0, original = 8192>}
      : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  // CHECK: #tfm.rope_scaling<kind = yarn, factor = 4.000000e+01, original = 4096, truncate = false, attention_factor = 1.3465735902799727>
  %d = tfm.rope %c, %pos {theta = 1.0e4 : f64, rotary_dim = 32 : i64,
      scaling = #tfm.rope_scaling<kind = yarn, factor = 40.0, original = 4096,
                                  truncate = false, attention_factor = 1.3465735902799727>}
      : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  // CHECK: #tfm.rope_scaling<kind = longrope, original = 4096, attention_factor = 1.1902380714238083, short_factor = [1.000000e+00, 2.000000e+00], long_factor = [3.000000e+00, 4.000000e+00]>
  %e = tfm.rope %d, %pos {theta = 1.0e4 : f64, rotary_dim = 4 : i64,
      scaling = #tfm.rope_scaling<kind = longrope, original = 4096,
                                  attention_factor = 1.1902380714238083,
                                  short_factor = [1.0, 2.0],
                                  long_factor = [3.0, 4.0]>}
      : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return %e : tensor<?x?x4x64xf32>
}

// -----

// CHECK-LABEL: func @attention_ops
func.func @attention_ops(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>,
    %v: tensor<?x?x2x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>,
    %wqa: tensor<512xf32>, %wka: tensor<128xf32>, %sinks: tensor<8xf32>,
    %qkv: tensor<?x?x12x64xf32>, %pos: tensor<?x?xi64>) -> tensor<?x?x8x64xf32> {
  // CHECK: tfm.qk_norm {{.*}} mode = #tfm.qk_norm_mode<per_head>
  %q1, %k1, %rq, %rk = tfm.qk_norm %q, %k, %wq, %wk
      {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<per_head>}
      : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  // CHECK: tfm.qk_norm {{.*}} mode = #tfm.qk_norm_mode<whole>
  %q2, %k2, %rq2, %rk2 = tfm.qk_norm %q1, %k1, %wqa, %wka
      {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<whole>}
      : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<512xf32>, tensor<128xf32>)
      -> (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  // CHECK: tfm.attention {{.*}} {causal, scale = 1.250000e-01 : f64}
  %a = tfm.attention %q2, %k2, %v {causal, scale = 0.125 : f64}
      : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  // CHECK: tfm.attention {{.*}} {causal, scale = 6.250000e-02 : f64, sliding_window = 4096 : i64, softcap = 5.000000e+01 : f64}
  %b = tfm.attention %a, %k2, %v sinks(%sinks) {causal, scale = 0.0625 : f64, sliding_window = 4096 : i64, softcap = 50.0 : f64}
      : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>, tensor<8xf32>) -> tensor<?x?x8x64xf32>
  // CHECK: tfm.qkv_qk_norm_rope
  %p, %prq, %prk = tfm.qkv_qk_norm_rope %qkv, %wq, %wk, %pos
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64,
       theta = 1.0e6 : f64, rotary_dim = 64 : i64}
      : (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi64>)
      -> (tensor<?x?x12x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  // CHECK: tfm.qkv_rope {{.*}} {num_kv_heads = 2 : i64, num_q_heads = 8 : i64, rotary_dim = 32 : i64, theta = 5.000000e+05 : f64}
  %pr = tfm.qkv_rope %qkv, %pos
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, theta = 5.0e5 : f64,
       rotary_dim = 32 : i64}
      : (tensor<?x?x12x64xf32>, tensor<?x?xi64>) -> tensor<?x?x12x64xf32>
  // CHECK: tfm.qkv_qk_norm_rope_backward
  %bq, %bwq, %bwk = tfm.qkv_qk_norm_rope_backward %qkv, %qkv, %wq, %wk, %pos, %prq, %prk
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64,
       theta = 1.0e6 : f64, rotary_dim = 64 : i64}
      : (tensor<?x?x12x64xf32>, tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>,
         tensor<?x?xi64>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
      -> (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>)
  // CHECK: tfm.flash_attention_backward {{.*}} {causal, num_kv_heads = 2 : i64, num_q_heads = 8 : i64, scale = 1.250000e-01 : f64}
  %dqkv = tfm.flash_attention_backward %a, %qkv
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64}
      : (tensor<?x?x8x64xf32>, tensor<?x?x12x64xf32>) -> tensor<?x?x12x64xf32>
  // CHECK: tfm.flash_attention {{.*}} -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  %o, %lse = tfm.flash_attention %p
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64}
      : (tensor<?x?x12x64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  // CHECK: tfm.flash_attention {{.*}} sinks({{.*}}) {causal, num_kv_heads = 2 : i64, num_q_heads = 8 : i64, scale = 1.250000e-01 : f64, sliding_window = 128 : i64}
  %o2, %lse2 = tfm.flash_attention %p sinks(%sinks)
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64, sliding_window = 128 : i64}
      : (tensor<?x?x12x64xf32>, tensor<8xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  // Packed documents: positions that restart at 0 give each token's
  // document start, which the attention ops take as doc_start.
  // CHECK: %[[DOCS:.*]] = tfm.document_starts %{{.*}} : (tensor<?x?xi64>) -> tensor<?x?xi64>
  %docs = tfm.document_starts %pos : (tensor<?x?xi64>) -> tensor<?x?xi64>
  // CHECK: tfm.attention {{.*}} doc_start(%[[DOCS]]) {causal
  %c = tfm.attention %q2, %k2, %v doc_start(%docs) {causal, scale = 0.125 : f64}
      : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?xi64>) -> tensor<?x?x8x64xf32>
  // CHECK: tfm.flash_attention {{.*}} sinks({{.*}}) doc_start(%[[DOCS]]) {causal
  %o3, %lse3 = tfm.flash_attention %p sinks(%sinks) doc_start(%docs)
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64}
      : (tensor<?x?x12x64xf32>, tensor<8xf32>, tensor<?x?xi64>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  // CHECK: tfm.flash_attention_backward {{.*}} doc_start(%[[DOCS]]) {causal
  %dqkv2 = tfm.flash_attention_backward %a, %qkv doc_start(%docs)
      {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64}
      : (tensor<?x?x8x64xf32>, tensor<?x?x12x64xf32>, tensor<?x?xi64>) -> tensor<?x?x12x64xf32>
  %s = tfm.add %o, %o2 : tensor<?x?x8x64xf32>
  %t = tfm.add %s, %b : tensor<?x?x8x64xf32>
  %u = tfm.add %t, %c : tensor<?x?x8x64xf32>
  %w = tfm.add %u, %o3 : tensor<?x?x8x64xf32>
  return %w : tensor<?x?x8x64xf32>
}

// -----

// CHECK-LABEL: func @activations
func.func @activations(%x: tensor<?x?x256xf16>) -> tensor<?x?x128xf16> {
  // CHECK: tfm.swiglu %{{.*}} : (tensor<?x?x256xf16>) -> tensor<?x?x128xf16>
  %a = tfm.swiglu %x : (tensor<?x?x256xf16>) -> tensor<?x?x128xf16>
  // CHECK: tfm.geglu
  %b = tfm.geglu %x : (tensor<?x?x256xf16>) -> tensor<?x?x128xf16>
  // CHECK: tfm.silu %{{.*}} : tensor<?x?x128xf16>
  %c = tfm.silu %a : tensor<?x?x128xf16>
  // CHECK: tfm.gelu_tanh
  %d = tfm.gelu_tanh %b : tensor<?x?x128xf16>
  // CHECK: tfm.relu2
  %e = tfm.relu2 %c : tensor<?x?x128xf16>
  // CHECK: tfm.mul
  %f = tfm.mul %d, %e : tensor<?x?x128xf16>
  // CHECK: tfm.scale %{{.*}} {factor = 8.000000e+00 : f64}
  %g = tfm.scale %f {factor = 8.0 : f64} : tensor<?x?x128xf16>
  // CHECK: tfm.softcap %{{.*}} {cap = 3.000000e+01 : f64}
  %h = tfm.softcap %g {cap = 30.0 : f64} : tensor<?x?x128xf16>
  return %h : tensor<?x?x128xf16>
}

// -----

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<?x?x96xf32>) -> tensor<?x?x96xf32> {
  // CHECK: tfm.reshape %{{.*}} : tensor<?x?x96xf32> -> tensor<?x?x3x32xf32>
  %r = tfm.reshape %x : tensor<?x?x96xf32> -> tensor<?x?x3x32xf32>
  // CHECK: tfm.split %{{.*}} {dim = 2 : i64} : (tensor<?x?x3x32xf32>) -> (tensor<?x?x2x32xf32>, tensor<?x?x1x32xf32>)
  %a, %b = tfm.split %r {dim = 2 : i64}
      : (tensor<?x?x3x32xf32>) -> (tensor<?x?x2x32xf32>, tensor<?x?x1x32xf32>)
  // CHECK: tfm.concat %{{.*}}, %{{.*}} {dim = 2 : i64}
  %c = tfm.concat %b, %a {dim = 2 : i64}
      : (tensor<?x?x1x32xf32>, tensor<?x?x2x32xf32>) -> tensor<?x?x3x32xf32>
  %d = tfm.reshape %c : tensor<?x?x3x32xf32> -> tensor<?x?x96xf32>
  return %d : tensor<?x?x96xf32>
}

// -----

// CHECK-LABEL: func @losses
func.func @losses(%logits: tensor<?x?x256xf32>, %labels: tensor<?x?xi64>,
    %h: tensor<?x?x64xbf16>, %w: tensor<256x64xbf16>) -> (tensor<f32>, tensor<f32>) {
  // CHECK: tfm.cross_entropy {{.*}} : (tensor<?x?x256xf32>, tensor<?x?xi64>) -> tensor<f32>
  %l = tfm.cross_entropy %logits, %labels : (tensor<?x?x256xf32>, tensor<?x?xi64>) -> tensor<f32>
  // CHECK: tfm.fused_lm_head_loss {{.*}} {ignore_index = -1 : i64, softcap = 3.000000e+01 : f64}
  %l2, %lse = tfm.fused_lm_head_loss %h, %w, %labels {ignore_index = -1 : i64, softcap = 30.0 : f64}
      : (tensor<?x?x64xbf16>, tensor<256x64xbf16>, tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>)
  // CHECK: tfm.fused_lm_head_loss {{.*}} {logit_scale = 1.250000e-01 : f64}
  %l3, %lse3 = tfm.fused_lm_head_loss %h, %w, %labels {logit_scale = 0.125 : f64}
      : (tensor<?x?x64xbf16>, tensor<256x64xbf16>, tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>)
  // CHECK: tfm.fused_lm_head_loss_backward {{.*}} {logit_scale = 1.250000e-01 : f64, softcap = 3.000000e+01 : f64}
  %dh, %dw = tfm.fused_lm_head_loss_backward %l3, %h, %w, %labels, %lse3 {logit_scale = 0.125 : f64, softcap = 30.0 : f64}
      : (tensor<f32>, tensor<?x?x64xbf16>, tensor<256x64xbf16>, tensor<?x?xi64>, tensor<?x?xf32>) -> (tensor<?x?x64xbf16>, tensor<256x64xbf16>)
  return %l, %l2 : tensor<f32>, tensor<f32>
}

// -----

// A model: parameters as arguments with their HF names, one layer body
// repeated over stacked weights, two layer kinds on a schedule.
// CHECK-LABEL: func @model
// CHECK-SAME: #tfm.param<name = "model.embed_tokens.weight", kind = "embedding", tied = ["lm_head.weight"]>
// CHECK-SAME: #tfm.param<name = "model.layers.{layer}.input_layernorm.weight", kind = "norm", stacked = true>
// CHECK-SAME: #tfm.param<name = "model.layers.{layer}.self_attn.qkv_proj.weight", kind = "attn_qkv", mapping = fuse, sources = ["model.layers.{layer}.self_attn.q_proj.weight", "model.layers.{layer}.self_attn.k_proj.weight", "model.layers.{layer}.self_attn.v_proj.weight"], stacked = true>
// CHECK: tfm.repeat(%{{.*}} : tensor<?x?x16xf32>) layers(%{{.*}}, %{{.*}} : tensor<3x16xf32>, tensor<3x32x16xf32>) {num_layers = 3 : i64, schedule = array<i64: 0, 1, 0>} -> tensor<?x?x16xf32> {
// CHECK: ^bb0(%{{.*}}: tensor<?x?x16xf32>, %{{.*}}: tensor<16xf32>, %{{.*}}: tensor<32x16xf32>):
// CHECK: tfm.yield
// CHECK: }, {
// CHECK: tfm.yield
func.func @model(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %embed: tensor<64x16xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", kind = "embedding", tied = ["lm_head.weight"]>},
    %ln: tensor<3x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.input_layernorm.weight", kind = "norm", stacked = true>},
    %wqkv: tensor<3x32x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.qkv_proj.weight", kind = "attn_qkv", mapping = fuse,
        sources = ["model.layers.{layer}.self_attn.q_proj.weight", "model.layers.{layer}.self_attn.k_proj.weight", "model.layers.{layer}.self_attn.v_proj.weight"], stacked = true>})
    -> tensor<f32> {
  %h0 = tfm.embedding %ids, %embed : (tensor<?x?xi64>, tensor<64x16xf32>) -> tensor<?x?x16xf32>
  %h = tfm.repeat (%h0 : tensor<?x?x16xf32>) layers(%ln, %wqkv : tensor<3x16xf32>, tensor<3x32x16xf32>)
      {num_layers = 3 : i64, schedule = array<i64: 0, 1, 0>} -> tensor<?x?x16xf32> {
  ^bb0(%x: tensor<?x?x16xf32>, %w: tensor<16xf32>, %wl: tensor<32x16xf32>):
    %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64}
        : (tensor<?x?x16xf32>, tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?xf32>)
    tfm.yield %y : tensor<?x?x16xf32>
  }, {
  ^bb0(%x: tensor<?x?x16xf32>, %w: tensor<16xf32>, %wl: tensor<32x16xf32>):
    %p = tfm.matmul %x, %wl {transpose = #tfm.transpose<nt>}
        : (tensor<?x?x16xf32>, tensor<32x16xf32>) -> tensor<?x?x32xf32>
    %g = tfm.swiglu %p : (tensor<?x?x32xf32>) -> tensor<?x?x16xf32>
    tfm.yield %g : tensor<?x?x16xf32>
  }
  %logits = tfm.matmul %h, %embed {transpose = #tfm.transpose<nt>}
      : (tensor<?x?x16xf32>, tensor<64x16xf32>) -> tensor<?x?x64xf32>
  %loss = tfm.cross_entropy %logits, %labels {ignore_index = -100 : i64}
      : (tensor<?x?x64xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// MLA's pieces: interleaved RoPE pairs and a key head shared by all heads.
// CHECK-LABEL: func @mla_pieces
func.func @mla_pieces(%x: tensor<?x?x1x8xf32>, %pos: tensor<?x?xi64>) -> tensor<?x?x4x8xf32> {
  // CHECK: tfm.rope {{.*}} {interleaved, rotary_dim = 8 : i64, theta = 1.000000e+04 : f64}
  %r = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 8 : i64, interleaved}
      : (tensor<?x?x1x8xf32>, tensor<?x?xi64>) -> tensor<?x?x1x8xf32>
  // CHECK: tfm.expand %{{.*}} {dim = 2 : i64} : (tensor<?x?x1x8xf32>) -> tensor<?x?x4x8xf32>
  %k = tfm.expand %r {dim = 2 : i64} : (tensor<?x?x1x8xf32>) -> tensor<?x?x4x8xf32>
  // CHECK: tfm.expand_backward %{{.*}} {dim = 2 : i64} : (tensor<?x?x4x8xf32>) -> tensor<?x?x1x8xf32>
  %d = tfm.expand_backward %k {dim = 2 : i64} : (tensor<?x?x4x8xf32>) -> tensor<?x?x1x8xf32>
  // CHECK: tfm.rope_backward {{.*}} {interleaved, rotary_dim = 8 : i64, theta = 1.000000e+04 : f64}
  %dr = tfm.rope_backward %d, %pos {theta = 1.0e4 : f64, rotary_dim = 8 : i64, interleaved}
      : (tensor<?x?x1x8xf32>, tensor<?x?xi64>) -> tensor<?x?x1x8xf32>
  return %k : tensor<?x?x4x8xf32>
}
