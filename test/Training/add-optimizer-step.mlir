// tfm-add-optimizer-step over a weight map with every kind of argument: the
// token ids (not a parameter), a bf16 embedding (its master weight is f32),
// stacked norm weights, a fused q|k|v bias, a frozen parameter and a buffer
// (neither gets an update or state).

// RUN: tfm-opt %s --tfm-add-optimizer-step | FileCheck %s --check-prefix=ADAMW
// RUN: tfm-opt %s "--tfm-add-optimizer-step=decay=hf weight-decay=0.1 max-grad-norm=1.0" | FileCheck %s --check-prefix=HF
// RUN: tfm-opt %s "--tfm-add-optimizer-step=optimizer=sgd momentum=0.9 nesterov=true weight-decay=0" | FileCheck %s --check-prefix=SGD
// RUN: tfm-opt %s --tfm-add-optimizer-step=model-copies=true | FileCheck %s --check-prefix=COPIES
// The new function round-trips, and @forward is left as it was.
// RUN: tfm-opt %s --tfm-add-optimizer-step | tfm-opt | FileCheck %s --check-prefix=KEEP

func.func @forward(
    %ids: tensor<?x?xi64>,
    %embed: tensor<16x8xbf16> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", kind = "embedding">},
    %norm: tensor<2x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.input_layernorm.weight", kind = "norm", stacked = true>},
    %bias: tensor<2x12xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.qkv.bias", kind = "attn_qkv", mapping = fuse, sources = ["model.layers.{layer}.self_attn.q_proj.bias", "model.layers.{layer}.self_attn.k_proj.bias", "model.layers.{layer}.self_attn.v_proj.bias"], stacked = true>},
    %frozen: tensor<8x8xf32> {tfm.param = #tfm.param<name = "lm_head.weight", kind = "lm_head", frozen = true>},
    %buffer: tensor<4xf32> {tfm.param = #tfm.param<name = "model.layers.0.mlp.gate.e_score_correction_bias", kind = "router", buffer = true>}) -> tensor<f32> {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// ADAMW-LABEL: func.func @forward(
// ADAMW-LABEL: func.func @forward_optimizer_step(
// Parameters and state are updated in place (bufferization.writable); the
// gradients are only read.
// ADAMW-SAME: %[[P0:[^:]*]]: tensor<16x8xf32> {bufferization.writable = true, tfm.param = #tfm.param<name = "model.embed_tokens.weight", kind = "embedding">}
// ADAMW-SAME: %[[P1:[^:]*]]: tensor<2x8xf32> {bufferization.writable = true, tfm.param = #tfm.param<name = "model.layers.{layer}.input_layernorm.weight"
// ADAMW-SAME: %[[P2:[^:]*]]: tensor<2x12xf32> {bufferization.writable = true, tfm.param
// ADAMW-SAME: %[[G0:[^:]*]]: tensor<16x8xf32>, %[[G1:[^:]*]]: tensor<2x8xf32>, %[[G2:[^:]*]]: tensor<2x12xf32>,
// ADAMW-SAME: %[[M0:[^:]*]]: tensor<16x8xf32> {bufferization.writable = true}, %[[M1:[^:]*]]: tensor<2x8xf32> {bufferization.writable = true}, %[[M2:[^:]*]]: tensor<2x12xf32> {bufferization.writable = true},
// ADAMW-SAME: %[[V0:[^:]*]]: tensor<16x8xf32> {bufferization.writable = true}, %[[V1:[^:]*]]: tensor<2x8xf32> {bufferization.writable = true}, %[[V2:[^:]*]]: tensor<2x12xf32> {bufferization.writable = true},
// ADAMW-SAME: %[[LR:[^:]*]]: tensor<f64>, %[[STEP:[^:]*]]: tensor<i64>)
// ADAMW-SAME: -> (tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x12xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x12xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x12xf32>, tensor<f32>)
// ADAMW-SAME: attributes {tfm.optimizer_state = ["exp_avg", "exp_avg_sq"], tfm.trained_arguments = array<i64: 1, 2, 3>}
// ADAMW: %[[NORM:.*]], %[[SCALE:.*]] = tfm.global_grad_norm %[[G0]], %[[G1]], %[[G2]] {max_norm = 0.000000e+00 : f64}
// ADAMW: %[[NP0:[^,]*]], %[[NM0:[^,]*]], %[[NV0:[^ ]*]] = tfm.adamw_update %[[P0]], %[[G0]], %[[M0]], %[[V0]], %[[LR]], %[[STEP]], %[[SCALE]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// ADAMW: %[[NP1:[^,]*]], %[[NM1:[^,]*]], %[[NV1:[^ ]*]] = tfm.adamw_update %[[P1]], %[[G1]], %[[M1]], %[[V1]], %[[LR]], %[[STEP]], %[[SCALE]] {{.*}}weight_decay = 1.000000e-02 : f64}
// ADAMW: %[[NP2:[^,]*]], %[[NM2:[^,]*]], %[[NV2:[^ ]*]] = tfm.adamw_update %[[P2]], %[[G2]], %[[M2]], %[[V2]], %[[LR]], %[[STEP]], %[[SCALE]] {{.*}}weight_decay = 1.000000e-02 : f64}
// ADAMW-NOT: tfm.adamw_update
// ADAMW: return %[[NP0]], %[[NP1]], %[[NP2]], %[[NM0]], %[[NM1]], %[[NM2]], %[[NV0]], %[[NV1]], %[[NV2]], %[[NORM]] :

// HF's Trainer exempts norm weights and biases; the embedding decays.
// HF: tfm.global_grad_norm {{.*}}{max_norm = 1.000000e+00 : f64}
// HF: tfm.adamw_update {{.*}}weight_decay = 1.000000e-01 : f64}
// HF: tfm.adamw_update {{.*}}weight_decay = 0.000000e+00 : f64}
// HF: tfm.adamw_update {{.*}}weight_decay = 0.000000e+00 : f64}

// SGD-LABEL: func.func @forward_optimizer_step(
// SGD-SAME: %[[P0:[^:]*]]: tensor<16x8xf32>
// SGD-SAME: %[[B0:[^:]*]]: tensor<16x8xf32> {bufferization.writable = true}, %[[B1:[^:]*]]: tensor<2x8xf32> {bufferization.writable = true}, %[[B2:[^:]*]]: tensor<2x12xf32> {bufferization.writable = true}, %[[LR:[^:]*]]: tensor<f64>, %[[STEP:[^:]*]]: tensor<i64>)
// SGD-SAME: -> (tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x12xf32>, tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x12xf32>, tensor<f32>)
// SGD-SAME: tfm.optimizer_state = ["momentum_buffer"]
// SGD: %[[NORM:.*]], %[[SCALE:.*]] = tfm.global_grad_norm
// SGD: tfm.sgd_update %[[P0]], %{{.*}}, %[[B0]], %[[LR]], %[[STEP]], %[[SCALE]] {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov, weight_decay = 0.000000e+00 : f64}
// SGD-COUNT-2: tfm.sgd_update
// SGD-NOT: tfm.sgd_update

// KEEP: func.func @forward(%arg0: tensor<?x?xi64>, %arg1: tensor<16x8xbf16>
// KEEP: return %{{.*}} : tensor<f32>
// KEEP: func.func @forward_optimizer_step(

// Only the bf16 embedding needs a model copy: its new master rounded to bf16
// (round to nearest even), returned after the norm.
// COPIES-LABEL: func.func @forward_optimizer_step(
// COPIES-SAME: -> (tensor<16x8xf32>, tensor<2x8xf32>, tensor<2x12xf32>, {{.*}}, tensor<f32>, tensor<16x8xbf16>)
// COPIES-SAME: tfm.model_copies = array<i64: 0>
// COPIES: %[[NORM:[^,]*]], %{{.*}} = tfm.global_grad_norm
// COPIES: %[[NP0:[^,]*]], %{{.*}} = tfm.adamw_update %arg0,
// COPIES: %[[EMPTY:.*]] = tensor.empty() : tensor<16x8xbf16>
// COPIES: %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[NP0]] : tensor<16x8xf32>) outs(%[[EMPTY]] : tensor<16x8xbf16>)
// COPIES: arith.truncf %{{.*}} : f32 to bf16
// COPIES: return {{.*}}, %[[NORM]], %[[COPY]] :
