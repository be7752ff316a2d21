// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-convert-to-linalg))" | FileCheck %s

// [B, T, K] x [N, K]^T: leading dims collapse into M, one transposed-B
// linalg.matmul, then the result expands back.
// CHECK-LABEL: func @matmul_nt
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<?x?x16xf32> into tensor<?x16xf32>
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[M:.*]] = linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %arg1 : tensor<?x16xf32>, tensor<24x16xf32>) outs(%[[Z]] : tensor<?x24xf32>)
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]]
func.func @matmul_nt(%x: tensor<?x?x16xf32>, %w: tensor<24x16xf32>) -> tensor<?x?x24xf32> {
  %y = tfm.matmul %x, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<24x16xf32>) -> tensor<?x?x24xf32>
  return %y : tensor<?x?x24xf32>
}

// -----

// RMSNorm: a reduction over the last dimension for rstd, then one map.
// CHECK-LABEL: func @rmsnorm
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
func.func @rmsnorm(%x: tensor<?x?x16xf32>, %w: tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?xf32>) {
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x16xf32>, tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x?xf32>)
  return %y, %r : tensor<?x?x16xf32>, tensor<?x?xf32>
}

// -----

// RoPE: inverse frequencies are a constant computed at compile time; cos
// and sin tables [B, T, rotary/2] once per call (not per head); then the
// two halves of the rotary part, each reading both halves contiguously
// (x1 cos - x2 sin, x2 cos + x1 sin), inserted into the result.
// CHECK-LABEL: func @rope
// CHECK: arith.constant dense<[1.000000e+00, 1.000000e-01, 0.00999999977, 1.000000e-03]> : tensor<4xf32>
// CHECK: %[[COS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?x4xf32>)
// CHECK: math.cos
// CHECK: %[[SIN:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?x4xf32>)
// CHECK: math.sin
// CHECK-DAG: %[[X1:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0] [%{{.*}}, %{{.*}}, 2, 4] [1, 1, 1, 1]
// CHECK-DAG: %[[X2:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 4] [%{{.*}}, %{{.*}}, 2, 4] [1, 1, 1, 1]
// CHECK: %[[LO:.*]] = linalg.generic {{.*}} ins(%[[X1]], %[[X2]], %[[COS]], %[[SIN]] :
// CHECK: arith.negf
// CHECK: tensor.insert_slice %[[LO]] into %{{.*}}[0, 0, 0, 0]
// CHECK: %[[HI:.*]] = linalg.generic {{.*}} ins(%[[X2]], %[[X1]], %[[COS]], %[[SIN]] :
// CHECK-NOT: arith.negf
// CHECK: tensor.insert_slice %[[HI]] into %{{.*}}[0, 0, 0, 4]
func.func @rope(%x: tensor<?x?x2x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x2x8xf32> {
  %y = tfm.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 8 : i64} : (tensor<?x?x2x8xf32>, tensor<?x?xi64>) -> tensor<?x?x2x8xf32>
  return %y : tensor<?x?x2x8xf32>
}

// -----

// f32 attention: heads move to the front and Q·Kᵀ and P·V become batched
// GEMMs (BLAS after bufferization). GQA: the query heads of each key/value
// head are the rows of one matrix ([B·Hkv, group·T, D], a reshape), so each
// key/value head is one GEMM and is never repeated.
// CHECK-LABEL: func @attention
// CHECK: linalg.transpose ins(%arg0 : tensor<?x?x4x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] {{.*}} : tensor<?x4x?x8xf32> into tensor<?x2x2x?x8xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2, 3], [4]] : tensor<?x2x2x?x8xf32> into tensor<?x?x8xf32>
// CHECK: linalg.transpose ins(%arg1 : tensor<?x?x2x8xf32>) {{.*}} permutation = [0, 2, 1, 3]
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.batch_matmul indexing_maps = {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x?x8xf32>, tensor<?x?x8xf32>) outs(%{{.*}} : tensor<?x?x?xf32>)
// CHECK: arith.cmpi sgt
// CHECK: linalg.batch_matmul ins
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
func.func @attention(%q: tensor<?x?x4x8xf32>, %k: tensor<?x?x2x8xf32>, %v: tensor<?x?x2x8xf32>) -> tensor<?x?x4x8xf32> {
  %o = tfm.attention %q, %k, %v {causal, scale = 0.35 : f64} : (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> tensor<?x?x4x8xf32>
  return %o : tensor<?x?x4x8xf32>
}

// -----

// Other types keep generic contractions, reading key/value heads through
// h floordiv group in the maps and accumulating in f32.
// CHECK-DAG: #[[$KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1 floordiv 2, d4)>
// CHECK-LABEL: func @attention_bf16
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$KMAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.extf
func.func @attention_bf16(%q: tensor<?x?x4x8xbf16>, %k: tensor<?x?x2x8xbf16>, %v: tensor<?x?x2x8xbf16>) -> tensor<?x?x4x8xbf16> {
  %o = tfm.attention %q, %k, %v {causal, scale = 0.35 : f64} : (tensor<?x?x4x8xbf16>, tensor<?x?x2x8xbf16>, tensor<?x?x2x8xbf16>) -> tensor<?x?x4x8xbf16>
  return %o : tensor<?x?x4x8xbf16>
}

// -----

// One layer body per kind: scf.for over layers, scf.index_switch on the
// schedule, per-layer weight slices in each kind's case.
// CHECK-LABEL: func @repeat
// CHECK: %[[SCHED:.*]] = arith.constant dense<[0, 1, 0]> : tensor<3xi64>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[H:.*]] = %arg0) -> (tensor<?x?x8xf32>)
// CHECK: %[[K:.*]] = tensor.extract %[[SCHED]][%[[I]]]
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: tensor.extract_slice %arg1[%[[I]], 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
// CHECK: scf.yield
// CHECK: default {
// CHECK: math.exp
// CHECK: scf.yield
// CHECK-NOT: tfm.
func.func @repeat(%h: tensor<?x?x8xf32>, %w: tensor<3x8xf32>) -> tensor<?x?x8xf32> {
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%w : tensor<3x8xf32>) {num_layers = 3 : i64, schedule = array<i64: 0, 1, 0>} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8xf32>):
    %y, %s = tfm.rmsnorm %x, %wl {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    tfm.yield %y : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8xf32>):
    %y = tfm.silu %x : tensor<?x?x8xf32>
    tfm.yield %y : tensor<?x?x8xf32>
  }
  return %r : tensor<?x?x8xf32>
}

