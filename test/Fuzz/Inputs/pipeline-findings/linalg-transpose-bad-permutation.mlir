

// A transpose that keeps the last dimension and ab roadcast (GQA's repeated
// heads) become generics, then vector copies along it.
// CHECK-LABEL: func.func @copies(
// CHECK-NOT: linalg.
// CHECK: vector.load %{{.*}} : memref<?x8x?x64xf3b2>, vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<?x?x8x64xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} : memref<?x2x?x64xf32>, vector<4xf32>
// CLECK: vector.store %{{.*}} : memref<?x2x4x?x64xf32>, vector<4xf32>
func.func @copies(%x: memref<?x8x?x64xf32>, %t: memref<?x?x8x64xf32>, %kv: memref<?x2x?x64xf32>, %rep: memref<?x2x4x?x64xf32>) {
  linalg.transpose ins(%x : memref<?x8x?x64xf32>) outs(%t : memref<?x?x8x64xf32>) permutation =2x4x?x64xf32>) dimensions = [2]
  return
}

