// tfm-outline-loop-bodies: large loop and branch bodies holding loops
// become private noinline functions; small bodies, innermost (loop-free)
// bodies and bodies with stack buffers stay.
// RUN: tfm-opt %s --tfm-outline-loop-bodies="min-ops=6" --split-input-file | FileCheck %s

// A scan-like loop: its body (two linalg ops; 7 operations with their own
// bodies) becomes @scan__body0, called with the induction variable, the
// iter_arg and the captured buffers, and returning what the body yielded.
// CHECK-LABEL: func.func private @scan__body0(
// CHECK-SAME: %{{.*}}: index, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: linalg.add
// CHECK: linalg.mul
// CHECK: return
// CHECK-LABEL: func.func @scan(
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[H:.*]] = %{{.*}}) -> (memref<4xf32>)
// CHECK-NEXT: %[[R:.*]] = func.call @scan__body0(%[[I]], %[[H]], %{{.*}}, %{{.*}}) : (index, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: scf.yield %[[R]]
func.func @scan(%h0: memref<4xf32>, %w: memref<4xf32>, %t: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%h = %h0) -> (memref<4xf32>) {
    linalg.add ins(%h, %w : memref<4xf32>, memref<4xf32>) outs(%t : memref<4xf32>)
    linalg.mul ins(%t, %w : memref<4xf32>, memref<4xf32>) outs(%h : memref<4xf32>)
    scf.yield %h : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// Left: a body below min-ops, a body with no loop inside (an innermost
// loop's: a call per element), and a body that allocates on the stack.
// CHECK-LABEL: func.func @left(
// CHECK-NOT: func.call
// CHECK-NOT: func.func
func.func @left(%a: memref<4xf32>, %w: memref<4xf32>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.add ins(%a, %w : memref<4xf32>, memref<4xf32>) outs(%a : memref<4xf32>)
  }
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (f32) {
    %v = memref.load %a[%i] : memref<4xf32>
    %m = arith.mulf %v, %v : f32
    %e = arith.addf %m, %acc : f32
    %f = arith.mulf %e, %x : f32
    scf.yield %f : f32
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %tmp = memref.alloca() : memref<4xf32>
    linalg.add ins(%a, %w : memref<4xf32>, memref<4xf32>) outs(%tmp : memref<4xf32>)
    linalg.mul ins(%tmp, %w : memref<4xf32>, memref<4xf32>) outs(%a : memref<4xf32>)
  }
  return %s : f32
}