// -----

// Weights and stacked outputs of some kinds only (weight_kinds,
// stacked_kinds) are indexed by the layer's rank among the layers of those
// kinds, from a constant table; only their kinds' cases read or write them,
// and a dynamically sized stacked output is allocated at the first layer
// that writes it (layer 1 here).
// CHECK-LABEL: func @repeat_partial
// CHECK-DAG: %[[SCHED:.*]] = arith.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
// CHECK-DAG: %[[RANK1:.*]] = arith.constant dense<[0, 0, 0, 1]> : tensor<4xi64>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %arg0, %[[BUF:.*]] = %{{.*}}) -> (tensor<?x?x8xf32>, tensor<2x?x?xf32>)
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: tensor.extract_slice %arg1[%[[I]], 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
// CHECK-NOT: tensor<2x8xf32>
// CHECK: scf.yield %{{.*}}, %[[BUF]] : tensor<?x?x8xf32>, tensor<2x?x?xf32>
// CHECK: default {
// CHECK: tensor.extract_slice %arg1[%[[I]], 0]
// CHECK: %[[R:.*]] = tensor.extract %[[RANK1]][%[[I]]]
// CHECK: %[[S:.*]] = arith.index_cast %[[R]]
// CHECK: tensor.extract_slice %arg2[%[[S]], 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
// CHECK: arith.cmpi eq, %[[I]], %c1
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, 0] [1, %{{.*}}, %{{.*}}] [1, 1, 1] : tensor<?x?xf32> into tensor<2x?x?xf32>
// CHECK-NOT: tfm.
func.func @repeat_partial(%h: tensor<?x?x8xf32>, %w: tensor<4x8xf32>, %w1: tensor<2x8xf32>) -> (tensor<?x?x8xf32>, tensor<2x?x?xf32>) {
  %r:2 = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%w, %w1 : tensor<4x8xf32>, tensor<2x8xf32>) {num_layers = 4 : i64, schedule = array<i64: 0, 1, 0, 1>, weight_kinds = [array<i64: 0, 1>, array<i64: 1>], stacked_kinds = [array<i64: 1>]} -> tensor<?x?x8xf32>, tensor<2x?x?xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8xf32>):
    %y, %s = tfm.rmsnorm %x, %wl {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    tfm.yield %y : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8xf32>, %wl1: tensor<8xf32>):
    %y, %s = tfm.rmsnorm %x, %wl {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %z, %s1 = tfm.rmsnorm %y, %wl1 {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    tfm.yield %z, %s1 : tensor<?x?x8xf32>, tensor<?x?xf32>
  }
  return %r#0, %r#1 : tensor<?x?x8xf32>, tensor<2x?x?xf32>
}

// -----

