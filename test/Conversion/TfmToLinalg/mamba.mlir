// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-convert-to-linalg))" | FileCheck %s

// The causal conv reads x behind K - 1 = 3 zeros: the window of output t is
// xpad[t .. t + 3], a shifted map, not a gather.
// CHECK: #[[$SHIFT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 + d3, d2)>
// CHECK-LABEL: func @conv
// CHECK:       %[[PAD:.*]] = tensor.insert_slice %{{.*}}[0, %c3, 0]
// CHECK:       linalg.generic {indexing_maps = [#[[$SHIFT]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PAD]], %{{.*}} : tensor<?x?x96xf32>, tensor<96x4xf32>)
func.func @conv(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>, %b: tensor<96xf32>) -> tensor<?x?x96xf32> {
  %y = tfm.mamba_conv1d %x, %w, %b : (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xf32>) -> tensor<?x?x96xf32>
  return %y : tensor<?x?x96xf32>
}

// -----

// The scan is a loop over ceil(T / 64) chunks carrying the state
// [B, G, R, P, N] (8 heads as 2 groups of 4), the output and the chunk
// states; each chunk reads min(64, T - start) positions, and the state
// before it is stored at its index.
// CHECK-LABEL: func @scan
// CHECK:       %[[NC:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK:       scf.for %[[C:.*]] = %c0 to %[[NC]] step %c1 iter_args(%[[S:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %[[ST:.*]] = %{{.*}}) -> (tensor<?x2x4x4x16xf32>, tensor<?x?x2x4x4xf32>, tensor<?x?x2x4x4x16xf32>)
// CHECK:         arith.minui %{{.*}}, %c64 : index
// CHECK:         tensor.insert_slice %[[S]] into %[[ST]][0, %[[C]], 0, 0, 0, 0] [%{{.*}}, 1, 2, 4, 4, 16]
// CHECK:         scf.yield
// CHECK:       tensor.collapse_shape {{.*}} : tensor<?x?x2x4x4xf32> into tensor<?x?x8x4xf32>
func.func @scan(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %h: tensor<8xf32>, %b: tensor<?x?x2x16xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>) {
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %h, %b, %b, %h, %h {chunk_size = 64 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}
      : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return %y, %s : tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>
}

// -----

// The backward walks the chunks from the last: chunk = NC - 1 - i, reading
// the saved state of that chunk.
// CHECK-LABEL: func @scan_backward
// CHECK:       %[[LAST:.*]] = arith.subi %[[NC:.*]], %c1 : index
// CHECK:       scf.for %[[I:.*]] = %c0 to %[[NC]] step %c1
// CHECK:         %[[C:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK:         tensor.extract_slice %{{.*}}[0, %[[C]], 0, 0, 0, 0] [%{{.*}}, 1, 2, 4, 4, 16] {{.*}} to tensor<?x2x4x4x16xf32>
func.func @scan_backward(%dy: tensor<?x?x8x4xf32>, %x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %h: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %s: tensor<?x?x8x4x16xf32>) -> tensor<?x?x8x4xf32> {
  %g:7 = tfm.mamba_ssd_scan_backward %dy, %x, %dt, %h, %b, %b, %h, %h, %s {chunk_size = 64 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}
      : (tensor<?x?x8x4xf32>, tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x?x8x4x16xf32>)
      -> (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>)
  return %g#0 : tensor<?x?x8x4xf32>
}
