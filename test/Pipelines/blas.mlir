// RUN: tfm-opt %s --split-input-file --tfm-linalg-matmul-to-blas | FileCheck %s
// RUN: tfm-opt %s --split-input-file --tfm-linalg-matmul-to-blas=fold-zero-fill | FileCheck %s --check-prefix=FOLD

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

// -----

// fold-zero-fill: a GEMM whose C (a fresh allocation) was just filled with
// zeros calls the beta = 0 entry point and the fill goes; views and casts
// between them do not matter. Without the option the fill stays.
// CHECK-LABEL: func @zeroed
// CHECK: linalg.fill
// CHECK: call @tfm_rt_sgemm(
// CHECK: linalg.fill
// CHECK: call @tfm_rt_sgemm_batched(
// FOLD-DAG: func.func private @tfm_rt_sgemm_batched_overwrite(
// FOLD-DAG: func.func private @tfm_rt_sgemm_overwrite(
// FOLD-LABEL: func @zeroed
// FOLD-NOT: linalg.fill
// FOLD: call @tfm_rt_sgemm_overwrite(
// FOLD-NOT: linalg.fill
// FOLD: call @tfm_rt_sgemm_batched_overwrite(
func.func @zeroed(%a: memref<?x16xf32>, %b: memref<24x16xf32>,
                  %ba: memref<?x4x8xf32>, %bb: memref<?x5x8xf32>) -> (memref<?x24xf32>, memref<?x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x16xf32>
  %nb = memref.dim %ba, %c0 : memref<?x4x8xf32>
  %c = memref.alloc(%m) : memref<?x24xf32>
  %bc = memref.alloc(%nb) : memref<?x4x5xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<?x24xf32>)
  %view = memref.collapse_shape %ba [[0, 1], [2]] : memref<?x4x8xf32> into memref<?x8xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<?x16xf32>, memref<24x16xf32>) outs(%c : memref<?x24xf32>)
  linalg.fill ins(%zero : f32) outs(%bc : memref<?x4x5xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%ba, %bb : memref<?x4x8xf32>, memref<?x5x8xf32>) outs(%bc : memref<?x4x5xf32>)
  return %c, %bc : memref<?x24xf32>, memref<?x4x5xf32>
}

// -----

// Kept: a fill of another value, a fill of a view of C (not C itself), an
// op between the fill and the GEMM that touches C's buffer, a GEMM reading
// C as A, and a C that is a function argument (another argument may alias
// it).
// FOLD-LABEL: func @kept
// FOLD: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<?x24xf32>)
// FOLD: call @tfm_rt_sgemm(
// FOLD: linalg.fill
// FOLD: call @tfm_rt_sgemm(
// FOLD: linalg.fill
// FOLD: memref.store
// FOLD: call @tfm_rt_sgemm(
// FOLD: linalg.fill
// FOLD: call @tfm_rt_sgemm(
// FOLD: linalg.fill
// FOLD: call @tfm_rt_sgemm(
// FOLD-NOT: _overwrite
func.func @kept(%a: memref<?x16xf32>, %b: memref<24x16xf32>, %arg: memref<?x24xf32>, %sq: memref<24x24xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = memref.dim %a, %c0 : memref<?x16xf32>
  %c = memref.alloc(%rows) : memref<?x24xf32>
  %big = memref.alloc(%rows) : memref<?x48xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<?x24xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<?x16xf32>, memref<24x16xf32>) outs(%c : memref<?x24xf32>)
  %n = memref.dim %big, %c0 : memref<?x48xf32>
  %half = memref.subview %big[0, 0] [%n, 24] [1, 1] : memref<?x48xf32> to memref<?x24xf32, strided<[48, 1]>>
  linalg.fill ins(%zero : f32) outs(%big : memref<?x48xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<?x16xf32>, memref<24x16xf32>) outs(%half : memref<?x24xf32, strided<[48, 1]>>)
  linalg.fill ins(%zero : f32) outs(%c : memref<?x24xf32>)
  memref.store %one, %c[%c0, %c0] : memref<?x24xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<?x16xf32>, memref<24x16xf32>) outs(%c : memref<?x24xf32>)
  %s = memref.alloc() : memref<24x24xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<24x24xf32>)
  linalg.matmul ins(%s, %sq : memref<24x24xf32>, memref<24x24xf32>) outs(%s : memref<24x24xf32>)
  linalg.fill ins(%zero : f32) outs(%arg : memref<?x24xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<?x16xf32>, memref<24x16xf32>) outs(%arg : memref<?x24xf32>)
  memref.dealloc %c : memref<?x24xf32>
  memref.dealloc %big : memref<?x48xf32>
  memref.dealloc %s : memref<24x24xf32>
  return
}
