// Each stage of --tfm-train-cpu can be run and printed on its own.
// RUN: tfm-opt %s --tfm-lower-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: tfm-opt %s --tfm-lower-to-linalg --tfm-bufferize-cpu | FileCheck %s --check-prefix=BUF
// RUN: tfm-opt %s --tfm-train-cpu | FileCheck %s --check-prefix=LLVM
// RUN: tfm-opt %s --tfm-lower-to-linalg --tfm-bufferize-cpu --tfm-lower-cpu-to-llvm | FileCheck %s --check-prefix=LLVM

// LINALG-LABEL: func.func @forward
// LINALG-NOT: tfm.repeat
// LINALG-NOT: tfm.rmsnorm
// LINALG: scf.for
// LINALG: linalg.matmul

// The GEMM's C is a fresh zero-filled buffer: the beta = 0 entry point,
// without the fill (fold-zero-fill).
// BUF: func.func private @tfm_rt_sgemm_overwrite(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32) attributes {llvm.emit_c_interface}
// BUF-LABEL: func.func @forward
// BUF-SAME: memref<?x?x8xf32>
// BUF-SAME: -> memref<?x?x8xf32>
// BUF-SAME: llvm.emit_c_interface
// BUF: memref.subview
// BUF-NOT: call @tfm_rt_sgemm(
// BUF: call @tfm_rt_sgemm_overwrite(
// BUF: memref.dealloc

// LLVM: llvm.func @_mlir_ciface_tfm_rt_sgemm_overwrite(
// LLVM: llvm.func @forward
// LLVM: llvm.call @tfm_rt_sgemm_overwrite(
// LLVM: llvm.func @_mlir_ciface_forward
// LLVM-NOT: tfm.rmsnorm
func.func @forward(%h: tensor<?x?x8xf32>,
    %w: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.w", stacked = true>},
    %n: tensor<2x8xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true>}) -> tensor<?x?x8xf32> {
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%w, %n : tensor<2x8x8xf32>, tensor<2x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8x8xf32>, %nl: tensor<8xf32>):
    %y, %s = tfm.rmsnorm %x, %nl {eps = 1.0e-05 : f64} : (tensor<?x?x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?xf32>)
    %z = tfm.matmul %y, %wl {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    tfm.yield %z : tensor<?x?x8xf32>
  }
  return %r : tensor<?x?x8xf32>
}
