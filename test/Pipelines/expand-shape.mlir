// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-lower-dynamic-expand-shape))" | FileCheck %s

// One dynamic size split into two: a reinterpret_cast with row-major strides.
// CHECK-LABEL: func @split_dynamic
// CHECK: %[[S:.*]] = arith.muli %arg2, %c16
// CHECK: memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg1, %arg2, 16], strides: [%[[S]], 16, 1]
func.func @split_dynamic(%m: memref<?x16xf32>, %d0: index, %d1: index) -> memref<?x?x16xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%d0, %d1, 16] : memref<?x16xf32> into memref<?x?x16xf32>
  return %e : memref<?x?x16xf32>
}

// -----

// Static splits are left to the upstream lowering.
// CHECK-LABEL: func @split_static
// CHECK: memref.expand_shape
func.func @split_static(%m: memref<?x?x64xf32>, %d0: index, %d1: index) -> memref<?x?x4x16xf32> {
  %e = memref.expand_shape %m [[0], [1], [2, 3]] output_shape [%d0, %d1, 4, 16] : memref<?x?x64xf32> into memref<?x?x4x16xf32>
  return %e : memref<?x?x4x16xf32>
}
