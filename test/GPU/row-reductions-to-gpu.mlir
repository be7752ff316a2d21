// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-row-reductions-to-gpu{warps-per-block=4}))" | FileCheck %s

// A last-dimension reduction: one warp per row, lanes stride by 32 over
// the row, a 5-step xor butterfly, lane 0 of an in-range row combines with
// the output's initial value.
// CHECK-LABEL: func.func @weighted_sumsq
// CHECK:         arith.muli
// CHECK:         %[[ROWS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         %[[C32:.*]] = arith.constant 32 : index
// CHECK:         %[[GRID:.*]] = arith.ceildivsi %[[ROWS]], %[[C4]]
// CHECK:         scf.if
// CHECK:           %[[C128:.*]] = arith.constant 128 : index
// CHECK:           gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]],
// CHECK:             %[[LANE:.*]] = arith.remui %[[TX]], %[[C32]]
// CHECK:             %[[WARP:.*]] = arith.divui %[[TX]], %[[C32]]
// CHECK:             %[[ROW:.*]] = arith.addi %{{.*}}, %[[WARP]]
// CHECK:             %[[ACTIVE:.*]] = arith.cmpi slt, %[[ROW]], %[[ROWS]]
// CHECK:             %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:             %[[PARTIAL:.*]] = scf.for %[[K:.*]] = %[[LANE]] to %{{.*}} step %[[C32]] iter_args(%[[ACC:.*]] = %[[ZERO]])
// CHECK:               memref.load %arg0
// CHECK:               memref.load %arg1
// CHECK:               arith.mulf
// CHECK:               %[[NEXT:.*]] = arith.addf %{{.*}}, %[[ACC]]
// CHECK:               scf.yield %[[NEXT]]
// CHECK-COUNT-5:     gpu.shuffle xor
// CHECK:             %[[LANE0:.*]] = arith.cmpi eq, %[[LANE]]
// CHECK:             %[[LEADER:.*]] = arith.andi %[[ACTIVE]], %[[LANE0]]
// CHECK:             scf.if %[[LEADER]]
// CHECK:               %[[OLD:.*]] = memref.load %arg2
// CHECK:               %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK:               memref.store %[[NEW]], %arg2
// CHECK-NOT:     linalg.generic
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2) -> (d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @weighted_sumsq(%x: memref<?x?x128xf32>, %w: memref<128xf32>, %s: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x128xf32>, memref<128xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// A row maximum starts from -inf and combines with maximumf.
// CHECK-LABEL: func.func @row_max
// CHECK:         arith.constant 0xFF800000 : f32
// CHECK:         arith.maximumf
// CHECK-COUNT-5: gpu.shuffle xor
#in2 = affine_map<(d0, d1) -> (d0, d1)>
#out2 = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: memref<?x?xf32>, %m: memref<?xf32>) {
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// Left alone: the reduction is not the last dimension (a column sum, which
// the element-wise path already reads coalesced) ...
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic
#col_in = affine_map<(d0, d1) -> (d1, d0)>
func.func @column_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [#col_in, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// ... nor a reduction whose accumulator is used other than by one combiner.
// CHECK-LABEL: func.func @not_a_combiner
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic
func.func @not_a_combiner(%x: memref<?x?xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [#in2, #out2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %big = arith.cmpf ogt, %a, %acc : f32
    %r = arith.select %big, %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}
