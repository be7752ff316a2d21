// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-fuse-glu))" | FileCheck %s

// gate and up become one parameter (up first, mapping = fuse) read by one
// matmul and tfm.swiglu; the old arguments are gone.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%arg0: tensor<?x?x8xf32>, %arg1: tensor<2x8x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.down_proj.weight", kind = "mlp_down", stacked = true>},
// CHECK-SAME: %arg2: tensor<2x32x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.{up,gate}_proj.weight", kind = "mlp_gate_up", mapping = fuse, sources = ["model.layers.{layer}.mlp.up_proj.weight", "model.layers.{layer}.mlp.gate_proj.weight"], stacked = true>})
// CHECK: layers(%arg1, %arg2 : tensor<2x8x16xf32>, tensor<2x32x8xf32>)
// CHECK: ^bb0(%[[X:.*]]: tensor<?x?x8xf32>, %[[D:.*]]: tensor<8x16xf32>, %[[GU:.*]]: tensor<32x8xf32>):
// CHECK-NEXT: %[[P:.*]] = tfm.matmul %[[X]], %[[GU]] {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<32x8xf32>) -> tensor<?x?x32xf32>
// CHECK-NEXT: %[[S:.*]] = tfm.swiglu %[[P]] : (tensor<?x?x32xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: tfm.matmul %[[S]], %[[D]]
func.func @swiglu(%h0: tensor<?x?x8xf32>,
    %wg: tensor<2x16x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.gate_proj.weight", kind = "mlp_gate", stacked = true>},
    %wu: tensor<2x16x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.up_proj.weight", kind = "mlp_up", stacked = true>},
    %wd: tensor<2x8x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.down_proj.weight", kind = "mlp_down", stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wg, %wu, %wd : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x8x16xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %g: tensor<16x8xf32>, %u: tensor<16x8xf32>, %d: tensor<8x16xf32>):
    %a = tfm.matmul %x, %g {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %b = tfm.matmul %x, %u {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %s = tfm.silu %a : tensor<?x?x16xf32>
    %m = tfm.mul %s, %b : tensor<?x?x16xf32>
    %o = tfm.matmul %m, %d {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<8x16xf32>) -> tensor<?x?x8xf32>
    tfm.yield %o : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}

// -----

// Gemma's gelu_tanh -> geglu; two layer kinds read the same weights, and
// both are rewritten.
// CHECK-LABEL: func.func @geglu_two_kinds
// CHECK-COUNT-2: tfm.geglu
// CHECK-NOT: tfm.gelu_tanh
func.func @geglu_two_kinds(%h0: tensor<?x?x8xf32>,
    %wg: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.gate_proj.weight", kind = "mlp_gate", stacked = true>},
    %wu: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.up_proj.weight", kind = "mlp_up", stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wg, %wu : tensor<2x8x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64, schedule = array<i64: 0, 1>} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %g: tensor<8x8xf32>, %u: tensor<8x8xf32>):
    %a = tfm.matmul %x, %g {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %b = tfm.matmul %x, %u {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %s = tfm.gelu_tanh %a : tensor<?x?x8xf32>
    %m = tfm.mul %s, %b : tensor<?x?x8xf32>
    tfm.yield %m : tensor<?x?x8xf32>
  }, {
  ^bb0(%x: tensor<?x?x8xf32>, %g: tensor<8x8xf32>, %u: tensor<8x8xf32>):
    %a = tfm.matmul %x, %g {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %b = tfm.matmul %x, %u {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %s = tfm.gelu_tanh %a : tensor<?x?x8xf32>
    %m = tfm.mul %b, %s : tensor<?x?x8xf32>
    tfm.yield %m : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}

// -----

// Left alone: a muP scale between gate and activation; and up with an
// older checkpoint name (sources), which a fused parameter cannot carry.
// CHECK-LABEL: func.func @mup_scaled
// CHECK-NOT: tfm.swiglu
// CHECK-LABEL: func.func @older_names
// CHECK-NOT: tfm.swiglu
func.func @mup_scaled(%h0: tensor<?x?x8xf32>,
    %wg: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.gate_proj.weight", kind = "mlp_gate", stacked = true>},
    %wu: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.up_proj.weight", kind = "mlp_up", stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wg, %wu : tensor<2x8x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %g: tensor<8x8xf32>, %u: tensor<8x8xf32>):
    %a = tfm.matmul %x, %g {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %a2 = tfm.scale %a {factor = 2.0 : f64} : tensor<?x?x8xf32>
    %b = tfm.matmul %x, %u {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %s = tfm.silu %a2 : tensor<?x?x8xf32>
    %m = tfm.mul %s, %b : tensor<?x?x8xf32>
    tfm.yield %m : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}
func.func @older_names(%h0: tensor<?x?x8xf32>,
    %wg: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.gate_proj.weight", kind = "mlp_gate", stacked = true>},
    %wu: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.up_proj.weight", kind = "mlp_up", sources = ["layers.{layer}.mlp.up_proj.weight"], stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wg, %wu : tensor<2x8x8xf32>, tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %g: tensor<8x8xf32>, %u: tensor<8x8xf32>):
    %a = tfm.matmul %x, %g {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %b = tfm.matmul %x, %u {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    %s = tfm.silu %a : tensor<?x?x8xf32>
    %m = tfm.mul %s, %b : tensor<?x?x8xf32>
    tfm.yield %m : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}

// -----

// Already packed [gate | up] (transformers-5 MoE experts, Phi-3): the GLU
// of the split's input with gate_first; [up | gate] halves without it.
// CHECK-LABEL: func.func @packed_gate_first
// CHECK-NEXT: %[[G:.*]] = tfm.swiglu %arg0 {gate_first} : (tensor<?x32xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: return %[[G]]
// CHECK-LABEL: func.func @packed_up_first
// CHECK-NEXT: %[[G:.*]] = tfm.geglu %arg0 : (tensor<?x?x32xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @packed_gate_first(%gu: tensor<?x32xf32>) -> tensor<?x16xf32> {
  %g, %u = tfm.split %gu {dim = 1 : i64} : (tensor<?x32xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
  %s = tfm.silu %g : tensor<?x16xf32>
  %m = tfm.mul %s, %u : tensor<?x16xf32>
  return %m : tensor<?x16xf32>
}
func.func @packed_up_first(%ug: tensor<?x?x32xf32>) -> tensor<?x?x16xf32> {
  %u, %g = tfm.split %ug {dim = 2 : i64} : (tensor<?x?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %s = tfm.gelu_tanh %g : tensor<?x?x16xf32>
  %m = tfm.mul %u, %s : tensor<?x?x16xf32>
  return %m : tensor<?x?x16xf32>
}

// -----

// Left alone: a split along a leading dimension, and a half read twice.
// CHECK-LABEL: func.func @split_leading
// CHECK-NOT: tfm.swiglu
// CHECK-LABEL: func.func @half_read_twice
// CHECK-NOT: tfm.swiglu
func.func @split_leading(%gu: tensor<4x?x16xf32>) -> tensor<2x?x16xf32> {
  %g, %u = tfm.split %gu {dim = 0 : i64} : (tensor<4x?x16xf32>) -> (tensor<2x?x16xf32>, tensor<2x?x16xf32>)
  %s = tfm.silu %g : tensor<2x?x16xf32>
  %m = tfm.mul %s, %u : tensor<2x?x16xf32>
  return %m : tensor<2x?x16xf32>
}
func.func @half_read_twice(%gu: tensor<?x32xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %g, %u = tfm.split %gu {dim = 1 : i64} : (tensor<?x32xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
  %s = tfm.silu %g : tensor<?x16xf32>
  %m = tfm.mul %s, %u : tensor<?x16xf32>
  return %m, %u : tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// LoRA on the gate only (tfm-apply-lora's `matmul + delta`, the base
// frozen): the frozen gate and up still pack, and the delta joins the
// packed projection before the GLU (zeros for the up half).
// CHECK-LABEL: func.func @lora_gate
// CHECK-SAME: tensor<2x32x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.{up,gate}_proj.weight", kind = "mlp_gate_up", mapping = fuse, sources = ["model.layers.{layer}.mlp.up_proj.weight", "model.layers.{layer}.mlp.gate_proj.weight"], stacked = true, frozen = true>}
// CHECK: %[[P:.*]] = tfm.matmul %{{.*}}, %{{.*}} {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<32x8xf32>) -> tensor<?x?x32xf32>
// CHECK: %[[DG:.*]] = tfm.matmul %{{.*}}, %{{.*}} {transpose = #tfm.transpose<nt>} : (tensor<?x?x2xf32>, tensor<16x2xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: %[[Z:.*]] = tfm.zeros_like %[[DG]] : tensor<?x?x16xf32>
// CHECK-NEXT: %[[J:.*]] = tfm.concat %[[Z]], %[[DG]] {dim = 2 : i64} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x32xf32>
// CHECK-NEXT: %[[A:.*]] = tfm.add %[[P]], %[[J]] : tensor<?x?x32xf32>
// CHECK-NEXT: tfm.swiglu %[[A]] : (tensor<?x?x32xf32>) -> tensor<?x?x16xf32>
func.func @lora_gate(%h0: tensor<?x?x8xf32>,
    %wg: tensor<2x16x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.gate_proj.weight", kind = "mlp_gate", stacked = true, frozen = true>},
    %wu: tensor<2x16x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.up_proj.weight", kind = "mlp_up", stacked = true, frozen = true>},
    %wd: tensor<2x8x16xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.mlp.down_proj.weight", kind = "mlp_down", stacked = true, frozen = true>},
    %ag: tensor<2x2x8xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.gate_proj.lora_A.weight", kind = "lora_A", stacked = true>},
    %bg: tensor<2x16x2xf32> {tfm.param = #tfm.param<name = "base_model.model.model.layers.{layer}.mlp.gate_proj.lora_B.weight", kind = "lora_B", stacked = true>}) -> tensor<?x?x8xf32> {
  %h = tfm.repeat(%h0 : tensor<?x?x8xf32>) layers(%wg, %wu, %wd, %ag, %bg : tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x8x16xf32>, tensor<2x2x8xf32>, tensor<2x16x2xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %g: tensor<16x8xf32>, %u: tensor<16x8xf32>, %d: tensor<8x16xf32>, %la: tensor<2x8xf32>, %lb: tensor<16x2xf32>):
    %a = tfm.matmul %x, %g {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %xa = tfm.matmul %x, %la {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<2x8xf32>) -> tensor<?x?x2xf32>
    %xs = tfm.scale %xa {factor = 1.5 : f64} : tensor<?x?x2xf32>
    %dg = tfm.matmul %xs, %lb {transpose = #tfm.transpose<nt>} : (tensor<?x?x2xf32>, tensor<16x2xf32>) -> tensor<?x?x16xf32>
    %ga = tfm.add %a, %dg : tensor<?x?x16xf32>
    %b = tfm.matmul %x, %u {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %s = tfm.silu %ga : tensor<?x?x16xf32>
    %m = tfm.mul %s, %b : tensor<?x?x16xf32>
    %o = tfm.matmul %m, %d {transpose = #tfm.transpose<nt>} : (tensor<?x?x16xf32>, tensor<8x16xf32>) -> tensor<?x?x8xf32>
    tfm.yield %o : tensor<?x?x8xf32>
  }
  return %h : tensor<?x?x8xf32>
}
