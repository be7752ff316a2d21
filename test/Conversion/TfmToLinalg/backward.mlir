// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-convert-to-linalg))" | FileCheck %s

// Weight gradients: dyᵀ·x over all rows as one transposed-A matmul.
// CHECK-DAG: #[[$TA:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func @matmul_grad_weight
// CHECK: %[[DY:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<?x?x16xf32> into tensor<?x16xf32>
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg1
// CHECK: linalg.matmul indexing_maps = [#[[$TA]], #{{.*}}, #{{.*}}] ins(%[[DY]], %[[X]] : tensor<?x16xf32>, tensor<?x8xf32>) outs(%{{.*}} : tensor<16x8xf32>)
func.func @matmul_grad_weight(%dy: tensor<?x?x16xf32>, %x: tensor<?x?x8xf32>) -> tensor<16x8xf32> {
  %dw = tfm.matmul_grad_weight %dy, %x {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<?x?x8xf32>) -> tensor<16x8xf32>
  return %dw : tensor<16x8xf32>
}

// -----

// RMSNorm backward: a per-row reduction, a map for dx, a reduction over
// rows for dw.
// CHECK-LABEL: func @rmsnorm_backward
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel"]
func.func @rmsnorm_backward(%dy: tensor<?x?x8xf32>, %x: tensor<?x?x8xf32>, %w: tensor<8xf32>, %r: tensor<?x?xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>) {
  %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %r : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?xf32>) -> (tensor<?x?x8xf32>, tensor<8xf32>)
  return %dx, %dw : tensor<?x?x8xf32>, tensor<8xf32>
}

// -----

// With the residual stream's gradient: the same three generics, the dx map
// reading it and adding it after rounding the norm's term to bf16 (what a
// separate tfm.add of the two would compute), no fourth kernel.
// CHECK-LABEL: func @rmsnorm_backward_residual
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %arg1, %arg2, %arg3, %{{.*}}, %arg4 :
// CHECK: %[[TERM:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: %[[T32:.*]] = arith.extf %[[TERM]] : bf16 to f32
// CHECK-NEXT: %[[R32:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[R32]], %[[T32]] : f32
// CHECK-NEXT: arith.truncf %[[SUM]] : f32 to bf16
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel"]
// CHECK-NOT: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: return
func.func @rmsnorm_backward_residual(%dy: tensor<?x?x8xbf16>, %x: tensor<?x?x8xbf16>, %w: tensor<8xbf16>, %r: tensor<?x?xf32>, %dres: tensor<?x?x8xbf16>) -> (tensor<?x?x8xbf16>, tensor<8xbf16>) {
  %dx, %dw = tfm.rmsnorm_backward %dy, %x, %w, %r, %dres : (tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<8xbf16>, tensor<?x?xf32>, tensor<?x?x8xbf16>) -> (tensor<?x?x8xbf16>, tensor<8xbf16>)
  return %dx, %dw : tensor<?x?x8xbf16>, tensor<8xbf16>
}

// -----

// Embedding backward: scatter-add row by row over (b, t).
// CHECK-LABEL: func @embedding_backward
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.extract %arg1
// CHECK: tensor.insert_slice
func.func @embedding_backward(%dy: tensor<?x?x8xf32>, %ids: tensor<?x?xi64>) -> tensor<32x8xf32> {
  %t = tfm.embedding_backward %dy, %ids : (tensor<?x?x8xf32>, tensor<?x?xi64>) -> tensor<32x8xf32>
  return %t : tensor<32x8xf32>
}

// -----

// RoPE backward rotates by the negative angle.
// CHECK-LABEL: func @rope_backward
// CHECK: math.sin
// CHECK: arith.negf
func.func @rope_backward(%dy: tensor<?x?x2x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x2x8xf32> {
  %d = tfm.rope_backward %dy, %p {theta = 1.0e4 : f64, rotary_dim = 8 : i64} : (tensor<?x?x2x8xf32>, tensor<?x?xi64>) -> tensor<?x?x2x8xf32>
  return %d : tensor<?x?x2x8xf32>
}

// -----

// f32 attention backward: batched GEMMs per key/value head, its query
// heads' rows stacked ([B·Hkv, group·T, ·]): dp = dout·vᵀ, dq = ds·k, and
// dk = dsᵀ·q, dv = pᵀ·dout whose contraction over group·T rows also sums
// over the group; no separate group reduction.
// CHECK-LABEL: func @attention_backward
// CHECK: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins({{.*}} : tensor<?x?x8xf32>, tensor<?x?x8xf32>) outs({{.*}} : tensor<?x?x?xf32>)
// CHECK: linalg.batch_matmul ins
// CHECK: linalg.batch_matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins({{.*}} : tensor<?x?x?xf32>, tensor<?x?x8xf32>) outs({{.*}} : tensor<?x?x8xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] {{.*}} : tensor<?x?x8xf32> into tensor<?x2x?x8xf32>
// CHECK-NOT: "reduction"
// CHECK: return
func.func @attention_backward(%do: tensor<?x?x4x8xf32>, %q: tensor<?x?x4x8xf32>, %k: tensor<?x?x2x8xf32>, %v: tensor<?x?x2x8xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) {
  %dq, %dk, %dv = tfm.attention_backward %do, %q, %k, %v {causal, scale = 0.35 : f64} : (tensor<?x?x4x8xf32>, tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>)
  return %dq, %dk, %dv : tensor<?x?x4x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>
}

// -----

// Other types: GQA reductions over a group read the head dimension split
// into [kv_heads, group].
// CHECK-LABEL: func @attention_backward_f64
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] {{.*}} : tensor<?x4x?x?xf64> into tensor<?x2x2x?x?xf64>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @attention_backward_f64(%do: tensor<?x?x4x8xf64>, %q: tensor<?x?x4x8xf64>, %k: tensor<?x?x2x8xf64>, %v: tensor<?x?x2x8xf64>) -> tensor<?x?x2x8xf64> {
  %dq, %dk, %dv = tfm.attention_backward %do, %q, %k, %v {causal, scale = 0.35 : f64} : (tensor<?x?x4x8xf64>, tensor<?x?x4x8xf64>, tensor<?x?x2x8xf64>, tensor<?x?x2x8xf64>) -> (tensor<?x?x4x8xf64>, tensor<?x?x2x8xf64>, tensor<?x?x2x8xf64>)
  return %dk : tensor<?x?x2x8xf64>
}

// -----

// A reverse scan indexes layers from the end; stacked outputs are
// allocated (not tensor.empty, which CSE would merge) and filled per layer.
// CHECK-LABEL: func @reverse_scan
// CHECK: bufferization.alloc_tensor
// CHECK: scf.for %[[I:.*]] = %c0 to %c3
// CHECK: %[[L:.*]] = arith.subi %c2, %[[I]]
// CHECK: tensor.extract_slice %arg1[%[[L]], 0]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[L]], 0]
func.func @reverse_scan(%h: tensor<?x8xf32>, %w: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %r:2 = tfm.repeat (%h : tensor<?x8xf32>) layers(%w : tensor<3x8xf32>) {num_layers = 3 : i64, reverse} -> tensor<?x8xf32>, tensor<3x8xf32> {
  ^bb0(%x: tensor<?x8xf32>, %wl: tensor<8xf32>):
    tfm.yield %x, %wl : tensor<?x8xf32>, tensor<8xf32>
  }
  return %r#1 : tensor<3x8xf32>
}
