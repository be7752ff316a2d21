// RUN: tfm-opt %s --tfm-strip-gpu-binary-timings | FileCheck %s

// The back end's timings go; the other properties, the target, the format
// and the object stay.
// CHECK-LABEL: gpu.binary @timed
// CHECK-SAME: [#gpu.object<#nvvm.target<chip = "sm_90">, properties = {O = 3 : i32}, assembly = "ptx text">]
// CHECK-NOT: TimeInMs
gpu.binary @timed [#gpu.object<#nvvm.target<chip = "sm_90">, properties = {LLVMIRToISATimeInMs = 378 : i64, O = 3 : i32, ISAToBinaryTimeInMs = 12 : i64}, assembly = "ptx text">]

// Only timings: the properties go altogether.
// CHECK-LABEL: gpu.binary @only_timings
// CHECK-SAME: [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = "ptx">]
gpu.binary @only_timings [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {LLVMIRToISATimeInMs = 1 : i64}, assembly = "ptx">]

// Nothing to strip: left as it is (a property merely containing "Time").
// CHECK-LABEL: gpu.binary @untouched
// CHECK-SAME: [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {CompileTimeConstant = 1 : i64}, bin = "cubin">, #gpu.object<#nvvm.target<chip = "sm_90">, "fatbin">]
gpu.binary @untouched [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {CompileTimeConstant = 1 : i64}, bin = "cubin">, #gpu.object<#nvvm.target<chip = "sm_90">, "fatbin">]
