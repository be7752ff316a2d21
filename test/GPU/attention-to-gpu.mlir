// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-attention-to-gpu))" | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-attention-to-gpu{lanes=1}))" | FileCheck %s --check-prefix=SIM

// Forward: one warp per query row (4 rows per 128-thread block); each lane
// holds 2 of the 64 head dims; the visible keys of row i are
// [max(0, i - 15), min(S, i + 1)); per key a 5-shuffle dot product and the
// online softmax (running max, rescaled sum and accumulators). No score
// matrix is allocated: the only buffer is the output.
// CHECK-LABEL: func.func @forward
// CHECK:         bufferization.to_buffer %arg0 read_only
// CHECK:         %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x4x64xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128,
// CHECK:           %[[HI:.*]] = arith.minsi
// CHECK:           %[[LO:.*]] = arith.maxsi
// CHECK:           scf.for %{{.*}} = %[[LO]] to %[[HI]] step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK-COUNT-5:     gpu.shuffle xor
// CHECK:             arith.maximumf
// CHECK:             math.exp
// CHECK:             math.exp
// CHECK:           scf.if
// CHECK:             memref.store {{.*}}, %[[OUT]]
// CHECK:         bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT:     tfm.attention
// SIM-LABEL: func.func @forward
// SIM-NOT:       gpu.shuffle
// SIM:           gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c4{{(_[0-9]+)?}},
// SIM:             scf.for {{.*}} -> (f32, f32, {{(f32, )+}}f32)
func.func @forward(%q: tensor<?x?x4x64xf32>, %k: tensor<?x?x2x64xf32>, %v: tensor<?x?x2x64xf32>) -> tensor<?x?x4x64xf32> {
  %o = tfm.attention %q, %k, %v {causal, scale = 0.125 : f64, sliding_window = 16 : i64}
      : (tensor<?x?x4x64xf32>, tensor<?x?x2x64xf32>, tensor<?x?x2x64xf32>) -> tensor<?x?x4x64xf32>
  return %o : tensor<?x?x4x64xf32>
}

// -----

// Packed documents: query i's first key is max(causal start, doc_start[b, i])
// (one load per row, no mask in the loop); in the backward, the queries that
// see key j end where doc_start passes j, found by a binary search
// (scf.while) before the loop over queries.
// CHECK-LABEL: func.func @documents
// CHECK:         gpu.launch
// CHECK:           %[[START:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xi64, strided<[?, ?], offset: ?>>
// CHECK:           %[[FIRST:.*]] = arith.index_cast %[[START]] : i64 to index
// CHECK:           %[[LO:.*]] = arith.maxsi %{{.*}}, %[[FIRST]]
// CHECK:           scf.for %{{.*}} = %[[LO]] to
// CHECK:         gpu.launch
// CHECK:           arith.maxsi
// CHECK:         gpu.launch
// CHECK:           scf.while
// CHECK:             memref.load %{{.*}} : memref<?x?xi64, strided<[?, ?], offset: ?>>
// CHECK:           scf.for
// CHECK-NOT:     tfm.attention
func.func @documents(%do: tensor<?x?x4x32xf32>, %q: tensor<?x?x4x32xf32>, %k: tensor<?x?x2x32xf32>,
                     %v: tensor<?x?x2x32xf32>, %d: tensor<?x?xi64>)
    -> (tensor<?x?x4x32xf32>, tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>) {
  %o = tfm.attention %q, %k, %v doc_start(%d) {causal, scale = 0.25 : f64}
      : (tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?xi64>) -> tensor<?x?x4x32xf32>
  %dq, %dk, %dv = tfm.attention_backward %do, %q, %k, %v doc_start(%d) {causal, scale = 0.25 : f64}
      : (tensor<?x?x4x32xf32>, tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?xi64>)
      -> (tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>)
  return %o, %dq, %dk, %dv : tensor<?x?x4x32xf32>, tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>
}

// -----

// Backward with sinks: per query row (dq and the row statistics in
// O(B·Hq·T) scratch), per key row (dk, dv over the group's query heads),
// per head (dsinks).
// CHECK-LABEL: func.func @backward
// CHECK-COUNT-3: memref.alloc
// CHECK-COUNT-4: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         gpu.launch
// CHECK:         gpu.launch
// CHECK-COUNT-3: bufferization.to_tensor
// CHECK:         gpu.launch
// CHECK:         bufferization.to_tensor
// CHECK-NOT:     tfm.attention_backward
func.func @backward(%do: tensor<?x?x4x32xf32>, %q: tensor<?x?x4x32xf32>, %k: tensor<?x?x2x32xf32>,
                    %v: tensor<?x?x2x32xf32>, %s: tensor<4xf32>)
    -> (tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>, tensor<4xf32>) {
  %dq, %dk, %dv, %ds = tfm.attention_backward %do, %q, %k, %v sinks(%s) {causal, scale = 0.25 : f64}
      : (tensor<?x?x4x32xf32>, tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>, tensor<4xf32>)
      -> (tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>, tensor<4xf32>)
  return %dq, %dk, %dv, %ds : tensor<?x?x4x32xf32>, tensor<?x?x2x32xf32>, tensor<?x?x2x32xf32>, tensor<4xf32>
}

// -----

// bf16 storage: loads widened to f32, results rounded on store.
// CHECK-LABEL: func.func @bf16
// CHECK:         gpu.launch
// CHECK:           arith.extf {{.*}} : bf16 to f32
// CHECK:           arith.truncf {{.*}} : f32 to bf16
// CHECK:         bufferization.to_tensor {{.*}} : memref<?x?x2x64xbf16> to tensor<?x?x2x64xbf16>
func.func @bf16(%q: tensor<?x?x2x64xbf16>) -> tensor<?x?x2x64xbf16> {
  %o = tfm.attention %q, %q, %q {causal, scale = 0.125 : f64}
      : (tensor<?x?x2x64xbf16>, tensor<?x?x2x64xbf16>, tensor<?x?x2x64xbf16>) -> tensor<?x?x2x64xbf16>
  return %o : tensor<?x?x2x64xbf16>
}

// -----

// Left for the linalg lowering: f64, and a head dim that is not a multiple
// of the 32 lanes.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     gpu.launch
// CHECK:         tfm.attention
// CHECK:         tfm.attention
func.func @kept(%q: tensor<?x?x2x64xf64>, %q2: tensor<?x?x2x48xf32>)
    -> (tensor<?x?x2x64xf64>, tensor<?x?x2x48xf32>) {
  %o = tfm.attention %q, %q, %q {causal, scale = 0.125 : f64}
      : (tensor<?x?x2x64xf64>, tensor<?x?x2x64xf64>, tensor<?x?x2x64xf64>) -> tensor<?x?x2x64xf64>
  %o2 = tfm.attention %q2, %q2, %q2 {causal, scale = 0.35 : f64}
      : (tensor<?x?x2x48xf32>, tensor<?x?x2x48xf32>, tensor<?x?x2x48xf32>) -> tensor<?x?x2x48xf32>
  return %o, %o2 : tensor<?x?x2x64xf64>, tensor<?x?x2x48xf32>
}

// -----

// RUN: not tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-attention-to-gpu{lanes=16}))" 2>&1 | FileCheck %s --check-prefix=LANES
// LANES: tfm-attention-to-gpu: lanes must be 32 (a warp) or 1
func.func @lanes() {
  return
}
