// tfm-apply-lora on stacked experts (PEFT's target_parameters): each
// targeted expert weight gets y_e + s·(x_e·A_eᵀ)·B_eᵀ as two more grouped
// GEMMs on the same routing; A [E, r, in] and B [E, out, r] are bound from
// PEFT's expert-major and rank-major tensors, and gate_up_proj (wrapped
// first) is named under down_proj's wrapper as .base_layer. On qwen3_moe
// the v4 names gate_proj + up_proj + down_proj become those targets, with
// gate_up_proj at twice r and alpha (PEFT 0.21.2 on transformers 5); the
// router stays frozen and unadapted unless named.
// RUN: tfm-import-hf %S/Inputs/tiny-qwen3-moe.json | tfm-opt --tfm-apply-lora="r=2 alpha=3 target-modules=q_proj,gate_proj,up_proj,down_proj" 2>%t.remark | FileCheck %s
// RUN: FileCheck %s --input-file=%t.remark --check-prefix=REMARK
// The same targets by target_parameters (no doubling), the router's
// weight by name.
// RUN: tfm-import-hf %S/Inputs/tiny-qwen3-moe.json | tfm-opt --tfm-apply-lora="r=2 alpha=3 target-parameters=gate_up_proj,mlp.experts.down_proj,mlp.gate.weight" 2>%t.remark2 | FileCheck %s --check-prefix=PARAMS
// RUN: FileCheck %s --input-file=%t.remark2 --check-prefix=PARAMS-REMARK
// gpt-oss's experts are [E, in, out] (x·W): the adapters keep PEFT's
// [E, r, in] and [E, out, r], and all-linear leaves its router.
// RUN: tfm-import-hf %S/Inputs/tiny-gpt-oss.json | tfm-opt --tfm-apply-lora="r=2 alpha=3 target-modules=all-linear target-parameters=mlp.experts.down_proj" 2>%t.remark3 | FileCheck %s --check-prefix=OSS
// RUN: FileCheck %s --input-file=%t.remark3 --check-prefix=OSS-REMARK

// Per layer: q_proj 2·(32+48), gate_up 4·8·(32+32), down 2·8·(16+32):
// 2,976, times 2 layers.
// REMARK: remark: LoRA r=2,4 on 6 of 15 projections (attn_q 2/2, moe_down 2/2, moe_gate_up 2/2), 5952 adapter parameters
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.gate.weight", kind = "moe_router", stacked = true, frozen = true>}
// CHECK-SAME: %[[GU:arg[0-9]+]]: tensor<2x8x32x32xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.experts.gate_up_proj", kind = "moe_gate_up", mapping = stacked_experts
// CHECK-SAME: frozen = true>}
// CHECK-SAME: tensor<2x8x4x32xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.base_layer.lora_A.weight", kind = "lora_A", mapping = expert_major, stacked = true>}
// CHECK-SAME: tensor<2x8x32x4xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.base_layer.lora_B.weight", kind = "lora_B", mapping = rank_major, stacked = true>}
// CHECK-SAME: tensor<2x8x2x16xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.lora_A.weight", kind = "lora_A", mapping = expert_major, stacked = true>}
// CHECK-SAME: tensor<2x8x32x2xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.lora_B.weight", kind = "lora_B", mapping = rank_major, stacked = true>}
// The router's GEMM is left as it was.
// CHECK: %[[LOGITS:.*]] = tfm.matmul %{{.*}}, %{{.*}} {transpose = #tfm.transpose<nt>} : (tensor<?x?x32xf32>, tensor<8x32xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: tfm.moe_router %[[LOGITS]]
// gate_up: the base GEMM, then x·Aᵀ per expert, scaled by 4·1.5/4, ·Bᵀ.
// CHECK: %[[X:.*]] = tfm.moe_dispatch
// CHECK-NEXT: %[[Y:.*]] = tfm.moe_grouped_matmul %[[X]], %{{.*}}, %[[OFF:.*]] {transpose = #tfm.transpose<nt>} : (tensor<?x32xf32>, tensor<8x32x32xf32>, tensor<9xi64>) -> tensor<?x32xf32>
// CHECK-NEXT: %[[XA:.*]] = tfm.moe_grouped_matmul %[[X]], %{{.*}}, %[[OFF]] {transpose = #tfm.transpose<nt>} : (tensor<?x32xf32>, tensor<8x4x32xf32>, tensor<9xi64>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[S:.*]] = tfm.scale %[[XA]] {factor = 1.500000e+00 : f64}
// CHECK-NEXT: %[[D:.*]] = tfm.moe_grouped_matmul %[[S]], %{{.*}}, %[[OFF]] {transpose = #tfm.transpose<nt>} : (tensor<?x4xf32>, tensor<8x32x4xf32>, tensor<9xi64>) -> tensor<?x32xf32>
// CHECK-NEXT: %[[SUM:.*]] = tfm.add %[[Y]], %[[D]]
// CHECK-NEXT: tfm.split %[[SUM]]
// down_proj, r = 2.
// CHECK: tfm.moe_grouped_matmul %{{.*}}, %{{.*}}, %[[OFF]] {transpose = #tfm.transpose<nt>} : (tensor<?x16xf32>, tensor<8x2x16xf32>, tensor<9xi64>) -> tensor<?x2xf32>
// CHECK-NEXT: tfm.scale
// CHECK-NEXT: tfm.moe_grouped_matmul %{{.*}}, %{{.*}}, %[[OFF]] {transpose = #tfm.transpose<nt>} : (tensor<?x2xf32>, tensor<8x32x2xf32>, tensor<9xi64>) -> tensor<?x32xf32>
// CHECK-NEXT: tfm.add
// CHECK-NEXT: tfm.moe_combine

