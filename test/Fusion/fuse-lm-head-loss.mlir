// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-fuse-lm-head-loss))" | FileCheck %s

// The loss-only forward: matmul + softcap + cross_entropy -> one op.
// CHECK-LABEL: func.func @softcapped
// CHECK-NOT: tfm.matmul
// CHECK-NOT: tfm.softcap
// CHECK: %[[L:.*]], %{{.*}} = tfm.fused_lm_head_loss %arg0, %arg1, %arg2 {softcap = 3.000000e+01 : f64}
// CHECK: return %[[L]]
func.func @softcapped(%h: tensor<?x?x16xf32>, %w: tensor<32x16xf32>, %labels: tensor<?x?xi64>) -> tensor<f32> {
  %logits = tfm.matmul %h, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<32x16xf32>) -> tensor<?x?x32xf32>
  %c = tfm.softcap %logits {cap = 30.0 : f64} : tensor<?x?x32xf32>
  %loss = tfm.cross_entropy %c, %labels : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Granite's 1 / logits_scaling folds in as logit_scale.
// CHECK-LABEL: func.func @scaled
// CHECK: tfm.fused_lm_head_loss %arg0, %arg1, %arg2 {logit_scale = 1.250000e-01 : f64}
func.func @scaled(%h: tensor<?x?x16xbf16>, %w: tensor<32x16xbf16>, %labels: tensor<?x?xi64>) -> tensor<f32> {
  %logits = tfm.matmul %h, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xbf16>, tensor<32x16xbf16>) -> tensor<?x?x32xbf16>
  %s = tfm.scale %logits {factor = 0.125 : f64} : tensor<?x?x32xbf16>
  %loss = tfm.cross_entropy %s, %labels : (tensor<?x?x32xbf16>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Left alone: the logits are returned too.
// CHECK-LABEL: func.func @logits_returned
// CHECK-NOT: fused_lm_head_loss
// CHECK: tfm.cross_entropy
func.func @logits_returned(%h: tensor<?x?x16xf32>, %w: tensor<32x16xf32>, %labels: tensor<?x?xi64>) -> (tensor<?x?x32xf32>, tensor<f32>) {
  %logits = tfm.matmul %h, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<32x16xf32>) -> tensor<?x?x32xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %logits, %loss : tensor<?x?x32xf32>, tensor<f32>
}

// -----

// Left alone: a biased head, and a scale HF rounds to the model's type.
// CHECK-LABEL: func.func @biased
// CHECK-NOT: fused_lm_head_loss
// CHECK-LABEL: func.func @rounded_scale
// CHECK-NOT: fused_lm_head_loss
func.func @biased(%h: tensor<?x?x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>, %labels: tensor<?x?xi64>) -> tensor<f32> {
  %logits = tfm.matmul %h, %w, %b {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
func.func @rounded_scale(%h: tensor<?x?x16xbf16>, %w: tensor<32x16xbf16>, %labels: tensor<?x?xi64>) -> tensor<f32> {
  %logits = tfm.matmul %h, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xbf16>, tensor<32x16xbf16>) -> tensor<?x?x32xbf16>
  %s = tfm.scale %logits {factor = 0.3 : f64, round_factor} : tensor<?x?x32xbf16>
  %loss = tfm.cross_entropy %s, %labels : (tensor<?x?x32xbf16>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
