// tfm-apply-lora: y = x·Wᵀ becomes y + s·(x·Aᵀ)·Bᵀ on the targeted
// projections (PEFT's lora.Linear), with A and B new stacked parameters
// under PEFT's names; everything else is frozen and left as it was.
// RUN: tfm-opt %s --tfm-apply-lora="r=4 alpha=6 target-modules=q_proj" 2>&1 | FileCheck %s
// RUN: tfm-opt %s --tfm-apply-lora="r=4 alpha=8 use-rslora target-modules=all-linear" 2>&1 | FileCheck %s --check-prefix=ALL

// CHECK: remark: LoRA r=4 on 2 of 5 projections (attn_q 2/2), 128 adapter parameters
// CHECK-LABEL: func.func @forward(%arg0
// Every base parameter is frozen.
// CHECK-SAME: {tfm.param = #tfm.param<name = "model.embed_tokens.weight", frozen = true>}
// CHECK-SAME: {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.q_proj.weight", kind = "attn_q", stacked = true, frozen = true>}
// CHECK-SAME: {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.v_proj.weight", kind = "attn_v", stacked = true, frozen = true>}
// CHECK-SAME: {tfm.param = #tfm.param<name = "lm_head.weight", kind = "lm_head", frozen = true>}
// The adapters: A [L, r, in], B [L, out, r], PEFT's names, trainable.
// CHECK-SAME: %[[A:arg[0-9]+]]: tensor<2x4x8xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.self_attn.q_proj.lora_A.weight", kind = "lora_A", stacked = true>}
// CHECK-SAME: %[[B:arg[0-9]+]]: tensor<2x8x4xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.self_attn.q_proj.lora_B.weight", kind = "lora_B", stacked = true>}
// They are layer slices beside the weight they adapt.
// CHECK: tfm.repeat(%{{.*}} : tensor<?x?x8xf32>) layers(%{{.*}}, %{{.*}}, %[[A]], %[[B]] : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<?x?x8xf32>, %[[WQ:.*]]: tensor<8x8xf32>, %[[WV:.*]]: tensor<8x8xf32>, %[[AL:.*]]: tensor<4x8xf32>, %[[BL:.*]]: tensor<8x4xf32>):
// CHECK-NEXT: %[[Q:.*]] = tfm.matmul %[[X]], %[[WQ]] {transpose = #tfm.transpose<nt>}
// x·Aᵀ, the scale alpha/r = 1.5 on that r-wide product (the same as
// PEFT's scale of the result, for r/out of the traffic), ·Bᵀ, the sum.
// CHECK-NEXT: %[[XA:.*]] = tfm.matmul %[[X]], %[[AL]] {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
// CHECK-NEXT: %[[S:.*]] = tfm.scale %[[XA]] {factor = 1.500000e+00 : f64} : tensor<?x?x4xf32>
// CHECK-NEXT: %[[D:.*]] = tfm.matmul %[[S]], %[[BL]] {transpose = #tfm.transpose<nt>} : (tensor<?x?x4xf32>, tensor<8x4xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: %[[QL:.*]] = tfm.add %[[Q]], %[[D]]
// v_proj is not a target: left as it was.
// CHECK-NEXT: %[[V:.*]] = tfm.matmul %[[X]], %[[WV]] {transpose = #tfm.transpose<nt>}
// CHECK-NEXT: %[[QV:.*]] = tfm.add %[[QL]], %[[V]]
// The head is not adapted.
// CHECK: tfm.matmul %{{.*}}, %arg5 {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>)
// CHECK-NOT: tfm.scale

// all-linear: q and v, not the head; rsLoRA's alpha/sqrt(r) = 4.
// ALL: remark: LoRA r=4 on 4 of 5 projections (attn_q 2/2, attn_v 2/2), 256 adapter parameters
// ALL: tfm.scale %{{.*}} {factor = 4.000000e+00 : f64}
// ALL: tfm.scale %{{.*}} {factor = 4.000000e+00 : f64}
// ALL-NOT: tfm.scale
func.func @forward(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight">},
    %wq: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.q_proj.weight", kind = "attn_q", stacked = true>},
    %wv: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.v_proj.weight", kind = "attn_v", stacked = true>},
    %head: tensor<16x8xf32> {tfm.param = #tfm.param<name = "lm_head.weight", kind = "lm_head">})
    -> (tensor<?x?x16xf32>, tensor<f32>) {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%wq, %wv : tensor<2x8x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %q: tensor<8x8xf32>, %v: tensor<8x8xf32>):
    %yq = tfm.matmul %x, %q {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %yv = tfm.matmul %x, %v {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %s = tfm.add %yq, %yv : tensor<?x?x8xf32>
    tfm.yield %s : tensor<?x?x8xf32>
  }
  %logits = tfm.matmul %r, %head {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %logits, %loss : tensor<?x?x16xf32>, tensor<f32>
}
