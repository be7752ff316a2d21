// A chunked scan's per-chunk states [B, NC, ...] are NC = ceil(T / chunk)
// long, not T, in the cost report and the memory report: directly, stacked
// by the forward scan of tfm-autodiff, and read back by the backward op in
// the reverse scan. B = 1, T = 10, chunk 4: NC = 3.
// RUN: tfm-opt %s --tfm-cost-report="func=scan batch=1 seq=10" -o /dev/null | FileCheck %s --check-prefix=DIRECT
// RUN: tfm-opt %s --tfm-cost-report="func=rule batch=1 seq=10" -o /dev/null | FileCheck %s --check-prefix=RULE
// RUN: tfm-opt %s --tfm-autodiff="func=forward seed-all-results" --tfm-cost-report="func=forward_vjp batch=1 seq=10" -o /dev/null | FileCheck %s --check-prefix=VJP
// RUN: tfm-opt %s --tfm-autodiff="func=forward seed-all-results" --tfm-memory-report="batch=1 seq=10" -o /dev/null | FileCheck %s --check-prefix=MEM

// Reads x [1,10,2,2] 160 B, dt [1,10,2] 80, a_log, d, dt_bias 8 each, b and
// c [1,10,1,3] 120 each: 504 B. Writes y [1,10,2,2] f32 160 B and states
// [1,3,2,2,3] f32 144 B (not 480 B, which [1,10,2,2,3] would be).
// DIRECT: tfm.mamba_ssd_scan 1 {{[0-9.e+]+}} 5.040000e+02 3.040000e+02

// The gated delta rule reads q, k [1,10,1,2] 80 B each, v [1,10,2,3] 240,
// a, b [1,10,2] 80 each, a_log and dt_bias 8 each: 576 B; writes y 240 B
// and states [1,3,2,2,3] f32 144 B.
// RULE: tfm.gated_delta_rule 1 {{[0-9.e+]+}} 5.760000e+02 3.840000e+02

// Two layers. Backward per layer reads dy 160 + the 504 of the forward's
// operands + states 144 = 808 B, writes a gradient per operand: 504 B.
// VJP-DAG: tfm.mamba_ssd_scan 2 {{[0-9.e+]+}} 1.008000e+03 6.080000e+02
// VJP-DAG: tfm.mamba_ssd_scan_backward 2 {{[0-9.e+]+}} 1.616000e+03 1.008000e+03

// Saved per layer and token: x 16 B, dt 8, b 12, c 12, and states 144 B over
// 10 tokens, 14.4: 62 B (96 if the states were [1,10,2,2,3]).
// MEM: layer 2 62 62

func.func @scan(%x: tensor<?x?x2x2xf32>, %dt: tensor<?x?x2xf32>, %a: tensor<2xf32>, %b: tensor<?x?x1x3xf32>, %c: tensor<?x?x1x3xf32>, %d: tensor<2xf32>, %db: tensor<2xf32>) -> tensor<?x?x2x2xf32> {
  %y, %s = tfm.mamba_ssd_scan %x, %dt, %a, %b, %c, %d, %db {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}
      : (tensor<?x?x2x2xf32>, tensor<?x?x2xf32>, tensor<2xf32>, tensor<?x?x1x3xf32>, tensor<?x?x1x3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<?x?x2x2xf32>, tensor<?x?x2x2x3xf32>)
  return %y : tensor<?x?x2x2xf32>
}

func.func @rule(%q: tensor<?x?x1x2xf32>, %k: tensor<?x?x1x2xf32>, %v: tensor<?x?x2x3xf32>, %a: tensor<?x?x2xf32>, %b: tensor<?x?x2xf32>, %al: tensor<2xf32>, %dtb: tensor<2xf32>) -> tensor<?x?x2x3xf32> {
  %y, %s = tfm.gated_delta_rule %q, %k, %v, %a, %b, %al, %dtb {chunk_size = 4 : i64}
      : (tensor<?x?x1x2xf32>, tensor<?x?x1x2xf32>, tensor<?x?x2x3xf32>, tensor<?x?x2xf32>, tensor<?x?x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<?x?x2x3xf32>, tensor<?x?x2x2x3xf32>)
  return %y : tensor<?x?x2x3xf32>
}

func.func @forward(%x: tensor<?x?x2x2xf32>, %dt: tensor<?x?x2xf32>, %b: tensor<?x?x1x3xf32>, %c: tensor<?x?x1x3xf32>,
    %a: tensor<2x2xf32> {tfm.param = #tfm.param<name = "l.{layer}.a", stacked = true>},
    %d: tensor<2x2xf32> {tfm.param = #tfm.param<name = "l.{layer}.d", stacked = true>},
    %db: tensor<2x2xf32> {tfm.param = #tfm.param<name = "l.{layer}.db", stacked = true>}) -> tensor<?x?x2x2xf32> {
  %r:4 = tfm.repeat (%x, %dt, %b, %c : tensor<?x?x2x2xf32>, tensor<?x?x2xf32>, tensor<?x?x1x3xf32>, tensor<?x?x1x3xf32>)
      layers(%a, %d, %db : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {num_layers = 2 : i64}
      -> tensor<?x?x2x2xf32>, tensor<?x?x2xf32>, tensor<?x?x1x3xf32>, tensor<?x?x1x3xf32> {
  ^bb0(%xl: tensor<?x?x2x2xf32>, %dtl: tensor<?x?x2xf32>, %bl: tensor<?x?x1x3xf32>, %cl: tensor<?x?x1x3xf32>, %al: tensor<2xf32>, %dl: tensor<2xf32>, %dbl: tensor<2xf32>):
    %y, %s = tfm.mamba_ssd_scan %xl, %dtl, %al, %bl, %cl, %dl, %dbl {chunk_size = 4 : i64, dt_min = 0.0 : f64, dt_max = 0x7FF0000000000000 : f64}
        : (tensor<?x?x2x2xf32>, tensor<?x?x2xf32>, tensor<2xf32>, tensor<?x?x1x3xf32>, tensor<?x?x1x3xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<?x?x2x2xf32>, tensor<?x?x2x2x3xf32>)
    tfm.yield %y, %dtl, %bl, %cl : tensor<?x?x2x2xf32>, tensor<?x?x2xf32>, tensor<?x?x1x3xf32>, tensor<?x?x1x3xf32>
  }
  return %r#0 : tensor<?x?x2x2xf32>
}
