// FLOPs and bytes against hand-computed values (B = 1, T = 4).
// RUN: tfm-opt %s --tfm-cost-report="func=f batch=1 seq=4" -o /dev/null | FileCheck %s

// matmul [1, 4, 8] x [16, 8]ᵀ: 2·4·16·8 = 1024 FLOP; reads 4·8·4 + 16·8·4 =
// 640 B, writes 4·16·4 = 256 B.
// CHECK: tfm-cost-report @f: batch 1, seq 4
// causal attention, 2 query heads, D = Dv = 4: 10 visible pairs ·
// (2·4 + 2·4 + 5) · 2 heads = 420; with window 2: 7 pairs → 294; 2 layers.
// CHECK-DAG: tfm.attention 2 7.140000e+02
// CHECK-DAG: tfm.matmul 1 1.024000e+03 6.400000e+02 2.560000e+02
// rmsnorm: 4 FLOP per element of [1, 4, 8] = 128 per layer, 2 layers; reads
// x and w (128 + 32 B), writes y and rstd (128 + 16 B) per layer.
// CHECK-DAG: tfm.rmsnorm 2 2.560000e+02 3.200000e+02 2.880000e+02
// reshape is a view: no traffic.
// CHECK-DAG: tfm.reshape 4 0.000000e+00 0.000000e+00 0.000000e+00
// CHECK: total 1.994000e+03
// CHECK: per token: 4.985000e+02 FLOP
func.func @f(%h: tensor<?x?x8xf32>, %w: tensor<16x8xf32>, %n: tensor<2x8xf32>) -> tensor<?x?x16xf32> {
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%n : tensor<2x8xf32>) {num_layers = 2 : i64, schedule = array<i64: 0, 1>} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %nl: tensor<8xf32>):
    %y, %s = tfm.rmsnorm %x, %nl {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %q = tfm.reshape %y : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
    %o = tfm.attention %q, %q, %q {causal, scale = 0.5 : f64} : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
    %z = tfm.reshape %o : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
    tfm.yield %z : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %nl: tensor<8xf32>):
    %y, %s = tfm.rmsnorm %x, %nl {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %q = tfm.reshape %y : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
    %o = tfm.attention %q, %q, %q {causal, scale = 0.5 : f64, sliding_window = 2 : i64} : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
    %z = tfm.reshape %o : tensor<?x?x2x4xf32> -> tensor<?x?x8xf32>
    tfm.yield %z : tensor<?x?x8xf32>
  }
  %l = tfm.matmul %r, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  return %l : tensor<?x?x16xf32>
}
