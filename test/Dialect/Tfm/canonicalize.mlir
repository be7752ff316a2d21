// RUN: tfm-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func @scale_by_one
// CHECK-NEXT: return %arg0
func.func @scale_by_one(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = tfm.scale %x {factor = 1.0 : f64} : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// A real scale stays.
// CHECK-LABEL: func @scale_kept
// CHECK: tfm.scale %arg0 {factor = 2.000000e+00 : f64}
func.func @scale_kept(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = tfm.scale %x {factor = 2.0 : f64} : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// reshape there and back is the operand.
// CHECK-LABEL: func @reshape_roundtrip
// CHECK-NEXT: return %arg0
func.func @reshape_roundtrip(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %a = tfm.reshape %x : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %b = tfm.reshape %a : tensor<?x?x4x16xf32> -> tensor<?x?x64xf32>
  return %b : tensor<?x?x64xf32>
}

// -----

// reshape of reshape regroups the original operand in one step.
// CHECK-LABEL: func @reshape_chain
// CHECK-NEXT: %[[R:.*]] = tfm.reshape %arg0 : tensor<?x?x64xf32> -> tensor<?x?x8x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<?x?x64xf32>) -> tensor<?x?x8x8xf32> {
  %a = tfm.reshape %x : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %b = tfm.reshape %a : tensor<?x?x4x16xf32> -> tensor<?x?x8x8xf32>
  return %b : tensor<?x?x8x8xf32>
}

// -----

// Unused pure ops inside a layer body are removed; the repeat stays.
// CHECK-LABEL: func @dead_in_body
// CHECK: tfm.repeat
// CHECK-NOT: tfm.silu
// CHECK: tfm.yield
func.func @dead_in_body(%h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = tfm.repeat (%h : tensor<?x8xf32>) layers() {num_layers = 2 : i64} -> tensor<?x8xf32> {
  ^bb0(%x: tensor<?x8xf32>):
    %unused = tfm.silu %x : tensor<?x8xf32>
    tfm.yield %x : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}
