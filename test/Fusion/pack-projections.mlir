// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-pack-projections))" | FileCheck %s

// q, k, v of one input (with biases, Qwen2) -> one matmul over one fused
// weight and one fused bias, split back in the original order.
// CHECK-LABEL: func.func @qkv_biases
// CHECK-SAME: %arg2: tensor<2x16x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.{q,k,v}_proj.weight", kind = "attn_qkv", mapping = fuse, sources = ["model.layers.{layer}.self_attn.q_proj.weight", "model.layers.{layer}.self_attn.k_proj.weight", "model.layers.{layer}.self_attn.v_proj.weight"], stacked = true>}
// CHECK-SAME: %arg3: tensor<2x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.{q,k,v}_proj.bias", kind = "attn_qkv", mapping = fuse, sources = ["model.layers.{layer}.self_attn.q_proj.bias", "model.layers.{layer}.self_attn.k_proj.bias", "model.layers.{layer}.self_attn.v_proj.bias"], stacked = true>}
// CHECK: ^bb0(%[[X:.*]]: tensor<?x?x8xf32>, %[[O:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<16xf32>):
// CHECK-NEXT: %[[P:.*]] = tfm.matmul %[[X]], %[[W]], %[[B]] {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: %[[S:.*]]:3 = tfm.split %[[P]] {dim = 2 : i64} : (tensor<?x?x16xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>)
// CHECK-NEXT: tfm.concat %[[S]]#0, %[[S]]#1, %[[S]]#2
func.func @qkv_biases(%h0: tensor<?x?x8xf32>,
    %wq: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.q_proj.weight", kind = "attn_q", stacked = true>},
    %bq: tensor<2x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.q_proj.bias", kind = "attn_q", stacked = true>},
    %wk: tensor<2x4x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.k_proj.weight", kind = "attn_k", stacked = true>},
    %bk: tensor<2x4xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.k_proj.bias", kind = "attn_k", stacked = true>},
    %wv: tensor<2x4x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.v_proj.weight", kind = "attn_v", stacked = true>},
    %bv: tensor<2x4xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.v_proj.bias", kind = "attn_v", stacked = true>},
    %wo: tensor<2x8x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.o_proj.weight", kind = "attn_o", stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wq, %bq, %wk, %bk, %wv, %bv, %wo : tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x8x16xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %q: tensor<8x8xf32>, %qb: tensor<8xf32>, %k: tensor<4x8xf32>, %kb: tensor<4xf32>, %v: tensor<4x8xf32>, %vb: tensor<4xf32>, %o: tensor<8x16xf32>):
    %a = tfm.matmul %x, %q, %qb {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
    %b = tfm.matmul %x, %k, %kb {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %c = tfm.matmul %x, %v, %vb {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
    %cat = tfm.concat %a, %b, %c {dim = 2 : i64} : (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x16xf32>
    %y = tfm.matmul %cat, %o {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<8x16xf32>) -> tensor<?x?x8xf32>
    tfm.yield %y : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}

// -----

// Left alone: a weight read twice (tied within the layer), and weights
// covering different layers (a partial stack).
// CHECK-LABEL: func.func @read_twice
// CHECK-NOT: tfm.split
// CHECK-LABEL: func.func @different_layers
// CHECK-NOT: tfm.split
func.func @read_twice(%h0: tensor<?x?x8xf32>,
    %wq: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.q.weight", kind = "attn_q", stacked = true>},
    %wk: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.k.weight", kind = "attn_k", stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wq, %wk : tensor<2x8x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %q: tensor<8x8xf32>, %k: tensor<8x8xf32>):
    %a = tfm.matmul %x, %q {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %b = tfm.matmul %x, %k {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %c = tfm.matmul %a, %q {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %s = tfm.add %b, %c : tensor<?x?x8xf32>
    tfm.yield %s : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}
func.func @different_layers(%h0: tensor<?x?x8xf32>,
    %wq: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.q.weight", kind = "attn_q", stacked = true>},
    %wk: tensor<1x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.k.weight", kind = "attn_k", stacked = true, layers = [1]>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wq, %wk : tensor<2x8x8xf32>, tensor<1x8x8xf32>) {num_layers = 2 : i64, schedule = array<i64: 0, 1>, weight_kinds = [array<i64: 0, 1>, array<i64: 1>]} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %q: tensor<8x8xf32>):
    %a = tfm.matmul %x, %q {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    tfm.yield %a : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %q: tensor<8x8xf32>, %k: tensor<8x8xf32>):
    %a = tfm.matmul %x, %q {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %b = tfm.matmul %x, %k {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %s = tfm.add %a, %b : tensor<?x?x8xf32>
    tfm.yield %s : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}

// -----

// LoRA: the frozen q and v pack together (the packed weight frozen too),
// and their trained adapters' A apart, each in one GEMM.
// CHECK-LABEL: func.func @frozen_apart
// CHECK-SAME: tensor<2x12x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.{q,v}_proj.weight", kind = "attn_q+attn_v", mapping = fuse, sources = ["model.layers.{layer}.self_attn.q_proj.weight", "model.layers.{layer}.self_attn.v_proj.weight"], stacked = true, frozen = true>}
// CHECK-SAME: tensor<2x4x8xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.self_attn.{q,v}_proj.lora_A.weight", kind = "lora_A+lora_A", mapping = fuse, sources = ["base_model.model.model.layers.{layer}.self_attn.q_proj.lora_A.weight", "base_model.model.model.layers.{layer}.self_attn.v_proj.lora_A.weight"], stacked = true>}
// CHECK-COUNT-2: tfm.split
func.func @frozen_apart(%h0: tensor<?x?x8xf32>,
    %wq: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.q_proj.weight", kind = "attn_q", stacked = true, frozen = true>},
    %aq: tensor<2x2x8xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.self_attn.q_proj.lora_A.weight", kind = "lora_A", stacked = true>},
    %wv: tensor<2x4x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.v_proj.weight", kind = "attn_v", stacked = true, frozen = true>},
    %av: tensor<2x2x8xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.self_attn.v_proj.lora_A.weight", kind = "lora_A", stacked = true>},
    %wo: tensor<2x8x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.o_proj.weight", kind = "attn_o", stacked = true, frozen = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wq, %aq, %wv, %av, %wo : tensor<2x8x8xf32>, tensor<2x2x8xf32>, tensor<2x4x8xf32>, tensor<2x2x8xf32>, tensor<2x8x16xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %q: tensor<8x8xf32>, %qa: tensor<2x8xf32>, %v: tensor<4x8xf32>, %va: tensor<2x8xf32>, %o: tensor<8x16xf32>):
    %a = tfm.matmul %x, %q {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %b = tfm.matmul %x, %qa {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<2x8xf32>) -> tensor<?x?x2xf32>
    %c = tfm.matmul %x, %v {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
    %d = tfm.matmul %x, %va {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<2x8xf32>) -> tensor<?x?x2xf32>
    %cat = tfm.concat %a, %b, %c, %d {dim = 2 : i64} : (tensor<?x?x8xf32>, tensor<?x?x2xf32>, tensor<?x?x4xf32>, tensor<?x?x2xf32>) -> tensor<?x?x16xf32>
    %y = tfm.matmul %cat, %o {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<8x16xf32>) -> tensor<?x?x8xf32>
    tfm.yield %y : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}
