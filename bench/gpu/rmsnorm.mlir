// RMSNorm over a Llama-3.1-8B hidden state (4096 features);
// bench/gpu_check.py reports the bytes moved per second.
func.func @rmsnorm(%x: tensor<?x?x4096xf32>, %w: tensor<4096xf32>) -> tensor<?x?x4096xf32> {
  %y, %rstd = tfm.rmsnorm %x, %w {eps = 1.0e-05 : f64}
      : (tensor<?x?x4096xf32>, tensor<4096xf32>) -> (tensor<?x?x4096xf32>, tensor<?x?xf32>)
  return %y : tensor<?x?x4096xf32>
}
