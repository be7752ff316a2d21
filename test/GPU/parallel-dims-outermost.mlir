// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-parallel-dims-outermost))" | FileCheck %s

// A bias gradient: sum over [B, T] for each feature. The feature loop moves
// outermost, the reductions inside (maps and iterator types permuted).
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @bias_grad
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction", "reduction"]}
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d2)>
func.func @bias_grad(%dy: memref<?x?x64xf32>, %db: memref<64xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%dy : memref<?x?x64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Already parallel-first, or all-reduction: unchanged.
// CHECK-LABEL: func.func @row_sum
// CHECK:         iterator_types = ["parallel", "reduction"]
#rin = affine_map<(d0, d1) -> (d0, d1)>
#rout = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [#rin, #rout], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}
