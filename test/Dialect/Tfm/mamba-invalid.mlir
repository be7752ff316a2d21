// Every Mamba2 verifier message, one case each.
// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @conv_rank(%x: tensor<?x96xf32>, %w: tensor<96x4xf32>) {
  // expected-error @+1 {{input must have shape [?, ?, ?]}}
  %y = tfm.mamba_conv1d %x, %w : (tensor<?x96xf32>, tensor<96x4xf32>) -> tensor<?x96xf32>
  return
}

// -----

func.func @conv_dynamic_channels(%x: tensor<?x?x?xf32>, %w: tensor<96x4xf32>) {
  // expected-error @+1 {{input dimension 2 must be static}}
  %y = tfm.mamba_conv1d %x, %w : (tensor<?x?x?xf32>, tensor<96x4xf32>) -> tensor<?x?x?xf32>
  return
}

// -----

func.func @conv_dynamic_kernel(%x: tensor<?x?x96xf32>, %w: tensor<96x?xf32>) {
  // expected-error @+1 {{weight dimension 1 must be static}}
  %y = tfm.mamba_conv1d %x, %w : (tensor<?x?x96xf32>, tensor<96x?xf32>) -> tensor<?x?x96xf32>
  return
}

// -----

func.func @conv_weight_channels(%x: tensor<?x?x96xf32>, %w: tensor<64x4xf32>) {
  // expected-error @+1 {{weight must have shape [96, ?]}}
  %y = tfm.mamba_conv1d %x, %w : (tensor<?x?x96xf32>, tensor<64x4xf32>) -> tensor<?x?x96xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape [96]}}
  %y = tfm.mamba_conv1d %x, %w, %b : (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<4xf32>) -> tensor<?x?x96xf32>
  return
}

// -----

func.func @conv_result(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>) {
  // expected-error @+1 {{result must have type 'tensor<?x?x96xf32>'}}
  %y = tfm.mamba_conv1d %x, %w : (tensor<?x?x96xf32>, tensor<96x4xf32>) -> tensor<?x?x96xbf16>
  return
}

// -----

func.func @conv_bw_dy(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>, %dy: tensor<?x?x96xbf16>) {
  // expected-error @+1 {{dy must have type 'tensor<?x?x96xf32>'}}
  %a:3 = tfm.mamba_conv1d_backward %dy, %x, %w : (tensor<?x?x96xbf16>, tensor<?x?x96xf32>, tensor<96x4xf32>) -> (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xf32>)
  return
}

// -----

func.func @conv_bw_dx(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>, %dy: tensor<?x?x96xf32>) {
  // expected-error @+1 {{dx must have type 'tensor<?x?x96xf32>'}}
  %a:3 = tfm.mamba_conv1d_backward %dy, %x, %w : (tensor<?x?x96xf32>, tensor<?x?x96xf32>, tensor<96x4xf32>) -> (tensor<?x?x96xbf16>, tensor<96x4xf32>, tensor<96xf32>)
  return
}

// -----

func.func @conv_bw_dweight(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>, %dy: tensor<?x?x96xf32>) {
  // expected-error @+1 {{dweight must have type 'tensor<96x4xf32>'}}
  %a:3 = tfm.mamba_conv1d_backward %dy, %x, %w : (tensor<?x?x96xf32>, tensor<?x?x96xf32>, tensor<96x4xf32>) -> (tensor<?x?x96xf32>, tensor<96x3xf32>, tensor<96xf32>)
  return
}

// -----

func.func @conv_bw_dbias_shape(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>, %dy: tensor<?x?x96xf32>) {
  // expected-error @+1 {{dbias must have shape [96]}}
  %a:3 = tfm.mamba_conv1d_backward %dy, %x, %w : (tensor<?x?x96xf32>, tensor<?x?x96xf32>, tensor<96x4xf32>) -> (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<95xf32>)
  return
}

// -----

func.func @conv_bw_dbias_type(%x: tensor<?x?x96xf32>, %w: tensor<96x4xf32>, %dy: tensor<?x?x96xf32>) {
  // expected-error @+1 {{dbias must have element type 'f32'}}
  %a:3 = tfm.mamba_conv1d_backward %dy, %x, %w : (tensor<?x?x96xf32>, tensor<?x?x96xf32>, tensor<96x4xf32>) -> (tensor<?x?x96xf32>, tensor<96x4xf32>, tensor<96xbf16>)
  return
}

