// Every MoE verifier message, one case each.
// RUN: tfm-opt %s --split-input-file --verify-diagnostics

func.func @topk_exceeds_experts(%l: tensor<?x?x4xf32>) {
  // expected-error @+1 {{top_k must be in [1, 4] (the number of experts), got 5}}
  %w, %i = tfm.moe_router %l {top_k = 5 : i64, routing = #tfm.moe_routing<softmax_topk>}
      : (tensor<?x?x4xf32>) -> (tensor<?x?x5xf32>, tensor<?x?x5xi64>)
  return
}

// -----

func.func @router_weights_shape(%l: tensor<?x?x4xf32>) {
  // expected-error @+1 {{weights must have shape [?, ?, 2]}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>}
      : (tensor<?x?x4xf32>) -> (tensor<?x?x3xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_indices_i32(%l: tensor<?x?x4xf32>) {
  // expected-error @+1 {{indices must be i64}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>}
      : (tensor<?x?x4xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi32>)
  return
}

// -----

func.func @router_normalize_topk_softmax(%l: tensor<?x?x4xf32>) {
  // expected-error @+1 {{normalize has no meaning with topk_softmax}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<topk_softmax>, normalize}
      : (tensor<?x?x4xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_dynamic_experts(%l: tensor<?x?x?xf32>) {
  // expected-error @+1 {{logits dimension 2 must be static}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>}
      : (tensor<?x?x?xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_rank0(%l: tensor<f32>) {
  // expected-error @+1 {{logits must have rank at least 1}}
  %w, %i = tfm.moe_router %l {top_k = 1 : i64, routing = #tfm.moe_routing<softmax_topk>}
      : (tensor<f32>) -> (tensor<1xf32>, tensor<1xi64>)
  return
}

// -----

func.func @plan_offsets(%i: tensor<?x?x2xi64>) {
  // expected-error @+1 {{offsets must have shape [9]}}
  %o, %p, %s = tfm.moe_route_plan %i {num_experts = 8 : i64}
      : (tensor<?x?x2xi64>) -> (tensor<8xi64>, tensor<?x?x2xi64>, tensor<?xi64>)
  return
}

// -----

func.func @plan_experts(%i: tensor<?x?x2xi64>) {
  // expected-error @+1 {{num_experts must be positive, got 0}}
  %o, %p, %s = tfm.moe_route_plan %i {num_experts = 0 : i64}
      : (tensor<?x?x2xi64>) -> (tensor<1xi64>, tensor<?x?x2xi64>, tensor<?xi64>)
  return
}

// -----

func.func @plan_positions(%i: tensor<?x?x2xi64>) {
  // expected-error @+1 {{positions must have the indices type 'tensor<?x?x2xi64>'}}
  %o, %p, %s = tfm.moe_route_plan %i {num_experts = 8 : i64}
      : (tensor<?x?x2xi64>) -> (tensor<9xi64>, tensor<?x2xi64>, tensor<?xi64>)
  return
}

// -----

func.func @plan_sources(%i: tensor<3x2xi64>) {
  // expected-error @+1 {{sources must have shape [6]}}
  %o, %p, %s = tfm.moe_route_plan %i {num_experts = 8 : i64}
      : (tensor<3x2xi64>) -> (tensor<9xi64>, tensor<3x2xi64>, tensor<5xi64>)
  return
}

// -----

func.func @dispatch_rank(%x: tensor<?x64xf32>, %p: tensor<?x?x2xi64>, %s: tensor<?xi64>) {
  // expected-error @+1 {{input 'tensor<?x64xf32>' must have the rank of positions 'tensor<?x?x2xi64>'}}
  %r = tfm.moe_dispatch %x, %p, %s : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x64xf32>
  return
}

// -----

func.func @dispatch_result(%x: tensor<?x?x64xf32>, %p: tensor<?x?x2xi64>, %s: tensor<?xi64>) {
  // expected-error @+1 {{result must have shape [?, 64]}}
  %r = tfm.moe_dispatch %x, %p, %s : (tensor<?x?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x32xf32>
  return
}

// -----

func.func @dispatch_sources(%x: tensor<?x?x64xf32>, %p: tensor<?x?x2xi64>, %s: tensor<?xi32>) {
  // expected-error @+1 {{sources must be i64}}
  %r = tfm.moe_dispatch %x, %p, %s : (tensor<?x?x64xf32>, tensor<?x?x2xi64>, tensor<?xi32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @combine_rows(%r: tensor<?x?x64xf32>, %p: tensor<?x?x2xi64>, %s: tensor<?xi64>) {
  // expected-error @+1 {{rows must be [R, H]}}
  %y = tfm.moe_combine %r, %p, %s : (tensor<?x?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @combine_weights(%r: tensor<?x64xf32>, %p: tensor<?x?x2xi64>, %s: tensor<?xi64>, %w: tensor<?x?x3xf32>) {
  // expected-error @+1 {{weights must have shape [?, ?, 2]}}
  %y = tfm.moe_combine %r, %p, %s, %w : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x3xf32>) -> tensor<?x?x64xf32>
  return
}

// -----

func.func @combine_result(%r: tensor<?x64xf32>, %p: tensor<?x?x2xi64>, %s: tensor<?xi64>) {
  // expected-error @+1 {{result must have shape [?, ?, 64]}}
  %y = tfm.moe_combine %r, %p, %s : (tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x?x32xf32>
  return
}

// -----

func.func @grouped_contraction(%x: tensor<?x32xf32>, %w: tensor<8x16x64xf32>, %o: tensor<9xi64>) {
  // expected-error @+1 {{contraction size mismatch: input 'tensor<?x32xf32>' has 32 columns but weight 'tensor<8x16x64xf32>' (nt) has 64}}
  %y = tfm.moe_grouped_matmul %x, %w, %o {transpose = #tfm.transpose<nt>} : (tensor<?x32xf32>, tensor<8x16x64xf32>, tensor<9xi64>) -> tensor<?x16xf32>
  return
}

// -----

func.func @grouped_offsets(%x: tensor<?x64xf32>, %w: tensor<8x16x64xf32>, %o: tensor<8xi64>) {
  // expected-error @+1 {{offsets must have shape [9]}}
  %y = tfm.moe_grouped_matmul %x, %w, %o {transpose = #tfm.transpose<nt>} : (tensor<?x64xf32>, tensor<8x16x64xf32>, tensor<8xi64>) -> tensor<?x16xf32>
  return
}

// -----

func.func @grouped_weight_rank(%x: tensor<?x64xf32>, %w: tensor<16x64xf32>, %o: tensor<9xi64>) {
  // expected-error @+1 {{weight must be [experts, out, in] (nt) or [experts, in, out] (nn)}}
  %y = tfm.moe_grouped_matmul %x, %w, %o {transpose = #tfm.transpose<nt>} : (tensor<?x64xf32>, tensor<16x64xf32>, tensor<9xi64>) -> tensor<?x16xf32>
  return
}

// -----

func.func @grouped_result(%x: tensor<?x64xf32>, %w: tensor<8x16x64xf32>, %o: tensor<9xi64>) {
  // expected-error @+1 {{result must have shape [?, 16]}}
  %y = tfm.moe_grouped_matmul %x, %w, %o {transpose = #tfm.transpose<nt>} : (tensor<?x64xf32>, tensor<8x16x64xf32>, tensor<9xi64>) -> tensor<?x64xf32>
  return
}

// -----

func.func @grouped_dtype(%x: tensor<?x64xbf16>, %w: tensor<8x16x64xf32>, %o: tensor<9xi64>) {
  // expected-error @+1 {{weight must have element type 'bf16'}}
  %y = tfm.moe_grouped_matmul %x, %w, %o {transpose = #tfm.transpose<nt>} : (tensor<?x64xbf16>, tensor<8x16x64xf32>, tensor<9xi64>) -> tensor<?x16xbf16>
  return
}

// -----

func.func @router_backward_dlogits(%dw: tensor<?x?x2xf32>, %l: tensor<?x?x8xf32>, %i: tensor<?x?x2xi64>) {
  // expected-error @+1 {{dlogits must have the logits type 'tensor<?x?x8xf32>'}}
  %d = tfm.moe_router_backward %dw, %l, %i {routing = #tfm.moe_routing<softmax_topk>}
      : (tensor<?x?x2xf32>, tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<?x?x4xf32>
  return
}

// -----

func.func @combine_backward_drows(%dy: tensor<?x?x64xf32>, %r: tensor<?x64xf32>, %p: tensor<?x?x2xi64>, %s: tensor<?xi64>, %w: tensor<?x?x2xf32>) {
  // expected-error @+1 {{drows must have the rows type 'tensor<?x64xf32>'}}
  %a, %b = tfm.moe_combine_backward %dy, %r, %p, %s, %w
      : (tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x2xf32>) -> (tensor<?x32xf32>, tensor<?x?x2xf32>)
  return
}

// -----

func.func @grad_weight_dy(%dy: tensor<?x32xf32>, %x: tensor<?x16xf32>, %o: tensor<9xi64>) {
  // expected-error @+1 {{dy must have shape [?, 64]}}
  %d = tfm.moe_grouped_matmul_grad_weight %dy, %x, %o {transpose = #tfm.transpose<nt>}
      : (tensor<?x32xf32>, tensor<?x16xf32>, tensor<9xi64>) -> tensor<8x64x16xf32>
  return
}

// -----

func.func @load_stats_shape(%l: tensor<?x?x8xf32>, %i: tensor<?x?x2xi64>) {
  // expected-error @+1 {{stats must have shape [2, 8]}}
  %s = tfm.moe_load_stats %l, %i : (tensor<?x?x8xf32>, tensor<?x?x2xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @load_stats_indices(%l: tensor<?x?x8xf32>, %i: tensor<?x2xi64>) {
  // expected-error @+1 {{indices must have shape [?, ?, 2]}}
  %s = tfm.moe_load_stats %l, %i : (tensor<?x?x8xf32>, tensor<?x2xi64>) -> tensor<2x8xf32>
  return
}

// -----

func.func @aux_loss_stats(%s: tensor<4x3x8xf32>) {
  // expected-error @+1 {{stats must be a static [layers, 2, experts] tensor}}
  %l = tfm.moe_aux_loss %s {top_k = 2 : i64} : (tensor<4x3x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @aux_loss_topk(%s: tensor<4x2x8xf32>) {
  // expected-error @+1 {{top_k must be in [1, 8] (the number of experts), got 9}}
  %l = tfm.moe_aux_loss %s {top_k = 9 : i64} : (tensor<4x2x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @aux_loss_result(%s: tensor<4x2x8xf32>) {
  // expected-error @+1 {{loss must have shape []}}
  %l = tfm.moe_aux_loss %s {top_k = 2 : i64} : (tensor<4x2x8xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @aux_loss_backward(%d: tensor<f32>, %s: tensor<4x2x8xf32>) {
  // expected-error @+1 {{dstats must have the stats type 'tensor<4x2x8xf32>'}}
  %r = tfm.moe_aux_loss_backward %d, %s {top_k = 2 : i64} : (tensor<f32>, tensor<4x2x8xf32>) -> tensor<2x2x8xf32>
  return
}

// -----

func.func @load_stats_backward(%d: tensor<2x8xf32>, %l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{dlogits must have the logits type 'tensor<?x?x8xf32>'}}
  %r = tfm.moe_load_stats_backward %d, %l : (tensor<2x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x4xf32>
  return
}

// -----

func.func @router_bias_topk_softmax(%l: tensor<?x?x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{a selection bias needs softmax_topk or sigmoid_topk routing}}
  %w, %i = tfm.moe_router %l, %b {top_k = 2 : i64, routing = #tfm.moe_routing<topk_softmax>}
      : (tensor<?x?x4xf32>, tensor<4xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_bias_shape(%l: tensor<?x?x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{bias must be 'tensor<4xf32>' (one selection offset per expert, in the weights' type), got 'tensor<3xf32>'}}
  %w, %i = tfm.moe_router %l, %b {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>}
      : (tensor<?x?x4xf32>, tensor<3xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_groups_divide(%l: tensor<?x?x6xf32>) {
  // expected-error @+1 {{num_groups must divide the 6 experts and be in [1, 64], got 4}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, num_groups = 4 : i64, topk_groups = 2 : i64, group_score = #tfm.moe_group_score<top2_sum>}
      : (tensor<?x?x6xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_groups_need_attrs(%l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{num_groups > 1 needs topk_groups and group_score}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, num_groups = 4 : i64}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_topk_groups_range(%l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{topk_groups must be in [1, num_groups = 4], got 5}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, num_groups = 4 : i64, topk_groups = 5 : i64, group_score = #tfm.moe_group_score<top2_sum>}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_top2_group_size(%l: tensor<?x?x4xf32>) {
  // expected-error @+1 {{top2_sum group scores need at least 2 experts per group, got 1}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, num_groups = 4 : i64, topk_groups = 2 : i64, group_score = #tfm.moe_group_score<top2_sum>}
      : (tensor<?x?x4xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_topk_exceeds_kept(%l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{top_k = 5 exceeds the 4 experts of the topk_groups kept groups}}
  %w, %i = tfm.moe_router %l {top_k = 5 : i64, routing = #tfm.moe_routing<sigmoid_topk>, num_groups = 4 : i64, topk_groups = 2 : i64, group_score = #tfm.moe_group_score<top2_sum>}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x5xf32>, tensor<?x?x5xi64>)
  return
}

// -----

func.func @router_group_attrs_without_groups(%l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{topk_groups and group_score need num_groups > 1}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, topk_groups = 1 : i64}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_scale(%l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{scale must be finite and positive, got 0}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, scale = 0.0 : f64}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_eps_without_normalize(%l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{normalize_eps must be finite and >= 0, and only set with normalize, got 1.000000e-20}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<sigmoid_topk>, normalize_eps = 1.0e-20 : f64}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}

// -----

func.func @router_scale_topk_softmax(%l: tensor<?x?x8xf32>) {
  // expected-error @+1 {{scale applies to softmax_topk and sigmoid_topk weights, not topk_softmax}}
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<topk_softmax>, scale = 2.0 : f64}
      : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return
}
