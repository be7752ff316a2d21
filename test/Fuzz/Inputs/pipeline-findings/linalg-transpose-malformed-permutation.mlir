// A `[` after `permutation =` whose list does not parse: MLIR 22's
// linalg.transpose parser crashes on it as on a missing `[` (found by
// tfm-pipeline-fuzzer in CI; the target drops such inputs).
func.func @copies(%x: memref<?x8x?x64xf32>, %t: memref<?x?x8x64xf32>) {
  linalg.transpose ins(%x : memref<?x8x?x64xf32>) outs(%t : memref<?x?x8x64xf32>) permutation = [0,nc @load_stats_shape(%l: tensor<?x?x8xf32>) {
  return
}
