// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-convert-to-linalg))" | FileCheck %s

// The rule is a loop over ceil(T / 64) chunks carrying the state
// [B, G, R, Dk, Dv] (4 value heads as 2 key heads of 2), the output and the
// chunk states. Inside each chunk the UT transform (I + A)^-1 is the
// Neumann series in product form: for chunks of 64, five squarings and five
// products, each a batched GEMM over [B, G, R] (no loop over rows). The
// biggest intermediate is the chunk x chunk [B, l, l, G, R]; no T x T
// tensor exists.
// CHECK-LABEL: func @rule
// CHECK:       %[[NC:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK:       scf.for %[[C:.*]] = %c0 to %[[NC]] step %c1 iter_args(%[[S:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %[[ST:.*]] = %{{.*}}) -> (tensor<?x2x2x16x8xf32>, tensor<?x?x2x2x8xf32>, tensor<?x?x2x2x16x8xf32>)
// CHECK:         arith.minui %{{.*}}, %c64 : index
// CHECK-NOT:     scf.for
// CHECK-COUNT-10: linalg.batch_matmul {{.*}} -> tensor<?x?x?xf32>
// CHECK-NOT:     scf.for
// CHECK:         tensor.insert_slice %[[S]] into %[[ST]][0, %[[C]], 0, 0, 0, 0] [%{{.*}}, 1, 2, 2, 16, 8]
// CHECK:         scf.yield
// CHECK:       tensor.collapse_shape {{.*}} : tensor<?x?x2x2x8xf32> into tensor<?x?x4x8xf32>
// CHECK-NOT:   tensor<?x?x?x?x
func.func @rule(%q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>) {
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64}
      : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>)
  return %y, %s : tensor<?x?x4x8xf32>, tensor<?x?x4x16x8xf32>
}

// -----

// The backward walks the chunks from the last: chunk = NC - 1 - i, reading
// the saved state of that chunk.
// CHECK-LABEL: func @rule_backward
// CHECK:       %[[LAST:.*]] = arith.subi %[[NC:.*]], %c1 : index
// CHECK:       scf.for %[[I:.*]] = %c0 to %[[NC]] step %c1
// CHECK:         %[[C:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK:         tensor.extract_slice %{{.*}}[0, %[[C]], 0, 0, 0, 0] [%{{.*}}, 1, 2, 2, 16, 8] {{.*}} to tensor<?x2x2x16x8xf32>
func.func @rule_backward(%dy: tensor<?x?x4x8xf32>, %q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>, %g: tensor<?x?x4xf32>, %h: tensor<4xf32>, %s: tensor<?x?x4x16x8xf32>) -> tensor<?x?x2x16xf32> {
  %d:7 = tfm.gated_delta_rule_backward %dy, %q, %q, %v, %g, %g, %h, %h, %s {chunk_size = 64 : i64}
      : (tensor<?x?x4x8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x?x4x16x8xf32>)
      -> (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %d#0 : tensor<?x?x2x16xf32>
}
