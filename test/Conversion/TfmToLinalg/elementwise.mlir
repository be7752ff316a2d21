// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-convert-to-linalg))" | FileCheck %s

// Element-wise ops become one parallel linalg.generic over the whole shape,
// with sizes taken from the operand.
// CHECK-LABEL: func @silu
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x16xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%arg0 : tensor<?x?x16xf32>) outs(%[[E]] : tensor<?x?x16xf32>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: tfm.
func.func @silu(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %y = tfm.silu %x : tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// bf16 arithmetic runs in f32 and rounds on store.
// CHECK-LABEL: func @add_bf16
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @add_bf16(%a: tensor<?x?x16xbf16>, %b: tensor<?x?x16xbf16>) -> tensor<?x?x16xbf16> {
  %y = tfm.add %a, %b : tensor<?x?x16xbf16>
  return %y : tensor<?x?x16xbf16>
}

// -----

// With round_factor the factor is rounded to the element type first:
// sqrt(3584) is 59.87 in f32 but 59.75 in bf16, as HF's Gemma normaliser.
// CHECK-LABEL: func @scale_rounded
// CHECK: arith.constant 5.975000e+01 : f32
func.func @scale_rounded(%x: tensor<?x?x16xbf16>) -> tensor<?x?x16xbf16> {
  %y = tfm.scale %x {factor = 59.866518188383061 : f64, round_factor} : tensor<?x?x16xbf16>
  return %y : tensor<?x?x16xbf16>
}

// -----

// Without it, the factor is applied as given (a Python scalar in PyTorch).
// CHECK-LABEL: func @scale
// CHECK: arith.constant 59.8665199 : f32
func.func @scale(%x: tensor<?x?x16xbf16>) -> tensor<?x?x16xbf16> {
  %y = tfm.scale %x {factor = 59.866518188383061 : f64} : tensor<?x?x16xbf16>
  return %y : tensor<?x?x16xbf16>
}

// -----

// GLUs read the two halves as slices: up first, gate second.
// CHECK-LABEL: func @swiglu
// CHECK: %[[UP:.*]] = tensor.extract_slice %arg0[0, 0, 0] [%{{.*}}, %{{.*}}, 12] [1, 1, 1]
// CHECK: %[[GATE:.*]] = tensor.extract_slice %arg0[0, 0, 12] [%{{.*}}, %{{.*}}, 12] [1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[UP]], %[[GATE]] :
func.func @swiglu(%x: tensor<?x?x24xf32>) -> tensor<?x?x12xf32> {
  %y = tfm.swiglu %x : (tensor<?x?x24xf32>) -> tensor<?x?x12xf32>
  return %y : tensor<?x?x12xf32>
}

// -----

// CHECK-LABEL: func @softcap
// CHECK: arith.divf
// CHECK: math.tanh
// CHECK: arith.mulf
func.func @softcap(%x: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %y = tfm.softcap %x {cap = 30.0 : f64} : tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}
