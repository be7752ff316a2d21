// Each stage of --tfm-train-cuda can be run and printed on its own; none
// needs a GPU (format=isa embeds PTX text without calling ptxas), but the
// last links libdevice from the CUDA toolkit.
// REQUIRES: cuda-toolkit
// RUN: tfm-opt %s --tfm-lower-to-linalg-cuda --tfm-bufferize-cuda | FileCheck %s --check-prefix=BUF
// RUN: tfm-opt %s --tfm-lower-to-linalg-cuda --tfm-bufferize-cuda --tfm-map-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: tfm-opt %s --tfm-lower-to-linalg-cuda --tfm-bufferize-cuda --tfm-map-to-gpu --tfm-lower-gpu-to-llvm="chip=sm_80" | FileCheck %s --check-prefix=LLVM
// RUN: tfm-opt %s --tfm-train-cuda="chip=sm_90 format=isa func=forward" | FileCheck %s --check-prefix=TRAIN

// GEMMs are runtime (cuBLASLt) calls; everything else is still linalg.
// BUF: func.func private @tfm_cuda_sgemm(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i32, i32) attributes {llvm.emit_c_interface}
// BUF-LABEL: func.func @forward
// BUF: linalg.generic
// BUF: call @tfm_cuda_sgemm
// BUF-NOT: linalg.matmul

// Every other op is a kernel launch inside the layer loop; the kernels live
// in one gpu.module. The loop carries the hidden state, whose initial value
// is the argument: it is copied first (a kernel), since an entry does not
// write its read-only arguments (tfm-read-only-arguments).
// GPU-LABEL: func.func @forward
// GPU: gpu.launch_func @tfm_kernels::@forward_kernel blocks in {{.*}} args({{.*}}%arg0 : memref<?x?x8xf32>, %[[COPY:[^ ]*]] : memref<?x?x8xf32>)
// GPU: scf.for {{.*}} iter_args({{.*}} = %[[COPY]]
// GPU: gpu.launch_func @tfm_kernels::@forward_kernel_{{[0-9]+}} blocks in
// GPU: call @tfm_cuda_sgemm
// GPU-NOT: linalg.
// GPU: gpu.module @tfm_kernels
// GPU: gpu.func @forward_kernel({{.*}}) kernel
// The norm statistic: one warp per row, a shuffle butterfly.
// GPU: gpu.shuffle xor

// Host in LLVM, allocations through the runtime arena, kernels as PTX.
// LLVM: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// LLVM: llvm.func @_mlir_ciface_tfm_cuda_sgemm(!llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32)
// LLVM: llvm.func @forward
// LLVM: gpu.launch_func @tfm_kernels::@forward_kernel
// LLVM: llvm.call @tfm_cuda_sgemm
// LLVM: gpu.binary @tfm_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_80

// The training step: forward and backward kernels in one binary.
// TRAIN-DAG: llvm.func @forward_vjp
// TRAIN-DAG: gpu.launch_func @tfm_kernels::@forward_vjp_kernel
// TRAIN-DAG: gpu.binary @tfm_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}.entry forward_vjp_kernel
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
