// RUN: tfm-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(tfm-gpu-launch-to-loops))" | FileCheck %s

// A launch whose threads do not communicate: loops over the grid and the
// block around its body; id and dimension ops read the loops.
// CHECK-LABEL: func.func @independent
// CHECK-SAME:    (%[[M:.*]]: memref<?xindex>, %[[G:.*]]: index)
// CHECK:         scf.for %[[BX:.*]] = %{{.*}} to %[[G]]
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for %[[TX:.*]] = %{{.*}} to %[[C4:.*]] step
// CHECK:                 scf.for
// CHECK:                   scf.for
// CHECK:                     %[[BASE:.*]] = arith.muli %[[BX]], %[[C4]]
// CHECK:                     %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK:                     memref.store %[[I]], %[[M]][%[[I]]]
// CHECK-NOT:     gpu.
func.func @independent(%m: memref<?xindex>, %g: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %d = gpu.block_dim x
    %t = gpu.thread_id x
    %base = arith.muli %b, %d : index
    %i = arith.addi %base, %t : index
    memref.store %i, %m[%i] : memref<?xindex>
    gpu.terminator
  }
  return
}

// -----

// Threads that communicate cannot be run one after another.
func.func @shuffles(%m: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1_i32 = arith.constant 1 : i32
  %c32_i32 = arith.constant 32 : i32
  // expected-error @+1 {{cannot be run as loops: its threads communicate}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %m[%tx] : memref<32xf32>
    %s, %ok = gpu.shuffle xor %v, %c1_i32, %c32_i32 : f32
    memref.store %s, %m[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @shared(%m: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{cannot be run as loops: memory attributions or clusters}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%tile : memref<32xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %tile[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    memref.store %v, %m[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
