// RUN: tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-globals-to-arena))" | FileCheck %s

// The constant table is copied once at entry into a buffer that every use
// (here inside a loop) reads instead of the host global; the buffer is
// freed before the return.
// CHECK-LABEL: func.func @table
// CHECK:         %[[G:.*]] = memref.get_global @freqs : memref<4xf32>
// CHECK:         %[[BUF:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[G]], %[[BUF]]
// CHECK:         scf.for
// CHECK-NOT:       memref.get_global
// CHECK:           memref.load %[[BUF]]
// CHECK:         memref.dealloc %[[BUF]]
// CHECK-NEXT:    return
memref.global "private" constant @freqs : memref<4xf32> = dense<[1.0, 0.5, 0.25, 0.125]>
memref.global "private" @state : memref<4xf32> = uninitialized
func.func @table(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %g = memref.get_global @freqs : memref<4xf32>
    %x = memref.load %g[%i] : memref<4xf32>
    memref.store %x, %out[%i] : memref<4xf32>
  }
  return
}

// A non-constant global is left alone.
// CHECK-LABEL: func.func @mutable
// CHECK-NOT:     memref.alloc
// CHECK:         memref.get_global @state
func.func @mutable() -> memref<4xf32> {
  %g = memref.get_global @state : memref<4xf32>
  return %g : memref<4xf32>
}

// A constant global returned as is stays a get_global (a copy freed before
// the return would be returned dangling).
// CHECK-LABEL: func.func @returned
// CHECK-NOT:     memref.alloc
// CHECK:         %[[G:.*]] = memref.get_global @freqs
// CHECK:         return %[[G]]
func.func @returned() -> memref<4xf32> {
  %g = memref.get_global @freqs : memref<4xf32>
  return %g : memref<4xf32>
}