// Per layer: router 2·(32+8), gate_up 2·8·(32+32), down 2·8·(16+32).
// PARAMS-REMARK: remark: LoRA r=2 on 6 of 15 projections (moe_down 2/2, moe_gate_up 2/2, moe_router 2/2), 3744 adapter parameters
// PARAMS-LABEL: func.func @forward(
// PARAMS-SAME: tensor<2x2x32xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.gate.lora_A.weight", kind = "lora_A", stacked = true>}
// PARAMS-SAME: tensor<2x8x2x32xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.base_layer.lora_A.weight", kind = "lora_A", mapping = expert_major, stacked = true>}
// PARAMS-SAME: tensor<2x8x2x16xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.lora_A.weight", kind = "lora_A", mapping = expert_major, stacked = true>}

// Per layer: q, o 2·(32+32), k, v 2·(32+16), down 2·8·(16+32).
// OSS-REMARK: remark: LoRA r=2 on 10 of 15 projections (attn_k 2/2, attn_o 2/2, attn_q 2/2, attn_v 2/2, moe_down 2/2), 2432 adapter parameters
// OSS-LABEL: func.func @forward(
// OSS-SAME: tensor<2x8x16x32xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.experts.down_proj", kind = "moe_down", stacked = true, frozen = true>}
// OSS-SAME: tensor<2x8x2x16xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.lora_A.weight", kind = "lora_A", mapping = expert_major, stacked = true>}
// OSS-SAME: tensor<2x8x32x2xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.experts.lora_B.weight", kind = "lora_B", mapping = rank_major, stacked = true>}
// OSS: tfm.moe_grouped_matmul %[[X:.*]], %{{.*}}, %[[OFF:.*]], %{{.*}} {transpose = #tfm.transpose<nn>} : (tensor<?x16xf32>, tensor<8x16x32xf32>, tensor<9xi64>, tensor<8x32xf32>) -> tensor<?x32xf32>
// OSS-NEXT: tfm.moe_grouped_matmul %[[X]], %{{.*}}, %[[OFF]] {transpose = #tfm.transpose<nt>} : (tensor<?x16xf32>, tensor<8x2x16xf32>, tensor<9xi64>) -> tensor<?x2xf32>
