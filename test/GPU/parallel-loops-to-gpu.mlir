// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-parallel-loops-to-gpu{block-size=128}))" | FileCheck %s

// A 2-D parallel loop becomes one flat launch: N = n*8 threads, 128 per
// block, last dimension fastest, bounds-checked, and no launch when N = 0.
// CHECK-LABEL: func.func @scale
// CHECK:         arith.maxsi
// CHECK:         %[[N1:.*]] = arith.maxsi
// CHECK:         %[[N:.*]] = arith.muli %{{.*}}, %[[N1]]
// CHECK:         %[[C128:.*]] = arith.constant 128 : index
// CHECK:         %[[GRID:.*]] = arith.ceildivsi %[[N]], %[[C128]]
// CHECK:         %[[NONEMPTY:.*]] = arith.cmpi sgt, %[[N]]
// CHECK:         scf.if %[[NONEMPTY]]
// CHECK:           gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]],
// CHECK:             %[[ID:.*]] = arith.addi %{{.*}}, %[[TX]]
// CHECK:             %[[IN:.*]] = arith.cmpi slt, %[[ID]], %[[N]]
// CHECK:             scf.if %[[IN]]
// CHECK:               %[[J:.*]] = arith.remsi %[[ID]], %[[N1]]
// CHECK:               arith.divsi %[[ID]], %[[N1]]
// CHECK:               memref.load %arg0[%{{.*}}, %{{.*}}]
// CHECK:               memref.store
// CHECK-NOT:         scf.parallel
func.func @scale(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x8xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i, %j] : memref<?x8xf32>
    scf.reduce
  }
  return
}

// A full reduction (no parallel dimension) over float data runs as one
// thread on the device, not as a host loop over device memory.
// CHECK-LABEL: func.func @total
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %[[ONE:.*]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]]) threads({{.*}}) in ({{.*}} = %[[ONE]], {{.*}} = %[[ONE]], {{.*}} = %[[ONE]])
// CHECK-NEXT:      scf.for
func.func @total(%a: memref<?xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %acc = memref.load %out[] : memref<f32>
    %y = arith.addf %acc, %x : f32
    memref.store %y, %out[] : memref<f32>
  }
  return
}

// Host bookkeeping over index data (the deallocation helper) stays a host loop.
// CHECK-LABEL: func.func @pointers
// CHECK-NOT:     gpu.launch
// CHECK:         scf.for
func.func @pointers(%p: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %p, %c0 : memref<?xindex>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %i, %p[%i] : memref<?xindex>
  }
  return
}

// Loops already inside a launch are not touched again.
// CHECK-LABEL: func.func @inside_launch
// CHECK-COUNT-1: gpu.launch
// CHECK:           scf.parallel
func.func @inside_launch(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %a[%i] : memref<8xf32>
      memref.store %x, %a[%i] : memref<8xf32>
      scf.reduce
    }
    gpu.terminator
  }
  return
}