// Carried values equal after every layer (same init, one value yielded for
// both: the gradients of hidden and residual in a backward scan) share one
// iter_arg; both results are its result.
// CHECK-LABEL: func @repeat_shared_carry
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[X:.*]] = %arg0) -> (tensor<?x?x8xf32>)
// CHECK: math.exp
// CHECK: return %[[R]], %[[R]]
func.func @repeat_shared_carry(%d: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %r:2 = tfm.repeat (%d, %d : tensor<?x?x8xf32>, tensor<?x?x8xf32>) layers() {num_layers = 2 : i64, reverse} -> tensor<?x?x8xf32>, tensor<?x?x8xf32> {
  ^bb0(%a: tensor<?x?x8xf32>, %b: tensor<?x?x8xf32>):
    %y = tfm.silu %b : tensor<?x?x8xf32>
    tfm.yield %y, %y : tensor<?x?x8xf32>, tensor<?x?x8xf32>
  }
  return %r#0, %r#1 : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Same init but different yields (or different inits): two iter_args.
// CHECK-LABEL: func @repeat_distinct_carries
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %arg0, %{{.*}} = %arg0) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}#0, %{{.*}} = %arg1) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>)
func.func @repeat_distinct_carries(%d: tensor<?x?x8xf32>, %e: tensor<?x?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %r:2 = tfm.repeat (%d, %d : tensor<?x?x8xf32>, tensor<?x?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x?x8xf32>, tensor<?x?x8xf32> {
  ^bb0(%a: tensor<?x?x8xf32>, %b: tensor<?x?x8xf32>):
    %y = tfm.silu %b : tensor<?x?x8xf32>
    tfm.yield %y, %b : tensor<?x?x8xf32>, tensor<?x?x8xf32>
  }
  %q:2 = tfm.repeat (%r#0, %e : tensor<?x?x8xf32>, tensor<?x?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x?x8xf32>, tensor<?x?x8xf32> {
  ^bb0(%a: tensor<?x?x8xf32>, %b: tensor<?x?x8xf32>):
    %y = tfm.silu %b : tensor<?x?x8xf32>
    tfm.yield %y, %y : tensor<?x?x8xf32>, tensor<?x?x8xf32>
  }
  return %q#0, %q#1 : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Cross-entropy: row log-sum-exp, then one reduction over (b, t) reading the
// shifted label and the target logit.
// CHECK-LABEL: func @cross_entropy
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK: arith.addi %{{.*}}, %c1
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg0
// CHECK: arith.divf
// CHECK: tensor.from_elements
func.func @cross_entropy(%l: tensor<?x?x32xf32>, %y: tensor<?x?xi64>) -> tensor<f32> {
  %loss = tfm.cross_entropy %l, %y : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// flash_attention works in query tiles of 64 rows: scores exist for one
// tile at a time, never T x T, and a causal tile reads only the keys up to
// its last query (here every key from 0: the mask's key position is the
// index itself).
// CHECK-LABEL: func @flash_tiles
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %[[T0:.*]] = %{{.*}} to %{{.*}} step %[[C64]] iter_args
// CHECK: %[[ROWS:.*]] = arith.minsi
// CHECK: tensor.extract_slice %{{.*}}[0, %[[T0]], 0, 0] [%{{.*}}, %[[ROWS]], 2, 4]
// CHECK: %[[END:.*]] = arith.addi %[[T0]], %[[ROWS]]
// CHECK: %[[KEYS:.*]] = arith.minsi %{{.*}}, %[[END]]
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [%{{.*}}, %[[KEYS]], 1, 4]
// CHECK: %[[S:.*]] = linalg.index 3
// CHECK: arith.cmpi sgt, %[[S]]
// CHECK: tensor.insert_slice
func.func @flash_tiles(%qkv: tensor<?x?x4x4xf32>) -> (tensor<?x?x2x4xf32>, tensor<?x2x?xf32>) {
  %o, %l = tfm.flash_attention %qkv {num_q_heads = 2 : i64, num_kv_heads = 1 : i64, causal, scale = 0.5 : f64} : (tensor<?x?x4x4xf32>) -> (tensor<?x?x2x4xf32>, tensor<?x2x?xf32>)
  return %o, %l : tensor<?x?x2x4xf32>, tensor<?x2x?xf32>
}

// -----

// fused_lm_head_loss computes logits chunk by chunk (64 positions) and keeps
// only NLL sums, counts and lse: no [B*T, V] tensor.
// CHECK-LABEL: func @lm_head_chunks
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, tensor<?x?xf32>)
// CHECK: linalg.matmul
// CHECK: math.tanh
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK-NOT: tensor<?x?x64xf32>
func.func @lm_head_chunks(%h: tensor<?x?x16xf32>, %w: tensor<64x16xf32>, %y: tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>) {
  %loss, %lse = tfm.fused_lm_head_loss %h, %w, %y {softcap = 3.0 : f64} : (tensor<?x?x16xf32>, tensor<64x16xf32>, tensor<?x?xi64>) -> (tensor<f32>, tensor<?x?xf32>)
  return %loss, %lse : tensor<f32>, tensor<?x?xf32>
}

// -----

// swiglu_backward: one generic over [B, T, 2, I] writes both halves of the
// packed gradient (the half index selects d_up or d_gate), then the halves
// collapse into [B, T, 2I]; no insert of a separately computed half.
// CHECK-LABEL: func @swiglu_backward_one_pass
// CHECK: %[[G:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<?x?x2x4xf32>)
// CHECK: linalg.index 2
// CHECK: arith.select
// CHECK: tensor.collapse_shape %[[G]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x2x4xf32> into tensor<?x?x8xf32>
// CHECK-NOT: tensor.insert_slice
func.func @swiglu_backward_one_pass(%dy: tensor<?x?x4xf32>, %x: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %d = tfm.swiglu_backward %dy, %x : (tensor<?x?x4xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %d : tensor<?x?x8xf32>
}
