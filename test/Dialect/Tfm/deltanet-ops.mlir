// The gated DeltaNet ops and their backward ops round-trip through the
// pretty and the generic form.
// RUN: tfm-opt %s --split-input-file | tfm-opt --split-input-file | FileCheck %s
// RUN: tfm-opt %s --split-input-file --mlir-print-op-generic | tfm-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @mixer
func.func @mixer(%q: tensor<?x?x2x16xbf16>, %v: tensor<?x?x4x8xbf16>, %g: tensor<?x?x4xbf16>,
    %h: tensor<4xbf16>, %z: tensor<?x?x32xbf16>, %nw: tensor<8xbf16>) -> tensor<?x?x32xbf16> {
  // CHECK: tfm.gated_delta_rule {{.*}} {chunk_size = 64 : i64}
  // CHECK-SAME: -> (tensor<?x?x4x8xbf16>, tensor<?x?x4x16x8xf32>)
  %y, %s = tfm.gated_delta_rule %q, %q, %v, %g, %g, %h, %h {chunk_size = 64 : i64}
      : (tensor<?x?x2x16xbf16>, tensor<?x?x2x16xbf16>, tensor<?x?x4x8xbf16>, tensor<?x?x4xbf16>,
         tensor<?x?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
      -> (tensor<?x?x4x8xbf16>, tensor<?x?x4x16x8xf32>)
  %y2 = tfm.reshape %y : tensor<?x?x4x8xbf16> -> tensor<?x?x32xbf16>
  // CHECK: tfm.gated_rmsnorm {{.*}} : (tensor<?x?x32xbf16>, tensor<?x?x32xbf16>, tensor<8xbf16>)
  %n:2 = tfm.gated_rmsnorm %y2, %z, %nw {groups = 4 : i64, eps = 1.0e-6 : f64, norm_before_gate}
      : (tensor<?x?x32xbf16>, tensor<?x?x32xbf16>, tensor<8xbf16>) -> (tensor<?x?x32xbf16>, tensor<?x?x4xf32>)
  // CHECK: tfm.sigmoid {{.*}} : tensor<?x?x32xbf16>
  %sg = tfm.sigmoid %z : tensor<?x?x32xbf16>
  return %n#0 : tensor<?x?x32xbf16>
}

// -----

// CHECK-LABEL: func @backward
func.func @backward(%dy: tensor<?x?x4x8xf32>, %q: tensor<?x?x2x16xf32>, %v: tensor<?x?x4x8xf32>,
    %g: tensor<?x?x4xf32>, %h: tensor<4xf32>, %s: tensor<?x?x4x16x8xf32>, %x: tensor<?x?x32xf32>) {
  // CHECK: tfm.gated_delta_rule_backward {{.*}} {chunk_size = 64 : i64}
  %d:7 = tfm.gated_delta_rule_backward %dy, %q, %q, %v, %g, %g, %h, %h, %s {chunk_size = 64 : i64}
      : (tensor<?x?x4x8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>,
         tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x?x4x16x8xf32>)
      -> (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x4x8xf32>, tensor<?x?x4xf32>,
          tensor<?x?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: tfm.sigmoid_backward
  %dx = tfm.sigmoid_backward %x, %x : tensor<?x?x32xf32>
  return
}
