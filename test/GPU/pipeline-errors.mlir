// Bad GPU pipeline options are errors, not crashes.
// RUN: not tfm-opt %s --tfm-train-cuda="chip=sm_bogus" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: chip 'sm_bogus' is not an NVIDIA SM name (e.g. sm_80, sm_90)
// RUN: not tfm-opt %s --tfm-train-cuda="format=banana" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: format 'banana' is not one of isa, bin, fatbin
// RUN: not tfm-opt %s --tfm-train-cuda="format=bin toolkit=/nonexistent" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// TOOLKIT: error: CUDA path: /nonexistent does not exist or is not a directory.
// PTX text needs the toolkit too (libdevice): a missing one is an error and a
// non-zero exit, not PTX with unresolved __nv_* calls.
// RUN: rm -f %t.mlir
// RUN: not tfm-opt %s --tfm-train-cuda="toolkit=/nonexistent" -o %t.mlir 2>&1 | FileCheck %s --check-prefix=TOOLKIT
// RUN: test ! -e %t.mlir
// RUN: not tfm-opt %s --pass-pipeline="builtin.module(func.func(tfm-row-reductions-to-gpu{lanes=8}))" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LANES
// LANES: tfm-row-reductions-to-gpu: lanes must be 32 (a warp) or 1
func.func @forward(%x: tensor<?x?x64xf32>, %w: tensor<64xf32> {tfm.param = #tfm.param<name = "n.weight">}) -> tensor<?x?x64xf32> {
  %y, %r = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?xf32>)
  return %y : tensor<?x?x64xf32>
}
