// The MoE ops round-trip through the pretty and the generic form.
// RUN: tfm-opt %s --split-input-file | tfm-opt --split-input-file | FileCheck %s
// RUN: tfm-opt %s --split-input-file --mlir-print-op-generic | tfm-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func @moe_block
func.func @moe_block(%x: tensor<?x?x64xf32>, %router: tensor<8x64xf32>,
    %wgu: tensor<8x32x64xf32>, %wd: tensor<8x64x16xf32>) -> tensor<?x?x64xf32> {
  %logits = tfm.matmul %x, %router {transpose = #tfm.transpose<nt>}
      : (tensor<?x?x64xf32>, tensor<8x64xf32>) -> tensor<?x?x8xf32>
  // CHECK: tfm.moe_router {{.*}} {normalize, routing = #tfm.moe_routing<softmax_topk>, top_k = 2 : i64} : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  %w, %idx = tfm.moe_router %logits {top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>, normalize}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  // CHECK: tfm.moe_route_plan {{.*}} {num_experts = 8 : i64} : (tensor<?x?x2xi64>) -> (tensor<9xi64>, tensor<?x?x2xi64>, tensor<?xi64>)
  %off, %pos, %src = tfm.moe_route_plan %idx {num_experts = 8 : i64}
      : (tensor<?x?x2xi64>) -> (tensor<9xi64>, tensor<?x?x2xi64>, tensor<?xi64>)
  // CHECK: tfm.moe_dispatch {{.*}} : (tensor<?x?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x64xf32>
  %xp = tfm.moe_dispatch %x, %pos, %src
      : (tensor<?x?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x64xf32>
  // CHECK: tfm.moe_grouped_matmul {{.*}} {transpose = #tfm.transpose<nt>} : (tensor<?x64xf32>, tensor<8x32x64xf32>, tensor<9xi64>) -> tensor<?x32xf32>
  %gu = tfm.moe_grouped_matmul %xp, %wgu, %off {transpose = #tfm.transpose<nt>}
      : (tensor<?x64xf32>, tensor<8x32x64xf32>, tensor<9xi64>) -> tensor<?x32xf32>
  %g, %u = tfm.split %gu {dim = 1 : i64} : (tensor<?x32xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
  %a = tfm.silu %g : tensor<?x16xf32>
  %h = tfm.mul %a, %u : tensor<?x16xf32>
  %yp = tfm.moe_grouped_matmul %h, %wd, %off {transpose = #tfm.transpose<nt>}
      : (tensor<?x16xf32>, tensor<8x64x16xf32>, tensor<9xi64>) -> tensor<?x64xf32>
  // CHECK: tfm.moe_combine {{.*}} : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x2xf32>) -> tensor<?x?x64xf32>
  %y = tfm.moe_combine %yp, %pos, %src, %w
      : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x2xf32>) -> tensor<?x?x64xf32>
  // CHECK: tfm.moe_combine {{.*}} : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x?x64xf32>
  %y2 = tfm.moe_combine %yp, %pos, %src
      : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x?x64xf32>
  %r = tfm.add %y, %y2 : tensor<?x?x64xf32>
  return %r : tensor<?x?x64xf32>
}

// -----

// CHECK-LABEL: func @routings
func.func @routings(%l: tensor<?x?x8xbf16>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  // CHECK: routing = #tfm.moe_routing<topk_softmax>
  %w, %i = tfm.moe_router %l {top_k = 4 : i64, routing = #tfm.moe_routing<topk_softmax>}
      : (tensor<?x?x8xbf16>) -> (tensor<?x?x4xf32>, tensor<?x?x4xi64>)
  // CHECK: routing = #tfm.moe_routing<sigmoid_topk>
  %w2, %i2 = tfm.moe_router %l {top_k = 4 : i64, routing = #tfm.moe_routing<sigmoid_topk>}
      : (tensor<?x?x8xbf16>) -> (tensor<?x?x4xf32>, tensor<?x?x4xi64>)
  return %w, %w2 : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// CHECK-LABEL: func @backward
func.func @backward(%dw: tensor<?x?x2xf32>, %l: tensor<?x?x8xf32>, %i: tensor<?x?x2xi64>,
    %dy: tensor<?x?x64xf32>, %yp: tensor<?x64xf32>, %src: tensor<?xi64>,
    %w: tensor<?x?x2xf32>, %xp: tensor<?x16xf32>, %off: tensor<9xi64>)
    -> (tensor<?x?x8xf32>, tensor<8x64x16xf32>, tensor<8x16x64xf32>) {
  // CHECK: tfm.moe_router_backward {{.*}} {normalize, routing = #tfm.moe_routing<softmax_topk>}
  %dl = tfm.moe_router_backward %dw, %l, %i {routing = #tfm.moe_routing<softmax_topk>, normalize}
      : (tensor<?x?x2xf32>, tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<?x?x8xf32>
  // CHECK: tfm.moe_combine_backward
  %drows, %dws = tfm.moe_combine_backward %dy, %yp, %i, %src, %w
      : (tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x2xf32>)
      -> (tensor<?x64xf32>, tensor<?x?x2xf32>)
  // CHECK: tfm.moe_grouped_matmul_grad_weight {{.*}} {transpose = #tfm.transpose<nt>} : (tensor<?x64xf32>, tensor<?x16xf32>, tensor<9xi64>) -> tensor<8x64x16xf32>
  %dwd = tfm.moe_grouped_matmul_grad_weight %drows, %xp, %off {transpose = #tfm.transpose<nt>}
      : (tensor<?x64xf32>, tensor<?x16xf32>, tensor<9xi64>) -> tensor<8x64x16xf32>
  // CHECK: tfm.moe_grouped_matmul_grad_weight {{.*}} {transpose = #tfm.transpose<nn>} : (tensor<?x64xf32>, tensor<?x16xf32>, tensor<9xi64>) -> tensor<8x16x64xf32>
  %dwn = tfm.moe_grouped_matmul_grad_weight %drows, %xp, %off {transpose = #tfm.transpose<nn>}
      : (tensor<?x64xf32>, tensor<?x16xf32>, tensor<9xi64>) -> tensor<8x16x64xf32>
  return %dl, %dwd, %dwn : tensor<?x?x8xf32>, tensor<8x64x16xf32>, tensor<8x16x64xf32>
}

// -----

// CHECK-LABEL: func @aux_loss
func.func @aux_loss(%l: tensor<?x?x8xf32>, %i: tensor<?x?x2xi64>, %st: tensor<3x2x8xf32>, %d: tensor<f32>)
    -> (tensor<f32>, tensor<?x?x8xf32>, tensor<3x2x8xf32>) {
  // CHECK: tfm.moe_load_stats {{.*}} : (tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<2x8xf32>
  %s = tfm.moe_load_stats %l, %i : (tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<2x8xf32>
  // CHECK: tfm.moe_aux_loss {{.*}} {top_k = 2 : i64} : (tensor<3x2x8xf32>) -> tensor<f32>
  %a = tfm.moe_aux_loss %st {top_k = 2 : i64} : (tensor<3x2x8xf32>) -> tensor<f32>
  // CHECK: tfm.moe_load_stats_backward
  %dl = tfm.moe_load_stats_backward %s, %l : (tensor<2x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK: tfm.moe_aux_loss_backward {{.*}} {top_k = 2 : i64}
  %ds = tfm.moe_aux_loss_backward %d, %st {top_k = 2 : i64} : (tensor<f32>, tensor<3x2x8xf32>) -> tensor<3x2x8xf32>
  return %a, %dl, %ds : tensor<f32>, tensor<?x?x8xf32>, tensor<3x2x8xf32>
}

// -----

// DeepSeek-V3 routing: sigmoid scores, a selection bias, expert groups
// scored by their top-2 sum, HF's 1e-20 and routed_scaling_factor.
// CHECK-LABEL: func @deepseek_router
func.func @deepseek_router(%l: tensor<?x?x8xf32>, %bias: tensor<8xf32>) -> tensor<?x?x2xf32> {
  // CHECK: tfm.moe_router %{{.*}}, %{{.*}} {group_score = #tfm.moe_group_score<top2_sum>, normalize, normalize_eps = 9.9999999999999995E-21 : f64, num_groups = 4 : i64, routing = #tfm.moe_routing<sigmoid_topk>, scale = 2.500000e+00 : f64, top_k = 2 : i64, topk_groups = 2 : i64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  %w, %i = tfm.moe_router %l, %bias {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, normalize,
      normalize_eps = 1.0e-20 : f64, scale = 2.5 : f64, num_groups = 4 : i64, topk_groups = 2 : i64,
      group_score = #tfm.moe_group_score<top2_sum>}
      : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  // CHECK: tfm.moe_router_backward {{.*}} {normalize, normalize_eps = 9.9999999999999995E-21 : f64, routing = #tfm.moe_routing<sigmoid_topk>, scale = 2.500000e+00 : f64}
  %dl = tfm.moe_router_backward %w, %l, %i {routing = #tfm.moe_routing<sigmoid_topk>, normalize,
      normalize_eps = 1.0e-20 : f64, scale = 2.5 : f64}
      : (tensor<?x?x2xf32>, tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<?x?x8xf32>
  // CHECK: group_score = #tfm.moe_group_score<max>
  %w2, %i2 = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>, scale = 1.5 : f64,
      num_groups = 2 : i64, topk_groups = 1 : i64, group_score = #tfm.moe_group_score<max>}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return %w : tensor<?x?x2xf32>
}
