// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-convert-to-linalg))" | FileCheck %s

// One GEMM per expert on its rows: a loop over the experts reads the
// run-time offsets, skips an expert without rows, and multiplies a
// dynamically sized row slice by that expert's [N, K] weight (transposed-B
// named matmul, which tfm-linalg-matmul-to-blas hands to BLAS).
// CHECK-LABEL: func @grouped_matmul
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (tensor<?x32xf32>)
// CHECK:         tensor.extract %{{.*}} : tensor<9xi64>
// CHECK:         arith.cmpi sgt
// CHECK:         scf.if {{.*}} -> (tensor<?x32xf32>)
// CHECK-DAG:       tensor.extract_slice {{.*}} [1, 32, 64] [1, 1, 1] : tensor<8x32x64xf32> to tensor<32x64xf32>
// CHECK-DAG:       tensor.extract_slice {{.*}} : tensor<?x64xf32> to tensor<?x64xf32>
// CHECK:           linalg.matmul indexing_maps = {{.*}} ins({{.*}} : tensor<?x64xf32>, tensor<32x64xf32>)
// CHECK:           tensor.insert_slice
// CHECK:         } else {
// CHECK-NOT:     linalg.matmul
// CHECK:       return
func.func @grouped_matmul(%x: tensor<?x64xf32>, %w: tensor<8x32x64xf32>, %off: tensor<9xi64>) -> tensor<?x32xf32> {
  %y = tfm.moe_grouped_matmul %x, %w, %off {transpose = #tfm.transpose<nt>} : (tensor<?x64xf32>, tensor<8x32x64xf32>, tensor<9xi64>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// The weight gradient starts from zeros (an expert without rows keeps
// them) and writes each expert's dyᵀ·x into its [N, K] slot.
// CHECK-LABEL: func @grouped_grad_weight
// CHECK:       linalg.fill {{.*}} -> tensor<8x32x64xf32>
// CHECK:       scf.for
// CHECK:         scf.if
// CHECK:           linalg.matmul indexing_maps = {{.*}} ins({{.*}} : tensor<?x32xf32>, tensor<?x64xf32>) outs({{.*}} : tensor<32x64xf32>)
// CHECK:           tensor.insert_slice {{.*}} [1, 32, 64] [1, 1, 1] : tensor<32x64xf32> into tensor<8x32x64xf32>
func.func @grouped_grad_weight(%dy: tensor<?x32xf32>, %x: tensor<?x64xf32>, %off: tensor<9xi64>) -> tensor<8x32x64xf32> {
  %d = tfm.moe_grouped_matmul_grad_weight %dy, %x, %off {transpose = #tfm.transpose<nt>} : (tensor<?x32xf32>, tensor<?x64xf32>, tensor<9xi64>) -> tensor<8x32x64xf32>
  return %d : tensor<8x32x64xf32>
}

// -----

// A counting sort: counts, the prefix sum, then one placement pass writing
// positions and sources; all i64, no float scratch.
// CHECK-LABEL: func @route_plan
// CHECK:       tensor.collapse_shape {{.*}} : tensor<?x?x2xi64> into tensor<?xi64>
// CHECK:       linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<8xi64>)
// CHECK:       scf.for {{.*}} -> (tensor<8xi64>)
// CHECK:       linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<9xi64>)
// CHECK:       scf.for {{.*}} -> (tensor<9xi64>)
// CHECK:       scf.for {{.*}} -> (tensor<8xi64>, tensor<?xi64>, tensor<?xi64>)
// CHECK:       tensor.expand_shape {{.*}} : tensor<?xi64> into tensor<?x?x2xi64>
func.func @route_plan(%i: tensor<?x?x2xi64>) -> (tensor<9xi64>, tensor<?x?x2xi64>, tensor<?xi64>) {
  %o, %p, %s = tfm.moe_route_plan %i {num_experts = 8 : i64} : (tensor<?x?x2xi64>) -> (tensor<9xi64>, tensor<?x?x2xi64>, tensor<?xi64>)
  return %o, %p, %s : tensor<9xi64>, tensor<?x?x2xi64>, tensor<?xi64>
}

// -----

// Dispatch and combine are gathers: parallel generics reading through the
// plan with tensor.extract; the combine reduces over the k slots in f32.
// CHECK-LABEL: func @dispatch_combine
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:         arith.divui
// CHECK:         tensor.extract
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         tensor.extract
// CHECK:         arith.mulf
// CHECK-NOT:   tensor.insert
func.func @dispatch_combine(%x: tensor<?x?x64xbf16>, %p: tensor<?x?x2xi64>, %s: tensor<?xi64>, %w: tensor<?x?x2xf32>) -> tensor<?x?x64xbf16> {
  %xp = tfm.moe_dispatch %x, %p, %s : (tensor<?x?x64xbf16>, tensor<?x?x2xi64>, tensor<?xi64>) -> tensor<?x64xbf16>
  %y = tfm.moe_combine %xp, %p, %s, %w : (tensor<?x64xbf16>, tensor<?x?x2xi64>, tensor<?xi64>, tensor<?x?x2xf32>) -> tensor<?x?x64xbf16>
  return %y : tensor<?x?x64xbf16>
}

// -----

// The router is one parallel generic over (token, slot) with two results;
// softmax routing first reduces each row's max and sum of exponentials.
// CHECK-LABEL: func @router
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:         arith.maximumf
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:         math.exp
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}}outs({{.*}} : tensor<?x2xf32>, tensor<?x2xi64>)
// CHECK:         scf.for
// CHECK:           scf.for
func.func @router(%l: tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>) {
  %w, %i = tfm.moe_router %l {top_k = 2 : i64, routing = #tfm.moe_routing<softmax_topk>, normalize} : (tensor<?x?x8xf32>) -> (tensor<?x?x2xf32>, tensor<?x?x2xi64>)
  return %w, %i : tensor<?x?x2xf32>, tensor<?x?x2xi64>
}
