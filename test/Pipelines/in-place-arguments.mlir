// RUN: tfm-opt %s --tfm-read-only-arguments | FileCheck %s --check-prefix=MARK
// RUN: tfm-opt %s --tfm-bufferize-cpu | FileCheck %s --check-prefix=BUF

// An entry writes the argument it declares writable in place and returns
// that buffer; the read-only argument is copied before the write.
// MARK-LABEL: func.func @update(
// MARK-SAME: {bufferization.writable = true, tfm.updated_in_place}
// MARK-SAME: {bufferization.writable = false}
// BUF-LABEL: func.func @update(
// BUF-SAME: %[[A:.*]]: memref<4xf32> {tfm.updated_in_place}, %[[B:[^:]*]]: memref<4xf32>)
// BUF: memref.store %{{.*}}, %[[A]][
// BUF: %[[COPY:.*]] = memref.alloc()
// BUF: memref.copy %[[B]], %[[COPY]]
// BUF: memref.store %{{.*}}, %[[COPY]][
// BUF: return %[[A]], %[[COPY]]
func.func @update(%a: tensor<4xf32> {bufferization.writable = true},
                  %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  %a2 = tensor.insert %c into %a[%i] : tensor<4xf32>
  %b2 = tensor.insert %c into %b[%i] : tensor<4xf32>
  return %a2, %b2 : tensor<4xf32>, tensor<4xf32>
}

// A read-only argument returned as it is goes back as a copy: the caller
// may free what it passed.
// MARK-LABEL: func.func @identity(
// MARK-SAME: {bufferization.writable = false}
// BUF-LABEL: func.func @identity(
// BUF: %[[C:.*]] = memref.alloc()
// BUF: memref.copy %arg0, %[[C]]
// BUF: return %[[C]]
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// A function the module calls is not an entry: not marked, and it keeps
// the clone of an argument it returns (its caller owns the result). The
// entry calling it passes a copy of its own read-only argument.
// MARK-LABEL: func.func @callee(
// MARK-NOT: tfm.updated_in_place
// MARK-SAME: -> tensor<4xf32>
// BUF-LABEL: func.func @callee(
// BUF: memref.store %{{.*}}, %arg0[
// BUF: %[[R:.*]] = memref.alloc()
// BUF: memref.copy %arg0, %[[R]]
// BUF: return %[[R]]
// BUF-LABEL: func.func @caller(
// BUF: %[[X:.*]] = memref.alloc()
// BUF: memref.copy %arg0, %[[X]]
// BUF: call @callee(%[[X]])
func.func @callee(%x: tensor<4xf32> {bufferization.writable = true}) -> tensor<4xf32> {
  %c = arith.constant 2.0 : f32
  %i = arith.constant 1 : index
  %x2 = tensor.insert %c into %x[%i] : tensor<4xf32>
  return %x2 : tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// Non-tensor arguments get no mark.
// MARK-LABEL: func.func @scalar(
// MARK-SAME: %{{.*}}: f32,
// MARK-SAME: {bufferization.writable = false}
func.func @scalar(%s: f32, %t: tensor<4xf32>) -> tensor<4xf32> {
  return %t : tensor<4xf32>
}
