// tfm-vectorize-inner-loops: the innermost loop of a linalg.generic on
// memrefs in vectors of `lanes`, with a scalar tail; reductions through
// per-lane accumulators combined in lane order; and what it must leave.
// RUN: tfm-opt %s --pass-pipeline='builtin.module(func.func(tfm-vectorize-inner-loops{lanes=4 approximate-math=false}))' --split-input-file | FileCheck %s
// RUN: tfm-opt %s --pass-pipeline='builtin.module(func.func(tfm-vectorize-inner-loops{lanes=4}))' --split-input-file | FileCheck %s --check-prefix=APPROX

// A row sum of exp(x - m): m is loaded once per row and broadcast; four
// partial sums from -0.0; then the initial value and the lanes in order;
// then the scalar tail, then one store.
// CHECK-LABEL: func.func @row_sum_exp(
// CHECK-SAME: %[[X:.*]]: memref<?x?xf32>, %[[M:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>)
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[MI:.*]] = memref.load %[[M]][%[[I]]]
// CHECK-NOT: memref.load
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[REM:.*]] = arith.remui %[[N:.*]], %[[C4]]
// CHECK: %[[FULL:.*]] = arith.subi %[[N]], %[[REM]]
// CHECK: %[[NEGZERO:.*]] = arith.constant dense<-0.000000e+00> : vector<4xf32>
// CHECK: %[[ACC:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[FULL]] step %[[C4]] iter_args(%[[A:.*]] = %[[NEGZERO]]) -> (vector<4xf32>)
// CHECK: %[[V:.*]] = vector.load %[[X]][%[[I]], %[[K]]] : memref<?x?xf32>, vector<4xf32>
// CHECK: %[[B:.*]] = vector.broadcast %[[MI]] : f32 to vector<4xf32>
// CHECK: %[[D:.*]] = arith.subf %[[V]], %[[B]] : vector<4xf32>
// CHECK: %[[E:.*]] = math.exp %[[D]] : vector<4xf32>
// CHECK: %[[S:.*]] = arith.addf %[[E]], %[[A]] : vector<4xf32>
// CHECK: scf.yield %[[S]]
// CHECK: %[[INIT:.*]] = memref.load %[[OUT]][%[[I]]]
// CHECK: %[[R:.*]] = vector.reduction <add>, %[[ACC]], %[[INIT]] : vector<4xf32> into f32
// CHECK: %[[T:.*]] = scf.for %{{.*}} = %[[FULL]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[R]]) -> (f32)
// CHECK: math.exp %{{.*}} : f32
// CHECK: memref.store %[[T]], %[[OUT]][%[[I]]]
// CHECK-NOT: linalg.generic
// With approximate-math, the vector exp is a polynomial whose fma and floor
// are LLVM intrinsics (libm would split them into scalar calls); the
// tail's scalar exp stays.
// APPROX-LABEL: func.func @row_sum_exp(
// APPROX: llvm.intr.floor({{.*}}) : (vector<4xf32>) -> vector<4xf32>
// APPROX: llvm.intr.fma({{.*}}) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// APPROX-NOT: math.exp {{.*}} : vector
// APPROX: math.exp %{{.*}} : f32
func.func @row_sum_exp(%x: memref<?x?xf32>, %m: memref<?xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %m : memref<?x?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Element-wise with a static innermost size that is a multiple of lanes:
// no tail loop; the innermost index is a vector (k + [0, 1, 2, 3]); the
// output is read (it is used) and written as vectors.
// CHECK-LABEL: func.func @masked_scale(
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[X:.*]] = vector.load %{{.*}}[%[[I]], %[[K]]] : memref<?x8xf32>, vector<4xf32>
// CHECK-NEXT: %[[O:.*]] = vector.load %{{.*}}[%[[I]], %[[K]]] : memref<?x8xf32>, vector<4xf32>
// CHECK-NEXT: %[[STEPS:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
// CHECK-NEXT: %[[KV:.*]] = vector.broadcast %[[K]] : index to vector<4xindex>
// CHECK: %[[J:.*]] = arith.addi %[[STEPS]], %[[KV]] : vector<4xindex>
// CHECK: %[[IV:.*]] = vector.broadcast %[[I]] : index to vector<4xindex>
// CHECK: arith.cmpi sgt, %[[J]], %[[IV]] : vector<4xindex>
// CHECK: vector.store %{{.*}}, %{{.*}}[%[[I]], %[[K]]] : memref<?x8xf32>, vector<4xf32>
// CHECK-NOT: scf.for
// CHECK: return
func.func @masked_scale(%x: memref<?x8xf32>, %out: memref<?x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x8xf32>) outs(%out : memref<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %future = arith.cmpi sgt, %j, %i : index
    %p = arith.mulf %a, %o : f32
    %r = arith.select %future, %zero, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A column sum (outer reduction, innermost parallel): vectors read, add
// and write the output in the scalar loop's order. Max from -inf.
// CHECK-LABEL: func.func @column_sum(
// CHECK: scf.for %[[R:.*]] =
// CHECK: scf.for %[[K:.*]] =
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%[[R]], %[[K]]]
// CHECK: %[[O:.*]] = vector.load %{{.*}}[%[[K]]]
// CHECK: arith.addf %[[X]], %[[O]] : vector<4xf32>
// CHECK: vector.store
func.func @column_sum(%x: memref<?x?xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<?x?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @row_max(
// CHECK: arith.constant dense<0xFF800000> : vector<4xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.reduction <maximumf>
func.func @row_max(%x: memref<?x?xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// maxnumf ignores NaN, so NaN (not -inf) is its identity.
// CHECK-LABEL: func.func @row_maxnum(
// CHECK: arith.constant dense<0x7FC00000> : vector<4xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.reduction <maxnumf>
func.func @row_maxnum(%x: memref<?x?xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maxnumf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: a transposed read (the innermost loop is not the operand's
// last dimension), a static innermost size below lanes, f64, a non-unit
// innermost stride, a reduction whose output is used twice, a combiner it
// has no identity for (subf), an i1 memref, a load whose place changes
// with the innermost loop (a gather), a load from what the op writes, an
// input that is a view of the output (read once per row, it would miss the
// row's own writes), a dimension chosen by the innermost index.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-11: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %small: memref<?x3xf32>,
                      %d: memref<?x?xf64>, %s: memref<?x?xf32, strided<[?, 2]>>,
                      %row: memref<?xf32>, %flags: memref<?x?xi1>, %idx: memref<?xindex>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x?xf32>) outs(%b : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%small : memref<?x3xf32>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%d : memref<?x?xf64>) {
  ^bb0(%o: f64):
    %e = math.exp %o : f64
    linalg.yield %e : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%s : memref<?x?xf32, strided<[?, 2]>>) {
  ^bb0(%o: f32):
    %e = math.exp %o : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<?x?xf32>) outs(%row : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %o : f32
    %t = arith.addf %m, %o : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<?x?xf32>) outs(%row : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.subf %o, %x : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%flags : memref<?x?xi1>) outs(%b : memref<?x?xf32>) {
  ^bb0(%f: i1, %o: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.select %f, %z, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x?xf32>) outs(%b : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %j = linalg.index 1 : index
    %v = memref.load %idx[%j] : memref<?xindex>
    %f = arith.index_cast %v : index to i32
    %g = arith.sitofp %f : i32 to f32
    %r = arith.addf %x, %g : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x?xf32>) outs(%b : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %c0 = arith.constant 0 : index
    %v = memref.load %b[%i, %c0] : memref<?x?xf32>
    %r = arith.addf %x, %v : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %rows = memref.dim %b, %c0 : memref<?x?xf32>
  %first = memref.subview %b[0, 0] [%rows, 1] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[?]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%first : memref<?xf32, strided<[?]>>) outs(%b : memref<?x?xf32>) {
  ^bb0(%den: f32, %o: f32):
    %r = arith.divf %o, %den : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x?xf32>) outs(%b : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %j = linalg.index 1 : index
    %two = arith.constant 2 : index
    %k = arith.remui %j, %two : index
    %n = memref.dim %a, %k : memref<?x?xf32>
    %f = arith.index_cast %n : index to i32
    %g = arith.sitofp %f : i32 to f32
    %r = arith.addf %x, %g : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A load at the same place for every innermost iteration (a label per
// row, as the cross-entropy gradient reads it) stays one scalar load per
// vector; the comparison with the innermost index is a vector.
// CHECK-LABEL: func.func @label_per_row(
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[K:.*]] =
// CHECK: %[[L:.*]] = memref.load %{{.*}}[%[[I]]] : memref<?xindex>
// CHECK: %[[LV:.*]] = vector.broadcast %[[L]] : index to vector<4xindex>
// CHECK: arith.cmpi eq, %{{.*}}, %[[LV]] : vector<4xindex>
// CHECK: vector.store
func.func @label_per_row(%p: memref<?x?xf32>, %labels: memref<?xindex>, %g: memref<?x?xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p : memref<?x?xf32>) outs(%g : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %label = memref.load %labels[%i] : memref<?xindex>
    %hit = arith.cmpi eq, %j, %label : index
    %t = arith.select %hit, %one, %zero : f32
    %r = arith.subf %x, %t : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @rank_zero_init(
// A rank-0 output (a full reduction to a scalar): the loads and the store
// have no indices.
// CHECK: %[[ACC:.*]] = scf.for
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: vector.reduction <add>, %[[ACC]], %[[INIT]]
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
func.func @rank_zero_init(%x: memref<?xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : memref<?xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A transpose that keeps the last dimension and a broadcast (GQA's repeated
// heads) become generics, then vector copies along it.
// CHECK-LABEL: func.func @copies(
// CHECK-NOT: linalg.
// CHECK: vector.load %{{.*}} : memref<?x8x?x64xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<?x?x8x64xf32>, vector<4xf32>
// CHECK: vector.load %{{.*}} : memref<?x2x?x64xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}} : memref<?x2x4x?x64xf32>, vector<4xf32>
func.func @copies(%x: memref<?x8x?x64xf32>, %t: memref<?x?x8x64xf32>, %kv: memref<?x2x?x64xf32>, %rep: memref<?x2x4x?x64xf32>) {
  linalg.transpose ins(%x : memref<?x8x?x64xf32>) outs(%t : memref<?x?x8x64xf32>) permutation = [0, 2, 1, 3]
  linalg.broadcast ins(%kv : memref<?x2x?x64xf32>) outs(%rep : memref<?x2x4x?x64xf32>) dimensions = [2]
  return
}

// -----

// A head-group sum whose reduction loop is not innermost: the last
// dimension (64, contiguous everywhere) moves innermost, the group loop
// stays outside it in its order (bit-identical sums).
// CHECK-LABEL: func.func @group_sum(
// CHECK: scf.for %{{.*}} =
// CHECK: scf.for %{{.*}} =
// CHECK: scf.for %{{.*}} =
// CHECK: scf.for %[[G:.*]] =
// CHECK: scf.for %[[K:.*]] =
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %[[G]], %{{.*}}, %[[K]]] : memref<?x2x4x?x64xf32>, vector<4xf32>
// CHECK: arith.addf
// CHECK: vector.store
// A transpose that moves the last dimension is left.
// CHECK-LABEL: func.func @last_dim_moves(
// CHECK: linalg.generic
func.func @group_sum(%g: memref<?x2x4x?x64xf32>, %out: memref<?x?x2x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, t, h, d, r) -> (b, h, r, t, d)>, affine_map<(b, t, h, d, r) -> (b, t, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%g : memref<?x2x4x?x64xf32>) outs(%out : memref<?x?x2x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}
func.func @last_dim_moves(%x: memref<?x64xf32>, %t: memref<64x?xf32>) {
  linalg.transpose ins(%x : memref<?x64xf32>) outs(%t : memref<64x?xf32>) permutation = [1, 0]
  return
}
