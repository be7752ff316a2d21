// RUN: tfm-opt %s --split-input-file --tfm-linalg-matmul-to-blas | FileCheck %s

// CHECK: func.func private @tfm_rt_sgemm({{.*}}) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func @nt
// CHECK-DAG: %[[A:.*]] = memref.cast %arg0 : memref<?x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
// CHECK: call @tfm_rt_sgemm(%[[A]], %{{.*}}, %{{.*}}, %[[F]], %[[T]])
// CHECK-NOT: linalg.matmul
func.func @nt(%a: memref<?x16xf32>, %b: memref<24x16xf32>, %c: memref<?x24xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<?x16xf32>, memref<24x16xf32>) outs(%c : memref<?x24xf32>)
  return
}

// -----

// Weight gradients are transposed-A GEMMs.
// CHECK-LABEL: func @ta
// CHECK-DAG: %[[F:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
// CHECK: call @tfm_rt_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %[[T]], %[[F]])
func.func @ta(%a: memref<?x24xf32>, %b: memref<?x16xf32>, %c: memref<24x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<?x24xf32>, memref<?x16xf32>) outs(%c : memref<24x16xf32>)
  return
}

// -----

// Batched GEMMs (attention) call the batched entry point.
// CHECK: func.func private @tfm_rt_sgemm_batched(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-LABEL: func @batched
// CHECK: call @tfm_rt_sgemm_batched
func.func @batched(%a: memref<?x4x8xf32>, %b: memref<?x5x8xf32>, %c: memref<?x4x5xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : memref<?x4x8xf32>, memref<?x5x8xf32>) outs(%c : memref<?x4x5xf32>)
  return
}

// -----

// Non-f32 GEMMs and tensors are left alone.
// CHECK-LABEL: func @f64
// CHECK: linalg.matmul
func.func @f64(%a: memref<?x16xf64>, %b: memref<16x24xf64>, %c: memref<?x24xf64>) {
  linalg.matmul ins(%a, %b : memref<?x16xf64>, memref<16x24xf64>) outs(%c : memref<?x24xf64>)
  return
}
