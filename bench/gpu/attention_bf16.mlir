// bench/gpu/attention.mlir with bf16 storage (f32 arithmetic in the
// kernels), the configuration the GPU figures are asked for.
func.func @attention(%qkv: tensor<?x?x48x128xbf16>) -> tensor<?x?x32x128xbf16> {
  %o, %lse = tfm.flash_attention %qkv
      {num_q_heads = 32 : i64, num_kv_heads = 8 : i64, causal, scale = 0.08838834764831845 : f64}
      : (tensor<?x?x48x128xbf16>) -> (tensor<?x?x32x128xbf16>, tensor<?x32x?xf32>)
  return %o : tensor<?x?x32x128xbf16>
}
