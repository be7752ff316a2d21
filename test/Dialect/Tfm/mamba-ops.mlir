// The Mamba2 ops and their backward ops round-trip through the pretty and
// the generic form.
// RUN: tfm-opt %s --split-input-file | tfm-opt --split-input-file | FileCheck %s
// RUN: tfm-opt %s --split-input-file --mlir-print-op-generic | tfm-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @mixer
func.func @mixer(%xbc: tensor<?x?x96xbf16>, %w: tensor<96x4xbf16>, %b: tensor<96xbf16>,
    %x: tensor<?x?x8x8xbf16>, %dt: tensor<?x?x8xbf16>, %h: tensor<8xf32>,
    %bm: tensor<?x?x2x16xbf16>, %y: tensor<?x?x64xf32>, %z: tensor<?x?x64xbf16>,
    %nw: tensor<64xbf16>) -> tensor<?x?x64xbf16> {
  // CHECK: tfm.mamba_conv1d {{.*}} : (tensor<?x?x96xbf16>, tensor<96x4xbf16>, tensor<96xbf16>) -> tensor<?x?x96xbf16>
  %c = tfm.mamba_conv1d %xbc, %w, %b
      : (tensor<?x?x96xbf16>, tensor<96x4xbf16>, tensor<96xbf16>) -> tensor<?x?x96xbf16>
  // CHECK: tfm.mamba_conv1d {{.*}} : (tensor<?x?x96xbf16>, tensor<96x4xbf16>) -> tensor<?x?x96xbf16>
  %c2 = tfm.mamba_conv1d %xbc, %w : (tensor<?x?x96xbf16>, tensor<96x4xbf16>) -> tensor<?x?x96xbf16>
  // CHECK: tfm.mamba_ssd_scan {{.*}} {chunk_size = 256 : i64, dt_max = 0x7FF0000000000000 : f64, dt_min = 0.000000e+00 : f64}
  // CHECK-SAME: -> (tensor<?x?x8x8xf32>, tensor<?x?x8x8x16xf32>)
  %s:2 = tfm.mamba_ssd_scan %x, %dt, %h, %bm, %bm, %h, %h
      {chunk_size = 256 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}
      : (tensor<?x?x8x8xbf16>, tensor<?x?x8xbf16>, tensor<8xf32>, tensor<?x?x2x16xbf16>,
         tensor<?x?x2x16xbf16>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<?x?x8x8xf32>, tensor<?x?x8x8x16xf32>)
  // CHECK: tfm.gated_rmsnorm {{.*}} {eps = 1.000000e-05 : f64, groups = 2 : i64, norm_before_gate}
  %n:2 = tfm.gated_rmsnorm %y, %z, %nw {groups = 2 : i64, eps = 1.0e-5 : f64, norm_before_gate}
      : (tensor<?x?x64xf32>, tensor<?x?x64xbf16>, tensor<64xbf16>) -> (tensor<?x?x64xbf16>, tensor<?x?x2xf32>)
  // CHECK: tfm.silu_gate {{.*}} : (tensor<?x?x64xf32>, tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
  %g = tfm.silu_gate %y, %z : (tensor<?x?x64xf32>, tensor<?x?x64xbf16>) -> tensor<?x?x64xbf16>
  return %n#0 : tensor<?x?x64xbf16>
}

// -----

// CHECK-LABEL: func @backward
func.func @backward(%dy: tensor<?x?x96xf32>, %x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>,
    %dys: tensor<?x?x8x8xf32>, %xs: tensor<?x?x8x8xf32>, %dt: tensor<?x?x8xf32>, %h: tensor<8xf32>,
    %bm: tensor<?x?x2x16xf32>, %st: tensor<?x?x8x8x16xf32>, %g: tensor<?x?x64xf32>,
    %nw: tensor<64xf32>, %rstd: tensor<?x?x2xf32>) {
  // CHECK: tfm.mamba_conv1d_backward {{.*}} -> (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xf32>)
  %c:3 = tfm.mamba_conv1d_backward %dy, %x, %w
      : (tensor<?x?x96xf32>, tensor<?x?x96xf32>, tensor<96x4xf32>) -> (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xf32>)
  // CHECK: tfm.mamba_ssd_scan_backward {{.*}} {chunk_size = 4 : i64
  %s:7 = tfm.mamba_ssd_scan_backward %dys, %xs, %dt, %h, %bm, %bm, %h, %h, %st
      {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 2.0 : f64}
      : (tensor<?x?x8x8xf32>, tensor<?x?x8x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>,
         tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x?x8x8x16xf32>)
      -> (tensor<?x?x8x8xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>,
          tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>)
  // CHECK: tfm.gated_rmsnorm_backward {{.*}} -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>)
  %n:3 = tfm.gated_rmsnorm_backward %g, %g, %g, %nw, %rstd
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?x2xf32>)
      -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>)
  // CHECK: tfm.silu_gate_backward {{.*}} -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>)
  %sg:2 = tfm.silu_gate_backward %g, %g, %g
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>)
  return
}
