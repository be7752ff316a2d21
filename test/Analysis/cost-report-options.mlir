// The cost report's options are checked, and its count is closed-form in
// both: a 2^40-token sequence or 2^40 layers cost no more to report than 8
// (layers: Pipelines/huge-layer-count.mlir).
// RUN: not tfm-opt %s --tfm-cost-report="seq=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: tfm-cost-report: option 'seq' must lie in [1, 2^40], got -1
// NEG-NOT: see current operation
// RUN: not tfm-opt %s --tfm-cost-report="batch=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: tfm-cost-report: option 'batch' must lie in [1, 2^40], got 0
// RUN: not tfm-opt %s --tfm-cost-report="seq=4611686018427387904" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: tfm-cost-report: option 'seq' must lie in [1, 2^40], got 4611686018427387904
// RUN: not tfm-opt %s --tfm-cost-report="batch=1048576 seq=2097152" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRODUCT
// PRODUCT: error: tfm-cost-report: batch * seq = 1048576 * 2097152 exceeds 2^40 tokens
// RUN: timeout 20 tfm-opt %s --tfm-cost-report="seq=1099511627776" -o /dev/null | FileCheck %s --check-prefix=LONG
// LONG: tfm.attention 1

// Causal attention over T = 8 keys with a window of 3: queries see
// 1, 2, 3, 3, 3, 3, 3, 3 keys = 21 pairs; x 2 heads x (2*4 + 2*4 + 5) FLOP.
// RUN: tfm-opt %s --tfm-cost-report="seq=8" -o /dev/null | FileCheck %s --check-prefix=PAIRS
// PAIRS: tfm.attention 1 8.820000e+02
func.func @attn(%q: tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32> {
  %o = tfm.attention %q, %q, %q {causal, scale = 0.5 : f64, sliding_window = 3 : i64} : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  return %o : tensor<?x?x2x4xf32>
}
