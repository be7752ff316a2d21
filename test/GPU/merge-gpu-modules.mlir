// RUN: tfm-opt %s --split-input-file --tfm-merge-gpu-modules | FileCheck %s
// RUN: tfm-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(tfm-memref-copy-to-linalg),tfm-merge-gpu-modules)" | FileCheck %s --check-prefix=COPY

// Two outlined kernels end up in one module; launches are retargeted.
// CHECK:     gpu.module @tfm_kernels [#nvvm.target<chip = "sm_90">]
// CHECK:       gpu.func @k0
// CHECK:       gpu.func @k1
// CHECK-NOT: gpu.module
// CHECK:     func.func @step
// CHECK:       gpu.launch_func @tfm_kernels::@k0
// CHECK:       gpu.launch_func @tfm_kernels::@k1

// memref.copy becomes linalg.copy (a kernel later), nothing else changes.
// COPY-LABEL: func.func @step
// COPY:         linalg.copy ins(%arg0 : memref<4xf32>) outs(%arg1 : memref<4xf32>)
// COPY-NOT:     memref.copy
module attributes {gpu.container_module} {
  gpu.module @k0 [#nvvm.target<chip = "sm_90">] {
    gpu.func @k0(%a: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @k1 [#nvvm.target<chip = "sm_90">] {
    gpu.func @k1(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @step(%a: memref<4xf32>, %b: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k0::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    gpu.launch_func @k1::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>)
    return
  }
}

// -----

// RUN: tfm-opt %s --split-input-file --tfm-merge-gpu-modules | FileCheck %s --check-prefix=CLASH
// Two modules with a private helper of the same name: the second is renamed
// together with its call, so each kernel still calls its own helper.
// CLASH:     gpu.module @tfm_kernels
// CLASH:       func.func private @helper() -> f32
// CLASH:         arith.constant 1.0
// CLASH:       gpu.func @ka
// CLASH:         call @helper()
// CLASH:       func.func private @[[H2:helper_[0-9]+]]() -> f32
// CLASH:         arith.constant 2.0
// CLASH:       gpu.func @kb
// CLASH:         call @[[H2]]()
module attributes {gpu.container_module} {
  gpu.module @a {
    func.func private @helper() -> f32 {
      %c = arith.constant 1.0 : f32
      return %c : f32
    }
    gpu.func @ka(%m: memref<1xf32>) kernel {
      %v = func.call @helper() : () -> f32
      %c0 = arith.constant 0 : index
      memref.store %v, %m[%c0] : memref<1xf32>
      gpu.return
    }
  }
  gpu.module @b {
    func.func private @helper() -> f32 {
      %c = arith.constant 2.0 : f32
      return %c : f32
    }
    gpu.func @kb(%m: memref<1xf32>) kernel {
      %v = func.call @helper() : () -> f32
      %c0 = arith.constant 0 : index
      memref.store %v, %m[%c0] : memref<1xf32>
      gpu.return
    }
  }
  func.func @step(%m: memref<1xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@ka blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<1xf32>)
    gpu.launch_func @b::@kb blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<1xf32>)
    return
  }
}