// -----

func.func @scan_x_rank(%x: tensor<?x?x32xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{x must have shape [?, ?, ?, ?]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x32xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_x_static(%x: tensor<?x?x?x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{x dimension 2 must be static}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x?x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x?x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_dt(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x4xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{dt must have shape [?, ?, 8]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x4xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_a_log(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<4xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{a_log must have shape [8]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<4xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_d(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<4xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{d must have shape [8]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_dt_bias(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<4xf32>) {
  // expected-error @+1 {{dt_bias must have shape [8]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<4xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_b_rank(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x32xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{b must have shape [?, ?, ?, ?]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x32xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_b_static(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x?xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{b dimension 3 must be static}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x?xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_c(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x8xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{c must have shape [?, ?, 2, 16]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_groups(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x3x16xf32>, %c: tensor<?x?x3x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{the groups of b and c (3) must divide the heads (8)}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x3x16xf32>, tensor<?x?x3x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_chunk(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{chunk_size must be positive, got 0}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 0 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_dt_limits(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{dt limits must satisfy 0 <= dt_min <= dt_max}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 2.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf32>)
  return
}

// -----

func.func @scan_y(%x: tensor<?x?x8x4xf64>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{y must have element type 'f64'}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf64>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x16xf64>)
  return
}

// -----

func.func @scan_states(%x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %al: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %c: tensor<?x?x2x16xf32>, %d: tensor<8xf32>, %db: tensor<8xf32>) {
  // expected-error @+1 {{states must have shape [?, ?, 8, 4, 16]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %al, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8x4x8xf32>)
  return
}

// -----

func.func @scan_bw_dy(%dy: tensor<?x?x8x2xf32>, %x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %h: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %s: tensor<?x?x8x4x16xf32>) {
  // expected-error @+1 {{dy must have shape [?, ?, 8, 4]}}
  %g:7 = tfm.mamba_ssd_scan_backward %dy, %x, %dt, %h, %b, %b, %h, %h, %s {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x2xf32>, tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x?x8x4x16xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @scan_bw_states(%dy: tensor<?x?x8x4xf32>, %x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %h: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %s: tensor<?x?x8x4x2xf32>) {
  // expected-error @+1 {{states must have shape [?, ?, 8, 4, 16]}}
  %g:7 = tfm.mamba_ssd_scan_backward %dy, %x, %dt, %h, %b, %b, %h, %h, %s {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x?x8x4x2xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @scan_bw_grad(%dy: tensor<?x?x8x4xf32>, %x: tensor<?x?x8x4xf32>, %dt: tensor<?x?x8xf32>, %h: tensor<8xf32>, %b: tensor<?x?x2x16xf32>, %s: tensor<?x?x8x4x16xf32>) {
  // expected-error @+1 {{da_log must have type 'tensor<8xf32>'}}
  %g:7 = tfm.mamba_ssd_scan_backward %dy, %x, %dt, %h, %b, %b, %h, %h, %s {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<?x?x8x4xf32>, tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xf32>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x?x8x4x16xf32>) -> (tensor<?x?x8x4xf32>, tensor<?x?x8xf32>, tensor<8xbf16>, tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @norm_rank(%x: tensor<64xf32>, %z: tensor<64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{x must have rank at least 2}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 1.0e-05 : f64} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<2xf32>)
  return
}

// -----

func.func @norm_static(%x: tensor<?x?x?xf32>, %z: tensor<?x?x?xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{x dimension 2 must be static}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 1.0e-05 : f64} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<64xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @norm_z(%x: tensor<?x?x64xf32>, %z: tensor<?x?x32xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{z must have shape [?, ?, 64]}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @norm_weight(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>, %w: tensor<16xf32>) {
  // expected-error @+1 {{weight must have shape [64] or [32] (shared by the groups)}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<16xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @norm_groups(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{groups (3) must be positive and divide the features (64)}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 3 : i64, eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x3xf32>)
  return
}

// -----

func.func @norm_result(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{result must have shape [?, ?, 64]}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @norm_rstd(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{rstd must have shape [?, ?, 2]}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x4xf32>)
  return
}

// -----

func.func @norm_eps(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{eps must be positive, got 0}}
  %y, %r = tfm.gated_rmsnorm %x, %z, %w {groups = 2 : i64, eps = 0.0 : f64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @norm_bw_dy(%dy: tensor<?x?x32xf32>, %x: tensor<?x?x64xf32>, %w: tensor<64xf32>, %r: tensor<?x?x2xf32>) {
  // expected-error @+1 {{dy must have shape [?, ?, 64]}}
  %g:3 = tfm.gated_rmsnorm_backward %dy, %x, %x, %w, %r : (tensor<?x?x32xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?x2xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @norm_bw_dx(%dy: tensor<?x?x64xf32>, %x: tensor<?x?x64xf32>, %w: tensor<64xf32>, %r: tensor<?x?x2xf32>) {
  // expected-error @+1 {{dx must have type 'tensor<?x?x64xf32>'}}
  %g:3 = tfm.gated_rmsnorm_backward %dy, %x, %x, %w, %r : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?x2xf32>) -> (tensor<?x?x64xbf16>, tensor<?x?x64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @norm_bw_dz(%dy: tensor<?x?x64xf32>, %x: tensor<?x?x64xf32>, %w: tensor<64xf32>, %r: tensor<?x?x2xf32>) {
  // expected-error @+1 {{dz must have type 'tensor<?x?x64xf32>'}}
  %g:3 = tfm.gated_rmsnorm_backward %dy, %x, %x, %w, %r : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?x2xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xbf16>, tensor<64xf32>)
  return
}

// -----

func.func @norm_bw_dweight(%dy: tensor<?x?x64xf32>, %x: tensor<?x?x64xf32>, %w: tensor<64xf32>, %r: tensor<?x?x2xf32>) {
  // expected-error @+1 {{dweight must have type 'tensor<64xf32>'}}
  %g:3 = tfm.gated_rmsnorm_backward %dy, %x, %x, %w, %r : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xf32>, tensor<?x?x2xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64xbf16>)
  return
}

// -----

func.func @gate_z(%x: tensor<?x?x64xf32>, %z: tensor<?x?x32xf32>) {
  // expected-error @+1 {{z must have shape [?, ?, 64]}}
  %y = tfm.silu_gate %x, %z : (tensor<?x?x64xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @gate_result(%x: tensor<?x?x64xf32>, %z: tensor<?x?x64xf32>) {
  // expected-error @+1 {{result must have shape [?, ?, 64]}}
  %y = tfm.silu_gate %x, %z : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @gate_bw_dy(%dy: tensor<?x?x32xf32>, %x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{dy must have shape [?, ?, 64]}}
  %d:2 = tfm.silu_gate_backward %dy, %x, %x : (tensor<?x?x32xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>)
  return
}

// -----

func.func @gate_bw_dx(%dy: tensor<?x?x64xf32>, %x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{dx must have type 'tensor<?x?x64xf32>'}}
  %d:2 = tfm.silu_gate_backward %dy, %x, %x : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> (tensor<?x?x64xbf16>, tensor<?x?x64xf32>)
  return
}

// -----

func.func @gate_bw_dz(%dy: tensor<?x?x64xf32>, %x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{dz must have type 'tensor<?x?x64xf32>'}}
  %d:2 = tfm.silu_gate_backward %dy, %x, %x : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xbf16>)
  return
}

// -----

// With a static sequence the chunk count is known: ceil(10 / 4) = 3 states.
func.func @scan_static_chunks(%x: tensor<2x10x8x4xf32>, %dt: tensor<2x10x8xf32>, %b: tensor<2x10x2x16xf32>, %h: tensor<8xf32>) {
  // expected-error @+1 {{states must have shape [2, 3, 8, 4, 16]}}
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %h, %b, %b, %h, %h {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 1.0 : f64} : (tensor<2x10x8x4xf32>, tensor<2x10x8xf32>, tensor<8xf32>, tensor<2x10x2x16xf32>, tensor<2x10x2x16xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x10x8x4xf32>, tensor<2x10x8x4x16xf32>)
  return
}
