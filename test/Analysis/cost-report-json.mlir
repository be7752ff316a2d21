// Every function is reported (the forward and its derived _vjp), and
// json= writes the same figures.
// RUN: tfm-opt %s --tfm-autodiff --tfm-cost-report="batch=1 seq=4 json=%t.json" -o /dev/null | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: not tfm-opt %s --tfm-cost-report="func=nope" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not tfm-opt %s --tfm-cost-report="json=%t.missing/dir/x.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFILE
// A folder that takes no new file: refused before the report, not "LLVM
// ERROR: IO failure" at exit.
// RUN: not tfm-opt %s --tfm-cost-report="json=/proc/x.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PROC
// PROC: tfm-cost-report: option 'json': /proc/x.json:
// PROC-NOT: IO failure

// matmul [1, 4, 8] x [16, 8]ᵀ: 1024 FLOP, 640 B read, 256 B written, then
// the loss; the vjp adds dx = dy·w and dw (1024 FLOP each).
// CHECK: tfm-cost-report @forward: batch 1, seq 4
// CHECK: tfm.matmul 1 1.024000e+03 6.400000e+02 2.560000e+02
// CHECK: kernels: 2
// CHECK: tfm-cost-report @forward_vjp: batch 1, seq 4
// CHECK-DAG: tfm.matmul 2 2.048000e+03
// CHECK-DAG: tfm.matmul_grad_weight 1 1.024000e+03
// CHECK-DAG: tfm.cross_entropy_backward 1
// CHECK: kernels: 5

// JSON: "functions": [
// JSON: "name": "forward"
// JSON: "total": {
// JSON: "kernels": 2
// JSON: "name": "forward_vjp"
// JSON: "total": {
// JSON: "kernels": 5
// JSON: "seq": 4

// NOFUNC: no function body @nope
// NOFILE: tfm-cost-report: option 'json': {{.*}}x.json: the folder {{.*}}dir does not exist
// NOFILE-NOT: see current operation
func.func @forward(%h: tensor<?x?x8xf32>, %w: tensor<16x8xf32>, %y: tensor<?x?xi64>) -> tensor<f32> {
  %l = tfm.matmul %h, %w {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %loss = tfm.cross_entropy %l, %y : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
