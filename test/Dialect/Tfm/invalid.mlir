// Every verifier message, one case each.
// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @case0(%ids: tensor<?x?xi64>, %t: tensor<256xf32>) {
  // expected-error @+1 {{table must be [vocab, hidden]}}
  %h = tfm.embedding %ids, %t : (tensor<?x?xi64>, tensor<256xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @case1(%ids: tensor<?x?xi64>, %t: tensor<256x64xf32>) {
  // expected-error @+1 {{result must have shape [?, ?, 64], got 'tensor<?x?x32xf32>'}}
  %h = tfm.embedding %ids, %t : (tensor<?x?xi64>, tensor<256x64xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @case2(%ids: tensor<?x?xi64>, %t: tensor<256x64xf32>) {
  // expected-error @+1 {{result must have element type 'f32'}}
  %h = tfm.embedding %ids, %t : (tensor<?x?xi64>, tensor<256x64xf32>) -> tensor<?x?x64xbf16>
  return
}

// -----

func.func @case3(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{input must have rank at least 2}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<f32>, tensor<1xf32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @case4(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{result y must have the input type}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xbf16>, tensor<?x?xf32>)
  return
}

// -----

func.func @case5(%x: tensor<?x?x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{weight must have shape [64], got 'tensor<32xf32>'}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<32xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case6(%x: tensor<?x?x64xbf16>, %w: tensor<64xf32>) {
  // expected-error @+1 {{weight must have element type 'bf16'}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x64xbf16>, tensor<64xf32>) -> (tensor<?x?x64xbf16>, tensor<?x?xf32>)
  return
}

// -----

func.func @case7(%x: tensor<?x?x64xbf16>, %w: tensor<64xbf16>) {
  // expected-error @+1 {{rstd must have element type 'f32'}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x64xbf16>, tensor<64xbf16>) -> (tensor<?x?x64xbf16>, tensor<?x?xf64>)
  return
}

// -----

func.func @case8(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{rstd must have shape [?, ?]}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?xf32>)
  return
}

// -----

func.func @case9(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{eps must be positive, got 0}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 0.0 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case10(%x: tensor<?x?x64xf32>, %res: tensor<?x?x32xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{residual must have the input type}}
  %y, %o, %r = tfm.fused_residual_rmsnorm %x, %res, %w {eps = 1.0e-06 : f64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case11(%x: tensor<?x?x64xf32>, %res: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{residual_out must have the input type}}
  %y, %o, %r = tfm.fused_residual_rmsnorm %x, %res, %w {eps = 1.0e-06 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case12(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>, %b: tensor<63xf32>) {
  // expected-error @+1 {{bias must have shape [64]}}
  %y, %m, %r = tfm.layernorm %x, %w, %b {eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<63xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case13(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{mean must have shape [?, ?]}}
  %y, %m, %r = tfm.layernorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x1xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case14(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{weight must be a matrix}}
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @case15(%x: tensor<?x?x64xf32>, %w: tensor<64x128xf32>) {
  // expected-error @+1 {{contraction size mismatch: input 'tensor<?x?x64xf32>' has 64 columns but weight 'tensor<64x128xf32>' (nt) has 128}}
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @case16(%x: tensor<?x?x64xf32>, %w: tensor<128x64xbf16>) {
  // expected-error @+1 {{weight must have element type 'f32'}}
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x64xf32>, tensor<128x64xbf16>) -> tensor<?x?x128xf32>
  return
}

// -----

func.func @case17(%x: tensor<?x?x64xf32>, %w: tensor<64x128xf32>) {
  // expected-error @+1 {{result must have shape [?, ?, 128]}}
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nn>} : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @case18(%x: tensor<?x?x64xf32>, %w: tensor<128x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{bias must have shape [128]}}
  %y = tfm.matmul %x, %w, %b {transpose = #tfm.transpose<nt>} : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<64xf32>) -> tensor<?x?x128xf32>
  return
}

// -----

func.func @case19(%x: tensor<?x?x256xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{input must be [batch, seq, heads, head_dim]}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64} : (tensor<?x?x256xf32>, tensor<?x?xi64>) -> tensor<?x?x256xf32>
  return
}

// -----

func.func @case20(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{result must have the input type}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xbf16>
  return
}

// -----

func.func @case21(%x: tensor<?x?x4x64xf32>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{positions must have shape [?, ?]}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64} : (tensor<?x?x4x64xf32>, tensor<?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case22(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{theta must be positive}}
  %y = tfm.rope %x, %pos {theta = -1.0 : f64, rotary_dim = 64 : i64} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case23(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{rotary_dim must be positive and even, got 63}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 63 : i64} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case24(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{rotary_dim 128 exceeds the head dimension 64}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 128 : i64} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case25(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{longrope factors must have rotary_dim / 2 = 32 entries, got 2}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = longrope, original = 4096, short_factor = [1.0, 1.0], long_factor = [1.0, 1.0]>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case26(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{rope scaling factor must be positive}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = linear, factor = 0.0>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case27(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{rope attention_factor must be positive}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = plain, attention_factor = -1.0>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case28(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{rope scaling 'llama3' needs a positive 'original' (original_max_position_embeddings)}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = llama3, factor = 8.0>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case29(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{llama3 rope needs 0 < low_freq_factor < high_freq_factor}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = llama3, factor = 8.0, low_freq_factor = 4.0, high_freq_factor = 1.0, original = 8192>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case30(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{yarn rope needs beta_fast > beta_slow > 0}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = yarn, factor = 8.0, original = 4096, beta_fast = 1.0, beta_slow = 32.0>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case31(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{longrope needs short_factor and long_factor}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = longrope, original = 4096>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case32(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{longrope short_factor and long_factor differ in length (1 vs 2)}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = longrope, original = 4096, short_factor = [1.0], long_factor = [1.0, 2.0]>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case33(%x: tensor<?x?x4x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{short_factor/long_factor are only for longrope}}
  %y = tfm.rope %x, %pos {theta = 1.0e4 : f64, rotary_dim = 64 : i64, scaling = #tfm.rope_scaling<kind = linear, factor = 2.0, short_factor = [1.0]>} : (tensor<?x?x4x64xf32>, tensor<?x?xi64>) -> tensor<?x?x4x64xf32>
  return
}

// -----

func.func @case34(%q: tensor<?x?x512xf32>, %k: tensor<?x?x2x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>) {
  // expected-error @+1 {{q and k must be [batch, seq, heads, head_dim]}}
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<per_head>} : (tensor<?x?x512xf32>, tensor<?x?x2x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x512xf32>, tensor<?x?x2x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @case35(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x32xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>) {
  // expected-error @+1 {{must share element type and head_dim}}
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<per_head>} : (tensor<?x?x8x64xf32>, tensor<?x?x2x32xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x?x2x32xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @case36(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>) {
  // expected-error @+1 {{results must have the types of q and k}}
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<per_head>} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x?x8x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @case37(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>) {
  // expected-error @+1 {{q_weight must have shape [512]}}
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<whole>} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case38(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>) {
  // expected-error @+1 {{k_rstd must have shape [?, ?, 2]}}
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {eps = 1.0e-06 : f64, mode = #tfm.qk_norm_mode<per_head>} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x8xf32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case39(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>) {
  // expected-error @+1 {{eps must be positive}}
  %a, %b, %c, %d = tfm.qk_norm %q, %k, %wq, %wk {eps = -1.0 : f64, mode = #tfm.qk_norm_mode<per_head>} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @case40(%q: tensor<?x?x512xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{q, k and v must be [batch, seq, heads, head_dim]}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<?x?x512xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case41(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xbf16>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{q, k and v must share an element type}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xbf16>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case42(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x32xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{k must have shape [?, ?, 2, 64], got 'tensor<?x?x2x32xf32>'}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case43(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x4x64xf32>) {
  // expected-error @+1 {{v must have shape [?, ?, 2, ?]}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x4x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case44(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{head counts must be static}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<?x?x?x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x?x64xf32>
  return
}

// -----

func.func @case45(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x3x64xf32>, %v: tensor<?x?x3x64xf32>) {
  // expected-error @+1 {{query heads (8) must be a multiple of key/value heads (3)}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x3x64xf32>, tensor<?x?x3x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case46(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{scale must be positive}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.0 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case47(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{sliding_window must be positive, got 0}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64, sliding_window = 0 : i64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case48(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{softcap must be positive}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64, softcap = -50.0 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case49(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{sliding_window requires causal attention}}
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, sliding_window = 16 : i64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @case50(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{sinks must have shape [8]}}
  %o = tfm.attention %q, %k, %v sinks(%s) {causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>, tensor<2xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @doc_start_not_causal(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>, %d: tensor<?x?xi64>) {
  // expected-error @+1 {{doc_start requires causal attention}}
  %o = tfm.attention %q, %k, %v doc_start(%d) {scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?xi64>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @doc_start_shape(%q: tensor<2x?x8x64xf32>, %k: tensor<2x?x2x64xf32>, %v: tensor<2x?x2x64xf32>, %d: tensor<3x?xi64>) {
  // expected-error @+1 {{doc_start must have shape [2, ?], got 'tensor<3x?xi64>'}}
  %o = tfm.attention %q, %k, %v doc_start(%d) {causal, scale = 0.125 : f64} : (tensor<2x?x8x64xf32>, tensor<2x?x2x64xf32>, tensor<2x?x2x64xf32>, tensor<3x?xi64>) -> tensor<2x?x8x64xf32>
  return
}

// -----

func.func @doc_start_keys(%q: tensor<?x4x8x64xf32>, %k: tensor<?x6x2x64xf32>, %v: tensor<?x6x2x64xf32>, %d: tensor<?x4xi64>) {
  // expected-error @+1 {{doc_start needs the keys to be the queries' tokens, got 4 queries and 6 keys}}
  %o = tfm.attention %q, %k, %v doc_start(%d) {causal, scale = 0.125 : f64} : (tensor<?x4x8x64xf32>, tensor<?x6x2x64xf32>, tensor<?x6x2x64xf32>, tensor<?x4xi64>) -> tensor<?x4x8x64xf32>
  return
}

// -----

func.func @doc_start_float(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>, %d: tensor<?x?xf32>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %o = tfm.attention %q, %k, %v doc_start(%d) {causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?xf32>) -> tensor<?x?x8x64xf32>
  return
}

// -----

func.func @flash_doc_start_shape(%qkv: tensor<?x?x12x64xf32>, %d: tensor<?xi64>) {
  // expected-error @+1 {{doc_start must have shape [?, ?], got 'tensor<?xi64>'}}
  %o, %l = tfm.flash_attention %qkv doc_start(%d) {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x12x64xf32>, tensor<?xi64>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  return
}

// -----

func.func @document_starts_rank(%p: tensor<?xi64>) {
  // expected-error @+1 {{positions must be [batch, seq], got 'tensor<?xi64>'}}
  %d = tfm.document_starts %p : (tensor<?xi64>) -> tensor<?xi64>
  return
}

// -----

func.func @case51(%q: tensor<?x?x8x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) {
  // expected-error @+1 {{result must have shape [?, ?, 8, 64]}}
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x2x64xf32>
  return
}

// -----

func.func @case52(%qkv: tensor<?x?x12x64xf32>) {
  // expected-error @+1 {{head counts must be positive, got 0 query and 2 key/value heads}}
  %o, %l = tfm.flash_attention %qkv {num_q_heads = 0 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x12x64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  return
}

// -----

func.func @case53(%qkv: tensor<?x?x768xf32>) {
  // expected-error @+1 {{qkv must be [batch, seq, q_heads + 2 * kv_heads, head_dim]}}
  %o, %l = tfm.flash_attention %qkv {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x768xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  return
}

// -----

func.func @case54(%qkv: tensor<?x?x12x64xf32>) {
  // expected-error @+1 {{qkv has 12 heads, expected num_q_heads + 2 * num_kv_heads = 16}}
  %o, %l = tfm.flash_attention %qkv {num_q_heads = 8 : i64, num_kv_heads = 4 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x12x64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x8x?xf32>)
  return
}

// -----

func.func @case55(%qkv: tensor<?x?x12x64xf32>) {
  // expected-error @+1 {{lse must have shape [?, 8, ?]}}
  %o, %l = tfm.flash_attention %qkv {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x12x64xf32>) -> (tensor<?x?x8x64xf32>, tensor<?x4x?xf32>)
  return
}

// -----

func.func @case56(%qkv: tensor<?x?x12x64xbf16>) {
  // expected-error @+1 {{lse must have element type 'f32'}}
  %o, %l = tfm.flash_attention %qkv {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x12x64xbf16>) -> (tensor<?x?x8x64xbf16>, tensor<?x8x?xf64>)
  return
}

// -----

func.func @case57(%qkv: tensor<?x?x12x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{result must have the qkv type}}
  %o, %a, %b = tfm.qkv_qk_norm_rope %qkv, %wq, %wk, %pos {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64, theta = 1.0e6 : f64, rotary_dim = 64 : i64} : (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi64>) -> (tensor<?x?x8x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @case58(%qkv: tensor<?x?x12x64xf32>, %wq: tensor<64xf32>, %wk: tensor<32xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{k_weight must have shape [64]}}
  %o, %a, %b = tfm.qkv_qk_norm_rope %qkv, %wq, %wk, %pos {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64, theta = 1.0e6 : f64, rotary_dim = 64 : i64} : (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<32xf32>, tensor<?x?xi64>) -> (tensor<?x?x12x64xf32>, tensor<?x?x8xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @case59(%qkv: tensor<?x?x14x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{query heads (8) must be a multiple of key/value heads (3)}}
  %o, %a, %b = tfm.qkv_qk_norm_rope %qkv, %wq, %wk, %pos {num_q_heads = 8 : i64, num_kv_heads = 3 : i64, eps = 1.0e-06 : f64, theta = 1.0e6 : f64, rotary_dim = 64 : i64} : (tensor<?x?x14x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi64>) -> (tensor<?x?x14x64xf32>, tensor<?x?x8xf32>, tensor<?x?x3xf32>)
  return
}

// -----

func.func @case60(%x: tensor<?x?x255xf32>) {
  // expected-error @+1 {{packed up|gate dimension must be static and even}}
  %y = tfm.swiglu %x : (tensor<?x?x255xf32>) -> tensor<?x?x127xf32>
  return
}

// -----

func.func @case61(%x: tensor<?x?x256xf32>) {
  // expected-error @+1 {{result must have shape [?, ?, 128]}}
  %y = tfm.geglu %x : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
  return
}

// -----

func.func @case62(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{cap must be positive}}
  %y = tfm.softcap %x {cap = 0.0 : f64} : tensor<?x?x8xf32>
  return
}

// -----

func.func @case63(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{reshape must keep the element type}}
  %y = tfm.reshape %x : tensor<?x?x8xf32> -> tensor<?x?x2x4xbf16>
  return
}

// -----

func.func @case64(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{only static trailing dimensions can be regrouped}}
  %y = tfm.reshape %x : tensor<?x?x8xf32> -> tensor<?x16xf32>
  return
}

// -----

func.func @case65(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{element count mismatch: 'tensor<?x?x8xf32>' has 8 per leading index, 'tensor<?x?x3x4xf32>' has 12}}
  %y = tfm.reshape %x : tensor<?x?x8xf32> -> tensor<?x?x3x4xf32>
  return
}

// -----

func.func @case66(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{dim 3 out of range for rank 3}}
  %a, %b = tfm.split %x {dim = 3 : i64} : (tensor<?x?x8xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>)
  return
}

// -----

func.func @case67(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{dimension 1 must be static}}
  %a, %b = tfm.split %x {dim = 1 : i64} : (tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
  return
}

// -----

func.func @case68(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{result sizes along dimension 2 add up to 7, expected 8}}
  %a, %b = tfm.split %x {dim = 2 : i64} : (tensor<?x?x8xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x3xf32>)
  return
}

// -----

func.func @case69(%x: tensor<?x?x8xf32>) {
  // expected-error @+1 {{must match the rank and element type of}}
  %a, %b = tfm.split %x {dim = 2 : i64} : (tensor<?x?x8xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xbf16>)
  return
}

// -----

func.func @case70(%x: tensor<2x?x8xf32>) {
  // expected-error @+1 {{differs from 'tensor<2x?x8xf32>' outside dimension 2}}
  %a, %b = tfm.split %x {dim = 2 : i64} : (tensor<2x?x8xf32>) -> (tensor<3x?x4xf32>, tensor<2x?x4xf32>)
  return
}

// -----

func.func @case71() {
  // expected-error @+1 {{needs at least one input}}
  %y = tfm.concat {dim = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @case72(%a: tensor<?x?x4xf32>, %b: tensor<?x?x8xf32>) {
  // expected-error @+1 {{input sizes along dimension 2 add up to 12, expected 10}}
  %y = tfm.concat %a, %b {dim = 2 : i64} : (tensor<?x?x4xf32>, tensor<?x?x8xf32>) -> tensor<?x?x10xf32>
  return
}

// -----

func.func @case73(%l: tensor<?x256xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{expected [batch, seq, features]}}
  %loss = tfm.cross_entropy %l, %y : (tensor<?x256xf32>, tensor<?x?xi64>) -> tensor<f32>
  return
}

// -----

func.func @case74(%l: tensor<2x?x256xf32>, %y: tensor<3x?xi64>) {
  // expected-error @+1 {{labels must have shape [2, ?]}}
  %loss = tfm.cross_entropy %l, %y : (tensor<2x?x256xf32>, tensor<3x?xi64>) -> tensor<f32>
  return
}

// -----

func.func @case75(%l: tensor<?x?x256xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{loss must have shape []}}
  %loss = tfm.cross_entropy %l, %y : (tensor<?x?x256xf32>, tensor<?x?xi64>) -> tensor<1xf32>
  return
}

// -----

func.func @case76(%h: tensor<?x?x64xf32>, %w: tensor<256x32xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{weight must be [vocab, 64], got 'tensor<256x32xf32>'}}
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y : (tensor<?x?x64xf32>, tensor<256x32xf32>, tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case77(%h: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{softcap must be positive}}
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {softcap = 0.0 : f64} : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>)
  return
}

// -----

func.func @case78(%h: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{lse must have shape [?, ?]}}
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>) -> (tensor<f32>, tensor<?xf32>)
  return
}

// -----

func.func @expand_not_unit(%x: tensor<?x?x2x8xf32>) {
  // expected-error @+1 {{dim 2 must be a static dimension of size 1 in 'tensor<?x?x2x8xf32>' and static in 'tensor<?x?x4x8xf32>'}}
  %y = tfm.expand %x {dim = 2 : i64} : (tensor<?x?x2x8xf32>) -> tensor<?x?x4x8xf32>
  return
}

// -----

func.func @expand_other_dims(%x: tensor<?x?x1x8xf32>) {
  // expected-error @+1 {{'tensor<?x?x1x8xf32>' and 'tensor<?x?x4x4xf32>' differ outside dim 2}}
  %y = tfm.expand %x {dim = 2 : i64} : (tensor<?x?x1x8xf32>) -> tensor<?x?x4x4xf32>
  return
}

// -----

func.func @expand_backward_rank(%dy: tensor<?x?x4x8xf32>) {
  // expected-error @+1 {{expects the same rank (at least 2) and element type, got 'tensor<?x1x8xf32>' and 'tensor<?x?x4x8xf32>'}}
  %dx = tfm.expand_backward %dy {dim = 2 : i64} : (tensor<?x?x4x8xf32>) -> tensor<?x1x8xf32>
  return
}

// -----

func.func @qkv_rope_type(%qkv: tensor<?x?x12x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{result must have the qkv type}}
  %o = tfm.qkv_rope %qkv, %pos {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, theta = 1.0e6 : f64, rotary_dim = 64 : i64} : (tensor<?x?x12x64xf32>, tensor<?x?xi64>) -> tensor<?x?x12x32xf32>
  return
}

// -----

func.func @qkv_rope_heads(%qkv: tensor<?x?x12x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{qkv has 12 heads, expected num_q_heads + 2 * num_kv_heads = 10}}
  %o = tfm.qkv_rope %qkv, %pos {num_q_heads = 8 : i64, num_kv_heads = 1 : i64, theta = 1.0e6 : f64, rotary_dim = 64 : i64} : (tensor<?x?x12x64xf32>, tensor<?x?xi64>) -> tensor<?x?x12x64xf32>
  return
}

// -----

func.func @qkv_rope_dim(%qkv: tensor<?x?x12x64xf32>, %pos: tensor<?x?xi64>) {
  // expected-error @+1 {{rotary_dim}}
  %o = tfm.qkv_rope %qkv, %pos {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, theta = 1.0e6 : f64, rotary_dim = 128 : i64} : (tensor<?x?x12x64xf32>, tensor<?x?xi64>) -> tensor<?x?x12x64xf32>
  return
}

// -----

func.func @lm_head_scale(%h: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %y: tensor<?x?xi64>) {
  // expected-error @+1 {{logit_scale must be finite and nonzero}}
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {logit_scale = 0.0 : f64} : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>)
  return
}

// -----

func.func @lm_head_backward_weight(%d: tensor<f32>, %h: tensor<?x?x64xf32>, %w: tensor<256x32xf32>, %y: tensor<?x?xi64>, %lse: tensor<?x?xf32>) {
  // expected-error @+1 {{weight must be [vocab, 64]}}
  %dh, %dw = tfm.fused_lm_head_loss_backward %d, %h, %w, %y, %lse : (tensor<f32>, tensor<?x?x64xf32>, tensor<256x32xf32>, tensor<?x?xi64>, tensor<?x?xf32>) -> (tensor<?x?x64xf32>, tensor<256x32xf32>)
  return
}

// -----

func.func @lm_head_backward_lse(%d: tensor<f32>, %h: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %y: tensor<?x?xi64>, %lse: tensor<?xf32>) {
  // expected-error @+1 {{lse}}
  %dh, %dw = tfm.fused_lm_head_loss_backward %d, %h, %w, %y, %lse : (tensor<f32>, tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>, tensor<?xf32>) -> (tensor<?x?x64xf32>, tensor<256x64xf32>)
  return
}

// -----

func.func @lm_head_backward_dweight(%d: tensor<f32>, %h: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %y: tensor<?x?xi64>, %lse: tensor<?x?xf32>) {
  // expected-error @+1 {{dweight}}
  %dh, %dw = tfm.fused_lm_head_loss_backward %d, %h, %w, %y, %lse : (tensor<f32>, tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<?x?xi64>, tensor<?x?xf32>) -> (tensor<?x?x64xf32>, tensor<64x256xf32>)
  return
}

// -----

func.func @flash_backward_dsinks(%d: tensor<?x?x8x64xf32>, %qkv: tensor<?x?x12x64xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{dsinks is returned exactly when sinks are given}}
  %dqkv = tfm.flash_attention_backward %d, %qkv sinks(%s) {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x8x64xf32>, tensor<?x?x12x64xf32>, tensor<8xf32>) -> tensor<?x?x12x64xf32>
  return
}

// -----

func.func @flash_backward_dout(%d: tensor<?x?x4x64xf32>, %qkv: tensor<?x?x12x64xf32>) {
  // expected-error @+1 {{dout}}
  %dqkv = tfm.flash_attention_backward %d, %qkv {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, causal, scale = 0.125 : f64} : (tensor<?x?x4x64xf32>, tensor<?x?x12x64xf32>) -> tensor<?x?x12x64xf32>
  return
}

// -----

func.func @qkv_norm_backward_rstd(%dy: tensor<?x?x12x64xf32>, %qkv: tensor<?x?x12x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>, %pos: tensor<?x?xi64>, %rq: tensor<?x?x8xf32>, %rk: tensor<?x?x8xf32>) {
  // expected-error @+1 {{k_rstd}}
  %d, %a, %b = tfm.qkv_qk_norm_rope_backward %dy, %qkv, %wq, %wk, %pos, %rq, %rk {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64, theta = 1.0e6 : f64, rotary_dim = 64 : i64} : (tensor<?x?x12x64xf32>, tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi64>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @qkv_norm_backward_dy(%dy: tensor<?x?x8x64xf32>, %qkv: tensor<?x?x12x64xf32>, %wq: tensor<64xf32>, %wk: tensor<64xf32>, %pos: tensor<?x?xi64>, %rq: tensor<?x?x8xf32>, %rk: tensor<?x?x2xf32>) {
  // expected-error @+1 {{dy}}
  %d, %a, %b = tfm.qkv_qk_norm_rope_backward %dy, %qkv, %wq, %wk, %pos, %rq, %rk {num_q_heads = 8 : i64, num_kv_heads = 2 : i64, eps = 1.0e-06 : f64, theta = 1.0e6 : f64, rotary_dim = 64 : i64} : (tensor<?x?x8x64xf32>, tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<?x?xi64>, tensor<?x?x8xf32>, tensor<?x?x2xf32>) -> (tensor<?x?x12x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

// Zero-size dimensions: refused by every tfm op, in operands and results
// (the kernels divide by them and index their first element).
func.func @zero_size_operand(%x: tensor<2x0x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{operand #0 has type 'tensor<2x0x8xf32>' with a zero-size dimension; tfm ops take non-empty tensors}}
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<2x0x8xf32>, tensor<8xf32>) -> (tensor<2x0x8xf32>, tensor<2x0xf32>)
  return
}

// -----

func.func @zero_size_result(%x: tensor<?x?x8xf32>, %w: tensor<0x8xf32>) {
  // expected-error @+1 {{with a zero-size dimension; tfm ops take non-empty tensors}}
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<0x8xf32>) -> tensor<?x?x0xf32>
  return
}
